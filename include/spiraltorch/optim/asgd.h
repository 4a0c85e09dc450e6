#pragma once
#include "spiraltorch/optim/optimizer.h"

namespace st::optim {

// torch.optim.ASGD: SGD with a decaying step eta_t = lr / (1 + lambd * lr * t) ** alpha and a
// running average `ax` of the iterates (averaging starts after t0 steps). Options lr, lambd, alpha,
// t0, weight_decay (L2), maximize. State: eta and mu (0-d), ax.
class ASGD : public Optimizer {
 public:
  explicit ASGD(std::vector<ParamGroup> groups, double lr = 1e-2, double lambd = 1e-4, double alpha = 0.75,
                double t0 = 1e6, double weight_decay = 0.0, bool maximize = false);
  std::string type_name() const override { return "ASGD"; }

 protected:
  Shape buffer_shape(const Tensor& param, const std::string& buffer) const override;
  void update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) override;
};

}  // namespace st::optim
