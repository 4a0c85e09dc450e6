#include "spiraltorch/nn/rnn.h"

#include <cmath>
#include <cstring>

#include "backend/backend.h"
#include "backend/cpu/vmath.h"
#include "spiraltorch/autograd.h"
#include "spiraltorch/nn/init.h"
#include "spiraltorch/ops.h"

namespace st::nn {

namespace {

using st::cpu::vsigmoid;
using st::cpu::vtanh;

backend::Backend& be(const Tensor& t) { return backend::backend_for(t.device()); }

// C (m x n, row-major, ldc) = alpha * op(A) @ op(B) + beta * C for one matrix.
void gemm1(const Tensor& like, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda,
           const void* b, int64_t ldb, double beta, void* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  be(like).gemm(like.dtype(), ta, tb, m, n, k, 1.0, a, lda, 0, b, ldb, 0, beta, c, ldc, 0, 1);
}

bool is_fast_dtype(Dtype d) { return d == Dtype::Float32 || d == Dtype::Float64; }

// Single-transcendental loops vectorise reliably (the fused multi-call loops did not).
template <typename T>
void sigmoid_inplace(T* p, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) p[i] = vsigmoid(p[i]);
}
template <typename T>
void tanh_to(const T* in, T* out, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = vtanh(in[i]);
}

// ---------------------------------------------------------------- LSTM kernels

template <typename T>
void lstm_forward_kernel(const Tensor& xproj, const Tensor& w, const T* h0, const T* c0, T* hc, T* acts,
                         int64_t steps, int64_t batch, int64_t hidden) {
  const int64_t G = 4 * hidden;
  const int64_t st_t = xproj.strides()[0], st_b = xproj.strides()[1];
  const T* xp = xproj.data<T>();
  const T* W = w.data<T>();
  const int64_t wld = w.strides()[0];
  T* hs = hc;
  T* cs = hc + steps * batch * hidden;
  for (int64_t t = 0; t < steps; ++t) {
    T* a = acts + t * batch * G;
    for (int64_t b = 0; b < batch; ++b) std::memcpy(a + b * G, xp + t * st_t + b * st_b, sizeof(T) * G);
    const T* hprev = t == 0 ? h0 : hs + (t - 1) * batch * hidden;
    const T* cprev = t == 0 ? c0 : cs + (t - 1) * batch * hidden;
    gemm1(w, false, true, batch, G, hidden, hprev, hidden, W, wld, 1.0, a, G);
    T* hout = hs + t * batch * hidden;
    T* cout = cs + t * batch * hidden;
    for (int64_t b = 0; b < batch; ++b) {
      T* ab = a + b * G;
      const T* cp = cprev + b * hidden;
      T* ho = hout + b * hidden;
      T* co = cout + b * hidden;
      sigmoid_inplace(ab, 2 * hidden);
      tanh_to(ab + 2 * hidden, ab + 2 * hidden, hidden);
      sigmoid_inplace(ab + 3 * hidden, hidden);
#pragma omp simd
      for (int64_t j = 0; j < hidden; ++j) co[j] = ab[hidden + j] * cp[j] + ab[j] * ab[2 * hidden + j];
      tanh_to(co, ho, hidden);
#pragma omp simd
      for (int64_t j = 0; j < hidden; ++j) ho[j] *= ab[3 * hidden + j];
    }
  }
}

template <typename T>
void lstm_backward_kernel(const T* ghc, const T* hc, const T* acts, const Tensor& w, const T* h0, const T* c0,
                          T* dx, T* dw, T* dh0, T* dc0, int64_t steps, int64_t batch, int64_t hidden) {
  const int64_t G = 4 * hidden, BH = batch * hidden;
  const T* hs = hc;
  const T* cs = hc + steps * BH;
  const T* gh = ghc;
  const T* gc = ghc + steps * BH;
  const T* W = w.data<T>();
  const int64_t wld = w.strides()[0];
  std::vector<T> dc(BH, T(0)), dhrec(BH, T(0)), tcbuf(hidden);
  for (int64_t t = steps - 1; t >= 0; --t) {
    const T* a = acts + t * batch * G;
    const T* cprev = t == 0 ? c0 : cs + (t - 1) * BH;
    const T* ct = cs + t * BH;
    T* d = dx + t * batch * G;
    for (int64_t b = 0; b < batch; ++b) {
      const T* ab = a + b * G;
      T* db = d + b * G;
      const T* cp = cprev + b * hidden;
      const T* cc = ct + b * hidden;
      const T* ghb = gh + t * BH + b * hidden;
      const T* gcb = gc + t * BH + b * hidden;
      const T* dhr = dhrec.data() + b * hidden;
      T* dcb = dc.data() + b * hidden;
      T* tcv = tcbuf.data();
      tanh_to(cc, tcv, hidden);
#pragma omp simd
      for (int64_t j = 0; j < hidden; ++j) {
        const T i = ab[j], f = ab[hidden + j], g = ab[2 * hidden + j], o = ab[3 * hidden + j];
        const T dht = ghb[j] + dhr[j];
        const T tc = tcv[j];
        const T dct = gcb[j] + dcb[j] + dht * o * (T(1) - tc * tc);
        db[j] = dct * g * i * (T(1) - i);
        db[hidden + j] = dct * cp[j] * f * (T(1) - f);
        db[2 * hidden + j] = dct * i * (T(1) - g * g);
        db[3 * hidden + j] = dht * tc * o * (T(1) - o);
        dcb[j] = dct * f;
      }
    }
    // dh_{t-1} = dgates_t @ W_hh
    gemm1(w, false, false, batch, hidden, G, d, G, W, wld, 0.0, dhrec.data(), hidden);
  }
  if (dh0) std::memcpy(dh0, dhrec.data(), sizeof(T) * BH);
  if (dc0) std::memcpy(dc0, dc.data(), sizeof(T) * BH);
  if (dw) {
    // dW = sum_t dgates_t^T h_{t-1}
    gemm1(w, true, false, G, hidden, batch, dx, G, h0, hidden, 0.0, dw, hidden);
    if (steps > 1) gemm1(w, true, false, G, hidden, (steps - 1) * batch, dx + batch * G, G, hs, hidden, 1.0, dw, hidden);
  }
}

// ---------------------------------------------------------------- GRU kernels

template <typename T>
void gru_forward_kernel(const Tensor& xproj, const Tensor& w, const T* bhh, const T* h0, T* hs, T* saved,
                        int64_t steps, int64_t batch, int64_t hidden) {
  const int64_t G = 3 * hidden, S = 4 * hidden;
  const int64_t st_t = xproj.strides()[0], st_b = xproj.strides()[1];
  const T* xp = xproj.data<T>();
  const T* W = w.data<T>();
  const int64_t wld = w.strides()[0];
  std::vector<T> gh(batch * G), zero_bias(bhh ? 0 : G, T(0));
  const T* bias = bhh ? bhh : zero_bias.data();
  for (int64_t t = 0; t < steps; ++t) {
    const T* hprev = t == 0 ? h0 : hs + (t - 1) * batch * hidden;
    gemm1(w, false, true, batch, G, hidden, hprev, hidden, W, wld, 0.0, gh.data(), G);
    T* hout = hs + t * batch * hidden;
    for (int64_t b = 0; b < batch; ++b) {
      const T* x = xp + t * st_t + b * st_b;
      T* g = gh.data() + b * G;
      const T* hp = hprev + b * hidden;
      T* sv = saved + (t * batch + b) * S;
      T* ho = hout + b * hidden;
#pragma omp simd
      for (int64_t j = 0; j < 2 * hidden; ++j) sv[j] = x[j] + g[j] + bias[j];
      sigmoid_inplace(sv, 2 * hidden);
#pragma omp simd
      for (int64_t j = 0; j < hidden; ++j) {
        const T ghn = g[2 * hidden + j] + bias[2 * hidden + j];
        sv[3 * hidden + j] = ghn;
        g[j] = x[2 * hidden + j] + sv[j] * ghn;
      }
      tanh_to(g, sv + 2 * hidden, hidden);
#pragma omp simd
      for (int64_t j = 0; j < hidden; ++j) {
        const T z = sv[hidden + j], n = sv[2 * hidden + j];
        ho[j] = (T(1) - z) * n + z * hp[j];
      }
    }
  }
}

template <typename T>
void gru_backward_kernel(const T* ghs, const T* hs, const T* saved, const Tensor& w, const T* h0, T* dx, T* dgh,
                         T* dw, T* dbhh, T* dh0, int64_t steps, int64_t batch, int64_t hidden) {
  const int64_t G = 3 * hidden, S = 4 * hidden, BH = batch * hidden;
  const T* W = w.data<T>();
  const int64_t wld = w.strides()[0];
  std::vector<T> dhrec(BH, T(0)), next(BH);
  for (int64_t t = steps - 1; t >= 0; --t) {
    const T* hprev = t == 0 ? h0 : hs + (t - 1) * BH;
    for (int64_t b = 0; b < batch; ++b) {
      const T* sv = saved + (t * batch + b) * S;
      const T* hp = hprev + b * hidden;
      const T* go = ghs + t * BH + b * hidden;
      const T* dr = dhrec.data() + b * hidden;
      T* nx = next.data() + b * hidden;
      T* dxb = dx + (t * batch + b) * G;
      T* dgb = dgh + (t * batch + b) * G;
#pragma omp simd
      for (int64_t j = 0; j < hidden; ++j) {
        const T r = sv[j], z = sv[hidden + j], n = sv[2 * hidden + j], ghn = sv[3 * hidden + j];
        const T dh = go[j] + dr[j];
        const T dpn = dh * (T(1) - z) * (T(1) - n * n);
        const T dpz = dh * (hp[j] - n) * z * (T(1) - z);
        const T dpr = dpn * ghn * r * (T(1) - r);
        dxb[j] = dpr;
        dxb[hidden + j] = dpz;
        dxb[2 * hidden + j] = dpn;
        dgb[j] = dpr;
        dgb[hidden + j] = dpz;
        dgb[2 * hidden + j] = dpn * r;
        nx[j] = dh * z;
      }
    }
    gemm1(w, false, false, batch, hidden, G, dgh + t * batch * G, G, W, wld, 1.0, next.data(), hidden);
    dhrec.swap(next);
  }
  if (dh0) std::memcpy(dh0, dhrec.data(), sizeof(T) * BH);
  if (dw) {
    gemm1(w, true, false, G, hidden, batch, dgh, G, h0, hidden, 0.0, dw, hidden);
    if (steps > 1) gemm1(w, true, false, G, hidden, (steps - 1) * batch, dgh + batch * G, G, hs, hidden, 1.0, dw, hidden);
  }
  if (dbhh) {
    for (int64_t j = 0; j < G; ++j) dbhh[j] = T(0);
    for (int64_t r = 0; r < steps * batch; ++r) {
      const T* row = dgh + r * G;
#pragma omp simd
      for (int64_t j = 0; j < G; ++j) dbhh[j] += row[j];
    }
  }
}

template <typename F>
void dispatch_float(Dtype d, F&& f) {
  if (d == Dtype::Float32) {
    f(float{});
  } else {
    f(double{});
  }
}

Tensor contig(const Tensor& t) { return t.is_contiguous() ? t : t.contiguous(); }

void check_recurrence_args(const char* op, const Tensor& xproj, const Tensor& w_hh, const Tensor& h0,
                           int64_t gates) {
  if (xproj.device().type != DeviceType::CPU || w_hh.device().type != DeviceType::CPU) {
    throw SpiralError(std::string(op) + ": the fused recurrence runs on the CPU only for now; move the module and "
                      "input to the CPU");
  }
  if (xproj.dim() != 3 || w_hh.dim() != 2) {
    throw ShapeError(std::string(op) + ": expected xproj (seq, batch, gates) and a 2-d w_hh, got " +
                     shape_str(xproj.shape()) + " and " + shape_str(w_hh.shape()));
  }
  const int64_t H = w_hh.shape()[1];
  if (w_hh.shape()[0] != gates * H || xproj.shape()[2] != gates * H) {
    throw ShapeError(std::string(op) + ": w_hh of shape " + shape_str(w_hh.shape()) + " and xproj of shape " +
                     shape_str(xproj.shape()) + " do not match hidden size " + std::to_string(H));
  }
  if (h0.shape() != Shape{xproj.shape()[1], H}) {
    throw ShapeError(std::string(op) + ": initial state of shape " + shape_str(h0.shape()) + ", expected " +
                     shape_str({xproj.shape()[1], H}));
  }
  if (xproj.dtype() != w_hh.dtype() || h0.dtype() != w_hh.dtype()) {
    throw DtypeError(std::string(op) + ": input and weights must share a dtype, got " + dtype_name(xproj.dtype()) +
                     " and " + dtype_name(w_hh.dtype()));
  }
}

}  // namespace

// ---------------------------------------------------------------- fused recurrences

Tensor lstm_recurrence(const Tensor& xproj_in, const Tensor& w_hh_in, const Tensor& h0_in, const Tensor& c0_in) {
  check_recurrence_args("lstm", xproj_in, w_hh_in, h0_in, 4);
  if (c0_in.shape() != h0_in.shape() || c0_in.dtype() != h0_in.dtype()) {
    throw ShapeError("lstm: c0 of shape " + shape_str(c0_in.shape()) + " does not match h0 of shape " +
                     shape_str(h0_in.shape()));
  }
  const Dtype dt = xproj_in.dtype();
  if (!is_fast_dtype(dt)) {  // half types compute in float32
    Tensor r = lstm_recurrence(cast(xproj_in, Dtype::Float32), cast(w_hh_in, Dtype::Float32),
                               cast(h0_in, Dtype::Float32), cast(c0_in, Dtype::Float32));
    return cast(r, dt);
  }
  const int64_t T = xproj_in.shape()[0], B = xproj_in.shape()[1], H = w_hh_in.shape()[1];
  Tensor xproj = xproj_in.detach();
  if (xproj.strides()[2] != 1) xproj = xproj.contiguous();
  const Tensor w = contig(w_hh_in.detach()), h0 = contig(h0_in.detach()), c0 = contig(c0_in.detach());
  Tensor hc = Tensor::empty({2, T, B, H}, dt, xproj.device());
  Tensor acts = Tensor::empty({T, B, 4 * H}, dt, xproj.device());
  dispatch_float(dt, [&](auto tag) {
    using S = decltype(tag);
    lstm_forward_kernel<S>(xproj, w, h0.data<S>(), c0.data<S>(), hc.data<S>(), acts.data<S>(), T, B, H);
  });
  if (needs_grad({&xproj_in, &w_hh_in, &h0_in, &c0_in})) {
    const bool need_w = w_hh_in.requires_grad(), need_h = h0_in.requires_grad(), need_c = c0_in.requires_grad();
    const Tensor hc_saved = hc.detach();
    record(hc, "LstmBackward", {xproj_in, w_hh_in, h0_in, c0_in},
           [hc_saved, acts, w, h0, c0, T, B, H, dt, need_w, need_h, need_c](const Tensor& g_in) -> std::vector<Tensor> {
             if (grad_enabled()) throw SpiralError("RNN: double backward (create_graph=True) through the fused recurrence is not supported");
             NoGradGuard ng;
             const Tensor g = contig(g_in.to(dt));
             Tensor dx = Tensor::empty({T, B, 4 * H}, dt, g.device());
             Tensor dw = need_w ? Tensor::empty({4 * H, H}, dt, g.device()) : Tensor();
             Tensor dh0 = need_h ? Tensor::empty({B, H}, dt, g.device()) : Tensor();
             Tensor dc0 = need_c ? Tensor::empty({B, H}, dt, g.device()) : Tensor();
             dispatch_float(dt, [&](auto tag) {
               using S = decltype(tag);
               lstm_backward_kernel<S>(g.data<S>(), hc_saved.data<S>(), acts.data<S>(), w, h0.data<S>(),
                                       c0.data<S>(), dx.data<S>(), need_w ? dw.data<S>() : nullptr,
                                       need_h ? dh0.data<S>() : nullptr, need_c ? dc0.data<S>() : nullptr, T, B, H);
             });
             return {dx, dw, dh0, dc0};
           },
           {hc_saved, w, h0, c0});
  }
  return hc;
}

Tensor gru_recurrence(const Tensor& xproj_in, const Tensor& w_hh_in, const Tensor& b_hh_in, const Tensor& h0_in) {
  check_recurrence_args("gru", xproj_in, w_hh_in, h0_in, 3);
  const Dtype dt = xproj_in.dtype();
  const int64_t T = xproj_in.shape()[0], B = xproj_in.shape()[1], H = w_hh_in.shape()[1];
  if (b_hh_in.defined() && (b_hh_in.shape() != Shape{3 * H} || b_hh_in.dtype() != dt)) {
    throw ShapeError("gru: b_hh of shape " + shape_str(b_hh_in.shape()) + ", expected " + shape_str({3 * H}));
  }
  if (!is_fast_dtype(dt)) {
    Tensor r = gru_recurrence(cast(xproj_in, Dtype::Float32), cast(w_hh_in, Dtype::Float32),
                              b_hh_in.defined() ? cast(b_hh_in, Dtype::Float32) : Tensor(),
                              cast(h0_in, Dtype::Float32));
    return cast(r, dt);
  }
  Tensor xproj = xproj_in.detach();
  if (xproj.strides()[2] != 1) xproj = xproj.contiguous();
  const Tensor w = contig(w_hh_in.detach()), h0 = contig(h0_in.detach());
  const Tensor bhh = b_hh_in.defined() ? contig(b_hh_in.detach()) : Tensor();
  Tensor hs = Tensor::empty({T, B, H}, dt, xproj.device());
  Tensor saved = Tensor::empty({T, B, 4 * H}, dt, xproj.device());
  dispatch_float(dt, [&](auto tag) {
    using S = decltype(tag);
    gru_forward_kernel<S>(xproj, w, bhh.defined() ? bhh.data<S>() : nullptr, h0.data<S>(), hs.data<S>(),
                          saved.data<S>(), T, B, H);
  });
  if (needs_grad({&xproj_in, &w_hh_in, &b_hh_in, &h0_in})) {
    const bool need_w = w_hh_in.requires_grad(), need_h = h0_in.requires_grad();
    const bool need_b = b_hh_in.defined() && b_hh_in.requires_grad();
    const Tensor hs_saved = hs.detach();
    record(hs, "GruBackward", {xproj_in, w_hh_in, b_hh_in, h0_in},
           [hs_saved, saved, w, h0, T, B, H, dt, need_w, need_h, need_b](const Tensor& g_in) -> std::vector<Tensor> {
             if (grad_enabled()) throw SpiralError("RNN: double backward (create_graph=True) through the fused recurrence is not supported");
             NoGradGuard ng;
             const Tensor g = contig(g_in.to(dt));
             Tensor dx = Tensor::empty({T, B, 3 * H}, dt, g.device());
             Tensor dgh = Tensor::empty({T, B, 3 * H}, dt, g.device());
             Tensor dw = need_w ? Tensor::empty({3 * H, H}, dt, g.device()) : Tensor();
             Tensor db = need_b ? Tensor::empty({3 * H}, dt, g.device()) : Tensor();
             Tensor dh0 = need_h ? Tensor::empty({B, H}, dt, g.device()) : Tensor();
             dispatch_float(dt, [&](auto tag) {
               using S = decltype(tag);
               gru_backward_kernel<S>(g.data<S>(), hs_saved.data<S>(), saved.data<S>(), w, h0.data<S>(),
                                      dx.data<S>(), dgh.data<S>(), need_w ? dw.data<S>() : nullptr,
                                      need_b ? db.data<S>() : nullptr, need_h ? dh0.data<S>() : nullptr, T, B, H);
             });
             return {dx, dw, db, dh0};
           },
           {hs_saved, w, h0});
  }
  return hs;
}

// ---------------------------------------------------------------- modules

RNNBase::RNNBase(int64_t gate_mult, int64_t input_size, int64_t hidden_size, int64_t num_layers, bool bias,
                 bool batch_first, double dropout, std::string name)
    : Module(std::move(name)),
      gate_mult_(gate_mult),
      input_size_(input_size),
      hidden_size_(hidden_size),
      num_layers_(num_layers),
      bias_(bias),
      batch_first_(batch_first),
      dropout_(dropout) {
  const char* kind = gate_mult == 4 ? "LSTM" : "GRU";
  if (input_size <= 0 || hidden_size <= 0 || num_layers <= 0) {
    throw ValueError(std::string(kind) + ": input_size, hidden_size and num_layers must be positive, got " +
                     std::to_string(input_size) + ", " + std::to_string(hidden_size) + " and " +
                     std::to_string(num_layers));
  }
  if (!(dropout >= 0.0 && dropout <= 1.0)) {
    throw ValueError(std::string(kind) + ": dropout must be a probability in [0, 1], got " + std::to_string(dropout));
  }
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  const int64_t G = gate_mult * hidden_size;
  for (int64_t l = 0; l < num_layers; ++l) {
    const std::string s = std::to_string(l);
    const int64_t in = l == 0 ? input_size : hidden_size;
    register_parameter("weight_ih_l" + s, init::uniform({G, in}, bound));
    register_parameter("weight_hh_l" + s, init::uniform({G, hidden_size}, bound));
    if (bias) {
      register_parameter("bias_ih_l" + s, init::uniform({G}, bound));
      register_parameter("bias_hh_l" + s, init::uniform({G}, bound));
    }
  }
}

Tensor RNNBase::b_ih(int64_t layer) {
  Tensor* b = find_parameter("bias_ih_l" + std::to_string(layer));
  return b ? *b : Tensor();
}

Tensor RNNBase::b_hh(int64_t layer) {
  Tensor* b = find_parameter("bias_hh_l" + std::to_string(layer));
  return b ? *b : Tensor();
}

std::pair<Tensor, bool> RNNBase::prepare_input(const Tensor& input, const char* op) const {
  if (!input.defined() || (input.dim() != 2 && input.dim() != 3)) {
    throw ShapeError(std::string(op) + ": expected a 2-d (unbatched) or 3-d input, got shape " +
                     (input.defined() ? shape_str(input.shape()) : std::string("undefined")));
  }
  if (input.shape().back() != input_size_) {
    throw ShapeError(std::string(op) + ": input of shape " + shape_str(input.shape()) + " has " +
                     std::to_string(input.shape().back()) + " features, expected input_size=" +
                     std::to_string(input_size_));
  }
  if (!is_floating(input.dtype())) {
    throw DtypeError(std::string(op) + ": expected a floating input, got " + dtype_name(input.dtype()));
  }
  const int64_t seq = input.dim() == 2 || !batch_first_ ? input.shape()[0] : input.shape()[1];
  if (seq == 0) throw ShapeError(std::string(op) + ": expected a sequence of length at least 1, got shape " + shape_str(input.shape()));
  if (input.dim() == 2) return {unsqueeze(input, 1), false};  // (seq, 1, feature)
  return {batch_first_ ? transpose(input, 0, 1) : input, true};
}

Tensor RNNBase::prepare_state(const std::optional<Tensor>& h, int64_t batch, bool batched, const Tensor& like,
                              const char* what) const {
  const Shape want = {num_layers_, batch, hidden_size_};
  if (!h || !h->defined()) return zeros(want, like.dtype(), like.device());
  Tensor s = *h;
  if (!batched && s.dim() == 2) s = unsqueeze(s, 1);
  if (s.shape() != want) {
    const Shape shown = batched ? want : Shape{num_layers_, hidden_size_};
    throw ShapeError(std::string(type_name()) + ": " + what + " of shape " + shape_str(h->shape()) + ", expected " +
                     shape_str(shown));
  }
  if (s.dtype() != like.dtype()) {
    throw DtypeError(type_name() + ": " + what + " has dtype " + dtype_name(s.dtype()) + " but the input has " +
                     dtype_name(like.dtype()));
  }
  return s;
}

Tensor RNNBase::finish_output(const Tensor& out_tm, bool batched) const {
  if (!batched) return squeeze(out_tm, 1);
  return batch_first_ ? transpose(out_tm, 0, 1) : out_tm;
}

Tensor RNNBase::inter_layer_dropout(const Tensor& x) const {
  if (!training_ || dropout_ == 0.0) return x;
  if (dropout_ >= 1.0) return mul(x, 0.0);
  Tensor keep = cast(ge(rand(x.shape(), x.dtype()), scalar_tensor(dropout_, x.dtype())), x.dtype());
  return mul(x, mul(keep, 1.0 / (1.0 - dropout_)));
}

LSTM::LSTM(int64_t input_size, int64_t hidden_size, int64_t num_layers, bool bias, bool batch_first, double dropout,
           std::string name)
    : RNNBase(4, input_size, hidden_size, num_layers, bias, batch_first, dropout, std::move(name)) {}

std::pair<Tensor, std::pair<Tensor, Tensor>> LSTM::forward_full(const Tensor& input, const std::optional<Tensor>& h0,
                                                                const std::optional<Tensor>& c0) {
  auto [x, batched] = prepare_input(input, "LSTM");
  const int64_t B = x.shape()[1];
  const Tensor hinit = prepare_state(h0, B, batched, x, "h0");
  const Tensor cinit = prepare_state(c0, B, batched, x, "c0");
  std::vector<Tensor> hn, cn;
  Tensor layer_in = x;
  for (int64_t l = 0; l < num_layers_; ++l) {
    Tensor xp = matmul(layer_in, t(w_ih(l)));
    if (bias_) xp = add(xp, add(b_ih(l), b_hh(l)));
    const Tensor hc = lstm_recurrence(xp, w_hh(l), select(hinit, 0, l), select(cinit, 0, l));
    const Tensor hs = select(hc, 0, 0), cs = select(hc, 0, 1);
    const int64_t T = hs.shape()[0];
    hn.push_back(select(hs, 0, T - 1));
    cn.push_back(select(cs, 0, T - 1));
    layer_in = l + 1 < num_layers_ ? inter_layer_dropout(hs) : hs;
  }
  Tensor h_n = stack(hn, 0), c_n = stack(cn, 0);
  if (!batched) {
    h_n = squeeze(h_n, 1);
    c_n = squeeze(c_n, 1);
  }
  return {finish_output(layer_in, batched), {h_n, c_n}};
}

GRU::GRU(int64_t input_size, int64_t hidden_size, int64_t num_layers, bool bias, bool batch_first, double dropout,
         std::string name)
    : RNNBase(3, input_size, hidden_size, num_layers, bias, batch_first, dropout, std::move(name)) {}

std::pair<Tensor, Tensor> GRU::forward_full(const Tensor& input, const std::optional<Tensor>& h0) {
  auto [x, batched] = prepare_input(input, "GRU");
  const int64_t B = x.shape()[1];
  const Tensor hinit = prepare_state(h0, B, batched, x, "h0");
  std::vector<Tensor> hn;
  Tensor layer_in = x;
  for (int64_t l = 0; l < num_layers_; ++l) {
    Tensor xp = matmul(layer_in, t(w_ih(l)));
    if (bias_) xp = add(xp, b_ih(l));
    const Tensor hs = gru_recurrence(xp, w_hh(l), bias_ ? b_hh(l) : Tensor(), select(hinit, 0, l));
    hn.push_back(select(hs, 0, hs.shape()[0] - 1));
    layer_in = l + 1 < num_layers_ ? inter_layer_dropout(hs) : hs;
  }
  Tensor h_n = stack(hn, 0);
  if (!batched) h_n = squeeze(h_n, 1);
  return {finish_output(layer_in, batched), h_n};
}

}  // namespace st::nn
