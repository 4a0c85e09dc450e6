#pragma once
// A small cache of large host buffers. Freshly mapped pages cost a page fault (and
// a kernel zero-fill) per 4 KiB on first touch, which dominates big elementwise ops;
// reusing recently freed blocks of the same size avoids that. From 128 KiB (glibc's
// initial mmap threshold): blocks of 128 KiB - 8 MiB left to malloc were mapped and
// unmapped, or trimmed off the heap top and faulted back in, on every training step
// (an LSTM step spent ~20% of its time so: 46 -> 37 ms with them cached).
#include <cstddef>

namespace st::host_cache {

constexpr size_t kMinCachedBytes = size_t{128} << 10;
constexpr size_t kMaxCachedBytes = size_t{512} << 20;  // total held back at most

// A 64-byte aligned block of exactly `bytes` (a multiple of 64), reused when possible.
void* acquire(size_t bytes);
// Returns a block from acquire; it is kept for reuse or freed.
void release(void* p, size_t bytes);
// Frees every cached block; returns the bytes released.
size_t empty();
size_t cached_bytes();
// Bytes held by live storages (blocks in the cache excluded), and their peak since start
// or the last reset_peak().
size_t allocated_bytes();
size_t peak_bytes();
void reset_peak();

}  // namespace st::host_cache
