#pragma once
#include "spiraltorch/optim/optimizer.h"

namespace st::optim {

// torch.optim.Rprop: per-element step sizes grown by eta_plus while the gradient keeps its sign
// and shrunk by eta_minus when it flips (that element then skips the update), clamped to
// [step_size_min, step_size_max]. Options lr (initial step size), eta_minus, eta_plus,
// step_size_min, step_size_max, maximize. State: prev, step_size.
class Rprop : public Optimizer {
 public:
  explicit Rprop(std::vector<ParamGroup> groups, double lr = 1e-2, double eta_minus = 0.5, double eta_plus = 1.2,
                 double step_size_min = 1e-6, double step_size_max = 50.0, bool maximize = false);
  std::string type_name() const override { return "Rprop"; }

 protected:
  void validate(const Options& o) const override;
  void update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) override;
};

}  // namespace st::optim
