#pragma once
// The base of every layer: named parameters, buffers and children, train/eval
// mode, state dicts. Keys are "<module path>::<param>" where the path joins
// module names with '.'; a child without a name takes its attribute name or
// its index in a container ("encoder.0::weight").
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "spiraltorch/tensor.h"

namespace st::nn {

using StateDict = std::vector<std::pair<std::string, Tensor>>;

class Module;

// What load_state_dict(strict=false) skipped, like PyTorch's _IncompatibleKeys.
struct LoadResult {
  std::vector<std::string> missing_keys;
  std::vector<std::string> unexpected_keys;
};

// What a front end keeps with a call's tensors (the Python binding: the positional argument tuple,
// the object forward returned), so its hooks can see non-tensor arguments. C++ code passes it on
// and never looks inside.
struct CallFront {
  virtual ~CallFront() = default;
  // How the tensors sit among the front end's values (its positional arguments, or the elements of
  // what forward returned): `arity` values, tensor i at tensor_slots[i]. Full backward hooks get one
  // gradient per value, undefined at the others, as PyTorch's do.
  size_t arity = 0;
  std::vector<size_t> tensor_slots;
};

// A module call's tensor arguments, or its tensor results, in order, as the hooks see them; C++
// callers leave `front` empty.
struct CallValues {
  std::vector<Tensor> tensors;
  std::shared_ptr<const CallFront> front;
};

// Hooks around a module call (PyTorch's forward pre-hook, forward hook and full backward hook).
// Each may return a replacement (the arguments, the results, or the gradients of the arguments);
// std::nullopt keeps the value.
using ForwardPreHook = std::function<std::optional<CallValues>(Module& module, const CallValues& args)>;
using ForwardHook =
    std::function<std::optional<CallValues>(Module& module, const CallValues& args, const CallValues& output)>;
// grad_input has one entry per tensor argument, undefined where no gradient flows (the argument needs
// none, or the pass did not reach it); grad_output one per tensor result. With a front, one entry per
// front-end value instead (undefined at non-tensor ones). A replacement grad_input has the same length.
using BackwardHook = std::function<std::optional<std::vector<Tensor>>(
    Module& module, const std::vector<Tensor>& grad_input, const std::vector<Tensor>& grad_output)>;

// Modules are shared between C++ containers and Python objects, so nothing here
// assumes a std::shared_ptr owns `this` (no enable_shared_from_this).
class Module {
 public:
  explicit Module(std::string name = "") : name_(std::move(name)) {}
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Single-tensor forward; layers with other signatures add their own overloads.
  virtual Tensor forward(const Tensor& input);
  // forward with the registered hooks around it; containers call children this way.
  Tensor operator()(const Tensor& input);
  // Runs forward_fn with the hooks around it, as PyTorch's Module.__call__: the pre-hooks on the
  // arguments, full backward hooks gating the tensors going in and coming out (their hooks run once
  // per backward pass), the forward hooks on the results. Every hooked call goes through here.
  CallValues call_hooked(CallValues args, const std::function<CallValues(const CallValues& args)>& forward_fn);
  // The one-tensor-in, one-tensor-out case (operator(), layers whose forward takes extra options);
  // ValueError when a hook leaves another number of tensors.
  Tensor call_hooked(const Tensor& input, const std::function<Tensor(const Tensor& input)>& forward_fn);
  // Hook registration returns an id for remove_hook; hooks run in registration order.
  int register_forward_pre_hook(ForwardPreHook hook);
  int register_forward_hook(ForwardHook hook);
  int register_full_backward_hook(BackwardHook hook);
  // Removes the hook with this id (of any kind); unknown ids are ignored, like PyTorch's handles.
  void remove_hook(int id);
  bool has_hooks() const { return !pre_hooks_.empty() || !forward_hooks_.empty() || !backward_hooks_.empty(); }
  // Class name for repr and error messages ("Linear").
  virtual std::string type_name() const { return "Module"; }

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // Registers (or replaces) a parameter; it is made a leaf that requires grad.
  Tensor register_parameter(const std::string& name, Tensor value, bool requires_grad = true);
  // A non-persistent buffer moves with the module (to(), named_buffers) but stays out of
  // state_dict and load_state_dict, like PyTorch's register_buffer(..., persistent=False).
  void register_buffer(const std::string& name, Tensor value, bool persistent = true);
  bool is_persistent_buffer(const std::string& name) const { return !non_persistent_.contains(name); }
  // Registers a child under `slot` (its attribute name or index). A child with an
  // explicit name is keyed by that name; two children with the same key are refused.
  std::shared_ptr<Module> register_module(const std::string& slot, std::shared_ptr<Module> child);
  void remove_child(const std::string& slot);

  // Own entries, in registration order.
  const std::vector<std::pair<std::string, Tensor>>& own_parameters() const { return params_; }
  const std::vector<std::pair<std::string, Tensor>>& own_buffers() const { return buffers_; }
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& children() const { return children_; }
  Tensor* find_parameter(const std::string& name);
  Tensor* find_buffer(const std::string& name);

  // Recursive (or only this module's own entries), with full keys.
  StateDict named_parameters(bool recurse = true) const;
  StateDict named_buffers(bool recurse = true) const;
  std::vector<Tensor> parameters(bool recurse = true) const;
  // This module first, then every descendant depth-first, each once (shared
  // submodules are listed at their first path). The pointers observe modules owned
  // by this tree; they stay valid while it is unchanged.
  std::vector<std::pair<std::string, Module*>> named_modules();
  // Calls fn on every module of named_modules(), children before parents like PyTorch.
  void apply(const std::function<void(Module&)>& fn);

  // Parameters and buffers, keyed like named_parameters (buffers included).
  StateDict state_dict() const;
  // Copies values in; all checks happen before anything is written, so a failed
  // load leaves the module unchanged. strict: missing or unexpected keys raise;
  // otherwise they are returned.
  LoadResult load_state_dict(const StateDict& state, bool strict = true);

  virtual void train(bool mode = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  // set_to_none drops the gradients; otherwise they are zeroed in place.
  void zero_grad(bool set_to_none = true);
  // Sets requires_grad on every floating parameter below this module.
  void requires_grad_(bool requires_grad = true);
  // Converts floating parameters and buffers to `dtype` in place (same tensors objects).
  void to(Dtype dtype);
  // Moves every parameter and buffer to `device` in place (the tensor objects stay the same).
  void to(Device device);

  // A token that expires with this module. Side tables keyed by module (the Z-space extension's
  // hypergrad settings) keep it to tell this module from a later one at the same address.
  std::weak_ptr<const void> lifetime() const { return alive_; }

  // The key prefix of this module's own entries ("" at the root).
  std::string child_key(const std::string& slot, const Module& child) const;

 protected:
  bool training_ = true;

 private:
  void collect(const std::string& prefix, StateDict& out, bool params, bool buffers, bool recurse,
               bool persistent_only = false) const;
  std::string name_;
  int next_hook_id_ = 0;
  std::vector<std::pair<int, ForwardPreHook>> pre_hooks_;
  std::vector<std::pair<int, ForwardHook>> forward_hooks_;
  std::vector<std::pair<int, BackwardHook>> backward_hooks_;
  // Expires with the module; backward-hook nodes check it before calling hooks (and lifetime()).
  std::shared_ptr<const int> alive_ = std::make_shared<const int>(0);
  std::vector<std::pair<std::string, Tensor>> params_;
  std::vector<std::pair<std::string, Tensor>> buffers_;
  std::set<std::string> non_persistent_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
};

// Joins a module path and an entry name into a state-dict key.
std::string join_key(const std::string& prefix, const std::string& entry);

}  // namespace st::nn
