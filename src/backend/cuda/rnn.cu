// The fused LSTM / GRU recurrences on the GPU. Each time step is one GEMM through
// backend::cuda::gemm (cuBLAS) for the recurrent projection h_{t-1} W_hh^T plus one fused
// pointwise kernel for the gates (one thread per (batch, hidden unit)); the backward
// mirrors it in reverse time. Same formulas, gate order and saved tensors as the CPU
// kernels in src/backend/cpu/rnn.cpp.
#include "backend/cuda/checks.cuh"
#include "backend/cuda/common.cuh"
#include "backend/cuda/kernels.h"

namespace st::backend::cuda {

namespace {

template <typename T>
__device__ inline T sigmoid_d(T v) {
  return T(1) / (T(1) + exp(-v));
}

// Row-major C (m x n) = op(A) op(B) + beta C on the current stream.
void gemm1(Dtype dt, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda, const void* b,
           int64_t ldb, double beta, void* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  gemm(dt, ta, tb, m, n, k, 1.0, a, lda, 0, b, ldb, 0, beta, c, ldc, 0, 1);
}

void copy_d2d(void* dst, const void* src, size_t bytes) {
  if (bytes > 0) ST_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream()));
}

void zero(void* p, size_t bytes) {
  if (bytes > 0) ST_CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, stream()));
}

}  // namespace

void lstm_forward(const Tensor& xproj, const Tensor& w, const Tensor& h0, const Tensor& c0, Tensor& hc, Tensor& acts) {
  require_float32_or_64(w, "lstm_forward");
  const Dtype dt = w.dtype();
  const int64_t steps = xproj.shape()[0], B = xproj.shape()[1], H = w.shape()[1], G = 4 * H, BH = B * H;
  const int64_t st_t = xproj.strides()[0], st_b = xproj.strides()[1];
  ST_CUDA_FLOAT_CASES(dt, {
    const T* xp = static_cast<const T*>(xproj.raw_data());
    const T* W = static_cast<const T*>(w.raw_data());
    T* a = static_cast<T*>(acts.raw_data());
    T* hs = static_cast<T*>(hc.raw_data());
    T* cs = hs + steps * BH;
    // acts starts as the input projections (strided xproj -> contiguous), then each step
    // adds h_{t-1} W_hh^T and turns its slice into gate activations in place.
    for_n(steps * B * G, [=] __device__(int64_t e) {
      const int64_t j = e % G, r = e / G, b = r % B, t = r / B;
      a[e] = xp[t * st_t + b * st_b + j];
    });
    for (int64_t t = 0; t < steps; ++t) {
      T* at = a + t * B * G;
      const T* hprev = t == 0 ? static_cast<const T*>(h0.raw_data()) : hs + (t - 1) * BH;
      const T* cprev = t == 0 ? static_cast<const T*>(c0.raw_data()) : cs + (t - 1) * BH;
      gemm1(dt, false, true, B, G, H, hprev, H, W, H, 1.0, at, G);
      T* hout = hs + t * BH;
      T* cout = cs + t * BH;
      for_n(BH, [=] __device__(int64_t e) {
        const int64_t b = e / H, j = e - b * H;
        T* ab = at + b * G;
        const T ig = sigmoid_d(ab[j]), fg = sigmoid_d(ab[H + j]), gg = tanh(ab[2 * H + j]),
                og = sigmoid_d(ab[3 * H + j]);
        ab[j] = ig;
        ab[H + j] = fg;
        ab[2 * H + j] = gg;
        ab[3 * H + j] = og;
        const T c = fg * cprev[e] + ig * gg;
        cout[e] = c;
        hout[e] = tanh(c) * og;
      });
    }
  });
}

void lstm_backward(const Tensor& g, const Tensor& hc, const Tensor& acts, const Tensor& w, const Tensor& h0,
                   const Tensor& c0, Tensor& dx, Tensor& dw, Tensor& dh0, Tensor& dc0) {
  require_float32_or_64(w, "lstm_backward");
  const Dtype dt = w.dtype();
  const int64_t steps = hc.shape()[1], B = hc.shape()[2], H = hc.shape()[3], G = 4 * H, BH = B * H;
  // dc: the cell-state gradient carried backwards; dhrec: dh_{t-1} from the recurrence.
  Tensor dc_t = Tensor::empty({B, H}, dt, w.device()), dhrec_t = Tensor::empty({B, H}, dt, w.device());
  ST_CUDA_FLOAT_CASES(dt, {
    const T* gh = static_cast<const T*>(g.raw_data());
    const T* gc = gh + steps * BH;
    const T* hs = static_cast<const T*>(hc.raw_data());
    const T* cs = hs + steps * BH;
    const T* a = static_cast<const T*>(acts.raw_data());
    const T* W = static_cast<const T*>(w.raw_data());
    const T* c0p = static_cast<const T*>(c0.raw_data());
    T* d = static_cast<T*>(dx.raw_data());
    T* dc = static_cast<T*>(dc_t.raw_data());
    T* dhrec = static_cast<T*>(dhrec_t.raw_data());
    zero(dc, sizeof(T) * BH);
    zero(dhrec, sizeof(T) * BH);
    for (int64_t t = steps - 1; t >= 0; --t) {
      const T* at = a + t * B * G;
      const T* cprev = t == 0 ? c0p : cs + (t - 1) * BH;
      const T* ct = cs + t * BH;
      const T* ght = gh + t * BH;
      const T* gct = gc + t * BH;
      T* dgates = d + t * B * G;
      for_n(BH, [=] __device__(int64_t e) {
        const int64_t b = e / H, j = e - b * H;
        const T* ab = at + b * G;
        T* db = dgates + b * G;
        const T i = ab[j], f = ab[H + j], gg = ab[2 * H + j], o = ab[3 * H + j];
        const T dht = ght[e] + dhrec[e];
        const T tc = tanh(ct[e]);
        const T dct = gct[e] + dc[e] + dht * o * (T(1) - tc * tc);
        db[j] = dct * gg * i * (T(1) - i);
        db[H + j] = dct * cprev[e] * f * (T(1) - f);
        db[2 * H + j] = dct * i * (T(1) - gg * gg);
        db[3 * H + j] = dht * tc * o * (T(1) - o);
        dc[e] = dct * f;
      });
      // dh_{t-1} = dgates_t @ W_hh
      gemm1(dt, false, false, B, H, G, dgates, G, W, H, 0.0, dhrec, H);
    }
    if (dh0.defined()) copy_d2d(dh0.raw_data(), dhrec, sizeof(T) * BH);
    if (dc0.defined()) copy_d2d(dc0.raw_data(), dc, sizeof(T) * BH);
    if (dw.defined()) {
      // dW = sum_t dgates_t^T h_{t-1}
      gemm1(dt, true, false, G, H, B, d, G, h0.raw_data(), H, 0.0, dw.raw_data(), H);
      if (steps > 1) gemm1(dt, true, false, G, H, (steps - 1) * B, d + B * G, G, hs, H, 1.0, dw.raw_data(), H);
    }
  });
}

void gru_forward(const Tensor& xproj, const Tensor& w, const Tensor& bhh, const Tensor& h0, Tensor& hs_out,
                 Tensor& saved) {
  require_float32_or_64(w, "gru_forward");
  const Dtype dt = w.dtype();
  const int64_t steps = xproj.shape()[0], B = xproj.shape()[1], H = w.shape()[1], G = 3 * H, S = 4 * H, BH = B * H;
  const int64_t st_t = xproj.strides()[0], st_b = xproj.strides()[1];
  Tensor gh_t = Tensor::empty({B, G}, dt, w.device());  // h_{t-1} W_hh^T of the current step
  ST_CUDA_FLOAT_CASES(dt, {
    const T* xp = static_cast<const T*>(xproj.raw_data());
    const T* W = static_cast<const T*>(w.raw_data());
    const T* bias = bhh.defined() ? static_cast<const T*>(bhh.raw_data()) : nullptr;
    T* gh = static_cast<T*>(gh_t.raw_data());
    T* hs = static_cast<T*>(hs_out.raw_data());
    T* sv = static_cast<T*>(saved.raw_data());
    for (int64_t t = 0; t < steps; ++t) {
      const T* hprev = t == 0 ? static_cast<const T*>(h0.raw_data()) : hs + (t - 1) * BH;
      gemm1(dt, false, true, B, G, H, hprev, H, W, H, 0.0, gh, G);
      T* hout = hs + t * BH;
      const T* xt = xp + t * st_t;
      T* svt = sv + t * B * S;
      for_n(BH, [=] __device__(int64_t e) {
        const int64_t b = e / H, j = e - b * H;
        const T* x = xt + b * st_b;
        const T* g = gh + b * G;
        T* s = svt + b * S;
        const T br = bias ? bias[j] : T(0), bz = bias ? bias[H + j] : T(0), bn = bias ? bias[2 * H + j] : T(0);
        const T r = sigmoid_d(x[j] + g[j] + br);
        const T z = sigmoid_d(x[H + j] + g[H + j] + bz);
        const T ghn = g[2 * H + j] + bn;
        const T n = tanh(x[2 * H + j] + r * ghn);
        s[j] = r;
        s[H + j] = z;
        s[2 * H + j] = n;
        s[3 * H + j] = ghn;
        hout[e] = (T(1) - z) * n + z * hprev[e];
      });
    }
  });
}

void gru_backward(const Tensor& g, const Tensor& hs_in, const Tensor& saved, const Tensor& w, const Tensor& h0,
                  Tensor& dx, Tensor& dw, Tensor& dbhh, Tensor& dh0) {
  require_float32_or_64(w, "gru_backward");
  const Dtype dt = w.dtype();
  const int64_t steps = hs_in.shape()[0], B = hs_in.shape()[1], H = hs_in.shape()[2], G = 3 * H, S = 4 * H, BH = B * H;
  // dgh: the gradient w.r.t. h_{t-1} W_hh^T + b_hh per step (feeds dW and db);
  // dhrec / next: dh_t carried backwards (double-buffered).
  Tensor dgh_t = Tensor::empty({steps, B, G}, dt, w.device());
  Tensor dhrec_t = Tensor::empty({B, H}, dt, w.device()), next_t = Tensor::empty({B, H}, dt, w.device());
  ST_CUDA_FLOAT_CASES(dt, {
    const T* go = static_cast<const T*>(g.raw_data());
    const T* hs = static_cast<const T*>(hs_in.raw_data());
    const T* sv = static_cast<const T*>(saved.raw_data());
    const T* W = static_cast<const T*>(w.raw_data());
    const T* h0p = static_cast<const T*>(h0.raw_data());
    T* d = static_cast<T*>(dx.raw_data());
    T* dgh = static_cast<T*>(dgh_t.raw_data());
    T* dhrec = static_cast<T*>(dhrec_t.raw_data());
    T* next = static_cast<T*>(next_t.raw_data());
    zero(dhrec, sizeof(T) * BH);
    for (int64_t t = steps - 1; t >= 0; --t) {
      const T* hprev = t == 0 ? h0p : hs + (t - 1) * BH;
      const T* svt = sv + t * B * S;
      const T* got = go + t * BH;
      T* dxt = d + t * B * G;
      T* dgt = dgh + t * B * G;
      const T* dr = dhrec;
      T* nx = next;
      for_n(BH, [=] __device__(int64_t e) {
        const int64_t b = e / H, j = e - b * H;
        const T* s = svt + b * S;
        const T r = s[j], z = s[H + j], n = s[2 * H + j], ghn = s[3 * H + j];
        const T dh = got[e] + dr[e];
        const T dpn = dh * (T(1) - z) * (T(1) - n * n);
        const T dpz = dh * (hprev[e] - n) * z * (T(1) - z);
        const T dpr = dpn * ghn * r * (T(1) - r);
        T* dxb = dxt + b * G;
        T* dgb = dgt + b * G;
        dxb[j] = dpr;
        dxb[H + j] = dpz;
        dxb[2 * H + j] = dpn;
        dgb[j] = dpr;
        dgb[H + j] = dpz;
        dgb[2 * H + j] = dpn * r;
        nx[e] = dh * z;
      });
      // dh_{t-1} = dh_t * z + dgh_t @ W_hh
      gemm1(dt, false, false, B, H, G, dgt, G, W, H, 1.0, next, H);
      T* tmp = dhrec;
      dhrec = next;
      next = tmp;
    }
    if (dh0.defined()) copy_d2d(dh0.raw_data(), dhrec, sizeof(T) * BH);
    if (dw.defined()) {
      gemm1(dt, true, false, G, H, B, dgh, G, h0p, H, 0.0, dw.raw_data(), H);
      if (steps > 1) gemm1(dt, true, false, G, H, (steps - 1) * B, dgh + B * G, G, hs, H, 1.0, dw.raw_data(), H);
    }
  });
  if (dbhh.defined()) reduce(backend::ReduceOp::Sum, dgh_t, 1, steps * B, G, dbhh);
}

}  // namespace st::backend::cuda
