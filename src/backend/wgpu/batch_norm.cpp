// Batch norm of the wgpu backend (kernels/batch_norm.wgsl): per-channel statistics, the
// normalisation and the fused backward, one workgroup per channel for the reductions.
#include "backend/wgpu/kernels.h"
#include "spiraltorch/error.h"

namespace st::backend::wgpu {

namespace {
void check_float(const char* op, Dtype d) {
  check_dtype(op, d);
  if (!is_float_domain(d))
    throw DtypeError(std::string("wgpu.") + op + ": expected a floating dtype, got " + dtype_name(d));
}
}  // namespace

void batch_norm_stats(const Tensor& x, int64_t n, int64_t c, int64_t l, double eps, Tensor& mean, Tensor& rstd,
                      Tensor& var) {
  check_float("batch_norm_stats", x.dtype());
  if (n * l == 0 || c == 0) return;
  run("batch_norm", "stats",
      {{"x", x.dtype()}, {"mean", mean.dtype(), true}, {"rstd", rstd.dtype(), true}, {"var", var.dtype(), true}},
      {ref(x), ref(mean), ref(rstd), ref(var)},
      {i32(c, "channels"), i32(n, "n"), i32(l, "l"), elem_offset(x), elem_offset(mean), elem_offset(rstd),
       elem_offset(var), fbits(eps)},
      c * 256);
}

void batch_norm_apply(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w, const Tensor& b,
                      int64_t n, int64_t c, int64_t l, Tensor& y) {
  check_float("batch_norm_apply", x.dtype());
  if (n * c * l == 0) return;
  // An undefined weight/bias binds mean in its place (never read: the flags say so).
  const Tensor& wt = w.defined() ? w : mean;
  const Tensor& bt = b.defined() ? b : mean;
  run("batch_norm", "apply",
      {{"x", x.dtype()},
       {"mean", mean.dtype()},
       {"rstd", rstd.dtype()},
       {"w", wt.dtype()},
       {"b", bt.dtype()},
       {"y", y.dtype(), true}},
      {ref(x), ref(mean), ref(rstd), ref(wt), ref(bt), ref(y)},
      {i32(n * c * l, "numel"), i32(c, "channels"), i32(l, "l"), w.defined() ? 1 : 0, b.defined() ? 1 : 0,
       elem_offset(x), elem_offset(mean), elem_offset(rstd), elem_offset(wt), elem_offset(bt), elem_offset(y)},
      n * c * l);
}

void batch_norm_backward(const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w,
                         int64_t n, int64_t c, int64_t l, bool training, Tensor& dx, Tensor& dw, Tensor& db) {
  check_float("batch_norm_backward", x.dtype());
  if (c == 0) return;
  if (n * l == 0) {  // empty batch: the sums are zero, dx is empty
    if (dw.defined()) fill(dw, Scalar(0.0));
    if (db.defined()) fill(db, Scalar(0.0));
    return;
  }
  const Tensor& wt = w.defined() ? w : mean;
  const Tensor& dxt = dx.defined() ? dx : x;  // unused stand-ins keep the binding layout fixed
  const Tensor& dwt = dw.defined() ? dw : mean;
  const Tensor& dbt = db.defined() ? db : mean;
  const int32_t flags = (w.defined() ? 1 : 0) | (dx.defined() ? 2 : 0) | (dw.defined() ? 4 : 0) |
                        (db.defined() ? 8 : 0) | (training ? 16 : 0);
  run("batch_norm", "backward",
      {{"g", g.dtype()},
       {"x", x.dtype()},
       {"mean", mean.dtype()},
       {"rstd", rstd.dtype()},
       {"w", wt.dtype()},
       {"dx", dxt.dtype(), true},
       {"dw", dwt.dtype(), true},
       {"db", dbt.dtype(), true}},
      {ref(g), ref(x), ref(mean), ref(rstd), ref(wt), ref(dxt), ref(dwt), ref(dbt)},
      {i32(c, "channels"), i32(n, "n"), i32(l, "l"), flags, elem_offset(g), elem_offset(x), elem_offset(mean),
       elem_offset(rstd), elem_offset(wt), elem_offset(dxt), elem_offset(dwt), elem_offset(dbt)},
      c * 256);
}

}  // namespace st::backend::wgpu
