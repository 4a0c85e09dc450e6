#pragma once
#include "spiraltorch/optim/optimizer.h"

namespace st::optim {

// torch.optim.SGD: options lr, momentum, dampening, weight_decay, nesterov, maximize.
class SGD : public Optimizer {
 public:
  explicit SGD(std::vector<ParamGroup> groups, double lr = 1e-3, double momentum = 0.0, double dampening = 0.0,
               double weight_decay = 0.0, bool nesterov = false, bool maximize = false);
  std::string type_name() const override { return "SGD"; }

 protected:
  void update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) override;
  bool device_updates_queued() const override { return true; }
};

}  // namespace st::optim
