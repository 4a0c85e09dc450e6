#include "spiraltorch/vision/chrono.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "spiraltorch/error.h"

namespace st::vision {
namespace {

struct Moments {
  double mean = 0, var = 0;
};

Moments moments(const std::vector<double>& v) {
  Moments m;
  if (v.empty()) return m;
  for (const double x : v) m.mean += x;
  m.mean /= static_cast<double>(v.size());
  for (const double x : v) m.var += (x - m.mean) * (x - m.mean);
  m.var /= static_cast<double>(v.size());
  return m;
}

}  // namespace

double ChronoSnapshot::timestamp() const {
  return std::isfinite(summary.latest_timestamp) ? summary.latest_timestamp : 0.0;
}

ChronoSnapshot ChronoSnapshot::merge(const ChronoSnapshot& a, const ChronoSnapshot& b) {
  const ChronoSummary &x = a.summary, &y = b.summary;
  if (x.frames == 0) return {y, a.dt + b.dt};
  if (y.frames == 0) return {x, a.dt + b.dt};
  const double nx = static_cast<double>(x.frames), ny = static_cast<double>(y.frames), n = nx + ny;
  const auto mean = [&](double p, double q) { return (nx * p + ny * q) / n; };
  // Pooled population std: within-group variance plus the spread of the group means.
  const auto pooled = [&](double sp, double mp, double sq, double mq, double m) {
    return std::sqrt((nx * (sp * sp + (mp - m) * (mp - m)) + ny * (sq * sq + (mq - m) * (mq - m))) / n);
  };
  ChronoSummary s;
  s.frames = x.frames + y.frames;
  s.duration = x.duration + y.duration;
  s.latest_timestamp = std::max(x.latest_timestamp, y.latest_timestamp);
  s.mean_drift = mean(x.mean_drift, y.mean_drift);
  s.mean_abs_drift = mean(x.mean_abs_drift, y.mean_abs_drift);
  s.drift_std = pooled(x.drift_std, x.mean_drift, y.drift_std, y.mean_drift, s.mean_drift);
  s.mean_energy = mean(x.mean_energy, y.mean_energy);
  s.energy_std = pooled(x.energy_std, x.mean_energy, y.energy_std, y.mean_energy, s.mean_energy);
  s.mean_decay = mean(x.mean_decay, y.mean_decay);
  s.min_energy = std::min(x.min_energy, y.min_energy);
  s.max_energy = std::max(x.max_energy, y.max_energy);
  return {s, a.dt + b.dt};
}

ChronoSnapshot chrono_summary(std::span<const double> t, std::span<const double> e) {
  if (t.size() != e.size())
    throw ShapeError("chrono_summary: " + std::to_string(t.size()) + " timestamps for " + std::to_string(e.size()) +
                     " energies");
  for (size_t k = 0; k < t.size(); ++k) {
    if (!std::isfinite(t[k]) || !std::isfinite(e[k]))
      throw ValueError("chrono_summary: frame " + std::to_string(k) + " has a non-finite timestamp or energy");
    if (k && t[k] < t[k - 1])
      throw ValueError("chrono_summary: timestamp " + std::to_string(t[k]) + " of frame " + std::to_string(k) +
                       " is before the previous one (" + std::to_string(t[k - 1]) + ")");
  }
  ChronoSnapshot snap;
  ChronoSummary& s = snap.summary;
  s.frames = static_cast<int64_t>(t.size());
  if (t.empty()) return snap;
  s.duration = t.back() - t.front();
  s.latest_timestamp = t.back();
  const std::vector<double> ev(e.begin(), e.end());
  const Moments me = moments(ev);
  s.mean_energy = me.mean;
  s.energy_std = std::sqrt(me.var);
  s.min_energy = *std::min_element(ev.begin(), ev.end());
  s.max_energy = *std::max_element(ev.begin(), ev.end());
  std::vector<double> drifts, decays;
  for (size_t k = 1; k < t.size(); ++k) {
    const double dt = t[k] - t[k - 1];
    if (dt <= 0) continue;  // simultaneous frames carry no rate
    drifts.push_back((e[k] - e[k - 1]) / dt);
    decays.push_back(e[k - 1] > 0 ? std::max(0.0, e[k - 1] - e[k]) / (e[k - 1] * dt) : 0.0);
  }
  const Moments md = moments(drifts);
  s.mean_drift = md.mean;
  s.drift_std = std::sqrt(md.var);
  for (const double d : drifts) s.mean_abs_drift += std::abs(d);
  if (!drifts.empty()) s.mean_abs_drift /= static_cast<double>(drifts.size());
  s.mean_decay = moments(decays).mean;
  snap.dt = t.size() > 1 ? s.duration / static_cast<double>(t.size() - 1) : 0.0;
  return snap;
}

}  // namespace st::vision
