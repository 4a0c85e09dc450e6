#pragma once
// The base of every layer: named parameters, buffers and children, train/eval
// mode, state dicts. Keys are "<module path>::<param>" where the path joins
// module names with '.'; a child without a name takes its attribute name or
// its index in a container ("encoder.0::weight").
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "spiraltorch/tensor.h"

namespace st::nn {

using StateDict = std::vector<std::pair<std::string, Tensor>>;

class Module : public std::enable_shared_from_this<Module> {
 public:
  explicit Module(std::string name = "") : name_(std::move(name)) {}
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Single-tensor forward; layers with other signatures add their own overloads.
  virtual Tensor forward(const Tensor& input);
  Tensor operator()(const Tensor& input) { return forward(input); }
  // Class name for repr and error messages ("Linear").
  virtual std::string type_name() const { return "Module"; }

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // Registers (or replaces) a parameter; it is made a leaf that requires grad.
  Tensor register_parameter(const std::string& name, Tensor value, bool requires_grad = true);
  void register_buffer(const std::string& name, Tensor value);
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

  // Recursive, with full keys.
  StateDict named_parameters() const;
  StateDict named_buffers() const;
  std::vector<Tensor> parameters() const;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_modules();

  // Parameters and buffers, keyed like named_parameters (buffers included).
  StateDict state_dict() const;
  // Copies values in; all checks happen before anything is written, so a failed
  // load leaves the module unchanged. strict: missing or unexpected keys raise.
  void load_state_dict(const StateDict& state, bool strict = true);

  virtual void train(bool mode = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  void zero_grad();
  // Converts floating parameters and buffers to `dtype` in place (same tensors objects).
  void to(Dtype dtype);
  // Moves every parameter and buffer to `device` in place (the tensor objects stay the same).
  void to(Device device);

  // Riemannian (Poincare-ball) updates for every parameter below this module, used
  // by ModuleTrainer; see geometry/poincare.h. Curvature must be negative.
  struct Hypergrad {
    double curvature;
    double learning_rate;
  };
  void attach_hypergrad(double curvature, double learning_rate);
  void detach_hypergrad();
  const std::optional<Hypergrad>& hypergrad() const { return hypergrad_; }
  // Each parameter with the hypergrad settings of the module that owns it.
  std::vector<std::pair<Tensor, std::optional<Hypergrad>>> parameters_with_hypergrad() const;

  // The key prefix of this module's own entries ("" at the root).
  std::string child_key(const std::string& slot, const Module& child) const;

 protected:
  bool training_ = true;

 private:
  void collect(const std::string& prefix, StateDict& out, bool params, bool buffers) const;
  void collect_modules(const std::string& path, std::vector<std::pair<std::string, std::shared_ptr<Module>>>& out);
  std::string name_;
  std::optional<Hypergrad> hypergrad_;
  std::vector<std::pair<std::string, Tensor>> params_;
  std::vector<std::pair<std::string, Tensor>> buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
};

// Joins a module path and an entry name into a state-dict key.
std::string join_key(const std::string& prefix, const std::string& entry);

}  // namespace st::nn
