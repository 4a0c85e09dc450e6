#pragma once
// Riemannian SGD and Adam (Becigneul & Ganea 2019, "Riemannian Adaptive Optimization
// Methods"). Parameters tagged with Tensor::manifold_curvature() < 0 hold one point of the
// Poincare ball per row: they receive the Riemannian gradient, step along the geodesic
// (exp map), and their momentum is parallel-transported to the new point. Every other
// parameter gets the ordinary SGD / Adam update.
#include "spiraltorch/optim/optimizer.h"

namespace st::optim {

// Options lr, momentum, dampening, weight_decay, nesterov.
class RiemannianSGD : public Optimizer {
 public:
  explicit RiemannianSGD(std::vector<ParamGroup> groups, double lr = 1e-3, double momentum = 0.0,
                         double dampening = 0.0, double weight_decay = 0.0, bool nesterov = false);
  std::string type_name() const override { return "RiemannianSGD"; }

 protected:
  void update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) override;
};

// Options lr, beta1, beta2, eps, weight_decay, amsgrad. The second moment of a ball
// parameter accumulates the squared Riemannian norm of each row's gradient
// (lambda_x^2 |g_R|^2): every row is one factor of a product of balls.
class RiemannianAdam : public Optimizer {
 public:
  explicit RiemannianAdam(std::vector<ParamGroup> groups, double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999,
                          double eps = 1e-8, double weight_decay = 0.0, bool amsgrad = false);
  std::string type_name() const override { return "RiemannianAdam"; }

 protected:
  Shape buffer_shape(const Tensor& param, const std::string& buffer) const override;
  void update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) override;
};

}  // namespace st::optim
