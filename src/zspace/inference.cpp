#include "spiraltorch/zspace/inference.h"

#include <algorithm>
#include <cmath>

#include "checks.h"

namespace st::zspace {

namespace {

bool is_base_metric(std::string_view name) {
  return name == "speed" || name == "memory" || name == "stability" || name == "drs" || name == "frac";
}

double lookup(const NamedValues& values, std::string_view name, double fallback) {
  for (const auto& [k, v] : values) {
    if (k == name) return v;
  }
  return fallback;
}

double softplus(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); }

std::string last_part(const std::string& key) {
  const auto dot = key.rfind('.');
  return dot == std::string::npos ? key : key.substr(dot + 1);
}

}  // namespace

double telemetry_reliability(const NamedValues& telemetry) {
  std::optional<double> variance;
  double focus_sum = 0.0;
  int focus_n = 0;
  for (const auto& [k, v] : telemetry) {
    const std::string part = last_part(k);
    if (part == "variance") variance = variance ? std::max(*variance, v) : v;
    if (part == "focus") {
      focus_sum += v;
      ++focus_n;
    }
  }
  double r = 1.0;
  if (variance) r /= 1.0 + std::max(*variance, 0.0);
  if (focus_n) r *= std::min(std::max(1.0 + 0.25 * focus_sum / focus_n, 0.75), 1.0);
  return r;
}

std::array<double, 3> barycentric_weights(const NamedValues& metrics) {
  std::array<double, 3> w{softplus(lookup(metrics, "speed", 0.0)), softplus(lookup(metrics, "memory", 0.0)),
                          softplus(lookup(metrics, "stability", 0.0))};
  const double total = w[0] + w[1] + w[2];
  for (double& x : w) x /= total;
  return w;
}

Inference infer(std::span<const double> z, double alpha, const ObservedMetrics& obs, double smoothing,
                const NamedValues& telemetry, std::string_view who) {
  if (!(0.0 <= smoothing && smoothing <= 1.0)) {
    throw ValueError(std::string(who) + ": smoothing must be in [0, 1], got " + detail::num(smoothing));
  }
  Inference out;
  for (const auto& kv : obs.values()) {
    if (is_base_metric(kv.first)) out.observed.push_back(kv);
  }
  out.prior = decode_zspace(z, alpha);
  const auto fit = [&](std::span<const double> zz) {
    const NamedValues d = decode_zspace(zz, alpha);
    double s = 0.0;
    for (const auto& [k, v] : out.observed) s += std::pow(lookup(d, k, 0.0) - v, 2);
    return 0.5 * s;
  };
  const double h = 1e-6;
  std::vector<double> up(z.begin(), z.end()), down(z.begin(), z.end());
  out.gradient.assign(z.size(), 0.0);
  if (!out.observed.empty()) {
    for (size_t i = 0; i < z.size(); ++i) {
      up[i] += h;
      down[i] -= h;
      out.gradient[i] = (fit(up) - fit(down)) / (2 * h);
      up[i] = z[i];
      down[i] = z[i];
    }
    double s = 0.0;
    for (const auto& [k, v] : out.observed) s += std::pow(lookup(out.prior, k, 0.0) - v, 2);
    out.residual = std::sqrt(s / static_cast<double>(out.observed.size()));
  }
  out.metrics = out.prior;
  for (auto& [k, v] : out.metrics) v = lookup(out.observed, k, v);
  const auto bary_prior = barycentric_weights(out.prior);
  const auto bary_obs = barycentric_weights(out.metrics);
  std::array<double, 3> mixed{};
  for (size_t i = 0; i < 3; ++i) mixed[i] = smoothing * bary_prior[i] + (1 - smoothing) * bary_obs[i];
  const double total = mixed[0] + mixed[1] + mixed[2];
  for (size_t i = 0; i < 3; ++i) out.barycentric[i] = mixed[i] / total;
  out.control_gradient = obs.gradient();
  if (!telemetry.empty()) {
    out.telemetry = telemetry;
    out.telemetry_reliability = telemetry_reliability(telemetry);
  }
  out.confidence = std::exp(-out.residual) * out.telemetry_reliability;
  return out;
}

}  // namespace st::zspace
