// CUDA runtime surface (include/spiraltorch/cuda.h): devices, the caching allocator,
// streams, events and host<->device copies.
#include <cuda_runtime.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

#include "backend/cuda/attention_cudnn.h"
#include "backend/cuda/common.cuh"
#include "backend/cuda/stream_pool.h"

namespace st::backend::cuda {

void throw_cuda(cudaError_t err, const char* what, const char* file, int line) {
  (void)cudaGetLastError();  // clear a sticky launch error so the next call is clean
  const std::string msg =
      std::string("cuda: ") + cudaGetErrorString(err) + " (" + what + " at " + file + ":" + std::to_string(line) + ")";
  if (err == cudaErrorMemoryAllocation) throw SpiralError("cuda: out of memory: " + msg);
  throw SpiralError(msg);
}

namespace {
constexpr int kMaxDevices = 64;
thread_local cudaStream_t t_stream[kMaxDevices] = {};
thread_local int t_device = -1;
}  // namespace

void use_device(int index) {
  if (t_device != index) {
    ST_CUDA_CHECK(cudaSetDevice(index));
    t_device = index;
  }
}

cudaStream_t t_stream_of(int device) { return t_stream[device]; }
void set_stream_of(int device, cudaStream_t s) { t_stream[device] = s; }

int sm_count() {
  static const int n = [] {
    int d = 0, c = 0;
    cudaGetDevice(&d);
    cudaDeviceGetAttribute(&c, cudaDevAttrMultiProcessorCount, d);
    return c > 0 ? c : 100;
  }();
  return n;
}

cudaStream_t stream() {
  int dev = t_device;
  if (dev < 0) {
    ST_CUDA_CHECK(cudaGetDevice(&dev));
    t_device = dev;
  }
  return t_stream[dev];
}

}  // namespace st::backend::cuda

namespace st::cuda {

using backend::cuda::use_device;

namespace {

struct Probe {
  int count = 0;
  std::string reason;
};

const Probe& probe() {
  static const Probe p = [] {
    Probe r;
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      r.reason = std::string("no usable CUDA device: ") + cudaGetErrorString(err);
      return r;
    }
    if (n == 0) {
      r.reason = "no CUDA device was found";
      return r;
    }
    r.count = n;
    return r;
  }();
  return p;
}

void check_device(int device, const char* op) {
  const Probe& p = probe();
  if (p.count == 0) throw DeviceUnavailableError(std::string(op) + ": CUDA is not available: " + p.reason);
  if (device < 0 || device >= p.count) {
    throw DeviceUnavailableError(std::string(op) + ": device cuda:" + std::to_string(device) + " does not exist (" +
                                 std::to_string(p.count) + " device(s))");
  }
}

int resolve(int device) {
  if (device >= 0) return device;
  return current_device();
}

// ---- caching allocator ----
// Blocks are rounded (512 B below 1 MiB, 2 MiB above) and cached per (device, stream)
// after release; a request reuses a cached block of exactly its rounded size.
struct DeviceCache {
  std::multimap<std::pair<size_t, cudaStream_t>, void*> free_blocks;  // (size, stream) -> ptr
  std::unordered_map<void*, std::pair<size_t, cudaStream_t>> live;
  std::set<cudaStream_t> graph_pools;  // streams of live graphs: their cached blocks stay
  size_t allocated = 0, peak = 0, reserved = 0;
};
std::mutex g_alloc_mutex;
DeviceCache g_cache[64];

size_t round_size(size_t n) {
  if (n == 0) n = 1;
  if (n < (size_t{1} << 20)) return (n + 511) / 512 * 512;
  const size_t big = size_t{2} << 20;
  return (n + big - 1) / big * big;
}

// Frees the cached blocks of `device` but those of live graphs' pools: a captured graph replays
// into the addresses its capture freed, so they are the graph's until it is reset.
void free_cached_locked(int device) {
  DeviceCache& c = g_cache[device];
  if (c.free_blocks.empty()) return;
  use_device(device);
  cudaDeviceSynchronize();
  for (auto it = c.free_blocks.begin(); it != c.free_blocks.end();) {
    if (c.graph_pools.contains(it->first.second)) {
      ++it;
      continue;
    }
    cudaFree(it->second);
    c.reserved -= it->first.first;
    it = c.free_blocks.erase(it);
  }
}

bool g_allow_tf32 = false;
std::atomic<bool> g_flash_sdp{true};
std::atomic<bool> g_cudnn_sdp{true};

}  // namespace

bool is_built() { return true; }
bool is_available() { return probe().count > 0; }
std::string unavailable_reason() { return probe().reason; }
int device_count() { return probe().count; }

int current_device() {
  check_device(0, "cuda.current_device");
  int d = 0;
  ST_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

void set_device(int device) {
  check_device(device, "cuda.set_device");
  use_device(device);
}

void synchronize(int device) {
  device = resolve(device);
  check_device(device, "cuda.synchronize");
  use_device(device);
  ST_CUDA_CHECK(cudaDeviceSynchronize());
}

DeviceProperties properties(int device) {
  check_device(device, "cuda.get_device_properties");
  cudaDeviceProp p;
  ST_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  DeviceProperties r;
  r.name = p.name;
  r.total_memory = p.totalGlobalMem;
  r.major = p.major;
  r.minor = p.minor;
  r.multiprocessors = p.multiProcessorCount;
  r.l2_cache = static_cast<size_t>(p.l2CacheSize);
  cudaDriverGetVersion(&r.driver_version);
  cudaRuntimeGetVersion(&r.runtime_version);
  return r;
}

std::pair<size_t, size_t> mem_get_info(int device) {
  check_device(device, "cuda.mem_get_info");
  use_device(device);
  size_t f = 0, t = 0;
  ST_CUDA_CHECK(cudaMemGetInfo(&f, &t));
  return {f, t};
}

void* allocate(size_t nbytes, int device) {
  check_device(device, "allocate");
  const size_t size = round_size(nbytes);
  use_device(device);
  cudaStream_t s = backend::cuda::stream();
  std::lock_guard<std::mutex> lock(g_alloc_mutex);
  DeviceCache& c = g_cache[device];
  void* p = nullptr;
  auto it = c.free_blocks.find({size, s});
  if (it != c.free_blocks.end()) {
    p = it->second;
    c.free_blocks.erase(it);
  } else {
    cudaError_t err = cudaMalloc(&p, size);
    // Releasing the cached blocks synchronises the device, which would invalidate a graph capture
    // on this stream (its next launch then fails with an unrelated error): inside a capture the
    // allocation fails as it is.
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      ST_CUDA_CHECK(cudaStreamIsCapturing(s, &capture));
      if (capture == cudaStreamCaptureStatusNone) {
        free_cached_locked(device);
        err = cudaMalloc(&p, size);
      }
    }
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      throw SpiralError("cuda: out of memory allocating " + std::to_string(nbytes) +
                        " bytes on cuda:" + std::to_string(device) + " (" + std::to_string(c.allocated) +
                        " bytes allocated, " + std::to_string(c.reserved) + " reserved)" +
                        (capture == cudaStreamCaptureStatusNone
                             ? ""
                             : " during a CUDA graph capture, where cached blocks cannot be released (call "
                               "st.cuda.empty_cache() before capturing)") +
                        ": " + cudaGetErrorString(err));
    }
    c.reserved += size;
  }
  c.live[p] = {size, s};
  c.allocated += size;
  if (c.allocated > c.peak) c.peak = c.allocated;
  return p;
}

void release(void* ptr, int device) {
  if (!ptr) return;
  std::lock_guard<std::mutex> lock(g_alloc_mutex);
  DeviceCache& c = g_cache[device];
  auto it = c.live.find(ptr);
  if (it == c.live.end()) return;
  const auto [size, s] = it->second;
  c.live.erase(it);
  c.allocated -= size;
  // Work queued on the block's stream that still reads it runs before any later use on
  // that stream, so the block can be reused there at once.
  c.free_blocks.insert({{size, s}, ptr});
}

namespace detail {
int checked_device(int device, const char* op) {
  if (device < 0) {
    check_device(0, op);  // names `op` when there is no device at all
    device = current_device();
  }
  check_device(device, op);
  return device;
}

void reserve_stream_pool(int device, cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(g_alloc_mutex);
  g_cache[device].graph_pools.insert(stream);
}

void release_stream_pool(int device, cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(g_alloc_mutex);
  DeviceCache& c = g_cache[device];
  c.graph_pools.erase(stream);
  use_device(device);
  for (auto it = c.free_blocks.begin(); it != c.free_blocks.end();) {
    if (it->first.second == stream) {
      cudaFree(it->second);
      c.reserved -= it->first.first;
      it = c.free_blocks.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& [ptr, entry] : c.live) {
    if (entry.second == stream) entry.second = nullptr;
  }
}
}  // namespace detail

size_t memory_allocated(int device) {
  if (!is_available()) return 0;
  std::lock_guard<std::mutex> lock(g_alloc_mutex);
  return g_cache[resolve(device)].allocated;
}
size_t max_memory_allocated(int device) {
  if (!is_available()) return 0;
  std::lock_guard<std::mutex> lock(g_alloc_mutex);
  return g_cache[resolve(device)].peak;
}
size_t memory_reserved(int device) {
  if (!is_available()) return 0;
  std::lock_guard<std::mutex> lock(g_alloc_mutex);
  return g_cache[resolve(device)].reserved;
}
void reset_peak_memory_stats(int device) {
  if (!is_available()) return;
  std::lock_guard<std::mutex> lock(g_alloc_mutex);
  DeviceCache& c = g_cache[resolve(device)];
  c.peak = c.allocated;
}
void empty_cache() {
  if (!is_available()) return;
  // Releasing blocks synchronises the device, which would invalidate a capture in progress.
  for (int d = 0; d < device_count(); ++d) {
    if (is_current_stream_capturing(d)) {
      throw SpiralError("cuda.empty_cache: cuda:" + std::to_string(d) +
                        "'s current stream is being captured into a CUDA graph; release the cache before or after "
                        "the capture");
    }
  }
  std::lock_guard<std::mutex> lock(g_alloc_mutex);
  for (int d = 0; d < device_count(); ++d) free_cached_locked(d);
}

bool allow_tf32() { return g_allow_tf32; }
void set_allow_tf32(bool allow) { g_allow_tf32 = allow; }
bool flash_sdp_enabled() { return g_flash_sdp.load(std::memory_order_relaxed); }
void set_flash_sdp_enabled(bool enabled) { g_flash_sdp.store(enabled, std::memory_order_relaxed); }
bool cudnn_attention_built() { return backend::cuda::cudnn_attention_built(); }
bool cudnn_sdp_enabled() { return g_cudnn_sdp.load(std::memory_order_relaxed); }
void set_cudnn_sdp_enabled(bool enabled) { g_cudnn_sdp.store(enabled, std::memory_order_relaxed); }

uintptr_t current_stream(int device) {
  device = resolve(device);
  check_device(device, "cuda.current_stream");
  return reinterpret_cast<uintptr_t>(backend::cuda::t_stream_of(device));
}
void set_current_stream(int device, uintptr_t s) {
  device = resolve(device);
  check_device(device, "cuda.set_stream");
  backend::cuda::set_stream_of(device, reinterpret_cast<cudaStream_t>(s));
}
uintptr_t stream_create(int device, int priority) {
  device = resolve(device);
  check_device(device, "cuda.Stream");
  use_device(device);
  cudaStream_t s;
  ST_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority));
  return reinterpret_cast<uintptr_t>(s);
}
void stream_destroy(uintptr_t s) {
  if (s) cudaStreamDestroy(reinterpret_cast<cudaStream_t>(s));
}
void stream_synchronize(uintptr_t s) { ST_CUDA_CHECK(cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(s))); }
bool stream_query(uintptr_t s) {
  const cudaError_t e = cudaStreamQuery(reinterpret_cast<cudaStream_t>(s));
  if (e == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  ST_CUDA_CHECK(e);
  return true;
}
void stream_wait_event(uintptr_t s, uintptr_t ev) {
  ST_CUDA_CHECK(cudaStreamWaitEvent(reinterpret_cast<cudaStream_t>(s), reinterpret_cast<cudaEvent_t>(ev), 0));
}
uintptr_t event_create(int device, bool timing) {
  device = resolve(device);
  check_device(device, "cuda.Event");
  use_device(device);
  cudaEvent_t e;
  ST_CUDA_CHECK(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
  return reinterpret_cast<uintptr_t>(e);
}
void event_destroy(uintptr_t e) {
  if (e) cudaEventDestroy(reinterpret_cast<cudaEvent_t>(e));
}
void event_record(uintptr_t e, uintptr_t s) {
  ST_CUDA_CHECK(cudaEventRecord(reinterpret_cast<cudaEvent_t>(e), reinterpret_cast<cudaStream_t>(s)));
}
void event_synchronize(uintptr_t e) { ST_CUDA_CHECK(cudaEventSynchronize(reinterpret_cast<cudaEvent_t>(e))); }
bool event_query(uintptr_t e) {
  const cudaError_t r = cudaEventQuery(reinterpret_cast<cudaEvent_t>(e));
  if (r == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  ST_CUDA_CHECK(r);
  return true;
}
float event_elapsed_ms(uintptr_t a, uintptr_t b) {
  float ms = 0;
  ST_CUDA_CHECK(cudaEventElapsedTime(&ms, reinterpret_cast<cudaEvent_t>(a), reinterpret_cast<cudaEvent_t>(b)));
  return ms;
}

void memcpy(void* dst, const void* src, size_t nbytes, bool dst_dev, bool src_dev, int device) {
  if (nbytes == 0) return;
  use_device(device);
  const cudaMemcpyKind kind = dst_dev ? (src_dev ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                                      : (src_dev ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
  cudaStream_t s = backend::cuda::stream();
  ST_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, kind, s));
  if (!dst_dev) ST_CUDA_CHECK(cudaStreamSynchronize(s));
}

void* host_allocate_pinned(size_t nbytes) {
  void* p = nullptr;
  ST_CUDA_CHECK(cudaHostAlloc(&p, nbytes == 0 ? 1 : nbytes, cudaHostAllocDefault));
  return p;
}
void host_release_pinned(void* ptr) {
  if (ptr) (void)cudaFreeHost(ptr);
}

void memcpy_async(void* dst, const void* src, size_t nbytes, bool dst_dev, bool src_dev, int device, uintptr_t stream) {
  if (nbytes == 0) return;
  use_device(device);
  const cudaMemcpyKind kind = dst_dev ? (src_dev ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                                      : (src_dev ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
  ST_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, kind, reinterpret_cast<cudaStream_t>(stream)));
}

}  // namespace st::cuda
