#pragma once
#include "spiraltorch/optim/optimizer.h"

namespace st::optim {

// torch.optim.Adagrad: options lr, lr_decay, weight_decay, initial_accumulator_value, eps, maximize.
class Adagrad : public Optimizer {
 public:
  explicit Adagrad(std::vector<ParamGroup> groups, double lr = 1e-2, double lr_decay = 0.0, double weight_decay = 0.0,
                   double initial_accumulator_value = 0.0, double eps = 1e-10, bool maximize = false);
  std::string type_name() const override { return "Adagrad"; }

 protected:
  void validate(const Options& o) const override;
  void update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) override;
  bool device_updates_queued() const override { return true; }
};

}  // namespace st::optim
