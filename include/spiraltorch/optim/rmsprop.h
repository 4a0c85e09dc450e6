#pragma once
#include "spiraltorch/optim/optimizer.h"

namespace st::optim {

// torch.optim.RMSprop: options lr, alpha, eps, weight_decay, momentum, centered, maximize.
class RMSprop : public Optimizer {
 public:
  explicit RMSprop(std::vector<ParamGroup> groups, double lr = 1e-2, double alpha = 0.99, double eps = 1e-8,
                   double weight_decay = 0.0, double momentum = 0.0, bool centered = false, bool maximize = false);
  std::string type_name() const override { return "RMSprop"; }

 protected:
  void validate(const Options& o) const override;
  void update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) override;
  bool device_updates_queued() const override { return true; }
};

}  // namespace st::optim
