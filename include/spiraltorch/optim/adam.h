#pragma once
#include "spiraltorch/optim/optimizer.h"

namespace st::optim {

// torch.optim.Adam: options lr, beta1, beta2, eps, weight_decay, amsgrad, maximize, capturable.
// decoupled_weight_decay (AdamW) multiplies the parameter by (1 - lr * weight_decay) first.
// capturable (torch's option of that name): each parameter's step count lives on its device
// (state buffer "device_step", a scalar of the update's dtype, started from the host count
// `step`) and the update kernel itself increments it and derives the bias correction from it, so
// step() can be captured into a CUDA graph and every replay is a true next step. Parameters must
// be on a CUDA device or the CPU. The host count `step` then stays where it was.
class Adam : public Optimizer {
 public:
  explicit Adam(std::vector<ParamGroup> groups, double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999,
                double eps = 1e-8, double weight_decay = 0.0, bool amsgrad = false, bool maximize = false,
                bool decoupled_weight_decay = false, bool capturable = false);
  std::string type_name() const override { return "Adam"; }

 protected:
  void update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) override;
  bool device_updates_queued() const override { return true; }
  bool updates_half(const Tensor& param) const override;
  Shape buffer_shape(const Tensor& param, const std::string& buffer) const override;
};

// torch.optim.AdamW: Adam with decoupled weight decay (default 1e-2).
class AdamW : public Adam {
 public:
  explicit AdamW(std::vector<ParamGroup> groups, double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999,
                 double eps = 1e-8, double weight_decay = 1e-2, bool amsgrad = false, bool maximize = false,
                 bool capturable = false)
      : Adam(std::move(groups), lr, beta1, beta2, eps, weight_decay, amsgrad, maximize, true, capturable) {}
  std::string type_name() const override { return "AdamW"; }
};

}  // namespace st::optim
