#include "spiraltorch/nn/module.h"

#include <algorithm>
#include <functional>
#include <set>

#include "spiraltorch/autograd.h"
#include "spiraltorch/gradient_gate.h"
#include "spiraltorch/ops.h"

namespace st::nn {

std::string join_key(const std::string& prefix, const std::string& entry) {
  return prefix.empty() ? entry : prefix + "::" + entry;
}

Tensor Module::forward(const Tensor&) { throw SpiralError(type_name() + ": forward is not defined for this module"); }

Tensor Module::register_parameter(const std::string& name, Tensor value, bool requires_grad) {
  if (name.empty() || name.find("::") != std::string::npos || name.find('.') != std::string::npos) {
    throw ValueError(type_name() + ": invalid parameter name '" + name + "'");
  }
  if (requires_grad && !value.is_leaf()) value = value.detach();
  if (value.defined() && is_floating(value.dtype())) value.set_requires_grad(requires_grad);
  for (auto& [n, t] : params_) {
    if (n == name) {
      t = value;
      return value;
    }
  }
  params_.emplace_back(name, value);
  return value;
}

void Module::register_buffer(const std::string& name, Tensor value, bool persistent) {
  if (persistent) {
    non_persistent_.erase(name);
  } else {
    non_persistent_.insert(name);
  }
  for (auto& [n, t] : buffers_) {
    if (n == name) {
      t = value;
      return;
    }
  }
  buffers_.emplace_back(name, std::move(value));
}

std::string Module::child_key(const std::string& slot, const Module& child) const {
  return child.name().empty() ? slot : child.name();
}

std::shared_ptr<Module> Module::register_module(const std::string& slot, std::shared_ptr<Module> child) {
  if (!child) throw ValueError(type_name() + ": cannot register a null module as '" + slot + "'");
  if (child.get() == this) throw ValueError(type_name() + ": a module cannot be its own child");
  const std::string key = child_key(slot, *child);
  for (auto& [s, c] : children_) {
    if (s == slot) {  // re-assigning an attribute replaces the child
      c = child;
      return child;
    }
  }
  for (const auto& [s, c] : children_) {
    if (child_key(s, *c) == key) {
      throw ValueError(type_name() + ": two children would share the name '" + key +
                       "'; give one of them a different name=");
    }
  }
  children_.emplace_back(slot, child);
  return child;
}

void Module::remove_child(const std::string& slot) {
  std::erase_if(children_, [&](const auto& e) { return e.first == slot; });
}

Tensor* Module::find_parameter(const std::string& name) {
  for (auto& [n, t] : params_) {
    if (n == name) return &t;
  }
  return nullptr;
}

Tensor* Module::find_buffer(const std::string& name) {
  for (auto& [n, t] : buffers_) {
    if (n == name) return &t;
  }
  return nullptr;
}

void Module::collect(const std::string& prefix, StateDict& out, bool params, bool buffers, bool recurse,
                     bool persistent_only) const {
  if (params) {
    for (const auto& [n, t] : params_) {
      if (t.defined()) out.emplace_back(join_key(prefix, n), t);
    }
  }
  if (buffers) {
    for (const auto& [n, t] : buffers_) {
      if (t.defined() && !(persistent_only && non_persistent_.contains(n))) out.emplace_back(join_key(prefix, n), t);
    }
  }
  if (!recurse) return;
  for (const auto& [slot, child] : children_) {
    const std::string key = child_key(slot, *child);
    child->collect(prefix.empty() ? key : prefix + "." + key, out, params, buffers, true, persistent_only);
  }
}

StateDict Module::named_parameters(bool recurse) const {
  StateDict out;
  collect(name_, out, true, false, recurse);
  return out;
}

StateDict Module::named_buffers(bool recurse) const {
  StateDict out;
  collect(name_, out, false, true, recurse);
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  std::set<TensorImpl*> seen;  // shared (tied) parameters appear once
  for (auto& [k, t] : named_parameters(recurse)) {
    if (seen.insert(t.impl()).second) out.push_back(t);
  }
  return out;
}

std::vector<std::pair<std::string, Module*>> Module::named_modules() {
  std::vector<std::pair<std::string, Module*>> out;
  std::set<const Module*> seen;
  std::function<void(const std::string&, Module&)> visit = [&](const std::string& path, Module& m) {
    if (!seen.insert(&m).second) return;
    out.emplace_back(path, &m);
    for (const auto& [slot, child] : m.children_) {
      const std::string key = m.child_key(slot, *child);
      visit(path.empty() ? key : path + "." + key, *child);
    }
  };
  visit(name_, *this);
  return out;
}

void Module::apply(const std::function<void(Module&)>& fn) {
  for (const auto& [slot, child] : children_) child->apply(fn);
  fn(*this);
}

StateDict Module::state_dict() const {
  StateDict out;
  collect(name_, out, true, true, true, true);
  for (auto& [k, t] : out) t = t.detach();
  return out;
}

LoadResult Module::load_state_dict(const StateDict& state, bool strict) {
  const StateDict own = [&] {
    StateDict o;
    collect(name_, o, true, true, true, true);
    return o;
  }();
  std::map<std::string, const Tensor*> incoming;
  for (const auto& [k, t] : state) incoming[k] = &t;
  std::vector<std::string> missing, unexpected;
  std::set<std::string> own_keys;
  for (const auto& [k, t] : own) {
    own_keys.insert(k);
    auto it = incoming.find(k);
    if (it == incoming.end()) {
      missing.push_back(k);
      continue;
    }
    if (it->second->shape() != t.shape()) {
      throw CheckpointError("load_state_dict: '" + k + "' has shape " + shape_str(it->second->shape()) +
                            " in the checkpoint but " + shape_str(t.shape()) + " in the module");
    }
  }
  for (const auto& [k, t] : state) {
    if (!own_keys.count(k)) unexpected.push_back(k);
  }
  if (strict && (!missing.empty() || !unexpected.empty())) {
    std::string msg = "load_state_dict: ";
    auto list = [](const std::vector<std::string>& v) {
      std::string s;
      for (size_t i = 0; i < v.size(); ++i) s += (i ? ", '" : "'") + v[i] + "'";
      return s;
    };
    if (!missing.empty()) msg += "missing keys " + list(missing);
    if (!unexpected.empty()) msg += std::string(missing.empty() ? "" : "; ") + "unexpected keys " + list(unexpected);
    throw CheckpointError(msg);
  }
  // Convert everything first, then write: a failure above leaves the module untouched.
  std::vector<std::pair<Tensor, Tensor>> writes;
  for (const auto& [k, t] : own) {
    auto it = incoming.find(k);
    if (it != incoming.end()) writes.emplace_back(t, it->second->detach().to(t.dtype()).contiguous());
  }
  NoGradGuard ng;
  for (auto& [dst, src] : writes) {
    Tensor d = dst;
    copy_(d, src);
  }
  return LoadResult{std::move(missing), std::move(unexpected)};
}

void Module::train(bool mode) {
  training_ = mode;
  for (auto& [s, c] : children_) c->train(mode);
}

void Module::zero_grad(bool set_to_none) {
  NoGradGuard ng;
  for (Tensor p : parameters()) {
    if (set_to_none) {
      p.set_grad({});
    } else if (Tensor g = p.grad(); g.defined()) {
      zero_(g);
    }
  }
}

void Module::requires_grad_(bool requires_grad) {
  for (Tensor p : parameters()) {
    if (is_floating(p.dtype())) p.set_requires_grad(requires_grad);
  }
}

int Module::register_forward_pre_hook(ForwardPreHook hook) {
  pre_hooks_.emplace_back(next_hook_id_, std::move(hook));
  return next_hook_id_++;
}

int Module::register_forward_hook(ForwardHook hook) {
  forward_hooks_.emplace_back(next_hook_id_, std::move(hook));
  return next_hook_id_++;
}

int Module::register_full_backward_hook(BackwardHook hook) {
  backward_hooks_.emplace_back(next_hook_id_, std::move(hook));
  return next_hook_id_++;
}

void Module::remove_hook(int id) {
  auto by_id = [id](const auto& e) { return e.first == id; };
  std::erase_if(pre_hooks_, by_id);
  std::erase_if(forward_hooks_, by_id);
  std::erase_if(backward_hooks_, by_id);
}

namespace {

// The full backward hooks of one call. The graph may outlive the module: the nodes hold the hooks
// and a token that tells whether the module still exists, never the module itself.
// Where a call's tensors sit among its front-end values (CallFront); without a front, the tensors
// are the values. Only the layout is kept: the graph must not hold the front end's objects.
struct Layout {
  bool spread = false;
  size_t arity = 0;
  std::vector<size_t> slots;

  static Layout of(const CallValues& v) {
    if (!v.front) return {};
    return {true, v.front->arity, v.front->tensor_slots};
  }
  // One entry per value: the tensors' gradients at their slots, undefined elsewhere.
  std::vector<Tensor> spread_out(std::vector<Tensor> g) const {
    if (!spread) return g;
    std::vector<Tensor> out(arity);
    for (size_t i = 0; i < slots.size() && i < g.size(); ++i) out[slots[i]] = std::move(g[i]);
    return out;
  }
  std::vector<Tensor> gather(std::vector<Tensor> g) const {
    if (!spread) return g;
    std::vector<Tensor> out;
    for (const size_t s : slots) out.push_back(std::move(g[s]));
    return out;
  }
};

struct BackwardHooks {
  std::vector<std::pair<int, BackwardHook>> hooks;
  Module* module;
  std::weak_ptr<const int> alive;
  size_t n_inputs;
  bool inputs_tracked;  // some tensor argument needs a gradient, so the input gate will run
  Layout inputs, outputs;
  std::vector<Tensor> grad_output;

  // Runs the hooks with this pass's grad_output, then drops it: under create_graph it refers to
  // the graph that holds these hooks.
  std::vector<Tensor> fire(std::vector<Tensor> grad_input_tensors) {
    const std::vector<Tensor> grad_out = outputs.spread_out(std::exchange(grad_output, {}));
    if (alive.expired()) return grad_input_tensors;
    std::vector<Tensor> grad_input = inputs.spread_out(std::move(grad_input_tensors));
    for (const auto& [id, hook] : hooks) {
      std::optional<std::vector<Tensor>> r = hook(*module, grad_input, grad_out);
      if (!r) continue;
      if (r->size() != grad_input.size()) {
        throw ValueError(module->type_name() + ": a full backward hook returned " + std::to_string(r->size()) +
                         " gradients for " + std::to_string(grad_input.size()) + " inputs");
      }
      grad_input = std::move(*r);
    }
    return inputs.gather(std::move(grad_input));
  }
};

}  // namespace

Tensor Module::operator()(const Tensor& input) {
  if (!has_hooks()) return forward(input);
  return call_hooked(input, [this](const Tensor& x) { return forward(x); });
}

CallValues Module::call_hooked(CallValues args, const std::function<CallValues(const CallValues& args)>& forward_fn) {
  if (!has_hooks()) return forward_fn(args);
  // Copies of the hook lists: a hook may register or remove hooks while it runs.
  for (const auto& [id, hook] : std::vector(pre_hooks_)) {
    if (std::optional<CallValues> r = hook(*this, args)) args = std::move(*r);
  }
  std::shared_ptr<BackwardHooks> backward;
  if (!backward_hooks_.empty() && grad_enabled()) {
    const bool tracked =
        std::ranges::any_of(args.tensors, [](const Tensor& t) { return t.defined() && t.requires_grad(); });
    backward = std::make_shared<BackwardHooks>(
        BackwardHooks{backward_hooks_, this, alive_, args.tensors.size(), tracked, Layout::of(args), {}, {}});
    // The arguments' gradients meet in one node, where the hooks run with all of them.
    args.tensors = gradient_gate(args.tensors, [backward](const std::vector<Tensor>& g) { return backward->fire(g); });
  }
  CallValues out = forward_fn(args);
  for (const auto& [id, hook] : std::vector(forward_hooks_)) {
    if (std::optional<CallValues> r = hook(*this, args, out)) out = std::move(*r);
  }
  if (backward) {
    backward->outputs = Layout::of(out);
    // The results' gradients meet first (the engine reaches them before the arguments' node): they
    // are grad_output. When no argument needs a gradient, no input node will run: the hooks run here.
    out.tensors = gradient_gate(out.tensors, [backward](const std::vector<Tensor>& g) {
      backward->grad_output = g;
      if (!backward->inputs_tracked) backward->fire(std::vector<Tensor>(backward->n_inputs));
      return g;
    });
  }
  return out;
}

Tensor Module::call_hooked(const Tensor& input, const std::function<Tensor(const Tensor& input)>& forward_fn) {
  if (!has_hooks()) return forward_fn(input);
  const CallValues out = call_hooked(CallValues{{input}, nullptr}, [&](const CallValues& args) {
    if (args.tensors.size() != 1) {
      throw ValueError(type_name() + ": forward takes 1 tensor, but the forward pre-hooks gave " +
                       std::to_string(args.tensors.size()));
    }
    return CallValues{{forward_fn(args.tensors[0])}, nullptr};
  });
  if (out.tensors.size() != 1) {
    throw ValueError(type_name() + ": forward returns 1 tensor, but the forward hooks gave " +
                     std::to_string(out.tensors.size()));
  }
  return out.tensors[0];
}

namespace {

// Gives the existing tensor object t the data of `next` (its storage, dtype, offset and strides),
// so references held elsewhere see it; a gradient is dropped and requires_grad kept.
void replace_data(Tensor& t, const Tensor& next) {
  const bool rg = t.requires_grad();
  TensorImpl* impl = t.impl();
  impl->storage = next.storage();
  impl->dtype = next.dtype();
  impl->offset = next.offset();
  impl->strides = next.strides();
  if (impl->autograd) impl->autograd->grad = nullptr;
  if (rg) t.set_requires_grad(true);
}

}  // namespace

void Module::to(Dtype dtype) {
  NoGradGuard ng;
  auto convert = [dtype](Tensor& t) {
    if (!t.defined() || !is_floating(t.dtype()) || t.dtype() == dtype) return;
    replace_data(t, cast(t.detach(), dtype).contiguous());
  };
  for (auto& [n, t] : params_) convert(t);
  for (auto& [n, t] : buffers_) convert(t);
  for (auto& [s, c] : children_) c->to(dtype);
}

void Module::to(Device device) {
  NoGradGuard ng;
  auto move = [device](Tensor& t) {
    if (!t.defined() || t.device() == device) return;
    replace_data(t, to_device(t.detach().contiguous(), device));
  };
  for (auto& [n, t] : params_) move(t);
  for (auto& [n, t] : buffers_) move(t);
  for (auto& [s, c] : children_) c->to(device);
}

}  // namespace st::nn
