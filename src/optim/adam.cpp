#include "spiraltorch/optim/adam.h"

#include <cmath>

#include "optim/kernels.h"
#include "optim/update_queue.h"
#include "backend/capture.h"

namespace st::optim {

Adam::Adam(std::vector<ParamGroup> groups, double lr, double beta1, double beta2, double eps, double weight_decay,
           bool amsgrad, bool maximize, bool decoupled_weight_decay, bool capturable)
    : Optimizer({}, {{"lr", lr},
                     {"beta1", beta1},
                     {"beta2", beta2},
                     {"eps", eps},
                     {"weight_decay", weight_decay},
                     {"amsgrad", amsgrad ? 1.0 : 0.0},
                     {"maximize", maximize ? 1.0 : 0.0},
                     {"decoupled_weight_decay", decoupled_weight_decay ? 1.0 : 0.0},
                     {"capturable", capturable ? 1.0 : 0.0}}) {
  add_param_groups(std::move(groups));
}

Shape Adam::buffer_shape(const Tensor& param, const std::string& buffer) const {
  return buffer == "device_step" ? Shape{} : param.shape();
}

namespace {

// A state dict saved before the option existed has no "capturable" key: plain Adam.
bool capturable_group(const ParamGroup& group) {
  const auto it = group.options.find("capturable");
  return it != group.options.end() && it->second != 0.0;
}

}  // namespace

bool Adam::updates_half(const Tensor& param) const { return backend::backend_for(param.device()).native_half_adam(); }

void Adam::update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) {
  const bool capturable = capturable_group(group);
  if (!capturable && st::detail::capturing(param.device())) {
    throw SpiralError(type_name() +
                      ".step: cannot be captured into a CUDA graph: its bias correction depends on "
                      "the step count (" +
                      std::to_string(state.step + 1) +
                      " next), which every replay would "
                      "repeat; construct it with capturable=True (the step count then lives on the device)");
  }
  if (capturable && !backend::backend_for(param.device()).has_device_step_adam()) {
    throw SpiralError(type_name() + "(capturable=True): the " + param.device().str() +
                      " backend keeps no device-side step count; parameters must be on a CUDA device or the CPU");
  }
  const double lr = group.get("lr"), beta1 = group.get("beta1"), beta2 = group.get("beta2"), eps = group.get("eps"),
               wd = group.get("weight_decay");
  const bool amsgrad = group.flag("amsgrad"), maximize = group.flag("maximize"),
             decoupled = group.flag("decoupled_weight_decay");
  Tensor m = detail::buffer(state, "exp_avg", param);
  Tensor v = detail::buffer(state, "exp_avg_sq", param);
  Tensor vmax = amsgrad ? detail::buffer(state, "max_exp_avg_sq", param) : Tensor();
  // Every device, the CPU included, runs the backend's multi-tensor update: the step's slots are
  // queued here and launched together when the optimizer flushes.
  if (capturable) {
    // The count continues from the host's (a state loaded from a plain Adam); the kernel increments it.
    auto it = state.buffers.find("device_step");
    const Dtype step_dtype = compute_float(param.dtype());  // float32 beside half parameters
    if (it == state.buffers.end() || it->second.dtype() != step_dtype || it->second.device() != param.device()) {
      const double from = it == state.buffers.end() ? static_cast<double>(state.step) : it->second.item();
      state.buffers.insert_or_assign("device_step", scalar_tensor(from, step_dtype, param.device()));
    }
    backend::Backend::AdamArgs args{lr, beta1, beta2, eps, wd, 1.0 - lr * wd, 0.0, amsgrad, maximize, decoupled};
    args.device_step = true;
    update_queue().adam.push(param.device(), param.dtype(), args,
                             {param, grad.contiguous(), m, v, vmax, state.buffers.at("device_step")});
    return;
  }
  const int64_t step = ++state.step;
  const double bc1 = 1.0 - std::pow(beta1, static_cast<double>(step));
  const double bc2 = 1.0 - std::pow(beta2, static_cast<double>(step));
  const double step_size = lr / bc1;
  const double bc2_sqrt = std::sqrt(bc2);
  const backend::Backend::AdamArgs args{step_size,     beta1,    beta2,   eps,      wd,
                                        1.0 - lr * wd, bc2_sqrt, amsgrad, maximize, decoupled};
  update_queue().adam.push(param.device(), param.dtype(), args, {param, grad.contiguous(), m, v, vmax, Tensor()});
}

}  // namespace st::optim
