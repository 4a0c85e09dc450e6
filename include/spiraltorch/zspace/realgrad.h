#pragma once
// Realgrad: the Euclidean SGD tape.
#include "spiraltorch/zspace/tape.h"

namespace st::zspace {

// apply(weights) does weights -= lr * g in place.
class Realgrad : public GradientTape {
 public:
  Realgrad(double learning_rate, int64_t rows, int64_t cols);
  // Guarded by topos (see GradientTape).
  Realgrad(double learning_rate, int64_t rows, int64_t cols, const OpenCartesianTopos& topos);
  Tensor& apply(Tensor& weights) override;
};

}  // namespace st::zspace
