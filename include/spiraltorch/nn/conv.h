#pragma once
// Convolution and pooling with PyTorch semantics (NCHW / NCL layouts).
// conv1d/conv2d run as im2col + GEMM (a direct GEMM for 1x1 kernels), or for float32
// on the CPU through oneDNN when the build has it; every op records an explicit
// backward for input, weight and bias. float32 and float64.
#include <array>
#include <optional>
#include <string>
#include <utility>

#include "spiraltorch/nn/module.h"

namespace st::nn {

using Pair = std::array<int64_t, 2>;

// ---- functional ----
// x (N, C, H, W) or unbatched (C, H, W); weight (out, C/groups, kh, kw); bias (out,) or undefined.
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, Pair stride = {1, 1},
              Pair padding = {0, 0}, Pair dilation = {1, 1}, int64_t groups = 1);
// padding "valid" (none) or "same" (output size = input size; stride must be 1).
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, Pair stride, const std::string& padding,
              Pair dilation = {1, 1}, int64_t groups = 1);
// x (N, C, L) or unbatched (C, L); weight (out, C/groups, k).
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, int64_t stride = 1,
              int64_t padding = 0, int64_t dilation = 1, int64_t groups = 1);
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, int64_t stride, const std::string& padding,
              int64_t dilation = 1, int64_t groups = 1);

// Transposed convolutions (the input gradient of the conv2d / conv1d with the same weight and
// settings), PyTorch's argument order. x (N, C_in, H, W) or unbatched; weight (C_in, C_out/groups,
// kh, kw); bias (C_out,) or undefined. Output size (H - 1) stride - 2 padding + dilation (kh - 1) +
// output_padding + 1; output_padding must be smaller than the stride.
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, Pair stride = {1, 1},
                        Pair padding = {0, 0}, Pair output_padding = {0, 0}, int64_t groups = 1,
                        Pair dilation = {1, 1});
// x (N, C_in, L) or (C_in, L); weight (C_in, C_out/groups, k).
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, int64_t stride = 1,
                        int64_t padding = 0, int64_t output_padding = 0, int64_t groups = 1, int64_t dilation = 1);

// Max pooling; `stride` defaults to the kernel size. Returns values and int64 indices
// into each flattened input plane (h * W + w), like PyTorch's return_indices=True.
std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, Pair kernel_size,
                                                  std::optional<Pair> stride = {}, Pair padding = {0, 0},
                                                  Pair dilation = {1, 1}, bool ceil_mode = false);
Tensor max_pool2d(const Tensor& input, Pair kernel_size, std::optional<Pair> stride = {}, Pair padding = {0, 0},
                  Pair dilation = {1, 1}, bool ceil_mode = false);
// divisor_override <= 0 means none.
Tensor avg_pool2d(const Tensor& input, Pair kernel_size, std::optional<Pair> stride = {}, Pair padding = {0, 0},
                  bool ceil_mode = false, bool count_include_pad = true, int64_t divisor_override = 0);
Tensor adaptive_avg_pool2d(const Tensor& input, Pair output_size);

// ---- modules ----
// Parameters weight (out, in/groups, kh, kw) and bias (out,), Kaiming-uniform like PyTorch.
class Conv2d : public Module {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, Pair kernel_size, Pair stride = {1, 1}, Pair padding = {0, 0},
         Pair dilation = {1, 1}, int64_t groups = 1, bool bias = true, std::string name = "");
  // padding "same" or "valid".
  Conv2d(int64_t in_channels, int64_t out_channels, Pair kernel_size, Pair stride, const std::string& padding,
         Pair dilation = {1, 1}, int64_t groups = 1, bool bias = true, std::string name = "");
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Conv2d"; }
  Tensor weight() { return *find_parameter("weight"); }
  Tensor bias() {
    Tensor* b = find_parameter("bias");
    return b ? *b : Tensor();
  }
  int64_t in_channels() const { return in_; }
  int64_t out_channels() const { return out_; }
  Pair kernel_size() const { return kernel_; }
  Pair stride() const { return stride_; }
  Pair padding() const { return padding_; }
  const std::string& padding_mode() const { return padding_mode_; }  // "" when numeric
  Pair dilation() const { return dilation_; }
  int64_t groups() const { return groups_; }

 private:
  void init(bool bias);
  int64_t in_, out_;
  Pair kernel_, stride_, padding_, dilation_;
  int64_t groups_;
  std::string padding_mode_;
};

class Conv1d : public Module {
 public:
  Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride = 1, int64_t padding = 0,
         int64_t dilation = 1, int64_t groups = 1, bool bias = true, std::string name = "");
  Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride, const std::string& padding,
         int64_t dilation = 1, int64_t groups = 1, bool bias = true, std::string name = "");
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "Conv1d"; }
  Tensor weight() { return *find_parameter("weight"); }
  Tensor bias() {
    Tensor* b = find_parameter("bias");
    return b ? *b : Tensor();
  }
  int64_t in_channels() const { return in_; }
  int64_t out_channels() const { return out_; }
  int64_t kernel_size() const { return kernel_; }
  int64_t stride() const { return stride_; }
  int64_t padding() const { return padding_; }
  const std::string& padding_mode() const { return padding_mode_; }
  int64_t dilation() const { return dilation_; }
  int64_t groups() const { return groups_; }

 private:
  void init(bool bias);
  int64_t in_, out_, kernel_, stride_, padding_, dilation_, groups_;
  std::string padding_mode_;
};

class MaxPool2d : public Module {
 public:
  MaxPool2d(Pair kernel_size, std::optional<Pair> stride = {}, Pair padding = {0, 0}, Pair dilation = {1, 1},
            bool ceil_mode = false, std::string name = "");
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "MaxPool2d"; }
  Pair kernel_size() const { return kernel_; }
  Pair stride() const { return stride_; }
  Pair padding() const { return padding_; }
  Pair dilation() const { return dilation_; }
  bool ceil_mode() const { return ceil_mode_; }

 private:
  Pair kernel_, stride_, padding_, dilation_;
  bool ceil_mode_;
};

class AvgPool2d : public Module {
 public:
  AvgPool2d(Pair kernel_size, std::optional<Pair> stride = {}, Pair padding = {0, 0}, bool ceil_mode = false,
            bool count_include_pad = true, int64_t divisor_override = 0, std::string name = "");
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "AvgPool2d"; }
  Pair kernel_size() const { return kernel_; }
  Pair stride() const { return stride_; }
  Pair padding() const { return padding_; }
  bool ceil_mode() const { return ceil_mode_; }
  bool count_include_pad() const { return count_include_pad_; }
  int64_t divisor_override() const { return divisor_override_; }

 private:
  Pair kernel_, stride_, padding_;
  bool ceil_mode_, count_include_pad_;
  int64_t divisor_override_;
};

class AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(Pair output_size, std::string name = "");
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "AdaptiveAvgPool2d"; }
  Pair output_size() const { return output_size_; }

 private:
  Pair output_size_;
};

}  // namespace st::nn
