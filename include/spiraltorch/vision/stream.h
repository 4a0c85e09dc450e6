#pragma once
// Vision streams: slice profiles of (D, H, W) volumes, a bounded ring of recent slices with their
// chrono summary, the EMA vision volume and one online step into a ZSpaceTrainer.
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "spiraltorch/tensor.h"
#include "spiraltorch/vision/chrono.h"
#include "spiraltorch/zspace/trainer.h"

namespace st::vision {

// Statistics of the slices of a volume (dim 0 indexes slices; any float dtype, computed in float64).
struct SliceProfile {
  int64_t depth = 0;
  std::vector<double> means, stds, energies;  // per slice; std is the population std, energy the mean of squares
  double average_mean = 0, average_std = 0, average_energy = 0, total_energy = 0, max_energy = 0;
  double energy_entropy = 0;  // bits, of the energies normalised by their total (0 when the total is ~0)
};
SliceProfile slice_profile(const Tensor& volume);

// The most recent slices of a stream (oldest first), at most max_depth of them: memory stays
// bounded however long the stream runs. Each extend() records the frame's timestamp and energy
// (or takes the frame's own chrono snapshot) so chrono() summarises the frames held.
class FrameAggregator {
 public:
  explicit FrameAggregator(std::optional<int64_t> max_depth = std::nullopt);
  std::optional<int64_t> max_depth() const { return max_depth_; }
  void set_max_depth(std::optional<int64_t> max_depth);
  // Appends the slices of `volume` (D, H, W) taken at `timestamp`. ShapeError when the slice
  // shape differs from the slices held.
  void extend(const Tensor& volume, double timestamp, const std::optional<ChronoSnapshot>& chrono = std::nullopt);
  // Keeps the newest `keep` slices (0 clears).
  void prune_oldest(int64_t keep);
  void clear();
  int64_t depth() const { return static_cast<int64_t>(slices_.size()); }
  bool empty() const { return slices_.empty(); }
  int64_t frames_seen() const { return frames_seen_; }
  const Shape& slice_shape() const { return slice_shape_; }
  // The held slices stacked (depth, H, W), float32; ValueError when empty.
  Tensor volume() const;
  // Summary of the frames whose slices are held: the merge of the snapshots frames brought, or
  // chrono_summary of their timestamps and energies.
  std::optional<ChronoSnapshot> chrono() const;

 private:
  struct FrameRecord {
    double timestamp, energy;
    int64_t slices;
    std::optional<ChronoSnapshot> chrono;
  };
  void trim();
  std::optional<int64_t> max_depth_;
  std::deque<std::vector<float>> slices_;
  std::deque<FrameRecord> records_;  // frames still contributing slices
  Shape slice_shape_;
  int64_t frames_seen_ = 0;
};

// A (depth, height, width) volume updated as an exponential moving average of incoming volumes,
// with a history of its last `temporal` energies.
class VisionVolume {
 public:
  VisionVolume(int64_t depth, int64_t height, int64_t width, double alpha = 0.2, std::string window = "hann",
               int64_t temporal = 4);
  int64_t depth() const { return depth_; }
  int64_t height() const { return height_; }
  int64_t width() const { return width_; }
  double alpha() const { return alpha_; }
  const std::string& window() const { return window_; }
  int64_t temporal() const { return temporal_; }
  int64_t updates() const { return updates_; }
  // v <- (1 - a) v + a x with a = alpha * weight (the first update copies x). weight 0 changes
  // nothing; ShapeError unless x is (k, height, width) with k <= depth (k < depth updates the newest
  // k slices: a stream still filling its window); ValueError for weight < 0 or a > 1.
  // Returns the mean absolute voxel change.
  double accumulate(const Tensor& x, double weight = 1.0);
  const Tensor& volume() const { return volume_; }
  // The window-weighted sum over slices (height, width); normalise divides by the max |value|.
  Tensor project(bool normalise = true) const;
  double energy() const;  // sum of squares of the volume
  const std::deque<double>& energy_history() const { return history_; }
  std::vector<double> window_weights() const;
  void reset();
  // State for checkpoints: the volume and the update count.
  void load(const Tensor& volume, int64_t updates);

 private:
  int64_t depth_, height_, width_;
  double alpha_;
  std::string window_;
  int64_t temporal_;
  Tensor volume_;
  int64_t updates_ = 0;
  std::deque<double> history_;
};

// One online step: accumulate `payload` into `vision` and, with a trainer, step it on metrics
// derived from the volume. The mapping is a heuristic (documented, replaceable by passing your own
// metrics): speed = mean |voxel change| of this update, memory = mean slice energy, stability =
// mean slice std, drs = max |projection|, gradient = the row means of the normalised projection
// pooled into `bands` horizontal bands (z_dim when a trainer runs; 0: one per row), minus their mean.
struct OnlineStep {
  double energy = 0;           // vision.energy() after the update
  double change = 0;           // mean |voxel change|
  std::optional<double> loss;  // the trainer's objective, when a trainer ran
  zspace::ObservedMetrics metrics;
  std::vector<double> z;  // the trainer's state after the step (empty without a trainer)
};
zspace::ObservedMetrics default_metrics(const VisionVolume& vision, double change, int64_t bands = 0);
OnlineStep online_step(VisionVolume& vision, const Tensor& payload, double weight = 1.0,
                       zspace::ZSpaceTrainer* trainer = nullptr, const zspace::ObservedMetrics* metrics = nullptr);

}  // namespace st::vision
