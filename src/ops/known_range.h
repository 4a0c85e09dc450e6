// Value ranges of integer tensors copied from the host to a device. Index checks on a device
// (gather, index_select, embedding, cross-entropy targets) would otherwise read the index
// range back, and each such read is a host sync that stalls the device queue; for indices the
// host had in its hands a moment ago, the range is taken during the copy instead.
#pragma once

#include <cstdint>

#include "spiraltorch/tensor.h"

namespace st::detail {

// Records the range of host tensor `src`, just copied into the fresh device tensor `dst`
// (integer dtypes only, numel up to 2^20; others are left unrecorded).
void remember_copied_range(const Tensor& src, const Tensor& dst);

// True when t's storage has a recorded range inside [lo, hi_exclusive) and was not written
// since (its version is unchanged). The range covers the whole storage, so for a view it is a
// bound, not the exact range: false means "unknown", never "out of range".
bool known_within(const Tensor& t, int64_t lo, int64_t hi_exclusive);

}  // namespace st::detail
