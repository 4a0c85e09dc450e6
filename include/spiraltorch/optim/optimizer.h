#pragma once
// The optimizer base: parameter groups with per-group options, a finite-gradient
// guarded step(), and state dicts. Updates follow torch.optim's formulas and run
// in place under NoGradGuard.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "spiraltorch/tensor.h"

namespace st::optim {

namespace detail {
struct UpdateQueue;
}

// Hyperparameters of a group ("lr", "weight_decay", "beta1", ...); flags are 0/1.
using Options = std::map<std::string, double>;

struct ParamGroup {
  std::vector<Tensor> params;
  Options options;
  // The option `key`, or ValueError naming it.
  double get(const std::string& key) const;
  bool flag(const std::string& key) const { return get(key) != 0.0; }
};

// Per-parameter state: the count of updates it received and named buffers
// ("exp_avg", "momentum_buffer", ...).
struct ParamState {
  int64_t step = 0;
  std::map<std::string, Tensor> buffers;
};

// A snapshot: parameters are numbered in group order like PyTorch.
struct OptimizerState {
  std::map<int64_t, ParamState> state;
  std::vector<Options> groups;
  std::vector<std::vector<int64_t>> group_params;
  int64_t skipped_steps = 0;
};

class Optimizer {
 public:
  Optimizer(std::vector<ParamGroup> groups, Options defaults);
  virtual ~Optimizer();
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  virtual std::string type_name() const = 0;
  // Adds a group; missing options come from the defaults. A parameter may be in one group only.
  void add_param_group(ParamGroup group);
  const std::vector<std::shared_ptr<ParamGroup>>& param_groups() const { return groups_; }
  const Options& defaults() const { return defaults_; }

  // Clears gradients: drops them (set_to_none) or zeroes them in place.
  void zero_grad(bool set_to_none = true);
  // Applies one update to every parameter with a gradient. If any gradient holds a
  // NaN or Inf nothing is changed, skipped_steps() grows by one and false is returned.
  bool step();
  int64_t skipped_steps() const { return skipped_steps_; }
  // True when every defined gradient is finite.
  bool grads_finite() const;

  // Deep copies of the state (buffers are cloned).
  OptimizerState state_dict() const;
  // Checks the snapshot against the current groups first; a failed load changes nothing.
  void load_state_dict(const OptimizerState& snapshot);
  // The state of `param` (nullptr before its first update).
  const ParamState* state_of(const Tensor& param) const;

 protected:
  // Checks a group's options (ValueError on a bad value).
  virtual void validate(const Options& options) const;
  // The shape a state buffer of `param` must have (load_state_dict checks it): the
  // parameter's own unless an optimizer keeps a reduced statistic.
  virtual Shape buffer_shape(const Tensor& param, const std::string& buffer) const { return param.shape(); }
  // Updates `param` (contiguous, float32 or float64) from `grad` (same dtype, contiguous).
  // A device update may be queued in update_queue() instead of launched: step() launches the
  // queue before it reads an updated value and at its end (a few multi-tensor launches in all).
  virtual void update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) = 0;
  detail::UpdateQueue& update_queue() { return *queue_; }

 private:
  std::vector<std::shared_ptr<ParamGroup>> groups_;
  Options defaults_;
  std::map<const TensorImpl*, ParamState> state_;
  int64_t skipped_steps_ = 0;
  std::unique_ptr<detail::UpdateQueue> queue_;

  void apply_updates();
};

// Scales gradients so their joint `norm_type`-norm is at most max_norm (like
// torch.nn.utils.clip_grad_norm_); returns the norm before clipping. norm_type may be INFINITY.
double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
// Clamps every gradient element to [-clip_value, clip_value].
void clip_grad_value_(const std::vector<Tensor>& params, double clip_value);

}  // namespace st::optim
