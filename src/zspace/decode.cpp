#include "spiraltorch/zspace/decode.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>

#include "spiraltorch/error.h"
#include "spiraltorch/zspace/spectrum.h"

namespace st::zspace {

namespace {

double mean_abs(const std::vector<double>& xs) {
  if (xs.empty()) return 0.0;
  double s = 0.0;
  for (const double x : xs) s += std::fabs(x);
  return s / static_cast<double>(xs.size());
}

std::vector<double> diff(std::span<const double> z) {
  std::vector<double> d;
  for (size_t i = 0; i + 1 < z.size(); ++i) d.push_back(z[i + 1] - z[i]);
  return d;
}

}  // namespace

NamedValues decode_zspace(std::span<const double> z, double alpha) {
  if (z.empty()) throw ValueError("decode_zspace: z is empty");
  const size_t n = z.size();
  const auto nd = static_cast<double>(n);
  const std::vector<double> d1 = diff(z);
  const std::vector<double> d2 = diff(d1);
  double sq = 0.0, total = 0.0;
  for (const double v : z) {
    sq += v * v;
    total += v;
  }
  const double norm = std::sqrt(sq);
  const auto spec = dft(z);
  double e_alpha = 0.0, e_low = 0.0, e_high = 0.0;
  for (size_t k = 0; k <= n / 2; ++k) {
    const double mult = (k == 0 || 2 * k == n) ? 1.0 : 2.0;
    const double p = mult * std::pow(std::abs(spec[k]), 2) / nd;
    const double omega = 2.0 * static_cast<double>(k) / nd;
    if (k) e_alpha += std::pow(omega, 2 * alpha) * p;
    (omega < 0.5 ? e_low : e_high) += p;
  }
  const double m1 = mean_abs(d1), m2 = mean_abs(d2);
  return {{"speed", std::tanh(m1 + 0.25 * norm / nd)},
          {"memory", std::tanh(total / nd + 0.25 * sq / nd)},
          {"stability", std::tanh(1.5 * (1.0 / (1.0 + m2) + 1.0 / (1.0 + m1)) - 1.0)},
          {"drs", e_high + e_low > 0 ? std::tanh((e_high - e_low) / (e_high + e_low)) : 0.0},
          {"frac", sq > 0 ? std::tanh(e_alpha / sq) : 0.0}};
}

SpectralPenalty fractional_penalty(std::span<const double> z, double alpha) {
  const size_t n = z.size();
  if (n <= 1) return {0.0, std::vector<double>(n, 0.0)};
  const size_t bins = n / 2 + 1;
  const auto spec = dft(z);
  std::vector<double> w(bins, 0.0);
  for (size_t k = 1; k < bins; ++k) w[k] = std::pow(static_cast<double>(k) / static_cast<double>(bins - 1), 2 * alpha);
  double r = 0.0;
  for (size_t k = 0; k < bins; ++k) r += w[k] * std::pow(std::abs(spec[k]), 2);
  r /= static_cast<double>(bins);
  std::vector<double> grad(n);
  double peak = 1.0;
  for (size_t j = 0; j < n; ++j) {
    double s = 0.0;
    for (size_t k = 0; k < bins; ++k) {
      const double ang =
          -2.0 * std::numbers::pi * static_cast<double>(k) * static_cast<double>(j) / static_cast<double>(n);
      s += w[k] * (std::conj(spec[k]) * std::polar(1.0, ang)).real();
    }
    grad[j] = 2.0 / static_cast<double>(bins) * s;
    peak = std::max(peak, std::fabs(grad[j]));
  }
  for (double& g : grad) g /= peak;
  return {r, std::move(grad)};
}

}  // namespace st::zspace
