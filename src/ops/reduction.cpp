#include <algorithm>
#include "spiraltorch/autocast.h"
#include <cmath>
#include <numeric>

#include "ops/common.h"

namespace st {

using backend::ReduceOp;
using detail::backend_of;

namespace detail {

std::vector<int64_t> reduce_dims(const Dims& dims, int64_t ndim, const char* op) {
  std::vector<int64_t> out;
  if (dims.empty()) {
    out.resize(ndim);
    std::iota(out.begin(), out.end(), 0);
    return out;
  }
  for (const int64_t d : dims) out.push_back(wrap_dim(d, ndim, op));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) {
    throw ValueError(std::string(op) + ": dim appears multiple times in the list of dims");
  }
  if (ndim == 0) out.clear();  // dim 0 / -1 of a 0-d tensor reduces nothing
  return out;
}

Shape reduced_shape(const Shape& shape, const std::vector<int64_t>& dims, bool keepdim) {
  Shape out;
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i) {
    const bool reduced = std::binary_search(dims.begin(), dims.end(), i);
    if (!reduced) {
      out.push_back(shape[i]);
    } else if (keepdim) {
      out.push_back(1);
    }
  }
  return out;
}

Tensor unsqueeze_reduced(const Tensor& g, const Shape& in_shape, const std::vector<int64_t>& dims, bool keepdim) {
  if (keepdim) return g;
  return reshape(g, reduced_shape(in_shape, dims, true));
}

}  // namespace detail

namespace {

struct ReducePlan {
  Tensor input;  // contiguous, laid out as (outer, r, inner)
  int64_t outer = 1, r = 1, inner = 1;
};

ReducePlan plan_reduce(const Tensor& x, const std::vector<int64_t>& dims) {
  ReducePlan p;
  const int64_t nd = x.dim();
  const bool block = dims.empty() || dims.back() - dims.front() + 1 == static_cast<int64_t>(dims.size());
  if (block) {
    p.input = x.contiguous();
    if (dims.empty()) {
      p.outer = x.numel();
      return p;
    }
    for (int64_t i = 0; i < nd; ++i) {
      const int64_t s = x.shape()[i];
      if (i < dims.front()) {
        p.outer *= s;
      } else if (i > dims.back()) {
        p.inner *= s;
      } else {
        p.r *= s;
      }
    }
    return p;
  }
  Dims order;
  for (int64_t i = 0; i < nd; ++i) {
    if (!std::binary_search(dims.begin(), dims.end(), i)) {
      order.push_back(i);
      p.outer *= x.shape()[i];
    }
  }
  for (const int64_t d : dims) {
    order.push_back(d);
    p.r *= x.shape()[d];
  }
  p.input = permute(x.detach(), order).contiguous();
  return p;
}

// Reduces without autograd; x already has the dtype the kernel runs in. A half x reduces in
// float32 and rounds back, unless float_out keeps the float32 result (sum(dtype=float32)).
Tensor reduce_raw(ReduceOp op, const Tensor& x, const std::vector<int64_t>& dims, bool keepdim, const char* name,
                  bool float_out = false) {
  const op_observer::OpEvent event(name);
  const Shape out_shape = detail::reduced_shape(x.shape(), dims, keepdim);
  int64_t out_numel = 1;
  for (const int64_t d : out_shape) out_numel *= d;
  // Like PyTorch, an empty result is fine; only an empty reduced extent is refused.
  if ((op == ReduceOp::Max || op == ReduceOp::Min) && x.numel() == 0 && out_numel != 0) {
    throw ValueError(std::string(name) + ": cannot reduce an empty tensor of shape " + shape_str(x.shape()) +
                     " (the operation has no identity)");
  }
  const Dtype compute = is_half(x.dtype()) ? Dtype::Float32 : x.dtype();
  const bool native = backend_of(x).native_half_reduce();
  const ReducePlan p = plan_reduce(native ? x.detach() : detail::cast_raw(x.detach(), compute), dims);
  Tensor out = Tensor::empty(out_shape, compute, x.device());
  backend_of(x).reduce(op, p.input, p.outer, p.r, p.inner, out);
  if (compute != x.dtype() && !float_out) out = detail::cast_raw(out, x.dtype());
  event.publish(x, out);
  return out;
}

Dtype sum_dtype(Dtype d) { return is_integral(d) ? Dtype::Int64 : d; }

}  // namespace

Tensor sum(const Tensor& x, const Dims& dims_in, bool keepdim, std::optional<Dtype> dtype) {
  const auto dims = detail::reduce_dims(dims_in, x.dim(), "sum");
  const Dtype dt = dtype.value_or(sum_dtype(x.dtype()));
  // A half x summed into float32 reduces as it is (no float32 copy first).
  const bool half_to_float = is_half(x.dtype()) && dt == Dtype::Float32;
  Tensor out =
      reduce_raw(ReduceOp::Sum, half_to_float ? x : detail::cast_raw(x, dt), dims, keepdim, "sum", half_to_float);
  if (is_floating(dt) && needs_grad({&x})) {
    const Shape in_shape = x.shape();
    const Dtype in_dt = x.dtype();
    record(out, "SumBackward", {x}, [in_shape, dims, keepdim, in_dt](const Tensor& g) -> std::vector<Tensor> {
      return {expand(detail::unsqueeze_reduced(g, in_shape, dims, keepdim), in_shape).to(in_dt)};
    });
  }
  return out;
}

Tensor mean(const Tensor& x, const Dims& dims_in, bool keepdim) {
  if (!is_floating(x.dtype())) {
    throw DtypeError(std::string("mean: expected a floating-point input, got ") + dtype_name(x.dtype()));
  }
  const auto dims = detail::reduce_dims(dims_in, x.dim(), "mean");
  int64_t count = 1;
  for (const int64_t d : dims) count *= x.shape()[d];
  // Half inputs sum and divide in float32 and round once, as PyTorch does: a float16 sum of
  // 100000 halves is already off by 16 before the division.
  if (is_half(x.dtype()))
    return div(sum(x, dims_in, keepdim, Dtype::Float32), static_cast<double>(count)).to(x.dtype());
  return div(sum(x, dims_in, keepdim), static_cast<double>(count));
}

Tensor var(const Tensor& x, const Dims& dims_in, double correction, bool keepdim) {
  const auto dims = detail::reduce_dims(dims_in, x.dim(), "var");
  int64_t count = 1;
  for (const int64_t d : dims) count *= x.shape()[d];
  // Integers and the half types in float32 (the half types round once at the end).
  const bool widen = !is_floating(x.dtype()) || is_half(x.dtype());
  const Tensor xf = widen ? x.to(Dtype::Float32) : x;
  const Tensor centered = sub(xf, mean(xf, dims_in, true));
  const double denom = std::max(0.0, static_cast<double>(count) - correction);
  const Tensor v = div(sum(mul(centered, centered), dims_in, keepdim), denom);
  return is_half(x.dtype()) ? v.to(x.dtype()) : v;
}

namespace {

// sqrt whose gradient is 0 (not inf * 0 = nan) where the result is 0, as PyTorch does
// for std and the 2-norm at a constant / zero input.
Tensor sqrt_zero_safe(const Tensor& v) {
  Tensor out;
  {
    NoGradGuard ng;
    out = sqrt(v);
  }
  if (needs_grad({&v})) {
    record(out, "SqrtBackward", {v}, [v](const Tensor& g) -> std::vector<Tensor> {
      // Recomputed from v (not the detached output) so create_graph differentiates it.
      const Tensor o = sqrt(v);
      const Tensor d = div(g, mul(o, 2.0));
      return {where(eq(o, zeros_like(o)), zeros_like(d), d)};
    });
  }
  return out;
}

}  // namespace

Tensor std(const Tensor& x, const Dims& dims, double correction, bool keepdim) {
  return sqrt_zero_safe(var(x, dims, correction, keepdim));
}

Tensor prod(const Tensor& x, const Dims& dims_in, bool keepdim) {
  const auto dims = detail::reduce_dims(dims_in, x.dim(), "prod");
  const Dtype dt = sum_dtype(x.dtype());
  Tensor out = reduce_raw(ReduceOp::Prod, detail::cast_raw(x, dt), dims, keepdim, "prod");
  if (is_floating(dt) && needs_grad({&x})) {
    const Tensor o = out.detach();
    record(out, "ProdBackward", {x}, [x, o0 = o, dims_in, dims, keepdim](const Tensor& g) -> std::vector<Tensor> {
      const Shape& in_shape = x.shape();
      const Tensor o = grad_enabled() ? prod(x, dims_in, keepdim) : o0;
      const Tensor ge = detail::unsqueeze_reduced(g, in_shape, dims, keepdim);
      const Tensor oe = detail::unsqueeze_reduced(o, in_shape, dims, keepdim);
      // d prod / d x_i = prod of the others; exact also when zeros are present.
      const Tensor is_zero = eq(x, zeros_like(x));
      const Tensor zero_count = sum(is_zero, dims_in, true);
      const Tensor others_nonzero = prod(where(is_zero, ones_like(x), x), dims_in, true);
      const Tensor at_zero = where(eq(zero_count, ones_like(zero_count)), others_nonzero, zeros_like(others_nonzero));
      const Tensor elsewhere = where(gt(zero_count, zeros_like(zero_count)), zeros_like(x), div(oe, x));
      return {mul(ge, where(is_zero, expand(at_zero, in_shape), elsewhere))};
    }, {x});
  }
  return out;
}

namespace {

Tensor extreme(ReduceOp op, const Tensor& x, const Dims& dims_in, bool keepdim, const char* name) {
  const auto dims = detail::reduce_dims(dims_in, x.dim(), name);
  Tensor out = reduce_raw(op, x, dims, keepdim, name);
  if (needs_grad({&x})) {
    const Tensor o = out.detach();
    record(out, name, {x}, [x, o, dims_in, dims, keepdim](const Tensor& g) -> std::vector<Tensor> {
      // Ties share the gradient evenly.
      const Tensor oe = detail::unsqueeze_reduced(o, x.shape(), dims, keepdim);
      const Tensor mask = eq(x, oe).to(g.dtype());
      const Tensor count = sum(mask, dims_in, true);
      return {mul(div(mask, count), detail::unsqueeze_reduced(g, x.shape(), dims, keepdim))};
    }, {x});
  }
  return out;
}

std::pair<Tensor, Tensor> arg_extreme(bool is_max, const Tensor& x, int64_t dim, bool keepdim, const char* name) {
  const int64_t d = wrap_dim(dim, x.dim(), name);
  if (x.dim() > 0 && x.shape()[d] == 0) {
    throw ValueError(std::string(name) + ": cannot reduce over a zero-size dimension " + std::to_string(d) +
                     " of shape " + shape_str(x.shape()));
  }
  const std::vector<int64_t> dims = x.dim() == 0 ? std::vector<int64_t>{} : std::vector<int64_t>{d};
  const Shape out_shape = detail::reduced_shape(x.shape(), dims, keepdim);
  const Dtype compute = is_half(x.dtype()) ? Dtype::Float32 : x.dtype();
  const ReducePlan p = plan_reduce(detail::cast_raw(x.detach(), compute), dims);
  Tensor values = Tensor::empty(out_shape, compute, x.device());
  Tensor indices = Tensor::empty(out_shape, Dtype::Int64, x.device());
  backend_of(x).arg_reduce(is_max, p.input, p.outer, p.r, p.inner, values, indices);
  if (compute != x.dtype()) values = detail::cast_raw(values, x.dtype());
  if (needs_grad({&x})) {
    const Tensor idx = indices;
    record(values, is_max ? "MaxBackward" : "MinBackward", {x},
           [x, idx, dims, keepdim](const Tensor& g) -> std::vector<Tensor> {
      if (x.dim() == 0) return {g};
      const int64_t dd = dims[0];
      const Tensor ge = detail::unsqueeze_reduced(g, x.shape(), dims, keepdim);
      const Tensor ie = detail::unsqueeze_reduced(idx, x.shape(), dims, keepdim);
      Shape pos_shape(x.dim(), 1);
      pos_shape[dd] = x.shape()[dd];
      const Tensor positions =
          reshape(arange(0, static_cast<double>(x.shape()[dd]), 1.0, Dtype::Int64, g.device()), pos_shape);
      return {mul(ge, eq(positions, ie).to(g.dtype()))};
    });
  }
  return {values, indices};
}

}  // namespace

Tensor amax(const Tensor& x, const Dims& dims, bool keepdim) {
  return extreme(ReduceOp::Max, x, dims, keepdim, "amax");
}
Tensor amin(const Tensor& x, const Dims& dims, bool keepdim) {
  return extreme(ReduceOp::Min, x, dims, keepdim, "amin");
}
Tensor max(const Tensor& x) { return extreme(ReduceOp::Max, x, {}, false, "max"); }
Tensor min(const Tensor& x) { return extreme(ReduceOp::Min, x, {}, false, "min"); }
std::pair<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) {
  return arg_extreme(true, x, dim, keepdim, "max");
}
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) {
  return arg_extreme(false, x, dim, keepdim, "min");
}

Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  if (!dim) return arg_extreme(true, reshape(x.detach(), {-1}), 0, false, "argmax").second;
  return arg_extreme(true, x.detach(), *dim, keepdim, "argmax").second;
}

Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  if (!dim) return arg_extreme(false, reshape(x.detach(), {-1}), 0, false, "argmin").second;
  return arg_extreme(false, x.detach(), *dim, keepdim, "argmin").second;
}

Tensor logsumexp(const Tensor& x_in, const Dims& dims_in, bool keepdim) {
  const Tensor x = autocast::to_float(x_in);  // autocast's float32 list
  const Tensor xf = is_floating(x.dtype()) ? x : x.to(Dtype::Float32);
  const auto dims = detail::reduce_dims(dims_in, x.dim(), "logsumexp");
  if (x.numel() == 0) return log(sum(exp(xf), dims_in, keepdim));
  // Shift by the (detached) max so exp never overflows; infinite maxima shift by 0.
  Tensor m = amax(xf.detach(), dims_in, true);
  m = where(isfinite(m), m, zeros_like(m));
  const Tensor s = sum(exp(sub(xf, m)), dims_in, true);
  Tensor out = add(log(s), m);
  return keepdim ? out : reshape(out, detail::reduced_shape(x.shape(), dims, false));
}

Tensor norm(const Tensor& x, double p, const Dims& dims, bool keepdim) {
  const Tensor xf = is_floating(x.dtype()) ? x : x.to(Dtype::Float32);
  if (std::isinf(p)) return p > 0 ? amax(abs(xf), dims, keepdim) : amin(abs(xf), dims, keepdim);
  if (p == 2.0) return sqrt_zero_safe(sum(mul(xf, xf), dims, keepdim));
  if (p == 1.0) return sum(abs(xf), dims, keepdim);
  if (p == 0.0) return sum(ne(xf, zeros_like(xf)).to(xf.dtype()), dims, keepdim);
  return pow(sum(pow(abs(xf), p), dims, keepdim), 1.0 / p);
}

Tensor all(const Tensor& x, const Dims& dims, bool keepdim) {
  return reduce_raw(ReduceOp::All, detail::cast_raw(x, Dtype::Bool), detail::reduce_dims(dims, x.dim(), "all"), keepdim,
                    "all");
}

Tensor any(const Tensor& x, const Dims& dims, bool keepdim) {
  return reduce_raw(ReduceOp::Any, detail::cast_raw(x, Dtype::Bool), detail::reduce_dims(dims, x.dim(), "any"), keepdim,
                    "any");
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol) {
  NoGradGuard ng;
  const Tensor af = a.to(Dtype::Float64), bf = b.to(Dtype::Float64);
  const Tensor diff = abs(sub(af, bf));
  const Tensor tol = add(mul(abs(bf), rtol), atol);
  return all(logical_or(le(diff, tol), logical_and(isnan(af), isnan(bf)))).item() != 0.0;
}

}  // namespace st
