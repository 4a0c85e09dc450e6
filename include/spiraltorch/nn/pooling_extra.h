#pragma once
// PyTorch's 1-d pools and adaptive max pooling. The 1-d pools run the 2-d kernels on
// the input with an inserted unit axis ((N, C, L) -> (N, C, 1, L)); adaptive max
// pooling is composed from slicing and max reductions, so it runs on every device
// and differentiates through ops.h.
#include <optional>
#include <utility>

#include "spiraltorch/nn/conv.h"

namespace st::nn {

// x (N, C, L) or unbatched (C, L); stride defaults to kernel_size. Indices are positions
// along L, like PyTorch's return_indices=True.
std::pair<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, int64_t kernel_size,
                                                  std::optional<int64_t> stride = {}, int64_t padding = 0,
                                                  int64_t dilation = 1, bool ceil_mode = false);
Tensor max_pool1d(const Tensor& input, int64_t kernel_size, std::optional<int64_t> stride = {}, int64_t padding = 0,
                  int64_t dilation = 1, bool ceil_mode = false);
Tensor avg_pool1d(const Tensor& input, int64_t kernel_size, std::optional<int64_t> stride = {}, int64_t padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true);
Tensor adaptive_avg_pool1d(const Tensor& input, int64_t output_size);
// Max over PyTorch's adaptive windows [floor(i*H/OH), ceil((i+1)*H/OH)); returns the
// values and int64 indices into each flattened input plane (h * W + w).
std::pair<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input, Pair output_size);
Tensor adaptive_max_pool2d(const Tensor& input, Pair output_size);

class MaxPool1d : public Module {
 public:
  MaxPool1d(int64_t kernel_size, std::optional<int64_t> stride = {}, int64_t padding = 0, int64_t dilation = 1,
            bool ceil_mode = false, std::string name = "");
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "MaxPool1d"; }
  int64_t kernel_size() const { return kernel_; }
  int64_t stride() const { return stride_; }
  int64_t padding() const { return padding_; }
  int64_t dilation() const { return dilation_; }
  bool ceil_mode() const { return ceil_mode_; }

 private:
  int64_t kernel_, stride_, padding_, dilation_;
  bool ceil_mode_;
};

class AvgPool1d : public Module {
 public:
  AvgPool1d(int64_t kernel_size, std::optional<int64_t> stride = {}, int64_t padding = 0, bool ceil_mode = false,
            bool count_include_pad = true, std::string name = "");
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "AvgPool1d"; }
  int64_t kernel_size() const { return kernel_; }
  int64_t stride() const { return stride_; }
  int64_t padding() const { return padding_; }
  bool ceil_mode() const { return ceil_mode_; }
  bool count_include_pad() const { return count_include_pad_; }

 private:
  int64_t kernel_, stride_, padding_;
  bool ceil_mode_, count_include_pad_;
};

class AdaptiveAvgPool1d : public Module {
 public:
  explicit AdaptiveAvgPool1d(int64_t output_size, std::string name = "");
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "AdaptiveAvgPool1d"; }
  int64_t output_size() const { return output_size_; }

 private:
  int64_t output_size_;
};

class AdaptiveMaxPool2d : public Module {
 public:
  explicit AdaptiveMaxPool2d(Pair output_size, std::string name = "");
  Tensor forward(const Tensor& input) override;
  std::string type_name() const override { return "AdaptiveMaxPool2d"; }
  Pair output_size() const { return output_size_; }

 private:
  Pair output_size_;
};

}  // namespace st::nn
