#include "spiraltorch/nn/normalization.h"

#include <cstdio>
#include <limits>
#include <string>

#include "spiraltorch/autograd.h"
#include "spiraltorch/nn/functional.h"
#include "spiraltorch/nn/loss.h"

namespace st::nn {

namespace {

void check_floating_input(const Tensor& x, const char* op, const char* what = "input") {
  if (!x.defined()) throw ValueError(std::string(op) + ": " + what + " tensor is undefined");
  if (!is_floating(x.dtype())) {
    throw DtypeError(std::string(op) + ": expected a floating-point " + what + ", got " + dtype_name(x.dtype()));
  }
}

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// The machine epsilon of dtype (torch.finfo(dtype).eps).
double dtype_eps(Dtype dt) {
  switch (dt) {
    case Dtype::Float64:
      return std::numeric_limits<double>::epsilon();
    case Dtype::BFloat16:
      return 0.0078125;  // 2^-7
    case Dtype::Float16:
      return 0.0009765625;  // 2^-10
    default:
      return std::numeric_limits<float>::epsilon();
  }
}

// Whether `shape` ends in `tail`.
bool ends_with(const Shape& shape, const Shape& tail) {
  if (shape.size() < tail.size()) return false;
  for (size_t i = 0; i < tail.size(); ++i) {
    if (shape[shape.size() - tail.size() + i] != tail[i]) return false;
  }
  return true;
}

}  // namespace

Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps) {
  const char* op = "group_norm";
  check_floating_input(input, op);
  if (input.dim() < 2) {
    throw ShapeError("group_norm: expected an input of shape (N, C, *), got " + shape_str(input.shape()));
  }
  if (num_groups <= 0) throw ValueError("group_norm: num_groups must be positive, got " + std::to_string(num_groups));
  const int64_t n = input.shape()[0], c = input.shape()[1];
  if (c % num_groups != 0) {
    throw ShapeError("group_norm: input of shape " + shape_str(input.shape()) + " has " + std::to_string(c) +
                     " channels, not divisible by num_groups=" + std::to_string(num_groups));
  }
  for (const Tensor* p : {&weight, &bias}) {
    if (p->defined() && p->shape() != Shape{c}) {
      throw ShapeError(std::string("group_norm: ") + (p == &weight ? "weight" : "bias") + " of shape " +
                       shape_str(p->shape()) + " does not match the " + std::to_string(c) + " channels of input " +
                       shape_str(input.shape()));
    }
  }
  if (!(eps >= 0)) throw ValueError("group_norm: eps must be non-negative, got " + num(eps));
  // Each (sample, group) is one row of layer_norm: its fused kernel (and device entries) computes
  // the biased mean/variance and has an analytic, twice-differentiable backward.
  int64_t per_group = c / num_groups;
  for (int64_t d = 2; d < input.dim(); ++d) per_group *= input.shape()[d];
  Tensor y = layer_norm(reshape(input, {n, num_groups, per_group}), {per_group}, {}, {}, eps);
  y = reshape(y, input.shape());
  if (!weight.defined() && !bias.defined()) return y;
  Shape affine_shape(static_cast<size_t>(input.dim() - 1), 1);
  affine_shape[0] = c;  // (C, 1, ..., 1) broadcasts over the trailing dims
  if (weight.defined()) y = mul(y, reshape(weight, affine_shape));
  if (bias.defined()) y = add(y, reshape(bias, affine_shape));
  return y;
}

Tensor instance_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                     const Tensor& bias, bool use_input_stats, double momentum, double eps) {
  const char* op = "instance_norm";
  check_floating_input(input, op);
  if (input.dim() < 3) {
    throw ShapeError("instance_norm: expected an input of shape (N, C, *spatial) with at least one spatial dim, got " +
                     shape_str(input.shape()));
  }
  const int64_t n = input.shape()[0], c = input.shape()[1];
  if (running_mean.defined() != running_var.defined()) {
    throw ValueError("instance_norm: running_mean and running_var must be given together");
  }
  for (const Tensor* t : {&running_mean, &running_var}) {
    if (t->defined() && t->shape() != Shape{c}) {
      throw ShapeError(std::string("instance_norm: ") + (t == &running_mean ? "running_mean" : "running_var") +
                       " of shape " + shape_str(t->shape()) + " does not match the " + std::to_string(c) +
                       " channels of input " + shape_str(input.shape()));
    }
  }
  if (!use_input_stats) {
    if (!running_mean.defined()) {
      throw ValueError("instance_norm: use_input_stats=False needs running_mean and running_var");
    }
    return batch_norm(input, running_mean, running_var, weight, bias, false, momentum, eps);
  }
  const Tensor y = group_norm(input, c, weight, bias, eps);  // checks weight, bias and eps
  if (running_mean.defined()) {
    int64_t per_instance = 1;
    for (int64_t d = 2; d < input.dim(); ++d) per_instance *= input.shape()[d];
    if (per_instance <= 1) {
      throw ValueError(
          "instance_norm: expected more than 1 spatial element per channel to update running stats, "
          "got input of shape " +
          shape_str(input.shape()));
    }
    NoGradGuard ng;
    const Tensor flat = reshape(input.detach(), {n, c, per_instance});
    Tensor rm = running_mean, rv = running_var;
    const Tensor batch_mean = mean(mean(flat, {2}), {0});
    const Tensor batch_var = mean(var(flat, {2}, 1.0), {0});
    copy_(rm, add(mul(rm, 1.0 - momentum), mul(batch_mean.to(rm.dtype()), momentum)));
    copy_(rv, add(mul(rv, 1.0 - momentum), mul(batch_var.to(rv.dtype()), momentum)));
  }
  return y;
}

Tensor rms_norm(const Tensor& input, const Shape& normalized_shape, const Tensor& weight, std::optional<double> eps) {
  const char* op = "rms_norm";
  check_floating_input(input, op);
  if (normalized_shape.empty()) throw ValueError("rms_norm: normalized_shape must name at least one dim");
  if (!ends_with(input.shape(), normalized_shape)) {
    throw ShapeError("rms_norm: input of shape " + shape_str(input.shape()) + " does not end in normalized_shape " +
                     shape_str(normalized_shape));
  }
  if (weight.defined() && weight.shape() != normalized_shape) {
    throw ShapeError("rms_norm: weight of shape " + shape_str(weight.shape()) + " does not match normalized_shape " +
                     shape_str(normalized_shape));
  }
  const double e = eps ? *eps : dtype_eps(input.dtype());
  if (!(e >= 0)) throw ValueError("rms_norm: eps must be non-negative, got " + num(e));
  Dims dims;
  for (int64_t i = 0; i < static_cast<int64_t>(normalized_shape.size()); ++i) dims.push_back(-1 - i);
  // Half inputs are normalised in float32 and rounded once at the end.
  const Dtype dt = input.dtype();
  const Tensor x = is_half(dt) ? input.to(Dtype::Float32) : input;
  Tensor y = mul(x, rsqrt(add(mean(mul(x, x), dims, /*keepdim=*/true), e)));
  if (weight.defined()) y = mul(y, weight.to(y.dtype()));
  return y.dtype() == dt ? y : y.to(dt);
}

Tensor normalize(const Tensor& input, double p, int64_t dim, double eps) {
  check_floating_input(input, "normalize");
  if (input.dim() == 0) throw ShapeError("normalize: a 0-d input has no dimension to normalise along");
  const int64_t d = wrap_existing_dim(dim, input.dim(), "normalize");
  if (!(eps >= 0)) throw ValueError("normalize: eps must be non-negative, got " + num(eps));
  const Tensor n = norm(input, p, {d}, /*keepdim=*/true);
  return div(input, clamp(n, Scalar(eps), std::nullopt));
}

Tensor cosine_similarity(const Tensor& x1_in, const Tensor& x2_in, int64_t dim, double eps) {
  const char* op = "cosine_similarity";
  check_floating_input(x1_in, op, "x1");
  check_floating_input(x2_in, op, "x2");
  const Shape shape = broadcast_shapes(x1_in.shape(), x2_in.shape(), op);
  if (shape.empty()) throw ShapeError("cosine_similarity: 0-d inputs have no dimension to reduce");
  const int64_t d = wrap_existing_dim(dim, static_cast<int64_t>(shape.size()), op);
  const Tensor x1 = broadcast_to(x1_in, shape), x2 = broadcast_to(x2_in, shape);
  auto clamped_norm = [&](const Tensor& x) {
    const Tensor n = norm(x, 2.0, {d}, /*keepdim=*/true);
    // PyTorch clamps the norm under no_grad: the value is max(n, eps), the gradient that of n.
    const Tensor raw = n.detach();
    return add(n, sub(clamp(raw, Scalar(eps), std::nullopt), raw));
  };
  return sum(mul(div(x1, clamped_norm(x1)), div(x2, clamped_norm(x2))), {d});
}

// ---------------------------------------------------------------- modules

GroupNorm::GroupNorm(int64_t num_groups, int64_t num_channels, double eps, bool affine, bool bias, std::string name)
    : Module(std::move(name)), num_groups_(num_groups), num_channels_(num_channels), eps_(eps), affine_(affine) {
  if (num_groups <= 0 || num_channels <= 0) {
    throw ValueError("GroupNorm: num_groups (" + std::to_string(num_groups) + ") and num_channels (" +
                     std::to_string(num_channels) + ") must be positive");
  }
  if (num_channels % num_groups != 0) {
    throw ValueError("GroupNorm: num_channels=" + std::to_string(num_channels) +
                     " must be divisible by num_groups=" + std::to_string(num_groups));
  }
  if (!(eps >= 0)) throw ValueError("GroupNorm: eps must be non-negative, got " + num(eps));
  if (affine) {
    register_parameter("weight", ones({num_channels}));
    if (bias) register_parameter("bias", zeros({num_channels}));
  }
}

Tensor GroupNorm::weight() {
  Tensor* w = find_parameter("weight");
  return w ? *w : Tensor();
}
Tensor GroupNorm::bias() {
  Tensor* b = find_parameter("bias");
  return b ? *b : Tensor();
}

Tensor GroupNorm::forward(const Tensor& input) {
  if (!input.defined()) throw ValueError("GroupNorm: input is undefined");
  if (input.dim() < 2 || input.shape()[1] != num_channels_) {
    throw ShapeError("GroupNorm(" + std::to_string(num_groups_) + ", " + std::to_string(num_channels_) +
                     "): expected an input of shape (N, " + std::to_string(num_channels_) + ", *), got " +
                     shape_str(input.shape()));
  }
  return group_norm(input, num_groups_, weight(), bias(), eps_);
}

RMSNorm::RMSNorm(Shape normalized_shape, std::optional<double> eps, bool elementwise_affine, std::string name)
    : Module(std::move(name)), shape_(std::move(normalized_shape)), eps_(eps), affine_(elementwise_affine) {
  if (shape_.empty()) throw ValueError("RMSNorm: normalized_shape must name at least one dim");
  for (int64_t d : shape_) {
    if (d <= 0) throw ValueError("RMSNorm: normalized_shape must be positive, got " + shape_str(shape_));
  }
  if (eps && !(*eps >= 0)) throw ValueError("RMSNorm: eps must be non-negative, got " + num(*eps));
  if (affine_) register_parameter("weight", ones(shape_));
}

Tensor RMSNorm::weight() {
  Tensor* w = find_parameter("weight");
  return w ? *w : Tensor();
}

Tensor RMSNorm::forward(const Tensor& input) {
  if (!input.defined()) throw ValueError("RMSNorm: input is undefined");
  if (!ends_with(input.shape(), shape_)) {
    throw ShapeError("RMSNorm(" + shape_str(shape_) + "): input of shape " + shape_str(input.shape()) +
                     " does not end in normalized_shape " + shape_str(shape_));
  }
  return rms_norm(input, shape_, weight(), eps_);
}

Tensor CosineSimilarity::forward(const Tensor&) {
  throw DtypeError("CosineSimilarity.forward takes two tensors (x1, x2), not one");
}
Tensor CosineSimilarity::forward(const Tensor& x1, const Tensor& x2) { return cosine_similarity(x1, x2, dim_, eps_); }

Tensor PairwiseDistance::forward(const Tensor&) {
  throw DtypeError("PairwiseDistance.forward takes two tensors (x1, x2), not one");
}
Tensor PairwiseDistance::forward(const Tensor& x1, const Tensor& x2) {
  const Tensor d = pairwise_distance(x1, x2, p_, eps_);
  return keepdim_ ? unsqueeze(d, -1) : d;
}

}  // namespace st::nn
