// conv_transpose1d / conv_transpose2d (PyTorch's "deconvolution"): the input gradient of a conv2d
// whose output is this op's input. Forward = conv2d's input-gradient pass (GEMM + col2im), the
// input gradient = a conv2d forward, the weight gradient = conv2d's weight-gradient pass with the
// two activations swapped; every device with im2col/col2im/gemm runs it.
#include <algorithm>

#include "nn/conv_common.h"
#include "ops/common.h"
#include "spiraltorch/autocast.h"

namespace st::nn {

using detail::backend_of;

namespace {

struct TransposeSpec {
  ConvSpec conv;  // the convolution this op transposes
  Pair output_padding;
};

// conv_transpose2d of operands autocast has already lowered; its recursions stay here (as
// conv2d_lowered's: through the autocast entry the float32 fallback would be cast down again).
Tensor conv_transpose2d_lowered(const Tensor& input, const Tensor& weight, const Tensor& bias, const TransposeSpec& t,
                                const char* op) {
  if (input.dim() == 3) return squeeze(conv_transpose2d_lowered(unsqueeze(input, 0), weight, bias, t, op), 0);
  const ConvSpec& s = t.conv;
  const bool half = check_conv2d_operands(input, weight, s, "(in_channels, out_channels/groups, kh, kw)", op);
  for (int d = 0; d < 2; ++d) {
    // PyTorch allows output_padding < max(stride, dilation); only below the stride is the extra
    // border outside every window, which is what this op's conv2d plan covers.
    if (t.output_padding[d] < 0 || t.output_padding[d] >= s.stride[d]) {
      throw ValueError(std::string(op) + ": output_padding must be non-negative and smaller than the stride, got " +
                       pair_str(t.output_padding) + " with stride " + pair_str(s.stride));
    }
  }
  const int64_t C = input.shape()[1];
  if (weight.shape()[0] != C) {
    throw ShapeError(std::string(op) + ": input of shape " + shape_str(input.shape()) + " has " + std::to_string(C) +
                     " channels, but weight of shape " + shape_str(weight.shape()) + " expects " +
                     std::to_string(weight.shape()[0]) + " (weight.shape[0])");
  }
  if (C % s.groups != 0) {
    throw ValueError(std::string(op) + ": in_channels (" + std::to_string(C) + ") must be divisible by groups (" +
                     std::to_string(s.groups) + ")");
  }
  const int64_t O = weight.shape()[1] * s.groups;
  if (bias.defined()) {
    detail::check_same_device(input, bias, op);
    if (bias.dim() != 1 || bias.shape()[0] != O) {
      throw ShapeError(std::string(op) + ": bias of shape " + shape_str(bias.shape()) +
                       " does not match weight of shape " + shape_str(weight.shape()) + " and groups " +
                       std::to_string(s.groups) + " (expected (" + std::to_string(O) + ",))");
    }
    if (bias.dtype() != input.dtype()) {
      throw DtypeError(std::string(op) + ": input is " + dtype_name(input.dtype()) + " but bias is " +
                       dtype_name(bias.dtype()));
    }
  }
  Shape out_shape{input.shape()[0], O, 0, 0};
  for (int d = 0; d < 2; ++d) {
    out_shape[2 + d] = (input.shape()[2 + d] - 1) * s.stride[d] - 2 * s.pad_begin[d] +
                       s.dilation[d] * (weight.shape()[2 + d] - 1) + t.output_padding[d] + 1;
    if (out_shape[2 + d] <= 0) {
      throw ShapeError(std::string(op) + ": input of shape " + shape_str(input.shape()) + " with weight " +
                       shape_str(weight.shape()) + ", stride " + pair_str(s.stride) + ", padding " +
                       pair_str(s.pad_begin) + " gives a non-positive output size " + std::to_string(out_shape[2 + d]));
    }
  }
  if (half) {
    const Tensor b32 = bias.defined() ? bias.to(Dtype::Float32) : Tensor();
    return conv_transpose2d_lowered(input.to(Dtype::Float32), weight.to(Dtype::Float32), b32, t, op).to(input.dtype());
  }

  const Tensor x = input.detach().contiguous();
  const Tensor w = weight.detach().contiguous();
  // The convolution being transposed maps out_shape to x's shape with this same weight.
  const ConvPlan p = make_plan(out_shape, w.shape(), s);
  // conv2d_backward_raw reads only the shape, dtype and device of its activation for gx.
  const Tensor shape_only = detail::expand_view(Tensor::empty({1, 1, 1, 1}, x.dtype(), x.device()), out_shape);
  Tensor out = conv2d_backward_raw(x, shape_only, w, false, true, false, false, p)[0];
  if (needs_grad({&input, &weight})) {
    const bool nx = input.requires_grad(), nw = weight.requires_grad();
    record(out, "ConvTranspose2dBackward", {input, weight}, [x, w, p, nx, nw](const Tensor& g) -> std::vector<Tensor> {
      const Tensor gy = detail::cast_raw(g, x.dtype()).contiguous();
      Tensor gx, gw;
      if (nx) gx = conv2d_forward_raw(gy, w, Tensor(), p);
      if (nw) gw = conv2d_backward_raw(x, gy, w, false, false, true, false, p)[1];
      return {gx, gw};
    }, {x, w});
  }
  // The bias through autograd's own add: its gradient is the output gradient summed over N, H, W.
  return bias.defined() ? add(out, reshape(bias, {1, O, 1, 1})) : out;
}

Tensor conv_transpose2d_impl(const Tensor& input, const Tensor& weight, const Tensor& bias, const TransposeSpec& t,
                             const char* op) {
  if (!input.defined() || !weight.defined()) throw ValueError(std::string(op) + ": input and weight are required");
  // autocast's lower-precision list
  return conv_transpose2d_lowered(autocast::to_lower(input), autocast::to_lower(weight), autocast::to_lower(bias), t,
                                  op);
}

}  // namespace

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias, Pair stride, Pair padding,
                        Pair output_padding, int64_t groups, Pair dilation) {
  return conv_transpose2d_impl(input, weight, bias, {{stride, padding, padding, dilation, groups}, output_padding},
                               "conv_transpose2d");
}

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias, int64_t stride, int64_t padding,
                        int64_t output_padding, int64_t groups, int64_t dilation) {
  const char* op = "conv_transpose1d";
  if (!input.defined() || !weight.defined()) throw ValueError(std::string(op) + ": input and weight are required");
  if (input.dim() == 2) {
    return squeeze(
        conv_transpose1d(unsqueeze(input, 0), weight, bias, stride, padding, output_padding, groups, dilation), 0);
  }
  if (input.dim() != 3) {
    throw ShapeError(std::string(op) + ": expected a 2-d (C, L) or 3-d (N, C, L) input, got shape " +
                     shape_str(input.shape()));
  }
  if (weight.dim() != 3) {
    throw ShapeError(std::string(op) + ": expected a 3-d weight (in_channels, out_channels/groups, k), got shape " +
                     shape_str(weight.shape()));
  }
  // Height 1: stride, padding and dilation 1 / 0 / 1 there, and no output padding.
  const TransposeSpec t{{{1, stride}, {0, padding}, {0, padding}, {1, dilation}, groups}, {0, output_padding}};
  return squeeze(conv_transpose2d_impl(unsqueeze(input, 2), unsqueeze(weight, 2), bias, t, op), 2);
}

}  // namespace st::nn
