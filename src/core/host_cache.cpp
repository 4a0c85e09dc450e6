#include "core/host_cache.h"

#include <atomic>
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
// Bytes handed out to storages (cached blocks excluded) and their peak.
std::atomic<size_t> g_in_use{0};
std::atomic<size_t> g_peak{0};
void count_acquire(size_t bytes) {
  const size_t now = g_in_use.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  size_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}
void* counted(void* p, size_t bytes) {
  count_acquire(bytes);
  return p;
}
}  // namespace

size_t allocated_bytes() { return g_in_use.load(std::memory_order_relaxed); }
size_t peak_bytes() { return g_peak.load(std::memory_order_relaxed); }
void reset_peak() { g_peak.store(g_in_use.load(std::memory_order_relaxed), std::memory_order_relaxed); }

void* acquire(size_t bytes) {
  if (bytes >= kMinCachedBytes) {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.blocks.find(bytes);
    if (it != c.blocks.end()) {
      void* p = it->second;
      c.blocks.erase(it);
      c.bytes -= bytes;
      return counted(p, bytes);
    }
  }
  void* p = bytes ? std::aligned_alloc(64, bytes) : nullptr;
  if (bytes && !p) {
    empty();
    p = std::aligned_alloc(64, bytes);
    if (!p) throw std::bad_alloc();
  }
  return counted(p, bytes);
}

void release(void* p, size_t bytes) {
  if (!p) return;
  g_in_use.fetch_sub(bytes, std::memory_order_relaxed);
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
