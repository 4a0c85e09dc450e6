// spiraltorch._core wgpu functions (python/spiraltorch/wgpu.py wraps them).
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "convert.h"
#include "spiraltorch/wgpu.h"

namespace stpy {

void bind_wgpu(nb::module_& m) {
  namespace wg = st::wgpu;
  m.def("_wgpu_is_built", &wg::is_built, "Whether this build has the wgpu (WebGPU) backend.");
  m.def("_wgpu_is_available", [] {
    nb::gil_scoped_release nogil;  // the first call creates the device
    return wg::is_available();
  }, "Whether a WebGPU adapter and device can be created (the first call creates them).");
  m.def("_wgpu_unavailable_reason", &wg::unavailable_reason, "Why wgpu is unavailable ('' when it is available).");
  m.def("_wgpu_adapter_info", [] {
    const wg::AdapterInfo a = wg::adapter_info();
    nb::dict r;
    r["name"] = a.name;
    r["vendor"] = a.vendor;
    r["architecture"] = a.architecture;
    r["driver"] = a.driver;
    r["backend"] = a.backend;
    r["adapter_type"] = a.adapter_type;
    r["library"] = a.library;
    r["vendor_id"] = a.vendor_id;
    r["device_id"] = a.device_id;
    nb::dict lim;
    lim["max_buffer_size"] = a.max_buffer_size;
    lim["max_storage_buffer_binding_size"] = a.max_storage_buffer_binding_size;
    lim["max_compute_workgroup_size_x"] = a.max_compute_workgroup_size_x;
    lim["max_compute_invocations_per_workgroup"] = a.max_compute_invocations_per_workgroup;
    lim["max_compute_workgroup_storage_size"] = a.max_compute_workgroup_storage_size;
    lim["max_compute_workgroups_per_dimension"] = a.max_compute_workgroups_per_dimension;
    lim["max_storage_buffers_per_shader_stage"] = a.max_storage_buffers_per_shader_stage;
    r["limits"] = lim;
    r["features"] = a.features;
    return r;
  }, "The adapter's name, vendor, architecture, driver, backend, ids, limits and features.");
  m.def("_wgpu_synchronize", [] {
    nb::gil_scoped_release nogil;
    wg::synchronize();
  }, "Waits until the wgpu queue has finished all submitted work.");
  m.def("_wgpu_memory_allocated", &wg::memory_allocated, "Bytes of device buffers handed out to tensors.");
  m.def("_wgpu_max_memory_allocated", &wg::max_memory_allocated,
        "The peak of memory_allocated since start or the last reset.");
  m.def("_wgpu_memory_reserved", &wg::memory_reserved, "Bytes held in device buffers (in use plus cached).");
  m.def("_wgpu_reset_peak_memory_stats", &wg::reset_peak_memory_stats,
        "Restarts the peak of max_memory_allocated from the current value.");
  m.def("_wgpu_empty_cache", &wg::empty_cache, "Destroys cached, unused device buffers.");
  m.def("_wgpu_pipelines_compiled", &wg::pipelines_compiled,
        "Compute pipelines created so far (the pipeline cache size).");
  m.def("_wgpu_dispatches", &wg::dispatches, "Kernels dispatched so far.");
  m.def("_wgpu_host_reads", &wg::host_reads, "Device-to-host reads so far that waited for the queue to drain.");
}

}  // namespace stpy
