#pragma once
// The CPU's sorted search (Backend::searchsorted; contract in src/backend/backend.h).
#include "spiraltorch/tensor.h"

namespace st::backend::cpu {

void searchsorted(const Tensor& sorted, const Tensor& values, bool right, Tensor& out);

}  // namespace st::backend::cpu
