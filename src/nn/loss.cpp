// Loss functions. Point-wise losses and the cross-entropies run fused kernels that
// compute the loss and its local derivative in one pass; the rest compose ops.
#include "spiraltorch/nn/loss.h"
#include "spiraltorch/autocast.h"

#include <atomic>
#include <cmath>
#include <limits>

#include "backend/cpu/kernels.h"
#include "nn/loss_device.h"
#include "ops/common.h"

namespace st::nn {

namespace {

constexpr int64_t kParallelMin = 1 << 15;

Tensor reduce(const Tensor& l, Reduction r) {
  switch (r) {
    case Reduction::Mean: return mean(l);
    case Reduction::Sum: return sum(l);
    case Reduction::None: break;
  }
  return l;
}

void check_floating(const Tensor& t, const char* op, const char* what) {
  if (!t.defined()) throw ValueError(std::string(op) + ": " + what + " is undefined");
  if (!is_floating(t.dtype())) {
    throw DtypeError(std::string(op) + ": " + what + " must be a floating tensor, got " + dtype_name(t.dtype()));
  }
}

void check_same_shape(const Tensor& pred, const Tensor& target, const char* op) {
  if (pred.shape() != target.shape()) {
    throw ShapeError(std::string(op) + ": prediction shape " + shape_str(pred.shape()) + " and target shape " +
                     shape_str(target.shape()) + " differ");
  }
}

// The argument checks of every per-element loss, made before choosing the host kernel or
// the device path so that both refuse the same inputs. `aux` (pos_weight) is optional.
void check_pointwise(const char* op, const Tensor& pred, const Tensor& target, const Tensor& aux = Tensor()) {
  check_floating(pred, op, "prediction");
  if (!target.defined()) throw ValueError(std::string(op) + ": target is undefined");
  check_same_shape(pred, target, op);
  detail::check_same_device(pred, target, op);
  if (aux.defined()) {
    detail::check_same_device(pred, aux, op);
    broadcast_shapes(pred.shape(), aux.shape(), op);
    if (aux.dim() > pred.dim()) {
      throw ShapeError(std::string(op) + ": weight of shape " + shape_str(aux.shape()) +
                       " has more dims than the input of shape " + shape_str(pred.shape()));
    }
  }
}

// A detached, contiguous copy-or-view of `x` in `dtype`, broadcast to `shape` when given.
Tensor raw(const Tensor& x, Dtype dtype, const Shape* shape = nullptr) {
  Tensor r = detail::cast_raw(x.detach(), dtype);
  if (shape && r.shape() != *shape) r = detail::expand_view(r, *shape);
  return r.contiguous();
}

Tensor grad_like(const Tensor& g, const Tensor& input) {
  return detail::sum_to(g, input.shape()).to(input.dtype());
}

// Per-element loss l = f(p, t, aux) with its derivatives. `aux` is an optional
// broadcast operand without gradient. F(double p, double t, double aux, double& dp, double& dt).
template <class F>
Tensor pointwise(const char* op, const char* node, const Tensor& pred, const Tensor& target, const Tensor& aux,
                 double aux_default, F f) {
  check_pointwise(op, pred, target, aux);
  const Dtype out_dtype = float_result(promote_types(pred.dtype(), target.dtype()));
  const Dtype compute = is_half(out_dtype) ? Dtype::Float32 : out_dtype;
  const Shape& shape = pred.shape();
  const Tensor p = raw(pred, compute), t = raw(target, compute);
  Tensor a;
  if (aux.defined()) a = raw(aux, compute, &shape);
  const bool want_dp = pred.requires_grad() && grad_enabled();
  const bool want_dt = target.requires_grad() && grad_enabled();
  Tensor out = Tensor::empty(shape, compute, pred.device());
  Tensor dp = want_dp ? Tensor::empty(shape, compute, pred.device()) : Tensor();
  Tensor dt = want_dt ? Tensor::empty(shape, compute, pred.device()) : Tensor();
  const int64_t n = pred.numel();
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* pp = p.data<T>();
    const T* tp = t.data<T>();
    const T* ap = a.defined() ? a.data<T>() : nullptr;
    T* op_ = out.data<T>();
    T* dpp = want_dp ? dp.data<T>() : nullptr;
    T* dtp = want_dt ? dt.data<T>() : nullptr;
#pragma omp parallel for if (n > kParallelMin)
    for (int64_t i = 0; i < n; ++i) {
      double gp = 0, gt = 0;
      op_[i] = static_cast<T>(f(static_cast<double>(pp[i]), static_cast<double>(tp[i]),
                                ap ? static_cast<double>(ap[i]) : aux_default, gp, gt));
      if (dpp) dpp[i] = static_cast<T>(gp);
      if (dtp) dtp[i] = static_cast<T>(gt);
    }
  };
  if (compute == Dtype::Float64) run(double{}); else run(float{});
  if (compute != out_dtype) out = detail::cast_raw(out, out_dtype);
  if (want_dp || want_dt) {
    record(out, node, {pred, target}, [pred, target, dp, dt](const Tensor& g) -> std::vector<Tensor> {
      return {dp.defined() ? grad_like(mul(g, dp), pred) : Tensor(),
              dt.defined() ? grad_like(mul(g, dt), target) : Tensor()};
    });
  }
  return out;
}

inline double sigmoid_d(double x) {
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
  dx = w * sigmoid_d(x) - pw * t;
  dt = -x + (pw - 1.0) * sp;
  return (1.0 - t) * x + w * sp;
}

}  // namespace

Reduction parse_reduction(const std::string& name, const char* op) {
  if (name == "mean") return Reduction::Mean;
  if (name == "sum") return Reduction::Sum;
  if (name == "none") return Reduction::None;
  throw ValueError(std::string(op) + ": reduction must be 'mean', 'sum' or 'none', got '" + name + "'");
}

std::string reduction_name(Reduction r) {
  switch (r) {
    case Reduction::Mean: return "mean";
    case Reduction::Sum: return "sum";
    case Reduction::None: break;
  }
  return "none";
}

// ---------------------------------------------------------------- point-wise

Tensor mse_loss(const Tensor& pred_in, const Tensor& target_in, Reduction reduction) {
  const Tensor pred = autocast::to_float(pred_in), target = autocast::to_float(target_in);  // float32 list
  if (pred.device().type != DeviceType::CPU) {  // device path
    check_pointwise("mse_loss", pred, target);
    return reduce(device_loss::mse(pred, target), reduction);
  }
  return reduce(pointwise("mse_loss", "MseLossBackward", pred, target, Tensor(), 0.0,
                          [](double p, double t, double, double& dp, double& dt) {
                            const double d = p - t;
                            dp = 2.0 * d;
                            dt = -2.0 * d;
                            return d * d;
                          }),
                reduction);
}

Tensor l1_loss(const Tensor& pred_in, const Tensor& target_in, Reduction reduction) {
  const Tensor pred = autocast::to_float(pred_in), target = autocast::to_float(target_in);  // float32 list
  if (pred.device().type != DeviceType::CPU) {  // device path
    check_pointwise("l1_loss", pred, target);
    return reduce(device_loss::l1(pred, target), reduction);
  }
  return reduce(pointwise("l1_loss", "L1LossBackward", pred, target, Tensor(), 0.0,
                          [](double p, double t, double, double& dp, double& dt) {
                            const double d = p - t;
                            dp = d > 0 ? 1.0 : (d < 0 ? -1.0 : 0.0);
                            dt = -dp;
                            return std::abs(d);
                          }),
                reduction);
}

Tensor huber_loss(const Tensor& pred_in, const Tensor& target_in, Reduction reduction, double delta) {
  const Tensor pred = autocast::to_float(pred_in), target = autocast::to_float(target_in);  // float32 list
  if (!(delta > 0)) throw ValueError("huber_loss: delta must be positive, got " + std::to_string(delta));
  if (pred.device().type != DeviceType::CPU) {  // device path
    check_pointwise("huber_loss", pred, target);
    return reduce(device_loss::huber(pred, target, delta), reduction);
  }
  return reduce(pointwise("huber_loss", "HuberLossBackward", pred, target, Tensor(), 0.0,
                          [delta](double p, double t, double, double& dp, double& dt) {
                            const double d = p - t, ad = std::abs(d);
                            if (ad < delta) {
                              dp = d;
                              dt = -d;
                              return 0.5 * d * d;
                            }
                            dp = d > 0 ? delta : (d < 0 ? -delta : 0.0);
                            dt = -dp;
                            return delta * (ad - 0.5 * delta);
                          }),
                reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& logits_in, const Tensor& target_in, const Tensor& weight,
                                        const Tensor& pos_weight, Reduction reduction) {
  const Tensor logits = autocast::to_float(logits_in), target = autocast::to_float(target_in);  // float32 list
  if (logits.device().type != DeviceType::CPU) {  // device path
    check_pointwise("binary_cross_entropy_with_logits", logits, target, pos_weight);
    Tensor l = device_loss::bce_with_logits(logits, target, pos_weight);
    if (weight.defined()) l = mul(l, weight);
    return reduce(l, reduction);
  }
  Tensor l = pointwise("binary_cross_entropy_with_logits", "BinaryCrossEntropyWithLogitsBackward", logits, target,
                       pos_weight, 1.0, [](double x, double t, double pw, double& dx, double& dt) {
                         return bce(x, t, pw, dx, dt);
                       });
  if (weight.defined()) l = mul(l, weight);
  return reduce(l, reduction);
}

Tensor hyperbolic_cross_entropy(const Tensor& logits, const Tensor& target, double curvature, Reduction reduction,
                                double epsilon) {
  if (!std::isfinite(curvature) || !(curvature < 0)) {
    throw ValueError("hyperbolic_cross_entropy: curvature must be negative and finite, got " +
                     std::to_string(curvature));
  }
  if (!(epsilon >= 0 && epsilon < 0.5)) {
    throw ValueError("hyperbolic_cross_entropy: epsilon must be in [0, 0.5), got " + std::to_string(epsilon));
  }
  const double s = std::sqrt(-curvature);
  if (logits.device().type != DeviceType::CPU) {  // device path: BCE on the scaled logits, composed from ops
    check_pointwise("hyperbolic_cross_entropy", logits, target);
    // clamp passes the gradient inside [eps, 1 - eps] only: no target gradient where clamped.
    const Tensor t = epsilon > 0 ? clamp(target, epsilon, 1.0 - epsilon) : target;
    return reduce(device_loss::bce_with_logits(mul(logits, s), t, Tensor()), reduction);
  }
  return reduce(pointwise("hyperbolic_cross_entropy", "HyperbolicCrossEntropyBackward", logits, target, Tensor(),
                          1.0,
                          [s, epsilon](double x, double t, double, double& dx, double& dt) {
                            double tc = t;
                            bool clamped = false;
                            if (epsilon > 0) {
                              tc = std::min(std::max(t, epsilon), 1.0 - epsilon);
                              clamped = tc != t;
                            }
                            double gx = 0, gt = 0;
                            const double l = bce(s * x, tc, 1.0, gx, gt);
                            dx = s * gx;
                            dt = clamped ? 0.0 : gt;
                            return l;
                          }),
                reduction);
}

// ---------------------------------------------------------------- cross-entropies

namespace {

struct ClassLayout {
  int64_t outer = 1, classes = 1, inner = 1;
  Shape row_shape;  // shape of the per-row loss
};

ClassLayout class_layout(const Tensor& x, const char* op) {
  ClassLayout L;
  if (x.dim() == 0) throw ShapeError(std::string(op) + ": input must have at least one dimension");
  if (x.dim() == 1) {
    L.classes = x.size(0);
    return L;
  }
  L.outer = x.size(0);
  L.classes = x.size(1);
  L.row_shape.push_back(L.outer);
  for (int64_t d = 2; d < x.dim(); ++d) {
    L.inner *= x.size(d);
    L.row_shape.push_back(x.size(d));
  }
  return L;
}

Tensor class_weight(const Tensor& weight, const ClassLayout& L, Dtype compute, const char* op) {
  if (!weight.defined()) return {};
  if (weight.dim() != 1 || weight.size(0) != L.classes) {
    throw ShapeError(std::string(op) + ": weight must have shape (" + std::to_string(L.classes) + ",), got " +
                     shape_str(weight.shape()));
  }
  return raw(weight, compute);
}

void check_index_target(const Tensor& target, const ClassLayout& L, const char* op) {
  if (target.shape() != L.row_shape) {
    throw ShapeError(std::string(op) + ": target shape " + shape_str(target.shape()) + " does not match " +
                     shape_str(L.row_shape) + " expected for class indices");
  }
}

[[noreturn]] void bad_index(const char* op, int64_t bad, int64_t classes) {
  throw IndexError(std::string(op) + ": target " + std::to_string(bad) + " is out of bounds for " +
                   std::to_string(classes) + " classes");
}

}  // namespace

Tensor cross_entropy(const Tensor& logits_in, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                     Reduction reduction, double label_smoothing) {
  const Tensor logits = autocast::to_float(logits_in);  // autocast's float32 list
  const char* op = "cross_entropy";
  check_floating(logits, op, "input");
  if (!target.defined()) throw ValueError("cross_entropy: target is undefined");
  if (!(label_smoothing >= 0.0 && label_smoothing <= 1.0)) {
    throw ValueError("cross_entropy: label_smoothing must be in [0, 1], got " + std::to_string(label_smoothing));
  }
  const ClassLayout L = class_layout(logits, op);
  const bool index_mode = !is_floating(target.dtype());
  if (index_mode) {
    if (target.dtype() == Dtype::Bool) throw DtypeError("cross_entropy: target must be int64 indices or floating probabilities");
    check_index_target(target, L, op);
  } else if (target.shape() != logits.shape()) {
    throw ShapeError("cross_entropy: probability target shape " + shape_str(target.shape()) +
                     " must match input shape " + shape_str(logits.shape()));
  }
  if (logits.device().type != DeviceType::CPU) {  // device path
    return device_loss::cross_entropy(logits, target, weight, ignore_index, reduction, label_smoothing, false);
  }
  const Dtype out_dtype = logits.dtype();
  const Dtype compute = is_half(out_dtype) ? Dtype::Float32 : out_dtype;
  const Tensor x = raw(logits, compute);
  const Tensor w = class_weight(weight, L, compute, op);
  const Tensor tgt = index_mode ? raw(target, Dtype::Int64) : raw(target, compute);
  const int64_t C = L.classes, inner = L.inner, rows = L.outer * L.inner;
  const double ls = label_smoothing;
  Tensor out = Tensor::empty(L.row_shape, compute, logits.device());
  Tensor lse = Tensor::empty({rows}, compute, logits.device());
  double denom = 0.0;
  std::atomic<int64_t> bad{std::numeric_limits<int64_t>::min()};
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    const T* wp = w.defined() ? w.data<T>() : nullptr;
    T* op_ = out.data<T>();
    T* lp = lse.data<T>();
    double wsum_all = 0;
    if (wp) for (int64_t c = 0; c < C; ++c) wsum_all += wp[c];
    double den = 0;
#pragma omp parallel for reduction(+ : den) if (rows * C > kParallelMin)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t base = (r / inner) * C * inner + (r % inner);
      const T* xr = xp + base;
      double m = -std::numeric_limits<double>::infinity();
      double s = 0;
      if constexpr (std::is_same_v<T, float>) {
        if (inner == 1) {  // contiguous float32 row: SIMD max and exp-sum
          m = cpu::row_max(xr, C);
          if (std::isinf(m)) m = 0;  // all -inf (or +inf) rows: keep NaN/inf semantics below
          s = cpu::row_sum_exp(xr, C, static_cast<float>(m));
        }
      }
      if (inner != 1 || !std::is_same_v<T, float>) {
        for (int64_t c = 0; c < C; ++c) m = std::max(m, static_cast<double>(xr[c * inner]));
        if (std::isinf(m)) m = 0;  // all -inf (or +inf) rows: keep NaN/inf semantics below
        for (int64_t c = 0; c < C; ++c) s += std::exp(static_cast<double>(xr[c * inner]) - m);
      }
      const double l = m + std::log(s);
      lp[r] = static_cast<T>(l);
      double loss = 0;
      if (index_mode) {
        const int64_t y = tgt.data<int64_t>()[r];
        if (y == ignore_index) {
          op_[r] = 0;
          continue;
        }
        if (y < 0 || y >= C) {
          bad.store(y);
          op_[r] = 0;
          continue;
        }
        const double wy = wp ? static_cast<double>(wp[y]) : 1.0;
        loss = -(1.0 - ls) * wy * (static_cast<double>(xr[y * inner]) - l);
        if (ls > 0) {
          double smooth = 0;
          for (int64_t c = 0; c < C; ++c) {
            smooth -= (wp ? static_cast<double>(wp[c]) : 1.0) * (static_cast<double>(xr[c * inner]) - l);
          }
          loss += ls / static_cast<double>(C) * smooth;
        }
        den += wy;
      } else {
        const T* tr = tgt.data<T>() + base;
        for (int64_t c = 0; c < C; ++c) {
          const double tc = static_cast<double>(tr[c * inner]) * (1.0 - ls) + ls / static_cast<double>(C);
          loss -= (wp ? static_cast<double>(wp[c]) : 1.0) * tc * (static_cast<double>(xr[c * inner]) - l);
        }
      }
      op_[r] = static_cast<T>(loss);
    }
    (void)wsum_all;
    denom = index_mode ? den : static_cast<double>(rows);
  };
  if (compute == Dtype::Float64) run(double{}); else run(float{});
  if (bad.load() != std::numeric_limits<int64_t>::min()) bad_index(op, bad.load(), C);
  if (compute != out_dtype) out = detail::cast_raw(out, out_dtype);

  const bool want_x = logits.requires_grad() && grad_enabled();
  const bool want_t = !index_mode && target.requires_grad() && grad_enabled();
  if (want_x || want_t) {
    const Shape xshape = logits.shape();
    record(out, "CrossEntropyBackward", {logits, target},
           [=, logits_ref = logits, target_ref = target](const Tensor& g_in) -> std::vector<Tensor> {
             const Tensor g = raw(g_in, compute, &L.row_shape);
             Tensor gx = want_x ? Tensor::empty(xshape, compute, g_in.device()) : Tensor();
             Tensor gt = want_t ? Tensor::empty(xshape, compute, g_in.device()) : Tensor();
             auto back = [&](auto tag) {
               using T = decltype(tag);
               const T* xp = x.data<T>();
               const T* wp = w.defined() ? w.data<T>() : nullptr;
               const T* lp = lse.data<T>();
               const T* gp = g.data<T>();
               T* gxp = want_x ? gx.data<T>() : nullptr;
               T* gtp = want_t ? gt.data<T>() : nullptr;
               double wsum_all = 0;
               for (int64_t c = 0; c < C; ++c) wsum_all += wp ? static_cast<double>(wp[c]) : 1.0;
#pragma omp parallel for if (rows * C > kParallelMin)
               for (int64_t r = 0; r < rows; ++r) {
                 const int64_t base = (r / inner) * C * inner + (r % inner);
                 const T* xr = xp + base;
                 const double l = lp[r], gr = gp[r];
                 if (index_mode) {
                   T* gxr = gxp + base;
                   const int64_t y = tgt.data<int64_t>()[r];
                   if (y == ignore_index || y < 0 || y >= C) {
                     for (int64_t c = 0; c < C; ++c) gxr[c * inner] = 0;
                     continue;
                   }
                   const double wy = wp ? static_cast<double>(wp[y]) : 1.0;
                   const double asum = (1.0 - ls) * wy + ls / static_cast<double>(C) * wsum_all;
                   if constexpr (std::is_same_v<T, float>) {
                     if (inner == 1) {  // contiguous float32 row: SIMD, then the target's own term
                       const double lsc = ls / static_cast<double>(C);
                       cpu::row_ce_grad(xr, wp, C, static_cast<float>(l), static_cast<float>(gr),
                                        static_cast<float>(asum), static_cast<float>(lsc), gxr);
                       const double smy = std::exp(static_cast<double>(xr[y]) - l);
                       gxr[y] = static_cast<T>(gr * (asum * smy - (lsc * wy + (1.0 - ls) * wy)));
                       continue;
                     }
                   }
                   for (int64_t c = 0; c < C; ++c) {
                     const double sm = std::exp(static_cast<double>(xr[c * inner]) - l);
                     double ac = ls / static_cast<double>(C) * (wp ? static_cast<double>(wp[c]) : 1.0);
                     if (c == y) ac += (1.0 - ls) * wy;
                     gxr[c * inner] = static_cast<T>(gr * (asum * sm - ac));
                   }
                 } else {
                   const T* tr = tgt.data<T>() + base;
                   double asum = 0;
                   for (int64_t c = 0; c < C; ++c) {
                     const double tc = static_cast<double>(tr[c * inner]) * (1.0 - ls) + ls / static_cast<double>(C);
                     asum += (wp ? static_cast<double>(wp[c]) : 1.0) * tc;
                   }
                   for (int64_t c = 0; c < C; ++c) {
                     const double wc = wp ? static_cast<double>(wp[c]) : 1.0;
                     const double logp = static_cast<double>(xr[c * inner]) - l;
                     if (gxp) {
                       const double tc = static_cast<double>(tr[c * inner]) * (1.0 - ls) + ls / static_cast<double>(C);
                       gxp[base + c * inner] = static_cast<T>(gr * (asum * std::exp(logp) - wc * tc));
                     }
                     if (gtp) gtp[base + c * inner] = static_cast<T>(-gr * (1.0 - ls) * wc * logp);
                   }
                 }
               }
             };
             if (compute == Dtype::Float64) back(double{}); else back(float{});
             return {want_x ? gx.to(logits_ref.dtype()) : Tensor(), want_t ? gt.to(target_ref.dtype()) : Tensor()};
           });
  }
  if (reduction == Reduction::None) return out;
  Tensor total = sum(out);
  if (reduction == Reduction::Sum) return total;
  return div(total, scalar_tensor(denom, total.dtype(), total.device()));
}

Tensor nll_loss(const Tensor& log_probs_in, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                Reduction reduction) {
  const Tensor log_probs = autocast::to_float(log_probs_in);  // autocast's float32 list
  const char* op = "nll_loss";
  check_floating(log_probs, op, "input");
  if (!target.defined()) throw ValueError("nll_loss: target is undefined");
  if (is_floating(target.dtype()) || target.dtype() == Dtype::Bool) {
    throw DtypeError("nll_loss: target must hold integer class indices");
  }
  const ClassLayout L = class_layout(log_probs, op);
  check_index_target(target, L, op);
  if (log_probs.device().type != DeviceType::CPU) {  // device path
    return device_loss::cross_entropy(log_probs, target, weight, ignore_index, reduction, 0.0, true);
  }
  const Dtype out_dtype = log_probs.dtype();
  const Dtype compute = is_half(out_dtype) ? Dtype::Float32 : out_dtype;
  const Tensor x = raw(log_probs, compute);
  const Tensor w = class_weight(weight, L, compute, op);
  const Tensor tgt = raw(target, Dtype::Int64);
  const int64_t C = L.classes, inner = L.inner, rows = L.outer * L.inner;
  Tensor out = Tensor::empty(L.row_shape, compute, log_probs.device());
  double denom = 0;
  int64_t bad = std::numeric_limits<int64_t>::min();
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    const T* wp = w.defined() ? w.data<T>() : nullptr;
    const int64_t* yp = tgt.data<int64_t>();
    T* op_ = out.data<T>();
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t y = yp[r];
      if (y == ignore_index) { op_[r] = 0; continue; }
      if (y < 0 || y >= C) { bad = y; op_[r] = 0; continue; }
      const int64_t base = (r / inner) * C * inner + (r % inner);
      const double wy = wp ? static_cast<double>(wp[y]) : 1.0;
      op_[r] = static_cast<T>(-wy * static_cast<double>(xp[base + y * inner]));
      denom += wy;
    }
  };
  if (compute == Dtype::Float64) run(double{}); else run(float{});
  if (bad != std::numeric_limits<int64_t>::min()) bad_index(op, bad, C);
  if (compute != out_dtype) out = detail::cast_raw(out, out_dtype);
  if (log_probs.requires_grad() && grad_enabled()) {
    const Shape xshape = log_probs.shape();
    const Dtype in_dtype = log_probs.dtype();
    record(out, "NllLossBackward", {log_probs}, [=](const Tensor& g_in) -> std::vector<Tensor> {
      const Tensor g = raw(g_in, compute, &L.row_shape);
      Tensor gx = zeros(xshape, compute, g_in.device());
      auto back = [&](auto tag) {
        using T = decltype(tag);
        const T* wp = w.defined() ? w.data<T>() : nullptr;
        const T* gp = g.data<T>();
        const int64_t* yp = tgt.data<int64_t>();
        T* gxp = gx.data<T>();
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t y = yp[r];
          if (y == ignore_index || y < 0 || y >= C) continue;
          const int64_t base = (r / inner) * C * inner + (r % inner);
          gxp[base + y * inner] = static_cast<T>(-(wp ? static_cast<double>(wp[y]) : 1.0) * gp[r]);
        }
      };
      if (compute == Dtype::Float64) back(double{}); else back(float{});
      return {gx.to(in_dtype)};
    });
  }
  if (reduction == Reduction::None) return out;
  Tensor total = sum(out);
  if (reduction == Reduction::Sum) return total;
  return div(total, scalar_tensor(denom, total.dtype(), total.device()));
}

// ---------------------------------------------------------------- composed losses

Tensor sigmoid_focal_loss(const Tensor& logits, const Tensor& target, double alpha, double gamma,
                          Reduction reduction) {
  if (!(gamma >= 0)) throw ValueError("sigmoid_focal_loss: gamma must be >= 0, got " + std::to_string(gamma));
  if (alpha > 1.0) throw ValueError("sigmoid_focal_loss: alpha must be <= 1 (negative disables it), got " + std::to_string(alpha));
  const Tensor p = sigmoid(logits);
  const Tensor ce = binary_cross_entropy_with_logits(logits, target, {}, {}, Reduction::None);
  const Tensor p_t = add(mul(p, target), mul(rsub(p, 1.0), rsub(target, 1.0)));
  Tensor loss = gamma == 0.0 ? ce : mul(ce, pow(rsub(p_t, 1.0), gamma));
  if (alpha >= 0) {
    const Tensor alpha_t = add(mul(target, alpha), mul(rsub(target, 1.0), 1.0 - alpha));
    loss = mul(alpha_t, loss);
  }
  return reduce(loss, reduction);
}

Tensor euclidean_distance(const Tensor& x1, const Tensor& x2) {
  check_floating(x1, "euclidean_distance", "x1");
  const Tensor diff = sub(x1, x2);
  if (diff.dim() == 0) throw ShapeError("euclidean_distance: inputs need at least one dimension");
  Tensor d;
  {
    NoGradGuard ng;
    d = sqrt(sum(mul(diff, diff), {-1}));
  }
  if (needs_grad({&diff})) {
    const Tensor dd = diff.detach(), dv = d.detach();
    record(d, "EuclideanDistanceBackward", {diff}, [dd, dv](const Tensor& g) -> std::vector<Tensor> {
      const Tensor safe = where(eq(dv, zeros_like(dv)), ones_like(dv), dv);
      return {mul(unsqueeze(div(g, safe), -1), dd)};
    });
  }
  return d;
}

Tensor contrastive_loss_from_distance(const Tensor& distance, const Tensor& label, double margin,
                                      Reduction reduction) {
  check_floating(distance, "contrastive_loss", "distance");
  if (!label.defined()) throw ValueError("contrastive_loss: label is undefined");
  check_same_shape(distance, label, "contrastive_loss");
  const Tensor y = is_floating(label.dtype()) ? label : label.to(distance.dtype());
  const Tensor hinge = relu(rsub(distance, margin));
  const Tensor loss = add(mul(y, mul(distance, distance)), mul(rsub(y, 1.0), mul(hinge, hinge)));
  return reduce(loss, reduction);
}

Tensor contrastive_loss(const Tensor& x1, const Tensor& x2, const Tensor& label, double margin, Reduction reduction) {
  return contrastive_loss_from_distance(euclidean_distance(x1, x2), label, margin, reduction);
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps) {
  check_floating(x1, "pairwise_distance", "x1");
  const Tensor diff = add(sub(x1, x2), eps);
  if (diff.dim() == 0) throw ShapeError("pairwise_distance: inputs need at least one dimension");
  return norm(diff, p, {-1});
}

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative, double margin,
                           double p, double eps, bool swap, Reduction reduction) {
  if (!(margin >= 0)) throw ValueError("triplet_margin_loss: margin must be >= 0, got " + std::to_string(margin));
  if (!(p > 0)) throw ValueError("triplet_margin_loss: p must be positive, got " + std::to_string(p));
  if (anchor.shape() != positive.shape() || anchor.shape() != negative.shape()) {
    throw ShapeError("triplet_margin_loss: anchor " + shape_str(anchor.shape()) + ", positive " +
                     shape_str(positive.shape()) + " and negative " + shape_str(negative.shape()) +
                     " must have the same shape");
  }
  const Tensor d_ap = pairwise_distance(anchor, positive, p, eps);
  Tensor d_an = pairwise_distance(anchor, negative, p, eps);
  if (swap) d_an = minimum(d_an, pairwise_distance(positive, negative, p, eps));
  return reduce(relu(add(sub(d_ap, d_an), margin)), reduction);
}

// ---------------------------------------------------------------- modules

Tensor Loss::forward(const Tensor&) {
  throw DtypeError(type_name() + ".forward takes (prediction, target), not a single tensor");
}

Tensor MeanSquaredError::forward(const Tensor& pred, const Tensor& target) { return mse_loss(pred, target, reduction_); }
Tensor L1Loss::forward(const Tensor& pred, const Tensor& target) { return l1_loss(pred, target, reduction_); }

HuberLoss::HuberLoss(double delta, Reduction r) : Loss(r), delta_(delta) {
  if (!(delta > 0) || !std::isfinite(delta)) throw ValueError("HuberLoss: delta must be positive and finite");
}
Tensor HuberLoss::forward(const Tensor& pred, const Tensor& target) {
  return huber_loss(pred, target, reduction_, delta_);
}

Tensor BCEWithLogits::forward(const Tensor& pred, const Tensor& target) {
  return binary_cross_entropy_with_logits(pred, target, weight_, pos_weight_, reduction_);
}

HyperbolicCrossEntropy::HyperbolicCrossEntropy(double curvature, Reduction r, double epsilon)
    : Loss(r), curvature_(curvature), epsilon_(epsilon) {
  if (!std::isfinite(curvature) || !(curvature < 0)) {
    throw ValueError("HyperbolicCrossEntropy: curvature must be negative and finite, got " + std::to_string(curvature));
  }
  if (!(epsilon >= 0 && epsilon < 0.5)) {
    throw ValueError("HyperbolicCrossEntropy: epsilon must be in [0, 0.5), got " + std::to_string(epsilon));
  }
}
Tensor HyperbolicCrossEntropy::forward(const Tensor& pred, const Tensor& target) {
  return hyperbolic_cross_entropy(pred, target, curvature_, reduction_, epsilon_);
}

CategoricalCrossEntropy::CategoricalCrossEntropy(Tensor weight, int64_t ignore_index, Reduction r,
                                                 double label_smoothing)
    : Loss(r), weight_(std::move(weight)), ignore_index_(ignore_index), label_smoothing_(label_smoothing) {
  if (!(label_smoothing >= 0.0 && label_smoothing <= 1.0)) {
    throw ValueError("CategoricalCrossEntropy: label_smoothing must be in [0, 1]");
  }
}
Tensor CategoricalCrossEntropy::forward(const Tensor& pred, const Tensor& target) {
  return cross_entropy(pred, target, weight_, ignore_index_, reduction_, label_smoothing_);
}

Tensor NLLLoss::forward(const Tensor& pred, const Tensor& target) {
  return nll_loss(pred, target, weight_, ignore_index_, reduction_);
}

FocalLoss::FocalLoss(double alpha, double gamma, Reduction r) : Loss(r), alpha_(alpha), gamma_(gamma) {
  if (!(gamma >= 0) || !std::isfinite(gamma)) throw ValueError("FocalLoss: gamma must be >= 0 and finite");
  if (!(alpha <= 1.0) || !std::isfinite(alpha)) throw ValueError("FocalLoss: alpha must be <= 1 (negative disables it)");
}
Tensor FocalLoss::forward(const Tensor& pred, const Tensor& target) {
  return sigmoid_focal_loss(pred, target, alpha_, gamma_, reduction_);
}

ContrastiveLoss::ContrastiveLoss(double margin, Reduction r) : Loss(r), margin_(margin) {
  if (!(margin >= 0) || !std::isfinite(margin)) throw ValueError("ContrastiveLoss: margin must be >= 0 and finite");
}
Tensor ContrastiveLoss::forward(const Tensor& distance, const Tensor& label) {
  return contrastive_loss_from_distance(distance, label, margin_, reduction_);
}
Tensor ContrastiveLoss::forward(const Tensor& x1, const Tensor& x2, const Tensor& label) {
  return contrastive_loss(x1, x2, label, margin_, reduction_);
}

TripletLoss::TripletLoss(double margin, double p, double eps, bool swap, Reduction r)
    : Loss(r), margin_(margin), p_(p), eps_(eps), swap_(swap) {
  if (!(margin >= 0) || !std::isfinite(margin)) throw ValueError("TripletLoss: margin must be >= 0 and finite");
  if (!(p > 0)) throw ValueError("TripletLoss: p must be positive");
}
Tensor TripletLoss::forward(const Tensor&, const Tensor&) {
  throw DtypeError("TripletLoss takes (anchor, positive, negative)");
}
Tensor TripletLoss::forward(const Tensor& anchor, const Tensor& positive, const Tensor& negative) {
  return triplet_margin_loss(anchor, positive, negative, margin_, p_, eps_, swap_, reduction_);
}

}  // namespace st::nn
