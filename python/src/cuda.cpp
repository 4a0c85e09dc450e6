// spiraltorch._core CUDA functions (python/spiraltorch/cuda.py wraps them).
#include <nanobind/stl/pair.h>

#include "convert.h"
#include "spiraltorch/cuda.h"

namespace stpy {

void bind_cuda(nb::module_& m) {
  namespace cu = st::cuda;
  m.def("_cuda_is_built", &cu::is_built);
  m.def("_cuda_is_available", &cu::is_available);
  m.def("_cuda_unavailable_reason", &cu::unavailable_reason);
  m.def("_cuda_device_count", &cu::device_count);
  m.def("_cuda_current_device", &cu::current_device);
  m.def("_cuda_set_device", &cu::set_device);
  m.def("_cuda_synchronize", [](int d) {
    nb::gil_scoped_release nogil;
    cu::synchronize(d);
  }, nb::arg("device") = -1);
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
  });
  m.def("_cuda_mem_get_info", &cu::mem_get_info);
  m.def("_cuda_memory_allocated", &cu::memory_allocated, nb::arg("device") = -1);
  m.def("_cuda_max_memory_allocated", &cu::max_memory_allocated, nb::arg("device") = -1);
  m.def("_cuda_memory_reserved", &cu::memory_reserved, nb::arg("device") = -1);
  m.def("_cuda_reset_peak_memory_stats", &cu::reset_peak_memory_stats, nb::arg("device") = -1);
  m.def("_cuda_empty_cache", &cu::empty_cache);
  m.def("_cuda_allow_tf32", &cu::allow_tf32);
  m.def("_cuda_set_allow_tf32", &cu::set_allow_tf32);
  m.def("_cuda_flash_sdp_enabled", &cu::flash_sdp_enabled);
  m.def("_cuda_set_flash_sdp_enabled", &cu::set_flash_sdp_enabled);
  m.def("_cudnn_version", &cu::cudnn_version);
  m.def("_cudnn_enabled", &cu::cudnn_enabled);
  m.def("_cudnn_set_enabled", &cu::set_cudnn_enabled);
  m.def("_cudnn_benchmark", &cu::cudnn_benchmark);
  m.def("_cudnn_set_benchmark", &cu::set_cudnn_benchmark);
  m.def("_cudnn_allow_tf32", &cu::cudnn_allow_tf32);
  m.def("_cudnn_set_allow_tf32", &cu::set_cudnn_allow_tf32);
  m.def("_cuda_current_stream", &cu::current_stream);
  m.def("_cuda_set_current_stream", &cu::set_current_stream);
  m.def("_cuda_stream_create", &cu::stream_create, nb::arg("device"), nb::arg("priority") = 0);
  m.def("_cuda_stream_destroy", &cu::stream_destroy);
  m.def("_cuda_stream_synchronize", [](uintptr_t s) {
    nb::gil_scoped_release nogil;
    cu::stream_synchronize(s);
  });
  m.def("_cuda_stream_query", &cu::stream_query);
  m.def("_cuda_stream_wait_event", &cu::stream_wait_event);
  m.def("_cuda_event_create", &cu::event_create);
  m.def("_cuda_event_destroy", &cu::event_destroy);
  m.def("_cuda_event_record", &cu::event_record);
  m.def("_cuda_event_synchronize", [](uintptr_t e) {
    nb::gil_scoped_release nogil;
    cu::event_synchronize(e);
  });
  m.def("_cuda_event_query", &cu::event_query);
  m.def("_cuda_event_elapsed_ms", &cu::event_elapsed_ms);
  m.def("_cuda_is_current_stream_capturing", &cu::is_current_stream_capturing, nb::arg("device") = -1);
  nb::class_<cu::Graph>(m, "_CUDAGraph")
      .def(nb::init<>())
      .def("capture_begin", &cu::Graph::capture_begin, nb::arg("device") = -1)
      .def("capture_end", &cu::Graph::capture_end)
      .def("replay", [](cu::Graph& g) {
        nb::gil_scoped_release nogil;
        g.replay();
      })
      .def("reset", &cu::Graph::reset)
      .def("is_captured", &cu::Graph::is_captured)
      .def("is_capturing", &cu::Graph::is_capturing)
      .def("num_nodes", &cu::Graph::num_nodes);
  m.def("to_device", [](const Tensor& t, const std::string& dev) { return st::to_device(t, st::Device::parse(dev)); });
}

}  // namespace stpy
