// The backend's flash_attention entries: cuDNN's fused attention where it takes the operands
// (attention_cudnn.cpp: its Hopper kernels are faster than ours on sm_90, bench/results/
// attention_cudnn_h100.md), otherwise which operands the fused kernels of flash_attention.cuh
// take, and the launch per dtype and head dim.
//
// Taken: float16 / bfloat16 (tensor cores, float32 softmax and accumulation), and float32 when
// TF32 is allowed for matmuls (st::cuda::allow_tf32: the products run in TF32 as cuBLAS's would),
// head dims 32, 64 and 128, (B, H, rows, d) operands with a unit last stride and 16-byte aligned
// rows, switched on (st::cuda::flash_sdp_enabled). float32 without TF32 stays on the exact GEMM
// path.
#include <climits>

#include "backend/cuda/attention_cudnn.h"
#include "backend/cuda/common.cuh"
#include "backend/cuda/flash_attention.cuh"
#include "backend/cuda/kernels.h"

namespace st::backend::cuda {

namespace {

// The kernel's view of a (B, H, rows, d) operand: unit last stride, 16-byte aligned rows.
bool strides_of(const Tensor& t, flash::Strides& s) {
  if (t.dim() != 4 || t.strides()[3] != 1) return false;
  const int64_t align = 16 / static_cast<int64_t>(dtype_size(t.dtype()));
  s = {t.strides()[0], t.strides()[1], t.strides()[2]};
  if (reinterpret_cast<uintptr_t>(t.raw_data()) % 16 != 0) return false;
  return (t.size(0) == 1 || s.b % align == 0) && (t.size(1) == 1 || s.h % align == 0) &&
         (t.size(2) == 1 || s.r % align == 0);
}

// The launch geometry when the kernels take these operands (dtype, head dim, strides, sizes).
bool layout_of(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o, const Tensor& stat,
               flash::Layout& g) {
  if (!st::cuda::flash_sdp_enabled()) return false;
  const Dtype dt = q.dtype();
  if (dt != Dtype::Float16 && dt != Dtype::BFloat16 && !(dt == Dtype::Float32 && st::cuda::allow_tf32())) return false;
  if (q.dim() != 4 || stat.dim() != 3 || stat.dtype() != Dtype::Float32) return false;
  const int64_t d = q.size(3), L = q.size(2), S = k.size(2), B = q.size(0), H = q.size(1);
  if (d != 32 && d != 64 && d != 128) return false;
  if (v.size(3) != d || L <= 0 || S <= 0 || L > INT_MAX / 2 || S > INT_MAX / 2 || H > INT_MAX) return false;
  const int64_t tiles = (std::max(L, S) + flash::kTile - 1) / flash::kTile;
  if (B * H <= 0 || B * H * tiles > INT_MAX) return false;
  if (!strides_of(q, g.q) || !strides_of(k, g.k) || !strides_of(v, g.v) || !strides_of(o, g.o)) return false;
  g.stat = {stat.strides()[0], stat.strides()[1], stat.strides()[2]};
  g.heads = static_cast<int>(H);
  g.L = static_cast<int>(L);
  g.S = static_cast<int>(S);
  return true;
}

template <typename F>
cudaError_t dispatch(Dtype dt, int64_t d, F f) {
  auto by_dim = [&](auto t) {
    using T = decltype(t);
    switch (d) {
      case 32:
        return f(T{}, std::integral_constant<int, 32>{});
      case 64:
        return f(T{}, std::integral_constant<int, 64>{});
      default:
        return f(T{}, std::integral_constant<int, 128>{});
    }
  };
  if (dt == Dtype::Float32) return by_dim(float{});
  return dt == Dtype::Float16 ? by_dim(__half{}) : by_dim(__nv_bfloat16{});
}

// delta[row] = rowsum(dout * out) in float32, one warp per (b, h, l) row of the (B, H, L, d) views
// (the flash backward's input, formed here where the caller left it to the backend).
template <typename T>
__global__ void attention_delta_kernel(const T* out, const T* dout, float* delta, int64_t rows, int heads, int L, int d,
                                       flash::Strides so, flash::Strides sd) {
  const int64_t row = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const int64_t l = row % L, bh = row / L, b = bh / heads, h = bh % heads;
  const T* o = out + b * so.b + h * so.h + l * so.r;
  const T* g = dout + b * sd.b + h * sd.h + l * sd.r;
  float acc = 0.f;
  for (int j = lane; j < d; j += 32) acc += static_cast<float>(o[j]) * static_cast<float>(g[j]);
  acc = warp_reduce(acc, [](float a, float c) { return a + c; });
  if (lane == 0) delta[row] = acc;
}

template <typename T>
const T* in(const Tensor& t) {
  return static_cast<const T*>(t.raw_data());
}
template <typename T>
T* out(Tensor& t) {
  return static_cast<T*>(t.raw_data());
}

}  // namespace

bool flash_attention(const Tensor& q, const Tensor& k, const Tensor& v, double scale, bool causal, Tensor& o,
                     Tensor& lse) {
  if (cudnn_attention_forward(q, k, v, scale, causal, o, lse)) return true;
  flash::Layout g{};
  if (!layout_of(q, k, v, o, lse, g)) return false;
  const int64_t batch = q.size(0) * q.size(1);
  ST_CUDA_CHECK(dispatch(q.dtype(), q.size(3), [&](auto t, auto dim) {
    using T = decltype(t);
    return flash::forward<T, decltype(dim)::value>(in<T>(q), in<T>(k), in<T>(v), out<T>(o), lse.data<float>(), batch, g,
                                                   static_cast<float>(scale), causal, stream());
  }));
  return true;
}

bool flash_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o, const Tensor& dout,
                              const Tensor& lse, const Tensor& delta, double scale, bool causal, Tensor& dq, Tensor& dk,
                              Tensor& dv) {
  if (cudnn_attention_backward(q, k, v, o, dout, lse, scale, causal, dq, dk, dv)) return true;
  flash::Layout g{};
  flash::Strides so{};
  if (!layout_of(q, k, v, dout, lse, g) || !strides_of(o, so)) return false;
  if (!strides_of(dq, g.dq) || !strides_of(dk, g.dk) || !strides_of(dv, g.dv)) return false;
  const int64_t batch = q.size(0) * q.size(1);
  // delta, read through lse's strides: the caller's, else formed here (lse is contiguous then).
  Tensor formed;
  if (!delta.defined()) {
    if (!lse.is_contiguous()) return false;
    formed = Tensor::empty(lse.shape(), Dtype::Float32, lse.device());
    const int64_t rows = batch * q.size(2);
    const int threads = 256;
    const auto blocks = static_cast<unsigned>((rows * 32 + threads - 1) / threads);
    ST_CUDA_CHECK(dispatch(q.dtype(), q.size(3), [&](auto t, auto) {
      using T = decltype(t);
      attention_delta_kernel<T><<<blocks, threads, 0, stream()>>>(in<T>(o), in<T>(dout), formed.data<float>(), rows,
                                                                  g.heads, g.L, static_cast<int>(q.size(3)), so, g.o);
      return cudaGetLastError();
    }));
  } else if (delta.dim() != 3 || delta.strides()[0] != lse.strides()[0] || delta.strides()[1] != lse.strides()[1] ||
             delta.strides()[2] != lse.strides()[2]) {
    return false;
  }
  const Tensor& dl = delta.defined() ? delta : formed;
  ST_CUDA_CHECK(dispatch(q.dtype(), q.size(3), [&](auto t, auto dim) {
    using T = decltype(t);
    return flash::backward<T, decltype(dim)::value>(in<T>(q), in<T>(k), in<T>(v), in<T>(dout), lse.data<float>(),
                                                    dl.data<float>(), out<T>(dq), out<T>(dk), out<T>(dv), batch, g,
                                                    static_cast<float>(scale), causal, stream());
  }));
  return true;
}

}  // namespace st::backend::cuda
