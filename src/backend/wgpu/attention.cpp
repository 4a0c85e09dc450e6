// Tiled flash attention of the wgpu backend (kernels/attention.wgsl): Backend::flash_attention_masked
// and its backward (flash_attention and its backward are their mask-free, dropout-free calls), so
// scaled_dot_product_attention on wgpu never forms an (L, S) buffer, with or without an additive
// mask and dropout. Inputs of any float dtype WGSL holds (float32, float16, bfloat16) are read as
// such and computed in float32; lse and delta are float32. Operands and the mask are addressed
// through their own (B, H, rows, cols) strides, so head views of a packed projection, the
// (B, L, H, d) output/gradient layouts the caller allocates and a mask broadcast from (L, S) (zero
// strides) are read and written in place. Dropout draws dropout()'s Philox mask per tile in the
// kernels, in the forward and again in the backward (DropoutDraw, src/backend/backend.h).
#include <algorithm>
#include <array>
#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>

#include "backend/wgpu/kernels.h"

namespace st::backend::wgpu {

namespace {

// Head dims up to this take the kernel: each invocation keeps its row and accumulators in
// private arrays of d / 4 vec4s, and a tile row of k and v must fit workgroup memory.
constexpr int64_t kMaxHeadDim = 256;
constexpr int64_t kRowsPerGroup = 64;  // the kernels' WG: query (or key) rows per workgroup

// Parameter slots (attention.wgsl's P layout): five words per operand from these indices, then
// the dropout's six words (seed, counter, keep threshold, scale).
enum Slot : int {
  kQ = 9,
  kK = 14,
  kV = 19,
  kOut = 24,
  kLse = 29,
  kDelta = 34,
  kDq = 39,
  kDk = 44,
  kDv = 49,
  kMask = 54,
  kDropout = 59
};
constexpr int kParamWords = 65;
// P[6]'s flags.
constexpr int32_t kCausal = 1, kMasked = 2, kDropping = 4;
// Storage buffers the backward's dk/dv kernel binds: P and nine operands.
constexpr uint32_t kMaxBindings = 10;

// Whether t is a float tensor the kernels can bind.
bool bindable_float(const Tensor& t) {
  const Dtype d = t.dtype();
  return d == Dtype::Float32 || d == Dtype::Float16 || d == Dtype::BFloat16;
}

bool takes(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, const Tensor& lse) {
  if (Context::require("flash_attention").info().max_storage_buffers_per_shader_stage < kMaxBindings) return false;
  if (mask.defined() && (mask.dtype() != q.dtype() || mask.dim() != 4 || q.dim() != 4 || k.dim() != 4 ||
                         mask.shape() != Shape{q.shape()[0], q.shape()[1], q.shape()[2], k.shape()[2]})) {
    return false;
  }
  if (!bindable_float(q) || k.dtype() != q.dtype() || v.dtype() != q.dtype()) return false;
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4 || lse.dtype() != Dtype::Float32 || lse.dim() != 3) return false;
  const Shape& qs = q.shape();
  const Shape& ks = k.shape();
  const Shape& vs = v.shape();
  return ks[0] == qs[0] && vs[0] == qs[0] && ks[1] == qs[1] && vs[1] == qs[1] && ks[3] == qs[3] && vs[2] == ks[2] &&
         qs[3] <= kMaxHeadDim && vs[3] <= kMaxHeadDim && q.numel() > 0 && k.numel() > 0 && v.numel() > 0;
}

// The tile shape: d and dv in vec4s, and BC, the rows of the streamed operand per tile (the
// most that fit the adapter's workgroup memory, at most one per invocation; the dk/dv kernel
// also keeps two floats and two words of dropout bits per tile row).
struct Tile {
  int64_t d4, dv4, bc;
};
Tile tile_for(int64_t d, int64_t dv) {
  Tile t{(d + 3) / 4, (dv + 3) / 4, 0};
  const int64_t budget =
      std::min<int64_t>(Context::require("flash_attention").info().max_compute_workgroup_storage_size, 32768);
  t.bc = std::clamp<int64_t>(budget / ((t.d4 + t.dv4) * 16 + 16), 1, kRowsPerGroup);
  return t;
}

// n copies of `stmt` with '@' replaced by 0..n-1: the kernels' loops over a row's vec4s, unrolled
// so each private array is indexed by constants only (see attention.wgsl).
std::string unrolled(int64_t n, const std::string& stmt) {
  std::string out;
  for (int64_t c = 0; c < n; ++c) {
    const std::string i = std::to_string(c);
    for (const char ch : stmt) {
      if (ch == '@') {
        out += i;
      } else {
        out += ch;
      }
    }
  }
  return out;
}

Subs tile_subs(const Tile& t) {
  const int64_t D4 = t.d4, DV4 = t.dv4;
  return {{"D4", std::to_string(D4)},
          {"DV4", std::to_string(DV4)},
          {"BC", std::to_string(t.bc)},
          {"KS", std::to_string(t.bc * D4)},
          {"VS", std::to_string(t.bc * DV4)},
          {"LOAD_Q", unrolled(D4, "q[@] = sc * ld4_q(e, 4 * @, d, cs); ")},
          {"LOAD_G", unrolled(DV4, "g[@] = ld4_dout(eg, 4 * @, dv, cg); ")},
          {"LOAD_K", unrolled(D4, "k[@] = sc * ld4_k(e, 4 * @, d, cs); ")},
          {"LOAD_V", unrolled(DV4, "v[@] = ld4_v(ev, 4 * @, dv, cv); ")},
          {"DOT_Q_KS", unrolled(D4, "acc = fma(q[@], ks[jb + @], acc); ")},
          {"DOT_G_VS", unrolled(DV4, "b = fma(g[@], vs[jv + @], b); ")},
          {"DOT_K_QS", unrolled(D4, "acc = fma(k[@], qs[rb + @], acc); ")},
          {"SCALE_O", unrolled(DV4, "o[@] = o[@] * rescale; ")},
          {"AXPY_O", unrolled(DV4, "o[@] = fma(pv, vs[jv + @], o[@]); ")},
          {"AXPY_DQ", unrolled(D4, "dq[@] = fma(dsv, ks[jb + @], dq[@]); ")},
          {"AXPY_DK", unrolled(D4, "dk[@] = fma(dsv, qs[rb + @], dk[@]); ")},
          {"DOT_V_GS_AXPY_DV",
           unrolled(DV4, "{ let gv = gs[rv + @]; b = fma(gv, v[@], b); dvv[@] = fma(pv, gv, dvv[@]); } ")},
          {"STORE_OUT", unrolled(DV4, "st4_out(e, 4 * @, dv, cs, o[@] * inv); ")},
          {"STORE_DQ", unrolled(D4, "st4_dq(e, 4 * @, d, cs, sc * dq[@]); ")},
          {"STORE_DK", unrolled(D4, "st4_dk(e, 4 * @, d, cs, sc * dk[@]); ")},
          {"STORE_DV", unrolled(DV4, "st4_dv(ev, 4 * @, dv, cv, dvv[@]); ")}};
}

// Writes operand t's five words (offset, strides of B, H, rows, columns) at `slot`, checking that
// every element it addresses has a 32-bit index. lse/delta (B, H, L) read with no column stride.
void put(std::array<int32_t, kParamWords>& p, int slot, const Tensor& t) {
  const int32_t off = elem_offset(t);
  int64_t last = off;
  for (int64_t i = 0; i < t.dim(); ++i) last += (t.shape()[i] - 1) * std::max<int64_t>(t.strides()[i], 0);
  i32(last, "flash_attention element index");
  for (int64_t i = 0; i < t.dim(); ++i) {
    if (t.strides()[i] < 0) i32(off + (t.shape()[i] - 1) * t.strides()[i], "flash_attention element index");
  }
  p[slot] = off;
  for (int64_t i = 0; i < 4; ++i) p[slot + 1 + i] = i < t.dim() ? i32(t.strides()[i], "flash_attention stride") : 0;
}

// The words every kernel reads: sizes, flags, scale, and the mask slot and dropout words where
// they apply (an unmasked call binds q as the mask and never reads it).
std::array<int32_t, kParamWords> header(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                                        double scale, bool causal, const DropoutDraw& drop) {
  std::array<int32_t, kParamWords> p{};
  const int64_t B = q.shape()[0], H = q.shape()[1];
  p[0] = i32(B * H, "flash_attention batch x heads");
  p[1] = i32(H, "flash_attention heads");
  p[2] = i32(q.shape()[2], "flash_attention L");
  p[3] = i32(k.shape()[2], "flash_attention S");
  p[4] = i32(q.shape()[3], "flash_attention d");
  p[5] = i32(v.shape()[3], "flash_attention dv");
  p[6] = (causal ? kCausal : 0) | (mask.defined() ? kMasked : 0) | (drop.active() ? kDropping : 0);
  p[7] = fbits(scale);
  if (mask.defined()) put(p, kMask, mask);
  if (drop.active()) {
    p[kDropout] = static_cast<int32_t>(drop.seed & 0xffffffffu);
    p[kDropout + 1] = static_cast<int32_t>(drop.seed >> 32);
    p[kDropout + 2] = static_cast<int32_t>(drop.counter & 0xffffffffu);
    p[kDropout + 3] = static_cast<int32_t>(drop.counter >> 32);
    p[kDropout + 4] = fbits(drop.keep_below());  // dropout()'s float32 threshold, exactly
    p[kDropout + 5] = fbits(drop.scale());
  }
  return p;
}

// One workgroup per (batch x head, block of 64 rows).
void launch(const std::string& kernel, const std::vector<Arg>& args, const std::vector<BufferRef>& buffers,
            std::array<int32_t, kParamWords> p, int64_t rows, const Tile& t) {
  const int64_t blocks = (rows + kRowsPerGroup - 1) / kRowsPerGroup;
  p[8] = i32(blocks, "flash_attention row blocks");
  Context& ctx = Context::require("flash_attention");
  // Pipelines by kernel, dtypes and tile: the unrolled substitutions are kilobytes, too long to
  // rebuild and hash (pipeline_for's key) on every call.
  std::string key = kernel;
  for (const Arg& a : args) {
    key += ' ';
    key += dtype_name(a.dtype);
  }
  for (const int64_t n : {t.d4, t.dv4, t.bc}) {  // appends: GCC 12 misreads `" " + to_string` (-Wstringop-overflow)
    key += ' ';
    key += std::to_string(n);
  }
  static std::mutex mu;
  static std::unordered_map<std::string, WGPUComputePipeline> cache;
  WGPUComputePipeline pipe = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(key); it != cache.end()) pipe = it->second;
  }
  if (!pipe) {
    pipe = pipeline_for("attention", kernel, args, tile_subs(t));
    std::lock_guard<std::mutex> lock(mu);
    cache.emplace(std::move(key), pipe);
  }
  ctx.launch(pipe, buffers, {p.begin(), p.end()}, static_cast<int64_t>(p[0]) * blocks * kRowsPerGroup, kRowsPerGroup);
}

}  // namespace

bool flash_enabled() {
  static const bool on = [] {
    const char* env = std::getenv("SPIRALTORCH_WGPU_FLASH");
    return !(env && std::string(env) == "0");
  }();
  return on;
}

bool flash_attention_masked(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double scale,
                            bool causal, const DropoutDraw& dropout, Tensor& out, Tensor& lse) {
  if (!takes(q, k, v, mask, lse) || !bindable_float(out)) return false;
  const Tile t = tile_for(q.shape()[3], v.shape()[3]);
  auto p = header(q, k, v, mask, scale, causal, dropout);
  put(p, kQ, q);
  put(p, kK, k);
  put(p, kV, v);
  put(p, kOut, out);
  put(p, kLse, lse);
  const Tensor& m = mask.defined() ? mask : q;
  launch("flash_forward",
         {{"q", q.dtype()},
          {"k", k.dtype()},
          {"v", v.dtype()},
          {"out", out.dtype(), true},
          {"lse", lse.dtype(), true},
          {"mask", m.dtype()}},
         {ref(q), ref(k), ref(v), ref(out), ref(lse), ref(m)}, p, q.shape()[2], t);
  return true;
}

bool flash_attention_masked_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                                     const Tensor& out, const Tensor& dout, const Tensor& lse, const Tensor& delta,
                                     double scale, bool causal, const DropoutDraw& dropout, Tensor& dq, Tensor& dk,
                                     Tensor& dv) {
  if (!takes(q, k, v, mask, lse) || dout.dtype() != q.dtype() || delta.dtype() != Dtype::Float32) return false;
  if (!bindable_float(dq) || !bindable_float(dk) || !bindable_float(dv)) return false;
  const Tile t = tile_for(q.shape()[3], v.shape()[3]);
  auto p = header(q, k, v, mask, scale, causal, dropout);
  put(p, kQ, q);
  put(p, kK, k);
  put(p, kV, v);
  put(p, kOut, dout);
  put(p, kLse, lse);
  put(p, kDelta, delta);
  put(p, kDq, dq);
  put(p, kDk, dk);
  put(p, kDv, dv);
  const Tensor& m = mask.defined() ? mask : q;
  // dq per query row, then dk and dv per key row: each recomputes its probabilities (and its
  // dropout bits), which costs a second score product but needs no float atomics (WGSL has none)
  // and no (L, S) buffer.
  launch("flash_backward_dq",
         {{"q", q.dtype()},
          {"k", k.dtype()},
          {"v", v.dtype()},
          {"dout", dout.dtype()},
          {"lse", lse.dtype()},
          {"delta", delta.dtype()},
          {"dq", dq.dtype(), true},
          {"mask", m.dtype()}},
         {ref(q), ref(k), ref(v), ref(dout), ref(lse), ref(delta), ref(dq), ref(m)}, p, q.shape()[2], t);
  launch("flash_backward_dkdv",
         {{"q", q.dtype()},
          {"k", k.dtype()},
          {"v", v.dtype()},
          {"dout", dout.dtype()},
          {"lse", lse.dtype()},
          {"delta", delta.dtype()},
          {"dk", dk.dtype(), true},
          {"dv", dv.dtype(), true},
          {"mask", m.dtype()}},
         {ref(q), ref(k), ref(v), ref(dout), ref(lse), ref(delta), ref(dk), ref(dv), ref(m)}, p, k.shape()[2], t);
  return true;
}

bool flash_attention(const Tensor& q, const Tensor& k, const Tensor& v, double scale, bool causal, Tensor& out,
                     Tensor& lse) {
  return flash_attention_masked(q, k, v, Tensor(), scale, causal, DropoutDraw{}, out, lse);
}

bool flash_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor& dout,
                              const Tensor& lse, const Tensor& delta, double scale, bool causal, Tensor& dq, Tensor& dk,
                              Tensor& dv) {
  return flash_attention_masked_backward(q, k, v, Tensor(), out, dout, lse, delta, scale, causal, DropoutDraw{}, dq, dk,
                                         dv);
}

}  // namespace st::backend::wgpu
