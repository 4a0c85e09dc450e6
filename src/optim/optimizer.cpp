#include "spiraltorch/optim/optimizer.h"

#include "optim/update_queue.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>
#include <set>
#include <utility>

#include "backend/backend.h"
#include "backend/capture.h"
#include "optim/kernels.h"

namespace st::optim {

double ParamGroup::get(const std::string& key) const {
  auto it = options.find(key);
  if (it == options.end()) throw ValueError("optimizer: parameter group has no option '" + key + "'");
  return it->second;
}

namespace detail {

// A step's device-side verdict: the flag's value once read (nonzero: skipped).
struct PendingVerdict {
  std::function<int32_t()> read;
  Tensor flag;  // the device flag, reused by the next step when it held 0
  std::optional<bool> skipped;
  bool get_skipped() {
    if (!skipped) skipped = read() != 0;
    return *skipped;
  }
};

}  // namespace detail

StepResult::operator bool() const { return pending_ ? !pending_->get_skipped() : applied_; }

bool StepResult::known() const { return !pending_ || pending_->skipped.has_value(); }

Optimizer::~Optimizer() = default;

Optimizer::Optimizer(std::vector<ParamGroup> groups, Options defaults)
    : defaults_(std::move(defaults)), queue_(std::make_unique<detail::UpdateQueue>()) {
  (void)groups;  // added by the derived constructor once validate() is callable
}

void Optimizer::validate(const Options& o) const {
  // inf passes `>= 0` but turns every weight into inf or NaN on the first step.
  auto it = o.find("lr");
  if (it != o.end() && !(it->second >= 0.0 && std::isfinite(it->second))) {
    throw ValueError(type_name() + ": invalid learning rate " + std::to_string(it->second));
  }
  it = o.find("weight_decay");
  if (it != o.end() && !(it->second >= 0.0 && std::isfinite(it->second))) {
    throw ValueError(type_name() + ": invalid weight_decay " + std::to_string(it->second));
  }
  // The checks of options several optimizers share, by name: each class checks only its own.
  it = o.find("eps");
  if (it != o.end() && !(it->second >= 0.0)) {
    throw ValueError(type_name() + ": invalid epsilon value " + std::to_string(it->second));
  }
  for (const char* b : {"beta1", "beta2"}) {
    it = o.find(b);
    if (it != o.end() && !(it->second >= 0.0 && it->second < 1.0)) {
      throw ValueError(type_name() + ": invalid " + b + " " + std::to_string(it->second));
    }
  }
  it = o.find("momentum");
  if (it == o.end()) return;
  if (!(it->second >= 0.0)) throw ValueError(type_name() + ": invalid momentum value " + std::to_string(it->second));
  const auto nesterov = o.find("nesterov");
  if (nesterov != o.end() && nesterov->second != 0.0 && (it->second <= 0.0 || o.at("dampening") != 0.0)) {
    throw ValueError(type_name() + ": Nesterov momentum requires a momentum and zero dampening");
  }
}

void Optimizer::add_param_groups(std::vector<ParamGroup> groups) {
  validate(defaults());
  for (auto& g : groups) add_param_group(std::move(g));
}

void Optimizer::add_param_group(ParamGroup group) {
  if (group.params.empty()) throw ValueError(type_name() + ": a parameter group needs at least one parameter");
  for (const auto& [k, v] : defaults_) group.options.emplace(k, v);
  validate(group.options);
  std::set<const TensorImpl*> seen;
  for (const auto& g : groups_)
    for (const Tensor& p : g->params) seen.insert(p.impl());
  for (const Tensor& p : group.params) {
    if (!p.defined()) throw ValueError(type_name() + ": a parameter is undefined");
    if (!is_floating(p.dtype())) {
      throw DtypeError(type_name() + ": can only optimize floating tensors, got " + dtype_name(p.dtype()));
    }
    if (!p.is_leaf()) throw ValueError(type_name() + ": can't optimize a non-leaf tensor");
    if (!seen.insert(p.impl()).second) {
      throw ValueError(type_name() + ": some parameters appear in more than one parameter group");
    }
  }
  groups_.push_back(std::make_shared<ParamGroup>(std::move(group)));
}

void Optimizer::zero_grad(bool set_to_none) {
  NoGradGuard ng;
  for (const auto& g : groups_) {
    for (Tensor p : g->params) {
      Tensor grad = p.grad();
      if (!grad.defined()) continue;
      if (set_to_none) {
        p.set_grad({});
      } else {
        zero_(grad);
      }
    }
  }
}

namespace {

// What the non-finite check reads of a gradient: a contiguous float32/float64 view of a floating
// one (undefined for integer ones, which are always finite).
Tensor checked_view(const Tensor& g) {
  if (g.dtype() == Dtype::Float32 || g.dtype() == Dtype::Float64) return g.contiguous();
  return is_floating(g.dtype()) ? st::detail::cast_raw(g, Dtype::Float32).contiguous() : Tensor();
}

}  // namespace

bool Optimizer::grads_finite() const {
  // Gradients fold into one flag per device, read once: a read per parameter would stall a
  // device's stream once per parameter; the check is one multi-tensor launch per device.
  std::vector<std::pair<Device, std::vector<Tensor>>> device_grads;
  for (const auto& g : groups_) {
    for (const Tensor& p : g->params) {
      const Tensor grad = p.grad();
      if (!grad.defined()) continue;
      const Tensor c = checked_view(grad);
      if (!c.defined()) continue;
      auto it =
          std::find_if(device_grads.begin(), device_grads.end(), [&](const auto& e) { return e.first == c.device(); });
      if (it == device_grads.end()) it = device_grads.insert(device_grads.end(), {c.device(), {}});
      it->second.push_back(c);
    }
  }
  for (const auto& [device, grads] : device_grads) {
    // Reading the flag would end a CUDA graph capture; a captured step updates unconditionally
    // (as torch's optimizers always do).
    if (st::detail::capturing(device)) continue;
    Tensor flag = zeros({1}, Dtype::Int32, device);
    backend::backend_for(device).flag_nonfinite(grads, flag);
    if (flag.item() != 0.0) return false;
  }
  return true;
}

std::optional<Device> Optimizer::single_grad_device() const {
  std::optional<Device> device;
  for (const auto& g : groups_) {
    for (const Tensor& p : g->params) {
      const Tensor grad = p.grad();
      if (!grad.defined()) continue;
      if (device && *device != grad.device()) return std::nullopt;
      device = grad.device();
    }
  }
  return device;
}

std::optional<Device> Optimizer::deferrable_device() const {
  static const bool sync_check = [] {
    const char* v = std::getenv("SPIRALTORCH_OPTIM_SYNC_CHECK");
    return v && std::string(v) == "1";
  }();
  if (sync_check || !device_updates_queued()) return std::nullopt;
  const std::optional<Device> device = single_grad_device();
  if (!device || st::detail::capturing(*device) || !backend::backend_for(*device).reads_later()) return std::nullopt;
  return device;
}

std::optional<Device> Optimizer::captured_device() const {
  if (!device_updates_queued()) return std::nullopt;
  const std::optional<Device> device = single_grad_device();
  if (!device || !st::detail::capturing(*device)) return std::nullopt;
  return device;
}

void Optimizer::restore(StateSnapshot before) const {
  // Logically const: the step being undone never happened.
  auto& state = const_cast<std::map<const TensorImpl*, ParamState>&>(state_);
  for (auto& [impl, old] : before) {
    if (old) {
      state[impl] = std::move(*old);
    } else {
      state.erase(impl);
    }
  }
}

void Optimizer::settle() const {
  if (!pending_) return;
  const auto pending = std::exchange(pending_, nullptr);
  StateSnapshot before = std::exchange(pending_before_, {});
  if (!pending->get_skipped()) {
    zero_flag_ = pending->flag;
    return;
  }
  // The kernels wrote nothing; what the host changed (step counts, buffers made by the step) goes back.
  ++skipped_steps_;
  restore(std::move(before));
}

int64_t Optimizer::skipped_steps() const {
  settle();
  return skipped_steps_;
}

StepResult Optimizer::step() {
  settle();
  // Options may have been changed since construction (group['lr'] = nan): check them
  // before any parameter is touched.
  for (const auto& gp : groups_) {
    validate(gp->options);
    for (const Tensor& p : gp->params) {
      if (p.storage()->read_only()) {
        throw SpiralError(type_name() + ": a parameter of shape " + shape_str(p.shape()) +
                          " shares read-only memory and cannot be updated; optimize a .clone() of it");
      }
      const Tensor grad = p.grad();
      if (grad.defined() && grad.shape() != p.shape()) {
        throw ShapeError(type_name() + ": gradient shape " + shape_str(grad.shape()) + " does not match parameter " +
                         shape_str(p.shape()));
      }
    }
  }
  if (const auto device = deferrable_device()) {
    // The check runs on the device and the update kernels skip on its flag: no host read here.
    std::vector<Tensor> grads;
    StateSnapshot before;
    for (const auto& g : groups_) {
      for (const Tensor& p : g->params) {
        const Tensor grad = p.grad();
        if (!grad.defined()) continue;
        if (const Tensor c = checked_view(grad); c.defined()) grads.push_back(c);
        const auto it = state_.find(p.impl());
        before.emplace_back(p.impl(), it == state_.end() ? std::nullopt : std::optional<ParamState>(it->second));
      }
    }
    auto& be = backend::backend_for(*device);
    Tensor flag = zero_flag_.defined() && zero_flag_.device() == *device ? std::exchange(zero_flag_, Tensor())
                                                                         : zeros({1}, Dtype::Int32, *device);
    be.flag_nonfinite(grads, flag);
    NoGradGuard ng;
    queue_->skip = flag.data<int32_t>();
    try {
      apply_updates();
    } catch (...) {
      *queue_ = detail::UpdateQueue{};  // as below; and the host state goes back as for a skip
      restore(std::move(before));
      throw;
    }
    queue_->skip = nullptr;
    pending_ =
        std::make_shared<detail::PendingVerdict>(detail::PendingVerdict{be.read_later(flag), flag, std::nullopt});
    pending_before_ = std::move(before);
    return StepResult(pending_);
  }
  if (const auto device = captured_device()) {
    // The host cannot read a flag inside a capture: the update kernels read it on the device, so
    // every replay with a non-finite gradient changes nothing, as an eager step (replays are not
    // counted in skipped_steps()).
    std::vector<Tensor> grads;
    for (const auto& g : groups_) {
      for (const Tensor& p : g->params) {
        const Tensor grad = p.grad();
        if (!grad.defined()) continue;
        if (const Tensor c = checked_view(grad); c.defined()) grads.push_back(c);
      }
    }
    Tensor flag = zeros({1}, Dtype::Int32, *device);
    backend::backend_for(*device).flag_nonfinite(grads, flag);
    NoGradGuard ng;
    queue_->skip = flag.data<int32_t>();
    try {
      apply_updates();
    } catch (...) {
      *queue_ = detail::UpdateQueue{};
      throw;
    }
    queue_->skip = nullptr;
    return true;
  }
  if (!grads_finite()) {
    ++skipped_steps_;
    return false;
  }
  NoGradGuard ng;
  try {
    apply_updates();
  } catch (...) {
    *queue_ = detail::UpdateQueue{};  // nothing queued by a failed step may run in a later one
    throw;
  }
  return true;
}

void Optimizer::apply_updates() {
  for (const auto& gp : groups_) {
    for (Tensor p : gp->params) {
      const Tensor grad = p.grad();
      if (!grad.defined()) continue;
      const Dtype compute = is_half(p.dtype()) && updates_half(p) ? p.dtype()
                            : p.dtype() == Dtype::Float64         ? Dtype::Float64
                                                                  : Dtype::Float32;
      const bool direct = p.dtype() == compute && p.is_contiguous();
      Tensor work = direct ? p : st::detail::cast_raw(p, compute).contiguous();
      if (!direct && work.same(p)) work = p.clone();
      const Tensor g = st::detail::cast_raw(grad, compute).contiguous();
      ParamState& state = state_[p.impl()];
      update(*gp, work, g, state);
      if (direct) {
        p.storage()->bump_version();
      } else {
        queue_->flush();  // the float32 working copy must be updated before it is copied back
        copy_(p, work);
      }
    }
  }
  queue_->flush();
}

ParamState& Optimizer::mutable_state(const Tensor& param) {
  settle();
  return state_[param.impl()];
}

const ParamState* Optimizer::state_of(const Tensor& param) const {
  settle();
  auto it = state_.find(param.impl());
  return it == state_.end() ? nullptr : &it->second;
}

OptimizerState Optimizer::state_dict() const {
  settle();
  OptimizerState out;
  out.skipped_steps = skipped_steps_;
  int64_t index = 0;
  for (const auto& g : groups_) {
    out.groups.push_back(g->options);
    std::vector<int64_t> ids;
    for (const Tensor& p : g->params) {
      auto it = state_.find(p.impl());
      if (it != state_.end()) {
        ParamState copy;
        copy.step = it->second.step;
        for (const auto& [k, t] : it->second.buffers) copy.buffers.emplace(k, t.detach().clone());
        out.state.emplace(index, std::move(copy));
      }
      ids.push_back(index++);
    }
    out.group_params.push_back(std::move(ids));
  }
  return out;
}

void Optimizer::load_state_dict(const OptimizerState& s) {
  settle();
  if (s.groups.size() != groups_.size()) {
    throw CheckpointError(type_name() + ".load_state_dict: state has " + std::to_string(s.groups.size()) +
                          " parameter groups, the optimizer has " + std::to_string(groups_.size()));
  }
  std::vector<Tensor> flat;
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    const size_t have = groups_[gi]->params.size();
    if (gi < s.group_params.size() && s.group_params[gi].size() != have) {
      throw CheckpointError(type_name() + ".load_state_dict: group " + std::to_string(gi) + " has " +
                            std::to_string(s.group_params[gi].size()) + " parameters in the state, " +
                            std::to_string(have) + " in the optimizer");
    }
    for (const Tensor& p : groups_[gi]->params) flat.push_back(p);
  }
  for (const Options& o : s.groups) validate(o);
  std::map<const TensorImpl*, ParamState> next;
  for (const auto& [idx, ps] : s.state) {
    if (idx < 0 || idx >= static_cast<int64_t>(flat.size())) {
      throw CheckpointError(type_name() + ".load_state_dict: state for unknown parameter " + std::to_string(idx));
    }
    const Tensor& p = flat[idx];
    const Dtype compute = p.dtype() == Dtype::Float64 ? Dtype::Float64 : Dtype::Float32;
    ParamState copy;
    copy.step = ps.step;
    for (const auto& [k, t] : ps.buffers) {
      if (!t.defined()) continue;
      if (const Shape want = buffer_shape(p, k); t.shape() != want) {
        throw CheckpointError(type_name() + ".load_state_dict: buffer '" + k + "' of parameter " + std::to_string(idx) +
                              " has shape " + shape_str(t.shape()) + ", expected " + shape_str(want));
      }
      copy.buffers.emplace(k, st::detail::cast_raw(t.detach(), compute).clone());
    }
    next.emplace(p.impl(), std::move(copy));
  }
  // Commit.
  for (size_t gi = 0; gi < groups_.size(); ++gi) groups_[gi]->options = s.groups[gi];
  state_ = std::move(next);
  skipped_steps_ = s.skipped_steps;
}

Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type, bool error_if_nonfinite) {
  NoGradGuard ng;
  std::vector<Tensor> grads;
  for (const Tensor& p : params) {
    const Tensor g = p.grad();
    if (g.defined()) grads.push_back(g);
  }
  if (grads.empty()) return scalar_tensor(0.0, Dtype::Float32, Device{});
  // Like PyTorch, the norm lives where (and in the precision) the first gradient does.
  const Device device = grads.front().device();
  const Dtype dt = grads.front().dtype() == Dtype::Float64 ? Dtype::Float64 : Dtype::Float32;
  // The total is the norm of the per-tensor norms (torch's rule; for order 0 the number of tensors
  // with a non-zero entry, for -inf the smallest magnitude, empty tensors skipped). All on the
  // device, so a captured training step can clip without reading anything back.
  std::vector<Tensor> norms;
  for (const Tensor& g : grads) {
    if (g.numel() == 0) {
      if (norm_type != -INFINITY) norms.push_back(zeros({}, dt, device));
      continue;
    }
    const Tensor c = st::detail::cast_raw(g, g.dtype() == Dtype::Float64 ? Dtype::Float64 : Dtype::Float32);
    norms.push_back(st::detail::cast_raw(to_device(norm(c, norm_type), device), dt));
  }
  const Tensor total = norms.empty() ? full({}, INFINITY, dt, device) : norm(stack(norms), norm_type);
  if (error_if_nonfinite && !std::isfinite(total.item())) {
    throw ValueError("clip_grad_norm_: the total norm of order " + std::to_string(norm_type) +
                     " for gradients is non-finite, so it cannot be clipped");
  }
  // min(1, max_norm / (total + 1e-6)), and 1 for a non-finite total: such gradients are left alone
  // and the optimizer's step skips them.
  const Tensor coef = clamp(mul(reciprocal(add(total, Scalar(1e-6))), Scalar(max_norm)), std::nullopt, Scalar(1.0));
  const Tensor scale = where(isfinite(total), coef, ones_like(coef));
  for (Tensor g : grads) mul_(g, st::detail::cast_raw(to_device(scale, g.device()), g.dtype()));
  return total;
}

void clip_grad_value_(const std::vector<Tensor>& params, double clip_value) {
  NoGradGuard ng;
  for (const Tensor& p : params) {
    Tensor g = p.grad();
    if (g.defined()) clamp_(g, -clip_value, clip_value);
  }
}

}  // namespace st::optim
