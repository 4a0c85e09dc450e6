#include "spiraltorch/nn/module.h"

#include <cmath>
#include <functional>
#include <set>

#include "spiraltorch/autograd.h"
#include "spiraltorch/ops.h"

namespace st::nn {

std::string join_key(const std::string& prefix, const std::string& entry) {
  return prefix.empty() ? entry : prefix + "::" + entry;
}

Tensor Module::forward(const Tensor&) {
  throw SpiralError(type_name() + ": forward is not defined for this module");
}

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

void Module::register_buffer(const std::string& name, Tensor value) {
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

void Module::collect(const std::string& prefix, StateDict& out, bool params, bool buffers) const {
  if (params) {
    for (const auto& [n, t] : params_) {
      if (t.defined()) out.emplace_back(join_key(prefix, n), t);
    }
  }
  if (buffers) {
    for (const auto& [n, t] : buffers_) {
      if (t.defined()) out.emplace_back(join_key(prefix, n), t);
    }
  }
  for (const auto& [slot, child] : children_) {
    const std::string key = child_key(slot, *child);
    child->collect(prefix.empty() ? key : prefix + "." + key, out, params, buffers);
  }
}

StateDict Module::named_parameters() const {
  StateDict out;
  collect(name_, out, true, false);
  return out;
}

StateDict Module::named_buffers() const {
  StateDict out;
  collect(name_, out, false, true);
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  std::set<TensorImpl*> seen;  // shared (tied) parameters appear once
  for (auto& [k, t] : named_parameters()) {
    if (seen.insert(t.impl()).second) out.push_back(t);
  }
  return out;
}

void Module::collect_modules(const std::string& path,
                             std::vector<std::pair<std::string, std::shared_ptr<Module>>>& out) {
  out.emplace_back(path, shared_from_this());
  for (const auto& [slot, child] : children_) {
    const std::string key = child_key(slot, *child);
    child->collect_modules(path.empty() ? key : path + "." + key, out);
  }
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_modules() {
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> out;
  collect_modules(name_, out);
  return out;
}

StateDict Module::state_dict() const {
  StateDict out;
  collect(name_, out, true, true);
  for (auto& [k, t] : out) t = t.detach();
  return out;
}

void Module::load_state_dict(const StateDict& state, bool strict) {
  const StateDict own = [&] {
    StateDict o;
    collect(name_, o, true, true);
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
}

void Module::attach_hypergrad(double curvature, double learning_rate) {
  if (!(curvature < 0) || !std::isfinite(curvature)) {
    throw ValueError("attach_hypergrad: curvature must be negative and finite, got " + std::to_string(curvature));
  }
  if (!(learning_rate > 0) || !std::isfinite(learning_rate)) {
    throw ValueError("attach_hypergrad: learning_rate must be positive and finite, got " + std::to_string(learning_rate));
  }
  hypergrad_ = Hypergrad{curvature, learning_rate};
  for (auto& [s, c] : children_) c->attach_hypergrad(curvature, learning_rate);
}

void Module::detach_hypergrad() {
  hypergrad_.reset();
  for (auto& [s, c] : children_) c->detach_hypergrad();
}

std::vector<std::pair<Tensor, std::optional<Module::Hypergrad>>> Module::parameters_with_hypergrad() const {
  std::vector<std::pair<Tensor, std::optional<Hypergrad>>> out;
  std::set<TensorImpl*> seen;
  std::function<void(const Module&)> visit = [&](const Module& m) {
    for (const auto& [n, t] : m.params_) {
      if (t.defined() && t.requires_grad() && seen.insert(t.impl()).second) out.emplace_back(t, m.hypergrad_);
    }
    for (const auto& [s, c] : m.children_) visit(*c);
  };
  visit(*this);
  return out;
}

void Module::train(bool mode) {
  training_ = mode;
  for (auto& [s, c] : children_) c->train(mode);
}

void Module::zero_grad() {
  for (auto& [k, t] : named_parameters()) {
    Tensor p = t;
    p.set_grad({});
  }
}

void Module::to(Dtype dtype) {
  NoGradGuard ng;
  auto convert = [dtype](Tensor& t) {
    if (!t.defined() || !is_floating(t.dtype()) || t.dtype() == dtype) return;
    const bool rg = t.requires_grad();
    Tensor converted = cast(t.detach(), dtype).contiguous();
    // Swap the data of the existing tensor object so references held elsewhere see it.
    TensorImpl* impl = t.impl();
    impl->storage = converted.storage();
    impl->dtype = dtype;
    impl->offset = converted.offset();
    impl->strides = converted.strides();
    if (impl->autograd) impl->autograd->grad = nullptr;
    if (rg) t.set_requires_grad(true);
  };
  for (auto& [n, t] : params_) convert(t);
  for (auto& [n, t] : buffers_) convert(t);
  for (auto& [s, c] : children_) c->to(dtype);
}

void Module::to(Device device) {
  NoGradGuard ng;
  auto move = [device](Tensor& t) {
    if (!t.defined() || t.device() == device) return;
    const bool rg = t.requires_grad();
    Tensor moved = to_device(t.detach().contiguous(), device);
    TensorImpl* impl = t.impl();
    impl->storage = moved.storage();
    impl->offset = moved.offset();
    impl->strides = moved.strides();
    if (impl->autograd) impl->autograd->grad = nullptr;
    if (rg) t.set_requires_grad(true);
  };
  for (auto& [n, t] : params_) move(t);
  for (auto& [n, t] : buffers_) move(t);
  for (auto& [s, c] : children_) c->to(device);
}

}  // namespace st::nn
