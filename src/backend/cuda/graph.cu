// CUDA graph capture and replay (include/spiraltorch/cuda.h: st::cuda::Graph).
#include <cuda_runtime.h>

#include <string>

#include "backend/cuda/common.cuh"
#include "backend/cuda/stream_pool.h"
#include "spiraltorch/cuda.h"
#include "spiraltorch/error.h"

namespace st::cuda {

bool is_current_stream_capturing(int device) {
  if (!is_available()) return false;
  device = detail::checked_device(device, "cuda.is_current_stream_capturing");
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  ST_CUDA_CHECK(cudaStreamIsCapturing(backend::cuda::t_stream_of(device), &status));
  return status == cudaStreamCaptureStatusActive;
}

struct Graph::Impl {
  int device = -1;
  cudaStream_t stream = nullptr;  // capture and replay stream; its allocations are the private pool
  cudaStream_t caller = nullptr;  // the thread's stream before capture_begin
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaEvent_t inputs_ready = nullptr, outputs_ready = nullptr;
  bool capturing = false;

  // Ends a capture that failed (ignoring what the driver says, the capture is void anyway).
  void abandon_capture() {
    cudaGraph_t g = nullptr;
    (void)cudaStreamEndCapture(stream, &g);
    if (g) cudaGraphDestroy(g);
    (void)cudaGetLastError();
    backend::cuda::set_stream_of(device, caller);
    capturing = false;
  }

  void destroy() {
    if (device < 0) return;
    backend::cuda::use_device(device);
    if (capturing) abandon_capture();
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    if (stream) {
      cudaStreamSynchronize(stream);
      detail::release_stream_pool(device, stream);
      cudaStreamDestroy(stream);
    }
    if (inputs_ready) cudaEventDestroy(inputs_ready);
    if (outputs_ready) cudaEventDestroy(outputs_ready);
    (void)cudaGetLastError();
    *this = Impl{};
  }
};

Graph::Graph() : impl_(std::make_unique<Impl>()) {}
Graph::~Graph() { impl_->destroy(); }

void Graph::capture_begin(int device) {
  Impl& g = *impl_;
  if (g.capturing || g.exec) {
    throw SpiralError("cuda.CUDAGraph.capture_begin: this graph already holds a capture; call reset() first");
  }
  device = detail::checked_device(device, "cuda.CUDAGraph.capture_begin");
  backend::cuda::use_device(device);
  if (is_current_stream_capturing(device)) {
    throw SpiralError("cuda.CUDAGraph.capture_begin: cuda:" + std::to_string(device) +
                      "'s current stream is already being captured (graphs do not nest)");
  }
  g.device = device;
  ST_CUDA_CHECK(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
  detail::reserve_stream_pool(device, g.stream);
  ST_CUDA_CHECK(cudaEventCreateWithFlags(&g.inputs_ready, cudaEventDisableTiming));
  ST_CUDA_CHECK(cudaEventCreateWithFlags(&g.outputs_ready, cudaEventDisableTiming));
  // Whatever the device still runs (writes to static inputs from any stream) is done before the
  // captured work can be launched; capturing is rare enough for a device-wide wait.
  ST_CUDA_CHECK(cudaDeviceSynchronize());
  g.caller = backend::cuda::t_stream_of(device);
  backend::cuda::set_stream_of(device, g.stream);
  // Relaxed: the caching allocator may still cudaMalloc new blocks for the graph's pool.
  const cudaError_t err = cudaStreamBeginCapture(g.stream, cudaStreamCaptureModeRelaxed);
  if (err != cudaSuccess) {
    backend::cuda::set_stream_of(device, g.caller);
    g.destroy();
    backend::cuda::throw_cuda(err, "cudaStreamBeginCapture", __FILE__, __LINE__);
  }
  g.capturing = true;
}

namespace {
// Without a usable device every entry refuses the way the CPU-only build's does.
void require_cuda(const char* op) {
  if (!is_available())
    throw DeviceUnavailableError(std::string(op) + ": CUDA is not available: " + unavailable_reason());
}
}  // namespace

void Graph::capture_end() {
  Impl& g = *impl_;
  require_cuda("cuda.CUDAGraph.capture_end");
  if (!g.capturing) throw SpiralError("cuda.CUDAGraph.capture_end: no capture is in progress (call capture_begin())");
  backend::cuda::use_device(g.device);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  (void)cudaStreamIsCapturing(g.stream, &status);
  const cudaError_t err = cudaStreamEndCapture(g.stream, &g.graph);
  backend::cuda::set_stream_of(g.device, g.caller);
  g.capturing = false;
  if (err != cudaSuccess || status != cudaStreamCaptureStatusActive || !g.graph) {
    const std::string why = cudaGetErrorString(err);
    g.destroy();
    throw SpiralError("cuda.CUDAGraph.capture_end: the capture was invalidated (" + why +
                      "): an operation in the captured region synchronised with the host or used another stream "
                      "(reading a value with .item()/.tolist(), copying from host memory, a host-side check)");
  }
  const cudaError_t inst = cudaGraphInstantiate(&g.exec, g.graph, 0);
  if (inst != cudaSuccess) {
    g.destroy();
    backend::cuda::throw_cuda(inst, "cudaGraphInstantiate", __FILE__, __LINE__);
  }
}

void Graph::replay() {
  Impl& g = *impl_;
  require_cuda("cuda.CUDAGraph.replay");
  if (!g.exec) {
    throw SpiralError(g.capturing ? "cuda.CUDAGraph.replay: the capture has not ended (call capture_end())"
                                  : "cuda.CUDAGraph.replay: nothing has been captured");
  }
  backend::cuda::use_device(g.device);
  const cudaStream_t caller = backend::cuda::t_stream_of(g.device);
  // Ordered after the caller's queued work (new data copied into static inputs) and before its
  // later work (reading the outputs), as if the captured kernels ran on the caller's stream.
  ST_CUDA_CHECK(cudaEventRecord(g.inputs_ready, caller));
  ST_CUDA_CHECK(cudaStreamWaitEvent(g.stream, g.inputs_ready, 0));
  ST_CUDA_CHECK(cudaGraphLaunch(g.exec, g.stream));
  ST_CUDA_CHECK(cudaEventRecord(g.outputs_ready, g.stream));
  ST_CUDA_CHECK(cudaStreamWaitEvent(caller, g.outputs_ready, 0));
}

void Graph::reset() { impl_->destroy(); }
bool Graph::is_captured() const { return impl_->exec != nullptr; }
bool Graph::is_capturing() const { return impl_->capturing; }

int64_t Graph::num_nodes() const {
  if (!impl_->graph) return 0;
  size_t n = 0;
  ST_CUDA_CHECK(cudaGraphGetNodes(impl_->graph, nullptr, &n));
  return static_cast<int64_t>(n);
}

}  // namespace st::cuda
