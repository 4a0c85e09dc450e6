#pragma once
// Poincare-ball geometry of curvature c < 0 (k = |c|), row-wise: each row of a 2-d
// tensor (each vector along the last dim) is a point of B_k = {x : k|x|^2 < 1}.
// Formulas: Ganea et al. 2018 (Mobius addition, exp/log maps), Nickel & Kiela 2017 (RSGD).
#include "spiraltorch/tensor.h"

namespace st::geometry {

// x (+) y, Mobius addition.
Tensor mobius_add(const Tensor& x, const Tensor& y, double curvature);
// exp_0(v) = tanh(sqrt(k)|v|) v / (sqrt(k)|v|): tangent vectors at the origin into the ball.
Tensor expmap0(const Tensor& v, double curvature);
// log_0(y), the inverse of expmap0.
Tensor logmap0(const Tensor& y, double curvature);
// exp_x(v) = x (+) tanh(sqrt(k) lambda_x |v| / 2) v / (sqrt(k)|v|), lambda_x = 2 / (1 - k|x|^2).
Tensor expmap(const Tensor& x, const Tensor& v, double curvature);
// log_x(y), the inverse of expmap at x.
Tensor logmap(const Tensor& x, const Tensor& y, double curvature);
// Geodesic distance d(x, y) = (2/sqrt(k)) artanh(sqrt(k) |(-x) (+) y|), one value per row.
Tensor poincare_distance(const Tensor& x, const Tensor& y, double curvature);
// Scales rows with norm above (1 - eps)/sqrt(k) back onto that radius (idempotent).
Tensor clip_to_ball(const Tensor& x, double curvature, double eps = 1e-5);
// The conformal factor lambda_x = 2 / (1 - k|x|^2), one value per row (kept as a dim).
Tensor conformal_factor(const Tensor& x, double curvature);
// The Riemannian gradient of a function with Euclidean gradient g at x: g / lambda_x^2.
Tensor egrad2rgrad(const Tensor& x, const Tensor& g, double curvature);
// gyr[a, b] w, the gyration (a linear isometry of R^n) with
// a (+) (b (+) w) = (a (+) b) (+) gyr[a, b] w; closed form, so w may be any vector.
Tensor gyration(const Tensor& a, const Tensor& b, const Tensor& w, double curvature);
// Parallel transport of the tangent vector v from x to y along the geodesic:
// gyr[y, -x] v * lambda_x / lambda_y (preserves the Riemannian norm).
Tensor parallel_transport(const Tensor& x, const Tensor& y, const Tensor& v, double curvature);
// One Riemannian SGD step: x <- clip(exp_x(-lr (1 - k|x|^2)^2 g)), with the metric
// normalised to the identity at the origin (one step from 0 is exp_0(-lr g)).
Tensor rsgd_step(const Tensor& x, const Tensor& euclidean_grad, double curvature, double lr);

}  // namespace st::geometry
