#pragma once
// GradientTape: the (rows, cols) float64 gradient buffer shared by Hypergrad and Realgrad.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spiraltorch/tensor.h"
#include "spiraltorch/zspace/barycenter.h"
#include "spiraltorch/zspace/complex_tensor.h"
#include "spiraltorch/zspace/gradient_summary.h"
#include "spiraltorch/zspace/language_wave_encoder.h"
#include "spiraltorch/zspace/topos.h"

namespace st::zspace {

// apply() uses the accumulated gradient once. Afterwards the tape still reports it through
// gradient()/summary() (applied() is then true, so code that reads the gradient after the step
// sees what was applied); the next accumulate_* starts again from zero, and apply() without new
// accumulation does not move the weights. pending_gradient() is what the next apply() would use.
// Every mutating call checks first and commits last: a refused call changes nothing.
//
// With a topos (OpenCartesianTopos) the guard runs on every step: the tape must fit its
// max_volume (ShapeError at construction), every accumulated entry passes through its monotone
// saturation, absorbed text must be shorter than max_depth, and every updated weight is
// saturated too (then clipped back into the ball by Hypergrad) before it is written. The clip
// L tanh(v / L) is close to the identity well below L but shrinks values near L on every step (like
// weight decay), so pick a saturation level above the weights' scale.
class GradientTape {
 public:
  virtual ~GradientTape() = default;

  std::pair<int64_t, int64_t> shape() const { return {rows_, cols_}; }
  // The guard every step passes through, if any.
  const std::optional<OpenCartesianTopos>& topos() const { return topos_; }
  double learning_rate() const { return lr_; }
  // Multiplies the learning rate by factor (ignored unless positive and finite).
  void scale_learning_rate(double factor);
  // Sets the learning rate (positive and finite).
  void set_learning_rate(double lr);
  // Row-major: the gradient accumulated since the last apply(), or, when nothing has been
  // accumulated since, the gradient that apply() last used.
  const std::vector<double>& gradient() const { return g_; }
  bool applied() const { return applied_; }
  // The gradient the next apply() would use (zeros right after an apply()).
  std::vector<double> pending_gradient() const;
  GradientSummary summary() const { return GradientSummary(g_); }
  // Clears the gradient (pending and last applied).
  void reset();

  // Adds wave (a tensor of the tape's shape, or a vector of rows * cols entries when rows == 1).
  void accumulate_wave(const Tensor& wave);
  // Adds wave.to_tensor() (interleaved re/im).
  void accumulate_complex_wave(const ComplexTensor& wave);
  // Adds prediction - target, the gradient of 1/2 |prediction - target|^2.
  void accumulate_pair(const Tensor& prediction, const Tensor& target);
  // Accumulates the corridor displacement rho_0 - rho_K of a barycenter path (every density
  // must have the tape's shape), so a Euclidean step with lr 1 from rho_0 lands on rho_K.
  void accumulate_barycenter_path(const std::vector<BarycenterIntermediate>& path);
  // Accumulates encoder.encode_z_space(text); it must have the tape's shape.
  virtual void absorb_text(const LanguageWaveEncoder& encoder, std::string_view text);
  // Multiplies the tape by factor (a non-finite factor resets it).
  void scale_gradient(double factor);
  // Scales the tape to RMS target; returns the factor (0 and a reset for target <= 0, 0 when the
  // tape is empty, 1 for a non-finite target).
  double rescale_rms(double target);

  // One step on weights (mutated in place, under no_grad, and returned).
  virtual Tensor& apply(Tensor& weights) = 0;

  // Building blocks for optimizers that combine tapes (Amegagrad): the checked float64
  // (rows, cols) copy of t, the pending gradient as a tensor, and the in-place commit.
  Tensor as_matrix(const Tensor& t, std::string_view what) const;
  Tensor pending_tensor() const;
  // Writes updated into weights when finite (else throws, changing nothing) and marks the
  // pending gradient as applied.
  Tensor& commit(Tensor& weights, const Tensor& updated, std::string_view who);
  void mark_applied() { applied_ = true; }
  // The topos saturation of an update (the update itself without a topos).
  Tensor guarded(const Tensor& updated) const;

 protected:
  GradientTape(double learning_rate, int64_t rows, int64_t cols, std::string who,
               std::optional<OpenCartesianTopos> topos = std::nullopt);
  void set_topos(std::optional<OpenCartesianTopos> topos) { topos_ = std::move(topos); }
  const std::string& who() const { return who_; }
  void set_lr_unchecked(double lr) { lr_ = lr; }

 private:
  void add(const std::vector<double>& g);

  std::string who_;
  double lr_;
  int64_t rows_, cols_;
  std::vector<double> g_;
  bool applied_ = false;
  std::optional<OpenCartesianTopos> topos_;
};

}  // namespace st::zspace
