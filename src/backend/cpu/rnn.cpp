// CPU kernels of the fused LSTM / GRU recurrences (src/nn/rnn.cpp records the autograd
// nodes): per time step one GEMM for the recurrent projection, then a vectorised gate
// loop. The CUDA counterparts live in src/backend/cuda/rnn.cu.
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "backend/cpu/kernels.h"
#include "backend/cpu/vmath.h"

namespace st::backend::cpu::CPU_CAPABILITY {  // compiled once per CPU capability (dispatch.h)

namespace {

// C (m x n, row-major, ldc) = op(A) @ op(B) + beta * C for one matrix.
void gemm1(Dtype dt, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda, const void* b,
           int64_t ldb, double beta, void* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  gemm(dt, ta, tb, m, n, k, 1.0, a, lda, 0, b, ldb, 0, beta, c, ldc, 0, 1);
}

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

template <typename T>
T* ptr_or_null(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}

// The recurrences run in one parallel region for all time steps: each thread owns a slice of
// the hidden units, computes that slice's columns of every gate with its own single-threaded
// GEMMs and then the slice's gate math, and the threads meet once per step (the next step needs
// the whole h_t). A parallel region or a multithreaded GEMM per step instead costs a fork/join
// and a hand-off between thread pools every step, and leaves the gate math on one thread.

// Threads for a recurrence over `hidden` units: slices of at least 32 units, and at least
// 2^16 multiply-adds of recurrent GEMM per thread and step (a barrier costs about a microsecond).
int recurrence_threads(int64_t batch, int64_t hidden, int64_t gates) {
  if (omp_in_parallel()) return 1;
  const int64_t by_width = hidden / 32, by_work = batch * gates * hidden * hidden >> 16;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>({omp_get_max_threads(), by_width, by_work})));
}

// Hidden units [lo, hi) of thread p of nt: multiples of 16 (whole SIMD vectors) except the last.
std::pair<int64_t, int64_t> hidden_slice(int64_t hidden, int p, int nt) {
  const int64_t chunk = ((hidden + nt - 1) / nt + 15) / 16 * 16;
  const int64_t lo = std::min<int64_t>(hidden, p * chunk);
  return {lo, std::min<int64_t>(hidden, lo + chunk)};
}

// C[:, q * hidden + lo, + w) (+)= op(A) @ rows (or columns) q * hidden + lo.. of W for each gate q:
// a thread's slice of every gate block.
void gate_gemms(Dtype dt, int64_t gates, int64_t hidden, int64_t lo, int64_t w, int64_t batch, const void* hprev,
                const void* W, int64_t wld, size_t esize, double beta, void* c, int64_t ldc) {
  for (int64_t q = 0; q < gates; ++q) {
    const int64_t col = q * hidden + lo;
    gemm1(dt, false, true, batch, w, hidden, hprev, hidden, static_cast<const char*>(W) + col * wld * esize, wld, beta,
          static_cast<char*>(c) + col * esize, ldc);
  }
}

// ---------------------------------------------------------------- LSTM

template <typename T>
void lstm_forward_impl(const Tensor& xproj, const Tensor& w, const T* h0, const T* c0, T* hc, T* acts, int64_t steps,
                       int64_t batch, int64_t hidden) {
  const Dtype dt = w.dtype();
  const int64_t G = 4 * hidden;
  const int64_t st_t = xproj.strides()[0], st_b = xproj.strides()[1];
  const T* xp = xproj.data<T>();
  const T* W = w.data<T>();
  const int64_t wld = w.strides()[0];
  T* hs = hc;
  T* cs = hc + steps * batch * hidden;
#pragma omp parallel num_threads(recurrence_threads(batch, hidden, 4))
  {
    const auto [lo, hi] = hidden_slice(hidden, omp_get_thread_num(), omp_get_num_threads());
    const int64_t n = hi - lo;
    for (int64_t t = 0; t < steps; ++t) {
      T* a = acts + t * batch * G;
      const T* hprev = t == 0 ? h0 : hs + (t - 1) * batch * hidden;
      const T* cprev = t == 0 ? c0 : cs + (t - 1) * batch * hidden;
      T* hout = hs + t * batch * hidden;
      T* cout = cs + t * batch * hidden;
      if (n > 0) {
        for (int64_t b = 0; b < batch; ++b) {
          for (int64_t q = 0; q < 4; ++q) {
            std::memcpy(a + b * G + q * hidden + lo, xp + t * st_t + b * st_b + q * hidden + lo, sizeof(T) * n);
          }
        }
        gate_gemms(dt, 4, hidden, lo, n, batch, hprev, W, wld, sizeof(T), 1.0, a, G);
        for (int64_t b = 0; b < batch; ++b) {
          T* ab = a + b * G + lo;
          const T* cp = cprev + b * hidden + lo;
          T* ho = hout + b * hidden + lo;
          T* co = cout + b * hidden + lo;
          sigmoid_inplace(ab, n);
          sigmoid_inplace(ab + hidden, n);
          tanh_to(ab + 2 * hidden, ab + 2 * hidden, n);
          sigmoid_inplace(ab + 3 * hidden, n);
#pragma omp simd
          for (int64_t j = 0; j < n; ++j) co[j] = ab[hidden + j] * cp[j] + ab[j] * ab[2 * hidden + j];
          tanh_to(co, ho, n);
#pragma omp simd
          for (int64_t j = 0; j < n; ++j) ho[j] *= ab[3 * hidden + j];
        }
      }
#pragma omp barrier
    }
  }
}

template <typename T>
void lstm_backward_impl(const T* ghc, const T* hc, const T* acts, const Tensor& w, const T* h0, const T* c0, T* dx,
                        T* dw, T* dh0, T* dc0, int64_t steps, int64_t batch, int64_t hidden) {
  const Dtype dt = w.dtype();
  const int64_t G = 4 * hidden, BH = batch * hidden;
  const T* hs = hc;
  const T* cs = hc + steps * BH;
  const T* gh = ghc;
  const T* gc = ghc + steps * BH;
  const T* W = w.data<T>();
  const int64_t wld = w.strides()[0];
  std::vector<T> dc(BH, T(0)), dhrec(BH, T(0));
#pragma omp parallel num_threads(recurrence_threads(batch, hidden, 4))
  {
    const auto [lo, hi] = hidden_slice(hidden, omp_get_thread_num(), omp_get_num_threads());
    const int64_t n = hi - lo;
    std::vector<T> tcv(n);
    for (int64_t t = steps - 1; t >= 0; --t) {
      const T* a = acts + t * batch * G;
      const T* cprev = t == 0 ? c0 : cs + (t - 1) * BH;
      const T* ct = cs + t * BH;
      T* d = dx + t * batch * G;
      for (int64_t b = 0; b < batch && n > 0; ++b) {
        const T* ab = a + b * G + lo;
        T* db = d + b * G + lo;
        const T* cp = cprev + b * hidden + lo;
        const T* cc = ct + b * hidden + lo;
        const T* ghb = gh + t * BH + b * hidden + lo;
        const T* gcb = gc + t * BH + b * hidden + lo;
        const T* dhr = dhrec.data() + b * hidden + lo;
        T* dcb = dc.data() + b * hidden + lo;
        tanh_to(cc, tcv.data(), n);
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) {
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
      // Every slice of dgates_t is needed for this thread's columns of dh_{t-1} = dgates_t @ W_hh;
      // the next step reads only this thread's columns, so one barrier per step suffices.
#pragma omp barrier
      if (n > 0) gemm1(dt, false, false, batch, n, G, d, G, W + lo, wld, 0.0, dhrec.data() + lo, hidden);
    }
  }
  if (dh0) std::memcpy(dh0, dhrec.data(), sizeof(T) * BH);
  if (dc0) std::memcpy(dc0, dc.data(), sizeof(T) * BH);
  if (dw) {
    // dW = sum_t dgates_t^T h_{t-1}
    gemm1(dt, true, false, G, hidden, batch, dx, G, h0, hidden, 0.0, dw, hidden);
    if (steps > 1)
      gemm1(dt, true, false, G, hidden, (steps - 1) * batch, dx + batch * G, G, hs, hidden, 1.0, dw, hidden);
  }
}

// ---------------------------------------------------------------- GRU

template <typename T>
void gru_forward_impl(const Tensor& xproj, const Tensor& w, const T* bhh, const T* h0, T* hs, T* saved, int64_t steps,
                      int64_t batch, int64_t hidden) {
  const Dtype dt = w.dtype();
  const int64_t G = 3 * hidden, S = 4 * hidden;
  const int64_t st_t = xproj.strides()[0], st_b = xproj.strides()[1];
  const T* xp = xproj.data<T>();
  const T* W = w.data<T>();
  const int64_t wld = w.strides()[0];
  std::vector<T> gh(batch * G), zero_bias(bhh ? 0 : G, T(0));
  const T* bias = bhh ? bhh : zero_bias.data();
#pragma omp parallel num_threads(recurrence_threads(batch, hidden, 3))
  {
    const auto [lo, hi] = hidden_slice(hidden, omp_get_thread_num(), omp_get_num_threads());
    const int64_t n = hi - lo;
    for (int64_t t = 0; t < steps; ++t) {
      const T* hprev = t == 0 ? h0 : hs + (t - 1) * batch * hidden;
      T* hout = hs + t * batch * hidden;
      if (n > 0) gate_gemms(dt, 3, hidden, lo, n, batch, hprev, W, wld, sizeof(T), 0.0, gh.data(), G);
      for (int64_t b = 0; b < batch && n > 0; ++b) {
        const T* x = xp + t * st_t + b * st_b + lo;
        T* g = gh.data() + b * G + lo;
        const T* hp = hprev + b * hidden + lo;
        T* sv = saved + (t * batch + b) * S + lo;
        T* ho = hout + b * hidden + lo;
        const T* bi = bias + lo;
        for (int64_t q = 0; q < 2; ++q) {  // r and z
          const int64_t o = q * hidden;
#pragma omp simd
          for (int64_t j = 0; j < n; ++j) sv[o + j] = x[o + j] + g[o + j] + bi[o + j];
          sigmoid_inplace(sv + o, n);
        }
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) {
          const T ghn = g[2 * hidden + j] + bi[2 * hidden + j];
          sv[3 * hidden + j] = ghn;
          g[j] = x[2 * hidden + j] + sv[j] * ghn;
        }
        tanh_to(g, sv + 2 * hidden, n);
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) {
          const T z = sv[hidden + j], nn = sv[2 * hidden + j];
          ho[j] = (T(1) - z) * nn + z * hp[j];
        }
      }
#pragma omp barrier
    }
  }
}

template <typename T>
void gru_backward_impl(const T* ghs, const T* hs, const T* saved, const Tensor& w, const T* h0, T* dx, T* dgh, T* dw,
                       T* dbhh, T* dh0, int64_t steps, int64_t batch, int64_t hidden) {
  const Dtype dt = w.dtype();
  const int64_t G = 3 * hidden, S = 4 * hidden, BH = batch * hidden;
  const T* W = w.data<T>();
  const int64_t wld = w.strides()[0];
  // dh flows through two buffers taking turns (step t reads one, writes the other); each thread
  // touches only its own columns of either, so no swap has to be shared.
  std::vector<T> dbuf(2 * BH, T(0));
#pragma omp parallel num_threads(recurrence_threads(batch, hidden, 3))
  {
    const auto [lo, hi] = hidden_slice(hidden, omp_get_thread_num(), omp_get_num_threads());
    const int64_t n = hi - lo;
    for (int64_t t = steps - 1; t >= 0; --t) {
      const int64_t turn = (steps - 1 - t) % 2;
      const T* dhrec = dbuf.data() + turn * BH;
      T* next = dbuf.data() + (1 - turn) * BH;
      const T* hprev = t == 0 ? h0 : hs + (t - 1) * BH;
      for (int64_t b = 0; b < batch && n > 0; ++b) {
        const T* sv = saved + (t * batch + b) * S + lo;
        const T* hp = hprev + b * hidden + lo;
        const T* go = ghs + t * BH + b * hidden + lo;
        const T* dr = dhrec + b * hidden + lo;
        T* nx = next + b * hidden + lo;
        T* dxb = dx + (t * batch + b) * G + lo;
        T* dgb = dgh + (t * batch + b) * G + lo;
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) {
          const T r = sv[j], z = sv[hidden + j], nn = sv[2 * hidden + j], ghn = sv[3 * hidden + j];
          const T dh = go[j] + dr[j];
          const T dpn = dh * (T(1) - z) * (T(1) - nn * nn);
          const T dpz = dh * (hp[j] - nn) * z * (T(1) - z);
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
#pragma omp barrier
      if (n > 0) gemm1(dt, false, false, batch, n, G, dgh + t * batch * G, G, W + lo, wld, 1.0, next + lo, hidden);
    }
  }
  if (dh0) std::memcpy(dh0, dbuf.data() + (steps % 2) * BH, sizeof(T) * BH);
  if (dw) {
    gemm1(dt, true, false, G, hidden, batch, dgh, G, h0, hidden, 0.0, dw, hidden);
    if (steps > 1)
      gemm1(dt, true, false, G, hidden, (steps - 1) * batch, dgh + batch * G, G, hs, hidden, 1.0, dw, hidden);
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

}  // namespace

void lstm_forward(const Tensor& xproj, const Tensor& w, const Tensor& h0, const Tensor& c0, Tensor& hc, Tensor& acts) {
  const int64_t steps = xproj.shape()[0], batch = xproj.shape()[1], hidden = w.shape()[1];
  dispatch_float(w.dtype(), [&](auto tag) {
    using S = decltype(tag);
    lstm_forward_impl<S>(xproj, w, h0.data<S>(), c0.data<S>(), hc.data<S>(), acts.data<S>(), steps, batch, hidden);
  });
}

void lstm_backward(const Tensor& g, const Tensor& hc, const Tensor& acts, const Tensor& w, const Tensor& h0,
                   const Tensor& c0, Tensor& dx, Tensor& dw, Tensor& dh0, Tensor& dc0) {
  const int64_t steps = hc.shape()[1], batch = hc.shape()[2], hidden = hc.shape()[3];
  dispatch_float(w.dtype(), [&](auto tag) {
    using S = decltype(tag);
    lstm_backward_impl<S>(g.data<S>(), hc.data<S>(), acts.data<S>(), w, h0.data<S>(), c0.data<S>(), dx.data<S>(),
                          ptr_or_null<S>(dw), ptr_or_null<S>(dh0), ptr_or_null<S>(dc0), steps, batch, hidden);
  });
}

void gru_forward(const Tensor& xproj, const Tensor& w, const Tensor& bhh, const Tensor& h0, Tensor& hs, Tensor& saved) {
  const int64_t steps = xproj.shape()[0], batch = xproj.shape()[1], hidden = w.shape()[1];
  dispatch_float(w.dtype(), [&](auto tag) {
    using S = decltype(tag);
    gru_forward_impl<S>(xproj, w, ptr_or_null<S>(bhh), h0.data<S>(), hs.data<S>(), saved.data<S>(), steps, batch,
                        hidden);
  });
}

void gru_backward(const Tensor& g, const Tensor& hs, const Tensor& saved, const Tensor& w, const Tensor& h0, Tensor& dx,
                  Tensor& dw, Tensor& dbhh, Tensor& dh0) {
  const int64_t steps = hs.shape()[0], batch = hs.shape()[1], hidden = hs.shape()[2];
  Tensor dgh = Tensor::empty({steps, batch, 3 * hidden}, w.dtype());
  dispatch_float(w.dtype(), [&](auto tag) {
    using S = decltype(tag);
    gru_backward_impl<S>(g.data<S>(), hs.data<S>(), saved.data<S>(), w, h0.data<S>(), dx.data<S>(), dgh.data<S>(),
                         ptr_or_null<S>(dw), ptr_or_null<S>(dbhh), ptr_or_null<S>(dh0), steps, batch, hidden);
  });
}

}  // namespace st::backend::cpu::CPU_CAPABILITY
