#pragma once
// CUDA kernel entry points; CudaBackend (backend.cu) exposes them through the Backend table.
// By file: elementwise.cu (elementwise, random fills, dropout), reduce.cu (reductions, softmax),
// layer_norm.cu (layer norm; residual add + dropout + layer norm), gemm.cu, scan.cu (Backend::scan
// and Backend::poisson), indexing.cu (indexing, cumsum, triangle, im2col/col2im, max pooling),
// sort.cu, pooling.cu, depthwise.cu, batch_norm.cu, attention.cu, flash_attention.cu (false: not taken, nothing
// written), rnn.cu, foreach.cu (the optimizer updates).
#include "backend/backend.h"
#include "backend/common/kernel_decls.h"

namespace st::backend::cuda {

ST_BACKEND_SHARED_KERNELS
ST_BACKEND_DEVICE_KERNELS

// conv_cudnn.cu (cuDNN convolution; has_cudnn_conv2d is false in builds without cuDNN)
bool has_cudnn_conv2d(const backend::Conv2dGeom& g, int64_t groups, Dtype dtype);
void cudnn_conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& bias, const backend::Conv2dGeom& g,
                          int64_t groups, Tensor& out);
void cudnn_conv2d_backward_input(const Tensor& gy, const Tensor& w, const backend::Conv2dGeom& g, int64_t groups,
                                 Tensor& gx);
void cudnn_conv2d_backward_weight(const Tensor& gy, const Tensor& x, const backend::Conv2dGeom& g, int64_t groups,
                                  Tensor& gw);
// linear_cublaslt.cu: Backend::linear_bias and its weight gradient (cuBLASLt epilogues)
// Backend::add_layer_norm and its backward (layer_norm.cu); false where the dtype pair is declined.
bool add_layer_norm(const Tensor& x, const Tensor& y, const Tensor& w, const Tensor& b, int64_t rows, int64_t cols,
                    double eps, const backend::DropoutDraw& drop, Tensor& h, Tensor& out, Tensor& mean, Tensor& rstd);
bool add_layer_norm_backward(const Tensor& g, const Tensor& gh, const Tensor& h, const Tensor& mean, const Tensor& rstd,
                             const Tensor& w, int64_t rows, int64_t cols, const backend::DropoutDraw& drop, Tensor& dx,
                             Tensor& dy, Tensor& dw, Tensor& db);
bool linear_bias(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& out);
bool linear_bias_backward_weight(const Tensor& dy, const Tensor& x, Tensor& dw, Tensor& db, bool accumulate);
bool linear_bias_gelu(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& out, Tensor& pre);
bool linear_gelu_backward_input(const Tensor& dy, const Tensor& w, const Tensor& pre, Tensor& da);
// sort.cu: Backend::searchsorted (operands as that entry documents)
void searchsorted(const Tensor& sorted, const Tensor& values, bool right, Tensor& out);
// cross_entropy.cu
void cross_entropy_rows(const Tensor& x, const Tensor& t, int64_t ignore_index, double scale, Tensor& loss, Tensor& lse,
                        Tensor& dx);
void cross_entropy_rows_backward(const Tensor& x, const Tensor& t, const Tensor& lse, const Tensor& g,
                                 int64_t ignore_index, double scale, Tensor& dx);

}  // namespace st::backend::cuda
