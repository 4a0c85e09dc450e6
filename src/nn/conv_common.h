#pragma once
// Helpers shared by src/nn/conv.cpp, conv_transpose.cpp and pooling.cpp.
#include <string>
#include <vector>

#include "backend/backend.h"
#include "spiraltorch/nn/conv.h"

namespace st::nn {

std::string pair_str(Pair p);  // "(a, b)"
// DtypeError unless x is float32 or float64.
void check_conv_float(const Tensor& x, const char* op);

// Stride, padding on each side, dilation and groups of a 2-d convolution.
struct ConvSpec {
  Pair stride, pad_begin, pad_end, dilation;
  int64_t groups;
};

// The raw (no autograd) pieces of a conv2d on contiguous NCHW data.
struct ConvPlan {
  int64_t N, C, H, W, O, kh, kw, OH, OW, groups, Cg, Og, K, L;
  bool direct;     // 1x1 kernel, stride 1, no padding: the input is its own column matrix
  bool depthwise;  // one input and one output channel per group: a direct sliding-window kernel
  backend::Conv2dGeom geom;
};

// The checks conv2d and conv_transpose2d share on 4-d input and weight (weight_layout names the
// weight's dims in the message): same device, a float input (or a half type), the weight's dtype
// equal to the input's, positive stride and dilation, non-negative padding, positive groups.
// Returns whether the input is a half type.
bool check_conv2d_operands(const Tensor& input, const Tensor& weight, const ConvSpec& s, const char* weight_layout,
                           const char* op);
// The plan of a conv2d of input shape xs (N, C, H, W) with weight shape ws (O, C/groups, kh, kw).
ConvPlan make_plan(const Shape& xs, const Shape& ws, const ConvSpec& s);
// The raw (no autograd) im2col + GEMM forward on contiguous x, w and (optional) b: (N, O, OH, OW),
// written into `out` when it is given (contiguous, that shape and x's dtype).
Tensor conv2d_forward_raw(const Tensor& x, const Tensor& w, const Tensor& b, const ConvPlan& p, Tensor out = Tensor());
// Gradients {gx, gw, gb} of conv2d_forward_raw for the output gradient gy; any may be skipped (left
// undefined). x is read only for gw: for gx alone a tensor of x's shape, dtype and device serves.
std::vector<Tensor> conv2d_backward_raw(const Tensor& gy, const Tensor& x, const Tensor& w, bool has_bias, bool need_x,
                                        bool need_w, bool need_b, const ConvPlan& p);

}  // namespace st::nn
