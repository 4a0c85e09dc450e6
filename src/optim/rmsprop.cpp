#include "spiraltorch/optim/rmsprop.h"

#include <cmath>

#include "optim/kernels.h"

namespace st::optim {

RMSprop::RMSprop(std::vector<ParamGroup> groups, double lr, double alpha, double eps, double weight_decay,
                 double momentum, bool centered, bool maximize)
    : Optimizer({}, {{"lr", lr}, {"alpha", alpha}, {"eps", eps}, {"weight_decay", weight_decay},
                     {"momentum", momentum}, {"centered", centered ? 1.0 : 0.0}, {"maximize", maximize ? 1.0 : 0.0}}) {
  validate(defaults());
  for (auto& g : groups) add_param_group(std::move(g));
}

void RMSprop::validate(const Options& o) const {
  Optimizer::validate(o);
  if (!(o.at("eps") >= 0.0)) throw ValueError("RMSprop: invalid epsilon value " + std::to_string(o.at("eps")));
  if (!(o.at("momentum") >= 0.0)) throw ValueError("RMSprop: invalid momentum value " + std::to_string(o.at("momentum")));
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
  if (param.device().type != DeviceType::CPU) {  // device path: composite ops
    NoGradGuard ng;
    Tensor gi = maximize ? neg(grad) : grad;
    if (wd != 0.0) gi = add(gi, mul(param, wd));
    copy_(sq, add(mul(sq, alpha), mul(square(gi), 1.0 - alpha)));
    Tensor avg;
    if (centered) {
      copy_(ga, add(ga, mul(sub(gi, ga), 1.0 - alpha)));
      avg = sqrt(sub(sq, square(ga)));
    } else {
      avg = sqrt(sq);
    }
    avg = add(avg, eps);
    if (buf.defined()) {
      copy_(buf, add(mul(buf, momentum), div(gi, avg)));
      copy_(param, add(param, mul(buf, -lr)));
    } else {
      copy_(param, add(param, mul(div(gi, avg), -lr)));
    }
    return;
  }
  const int64_t n = param.numel();
  detail::dispatch(param, [&](auto tag) {
    using T = decltype(tag);
    T* p = param.data<T>();
    const T* g = grad.data<T>();
    T* sp = sq.data<T>();
    T* bp = buf.defined() ? buf.data<T>() : nullptr;
    T* gap = ga.defined() ? ga.data<T>() : nullptr;
    const T a = static_cast<T>(alpha), w = static_cast<T>(1.0 - alpha), wd_ = static_cast<T>(wd),
            eps_ = static_cast<T>(eps), mom = static_cast<T>(momentum), neg_lr = static_cast<T>(-lr);
#pragma omp parallel for if (n > detail::kParallelMin)
    for (int64_t i = 0; i < n; ++i) {
      T gi = maximize ? -g[i] : g[i];
      if (wd != 0.0) gi = gi + wd_ * p[i];
      const T si = sp[i] * a + w * gi * gi;
      sp[i] = si;
      T avg;
      if (gap) {
        const T gai = detail::lerp(gap[i], gi, w);
        gap[i] = gai;
        avg = std::sqrt(si + T(-1) * gai * gai);
      } else {
        avg = std::sqrt(si);
      }
      avg = avg + eps_;
      if (bp) {
        const T bi = bp[i] * mom + gi / avg;
        bp[i] = bi;
        p[i] = p[i] + neg_lr * bi;
      } else {
        p[i] = p[i] + neg_lr * (gi / avg);
      }
    }
  });
}

}  // namespace st::optim
