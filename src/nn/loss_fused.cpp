#include "nn/loss_fused.h"

#include "ops/common.h"

namespace st::nn::loss_detail {

namespace {

thread_local bool fused_off = false;

// A detached, contiguous copy-or-view of `x` in `dtype`, broadcast to `shape` when given.
Tensor raw(const Tensor& x, Dtype dtype, const Shape* shape = nullptr) {
  Tensor r = st::detail::cast_raw(x.detach(), dtype);
  if (shape && r.shape() != *shape) r = st::detail::expand_view(r, *shape);
  return r.contiguous();
}

Tensor grad_like(const Tensor& g, const Tensor& input) {
  return st::detail::sum_to(g, input.shape()).to(input.dtype());
}

}  // namespace

bool fused_losses_enabled() { return !fused_off; }

FusedLossesOff::FusedLossesOff() : prev_(fused_off) { fused_off = true; }
FusedLossesOff::~FusedLossesOff() { fused_off = prev_; }

Tensor fused_or_composite(backend::PointwiseLoss kind, const char* node, const Tensor& pred, const Tensor& target,
                          const Tensor& aux, double p0, double p1, const std::function<Tensor()>& composite) {
  const Dtype out_dtype = float_result(promote_types(pred.dtype(), target.dtype()));
  if (fused_off || (out_dtype != Dtype::Float32 && out_dtype != Dtype::Float64)) return composite();
  const Shape& shape = pred.shape();
  const Tensor p = raw(pred, out_dtype), t = raw(target, out_dtype);
  const Tensor a = aux.defined() ? raw(aux, out_dtype, &shape) : Tensor();
  const bool want_dp = pred.requires_grad() && grad_enabled();
  const bool want_dt = target.requires_grad() && grad_enabled();
  Tensor out = Tensor::empty(shape, out_dtype, pred.device());
  Tensor dp = want_dp ? Tensor::empty(shape, out_dtype, pred.device()) : Tensor();
  Tensor dt = want_dt ? Tensor::empty(shape, out_dtype, pred.device()) : Tensor();
  if (!st::detail::backend_of(pred).pointwise_loss(kind, p, t, a, p0, p1, out, dp, dt)) return composite();
  if (want_dp || want_dt) {
    record(out, node, {pred, target}, [pred, target, dp, dt](const Tensor& g) -> std::vector<Tensor> {
      return {dp.defined() ? grad_like(mul(g, dp), pred) : Tensor(),
              dt.defined() ? grad_like(mul(g, dt), target) : Tensor()};
    });
  }
  return out;
}

}  // namespace st::nn::loss_detail
