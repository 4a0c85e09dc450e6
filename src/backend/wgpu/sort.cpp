// Sort / top-k (bitonic; int64 keys by rank) and masked_select (stream compaction by blocks) of
// the wgpu backend (kernels/sort.wgsl).
#include <algorithm>

#include "backend/wgpu/kernels.h"
#include "spiraltorch/error.h"

namespace st::backend::wgpu {

namespace {

std::string move_expr(Dtype d, const std::string& out) {
  if (d == Dtype::Int64) {
    return "B_" + out + "[2 * dst] = B_x[2 * src]; B_" + out + "[2 * dst + 1] = B_x[2 * src + 1];";
  }
  return is_float_domain(d) ? "stf_" + out + "(dst, ldf_x(src));" : "sti_" + out + "(dst, ldi_x(src));";
}

// Stable bitonic sort of each line (keys in the float32 or int32 domain) through scratch
// keys/indices of P2 = next power of two >= n slots per line: chunks of up to 2048 slots sort in
// workgroup memory, longer lines merge with global steps down to the chunk size and finish each
// stage in workgroup memory; then the first min(n, k) slots are written out.
void bitonic_sort(const Tensor& x, int64_t outer, int64_t n, int64_t inner, int64_t k, bool descending, Tensor& values,
                  Tensor& indices) {
  const bool f = is_float_domain(x.dtype());
  const std::string D = f ? "f" : "i", T = f ? "f32" : "i32";
  // (av, ai) before (bv, bi): padding (index -1) last, then the key order, then the index.
  const std::string lt = f ? "(X < Y) || (!is_nan(X) && is_nan(Y))" : "X < Y";
  const std::string eq = f ? "(av == bv) || (is_nan(av) && is_nan(bv))" : "av == bv";
  std::string order = lt;
  const std::string first = descending ? "bv" : "av", second = descending ? "av" : "bv";
  for (size_t at = order.find('X'); at != std::string::npos; at = order.find('X')) order.replace(at, 1, first);
  for (size_t at = order.find('Y'); at != std::string::npos; at = order.find('Y')) order.replace(at, 1, second);
  const std::string before = "if (ai < 0) { return false; } if (bi < 0) { return true; } if (" + order +
                             ") { return true; } if (" + eq + ") { return ai < bi; } return false;";
  int64_t P2 = 1;
  while (P2 < n) P2 <<= 1;
  const int64_t lines = outer * inner, CH = std::min<int64_t>(P2, 2048);
  const Dtype kd = f ? Dtype::Float32 : Dtype::Int32;
  Tensor kv = Tensor::empty({lines * P2}, kd, x.device());
  Tensor ki = Tensor::empty({lines * P2}, Dtype::Int32, x.device());
  i32(lines * P2, "sort slots");
  const std::vector<Arg> scratch{{"kv", kd, true}, {"ki", Dtype::Int32, true}};
  const Subs subs{{"D", D}, {"T", T}, {"BEFORE", before}};
  run("sort", "bitonic_init", {{"x", x.dtype()}, scratch[0], scratch[1]}, {ref(x), ref(kv), ref(ki)},
      {i32(lines * P2, "slots"), i32(n, "n"), i32(inner, "inner"), i32(P2, "P2"), elem_offset(x)}, lines * P2, subs);
  const int64_t chunks = lines * P2 / CH;
  auto chunk = [&](int64_t kk0, int64_t kk1, int64_t j0) {
    run("sort", "bitonic_chunk", scratch, {ref(kv), ref(ki)},
        {i32(chunks, "chunks"), i32(P2, "P2"), i32(CH, "chunk"), i32(kk0, "stage"), i32(kk1, "stage"), i32(j0, "step")},
        chunks * 256, subs);
  };
  if (P2 > 1) chunk(2, CH, 1);
  for (int64_t kk = CH * 2; kk <= P2; kk <<= 1) {
    for (int64_t j = kk / 2; j >= CH; j >>= 1) {
      run("sort", "bitonic_step", scratch, {ref(kv), ref(ki)},
          {i32(lines * P2 / 2, "pairs"), i32(P2, "P2"), i32(kk, "stage"), i32(j, "step")}, lines * P2 / 2, subs);
    }
    chunk(kk, kk, CH / 2);
  }
  const int64_t kc = std::min(n, k);
  run("sort", "bitonic_emit",
      {{"x", x.dtype()}, {"values", values.dtype(), true}, {"indices", indices.dtype(), true}, {"ki", Dtype::Int32}},
      {ref(x), ref(values), ref(indices), ref(ki)},
      {i32(lines * kc, "outputs"), i32(kc, "k"), i32(n, "n"), i32(inner, "inner"), i32(k, "k"), i32(P2, "P2"),
       elem_offset(x), elem_offset(values), elem_offset(indices)},
      lines * kc, {{"MOVE", move_expr(x.dtype(), "values")}});
}

}  // namespace

void sort(const Tensor& x, int64_t outer, int64_t n, int64_t inner, int64_t k, bool descending, Tensor& values,
          Tensor& indices) {
  check_dtype("sort", x.dtype());
  if (outer * n * inner == 0 || k == 0) return;
  if (x.dtype() != Dtype::Int64) return bitonic_sort(x, outer, n, inner, k, descending, values, indices);
  std::string less, eq;
  // int64 keys (two words): every element counts the elements that precede it (O(n) each).
  less =
      "(bitcast<i32>(B_x[2 * a + 1]) < bitcast<i32>(B_x[2 * b + 1])) || "
      "(B_x[2 * a + 1] == B_x[2 * b + 1] && B_x[2 * a] < B_x[2 * b])";
  eq = "B_x[2 * a] == B_x[2 * b] && B_x[2 * a + 1] == B_x[2 * b + 1]";
  run("sort", "rank_sort", {{"x", x.dtype()}, {"values", values.dtype(), true}, {"indices", indices.dtype(), true}},
      {ref(x), ref(values), ref(indices)},
      {i32(outer * n * inner, "numel"), i32(n, "n"), i32(inner, "inner"), i32(k, "k"), descending ? 1 : 0,
       elem_offset(x), elem_offset(values), elem_offset(indices)},
      outer * n * inner, {{"LESS", less}, {"EQ", eq}, {"MOVE", move_expr(x.dtype(), "values")}});
}

void masked_select(const Tensor& x, const Tensor& mask, Tensor& out) {
  check_dtype("masked_select", x.dtype());
  if (x.numel() == 0 || out.numel() == 0) return;
  // Blocks of 1024: counts, their exclusive scan (one workgroup), then placement in order.
  const int64_t n = x.numel(), blocks = (n + 1023) / 1024;
  Tensor counts = Tensor::empty({blocks}, Dtype::Int32, x.device());
  const int32_t nb = i32(blocks, "blocks");
  run("sort", "mask_count", {{"mask", mask.dtype()}, {"counts", Dtype::Int32, true}}, {ref(mask), ref(counts)},
      {i32(n, "numel"), elem_offset(mask), nb}, blocks * 256);
  Context& c = Context::require("masked_select");
  c.dispatch(pipeline_for("sort", "mask_scan", {{"counts", Dtype::Int32, true}}), {ref(counts)}, {nb}, 1);
  run("sort", "mask_place",
      {{"x", x.dtype()}, {"mask", mask.dtype()}, {"out", out.dtype(), true}, {"counts", Dtype::Int32}},
      {ref(x), ref(mask), ref(out), ref(counts)},
      {i32(n, "numel"), elem_offset(x), elem_offset(mask), elem_offset(out), nb}, blocks * 256,
      {{"MOVE", move_expr(x.dtype(), "out")}});
}

}  // namespace st::backend::wgpu
