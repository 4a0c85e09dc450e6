// The CPU's multi-tensor Adam/AdamW step: every parameter of one optimizer step in one
// parallel region, split into equal chunks across slots, each chunk a vector loop.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"

namespace st::cpu::CPU_CAPABILITY {  // compiled once per CPU capability (dispatch.h)

namespace {

constexpr int64_t kAdamChunk = 8192;  // elements per work item: whole vector loops, even split

// One contiguous run [begin, end) of one slot. Same arithmetic as PyTorch's single-tensor
// Adam: m = lerp(m, g, 1 - beta1), v = beta2 v + (1 - beta2) g^2, p -= step_size m / (sqrt(v) / bc2_sqrt + eps).
template <typename T, bool kAmsgrad, bool kL2>
void adam_run(const backend::Backend::AdamSlot& s, const backend::Backend::AdamArgs& a, int64_t begin, int64_t end) {
  T* __restrict p = s.param.data<T>();
  const T* __restrict g = s.grad.data<T>();
  T* __restrict mp = s.m.data<T>();
  T* __restrict vp = s.v.data<T>();
  T* __restrict vm = kAmsgrad ? s.vmax.data<T>() : nullptr;
  const T w1 = static_cast<T>(1.0 - a.beta1), b2 = static_cast<T>(a.beta2), w2 = static_cast<T>(1.0 - a.beta2);
  const T wd = static_cast<T>(a.weight_decay), eps = static_cast<T>(a.eps), bcs = static_cast<T>(a.bc2_sqrt);
  const T decay = a.decoupled ? static_cast<T>(a.decay) : T(1);  // multiplying by 1 is exact
  const T sign = a.maximize ? T(-1) : T(1), neg_step = static_cast<T>(-a.step_size);
  const bool low = w1 < T(0.5);  // torch.lerp's two forms
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) {
    T gi = sign * g[i];
    const T pi = p[i] * decay;
    if constexpr (kL2) gi = gi + wd * pi;
    const T m0 = mp[i];
    const T mi = low ? m0 + w1 * (gi - m0) : gi - (gi - m0) * (T(1) - w1);
    const T vi = vp[i] * b2 + w2 * gi * gi;
    mp[i] = mi;
    vp[i] = vi;
    T vd = vi;
    if constexpr (kAmsgrad) {
      vd = std::max(vm[i], vi);
      vm[i] = vd;
    }
    p[i] = pi + neg_step * (mi / (std::sqrt(vd) / bcs + eps));
  }
}

template <typename T>
void adam_dispatch(const backend::Backend::AdamSlot& s, const backend::Backend::AdamArgs& a, int64_t begin,
                   int64_t end) {
  const bool l2 = !a.decoupled && a.weight_decay != 0.0;
  if (a.amsgrad) {
    l2 ? adam_run<T, true, true>(s, a, begin, end) : adam_run<T, true, false>(s, a, begin, end);
  } else {
    l2 ? adam_run<T, false, true>(s, a, begin, end) : adam_run<T, false, false>(s, a, begin, end);
  }
}

}  // namespace

void adam_update(std::span<const backend::Backend::AdamSlot> slots, const backend::Backend::AdamArgs& a) {
  if (a.skip && *a.skip != 0) return;
  if (a.device_step) {
    // Adam(capturable=True): each slot's own count, advanced here; the same double-precision
    // bias correction as the host path, so both give the same numbers.
    for (const auto& s : slots) {
      const bool f64 = s.step.dtype() == Dtype::Float64;
      const double k = (f64 ? *s.step.data<double>() : *s.step.data<float>()) + 1.0;
      if (f64) {
        *s.step.data<double>() = k;
      } else {
        *s.step.data<float>() = static_cast<float>(k);
      }
      backend::Backend::AdamArgs one = a;
      one.device_step = false;
      one.step_size = a.step_size / (1.0 - std::pow(a.beta1, k));
      one.bc2_sqrt = std::sqrt(1.0 - std::pow(a.beta2, k));
      adam_update(std::span<const backend::Backend::AdamSlot>(&s, 1), one);
    }
    return;
  }
  struct Work {
    int64_t slot, begin, end;
  };
  std::vector<Work> work;
  int64_t total = 0;
  for (size_t i = 0; i < slots.size(); ++i) {
    const int64_t n = slots[i].param.numel();
    total += n;
    for (int64_t b = 0; b < n; b += kAdamChunk) {
      work.push_back({static_cast<int64_t>(i), b, std::min(n, b + kAdamChunk)});
    }
  }
  if (work.empty()) return;
  const bool f64 = slots.front().param.dtype() == Dtype::Float64;
  const int64_t items = static_cast<int64_t>(work.size());
#pragma omp parallel for num_threads(num_threads_for(total)) schedule(static)
  for (int64_t w = 0; w < items; ++w) {
    const Work& it = work[w];
    if (f64) {
      adam_dispatch<double>(slots[it.slot], a, it.begin, it.end);
    } else {
      adam_dispatch<float>(slots[it.slot], a, it.begin, it.end);
    }
  }
}

}  // namespace st::cpu::CPU_CAPABILITY
