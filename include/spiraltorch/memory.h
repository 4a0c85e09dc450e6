#pragma once
// Host (CPU) memory held by tensors, counted by the allocator behind every CPU storage;
// the CUDA counterparts are st::cuda::memory_allocated and friends.
#include <cstddef>

namespace st::memory {

// Bytes held by live CPU storages (foreign memory wrapped from NumPy/DLPack excluded).
size_t cpu_allocated();
// Peak of cpu_allocated() since start or the last cpu_reset_peak().
size_t cpu_max_allocated();
void cpu_reset_peak();
// Freed blocks kept for reuse (large blocks only), and releasing them.
size_t cpu_cached();
size_t cpu_empty_cache();

}  // namespace st::memory
