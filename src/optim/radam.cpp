#include "spiraltorch/optim/radam.h"

#include <cmath>

#include "optim/kernels.h"

namespace st::optim {

RAdam::RAdam(std::vector<ParamGroup> groups, double lr, double beta1, double beta2, double eps, double weight_decay,
             bool decoupled_weight_decay, bool maximize)
    : Optimizer({}, {{"lr", lr},
                     {"beta1", beta1},
                     {"beta2", beta2},
                     {"eps", eps},
                     {"weight_decay", weight_decay},
                     {"decoupled_weight_decay", decoupled_weight_decay ? 1.0 : 0.0},
                     {"maximize", maximize ? 1.0 : 0.0}}) {
  add_param_groups(std::move(groups));
}

void RAdam::update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) {
  NoGradGuard ng;
  const double lr = group.get("lr"), beta1 = group.get("beta1"), beta2 = group.get("beta2"), eps = group.get("eps"),
               wd = group.get("weight_decay");
  Tensor g = group.flag("maximize") ? neg(grad) : grad;
  Tensor& m = detail::buffer(state, "exp_avg", param);
  Tensor& v = detail::buffer(state, "exp_avg_sq", param);
  const double step = static_cast<double>(++state.step);
  if (wd != 0.0) {
    if (group.flag("decoupled_weight_decay")) {
      mul_(param, 1.0 - lr * wd);
    } else {
      g = add(g, param, wd);
    }
  }
  add_(m, sub(g, m), 1.0 - beta1);
  copy_(v, add(mul(v, beta2), square(g), 1.0 - beta2));
  const double bc1 = 1.0 - std::pow(beta1, step), bc2 = 1.0 - std::pow(beta2, step);
  // The length of the approximated simple moving average; past 5 the variance is tractable.
  const double rho_inf = 2.0 / (1.0 - beta2) - 1.0;
  const double rho_t = rho_inf - 2.0 * step * std::pow(beta2, step) / bc2;
  if (rho_t > 5.0) {
    const double rect =
        std::sqrt((rho_t - 4.0) * (rho_t - 2.0) * rho_inf / ((rho_inf - 4.0) * (rho_inf - 2.0) * rho_t));
    add_(param, div(m, add(sqrt(v), eps)), -(lr / bc1) * std::sqrt(bc2) * rect);
  } else {
    add_(param, m, -lr / bc1);
  }
}

}  // namespace st::optim
