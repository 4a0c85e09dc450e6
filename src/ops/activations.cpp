// Activations composed from the native differentiable ops (elu, softplus, clamp, where, ...):
// their gradients come from those ops' backwards, so they run on every device with autograd.
// Where PyTorch's gradient at a kink differs from what the plain composition gives, the
// composition is chosen to match it (see hardtanh).
#include <cmath>
#include <string>

#include "ops/common.h"

namespace st {

namespace {

void check_input(const Tensor& x, const char* op) {
  if (!x.defined()) throw ValueError(std::string(op) + ": input tensor is undefined");
  if (!is_floating(x.dtype())) {
    throw DtypeError(std::string(op) + ": expected a floating-point input, got " + dtype_name(x.dtype()));
  }
}

// A 0-d tensor of x's dtype and device holding v.
Tensor constant_like(double v, const Tensor& x) { return full({}, v, x.dtype(), x.device()); }

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

Tensor selu(const Tensor& x) {
  check_input(x, "selu");
  // The constants of Klambauer et al. (2017), as in PyTorch.
  constexpr double kAlpha = 1.6732632423543772848170429916717;
  constexpr double kScale = 1.0507009873554804934193349852946;
  return mul(elu(x, kAlpha), kScale);
}

Tensor celu(const Tensor& x, double alpha) {
  check_input(x, "celu");
  if (alpha == 0.0) throw ValueError("celu: alpha must be nonzero, got 0");
  // celu(x, a) = a * elu(x / a, 1): the negative branch is a * expm1(x / a) and the gradient at 0 is 1.
  return mul(elu(div(x, alpha), 1.0), alpha);
}

Tensor mish(const Tensor& x) {
  check_input(x, "mish");
  return mul(x, tanh(softplus(x)));
}

Tensor hardswish(const Tensor& x) {
  check_input(x, "hardswish");
  // hardtanh passes no gradient at its bounds, which gives PyTorch's 0 at x = -3 and 1 at x = 3.
  return div(mul(x, hardtanh(add(x, 3.0), 0.0, 6.0)), 6.0);
}

Tensor hardtanh(const Tensor& x, double min_val, double max_val) {
  check_input(x, "hardtanh");
  if (min_val > max_val) {
    throw ValueError("hardtanh: min_val (" + num(min_val) + ") must not exceed max_val (" + num(max_val) + ")");
  }
  // Two where()s rather than clamp: PyTorch's gradient is zero at x == min_val and x == max_val,
  // clamp's is not. A NaN fails both comparisons and stays NaN.
  const Tensor lo = constant_like(min_val, x), hi = constant_like(max_val, x);
  return where(le(x, lo), lo, where(ge(x, hi), hi, x));
}

Tensor hardsigmoid(const Tensor& x) {
  check_input(x, "hardsigmoid");
  // Zero gradient outside the open interval (-3, 3), like PyTorch.
  return div(hardtanh(add(x, 3.0), 0.0, 6.0), 6.0);
}

Tensor relu6(const Tensor& x) {
  check_input(x, "relu6");
  return hardtanh(x, 0.0, 6.0);
}

Tensor logsigmoid(const Tensor& x) {
  check_input(x, "logsigmoid");
  // -softplus(-x) never forms exp(x) for large x; below -20 softplus returns its input exactly.
  return neg(softplus(neg(x)));
}

Tensor softsign(const Tensor& x) {
  check_input(x, "softsign");
  return div(x, add(abs(x), 1.0));
}

Tensor tanhshrink(const Tensor& x) {
  check_input(x, "tanhshrink");
  return sub(x, tanh(x));
}

Tensor threshold(const Tensor& x, double threshold, double value) {
  check_input(x, "threshold");
  // x <= threshold picks value; NaN fails the test and stays NaN, as in PyTorch.
  return where(le(x, constant_like(threshold, x)), constant_like(value, x), x);
}

Tensor prelu(const Tensor& x, const Tensor& weight) {
  check_input(x, "prelu");
  if (!weight.defined()) throw ValueError("prelu: weight tensor is undefined");
  if (weight.dtype() != x.dtype()) {
    throw DtypeError(std::string("prelu: weight dtype ") + dtype_name(weight.dtype()) + " differs from input dtype " +
                     dtype_name(x.dtype()));
  }
  if (weight.dim() > 1) {
    throw ShapeError("prelu: weight must be a scalar or 1-D tensor, got shape " + shape_str(weight.shape()));
  }
  detail::check_same_device(x, weight, "prelu");
  const int64_t n = weight.numel();
  Tensor w;
  if (n == 1) {
    w = reshape(weight, {});
  } else {
    const int64_t channels = x.dim() >= 2 ? x.shape()[1] : 1;
    if (x.dim() == 0 || channels != n) {
      throw ShapeError("prelu: weight has " + std::to_string(n) + " elements but the input of shape " +
                       shape_str(x.shape()) + " has " + std::to_string(x.dim() == 0 ? 0 : channels) +
                       " channels (dim 1)");
    }
    Shape ws(static_cast<size_t>(x.dim() - 1), 1);
    ws[0] = n;  // (C, 1, ..., 1) broadcasts against dims 1.. of x
    w = reshape(weight, ws);
  }
  // At x == 0 the gradient is weight, as in PyTorch (x > 0 picks the identity branch).
  return where(gt(x, constant_like(0.0, x)), x, mul(w, x));
}

Tensor glu(const Tensor& x, int64_t dim) {
  check_input(x, "glu");
  if (x.dim() == 0) throw ShapeError("glu: a 0-d input has no dimension to halve");
  const int64_t d = wrap_existing_dim(dim, x.dim(), "glu");
  const int64_t size = x.shape()[d];
  if (size % 2 != 0) {
    throw ShapeError("glu: dimension " + std::to_string(dim) + " of the input of shape " + shape_str(x.shape()) +
                     " has size " + std::to_string(size) + "; halving it needs an even size");
  }
  const int64_t half = size / 2;
  return mul(narrow(x, d, 0, half), sigmoid(narrow(x, d, half, half)));
}

Tensor softmin(const Tensor& x, int64_t dim) {
  check_input(x, "softmin");
  return softmax(neg(x), dim);
}

}  // namespace st
