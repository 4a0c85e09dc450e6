#include "spiraltorch/nn/linear.h"
#include "spiraltorch/autocast.h"

#include <array>
#include <cmath>

#include "nn/linear_grads.h"
#include "ops/common.h"
#include "spiraltorch/autograd.h"
#include "spiraltorch/nn/init.h"
#include "spiraltorch/ops.h"

namespace st::nn {

namespace {

// linear() on backends with the bias in the GEMM's epilogue (Backend::linear_bias): one node whose
// backward forms dx with a matmul and dw with db from one GEMM (linear_bias_backward_weight);
// undefined where the backend declines the operands (the caller then composes matmul and add).
// Under autocast the float32 weight and bias stay this node's inputs (the master weights): the node
// multiplies their region-dtype copies, and the weight-gradient GEMM writes dw and db in float32
// directly, so no cast node sits between the parameters and the product and no half gradient is
// rounded and then widened.
Tensor linear_bias_fused(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  const Dtype dt = input.dtype();
  const bool has_bias = bias.defined();
  const DeviceType type = input.device().type;
  const bool master = weight.dtype() == Dtype::Float32 && dt != Dtype::Float32 && autocast::is_enabled(type) &&
                      autocast::dtype(type) == dt;
  const Dtype pdt = master ? Dtype::Float32 : dt;  // the parameters' (and their gradients') dtype
  if (!input.is_contiguous() || input.numel() == 0 || weight.dtype() != pdt || weight.dim() != 2 ||
      weight.device() != input.device() ||
      (has_bias && (bias.dtype() != pdt || bias.dim() != 1 || bias.device() != input.device()))) {
    return Tensor();
  }
  auto& be = st::detail::backend_of(input);
  if (!be.has_linear_bias()) return Tensor();
  const int64_t k = weight.size(1), n = weight.size(0);
  const Tensor x = reshape(input.detach(), {-1, k});
  const Tensor w = master ? weight.detach().to(dt) : weight.detach().contiguous();
  const Tensor b = !has_bias ? Tensor() : master ? bias.detach().to(dt) : bias.detach().contiguous();
  Tensor out = Tensor::empty({x.size(0), n}, dt, input.device());
  if (!be.linear_bias(x, w, b, out)) return Tensor();
  Shape shape = input.shape();
  shape.back() = n;
  out = reshape(out, shape);
  if (!needs_grad({&input, &weight, &bias})) return out;
  record(out, "LinearBackward", {input, weight, bias},
         [r = std::array<GradientRoute, 3>{GradientRoute(input), GradientRoute(weight), GradientRoute(bias)}, x, w, b,
          pdt, in_shape = input.shape()](const Tensor& g) -> std::vector<Tensor> {
    const Tensor g2 = reshape(g, {-1, w.size(0)}).contiguous();
    const bool want_w = r[1].requires_grad(), want_b = b.defined() && r[2].requires_grad();
    if (grad_enabled()) {  // create_graph: the same gradients from differentiable ops
      // a master weight's route takes float32: attach the widened copy and multiply its cast
      const Tensor xa = r[0].attach(x), wa = pdt == w.dtype() ? r[1].attach(w) : r[1].attach(w.to(pdt)).to(w.dtype());
      return {r[0].requires_grad() ? reshape(matmul(g2, wa), in_shape) : Tensor(),
              want_w ? matmul(t(g2), xa).to(pdt) : Tensor(), want_b ? sum(g2, {0}).to(pdt) : Tensor()};
    }
    Tensor dx, dw, db;
    if (r[0].requires_grad()) dx = reshape(matmul(g2, w), in_shape);
    if (want_w || want_b) detail::linear_weight_grads(g2, x, pdt, b.defined(), dw, db);
    return {dx, want_w ? dw : Tensor(), want_b ? db : Tensor()};
  },
         has_bias ? std::vector<Tensor>{x, w, b} : std::vector<Tensor>{x, w});
  return out;
}

}  // namespace

namespace detail {
void linear_weight_grads(const Tensor& dy, const Tensor& x, Dtype pdt, bool with_bias, Tensor& dw, Tensor& db) {
  dw = Tensor::empty({dy.size(1), x.size(1)}, pdt, dy.device());
  db = with_bias ? Tensor::empty({dy.size(1)}, pdt, dy.device()) : Tensor();
  if (!st::detail::backend_of(dy).linear_bias_backward_weight(dy, x, dw, db, false)) {
    dw = matmul(t(dy), x).to(pdt);
    if (with_bias) db = sum(dy, {0}).to(pdt);
  }
}
}  // namespace detail

namespace init {
Tensor uniform(const Shape& shape, double bound, Dtype dtype) { return st::uniform(-bound, bound, shape, dtype); }
Tensor kaiming_uniform(const Shape& shape, int64_t fan_in, Dtype dtype) {
  return uniform(shape, fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0, dtype);
}
}  // namespace init

Tensor linear(const Tensor& input_in, const Tensor& weight_in, const Tensor& bias_in) {
  // autocast's lower-precision list: the bias too, so the add stays in the region's dtype.
  const Tensor input = autocast::to_lower(input_in);
  if (input.dim() == 0 || input.shape().back() != weight_in.shape().back()) {
    throw ShapeError("linear: input of shape " + shape_str(input.shape()) + " does not match weight of shape " +
                     shape_str(weight_in.shape()) + " (expected last dim " + std::to_string(weight_in.shape().back()) +
                     ")");
  }
  if (Tensor fused = linear_bias_fused(input, weight_in, bias_in); fused.defined()) return fused;
  const Tensor weight = autocast::to_lower(weight_in), bias = autocast::to_lower(bias_in);
  Tensor out = matmul(input, t(weight));
  return bias.defined() ? add(out, bias) : out;
}

Linear::Linear(int64_t in_features, int64_t out_features, bool bias, std::string name)
    : Module(std::move(name)), in_(in_features), out_(out_features) {
  if (in_features <= 0 || out_features <= 0) {
    throw ValueError("Linear: in_features and out_features must be positive, got " + std::to_string(in_features) +
                     " and " + std::to_string(out_features));
  }
  register_parameter("weight", init::kaiming_uniform({out_features, in_features}, in_features));
  if (bias) register_parameter("bias", init::kaiming_uniform({out_features}, in_features));
}

Tensor Linear::forward(const Tensor& input) {
  if (input.dim() == 0 || input.shape().back() != in_) {
    throw ShapeError("Linear(" + std::to_string(in_) + ", " + std::to_string(out_) + "): input of shape " +
                     shape_str(input.shape()) + " has last dim " +
                     (input.dim() ? std::to_string(input.shape().back()) : std::string("none")) + ", expected " +
                     std::to_string(in_));
  }
  return linear(input, weight(), bias());
}

}  // namespace st::nn
