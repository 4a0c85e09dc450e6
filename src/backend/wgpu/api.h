#pragma once
// wgpu-native's C API (webgpu.h / wgpu.h from PyPI's `wgpu` wheel), loaded at run time with
// dlopen: a build with the headers but a machine without the library imports fine and
// reports wgpu as unavailable, with the reason, instead of failing to load the module.
#include <string>

#include <webgpu.h>
#include <wgpu.h>

namespace st::backend::wgpu {

// clang-format off: one entry per line (the formatter joins an X-macro list into ragged rows)
#define ST_WGPU_FUNCTIONS(X) \
  X(wgpuCreateInstance) \
  X(wgpuInstanceRequestAdapter) \
  X(wgpuInstanceProcessEvents) \
  X(wgpuInstanceRelease) \
  X(wgpuAdapterGetInfo) \
  X(wgpuAdapterInfoFreeMembers) \
  X(wgpuAdapterGetLimits) \
  X(wgpuAdapterGetFeatures) \
  X(wgpuSupportedFeaturesFreeMembers) \
  X(wgpuAdapterHasFeature) \
  X(wgpuAdapterRequestDevice) \
  X(wgpuAdapterRelease) \
  X(wgpuDeviceGetQueue) \
  X(wgpuDeviceCreateBuffer) \
  X(wgpuBufferRelease) \
  X(wgpuBufferDestroy) \
  X(wgpuDeviceCreateShaderModule) \
  X(wgpuShaderModuleRelease) \
  X(wgpuDeviceCreateComputePipeline) \
  X(wgpuComputePipelineRelease) \
  X(wgpuDeviceCreateBindGroupLayout) \
  X(wgpuDeviceCreatePipelineLayout) \
  X(wgpuDeviceCreateBindGroup) \
  X(wgpuBindGroupRelease) \
  X(wgpuDeviceCreateCommandEncoder) \
  X(wgpuCommandEncoderBeginComputePass) \
  X(wgpuComputePassEncoderSetPipeline) \
  X(wgpuComputePassEncoderSetBindGroup) \
  X(wgpuComputePassEncoderDispatchWorkgroups) \
  X(wgpuComputePassEncoderEnd) \
  X(wgpuComputePassEncoderRelease) \
  X(wgpuCommandEncoderCopyBufferToBuffer) \
  X(wgpuCommandEncoderClearBuffer) \
  X(wgpuCommandEncoderFinish) \
  X(wgpuCommandEncoderRelease) \
  X(wgpuQueueSubmitForIndex) \
  X(wgpuCommandBufferRelease) \
  X(wgpuQueueWriteBuffer) \
  X(wgpuBufferMapAsync) \
  X(wgpuBufferGetConstMappedRange) \
  X(wgpuBufferUnmap) \
  X(wgpuDevicePoll) \
  X(wgpuGetVersion) \
  X(wgpuQueueOnSubmittedWorkDone)
// clang-format on

struct Api {
#define ST_WGPU_DECLARE(name) decltype(&::name) name = nullptr;
  ST_WGPU_FUNCTIONS(ST_WGPU_DECLARE)
#undef ST_WGPU_DECLARE
  std::string path;  // the library that was loaded
};

// The loaded API, or nullptr with `reason` set when libwgpu_native cannot be found or lacks
// a symbol. Looked up once: SPIRALTORCH_WGPU_LIBRARY, then the `wgpu` wheel next to this
// module (../wgpu/resources), then the wheel the build found, then the loader's search path.
const Api* api(std::string& reason);

}  // namespace st::backend::wgpu
