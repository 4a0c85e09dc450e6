#pragma once
// Chrono summaries of a frame stream: how the per-frame energy (mean of squares) moves in time.
#include <cstdint>
#include <span>

namespace st::vision {

struct ChronoSummary {
  int64_t frames = 0;
  double duration = 0;          // last timestamp - first timestamp (seconds)
  double latest_timestamp = 0;  // float64: stream clocks outgrow float32's 24-bit mantissa
  double mean_drift = 0;        // mean of (e_k - e_{k-1}) / (t_k - t_{k-1})
  double mean_abs_drift = 0;
  double drift_std = 0;  // population std of the drifts
  double mean_energy = 0;
  double energy_std = 0;
  double mean_decay = 0;  // mean relative decay rate max(0, e_{k-1} - e_k) / (e_{k-1} dt)
  double min_energy = 0;
  double max_energy = 0;
};

struct ChronoSnapshot {
  ChronoSummary summary;
  double dt = 0;  // mean frame interval
  // summary.latest_timestamp, or 0 when it is not finite.
  double timestamp() const;
  // Pools two snapshots as if their frames formed one stream: frames, durations and dt add, the
  // latest timestamp is the max, means are frame-weighted and stds pooled (within + between).
  static ChronoSnapshot merge(const ChronoSnapshot& a, const ChronoSnapshot& b);
};

// The chrono summary of frames with `timestamps` (non-decreasing) and `energies`; ShapeError when
// the lengths differ, ValueError for a non-finite value or a timestamp that goes back.
ChronoSnapshot chrono_summary(std::span<const double> timestamps, std::span<const double> energies);

}  // namespace st::vision
