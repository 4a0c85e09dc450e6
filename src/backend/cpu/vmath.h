#pragma once
// Branch-free float32 math that GCC vectorises inside `omp simd` loops, so the
// transcendental activations and exp/log/log1p/expm1/atanh/erf run at SIMD width (libm's
// float functions are one scalar call per element). Accuracy is within 3 ulp of the float64
// result (tests/python/test_cpu_vmath.py; erfc: relative error below 1.2e-7) with libm's special
// values; float64 uses libm directly.
#include <bit>
#include <cmath>
#include <cstdint>

// Forced inlining: a call inside an `omp simd` loop blocks vectorisation, and GCC's
// inliner gives up on these once they are used from many instantiations.
#define ST_VINLINE inline __attribute__((always_inline))
// The same for a lambda handed to a vector loop: `[](float x) ST_VINLINE_LAMBDA { ... }`.
#define ST_VINLINE_LAMBDA __attribute__((always_inline))

namespace st::backend::cpu {

// exp(xc) = 2^n * p(r), r = xc - n ln2: the range reduction and polynomial the exps below
// share; returns p and sets n (a whole number).
ST_VINLINE float vexp_reduced(float xc, float& n) {
  n = std::floor(xc * 1.44269504088896341f + 0.5f);
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  return p * r * r + r + 1.0f;
}

ST_VINLINE float vexp(float x) {
  const float xc = x < -103.0f ? -103.0f : (x > 88.75f ? 88.75f : x);
  float n;
  const float p = vexp_reduced(xc, n);
  // Scale by 2^n in two steps so results down to the subnormal range stay exact.
  const int32_t ni = static_cast<int32_t>(n);
  const int32_t n1 = ni / 2, n2 = ni - n1;
  const float s1 = std::bit_cast<float>((n1 + 127) << 23);
  const float s2 = std::bit_cast<float>((n2 + 127) << 23);
  float y = p * s1 * s2;
  y = x > 88.7228f ? INFINITY : y;
  y = x < -103.0f ? 0.0f : y;
  return x != x ? x : y;
}

// exp(x) for x in [-87, 88] (exp_normal_range), where 2^n is a normal float and one scale is
// exact: what vexp computes there with ten fewer instructions (no clamps, no two-step scale, no
// selects for inf/0/NaN), for loops that send the other inputs to libm (the Exp op's fix-up pass)
// and for callers whose argument stays in range (tanh and erf).
ST_VINLINE bool exp_normal_range(float x) { return x >= -87.0f && x <= 88.0f; }
ST_VINLINE float vexp_normal(float x) {
  float n;
  const float p = vexp_reduced(x, n);
  return p * std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
}

// erfc(z) for 0 <= z <= 9 (Chebyshev fit, fractional error < 1.2e-7); exp's argument stays
// above -87 there, so the normal-range exp serves.
ST_VINLINE float verfc_pos(float z) {
  const float t = 1.0f / (1.0f + 0.5f * z);
  const float poly =
      -z * z - 1.26551223f +
      t * (1.00002368f +
           t * (0.37409196f +
                t * (0.09678418f +
                     t * (-0.18628806f +
                          t * (0.27886807f +
                               t * (-1.13520398f + t * (1.48851587f + t * (-0.82215223f + t * 0.17087277f))))))));
  return t * vexp_normal(poly);
}

ST_VINLINE float vtanh(float x) {
  const float ax = std::fabs(x);
  const float z = x * x;
  const float small =
      ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z + 1.33314422036e-1f) * z -
       3.33332819422e-1f) *
          z * x +
      x;
  const float e = vexp_normal(2.0f * (ax > 44.0f ? 44.0f : ax));  // argument in [0, 88]
  const float big = 1.0f - 2.0f / (e + 1.0f);
  // tanh is odd: the sign from x (also keeps tanh(-0) = -0, which the polynomial loses).
  const float y = std::copysign(ax < 0.625f ? std::fabs(small) : big, x);
  return x != x ? x : y;
}

ST_VINLINE float vsigmoid(float x) { return 1.0f / (1.0f + vexp(-x)); }
// sigmoid(x) for x >= -87 (sigmoid_normal_range): exp(-x) in the normal range (x above 87 gives
// exactly 1 either way), for loops that send the other inputs (NaN, x < -87) to libm.
ST_VINLINE bool sigmoid_normal_range(float x) { return x >= -87.0f; }
ST_VINLINE float vsigmoid_normal(float x) { return 1.0f / (1.0f + vexp_normal(x > 87.0f ? -87.0f : -x)); }

// exp(x) for x <= 0 (or NaN): the range GELU's erfc needs. Results below 2^-126 flush to
// that scale's neighbourhood instead of going subnormal, which saves vexp's clamps and
// two-step scaling; GELU multiplies them by x/2 and they vanish either way.
ST_VINLINE float vexp_nonpos(float x) { return vexp_normal(x < -87.0f ? -87.0f : x); }

// erfc(z) for z >= 0, Abramowitz & Stegun 7.1.26 (absolute error < 1.5e-7): half
// the polynomial work of verfc_pos, used where that accuracy is enough (GELU).
ST_VINLINE float verfc_pos_fast(float z) {
  const float t = 1.0f / (1.0f + 0.3275911f * z);
  const float poly =
      t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
  return poly * vexp_nonpos(-z * z);
}

ST_VINLINE float vgelu(float x) {
  // 0.5 x (1 + erf(x / sqrt 2)) = 0.5 x erfc(-x / sqrt 2), evaluated on the side that keeps precision.
  const float z = std::fabs(x) * 0.70710678118654752f;
  const float c = verfc_pos_fast(z);
  const float one_plus_erf = x >= 0 ? 2.0f - c : c;
  return 0.5f * x * one_plus_erf;
}

ST_VINLINE float vgelu_tanh(float x) {
  const float inner = 0.7978845608028654f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + vtanh(inner));
}

// d/dx GELU(x) = Phi(x) + x phi(x), with Phi from the same erfc as vgelu.
ST_VINLINE float vgelu_grad(float x) {
  const float z = std::fabs(x) * 0.70710678118654752f;
  const float c = verfc_pos_fast(z);
  const float Phi = 0.5f * (x >= 0 ? 2.0f - c : c);
  return Phi + x * 0.3989422804014327f * vexp_nonpos(-0.5f * x * x);
}
// d/dx of the tanh form: 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2), t = tanh(k (x + c x^3)).
ST_VINLINE float vgelu_tanh_grad(float x) {
  const float k = 0.7978845608028654f, c = 0.044715f;
  const float t = vtanh(k * (x + c * x * x * x));
  return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * k * (1.0f + 3.0f * c * x * x);
}

// log of m 2^e from a positive float's bits ix (e_adjust subtracted from the exponent field),
// with m in [sqrt(1/2), sqrt(2)): log(m) = f - f^2/2 + f^3 P(f), f = m - 1 (Cephes' logf
// polynomial), e ln2 added in two parts.
ST_VINLINE float vlog_bits(uint32_t ix, int32_t e_adjust) {
  int32_t e = static_cast<int32_t>(ix >> 23) - 127 - e_adjust;
  float m = std::bit_cast<float>((ix & 0x007fffffu) | 0x3f800000u);  // [1, 2)
  const bool big = m > 1.41421356f;
  m = big ? m * 0.5f : m;
  e = big ? e + 1 : e;
  const float f = m - 1.0f;
  const float z = f * f;
  float y = 7.0376836292e-2f;
  y = y * f - 1.1514610310e-1f;
  y = y * f + 1.1676998740e-1f;
  y = y * f - 1.2420140846e-1f;
  y = y * f + 1.4249322787e-1f;
  y = y * f - 1.6668057665e-1f;
  y = y * f + 2.0000714765e-1f;
  y = y * f - 2.4999993993e-1f;
  y = y * f + 3.3333331174e-1f;
  y = y * f * z;
  const float fe = static_cast<float>(e);
  y = y - 2.12194440e-4f * fe - 0.5f * z;
  return f + y + 0.693359375f * fe;
}

// log(x) for every float; subnormals are scaled up first. Special values as libm: log(0) = -inf,
// log(x < 0) = NaN, log(inf) = inf, NaN propagates.
ST_VINLINE float vlog(float x) {
  const bool sub = x < 1.17549435e-38f;
  const float xs = sub ? x * 8388608.0f : x;  // 2^23
  float r = vlog_bits(std::bit_cast<uint32_t>(xs), sub ? 23 : 0);
  r = x == 0.0f ? -INFINITY : r;
  r = x < 0.0f ? NAN : r;
  r = x == INFINITY ? INFINITY : r;
  return x != x ? x : r;
}

// log(x) for positive normal finite x (log_normal_range) without vlog's scaling and selects, for
// loops that send the other inputs to libm (the Log op's fix-up pass).
ST_VINLINE bool log_normal_range(float x) { return x >= 1.17549435e-38f && x <= 3.40282347e38f; }
ST_VINLINE float vlog_normal(float x) { return vlog_bits(std::bit_cast<uint32_t>(x), 0); }

// log(1 + x) as log(u) x / (u - 1), u = 1 + x rounded: the quotient corrects u's rounding
// (Goldberg), so small x keep full relative accuracy.
ST_VINLINE float vlog1p(float x) {
  const float u = 1.0f + x;
  const float d = u - 1.0f;
  const float r = vlog(u) * (x / (d == 0.0f ? 1.0f : d));
  return d == 0.0f ? x : (u == INFINITY ? u : r);
}

// exp(x) - 1 as (u - 1) x / log(u), u = exp(x) (Kahan): the ratio cancels exp's rounding error.
ST_VINLINE float vexpm1(float x) {
  const float u = vexp(x);
  const float d = u - 1.0f;
  const float l = vlog(u);
  const float r = d * (x / (l == 0.0f ? 1.0f : l));
  float y = u == 1.0f ? x : (d == -1.0f ? -1.0f : r);
  y = u == INFINITY ? u : y;
  return x != x ? x : y;
}

// atanh(x) = sign(x) log1p(2|x| / (1 - |x|)) / 2 (on |x|: for x near -1, 1 + 2x / (1 - x) would
// cancel): +-inf at +-1, NaN beyond.
ST_VINLINE float vatanh(float x) {
  const float a = std::fabs(x);
  return std::copysign(0.5f * vlog1p(2.0f * a / (1.0f - a)), x);
}

// erf(x): its Taylor series below |x| = 0.5 (1 - erfc would lose the relative accuracy of
// small x to cancellation), 1 - erfc(|x|) with the sign above.
ST_VINLINE float verf(float x) {
  const float a = std::fabs(x);
  const float x2 = x * x;
  const float series =
      1.1283791671f * x *
      (1.0f - x2 * (0.3333333333f - x2 * (0.1f - x2 * (0.0238095238f - x2 * (0.0046296296f - x2 * 0.0007575758f)))));
  // erf(x) rounds to +-1 from |x| = 4 on (erfc(4) = 1.5e-8 is below half an ulp of 1).
  const float e = 1.0f - verfc_pos(a < 4.0f ? a : 4.0f);
  const float big = x < 0 ? -e : e;
  return x != x ? x : (a < 0.5f ? series : big);
}

// sin, cos and tan share the reduction x = q pi/2 + r, |r| <= pi/4. It runs in double, where x
// is exact and pi/2 splits into a 33-bit head (q times it is exact for |q| < 2^20) and a tail, so r
// keeps float's relative accuracy even next to multiples of pi/2; the polynomials on r are
// Cephes' sinf/cosf. Valid for |x| < kTrigFastBound: callers hand larger, infinite and NaN
// inputs to libm (its Payne-Hanek reduction), see trig_fast_range.
constexpr float kTrigFastBound = 1.0e6f;  // |q| <= 636620 < 2^20
ST_VINLINE bool trig_fast_range(float x) { return std::fabs(x) < kTrigFastBound; }

ST_VINLINE float vtrig_reduce(float x, int32_t& q) {
  const double xd = trig_fast_range(x) ? x : 0.0;                       // keeps the int conversion defined
  const double qd = std::nearbyint(xd * 0.63661977236758134308) + 0.0;  // -0 - (+0) keeps r = -0 for x = -0
  q = static_cast<int32_t>(qd);
  return static_cast<float>((xd - qd * 1.57079632673412561417e+00) - qd * 6.07710050650619224932e-11);
}
ST_VINLINE float vsin_poly(float r) {
  const float z = r * r;
  const float s = r + r * z * (-1.6666654611e-1f + z * (8.3321608736e-3f + z * -1.9515295891e-4f));
  return r == 0.0f ? r : s;  // sin(-0) = -0 (the sum would round it to +0)
}
ST_VINLINE float vcos_poly(float r) {
  const float z = r * r;
  return 1.0f - 0.5f * z + z * z * (4.166664568298827e-2f + z * (-1.388731625493765e-3f + z * 2.443315711809948e-5f));
}
// sin(x) for quadrant offset 0, cos(x) = sin(x + pi/2) for offset 1.
ST_VINLINE float vsin_quadrant(float x, int32_t offset) {
  int32_t q;
  const float r = vtrig_reduce(x, q);
  q += offset;
  const float v = (q & 1) ? vcos_poly(r) : vsin_poly(r);
  return std::bit_cast<float>(std::bit_cast<uint32_t>(v) ^ (static_cast<uint32_t>(q & 2) << 30));
}
ST_VINLINE float vsin(float x) { return vsin_quadrant(x, 0); }
ST_VINLINE float vcos(float x) { return vsin_quadrant(x, 1); }
// tan = sin r / cos r, or -cos r / sin r in odd quadrants.
ST_VINLINE float vtan(float x) {
  int32_t q;
  const float r = vtrig_reduce(x, q);
  const float s = vsin_poly(r), c = vcos_poly(r);
  return (q & 1) ? -c / s : s / c;
}

// float64 versions (libm).
ST_VINLINE double vlog(double x) { return std::log(x); }
ST_VINLINE double vlog1p(double x) { return std::log1p(x); }
ST_VINLINE double vexpm1(double x) { return std::expm1(x); }
ST_VINLINE double vatanh(double x) { return std::atanh(x); }
ST_VINLINE double verf(double x) { return std::erf(x); }
ST_VINLINE double vexp(double x) { return std::exp(x); }
ST_VINLINE bool exp_normal_range(double) { return true; }
ST_VINLINE double vexp_normal(double x) { return std::exp(x); }
ST_VINLINE bool log_normal_range(double) { return true; }
ST_VINLINE double vlog_normal(double x) { return std::log(x); }
ST_VINLINE bool sigmoid_normal_range(double) { return true; }
ST_VINLINE double vtanh(double x) { return std::tanh(x); }
ST_VINLINE double vsin(double x) { return std::sin(x); }
ST_VINLINE double vcos(double x) { return std::cos(x); }
ST_VINLINE double vtan(double x) { return std::tan(x); }
ST_VINLINE bool trig_fast_range(double) { return true; }
ST_VINLINE double vsigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
ST_VINLINE double vsigmoid_normal(double x) { return vsigmoid(x); }
ST_VINLINE double vgelu(double x) { return 0.5 * x * std::erfc(-x * 0.70710678118654752440); }
ST_VINLINE double vgelu_tanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x)));
}
ST_VINLINE double vgelu_grad(double x) {
  return 0.5 * std::erfc(-x * 0.70710678118654752440) + x * 0.39894228040143267794 * std::exp(-0.5 * x * x);
}
ST_VINLINE double vgelu_tanh_grad(double x) {
  const double k = 0.79788456080286535588, c = 0.044715;
  const double t = std::tanh(k * (x + c * x * x * x));
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3.0 * c * x * x);
}

}  // namespace st::backend::cpu
