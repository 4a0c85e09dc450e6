#include "spiraltorch/zspace/gradient_summary.h"

#include <algorithm>
#include <cmath>

namespace st::zspace {

double exact_sum(std::span<const double> values) {
  // Shewchuk's non-overlapping partials; the final pass rounds the way math.fsum does, so the
  // Python and C++ summaries agree to the last bit. Inputs here are finite.
  std::vector<double> partials;
  for (double x : values) {
    size_t i = 0;
    for (double y : partials) {
      if (std::fabs(x) < std::fabs(y)) std::swap(x, y);
      const double hi = x + y;
      const double lo = y - (hi - x);
      if (lo != 0.0) partials[i++] = lo;
      x = hi;
    }
    partials.resize(i);
    partials.push_back(x);
  }
  if (partials.empty()) return 0.0;
  size_t n = partials.size();
  double hi = partials[--n], lo = 0.0;
  while (n > 0) {
    const double x = hi;
    const double y = partials[--n];
    hi = x + y;
    const double yr = hi - x;
    lo = y - yr;
    if (lo != 0.0) break;
  }
  // Half-way cases: make the rounding of hi + lo correct (math.fsum's final correction).
  if (n > 0 && ((lo < 0.0 && partials[n - 1] < 0.0) || (lo > 0.0 && partials[n - 1] > 0.0))) {
    const double y = lo * 2.0;
    const double x = hi + y;
    if (y == x - hi) hi = x;
  }
  return hi;
}

namespace {

template <class F>
double fsum_of(const std::vector<double>& v, F f) {
  std::vector<double> t(v.size());
  std::transform(v.begin(), v.end(), t.begin(), f);
  return exact_sum(t);
}

}  // namespace

GradientSummary::GradientSummary(std::span<const double> values) {
  for (const double x : values) {
    if (std::isfinite(x)) v_.push_back(x);
  }
}

double GradientSummary::sum() const { return exact_sum(v_); }
double GradientSummary::l1() const {
  return fsum_of(v_, [](double x) { return std::fabs(x); });
}
double GradientSummary::sum_squares() const {
  return fsum_of(v_, [](double x) { return x * x; });
}
double GradientSummary::l2() const { return std::sqrt(sum_squares()); }

double GradientSummary::linf() const {
  double m = 0.0;
  for (const double x : v_) m = std::max(m, std::fabs(x));
  return m;
}

double GradientSummary::mean() const { return v_.empty() ? 0.0 : sum() / static_cast<double>(v_.size()); }
double GradientSummary::mean_abs() const { return v_.empty() ? 0.0 : l1() / static_cast<double>(v_.size()); }
double GradientSummary::rms() const { return v_.empty() ? 0.0 : l2() / std::sqrt(static_cast<double>(v_.size())); }
double GradientSummary::min() const { return v_.empty() ? 0.0 : *std::min_element(v_.begin(), v_.end()); }
double GradientSummary::max() const { return v_.empty() ? 0.0 : *std::max_element(v_.begin(), v_.end()); }

int64_t GradientSummary::positive_count() const {
  return std::count_if(v_.begin(), v_.end(), [](double x) { return x > 0; });
}
int64_t GradientSummary::negative_count() const {
  return std::count_if(v_.begin(), v_.end(), [](double x) { return x < 0; });
}
int64_t GradientSummary::near_zero_count() const {
  return std::count_if(v_.begin(), v_.end(), [](double x) { return std::fabs(x) <= 1e-5; });
}

double GradientSummary::activation() const {
  return v_.empty() ? 0.0 : 1.0 - static_cast<double>(near_zero_count()) / static_cast<double>(v_.size());
}

double GradientSummary::variance() const {
  if (v_.empty()) return 0.0;
  const double m = mean();
  return fsum_of(v_, [m](double x) { return std::pow(x - m, 2); }) / static_cast<double>(v_.size());
}

double GradientSummary::std() const { return std::sqrt(variance()); }

double GradientSummary::sign_lean() const {
  return v_.empty() ? 0.0 : static_cast<double>(positive_count() - negative_count()) / static_cast<double>(v_.size());
}

double GradientSummary::sign_entropy() const {
  const auto n = static_cast<double>(v_.size());
  std::vector<double> fr;
  for (const int64_t c : {positive_count(), negative_count(), zero_count()}) {
    if (c) fr.push_back(static_cast<double>(c) / n);
  }
  if (fr.size() <= 1) return 0.0;
  double h = 0.0;  // a plain left-to-right sum, as the reference's sum()
  for (const double p : fr) h += p * std::log(p);
  return -h / std::log(static_cast<double>(fr.size()));
}

double GradientSummary::kurtosis() const {
  const double var = variance();
  if (v_.size() < 2 || var <= 1e-12) return 0.0;
  const double m = mean();
  return fsum_of(v_, [m](double x) { return std::pow(x - m, 4); }) / static_cast<double>(v_.size()) / (var * var);
}

std::vector<std::pair<std::string, double>> GradientSummary::as_pairs() const {
  return {{"count", static_cast<double>(count())},
          {"sum", sum()},
          {"l1", l1()},
          {"l2", l2()},
          {"linf", linf()},
          {"mean", mean()},
          {"mean_abs", mean_abs()},
          {"rms", rms()},
          {"min", min()},
          {"max", max()},
          {"support_width", support_width()},
          {"activation", activation()},
          {"variance", variance()},
          {"std", std()},
          {"sign_lean", sign_lean()},
          {"sign_entropy", sign_entropy()},
          {"kurtosis", kurtosis()}};
}

}  // namespace st::zspace
