#include "spiraltorch/geometry/poincare.h"

#include <cmath>

#include "spiraltorch/autograd.h"
#include "spiraltorch/ops.h"

namespace st::geometry {

namespace {

double check_curvature(double c, const char* op) {
  if (!(c < 0) || !std::isfinite(c)) {
    throw ValueError(std::string(op) + ": curvature must be negative and finite, got " + std::to_string(c));
  }
  return -c;
}

Tensor sq_norm(const Tensor& x) { return sum(mul(x, x), {-1}, true); }

Tensor row_norm(const Tensor& x) { return clamp(sqrt(sq_norm(x)), Scalar(1e-15), std::nullopt); }

Tensor artanh_clamped(const Tensor& x) { return atanh(clamp(x, Scalar(-1 + 1e-15), Scalar(1 - 1e-15))); }

void check_pair(const Tensor& x, const Tensor& y, const char* op) {
  if (x.dim() == 0 || y.dim() == 0 || x.shape().back() != y.shape().back()) {
    throw ShapeError(std::string(op) + ": point shapes " + shape_str(x.shape()) + " and " + shape_str(y.shape()) +
                     " do not share a last dimension");
  }
}

}  // namespace

Tensor mobius_add(const Tensor& x, const Tensor& y, double c) {
  const double k = check_curvature(c, "mobius_add");
  check_pair(x, y, "mobius_add");
  const Tensor xy = sum(mul(x, y), {-1}, true);
  const Tensor x2 = sq_norm(x), y2 = sq_norm(y);
  const Tensor num = add(mul(add(add(mul(xy, 2 * k), mul(y2, k)), 1.0), x), mul(rsub(mul(x2, k), 1.0), y));
  const Tensor den = add(add(mul(xy, 2 * k), mul(mul(x2, y2), k * k)), 1.0);
  return div(num, den);
}

Tensor expmap0(const Tensor& v, double c) {
  const double sk = std::sqrt(check_curvature(c, "expmap0"));
  const Tensor n = row_norm(v);
  return mul(v, div(tanh(mul(n, sk)), mul(n, sk)));
}

Tensor logmap0(const Tensor& y, double c) {
  const double sk = std::sqrt(check_curvature(c, "logmap0"));
  const Tensor n = row_norm(y);
  return mul(y, div(artanh_clamped(mul(n, sk)), mul(n, sk)));
}

Tensor expmap(const Tensor& x, const Tensor& v, double c) {
  const double k = check_curvature(c, "expmap");
  check_pair(x, v, "expmap");
  const double sk = std::sqrt(k);
  const Tensor lambda = div(full_like(sq_norm(x), 2.0), rsub(mul(sq_norm(x), k), 1.0));
  const Tensor n = row_norm(v);
  const Tensor step = mul(v, div(tanh(mul(mul(lambda, n), sk / 2)), mul(n, sk)));
  return mobius_add(x, step, c);
}

Tensor logmap(const Tensor& x, const Tensor& y, double c) {
  const double k = check_curvature(c, "logmap");
  check_pair(x, y, "logmap");
  const double sk = std::sqrt(k);
  const Tensor u = mobius_add(neg(x), y, c);
  const Tensor lambda = div(full_like(sq_norm(x), 2.0), rsub(mul(sq_norm(x), k), 1.0));
  const Tensor n = row_norm(u);
  return mul(u, div(mul(artanh_clamped(mul(n, sk)), 2.0 / sk), mul(lambda, n)));
}

Tensor poincare_distance(const Tensor& x, const Tensor& y, double c) {
  const double sk = std::sqrt(check_curvature(c, "poincare_distance"));
  check_pair(x, y, "poincare_distance");
  const Tensor n = sqrt(sum(square(mobius_add(neg(x), y, c)), {-1}));
  return mul(artanh_clamped(mul(n, sk)), 2.0 / sk);
}

Tensor clip_to_ball(const Tensor& x, double c, double eps) {
  const double radius = (1.0 - eps) / std::sqrt(check_curvature(c, "clip_to_ball"));
  const Tensor n = row_norm(x);
  return mul(x, div(clamp(n, std::nullopt, Scalar(radius)), n));
}

Tensor conformal_factor(const Tensor& x, double c) {
  const double k = check_curvature(c, "conformal_factor");
  return div(full_like(sq_norm(x), 2.0), rsub(mul(sq_norm(x), k), 1.0));
}

Tensor egrad2rgrad(const Tensor& x, const Tensor& g, double c) {
  check_pair(x, g, "egrad2rgrad");
  return div(g, square(conformal_factor(x, c)));
}

Tensor gyration(const Tensor& a, const Tensor& b, const Tensor& w, double c) {
  check_curvature(c, "gyration");
  check_pair(a, b, "gyration");
  check_pair(a, w, "gyration");
  // Ungar's closed form in the kappa-stereographic model with kappa = c.
  auto dot = [](const Tensor& p, const Tensor& q) { return sum(mul(p, q), {-1}, true); };
  const Tensor a2 = dot(a, a), b2 = dot(b, b), ab = dot(a, b), aw = dot(a, w), bw = dot(b, w);
  const double c2 = c * c;
  const Tensor p = add(sub(mul(mul(ab, bw), 2 * c2), mul(mul(aw, b2), c2)), mul(bw, -c));
  const Tensor q = add(mul(mul(bw, a2), -c2), mul(aw, c));
  const Tensor d = add(rsub(mul(ab, 2 * c), 1.0), mul(mul(a2, b2), c2));
  return add(w, div(mul(add(mul(p, a), mul(q, b)), 2.0), d));
}

Tensor parallel_transport(const Tensor& x, const Tensor& y, const Tensor& v, double c) {
  check_pair(x, y, "parallel_transport");
  return mul(gyration(y, neg(x), v, c), div(conformal_factor(x, c), conformal_factor(y, c)));
}

Tensor rsgd_step(const Tensor& x, const Tensor& g, double c, double lr) {
  const double k = check_curvature(c, "rsgd_step");
  if (!(lr > 0) || !std::isfinite(lr)) throw ValueError("rsgd_step: learning rate must be positive and finite");
  NoGradGuard ng;
  const Dtype dt = x.dtype();
  // Vectors are rows of the last dim; 0-d and 1-d parameters are single points. float64 where
  // the device has it.
  const Dtype wide = x.device().has_float64() ? Dtype::Float64 : Dtype::Float32;
  const Tensor x64 = x.dim() == 0 ? reshape(x.to(wide), {1, 1}) : x.to(wide);
  const Tensor g64 = reshape(g.to(wide), x64.shape());
  const Tensor xb = clip_to_ball(x64, c);
  const Tensor scale = square(rsub(mul(sq_norm(xb), k), 1.0));
  const Tensor out = clip_to_ball(expmap(xb, mul(mul(g64, scale), -lr), c), c);
  return reshape(out, x.shape()).to(dt);
}

}  // namespace st::geometry
