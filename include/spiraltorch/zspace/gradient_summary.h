#pragma once
// Statistics of a gradient's finite entries (sums exactly rounded, like Python's math.fsum).
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace st::zspace {

class GradientSummary {
 public:
  GradientSummary() = default;
  // Non-finite values are dropped; the statistics describe the rest.
  explicit GradientSummary(std::span<const double> values);
  static GradientSummary from_values(std::span<const double> values) { return GradientSummary(values); }

  int64_t count() const { return static_cast<int64_t>(v_.size()); }
  double sum() const;
  double l1() const;
  double sum_squares() const;
  double l2() const;
  double linf() const;
  double mean() const;
  double mean_abs() const;
  double rms() const;
  double min() const;
  double max() const;
  double support_width() const { return max() - min(); }
  int64_t positive_count() const;
  int64_t negative_count() const;
  int64_t zero_count() const { return count() - positive_count() - negative_count(); }
  int64_t near_zero_count() const;  // |g| <= 1e-5
  double activation() const;        // the fraction of entries with |g| > 1e-5
  double variance() const;          // population variance
  double std() const;
  double sign_lean() const;  // (positive - negative) / count
  // Shannon entropy of the positive/negative/zero fractions over ln(number of non-empty bins).
  double sign_entropy() const;
  // Non-excess kurtosis (central 4th moment / variance^2); 0 when degenerate.
  double kurtosis() const;
  // (name, value) for count, sum, l1, l2, linf, mean, mean_abs, rms, min, max, support_width,
  // activation, variance, std, sign_lean, sign_entropy, kurtosis, in that order.
  std::vector<std::pair<std::string, double>> as_pairs() const;
  const std::vector<double>& values() const { return v_; }

 private:
  std::vector<double> v_;
};

// The exactly rounded sum of values (Shewchuk's algorithm, as math.fsum).
double exact_sum(std::span<const double> values);

}  // namespace st::zspace
