// CudaBackend: the Backend table of one CUDA device. Every entry runs on the device
// (kernels in the other .cu files of this directory). to_host/from_host below serve
// cross-device copies; no op falls back to computing on the host.
#include <memory>
#include <mutex>

#include "backend/cpu/kernels.h"
#include "backend/cuda/common.cuh"
#include "backend/cuda/kernels.h"

namespace st::backend::cuda {

Tensor to_host(const Tensor& t) {
  if (t.device().type == DeviceType::CPU) return t.contiguous();
  Tensor src = t;
  if (!src.is_contiguous()) {
    Tensor c = Tensor::empty(t.shape(), t.dtype(), t.device());
    copy_on_device(t, c);
    src = c;
  }
  Tensor h = Tensor::empty(t.shape(), t.dtype());
  st::cuda::memcpy(h.raw_data(), src.raw_data(), t.numel() * t.itemsize(), false, true, t.device().index);
  return h;
}

void from_host(const Tensor& host, Tensor& dev) {
  const Tensor h = host.contiguous();
  if (dev.is_contiguous()) {
    st::cuda::memcpy(dev.raw_data(), h.raw_data(), h.numel() * h.itemsize(), true, false, dev.device().index);
    return;
  }
  Tensor tmp = Tensor::empty(h.shape(), h.dtype(), dev.device());
  st::cuda::memcpy(tmp.raw_data(), h.raw_data(), h.numel() * h.itemsize(), true, false, dev.device().index);
  copy_on_device(tmp, dev);
}

namespace {

// A copy between the host and a device: convert dtype and layout on the side where the
// data is, move contiguous bytes with cudaMemcpyAsync, then lay out on the destination.
void cross_device_copy(const Tensor& src, Tensor& dst) {
  if (src.device().type == DeviceType::CPU) {
    Tensor s = src;
    if (s.dtype() != dst.dtype() || !s.is_contiguous() || s.shape() != dst.shape()) {
      Tensor c = Tensor::empty(dst.shape(), dst.dtype());
      backend::cpu::copy(src, c);
      s = c;
    }
    from_host(s, dst);
    return;
  }
  if (dst.device().type == DeviceType::CPU) {
    use_device(src.device().index);
    Tensor s = src;
    if (s.dtype() != dst.dtype() || !s.is_contiguous() || s.shape() != dst.shape()) {
      Tensor c = Tensor::empty(dst.shape(), dst.dtype(), src.device());
      copy_on_device(src, c);
      s = c;
    }
    const Tensor h = to_host(s);
    backend::cpu::copy(h, dst);
    return;
  }
  // Device to device (different GPUs): peer copy of contiguous bytes.
  use_device(src.device().index);
  Tensor s = Tensor::empty(dst.shape(), dst.dtype(), src.device());
  copy_on_device(src, s);
  Tensor d = dst.is_contiguous() ? dst : Tensor::empty(dst.shape(), dst.dtype(), dst.device());
  ST_CUDA_CHECK(cudaMemcpyPeerAsync(d.raw_data(), dst.device().index, s.raw_data(), src.device().index,
                                    s.numel() * s.itemsize(), stream()));
  ST_CUDA_CHECK(cudaStreamSynchronize(stream()));
  if (!d.same(dst)) {
    use_device(dst.device().index);
    copy_on_device(d, dst);
  }
}

class CudaBackend final : public backend::Backend {
 public:
  explicit CudaBackend(int index) : index_(index) {}

  void binary(backend::BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) override {
    use_device(index_);
    backend::cuda::binary(op, a, b, out);
  }
  void unary(backend::UnaryOp op, const Tensor& x, Tensor& out, double p0, double p1) override {
    use_device(index_);
    backend::cuda::unary(op, x, out, p0, p1);
  }
  void copy(const Tensor& src, Tensor& dst) override {
    if (src.device() != dst.device()) return cross_device_copy(src, dst);
    use_device(index_);
    copy_on_device(src, dst);
  }
  void fill(Tensor& dst, Scalar value) override {
    use_device(index_);
    backend::cuda::fill(dst, value);
  }
  void where(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor& out) override {
    use_device(index_);
    backend::cuda::where(cond, a, b, out);
  }
  void reduce(backend::ReduceOp op, const Tensor& x, int64_t outer, int64_t r, int64_t inner, Tensor& out) override {
    use_device(index_);
    backend::cuda::reduce(op, x, outer, r, inner, out);
  }
  void arg_reduce(bool is_max, const Tensor& x, int64_t outer, int64_t r, int64_t inner, Tensor& values,
                  Tensor& indices) override {
    use_device(index_);
    backend::cuda::arg_reduce(is_max, x, outer, r, inner, values, indices);
  }
  void gemm(Dtype dtype, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const void* a, int64_t lda,
            int64_t sa, const void* b, int64_t ldb, int64_t sb, double beta, void* c, int64_t ldc, int64_t sc,
            int64_t batch) override {
    use_device(index_);
    backend::cuda::gemm(dtype, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch);
  }
  void random(Tensor& out, bool normal, double p0, double p1, uint64_t seed, uint64_t counter) override {
    use_device(index_);
    backend::cuda::random(out, normal, p0, p1, seed, counter);
  }
  void poisson(const Tensor& rates, Tensor& out, uint64_t seed, uint64_t counter) override {
    use_device(index_);
    backend::cuda::poisson(rates, out, seed, counter);
  }
  void softmax(const Tensor& x, int64_t rows, int64_t cols, bool log, Tensor& out) override {
    use_device(index_);
    backend::cuda::softmax(x, rows, cols, log, out);
  }
  void softmax_backward(const Tensor& g, const Tensor& y, int64_t rows, int64_t cols, bool log, Tensor& dx) override {
    use_device(index_);
    backend::cuda::softmax_backward(g, y, rows, cols, log, dx);
  }

  void cat(const std::vector<Tensor>& xs, int64_t outer, Tensor& out) override {
    use_device(index_);
    backend::cuda::cat(xs, outer, out);
  }
  void gather(const Tensor& x, const Tensor& index, int64_t outer, int64_t n, int64_t k, int64_t inner,
              Tensor& out) override {
    use_device(index_);
    backend::cuda::gather(x, index, outer, n, k, inner, out);
  }
  void scatter_add(Tensor& out, const Tensor& index, const Tensor& src, int64_t outer, int64_t n, int64_t k,
                   int64_t inner) override {
    use_device(index_);
    backend::cuda::scatter_add(out, index, src, outer, n, k, inner);
  }
  void index_select(const Tensor& x, const Tensor& index, int64_t outer, int64_t n, int64_t k, int64_t inner,
                    Tensor& out) override {
    use_device(index_);
    backend::cuda::index_select(x, index, outer, n, k, inner, out);
  }
  void masked_select(const Tensor& x, const Tensor& mask, Tensor& out) override {
    use_device(index_);
    backend::cuda::masked_select(x, mask, out);
  }
  void sort(const Tensor& x, int64_t outer, int64_t n, int64_t inner, int64_t k, bool descending, Tensor& values,
            Tensor& indices) override {
    use_device(index_);
    backend::cuda::sort(x, outer, n, inner, k, descending, values, indices);
  }
  bool searchsorted(const Tensor& sorted, const Tensor& values, bool right, Tensor& out) override {
    use_device(index_);
    backend::cuda::searchsorted(sorted, values, right, out);
    return true;
  }
  void cumsum(const Tensor& x, int64_t outer, int64_t n, int64_t inner, Tensor& out) override {
    use_device(index_);
    backend::cuda::cumsum(x, outer, n, inner, out);
  }
  void scan(backend::ScanOp op, const Tensor& x, int64_t outer, int64_t n, int64_t inner, Tensor& out,
            Tensor& indices) override {
    use_device(index_);
    backend::cuda::scan(op, x, outer, n, inner, out, indices);
  }
  void triangle(const Tensor& x, int64_t batch, int64_t rows, int64_t cols, int64_t diagonal, bool upper,
                Tensor& out) override {
    use_device(index_);
    backend::cuda::triangle(x, batch, rows, cols, diagonal, upper, out);
  }

  void im2col(const Tensor& x, const backend::Conv2dGeom& g, int64_t batch, Tensor& cols) override {
    use_device(index_);
    backend::cuda::im2col(x, g, batch, cols);
  }
  void col2im(const Tensor& cols, const backend::Conv2dGeom& g, int64_t batch, Tensor& x) override {
    use_device(index_);
    backend::cuda::col2im(cols, g, batch, x);
  }
  void max_pool2d(const Tensor& x, const backend::Pool2dGeom& g, int64_t planes, Tensor& out,
                  Tensor& indices) override {
    use_device(index_);
    backend::cuda::max_pool2d(x, g, planes, out, indices);
  }
  void max_pool2d_backward(const Tensor& gy, const Tensor& indices, const backend::Pool2dGeom& g, int64_t planes,
                           Tensor& gx) override {
    use_device(index_);
    backend::cuda::max_pool2d_backward(gy, indices, g, planes, gx);
  }
  void avg_pool2d(const Tensor& x, const backend::Pool2dGeom& g, int64_t planes, bool cip, int64_t div,
                  Tensor& out) override {
    use_device(index_);
    backend::cuda::avg_pool2d(x, g, planes, cip, div, out);
  }
  void avg_pool2d_backward(const Tensor& gy, const backend::Pool2dGeom& g, int64_t planes, bool cip, int64_t div,
                           Tensor& gx) override {
    use_device(index_);
    backend::cuda::avg_pool2d_backward(gy, g, planes, cip, div, gx);
  }
  void adaptive_avg_pool2d(const Tensor& x, const backend::Pool2dGeom& g, int64_t planes, Tensor& out) override {
    use_device(index_);
    backend::cuda::adaptive_avg_pool2d(x, g, planes, out);
  }
  void adaptive_avg_pool2d_backward(const Tensor& gy, const backend::Pool2dGeom& g, int64_t planes,
                                    Tensor& gx) override {
    use_device(index_);
    backend::cuda::adaptive_avg_pool2d_backward(gy, g, planes, gx);
  }
  void depthwise_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const backend::Conv2dGeom& g,
                        int64_t batch, Tensor& out) override {
    use_device(index_);
    backend::cuda::depthwise_conv2d(x, w, bias, g, batch, out);
  }
  void depthwise_conv2d_backward_input(const Tensor& gy, const Tensor& w, const backend::Conv2dGeom& g, int64_t batch,
                                       Tensor& gx) override {
    use_device(index_);
    backend::cuda::depthwise_conv2d_backward_input(gy, w, g, batch, gx);
  }
  void depthwise_conv2d_backward_weight(const Tensor& gy, const Tensor& x, const backend::Conv2dGeom& g, int64_t batch,
                                        Tensor& gw) override {
    use_device(index_);
    backend::cuda::depthwise_conv2d_backward_weight(gy, x, g, batch, gw);
  }

  // ---- recurrent kernels ----
  void lstm_forward(const Tensor& xproj, const Tensor& w, const Tensor& h0, const Tensor& c0, Tensor& hc,
                    Tensor& acts) override {
    use_device(index_);
    backend::cuda::lstm_forward(xproj, w, h0, c0, hc, acts);
  }
  void lstm_backward(const Tensor& g, const Tensor& hc, const Tensor& acts, const Tensor& w, const Tensor& h0,
                     const Tensor& c0, Tensor& dx, Tensor& dw, Tensor& dh0, Tensor& dc0) override {
    use_device(index_);
    backend::cuda::lstm_backward(g, hc, acts, w, h0, c0, dx, dw, dh0, dc0);
  }
  void gru_forward(const Tensor& xproj, const Tensor& w, const Tensor& bhh, const Tensor& h0, Tensor& hs,
                   Tensor& saved) override {
    use_device(index_);
    backend::cuda::gru_forward(xproj, w, bhh, h0, hs, saved);
  }
  void gru_backward(const Tensor& g, const Tensor& hs, const Tensor& saved, const Tensor& w, const Tensor& h0,
                    Tensor& dx, Tensor& dw, Tensor& dbhh, Tensor& dh0) override {
    use_device(index_);
    backend::cuda::gru_backward(g, hs, saved, w, h0, dx, dw, dbhh, dh0);
  }

  // ---- whole convolutions (cuDNN) and batch norm ----
  // cuDNN takes padding equal on both sides; the op runs im2col + GEMM where it declines.
  static bool cudnn_takes(const Tensor& x, const Tensor& w, const backend::Conv2dGeom& g, int64_t pad_bottom,
                          int64_t pad_right, int64_t groups) {
    return pad_bottom == g.ph && pad_right == g.pw && x.numel() > 0 && w.numel() > 0 && g.OH > 0 && g.OW > 0 &&
           backend::cuda::has_cudnn_conv2d(g, groups, x.dtype());
  }
  bool conv2d_fused(const Tensor& x, const Tensor& w, const Tensor& bias, const backend::Conv2dGeom& g,
                    int64_t pad_bottom, int64_t pad_right, int64_t groups, Tensor& out) override {
    if (!cudnn_takes(x, w, g, pad_bottom, pad_right, groups)) return false;
    use_device(index_);
    backend::cuda::cudnn_conv2d_forward(x, w, bias, g, groups, out);
    return true;
  }
  bool conv2d_fused_backward(const Tensor& gy, const Tensor& x, const Tensor& w, bool has_bias,
                             const backend::Conv2dGeom& g, int64_t pad_bottom, int64_t pad_right, int64_t groups,
                             Tensor& gx, Tensor& gw, Tensor& gb) override {
    (void)has_bias;
    if (!cudnn_takes(x, w, g, pad_bottom, pad_right, groups)) return false;
    use_device(index_);
    if (gx.defined()) backend::cuda::cudnn_conv2d_backward_input(gy, w, g, groups, gx);
    if (gw.defined()) backend::cuda::cudnn_conv2d_backward_weight(gy, x, g, groups, gw);
    if (gb.defined()) {
      // gy summed over positions, then over the batch; 16-bit gradients in float32 (the reduce
      // kernels take no half types, and a float32 sum keeps the bias gradient accurate).
      const int64_t n = gy.shape()[0], o = gy.shape()[1];
      const bool half = gy.dtype() == Dtype::Float16 || gy.dtype() == Dtype::BFloat16;
      Tensor g32 = gy, gb32 = gb;
      if (half) {
        g32 = Tensor::empty(gy.shape(), Dtype::Float32, gy.device());
        copy(gy, g32);
        gb32 = Tensor::empty(gb.shape(), Dtype::Float32, gb.device());
      }
      Tensor per_image = Tensor::empty({n, o}, g32.dtype(), gy.device());
      backend::cuda::reduce(backend::ReduceOp::Sum, g32, n * o, g.OH * g.OW, 1, per_image);
      backend::cuda::reduce(backend::ReduceOp::Sum, per_image, 1, n, o, gb32);
      if (half) copy(gb32, gb);
    }
    return true;
  }
  void batch_norm_stats(const Tensor& x, int64_t n, int64_t c, int64_t l, double eps, Tensor& mean, Tensor& rstd,
                        Tensor& var) override {
    use_device(index_);
    backend::cuda::batch_norm_stats(x, n, c, l, eps, mean, rstd, var);
  }
  void batch_norm_apply(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w, const Tensor& b,
                        int64_t n, int64_t c, int64_t l, Tensor& y) override {
    use_device(index_);
    backend::cuda::batch_norm_apply(x, mean, rstd, w, b, n, c, l, y);
  }
  void batch_norm_backward(const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w,
                           int64_t n, int64_t c, int64_t l, bool training, Tensor& dx, Tensor& dw,
                           Tensor& db) override {
    use_device(index_);
    backend::cuda::batch_norm_backward(g, x, mean, rstd, w, n, c, l, training, dx, dw, db);
  }

  void attention_softmax(const Tensor& s, int64_t batch, int64_t L, int64_t S, double scale, bool causal, Tensor& p,
                         Tensor& lse) override {
    use_device(index_);
    backend::cuda::attention_softmax(s, batch, L, S, scale, causal, p, lse);
  }
  void attention_softmax_backward(Tensor& s, Tensor& dp, const Tensor& lse, const Tensor& delta, int64_t batch,
                                  int64_t L, int64_t S, double scale, bool causal) override {
    use_device(index_);
    backend::cuda::attention_softmax_backward(s, dp, lse, delta, batch, L, S, scale, causal);
  }

  bool has_flash_attention() const override { return true; }
  bool flash_attention_forms_delta() const override { return true; }
  bool has_device_step_adam() const override { return true; }
  bool native_half_adam() const override { return true; }
  bool flash_attention(const Tensor& q, const Tensor& k, const Tensor& v, double scale, bool causal, Tensor& out,
                       Tensor& lse) override {
    use_device(index_);
    return backend::cuda::flash_attention(q, k, v, scale, causal, out, lse);
  }
  bool flash_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                                const Tensor& dout, const Tensor& lse, const Tensor& delta, double scale, bool causal,
                                Tensor& dq, Tensor& dk, Tensor& dv) override {
    use_device(index_);
    return backend::cuda::flash_attention_backward(q, k, v, out, dout, lse, delta, scale, causal, dq, dk, dv);
  }

  bool cross_entropy_rows(const Tensor& x, const Tensor& t, int64_t ignore_index, double scale, Tensor& loss,
                          Tensor& lse, Tensor& dx) override {
    use_device(index_);
    backend::cuda::cross_entropy_rows(x, t, ignore_index, scale, loss, lse, dx);
    return true;
  }
  bool cross_entropy_rows_backward(const Tensor& x, const Tensor& t, const Tensor& lse, const Tensor& g,
                                   int64_t ignore_index, double scale, Tensor& dx) override {
    use_device(index_);
    backend::cuda::cross_entropy_rows_backward(x, t, lse, g, ignore_index, scale, dx);
    return true;
  }

  // ---- fused kernels ----
  bool has_linear_bias() const override { return true; }
  bool linear_bias(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& out) override {
    use_device(index_);
    return backend::cuda::linear_bias(x, w, bias, out);
  }
  bool linear_bias_backward_weight(const Tensor& dy, const Tensor& x, Tensor& dw, Tensor& db,
                                   bool accumulate) override {
    use_device(index_);
    return backend::cuda::linear_bias_backward_weight(dy, x, dw, db, accumulate);
  }
  bool linear_bias_gelu(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& out, Tensor& pre) override {
    use_device(index_);
    return backend::cuda::linear_bias_gelu(x, w, bias, out, pre);
  }
  bool linear_gelu_backward_input(const Tensor& dy, const Tensor& w, const Tensor& pre, Tensor& da) override {
    use_device(index_);
    return backend::cuda::linear_gelu_backward_input(dy, w, pre, da);
  }
  bool native_half_gemm() const override {
#ifdef SPIRALTORCH_HAVE_CUBLAS
    return true;
#else
    return false;
#endif
  }
  bool native_half_elementwise() const override { return true; }
  bool native_half_layer_norm() const override { return true; }
  bool half_with_float_scalar() const override { return true; }
  void layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, int64_t rows, int64_t cols, double eps, Tensor& y,
                  Tensor& mean, Tensor& rstd) override {
    use_device(index_);
    backend::cuda::layer_norm(x, w, b, rows, cols, eps, y, mean, rstd);
  }
  void layer_norm_backward(const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w,
                           int64_t rows, int64_t cols, Tensor& dx, Tensor& dw, Tensor& db) override {
    use_device(index_);
    backend::cuda::layer_norm_backward(g, x, mean, rstd, w, rows, cols, dx, dw, db);
  }
  bool add_layer_norm(const Tensor& x, const Tensor& y, const Tensor& w, const Tensor& b, int64_t rows, int64_t cols,
                      double eps, const DropoutDraw& drop, Tensor& h, Tensor& out, Tensor& mean,
                      Tensor& rstd) override {
    use_device(index_);
    return backend::cuda::add_layer_norm(x, y, w, b, rows, cols, eps, drop, h, out, mean, rstd);
  }
  bool add_layer_norm_backward(const Tensor& g, const Tensor& gh, const Tensor& h, const Tensor& mean,
                               const Tensor& rstd, const Tensor& w, int64_t rows, int64_t cols, const DropoutDraw& drop,
                               Tensor& dx, Tensor& dy, Tensor& dw, Tensor& db) override {
    use_device(index_);
    return backend::cuda::add_layer_norm_backward(g, gh, h, mean, rstd, w, rows, cols, drop, dx, dy, dw, db);
  }
  void dropout_mask(Tensor& out, uint64_t seed, uint64_t counter, double scale, double keep) override {
    use_device(index_);
    backend::cuda::dropout_mask(out, seed, counter, scale, keep);
  }
  void adam_update(std::span<const AdamSlot> slots, const AdamArgs& a) override {
    use_device(index_);
    backend::cuda::adam_update(slots, a);
  }
  void sgd_update(std::span<const SgdSlot> slots, const SgdArgs& a) override {
    use_device(index_);
    backend::cuda::sgd_update(slots, a);
  }
  void adagrad_update(std::span<const AdagradSlot> slots, const AdagradArgs& a) override {
    use_device(index_);
    backend::cuda::adagrad_update(slots, a);
  }
  void rmsprop_update(std::span<const RmspropSlot> slots, const RmspropArgs& a) override {
    use_device(index_);
    backend::cuda::rmsprop_update(slots, a);
  }
  void flag_nonfinite(std::span<const Tensor> xs, Tensor& flag) override {
    use_device(index_);
    backend::cuda::flag_nonfinite(xs, flag);
  }

 private:
  int index_;
};

}  // namespace
}  // namespace st::backend::cuda

namespace st::backend {

Backend& cuda_backend(int index) {
  static std::mutex mu;
  static std::unique_ptr<backend::cuda::CudaBackend> backends[64];
  if (index < 0 || index >= st::cuda::device_count()) {
    if (!st::cuda::is_available()) {
      throw DeviceUnavailableError("backend: device cuda:" + std::to_string(index) +
                                   " is not available: " + st::cuda::unavailable_reason());
    }
    throw DeviceUnavailableError("backend: device cuda:" + std::to_string(index) + " does not exist (" +
                                 std::to_string(st::cuda::device_count()) + " device(s))");
  }
  std::lock_guard<std::mutex> lock(mu);
  if (!backends[index]) backends[index] = std::make_unique<backend::cuda::CudaBackend>(index);
  return *backends[index];
}

}  // namespace st::backend
