// The backend's flash_attention entries: which operands the fused kernels of
// flash_attention.cuh take, and the launch per dtype and head dim.
//
// Taken: float16 / bfloat16 (tensor cores, float32 softmax and accumulation), and float32 when
// TF32 is allowed for matmuls (st::cuda::allow_tf32: the products run in TF32 as cuBLAS's would),
// head dims 32, 64 and 128, 16-byte aligned contiguous operands, switched on
// (st::cuda::flash_sdp_enabled). float32 without TF32 stays on the exact GEMM path.
#include <array>
#include <climits>

#include "backend/cuda/common.cuh"
#include "backend/cuda/flash_attention.cuh"
#include "backend/cuda/kernels.h"

namespace st::cudak {

namespace {

bool aligned(const Tensor& t) { return reinterpret_cast<uintptr_t>(t.raw_data()) % 16 == 0; }

bool takes(const Tensor& q, int64_t batch, int64_t L, int64_t S, int64_t d) {
  if (!st::cuda::flash_sdp_enabled()) return false;
  const Dtype dt = q.dtype();
  if (dt != Dtype::Float16 && dt != Dtype::BFloat16 && !(dt == Dtype::Float32 && st::cuda::allow_tf32())) return false;
  if (d != 32 && d != 64 && d != 128) return false;
  if (L <= 0 || S <= 0 || L > INT_MAX / 2 || S > INT_MAX / 2) return false;
  const int64_t tiles = (std::max(L, S) + flash::kTile - 1) / flash::kTile;
  return batch > 0 && batch * tiles <= INT_MAX;
}

template <typename F>
cudaError_t dispatch(Dtype dt, int64_t d, F f) {
  auto by_dim = [&](auto t) {
    using T = decltype(t);
    switch (d) {
      case 32: return f(T{}, std::integral_constant<int, 32>{});
      case 64: return f(T{}, std::integral_constant<int, 64>{});
      default: return f(T{}, std::integral_constant<int, 128>{});
    }
  };
  if (dt == Dtype::Float32) return by_dim(float{});
  return dt == Dtype::Float16 ? by_dim(__half{}) : by_dim(__nv_bfloat16{});
}

template <typename T>
const T* in(const Tensor& t) { return static_cast<const T*>(t.raw_data()); }
template <typename T>
T* out(Tensor& t) { return static_cast<T*>(t.raw_data()); }

}  // namespace

bool flash_attention(const Tensor& q, const Tensor& k, const Tensor& v, int64_t batch, int64_t L, int64_t S, int64_t d,
                     double scale, bool causal, Tensor& o, Tensor& lse) {
  if (!takes(q, batch, L, S, d) || !aligned(q) || !aligned(k) || !aligned(v) || !aligned(o)) return false;
  ST_CUDA_CHECK(dispatch(q.dtype(), d, [&](auto t, auto dim) {
    using T = decltype(t);
    return flash::forward<T, decltype(dim)::value>(in<T>(q), in<T>(k), in<T>(v), out<T>(o), lse.data<float>(), batch,
                                                   static_cast<int>(L), static_cast<int>(S),
                                                   static_cast<float>(scale), causal, stream());
  }));
  return true;
}

bool flash_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& dout, const Tensor& lse,
                              const Tensor& delta, int64_t batch, int64_t L, int64_t S, int64_t d, double scale,
                              bool causal, Tensor& dq, Tensor& dk, Tensor& dv) {
  if (!takes(q, batch, L, S, d)) return false;
  const std::array<const Tensor*, 7> operands{&q, &k, &v, &dout, &dq, &dk, &dv};
  for (const Tensor* t : operands) {
    if (!aligned(*t)) return false;
  }
  ST_CUDA_CHECK(dispatch(q.dtype(), d, [&](auto t, auto dim) {
    using T = decltype(t);
    return flash::backward<T, decltype(dim)::value>(in<T>(q), in<T>(k), in<T>(v), in<T>(dout), lse.data<float>(),
                                                    delta.data<float>(), out<T>(dq), out<T>(dk), out<T>(dv), batch,
                                                    static_cast<int>(L), static_cast<int>(S),
                                                    static_cast<float>(scale), causal, stream());
  }));
  return true;
}

}  // namespace st::cudak
