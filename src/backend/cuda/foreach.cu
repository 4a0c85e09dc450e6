// Multi-tensor ("foreach") kernels: the optimizer updates and the non-finite check over many
// tensors in a few launches. Up to kSlots tensors travel by value in the kernel's parameters
// (no host-to-device copy, so no stream sync and nothing to keep alive); each block handles
// one kChunk-element chunk of one tensor, found by a scan of the packed block offsets.
#include <array>
#include <span>
#include <string>
#include <vector>

#include "backend/cuda/common.cuh"
#include "backend/cuda/kernels.h"

namespace st::backend::cuda {

constexpr int kForeachSlots = 32;

// Pointers of up to kForeachSlots tensors (kArrays per tensor), their sizes and first block.
template <typename T, int kArrays>
struct ForeachPack {
  T* ptr[kArrays][kForeachSlots];
  int64_t n[kForeachSlots];
  int64_t first_block[kForeachSlots + 1];
  int count;
};

namespace {

constexpr int kSlots = kForeachSlots;
constexpr int kChunk = kThreads * 8;

// Calls f(slot, i) for the chunk of this block.
template <typename P, typename F>
__device__ inline void for_chunk(const P& pk, F f) {
  int s = 0;
  while (s + 1 < pk.count && pk.first_block[s + 1] <= blockIdx.x) ++s;
  const int64_t begin = (static_cast<int64_t>(blockIdx.x) - pk.first_block[s]) * kChunk;
  const int64_t end = begin + kChunk < pk.n[s] ? begin + kChunk : pk.n[s];
#pragma unroll 8
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) f(s, i);
}

template <typename T, int kArrays, typename F>
__global__ void foreach_kernel(ForeachPack<T, kArrays> pk, F f) {
  for_chunk(pk, [&](int s, int64_t i) { f(pk, s, i); });
}

// Packs `count` tensors in groups of kSlots (arrays(k) gives the kArrays pointers of tensor k) and
// calls launch(pack, blocks) for each group.
template <typename T, int kArrays, typename Arrays, typename Launch>
void for_each_pack(size_t count, Arrays arrays, const std::vector<int64_t>& sizes, Launch launch) {
  for (size_t base = 0; base < count; base += kSlots) {
    ForeachPack<T, kArrays> pk{};
    int64_t blocks = 0;
    pk.count = 0;
    for (size_t k = base; k < count && k < base + kSlots; ++k) {
      if (sizes[k] == 0) continue;
      const int s = pk.count++;
      const auto ptrs = arrays(k);
      for (int a = 0; a < kArrays; ++a) pk.ptr[a][s] = ptrs[a];
      pk.n[s] = sizes[k];
      pk.first_block[s] = blocks;
      blocks += (sizes[k] + kChunk - 1) / kChunk;
    }
    if (pk.count == 0) continue;
    pk.first_block[pk.count] = blocks;
    launch(pk, static_cast<unsigned>(blocks));
    ST_CUDA_LAUNCH_CHECK();
  }
}

// Launches f over `count` tensors in groups of kSlots; arrays(k) gives the kArrays pointers of tensor k.
template <typename T, int kArrays, typename Arrays, typename F>
void launch_foreach(size_t count, Arrays arrays, const std::vector<int64_t>& sizes, F f) {
  for_each_pack<T, kArrays>(count, arrays, sizes, [&](const ForeachPack<T, kArrays>& pk, unsigned blocks) {
    foreach_kernel<T, kArrays><<<blocks, kThreads, 0, stream()>>>(pk, f);
  });
}

// Sets *flag to 1 when its block's chunk holds a non-finite value. A thread only ORs what it loads
// (no store between the loads), so all of its chunk's loads are in flight at once; one store per block.
template <typename T>
__global__ void nonfinite_kernel(ForeachPack<T, 1> pk, int* flag) {
  bool bad = false;
  for_chunk(pk, [&](int s, int64_t i) { bad |= !isfinite(pk.ptr[0][s][i]); });
  if (__syncthreads_or(bad) && threadIdx.x == 0) *flag = 1;
}

void check_float(Dtype d, const char* what) {
  if (d != Dtype::Float64 && d != Dtype::Float32) {
    throw DtypeError(std::string(what) + ": fused CUDA update supports float32 and float64, got " + dtype_name(d));
  }
}

template <typename T>
T* ptr_or_null(const Tensor& t) {
  return t.defined() ? static_cast<T*>(t.raw_data()) : nullptr;
}

}  // namespace

namespace {

// Adam over slots whose param, grad and moments are stored as S and computed in T (S = T, or a
// half type with T = float, as PyTorch's fused Adam keeps bfloat16 moments and computes in float).
template <typename S, typename T>
void adam_typed(std::span<const backend::Backend::AdamSlot> slots, const backend::Backend::AdamArgs& a,
                const std::vector<int64_t>& sizes) {
  const T w1 = static_cast<T>(1.0 - a.beta1), b2 = static_cast<T>(a.beta2), w2 = static_cast<T>(1.0 - a.beta2);
  const T wd = static_cast<T>(a.weight_decay), decay = static_cast<T>(a.decay), eps = static_cast<T>(a.eps);
  const T neg_step = static_cast<T>(-a.step_size), bcs = static_cast<T>(a.bc2_sqrt);
  const bool maximize = a.maximize, decoupled = a.decoupled, has_wd = a.weight_decay != 0.0, ams = a.amsgrad;
  const int32_t* skip = a.skip;
  // Adam(capturable=True): a first launch advances each slot's device step count (T) and writes its
  // (step_size, bc2_sqrt) pair, in double as the host path computes them, into `coef`; the update
  // then reads the pair, so no per-step number comes from the host and the launches can be
  // captured into a CUDA graph.
  Tensor coef;
  if (a.device_step) {
    coef = Tensor::empty({static_cast<int64_t>(2 * slots.size())}, slots.front().step.dtype(),
                         slots.front().param.device());
    T* c = static_cast<T*>(coef.raw_data());
    const double lr = a.step_size, beta1 = a.beta1, beta2 = a.beta2;
    auto steps = [&](size_t k) { return std::array<T*, 2>{ptr_or_null<T>(slots[k].step), c + 2 * k}; };
    launch_foreach<T, 2>(slots.size(), steps, std::vector<int64_t>(slots.size(), 1),
                         [=] __device__(const ForeachPack<T, 2>& pk, int s, int64_t) {
      if (skip && *skip != 0) return;
      const double k = static_cast<double>(pk.ptr[0][s][0]) + 1.0;
      pk.ptr[0][s][0] = static_cast<T>(k);
      pk.ptr[1][s][0] = static_cast<T>(lr / (1.0 - pow(beta1, k)));
      pk.ptr[1][s][1] = static_cast<T>(sqrt(1.0 - pow(beta2, k)));
    });
  }
  T* const coef_base = coef.defined() ? static_cast<T*>(coef.raw_data()) : nullptr;
  auto arrays = [&](size_t k) {
    const auto& s = slots[k];
    return std::array<void*, 6>{ptr_or_null<S>(s.param),
                                ptr_or_null<S>(s.grad),
                                ptr_or_null<S>(s.m),
                                ptr_or_null<S>(s.v),
                                ams ? ptr_or_null<S>(s.vmax) : nullptr,
                                coef_base ? coef_base + 2 * k : nullptr};
  };
  launch_foreach<void, 6>(slots.size(), arrays, sizes,
                          [=] __device__(const ForeachPack<void, 6>& pk, int s, int64_t i) {
    if (skip && *skip != 0) return;
    S* p = static_cast<S*>(pk.ptr[0][s]);
    const S* g = static_cast<const S*>(pk.ptr[1][s]);
    S* mp = static_cast<S*>(pk.ptr[2][s]);
    S* vp = static_cast<S*>(pk.ptr[3][s]);
    S* vm = static_cast<S*>(pk.ptr[4][s]);
    const T* cf = static_cast<const T*>(pk.ptr[5][s]);
    const T step_neg = cf ? -cf[0] : neg_step;
    const T bc2s = cf ? cf[1] : bcs;
    T gi = maximize ? -convert<T>(g[i]) : convert<T>(g[i]);
    T pi = convert<T>(p[i]);
    if (decoupled) {
      pi = pi * decay;
    } else if (has_wd) {
      gi = gi + wd * pi;
    }
    const T m0 = convert<T>(mp[i]);
    const T mi = m0 + w1 * (gi - m0);
    const T vi = convert<T>(vp[i]) * b2 + w2 * gi * gi;
    mp[i] = convert<S>(mi);
    vp[i] = convert<S>(vi);
    T denom;
    if (vm) {
      const T v0 = convert<T>(vm[i]);
      const T mx = v0 > vi ? v0 : vi;
      vm[i] = convert<S>(mx);
      denom = sqrt(mx) / bc2s + eps;
    } else {
      denom = sqrt(vi) / bc2s + eps;
    }
    p[i] = convert<S>(pi + step_neg * (mi / denom));
  });
}

}  // namespace

void adam_update(std::span<const backend::Backend::AdamSlot> slots, const backend::Backend::AdamArgs& a) {
  if (slots.empty()) return;
  const Dtype dt = slots.front().param.dtype();
  if (!is_half(dt)) check_float(dt, "adam");
  std::vector<int64_t> sizes;
  for (const auto& s : slots) {
    if (s.param.dtype() != dt) {
      throw DtypeError(std::string("adam: one fused update mixes ") + dtype_name(dt) + " and " +
                       dtype_name(s.param.dtype()) + " parameters");
    }
    sizes.push_back(s.param.numel());
  }
  if (dt == Dtype::BFloat16) return adam_typed<__nv_bfloat16, float>(slots, a, sizes);
  if (dt == Dtype::Float16) return adam_typed<__half, float>(slots, a, sizes);
  ST_CUDA_FLOAT_CASES(dt, { adam_typed<T, T>(slots, a, sizes); });
}

void sgd_update(std::span<const backend::Backend::SgdSlot> slots, const backend::Backend::SgdArgs& a) {
  if (slots.empty()) return;
  const Dtype dt = slots.front().param.dtype();
  check_float(dt, "sgd");
  std::vector<int64_t> sizes;
  for (const auto& s : slots) {
    if (s.param.dtype() != dt) {
      throw DtypeError(std::string("sgd: one fused update mixes ") + dtype_name(dt) + " and " +
                       dtype_name(s.param.dtype()) + " parameters");
    }
    sizes.push_back(s.param.numel());
  }
  ST_CUDA_FLOAT_CASES(dt, {
    const T lr = static_cast<T>(a.lr), mom = static_cast<T>(a.momentum), damp = static_cast<T>(1.0 - a.dampening),
            wd = static_cast<T>(a.weight_decay);
    const bool maximize = a.maximize, nesterov = a.nesterov, first = a.first_step, has_wd = a.weight_decay != 0.0;
    const int32_t* skip = a.skip;
    auto arrays = [&](size_t k) {
      const auto& s = slots[k];
      return std::array<T*, 3>{ptr_or_null<T>(s.param), ptr_or_null<T>(s.grad), ptr_or_null<T>(s.buf)};
    };
    launch_foreach<T, 3>(slots.size(), arrays, sizes, [=] __device__(const ForeachPack<T, 3>& pk, int s, int64_t i) {
      if (skip && *skip != 0) return;
      T* p = pk.ptr[0][s];
      const T* g = pk.ptr[1][s];
      T* b = pk.ptr[2][s];
      T d = maximize ? -g[i] : g[i];
      if (has_wd) d = d + wd * p[i];
      if (b) {
        const T bi = first ? d : b[i] * mom + damp * d;
        b[i] = bi;
        d = nesterov ? d + mom * bi : bi;
      }
      p[i] = p[i] + (-lr) * d;
    });
  });
}

namespace {

// The slots' dtype (all one float dtype, else DtypeError) and their sizes.
template <typename Slot>
Dtype slot_dtype(std::span<const Slot> slots, const char* op, std::vector<int64_t>& sizes) {
  const Dtype dt = slots.front().param.dtype();
  check_float(dt, op);
  for (const auto& s : slots) {
    if (s.param.dtype() != dt) {
      throw DtypeError(std::string(op) + ": one fused update mixes " + dtype_name(dt) + " and " +
                       dtype_name(s.param.dtype()) + " parameters");
    }
    sizes.push_back(s.param.numel());
  }
  return dt;
}

}  // namespace

void adagrad_update(std::span<const backend::Backend::AdagradSlot> slots, const backend::Backend::AdagradArgs& a) {
  if (slots.empty()) return;
  std::vector<int64_t> sizes;
  const Dtype dt = slot_dtype(slots, "adagrad", sizes);
  ST_CUDA_FLOAT_CASES(dt, {
    const T neg_clr = static_cast<T>(-a.clr), wd = static_cast<T>(a.weight_decay), eps = static_cast<T>(a.eps);
    const bool maximize = a.maximize, has_wd = a.weight_decay != 0.0;
    const int32_t* skip = a.skip;
    auto arrays = [&](size_t k) {
      const auto& s = slots[k];
      return std::array<T*, 3>{ptr_or_null<T>(s.param), ptr_or_null<T>(s.grad), ptr_or_null<T>(s.sum)};
    };
    launch_foreach<T, 3>(slots.size(), arrays, sizes, [=] __device__(const ForeachPack<T, 3>& pk, int s, int64_t i) {
      if (skip && *skip != 0) return;
      T* p = pk.ptr[0][s];
      const T* g = pk.ptr[1][s];
      T* sp = pk.ptr[2][s];
      T gi = maximize ? -g[i] : g[i];
      if (has_wd) gi = gi + wd * p[i];
      const T si = sp[i] + gi * gi;
      sp[i] = si;
      p[i] = p[i] + neg_clr * (gi / (sqrt(si) + eps));
    });
  });
}

void rmsprop_update(std::span<const backend::Backend::RmspropSlot> slots, const backend::Backend::RmspropArgs& a) {
  if (slots.empty()) return;
  std::vector<int64_t> sizes;
  const Dtype dt = slot_dtype(slots, "rmsprop", sizes);
  ST_CUDA_FLOAT_CASES(dt, {
    const T al = static_cast<T>(a.alpha), w = static_cast<T>(1.0 - a.alpha), wd = static_cast<T>(a.weight_decay),
            eps = static_cast<T>(a.eps), mom = static_cast<T>(a.momentum), neg_lr = static_cast<T>(-a.lr);
    const bool maximize = a.maximize, has_wd = a.weight_decay != 0.0, low = w < T(0.5);
    const int32_t* skip = a.skip;
    auto arrays = [&](size_t k) {
      const auto& s = slots[k];
      return std::array<T*, 5>{ptr_or_null<T>(s.param), ptr_or_null<T>(s.grad), ptr_or_null<T>(s.square_avg),
                               ptr_or_null<T>(s.grad_avg), ptr_or_null<T>(s.buf)};
    };
    launch_foreach<T, 5>(slots.size(), arrays, sizes, [=] __device__(const ForeachPack<T, 5>& pk, int s, int64_t i) {
      if (skip && *skip != 0) return;
      T* p = pk.ptr[0][s];
      const T* g = pk.ptr[1][s];
      T* sq = pk.ptr[2][s];
      T* ga = pk.ptr[3][s];
      T* bp = pk.ptr[4][s];
      T gi = maximize ? -g[i] : g[i];
      if (has_wd) gi = gi + wd * p[i];
      const T si = sq[i] * al + w * gi * gi;
      sq[i] = si;
      T avg;
      if (ga) {
        const T g0 = ga[i];
        const T gai = low ? g0 + w * (gi - g0) : gi - (gi - g0) * (T(1) - w);
        ga[i] = gai;
        avg = sqrt(si + T(-1) * gai * gai);
      } else {
        avg = sqrt(si);
      }
      avg = avg + eps;
      if (bp) {
        const T bi = bp[i] * mom + gi / avg;
        bp[i] = bi;
        p[i] = p[i] + neg_lr * bi;
      } else {
        p[i] = p[i] + neg_lr * (gi / avg);
      }
    });
  });
}

void flag_nonfinite(std::span<const Tensor> xs, Tensor& flag) {
  int* f = static_cast<int*>(flag.raw_data());
  for (const Dtype dt : {Dtype::Float32, Dtype::Float64}) {
    std::vector<const Tensor*> group;
    std::vector<int64_t> sizes;
    for (const Tensor& x : xs) {
      if (x.dtype() != Dtype::Float64 && x.dtype() != Dtype::Float32) {
        throw DtypeError(std::string("flag_nonfinite: expected float32 or float64, got ") + dtype_name(x.dtype()));
      }
      if (x.dtype() != dt) continue;
      group.push_back(&x);
      sizes.push_back(x.numel());
    }
    if (group.empty()) continue;
    ST_CUDA_FLOAT_CASES(dt, {
      auto arrays = [&](size_t k) { return std::array<T*, 1>{static_cast<T*>(group[k]->raw_data())}; };
      // Every offending block stores the same 1: the race between them is harmless.
      for_each_pack<T, 1>(group.size(), arrays, sizes, [&](const ForeachPack<T, 1>& pk, unsigned blocks) {
        nonfinite_kernel<T><<<blocks, kThreads, 0, stream()>>>(pk, f);
      });
    });
  }
}

}  // namespace st::backend::cuda
