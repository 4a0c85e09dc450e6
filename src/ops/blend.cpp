// Weighted sums built from the elementwise and matmul ops (so gradients and every device come with
// them): lerp, addcmul, addcdiv, addmm, baddbmm, as their torch namesakes.
#include <string>

#include "ops/common.h"

namespace st {

namespace {

// beta * x + alpha * product, with torch's rule that beta = 0 ignores x entirely (NaN included).
Tensor scaled_sum(const Tensor& x, const Tensor& product, Scalar beta, Scalar alpha) {
  const Tensor scaled = alpha.to_double() == 1 ? product : mul(product, alpha);
  if (beta.to_double() == 0) return add(scaled, zeros_like(product));
  return add(scaled, beta.to_double() == 1 ? x : mul(x, beta));
}

}  // namespace

Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight) {
  return add(start, mul(weight, sub(end, start)));
}

Tensor lerp(const Tensor& start, const Tensor& end, Scalar weight) { return add(start, mul(sub(end, start), weight)); }

Tensor addcmul(const Tensor& x, const Tensor& tensor1, const Tensor& tensor2, Scalar value) {
  return add(x, mul(mul(tensor1, tensor2), value));
}

Tensor addcdiv(const Tensor& x, const Tensor& tensor1, const Tensor& tensor2, Scalar value) {
  return add(x, mul(div(tensor1, tensor2), value));
}

Tensor addmm(const Tensor& x, const Tensor& mat1, const Tensor& mat2, Scalar beta, Scalar alpha) {
  if (mat1.dim() != 2 || mat2.dim() != 2) {
    throw ShapeError("addmm: expected 2-D matrices, got " + shape_str(mat1.shape()) + " and " +
                     shape_str(mat2.shape()));
  }
  return scaled_sum(x, matmul(mat1, mat2), beta, alpha);
}

Tensor baddbmm(const Tensor& x, const Tensor& batch1, const Tensor& batch2, Scalar beta, Scalar alpha) {
  if (batch1.dim() != 3 || batch2.dim() != 3) {
    throw ShapeError("baddbmm: expected 3-D batches, got " + shape_str(batch1.shape()) + " and " +
                     shape_str(batch2.shape()));
  }
  return scaled_sum(x, bmm(batch1, batch2), beta, alpha);
}

}  // namespace st
