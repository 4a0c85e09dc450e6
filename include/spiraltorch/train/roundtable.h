#pragma once
// The roundtable schedule: splits a batch's output gradient into three bands by
// rank of |g| over the flattened gradient: Above = the top_k largest entries,
// Beneath = the bottom_k smallest of the rest, Here = everything else (and every
// entry with |g| <= here_tolerance). Each band's entries are scaled by a weight.
// The band weights are a heuristic with no theory behind them; the default
// (1, 1, 1) makes roundtable training exactly plain gradient descent.
#include <array>
#include <cstdint>
#include <vector>

#include "spiraltorch/tensor.h"

namespace st::train {

enum class Band : uint8_t { Above = 0, Here = 1, Beneath = 2 };

struct RoundtableConfig {
  int64_t top_k = 8;
  int64_t mid_k = 8;
  int64_t bottom_k = 8;
  double here_tolerance = 1e-5;
  std::array<double, 3> band_weights{1.0, 1.0, 1.0};  // Above, Here, Beneath
  void validate() const;
};

class RoundtableSchedule {
 public:
  // k values are clamped to [1, max(cols, 1)] as in the original.
  RoundtableSchedule(int64_t rows, int64_t cols, RoundtableConfig config);
  int64_t above_k() const { return config_.top_k; }
  int64_t here_k() const { return config_.mid_k; }
  int64_t beneath_k() const { return config_.bottom_k; }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  const RoundtableConfig& config() const { return config_; }
  // Band of every element of the flattened gradient (ties: larger |g| then lower index
  // ranks higher for Above; smaller |g| then lower index for Beneath).
  std::vector<Band> classify(const Tensor& grad) const;
  // Sum of |g| per band: (Above, Here, Beneath).
  std::array<double, 3> band_energy(const Tensor& grad) const;
  // Per-element band weight, shaped like grad.
  Tensor weight_mask(const Tensor& grad) const;

 private:
  int64_t rows_, cols_;
  RoundtableConfig config_;
};

}  // namespace st::train
