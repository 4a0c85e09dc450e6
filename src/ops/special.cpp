// lgamma and digamma composed from differentiable elementwise ops, so they run on every device
// and their gradients (digamma, trigamma) come from autograd. Both evaluate a series for arguments
// >= 0.5 and reflect smaller ones; they compute in float64 where the device has it (the Lanczos sum
// cancels about four digits) and return the input's floating dtype.
#include <cmath>
#include <numbers>

#include "ops/common.h"

namespace st {

namespace {

// Lanczos approximation (g = 7, 9 terms) of log Gamma(z) for z >= 0.5.
Tensor lgamma_right(const Tensor& z) {
  static constexpr double p[] = {0.99999999999980993,  676.5203681218851,     -1259.1392167224028,
                                 771.32342877765313,   -176.61502916214059,   12.507343278686905,
                                 -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7};
  const Tensor zm = add(z, -1.0);
  Tensor a = full_like(z, p[0]);
  for (int i = 1; i < 9; ++i) a = add(a, mul(reciprocal(add(zm, static_cast<double>(i))), p[i]));
  const Tensor t = add(zm, 7.5);
  const double half_log_2pi = 0.5 * std::log(2.0 * std::numbers::pi);
  return add(add(sub(mul(add(zm, 0.5), log(t)), t), log(a)), half_log_2pi);
}

// digamma(z) for z >= 0.5: six steps of the recurrence psi(z) = psi(z + 1) - 1/z, then the
// asymptotic series at y = z + 6 >= 6.5 (error below 1e-13).
Tensor digamma_right(const Tensor& z) {
  Tensor shift = reciprocal(z);
  for (int i = 1; i < 6; ++i) shift = add(shift, reciprocal(add(z, static_cast<double>(i))));
  const Tensor y = add(z, 6.0);
  const Tensor inv = reciprocal(y), inv2 = mul(inv, inv);
  // 1/12 - inv2 (1/120 - inv2 (1/252 - inv2 (1/240 - inv2 (1/132 - inv2 (691/32760 - inv2 / 12))))).
  static constexpr double c[] = {1.0 / 12, 1.0 / 120, 1.0 / 252, 1.0 / 240, 1.0 / 132, 691.0 / 32760, 1.0 / 12};
  Tensor poly = full_like(y, c[6]);
  for (int i = 5; i >= 0; --i) poly = rsub(mul(inv2, poly), c[i]);
  const Tensor series = sub(sub(log(y), mul(inv, 0.5)), mul(inv2, poly));
  return sub(series, shift);
}

// The argument in the compute dtype, and the mask of the non-positive integers (the poles).
struct Prepared {
  Tensor x, poles, left, z, xr;
  Dtype out;
};

Prepared prepare(const Tensor& input, const char* op) {
  if (!input.defined()) throw ValueError(std::string(op) + ": input is undefined");
  if (input.dtype() == Dtype::Bool) throw DtypeError(std::string(op) + ": expected a numeric input, got bool");
  const Dtype out = is_floating(input.dtype()) ? input.dtype() : Dtype::Float32;
  const Dtype compute = input.device().has_float64() ? Dtype::Float64 : Dtype::Float32;
  Prepared p;
  p.out = out;
  p.x = input.to(compute);
  p.poles = logical_and(le(p.x, full_like(p.x, 0.0)), eq(p.x, floor(p.x)));
  p.left = lt(p.x, full_like(p.x, 0.5));
  p.z = where(p.left, rsub(p.x, 1.0), p.x);  // >= 0.5 everywhere (or NaN)
  // A harmless stand-in where the reflection is not used, so its unused gradient stays finite.
  p.xr = where(p.left, p.x, full_like(p.x, 0.25));
  return p;
}

}  // namespace

Tensor lgamma(const Tensor& input) {
  const Prepared p = prepare(input, "lgamma");
  const Tensor right = lgamma_right(p.z);
  // log Gamma(x) = log(pi / |sin(pi x)|) - log Gamma(1 - x) for x < 0.5.
  const Tensor reflected = sub(rsub(log(abs(sin(mul(p.xr, std::numbers::pi)))), std::log(std::numbers::pi)), right);
  Tensor r = where(p.left, reflected, right);
  r = where(logical_or(p.poles, isinf(p.x)), full_like(r, INFINITY), r);
  return r.to(p.out);
}

Tensor digamma(const Tensor& input) {
  const Prepared p = prepare(input, "digamma");
  const Tensor right = digamma_right(p.z);
  // psi(x) = psi(1 - x) - pi / tan(pi x) for x < 0.5.
  const Tensor reflected = sub(right, div(full_like(right, std::numbers::pi), tan(mul(p.xr, std::numbers::pi))));
  Tensor r = where(p.left, reflected, right);
  // PyTorch: -inf at 0, NaN at the negative integers.
  const Tensor at_zero = eq(p.x, full_like(p.x, 0.0));
  r = where(p.poles, where(at_zero, full_like(r, -INFINITY), full_like(r, NAN)), r);
  return r.to(p.out);
}

}  // namespace st
