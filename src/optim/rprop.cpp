#include "spiraltorch/optim/rprop.h"

#include <cmath>

#include "optim/kernels.h"

namespace st::optim {

Rprop::Rprop(std::vector<ParamGroup> groups, double lr, double eta_minus, double eta_plus, double step_size_min,
             double step_size_max, bool maximize)
    : Optimizer({}, {{"lr", lr},
                     {"eta_minus", eta_minus},
                     {"eta_plus", eta_plus},
                     {"step_size_min", step_size_min},
                     {"step_size_max", step_size_max},
                     {"maximize", maximize ? 1.0 : 0.0}}) {
  add_param_groups(std::move(groups));
}

void Rprop::validate(const Options& o) const {
  Optimizer::validate(o);
  const double em = o.at("eta_minus"), ep = o.at("eta_plus");
  if (!(0.0 < em && em < 1.0 && 1.0 < ep)) {
    throw ValueError("Rprop: invalid eta values (" + std::to_string(em) + ", " + std::to_string(ep) +
                     "); need 0 < eta_minus < 1 < eta_plus");
  }
  const double lo = o.at("step_size_min"), hi = o.at("step_size_max");
  if (!(lo >= 0.0 && lo <= hi)) {
    throw ValueError("Rprop: invalid step_sizes (" + std::to_string(lo) + ", " + std::to_string(hi) +
                     "); need 0 <= min <= max");
  }
}

void Rprop::update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) {
  NoGradGuard ng;
  const double em = group.get("eta_minus"), ep = group.get("eta_plus");
  Tensor g = group.flag("maximize") ? neg(grad) : grad;
  Tensor& prev = detail::buffer(state, "prev", param);
  Tensor& step_size = detail::buffer(state, "step_size", param, group.get("lr"));
  ++state.step;
  const Tensor s = sign(mul(g, prev));
  const Tensor pos = gt(s, zeros_like(s)), negative = lt(s, zeros_like(s));
  const Tensor factor = where(pos, full_like(s, ep), where(negative, full_like(s, em), ones_like(s)));
  copy_(step_size, clamp(mul(step_size, factor), group.get("step_size_min"), group.get("step_size_max")));
  // Where the sign flipped the element skips this update and forgets its gradient.
  const Tensor kept = masked_fill(g, negative, 0.0);
  add_(param, mul(sign(kept), step_size), -1.0);
  copy_(prev, kept);
}

}  // namespace st::optim
