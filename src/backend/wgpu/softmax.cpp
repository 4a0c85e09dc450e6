// Softmax / log-softmax, fused layer norm and the fused-attention softmax of the wgpu backend
// (kernels/norm.wgsl).
#include "backend/wgpu/kernels.h"

namespace st::backend::wgpu {

void softmax(const Tensor& x, int64_t rows, int64_t cols, bool log, Tensor& out) {
  check_dtype("softmax", x.dtype());
  if (rows == 0 || cols == 0) return;
  run("norm", "softmax", {{"x", x.dtype()}, {"out", out.dtype(), true}}, {ref(x), ref(out)},
      {i32(rows, "rows"), i32(cols, "cols"), log ? 1 : 0, elem_offset(x), elem_offset(out)}, rows * 256);
}

void softmax_backward(const Tensor& g, const Tensor& y, int64_t rows, int64_t cols, bool log, Tensor& dx) {
  check_dtype("softmax_backward", g.dtype());
  if (rows == 0 || cols == 0) return;
  run("norm", "softmax_backward", {{"g", g.dtype()}, {"y", y.dtype()}, {"dx", dx.dtype(), true}},
      {ref(g), ref(y), ref(dx)},
      {i32(rows, "rows"), i32(cols, "cols"), log ? 1 : 0, elem_offset(g), elem_offset(y), elem_offset(dx)}, rows * 256);
}

namespace {
// The kernels compare a target's low word with the ignore index: valid targets are in
// [0, cols), so that is exact whenever the ignore index itself fits in 32 bits.
bool cross_entropy_kernel_applies(const Tensor& x, int64_t ignore_index) {
  return is_floating(x.dtype()) && ignore_index == static_cast<int32_t>(ignore_index);
}

// The backward's elementwise pass; g undefined: one for every row (g stride -1, lse bound in its place).
void cross_entropy_grad(const Tensor& x, const Tensor& t, const Tensor& lse, const Tensor& g, int64_t ignore_index,
                        double scale, Tensor& dx) {
  const Tensor& gb = g.defined() ? g : lse;
  const int32_t g_stride = !g.defined() ? -1 : g.numel() == 1 ? 0 : 1;
  run("norm", "cross_entropy_rows_backward",
      {{"x", x.dtype()}, {"t", t.dtype()}, {"lse", lse.dtype()}, {"g", gb.dtype()}, {"dx", dx.dtype(), true}},
      {ref(x), ref(t), ref(lse), ref(gb), ref(dx)},
      {i32(x.numel(), "elements"), i32(x.size(1), "classes"), static_cast<int32_t>(ignore_index), elem_offset(x),
       elem_offset(t), elem_offset(lse), elem_offset(gb), elem_offset(dx), g_stride, fbits(scale)},
      x.numel());
}
}  // namespace

bool cross_entropy_rows(const Tensor& x, const Tensor& t, int64_t ignore_index, double scale, Tensor& loss, Tensor& lse,
                        Tensor& dx) {
  if (!cross_entropy_kernel_applies(x, ignore_index)) return false;
  check_dtype("cross_entropy", x.dtype());
  const int64_t rows = x.size(0), cols = x.size(1);
  if (rows == 0) return true;
  run("norm", "cross_entropy_rows",
      {{"x", x.dtype()}, {"t", t.dtype()}, {"loss", loss.dtype(), true}, {"lse", lse.dtype(), true}},
      {ref(x), ref(t), ref(loss), ref(lse)},
      {i32(rows, "rows"), i32(cols, "classes"), static_cast<int32_t>(ignore_index), elem_offset(x), elem_offset(t),
       elem_offset(loss), elem_offset(lse), fbits(scale)},
      rows * 256);
  // the gradient as the backward's pass with g = 1 (a second read of the rows)
  if (dx.defined()) cross_entropy_grad(x, t, lse, Tensor(), ignore_index, scale, dx);
  return true;
}

bool cross_entropy_rows_backward(const Tensor& x, const Tensor& t, const Tensor& lse, const Tensor& g,
                                 int64_t ignore_index, double scale, Tensor& dx) {
  if (!cross_entropy_kernel_applies(x, ignore_index)) return false;
  check_dtype("cross_entropy backward", x.dtype());
  cross_entropy_grad(x, t, lse, g, ignore_index, scale, dx);
  return true;
}

void layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, int64_t rows, int64_t cols, double eps, Tensor& y,
                Tensor& mean, Tensor& rstd) {
  check_dtype("layer_norm", x.dtype());
  if (rows == 0 || cols == 0) return;
  // An undefined weight/bias binds x in its place (never read: the flags say so).
  const Tensor& wt = w.defined() ? w : x;
  const Tensor& bt = b.defined() ? b : x;
  run("norm", "layer_norm",
      {{"x", x.dtype()},
       {"w", wt.dtype()},
       {"b", bt.dtype()},
       {"y", y.dtype(), true},
       {"mean", mean.dtype(), true},
       {"rstd", rstd.dtype(), true}},
      {ref(x), ref(wt), ref(bt), ref(y), ref(mean), ref(rstd)},
      {i32(rows, "rows"), i32(cols, "cols"), w.defined() ? 1 : 0, b.defined() ? 1 : 0, elem_offset(x),
       w.defined() ? elem_offset(w) : 0, b.defined() ? elem_offset(b) : 0, elem_offset(y), elem_offset(mean),
       elem_offset(rstd), fbits(eps)},
      rows * 256);
}

void layer_norm_backward(const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w,
                         int64_t rows, int64_t cols, Tensor& dx, Tensor& dw, Tensor& db) {
  check_dtype("layer_norm_backward", x.dtype());
  if (rows == 0 || cols == 0) return;
  if (dx.defined()) {
    const Tensor& wt = w.defined() ? w : x;
    run("norm", "layer_norm_dx",
        {{"g", g.dtype()},
         {"x", x.dtype()},
         {"mean", mean.dtype()},
         {"rstd", rstd.dtype()},
         {"w", wt.dtype()},
         {"dx", dx.dtype(), true}},
        {ref(g), ref(x), ref(mean), ref(rstd), ref(wt), ref(dx)},
        {i32(rows, "rows"), i32(cols, "cols"), w.defined() ? 1 : 0, elem_offset(g), elem_offset(x), elem_offset(mean),
         elem_offset(rstd), w.defined() ? elem_offset(w) : 0, elem_offset(dx)},
        rows * 256);
  }
  if (dw.defined() || db.defined()) {
    const Tensor& dwt = dw.defined() ? dw : db;
    const Tensor& dbt = db.defined() ? db : dw;
    run("norm", "layer_norm_dwdb",
        {{"g", g.dtype()},
         {"x", x.dtype()},
         {"mean", mean.dtype()},
         {"rstd", rstd.dtype()},
         {"dw", dwt.dtype(), true},
         {"db", dbt.dtype(), true}},
        {ref(g), ref(x), ref(mean), ref(rstd), ref(dwt), ref(dbt)},
        {i32(rows, "rows"), i32(cols, "cols"), dw.defined() ? 1 : 0, db.defined() ? 1 : 0, elem_offset(g),
         elem_offset(x), elem_offset(mean), elem_offset(rstd), elem_offset(dwt), elem_offset(dbt)},
        cols);
  }
}

void attention_softmax(const Tensor& s, int64_t batch, int64_t L, int64_t S, double scale, bool causal, Tensor& p,
                       Tensor& lse) {
  check_dtype("attention_softmax", s.dtype());
  const int64_t rows = batch * L;
  if (rows == 0) return;
  run("norm", "attention_softmax", {{"s", s.dtype()}, {"p", p.dtype(), true}, {"lse", lse.dtype(), true}},
      {ref(s), ref(p), ref(lse)},
      {i32(rows, "rows"), i32(L, "L"), i32(S, "S"), causal ? 1 : 0, elem_offset(s), elem_offset(p), elem_offset(lse),
       fbits(scale)},
      rows * 256);
}

void attention_softmax_backward(Tensor& s, Tensor& dp, const Tensor& lse, const Tensor& delta, int64_t batch, int64_t L,
                                int64_t S, double scale, bool causal) {
  check_dtype("attention_softmax_backward", s.dtype());
  const int64_t n = batch * L * S;
  if (n == 0) return;
  run("norm", "attention_softmax_backward",
      {{"s", s.dtype(), true}, {"dp", dp.dtype(), true}, {"lse", lse.dtype()}, {"delta", delta.dtype()}},
      {ref(s), ref(dp), ref(lse), ref(delta)},
      {i32(n, "numel"), i32(L, "L"), i32(S, "S"), causal ? 1 : 0, elem_offset(s), elem_offset(dp), elem_offset(lse),
       elem_offset(delta), fbits(scale)},
      n);
}

}  // namespace st::backend::wgpu
