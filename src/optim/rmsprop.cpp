#include "spiraltorch/optim/rmsprop.h"

#include <cmath>

#include "optim/kernels.h"
#include "optim/update_queue.h"

namespace st::optim {

RMSprop::RMSprop(std::vector<ParamGroup> groups, double lr, double alpha, double eps, double weight_decay,
                 double momentum, bool centered, bool maximize)
    : Optimizer({}, {{"lr", lr},
                     {"alpha", alpha},
                     {"eps", eps},
                     {"weight_decay", weight_decay},
                     {"momentum", momentum},
                     {"centered", centered ? 1.0 : 0.0},
                     {"maximize", maximize ? 1.0 : 0.0}}) {
  add_param_groups(std::move(groups));
}

void RMSprop::validate(const Options& o) const {
  Optimizer::validate(o);
  if (!(o.at("alpha") >= 0.0)) throw ValueError("RMSprop: invalid alpha value " + std::to_string(o.at("alpha")));
}

void RMSprop::update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) {
  const double lr = group.get("lr"), alpha = group.get("alpha"), eps = group.get("eps"), wd = group.get("weight_decay"),
               momentum = group.get("momentum");
  const bool centered = group.flag("centered"), maximize = group.flag("maximize");
  Tensor sq = detail::buffer(state, "square_avg", param);
  Tensor buf = momentum > 0 ? detail::buffer(state, "momentum_buffer", param) : Tensor();
  Tensor ga = centered ? detail::buffer(state, "grad_avg", param) : Tensor();
  ++state.step;
  const backend::Backend::RmspropArgs args{lr, alpha, eps, wd, momentum, maximize};
  update_queue().rmsprop.push(param.device(), param.dtype(), args, {param, grad.contiguous(), sq, ga, buf});
}

}  // namespace st::optim
