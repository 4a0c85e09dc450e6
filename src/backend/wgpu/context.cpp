#include "backend/wgpu/context.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>

#include "spiraltorch/error.h"

namespace st::backend::wgpu {

namespace {
constexpr uint64_t kParamBytes = 1 << 20;  // parameter words of one batch
constexpr uint64_t kParamAlign = 256;      // minStorageBufferOffsetAlignment's largest allowed value
constexpr int kMaxBatch = 512;             // dispatches per submission
constexpr uint64_t kParamWindow = 1024;    // the P binding's size (dynamic offset into the batch's words)
constexpr size_t kMaxBindGroups = 4096;    // cached bind groups before the cache is emptied

std::string str(WGPUStringView v) {
  if (!v.data) return {};
  return v.length == WGPU_STRLEN ? std::string(v.data) : std::string(v.data, v.length);
}
WGPUStringView view(const std::string& s) { return WGPUStringView{s.data(), s.size()}; }

const char* backend_name(WGPUBackendType t) {
  switch (t) {
    case WGPUBackendType_Vulkan:
      return "vulkan";
    case WGPUBackendType_Metal:
      return "metal";
    case WGPUBackendType_D3D12:
      return "dx12";
    case WGPUBackendType_D3D11:
      return "dx11";
    case WGPUBackendType_OpenGL:
      return "gl";
    case WGPUBackendType_OpenGLES:
      return "gles";
    case WGPUBackendType_WebGPU:
      return "webgpu";
    case WGPUBackendType_Null:
      return "null";
    default:
      return "unknown";
  }
}
const char* adapter_type_name(WGPUAdapterType t) {
  switch (t) {
    case WGPUAdapterType_DiscreteGPU:
      return "discrete-gpu";
    case WGPUAdapterType_IntegratedGPU:
      return "integrated-gpu";
    case WGPUAdapterType_CPU:
      return "cpu";
    default:
      return "unknown";
  }
}
std::string feature_name(WGPUFeatureName f) {
  switch (f) {
    case WGPUFeatureName_ShaderF16:
      return "shader-f16";
    case WGPUFeatureName_TimestampQuery:
      return "timestamp-query";
    case WGPUFeatureName_Float32Filterable:
      return "float32-filterable";
    case WGPUFeatureName_Subgroups:
      return "subgroups";
    case WGPUFeatureName_DepthClipControl:
      return "depth-clip-control";
    case WGPUFeatureName_IndirectFirstInstance:
      return "indirect-first-instance";
    case WGPUFeatureName_BGRA8UnormStorage:
      return "bgra8unorm-storage";
    case WGPUFeatureName_TextureCompressionBC:
      return "texture-compression-bc";
    case WGPUFeatureName_Float32Blendable:
      return "float32-blendable";
    case WGPUFeatureName_Depth32FloatStencil8:
      return "depth32float-stencil8";
    case WGPUFeatureName_TextureCompressionBCSliced3D:
      return "texture-compression-bc-sliced-3d";
    case WGPUFeatureName_RG11B10UfloatRenderable:
      return "rg11b10ufloat-renderable";
    case WGPUFeatureName_ClipDistances:
      return "clip-distances";
    case WGPUFeatureName_DualSourceBlending:
      return "dual-source-blending";
    case WGPUFeatureName_PrimitiveIndex:
      return "primitive-index";
    default:
      break;
  }
  // wgpu-native's own features (wgpu.h), the compute-relevant ones by name.
  switch (static_cast<int>(f)) {
    case WGPUNativeFeature_ShaderF64:
      return "shader-f64";
    case WGPUNativeFeature_ShaderI16:
      return "shader-i16";
    case WGPUNativeFeature_ShaderInt64:
      return "shader-int64";
    case WGPUNativeFeature_ShaderFloat32Atomic:
      return "shader-float32-atomic";
    case WGPUNativeFeature_ShaderInt64AtomicMinMax:
      return "shader-int64-atomic-min-max";
    case WGPUNativeFeature_ShaderInt64AtomicAllOps:
      return "shader-int64-atomic-all-ops";
    case WGPUNativeFeature_Subgroup:
      return "subgroup";
    case WGPUNativeFeature_SubgroupBarrier:
      return "subgroup-barrier";
    case WGPUNativeFeature_Immediates:
      return "immediates";
    case WGPUNativeFeature_PipelineCache:
      return "pipeline-cache";
    case WGPUNativeFeature_MappablePrimaryBuffers:
      return "mappable-primary-buffers";
    case WGPUNativeFeature_TimestampQueryInsidePasses:
      return "timestamp-query-inside-passes";
    case WGPUNativeFeature_PipelineStatisticsQuery:
      return "pipeline-statistics-query";
    default: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "0x%x", static_cast<unsigned>(f));
      return buf;
    }
  }
}

uint64_t round_capacity(size_t nbytes) {
  uint64_t n = std::max<uint64_t>(nbytes, 16);
  if (n <= (1u << 20)) {  // powers of two up to 1 MiB, then 1 MiB steps
    uint64_t c = 256;
    while (c < n) c <<= 1;
    return c;
  }
  return (n + (1u << 20) - 1) & ~uint64_t((1u << 20) - 1);
}
}  // namespace

void on_uncaptured_error(WGPUDevice const*, WGPUErrorType type, WGPUStringView message, void* self, void*) {
  auto* ctx = static_cast<Context*>(self);
  if (!ctx->errors_.empty()) ctx->errors_ += "; ";
  ctx->errors_ += str(message);
}

Context* Context::get(std::string& reason) {
  static std::once_flag once;
  static Context* ctx = nullptr;
  static std::string why;
  std::call_once(once, [] {
    auto c = std::unique_ptr<Context>(new Context());
    if (c->init(why)) ctx = c.release();  // lives for the process: buffers may outlive static destructors
  });
  if (!ctx) reason = why;
  return ctx;
}

Context& Context::require(const char* what) {
  std::string reason;
  Context* c = get(reason);
  if (!c) throw DeviceUnavailableError(std::string("wgpu.") + what + ": wgpu is not available: " + reason);
  return *c;
}

bool Context::init(std::string& reason) {
  api_ = backend::wgpu::api(reason);
  if (!api_) return false;
  const Api& w = *api_;
  const char* trace = std::getenv("SPIRALTORCH_WGPU_TRACE");
  trace_ = trace && std::string(trace) == "1";
  WGPUInstanceExtras extras{};
  extras.chain.sType = static_cast<WGPUSType>(WGPUSType_InstanceExtras);
  extras.backends = WGPUInstanceBackend_Primary;
  if (const char* b = std::getenv("SPIRALTORCH_WGPU_BACKEND"); b && *b) {
    const std::string s(b);
    extras.backends = s == "vulkan"  ? WGPUInstanceBackend_Vulkan
                      : s == "metal" ? WGPUInstanceBackend_Metal
                      : s == "dx12"  ? WGPUInstanceBackend_DX12
                      : s == "gl"    ? WGPUInstanceBackend_GL
                                     : WGPUInstanceBackend_All;
  }
  WGPUInstanceDescriptor idesc{};
  idesc.nextInChain = &extras.chain;
  instance_ = w.wgpuCreateInstance(&idesc);
  if (!instance_) {
    reason = "wgpuCreateInstance failed";
    return false;
  }
  struct AdapterResult {
    bool done = false;
    WGPUAdapter adapter = nullptr;
    std::string message;
  } ar;
  WGPURequestAdapterOptions opts{};
  opts.powerPreference = WGPUPowerPreference_HighPerformance;
  WGPURequestAdapterCallbackInfo acb{};
  acb.mode = WGPUCallbackMode_AllowSpontaneous;
  acb.callback = [](WGPURequestAdapterStatus status, WGPUAdapter adapter, WGPUStringView message, void* u1, void*) {
    auto* r = static_cast<AdapterResult*>(u1);
    if (status == WGPURequestAdapterStatus_Success) r->adapter = adapter;
    r->message = str(message);
    r->done = true;
  };
  acb.userdata1 = &ar;
  w.wgpuInstanceRequestAdapter(instance_, &opts, acb);
  for (int i = 0; !ar.done && i < 10000; ++i) w.wgpuInstanceProcessEvents(instance_);
  if (!ar.adapter) {
    reason = "no WebGPU adapter found (Vulkan/Metal/DX12 driver; on Linux without a GPU install mesa-vulkan-drivers)" +
             (ar.message.empty() ? std::string() : ": " + ar.message);
    return false;
  }
  adapter_ = ar.adapter;

  WGPUAdapterInfo ai{};
  w.wgpuAdapterGetInfo(adapter_, &ai);
  info_.name = str(ai.device);
  info_.vendor = str(ai.vendor);
  info_.architecture = str(ai.architecture);
  info_.driver = str(ai.description);
  info_.backend = backend_name(ai.backendType);
  info_.adapter_type = adapter_type_name(ai.adapterType);
  info_.vendor_id = ai.vendorID;
  info_.device_id = ai.deviceID;
  info_.library = w.path;
  w.wgpuAdapterInfoFreeMembers(ai);
  const char* gpu_paths = std::getenv("SPIRALTORCH_WGPU_GPU_PATHS");
  cpu_adapter_ = info_.adapter_type == "cpu" && !(gpu_paths && std::string(gpu_paths) == "1");
  spin_us_ = info_.adapter_type == "cpu" ? 0 : 2000;
  if (const char* spin = std::getenv("SPIRALTORCH_WGPU_SPIN_US"); spin && *spin) spin_us_ = std::atoll(spin);
  WGPULimits lim{};
  w.wgpuAdapterGetLimits(adapter_, &lim);
  limits_ = lim;
  info_.max_buffer_size = lim.maxBufferSize;
  info_.max_storage_buffer_binding_size = lim.maxStorageBufferBindingSize;
  info_.max_compute_workgroup_size_x = lim.maxComputeWorkgroupSizeX;
  info_.max_compute_invocations_per_workgroup = lim.maxComputeInvocationsPerWorkgroup;
  info_.max_compute_workgroup_storage_size = lim.maxComputeWorkgroupStorageSize;
  info_.max_compute_workgroups_per_dimension = lim.maxComputeWorkgroupsPerDimension;
  info_.max_storage_buffers_per_shader_stage = lim.maxStorageBuffersPerShaderStage;
  WGPUSupportedFeatures feats{};
  w.wgpuAdapterGetFeatures(adapter_, &feats);
  for (size_t i = 0; i < feats.featureCount; ++i) info_.features.push_back(feature_name(feats.features[i]));
  w.wgpuSupportedFeaturesFreeMembers(feats);

  struct DeviceResult {
    bool done = false;
    WGPUDevice device = nullptr;
    std::string message;
  } dr;
  WGPUDeviceDescriptor ddesc{};
  ddesc.requiredLimits = &limits_;  // everything the adapter offers (large buffers, 1024 invocations)
  ddesc.uncapturedErrorCallbackInfo.callback = on_uncaptured_error;
  ddesc.uncapturedErrorCallbackInfo.userdata1 = this;
  WGPURequestDeviceCallbackInfo dcb{};
  dcb.mode = WGPUCallbackMode_AllowSpontaneous;
  dcb.callback = [](WGPURequestDeviceStatus status, WGPUDevice device, WGPUStringView message, void* u1, void*) {
    auto* r = static_cast<DeviceResult*>(u1);
    if (status == WGPURequestDeviceStatus_Success) r->device = device;
    r->message = str(message);
    r->done = true;
  };
  dcb.userdata1 = &dr;
  w.wgpuAdapterRequestDevice(adapter_, &ddesc, dcb);
  for (int i = 0; !dr.done && i < 10000; ++i) w.wgpuInstanceProcessEvents(instance_);
  if (!dr.device) {
    reason = "the adapter '" + info_.name + "' refused to create a device: " + dr.message;
    return false;
  }
  device_ = dr.device;
  queue_ = w.wgpuDeviceGetQueue(device_);
  param_buffer_ = create_buffer(kParamBytes, WGPUBufferUsage_Storage | WGPUBufferUsage_CopyDst);
  return true;
}

WGPUBuffer Context::create_buffer(uint64_t size, WGPUBufferUsage usage) {
  WGPUBufferDescriptor d{};
  d.size = size;
  d.usage = usage;
  WGPUBuffer b = api_->wgpuDeviceCreateBuffer(device_, &d);
  if (!b) throw OutOfMemoryError("wgpu: cannot allocate a buffer of " + std::to_string(size) + " bytes");
  return b;
}

void Context::check_errors(const std::string& what) {
  if (errors_.empty()) return;
  std::string e;
  e.swap(errors_);
  throw SpiralError("wgpu: " + what + ": " + e);
}

// ---- allocator ----

void* Context::allocate(size_t nbytes) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (nbytes > limits_.maxBufferSize || nbytes > limits_.maxStorageBufferBindingSize) {
    throw OutOfMemoryError(
        "wgpu: cannot allocate " + std::to_string(nbytes) + " bytes: the adapter's largest buffer is " +
        std::to_string(std::min<uint64_t>(limits_.maxBufferSize, limits_.maxStorageBufferBindingSize)) + " bytes");
  }
  const uint64_t cap = round_capacity(nbytes);
  auto it = free_.lower_bound(cap);
  uintptr_t base;
  if (it != free_.end() && it->first <= cap * 2) {
    base = it->second;
    free_.erase(it);
  } else {
    const WGPUBufferUsage usage = WGPUBufferUsage_Storage | WGPUBufferUsage_CopySrc | WGPUBufferUsage_CopyDst;
    WGPUBuffer b = create_buffer(cap, usage);
    if (!errors_.empty()) {  // out of device memory: give the cached buffers back and try once more
      errors_.clear();
      api_->wgpuBufferRelease(b);
      empty_cache();
      b = create_buffer(cap, usage);
      if (!errors_.empty()) {
        std::string e;
        e.swap(errors_);
        api_->wgpuBufferRelease(b);
        throw OutOfMemoryError("wgpu: cannot allocate " + std::to_string(nbytes) + " bytes (" +
                               std::to_string(allocated_) + " in use, cache emptied): " + e);
      }
    }
    base = next_va_;
    next_va_ += (cap + 4095 + 4096) & ~uintptr_t(4095);
    blocks_[base] = Block{b, cap, false, 0};
    reserved_ += cap;
  }
  Block& blk = blocks_[base];
  blk.in_use = true;
  blk.requested = nbytes;
  allocated_ += nbytes;
  peak_ = std::max(peak_, allocated_);
  return reinterpret_cast<void*>(base);
}

void Context::release(void* va) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  auto it = blocks_.find(reinterpret_cast<uintptr_t>(va));
  if (it == blocks_.end() || !it->second.in_use) return;
  it->second.in_use = false;
  allocated_ -= it->second.requested;
  // Stream order makes immediate reuse safe: every later use is submitted after the last one.
  free_.emplace(it->second.capacity, it->first);
}

void Context::clear_bind_groups() {
  // Recorded commands keep what they use alive (wgpu counts references), so releasing is safe
  // with work in flight.
  for (auto& [k, g] : bind_groups_) api_->wgpuBindGroupRelease(g);
  bind_groups_.clear();
}

void Context::empty_cache() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  synchronize();
  clear_bind_groups();  // they name the buffers about to be destroyed
  for (auto& [cap, base] : free_) {
    auto it = blocks_.find(base);
    api_->wgpuBufferDestroy(it->second.buffer);
    api_->wgpuBufferRelease(it->second.buffer);
    reserved_ -= it->second.capacity;
    blocks_.erase(it);
  }
  free_.clear();
}

BufferRef Context::resolve(const void* va) const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  const auto p = reinterpret_cast<uintptr_t>(va);
  auto it = blocks_.upper_bound(p);
  if (it == blocks_.begin()) throw SpiralError("wgpu: address is not a wgpu buffer");
  --it;
  if (p > it->first + it->second.capacity) throw SpiralError("wgpu: address is not a wgpu buffer");
  return BufferRef{it->second.buffer, p - it->first, it->second.capacity};
}

// ---- pipelines ----

WGPUComputePipeline Context::pipeline(const std::string& wgsl, int nbuffers, uint32_t read_only,
                                      const std::string& label) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (auto it = pipelines_.find(wgsl); it != pipelines_.end()) return it->second;
  if (static_cast<uint32_t>(nbuffers + 1) > limits_.maxStorageBuffersPerShaderStage) {
    throw DeviceUnavailableError("wgpu: a kernel needs " + std::to_string(nbuffers + 1) +
                                 " storage buffers but the adapter allows " +
                                 std::to_string(limits_.maxStorageBuffersPerShaderStage) + " per shader stage");
  }
  const Api& w = *api_;
  const int layout = layout_key(nbuffers, read_only);
  if (!layouts_.count(layout)) {
    std::vector<WGPUBindGroupLayoutEntry> entries(nbuffers + 1);
    for (int i = 0; i <= nbuffers; ++i) {
      entries[i] = WGPUBindGroupLayoutEntry{};
      entries[i].binding = i;
      entries[i].visibility = WGPUShaderStage_Compute;
      const bool ro = i == 0 || (read_only >> (i - 1) & 1u);
      entries[i].buffer.type = ro ? WGPUBufferBindingType_ReadOnlyStorage : WGPUBufferBindingType_Storage;
      // P: one binding of the parameter buffer per bind group, moved per dispatch by a dynamic
      // offset, so a bind group depends only on the tensors' buffers and is reused.
      entries[i].buffer.hasDynamicOffset = i == 0;
    }
    WGPUBindGroupLayoutDescriptor bd{};
    bd.entryCount = entries.size();
    bd.entries = entries.data();
    layouts_[layout] = w.wgpuDeviceCreateBindGroupLayout(device_, &bd);
    WGPUPipelineLayoutDescriptor pd{};
    pd.bindGroupLayoutCount = 1;
    pd.bindGroupLayouts = &layouts_[layout];
    pipeline_layouts_[layout] = w.wgpuDeviceCreatePipelineLayout(device_, &pd);
  }
  // SPIRALTORCH_WGPU_DUMP_WGSL=<dir>: every compiled kernel's text as <dir>/kernel_<n>.wgsl, to
  // study or time a kernel outside the library.
  if (const char* dir = std::getenv("SPIRALTORCH_WGPU_DUMP_WGSL"); dir && *dir) {
    std::ofstream(std::string(dir) + "/kernel_" + std::to_string(pipelines_.size()) + ".wgsl") << wgsl;
  }
  WGPUShaderSourceWGSL src{};
  src.chain.sType = WGPUSType_ShaderSourceWGSL;
  src.code = view(wgsl);
  WGPUShaderModuleDescriptor md{};
  md.nextInChain = &src.chain;
  WGPUShaderModule module = w.wgpuDeviceCreateShaderModule(device_, &md);
  check_errors("compiling a WGSL kernel:\n" + wgsl + "\n");
  WGPUComputePipelineDescriptor cd{};
  cd.layout = pipeline_layouts_[layout];
  cd.compute.module = module;
  const std::string entry = "main";
  cd.compute.entryPoint = view(entry);
  WGPUComputePipeline p = w.wgpuDeviceCreateComputePipeline(device_, &cd);
  w.wgpuShaderModuleRelease(module);
  check_errors("creating a compute pipeline:\n" + wgsl + "\n");
  pipelines_[wgsl] = p;
  layout_of_[p] = layout;
  labels_[p] = label.empty() ? "kernel " + std::to_string(pipelines_.size()) : label;
  return p;
}

// ---- submission ----

void Context::ensure_encoder() {
  if (!encoder_) {
    WGPUCommandEncoderDescriptor ed{};
    encoder_ = api_->wgpuDeviceCreateCommandEncoder(device_, &ed);
  }
}

void Context::end_pass() {
  if (pass_) {
    api_->wgpuComputePassEncoderEnd(pass_);
    api_->wgpuComputePassEncoderRelease(pass_);
    pass_ = nullptr;
  }
}

void Context::dispatch(WGPUComputePipeline pipeline, const std::vector<BufferRef>& buffers,
                       const std::vector<int32_t>& params, uint32_t gx, uint32_t gy, uint32_t gz) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (gx == 0 || gy == 0 || gz == 0) return;
  const uint64_t pbytes = std::max<uint64_t>(params.size() * 4, 16);
  if (pbytes > kParamWindow)
    throw SpiralError("wgpu: a kernel's parameter block exceeds " + std::to_string(kParamWindow) + " bytes");
  uint64_t at = (arena_.size() + kParamAlign - 1) & ~(kParamAlign - 1);
  if (at + kParamWindow > kParamBytes || batched_ >= kMaxBatch) {
    flush();
    at = 0;
  }
  arena_.resize(at + pbytes, 0);
  if (!params.empty()) std::memcpy(arena_.data() + at, params.data(), params.size() * 4);
  ensure_encoder();
  if (!pass_) {
    WGPUComputePassDescriptor pd{};
    pass_ = api_->wgpuCommandEncoderBeginComputePass(encoder_, &pd);
  }
  const int layout = layout_of_.at(pipeline);
  std::string key(buffers.size() * sizeof(WGPUBuffer) + sizeof(int), '\0');
  for (size_t i = 0; i < buffers.size(); ++i)
    std::memcpy(key.data() + i * sizeof(WGPUBuffer), &buffers[i].buffer, sizeof(WGPUBuffer));
  std::memcpy(key.data() + buffers.size() * sizeof(WGPUBuffer), &layout, sizeof(int));
  WGPUBindGroup group;
  if (auto it = bind_groups_.find(key); it != bind_groups_.end()) {
    group = it->second;
  } else {
    if (bind_groups_.size() >= kMaxBindGroups) clear_bind_groups();
    std::vector<WGPUBindGroupEntry> entries(buffers.size() + 1);
    entries[0] = WGPUBindGroupEntry{};
    entries[0].binding = 0;
    entries[0].buffer = param_buffer_;
    entries[0].offset = 0;
    entries[0].size = kParamWindow;
    for (size_t i = 0; i < buffers.size(); ++i) {
      entries[i + 1] = WGPUBindGroupEntry{};
      entries[i + 1].binding = static_cast<uint32_t>(i + 1);
      entries[i + 1].buffer = buffers[i].buffer;
      entries[i + 1].offset = 0;
      entries[i + 1].size = buffers[i].capacity;
    }
    WGPUBindGroupDescriptor bd{};
    bd.layout = layouts_.at(layout);
    bd.entryCount = entries.size();
    bd.entries = entries.data();
    group = api_->wgpuDeviceCreateBindGroup(device_, &bd);
    bind_groups_.emplace(std::move(key), group);
  }
  const uint32_t dyn = static_cast<uint32_t>(at);
  api_->wgpuComputePassEncoderSetPipeline(pass_, pipeline);
  api_->wgpuComputePassEncoderSetBindGroup(pass_, 0, group, 1, &dyn);
  api_->wgpuComputePassEncoderDispatchWorkgroups(pass_, gx, gy, gz);
  ++batched_;
  ++dispatches_;
  if (trace_) std::fprintf(stderr, "wgpu dispatch %s [%u %u %u]\n", labels_[pipeline].c_str(), gx, gy, gz);
}

void Context::launch(WGPUComputePipeline pipeline, const std::vector<BufferRef>& buffers,
                     const std::vector<int32_t>& params, int64_t threads, int64_t wg) {
  if (threads <= 0) return;
  const int64_t groups = (threads + wg - 1) / wg;
  const int64_t maxg = std::min<int64_t>(limits_.maxComputeWorkgroupsPerDimension, 65535);
  const int64_t gx = std::min(groups, maxg);
  const int64_t gy = (groups + gx - 1) / gx;
  if (gy > maxg) throw SpiralError("wgpu: launch of " + std::to_string(threads) + " invocations is too large");
  dispatch(pipeline, buffers, params, static_cast<uint32_t>(gx), static_cast<uint32_t>(gy));
}

void Context::copy_bytes(const void* src_va, void* dst_va, size_t nbytes) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (nbytes == 0) return;
  const BufferRef s = resolve(src_va), d = resolve(dst_va);
  end_pass();
  ensure_encoder();
  api_->wgpuCommandEncoderCopyBufferToBuffer(encoder_, s.buffer, s.offset, d.buffer, d.offset, nbytes);
  ++batched_;
  if (trace_) std::fprintf(stderr, "wgpu copy %zu bytes\n", nbytes);
}

void Context::flush() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  end_pass();
  if (!encoder_) return;
  if (!arena_.empty()) api_->wgpuQueueWriteBuffer(queue_, param_buffer_, 0, arena_.data(), arena_.size());
  WGPUCommandBufferDescriptor cd{};
  WGPUCommandBuffer cmd = api_->wgpuCommandEncoderFinish(encoder_, &cd);
  api_->wgpuCommandEncoderRelease(encoder_);
  encoder_ = nullptr;
  last_submit_ = api_->wgpuQueueSubmitForIndex(queue_, 1, &cmd);
  api_->wgpuCommandBufferRelease(cmd);
  if (trace_) std::fprintf(stderr, "wgpu submit (%d commands)\n", batched_);
  arena_.clear();
  batched_ = 0;
  check_errors("submitting kernels");
}

template <typename Done>
void Context::poll_until(Done done, const WGPUSubmissionIndex* index) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us_);
  while (!done(api_->wgpuDevicePoll(device_, false, nullptr))) {
    if (std::chrono::steady_clock::now() >= until) {
      while (!done(api_->wgpuDevicePoll(device_, true, index))) {
      }
      return;
    }
  }
}

void Context::synchronize() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  flush();
  // Done when the queue says so through its callback: a non-blocking poll's "queue empty" answer
  // came back true with work in flight (lavapipe), so it is not what this waits on.
  bool done = false;
  WGPUQueueWorkDoneCallbackInfo cb{};
  cb.mode = WGPUCallbackMode_AllowSpontaneous;
  cb.callback = [](WGPUQueueWorkDoneStatus, WGPUStringView, void* u1, void*) { *static_cast<bool*>(u1) = true; };
  cb.userdata1 = &done;
  api_->wgpuQueueOnSubmittedWorkDone(queue_, cb);
  poll_until([&done](bool) { return done; });
  check_errors("synchronize");
}

void Context::write(void* dst_va, const void* host, size_t nbytes) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (nbytes == 0) return;
  flush();  // earlier kernels come first in queue order
  const BufferRef d = resolve(dst_va);
  const uint64_t lo = d.offset & ~uint64_t(3), hi = (d.offset + nbytes + 3) & ~uint64_t(3);
  if (lo == d.offset && hi == d.offset + nbytes) {
    api_->wgpuQueueWriteBuffer(queue_, d.buffer, d.offset, host, nbytes);
  } else {  // sub-word edges: read the covering words, patch them, write them back
    std::vector<uint8_t> words(hi - lo);
    read(static_cast<const char*>(dst_va) - (d.offset - lo), words.data(), words.size());
    std::memcpy(words.data() + (d.offset - lo), host, nbytes);
    api_->wgpuQueueWriteBuffer(queue_, d.buffer, lo, words.data(), words.size());
  }
  check_errors("write");
}

void Context::read(const void* src_va, void* host, size_t nbytes) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (nbytes == 0) return;
  const BufferRef s = resolve(src_va);
  const uint64_t lo = s.offset & ~uint64_t(3), hi = (s.offset + nbytes + 3) & ~uint64_t(3);
  const uint64_t span = hi - lo;
  if (staging_size_ < span) {
    if (staging_) api_->wgpuBufferRelease(staging_);
    staging_size_ = round_capacity(span);
    staging_ = create_buffer(staging_size_, WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst);
  }
  end_pass();
  ensure_encoder();
  api_->wgpuCommandEncoderCopyBufferToBuffer(encoder_, s.buffer, lo, staging_, 0, span);
  flush();
  struct MapResult {
    bool done = false;
    WGPUMapAsyncStatus status{};
    std::string message;
  } mr;
  WGPUBufferMapCallbackInfo cb{};
  cb.mode = WGPUCallbackMode_AllowSpontaneous;
  cb.callback = [](WGPUMapAsyncStatus status, WGPUStringView message, void* u1, void*) {
    auto* r = static_cast<MapResult*>(u1);
    r->status = status;
    r->message = str(message);
    r->done = true;
  };
  cb.userdata1 = &mr;
  api_->wgpuBufferMapAsync(staging_, WGPUMapMode_Read, 0, span, cb);
  ++reads_;
  if (trace_) std::fprintf(stderr, "wgpu host read %zu bytes (waits for the queue)\n", nbytes);
  poll_until([&mr](bool) { return mr.done; });  // the one sync point
  if (mr.status != WGPUMapAsyncStatus_Success) throw SpiralError("wgpu: reading a buffer failed: " + mr.message);
  const void* mapped = api_->wgpuBufferGetConstMappedRange(staging_, 0, span);
  std::memcpy(host, static_cast<const char*>(mapped) + (s.offset - lo), nbytes);
  api_->wgpuBufferUnmap(staging_);
  check_errors("read");
}

std::function<int32_t()> Context::read_later(const void* src_va) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  const BufferRef s = resolve(src_va);
  if (s.offset % 4 != 0) throw SpiralError("wgpu: read_later needs a 4-byte aligned int32");
  // The copy travels in its own submission, and the map completes with it: the value can be
  // fetched while later submissions still run.
  struct Pending {
    Context* ctx = nullptr;
    WGPUBuffer buffer = nullptr;
    WGPUSubmissionIndex index = 0;
    bool done = false;
    WGPUMapAsyncStatus status{};
    std::string message;
    bool have = false;
    int32_t value = 0;
    ~Pending() {  // the buffer goes back to the pool, also when the value was never asked for
      std::lock_guard<std::recursive_mutex> lock(ctx->mu_);
      if (done && !have && status == WGPUMapAsyncStatus_Success) ctx->api_->wgpuBufferUnmap(buffer);
      ctx->small_staging_.push_back(buffer);
    }
  };
  WGPUBuffer buffer;
  if (small_staging_.empty()) {
    buffer = create_buffer(kParamAlign, WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst);
  } else {
    buffer = small_staging_.back();
    small_staging_.pop_back();
  }
  auto p = std::make_shared<Pending>();
  p->ctx = this;
  p->buffer = buffer;
  end_pass();
  ensure_encoder();
  api_->wgpuCommandEncoderCopyBufferToBuffer(encoder_, s.buffer, s.offset, buffer, 0, 4);
  ++batched_;
  flush();
  p->index = last_submit_;
  WGPUBufferMapCallbackInfo cb{};
  cb.mode = WGPUCallbackMode_AllowSpontaneous;
  cb.callback = [](WGPUMapAsyncStatus status, WGPUStringView message, void* u1, void*) {
    // userdata1 owns a reference until the callback has run (it may outlive the returned function)
    const std::unique_ptr<std::shared_ptr<Pending>> holder(static_cast<std::shared_ptr<Pending>*>(u1));
    Pending& r = **holder;
    r.status = status;
    r.message = str(message);
    r.done = true;
  };
  cb.userdata1 = std::make_unique<std::shared_ptr<Pending>>(p).release();  // the callback takes it back
  api_->wgpuBufferMapAsync(buffer, WGPUMapMode_Read, 0, 4, cb);
  if (trace_) {
    std::fprintf(stderr, "wgpu read started, 4 bytes (submission %llu)\n", static_cast<unsigned long long>(p->index));
  }
  return [p]() -> int32_t {
    if (p->have) return p->value;
    Context& c = *p->ctx;
    std::lock_guard<std::recursive_mutex> lock(c.mu_);
    c.flush();                                                // work queued since runs while this waits
    c.poll_until([&p](bool) { return p->done; }, &p->index);  // not a reads_ one: later work keeps running
    if (c.trace_) std::fprintf(stderr, "wgpu read finished, 4 bytes\n");
    if (p->status != WGPUMapAsyncStatus_Success) throw SpiralError("wgpu: reading a buffer failed: " + p->message);
    std::memcpy(&p->value, c.api_->wgpuBufferGetConstMappedRange(p->buffer, 0, 4), 4);
    c.api_->wgpuBufferUnmap(p->buffer);
    p->have = true;
    return p->value;
  };
}

}  // namespace st::backend::wgpu
