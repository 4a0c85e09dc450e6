// Metric and ranking losses: distances between embeddings (Euclidean, pairwise), contrastive,
// triplet, margin ranking, hinge and cosine embedding losses, composed from differentiable ops.
#include <cmath>

#include "nn/loss_common.h"
#include "spiraltorch/nn/loss.h"
#include "spiraltorch/nn/loss_torch_family.h"

namespace st::nn {

using namespace loss_detail;

Tensor euclidean_distance(const Tensor& x1, const Tensor& x2) {
  check_floating(x1, "euclidean_distance", "x1");
  const Tensor diff = sub(x1, x2);
  if (diff.dim() == 0) throw ShapeError("euclidean_distance: inputs need at least one dimension");
  Tensor d;
  {
    NoGradGuard ng;
    d = sqrt(sum(mul(diff, diff), {-1}));
  }
  if (needs_grad({&diff})) {
    const Tensor dd = diff.detach(), dv = d.detach();
    record(d, "EuclideanDistanceBackward", {diff}, [dd, dv](const Tensor& g) -> std::vector<Tensor> {
      const Tensor safe = where(eq(dv, zeros_like(dv)), ones_like(dv), dv);
      return {mul(unsqueeze(div(g, safe), -1), dd)};
    });
  }
  return d;
}

Tensor contrastive_loss_from_distance(const Tensor& distance, const Tensor& label, double margin, Reduction reduction) {
  check_floating(distance, "contrastive_loss", "distance");
  if (!label.defined()) throw ValueError("contrastive_loss: label is undefined");
  check_same_shape(distance, label, "contrastive_loss", "prediction", "target");
  const Tensor y = is_floating(label.dtype()) ? label : label.to(distance.dtype());
  const Tensor hinge = relu(rsub(distance, margin));
  const Tensor loss = add(mul(y, mul(distance, distance)), mul(rsub(y, 1.0), mul(hinge, hinge)));
  return reduce(loss, reduction);
}

Tensor contrastive_loss(const Tensor& x1, const Tensor& x2, const Tensor& label, double margin, Reduction reduction) {
  return contrastive_loss_from_distance(euclidean_distance(x1, x2), label, margin, reduction);
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps) {
  check_floating(x1, "pairwise_distance", "x1");
  const Tensor diff = add(sub(x1, x2), eps);
  if (diff.dim() == 0) throw ShapeError("pairwise_distance: inputs need at least one dimension");
  return norm(diff, p, {-1});
}

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative, double margin,
                           double p, double eps, bool swap, Reduction reduction) {
  if (!(margin >= 0)) throw ValueError("triplet_margin_loss: margin must be >= 0, got " + std::to_string(margin));
  if (!(p > 0)) throw ValueError("triplet_margin_loss: p must be positive, got " + std::to_string(p));
  if (anchor.shape() != positive.shape() || anchor.shape() != negative.shape()) {
    throw ShapeError("triplet_margin_loss: anchor " + shape_str(anchor.shape()) + ", positive " +
                     shape_str(positive.shape()) + " and negative " + shape_str(negative.shape()) +
                     " must have the same shape");
  }
  const Tensor d_ap = pairwise_distance(anchor, positive, p, eps);
  Tensor d_an = pairwise_distance(anchor, negative, p, eps);
  if (swap) d_an = minimum(d_an, pairwise_distance(positive, negative, p, eps));
  return reduce(relu(add(sub(d_ap, d_an), margin)), reduction);
}

namespace {

// The arguments of the losses that compare two inputs under a target (margin ranking, cosine
// embedding): both inputs floating, the target defined.
void check_pair_and_target(const Tensor& input1, const Tensor& input2, const Tensor& target, const char* op) {
  check_floating(input1, op, "input1");
  check_floating(input2, op, "input2");
  check_defined(target, op, "target");
}

}  // namespace

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                           Reduction reduction) {
  const char* op = "margin_ranking_loss";
  check_pair_and_target(input1, input2, target, op);
  if (input1.dim() != input2.dim() || input1.dim() != target.dim()) {
    throw ShapeError(std::string(op) + ": input1 " + shape_str(input1.shape()) + ", input2 " +
                     shape_str(input2.shape()) + " and target " + shape_str(target.shape()) +
                     " must have the same number of dimensions");
  }
  check_broadcast(input1, input2, op);
  check_broadcast(input1, target, op);
  broadcast_shapes(broadcast_shapes(input1.shape(), input2.shape(), op), target.shape(), op);
  const Tensor y = as_float(target, input1);
  return reduce(clamp(add(mul(neg(y), sub(input1, input2)), margin), 0.0, std::nullopt), reduction);
}

Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin, Reduction reduction) {
  const char* op = "hinge_embedding_loss";
  check_floating(input, op, "input");
  check_defined(target, op, "target");
  check_broadcast(input, target, op);
  const Tensor y = as_float(target, input);
  const Tensor zero = zeros_of(input);
  // torch's rule: the margin term wherever y != 1, the input itself wherever y != -1.
  const Tensor margin_term = where(ne(y, ones_like(y)), clamp(rsub(input, margin), 0.0, std::nullopt), zero);
  const Tensor self_term = where(ne(y, neg(ones_like(y))), input, zero);
  return reduce(add(margin_term, self_term), reduction);
}

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                             Reduction reduction) {
  const char* op = "cosine_embedding_loss";
  check_pair_and_target(input1, input2, target, op);
  if (target.dim() > 1) {
    throw ShapeError(std::string(op) + ": expected a 0-d or 1-d target, got shape " + shape_str(target.shape()));
  }
  if (input1.shape() != input2.shape() || input1.dim() != target.dim() + 1 ||
      (target.dim() == 1 && input1.shape()[0] != target.shape()[0])) {
    throw ShapeError(std::string(op) + ": inputs " + shape_str(input1.shape()) + " and " + shape_str(input2.shape()) +
                     " with target " + shape_str(target.shape()) +
                     " do not match (expected (N, D), (N, D), (N) or (D), (D), ())");
  }
  detail::check_same_device(input1, input2, op);
  detail::check_same_device(input1, target, op);
  constexpr double kEps = 1e-12;  // torch's EPSILON inside the magnitudes
  const Dims d{-1};
  const Tensor prod = sum(mul(input1, input2), d);
  const Tensor m1 = add(sum(mul(input1, input1), d), kEps);
  const Tensor m2 = add(sum(mul(input2, input2), d), kEps);
  const Tensor cos = div(prod, sqrt(mul(m1, m2)));
  const Tensor y = as_float(target, input1);
  const Tensor zero = zeros_of(cos);
  const Tensor pos = where(eq(y, ones_like(y)), rsub(cos, 1.0), zero);
  const Tensor negt = where(eq(y, neg(ones_like(y))), clamp(sub(cos, margin), 0.0, std::nullopt), zero);
  return reduce(add(pos, negt), reduction);
}

}  // namespace st::nn
