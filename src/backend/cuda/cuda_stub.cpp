// Built instead of src/backend/cuda/*.cu when the CUDA backend is not compiled in
// (SPIRALTORCH_CUDA=OFF or no CUDA compiler): CUDA is reported unavailable, with the reason.
#include "backend/backend.h"
#include "spiraltorch/cuda.h"
#include "spiraltorch/error.h"

#ifndef SPIRALTORCH_CUDA_REASON
#define SPIRALTORCH_CUDA_REASON "the CUDA backend is not compiled into this build"
#endif

namespace st::cuda {
namespace {
[[noreturn]] void unavailable(const char* what) {
  throw DeviceUnavailableError(std::string("cuda.") + what + ": CUDA is not available: " + SPIRALTORCH_CUDA_REASON);
}
}  // namespace

bool is_built() { return false; }
bool is_available() { return false; }
std::string unavailable_reason() { return SPIRALTORCH_CUDA_REASON; }
int device_count() { return 0; }
int current_device() { unavailable("current_device"); }
void set_device(int) { unavailable("set_device"); }
void synchronize(int) { unavailable("synchronize"); }
DeviceProperties properties(int) { unavailable("get_device_properties"); }
std::pair<size_t, size_t> mem_get_info(int) { unavailable("mem_get_info"); }
void* allocate(size_t, int) { unavailable("allocate"); }
void release(void*, int) {}
size_t memory_allocated(int) { return 0; }
size_t max_memory_allocated(int) { return 0; }
size_t memory_reserved(int) { return 0; }
void reset_peak_memory_stats(int) {}
void empty_cache() {}
static bool g_tf32 = false;
bool allow_tf32() { return g_tf32; }
void set_allow_tf32(bool a) { g_tf32 = a; }
static bool g_flash_sdp = true;
bool flash_sdp_enabled() { return g_flash_sdp; }
void set_flash_sdp_enabled(bool e) { g_flash_sdp = e; }
static bool g_cudnn_sdp = true;
bool cudnn_sdp_enabled() { return g_cudnn_sdp; }
bool cudnn_attention_built() { return false; }
void set_cudnn_sdp_enabled(bool e) { g_cudnn_sdp = e; }
// The cuDNN switches keep their values without a GPU so settings made before a device
// exists (or in CPU-only builds) read back as set.
static bool g_cudnn_enabled = true, g_cudnn_benchmark = false, g_cudnn_tf32 = true;
std::string cudnn_version() { return ""; }
bool cudnn_enabled() { return g_cudnn_enabled; }
void set_cudnn_enabled(bool e) { g_cudnn_enabled = e; }
bool cudnn_benchmark() { return g_cudnn_benchmark; }
void set_cudnn_benchmark(bool on) { g_cudnn_benchmark = on; }
bool cudnn_allow_tf32() { return g_cudnn_tf32; }
static bool g_gemm_tuning = false;
bool gemm_tuning() { return g_gemm_tuning; }
void set_gemm_tuning(bool on) { g_gemm_tuning = on; }
void set_cudnn_allow_tf32(bool a) { g_cudnn_tf32 = a; }
uintptr_t current_stream(int) { unavailable("current_stream"); }
void set_current_stream(int, uintptr_t) { unavailable("set_stream"); }
uintptr_t stream_create(int, int) { unavailable("Stream"); }
void stream_destroy(uintptr_t) {}
void stream_synchronize(uintptr_t) { unavailable("Stream.synchronize"); }
bool stream_query(uintptr_t) { unavailable("Stream.query"); }
void stream_wait_event(uintptr_t, uintptr_t) { unavailable("Stream.wait_event"); }
uintptr_t event_create(int, bool) { unavailable("Event"); }
void event_destroy(uintptr_t) {}
void event_record(uintptr_t, uintptr_t) { unavailable("Event.record"); }
void event_synchronize(uintptr_t) { unavailable("Event.synchronize"); }
bool event_query(uintptr_t) { unavailable("Event.query"); }
float event_elapsed_ms(uintptr_t, uintptr_t) { unavailable("Event.elapsed_time"); }
void memcpy(void*, const void*, size_t, bool, bool, int) { unavailable("memcpy"); }
void* host_allocate_pinned(size_t) { unavailable("host_allocate_pinned"); }
void host_release_pinned(void*) {}
void memcpy_async(void*, const void*, size_t, bool, bool, int, uintptr_t) { unavailable("memcpy_async"); }

bool is_current_stream_capturing(int) { return false; }
struct Graph::Impl {};
Graph::Graph() : impl_(std::make_unique<Impl>()) {}
Graph::~Graph() = default;
void Graph::capture_begin(int) { unavailable("CUDAGraph.capture_begin"); }
void Graph::capture_end() { unavailable("CUDAGraph.capture_end"); }
void Graph::replay() { unavailable("CUDAGraph.replay"); }
void Graph::reset() {}
bool Graph::is_captured() const { return false; }
bool Graph::is_capturing() const { return false; }
int64_t Graph::num_nodes() const { return 0; }
}  // namespace st::cuda

namespace st::backend {
Backend& cuda_backend(int index) {
  throw DeviceUnavailableError("backend: device cuda:" + std::to_string(index) +
                               " is not available: " + SPIRALTORCH_CUDA_REASON);
}
}  // namespace st::backend
