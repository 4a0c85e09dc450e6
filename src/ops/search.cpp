// Sorted search: searchsorted and bucketize. Kernel: Backend::searchsorted (src/backend/cpu/search.cpp);
// a backend without it counts the sequence entries before each value (one comparison per pair).
#include <string>

#include "ops/common.h"

namespace st {

using detail::backend_of;

namespace {

// The dtype both operands are compared in: their own when they agree, else int64 for two integer
// dtypes and float64 otherwise; half types widen to float32 (exactly), bool to int64.
Dtype search_dtype(Dtype a, Dtype b) {
  const auto widen = [](Dtype d) {
    if (d == Dtype::Float16 || d == Dtype::BFloat16) return Dtype::Float32;
    return is_floating(d) ? d : Dtype::Int64;
  };
  if (a == b) return widen(a);
  if (!is_floating(a) && !is_floating(b)) return Dtype::Int64;
  return Dtype::Float64;
}

Tensor search(const Tensor& seq, const Tensor& values, bool right) {
  const Dtype dt = search_dtype(seq.dtype(), values.dtype());
  if (values.numel() == 0) return Tensor::empty(values.shape(), Dtype::Int64, values.device());
  const int64_t n = seq.shape().back();
  const int64_t m = values.dim() == 0 ? 1 : values.shape().back();
  const Tensor s = reshape(detail::cast_raw(seq, dt).contiguous(), {-1, n});
  const Tensor v = reshape(detail::cast_raw(values, dt).contiguous(), {s.shape()[0] == 1 ? -1 : s.shape()[0], m});
  Tensor out = Tensor::empty(v.shape(), Dtype::Int64, values.device());
  if (out.numel() > 0 && !backend_of(values).searchsorted(s, v, right, out)) {
    // !(s >= v) (or !(s > v)) counted over the row: torch's binary search on a sorted row, NaN last.
    const Tensor before =
        logical_not(right ? gt(unsqueeze(s, 1), unsqueeze(v, 2)) : ge(unsqueeze(s, 1), unsqueeze(v, 2)));
    out = sum(before, {2});
  }
  return reshape(out, values.shape());
}

}  // namespace

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool right, bool out_int32,
                    const Tensor& sorter) {
  NoGradGuard no_grad;
  if (sorted_sequence.dim() == 0) {
    throw ShapeError("searchsorted: sorted_sequence must have at least one dimension, got a 0-d tensor");
  }
  if (sorted_sequence.device() != values.device()) {
    throw ValueError("searchsorted: sorted_sequence is on " + sorted_sequence.device().str() + " but input is on " +
                     values.device().str());
  }
  Tensor seq = sorted_sequence.detach();
  if (sorter.defined()) {
    if (sorter.shape() != seq.shape()) {
      throw ShapeError("searchsorted: sorter " + shape_str(sorter.shape()) +
                       " must have the shape of sorted_sequence " + shape_str(seq.shape()));
    }
    if (is_floating(sorter.dtype()) || sorter.dtype() == Dtype::Bool) {
      throw DtypeError(std::string("searchsorted: sorter must be an integer tensor, got ") +
                       dtype_name(sorter.dtype()));
    }
    seq = gather(seq, -1, cast(sorter, Dtype::Int64));
  }
  if (seq.dim() > 1) {
    const Shape lead_s(seq.shape().begin(), seq.shape().end() - 1);
    const Shape lead_v = values.dim() == 0 ? Shape{} : Shape(values.shape().begin(), values.shape().end() - 1);
    if (values.dim() != seq.dim() || lead_s != lead_v) {
      throw ShapeError("searchsorted: sorted_sequence " + shape_str(seq.shape()) + " and input " +
                       shape_str(values.shape()) + " must agree in every dim but the last");
    }
  }
  const Tensor out = search(seq, values.detach(), right);
  return out_int32 ? cast(out, Dtype::Int32) : out;
}

Tensor searchsorted(const Tensor& sorted_sequence, Scalar value, bool right, bool out_int32, const Tensor& sorter) {
  // A float value searched in an integer sequence keeps its fraction (torch: 5.5 goes after 5).
  const Dtype dt = value.is_float() && !is_floating(sorted_sequence.dtype()) ? Dtype::Float64 : sorted_sequence.dtype();
  if (sorted_sequence.dim() > 1) {
    throw ShapeError("searchsorted: a scalar input needs a 1-D sorted_sequence, got shape " +
                     shape_str(sorted_sequence.shape()));
  }
  return searchsorted(sorted_sequence, scalar_tensor(value, dt, sorted_sequence.device()), right, out_int32, sorter);
}

Tensor bucketize(const Tensor& values, const Tensor& boundaries, bool right, bool out_int32) {
  if (boundaries.dim() != 1) {
    throw ShapeError("bucketize: boundaries must be 1-D, got shape " + shape_str(boundaries.shape()));
  }
  return searchsorted(boundaries, values, right, out_int32);
}

}  // namespace st
