#pragma once
#include <type_traits>

#include "spiraltorch/nn/module.h"

namespace st::nn {

// Runs children in order. Unnamed children are keyed by their index ("0::weight").
class Sequential : public Module {
 public:
  explicit Sequential(std::string name = "") : Module(std::move(name)) {}
  // The layers in order, like torch.nn.Sequential(a, b, ...): Sequential(make_shared<Linear>(...), ...).
  template <typename... Layers>
    requires(sizeof...(Layers) > 0 && (std::is_base_of_v<Module, Layers> && ...))
  explicit Sequential(std::shared_ptr<Layers>... layers) {
    (add(std::move(layers)), ...);
  }
  void add(std::shared_ptr<Module> layer);
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Sequential"; }
  size_t size() const { return children().size(); }
  std::shared_ptr<Module> at(int64_t index) const;
};

}  // namespace st::nn
