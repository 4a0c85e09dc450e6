#include "spiraltorch/train/roundtable.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "spiraltorch/error.h"
#include "spiraltorch/ops.h"

namespace st::train {

void RoundtableConfig::validate() const {
  if (top_k < 1 || mid_k < 1 || bottom_k < 1) {
    throw ValueError("RoundtableConfig: top_k, mid_k and bottom_k must be >= 1, got " + std::to_string(top_k) + ", " +
                     std::to_string(mid_k) + ", " + std::to_string(bottom_k));
  }
  if (!std::isfinite(here_tolerance)) throw ValueError("RoundtableConfig: here_tolerance must be finite");
  for (const double w : band_weights) {
    if (!std::isfinite(w) || w < 0) throw ValueError("RoundtableConfig: band weights must be finite and >= 0");
  }
}

RoundtableSchedule::RoundtableSchedule(int64_t rows, int64_t cols, RoundtableConfig config)
    : rows_(rows), cols_(cols), config_(config) {
  if (rows < 0 || cols < 0) throw ValueError("roundtable: rows and cols must be non-negative");
  config_.validate();
  const int64_t limit = std::max<int64_t>(cols, 1);
  config_.top_k = std::clamp<int64_t>(config_.top_k, 1, limit);
  config_.mid_k = std::clamp<int64_t>(config_.mid_k, 1, limit);
  config_.bottom_k = std::clamp<int64_t>(config_.bottom_k, 1, limit);
  config_.here_tolerance = std::max(0.0, config_.here_tolerance);
}

std::vector<Band> RoundtableSchedule::classify(const Tensor& grad) const {
  const std::vector<double> g = grad.detach().to_vector<double>();
  const int64_t n = static_cast<int64_t>(g.size());
  std::vector<Band> bands(n, Band::Here);
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return std::fabs(g[a]) > std::fabs(g[b]); });
  const int64_t top = std::min(config_.top_k, n);
  const int64_t bottom = std::min(config_.bottom_k, n - top);
  for (int64_t i = 0; i < top; ++i) bands[order[i]] = Band::Above;
  // Beneath: smallest |g| first, ties by lower index.
  std::vector<int64_t> rest(order.begin() + top, order.end());
  std::stable_sort(rest.begin(), rest.end(), [&](int64_t a, int64_t b) {
    return std::fabs(g[a]) < std::fabs(g[b]) || (std::fabs(g[a]) == std::fabs(g[b]) && a < b);
  });
  for (int64_t i = 0; i < bottom; ++i) bands[rest[i]] = Band::Beneath;
  for (int64_t i = 0; i < n; ++i) {
    if (std::fabs(g[i]) <= config_.here_tolerance) bands[i] = Band::Here;
  }
  return bands;
}

std::array<double, 3> RoundtableSchedule::band_energy(const Tensor& grad) const {
  const std::vector<double> g = grad.detach().to_vector<double>();
  const std::vector<Band> bands = classify(grad);
  std::array<double, 3> e{0, 0, 0};
  for (size_t i = 0; i < g.size(); ++i) e[static_cast<int>(bands[i])] += std::fabs(g[i]);
  return e;
}

Tensor RoundtableSchedule::weight_mask(const Tensor& grad) const {
  const std::vector<Band> bands = classify(grad);
  std::vector<double> w(bands.size());
  for (size_t i = 0; i < bands.size(); ++i) w[i] = config_.band_weights[static_cast<int>(bands[i])];
  return to_device(Tensor::from_vector<double>(w, grad.shape()).to(grad.dtype()), grad.device());
}

}  // namespace st::train
