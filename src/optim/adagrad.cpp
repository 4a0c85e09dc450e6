#include "spiraltorch/optim/adagrad.h"

#include <cmath>

#include "optim/kernels.h"
#include "optim/update_queue.h"

namespace st::optim {

Adagrad::Adagrad(std::vector<ParamGroup> groups, double lr, double lr_decay, double weight_decay,
                 double initial_accumulator_value, double eps, bool maximize)
    : Optimizer({}, {{"lr", lr},
                     {"lr_decay", lr_decay},
                     {"weight_decay", weight_decay},
                     {"initial_accumulator_value", initial_accumulator_value},
                     {"eps", eps},
                     {"maximize", maximize ? 1.0 : 0.0}}) {
  add_param_groups(std::move(groups));
}

void Adagrad::validate(const Options& o) const {
  Optimizer::validate(o);
  if (!(o.at("lr_decay") >= 0.0))
    throw ValueError("Adagrad: invalid lr_decay value " + std::to_string(o.at("lr_decay")));
  if (!(o.at("initial_accumulator_value") >= 0.0)) throw ValueError("Adagrad: invalid initial_accumulator_value");
}

void Adagrad::update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) {
  const double lr = group.get("lr"), lr_decay = group.get("lr_decay"), wd = group.get("weight_decay"),
               eps = group.get("eps");
  const bool maximize = group.flag("maximize");
  Tensor acc = detail::buffer(state, "sum", param, group.get("initial_accumulator_value"));
  const int64_t step = ++state.step;
  const double clr = lr / (1.0 + static_cast<double>(step - 1) * lr_decay);
  const backend::Backend::AdagradArgs args{clr, wd, eps, maximize};
  update_queue().adagrad.push(param.device(), param.dtype(), args, {param, grad.contiguous(), acc});
}

}  // namespace st::optim
