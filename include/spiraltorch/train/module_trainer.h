#pragma once
// ModuleTrainer: the seed's native training loop. Parameters of modules with an
// attached hypergrad take Riemannian SGD steps in the Poincare ball of that
// curvature; the others take plain SGD steps with the fallback learning rate.
#include <functional>
#include <optional>
#include <string>

#include <map>
#include <memory>

#include "spiraltorch/io/trace.h"
#include "spiraltorch/nn/desire.h"
#include "spiraltorch/nn/module.h"
#include "spiraltorch/optim/training_engine.h"
#include "spiraltorch/train/curvature_scheduler.h"
#include "spiraltorch/train/roundtable.h"
#include "spiraltorch/train/spectral_policy.h"

namespace st::train {

struct EpochStats {
  int64_t batches = 0;
  double total_loss = 0.0;
  double average_loss = 0.0;                         // plain mean of the batch losses
  std::array<double, 3> band_energy{0.0, 0.0, 0.0};  // summed over batches: Above, Here, Beneath
  int64_t skipped_steps = 0;                         // batches whose loss or gradients were not finite
  double seconds = 0.0;
  // With desire telemetry enabled: the trainer bridge's summary drained at the end of the
  // epoch (steps the desire pipelines took meanwhile), and the band multipliers applied.
  std::optional<std::map<std::string, double>> desire_summary;
  std::array<double, 3> desire_multipliers{1.0, 1.0, 1.0};
};

class ModuleTrainer {
 public:
  using Loss = std::function<Tensor(const Tensor& prediction, const Tensor& target)>;
  // Fills (input, target) and returns true, or returns false when the epoch is done.
  using BatchSource = std::function<bool(Tensor& input, Tensor& target)>;

  // backend: "cpu" or "auto" (the CPU), "cuda" / "cuda:N" or "wgpu" (DeviceUnavailableError with the
  // reason where that device is not usable). train_epoch and evaluate_epoch move the module to the
  // backend's device and each batch's input and target there.
  ModuleTrainer(std::string backend, double curvature, double hyper_learning_rate, double fallback_learning_rate);

  RoundtableSchedule roundtable(int64_t rows, int64_t cols, RoundtableConfig config = {}) const;
  EpochStats train_epoch(nn::Module& module, const Loss& loss, const BatchSource& batches,
                         const RoundtableSchedule& schedule);
  EpochStats evaluate_epoch(nn::Module& module, const Loss& loss, const BatchSource& batches);

  // Attaches hypergrad (trainer curvature and hyper rate) to every parameter.
  void prepare(nn::Module& module) const;
  void zero(nn::Module& module) const;
  // Applies one update from the parameters' .grad (clipped by the engine's gradient gate when a
  // max norm is set); all-or-nothing: returns false and changes no parameter when any gradient or
  // update is non-finite.
  bool step(nn::Module& module);

  void enable_realgrad(double learning_rate);
  void disable_realgrad() { real_lr_.reset(); }
  void set_grad_clip_max_norm(double max_norm);
  void clear_grad_clip_max_norm() { engine_.options().max_grad_norm.reset(); }
  void enable_curvature_scheduler(CurvatureScheduler scheduler);
  void disable_curvature_scheduler() { scheduler_.reset(); }
  const std::optional<CurvatureScheduler>& curvature_scheduler() const { return scheduler_; }
  void enable_spectral_learning_rate(SpectralLearningRatePolicy policy) { spectral_ = std::move(policy); }
  void disable_spectral_learning_rate() {
    spectral_.reset();
    lr_scale_ = 1.0;
  }
  const std::optional<SpectralLearningRatePolicy>& spectral_policy() const { return spectral_; }
  // Couples desire pipelines to training: each batch's roundtable band weights are multiplied
  // by the roundtable bridge's latest impulse (above, here, beneath; 1 before any impulse),
  // and each epoch drains the trainer bridge into EpochStats::desire_summary.
  void enable_desire_telemetry(nn::DesireTelemetryBundle bundle) { desire_ = std::move(bundle); }
  void disable_desire_telemetry() { desire_.reset(); }
  const std::optional<nn::DesireTelemetryBundle>& desire_telemetry() const { return desire_; }
  // Multiplies every learning rate (and those of attached hypergrads) by factor.
  void mul_learning_rate(nn::Module& module, double factor);

  const std::string& requested_backend() const { return requested_; }
  const std::string& effective_backend() const { return effective_; }
  Device device() const { return device_; }
  double curvature() const { return curvature_; }
  double hyper_learning_rate() const { return hyper_lr_; }
  double fallback_learning_rate() const { return fallback_lr_; }
  std::optional<double> real_learning_rate() const { return real_lr_; }
  std::optional<double> grad_clip_max_norm() const { return engine_.options().max_grad_norm; }
  int64_t epoch() const { return engine_.epoch(); }
  // Batches train_epoch has taken, across epochs (skipped ones included).
  int64_t steps() const { return engine_.steps(); }
  // The training engine that runs train_epoch and evaluate_epoch (optim/training_engine.h).
  const optim::TrainingEngine& engine() const { return engine_; }
  // While anything listens (spiraltorch/runtime/events.h), the engine publishes a "TrainerStep"
  // event after each batch's update: epoch, step (steps() after the batch), samples (the input's
  // first dim, 1 for a scalar), loss, skipped (true when the loss or a gradient was not finite and
  // nothing changed), source ("ModuleTrainer") and, for a batch that got as far as its gradient,
  // band_above/here/beneath and lr_scale; EpochStart and EpochEnd around each epoch. Progress bars
  // and TensorBoard writers follow training through it; with no listener it costs one check.
  static constexpr const char* kStepEvent = "TrainerStep";
  // An optional JSONL trace (docs/traces.md). train_epoch writes one "step" event per batch
  // (trainer.loss, trainer.skipped, trainer.band_above/here/beneath, trainer.lr_scale) and an "epoch"
  // event (trainer.average_loss, trainer.total_loss, trainer.batches, trainer.skipped_steps,
  // trainer.seconds); evaluate_epoch writes an "eval" event (eval.average_loss, eval.batches,
  // eval.seconds). Steps count batches across epochs, from 1. The trace observes: a failed write
  // never undoes an update; it is counted in trace_errors().
  void set_trace(std::shared_ptr<io::TraceWriter> trace) { trace_ = std::move(trace); }
  const std::shared_ptr<io::TraceWriter>& trace() const { return trace_; }
  int64_t trace_errors() const { return trace_errors_; }

 private:
  void to_backend(Tensor& x, Tensor& y) const;  // a batch onto device_
  // The update of step() once the gradients passed the gate.
  bool apply_update(nn::Module& module);
  // The parts of a step of module (forward, loss, update, ...) shared by training and evaluation.
  optim::StepParts parts(nn::Module& module, const Loss& loss);

  std::string requested_, effective_;
  Device device_{DeviceType::CPU, 0};
  double curvature_, hyper_lr_, fallback_lr_;
  std::optional<double> real_lr_;
  std::optional<CurvatureScheduler> scheduler_;
  std::optional<SpectralLearningRatePolicy> spectral_;
  std::optional<nn::DesireTelemetryBundle> desire_;
  double lr_scale_ = 1.0;  // set per batch by the spectral policy
  optim::TrainingEngine engine_;
  std::shared_ptr<io::TraceWriter> trace_;
  int64_t trace_step_ = 0, trace_errors_ = 0;
  void emit(io::TraceEvent event);
};

}  // namespace st::train
