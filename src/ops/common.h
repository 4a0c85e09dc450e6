#pragma once
// Helpers shared by the op implementations (not part of the public API).
#include "backend/backend.h"
#include "backend/capture.h"
#include "core/op_observer.h"
#include "spiraltorch/autograd.h"
#include "spiraltorch/ops.h"

namespace st::detail {

inline backend::Backend& backend_of(const Tensor& t) { return backend::backend_for(t.device()); }

// A view of `x` broadcast to `shape` with zero strides; no autograd.
Tensor expand_view(const Tensor& x, const Shape& shape);
// Sums a broadcast gradient back to `shape` (the inverse of broadcasting).
Tensor sum_to(const Tensor& g, const Shape& shape);
// Normalises and deduplicates reduction dims; empty means all.
std::vector<int64_t> reduce_dims(const Dims& dims, int64_t ndim, const char* op);
// The shape of a reduction result.
Shape reduced_shape(const Shape& shape, const std::vector<int64_t>& dims, bool keepdim);
// Reshapes a reduced gradient so it broadcasts against the input again.
Tensor unsqueeze_reduced(const Tensor& g, const Shape& in_shape, const std::vector<int64_t>& dims, bool keepdim);
// Throws ShapeError unless both tensors live on the same device.
void check_same_device(const Tensor& a, const Tensor& b, const char* op);
// Cast without autograd (used on the compute side of ops).
Tensor cast_raw(const Tensor& x, Dtype dtype);
// dst = src (same shape, or a broadcast view of that shape; dtypes may differ) where the
// two may be on different devices: the backend copy entry of the non-CPU side moves the
// data (cross_device_copy for CUDA). No autograd.
void copy_between(const Tensor& src, Tensor& dst);
// A dim's neighbourhood in a contiguous layout, (outer, n, inner): how the backend's indexing and
// scan kernels see a tensor around one dim (defined in indexing.cpp).
struct Blocks {
  int64_t outer = 1, n = 1, inner = 1;
};
Blocks blocks_of(const Shape& shape, int64_t dim);
// Smallest and largest entry of a non-empty integer tensor; on a device, one host read for both.
std::pair<int64_t, int64_t> index_range(const Tensor& idx);
// out(.., idx[j], ..) += src(.., j, ..) along dim, no autograd: out is contiguous and owned by the
// caller, idx contiguous int64 (range-checked), src has out's dtype and shape except idx.numel()
// along dim. The backend's index_add kernel where it has one, else its scatter_add over the index
// expanded to src's shape (defined in indexing.cpp).
void index_add_into(Tensor& out, int64_t dim, const Tensor& idx, const Tensor& src);

}  // namespace st::detail
