#pragma once
// The CUDA runtime surface: availability, devices, streams, events and the caching
// allocator. Every function exists in every build; a build without the CUDA backend
// (or a machine without a GPU) reports CUDA as unavailable with the reason, and
// functions that need a device throw DeviceUnavailableError.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace st::cuda {

bool is_built();                   // compiled with the CUDA backend
bool is_available();               // built, and a driver with at least one device is present
std::string unavailable_reason();  // why is_available() is false ("" when it is true)
int device_count();                // 0 when unavailable
int current_device();
void set_device(int device);
void synchronize(int device = -1);  // -1: the current device

struct DeviceProperties {
  std::string name;
  size_t total_memory = 0;
  int major = 0, minor = 0;
  int multiprocessors = 0;
  size_t l2_cache = 0;
  int driver_version = 0, runtime_version = 0;
};
DeviceProperties properties(int device);
// (free, total) bytes as the driver reports them.
std::pair<size_t, size_t> mem_get_info(int device);

// ---- caching allocator ----
void* allocate(size_t nbytes, int device);
void release(void* ptr, int device);
size_t memory_allocated(int device);      // bytes handed out to tensors
size_t max_memory_allocated(int device);  // peak of the above since start / reset
size_t memory_reserved(int device);       // bytes held from cudaMalloc (in use + cached)
void reset_peak_memory_stats(int device);
void empty_cache();  // returns cached, unused blocks to the driver (a live graph's private pool stays)

// ---- matmul precision ----
bool allow_tf32();
void set_allow_tf32(bool allow);
// Whether scaled-dot-product attention may take the fused flash kernels on CUDA (default true;
// like torch.backends.cuda.enable_flash_sdp). Off: the GEMM + softmax path.
bool flash_sdp_enabled();
void set_flash_sdp_enabled(bool enabled);
// Whether it may take cuDNN's fused attention (its graph API, float16/bfloat16) where the build has
// it and cuDNN takes the operands (default true; like torch.backends.cuda.enable_cudnn_sdp). It is
// tried before the flash kernels; off, or where cuDNN declines, the flash switch above decides.
bool cudnn_sdp_enabled();
void set_cudnn_sdp_enabled(bool enabled);
// Whether this build has cuDNN's graph API for attention (cudnn-frontend found when it was built).
bool cudnn_attention_built();

// Algorithm choice of the cuBLASLt GEMMs (nn.Linear and its fused epilogues): false = the
// heuristic's first algorithm, true = time up to eight of the heuristic's candidates once per shape
// on the call's own operands (outside graph capture; median of five cold-L2 runs) and keep the
// fastest where it beats the first by 3% (torch.cuda.tunable).
// The choice may differ between processes, and so may results' last bits. Default false.
bool gemm_tuning();
void set_gemm_tuning(bool on);

// ---- cuDNN (conv2d on CUDA) ----
// The cuDNN version the library runs with ("9.10.2"), or "" when the build has none.
std::string cudnn_version();
// Whether CUDA conv2d goes to cuDNN (default true where built; false: im2col + cuBLAS).
bool cudnn_enabled();
void set_cudnn_enabled(bool enabled);
// Algorithm choice per shape: false = cuDNN's heuristic ranking, true = time every algorithm
// once per shape and keep the fastest (torch.backends.cudnn.benchmark).
bool cudnn_benchmark();
void set_cudnn_benchmark(bool on);
// TF32 tensor cores for float32 convolutions (default true, like torch.backends.cudnn.allow_tf32).
bool cudnn_allow_tf32();
void set_cudnn_allow_tf32(bool allow);

// ---- streams and events (opaque handles; stream 0 is the legacy default stream) ----
uintptr_t current_stream(int device);
void set_current_stream(int device, uintptr_t stream);
uintptr_t stream_create(int device, int priority = 0);
void stream_destroy(uintptr_t stream);
void stream_synchronize(uintptr_t stream);
bool stream_query(uintptr_t stream);
void stream_wait_event(uintptr_t stream, uintptr_t event);
uintptr_t event_create(int device, bool timing);
void event_destroy(uintptr_t event);
void event_record(uintptr_t event, uintptr_t stream);
void event_synchronize(uintptr_t event);
bool event_query(uintptr_t event);
float event_elapsed_ms(uintptr_t start, uintptr_t end);

// Copies nbytes between host and device memory (or device to device) on the current
// stream; copies that land in host memory are complete on return.
void memcpy(void* dst, const void* src, size_t nbytes, bool dst_on_device, bool src_on_device, int device);

// ---- pinned host memory and asynchronous copies (staging buffers of the data pipeline) ----
void* host_allocate_pinned(size_t nbytes);
void host_release_pinned(void* ptr);
// Enqueues a copy on `stream` and returns at once; the source must stay alive (and, for pinned
// host memory, unchanged) until an event recorded after it has fired.
void memcpy_async(void* dst, const void* src, size_t nbytes, bool dst_on_device, bool src_on_device, int device,
                  uintptr_t stream);

// ---- CUDA graphs ----
// Whether this thread's current stream on `device` (-1: the current device) is being captured
// into a graph. Work that would synchronise with the host (reading a value, a bounds check on
// the host) is skipped or refused while it is, because such a call invalidates the capture.
bool is_current_stream_capturing(int device = -1);

// Records the work this thread queues on a device between capture_begin() and capture_end() and
// replays it with one launch (torch.cuda.CUDAGraph). The capture runs on the graph's own stream,
// so memory allocated during it comes from a pool private to the graph: the addresses the graph
// reads and writes stay reserved until reset(). Tensors created before the capture and used by
// it (static inputs, parameters) must stay alive while the graph is replayed; to feed new data,
// copy it into them.
class Graph {
 public:
  Graph();
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  void capture_begin(int device = -1);
  // Ends the capture and instantiates the graph; throws (and leaves nothing captured) when an
  // operation during the capture was not capturable.
  void capture_end();
  // Launches the captured work after everything already queued on the current stream; later work
  // on the current stream sees its results.
  void replay();
  // Drops the graph and gives its private memory back to the caching allocator.
  void reset();
  bool is_captured() const;
  bool is_capturing() const;
  int64_t num_nodes() const;  // kernel, copy and memset nodes in the captured graph

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace st::cuda
