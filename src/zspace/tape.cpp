#include "spiraltorch/zspace/tape.h"

#include <cmath>

#include "checks.h"
#include "spiraltorch/autograd.h"
#include "spiraltorch/ops.h"

namespace st::zspace {

namespace {

bool all_finite(const std::vector<double>& v) {
  for (const double x : v) {
    if (!std::isfinite(x)) return false;
  }
  return true;
}

std::string shape_pair(int64_t r, int64_t c) { return "(" + std::to_string(r) + ", " + std::to_string(c) + ")"; }

}  // namespace

GradientTape::GradientTape(double learning_rate, int64_t rows, int64_t cols, std::string who,
                           std::optional<OpenCartesianTopos> topos)
    : who_(std::move(who)),
      lr_(detail::check_learning_rate(learning_rate, who_)),
      rows_(rows),
      cols_(cols),
      topos_(std::move(topos)) {
  if (rows <= 0 || cols <= 0) {
    throw ValueError(who_ + ": rows and cols must be positive ints, got " + shape_pair(rows, cols));
  }
  if (topos_ && rows * cols > topos_->max_volume()) {
    throw ShapeError(who_ + ": a " + shape_pair(rows, cols) + " tape holds " + std::to_string(rows * cols) +
                     " values, more than the topos volume " + std::to_string(topos_->max_volume()));
  }
  g_.assign(static_cast<size_t>(rows * cols), 0.0);
}

void GradientTape::scale_learning_rate(double factor) {
  if (std::isfinite(factor) && factor > 0) lr_ *= factor;
}

void GradientTape::set_learning_rate(double lr) { lr_ = detail::check_learning_rate(lr, who_ + ".set_learning_rate"); }

std::vector<double> GradientTape::pending_gradient() const {
  return applied_ ? std::vector<double>(g_.size(), 0.0) : g_;
}

void GradientTape::reset() {
  std::fill(g_.begin(), g_.end(), 0.0);
  applied_ = false;
}

Tensor GradientTape::as_matrix(const Tensor& t, std::string_view what) const {
  const std::string op = who_ + "." + std::string(what);
  if (!t.defined()) throw ValueError(op + ": expected a tensor, got an undefined one");
  // A 1-d tensor reads as one row, like the seed's (1, n) vectors.
  const Shape& s = t.shape();
  const Shape as2d = s.size() == 2 ? s : s.size() == 1 ? Shape{1, t.numel()} : s;
  if (as2d != Shape{rows_, cols_}) {
    throw ValueError(op + ": expected shape " + shape_pair(rows_, cols_) + ", got " + shape_str(as2d));
  }
  const Tensor m = reshape(t.detach().to(Dtype::Float64), {rows_, cols_});
  if (!all_finite(m.to_vector<double>())) throw ValueError(op + ": non-finite values");
  return m;
}

Tensor GradientTape::pending_tensor() const { return Tensor::from_vector(pending_gradient(), {rows_, cols_}); }

void GradientTape::add(const std::vector<double>& g) {
  std::vector<double> next = pending_gradient();
  for (size_t i = 0; i < next.size(); ++i) next[i] += g[i];
  if (topos_) {
    if (!all_finite(next)) throw ValueError(who_ + ": the accumulated gradient would overflow; nothing was added");
    for (double& x : next) x = topos_->saturate(x);
  }
  if (!all_finite(next)) throw ValueError(who_ + ": the accumulated gradient would overflow; nothing was added");
  g_ = std::move(next);
  applied_ = false;
}

void GradientTape::accumulate_wave(const Tensor& wave) { add(as_matrix(wave, "accumulate_wave").to_vector<double>()); }

void GradientTape::accumulate_complex_wave(const ComplexTensor& wave) { accumulate_wave(wave.to_tensor()); }

void GradientTape::accumulate_barycenter_path(const std::vector<BarycenterIntermediate>& path) {
  if (path.empty()) throw ValueError("accumulate_barycenter_path: barycenter intermediates cannot be empty");
  for (const auto& step : path) as_matrix(step.density, "accumulate_barycenter_path");  // all checked first
  accumulate_pair(path.front().density, path.back().density);
}

void GradientTape::accumulate_pair(const Tensor& prediction, const Tensor& target) {
  const auto p = as_matrix(prediction, "accumulate_pair").to_vector<double>();
  auto d = as_matrix(target, "accumulate_pair").to_vector<double>();
  for (size_t i = 0; i < d.size(); ++i) d[i] = p[i] - d[i];
  add(d);
}

void GradientTape::absorb_text(const LanguageWaveEncoder& encoder, std::string_view text) {
  if (topos_) topos_->ensure_loop_free(static_cast<int64_t>(text.size()));
  accumulate_wave(encoder.encode_z_space(text));
}

void GradientTape::scale_gradient(double factor) {
  if (!std::isfinite(factor)) {
    reset();
    return;
  }
  std::vector<double> next = g_;
  for (double& x : next) x = topos_ ? topos_->saturate(x * factor) : x * factor;
  g_ = std::move(next);
}

double GradientTape::rescale_rms(double target) {
  if (!std::isfinite(target)) return 1.0;
  if (target <= 0) {
    reset();
    return 0.0;
  }
  const double rms = summary().rms();
  if (rms <= 1e-12) return 0.0;
  const double factor = target / rms;
  for (double& x : g_) x *= factor;
  return factor;
}

Tensor GradientTape::guarded(const Tensor& updated) const {
  if (!topos_) return updated;
  if (!all_finite(updated.to(Dtype::Float64).to_vector<double>())) return updated;  // commit refuses it
  return topos_->saturate(updated);
}

Tensor& GradientTape::commit(Tensor& weights, const Tensor& updated, std::string_view who) {
  if (!all_finite(updated.to_vector<double>())) {
    throw ValueError(std::string(who) + ": the update is not finite; weights and tape are unchanged");
  }
  {
    NoGradGuard no_grad;
    copy_(weights, reshape(updated.to(weights.dtype()), weights.shape()));
  }
  applied_ = true;  // keep the applied gradient readable; it is never applied twice
  return weights;
}

}  // namespace st::zspace
