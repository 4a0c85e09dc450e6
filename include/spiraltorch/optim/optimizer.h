#pragma once
// The optimizer base: parameter groups with per-group options, a finite-gradient
// guarded step(), and state dicts. Updates follow torch.optim's formulas and run
// in place under NoGradGuard.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "spiraltorch/tensor.h"

namespace st::optim {

namespace detail {
struct UpdateQueue;
struct PendingVerdict;
}  // namespace detail

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

// What Optimizer::step() did: true when the update was applied, false when a non-finite gradient
// made it skip. Where the check runs on the device and the host reads it later (wgpu), the verdict
// is read when first converted (a wait for that step's own work only); a step whose verdict nobody
// asks for costs no host read, and the optimizer settles it at its next step.
class StepResult {
 public:
  StepResult(bool applied) : applied_(applied) {}  // NOLINT: a plain bool is a known verdict
  explicit StepResult(std::shared_ptr<detail::PendingVerdict> pending) : pending_(std::move(pending)) {}
  explicit operator bool() const;
  // Whether converting it needs no host read.
  bool known() const;

 private:
  bool applied_ = false;
  std::shared_ptr<detail::PendingVerdict> pending_;
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
  // NaN or Inf nothing is changed, skipped_steps() grows by one and the result is false. For
  // Adam/AdamW/SGD on a device that reads later (wgpu) the check and the skip happen on the device
  // and the host learns the verdict afterwards (see StepResult); the state the host keeps (step
  // counts, buffers created by the step) is rolled back once a skip is known, and every accessor
  // below settles a pending verdict first. SPIRALTORCH_OPTIM_SYNC_CHECK=1 reads it in step().
  StepResult step();
  int64_t skipped_steps() const;
  // True when every defined gradient is finite.
  bool grads_finite() const;

  // Deep copies of the state (buffers are cloned).
  OptimizerState state_dict() const;
  // Checks the snapshot against the current groups first; a failed load changes nothing.
  void load_state_dict(const OptimizerState& snapshot);
  // The state of `param` (nullptr before its first update).
  const ParamState* state_of(const Tensor& param) const;

 protected:
  // Checks a group's options (ValueError on a bad value): the base checks the options several
  // optimizers share by name (lr, weight_decay, eps, beta1/beta2, momentum/nesterov/dampening).
  virtual void validate(const Options& options) const;
  // Checks the defaults and adds `groups`: each derived constructor calls it, since the base
  // constructor cannot reach the derived validate().
  void add_param_groups(std::vector<ParamGroup> groups);
  // The shape a state buffer of `param` must have (load_state_dict checks it): the
  // parameter's own unless an optimizer keeps a reduced statistic.
  virtual Shape buffer_shape(const Tensor& param, const std::string& buffer) const { return param.shape(); }
  // Whether update() takes this float16/bfloat16 parameter as it is (its moments then kept in its
  // dtype, as PyTorch keeps them); otherwise it updates a float32 copy with float32 state.
  virtual bool updates_half(const Tensor& param) const { return false; }
  // Updates `param` (contiguous, float32 or float64, or half where updates_half) from `grad`
  // (same dtype, contiguous).
  // A device update may be queued in update_queue() instead of launched: step() launches the
  // queue before it reads an updated value and at its end (a few multi-tensor launches in all).
  virtual void update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) = 0;
  // True when update() puts every non-CPU parameter's update in the queue (nothing else is
  // written): the queued kernels can then skip on a device-side flag.
  virtual bool device_updates_queued() const { return false; }
  detail::UpdateQueue& update_queue() { return *queue_; }
  // The state of `param`, created empty on first use (for optimizers that keep their own
  // schedule of updates, like LBFGS).
  ParamState& mutable_state(const Tensor& param);

 private:
  std::vector<std::shared_ptr<ParamGroup>> groups_;
  Options defaults_;
  std::map<const TensorImpl*, ParamState> state_;
  mutable int64_t skipped_steps_ = 0;
  std::unique_ptr<detail::UpdateQueue> queue_;
  // Each parameter's state before a step (none: it had no state yet).
  using StateSnapshot = std::vector<std::pair<const TensorImpl*, std::optional<ParamState>>>;
  // The last step's verdict while the device still holds it, and the states it replaced.
  mutable std::shared_ptr<detail::PendingVerdict> pending_;
  mutable StateSnapshot pending_before_;
  // A device flag known to hold 0 (the last verdict's, once read as "applied"): the next
  // deferred check starts from it instead of filling a new one.
  mutable Tensor zero_flag_;

  void apply_updates();
  // The one device every defined gradient is on, or nullopt (mixed devices, no gradient); the
  // callers then ask that device's backend whether it can defer the read or is capturing.
  std::optional<Device> single_grad_device() const;
  // The device all gradients are on when the non-finite check can run there (see step()).
  std::optional<Device> deferrable_device() const;
  // The device all gradients are on while its stream is being captured into a CUDA graph, for an
  // optimizer whose updates are queued (they can then skip on a device-side non-finite flag).
  std::optional<Device> captured_device() const;
  // Applies a pending verdict: a skipped step's state changes are undone and counted.
  void settle() const;
  void restore(StateSnapshot before) const;
};

// Scales gradients so their joint `norm_type`-norm is at most max_norm (like
// torch.nn.utils.clip_grad_norm_); returns the norm before clipping, a 0-d tensor on the first
// gradient's device (float64 for float64 gradients). norm_type may be INFINITY, -INFINITY or 0; as
// torch, the total is the norm of the per-tensor norms (order 0: the number of gradients with a
// non-zero entry). Nothing is read back to the host (a CUDA graph can capture it) unless
// error_if_nonfinite asks to raise on a NaN/Inf total; a non-finite total leaves the gradients alone.
Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
// Clamps every gradient element to [-clip_value, clip_value].
void clip_grad_value_(const std::vector<Tensor>& params, double clip_value);

}  // namespace st::optim
