#pragma once
#include "spiraltorch/optim/optimizer.h"

namespace st::optim {

// torch.optim.Adadelta: options lr, rho, eps, weight_decay (L2), maximize. State: square_avg, acc_delta.
class Adadelta : public Optimizer {
 public:
  explicit Adadelta(std::vector<ParamGroup> groups, double lr = 1.0, double rho = 0.9, double eps = 1e-6,
                    double weight_decay = 0.0, bool maximize = false);
  std::string type_name() const override { return "Adadelta"; }

 protected:
  void validate(const Options& o) const override;
  void update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) override;
};

}  // namespace st::optim
