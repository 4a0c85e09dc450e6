#pragma once
// Branch-free float32 math that GCC vectorises inside `omp simd` loops, so the
// transcendental activations run at SIMD width. Accuracy is within a few ulp of
// libm (erfc: relative error below 1.2e-7); float64 uses libm directly.
#include <bit>
#include <cmath>
#include <cstdint>

// Forced inlining: a call inside an `omp simd` loop blocks vectorisation, and GCC's
// inliner gives up on these once they are used from many instantiations.
#define ST_VINLINE inline __attribute__((always_inline))
// The same for a lambda handed to a vector loop: `[](float x) ST_VINLINE_LAMBDA { ... }`.
#define ST_VINLINE_LAMBDA __attribute__((always_inline))

namespace st::cpu {

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

// erfc(z) for z >= 0 (Chebyshev fit, fractional error < 1.2e-7).
ST_VINLINE float verfc_pos(float z) {
  const float t = 1.0f / (1.0f + 0.5f * z);
  const float poly =
      -z * z - 1.26551223f +
      t * (1.00002368f +
           t * (0.37409196f +
                t * (0.09678418f +
                     t * (-0.18628806f +
                          t * (0.27886807f + t * (-1.13520398f + t * (1.48851587f + t * (-0.82215223f + t * 0.17087277f))))))));
  return t * vexp(poly);
}

ST_VINLINE float vtanh(float x) {
  const float ax = std::fabs(x);
  const float z = x * x;
  const float small =
      ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z + 1.33314422036e-1f) * z -
       3.33332819422e-1f) * z * x + x;
  const float e = vexp(2.0f * (ax > 44.0f ? 44.0f : ax));
  float big = 1.0f - 2.0f / (e + 1.0f);
  big = x < 0 ? -big : big;
  const float y = ax < 0.625f ? small : big;
  return x != x ? x : y;
}

ST_VINLINE float vsigmoid(float x) { return 1.0f / (1.0f + vexp(-x)); }

// exp(x) for x <= 0 (or NaN): the range GELU's erfc needs. Results below 2^-126 flush to
// that scale's neighbourhood instead of going subnormal, which saves vexp's clamps and
// two-step scaling; GELU multiplies them by x/2 and they vanish either way.
ST_VINLINE float vexp_nonpos(float x) {
  float n;
  const float p = vexp_reduced(x < -87.0f ? -87.0f : x, n);
  return p * std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
}

// erfc(z) for z >= 0, Abramowitz & Stegun 7.1.26 (absolute error < 1.5e-7): half
// the polynomial work of verfc_pos, used where that accuracy is enough (GELU).
ST_VINLINE float verfc_pos_fast(float z) {
  const float t = 1.0f / (1.0f + 0.3275911f * z);
  const float poly = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
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

// float64 versions (libm).
ST_VINLINE double vexp(double x) { return std::exp(x); }
ST_VINLINE double vtanh(double x) { return std::tanh(x); }
ST_VINLINE double vsigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
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

}  // namespace st::cpu
