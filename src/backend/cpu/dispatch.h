#pragma once
// Run-time choice of the CPU kernels' instruction set (PyTorch's CPU-capability dispatch is the
// model). The vectorised kernel sources (the list in cmake/SpiralCpuKernels.cmake: elementwise,
// reductions, softmax, attention softmax, flash attention, layer/batch norm, the LSTM/GRU gate
// loops, Adam, the cross-entropy rows, dtype conversion) are compiled once per capability, each
// time inside the namespace st::backend::cpu::CPU_CAPABILITY (-DCPU_CAPABILITY=baseline|avx2|avx512):
//
//   baseline  -march=x86-64-v2 (SSE4.2, POPCNT): every x86-64 CPU of the last 15 years; the rest
//             of the library is compiled for it too
//   avx2      -march=x86-64-v3 (AVX2, FMA, F16C, BMI2)
//   avx512    -march=x86-64-v4 (AVX-512 F/BW/CD/DQ/VL), 512-bit vectors in the vector-math loops
//
// Non-x86 builds compile the kernels once, as "baseline" for their target. Each capability's
// objects are linked into one relocatable object whose symbols are all local but its table
// (SPIRALTORCH_CPU_KERNELS_SYMBOL below), so no inline function or template compiled with AVX2 or
// AVX-512 can stand in for the copy that baseline code calls (a linker keeps one copy of each).
//
// At first use the table of the best capability this CPU supports is chosen (cpuid through
// __builtin_cpu_supports, which also checks that the OS saves the vector registers);
// SPIRALTORCH_CPU_CAPABILITY=baseline|avx2|avx512 forces one, and "auto" (or unset/empty) is the
// default. A forced capability this CPU or this build lacks is an error, raised by the first
// kernel call (DeviceUnavailableError, naming what the CPU supports), as is an unknown name
// (ValueError): running anything else than what was asked for would make a comparison between
// capabilities silently compare the wrong thing.
//
// The kernels below keep their st::backend::cpu names (kernels.h declares them; dispatch.cpp forwards
// each call to the chosen table), so callers never see the dispatch.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.h"

// One line per dispatched kernel: X(name, return type, parameters, arguments).
#define ST_CPU_DISPATCHED_KERNELS(X)                                                                                  \
  X(binary, void, (backend::BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out), (op, a, b, out))             \
  X(unary, void, (backend::UnaryOp op, const Tensor& x, Tensor& out, double p0, double p1), (op, x, out, p0, p1))     \
  X(copy, void, (const Tensor& src, Tensor& dst), (src, dst))                                                         \
  X(fill, void, (Tensor & dst, Scalar value), (dst, value))                                                           \
  X(where, void, (const Tensor& cond, const Tensor& a, const Tensor& b, Tensor& out), (cond, a, b, out))              \
  X(reduce, void, (backend::ReduceOp op, const Tensor& x, int64_t outer, int64_t r, int64_t inner, Tensor& out),      \
    (op, x, outer, r, inner, out))                                                                                    \
  X(arg_reduce, void,                                                                                                 \
    (bool is_max, const Tensor& x, int64_t outer, int64_t r, int64_t inner, Tensor& values, Tensor& indices),         \
    (is_max, x, outer, r, inner, values, indices))                                                                    \
  X(softmax, void, (const Tensor& x, int64_t rows, int64_t cols, bool log, Tensor& out), (x, rows, cols, log, out))   \
  X(softmax_backward, void, (const Tensor& g, const Tensor& y, int64_t rows, int64_t cols, bool log, Tensor& dx),     \
    (g, y, rows, cols, log, dx))                                                                                      \
  X(layer_norm, void,                                                                                                 \
    (const Tensor& x, const Tensor& w, const Tensor& b, int64_t rows, int64_t cols, double eps, Tensor& y,            \
     Tensor& mean, Tensor& rstd),                                                                                     \
    (x, w, b, rows, cols, eps, y, mean, rstd))                                                                        \
  X(layer_norm_backward, void,                                                                                        \
    (const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w, int64_t rows,         \
     int64_t cols, Tensor& dx, Tensor& dw, Tensor& db),                                                               \
    (g, x, mean, rstd, w, rows, cols, dx, dw, db))                                                                    \
  X(batch_norm_stats, void,                                                                                           \
    (const Tensor& x, int64_t n, int64_t c, int64_t l, double eps, Tensor& mean, Tensor& rstd, Tensor& var),          \
    (x, n, c, l, eps, mean, rstd, var))                                                                               \
  X(batch_norm_apply, void,                                                                                           \
    (const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w, const Tensor& b, int64_t n, int64_t c, \
     int64_t l, Tensor& y),                                                                                           \
    (x, mean, rstd, w, b, n, c, l, y))                                                                                \
  X(batch_norm_backward, void,                                                                                        \
    (const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w, int64_t n, int64_t c, \
     int64_t l, bool training, Tensor& dx, Tensor& dw, Tensor& db),                                                   \
    (g, x, mean, rstd, w, n, c, l, training, dx, dw, db))                                                             \
  X(attention_softmax, void,                                                                                          \
    (const Tensor& s, int64_t batch, int64_t L, int64_t S, double scale, bool causal, Tensor& p, Tensor& lse),        \
    (s, batch, L, S, scale, causal, p, lse))                                                                          \
  X(attention_softmax_backward, void,                                                                                 \
    (Tensor & s, Tensor & dp, const Tensor& lse, const Tensor& delta, int64_t batch, int64_t L, int64_t S,            \
     double scale, bool causal),                                                                                      \
    (s, dp, lse, delta, batch, L, S, scale, causal))                                                                  \
  X(flash_attention, bool,                                                                                            \
    (const Tensor& q, const Tensor& k, const Tensor& v, double scale, bool causal, Tensor& out, Tensor& lse),         \
    (q, k, v, scale, causal, out, lse))                                                                               \
  X(flash_attention_backward, bool,                                                                                   \
    (const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor& dout, const Tensor& lse,     \
     const Tensor& delta, double scale, bool causal, Tensor& dq, Tensor& dk, Tensor& dv),                             \
    (q, k, v, out, dout, lse, delta, scale, causal, dq, dk, dv))                                                      \
  X(flash_attention_masked, bool,                                                                                     \
    (const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double scale, bool causal,                \
     const DropoutDraw& dropout, Tensor& out, Tensor& lse),                                                           \
    (q, k, v, mask, scale, causal, dropout, out, lse))                                                                \
  X(flash_attention_masked_backward, bool,                                                                            \
    (const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, const Tensor& out, const Tensor& dout,    \
     const Tensor& lse, const Tensor& delta, double scale, bool causal, const DropoutDraw& dropout, Tensor& dq,       \
     Tensor& dk, Tensor& dv),                                                                                         \
    (q, k, v, mask, out, dout, lse, delta, scale, causal, dropout, dq, dk, dv))                                       \
  X(adam_update, void, (std::span<const backend::Backend::AdamSlot> slots, const backend::Backend::AdamArgs& a),      \
    (slots, a))                                                                                                       \
  X(sgd_update, void, (std::span<const backend::Backend::SgdSlot> slots, const backend::Backend::SgdArgs& a),         \
    (slots, a))                                                                                                       \
  X(adagrad_update, void,                                                                                             \
    (std::span<const backend::Backend::AdagradSlot> slots, const backend::Backend::AdagradArgs& a), (slots, a))       \
  X(rmsprop_update, void,                                                                                             \
    (std::span<const backend::Backend::RmspropSlot> slots, const backend::Backend::RmspropArgs& a), (slots, a))       \
  X(flag_nonfinite, void, (std::span<const Tensor> xs, Tensor & flag), (xs, flag))                                    \
  X(lstm_forward, void,                                                                                               \
    (const Tensor& xproj, const Tensor& w, const Tensor& h0, const Tensor& c0, Tensor& hc, Tensor& acts),             \
    (xproj, w, h0, c0, hc, acts))                                                                                     \
  X(lstm_backward, void,                                                                                              \
    (const Tensor& g, const Tensor& hc, const Tensor& acts, const Tensor& w, const Tensor& h0, const Tensor& c0,      \
     Tensor& dx, Tensor& dw, Tensor& dh0, Tensor& dc0),                                                               \
    (g, hc, acts, w, h0, c0, dx, dw, dh0, dc0))                                                                       \
  X(gru_forward, void,                                                                                                \
    (const Tensor& xproj, const Tensor& w, const Tensor& bhh, const Tensor& h0, Tensor& hs, Tensor& saved),           \
    (xproj, w, bhh, h0, hs, saved))                                                                                   \
  X(gru_backward, void,                                                                                               \
    (const Tensor& g, const Tensor& hs, const Tensor& saved, const Tensor& w, const Tensor& h0, Tensor& dx,           \
     Tensor& dw, Tensor& dbhh, Tensor& dh0),                                                                          \
    (g, hs, saved, w, h0, dx, dw, dbhh, dh0))                                                                         \
  /* The float32 softmax cross-entropy rows (src/nn/loss.cpp), over one contiguous row of logits:  */                 \
  /* max_i x[i] (NaNs skipped; they reach the sum); sum_i exp(x[i] - shift) in float64 of float32   */                \
  /* exponentials; gx[i] = g * (a * exp(x[i] - lse) - b * w[i]) (w = 1 when null).                  */                \
  X(row_max, float, (const float* x, int64_t n), (x, n))                                                              \
  X(row_sum_exp, double, (const float* x, int64_t n, float shift), (x, n, shift))                                     \
  X(row_ce_grad, void, (const float* x, const float* w, int64_t n, float lse, float g, float a, float b, float* gx),  \
    (x, w, n, lse, g, a, b, gx))                                                                                      \
  /* A row of bfloat16 (bf16) or float16 bits widened to float32, and float32 rounded back to one */                  \
  /* (nearest-even, as the dtype casts round): the half rows of the same cross-entropy.           */                  \
  X(row_to_floats, void, (const uint16_t* x, int64_t n, bool bf16, float* v), (x, n, bf16, v))                        \
  X(row_from_floats, void, (const float* v, int64_t n, bool bf16, uint16_t* o), (v, n, bf16, o))

#define ST_CPU_DECLARE_KERNEL(name, ret, params, args) ret name params;
#define ST_CPU_KERNEL_FIELD(name, ret, params, args) ret(*name) params;

namespace st::backend::cpu {

enum class Capability : int { Baseline = 0, Avx2 = 1, Avx512 = 2 };
inline constexpr int kNumCapabilities = 3;

// One capability's kernels.
struct Kernels {
  ST_CPU_DISPATCHED_KERNELS(ST_CPU_KERNEL_FIELD)
};

// "baseline", "avx2", "avx512".
const char* capability_name(Capability c);
// A set of capabilities as bits (1 << int(Capability)).
using CapabilitySet = unsigned;
inline constexpr CapabilitySet capability_bit(Capability c) { return 1u << static_cast<int>(c); }

CapabilitySet host_capabilities();   // what this CPU (and its OS) can run
CapabilitySet built_capabilities();  // what this build compiled

// The capability to use, given SPIRALTORCH_CPU_CAPABILITY's value (null when unset), what the CPU
// supports and what the build has: the best of host & built unless forced (the rules above).
// Throws ValueError for an unknown name, DeviceUnavailableError for one the CPU or build lacks.
Capability select_capability(const char* requested, CapabilitySet host, CapabilitySet built);

// The table chosen at first use (throws what select_capability throws, at every call).
const Kernels& kernels();
Capability active_capability();
// The table of one capability, or null when this build or this CPU lacks it (tests compare them).
const Kernels* kernels_for(Capability c);

}  // namespace st::backend::cpu

// The table of one capability, defined in its kernel objects (kernel_table.cpp): the one global
// symbol each capability's relocatable object keeps.
#define ST_CPU_CAT2(a, b) a##b
#define ST_CPU_CAT(a, b) ST_CPU_CAT2(a, b)
#define SPIRALTORCH_CPU_KERNELS_SYMBOL(cap) ST_CPU_CAT(spiraltorch_cpu_kernels_, cap)

#ifdef CPU_CAPABILITY
// Inside a kernel object: this capability's definitions of the kernels.
namespace st::backend::cpu::CPU_CAPABILITY {
ST_CPU_DISPATCHED_KERNELS(ST_CPU_DECLARE_KERNEL)
}  // namespace st::backend::cpu::CPU_CAPABILITY
#endif
