#pragma once
// The WGPU runtime surface (WebGPU through wgpu-native: Vulkan, Metal, DX12). Every function
// exists in every build; a build without the backend, or a machine where wgpu-native finds
// no adapter, reports wgpu as unavailable with the reason, and functions that need a device
// throw DeviceUnavailableError.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace st::wgpu {

bool is_built();                   // compiled with the wgpu backend (the webgpu.h headers were found)
bool is_available();               // built, libwgpu_native loaded and an adapter + device obtained
std::string unavailable_reason();  // why is_available() is false ("" when it is true)

struct AdapterInfo {
  std::string name, vendor, architecture, driver, backend, adapter_type, library;
  uint32_t vendor_id = 0, device_id = 0;
  uint64_t max_buffer_size = 0, max_storage_buffer_binding_size = 0;
  uint32_t max_compute_workgroup_size_x = 0, max_compute_invocations_per_workgroup = 0,
           max_compute_workgroup_storage_size = 0, max_compute_workgroups_per_dimension = 0,
           max_storage_buffers_per_shader_stage = 0;
  std::vector<std::string> features;
};
AdapterInfo adapter_info();  // throws DeviceUnavailableError when unavailable

// Waits until every submitted kernel has finished (the host reads of tensors already do).
void synchronize();

// ---- caching allocator ----
size_t memory_allocated();      // bytes handed out to tensors
size_t max_memory_allocated();  // peak of the above since start / reset
size_t memory_reserved();       // bytes held in device buffers (in use + cached)
void reset_peak_memory_stats();
void empty_cache();           // destroys cached, unused buffers
size_t pipelines_compiled();  // compute pipelines created so far (the pipeline cache's size)
uint64_t dispatches();        // kernels dispatched so far
uint64_t host_reads();        // device-to-host reads so far that waited for the queue to drain (not read_later's)

// Allocation for Storage: a device-virtual address (never dereferenced on the host) that the
// backend resolves to (buffer, byte offset).
void* allocate(size_t nbytes);
void release(void* ptr);

}  // namespace st::wgpu
