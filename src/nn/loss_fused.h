#pragma once
// The one way a loss takes a backend's fused kernel ("fused kernel with composite fallback", as
// in MLX's fast.cpp): the loss is defined by its composite, differentiable ops that give its value
// and, through autograd, its gradient on every device. A backend may offer a fused kernel
// (Backend::pointwise_loss) computing the same value and local derivatives in one pass; the op
// then records one node, g * dl/dp and g * dl/dt. Where the backend declines (CUDA and wgpu
// today, half dtypes everywhere) the composite runs. Tests run both (FusedLossesOff) and compare.
#include <functional>

#include "backend/backend.h"
#include "spiraltorch/tensor.h"

namespace st::nn::loss_detail {

// The loss `kind` of (pred, target[, aux]) per element, already checked by the caller: the
// backend's fused kernel where it has one, else composite(). p0, p1 as in Backend::pointwise_loss.
Tensor fused_or_composite(backend::PointwiseLoss kind, const char* node, const Tensor& pred, const Tensor& target,
                          const Tensor& aux, double p0, double p1, const std::function<Tensor()>& composite);

// False while a FusedLossesOff lives on this thread.
bool fused_losses_enabled();

// While alive, this thread's losses run their composites even where a fused kernel exists, so
// tests can compare the two definitions.
class FusedLossesOff {
 public:
  FusedLossesOff();
  ~FusedLossesOff();
  FusedLossesOff(const FusedLossesOff&) = delete;
  FusedLossesOff& operator=(const FusedLossesOff&) = delete;

 private:
  bool prev_;
};

}  // namespace st::nn::loss_detail
