#pragma once
// AmegagradSession: a training session that steps a model (forward, loss, backward, then an
// Amegagrad or Hypergrad update of every parameter) and records one Atlas frame of named metrics
// per step -- the C++ side of spiraltorch.amegagrad_session / hypergrad_session.
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "spiraltorch/io/trace.h"
#include "spiraltorch/nn/module.h"
#include "spiraltorch/optim/training_engine.h"
#include "spiraltorch/zspace/amegagrad.h"
#include "spiraltorch/zspace/topos.h"
#include "spiraltorch/zspace/trainer.h"

namespace st::zspace {

// One timestamped frame of named metrics and notes (spiraltorch.telemetry.AtlasFrame in Python).
struct AtlasFrame {
  double timestamp = 0;                                 // seconds since the Unix epoch
  std::vector<std::pair<std::string, double>> metrics;  // emission order; every value finite
  std::vector<std::string> notes;
  std::optional<double> metric(std::string_view name) const;
};

// What one session step did.
struct SessionStep {
  int64_t step = 0;      // 1-based count of steps attempted (skipped ones included)
  double loss = 0;       // the model's loss before the update (NaN for tape-driven steps)
  bool skipped = false;  // a non-finite loss or gradient: nothing was changed
  AtlasFrame frame;
};

// Metrics of each frame (absent ones do not apply to the session's form):
//   session.loss            the model loss before the update (model sessions)
//   session.skipped         1 when the step was skipped (non-finite loss or gradient), else 0
//   hypergrad.l2, .mean_abs, .linf   of the hyperbolic tapes' applied gradient, all parameters
//   hypergrad.learning_rate the hyperbolic rate used (mean over parameters when tuned)
//   realgrad.l2, .mean_abs, realgrad.learning_rate   the same for the Euclidean tapes (Amegagrad)
//   desire.hyper_rate_scale, desire.real_rate_scale   DesireGradientControl's scales (mean; tuned)
//   geometry.max_radius     max over parameter rows of sqrt(k)|x| after the step, in [0, 1)
//   zspace.loss             the ZSpaceTrainer objective fed by this step's gradient (z_dim > 0)
class AmegagradSession {
 public:
  using Loss = std::function<Tensor(const Tensor& prediction, const Tensor& target)>;

  struct Options {
    // Hypergrad only (Riemannian SGD on the ball, no Euclidean tape, no rate tuning): the
    // HypergradSession of the original.
    bool hyper_only = false;
    double curvature = -1.0;
    double hyper_learning_rate = 0.05;
    double real_learning_rate = 0.01;
    double gain = 1.0;
    bool tune = true;  // Amegagrad: rates from DesireGradientControl at each step (never compounding)
    std::optional<OpenCartesianTopos> topos;  // guards every tape (see GradientTape)
    int64_t telemetry_bound = 128;            // frames kept; 0 keeps all
    // A ZSpaceTrainer fed each step with speed = mean|g|, memory = |g|, stability = 1/(1 + |g|)
    // and the gradient itself (the original's session wiring); z_dim 0 leaves it out.
    int64_t z_dim = 4;
    double z_lr = 0.05, z_lam_frac = 0.05;
    // Optional JSONL trace (docs/traces.md): a "run_start" event with the options at construction,
    // then one "step" event per step carrying the frame's metrics and notes. The trace observes;
    // a failed trace write does not undo the step: it is counted in trace_errors() and noted in
    // the step's frame.
    std::shared_ptr<io::TraceWriter> trace;
  };

  // A model session. Every floating parameter of model gets its own tapes, the parameter viewed
  // as (size of dim 0, the rest) -- each row one point of the ball (a vector is one row, a scalar
  // a 1x1 point). model must outlive the session.
  AmegagradSession(nn::Module& model, Loss loss, Options options);
  // A weights session (the original's form): one (rows, cols) float64 tensor, zeros unless
  // given, stepped by waves, (prediction, target) pairs or text.
  AmegagradSession(int64_t rows, int64_t cols, Options options, const std::optional<Tensor>& weights = std::nullopt);

  // Model sessions: zero the gradients, forward, loss (a one-element tensor), backward, then one
  // update of every parameter. All or nothing: with a non-finite loss or gradient the step is
  // skipped (reported, nothing changes); an update that is not finite throws, changing nothing.
  SessionStep step(const Tensor& input, const Tensor& target, std::string_view note = {});

  // Weights sessions: accumulate into the tapes, then apply() steps the weights with them.
  void zero_grad();
  void accumulate_wave(const Tensor& wave);
  void accumulate_pair(const Tensor& prediction, const Tensor& target);
  void absorb_text(const LanguageWaveEncoder& encoder, std::string_view text);
  SessionStep apply(std::string_view note = {});
  // zero_grad, accumulate, apply.
  SessionStep step_wave(const Tensor& wave, std::string_view note = {});
  SessionStep step_pair(const Tensor& prediction, const Tensor& target, std::string_view note = {});
  SessionStep step_text(const LanguageWaveEncoder& encoder, std::string_view text, std::string_view note = {});

  bool is_model_session() const { return model_ != nullptr; }
  const Options& options() const { return opt_; }
  // The weights of a weights session (ValueError for a model session).
  Tensor& weights();
  // One optimizer per parameter (model sessions, in named_parameters order) or the single one.
  std::vector<Amegagrad>& optimizers() { return opts_; }
  const std::vector<std::string>& parameter_names() const { return names_; }
  const std::optional<ZSpaceTrainer>& ztrainer() const { return ztrainer_; }
  const std::deque<AtlasFrame>& frames() const { return frames_; }
  std::optional<SessionStep> last_step() const { return last_; }
  int64_t steps() const { return engine_.steps(); }
  // The training engine every step runs through (source "AmegagradSession" or "HypergradSession").
  const optim::TrainingEngine& engine() const { return engine_; }
  int64_t skipped_steps() const { return skipped_; }
  int64_t trace_errors() const { return trace_errors_; }

 private:
  struct Slot {
    Tensor param;  // the tensor updated in place
    int64_t rows, cols;
  };
  void add_slot(std::string name, const Tensor& param);
  Amegagrad make_optimizer(int64_t rows, int64_t cols) const;
  Amegagrad& single(const char* op);
  // Steps every slot with gradients grads (rows x cols float64 each; empty: the tapes' pending ones).
  // Checks the options both constructors share and builds the optional z trainer.
  void init_common();
  SessionStep update(const std::vector<Tensor>& grads, double loss, std::string_view note, const char* op);
  // A step of the tapes' pending gradients through the engine.
  SessionStep tape_step(std::string_view note, const char* op);
  // Zeroes the tapes, runs `accumulate`, then update(); a throwing accumulate restores the tapes.
  SessionStep accumulate_then_update(const std::function<void()>& accumulate, std::string_view note, const char* op);
  SessionStep finish(SessionStep s, std::string_view note);

  Options opt_;
  nn::Module* model_ = nullptr;
  Loss loss_;
  std::vector<Slot> slots_;
  std::vector<std::string> names_;
  std::vector<Amegagrad> opts_;
  std::optional<ZSpaceTrainer> ztrainer_;
  std::deque<AtlasFrame> frames_;
  std::optional<SessionStep> last_;
  optim::TrainingEngine engine_;
  int64_t skipped_ = 0, trace_errors_ = 0;
};

}  // namespace st::zspace
