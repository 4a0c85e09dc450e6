#pragma once
// CPU kernel entry points; CpuBackend (cpu_backend.cpp) exposes them through the
// Backend table. The vectorised ones are compiled once per CPU capability and called through
// the table chosen at run time (dispatch.h); the rest are compiled once, for the baseline.
#include "backend/backend.h"
#include "backend/cpu/dispatch.h"

namespace st::backend::cpu {

// ---- dispatched per CPU capability (dispatch.h): elementwise (binary.cpp, unary.cpp, copy.cpp),
// reductions (reduce.cpp), softmax (softmax.cpp), layer norm (layer_norm.cpp), batch norm
// (batch_norm.cpp), attention softmax and tiled flash attention (attention.cpp),
// Adam/AdamW over every slot, contiguous float32 or float64 tensors of one dtype (optim.cpp),
// LSTM/GRU recurrences (rnn.cpp), the cross-entropy rows (loss_rows.cpp) ----
ST_CPU_DISPATCHED_KERNELS(ST_CPU_DECLARE_KERNEL)

// ---- compiled once ----

void gemm(Dtype dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const void* a,
          int64_t lda, int64_t stride_a, const void* b, int64_t ldb, int64_t stride_b, double beta, void* c,
          int64_t ldc, int64_t stride_c, int64_t batch);
void random(Tensor& out, bool normal, double p0, double p1, uint64_t seed, uint64_t counter);
// ---- scans other than cumsum and Poisson sampling (scan.cpp) ----
void scan(backend::ScanOp op, const Tensor& x, int64_t outer, int64_t n, int64_t inner, Tensor& out, Tensor& indices);
void poisson(const Tensor& rates, Tensor& out, uint64_t seed, uint64_t counter);

// ---- indexing kernels (indexing.cpp) ----
void cat(const std::vector<Tensor>& xs, int64_t outer, Tensor& out);
void gather(const Tensor& x, const Tensor& index, int64_t outer, int64_t n, int64_t k, int64_t inner, Tensor& out);
void scatter_add(Tensor& out, const Tensor& index, const Tensor& src, int64_t outer, int64_t n, int64_t k,
                 int64_t inner);
void index_select(const Tensor& x, const Tensor& index, int64_t outer, int64_t n, int64_t k, int64_t inner,
                  Tensor& out);
void masked_select(const Tensor& x, const Tensor& mask, Tensor& out);
void sort(const Tensor& x, int64_t outer, int64_t n, int64_t inner, int64_t k, bool descending, Tensor& values,
          Tensor& indices);
void cumsum(const Tensor& x, int64_t outer, int64_t n, int64_t inner, Tensor& out);
void triangle(const Tensor& x, int64_t batch, int64_t rows, int64_t cols, int64_t diagonal, bool upper, Tensor& out);

// ---- convolution kernels (conv.cpp) ----
void im2col(const Tensor& x, const backend::Conv2dGeom& g, int64_t batch, Tensor& cols);
void col2im(const Tensor& cols, const backend::Conv2dGeom& g, int64_t batch, Tensor& x);
void max_pool2d(const Tensor& x, const backend::Pool2dGeom& g, int64_t planes, Tensor& out, Tensor& indices);
void max_pool2d_backward(const Tensor& gy, const Tensor& indices, const backend::Pool2dGeom& g, int64_t planes,
                         Tensor& gx);
void avg_pool2d(const Tensor& x, const backend::Pool2dGeom& g, int64_t planes, bool count_include_pad,
                int64_t divisor_override, Tensor& out);
void avg_pool2d_backward(const Tensor& gy, const backend::Pool2dGeom& g, int64_t planes, bool count_include_pad,
                         int64_t divisor_override, Tensor& gx);
void adaptive_avg_pool2d(const Tensor& x, const backend::Pool2dGeom& g, int64_t planes, Tensor& out);
void adaptive_avg_pool2d_backward(const Tensor& gy, const backend::Pool2dGeom& g, int64_t planes, Tensor& gx);
void depthwise_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const backend::Conv2dGeom& g, int64_t batch,
                      Tensor& out);
void depthwise_conv2d_backward_input(const Tensor& gy, const Tensor& w, const backend::Conv2dGeom& g, int64_t batch,
                                     Tensor& gx);
void depthwise_conv2d_backward_weight(const Tensor& gy, const Tensor& x, const backend::Conv2dGeom& g, int64_t batch,
                                      Tensor& gw);

}  // namespace st::backend::cpu
