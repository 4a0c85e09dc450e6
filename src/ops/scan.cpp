// Scans along one dim: cumsum, cumprod, logcumsumexp, cummax, cummin, and their inverse, diff. Kernels: Backend::cumsum
// and Backend::scan (src/backend/cpu/scan.cpp, src/backend/cuda/scan.cu, src/backend/wgpu/reduce.cpp). Each backward is
// composed of differentiable ops, so second derivatives work too.
#include <string>

#include "ops/common.h"

namespace st {

using backend::ScanOp;
using detail::backend_of;

namespace {

// The dtype a kernel scans in: float32/float64 as they are, half types in float32, integers and
// bool in int64 (every value of theirs is exact there).
Dtype scan_compute_dtype(Dtype dt) {
  if (is_half(dt)) return Dtype::Float32;
  if (is_integral(dt)) return Dtype::Int64;
  return dt;
}

struct ScanResult {
  Tensor values;   // compute dtype
  Tensor indices;  // int64, Max/Min only
};

// Runs Backend::scan on a detached, contiguous copy of x in `compute`; no autograd.
ScanResult scan_raw(ScanOp op, const Tensor& x, int64_t d, Dtype compute) {
  const bool extreme = op == ScanOp::Max || op == ScanOp::Min;
  ScanResult r{Tensor::empty(x.shape(), compute, x.device()),
               extreme ? Tensor::empty(x.shape(), Dtype::Int64, x.device()) : Tensor()};
  if (x.numel() == 0) return r;
  const Tensor xc = detail::cast_raw(x.detach(), compute).contiguous();
  const detail::Blocks b = x.dim() == 0 ? detail::Blocks{} : detail::blocks_of(x.shape(), d);
  backend_of(x).scan(op, xc, b.outer, b.n, b.inner, r.values, r.indices);
  return r;
}

// sum_{i >= j} v_i along d: the reverse running sum, from the total, the prefix and the own term.
Tensor reverse_cumsum(const Tensor& v, int64_t d) { return add(sub(sum(v, {d}, true), cumsum(v, d)), v); }

// log(sum_{i >= j} exp(v_i)) along d.
Tensor reverse_logcumsumexp(const Tensor& v, int64_t d) { return flip(logcumsumexp(flip(v, {d}), d), {d}); }

// The gradient of y = cumprod(x) along d, exact where x has zeros: with z the first zero of a line,
// dL/dx_k = sum_{j>=k} g_j y_j / x_k for k < z, y_{z-1} * sum_{j>=z} g_j prod_{z<i<=j} x_i at k = z,
// and 0 after z (every product through it contains x_z = 0).
Tensor cumprod_backward(const Tensor& g, const Tensor& x, const Tensor& y, int64_t d) {
  const Tensor zero = eq(x, wrap_scalar(0, x));
  const Tensor zeros_so_far = cumsum(zero, d);  // int64
  const Tensor before = eq(zeros_so_far, wrap_scalar(0, zeros_so_far));
  const Tensor first_zero = logical_and(zero, eq(zeros_so_far, wrap_scalar(1, zeros_so_far)));
  const Tensor one = ones_like(x);
  const Tensor before_part = where(before, div(reverse_cumsum(mul(g, y), d), where(before, x, one)), zeros_like(x));
  // The running product of the elements after the first zero (1 up to and at it).
  const Tensor tail = cumprod(where(logical_or(before, first_zero), one, x), d);
  const Tensor after_first = logical_not(before);
  const Tensor tail_sum = sum(where(after_first, mul(g, tail), zeros_like(x)), {d}, true);
  const Tensor head = prod(where(before, x, one), {d}, true);  // y_{z-1}: the product before the zero
  return add(before_part, where(first_zero, mul(head, tail_sum), zeros_like(x)));
}

std::pair<Tensor, Tensor> cum_extreme(const Tensor& x, int64_t dim, ScanOp op, const char* name, const char* node) {
  const int64_t d = wrap_dim(dim, x.dim(), name);
  ScanResult r = scan_raw(op, x, d, scan_compute_dtype(x.dtype()));
  Tensor values = detail::cast_raw(r.values, x.dtype());  // exact: the values are x's own
  if (is_floating(x.dtype()) && needs_grad({&x})) {
    const Shape shape = x.shape();
    const Tensor idx = r.indices;
    const bool scalar = x.dim() == 0;
    record(values, node, {x}, [shape, d, idx, scalar](const Tensor& g) -> std::vector<Tensor> {
      if (scalar) return {g};
      // Each running extreme came from one element: its gradient goes there (ties: the chosen one).
      return {scatter_add(zeros(shape, g.dtype(), g.device()), d, idx, g)};
    });
  }
  return {values, r.indices};
}

}  // namespace

Tensor cumsum(const Tensor& x, int64_t dim) {
  const int64_t d = wrap_dim(dim, x.dim(), "cumsum");
  const Dtype out_dt = is_integral(x.dtype()) ? Dtype::Int64 : x.dtype();
  const Dtype compute = is_half(out_dt) ? Dtype::Float32 : out_dt;
  Tensor out = Tensor::empty(x.shape(), compute, x.device());
  if (out.numel() > 0) {
    const Tensor xc = detail::cast_raw(x.detach(), compute).contiguous();
    const detail::Blocks b = x.dim() == 0 ? detail::Blocks{} : detail::blocks_of(x.shape(), d);
    backend_of(x).cumsum(xc, b.outer, b.n, b.inner, out);
  }
  if (compute != out_dt) out = detail::cast_raw(out, out_dt);
  if (is_floating(out_dt) && needs_grad({&x})) {
    const bool scalar = x.dim() == 0;
    record(out, "CumsumBackward", {x}, [d, scalar](const Tensor& g) -> std::vector<Tensor> {
      if (scalar) return {g};
      return {reverse_cumsum(g, d)};
    });
  }
  return out;
}

Tensor cumprod(const Tensor& input, int64_t dim, std::optional<Dtype> dtype) {
  const Tensor x = dtype ? cast(input, *dtype) : input;
  const int64_t d = wrap_dim(dim, x.dim(), "cumprod");
  // Integers and bool accumulate in int64, as torch.cumprod (unless a dtype was asked for).
  const Dtype out_dt = is_integral(x.dtype()) && !dtype ? Dtype::Int64 : x.dtype();
  Tensor out = detail::cast_raw(scan_raw(ScanOp::Prod, x, d, scan_compute_dtype(out_dt)).values, out_dt);
  if (is_floating(out_dt) && needs_grad({&x})) {
    const Tensor y = out.detach();
    const bool scalar = x.dim() == 0;
    record(out, "CumprodBackward", {x}, [x, y, d, scalar](const Tensor& g) -> std::vector<Tensor> {
      if (scalar) return {g};
      // Under create_graph the output is recomputed so the gradient carries its history.
      return {cumprod_backward(g, x, grad_enabled() ? cumprod(x, d) : y, d)};
    }, {x});
  }
  return out;
}

Tensor logcumsumexp(const Tensor& input, int64_t dim) {
  const Tensor x = is_floating(input.dtype()) ? input : cast(input, Dtype::Float32);
  const int64_t d = wrap_dim(dim, x.dim(), "logcumsumexp");
  Tensor out = detail::cast_raw(scan_raw(ScanOp::LogSumExp, x, d, compute_float(x.dtype())).values, x.dtype());
  if (needs_grad({&x})) {
    const Tensor y = out.detach();
    const bool scalar = x.dim() == 0;
    record(out, "LogcumsumexpBackward", {x}, [x, y, d, scalar](const Tensor& g) -> std::vector<Tensor> {
      if (scalar) return {g};
      const Tensor yy = grad_enabled() ? logcumsumexp(x, d) : y;
      // dL/dx_k = sum_{j>=k} g_j exp(x_k - y_j), summed in log space for the positive and the negative
      // parts of g separately (log of a negative number is undefined) so no exp overflows.
      const Tensor g_pos = relu(g), g_neg = relu(neg(g));
      const Tensor pos = exp(add(x, reverse_logcumsumexp(sub(log(g_pos), yy), d)));
      const Tensor negp = exp(add(x, reverse_logcumsumexp(sub(log(g_neg), yy), d)));
      return {sub(pos, negp)};
    }, {x});
  }
  return out;
}

std::pair<Tensor, Tensor> cummax(const Tensor& x, int64_t dim) {
  return cum_extreme(x, dim, ScanOp::Max, "cummax", "CummaxBackward");
}

std::pair<Tensor, Tensor> cummin(const Tensor& x, int64_t dim) {
  return cum_extreme(x, dim, ScanOp::Min, "cummin", "CumminBackward");
}

Tensor diff(const Tensor& x, int64_t n, int64_t dim, const Tensor& prepend, const Tensor& append) {
  if (x.dim() == 0) throw ShapeError("diff: expected at least a 1-dimensional tensor");
  if (n < 0) throw ValueError("diff: order must be non-negative, got n=" + std::to_string(n));
  const int64_t d = wrap_existing_dim(dim, x.dim(), "diff");
  std::vector<Tensor> parts;
  if (prepend.defined()) parts.push_back(prepend);
  parts.push_back(x);
  if (append.defined()) parts.push_back(append);
  Tensor y = parts.size() > 1 ? cat(parts, d) : x;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t m = y.shape()[d];
    if (m == 0) break;
    const Tensor hi = narrow(y, d, 1, m - 1), lo = narrow(y, d, 0, m - 1);
    y = y.dtype() == Dtype::Bool ? ne(hi, lo) : sub(hi, lo);  // bool differences are xor
  }
  return y;
}

}  // namespace st
