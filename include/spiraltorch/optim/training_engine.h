#pragma once
// TrainingEngine: the one training loop. nn.fit, ModuleTrainer, ZSpaceTrainer and the Z-space
// sessions (AmegagradSession, HypergradSession) describe their step as StepParts and let the engine
// run it: zero_grad, forward, loss, backward, gradient check and clipping, update, scheduler,
// per-step and per-epoch callbacks, metric accumulation, evaluation and early stopping.
//
// It lives in the optim layer (not train/) because the zspace extension drives it and may use
// the core only; train/ itself uses zspace (cmake/layers.json).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "spiraltorch/tensor.h"

namespace st::optim {

using NamedValues = std::vector<std::pair<std::string, double>>;

// What one step did.
struct StepReport {
  std::string source;       // the front-end that ran it ("fit", "ModuleTrainer", ...)
  int64_t epoch = 0;        // the engine's epoch (1-based), 0 for a step outside train_epoch
  int64_t step = 0;         // 1-based count of the engine's steps, skipped ones included
  int64_t samples = 1;      // the input's first dim (1 for a scalar or no input)
  double loss = 0.0;        // the loss before the update (NaN for a step without a loss)
  bool skipped = false;     // nothing was updated
  std::string skip_reason;  // "non-finite loss", "non-finite gradient" or "update refused"
  NamedValues metrics;      // added by the step's parts (band energies, learning-rate scale, ...)
  std::optional<double> metric(const std::string& name) const;
};

// What one epoch (train_epoch) or one evaluation did.
struct EpochReport {
  std::string source;
  int64_t epoch = 0;
  int64_t batches = 0;        // steps that updated (train) or batches seen (evaluation)
  int64_t skipped_steps = 0;  // steps that updated nothing
  int64_t samples = 0;        // samples of every step, skipped ones included
  double total_loss = 0.0;    // sum of the counted batches' losses
  double average_loss = 0.0;  // total_loss / batches (the plain mean), NaN without batches
  double seconds = 0.0;
  NamedValues metric_sums;  // each step metric summed over the steps that reported it
  // Evaluation (and fit with validation): integer targets against (N, C) predictions.
  std::optional<double> accuracy;
  // fit: the validation of this epoch, and whether its score (val_loss, else the training loss)
  // improved on every earlier epoch's.
  std::optional<double> val_loss, val_accuracy;
  double score = 0.0;  // fit: val_loss, else average_loss
  bool improved = false;
  std::optional<double> metric_sum(const std::string& name) const;
};

// Stops when the monitored value (the validation loss, else the training loss) has not improved
// by more than min_delta for more than `patience` epochs.
class EarlyStopping {
 public:
  enum class Monitor { ValLoss, TrainLoss };
  explicit EarlyStopping(int64_t patience = 3, double min_delta = 0.0, Monitor monitor = Monitor::ValLoss);
  // Observes one epoch's value; true when training should stop.
  bool observe(double value);
  // The monitored value of an epoch (the training loss when monitor's is absent).
  double value_of(const EpochReport& epoch) const;
  bool observe(const EpochReport& epoch) { return observe(value_of(epoch)); }
  int64_t patience() const { return patience_; }
  double min_delta() const { return min_delta_; }
  Monitor monitor() const { return monitor_; }
  double best() const { return best_; }
  int64_t stale() const { return stale_; }

 private:
  int64_t patience_;
  double min_delta_;
  Monitor monitor_;
  double best_;
  int64_t stale_ = 0;
};

// How one step is made. Only loss and update are required; a part left empty does the default.
struct StepParts {
  std::function<void()> zero_grad;                                             // default: nothing
  std::function<Tensor(const Tensor& input)> forward;                          // default: the input itself
  std::function<Tensor(const Tensor& prediction, const Tensor& target)> loss;  // empty: a tape step
  // Fills the gradients from the loss; may add metrics. Default: loss.backward().
  std::function<void(const Tensor& loss, const Tensor& prediction, StepReport& report)> backward;
  // Applies one update from the gradients; false when it refused (and changed nothing).
  std::function<bool(StepReport& report)> update;
  std::vector<Tensor> parameters;                            // what clipping and the gradient check see
  std::function<void(Tensor& input, Tensor& target)> place;  // moves a batch onto the device
  std::function<bool(bool training)> set_training;           // sets train/eval mode, returns the previous one
  // The front-end's own record of each finished step (a trace), before the engine's callbacks.
  std::function<void(const StepReport& report)> observe;
};

// The engine's gradient gate: false (changing nothing) when a defined gradient of params is not
// finite; otherwise scales the gradients so their joint 2-norm is at most max_norm, when given.
bool gate_gradients(const std::vector<Tensor>& params, std::optional<double> max_norm);

class TrainingEngine {
 public:
  using BatchSource = std::function<bool(Tensor& input, Tensor& target)>;
  using StepCallback = std::function<void(const StepReport&)>;
  using EpochCallback = std::function<bool(const EpochReport&)>;  // true stops fit

  struct Options {
    std::string source = "TrainingEngine";
    // Clip the joint 2-norm of the parameters' gradients to this (clip_grad_norm_) before updating.
    std::optional<double> max_grad_norm;
    // Skip the step (nothing updated) when a parameter's gradient is not finite. Off for
    // optimizers that check themselves (Optimizer::step); clipping implies it.
    bool check_gradients = false;
    bool zero_grad_after_step = false;  // leave clean gradients behind each step
    // A scheduler's step and whether it runs after every update or after every epoch.
    std::function<void()> scheduler_step;
    bool scheduler_per_step = false;
    std::vector<StepCallback> on_step;
    // Run at the end of each train_epoch, in fit after the epoch's evaluation (where true stops).
    std::vector<EpochCallback> on_epoch_end;
    std::function<void(int64_t epoch)> on_epoch_start;
    std::optional<EarlyStopping> early_stopping;  // fit stops when it says so
  };

  TrainingEngine() : TrainingEngine(Options{}) {}
  explicit TrainingEngine(Options options);

  // One step on (input, target); counted, reported to the callbacks and the observer.
  StepReport step(const StepParts& parts, Tensor input = {}, Tensor target = {});
  // One pass over batches: a step per batch; the engine's epoch count grows by one.
  EpochReport train_epoch(const StepParts& parts, const BatchSource& batches);
  // Mean loss over batches without gradients or updates, in eval mode (set_training).
  EpochReport evaluate(const StepParts& parts, const BatchSource& batches);

  struct FitReport {
    std::vector<EpochReport> epochs;
    std::optional<int64_t> best_epoch;
    std::optional<double> best_score;
    bool stopped_early = false;
  };
  // `epochs` epochs of train_epoch (each from a fresh batches()), each followed by the per-epoch
  // scheduler step, evaluation on validation() when given, the epoch callbacks and early stopping.
  FitReport fit(const StepParts& parts, int64_t epochs, const std::function<BatchSource()>& batches,
                const std::function<BatchSource()>& validation = {});

  Options& options() { return opt_; }
  const Options& options() const { return opt_; }
  int64_t steps() const { return steps_; }
  int64_t epoch() const { return epoch_; }
  void set_counts(int64_t steps, int64_t epoch) { steps_ = steps, epoch_ = epoch; }

 private:
  // The epoch callbacks and the EpochEnd announcement; true when a callback asks to stop.
  bool finish_epoch(const EpochReport& epoch);
  StepReport run_step(const StepParts& parts, Tensor input, Tensor target);

  Options opt_;
  int64_t steps_ = 0, epoch_ = 0;
  bool in_epoch_ = false, in_fit_ = false;
};

// The slot through which the engine announces steps and epochs to a higher layer: the runtime's
// event bus installs its publisher here (TrainerStep, EpochStart, EpochEnd events), so the engine
// never includes the runtime. A plain function: the engine reads it with one atomic load.
namespace training_observer {
using Observer = void (*)(const char* event, const StepReport* step, const EpochReport* epoch);
Observer install(Observer observer) noexcept;  // nullptr removes it; returns the one replaced
Observer current() noexcept;
}  // namespace training_observer

}  // namespace st::optim
