// GEMM of the wgpu backend (kernels/gemm.wgsl): register-blocked tiles through workgroup memory,
// float32. Two tile shapes by problem size; this file generates the kernel's loads (vector or
// scalar per operand, by alignment, for each transpose), its unrolled products and its epilogue.
#include <array>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include "backend/wgpu/kernels.h"
#include "spiraltorch/error.h"

namespace st::backend::wgpu {

namespace {

std::string S(int64_t v) { return std::to_string(v); }

// The loads of one operand tile (BK x BM floats, one vec4 per invocation) into register `reg`
// from K step q0, and their store into workgroup array `sh` laid out [p][row / 4] as vec4.
// `along_k`: the operand's contiguous axis is K (A untransposed, B transposed), else the
// rows/columns axis. `vec`: that axis is 4-aligned (offset, leading dimension, batch stride and
// extent), so one vector load covers four elements that are all inside or all outside.
struct Loads {
  std::string load, store;
};
Loads operand(const std::string& X, const std::string& reg, const std::string& sh, const std::string& off,
              const std::string& ld, const std::string& rc0, const std::string& ext, bool along_k, bool vec, int BM,
              int BK) {
  const std::string BM4 = S(BM / 4), KV = S(BK / 4);
  Loads o;
  if (along_k) {
    const std::string idx = "let r = l / " + KV + "; let q = (l % " + KV + ") * 4; ";
    o.load = "{ " + idx + "let gi = " + rc0 + " + r; let gp = q0 + q; " + reg + " = vec4<f32>(0.0); ";
    if (vec) {
      o.load +=
          "if (gi < " + ext + " && gp < k) { " + reg + " = " + X + "[(" + off + " + gi * " + ld + " + gp) >> 2u]; } }";
    } else {
      o.load += "if (gi < " + ext + ") { let at = " + off + " + gi * " + ld + " + gp; ";
      const char* comp[4] = {"x", "y", "z", "w"};
      for (int e = 0; e < 4; ++e) {
        o.load += "if (gp + " + S(e) + " < k) { " + reg + "." + comp[e] + " = " + X + "[at + " + S(e) + "]; } ";
      }
      o.load += "} }";
    }
    o.store = "{ " + idx;
    for (int e = 0; e < 4; ++e) {
      o.store += sh + "[(q + " + S(e) + ") * " + BM4 + " + (r >> 2u)][r & 3] = " + reg + "[" + S(e) + "]; ";
    }
    o.store += "}";
  } else {
    const std::string idx = "let p = l / " + BM4 + "; let iq = (l % " + BM4 + ") * 4; ";
    o.load = "{ " + idx + "let gi = " + rc0 + " + iq; let gp = q0 + p; " + reg + " = vec4<f32>(0.0); ";
    if (vec) {
      o.load +=
          "if (gp < k && gi < " + ext + ") { " + reg + " = " + X + "[(" + off + " + gp * " + ld + " + gi) >> 2u]; } }";
    } else {
      o.load += "if (gp < k) { let at = " + off + " + gp * " + ld + " + gi; ";
      const char* comp[4] = {"x", "y", "z", "w"};
      for (int e = 0; e < 4; ++e) {
        o.load +=
            "if (gi + " + S(e) + " < " + ext + ") { " + reg + "." + comp[e] + " = " + X + "[at + " + S(e) + "]; } ";
      }
      o.load += "} }";
    }
    o.store = "{ " + idx + sh + "[p * " + BM4 + " + (iq >> 2u)] = " + reg + "; }";
  }
  return o;
}

bool aligned4(int64_t v) { return v % 4 == 0; }

// SPIRALTORCH_WGPU_GEMM_TILE=64|128 forces one tile shape (and no split K) for every product: an
// experiment switch for timing the two kernels on a GPU (bench/profile_wgpu_step.py); 0 when unset.
// SPIRALTORCH_WGPU_GEMM_READONLY=0 binds A and B read_write as before (they are bound read-only
// otherwise): the other experiment switch for GPU timings.
bool readonly_operands() {
  static const bool on = [] {
    const char* env = std::getenv("SPIRALTORCH_WGPU_GEMM_READONLY");
    return !(env && std::string(env) == "0");
  }();
  return on;
}

int forced_tile() {
  static const int tile = [] {
    const char* env = std::getenv("SPIRALTORCH_WGPU_GEMM_TILE");
    if (!env || !*env) return 0;
    const std::string v(env);
    if (v != "64" && v != "128") {
      throw ValueError("SPIRALTORCH_WGPU_GEMM_TILE must be 64 or 128, got '" + v + "'");
    }
    return std::stoi(v);
  }();
  return tile;
}

std::string kernel_text(bool ta, bool tb, bool va, bool vb, bool vc, int BM, bool ro);

}  // namespace

void gemm(Dtype dtype, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const void* a, int64_t lda,
          int64_t sa, const void* b, int64_t ldb, int64_t sb, double beta, void* c, int64_t ldc, int64_t sc,
          int64_t batch) {
  if (dtype != Dtype::Float32) {
    check_dtype("gemm", dtype);
    throw DtypeError(std::string("wgpu.gemm: dtype ") + dtype_name(dtype) + " is not supported (float32 only)");
  }
  if (m == 0 || n == 0 || batch == 0) return;
  Context& ctx = Context::require("gemm");
  const BufferRef ra = ctx.resolve(a), rb = ctx.resolve(b), rc = ctx.resolve(c);
  const int64_t aoff = static_cast<int64_t>(ra.offset / 4), boff = static_cast<int64_t>(rb.offset / 4),
                coff = static_cast<int64_t>(rc.offset / 4);
  // Large products take 128x128 tiles (8x8 outputs per invocation, K steps of 8) when that still
  // gives a GPU 128 workgroups; the rest 64x64 tiles (4x4, K steps of 16), which waste less on
  // small or thin matrices. Either way one tile
  // step of each operand is 1024 floats, one vec4 per invocation.
  auto tiles = [&](int64_t t) { return ((m + t - 1) / t) * ((n + t - 1) / t) * batch; };
  const int forced = forced_tile();
  const bool big = forced ? forced == 128 : m >= 256 && n >= 256 && k >= 64 && (tiles(128) >= 128 || ctx.cpu_adapter());
  const int BM = big ? 128 : 64;
  // Too few tiles to occupy a large GPU and a long K: split K into S slices (multiples of the K
  // step, at least 128 long) computed side by side into a scratch, then summed (splitk_sum).
  int64_t S = 1, Ks = k;
  if (!big && !forced && tiles(64) < 128 && k >= 256 && !ctx.cpu_adapter()) {
    S = std::min<int64_t>((256 + tiles(64) - 1) / tiles(64), k / 128);
    const int64_t BK = 1024 / BM;
    Ks = ((k + S - 1) / S + BK - 1) / BK * BK;
    S = (k + Ks - 1) / Ks;
    if (S <= 1) {
      S = 1;
      Ks = k;
    }
  }
  // Vector access where the contiguous axis is 4-aligned in every batch item.
  auto base_ok = [&](int64_t off, int64_t ld, int64_t stride) {
    return aligned4(off) && aligned4(ld) && (batch == 1 || aligned4(stride));
  };
  const bool va = base_ok(aoff, lda, sa) && aligned4(ta ? m : k);
  const bool vb = base_ok(boff, ldb, sb) && aligned4(tb ? k : n);
  const bool vc = S > 1 ? aligned4(n) : base_ok(coff, ldc, sc) && aligned4(n);
  // A and B read-only unless C (or the split-K scratch, never) is one of their buffers.
  const bool ro = readonly_operands() && (S > 1 || (ra.buffer != rc.buffer && rb.buffer != rc.buffer));
  // The kernel text depends only on the tile, the transposes, the vector choices and the access.
  static std::mutex mu;
  static std::map<std::array<int, 7>, WGPUComputePipeline> cache;
  const std::array<int, 7> key{BM, ta, tb, va, vb, vc, ro};
  WGPUComputePipeline pipe = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(key); it != cache.end()) pipe = it->second;
  }
  if (!pipe) {
    pipe = ctx.pipeline(kernel_text(ta, tb, va, vb, vc, BM, ro), 3, ro ? 0b011u : 0u,
                        std::string("gemm ") + (ta ? "T" : "N") + (tb ? "T" : "N") + " tile " + std::to_string(BM));
    std::lock_guard<std::mutex> lock(mu);
    cache.emplace(key, pipe);
  }
  const uint32_t gx = static_cast<uint32_t>((n + BM - 1) / BM), gy = static_cast<uint32_t>((m + BM - 1) / BM);
  if (S == 1) {
    const std::vector<int32_t> p{
        i32(m, "m"),         i32(n, "n"),           i32(k, "k"),           i32(lda, "lda"),       i32(ldb, "ldb"),
        i32(ldc, "ldc"),     i32(aoff, "a offset"), i32(boff, "b offset"), i32(coff, "c offset"), i32(sa, "stride a"),
        i32(sb, "stride b"), i32(sc, "stride c"),   fbits(alpha),          fbits(beta),           1,
        i32(k, "k")};
    ctx.dispatch(pipe, {ra, rb, rc}, p, gx, gy, static_cast<uint32_t>(batch));
    return;
  }
  Tensor w = Tensor::empty({batch * S * m * n}, Dtype::Float32, Device(DeviceType::WGPU));
  const BufferRef rw = ctx.resolve(w.raw_data());
  const int64_t woff = static_cast<int64_t>(rw.offset / 4);
  const std::vector<int32_t> p{i32(m, "m"),
                               i32(n, "n"),
                               i32(k, "k"),
                               i32(lda, "lda"),
                               i32(ldb, "ldb"),
                               i32(n, "n"),
                               i32(aoff, "a offset"),
                               i32(boff, "b offset"),
                               i32(woff, "scratch offset"),
                               i32(sa, "stride a"),
                               i32(sb, "stride b"),
                               i32(m * n, "m * n"),
                               fbits(1.0),
                               fbits(0.0),
                               i32(S, "slices"),
                               i32(Ks, "slice")};
  i32(batch * S * m * n, "split-K scratch");
  ctx.dispatch(pipe, {ra, rb, rw}, p, gx, gy, static_cast<uint32_t>(batch * S));
  ctx.launch(pipeline_for("gemm", "splitk_sum", {}, {}, 2), {rw, rc},
             {i32(batch * m * n, "outputs"), i32(m * n, "m * n"), i32(n, "n"), i32(S, "slices"), i32(coff, "c offset"),
              i32(ldc, "ldc"), i32(sc, "stride c"), fbits(alpha), fbits(beta)},
             batch * m * n);
}

namespace {

std::string kernel_text(bool ta, bool tb, bool va, bool vb, bool vc, int BM, bool ro) {
  const int BK = 1024 / BM, TM = BM / 16, G = TM / 4, HALF = BM / 2;
  const Loads la = operand("A", "ra", "As", "aoff", "lda", "row0", "m", !ta, va, BM, BK);
  const Loads lb = operand("B", "rb", "Bs", "boff", "ldb", "col0", "n", tb, vb, BM, BK);

  const char* comp[4] = {"x", "y", "z", "w"};
  auto acc = [](int g, int r, int h) { return std::string("c") + char('0' + g) + char('0' + r) + char('0' + h); };
  std::string decl, fmas, epi;
  for (int g = 0; g < G; ++g)
    for (int r = 0; r < 4; ++r)
      for (int h = 0; h < G; ++h) decl += "  var " + acc(g, r, h) + " = vec4<f32>(0.0);\n";
  const int BM4 = BM / 4;
  for (int p = 0; p < BK; ++p) {
    fmas += "    {\n";
    for (int g = 0; g < G; ++g) fmas += "      let a" + S(g) + " = As[" + S(p * BM4 + g * 16) + " + ty];\n";
    for (int h = 0; h < G; ++h) fmas += "      let b" + S(h) + " = Bs[" + S(p * BM4 + h * 16) + " + tx];\n";
    for (int g = 0; g < G; ++g)
      for (int r = 0; r < 4; ++r)
        for (int h = 0; h < G; ++h) {
          const std::string cv = acc(g, r, h);
          fmas += "      " + cv + " = fma(vec4<f32>(a" + S(g) + "." + comp[r] + "), b" + S(h) + ", " + cv + ");\n";
        }
    fmas += "    }\n";
  }
  for (int g = 0; g < G; ++g)
    for (int r = 0; r < 4; ++r) {
      epi += "  {\n    let i = row0 + " + S(g * HALF + r) + " + ty * 4;\n    if (i < m) {\n";
      for (int h = 0; h < G; ++h) {
        const std::string cv = acc(g, r, h);
        epi += "      {\n        let j = col0 + " + S(h * HALF) + " + tx * 4;\n        let at = coff + i * ldc + j;\n";
        if (vc) {
          epi += "        if (j < n) { var v = alpha * " + cv +
                 "; if (beta != 0.0) { v = v + beta * C[at >> 2u]; } C[at >> 2u] = v; }\n";
        } else {
          for (int e = 0; e < 4; ++e) {
            epi += "        if (j + " + S(e) + " < n) { var v = alpha * " + cv + "." + comp[e] +
                   "; if (beta != 0.0) { v = v + beta * C[at + " + S(e) + "]; } C[at + " + S(e) + "] = v; }\n";
          }
        }
        epi += "      }\n";
      }
      epi += "    }\n  }\n";
    }
  const Subs subs{{"BM", S(BM)},
                  {"BK", S(BK)},
                  {"TM", S(TM)},
                  {"HALF", S(HALF)},
                  {"AT", va ? "vec4<f32>" : "f32"},
                  {"BT", vb ? "vec4<f32>" : "f32"},
                  {"CT", vc ? "vec4<f32>" : "f32"},
                  {"LOADA", la.load},
                  {"LOADB", lb.load},
                  {"STOREA", la.store},
                  {"STOREB", lb.store},
                  {"DECL", decl},
                  {"FMAS", fmas},
                  {"EPILOGUE", epi},
                  {"AB_ACCESS", ro ? "read" : "read_write"}};
  return wgsl("gemm", "tiled", {}, subs);
}

}  // namespace

}  // namespace st::backend::wgpu
