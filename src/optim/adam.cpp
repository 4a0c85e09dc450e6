#include "spiraltorch/optim/adam.h"

#include <cmath>

#include "optim/kernels.h"
#include "optim/update_queue.h"
#include "backend/capture.h"

namespace st::optim {

Adam::Adam(std::vector<ParamGroup> groups, double lr, double beta1, double beta2, double eps, double weight_decay,
           bool amsgrad, bool maximize, bool decoupled_weight_decay)
    : Optimizer({}, {{"lr", lr}, {"beta1", beta1}, {"beta2", beta2}, {"eps", eps}, {"weight_decay", weight_decay},
                     {"amsgrad", amsgrad ? 1.0 : 0.0}, {"maximize", maximize ? 1.0 : 0.0},
                     {"decoupled_weight_decay", decoupled_weight_decay ? 1.0 : 0.0}}) {
  validate(defaults());
  for (auto& g : groups) add_param_group(std::move(g));
}

void Adam::validate(const Options& o) const {
  Optimizer::validate(o);
  detail::check_adam_options(o, type_name());
}

void Adam::update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) {
  if (st::detail::capturing(param.device())) {
    throw SpiralError(type_name() + ".step: cannot be captured into a CUDA graph: its bias correction depends on "
                      "the step count (" + std::to_string(state.step + 1) + " next), which every replay would "
                      "repeat; capture the forward and backward only, or use SGD in the captured step");
  }
  const double lr = group.get("lr"), beta1 = group.get("beta1"), beta2 = group.get("beta2"), eps = group.get("eps"),
               wd = group.get("weight_decay");
  const bool amsgrad = group.flag("amsgrad"), maximize = group.flag("maximize"),
             decoupled = group.flag("decoupled_weight_decay");
  Tensor m = detail::buffer(state, "exp_avg", param);
  Tensor v = detail::buffer(state, "exp_avg_sq", param);
  Tensor vmax = amsgrad ? detail::buffer(state, "max_exp_avg_sq", param) : Tensor();
  const int64_t step = ++state.step;
  const double bc1 = 1.0 - std::pow(beta1, static_cast<double>(step));
  const double bc2 = 1.0 - std::pow(beta2, static_cast<double>(step));
  const double step_size = lr / bc1;
  const double bc2_sqrt = std::sqrt(bc2);
  // Every device, the CPU included, runs the backend's multi-tensor update: the step's slots are
  // queued here and launched together when the optimizer flushes.
  const backend::Backend::AdamArgs args{
      step_size, beta1, beta2, eps, wd, 1.0 - lr * wd, bc2_sqrt, amsgrad, maximize, decoupled};
  update_queue().adam.push(param.device(), param.dtype(), args, {param, grad.contiguous(), m, v, vmax});
}

}  // namespace st::optim
