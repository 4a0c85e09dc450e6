#include "spiraltorch/optim/adadelta.h"

#include <cmath>

#include "optim/kernels.h"

namespace st::optim {

Adadelta::Adadelta(std::vector<ParamGroup> groups, double lr, double rho, double eps, double weight_decay,
                   bool maximize)
    : Optimizer({}, {{"lr", lr},
                     {"rho", rho},
                     {"eps", eps},
                     {"weight_decay", weight_decay},
                     {"maximize", maximize ? 1.0 : 0.0}}) {
  add_param_groups(std::move(groups));
}

void Adadelta::validate(const Options& o) const {
  Optimizer::validate(o);
  if (!(o.at("rho") >= 0.0 && o.at("rho") <= 1.0)) {
    throw ValueError("Adadelta: invalid rho value " + std::to_string(o.at("rho")) + " (must be in [0, 1])");
  }
}

void Adadelta::update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) {
  NoGradGuard ng;
  const double lr = group.get("lr"), rho = group.get("rho"), eps = group.get("eps"), wd = group.get("weight_decay");
  Tensor g = group.flag("maximize") ? neg(grad) : grad;
  if (wd != 0.0) g = add(g, param, wd);
  Tensor& sq = detail::buffer(state, "square_avg", param);
  Tensor& acc = detail::buffer(state, "acc_delta", param);
  ++state.step;
  copy_(sq, add(mul(sq, rho), square(g), 1.0 - rho));
  const Tensor std_ = sqrt(add(sq, eps));
  const Tensor delta = mul(div(sqrt(add(acc, eps)), std_), g);
  copy_(acc, add(mul(acc, rho), square(delta), 1.0 - rho));
  add_(param, delta, -lr);
}

}  // namespace st::optim
