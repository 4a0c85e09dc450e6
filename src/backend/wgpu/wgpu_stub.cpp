// Built instead of the wgpu backend when it is not compiled in (SPIRALTORCH_WGPU=OFF or no
// webgpu.h headers at configure time): wgpu is reported unavailable, with the reason.
#include "backend/backend.h"
#include "spiraltorch/error.h"
#include "spiraltorch/wgpu.h"

#ifndef SPIRALTORCH_WGPU_REASON
#define SPIRALTORCH_WGPU_REASON "the wgpu backend is not compiled into this build"
#endif

namespace st::wgpu {
bool is_built() { return false; }
bool is_available() { return false; }
std::string unavailable_reason() { return SPIRALTORCH_WGPU_REASON; }
AdapterInfo adapter_info() {
  throw DeviceUnavailableError(std::string("wgpu.adapter_info: wgpu is not available: ") + SPIRALTORCH_WGPU_REASON);
}
void synchronize() {
  throw DeviceUnavailableError(std::string("wgpu.synchronize: wgpu is not available: ") + SPIRALTORCH_WGPU_REASON);
}
size_t memory_allocated() { return 0; }
size_t max_memory_allocated() { return 0; }
size_t memory_reserved() { return 0; }
void reset_peak_memory_stats() {}
void empty_cache() {}
size_t pipelines_compiled() { return 0; }
uint64_t dispatches() { return 0; }
uint64_t host_reads() { return 0; }
void* allocate(size_t) {
  throw DeviceUnavailableError(std::string("wgpu.allocate: wgpu is not available: ") + SPIRALTORCH_WGPU_REASON);
}
void release(void*) {}
}  // namespace st::wgpu

namespace st::backend {
Backend& wgpu_backend(int index) {
  throw DeviceUnavailableError("backend: device wgpu:" + std::to_string(index) +
                               " is not available: " + SPIRALTORCH_WGPU_REASON);
}
}  // namespace st::backend
