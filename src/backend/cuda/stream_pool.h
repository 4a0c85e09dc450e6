#pragma once
// Runtime pieces the CUDA graph code shares with the caching allocator (runtime.cu).
#include <cuda_runtime.h>

namespace st::cuda::detail {

// `device` resolved (-1: the current device) and checked to exist; `op` names the caller in errors.
int checked_device(int device, const char* op);

// The allocator caches freed blocks per (size, stream), so blocks allocated on a graph's capture
// stream form that graph's private pool. reserve_stream_pool marks `stream` as such a pool: its
// cached blocks are the graph's addresses, which empty_cache() and the allocator's release of
// cached blocks on out-of-memory leave alone while the graph lives.
void reserve_stream_pool(int device, cudaStream_t stream);
// Once the graph is gone this frees the pool's cached blocks and hands blocks still held by
// tensors to the default stream, where they are freed into the shared cache. The caller has
// synchronised `stream`.
void release_stream_pool(int device, cudaStream_t stream);

}  // namespace st::cuda::detail
