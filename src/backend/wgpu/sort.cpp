// Sort / top-k (by rank) and masked_select (stream compaction) of the wgpu backend
// (kernels/sort.wgsl).
#include "backend/wgpu/kernels.h"
#include "spiraltorch/error.h"

namespace st::wgpuk {

namespace {

std::string move_expr(Dtype d, const std::string& out) {
  if (d == Dtype::Int64) {
    return "B_" + out + "[2 * dst] = B_x[2 * src]; B_" + out + "[2 * dst + 1] = B_x[2 * src + 1];";
  }
  return is_float_domain(d) ? "stf_" + out + "(dst, ldf_x(src));" : "sti_" + out + "(dst, ldi_x(src));";
}

}  // namespace

void sort(const Tensor& x, int64_t outer, int64_t n, int64_t inner, int64_t k, bool descending, Tensor& values,
          Tensor& indices) {
  check_dtype("sort", x.dtype());
  if (outer * n * inner == 0 || k == 0) return;
  std::string less, eq;
  if (is_float_domain(x.dtype())) {
    less = "(ldf_x(a) < ldf_x(b)) || (!is_nan(ldf_x(a)) && is_nan(ldf_x(b)))";
    eq = "(ldf_x(a) == ldf_x(b)) || (is_nan(ldf_x(a)) && is_nan(ldf_x(b)))";
  } else if (x.dtype() == Dtype::Int64) {  // (signed high word, unsigned low word)
    less = "(bitcast<i32>(B_x[2 * a + 1]) < bitcast<i32>(B_x[2 * b + 1])) || "
           "(B_x[2 * a + 1] == B_x[2 * b + 1] && B_x[2 * a] < B_x[2 * b])";
    eq = "B_x[2 * a] == B_x[2 * b] && B_x[2 * a + 1] == B_x[2 * b + 1]";
  } else {
    less = "ldi_x(a) < ldi_x(b)";
    eq = "ldi_x(a) == ldi_x(b)";
  }
  run("sort", "rank_sort", {{"x", x.dtype()}, {"values", values.dtype(), true}, {"indices", indices.dtype(), true}},
      {ref(x), ref(values), ref(indices)},
      {i32(outer * n * inner, "numel"), i32(n, "n"), i32(inner, "inner"), i32(k, "k"), descending ? 1 : 0,
       elem_offset(x), elem_offset(values), elem_offset(indices)},
      outer * n * inner, {{"LESS", less}, {"EQ", eq}, {"MOVE", move_expr(x.dtype(), "values")}});
}

void masked_select(const Tensor& x, const Tensor& mask, Tensor& out) {
  check_dtype("masked_select", x.dtype());
  if (x.numel() == 0 || out.numel() == 0) return;
  Context& c = Context::require("masked_select");
  const std::vector<Arg> args{{"x", x.dtype()}, {"mask", mask.dtype()}, {"out", out.dtype(), true}};
  const auto pipe = c.pipeline(wgsl("sort", "compact", args, {{"MOVE", move_expr(x.dtype(), "out")}}), 3);
  c.dispatch(pipe, {ref(x), ref(mask), ref(out)},
             {i32(x.numel(), "numel"), elem_offset(x), elem_offset(mask), elem_offset(out)}, 1);
}

}  // namespace st::wgpuk
