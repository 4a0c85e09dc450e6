#include "spiraltorch/optim/nadam.h"

#include <cmath>

#include "optim/kernels.h"

namespace st::optim {

NAdam::NAdam(std::vector<ParamGroup> groups, double lr, double beta1, double beta2, double eps, double weight_decay,
             double momentum_decay, bool decoupled_weight_decay, bool maximize)
    : Optimizer({}, {{"lr", lr},
                     {"beta1", beta1},
                     {"beta2", beta2},
                     {"eps", eps},
                     {"weight_decay", weight_decay},
                     {"momentum_decay", momentum_decay},
                     {"decoupled_weight_decay", decoupled_weight_decay ? 1.0 : 0.0},
                     {"maximize", maximize ? 1.0 : 0.0}}) {
  add_param_groups(std::move(groups));
}

void NAdam::validate(const Options& o) const {
  Optimizer::validate(o);
  if (!(o.at("momentum_decay") >= 0.0)) {
    throw ValueError("NAdam: invalid momentum_decay value " + std::to_string(o.at("momentum_decay")));
  }
}

Shape NAdam::buffer_shape(const Tensor& param, const std::string& buffer) const {
  return buffer == "mu_product" ? Shape{} : param.shape();
}

void NAdam::update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) {
  NoGradGuard ng;
  const double lr = group.get("lr"), beta1 = group.get("beta1"), beta2 = group.get("beta2"), eps = group.get("eps"),
               wd = group.get("weight_decay"), momentum_decay = group.get("momentum_decay");
  Tensor g = group.flag("maximize") ? neg(grad) : grad;
  Tensor& m = detail::buffer(state, "exp_avg", param);
  Tensor& v = detail::buffer(state, "exp_avg_sq", param);
  auto it = state.buffers.find("mu_product");
  if (it == state.buffers.end()) {
    it = state.buffers.emplace("mu_product", scalar_tensor(1.0, param.dtype(), param.device())).first;
  }
  Tensor& mu_product_t = it->second;
  const double step = static_cast<double>(++state.step);
  const double bc2 = 1.0 - std::pow(beta2, step);
  if (wd != 0.0) {
    if (group.flag("decoupled_weight_decay")) {
      mul_(param, 1.0 - lr * wd);
    } else {
      g = add(g, param, wd);
    }
  }
  const double mu = beta1 * (1.0 - 0.5 * std::pow(0.96, step * momentum_decay));
  const double mu_next = beta1 * (1.0 - 0.5 * std::pow(0.96, (step + 1.0) * momentum_decay));
  // The product of the schedule lives in the state like torch's (a 0-d tensor), read on the host.
  const double mu_product = mu_product_t.item() * mu;
  fill_(mu_product_t, mu_product);
  add_(m, sub(g, m), 1.0 - beta1);
  copy_(v, add(mul(v, beta2), square(g), 1.0 - beta2));
  const Tensor denom = add(sqrt(div(v, bc2)), eps);
  const double mu_product_next = mu_product * mu_next;
  add_(param, div(g, denom), -lr * (1.0 - mu) / (1.0 - mu_product));
  add_(param, div(m, denom), (-lr * mu_next) / (1.0 - mu_product_next));
}

}  // namespace st::optim
