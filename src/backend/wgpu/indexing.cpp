// Indexing entries of the wgpu backend (kernels/indexing.wgsl): gather, index_select,
// scatter_add, cat and triangle.
#include "backend/wgpu/kernels.h"
#include "spiraltorch/error.h"

namespace st::backend::wgpu {

namespace {

// Moves element `src` of x to element `dst` of out: int64 as two words, the rest through the
// typed accessors (which keep sub-word neighbours intact).
std::string move_expr(Dtype d) {
  if (d == Dtype::Int64) return "B_out[2 * dst] = B_x[2 * src]; B_out[2 * dst + 1] = B_x[2 * src + 1];";
  return is_float_domain(d) ? "stf_out(dst, ldf_x(src));" : "sti_out(dst, ldi_x(src));";
}
std::string zero_expr(Dtype d) {
  if (d == Dtype::Int64) return "B_out[2 * dst] = 0u; B_out[2 * dst + 1] = 0u;";
  return is_float_domain(d) ? "stf_out(dst, 0.0);" : "sti_out(dst, 0);";
}

}  // namespace

void gather(const Tensor& x, const Tensor& index, int64_t outer, int64_t n, int64_t k, int64_t inner, Tensor& out) {
  check_dtype("gather", x.dtype());
  run("indexing", "gather", {{"x", x.dtype()}, {"index", index.dtype()}, {"out", out.dtype(), true}},
      {ref(x), ref(index), ref(out)},
      {i32(outer * k * inner, "numel"), i32(n, "n"), i32(k, "k"), i32(inner, "inner"), elem_offset(x),
       elem_offset(index), elem_offset(out)},
      outer * k * inner, {{"MOVE", move_expr(x.dtype())}});
}

void index_select(const Tensor& x, const Tensor& index, int64_t outer, int64_t n, int64_t k, int64_t inner,
                  Tensor& out) {
  check_dtype("index_select", x.dtype());
  run("indexing", "index_select", {{"x", x.dtype()}, {"index", index.dtype()}, {"out", out.dtype(), true}},
      {ref(x), ref(index), ref(out)},
      {i32(outer * k * inner, "numel"), i32(n, "n"), i32(k, "k"), i32(inner, "inner"), elem_offset(x),
       elem_offset(index), elem_offset(out)},
      outer * k * inner, {{"MOVE", move_expr(x.dtype())}});
}

void scatter_add(Tensor& out, const Tensor& index, const Tensor& src, int64_t outer, int64_t n, int64_t k,
                 int64_t inner) {
  check_dtype("scatter_add", out.dtype());
  if (out.dtype() == Dtype::Int64 || out.dtype() == Dtype::Bool) {
    throw DtypeError(std::string("wgpu.scatter_add: dtype ") + dtype_name(out.dtype()) +
                     " is not supported (floating, int32 or uint8)");
  }
  const bool f = is_float_domain(out.dtype());
  const int64_t lines = outer * inner;
  if ((out.dtype() == Dtype::Float32 || out.dtype() == Dtype::Int32) && lines < 16384 && k >= 4) {
    // Too few lines to fill the device with one serial invocation each: one invocation per
    // source element with atomic adds (float32 sums then depend on the order, as on CUDA).
    i32(lines * k, "sources");
    Context& c = Context::require("scatter_add");
    const std::vector<Arg> args{{"index", index.dtype()}, {"src", src.dtype()}};
    c.launch(pipeline_for("indexing", "scatter_add_atomic", args, {{"ISF", f ? "true" : "false"}}, 3),
             {ref(index), ref(src), ref(out)},
             {i32(lines, "lines"), i32(n, "n"), i32(k, "k"), i32(inner, "inner"), elem_offset(out), elem_offset(index),
              elem_offset(src)},
             lines * k);
    return;
  }
  run("indexing", "scatter_add", {{"out", out.dtype(), true}, {"index", index.dtype()}, {"src", src.dtype()}},
      {ref(out), ref(index), ref(src)},
      {i32(outer * inner, "lines"), i32(n, "n"), i32(k, "k"), i32(inner, "inner"), elem_offset(out), elem_offset(index),
       elem_offset(src)},
      outer * inner, {{"D", f ? "f" : "i"}});
}

void cat(const std::vector<Tensor>& xs, int64_t outer, Tensor& out) {
  check_dtype("cat", out.dtype());
  if (outer <= 0 || out.numel() == 0) return;
  const int64_t row = out.numel() / outer;
  int64_t col = 0;
  for (const Tensor& x : xs) {
    const int64_t w = x.numel() / outer;
    if (w > 0) {
      run("indexing", "cat_part", {{"x", x.dtype()}, {"out", out.dtype(), true}}, {ref(x), ref(out)},
          {i32(outer * w, "numel"), i32(w, "width"), i32(row, "row"), i32(col, "column"), elem_offset(x),
           elem_offset(out)},
          outer * w, {{"MOVE", move_expr(out.dtype())}});
    }
    col += w;
  }
}

void triangle(const Tensor& x, int64_t batch, int64_t rows, int64_t cols, int64_t diagonal, bool upper, Tensor& out) {
  check_dtype("triangle", x.dtype());
  run("indexing", "triangle", {{"x", x.dtype()}, {"out", out.dtype(), true}}, {ref(x), ref(out)},
      {i32(batch * rows * cols, "numel"), i32(rows, "rows"), i32(cols, "cols"), i32(diagonal, "diagonal"),
       upper ? 1 : 0, elem_offset(x), elem_offset(out)},
      batch * rows * cols, {{"MOVE", move_expr(x.dtype())}, {"ZERO", zero_expr(x.dtype())}});
}

}  // namespace st::backend::wgpu
