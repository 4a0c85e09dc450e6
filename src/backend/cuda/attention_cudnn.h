#pragma once
// cuDNN's fused attention (attention_cudnn.cpp), which flash_attention.cu tries before its own
// kernels. Operands and results as Backend::flash_attention(_backward) describe them; false,
// having written nothing, where cuDNN does not take the operands (or the build lacks it).
#include "backend/backend.h"
#include "spiraltorch/cuda.h"

namespace st::backend::cuda {

bool cudnn_attention_forward(const Tensor& q, const Tensor& k, const Tensor& v, double scale, bool causal, Tensor& o,
                             Tensor& lse);
// The backward reads the forward's output o (cuDNN forms rowsum(dout * o) itself).
bool cudnn_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& o, const Tensor& dout,
                              const Tensor& lse, double scale, bool causal, Tensor& dq, Tensor& dk, Tensor& dv);
// Whether this build has cuDNN's graph API for attention (cudnn-frontend found at configure time).
bool cudnn_attention_built();

}  // namespace st::backend::cuda
