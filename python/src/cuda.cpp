// spiraltorch._core CUDA functions (python/spiraltorch/cuda.py wraps them).
#include <nanobind/stl/pair.h>

#include "convert.h"
#include "spiraltorch/cuda.h"

namespace stpy {

void bind_cuda(nb::module_& m) {
  namespace cu = st::cuda;
  m.def("_cuda_is_built", &cu::is_built, "Whether this build has the CUDA backend.");
  m.def("_cuda_is_available", &cu::is_available,
        "Whether the CUDA backend is built and a driver with at least one device is present.");
  m.def("_cuda_unavailable_reason", &cu::unavailable_reason, "Why CUDA is unavailable ('' when it is available).");
  m.def("_cuda_device_count", &cu::device_count, "The number of CUDA devices (0 when unavailable).");
  m.def("_cuda_current_device", &cu::current_device, "This thread's current CUDA device.");
  m.def("_cuda_set_device", &cu::set_device, nb::arg("device"), "Sets this thread's current CUDA device.");
  m.def("_cuda_synchronize", [](int d) {
    nb::gil_scoped_release nogil;
    cu::synchronize(d);
  }, nb::arg("device") = -1, "Waits for all work on `device` (-1: the current one).");
  m.def("_cuda_properties", [](int d) {
    const cu::DeviceProperties p = cu::properties(d);
    nb::dict r;
    r["name"] = p.name;
    r["total_memory"] = p.total_memory;
    r["major"] = p.major;
    r["minor"] = p.minor;
    r["multi_processor_count"] = p.multiprocessors;
    r["l2_cache_size"] = p.l2_cache;
    r["driver_version"] = p.driver_version;
    r["runtime_version"] = p.runtime_version;
    return r;
  }, nb::arg("device"), "Name, memory, compute capability, SM count, L2 size and driver/runtime versions of `device`.");
  m.def("_cuda_mem_get_info", &cu::mem_get_info, nb::arg("device"),
        "(free, total) bytes of device memory as the driver reports them.");
  m.def("_cuda_memory_allocated", &cu::memory_allocated, nb::arg("device") = -1,
        "Bytes the caching allocator has handed out to tensors on `device` (-1: current).");
  m.def("_cuda_max_memory_allocated", &cu::max_memory_allocated, nb::arg("device") = -1,
        "The peak of memory_allocated since start or the last reset.");
  m.def("_cuda_memory_reserved", &cu::memory_reserved, nb::arg("device") = -1,
        "Bytes held from cudaMalloc on `device` (in use plus cached).");
  m.def("_cuda_reset_peak_memory_stats", &cu::reset_peak_memory_stats, nb::arg("device") = -1,
        "Restarts the peak of max_memory_allocated from the current value.");
  m.def("_cuda_empty_cache", &cu::empty_cache, "Returns the caching allocator's unused blocks to the driver.");
  m.def("_cuda_allow_tf32", &cu::allow_tf32, "Whether float32 GEMMs may use TF32 tensor cores.");
  m.def("_cuda_set_allow_tf32", &cu::set_allow_tf32, nb::arg("allow"), "Allows or forbids TF32 for float32 GEMMs.");
  m.def("_cuda_flash_sdp_enabled", &cu::flash_sdp_enabled,
        "Whether scaled_dot_product_attention may use the fused (flash) kernel.");
  m.def("_cuda_set_flash_sdp_enabled", &cu::set_flash_sdp_enabled, nb::arg("enabled"),
        "Enables or disables the fused attention kernel.");
  m.def("_cuda_cudnn_sdp_enabled", &cu::cudnn_sdp_enabled,
        "Whether scaled_dot_product_attention may use cuDNN's fused attention.");
  m.def("_cuda_set_cudnn_sdp_enabled", &cu::set_cudnn_sdp_enabled, nb::arg("enabled"),
        "Enables or disables cuDNN's fused attention.");
  m.def("_cuda_cudnn_attention_built", &cu::cudnn_attention_built,
        "Whether this build has cuDNN's graph API for attention.");
  m.def("_cudnn_version", &cu::cudnn_version, "The cuDNN version string ('' without cuDNN).");
  m.def("_cudnn_enabled", &cu::cudnn_enabled, "Whether convolutions, RNNs and attention may use cuDNN.");
  m.def("_cudnn_set_enabled", &cu::set_cudnn_enabled, nb::arg("enabled"), "Enables or disables cuDNN.");
  m.def("_cudnn_benchmark", &cu::cudnn_benchmark, "Whether cuDNN autotunes algorithms per shape.");
  m.def("_cudnn_set_benchmark", &cu::set_cudnn_benchmark, nb::arg("on"), "Turns cuDNN autotuning on or off.");
  m.def("_cuda_gemm_tuning", &cu::gemm_tuning, "Whether cuBLASLt GEMMs time their candidate algorithms per shape.");
  m.def("_cuda_set_gemm_tuning", &cu::set_gemm_tuning, nb::arg("on"), "Turns cuBLASLt GEMM tuning on or off.");
  m.def("_cudnn_allow_tf32", &cu::cudnn_allow_tf32, "Whether cuDNN convolutions may use TF32.");
  m.def("_cudnn_set_allow_tf32", &cu::set_cudnn_allow_tf32, nb::arg("allow"),
        "Allows or forbids TF32 in cuDNN convolutions.");
  m.def("_cuda_current_stream", &cu::current_stream, nb::arg("device"),
        "The handle of the current stream of `device` (0: the legacy default stream).");
  m.def("_cuda_set_current_stream", &cu::set_current_stream, nb::arg("device"), nb::arg("stream"),
        "Makes `stream` the current stream of `device`.");
  m.def("_cuda_stream_create", &cu::stream_create, nb::arg("device"), nb::arg("priority") = 0,
        "A new non-blocking stream on `device`; returns its handle.");
  m.def("_cuda_stream_destroy", &cu::stream_destroy, nb::arg("stream"),
        "Destroys a stream made by _cuda_stream_create.");
  m.def("_cuda_stream_synchronize", [](uintptr_t s) {
    nb::gil_scoped_release nogil;
    cu::stream_synchronize(s);
  }, nb::arg("stream"), "Waits on the host until `stream` is idle.");
  m.def("_cuda_stream_query", &cu::stream_query, nb::arg("stream"),
        "Whether all work queued on `stream` has finished.");
  m.def("_cuda_stream_wait_event", &cu::stream_wait_event, nb::arg("stream"), nb::arg("event"),
        "Makes `stream` wait for `event` (no host wait).");
  m.def("_cuda_event_create", &cu::event_create, nb::arg("device"), nb::arg("timing"),
        "A new event on `device` (timing=True to measure elapsed time).");
  m.def("_cuda_event_destroy", &cu::event_destroy, nb::arg("event"), "Destroys an event.");
  m.def("_cuda_event_record", &cu::event_record, nb::arg("event"), nb::arg("stream"), "Records `event` on `stream`.");
  m.def("_cuda_event_synchronize", [](uintptr_t e) {
    nb::gil_scoped_release nogil;
    cu::event_synchronize(e);
  }, nb::arg("event"), "Waits on the host until `event` has completed.");
  m.def("_cuda_event_query", &cu::event_query, nb::arg("event"), "Whether the work before `event` has finished.");
  m.def("_cuda_event_elapsed_ms", &cu::event_elapsed_ms, nb::arg("start"), nb::arg("end"),
        "Milliseconds between two recorded timing events.");
  m.def("_cuda_is_current_stream_capturing", &cu::is_current_stream_capturing, nb::arg("device") = -1,
        "Whether the current stream of `device` is capturing a CUDA graph.");
  nb::class_<cu::Graph>(m, "_CUDAGraph", "A captured CUDA graph (spiraltorch.cuda.CUDAGraph wraps it).")
      .def(nb::init<>(), "An empty graph.")
      .def("capture_begin", &cu::Graph::capture_begin, nb::arg("device") = -1,
           "Starts capturing the current stream's work; memory allocated during the capture comes from a pool "
           "private to the graph.")
      .def("capture_end", &cu::Graph::capture_end,
           "Ends the capture and instantiates the graph; raises (and keeps nothing) when an operation was not "
           "capturable.")
      .def("replay",
           [](cu::Graph& g) {
    nb::gil_scoped_release nogil;
    g.replay();
  }, "Launches the captured work after what is already queued on the current stream.")
      .def("reset", &cu::Graph::reset, "Drops the graph and gives its private memory back to the allocator.")
      .def("is_captured", &cu::Graph::is_captured, "Whether a graph has been captured and instantiated.")
      .def("is_capturing", &cu::Graph::is_capturing, "Whether a capture is in progress.")
      .def("num_nodes", &cu::Graph::num_nodes, "Kernel, copy and memset nodes in the captured graph.");
  m.def("to_device", [](const Tensor& t, const std::string& dev) { return st::to_device(t, st::Device::parse(dev)); },
        nb::arg("input"), nb::arg("device"),
        "input copied to `device` ('cpu', 'cuda:<i>', 'wgpu'), input itself when already there; autograd flows "
        "through. DeviceUnavailableError for a device this build or machine lacks, ValueError for a bad name.");
}

}  // namespace stpy
