// Convolution helpers (im2col / col2im for the GEMM route), depthwise convolution and pooling
// of the wgpu backend (kernels/conv.wgsl), float32 and the half types.
#include "backend/wgpu/kernels.h"
#include "spiraltorch/error.h"

namespace st::backend::wgpu {

using backend::Conv2dGeom;

namespace {

void check_float(const char* op, Dtype d) {
  check_dtype(op, d);
  if (!is_float_domain(d))
    throw DtypeError(std::string("wgpu.") + op + ": expected a floating dtype, got " + dtype_name(d));
}

std::vector<int32_t> params(int64_t count, int64_t planes, const Tensor& in, const Tensor& out, const Conv2dGeom& g) {
  return {i32(count, "count"),
          i32(planes, "planes"),
          elem_offset(in),
          elem_offset(out),
          i32(g.C, "C"),
          i32(g.H, "H"),
          i32(g.W, "W"),
          i32(g.kh, "kh"),
          i32(g.kw, "kw"),
          i32(g.sh, "sh"),
          i32(g.sw, "sw"),
          i32(g.ph, "ph"),
          i32(g.pw, "pw"),
          i32(g.dh, "dh"),
          i32(g.dw, "dw"),
          i32(g.OH, "OH"),
          i32(g.OW, "OW"),
          i32(g.col_ld, "col_ld"),
          i32(g.col_batch_stride, "col_batch_stride")};
}

// Runs avg_pool or avg_pool_backward: one thread per element of `out` (count of them), reading
// `in`, with avg_pool2d's two settings after params() (P[19], P[20]).
void run_avg_pool(const char* kernel, const Tensor& in, Tensor& out, const Conv2dGeom& g, int64_t planes, int64_t count,
                  bool count_include_pad, int64_t divisor_override, const Subs& subs) {
  auto p = params(count, planes, in, out, g);
  p.push_back(count_include_pad ? 1 : 0);
  p.push_back(i32(divisor_override, "divisor_override"));
  run("conv", kernel, {{"x", in.dtype()}, {"out", out.dtype(), true}}, {ref(in), ref(out)}, p, count, subs);
}

// PyTorch's avg_pool2d window and divisor at (oh, ow) (the CPU's avg_window), or the adaptive one.
constexpr const char* kAvgWindow = R"(var h0 = oh * G(5) - G(7);
  var w0 = ow * G(6) - G(8);
  var h1 = min(h0 + G(3), G(1) + G(7));
  var w1 = min(w0 + G(4), G(2) + G(8));
  let pool = (h1 - h0) * (w1 - w0);
  h0 = max(h0, 0);
  w0 = max(w0, 0);
  h1 = min(h1, G(1));
  w1 = min(w1, G(2));
  var div = select((h1 - h0) * (w1 - w0), pool, P[19] == 1);
  if (P[20] > 0) { div = P[20]; })";
constexpr const char* kAdaptiveWindow = R"(let h0 = oh * G(1) / G(11);
  let h1 = ((oh + 1) * G(1) + G(11) - 1) / G(11);
  let w0 = ow * G(2) / G(12);
  let w1 = ((ow + 1) * G(2) + G(12) - 1) / G(12);
  let div = (h1 - h0) * (w1 - w0);)";
// The candidate output rows/columns of input element (h, w) for the gathering backward kernels.
constexpr const char* kAvgRange = R"(let oh_lo = max(0, (h + G(7) - G(3)) / G(5));
  let oh_hi = min(G(11) - 1, (h + G(7)) / G(5));
  let ow_lo = max(0, (w + G(8) - G(4)) / G(6));
  let ow_hi = min(G(12) - 1, (w + G(8)) / G(6));)";
constexpr const char* kAdaptiveRange = R"(let oh_lo = max(0, h * G(11) / G(1) - 1);
  let oh_hi = min(G(11) - 1, ((h + 1) * G(11)) / G(1));
  let ow_lo = max(0, w * G(12) / G(2) - 1);
  let ow_hi = min(G(12) - 1, ((w + 1) * G(12)) / G(2));)";

}  // namespace

void im2col(const Tensor& x, const Conv2dGeom& g, int64_t batch, Tensor& cols) {
  check_float("im2col", x.dtype());
  const int64_t count = batch * g.C * g.kh * g.kw * g.OH * g.OW;
  run("conv", "im2col", {{"x", x.dtype()}, {"out", cols.dtype(), true}}, {ref(x), ref(cols)},
      params(count, batch, x, cols, g), count);
}

void col2im(const Tensor& cols, const Conv2dGeom& g, int64_t batch, Tensor& x) {
  check_float("col2im", x.dtype());
  const int64_t count = batch * g.C * g.H * g.W;
  run("conv", "col2im", {{"x", cols.dtype()}, {"out", x.dtype(), true}}, {ref(cols), ref(x)},
      params(count, batch, cols, x, g), count);
}

void max_pool2d(const Tensor& x, const backend::Pool2dGeom& g, int64_t planes, Tensor& out, Tensor& indices) {
  check_float("max_pool2d", x.dtype());
  const int64_t count = planes * g.OH * g.OW;
  auto p = params(count, planes, x, out, g);
  p.push_back(elem_offset(indices));
  run("conv", "max_pool", {{"x", x.dtype()}, {"out", out.dtype(), true}, {"indices", indices.dtype(), true}},
      {ref(x), ref(out), ref(indices)}, p, count);
}

void max_pool2d_backward(const Tensor& gy, const Tensor& indices, const backend::Pool2dGeom& g, int64_t planes,
                         Tensor& gx) {
  check_float("max_pool2d_backward", gx.dtype());
  const int64_t count = planes * g.H * g.W;
  auto p = params(count, planes, gy, gx, g);
  p.push_back(elem_offset(indices));
  run("conv", "max_pool_backward", {{"x", gy.dtype()}, {"out", gx.dtype(), true}, {"indices", indices.dtype()}},
      {ref(gy), ref(gx), ref(indices)}, p, count);
}

void avg_pool2d(const Tensor& x, const backend::Pool2dGeom& g, int64_t planes, bool count_include_pad,
                int64_t divisor_override, Tensor& out) {
  check_float("avg_pool2d", x.dtype());
  run_avg_pool("avg_pool", x, out, g, planes, planes * g.OH * g.OW, count_include_pad, divisor_override,
               {{"WINDOW", kAvgWindow}});
}

void avg_pool2d_backward(const Tensor& gy, const backend::Pool2dGeom& g, int64_t planes, bool count_include_pad,
                         int64_t divisor_override, Tensor& gx) {
  check_float("avg_pool2d_backward", gx.dtype());
  run_avg_pool("avg_pool_backward", gy, gx, g, planes, planes * g.H * g.W, count_include_pad, divisor_override,
               {{"WINDOW", kAvgWindow}, {"RANGE", kAvgRange}});
}

void adaptive_avg_pool2d(const Tensor& x, const backend::Pool2dGeom& g, int64_t planes, Tensor& out) {
  check_float("adaptive_avg_pool2d", x.dtype());
  const int64_t count = planes * g.OH * g.OW;
  run("conv", "avg_pool", {{"x", x.dtype()}, {"out", out.dtype(), true}}, {ref(x), ref(out)},
      params(count, planes, x, out, g), count, {{"WINDOW", kAdaptiveWindow}});
}

void adaptive_avg_pool2d_backward(const Tensor& gy, const backend::Pool2dGeom& g, int64_t planes, Tensor& gx) {
  check_float("adaptive_avg_pool2d_backward", gx.dtype());
  const int64_t count = planes * g.H * g.W;
  run("conv", "avg_pool_backward", {{"x", gy.dtype()}, {"out", gx.dtype(), true}}, {ref(gy), ref(gx)},
      params(count, planes, gy, gx, g), count, {{"WINDOW", kAdaptiveWindow}, {"RANGE", kAdaptiveRange}});
}

void depthwise_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeom& g, int64_t batch,
                      Tensor& out) {
  check_float("depthwise_conv2d", x.dtype());
  const int64_t count = batch * g.C * g.OH * g.OW;
  const Tensor& bt = bias.defined() ? bias : w;  // unread stand-in when there is no bias
  auto p = params(count, batch, x, out, g);
  p.push_back(elem_offset(w));
  p.push_back(elem_offset(bt));
  p.push_back(bias.defined() ? 1 : 0);
  run("conv", "dw_forward", {{"x", x.dtype()}, {"out", out.dtype(), true}, {"w", w.dtype()}, {"b", bt.dtype()}},
      {ref(x), ref(out), ref(w), ref(bt)}, p, count);
}

void depthwise_conv2d_backward_input(const Tensor& gy, const Tensor& w, const Conv2dGeom& g, int64_t batch,
                                     Tensor& gx) {
  check_float("depthwise_conv2d_backward_input", gx.dtype());
  const int64_t count = batch * g.C * g.H * g.W;
  auto p = params(count, batch, gy, gx, g);
  p.push_back(elem_offset(w));
  run("conv", "dw_backward_input", {{"x", gy.dtype()}, {"out", gx.dtype(), true}, {"w", w.dtype()}},
      {ref(gy), ref(gx), ref(w)}, p, count);
}

void depthwise_conv2d_backward_weight(const Tensor& gy, const Tensor& x, const Conv2dGeom& g, int64_t batch,
                                      Tensor& gw) {
  check_float("depthwise_conv2d_backward_weight", gw.dtype());
  const int64_t taps = g.C * g.kh * g.kw;
  auto p = params(taps, batch, gy, gw, g);
  p.push_back(elem_offset(x));
  run("conv", "dw_backward_weight", {{"x", gy.dtype()}, {"out", gw.dtype(), true}, {"w", x.dtype()}},
      {ref(gy), ref(gw), ref(x)}, p, taps * 256);
}

}  // namespace st::backend::wgpu
