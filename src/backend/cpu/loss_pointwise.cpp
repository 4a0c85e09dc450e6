// The CPU's fused point-wise losses (Backend::pointwise_loss): the loss and its local
// derivatives in one pass, each element computed in double and stored in the operands' dtype.
#include <algorithm>
#include <cmath>

#include "backend/cpu/loops.h"
#include "backend/cpu/loss.h"

namespace st::backend::cpu {

namespace {

inline double sigmoid(double x) {
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1.0 + e);
}
// log(1 + exp(-x)), stable.
inline double softplus_neg(double x) { return std::max(-x, 0.0) + std::log1p(std::exp(-std::abs(x))); }

// Binary cross-entropy on a logit x with target t and positive weight pw.
inline double bce(double x, double t, double pw, double& dx, double& dt) {
  const double sp = softplus_neg(x);
  const double w = 1.0 + (pw - 1.0) * t;
  dx = w * sigmoid(x) - pw * t;
  dt = -x + (pw - 1.0) * sp;
  return (1.0 - t) * x + w * sp;
}

// out[i] = f(p[i], t[i], aux[i] or 1, dp, dt) with the derivatives stored where wanted.
template <typename T, typename F>
void run(const Tensor& p, const Tensor& t, const Tensor& aux, Tensor& out, Tensor& dp, Tensor& dt, F f) {
  const int64_t n = p.numel();
  const T* pp = p.data<T>();
  const T* tp = t.data<T>();
  const T* ap = aux.defined() ? aux.data<T>() : nullptr;
  T* op = out.data<T>();
  T* dpp = dp.defined() ? dp.data<T>() : nullptr;
  T* dtp = dt.defined() ? dt.data<T>() : nullptr;
#pragma omp parallel for num_threads(num_threads_for(n * 4)) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    double gp = 0, gt = 0;
    op[i] = static_cast<T>(
        f(static_cast<double>(pp[i]), static_cast<double>(tp[i]), ap ? static_cast<double>(ap[i]) : 1.0, gp, gt));
    if (dpp) dpp[i] = static_cast<T>(gp);
    if (dtp) dtp[i] = static_cast<T>(gt);
  }
}

template <typename T>
void dispatch(backend::PointwiseLoss op, const Tensor& p, const Tensor& t, const Tensor& aux, double p0, double p1,
              Tensor& out, Tensor& dp, Tensor& dt) {
  using backend::PointwiseLoss;
  switch (op) {
    case PointwiseLoss::Mse:
      return run<T>(p, t, aux, out, dp, dt, [](double a, double b, double, double& da, double& db) {
        const double d = a - b;
        da = 2.0 * d;
        db = -2.0 * d;
        return d * d;
      });
    case PointwiseLoss::L1:
      return run<T>(p, t, aux, out, dp, dt, [](double a, double b, double, double& da, double& db) {
        const double d = a - b;
        da = d > 0 ? 1.0 : (d < 0 ? -1.0 : 0.0);
        db = -da;
        return std::abs(d);
      });
    case PointwiseLoss::Huber:
      return run<T>(p, t, aux, out, dp, dt, [delta = p0](double a, double b, double, double& da, double& db) {
        const double d = a - b, ad = std::abs(d);
        if (ad < delta) {
          da = d;
          db = -d;
          return 0.5 * d * d;
        }
        da = d > 0 ? delta : (d < 0 ? -delta : 0.0);
        db = -da;
        return delta * (ad - 0.5 * delta);
      });
    case PointwiseLoss::BceWithLogits:
      return run<T>(p, t, aux, out, dp, dt,
                    [](double x, double y, double pw, double& dx, double& dy) { return bce(x, y, pw, dx, dy); });
    case PointwiseLoss::HyperbolicBce:
      return run<T>(p, t, aux, out, dp, dt, [s = p0, eps = p1](double x, double y, double, double& dx, double& dy) {
        const double yc = eps > 0 ? std::min(std::max(y, eps), 1.0 - eps) : y;
        double gx = 0, gy = 0;
        const double l = bce(s * x, yc, 1.0, gx, gy);
        dx = s * gx;
        dy = yc != y ? 0.0 : gy;  // clamp passes the gradient inside [eps, 1 - eps] only
        return l;
      });
  }
}

}  // namespace

bool pointwise_loss(backend::PointwiseLoss op, const Tensor& p, const Tensor& t, const Tensor& aux, double p0,
                    double p1, Tensor& out, Tensor& dp, Tensor& dt) {
  if (p.dtype() == Dtype::Float64) {
    dispatch<double>(op, p, t, aux, p0, p1, out, dp, dt);
  } else if (p.dtype() == Dtype::Float32) {
    dispatch<float>(op, p, t, aux, p0, p1, out, dp, dt);
  } else {
    return false;  // half types: the composite
  }
  return true;
}

}  // namespace st::backend::cpu
