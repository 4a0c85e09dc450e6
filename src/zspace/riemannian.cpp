#include "spiraltorch/zspace/riemannian.h"

#include <cmath>

#include "optim/kernels.h"
#include "spiraltorch/geometry/poincare.h"

namespace st::optim {

namespace {

namespace g = st::geometry;

bool on_ball(const Tensor& p) { return p.manifold_curvature() < 0.0; }

// Moves a ball parameter to exp_x(-step) (kept strictly inside the ball) and carries the
// tangent vectors in `transported` along; an ordinary parameter moves to x - step.
void move(Tensor& param, const Tensor& step, std::initializer_list<Tensor*> transported) {
  const double c = param.manifold_curvature();
  if (c == 0.0) {
    copy_(param, sub(param, step));
    return;
  }
  const Tensor next = g::clip_to_ball(g::expmap(param, neg(step), c), c);
  for (Tensor* v : transported) *v = g::parallel_transport(param, next, *v, c);
  copy_(param, next);
}

}  // namespace

RiemannianSGD::RiemannianSGD(std::vector<ParamGroup> groups, double lr, double momentum, double dampening,
                             double weight_decay, bool nesterov)
    : Optimizer({}, {{"lr", lr},
                     {"momentum", momentum},
                     {"dampening", dampening},
                     {"weight_decay", weight_decay},
                     {"nesterov", nesterov ? 1.0 : 0.0}}) {
  add_param_groups(std::move(groups));
}

void RiemannianSGD::update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) {
  const double lr = group.get("lr"), momentum = group.get("momentum"), dampening = group.get("dampening"),
               wd = group.get("weight_decay");
  const bool nesterov = group.flag("nesterov");
  const double c = param.manifold_curvature();
  Tensor d = wd != 0.0 ? add(grad, mul(param, wd)) : grad;
  if (c < 0.0) d = g::egrad2rgrad(param, d, c);
  ++state.step;
  if (momentum == 0.0) {
    move(param, mul(d, lr), {});
    return;
  }
  const bool first = state.buffers.find("momentum_buffer") == state.buffers.end();
  Tensor buf = first ? d.clone() : add(mul(state.buffers.at("momentum_buffer"), momentum), mul(d, 1.0 - dampening));
  const Tensor direction = nesterov ? add(d, mul(buf, momentum)) : buf;
  move(param, mul(direction, lr), {&buf});
  state.buffers["momentum_buffer"] = buf;
}

RiemannianAdam::RiemannianAdam(std::vector<ParamGroup> groups, double lr, double beta1, double beta2, double eps,
                               double weight_decay, bool amsgrad)
    : Optimizer({}, {{"lr", lr},
                     {"beta1", beta1},
                     {"beta2", beta2},
                     {"eps", eps},
                     {"weight_decay", weight_decay},
                     {"amsgrad", amsgrad ? 1.0 : 0.0}}) {
  add_param_groups(std::move(groups));
}

Shape RiemannianAdam::buffer_shape(const Tensor& param, const std::string& buffer) const {
  Shape s = param.shape();
  if (on_ball(param) && buffer != "exp_avg" && !s.empty()) s.back() = 1;  // one second moment per point
  return s;
}

void RiemannianAdam::update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) {
  const double lr = group.get("lr"), beta1 = group.get("beta1"), beta2 = group.get("beta2"), eps = group.get("eps"),
               wd = group.get("weight_decay");
  const bool amsgrad = group.flag("amsgrad");
  const double c = param.manifold_curvature();
  Tensor d = wd != 0.0 ? add(grad, mul(param, wd)) : grad;
  // On the ball the adaptive scale is per point (each row is one factor of a product of
  // balls, as in the paper): the second moment holds lambda_x^2 |g_R|^2, one value per row.
  Tensor sq = square(d);
  Tensor moment_like = param;
  if (c < 0.0) {
    d = g::egrad2rgrad(param, d, c);
    sq = mul(sum(square(d), {-1}, true), square(g::conformal_factor(param, c)));
    moment_like = sq;
  }
  const int64_t step = ++state.step;
  Tensor m = add(mul(detail::buffer(state, "exp_avg", param), beta1), mul(d, 1.0 - beta1));
  Tensor v = add(mul(detail::buffer(state, "exp_avg_sq", moment_like), beta2), mul(sq, 1.0 - beta2));
  Tensor vmax;
  if (amsgrad) vmax = maximum(detail::buffer(state, "max_exp_avg_sq", moment_like), v);
  const double bc1 = 1.0 - std::pow(beta1, static_cast<double>(step));
  const double bc2 = 1.0 - std::pow(beta2, static_cast<double>(step));
  const Tensor denom = add(sqrt(div(amsgrad ? vmax : v, bc2)), eps);
  move(param, mul(div(m, denom), lr / bc1), {&m});
  state.buffers["exp_avg"] = m;
  state.buffers["exp_avg_sq"] = v;
  if (amsgrad) state.buffers["max_exp_avg_sq"] = vmax;
}

}  // namespace st::optim
