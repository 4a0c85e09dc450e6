#pragma once
// The CPU's dropout mask (Backend::dropout_mask; contract in src/backend/backend.h).
#include <cstdint>

#include "spiraltorch/tensor.h"

namespace st::backend::cpu {

void dropout_mask(Tensor& out, uint64_t seed, uint64_t counter, double scale, double keep);

}  // namespace st::backend::cpu
