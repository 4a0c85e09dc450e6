#pragma once
#include "spiraltorch/optim/optimizer.h"

namespace st::optim {

// torch.optim.RAdam: Adam whose adaptive term is switched on, with a variance rectification,
// once the length of the approximated SMA exceeds 5. Options lr, beta1, beta2, eps, weight_decay,
// decoupled_weight_decay, maximize. State: exp_avg, exp_avg_sq.
class RAdam : public Optimizer {
 public:
  explicit RAdam(std::vector<ParamGroup> groups, double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999,
                 double eps = 1e-8, double weight_decay = 0.0, bool decoupled_weight_decay = false,
                 bool maximize = false);
  std::string type_name() const override { return "RAdam"; }

 protected:
  void update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) override;
};

}  // namespace st::optim
