#pragma once
// The CPU's dropout mask (Backend::dropout_mask; contract in src/backend/backend.h), and the same
// mask for a run of elements, which the flash attention kernel draws per row of key blocks.
#include <cstdint>

#include "spiraltorch/tensor.h"

namespace st::backend::cpu {

void dropout_mask(Tensor& out, uint64_t seed, uint64_t counter, double scale, double keep);

// f[0, n) = elements e0 .. e0 + n of that mask: scale where the uniform from Philox block
// (counter + e / 4), lane e % 4, is below keep_below, else 0. float and double.
template <typename T>
void dropout_factors(T* f, int64_t e0, int64_t n, uint64_t seed, uint64_t counter, T scale, float keep_below);

}  // namespace st::backend::cpu
