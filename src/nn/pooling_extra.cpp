// 1-d pools over the 2-d kernels (an inserted unit axis) and adaptive max pooling
// composed from slices and max reductions.
#include "spiraltorch/nn/pooling_extra.h"

#include "spiraltorch/error.h"
#include "spiraltorch/ops.h"

namespace st::nn {

namespace {

std::string i2s(int64_t v) { return std::to_string(v); }

// Checks a 1-d pool's input and settings with the 1-d names, before the 2-d kernel
// would report them as pairs.
void check_pool1d(const Tensor& input, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation,
                  const char* op) {
  if (!input.defined()) throw ValueError(std::string(op) + ": input is required");
  if (input.dim() != 2 && input.dim() != 3) {
    throw ShapeError(std::string(op) + ": expected a 2-d (C, L) or 3-d (N, C, L) input, got shape " +
                     shape_str(input.shape()));
  }
  if (kernel <= 0) throw ValueError(std::string(op) + ": kernel_size must be positive, got " + i2s(kernel));
  if (stride <= 0) throw ValueError(std::string(op) + ": stride must be positive, got " + i2s(stride));
  if (dilation <= 0) throw ValueError(std::string(op) + ": dilation must be positive, got " + i2s(dilation));
  if (padding < 0 || padding > kernel / 2) {
    throw ValueError(std::string(op) + ": padding " + i2s(padding) +
                     " must be non-negative and at most half the kernel size " + i2s(kernel));
  }
}

Tensor add_axis(const Tensor& x) { return unsqueeze(x, x.dim() - 1); }  // (.., C, L) -> (.., C, 1, L)
Tensor drop_axis(const Tensor& y) { return squeeze(y, y.dim() - 2); }

}  // namespace

std::pair<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, int64_t kernel_size,
                                                  std::optional<int64_t> stride, int64_t padding, int64_t dilation,
                                                  bool ceil_mode) {
  const int64_t s = stride.value_or(kernel_size);
  check_pool1d(input, kernel_size, s, padding, dilation, "max_pool1d");
  // With a unit height the flattened-plane index h * W + w is the position along L.
  auto [out, idx] =
      max_pool2d_with_indices(add_axis(input), {1, kernel_size}, Pair{1, s}, {0, padding}, {1, dilation}, ceil_mode);
  return {drop_axis(out), drop_axis(idx)};
}

Tensor max_pool1d(const Tensor& input, int64_t kernel_size, std::optional<int64_t> stride, int64_t padding,
                  int64_t dilation, bool ceil_mode) {
  return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode).first;
}

Tensor avg_pool1d(const Tensor& input, int64_t kernel_size, std::optional<int64_t> stride, int64_t padding,
                  bool ceil_mode, bool count_include_pad) {
  const int64_t s = stride.value_or(kernel_size);
  check_pool1d(input, kernel_size, s, padding, 1, "avg_pool1d");
  return drop_axis(
      avg_pool2d(add_axis(input), {1, kernel_size}, Pair{1, s}, {0, padding}, ceil_mode, count_include_pad, 0));
}

Tensor adaptive_avg_pool1d(const Tensor& input, int64_t output_size) {
  const char* op = "adaptive_avg_pool1d";
  if (!input.defined()) throw ValueError(std::string(op) + ": input is required");
  if (input.dim() != 2 && input.dim() != 3) {
    throw ShapeError(std::string(op) + ": expected a 2-d (C, L) or 3-d (N, C, L) input, got shape " +
                     shape_str(input.shape()));
  }
  if (output_size <= 0) throw ValueError(std::string(op) + ": output_size must be positive, got " + i2s(output_size));
  if (input.shape().back() == 0) {
    throw ShapeError(std::string(op) + ": input of shape " + shape_str(input.shape()) + " has an empty length");
  }
  return drop_axis(adaptive_avg_pool2d(add_axis(input), {1, output_size}));
}

std::pair<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input, Pair output_size) {
  const char* op = "adaptive_max_pool2d";
  if (!input.defined()) throw ValueError(std::string(op) + ": input is required");
  if (input.dim() != 3 && input.dim() != 4) {
    throw ShapeError(std::string(op) + ": expected a 3-d (C, H, W) or 4-d (N, C, H, W) input, got shape " +
                     shape_str(input.shape()));
  }
  if (!is_floating(input.dtype())) {
    throw DtypeError(std::string(op) + ": expected a floating-point input, got " + dtype_name(input.dtype()));
  }
  const int64_t OH = output_size[0], OW = output_size[1];
  if (OH <= 0 || OW <= 0) {
    throw ValueError(std::string(op) + ": output_size must be positive, got (" + i2s(OH) + ", " + i2s(OW) + ")");
  }
  const int64_t nd = input.dim(), H = input.shape()[nd - 2], W = input.shape()[nd - 1];
  if (H == 0 || W == 0) {
    throw ShapeError(std::string(op) + ": input of shape " + shape_str(input.shape()) + " has an empty spatial dim");
  }
  // One max per output cell over its window [floor(i*H/OH), ceil((i+1)*H/OH)) x [...]:
  // OH*OW small reductions, each differentiable (the gradient goes to the argmax).
  std::vector<Tensor> values, indices;
  values.reserve(OH * OW);
  indices.reserve(OH * OW);
  for (int64_t i = 0; i < OH; ++i) {
    const int64_t h0 = (i * H) / OH, h1 = ((i + 1) * H + OH - 1) / OH;
    const Tensor rows = slice(input, nd - 2, h0, h1);
    for (int64_t j = 0; j < OW; ++j) {
      const int64_t w0 = (j * W) / OW, w1 = ((j + 1) * W + OW - 1) / OW, rw = w1 - w0;
      const Tensor win = flatten(slice(rows, nd - 1, w0, w1), nd - 2, nd - 1);
      auto [v, li] = max(win, -1);
      values.push_back(v);
      // local (row-major in the window) -> global index in the plane
      const Tensor lr = floor_divide(li, full_like(li, rw)), lc = remainder(li, full_like(li, rw));
      indices.push_back(add(add(mul(add(lr, h0), W), lc), w0));
    }
  }
  Shape os = input.shape();
  os[nd - 2] = OH;
  os[nd - 1] = OW;
  return {reshape(stack(values, -1), os), reshape(stack(indices, -1), os)};
}

Tensor adaptive_max_pool2d(const Tensor& input, Pair output_size) {
  return adaptive_max_pool2d_with_indices(input, output_size).first;
}

// ---- modules ----

MaxPool1d::MaxPool1d(int64_t kernel_size, std::optional<int64_t> stride, int64_t padding, int64_t dilation,
                     bool ceil_mode, std::string name)
    : Module(std::move(name)),
      kernel_(kernel_size),
      stride_(stride.value_or(kernel_size)),
      padding_(padding),
      dilation_(dilation),
      ceil_mode_(ceil_mode) {
  if (kernel_ <= 0 || stride_ <= 0 || dilation_ <= 0) {
    throw ValueError("MaxPool1d: kernel_size, stride and dilation must be positive, got " + i2s(kernel_) + ", " +
                     i2s(stride_) + ", " + i2s(dilation_));
  }
  if (padding_ < 0 || padding_ > kernel_ / 2) {
    throw ValueError("MaxPool1d: padding " + i2s(padding_) + " must be non-negative and at most half the kernel size " +
                     i2s(kernel_));
  }
}

Tensor MaxPool1d::forward(const Tensor& input) {
  return max_pool1d(input, kernel_, stride_, padding_, dilation_, ceil_mode_);
}

AvgPool1d::AvgPool1d(int64_t kernel_size, std::optional<int64_t> stride, int64_t padding, bool ceil_mode,
                     bool count_include_pad, std::string name)
    : Module(std::move(name)),
      kernel_(kernel_size),
      stride_(stride.value_or(kernel_size)),
      padding_(padding),
      ceil_mode_(ceil_mode),
      count_include_pad_(count_include_pad) {
  if (kernel_ <= 0 || stride_ <= 0) {
    throw ValueError("AvgPool1d: kernel_size and stride must be positive, got " + i2s(kernel_) + " and " +
                     i2s(stride_));
  }
  if (padding_ < 0 || padding_ > kernel_ / 2) {
    throw ValueError("AvgPool1d: padding " + i2s(padding_) + " must be non-negative and at most half the kernel size " +
                     i2s(kernel_));
  }
}

Tensor AvgPool1d::forward(const Tensor& input) {
  return avg_pool1d(input, kernel_, stride_, padding_, ceil_mode_, count_include_pad_);
}

AdaptiveAvgPool1d::AdaptiveAvgPool1d(int64_t output_size, std::string name)
    : Module(std::move(name)), output_size_(output_size) {
  if (output_size <= 0) throw ValueError("AdaptiveAvgPool1d: output_size must be positive, got " + i2s(output_size));
}

Tensor AdaptiveAvgPool1d::forward(const Tensor& input) { return adaptive_avg_pool1d(input, output_size_); }

AdaptiveMaxPool2d::AdaptiveMaxPool2d(Pair output_size, std::string name)
    : Module(std::move(name)), output_size_(output_size) {
  if (output_size[0] <= 0 || output_size[1] <= 0) {
    throw ValueError("AdaptiveMaxPool2d: output_size must be positive, got (" + i2s(output_size[0]) + ", " +
                     i2s(output_size[1]) + ")");
  }
}

Tensor AdaptiveMaxPool2d::forward(const Tensor& input) { return adaptive_max_pool2d(input, output_size_); }

}  // namespace st::nn
