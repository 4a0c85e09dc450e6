// The transformer's feed-forward block, linear(act(linear(x))), as one node where the backend's
// GEMM epilogues carry the activation (nn::feed_forward in functional.h).
#include <array>
#include <string>
#include <vector>

#include "nn/linear_grads.h"
#include "ops/common.h"
#include "spiraltorch/autocast.h"
#include "spiraltorch/autograd.h"
#include "spiraltorch/nn/functional.h"
#include "spiraltorch/nn/linear.h"

namespace st::nn {

namespace {

Tensor activate(const Tensor& a, const std::string& activation) {
  return activation == "relu" ? relu(a) : gelu(a, activation == "gelu_tanh");
}

// The node's inputs, in order: input, weight1, bias1, weight2, bias2.
using Five = std::array<Tensor, 5>;
using Routes = std::array<GradientRoute, 5>;

// The gradients of the composite recomputed from `values` (input in the region's dtype dt, the
// parameters in theirs; undefined: absent) for the inputs whose routes need one: differentiable
// when create_graph (each value attached to its input's route), plain otherwise (the fallback when
// the backend declines a backward GEMM).
std::vector<Tensor> recomputed_grads(const Routes& r, const Five& values, Dtype dt, const Tensor& g,
                                     bool create_graph) {
  EnableGradGuard on;
  Five a;
  std::vector<Tensor> wrt;
  std::vector<size_t> slot;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!values[i].defined()) continue;
    if (create_graph) {
      a[i] = r[i].attach(values[i]);
    } else {
      a[i] = values[i].detach();
      if (r[i].requires_grad()) a[i].set_requires_grad(true);
    }
    if (r[i].requires_grad()) {
      wrt.push_back(a[i]);
      slot.push_back(i);
    }
  }
  const auto low = [dt](const Tensor& p) { return p.defined() && p.dtype() != dt ? p.to(dt) : p; };
  const Tensor y = linear(gelu(linear(a[0], low(a[1]), low(a[2])), true), low(a[3]), low(a[4]));
  const std::vector<Tensor> grads = st::grad({y}, wrt, {g}, false, create_graph, true);
  std::vector<Tensor> out(a.size());
  for (size_t j = 0; j < slot.size(); ++j) out[slot[j]] = grads[j];
  return out;
}

// linear(gelu_tanh(linear(input, w1, b1)), w2, b2) from the backend's GELU epilogues; undefined
// where the backend declines (the caller then composes). Autocast's float32 weights and biases stay
// the node's inputs (multiplied as region-dtype copies, their gradients float32), as in linear().
Tensor fused_gelu_tanh(const Tensor& input, const Tensor& w1_in, const Tensor& b1_in, const Tensor& w2_in,
                       const Tensor& b2_in) {
  const Dtype dt = input.dtype();
  const DeviceType type = input.device().type;
  const bool master = w1_in.dtype() == Dtype::Float32 && dt != Dtype::Float32 && autocast::is_enabled(type) &&
                      autocast::dtype(type) == dt;
  const Dtype pdt = master ? Dtype::Float32 : dt;  // the parameters' (and their gradients') dtype
  for (const Tensor* p : {&w1_in, &b1_in, &w2_in, &b2_in}) {
    if (p->defined() && (p->dtype() != pdt || p->device() != input.device())) return Tensor();
  }
  if (!input.is_contiguous() || input.numel() == 0) return Tensor();
  auto& be = st::detail::backend_of(input);
  if (!be.has_linear_bias()) return Tensor();
  const auto lowered = [&](const Tensor& p) {
    return !p.defined() ? Tensor() : master ? p.detach().to(dt) : p.detach().contiguous();
  };
  const Tensor w1 = lowered(w1_in), b1 = lowered(b1_in), w2 = lowered(w2_in), b2 = lowered(b2_in);
  const Tensor x = reshape(input.detach(), {-1, w1.size(1)});
  const int64_t m = x.size(0), hidden = w1.size(0), n = w2.size(0);
  Tensor u = Tensor::empty({m, hidden}, dt, input.device());
  Tensor pre = Tensor::empty({m, hidden}, dt, input.device());
  Tensor out = Tensor::empty({m, n}, dt, input.device());
  if (!be.linear_bias_gelu(x, w1, b1, u, pre) || !be.linear_bias(u, w2, b2, out)) return Tensor();
  Shape shape = input.shape();
  shape.back() = n;
  out = reshape(out, shape);
  if (!needs_grad({&input, &w1_in, &b1_in, &w2_in, &b2_in})) return out;
  const Routes r{GradientRoute(input), GradientRoute(w1_in), GradientRoute(b1_in), GradientRoute(w2_in),
                 GradientRoute(b2_in)};
  std::vector<Tensor> saved{x, w1, u, pre, w2};
  for (const Tensor* b : {&b1, &b2}) {
    if (b->defined()) saved.push_back(*b);
  }
  record(out, "FeedForwardBackward", {input, w1_in, b1_in, w2_in, b2_in},
         [r, x, w1, b1, w2, b2, u, pre, dt, pdt, in_shape = input.shape()](const Tensor& g) -> std::vector<Tensor> {
    const auto wide = [pdt](const Tensor& p) { return p.defined() && p.dtype() != pdt ? p.to(pdt) : p; };
    const auto composite = [&](bool create_graph) {
      return recomputed_grads(r, {reshape(x, in_shape), wide(w1), wide(b1), wide(w2), wide(b2)}, dt, g, create_graph);
    };
    if (grad_enabled()) return composite(true);
    const Tensor g2 = reshape(g, {-1, w2.size(0)}).contiguous();
    auto& backend = st::detail::backend_of(g2);
    const bool want_b1 = b1.defined() && r[2].requires_grad(), want_b2 = b2.defined() && r[4].requires_grad();
    // da = (g w2) * gelu_tanh'(pre) from one GEMM; the first bias's gradient from dw1's
    Tensor da = Tensor::empty(pre.shape(), dt, pre.device());
    if (!backend.linear_gelu_backward_input(g2, w2, pre, da)) return composite(false);
    Tensor dw1, db1, dw2, db2;
    if (r[3].requires_grad() || want_b2) detail::linear_weight_grads(g2, u, pdt, want_b2, dw2, db2);
    if (r[1].requires_grad() || want_b1) detail::linear_weight_grads(da, x, pdt, want_b1, dw1, db1);
    return {r[0].requires_grad() ? reshape(matmul(da, w1), in_shape) : Tensor(), r[1].requires_grad() ? dw1 : Tensor(),
            want_b1 ? db1 : Tensor(), r[3].requires_grad() ? dw2 : Tensor(), want_b2 ? db2 : Tensor()};
  }, saved);
  return out;
}

void check_args(const Tensor& input, const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2,
                const std::string& activation) {
  if (activation != "relu" && activation != "gelu" && activation != "gelu_tanh") {
    throw ValueError("feed_forward: activation should be 'relu', 'gelu' or 'gelu_tanh', got '" + activation + "'");
  }
  if (w1.dim() != 2 || w2.dim() != 2) {
    throw ShapeError("feed_forward: weight1 and weight2 must be 2-D, got shapes " + shape_str(w1.shape()) + " and " +
                     shape_str(w2.shape()));
  }
  const int64_t in = w1.size(1), hidden = w1.size(0), out = w2.size(0);
  if (input.dim() == 0 || input.shape().back() != in) {
    throw ShapeError("feed_forward: input of shape " + shape_str(input.shape()) + " does not match weight1 of shape " +
                     shape_str(w1.shape()) + " (expected last dim " + std::to_string(in) + ")");
  }
  if (w2.size(1) != hidden) {
    throw ShapeError("feed_forward: weight2 of shape " + shape_str(w2.shape()) + " does not take weight1's " +
                     std::to_string(hidden) + " hidden features (weight1 " + shape_str(w1.shape()) + ")");
  }
  if (b1.defined() && b1.shape() != Shape{hidden}) {
    throw ShapeError("feed_forward: bias1 of shape " + shape_str(b1.shape()) + ", expected (" + std::to_string(hidden) +
                     ",)");
  }
  if (b2.defined() && b2.shape() != Shape{out}) {
    throw ShapeError("feed_forward: bias2 of shape " + shape_str(b2.shape()) + ", expected (" + std::to_string(out) +
                     ",)");
  }
}

}  // namespace

Tensor feed_forward(const Tensor& input_in, const Tensor& weight1, const Tensor& bias1, const Tensor& weight2,
                    const Tensor& bias2, const std::string& activation) {
  check_args(input_in, weight1, bias1, weight2, bias2, activation);
  const Tensor input = autocast::to_lower(input_in);
  if (activation == "gelu_tanh") {
    if (Tensor fused = fused_gelu_tanh(input, weight1, bias1, weight2, bias2); fused.defined()) return fused;
  }
  return linear(activate(linear(input, weight1, bias1), activation), weight2, bias2);
}

}  // namespace st::nn
