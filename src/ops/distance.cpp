// Pairwise distances (cdist) composed from the native ops, so gradients and every device come with them.
#include <cmath>
#include <string>

#include "ops/common.h"

namespace st {

Tensor cdist(const Tensor& x1, const Tensor& x2, double p) {
  if (x1.dim() < 2 || x2.dim() < 2 || x1.shape().back() != x2.shape().back()) {
    throw ShapeError("cdist: expected (..., P, M) and (..., R, M), got " + shape_str(x1.shape()) + " and " +
                     shape_str(x2.shape()));
  }
  if (!(p >= 0)) throw ValueError("cdist: p must be non-negative, got " + std::to_string(p));
  if (!is_floating(x1.dtype()) || !is_floating(x2.dtype())) {
    throw DtypeError(std::string("cdist: expected floating inputs, got ") + dtype_name(x1.dtype()) + " and " +
                     dtype_name(x2.dtype()));
  }
  // (..., P, 1, M) - (..., 1, R, M): every pair's coordinate differences.
  const Tensor diff = abs(sub(unsqueeze(x1, -2), unsqueeze(x2, -3)));
  if (std::isinf(p)) return amax(diff, {-1});
  if (p == 0) return sum(cast(ne(diff, scalar_tensor(0.0, diff.dtype(), diff.device())), diff.dtype()), {-1});
  if (p == 1) return sum(diff, {-1});
  if (p == 2) return sqrt(sum(mul(diff, diff), {-1}));
  return pow(sum(pow(diff, Scalar(p)), {-1}), Scalar(1.0 / p));
}

}  // namespace st
