#pragma once
// float32 / bfloat16 NCHW conv2d on the CPU through oneDNN (src/backend/cpu/conv_onednn.cpp): the CPU
// backend's conv2d_fused entries, and the switch that lets them take a call or decline it (the op
// then runs im2col + GEMM). Builds without oneDNN (SPIRALTORCH_ONEDNN=OFF, or AUTO when it is not
// found) keep these functions: they report why it is absent, and the entries decline.
#include <optional>
#include <string>

#include "backend/backend.h"

namespace st::backend::onednn {

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

// Backend::conv2d_fused and conv2d_fused_backward of the CPU backend (their contracts are in
// backend.h): float32 operands, or bfloat16 where bf16_matmul_available() (autocast's CPU
// convolutions; bias and gradients bfloat16 too), with no empty dimension while use_onednn(); the
// backward takes every float32 call whose forward was taken (a bfloat16 one it may decline: the
// op then runs it in float32). oneDNN failures other than a missing implementation become
// SpiralError naming the shapes.
bool conv2d_fused(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeom& g, int64_t pad_bottom,
                  int64_t pad_right, int64_t groups, Tensor& out);
bool conv2d_fused_backward(const Tensor& gy, const Tensor& x, const Tensor& w, bool has_bias, const Conv2dGeom& g,
                           int64_t pad_bottom, int64_t pad_right, int64_t groups, Tensor& gx, Tensor& gw, Tensor& gb);

}  // namespace st::backend::onednn
