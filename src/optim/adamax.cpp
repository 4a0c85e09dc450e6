#include "spiraltorch/optim/adamax.h"

#include <cmath>

#include "optim/kernels.h"

namespace st::optim {

Adamax::Adamax(std::vector<ParamGroup> groups, double lr, double beta1, double beta2, double eps, double weight_decay,
               bool maximize)
    : Optimizer({}, {{"lr", lr},
                     {"beta1", beta1},
                     {"beta2", beta2},
                     {"eps", eps},
                     {"weight_decay", weight_decay},
                     {"maximize", maximize ? 1.0 : 0.0}}) {
  add_param_groups(std::move(groups));
}

// Composed of tensor ops, so it runs on every device.
void Adamax::update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) {
  NoGradGuard ng;
  const double lr = group.get("lr"), beta1 = group.get("beta1"), beta2 = group.get("beta2"), eps = group.get("eps"),
               wd = group.get("weight_decay");
  Tensor g = group.flag("maximize") ? neg(grad) : grad;
  if (wd != 0.0) g = add(g, param, wd);
  Tensor& m = detail::buffer(state, "exp_avg", param);
  Tensor& u = detail::buffer(state, "exp_inf", param);
  const int64_t step = ++state.step;
  add_(m, sub(g, m), 1.0 - beta1);  // m.lerp_(g, 1 - beta1)
  copy_(u, maximum(mul(u, beta2), add(abs(g), eps)));
  const double clr = lr / (1.0 - std::pow(beta1, static_cast<double>(step)));
  add_(param, div(m, u), -clr);
}

}  // namespace st::optim
