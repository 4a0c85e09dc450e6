#pragma once
#include "spiraltorch/optim/optimizer.h"

namespace st::optim {

// torch.optim.Adamax: Adam with the infinity norm. Options lr, beta1, beta2, eps, weight_decay
// (L2, added to the gradient), maximize. State: exp_avg, exp_inf.
class Adamax : public Optimizer {
 public:
  explicit Adamax(std::vector<ParamGroup> groups, double lr = 2e-3, double beta1 = 0.9, double beta2 = 0.999,
                  double eps = 1e-8, double weight_decay = 0.0, bool maximize = false);
  std::string type_name() const override { return "Adamax"; }

 protected:
  void update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) override;
};

}  // namespace st::optim
