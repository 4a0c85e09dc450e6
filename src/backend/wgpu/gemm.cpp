// GEMM of the wgpu backend (kernels/gemm.wgsl): tiled in workgroup memory, float32; two tile
// shapes by problem size.
#include "backend/wgpu/kernels.h"
#include "spiraltorch/error.h"

namespace st::wgpuk {

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
  // Large products take 128x128 tiles (8x8 outputs per invocation, K steps of 8); the rest 64x64
  // tiles (4x4, K steps of 16), which waste less on small or thin matrices.
  const bool big = m >= 256 && n >= 256 && k >= 64;
  const int T = big ? 128 : 64, K = big ? 8 : 16;
  const std::string Ts = std::to_string(T), Ks = std::to_string(K);
  // The tile loads: 1024 elements of A (K x T: As[p * T + i]) and of B (Bs[p * T + j]), zero
  // outside the matrices. Consecutive invocations read along the memory-contiguous axis.
  const std::string aidx = ta ? "aoff + (p0 + p) * lda + (row0 + i)" : "aoff + (row0 + i) * lda + (p0 + p)";
  const std::string bidx = tb ? "boff + (col0 + j) * ldb + (p0 + p)" : "boff + (p0 + p) * ldb + (col0 + j)";
  const std::string aget = ta ? "let p = idx / " + Ts + "; let i = idx % " + Ts + ";"
                              : "let i = idx / " + Ks + "; let p = idx % " + Ks + ";";
  const std::string bget = tb ? "let j = idx / " + Ks + "; let p = idx % " + Ks + ";"
                              : "let p = idx / " + Ts + "; let j = idx % " + Ts + ";";
  const std::string loads = "{ " + aget + " var v = 0.0; if (row0 + i < m && p0 + p < k) { v = ldf_a(" + aidx +
                            "); } As[p * " + Ts + " + i] = v; }\n      { " + bget +
                            " var v = 0.0; if (col0 + j < n && p0 + p < k) { v = ldf_b(" + bidx + "); } Bs[p * " + Ts +
                            " + j] = v; }";
  const std::vector<Arg> args{{"a", Dtype::Float32}, {"b", Dtype::Float32}, {"c", Dtype::Float32, true}};
  const auto pipe = ctx.pipeline(wgsl("gemm", big ? "tiled128" : "tiled", args, {{"LOADS", loads}}), 3);
  const std::vector<int32_t> p{i32(m, "m"), i32(n, "n"), i32(k, "k"), i32(lda, "lda"), i32(ldb, "ldb"),
                               i32(ldc, "ldc"), i32(static_cast<int64_t>(ra.offset / 4), "a offset"),
                               i32(static_cast<int64_t>(rb.offset / 4), "b offset"),
                               i32(static_cast<int64_t>(rc.offset / 4), "c offset"), i32(sa, "stride a"),
                               i32(sb, "stride b"), i32(sc, "stride c"), fbits(alpha), fbits(beta)};
  ctx.dispatch(pipe, {ra, rb, rc}, p, static_cast<uint32_t>((n + T - 1) / T), static_cast<uint32_t>((m + T - 1) / T),
               static_cast<uint32_t>(batch));
}

}  // namespace st::wgpuk
