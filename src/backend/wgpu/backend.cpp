// WgpuBackend: the Backend table of the wgpu device (WebGPU through wgpu-native). Every entry
// runs WGSL kernels on the device (the optional library convolution stays the base class's:
// has_conv2d() is false, so convolutions take im2col + GEMM or the depthwise kernels).
// Cross-device copies convert on the side where the data is and move contiguous bytes.
#include <memory>

#include "backend/cpu/kernels.h"
#include "backend/wgpu/kernels.h"
#include "spiraltorch/error.h"

namespace st::backend::wgpu {
namespace {

void cross_device_copy(const Tensor& src, Tensor& dst) {
  Context& c = Context::require("copy");
  if (src.device().type == DeviceType::CPU) {
    check_dtype("copy", dst.dtype());
    Tensor s = src;
    if (s.dtype() != dst.dtype() || !s.is_contiguous() || s.shape() != dst.shape()) {
      Tensor h = Tensor::empty(dst.shape(), dst.dtype());
      backend::cpu::copy(src, h);
      s = h;
    }
    if (dst.is_contiguous()) {
      c.write(dst.raw_data(), s.raw_data(), s.numel() * s.itemsize());
      return;
    }
    Tensor tmp = Tensor::empty(dst.shape(), dst.dtype(), dst.device());
    c.write(tmp.raw_data(), s.raw_data(), s.numel() * s.itemsize());
    copy_on_device(tmp, dst);
    return;
  }
  if (dst.device().type == DeviceType::CPU) {
    Tensor s = src;
    if (!s.is_contiguous()) {
      s = Tensor::empty(src.shape(), src.dtype(), src.device());
      copy_on_device(src, s);
    }
    Tensor h = Tensor::empty(src.shape(), src.dtype());
    c.read(s.raw_data(), h.raw_data(), h.numel() * h.itemsize());
    backend::cpu::copy(h, dst);
    return;
  }
  throw DeviceUnavailableError("wgpu.copy: no direct copy between " + src.device().str() + " and " +
                               dst.device().str() + "; go through the cpu");
}

class WgpuBackend final : public backend::Backend {
 public:
  void binary(backend::BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) override {
    backend::wgpu::binary(op, a, b, out);
  }
  void unary(backend::UnaryOp op, const Tensor& x, Tensor& out, double p0, double p1) override {
    backend::wgpu::unary(op, x, out, p0, p1);
  }
  void copy(const Tensor& src, Tensor& dst) override {
    if (src.device() != dst.device()) return cross_device_copy(src, dst);
    copy_on_device(src, dst);
  }
  void fill(Tensor& dst, Scalar value) override { backend::wgpu::fill(dst, value); }
  void where(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor& out) override {
    backend::wgpu::where(cond, a, b, out);
  }
  void reduce(backend::ReduceOp op, const Tensor& x, int64_t outer, int64_t r, int64_t inner, Tensor& out) override {
    backend::wgpu::reduce(op, x, outer, r, inner, out);
  }
  void arg_reduce(bool is_max, const Tensor& x, int64_t outer, int64_t r, int64_t inner, Tensor& values,
                  Tensor& indices) override {
    backend::wgpu::arg_reduce(is_max, x, outer, r, inner, values, indices);
  }
  void gemm(Dtype dtype, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const void* a, int64_t lda,
            int64_t sa, const void* b, int64_t ldb, int64_t sb, double beta, void* c, int64_t ldc, int64_t sc,
            int64_t batch) override {
    backend::wgpu::gemm(dtype, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch);
  }
  void random(Tensor& out, bool normal, double p0, double p1, uint64_t seed, uint64_t counter) override {
    backend::wgpu::random(out, normal, p0, p1, seed, counter);
  }
  void poisson(const Tensor& rates, Tensor& out, uint64_t seed, uint64_t counter) override {
    backend::wgpu::poisson(rates, out, seed, counter);
  }
  void softmax(const Tensor& x, int64_t rows, int64_t cols, bool log, Tensor& out) override {
    backend::wgpu::softmax(x, rows, cols, log, out);
  }
  void softmax_backward(const Tensor& g, const Tensor& y, int64_t rows, int64_t cols, bool log, Tensor& dx) override {
    backend::wgpu::softmax_backward(g, y, rows, cols, log, dx);
  }
  bool cross_entropy_rows(const Tensor& x, const Tensor& t, int64_t ignore_index, double scale, Tensor& loss,
                          Tensor& lse, Tensor& dx) override {
    return backend::wgpu::cross_entropy_rows(x, t, ignore_index, scale, loss, lse, dx);
  }
  bool cross_entropy_rows_backward(const Tensor& x, const Tensor& t, const Tensor& lse, const Tensor& g,
                                   int64_t ignore_index, double scale, Tensor& dx) override {
    return backend::wgpu::cross_entropy_rows_backward(x, t, lse, g, ignore_index, scale, dx);
  }
  void cat(const std::vector<Tensor>& xs, int64_t outer, Tensor& out) override { backend::wgpu::cat(xs, outer, out); }
  void gather(const Tensor& x, const Tensor& index, int64_t outer, int64_t n, int64_t k, int64_t inner,
              Tensor& out) override {
    backend::wgpu::gather(x, index, outer, n, k, inner, out);
  }
  void scatter_add(Tensor& out, const Tensor& index, const Tensor& src, int64_t outer, int64_t n, int64_t k,
                   int64_t inner) override {
    backend::wgpu::scatter_add(out, index, src, outer, n, k, inner);
  }
  void index_select(const Tensor& x, const Tensor& index, int64_t outer, int64_t n, int64_t k, int64_t inner,
                    Tensor& out) override {
    backend::wgpu::index_select(x, index, outer, n, k, inner, out);
  }
  void masked_select(const Tensor& x, const Tensor& mask, Tensor& out) override {
    backend::wgpu::masked_select(x, mask, out);
  }
  void sort(const Tensor& x, int64_t outer, int64_t n, int64_t inner, int64_t k, bool descending, Tensor& values,
            Tensor& indices) override {
    backend::wgpu::sort(x, outer, n, inner, k, descending, values, indices);
  }
  void cumsum(const Tensor& x, int64_t outer, int64_t n, int64_t inner, Tensor& out) override {
    backend::wgpu::cumsum(x, outer, n, inner, out);
  }
  void scan(backend::ScanOp op, const Tensor& x, int64_t outer, int64_t n, int64_t inner, Tensor& out,
            Tensor& indices) override {
    backend::wgpu::scan(op, x, outer, n, inner, out, indices);
  }
  void triangle(const Tensor& x, int64_t batch, int64_t rows, int64_t cols, int64_t diagonal, bool upper,
                Tensor& out) override {
    backend::wgpu::triangle(x, batch, rows, cols, diagonal, upper, out);
  }
  void im2col(const Tensor& x, const backend::Conv2dGeom& g, int64_t batch, Tensor& cols) override {
    backend::wgpu::im2col(x, g, batch, cols);
  }
  void col2im(const Tensor& cols, const backend::Conv2dGeom& g, int64_t batch, Tensor& x) override {
    backend::wgpu::col2im(cols, g, batch, x);
  }
  void max_pool2d(const Tensor& x, const backend::Pool2dGeom& g, int64_t planes, Tensor& out,
                  Tensor& indices) override {
    backend::wgpu::max_pool2d(x, g, planes, out, indices);
  }
  void max_pool2d_backward(const Tensor& gy, const Tensor& indices, const backend::Pool2dGeom& g, int64_t planes,
                           Tensor& gx) override {
    backend::wgpu::max_pool2d_backward(gy, indices, g, planes, gx);
  }
  void avg_pool2d(const Tensor& x, const backend::Pool2dGeom& g, int64_t planes, bool cip, int64_t div,
                  Tensor& out) override {
    backend::wgpu::avg_pool2d(x, g, planes, cip, div, out);
  }
  void avg_pool2d_backward(const Tensor& gy, const backend::Pool2dGeom& g, int64_t planes, bool cip, int64_t div,
                           Tensor& gx) override {
    backend::wgpu::avg_pool2d_backward(gy, g, planes, cip, div, gx);
  }
  void adaptive_avg_pool2d(const Tensor& x, const backend::Pool2dGeom& g, int64_t planes, Tensor& out) override {
    backend::wgpu::adaptive_avg_pool2d(x, g, planes, out);
  }
  void adaptive_avg_pool2d_backward(const Tensor& gy, const backend::Pool2dGeom& g, int64_t planes,
                                    Tensor& gx) override {
    backend::wgpu::adaptive_avg_pool2d_backward(gy, g, planes, gx);
  }
  void depthwise_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const backend::Conv2dGeom& g,
                        int64_t batch, Tensor& out) override {
    backend::wgpu::depthwise_conv2d(x, w, bias, g, batch, out);
  }
  void depthwise_conv2d_backward_input(const Tensor& gy, const Tensor& w, const backend::Conv2dGeom& g, int64_t batch,
                                       Tensor& gx) override {
    backend::wgpu::depthwise_conv2d_backward_input(gy, w, g, batch, gx);
  }
  void depthwise_conv2d_backward_weight(const Tensor& gy, const Tensor& x, const backend::Conv2dGeom& g, int64_t batch,
                                        Tensor& gw) override {
    backend::wgpu::depthwise_conv2d_backward_weight(gy, x, g, batch, gw);
  }
  void batch_norm_stats(const Tensor& x, int64_t n, int64_t c, int64_t l, double eps, Tensor& mean, Tensor& rstd,
                        Tensor& var) override {
    backend::wgpu::batch_norm_stats(x, n, c, l, eps, mean, rstd, var);
  }
  void batch_norm_apply(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w, const Tensor& b,
                        int64_t n, int64_t c, int64_t l, Tensor& y) override {
    backend::wgpu::batch_norm_apply(x, mean, rstd, w, b, n, c, l, y);
  }
  void batch_norm_backward(const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w,
                           int64_t n, int64_t c, int64_t l, bool training, Tensor& dx, Tensor& dw,
                           Tensor& db) override {
    backend::wgpu::batch_norm_backward(g, x, mean, rstd, w, n, c, l, training, dx, dw, db);
  }
  void attention_softmax(const Tensor& s, int64_t batch, int64_t L, int64_t S, double scale, bool causal, Tensor& p,
                         Tensor& lse) override {
    backend::wgpu::attention_softmax(s, batch, L, S, scale, causal, p, lse);
  }
  void attention_softmax_backward(Tensor& s, Tensor& dp, const Tensor& lse, const Tensor& delta, int64_t batch,
                                  int64_t L, int64_t S, double scale, bool causal) override {
    backend::wgpu::attention_softmax_backward(s, dp, lse, delta, batch, L, S, scale, causal);
  }
  // Tiled flash attention (attention.cpp): O(L + S) memory per row, no (L, S) buffer.
  bool has_flash_attention() const override { return backend::wgpu::flash_enabled(); }
  bool flash_attention(const Tensor& q, const Tensor& k, const Tensor& v, double scale, bool causal, Tensor& out,
                       Tensor& lse) override {
    return backend::wgpu::flash_attention(q, k, v, scale, causal, out, lse);
  }
  bool flash_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                                const Tensor& dout, const Tensor& lse, const Tensor& delta, double scale, bool causal,
                                Tensor& dq, Tensor& dk, Tensor& dv) override {
    return backend::wgpu::flash_attention_backward(q, k, v, out, dout, lse, delta, scale, causal, dq, dk, dv);
  }
  // With an additive mask and/or dropout: the same kernels, flags in their parameters.
  bool flash_attention_masked(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double scale,
                              bool causal, const DropoutDraw& dropout, Tensor& out, Tensor& lse) override {
    return backend::wgpu::flash_attention_masked(q, k, v, mask, scale, causal, dropout, out, lse);
  }
  bool flash_attention_masked_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                                       const Tensor& out, const Tensor& dout, const Tensor& lse, const Tensor& delta,
                                       double scale, bool causal, const DropoutDraw& dropout, Tensor& dq, Tensor& dk,
                                       Tensor& dv) override {
    return backend::wgpu::flash_attention_masked_backward(q, k, v, mask, out, dout, lse, delta, scale, causal, dropout,
                                                          dq, dk, dv);
  }
  void lstm_forward(const Tensor& xproj, const Tensor& w, const Tensor& h0, const Tensor& c0, Tensor& hc,
                    Tensor& acts) override {
    backend::wgpu::lstm_forward(xproj, w, h0, c0, hc, acts);
  }
  void lstm_backward(const Tensor& g, const Tensor& hc, const Tensor& acts, const Tensor& w, const Tensor& h0,
                     const Tensor& c0, Tensor& dx, Tensor& dw, Tensor& dh0, Tensor& dc0) override {
    backend::wgpu::lstm_backward(g, hc, acts, w, h0, c0, dx, dw, dh0, dc0);
  }
  void gru_forward(const Tensor& xproj, const Tensor& w, const Tensor& bhh, const Tensor& h0, Tensor& hs,
                   Tensor& saved) override {
    backend::wgpu::gru_forward(xproj, w, bhh, h0, hs, saved);
  }
  void gru_backward(const Tensor& g, const Tensor& hs, const Tensor& saved, const Tensor& w, const Tensor& h0,
                    Tensor& dx, Tensor& dw, Tensor& dbhh, Tensor& dh0) override {
    backend::wgpu::gru_backward(g, hs, saved, w, h0, dx, dw, dbhh, dh0);
  }
  bool native_half_elementwise() const override { return true; }
  // The binary kernel loads each operand in its own dtype, so a float32 number beside a half tensor needs nothing.
  bool half_with_float_scalar() const override { return true; }
  void layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, int64_t rows, int64_t cols, double eps, Tensor& y,
                  Tensor& mean, Tensor& rstd) override {
    backend::wgpu::layer_norm(x, w, b, rows, cols, eps, y, mean, rstd);
  }
  void layer_norm_backward(const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w,
                           int64_t rows, int64_t cols, Tensor& dx, Tensor& dw, Tensor& db) override {
    backend::wgpu::layer_norm_backward(g, x, mean, rstd, w, rows, cols, dx, dw, db);
  }
  void dropout_mask(Tensor& out, uint64_t seed, uint64_t counter, double scale, double keep) override {
    backend::wgpu::dropout_mask(out, seed, counter, scale, keep);
  }
  // The slots of a step in as few dispatches as the binding limit allows (optim.cpp).
  void adam_update(std::span<const AdamSlot> slots, const AdamArgs& a) override {
    backend::wgpu::adam_update(slots, a);
  }
  void sgd_update(std::span<const SgdSlot> slots, const SgdArgs& a) override { backend::wgpu::sgd_update(slots, a); }
  void adagrad_update(std::span<const AdagradSlot> slots, const AdagradArgs& a) override {
    backend::wgpu::adagrad_update(slots, a);
  }
  void rmsprop_update(std::span<const RmspropSlot> slots, const RmspropArgs& a) override {
    backend::wgpu::rmsprop_update(slots, a);
  }
  void flag_nonfinite(std::span<const Tensor> xs, Tensor& flag) override { backend::wgpu::flag_nonfinite(xs, flag); }
  // A buffer copy and a map that completes with its own submission (context.cpp).
  std::function<int32_t()> read_later(const Tensor& flag) override {
    if (flag.dtype() != Dtype::Int32 || flag.numel() != 1) {
      throw DtypeError("wgpu.read_later: expected one int32 element, got " + std::to_string(flag.numel()) + " of " +
                       dtype_name(flag.dtype()));
    }
    return Context::require("read_later").read_later(flag.raw_data());
  }
  bool reads_later() const override { return true; }
};

}  // namespace
}  // namespace st::backend::wgpu

namespace st::backend {

Backend& wgpu_backend(int index) {
  if (index != 0)
    throw DeviceUnavailableError("backend: device wgpu:" + std::to_string(index) +
                                 " does not exist (one adapter is used)");
  backend::wgpu::Context::require("backend");
  static backend::wgpu::WgpuBackend instance;
  return instance;
}

}  // namespace st::backend

namespace st::wgpu {

bool is_built() { return true; }
bool is_available() {
  std::string reason;
  return backend::wgpu::Context::get(reason) != nullptr;
}
std::string unavailable_reason() {
  std::string reason;
  backend::wgpu::Context::get(reason);
  return reason;
}
AdapterInfo adapter_info() { return backend::wgpu::Context::require("adapter_info").info(); }
void synchronize() { backend::wgpu::Context::require("synchronize").synchronize(); }
size_t memory_allocated() {
  std::string r;
  auto* c = backend::wgpu::Context::get(r);
  return c ? c->allocated() : 0;
}
size_t max_memory_allocated() {
  std::string r;
  auto* c = backend::wgpu::Context::get(r);
  return c ? c->peak() : 0;
}
size_t memory_reserved() {
  std::string r;
  auto* c = backend::wgpu::Context::get(r);
  return c ? c->reserved() : 0;
}
void reset_peak_memory_stats() {
  std::string r;
  if (auto* c = backend::wgpu::Context::get(r)) c->reset_peak();
}
void empty_cache() {
  std::string r;
  if (auto* c = backend::wgpu::Context::get(r)) c->empty_cache();
}
size_t pipelines_compiled() {
  std::string r;
  auto* c = backend::wgpu::Context::get(r);
  return c ? c->pipelines() : 0;
}
uint64_t dispatches() {
  std::string r;
  auto* c = backend::wgpu::Context::get(r);
  return c ? c->dispatch_count() : 0;
}
uint64_t host_reads() {
  std::string r;
  auto* c = backend::wgpu::Context::get(r);
  return c ? c->read_count() : 0;
}
void* allocate(size_t nbytes) { return backend::wgpu::Context::require("allocate").allocate(nbytes); }
void release(void* ptr) {
  std::string r;
  if (auto* c = backend::wgpu::Context::get(r)) c->release(ptr);
}

}  // namespace st::wgpu
