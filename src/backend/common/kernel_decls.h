#pragma once
// The kernel entry points the backends implement with one signature, declared once: each
// backend's kernels.h expands the lists it implements inside its own namespace
// (st::backend::cpu, st::backend::cuda, st::backend::wgpu), and its Backend table calls them.
#include <cstdint>
#include <span>
#include <vector>

#include "backend/backend.h"

// Every backend's: GEMM, random fills, scans, indexing, sorting and the conv/pool kernels.
#define ST_BACKEND_SHARED_KERNELS                                                                                      \
  void gemm(Dtype dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const void* a,     \
            int64_t lda, int64_t stride_a, const void* b, int64_t ldb, int64_t stride_b, double beta, void* c,         \
            int64_t ldc, int64_t stride_c, int64_t batch);                                                             \
  void random(Tensor& out, bool normal, double p0, double p1, uint64_t seed, uint64_t counter);                        \
  void scan(backend::ScanOp op, const Tensor& x, int64_t outer, int64_t n, int64_t inner, Tensor& out,                 \
            Tensor& indices);                                                                                          \
  void poisson(const Tensor& rates, Tensor& out, uint64_t seed, uint64_t counter);                                     \
  void cumsum(const Tensor& x, int64_t outer, int64_t n, int64_t inner, Tensor& out);                                  \
  void cat(const std::vector<Tensor>& xs, int64_t outer, Tensor& out);                                                 \
  void gather(const Tensor& x, const Tensor& index, int64_t outer, int64_t n, int64_t k, int64_t inner, Tensor& out);  \
  void scatter_add(Tensor& out, const Tensor& index, const Tensor& src, int64_t outer, int64_t n, int64_t k,           \
                   int64_t inner);                                                                                     \
  void index_select(const Tensor& x, const Tensor& index, int64_t outer, int64_t n, int64_t k, int64_t inner,          \
                    Tensor& out);                                                                                      \
  void masked_select(const Tensor& x, const Tensor& mask, Tensor& out);                                                \
  void sort(const Tensor& x, int64_t outer, int64_t n, int64_t inner, int64_t k, bool descending, Tensor& values,      \
            Tensor& indices);                                                                                          \
  void triangle(const Tensor& x, int64_t batch, int64_t rows, int64_t cols, int64_t diagonal, bool upper,              \
                Tensor& out);                                                                                          \
  void im2col(const Tensor& x, const backend::Conv2dGeom& g, int64_t batch, Tensor& cols);                             \
  void col2im(const Tensor& cols, const backend::Conv2dGeom& g, int64_t batch, Tensor& x);                             \
  void max_pool2d(const Tensor& x, const backend::Pool2dGeom& g, int64_t planes, Tensor& out, Tensor& indices);        \
  void max_pool2d_backward(const Tensor& gy, const Tensor& indices, const backend::Pool2dGeom& g, int64_t planes,      \
                           Tensor& gx);                                                                                \
  void avg_pool2d(const Tensor& x, const backend::Pool2dGeom& g, int64_t planes, bool count_include_pad,               \
                  int64_t divisor_override, Tensor& out);                                                              \
  void avg_pool2d_backward(const Tensor& gy, const backend::Pool2dGeom& g, int64_t planes, bool count_include_pad,     \
                           int64_t divisor_override, Tensor& gx);                                                      \
  void adaptive_avg_pool2d(const Tensor& x, const backend::Pool2dGeom& g, int64_t planes, Tensor& out);                \
  void adaptive_avg_pool2d_backward(const Tensor& gy, const backend::Pool2dGeom& g, int64_t planes, Tensor& gx);       \
  void depthwise_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const backend::Conv2dGeom& g,            \
                        int64_t batch, Tensor& out);                                                                   \
  void depthwise_conv2d_backward_input(const Tensor& gy, const Tensor& w, const backend::Conv2dGeom& g, int64_t batch, \
                                       Tensor& gx);                                                                    \
  void depthwise_conv2d_backward_weight(const Tensor& gy, const Tensor& x, const backend::Conv2dGeom& g,               \
                                        int64_t batch, Tensor& gw);

// The device backends' (CUDA, wgpu): elementwise, reductions, softmax and layer norm, dropout,
// the multi-tensor optimizer updates, batch norm, attention and the LSTM/GRU recurrences. The
// CPU declares these per capability (ST_CPU_DISPATCHED_KERNELS, cpu/dispatch.h).
#define ST_BACKEND_DEVICE_KERNELS                                                                                      \
  void binary(backend::BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out);                                    \
  void unary(backend::UnaryOp op, const Tensor& x, Tensor& out, double p0, double p1);                                 \
  void copy_on_device(const Tensor& src, Tensor& dst);                                                                 \
  void fill(Tensor& dst, Scalar value);                                                                                \
  void where(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor& out);                                       \
  void reduce(backend::ReduceOp op, const Tensor& x, int64_t outer, int64_t r, int64_t inner, Tensor& out);            \
  void arg_reduce(bool is_max, const Tensor& x, int64_t outer, int64_t r, int64_t inner, Tensor& values,               \
                  Tensor& indices);                                                                                    \
  void softmax(const Tensor& x, int64_t rows, int64_t cols, bool log, Tensor& out);                                    \
  void softmax_backward(const Tensor& g, const Tensor& y, int64_t rows, int64_t cols, bool log, Tensor& dx);           \
  void layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, int64_t rows, int64_t cols, double eps,           \
                  Tensor& y, Tensor& mean, Tensor& rstd);                                                              \
  void layer_norm_backward(const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w,  \
                           int64_t rows, int64_t cols, Tensor& dx, Tensor& dw, Tensor& db);                            \
  void dropout_mask(Tensor& out, uint64_t seed, uint64_t counter, double scale, double keep);                          \
  void adam_update(std::span<const backend::Backend::AdamSlot> slots, const backend::Backend::AdamArgs& a);            \
  void sgd_update(std::span<const backend::Backend::SgdSlot> slots, const backend::Backend::SgdArgs& a);               \
  void adagrad_update(std::span<const backend::Backend::AdagradSlot> slots, const backend::Backend::AdagradArgs& a);   \
  void rmsprop_update(std::span<const backend::Backend::RmspropSlot> slots, const backend::Backend::RmspropArgs& a);   \
  void flag_nonfinite(std::span<const Tensor> xs, Tensor& flag);                                                       \
  void batch_norm_stats(const Tensor& x, int64_t n, int64_t c, int64_t l, double eps, Tensor& mean, Tensor& rstd,      \
                        Tensor& var);                                                                                  \
  void batch_norm_apply(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w, const Tensor& b,     \
                        int64_t n, int64_t c, int64_t l, Tensor& y);                                                   \
  void batch_norm_backward(const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w,  \
                           int64_t n, int64_t c, int64_t l, bool training, Tensor& dx, Tensor& dw, Tensor& db);        \
  void attention_softmax(const Tensor& s, int64_t batch, int64_t L, int64_t S, double scale, bool causal, Tensor& p,   \
                         Tensor& lse);                                                                                 \
  void attention_softmax_backward(Tensor& s, Tensor& dp, const Tensor& lse, const Tensor& delta, int64_t batch,        \
                                  int64_t L, int64_t S, double scale, bool causal);                                    \
  bool flash_attention(const Tensor& q, const Tensor& k, const Tensor& v, double scale, bool causal, Tensor& out,      \
                       Tensor& lse);                                                                                   \
  bool flash_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,                  \
                                const Tensor& dout, const Tensor& lse, const Tensor& delta, double scale, bool causal, \
                                Tensor& dq, Tensor& dk, Tensor& dv);                                                   \
  void lstm_forward(const Tensor& xproj, const Tensor& w, const Tensor& h0, const Tensor& c0, Tensor& hc,              \
                    Tensor& acts);                                                                                     \
  void lstm_backward(const Tensor& g, const Tensor& hc, const Tensor& acts, const Tensor& w, const Tensor& h0,         \
                     const Tensor& c0, Tensor& dx, Tensor& dw, Tensor& dh0, Tensor& dc0);                              \
  void gru_forward(const Tensor& xproj, const Tensor& w, const Tensor& bhh, const Tensor& h0, Tensor& hs,              \
                   Tensor& saved);                                                                                     \
  void gru_backward(const Tensor& g, const Tensor& hs, const Tensor& saved, const Tensor& w, const Tensor& h0,         \
                    Tensor& dx, Tensor& dw, Tensor& dbhh, Tensor& dh0);
