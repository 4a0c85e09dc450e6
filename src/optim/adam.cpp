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
  if (param.device().type != DeviceType::CPU) {  // device path: the backend's fused multi-tensor update
    const backend::Backend::AdamArgs args{step_size, beta1, beta2, eps, wd, 1.0 - lr * wd, bc2_sqrt, amsgrad, maximize, decoupled};
    update_queue().adam.push(param.device(), param.dtype(), args, {param, grad.contiguous(), m, v, vmax});
    return;
  }
  const int64_t n = param.numel();
  detail::dispatch(param, [&](auto tag) {
    using T = decltype(tag);
    T* p = param.data<T>();
    const T* g = grad.data<T>();
    T* mp = m.data<T>();
    T* vp = v.data<T>();
    T* vm = amsgrad ? vmax.data<T>() : nullptr;
    const T w1 = static_cast<T>(1.0 - beta1), b2 = static_cast<T>(beta2), w2 = static_cast<T>(1.0 - beta2);
    const T wd_ = static_cast<T>(wd), decay = static_cast<T>(1.0 - lr * wd), eps_ = static_cast<T>(eps);
    const T neg_step = static_cast<T>(-step_size), bcs = static_cast<T>(bc2_sqrt);
#pragma omp parallel for if (n > detail::kParallelMin)
    for (int64_t i = 0; i < n; ++i) {
      T gi = maximize ? -g[i] : g[i];
      T pi = p[i];
      if (decoupled) {
        pi = pi * decay;
      } else if (wd != 0.0) {
        gi = gi + wd_ * pi;
      }
      const T mi = detail::lerp(mp[i], gi, w1);
      const T vi = vp[i] * b2 + w2 * gi * gi;
      mp[i] = mi;
      vp[i] = vi;
      T denom;
      if (vm) {
        const T mx = std::max(vm[i], vi);
        vm[i] = mx;
        denom = std::sqrt(mx) / bcs + eps_;
      } else {
        denom = std::sqrt(vi) / bcs + eps_;
      }
      p[i] = pi + neg_step * (mi / denom);
    }
  });
}

}  // namespace st::optim
