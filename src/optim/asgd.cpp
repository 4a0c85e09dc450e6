#include "spiraltorch/optim/asgd.h"

#include <algorithm>
#include <cmath>

#include "optim/kernels.h"

namespace st::optim {

ASGD::ASGD(std::vector<ParamGroup> groups, double lr, double lambd, double alpha, double t0, double weight_decay,
           bool maximize)
    : Optimizer({}, {{"lr", lr},
                     {"lambd", lambd},
                     {"alpha", alpha},
                     {"t0", t0},
                     {"weight_decay", weight_decay},
                     {"maximize", maximize ? 1.0 : 0.0}}) {
  add_param_groups(std::move(groups));
}

Shape ASGD::buffer_shape(const Tensor& param, const std::string& buffer) const {
  return buffer == "eta" || buffer == "mu" ? Shape{} : param.shape();
}

void ASGD::update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) {
  NoGradGuard ng;
  const double lr = group.get("lr"), lambd = group.get("lambd"), alpha = group.get("alpha"), t0 = group.get("t0"),
               wd = group.get("weight_decay");
  Tensor g = group.flag("maximize") ? neg(grad) : grad;
  // eta starts at the rate the group had when the parameter was first updated, as torch's.
  if (!state.buffers.count("eta")) state.buffers.emplace("eta", scalar_tensor(lr, param.dtype(), param.device()));
  if (!state.buffers.count("mu")) state.buffers.emplace("mu", scalar_tensor(1.0, param.dtype(), param.device()));
  Tensor& eta_t = state.buffers.at("eta");
  Tensor& mu_t = state.buffers.at("mu");
  Tensor& ax = detail::buffer(state, "ax", param);
  const double step = static_cast<double>(++state.step);
  if (wd != 0.0) g = add(g, param, wd);
  const double eta = eta_t.item(), mu = mu_t.item();
  mul_(param, 1.0 - lambd * eta);
  add_(param, g, -eta);
  if (mu != 1.0) {
    add_(ax, mul(sub(param, ax), mu));
  } else {
    copy_(ax, param);
  }
  fill_(eta_t, lr / std::pow(1.0 + lambd * lr * step, alpha));
  fill_(mu_t, 1.0 / std::max(1.0, step - t0));
}

}  // namespace st::optim
