#include "spiraltorch/zspace/realgrad.h"

#include "spiraltorch/ops.h"

namespace st::zspace {

Realgrad::Realgrad(double learning_rate, int64_t rows, int64_t cols)
    : GradientTape(learning_rate, rows, cols, "Realgrad") {}

Realgrad::Realgrad(double learning_rate, int64_t rows, int64_t cols, const OpenCartesianTopos& topos)
    : GradientTape(learning_rate, rows, cols, "Realgrad", topos) {}

Tensor& Realgrad::apply(Tensor& weights) {
  const Tensor w = as_matrix(weights, "apply");
  return commit(weights, guarded(sub(w, mul(pending_tensor(), learning_rate()))), "Realgrad.apply");
}

}  // namespace st::zspace
