#pragma once
// float32 NCHW conv2d on the CPU through oneDNN (src/backend/cpu/conv_onednn.cpp), and the switch
// that picks it or the im2col + GEMM path of src/nn/conv.cpp. Builds without oneDNN
// (SPIRALTORCH_ONEDNN=OFF, or AUTO when it is not found) keep these functions: they
// report why it is absent, and conv.cpp never calls the compute ones.
#include <array>
#include <optional>
#include <string>

#include "spiraltorch/tensor.h"

namespace st::backend::onednn {

// The geometry of one conv2d call, in PyTorch's terms (dilation 1 = dense kernel).
struct Conv2dDims {
  int64_t N, C, H, W, O, kh, kw, OH, OW, groups;
  std::array<int64_t, 2> stride, pad_begin, pad_end, dilation;
};

// The oneDNN version this build runs with ("2.6.3"), or nullopt when it is not built.
std::optional<std::string> version();
// The version of the oneDNN headers this build was compiled against (nullopt when it is not
// built): the library loaded at run time must have the same major version.
std::optional<std::string> header_version();
// Why oneDNN is absent; empty when it is built.
std::string unavailable_reason();

// The conv backend switch: "auto" (oneDNN for float32 on the CPU when built, else im2col),
// "im2col" or "onednn" (an error when it is not built). It starts from the environment
// variable SPIRALTORCH_CONV_BACKEND and can be changed at run time (tests compare both).
std::string conv_backend();
void set_conv_backend(const std::string& name);
// Whether a float32 CPU conv2d should go to oneDNN now.
bool use_onednn();

// The compute entry points take contiguous float32 CPU tensors with the shapes in `d`.
// Each returns nullopt when oneDNN has no implementation for this geometry (the caller then
// uses im2col); oneDNN failures become SpiralError naming `op` and the shapes.
std::optional<Tensor> forward(const Tensor& x, const Tensor& w, const Tensor& b, const Conv2dDims& d, const char* op);
struct Grads {
  Tensor gx, gw, gb;
};
// Gradients of forward() (`has_bias`: whether it had a bias); any of gx / gw / gb may be skipped.
std::optional<Grads> backward(const Tensor& gy, const Tensor& x, const Tensor& w, bool has_bias, bool need_x,
                              bool need_w, bool need_b, const Conv2dDims& d, const char* op);

}  // namespace st::backend::onednn
