#include "spiraltorch/memory.h"

#include "core/host_cache.h"

namespace st::memory {

size_t cpu_allocated() { return host_cache::allocated_bytes(); }
size_t cpu_max_allocated() { return host_cache::peak_bytes(); }
void cpu_reset_peak() { host_cache::reset_peak(); }
size_t cpu_cached() { return host_cache::cached_bytes(); }
size_t cpu_empty_cache() { return host_cache::empty(); }

}  // namespace st::memory
