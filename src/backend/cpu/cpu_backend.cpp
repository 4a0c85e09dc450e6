#include "backend/cpu/kernels.h"
#include "backend/cpu/conv_onednn.h"
#include "backend/cpu/dense_linalg.h"
#include "backend/cpu/dropout.h"
#include "backend/cpu/loss.h"
#include "backend/cpu/matmul_onednn.h"
#include "backend/cpu/rnn_onednn.h"
#include "backend/cpu/search.h"

namespace st::backend {

namespace {

class CpuBackend final : public Backend {
 public:
  void binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) override {
    backend::cpu::binary(op, a, b, out);
  }
  void unary(UnaryOp op, const Tensor& x, Tensor& out, double p0, double p1) override {
    backend::cpu::unary(op, x, out, p0, p1);
  }
  void copy(const Tensor& src, Tensor& dst) override { backend::cpu::copy(src, dst); }
  void fill(Tensor& dst, Scalar value) override { backend::cpu::fill(dst, value); }
  void where(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor& out) override {
    backend::cpu::where(cond, a, b, out);
  }
  void reduce(ReduceOp op, const Tensor& x, int64_t outer, int64_t r, int64_t inner, Tensor& out) override {
    backend::cpu::reduce(op, x, outer, r, inner, out);
  }
  void arg_reduce(bool is_max, const Tensor& x, int64_t outer, int64_t r, int64_t inner, Tensor& values,
                  Tensor& indices) override {
    backend::cpu::arg_reduce(is_max, x, outer, r, inner, values, indices);
  }
  void gemm(Dtype dtype, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const void* a, int64_t lda,
            int64_t sa, const void* b, int64_t ldb, int64_t sb, double beta, void* c, int64_t ldc, int64_t sc,
            int64_t batch) override {
    backend::cpu::gemm(dtype, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch);
  }
  void random(Tensor& out, bool normal, double p0, double p1, uint64_t seed, uint64_t counter) override {
    backend::cpu::random(out, normal, p0, p1, seed, counter);
  }
  void poisson(const Tensor& rates, Tensor& out, uint64_t seed, uint64_t counter) override {
    backend::cpu::poisson(rates, out, seed, counter);
  }
  bool searchsorted(const Tensor& sorted, const Tensor& values, bool right, Tensor& out) override {
    backend::cpu::searchsorted(sorted, values, right, out);
    return true;
  }
  void softmax(const Tensor& x, int64_t rows, int64_t cols, bool log, Tensor& out) override {
    backend::cpu::softmax(x, rows, cols, log, out);
  }
  void softmax_backward(const Tensor& g, const Tensor& y, int64_t rows, int64_t cols, bool log, Tensor& dx) override {
    backend::cpu::softmax_backward(g, y, rows, cols, log, dx);
  }

  // ---- indexing kernels ----
  void cat(const std::vector<Tensor>& xs, int64_t outer, Tensor& out) override { backend::cpu::cat(xs, outer, out); }
  void gather(const Tensor& x, const Tensor& index, int64_t outer, int64_t n, int64_t k, int64_t inner,
              Tensor& out) override {
    backend::cpu::gather(x, index, outer, n, k, inner, out);
  }
  bool index_range(const Tensor& idx, int64_t& lo, int64_t& hi) override {
    backend::cpu::index_range(idx, lo, hi);
    return true;
  }
  bool index_add(Tensor& out, const Tensor& index, const Tensor& src, int64_t outer, int64_t n, int64_t k,
                 int64_t inner) override {
    backend::cpu::index_add(out, index, src, outer, n, k, inner);
    return true;
  }
  void scatter_add(Tensor& out, const Tensor& index, const Tensor& src, int64_t outer, int64_t n, int64_t k,
                   int64_t inner) override {
    backend::cpu::scatter_add(out, index, src, outer, n, k, inner);
  }
  void index_select(const Tensor& x, const Tensor& index, int64_t outer, int64_t n, int64_t k, int64_t inner,
                    Tensor& out) override {
    backend::cpu::index_select(x, index, outer, n, k, inner, out);
  }
  void masked_select(const Tensor& x, const Tensor& mask, Tensor& out) override {
    backend::cpu::masked_select(x, mask, out);
  }
  void sort(const Tensor& x, int64_t outer, int64_t n, int64_t inner, int64_t k, bool descending, Tensor& values,
            Tensor& indices) override {
    backend::cpu::sort(x, outer, n, inner, k, descending, values, indices);
  }
  void cumsum(const Tensor& x, int64_t outer, int64_t n, int64_t inner, Tensor& out) override {
    backend::cpu::cumsum(x, outer, n, inner, out);
  }
  void scan(ScanOp op, const Tensor& x, int64_t outer, int64_t n, int64_t inner, Tensor& out,
            Tensor& indices) override {
    backend::cpu::scan(op, x, outer, n, inner, out, indices);
  }
  void triangle(const Tensor& x, int64_t batch, int64_t rows, int64_t cols, int64_t diagonal, bool upper,
                Tensor& out) override {
    backend::cpu::triangle(x, batch, rows, cols, diagonal, upper, out);
  }

  // ---- convolution kernels ----
  void im2col(const Tensor& x, const Conv2dGeom& g, int64_t batch, Tensor& cols) override {
    backend::cpu::im2col(x, g, batch, cols);
  }
  void col2im(const Tensor& cols, const Conv2dGeom& g, int64_t batch, Tensor& x) override {
    backend::cpu::col2im(cols, g, batch, x);
  }
  void max_pool2d(const Tensor& x, const Pool2dGeom& g, int64_t planes, Tensor& out, Tensor& indices) override {
    backend::cpu::max_pool2d(x, g, planes, out, indices);
  }
  void max_pool2d_backward(const Tensor& gy, const Tensor& indices, const Pool2dGeom& g, int64_t planes,
                           Tensor& gx) override {
    backend::cpu::max_pool2d_backward(gy, indices, g, planes, gx);
  }
  void avg_pool2d(const Tensor& x, const Pool2dGeom& g, int64_t planes, bool count_include_pad,
                  int64_t divisor_override, Tensor& out) override {
    backend::cpu::avg_pool2d(x, g, planes, count_include_pad, divisor_override, out);
  }
  void avg_pool2d_backward(const Tensor& gy, const Pool2dGeom& g, int64_t planes, bool count_include_pad,
                           int64_t divisor_override, Tensor& gx) override {
    backend::cpu::avg_pool2d_backward(gy, g, planes, count_include_pad, divisor_override, gx);
  }
  void adaptive_avg_pool2d(const Tensor& x, const Pool2dGeom& g, int64_t planes, Tensor& out) override {
    backend::cpu::adaptive_avg_pool2d(x, g, planes, out);
  }
  void adaptive_avg_pool2d_backward(const Tensor& gy, const Pool2dGeom& g, int64_t planes, Tensor& gx) override {
    backend::cpu::adaptive_avg_pool2d_backward(gy, g, planes, gx);
  }
  void depthwise_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeom& g, int64_t batch,
                        Tensor& out) override {
    backend::cpu::depthwise_conv2d(x, w, bias, g, batch, out);
  }
  void depthwise_conv2d_backward_input(const Tensor& gy, const Tensor& w, const Conv2dGeom& g, int64_t batch,
                                       Tensor& gx) override {
    backend::cpu::depthwise_conv2d_backward_input(gy, w, g, batch, gx);
  }
  void depthwise_conv2d_backward_weight(const Tensor& gy, const Tensor& x, const Conv2dGeom& g, int64_t batch,
                                        Tensor& gw) override {
    backend::cpu::depthwise_conv2d_backward_weight(gy, x, g, batch, gw);
  }

  // ---- layer norm / batch norm ----
  void layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, int64_t rows, int64_t cols, double eps, Tensor& y,
                  Tensor& mean, Tensor& rstd) override {
    backend::cpu::layer_norm(x, w, b, rows, cols, eps, y, mean, rstd);
  }
  void layer_norm_backward(const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w,
                           int64_t rows, int64_t cols, Tensor& dx, Tensor& dw, Tensor& db) override {
    backend::cpu::layer_norm_backward(g, x, mean, rstd, w, rows, cols, dx, dw, db);
  }
  void batch_norm_stats(const Tensor& x, int64_t n, int64_t c, int64_t l, double eps, Tensor& mean, Tensor& rstd,
                        Tensor& var) override {
    backend::cpu::batch_norm_stats(x, n, c, l, eps, mean, rstd, var);
  }
  void batch_norm_apply(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w, const Tensor& b,
                        int64_t n, int64_t c, int64_t l, Tensor& y) override {
    backend::cpu::batch_norm_apply(x, mean, rstd, w, b, n, c, l, y);
  }
  void batch_norm_backward(const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w,
                           int64_t n, int64_t c, int64_t l, bool training, Tensor& dx, Tensor& dw,
                           Tensor& db) override {
    backend::cpu::batch_norm_backward(g, x, mean, rstd, w, n, c, l, training, dx, dw, db);
  }

  // ---- attention softmax ----
  void attention_softmax(const Tensor& s, int64_t batch, int64_t L, int64_t S, double scale, bool causal, Tensor& p,
                         Tensor& lse) override {
    backend::cpu::attention_softmax(s, batch, L, S, scale, causal, p, lse);
  }
  void attention_softmax_backward(Tensor& s, Tensor& dp, const Tensor& lse, const Tensor& delta, int64_t batch,
                                  int64_t L, int64_t S, double scale, bool causal) override {
    backend::cpu::attention_softmax_backward(s, dp, lse, delta, batch, L, S, scale, causal);
  }
  // Tiled attention with O(L + S) memory per head (attention.cpp): float32 and float64.
  bool has_flash_attention() const override { return true; }
  bool has_device_step_adam() const override { return true; }
  bool flash_attention(const Tensor& q, const Tensor& k, const Tensor& v, double scale, bool causal, Tensor& out,
                       Tensor& lse) override {
    return backend::cpu::flash_attention(q, k, v, scale, causal, out, lse);
  }
  bool flash_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                                const Tensor& dout, const Tensor& lse, const Tensor& delta, double scale, bool causal,
                                Tensor& dq, Tensor& dk, Tensor& dv) override {
    return backend::cpu::flash_attention_backward(q, k, v, out, dout, lse, delta, scale, causal, dq, dk, dv);
  }
  bool flash_attention_masked(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double scale,
                              bool causal, const DropoutDraw& dropout, Tensor& out, Tensor& lse) override {
    return backend::cpu::flash_attention_masked(q, k, v, mask, scale, causal, dropout, out, lse);
  }
  bool flash_attention_masked_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                                       const Tensor& out, const Tensor& dout, const Tensor& lse, const Tensor& delta,
                                       double scale, bool causal, const DropoutDraw& dropout, Tensor& dq, Tensor& dk,
                                       Tensor& dv) override {
    return backend::cpu::flash_attention_masked_backward(q, k, v, mask, out, dout, lse, delta, scale, causal, dropout,
                                                         dq, dk, dv);
  }

  // ---- recurrent kernels ----
  void lstm_forward(const Tensor& xproj, const Tensor& w, const Tensor& h0, const Tensor& c0, Tensor& hc,
                    Tensor& acts) override {
    backend::cpu::lstm_forward(xproj, w, h0, c0, hc, acts);
  }
  void lstm_backward(const Tensor& g, const Tensor& hc, const Tensor& acts, const Tensor& w, const Tensor& h0,
                     const Tensor& c0, Tensor& dx, Tensor& dw, Tensor& dh0, Tensor& dc0) override {
    backend::cpu::lstm_backward(g, hc, acts, w, h0, c0, dx, dw, dh0, dc0);
  }
  void gru_forward(const Tensor& xproj, const Tensor& w, const Tensor& bhh, const Tensor& h0, Tensor& hs,
                   Tensor& saved) override {
    backend::cpu::gru_forward(xproj, w, bhh, h0, hs, saved);
  }
  void gru_backward(const Tensor& g, const Tensor& hs, const Tensor& saved, const Tensor& w, const Tensor& h0,
                    Tensor& dx, Tensor& dw, Tensor& dbhh, Tensor& dh0) override {
    backend::cpu::gru_backward(g, hs, saved, w, h0, dx, dw, dbhh, dh0);
  }

  // ---- dense factorizations (dense_linalg.cpp: LAPACK per matrix) ----
  bool has_dense_linalg() const override { return true; }
  bool lu_inverse(Tensor& a, int64_t batch, int64_t n, std::span<int> info) override {
    backend::cpu::lu_inverse(a, batch, n, info);
    return true;
  }
  bool lu_solve(Tensor& a, Tensor& b, int64_t batch, int64_t n, int64_t k, std::span<int> info) override {
    backend::cpu::lu_solve(a, b, batch, n, k, info);
    return true;
  }
  bool lu_determinant(Tensor& a, int64_t batch, int64_t n, Tensor& det, Tensor& sign, Tensor& logabsdet) override {
    backend::cpu::lu_determinant(a, batch, n, det, sign, logabsdet);
    return true;
  }
  bool determinant_backward(const Tensor& a, const Tensor& g, int64_t batch, int64_t n, Tensor& out,
                            std::span<int> info) override {
    backend::cpu::determinant_backward(a, g, batch, n, out, info);
    return true;
  }
  bool triangular_solve(const Tensor& a, Tensor& b, int64_t batch, int64_t n, int64_t k, bool upper,
                        bool unit) override {
    backend::cpu::triangular_solve(a, b, batch, n, k, upper, unit);
    return true;
  }
  bool cholesky(Tensor& a, int64_t batch, int64_t n, bool upper, std::span<int> info) override {
    backend::cpu::cholesky(a, batch, n, upper, info);
    return true;
  }
  bool eigh(Tensor& a, int64_t batch, int64_t n, bool upper, bool vectors, Tensor& w, std::span<int> info) override {
    backend::cpu::eigh(a, batch, n, upper, vectors, w, info);
    return true;
  }
  bool qr(Tensor& a, int64_t batch, int64_t m, int64_t n, bool complete, Tensor& q, Tensor& r,
          std::span<int> info) override {
    backend::cpu::qr(a, batch, m, n, complete, q, r, info);
    return true;
  }
  bool svd(Tensor& a, int64_t batch, int64_t m, int64_t n, bool full, Tensor& s, Tensor& u, Tensor& vh,
           std::span<int> info) override {
    backend::cpu::svd(a, batch, m, n, full, s, u, vh, info);
    return true;
  }
  // binary() and unary() read and write float16/bfloat16 directly (float32 math, one rounding).
  bool native_half_elementwise() const override { return true; }
  bool native_half_reduce() const override { return true; }
  // ~5 flops per byte on a CPU: 256 rows keep the extra pass near 5% of the chunk's GEMMs, and chunks
  // of at most 2^20 elements keep the buffers small (a 2x256 LM with 4096 classes: peak RSS 142 ->
  // 119 MiB at the same step time, AMD EPYC; one chunk of every row gave 159).
  int64_t stream_chunk_rows(int64_t n) const override {
    return std::max<int64_t>(256, (int64_t{1} << 20) / std::max<int64_t>(n, 1));
  }
  bool half_with_float_scalar() const override { return true; }
  void adam_update(std::span<const AdamSlot> slots, const AdamArgs& a) override { backend::cpu::adam_update(slots, a); }
  void dropout_mask(Tensor& out, uint64_t seed, uint64_t counter, double scale, double keep) override {
    backend::cpu::dropout_mask(out, seed, counter, scale, keep);
  }
  bool pointwise_loss(PointwiseLoss op, const Tensor& p, const Tensor& t, const Tensor& aux, double p0, double p1,
                      Tensor& out, Tensor& dp, Tensor& dt) override {
    return backend::cpu::pointwise_loss(op, p, t, aux, p0, p1, out, dp, dt);
  }
  bool cross_entropy_rows(const Tensor& x, const Tensor& t, int64_t ignore_index, double scale, Tensor& loss,
                          Tensor& lse, Tensor& dx) override {
    return backend::cpu::cross_entropy_rows(x, t, ignore_index, scale, loss, lse, dx);
  }
  bool cross_entropy_rows_backward(const Tensor& x, const Tensor& t, const Tensor& lse, const Tensor& g,
                                   int64_t ignore_index, double scale, Tensor& dx) override {
    return backend::cpu::cross_entropy_rows_backward(x, t, lse, g, ignore_index, scale, dx);
  }
  // oneDNN's convolution, LSTM and bf16 matmul primitives (declined without oneDNN, by the
  // conv / RNN switches, and for bf16 on CPUs without native bf16 dot products).
  bool conv2d_fused(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeom& g, int64_t pad_bottom,
                    int64_t pad_right, int64_t groups, Tensor& out) override {
    return onednn::conv2d_fused(x, w, bias, g, pad_bottom, pad_right, groups, out);
  }
  bool conv2d_fused_backward(const Tensor& gy, const Tensor& x, const Tensor& w, bool has_bias, const Conv2dGeom& g,
                             int64_t pad_bottom, int64_t pad_right, int64_t groups, Tensor& gx, Tensor& gw,
                             Tensor& gb) override {
    return onednn::conv2d_fused_backward(gy, x, w, has_bias, g, pad_bottom, pad_right, groups, gx, gw, gb);
  }
  bool has_lstm_layer(Dtype dtype) const override { return dtype == Dtype::Float32 && onednn::use_onednn_rnn(); }
  bool lstm_layer(const Tensor& x, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh,
                  const Tensor& h0, const Tensor& c0, LstmOutputs& out, Tensor* workspace) override {
    return onednn::lstm_layer(x, w_ih, w_hh, b_ih, b_hh, h0, c0, out, workspace);
  }
  bool lstm_layer_backward(const LstmOutputs& g, const LstmOutputs& out, const Tensor& workspace, const Tensor& x,
                           const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh,
                           const Tensor& h0, const Tensor& c0, LstmGrads& grads) override {
    return onednn::lstm_layer_backward(g, out, workspace, x, w_ih, w_hh, b_ih, b_hh, h0, c0, grads);
  }
  bool half_matmul(Dtype dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda,
                   int64_t sa, const void* b, int64_t ldb, int64_t sb, void* c, int64_t batch) override {
    return dtype == Dtype::BFloat16 && onednn::bf16_matmul_available() &&
           onednn::bf16_matmul(trans_a, trans_b, m, n, k, a, lda, sa, b, ldb, sb, c, batch);
  }
  void sgd_update(std::span<const SgdSlot> slots, const SgdArgs& a) override { backend::cpu::sgd_update(slots, a); }
  void adagrad_update(std::span<const AdagradSlot> slots, const AdagradArgs& a) override {
    backend::cpu::adagrad_update(slots, a);
  }
  void rmsprop_update(std::span<const RmspropSlot> slots, const RmspropArgs& a) override {
    backend::cpu::rmsprop_update(slots, a);
  }
  void flag_nonfinite(std::span<const Tensor> xs, Tensor& flag) override { backend::cpu::flag_nonfinite(xs, flag); }
};

}  // namespace

Backend& cpu_backend() {
  static CpuBackend instance;
  return instance;
}

Backend& backend_for(Device device) {
  if (device.type == DeviceType::CPU) return cpu_backend();
  if (device.type == DeviceType::CUDA) return cuda_backend(device.index);
  if (device.type == DeviceType::WGPU) return wgpu_backend(device.index);
  throw DeviceUnavailableError("backend: device " + device.str() + " is not available in this build");
}

namespace {
[[noreturn]] void no_fused(const char* what) {
  throw DeviceUnavailableError(std::string("backend: ") + what + " has no fused kernel on this device");
}
}  // namespace

void Backend::layer_norm(const Tensor&, const Tensor&, const Tensor&, int64_t, int64_t, double, Tensor&, Tensor&,
                         Tensor&) {
  no_fused("layer_norm");
}
void Backend::layer_norm_backward(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, int64_t,
                                  int64_t, Tensor&, Tensor&, Tensor&) {
  no_fused("layer_norm_backward");
}
std::function<int32_t()> Backend::read_later(const Tensor& flag) {
  const auto v = static_cast<int32_t>(flag.item());
  return [v] { return v; };
}

}  // namespace st::backend
