#pragma once
// ZSpaceTrainer: Adam on a latent vector z, steered by observed training metrics.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "spiraltorch/optim/training_engine.h"
#include "spiraltorch/zspace/inference.h"
#include "spiraltorch/zspace/observed_metrics.h"
#include "spiraltorch/zspace/topos.h"

namespace st::zspace {

// step(metrics): the update direction is tanh of the supplied gradient (tiled or truncated to
// z_dim, or exactly z_dim long with GradientProjection::Exact) plus lam_frac times the direction
// of the fractional spectral penalty R_alpha(z); the returned value is the objective *before* the
// update: lam_speed tanh(speed) + lam_mem tanh(memory) + lam_stab tanh(stability) +
// lam_drs tanh(drs) + lam_frac R_alpha(z) -- a weighted squash of the caller's metrics plus the
// penalty, not something the update minimises.
//
// step_partial(partial) fits z to partially observed metrics: it decodes z, compares with the
// observed ones (last_inference()) and steps along the gradient of 1/2 sum (decoded - observed)^2
// plus the supplied gradient and the penalty direction, so repeated calls reduce the residual.
// A step whose update is not finite throws and leaves the trainer unchanged.
class ZSpaceTrainer {
 public:
  enum class GradientProjection { TileOrTruncate, Exact };

  struct Options {
    int64_t z_dim = 4;
    double alpha = 0.35;
    double lam_speed = 0.5, lam_mem = 0.3, lam_stab = 0.2, lam_frac = 0.1, lam_drs = 0.0;
    double lr = 1e-2, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
    GradientProjection gradient_projection = GradientProjection::TileOrTruncate;
    // A guard on every step: z_dim must fit its max_volume, and each updated z passes through
    // its monotone saturation (so the latent stays bounded) before it is committed.
    std::optional<OpenCartesianTopos> topos;
  };

  // The checkpointable state: z, Adam's moments and the step count.
  struct State {
    std::vector<double> z, moment, velocity;
    int64_t step = 0;
  };
  // A state to load. A missing vector is an error when strict, else keeps the current one; a
  // missing step means 0 when strict, else keeps the current count.
  struct StateUpdate {
    std::optional<std::vector<double>> z, moment, velocity;
    std::optional<int64_t> step;
  };

  static constexpr int64_t kStateVersion = 1;
  // The original's checkpoint label; its states carry the same vectors and are accepted too.
  static constexpr const char* kUpstreamContract = "spiraltorch.zspace_meta_optimizer.v2";

  ZSpaceTrainer() : ZSpaceTrainer(Options{}) {}
  explicit ZSpaceTrainer(const Options& options);

  const Options& options() const { return opt_; }
  // z, moments, step count and last_inference back to their initial values.
  void reset();
  const std::vector<double>& state() const { return z_; }

  // One Adam step on z; returns the objective before the update.
  double step(const ObservedMetrics& metrics);
  // step() on each sample in turn; returns the objectives. All or nothing: when a sample is
  // refused (or an update is not finite) the trainer is left as it was before the batch.
  std::vector<double> step_batch(std::span<const ObservedMetrics> samples);
  // Decodes z, overrides with the observed metrics and measures the disagreement.
  Inference infer_partial(const ObservedMetrics& partial, double smoothing = 0.35,
                          const NamedValues& telemetry = {}) const;
  // infer_partial, then one Adam step along the fit gradient plus the supplied gradient (tanh,
  // tiled) and the penalty direction; returns the objective before the update, on the inferred
  // metrics. smoothing and telemetry shape only the reported inference, not the step.
  double step_partial(const ObservedMetrics& partial, double smoothing = 0.35, const NamedValues& telemetry = {});
  const std::optional<Inference>& last_inference() const { return last_; }
  // The training engine each step runs through (source "ZSpaceTrainer"): the objective is the
  // step's loss, the direction its gradient, Adam its update; steps report "z_norm" (|z| after).
  const optim::TrainingEngine& engine() const { return engine_; }

  State state_dict() const { return {z_, m_, v_, t_}; }
  // Checks everything before writing anything. CheckpointError for a missing vector (strict), a
  // vector that is not z_dim long or holds non-finite values, a negative velocity entry (Adam's
  // second moment is a running mean of squares) or a negative step.
  void load_state_dict(const StateUpdate& state, bool strict = true);

 private:
  std::vector<double> project(const std::optional<std::vector<double>>& grad) const;
  double objective(const NamedValues& metrics, double penalty) const;
  void adam(const std::vector<double>& g);
  // One engine step: `objective` as the loss, Adam along `direction`; returns the objective.
  double engine_step(double objective, const std::vector<double>& direction);

  Options opt_;
  std::vector<double> z_, m_, v_;
  int64_t t_ = 0;
  std::optional<Inference> last_;
  optim::TrainingEngine engine_;
};

}  // namespace st::zspace
