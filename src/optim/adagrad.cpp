#include "spiraltorch/optim/adagrad.h"

#include <cmath>

#include "optim/kernels.h"

namespace st::optim {

Adagrad::Adagrad(std::vector<ParamGroup> groups, double lr, double lr_decay, double weight_decay,
                 double initial_accumulator_value, double eps, bool maximize)
    : Optimizer({}, {{"lr", lr}, {"lr_decay", lr_decay}, {"weight_decay", weight_decay},
                     {"initial_accumulator_value", initial_accumulator_value}, {"eps", eps},
                     {"maximize", maximize ? 1.0 : 0.0}}) {
  validate(defaults());
  for (auto& g : groups) add_param_group(std::move(g));
}

void Adagrad::validate(const Options& o) const {
  Optimizer::validate(o);
  if (!(o.at("lr_decay") >= 0.0)) throw ValueError("Adagrad: invalid lr_decay value " + std::to_string(o.at("lr_decay")));
  if (!(o.at("eps") >= 0.0)) throw ValueError("Adagrad: invalid epsilon value " + std::to_string(o.at("eps")));
  if (!(o.at("initial_accumulator_value") >= 0.0)) throw ValueError("Adagrad: invalid initial_accumulator_value");
}

void Adagrad::update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) {
  const double lr = group.get("lr"), lr_decay = group.get("lr_decay"), wd = group.get("weight_decay"),
               eps = group.get("eps");
  const bool maximize = group.flag("maximize");
  Tensor acc = detail::buffer(state, "sum", param, group.get("initial_accumulator_value"));
  const int64_t step = ++state.step;
  const double clr = lr / (1.0 + static_cast<double>(step - 1) * lr_decay);
  if (param.device().type != DeviceType::CPU) {  // device path: composite ops
    NoGradGuard ng;
    Tensor gi = maximize ? neg(grad) : grad;
    if (wd != 0.0) gi = add(gi, mul(param, wd));
    copy_(acc, add(acc, square(gi)));
    copy_(param, add(param, mul(div(gi, add(sqrt(acc), eps)), -clr)));
    return;
  }
  const int64_t n = param.numel();
  detail::dispatch(param, [&](auto tag) {
    using T = decltype(tag);
    T* p = param.data<T>();
    const T* g = grad.data<T>();
    T* s = acc.data<T>();
    const T wd_ = static_cast<T>(wd), eps_ = static_cast<T>(eps), neg_clr = static_cast<T>(-clr);
#pragma omp parallel for if (n > detail::kParallelMin)
    for (int64_t i = 0; i < n; ++i) {
      T gi = maximize ? -g[i] : g[i];
      if (wd != 0.0) gi = gi + wd_ * p[i];
      const T si = s[i] + gi * gi;
      s[i] = si;
      p[i] = p[i] + neg_clr * (gi / (std::sqrt(si) + eps_));
    }
  });
}

}  // namespace st::optim
