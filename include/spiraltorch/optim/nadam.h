#pragma once
#include "spiraltorch/optim/optimizer.h"

namespace st::optim {

// torch.optim.NAdam: Adam with Nesterov momentum and the momentum schedule
// mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay)). Options lr, beta1, beta2, eps, weight_decay,
// momentum_decay, decoupled_weight_decay, maximize. State: exp_avg, exp_avg_sq, mu_product (0-d).
class NAdam : public Optimizer {
 public:
  explicit NAdam(std::vector<ParamGroup> groups, double lr = 2e-3, double beta1 = 0.9, double beta2 = 0.999,
                 double eps = 1e-8, double weight_decay = 0.0, double momentum_decay = 4e-3,
                 bool decoupled_weight_decay = false, bool maximize = false);
  std::string type_name() const override { return "NAdam"; }

 protected:
  void validate(const Options& o) const override;
  Shape buffer_shape(const Tensor& param, const std::string& buffer) const override;
  void update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) override;
};

}  // namespace st::optim
