// conv2d forward / backward-data / backward-filter through cuDNN (NCHW, any group count,
// float32 with TF32 when allowed, float64, float16 and bfloat16 with float32 accumulation).
// Descriptors and the chosen algorithms are cached per geometry; workspaces come from the
// caching allocator on the current stream. Builds without cuDNN keep these entry points and
// report no library convolution, so the op layer stays on im2col + cuBLAS.
#include <atomic>
#include <climits>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "backend/cuda/common.cuh"
#include "backend/cuda/kernels.h"
#include "backend/cuda/plan_key.h"

#ifdef SPIRALTORCH_HAVE_CUDNN
#include "backend/cuda/cudnn_handle.h"
#endif

namespace st::cuda {

namespace {
std::atomic<bool> g_cudnn_enabled{true};
std::atomic<bool> g_cudnn_benchmark{false};
std::atomic<bool> g_cudnn_tf32{true};
}  // namespace

std::string cudnn_version() {
#ifdef SPIRALTORCH_HAVE_CUDNN
  const size_t v = cudnnGetVersion();  // major * 10000 + minor * 100 + patch (cuDNN 9)
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
#else
  return "";
#endif
}
bool cudnn_enabled() { return g_cudnn_enabled.load(std::memory_order_relaxed); }
void set_cudnn_enabled(bool enabled) { g_cudnn_enabled.store(enabled, std::memory_order_relaxed); }
bool cudnn_benchmark() { return g_cudnn_benchmark.load(std::memory_order_relaxed); }
void set_cudnn_benchmark(bool on) { g_cudnn_benchmark.store(on, std::memory_order_relaxed); }
bool cudnn_allow_tf32() { return g_cudnn_tf32.load(std::memory_order_relaxed); }
void set_cudnn_allow_tf32(bool allow) { g_cudnn_tf32.store(allow, std::memory_order_relaxed); }

}  // namespace st::cuda

namespace st::backend::cuda {

#ifndef SPIRALTORCH_HAVE_CUDNN

bool has_cudnn_conv2d(const backend::Conv2dGeom&, int64_t, Dtype) { return false; }
namespace {
[[noreturn]] void no_cudnn() { throw DeviceUnavailableError("conv2d: this build has no cuDNN"); }
}  // namespace
void cudnn_conv2d_forward(const Tensor&, const Tensor&, const Tensor&, const backend::Conv2dGeom&, int64_t, Tensor&) {
  no_cudnn();
}
void cudnn_conv2d_backward_input(const Tensor&, const Tensor&, const backend::Conv2dGeom&, int64_t, Tensor&) {
  no_cudnn();
}
void cudnn_conv2d_backward_weight(const Tensor&, const Tensor&, const backend::Conv2dGeom&, int64_t, Tensor&) {
  no_cudnn();
}

#else

cudnnHandle_t cudnn_handle() {
  const cudnnHandle_t h = device_handle<cudnnHandle_t>([] {
    cudnnHandle_t made = nullptr;
    const cudnnStatus_t s = cudnnCreate(&made);
    if (s != CUDNN_STATUS_SUCCESS) throw SpiralError(std::string("cudnnCreate: ") + cudnnGetErrorString(s));
    return made;
  });
  const cudnnStatus_t s = cudnnSetStream(h, stream());
  if (s != CUDNN_STATUS_SUCCESS) throw SpiralError(std::string("cudnnSetStream: ") + cudnnGetErrorString(s));
  return h;
}

namespace {

#define ST_CUDNN_CHECK(expr)                                                                          \
  do {                                                                                                \
    const cudnnStatus_t st_s_ = (expr);                                                               \
    if (st_s_ != CUDNN_STATUS_SUCCESS) {                                                              \
      throw SpiralError(std::string("conv2d (cuDNN): ") + cudnnGetErrorString(st_s_) + " in " #expr); \
    }                                                                                                 \
  } while (0)

// Workspace ceiling for an algorithm: fast algorithms with huge scratch needs would push
// peak memory above what the same model takes in PyTorch.
constexpr size_t kMaxWorkspace = size_t{1} << 30;

cudnnDataType_t data_type(Dtype dt) {
  switch (dt) {
    case Dtype::Float64:
      return CUDNN_DATA_DOUBLE;
    case Dtype::Float16:
      return CUDNN_DATA_HALF;
    case Dtype::BFloat16:
      return CUDNN_DATA_BFLOAT16;
    default:
      return CUDNN_DATA_FLOAT;
  }
}

using Key = PlanKey<16>;
using KeyHash = PlanKeyHash;

// The descriptors of one geometry and the algorithm picked for each direction (chosen on
// first use). Immutable once built apart from the lazily filled algorithm slots.
struct Plan {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  std::mutex mu;
  bool has_fwd = false, has_bwd_data = false, has_bwd_filter = false;
  cudnnConvolutionFwdAlgo_t fwd{};
  cudnnConvolutionBwdDataAlgo_t bwd_data{};
  cudnnConvolutionBwdFilterAlgo_t bwd_filter{};
  size_t fwd_ws = 0, bwd_data_ws = 0, bwd_filter_ws = 0;
  ~Plan() {
    if (x) cudnnDestroyTensorDescriptor(x);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (bias) cudnnDestroyTensorDescriptor(bias);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
  }
};

int as_int(int64_t v) { return static_cast<int>(v); }

std::shared_ptr<Plan> plan_for(const backend::Conv2dGeom& g, int64_t batch, int64_t out_channels, int64_t groups,
                               Dtype dt) {
  const bool tf32 = dt == Dtype::Float32 && st::cuda::cudnn_allow_tf32();
  int dev = 0;
  ST_CUDA_CHECK(cudaGetDevice(&dev));
  const Key key{{batch, g.C, g.H, g.W, out_channels, g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw, groups,
                 static_cast<int64_t>(dt) * 2 + (tf32 ? 1 : 0), dev}};
  static std::mutex mu;
  static std::unordered_map<Key, std::shared_ptr<Plan>, KeyHash> cache;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  auto p = std::make_shared<Plan>();
  const cudnnDataType_t type = data_type(dt);
  ST_CUDNN_CHECK(cudnnCreateTensorDescriptor(&p->x));
  ST_CUDNN_CHECK(cudnnCreateTensorDescriptor(&p->y));
  ST_CUDNN_CHECK(cudnnCreateTensorDescriptor(&p->bias));
  ST_CUDNN_CHECK(cudnnCreateFilterDescriptor(&p->w));
  ST_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&p->conv));
  ST_CUDNN_CHECK(
      cudnnSetTensor4dDescriptor(p->x, CUDNN_TENSOR_NCHW, type, as_int(batch), as_int(g.C), as_int(g.H), as_int(g.W)));
  ST_CUDNN_CHECK(cudnnSetTensor4dDescriptor(p->y, CUDNN_TENSOR_NCHW, type, as_int(batch), as_int(out_channels),
                                            as_int(g.OH), as_int(g.OW)));
  ST_CUDNN_CHECK(cudnnSetTensor4dDescriptor(p->bias, CUDNN_TENSOR_NCHW, type, 1, as_int(out_channels), 1, 1));
  ST_CUDNN_CHECK(cudnnSetFilter4dDescriptor(p->w, type, CUDNN_TENSOR_NCHW, as_int(out_channels), as_int(g.C / groups),
                                            as_int(g.kh), as_int(g.kw)));
  const cudnnDataType_t compute = dt == Dtype::Float64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  ST_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(p->conv, as_int(g.ph), as_int(g.pw), as_int(g.sh), as_int(g.sw),
                                                 as_int(g.dh), as_int(g.dw), CUDNN_CROSS_CORRELATION, compute));
  ST_CUDNN_CHECK(cudnnSetConvolutionGroupCount(p->conv, as_int(groups)));
  // float32: TF32 tensor cores unless disallowed (FMA math then), like PyTorch's
  // torch.backends.cudnn.allow_tf32 (on by default, unlike matmul's flag); half types: tensor cores.
  const cudnnMathType_t math = dt == Dtype::Float16 || dt == Dtype::BFloat16 ? CUDNN_TENSOR_OP_MATH
                               : tf32                                        ? CUDNN_DEFAULT_MATH
                                                                             : CUDNN_FMA_MATH;
  ST_CUDNN_CHECK(cudnnSetConvolutionMathType(p->conv, math));
  cache.emplace(key, p);
  return p;
}

Tensor workspace(size_t bytes, Device d) {
  return Tensor::empty({static_cast<int64_t>(std::max<size_t>(bytes, 1))}, Dtype::UInt8, d);
}

// Picks the algorithm for one direction: cuDNN's heuristic ranking (the first that succeeds
// within the workspace ceiling), or with benchmark mode the fastest measured by cudnnFind*Ex
// on the call's own buffers (which it overwrites; the caller computes into them afterwards).
template <typename Perf, typename GetFn, typename FindFn>
std::pair<decltype(Perf{}.algo), size_t> choose(const char* what, GetFn get, FindFn find, Device d) {
  constexpr int kMax = 16;
  Perf perf[kMax];
  int returned = 0;
  if (st::cuda::cudnn_benchmark()) {
    size_t need = 0;
    ST_CUDNN_CHECK(get(perf, kMax, &returned));
    for (int i = 0; i < returned; ++i) {
      if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= kMaxWorkspace)
        need = std::max(need, perf[i].memory);
    }
    Tensor ws = workspace(need, d);
    ST_CUDNN_CHECK(find(perf, kMax, &returned, ws.raw_data(), need));
  } else {
    ST_CUDNN_CHECK(get(perf, kMax, &returned));
  }
  for (int i = 0; i < returned; ++i) {
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= kMaxWorkspace)
      return {perf[i].algo, perf[i].memory};
  }
  throw SpiralError(std::string("conv2d (cuDNN): no ") + what + " algorithm fits in " +
                    std::to_string(kMaxWorkspace >> 20) + " MiB of workspace");
}

template <typename T>
struct Scale {
  T one = 1, zero = 0;
};

template <typename F>
void with_scale(Dtype dt, F f) {
  if (dt == Dtype::Float64) {
    const Scale<double> s;
    f(&s.one, &s.zero);
  } else {
    const Scale<float> s;
    f(&s.one, &s.zero);
  }
}

bool fits_int(int64_t v) { return v > 0 && v < INT_MAX; }

}  // namespace

bool has_cudnn_conv2d(const backend::Conv2dGeom& g, int64_t groups, Dtype dtype) {
  if (!st::cuda::cudnn_enabled()) return false;
  if (dtype != Dtype::Float32 && dtype != Dtype::Float64 && dtype != Dtype::Float16 && dtype != Dtype::BFloat16) {
    return false;
  }
  // cuDNN's 4-d descriptors take int sizes and strides.
  return fits_int(g.C * g.H * g.W) && fits_int(g.OH * g.OW * std::max<int64_t>(g.C, 1)) && groups > 0;
}

void cudnn_conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& bias, const backend::Conv2dGeom& g,
                          int64_t groups, Tensor& out) {
  const int64_t batch = x.shape()[0], oc = w.shape()[0];
  const auto p = plan_for(g, batch, oc, groups, x.dtype());
  cudnnHandle_t h = cudnn_handle();
  {
    std::lock_guard<std::mutex> lock(p->mu);
    if (!p->has_fwd) {
      std::tie(p->fwd, p->fwd_ws) = choose<cudnnConvolutionFwdAlgoPerf_t>("forward", [&](auto* perf, int n, int* r) {
        return cudnnGetConvolutionForwardAlgorithm_v7(h, p->x, p->w, p->conv, p->y, n, r, perf);
      }, [&](auto* perf, int n, int* r, void* ws, size_t bytes) {
        return cudnnFindConvolutionForwardAlgorithmEx(h, p->x, x.raw_data(), p->w, w.raw_data(), p->conv, p->y,
                                                      out.raw_data(), n, r, perf, ws, bytes);
      }, x.device());
      p->has_fwd = true;
    }
  }
  Tensor ws = workspace(p->fwd_ws, x.device());
  with_scale(x.dtype(), [&](const void* one, const void* zero) {
    ST_CUDNN_CHECK(cudnnConvolutionForward(h, one, p->x, x.raw_data(), p->w, w.raw_data(), p->conv, p->fwd,
                                           ws.raw_data(), p->fwd_ws, zero, p->y, out.raw_data()));
    if (bias.defined()) ST_CUDNN_CHECK(cudnnAddTensor(h, one, p->bias, bias.raw_data(), one, p->y, out.raw_data()));
  });
}

void cudnn_conv2d_backward_input(const Tensor& gy, const Tensor& w, const backend::Conv2dGeom& g, int64_t groups,
                                 Tensor& gx) {
  const int64_t batch = gx.shape()[0], oc = w.shape()[0];
  const auto p = plan_for(g, batch, oc, groups, gy.dtype());
  cudnnHandle_t h = cudnn_handle();
  {
    std::lock_guard<std::mutex> lock(p->mu);
    if (!p->has_bwd_data) {
      std::tie(p->bwd_data, p->bwd_data_ws) =
          choose<cudnnConvolutionBwdDataAlgoPerf_t>("backward-data", [&](auto* perf, int n, int* r) {
        return cudnnGetConvolutionBackwardDataAlgorithm_v7(h, p->w, p->y, p->conv, p->x, n, r, perf);
      }, [&](auto* perf, int n, int* r, void* ws, size_t bytes) {
        return cudnnFindConvolutionBackwardDataAlgorithmEx(h, p->w, w.raw_data(), p->y, gy.raw_data(), p->conv, p->x,
                                                           gx.raw_data(), n, r, perf, ws, bytes);
      }, gy.device());
      p->has_bwd_data = true;
    }
  }
  Tensor ws = workspace(p->bwd_data_ws, gy.device());
  with_scale(gy.dtype(), [&](const void* one, const void* zero) {
    ST_CUDNN_CHECK(cudnnConvolutionBackwardData(h, one, p->w, w.raw_data(), p->y, gy.raw_data(), p->conv, p->bwd_data,
                                                ws.raw_data(), p->bwd_data_ws, zero, p->x, gx.raw_data()));
  });
}

void cudnn_conv2d_backward_weight(const Tensor& gy, const Tensor& x, const backend::Conv2dGeom& g, int64_t groups,
                                  Tensor& gw) {
  const int64_t batch = x.shape()[0], oc = gw.shape()[0];
  const auto p = plan_for(g, batch, oc, groups, x.dtype());
  cudnnHandle_t h = cudnn_handle();
  {
    std::lock_guard<std::mutex> lock(p->mu);
    if (!p->has_bwd_filter) {
      std::tie(p->bwd_filter, p->bwd_filter_ws) =
          choose<cudnnConvolutionBwdFilterAlgoPerf_t>("backward-filter", [&](auto* perf, int n, int* r) {
        return cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, p->x, p->y, p->conv, p->w, n, r, perf);
      }, [&](auto* perf, int n, int* r, void* ws, size_t bytes) {
        return cudnnFindConvolutionBackwardFilterAlgorithmEx(h, p->x, x.raw_data(), p->y, gy.raw_data(), p->conv, p->w,
                                                             gw.raw_data(), n, r, perf, ws, bytes);
      }, x.device());
      p->has_bwd_filter = true;
    }
  }
  Tensor ws = workspace(p->bwd_filter_ws, x.device());
  with_scale(x.dtype(), [&](const void* one, const void* zero) {
    ST_CUDNN_CHECK(cudnnConvolutionBackwardFilter(h, one, p->x, x.raw_data(), p->y, gy.raw_data(), p->conv,
                                                  p->bwd_filter, ws.raw_data(), p->bwd_filter_ws, zero, p->w,
                                                  gw.raw_data()));
  });
}

#endif  // SPIRALTORCH_HAVE_CUDNN

}  // namespace st::backend::cuda
