// Elementwise functions of torch's surface composed from the native ops (so gradients and every
// device come with them): isclose, nan_to_num, heaviside, hypot, fmod, frac, xlogy, logit, sinc.
#include <cmath>
#include <limits>
#include <string>

#include "ops/common.h"

namespace st {

namespace {

// The largest finite value of a floating dtype.
double finite_max(Dtype dt) {
  switch (dt) {
    case Dtype::Float16:
      return 65504.0;
    case Dtype::BFloat16:
      return 3.3895313892515355e38;
    case Dtype::Float32:
      return std::numeric_limits<float>::max();
    default:
      return std::numeric_limits<double>::max();
  }
}

Tensor as_float(const Tensor& x) { return is_floating(x.dtype()) ? x : cast(x, Dtype::Float32); }

void require_float(const Tensor& x, const char* op) {
  if (!is_floating(x.dtype())) {
    throw DtypeError(std::string(op) + ": expects a floating-point tensor, got " + dtype_name(x.dtype()));
  }
}

}  // namespace

Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  if (rtol < 0 || atol < 0) {
    throw ValueError("isclose: rtol and atol must be non-negative, got rtol=" + std::to_string(rtol) +
                     ", atol=" + std::to_string(atol));
  }
  // Exact matches (infinities of one sign included) are close; otherwise |a - b| <= atol + rtol |b|.
  Tensor close = logical_or(eq(a, b), le(abs(sub(a, b)), add(mul(abs(b), rtol), atol)));
  if (equal_nan) close = logical_or(close, logical_and(isnan(a), isnan(b)));
  return close;
}

Tensor nan_to_num(const Tensor& x, double nan, std::optional<double> posinf, std::optional<double> neginf) {
  if (!is_floating(x.dtype())) return x.clone();
  const double hi = posinf.value_or(finite_max(x.dtype())), lo = neginf.value_or(-finite_max(x.dtype()));
  const double inf = std::numeric_limits<double>::infinity();
  Tensor out = where(isnan(x), full_like(x, nan), x);
  out = where(eq(x, wrap_scalar(inf, x)), full_like(x, hi), out);
  return where(eq(x, wrap_scalar(-inf, x)), full_like(x, lo), out);
}

Tensor heaviside(const Tensor& x, const Tensor& values) {
  if (x.dtype() != values.dtype()) {
    throw DtypeError(std::string("heaviside: input (") + dtype_name(x.dtype()) + ") and values (" +
                     dtype_name(values.dtype()) + ") must have the same dtype");
  }
  const Tensor step = cast(gt(x, wrap_scalar(0, x)), x.dtype());
  return where(eq(x, wrap_scalar(0, x)), values, step);
}

Tensor hypot(const Tensor& a, const Tensor& b) {
  if (!is_floating(a.dtype()) || !is_floating(b.dtype())) {
    throw DtypeError(std::string("hypot: expects floating-point inputs, got ") + dtype_name(a.dtype()) + " and " +
                     dtype_name(b.dtype()));
  }
  // Scaled by the larger magnitude so the squares cannot overflow; infinite when either is.
  const Tensor aa = abs(a), ab = abs(b);
  const Tensor m = maximum(aa, ab);
  const Tensor safe = where(logical_or(eq(m, wrap_scalar(0, m)), isinf(m)), ones_like(m), m).detach();
  const Tensor r = mul(sqrt(add(square(div(aa, safe)), square(div(ab, safe)))), safe);
  return where(logical_or(isinf(aa), isinf(ab)), full_like(r, std::numeric_limits<double>::infinity()), r);
}

Tensor fmod(const Tensor& a, const Tensor& b) {
  if (!is_floating(a.dtype()) && !is_floating(b.dtype()) && any(eq(b, wrap_scalar(0, b))).item() != 0) {
    throw ValueError("fmod: integer division by zero");
  }
  // remainder() takes the divisor's sign; move the result to the dividend's.
  const Tensor r = remainder(a, b);
  const Tensor fix = logical_and(ne(r, wrap_scalar(0, r)), ne(lt(r, wrap_scalar(0, r)), lt(a, wrap_scalar(0, a))));
  return where(fix, sub(r, b), r);
}

Tensor frac(const Tensor& x) {
  require_float(x, "frac");
  return sub(x, trunc(x));
}

Tensor xlogy(const Tensor& x_in, const Tensor& y_in) {
  const Tensor y = as_float(y_in);
  const Tensor x = is_floating(x_in.dtype()) ? x_in : cast(x_in, y.dtype());
  const Tensor log_y = log(y);
  // Where x == 0 the infinite logs (y = 0 or inf) count as 0, so the product is 0; x's gradient stays log(y).
  const Tensor fix = logical_and(eq(x, wrap_scalar(0, x)), isinf(log_y));
  return mul(x, where(fix, zeros_like(log_y), log_y));
}

Tensor logit(const Tensor& x, std::optional<double> eps) {
  Tensor p = as_float(x);
  if (eps) p = clamp(p, Scalar(*eps), Scalar(1 - *eps));
  return log(div(p, rsub(p, 1)));
}

Tensor sinc(const Tensor& x_in) {
  const Tensor x = as_float(x_in);
  const Tensor zero = eq(x, wrap_scalar(0, x));
  const Tensor safe = mul(where(zero, ones_like(x), x), M_PI);
  return where(zero, ones_like(x), div(sin(safe), safe));
}

}  // namespace st
