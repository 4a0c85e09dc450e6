#pragma once
// The wgpu device context: instance, adapter, device and queue; a caching buffer allocator
// that hands out device-virtual addresses; a pipeline cache keyed by the WGSL text; and
// batched, asynchronous submission with one sync point when the host reads a value.
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/wgpu/api.h"
#include "spiraltorch/wgpu.h"

namespace st::backend::wgpu {

// A tensor's memory as a kernel sees it: a whole buffer plus a byte offset.
struct BufferRef {
  WGPUBuffer buffer = nullptr;
  uint64_t offset = 0;    // bytes from the buffer's start
  uint64_t capacity = 0;  // the buffer's size
};

class Context {
 public:
  // The process-wide context; nullptr (and `reason`) when wgpu is unavailable.
  static Context* get(std::string& reason);
  // The context or DeviceUnavailableError naming `what`.
  static Context& require(const char* what);

  const Api& api() const { return *api_; }
  const st::wgpu::AdapterInfo& info() const { return info_; }
  uint32_t max_workgroups() const { return limits_.maxComputeWorkgroupsPerDimension; }
  // A CPU adapter (Mesa's lavapipe): occupancy tricks for wide GPUs (split K, compute copies)
  // only cost there. SPIRALTORCH_WGPU_GPU_PATHS=1 takes the GPU paths anyway (tests).
  bool cpu_adapter() const { return cpu_adapter_; }

  // ---- allocator ----
  void* allocate(size_t nbytes);
  void release(void* va);
  BufferRef resolve(const void* va) const;
  size_t allocated() const { return allocated_; }
  size_t peak() const { return peak_; }
  size_t reserved() const { return reserved_; }
  void reset_peak() { peak_ = allocated_; }
  void empty_cache();

  // ---- pipelines ----
  // A compute pipeline for `wgsl` (entry point `main`) with `nbuffers` storage buffers at
  // bindings 1..nbuffers and the parameter words at binding 0; cached by the text. Bit i of
  // `read_only` binds buffer i + 1 read-only (the kernel declares it `var<storage, read>`): the
  // driver may then read it through its non-coherent caches; a dispatch must not bind that
  // buffer writable in another slot. `label` names the kernel in SPIRALTORCH_WGPU_TRACE's lines.
  WGPUComputePipeline pipeline(const std::string& wgsl, int nbuffers, uint32_t read_only = 0,
                               const std::string& label = {});
  size_t pipelines() const { return pipelines_.size(); }

  // ---- submission ----
  // Records one dispatch into the open batch; params are the kernel's P[] words.
  void dispatch(WGPUComputePipeline pipeline, const std::vector<BufferRef>& buffers, const std::vector<int32_t>& params,
                uint32_t gx, uint32_t gy = 1, uint32_t gz = 1);
  // 1-d launch of `threads` invocations in workgroups of `wg`, folded into x/y dimensions.
  void launch(WGPUComputePipeline pipeline, const std::vector<BufferRef>& buffers, const std::vector<int32_t>& params,
              int64_t threads, int64_t wg = 256);
  void copy_bytes(const void* src_va, void* dst_va, size_t nbytes);  // 4-byte aligned, within buffers
  void write(void* dst_va, const void* host, size_t nbytes);
  void read(const void* src_va, void* host, size_t nbytes);
  // Starts reading the int32 at src_va without waiting: the returned function yields it, waiting
  // only for the work queued before this call (Backend::read_later).
  std::function<int32_t()> read_later(const void* src_va);
  void flush();
  void synchronize();
  uint64_t dispatch_count() const { return dispatches_; }
  uint64_t read_count() const { return reads_; }

 private:
  Context() = default;
  bool init(std::string& reason);
  void end_pass();
  void ensure_encoder();
  void check_errors(const std::string& what);
  // Polls the device until done() holds (it is passed each poll's "queue empty" answer, which
  // is not trusted): non-blocking polls for up to spin_us_, then blocking ones.
  // With `index`, the blocking polls wait for that submission only.
  template <typename Done>
  void poll_until(Done done, const WGPUSubmissionIndex* index = nullptr);
  WGPUBuffer create_buffer(uint64_t size, WGPUBufferUsage usage);

  const Api* api_ = nullptr;
  WGPUInstance instance_ = nullptr;
  WGPUAdapter adapter_ = nullptr;
  WGPUDevice device_ = nullptr;
  WGPUQueue queue_ = nullptr;
  WGPULimits limits_{};
  st::wgpu::AdapterInfo info_;
  bool cpu_adapter_ = false;

  struct Block {
    WGPUBuffer buffer;
    uint64_t capacity;
    bool in_use;
    size_t requested;
  };
  std::map<uintptr_t, Block> blocks_;        // by virtual base address
  std::multimap<uint64_t, uintptr_t> free_;  // capacity -> base of cached blocks
  uintptr_t next_va_ = uintptr_t(1) << 44;
  size_t allocated_ = 0, peak_ = 0, reserved_ = 0;

  // Layouts by buffer count and read-only mask (layout_key), and each pipeline's layout.
  static int layout_key(int nbuffers, uint32_t read_only) { return nbuffers | static_cast<int>(read_only << 8); }
  std::unordered_map<int, WGPUBindGroupLayout> layouts_;
  std::unordered_map<int, WGPUPipelineLayout> pipeline_layouts_;
  std::unordered_map<WGPUComputePipeline, int> layout_of_;
  std::unordered_map<WGPUComputePipeline, std::string> labels_;
  // SPIRALTORCH_WGPU_TRACE=1: one stderr line per dispatch, copy, submit and host read (which
  // kernels a step runs, in order; for study, costs a formatted write per dispatch).
  bool trace_ = false;
  // How long a wait spins on non-blocking polls before it blocks: a blocking wait on NVIDIA's
  // Vulkan driver took ~80 us to return for a tiny submission (H100), a sync point on every host
  // read. SPIRALTORCH_WGPU_SPIN_US sets it; 0 on CPU adapters, whose threads need the cores.
  int64_t spin_us_ = 0;
  std::unordered_map<std::string, WGPUComputePipeline> pipelines_;
  std::unordered_map<std::string, WGPUBindGroup> bind_groups_;  // by the bound buffers' handles
  void clear_bind_groups();

  WGPUCommandEncoder encoder_ = nullptr;
  WGPUComputePassEncoder pass_ = nullptr;
  std::vector<uint8_t> arena_;         // the batch's parameter words
  WGPUBuffer param_buffer_ = nullptr;  // kParamBytes, rewritten before each submit
  int batched_ = 0;
  uint64_t dispatches_ = 0;
  uint64_t reads_ = 0;  // device-to-host reads: each waits for the whole queue
  WGPUBuffer staging_ = nullptr;
  uint64_t staging_size_ = 0;
  WGPUSubmissionIndex last_submit_ = 0;
  std::vector<WGPUBuffer> small_staging_;  // free 4-byte read_later buffers

  mutable std::recursive_mutex mu_;
  std::string errors_;  // uncaptured validation errors since the last check
  friend void on_uncaptured_error(WGPUDevice const*, WGPUErrorType, WGPUStringView, void*, void*);
};

}  // namespace st::backend::wgpu
