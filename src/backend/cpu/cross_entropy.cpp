// The CPU's fused softmax cross-entropy rows (Backend::cross_entropy_rows and its backward):
// one pass per row over contiguous (rows, C) logits (with the gradient asked for too, it is
// written while the row is in cache). float32 rows go through the
// capability-dispatched SIMD row kernels (loss_rows.cpp), sums of exponentials in float64;
// bfloat16/float16 rows are widened into a per-thread float32 row first and take the same path, so
// their loss and gradient are a float32 cast's (the gradient rounded once to the logits' dtype)
// without the cast's (rows, C) float32 copy; float64 rows run in float64.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"
#include "backend/cpu/loss.h"

namespace st::backend::cpu {

namespace {

// max and log-sum-exp of one row; an all -inf (or +inf) row keeps its infinity in lse.
double row_lse(const float* xr, int64_t C) {
  double m = row_max(xr, C);
  if (std::isinf(m)) m = 0;
  return m + std::log(row_sum_exp(xr, C, static_cast<float>(m)));
}

double row_lse(const double* xr, int64_t C) {
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t c = 0; c < C; ++c) m = std::max(m, xr[c]);
  if (std::isinf(m)) m = 0;
  double s = 0;
  for (int64_t c = 0; c < C; ++c) s += std::exp(xr[c] - m);
  return m + std::log(s);
}

// Row r of contiguous (rows, C) float32 or half logits as float32: the row itself for float32,
// widened into buf (C floats) for the half types.
const float* float_row(const Tensor& x, int64_t r, int64_t C, float* buf) {
  if (x.dtype() == Dtype::Float32) return x.data<float>() + r * C;
  row_to_floats(static_cast<const uint16_t*>(x.raw_data()) + r * C, C, x.dtype() == Dtype::BFloat16, buf);
  return buf;
}

// body(r, buf) for every row, in parallel; buf is a per-thread scratch of n floats.
template <typename Body>
void for_rows(int64_t rows, int64_t C, int64_t n, Body body) {
#pragma omp parallel num_threads(num_threads_for(rows* C))
  {
    std::vector<float> buf(static_cast<size_t>(n));
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) body(r, buf.data());
  }
}

// Row r's gradient gr (softmax(x_r) - onehot(y)) from its log-sum-exp l, into dx's row r.
void row_grad(const double* xr, int64_t C, double gr, double l, int64_t y, double* dr) {
  for (int64_t c = 0; c < C; ++c) dr[c] = gr * std::exp(xr[c] - l);
  if (y >= 0 && y < C) dr[y] = gr * (std::exp(xr[y] - l) - 1.0);
}

// The same for a float32 row xr (x's own row, or a half row widened); half rows are written into
// scratch (C floats) and rounded once into dx.
void row_grad(const float* xr, int64_t C, double gr, float l, int64_t y, Tensor& dx, int64_t r, float* scratch) {
  const bool half = is_half(dx.dtype());
  float* dr = half ? scratch : dx.data<float>() + r * C;
  // softmax - onehot: the SIMD row gives gr * exp(x - lse), then the target's own term.
  row_ce_grad(xr, nullptr, C, l, static_cast<float>(gr), 1.0f, 0.0f, dr);
  if (y >= 0 && y < C) dr[y] = static_cast<float>(gr * (std::exp(static_cast<double>(xr[y]) - l) - 1.0));
  if (half) row_from_floats(dr, C, dx.dtype() == Dtype::BFloat16, static_cast<uint16_t*>(dx.raw_data()) + r * C);
}

}  // namespace

bool cross_entropy_rows(const Tensor& x, const Tensor& t, int64_t ignore_index, double scale, Tensor& loss, Tensor& lse,
                        Tensor& dx) {
  const Dtype dt = x.dtype();
  if (dt != Dtype::Float32 && dt != Dtype::Float64 && !is_half(dt)) return false;
  const int64_t rows = x.size(0), C = x.size(1);
  const int64_t* tp = t.data<int64_t>();
  const bool grad = dx.defined();
  // loss and lse are float64 for float64 logits, else float32
  auto finish = [&](auto* lp, auto* sp, int64_t r, double l, double x_target) {
    using T = std::remove_pointer_t<decltype(lp)>;
    const int64_t y = tp[r];
    sp[r] = static_cast<T>(l);
    lp[r] = y == ignore_index   ? T(0)
            : (y < 0 || y >= C) ? std::numeric_limits<T>::quiet_NaN()
                                : static_cast<T>(scale * (l - x_target));
  };
  // each row's gradient is written while the row is still in cache
  if (dt == Dtype::Float64) {
    const double* xp = x.data<double>();
    for_rows(rows, C, 0, [&](int64_t r, float*) {
      const double* xr = xp + r * C;
      const int64_t y = tp[r];
      const double l = row_lse(xr, C);
      finish(loss.data<double>(), lse.data<double>(), r, l, y >= 0 && y < C ? xr[y] : 0.0);
      if (grad) row_grad(xr, C, y == ignore_index ? 0.0 : scale, l, y, dx.data<double>() + r * C);
    });
    return true;
  }
  const bool half = is_half(dt);
  // half rows: the row widened into buf[0, C), with a gradient its float32 values in buf[C, 2C)
  for_rows(rows, C, half ? (grad ? 2 * C : C) : 0, [&](int64_t r, float* buf) {
    const float* xr = float_row(x, r, C, buf);
    const int64_t y = tp[r];
    const double l = row_lse(xr, C);
    finish(loss.data<float>(), lse.data<float>(), r, l, y >= 0 && y < C ? xr[y] : 0.0);
    if (grad) {
      row_grad(xr, C, y == ignore_index ? 0.0 : scale, static_cast<float>(l), y, dx, r, buf + C);
    }
  });
  return true;
}

bool cross_entropy_rows_backward(const Tensor& x, const Tensor& t, const Tensor& lse, const Tensor& g,
                                 int64_t ignore_index, double scale, Tensor& dx) {
  const Dtype dt = x.dtype();
  if (dt != Dtype::Float32 && dt != Dtype::Float64 && !is_half(dt)) return false;
  const int64_t rows = x.size(0), C = x.size(1), g_stride = g.numel() == 1 ? 0 : 1;
  const int64_t* tp = t.data<int64_t>();
  // the row's gradient scale: 0 where ignored
  auto row_scale = [&](int64_t r, auto* gp) {
    return tp[r] == ignore_index ? 0.0 : scale * static_cast<double>(gp[r * g_stride]);
  };
  if (dt == Dtype::Float64) {
    const double *xp = x.data<double>(), *lp = lse.data<double>(), *gp = g.data<double>();
    for_rows(rows, C, 0, [&](int64_t r, float*) {
      row_grad(xp + r * C, C, row_scale(r, gp), lp[r], tp[r], dx.data<double>() + r * C);
    });
    return true;
  }
  const bool half = is_half(dt);
  const float *lp = lse.data<float>(), *gp = g.data<float>();
  // half rows: the row widened into buf[0, C), its float32 gradient into buf[C, 2C), then rounded
  for_rows(rows, C, half ? 2 * C : 0, [&](int64_t r, float* buf) {
    row_grad(float_row(x, r, C, buf), C, row_scale(r, gp), lp[r], tp[r], dx, r, buf + C);
  });
  return true;
}

}  // namespace st::backend::cpu
