#include "core/host_cache.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <new>

namespace st::host_cache {

namespace {
struct Cache {
  std::mutex mutex;
  std::multimap<size_t, void*> blocks;  // by size
  size_t bytes = 0;
};
Cache& cache() {
  static Cache* c = new Cache();  // never destroyed: blocks may be released during static teardown
  return *c;
}
}  // namespace

void* acquire(size_t bytes) {
  if (bytes >= kMinCachedBytes) {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.blocks.find(bytes);
    if (it != c.blocks.end()) {
      void* p = it->second;
      c.blocks.erase(it);
      c.bytes -= bytes;
      return p;
    }
  }
  void* p = bytes ? std::aligned_alloc(64, bytes) : nullptr;
  if (bytes && !p) {
    empty();
    p = std::aligned_alloc(64, bytes);
    if (!p) throw std::bad_alloc();
  }
  return p;
}

void release(void* p, size_t bytes) {
  if (!p) return;
  if (bytes >= kMinCachedBytes) {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    if (c.bytes + bytes <= kMaxCachedBytes) {
      c.blocks.emplace(bytes, p);
      c.bytes += bytes;
      return;
    }
  }
  std::free(p);
}

size_t empty() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  const size_t freed = c.bytes;
  for (auto& [size, p] : c.blocks) std::free(p);
  c.blocks.clear();
  c.bytes = 0;
  return freed;
}

size_t cached_bytes() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.bytes;
}

}  // namespace st::host_cache
