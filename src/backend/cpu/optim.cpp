// The CPU's multi-tensor optimizer steps (Adam/AdamW, SGD, Adagrad, RMSprop) and the non-finite
// check: every parameter of one optimizer step in one parallel region, split into equal chunks
// across slots, each chunk a vector loop with PyTorch's single-tensor arithmetic.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"

namespace st::backend::cpu::CPU_CAPABILITY {  // compiled once per CPU capability (dispatch.h)

namespace {

constexpr int64_t kChunk = 8192;  // elements per work item: whole vector loops, even split

// Runs run(slot, begin, end) over every slot's elements in kChunk pieces, in one parallel region.
template <typename Slots, typename Run>
void for_chunks(const Slots& slots, Run run) {
  struct Work {
    int64_t slot, begin, end;
  };
  std::vector<Work> work;
  int64_t total = 0;
  for (size_t i = 0; i < slots.size(); ++i) {
    const int64_t n = slots[i].param.numel();
    total += n;
    for (int64_t b = 0; b < n; b += kChunk) work.push_back({static_cast<int64_t>(i), b, std::min(n, b + kChunk)});
  }
  const int64_t items = static_cast<int64_t>(work.size());
  if (items == 0) return;
#pragma omp parallel for num_threads(num_threads_for(total)) schedule(static)
  for (int64_t w = 0; w < items; ++w) run(slots[work[w].slot], work[w].begin, work[w].end);
}

// Calls f(T{}) with the slots' dtype: double for float64, float for float32 (else DtypeError).
template <typename Slots, typename F>
void float_cases(const char* op, const Slots& slots, F f) {
  if (slots.empty()) return;
  const Dtype dt = slots.front().param.dtype();
  for (const auto& s : slots) {
    if (s.param.dtype() != dt || (dt != Dtype::Float32 && dt != Dtype::Float64)) {
      throw DtypeError(std::string(op) +
                       ": the fused CPU update takes float32 or float64 parameters of one dtype, got " +
                       dtype_name(dt) + " and " + dtype_name(s.param.dtype()));
    }
  }
  if (dt == Dtype::Float64)
    f(double{});
  else
    f(float{});
}

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
  float_cases("adam_update", slots, [&](auto tag) {
    using T = decltype(tag);
    for_chunks(slots, [&](const backend::Backend::AdamSlot& s, int64_t b, int64_t e) { adam_dispatch<T>(s, a, b, e); });
  });
}

namespace {

template <typename T, bool kMomentum>
void sgd_run(const backend::Backend::SgdSlot& s, const backend::Backend::SgdArgs& a, int64_t begin, int64_t end) {
  T* __restrict p = s.param.data<T>();
  const T* __restrict g = s.grad.data<T>();
  T* __restrict bp = kMomentum ? s.buf.data<T>() : nullptr;
  const T neg_lr = static_cast<T>(-a.lr), mom = static_cast<T>(a.momentum), damp = static_cast<T>(1.0 - a.dampening),
          wd = static_cast<T>(a.weight_decay), sign = a.maximize ? T(-1) : T(1);
  const bool has_wd = a.weight_decay != 0.0, first = a.first_step, nesterov = a.nesterov;
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) {
    T d = sign * g[i];
    if (has_wd) d = d + wd * p[i];
    if constexpr (kMomentum) {
      const T bi = first ? d : bp[i] * mom + damp * d;
      bp[i] = bi;
      d = nesterov ? d + mom * bi : bi;
    }
    p[i] = p[i] + neg_lr * d;
  }
}

template <typename T>
void adagrad_run(const backend::Backend::AdagradSlot& s, const backend::Backend::AdagradArgs& a, int64_t begin,
                 int64_t end) {
  T* __restrict p = s.param.data<T>();
  const T* __restrict g = s.grad.data<T>();
  T* __restrict sp = s.sum.data<T>();
  const T wd = static_cast<T>(a.weight_decay), eps = static_cast<T>(a.eps), neg_clr = static_cast<T>(-a.clr),
          sign = a.maximize ? T(-1) : T(1);
  const bool has_wd = a.weight_decay != 0.0;
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) {
    T gi = sign * g[i];
    if (has_wd) gi = gi + wd * p[i];
    const T si = sp[i] + gi * gi;
    sp[i] = si;
    p[i] = p[i] + neg_clr * (gi / (std::sqrt(si) + eps));
  }
}

template <typename T, bool kCentered, bool kMomentum>
void rmsprop_run(const backend::Backend::RmspropSlot& s, const backend::Backend::RmspropArgs& a, int64_t begin,
                 int64_t end) {
  T* __restrict p = s.param.data<T>();
  const T* __restrict g = s.grad.data<T>();
  T* __restrict sq = s.square_avg.data<T>();
  T* __restrict ga = kCentered ? s.grad_avg.data<T>() : nullptr;
  T* __restrict bp = kMomentum ? s.buf.data<T>() : nullptr;
  const T al = static_cast<T>(a.alpha), w = static_cast<T>(1.0 - a.alpha), wd = static_cast<T>(a.weight_decay),
          eps = static_cast<T>(a.eps), mom = static_cast<T>(a.momentum), neg_lr = static_cast<T>(-a.lr),
          sign = a.maximize ? T(-1) : T(1);
  const bool has_wd = a.weight_decay != 0.0, low = w < T(0.5);  // torch.lerp's two forms
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) {
    T gi = sign * g[i];
    if (has_wd) gi = gi + wd * p[i];
    const T si = sq[i] * al + w * gi * gi;
    sq[i] = si;
    T avg;
    if constexpr (kCentered) {
      const T g0 = ga[i];
      const T gai = low ? g0 + w * (gi - g0) : gi - (gi - g0) * (T(1) - w);
      ga[i] = gai;
      avg = std::sqrt(si + T(-1) * gai * gai);
    } else {
      avg = std::sqrt(si);
    }
    avg = avg + eps;
    if constexpr (kMomentum) {
      const T bi = bp[i] * mom + gi / avg;
      bp[i] = bi;
      p[i] = p[i] + neg_lr * bi;
    } else {
      p[i] = p[i] + neg_lr * (gi / avg);
    }
  }
}

}  // namespace

void sgd_update(std::span<const backend::Backend::SgdSlot> slots, const backend::Backend::SgdArgs& a) {
  if (a.skip && *a.skip != 0) return;
  float_cases("sgd_update", slots, [&](auto tag) {
    using T = decltype(tag);
    for_chunks(slots, [&](const backend::Backend::SgdSlot& s, int64_t b, int64_t e) {
      s.buf.defined() ? sgd_run<T, true>(s, a, b, e) : sgd_run<T, false>(s, a, b, e);
    });
  });
}

void adagrad_update(std::span<const backend::Backend::AdagradSlot> slots, const backend::Backend::AdagradArgs& a) {
  if (a.skip && *a.skip != 0) return;
  float_cases("adagrad_update", slots, [&](auto tag) {
    using T = decltype(tag);
    for_chunks(slots,
               [&](const backend::Backend::AdagradSlot& s, int64_t b, int64_t e) { adagrad_run<T>(s, a, b, e); });
  });
}

void rmsprop_update(std::span<const backend::Backend::RmspropSlot> slots, const backend::Backend::RmspropArgs& a) {
  if (a.skip && *a.skip != 0) return;
  float_cases("rmsprop_update", slots, [&](auto tag) {
    using T = decltype(tag);
    for_chunks(slots, [&](const backend::Backend::RmspropSlot& s, int64_t b, int64_t e) {
      const bool c = s.grad_avg.defined(), m = s.buf.defined();
      if (c) {
        m ? rmsprop_run<T, true, true>(s, a, b, e) : rmsprop_run<T, true, false>(s, a, b, e);
      } else {
        m ? rmsprop_run<T, false, true>(s, a, b, e) : rmsprop_run<T, false, false>(s, a, b, e);
      }
    });
  });
}

void flag_nonfinite(std::span<const Tensor> xs, Tensor& flag) {
  int bad = 0;
  for (const Tensor& x : xs) {
    const int64_t n = x.numel();
    auto scan = [&](auto tag) {
      using T = decltype(tag);
      const T* p = x.data<T>();
      int b = 0;
#pragma omp parallel for reduction(| : b) num_threads(num_threads_for(n)) schedule(static)
      for (int64_t i = 0; i < n; ++i) b |= !std::isfinite(p[i]);
      bad |= b;
    };
    if (x.dtype() == Dtype::Float64) {
      scan(double{});
    } else if (x.dtype() == Dtype::Float32) {
      scan(float{});
    } else {
      throw DtypeError(std::string("flag_nonfinite: expected float32 or float64, got ") + dtype_name(x.dtype()));
    }
    if (bad) break;
  }
  if (bad) *flag.data<int32_t>() = 1;
}

}  // namespace st::backend::cpu::CPU_CAPABILITY
