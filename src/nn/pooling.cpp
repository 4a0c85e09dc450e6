// max_pool2d / avg_pool2d / adaptive_avg_pool2d: shape checks, dispatch to the
// pooling kernels (src/backend/cpu/conv.cpp), explicit backward; and the modules.
#include "nn/conv_common.h"
#include "ops/common.h"

namespace st::nn {

using backend::Pool2dGeom;
using detail::backend_of;

namespace {

int64_t pool_out_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode) {
  const int64_t num = in + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  // floor division (num may be negative)
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

bool is_half(const Tensor& t) { return t.defined() && (t.dtype() == Dtype::Float16 || t.dtype() == Dtype::BFloat16); }

struct PoolInput {
  Tensor x;        // contiguous (N, C, H, W), detached
  bool unbatched;  // the caller passed (C, H, W)
  int64_t planes, H, W;
};

PoolInput pool_input(const Tensor& input, const char* op) {
  if (!input.defined()) throw ValueError(std::string(op) + ": input is required");
  if (input.dim() != 3 && input.dim() != 4) {
    throw ShapeError(std::string(op) + ": expected a 3-d (C, H, W) or 4-d (N, C, H, W) input, got shape " +
                     shape_str(input.shape()));
  }
  check_conv_float(input, op);
  PoolInput p;
  p.unbatched = input.dim() == 3;
  p.x = input.detach().contiguous();
  const int64_t nd = input.dim();
  p.H = input.shape()[nd - 2];
  p.W = input.shape()[nd - 1];
  p.planes = 1;
  for (int64_t d = 0; d < nd - 2; ++d) p.planes *= input.shape()[d];
  return p;
}

Shape out_shape(const Tensor& input, int64_t OH, int64_t OW) {
  Shape s = input.shape();
  s[s.size() - 2] = OH;
  s[s.size() - 1] = OW;
  return s;
}

Pool2dGeom pool_geom(const Tensor& input, const PoolInput& in, Pair kernel, Pair stride, Pair padding, Pair dilation,
                     bool ceil_mode, const char* op) {
  for (int d = 0; d < 2; ++d) {
    if (kernel[d] <= 0) throw ValueError(std::string(op) + ": kernel_size must be positive, got " + pair_str(kernel));
    if (stride[d] <= 0) throw ValueError(std::string(op) + ": stride must be positive, got " + pair_str(stride));
    if (dilation[d] <= 0) throw ValueError(std::string(op) + ": dilation must be positive, got " + pair_str(dilation));
    if (padding[d] < 0 || padding[d] > kernel[d] / 2) {
      throw ValueError(std::string(op) + ": padding " + pair_str(padding) +
                       " must be non-negative and at most half the kernel size " + pair_str(kernel));
    }
  }
  const int64_t OH = pool_out_size(in.H, kernel[0], padding[0], stride[0], dilation[0], ceil_mode);
  const int64_t OW = pool_out_size(in.W, kernel[1], padding[1], stride[1], dilation[1], ceil_mode);
  if (OH <= 0 || OW <= 0) {
    throw ShapeError(std::string(op) + ": input of shape " + shape_str(input.shape()) + " is too small for kernel " +
                     pair_str(kernel) + " with padding " + pair_str(padding) + " and dilation " + pair_str(dilation) +
                     " (output would be " + pair_str({OH, OW}) + ")");
  }
  return Pool2dGeom{0,          in.H,        in.W,        kernel[0], kernel[1], stride[0], stride[1], padding[0],
                    padding[1], dilation[0], dilation[1], OH,        OW,        0,         0};
}

}  // namespace

std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, Pair kernel_size, std::optional<Pair> stride,
                                                  Pair padding, Pair dilation, bool ceil_mode) {
  if (is_half(input)) {  // half types pool in float32 (the kernels take float32/float64)
    auto r = max_pool2d_with_indices(input.to(Dtype::Float32), kernel_size, stride, padding, dilation, ceil_mode);
    return {r.first.to(input.dtype()), r.second};
  }
  const char* op = "max_pool2d";
  const PoolInput in = pool_input(input, op);
  const Pool2dGeom g =
      pool_geom(input, in, kernel_size, stride.value_or(kernel_size), padding, dilation, ceil_mode, op);
  const Shape os = out_shape(input, g.OH, g.OW);
  Tensor out = Tensor::empty(os, in.x.dtype(), in.x.device());
  Tensor indices = Tensor::empty(os, Dtype::Int64, in.x.device());
  if (out.numel() > 0) backend_of(in.x).max_pool2d(in.x, g, in.planes, out, indices);
  if (needs_grad({&input})) {
    const Shape xs = input.shape();
    const int64_t planes = in.planes;
    record(out, "MaxPool2dBackward", {input}, [indices, g, xs, planes](const Tensor& gy) -> std::vector<Tensor> {
      const Tensor gyc = gy.contiguous();
      Tensor gx = Tensor::empty(xs, gyc.dtype(), gyc.device());
      if (gx.numel() > 0) backend_of(gyc).max_pool2d_backward(gyc, indices, g, planes, gx);
      return {gx};
    });
  }
  return {out, indices};
}

Tensor max_pool2d(const Tensor& input, Pair kernel_size, std::optional<Pair> stride, Pair padding, Pair dilation,
                  bool ceil_mode) {
  return max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode).first;
}

Tensor avg_pool2d(const Tensor& input, Pair kernel_size, std::optional<Pair> stride, Pair padding, bool ceil_mode,
                  bool count_include_pad, int64_t divisor_override) {
  const char* op = "avg_pool2d";
  if (is_half(input)) {
    return avg_pool2d(input.to(Dtype::Float32), kernel_size, stride, padding, ceil_mode, count_include_pad,
                      divisor_override)
        .to(input.dtype());
  }
  const PoolInput in = pool_input(input, op);
  const Pool2dGeom g = pool_geom(input, in, kernel_size, stride.value_or(kernel_size), padding, {1, 1}, ceil_mode, op);
  Tensor out = Tensor::empty(out_shape(input, g.OH, g.OW), in.x.dtype(), in.x.device());
  if (out.numel() > 0) backend_of(in.x).avg_pool2d(in.x, g, in.planes, count_include_pad, divisor_override, out);
  if (needs_grad({&input})) {
    const Shape xs = input.shape();
    const int64_t planes = in.planes;
    record(out, "AvgPool2dBackward", {input},
           [g, xs, planes, count_include_pad, divisor_override](const Tensor& gy) -> std::vector<Tensor> {
      const Tensor gyc = gy.contiguous();
      Tensor gx = Tensor::empty(xs, gyc.dtype(), gyc.device());
      if (gx.numel() > 0) backend_of(gyc).avg_pool2d_backward(gyc, g, planes, count_include_pad, divisor_override, gx);
      return {gx};
    });
  }
  return out;
}

Tensor adaptive_avg_pool2d(const Tensor& input, Pair output_size) {
  const char* op = "adaptive_avg_pool2d";
  if (is_half(input)) return adaptive_avg_pool2d(input.to(Dtype::Float32), output_size).to(input.dtype());
  const PoolInput in = pool_input(input, op);
  if (output_size[0] <= 0 || output_size[1] <= 0) {
    throw ValueError(std::string(op) + ": output_size must be positive, got " + pair_str(output_size));
  }
  if (in.H == 0 || in.W == 0) {
    throw ShapeError(std::string(op) + ": input of shape " + shape_str(input.shape()) + " has an empty spatial dim");
  }
  const Pool2dGeom g{0, in.H, in.W, 1, 1, 1, 1, 0, 0, 1, 1, output_size[0], output_size[1], 0, 0};
  Tensor out = Tensor::empty(out_shape(input, g.OH, g.OW), in.x.dtype(), in.x.device());
  if (out.numel() > 0) backend_of(in.x).adaptive_avg_pool2d(in.x, g, in.planes, out);
  if (needs_grad({&input})) {
    const Shape xs = input.shape();
    const int64_t planes = in.planes;
    record(out, "AdaptiveAvgPool2dBackward", {input}, [g, xs, planes](const Tensor& gy) -> std::vector<Tensor> {
      const Tensor gyc = gy.contiguous();
      Tensor gx = Tensor::empty(xs, gyc.dtype(), gyc.device());
      if (gx.numel() > 0) backend_of(gyc).adaptive_avg_pool2d_backward(gyc, g, planes, gx);
      return {gx};
    });
  }
  return out;
}

// ---- modules ----

MaxPool2d::MaxPool2d(Pair kernel_size, std::optional<Pair> stride, Pair padding, Pair dilation, bool ceil_mode,
                     std::string name)
    : Module(std::move(name)),
      kernel_(kernel_size),
      stride_(stride.value_or(kernel_size)),
      padding_(padding),
      dilation_(dilation),
      ceil_mode_(ceil_mode) {
  for (int d = 0; d < 2; ++d) {
    if (kernel_[d] <= 0 || stride_[d] <= 0 || dilation_[d] <= 0) {
      throw ValueError("MaxPool2d: kernel_size, stride and dilation must be positive");
    }
    if (padding_[d] < 0 || padding_[d] > kernel_[d] / 2) {
      throw ValueError("MaxPool2d: padding " + pair_str(padding_) +
                       " must be non-negative and at most half the kernel size " + pair_str(kernel_));
    }
  }
}

Tensor MaxPool2d::forward(const Tensor& input) {
  return max_pool2d(input, kernel_, stride_, padding_, dilation_, ceil_mode_);
}

AvgPool2d::AvgPool2d(Pair kernel_size, std::optional<Pair> stride, Pair padding, bool ceil_mode, bool count_include_pad,
                     int64_t divisor_override, std::string name)
    : Module(std::move(name)),
      kernel_(kernel_size),
      stride_(stride.value_or(kernel_size)),
      padding_(padding),
      ceil_mode_(ceil_mode),
      count_include_pad_(count_include_pad),
      divisor_override_(divisor_override) {
  for (int d = 0; d < 2; ++d) {
    if (kernel_[d] <= 0 || stride_[d] <= 0) throw ValueError("AvgPool2d: kernel_size and stride must be positive");
    if (padding_[d] < 0 || padding_[d] > kernel_[d] / 2) {
      throw ValueError("AvgPool2d: padding " + pair_str(padding_) +
                       " must be non-negative and at most half the kernel size " + pair_str(kernel_));
    }
  }
}

Tensor AvgPool2d::forward(const Tensor& input) {
  return avg_pool2d(input, kernel_, stride_, padding_, ceil_mode_, count_include_pad_, divisor_override_);
}

AdaptiveAvgPool2d::AdaptiveAvgPool2d(Pair output_size, std::string name)
    : Module(std::move(name)), output_size_(output_size) {
  if (output_size[0] <= 0 || output_size[1] <= 0) {
    throw ValueError("AdaptiveAvgPool2d: output_size must be positive, got " + pair_str(output_size));
  }
}

Tensor AdaptiveAvgPool2d::forward(const Tensor& input) { return adaptive_avg_pool2d(input, output_size_); }

}  // namespace st::nn
