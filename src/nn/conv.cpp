// conv1d / conv2d: shape checks, im2col + batched GEMM forward, explicit backward,
// and the Conv1d / Conv2d modules. Kernels: src/backend/cpu/conv.cpp; a backend may run the
// whole convolution itself (Backend::conv2d_fused: cuDNN on CUDA, oneDNN for float32 on the CPU).
#include "spiraltorch/nn/conv.h"
#include "spiraltorch/autocast.h"

#include <algorithm>

#include "nn/conv_common.h"
#include "ops/common.h"
#include "spiraltorch/nn/init.h"

namespace st::nn {

using backend::Conv2dGeom;
using detail::backend_of;

std::string pair_str(Pair p) {
  std::string s("(");
  s.append(std::to_string(p[0])).append(", ").append(std::to_string(p[1])).append(")");
  return s;
}

void check_conv_float(const Tensor& x, const char* op) {
  if (x.dtype() != Dtype::Float32 && x.dtype() != Dtype::Float64) {
    throw DtypeError(std::string(op) + ": expected a float32 or float64 input, got " + dtype_name(x.dtype()));
  }
}

bool check_conv2d_operands(const Tensor& input, const Tensor& weight, const ConvSpec& s, const char* weight_layout,
                           const char* op) {
  if (input.dim() != 4) {
    throw ShapeError(std::string(op) + ": expected a 3-d (C, H, W) or 4-d (N, C, H, W) input, got shape " +
                     shape_str(input.shape()));
  }
  if (weight.dim() != 4) {
    throw ShapeError(std::string(op) + ": expected a 4-d weight " + weight_layout + ", got shape " +
                     shape_str(weight.shape()));
  }
  detail::check_same_device(input, weight, op);
  const bool half = input.dtype() == Dtype::Float16 || input.dtype() == Dtype::BFloat16;
  if (!half) check_conv_float(input, op);
  if (weight.dtype() != input.dtype()) {
    throw DtypeError(std::string(op) + ": input is " + dtype_name(input.dtype()) + " but weight is " +
                     dtype_name(weight.dtype()));
  }
  for (int d = 0; d < 2; ++d) {
    if (s.stride[d] <= 0) throw ValueError(std::string(op) + ": stride must be positive, got " + pair_str(s.stride));
    if (s.dilation[d] <= 0) {
      throw ValueError(std::string(op) + ": dilation must be positive, got " + pair_str(s.dilation));
    }
    if (s.pad_begin[d] < 0 || s.pad_end[d] < 0) {
      throw ValueError(std::string(op) + ": padding must be non-negative, got " + pair_str(s.pad_begin));
    }
  }
  if (s.groups <= 0) throw ValueError(std::string(op) + ": groups must be positive, got " + std::to_string(s.groups));
  return half;
}

ConvPlan make_plan(const Shape& xs, const Shape& ws, const ConvSpec& s) {
  ConvPlan p{};
  p.N = xs[0], p.C = xs[1], p.H = xs[2], p.W = xs[3];
  p.O = ws[0], p.kh = ws[2], p.kw = ws[3];
  p.groups = s.groups;
  p.Cg = p.C / s.groups;
  p.Og = p.O / s.groups;
  p.OH = (p.H + s.pad_begin[0] + s.pad_end[0] - s.dilation[0] * (p.kh - 1) - 1) / s.stride[0] + 1;
  p.OW = (p.W + s.pad_begin[1] + s.pad_end[1] - s.dilation[1] * (p.kw - 1) - 1) / s.stride[1] + 1;
  p.K = p.Cg * p.kh * p.kw;
  p.L = p.OH * p.OW;
  p.direct = p.kh == 1 && p.kw == 1 && s.stride[0] == 1 && s.stride[1] == 1 && s.pad_begin[0] == 0 &&
             s.pad_begin[1] == 0 && s.pad_end[0] == 0 && s.pad_end[1] == 0;
  p.depthwise = !p.direct && p.Cg == 1 && p.Og == 1 && p.groups > 1;
  const int64_t rows = p.C * p.kh * p.kw;
  p.geom = Conv2dGeom{
      p.C,           p.H,           p.W,  p.kh, p.kw, s.stride[0], s.stride[1], s.pad_begin[0], s.pad_begin[1],
      s.dilation[0], s.dilation[1], p.OH, p.OW, p.L,  rows * p.L};
  return p;
}

namespace {

// Column matrix (C*kh*kw, nb*L) of batch items [n0, n0 + nb) of x: column n*L + l of row
// (c*kh + i)*kw + j holds the input under kernel tap (i, j) of channel c at output position l
// of item n0 + n. With this layout each group is one GEMM over all nb*L positions.
Tensor columns(const Tensor& x, const ConvPlan& p, int64_t n0, int64_t nb) {
  Tensor cols = Tensor::empty({p.C * p.kh * p.kw, nb * p.L}, x.dtype(), x.device());
  Conv2dGeom g = p.geom;
  g.col_ld = nb * p.L;
  g.col_batch_stride = p.L;
  backend_of(x).im2col(narrow(x, 0, n0, nb), g, nb, cols);
  return cols;
}

// Batch items per column chunk: keeps the column buffer around a few MiB so that the
// GEMM reads it while it is still in cache, and bounds memory for large batches.
int64_t chunk_items(const ConvPlan& p) {
  constexpr int64_t kBudget = int64_t{1} << 19;  // elements
  const int64_t per_item = std::max<int64_t>(1, p.C * p.kh * p.kw * p.L);
  return std::clamp<int64_t>(kBudget / per_item, 1, std::max<int64_t>(p.N, 1));
}

size_t esize(Dtype dt) { return dt == Dtype::Float64 ? 8 : 4; }

const char* at(const Tensor& t, int64_t elems) {
  return static_cast<const char*>(t.raw_data()) + elems * static_cast<int64_t>(esize(t.dtype()));
}
char* at_mut(const Tensor& t, int64_t elems) {
  return static_cast<char*>(t.raw_data()) + elems * static_cast<int64_t>(esize(t.dtype()));
}

// (N, O, L) <-> (O, N*L) copies.
Tensor to_channel_major(const Tensor& y, const ConvPlan& p) {
  Tensor out = Tensor::empty({p.O, p.N, p.L}, y.dtype(), y.device());
  backend_of(y).copy(permute(reshape(y, {p.N, p.O, p.L}), {1, 0, 2}), out);
  return out;
}

}  // namespace

Tensor conv2d_forward_raw(const Tensor& x, const Tensor& w, const Tensor& b, const ConvPlan& p, Tensor out) {
  auto& be = backend_of(x);
  const Dtype dt = x.dtype();
  if (!out.defined()) out = Tensor::empty({p.N, p.O, p.OH, p.OW}, dt, x.device());
  if (out.numel() == 0) return out;
  if (p.depthwise) {
    be.depthwise_conv2d(x, w, b, p.geom, p.N, out);
    return out;
  }
  if (p.direct) {
    // 1x1 kernel, stride 1, no padding: out[n, g] (Og, L) = W[g] (Og, Cg) @ x[n, g] (Cg, L), batched over n.
    double beta = 0.0;
    if (b.defined()) {
      be.copy(detail::expand_view(reshape(b, {1, p.O, 1, 1}), out.shape()), out);
      beta = 1.0;
    }
    for (int64_t g = 0; g < p.groups; ++g) {
      be.gemm(dt, false, false, p.Og, p.L, p.K, 1.0, at(w, g * p.Og * p.K), p.K, 0, at(x, g * p.K * p.L), p.L,
              p.C * p.L, beta, at_mut(out, g * p.Og * p.L), p.L, p.O * p.L, p.N);
    }
    return out;
  }
  // outT[g] (Og, N*L) = W[g] (Og, K) @ cols[g] (K, N*L), one GEMM per group; then (O, N, L) -> (N, O, L).
  const int64_t NL = p.N * p.L;
  Tensor outT = Tensor::empty({p.O, p.N, p.L}, dt, x.device());
  double beta = 0.0;
  if (b.defined()) {
    be.copy(detail::expand_view(reshape(b, {p.O, 1, 1}), outT.shape()), outT);
    beta = 1.0;
  } else if (p.K == 0) {
    be.fill(outT, 0);
  }
  if (p.K > 0) {
    const int64_t step = chunk_items(p);
    for (int64_t n0 = 0; n0 < p.N; n0 += step) {
      const int64_t nb = std::min(step, p.N - n0);
      const Tensor cols = columns(x, p, n0, nb);
      be.gemm(dt, false, false, p.Og, nb * p.L, p.K, 1.0, w.raw_data(), p.K, p.Og * p.K, cols.raw_data(), nb * p.L,
              p.K * nb * p.L, beta, at_mut(outT, n0 * p.L), NL, p.Og * NL, p.groups);
    }
  }
  Tensor out3 = view(out, {p.N, p.O, p.L});
  be.copy(permute(outT, {1, 0, 2}), out3);
  return out;
}

std::vector<Tensor> conv2d_backward_raw(const Tensor& gy_in, const Tensor& x, const Tensor& w, bool has_bias,
                                        bool need_x, bool need_w, bool need_b, const ConvPlan& p) {
  auto& be = backend_of(x);
  const Dtype dt = x.dtype();
  const Tensor gy = detail::cast_raw(gy_in, dt).contiguous();
  const int64_t NL = p.N * p.L;
  const bool empty = p.K == 0 || NL == 0 || p.O == 0;
  Tensor gx, gw, gb;
  if (p.depthwise && !empty) {
    if (need_x) {
      gx = Tensor::empty(x.shape(), dt, x.device());
      be.depthwise_conv2d_backward_input(gy, w, p.geom, p.N, gx);
    }
    if (need_w) {
      gw = Tensor::empty(w.shape(), dt, w.device());
      be.depthwise_conv2d_backward_weight(gy, x, p.geom, p.N, gw);
    }
    if (need_b && has_bias) {
      NoGradGuard ng;
      gb = sum(gy, {0, 2, 3});
    }
    return {gx, gw, gb};
  }
  Tensor gyT;  // (O, N*L), built once when needed
  auto grad_t = [&]() -> const Tensor& {
    if (!gyT.defined()) gyT = to_channel_major(gy, p);
    return gyT;
  };
  if (need_x) {
    gx = Tensor::empty(x.shape(), dt, x.device());
    if (empty) {
      be.fill(gx, 0);
    } else if (p.direct) {
      // gx[n, g] (Cg, L) = W[g]^T (Cg, Og) @ gy[n, g] (Og, L), batched over n.
      for (int64_t g = 0; g < p.groups; ++g) {
        be.gemm(dt, true, false, p.K, p.L, p.Og, 1.0, at(w, g * p.Og * p.K), p.K, 0, at(gy, g * p.Og * p.L), p.L,
                p.O * p.L, 0.0, at_mut(gx, g * p.K * p.L), p.L, p.C * p.L, p.N);
      }
    }
  }
  const bool chunked_x = need_x && !empty && !p.direct;
  if (need_w) {
    gw = Tensor::empty(w.shape(), dt, w.device());
    if (empty) be.fill(gw, 0);
  }
  if (chunked_x || (need_w && !empty)) {
    const Tensor& gt = grad_t();
    const int64_t step = chunk_items(p);
    for (int64_t n0 = 0; n0 < p.N; n0 += step) {
      const int64_t nb = std::min(step, p.N - n0);
      const int64_t cols_n = nb * p.L;
      if (need_w && !empty) {
        // gW[g] (Og, K) += gyT[g] (Og, nb*L) @ cols[g]^T (nb*L, K), one GEMM per group and chunk.
        const Tensor cols = columns(x, p, n0, nb);
        be.gemm(dt, false, true, p.Og, p.K, cols_n, 1.0, at(gt, n0 * p.L), NL, p.Og * NL, cols.raw_data(), cols_n,
                p.K * cols_n, n0 == 0 ? 0.0 : 1.0, gw.raw_data(), p.K, p.Og * p.K, p.groups);
      }
      if (chunked_x) {
        // dcols[g] (K, nb*L) = W[g]^T (K, Og) @ gyT[g] (Og, nb*L); then scatter back with col2im.
        Tensor dcols = Tensor::empty({p.C * p.kh * p.kw, cols_n}, dt, x.device());
        be.gemm(dt, true, false, p.K, cols_n, p.Og, 1.0, w.raw_data(), p.K, p.Og * p.K, at(gt, n0 * p.L), NL, p.Og * NL,
                0.0, dcols.raw_data(), cols_n, p.K * cols_n, p.groups);
        Conv2dGeom g = p.geom;
        g.col_ld = cols_n;
        g.col_batch_stride = p.L;
        Tensor gx_chunk = narrow(gx, 0, n0, nb);
        be.col2im(dcols, g, nb, gx_chunk);
      }
    }
  }
  if (need_b && has_bias) {
    NoGradGuard ng;
    gb = gyT.defined() ? sum(reshape(gyT, {p.O, NL}), {1}) : sum(gy, {0, 2, 3});
  }
  return {gx, gw, gb};
}

namespace {

ConvSpec spec_from_padding(const Tensor& w, Pair stride, const std::string& padding, Pair dilation, int64_t groups,
                           const char* op) {
  ConvSpec s{stride, {0, 0}, {0, 0}, dilation, groups};
  if (padding == "valid") return s;
  if (padding != "same") {
    throw ValueError(std::string(op) + ": padding must be an int, a tuple, 'same' or 'valid', got '" + padding + "'");
  }
  if (stride[0] != 1 || stride[1] != 1) {
    throw ValueError(std::string(op) + ": padding='same' is not supported for strided convolutions");
  }
  if (w.dim() == 4) {
    for (int d = 0; d < 2; ++d) {
      const int64_t total = dilation[d] * (w.shape()[2 + d] - 1);
      s.pad_begin[d] = total / 2;
      s.pad_end[d] = total - total / 2;
    }
  }
  return s;
}

// conv2d of operands autocast has already lowered. Its own recursions (an unbatched input, the
// float32 fallback for half operands) come back here, not through conv2d_impl: inside an autocast
// region that would cast the float32 fallback down again, without end.
Tensor conv2d_lowered(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvSpec& s,
                      const char* op) {
  if (input.dim() == 3) {
    return squeeze(conv2d_lowered(unsqueeze(input, 0), weight, bias, s, op), 0);
  }
  const bool half = check_conv2d_operands(input, weight, s, "(out_channels, in_channels/groups, kh, kw)", op);
  const int64_t C = input.shape()[1], O = weight.shape()[0];
  if (C % s.groups != 0 || O % s.groups != 0) {
    throw ValueError(std::string(op) + ": in_channels (" + std::to_string(C) + ") and out_channels (" +
                     std::to_string(O) + ") must both be divisible by groups (" + std::to_string(s.groups) + ")");
  }
  if (weight.shape()[1] * s.groups != C) {
    throw ShapeError(std::string(op) + ": input of shape " + shape_str(input.shape()) + " has " + std::to_string(C) +
                     " channels, but weight of shape " + shape_str(weight.shape()) + " expects " +
                     std::to_string(weight.shape()[1] * s.groups) + " (weight.shape[1] * groups = " +
                     std::to_string(weight.shape()[1]) + " * " + std::to_string(s.groups) + ")");
  }
  if (bias.defined()) {
    detail::check_same_device(input, bias, op);
    if (bias.dim() != 1 || bias.shape()[0] != O) {
      throw ShapeError(std::string(op) + ": bias of shape " + shape_str(bias.shape()) +
                       " does not match weight of shape " + shape_str(weight.shape()) + " (expected (" +
                       std::to_string(O) + ",))");
    }
    if (bias.dtype() != input.dtype()) {
      throw DtypeError(std::string(op) + ": input is " + dtype_name(input.dtype()) + " but bias is " +
                       dtype_name(bias.dtype()));
    }
  }
  for (int d = 0; d < 2; ++d) {
    const int64_t in = input.shape()[2 + d] + s.pad_begin[d] + s.pad_end[d];
    const int64_t k = s.dilation[d] * (weight.shape()[2 + d] - 1) + 1;
    if (in < k) {
      throw ShapeError(std::string(op) + ": input of shape " + shape_str(input.shape()) + " (padded size " +
                       std::to_string(in) + ") is smaller than the effective kernel size " + std::to_string(k) +
                       " of weight " + shape_str(weight.shape()));
    }
  }

  const ConvPlan p = make_plan(input.shape(), weight.shape(), s);
  // The backend's whole-convolution kernel (cuDNN on CUDA, also for float16/bfloat16; oneDNN for
  // float32 on the CPU) where it takes these operands, else im2col + GEMM, half types in float32;
  // the backward follows the forward's path (decided once here).
  const Tensor x = input.detach().contiguous();
  const Tensor w = weight.detach().contiguous();
  const Tensor b = bias.defined() ? bias.detach().contiguous() : Tensor();
  Tensor out = Tensor::empty({p.N, p.O, p.OH, p.OW}, x.dtype(), x.device());
  const int64_t pad_bottom = s.pad_end[0], pad_right = s.pad_end[1];
  const bool fused = backend_of(input).conv2d_fused(x, w, b, p.geom, pad_bottom, pad_right, p.groups, out);
  if (!fused && half) {
    const Tensor b32 = bias.defined() ? bias.to(Dtype::Float32) : Tensor();
    return conv2d_lowered(input.to(Dtype::Float32), weight.to(Dtype::Float32), b32, s, op).to(input.dtype());
  }
  if (!fused) conv2d_forward_raw(x, w, b, p, out);
  if (needs_grad({&input, &weight, &bias})) {
    const bool nx = input.requires_grad(), nw = weight.requires_grad(), nb = bias.defined() && bias.requires_grad();
    const bool has_bias = bias.defined();
    record(out, "Conv2dBackward", {input, weight, bias},
           [x, w, p, fused, pad_bottom, pad_right, nx, nw, nb, has_bias](const Tensor& g) -> std::vector<Tensor> {
      if (fused) {
        const Tensor gy = detail::cast_raw(g, x.dtype()).contiguous();
        Tensor gx = nx ? Tensor::empty(x.shape(), x.dtype(), x.device()) : Tensor();
        Tensor gw = nw ? Tensor::empty(w.shape(), w.dtype(), w.device()) : Tensor();
        Tensor gb = nb ? Tensor::empty({p.O}, x.dtype(), x.device()) : Tensor();
        if (backend_of(x).conv2d_fused_backward(gy, x, w, has_bias, p.geom, pad_bottom, pad_right, p.groups, gx, gw,
                                                gb)) {
          return {gx, gw, gb};
        }
        if (is_half(x.dtype()) && !backend_of(x).native_half_gemm()) {
          // A half forward the backend's kernel took and whose backward it declines, where im2col's
          // GEMMs take no 16-bit operands: that backward in float32, the gradients rounded once.
          const Dtype f = Dtype::Float32;
          std::vector<Tensor> grads = conv2d_backward_raw(detail::cast_raw(g, f), detail::cast_raw(x, f),
                                                          detail::cast_raw(w, f), has_bias, nx, nw, nb, p);
          for (Tensor& t : grads) {
            if (t.defined()) t = detail::cast_raw(t, x.dtype());
          }
          return grads;
        }
      }
      return conv2d_backward_raw(g, x, w, has_bias, nx, nw, nb, p);
    }, {x, w});
  }
  return out;
}

Tensor conv2d_impl(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvSpec& s, const char* op) {
  if (!input.defined() || !weight.defined()) throw ValueError(std::string(op) + ": input and weight are required");
  // autocast's lower-precision list
  return conv2d_lowered(autocast::to_lower(input), autocast::to_lower(weight), autocast::to_lower(bias), s, op);
}

// Views a 1-d conv as a 2-d one with height 1.
Tensor conv1d_impl(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvSpec& s) {
  if (!input.defined() || !weight.defined()) throw ValueError("conv1d: input and weight are required");
  if (input.dim() == 2) return squeeze(conv1d_impl(unsqueeze(input, 0), weight, bias, s), 0);
  if (input.dim() != 3) {
    throw ShapeError("conv1d: expected a 2-d (C, L) or 3-d (N, C, L) input, got shape " + shape_str(input.shape()));
  }
  if (weight.dim() != 3) {
    throw ShapeError("conv1d: expected a 3-d weight (out_channels, in_channels/groups, k), got shape " +
                     shape_str(weight.shape()));
  }
  if (weight.shape()[1] * s.groups != input.shape()[1] && input.shape()[1] % s.groups == 0 &&
      weight.shape()[0] % s.groups == 0) {
    throw ShapeError("conv1d: input of shape " + shape_str(input.shape()) + " has " + std::to_string(input.shape()[1]) +
                     " channels, but weight of shape " + shape_str(weight.shape()) + " expects " +
                     std::to_string(weight.shape()[1] * s.groups) + " (weight.shape[1] * groups = " +
                     std::to_string(weight.shape()[1]) + " * " + std::to_string(s.groups) + ")");
  }
  if (input.shape()[2] + s.pad_begin[1] + s.pad_end[1] < s.dilation[1] * (weight.shape()[2] - 1) + 1) {
    throw ShapeError("conv1d: input of shape " + shape_str(input.shape()) +
                     " is smaller than the effective kernel size of weight " + shape_str(weight.shape()));
  }
  return squeeze(conv2d_impl(unsqueeze(input, 2), unsqueeze(weight, 2), bias, s, "conv1d"), 2);
}

}  // namespace

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, Pair stride, Pair padding, Pair dilation,
              int64_t groups) {
  return conv2d_impl(input, weight, bias, ConvSpec{stride, padding, padding, dilation, groups}, "conv2d");
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, Pair stride, const std::string& padding,
              Pair dilation, int64_t groups) {
  return conv2d_impl(input, weight, bias, spec_from_padding(weight, stride, padding, dilation, groups, "conv2d"),
                     "conv2d");
}

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, int64_t stride, int64_t padding,
              int64_t dilation, int64_t groups) {
  return conv1d_impl(input, weight, bias, ConvSpec{{1, stride}, {0, padding}, {0, padding}, {1, dilation}, groups});
}

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, int64_t stride, const std::string& padding,
              int64_t dilation, int64_t groups) {
  ConvSpec s{{1, stride}, {0, 0}, {0, 0}, {1, dilation}, groups};
  if (padding == "same") {
    if (stride != 1) throw ValueError("conv1d: padding='same' is not supported for strided convolutions");
    if (weight.dim() == 3) {
      const int64_t total = dilation * (weight.shape()[2] - 1);
      s.pad_begin[1] = total / 2;
      s.pad_end[1] = total - total / 2;
    }
  } else if (padding != "valid") {
    throw ValueError("conv1d: padding must be an int, 'same' or 'valid', got '" + padding + "'");
  }
  return conv1d_impl(input, weight, bias, s);
}

// ---- modules ----

namespace {

void check_conv_args(const char* name, int64_t in, int64_t out, int64_t groups, std::initializer_list<int64_t> kernel,
                     std::initializer_list<int64_t> stride, std::initializer_list<int64_t> dilation,
                     std::initializer_list<int64_t> padding) {
  const std::string n(name);
  if (in <= 0 || out <= 0) {
    throw ValueError(n + ": in_channels and out_channels must be positive, got " + std::to_string(in) + " and " +
                     std::to_string(out));
  }
  if (groups <= 0 || in % groups != 0 || out % groups != 0) {
    throw ValueError(n + ": in_channels (" + std::to_string(in) + ") and out_channels (" + std::to_string(out) +
                     ") must both be divisible by groups (" + std::to_string(groups) + ")");
  }
  for (int64_t k : kernel)
    if (k <= 0) throw ValueError(n + ": kernel_size must be positive");
  for (int64_t v : stride)
    if (v <= 0) throw ValueError(n + ": stride must be positive");
  for (int64_t v : dilation)
    if (v <= 0) throw ValueError(n + ": dilation must be positive");
  for (int64_t v : padding)
    if (v < 0) throw ValueError(n + ": padding must be non-negative");
}

void check_padding_mode(const char* name, const std::string& mode, bool strided) {
  if (mode != "same" && mode != "valid") {
    throw ValueError(std::string(name) + ": padding must be an int, a tuple, 'same' or 'valid', got '" + mode + "'");
  }
  if (mode == "same" && strided) {
    throw ValueError(std::string(name) + ": padding='same' is not supported for strided convolutions");
  }
}

}  // namespace

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, Pair kernel_size, Pair stride, Pair padding, Pair dilation,
               int64_t groups, bool bias, std::string name)
    : Module(std::move(name)),
      in_(in_channels),
      out_(out_channels),
      kernel_(kernel_size),
      stride_(stride),
      padding_(padding),
      dilation_(dilation),
      groups_(groups) {
  init(bias);
}

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, Pair kernel_size, Pair stride, const std::string& padding,
               Pair dilation, int64_t groups, bool bias, std::string name)
    : Module(std::move(name)),
      in_(in_channels),
      out_(out_channels),
      kernel_(kernel_size),
      stride_(stride),
      padding_({0, 0}),
      dilation_(dilation),
      groups_(groups),
      padding_mode_(padding) {
  check_padding_mode("Conv2d", padding, stride[0] != 1 || stride[1] != 1);
  init(bias);
}

void Conv2d::init(bool bias) {
  check_conv_args("Conv2d", in_, out_, groups_, {kernel_[0], kernel_[1]}, {stride_[0], stride_[1]},
                  {dilation_[0], dilation_[1]}, {padding_[0], padding_[1]});
  const int64_t fan_in = in_ / groups_ * kernel_[0] * kernel_[1];
  register_parameter("weight", init::kaiming_uniform({out_, in_ / groups_, kernel_[0], kernel_[1]}, fan_in));
  if (bias) register_parameter("bias", init::kaiming_uniform({out_}, fan_in));
}

Tensor Conv2d::forward(const Tensor& input) {
  if (input.defined() && (input.dim() == 3 || input.dim() == 4) && input.shape()[input.dim() - 3] != in_) {
    throw ShapeError("Conv2d(" + std::to_string(in_) + ", " + std::to_string(out_) + "): input of shape " +
                     shape_str(input.shape()) + " has " + std::to_string(input.shape()[input.dim() - 3]) +
                     " channels, expected " + std::to_string(in_));
  }
  if (!padding_mode_.empty()) return conv2d(input, weight(), bias(), stride_, padding_mode_, dilation_, groups_);
  return conv2d(input, weight(), bias(), stride_, padding_, dilation_, groups_);
}

Conv1d::Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride, int64_t padding,
               int64_t dilation, int64_t groups, bool bias, std::string name)
    : Module(std::move(name)),
      in_(in_channels),
      out_(out_channels),
      kernel_(kernel_size),
      stride_(stride),
      padding_(padding),
      dilation_(dilation),
      groups_(groups) {
  init(bias);
}

Conv1d::Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride,
               const std::string& padding, int64_t dilation, int64_t groups, bool bias, std::string name)
    : Module(std::move(name)),
      in_(in_channels),
      out_(out_channels),
      kernel_(kernel_size),
      stride_(stride),
      padding_(0),
      dilation_(dilation),
      groups_(groups),
      padding_mode_(padding) {
  check_padding_mode("Conv1d", padding, stride != 1);
  init(bias);
}

void Conv1d::init(bool bias) {
  check_conv_args("Conv1d", in_, out_, groups_, {kernel_}, {stride_}, {dilation_}, {padding_});
  const int64_t fan_in = in_ / groups_ * kernel_;
  register_parameter("weight", init::kaiming_uniform({out_, in_ / groups_, kernel_}, fan_in));
  if (bias) register_parameter("bias", init::kaiming_uniform({out_}, fan_in));
}

Tensor Conv1d::forward(const Tensor& input) {
  if (input.defined() && (input.dim() == 2 || input.dim() == 3) && input.shape()[input.dim() - 2] != in_) {
    throw ShapeError("Conv1d(" + std::to_string(in_) + ", " + std::to_string(out_) + "): input of shape " +
                     shape_str(input.shape()) + " has " + std::to_string(input.shape()[input.dim() - 2]) +
                     " channels, expected " + std::to_string(in_));
  }
  if (!padding_mode_.empty()) return conv1d(input, weight(), bias(), stride_, padding_mode_, dilation_, groups_);
  return conv1d(input, weight(), bias(), stride_, padding_, dilation_, groups_);
}

}  // namespace st::nn
