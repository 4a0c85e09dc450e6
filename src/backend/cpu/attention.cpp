// CPU attention kernels (src/nn/attention.cpp's fused path).
//
// The tiled flash attention (Backend::flash_attention, flash_attention_masked): softmax(scale q k^T
// [+ causal mask] [+ an additive mask, read through its strides]) v with an online softmax over key
// blocks, so no (L, S) buffer of scores exists; the forward keeps only each
// row's log-sum-exp, and the backward recomputes the probabilities block by block from it
// (FlashAttention-2's recurrence, the scheme of PyTorch's CPU kernel). The block products go to
// OpenBLAS single-threaded inside our OpenMP loop (what gemm.cpp does for large GEMMs); the
// exp/max/scale loops between them are the vectorised part compiled per capability. float32 and
// float64; bfloat16/float16 operands are widened to float32 copies for the call (the CPU's gemm
// takes no 16-bit operands), so what the caller keeps stays half. Dropout on the probabilities
// (DropoutDraw) draws dropout()'s Philox mask per row of a key block, in the forward and again in
// the backward, so no (L, S) mask exists either.
//
// The attention softmax of the GEMM path (backends without flash kernels keep using that path;
// on the CPU it serves what the tiled kernel refuses): per row of the raw scores, the scaled,
// causally masked softmax with its log-sum-exp, and the elementwise part of its backward. Half
// types are read and written as such and computed in float32.
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "backend/cpu/dropout.h"
#include "backend/cpu/gemm_library.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"
#include "backend/cpu/mkl_runtime.h"
#include "backend/cpu/vmath.h"

namespace st::backend::cpu::CPU_CAPABILITY {  // compiled once per CPU capability (dispatch.h)

namespace {

template <typename F>
void dispatch_attn(Dtype dt, F f) {
  switch (dt) {
    case Dtype::Float64:
      return f(double{});
    case Dtype::Float16:
      return f(Half{});
    case Dtype::BFloat16:
      return f(BFloat16{});
    default:
      return f(float{});
  }
}

// Columns of row i that are not masked.
inline int64_t visible(int64_t i, int64_t S, bool causal) { return causal ? std::min(S, i + 1) : S; }

}  // namespace

void attention_softmax(const Tensor& s, int64_t batch, int64_t L, int64_t S, double scale, bool causal, Tensor& p,
                       Tensor& lse) {
  const int64_t rows = batch * L;
  if (rows == 0) return;
  dispatch_attn(s.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
    A* lp = lse.data<A>();
    const T* in = s.data<T>();
    T* out = p.data<T>();
#pragma omp parallel for num_threads(num_threads_for(rows* S * 4)) schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t n = visible(r % L, S, causal);
      const T* x = in + r * S;
      T* y = out + r * S;
      A m = -std::numeric_limits<A>::infinity();
      for (int64_t j = 0; j < n; ++j) m = std::max(m, static_cast<A>(scale) * static_cast<A>(x[j]));
      if (n == 0 || !std::isfinite(m)) {
        for (int64_t j = 0; j < S; ++j) y[j] = T(0.0f);
        lp[r] = n == 0 ? -std::numeric_limits<A>::infinity() : m;
        continue;
      }
      const A sc = static_cast<A>(scale);
      A sum = 0;
#pragma omp simd reduction(+ : sum)
      for (int64_t j = 0; j < n; ++j) sum += vexp(sc * static_cast<A>(x[j]) - m);
      const A inv = A(1) / sum;
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) y[j] = T(vexp(sc * static_cast<A>(x[j]) - m) * inv);
      for (int64_t j = n; j < S; ++j) y[j] = T(0.0f);
      lp[r] = m + std::log(sum);
    }
  });
}

void attention_softmax_backward(Tensor& s, Tensor& dp, const Tensor& lse, const Tensor& delta, int64_t batch, int64_t L,
                                int64_t S, double scale, bool causal) {
  const int64_t rows = batch * L;
  if (rows == 0) return;
  dispatch_attn(s.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const A* lp = lse.data<A>();
    const A* dl = delta.data<A>();
    T* sp = s.data<T>();
    T* gp = dp.data<T>();
#pragma omp parallel for num_threads(num_threads_for(rows* S * 4)) schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t n = visible(r % L, S, causal);
      const A l = lp[r], d = dl[r];
      T* x = sp + r * S;
      T* g = gp + r * S;
      const A sc = static_cast<A>(scale);
      const int64_t live = std::isfinite(l) ? n : 0;  // a fully masked row has p = 0
#pragma omp simd
      for (int64_t j = 0; j < live; ++j) {
        const A pj = vexp(sc * static_cast<A>(x[j]) - l);
        x[j] = T(pj);
        g[j] = T(sc * pj * (static_cast<A>(g[j]) - d));
      }
      for (int64_t j = live; j < S; ++j) {
        x[j] = T(0.0f);
        g[j] = T(sc * A(0) * (static_cast<A>(g[j]) - d));  // 0, or NaN where dp is not finite
      }
    }
  });
}

// ---- tiled flash attention ----

namespace {

// Block sizes, rows of q by keys. Each block product is large enough that a BLAS call's overhead
// and its packing stay a few percent, and small enough that a thread's score blocks stay in L2;
// causal tiles on the diagonal are cut at the last visible key. The forward takes 256 x 512 (the
// backward's two score blocks and three accumulators want 128 x 256): on an Intel Xeon (2 threads,
// 8 heads, d=64, MKL) the forward at 256 x 512 took 0.81-0.96x the time of 128 x 256 at T = 2048-8192
// (each K/V block is re-read half as often), the backward at 128 x 256 0.8-1.1x that of 256 x 512.
// On an AMD EPYC (OpenBLAS) 128 x 256 was 3-9% faster than 64 x 256 at T = 4096-8192, and 256 x 512
// no better than 128 x 256.
constexpr int64_t kForwardRows = 256;
constexpr int64_t kForwardKeys = 512;
constexpr int64_t kBackwardRows = 128;
constexpr int64_t kBackwardKeys = 256;

// One block product, C = alpha op(A) op(B) + beta C, single-threaded (we are inside the OpenMP loop).
// The library is gemm_library.h's rule where it picks MKL (Intel CPUs with MKL: 1.2-1.3x faster
// kernels at these shapes on an Intel Xeon), else OpenBLAS (oneDNN's per-call primitive lookup costs
// more than it gains on products this small; the AMD figures in attention_long_cpu.md are OpenBLAS's).
template <typename T>
void gemm_block(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
                int64_t ldb, T beta, T* c, int64_t ldc) {
  constexpr bool f64 = std::is_same_v<T, double>;
  const GemmLibrary lib = f64 ? f64_gemm_library() : f32_gemm_library(m, n, k, 1);
  if (lib == GemmLibrary::Mkl) {
    mkl::gemm(f64, ta, tb, m, n, k, alpha, a, lda, 0, b, ldb, 0, beta, c, ldc, 0, 1);
    return;
  }
  const auto TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
  if constexpr (f64) {
    scipy_cblas_dgemm(CblasRowMajor, TA, TB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else {
    scipy_cblas_sgemm(CblasRowMajor, TA, TB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
}

// Keys of block [j0, j0 + n) that query row i sees: all n, or those up to i when causal.
inline int64_t visible_keys(int64_t i, int64_t j0, int64_t n, bool causal) {
  return causal ? std::clamp<int64_t>(i + 1 - j0, 0, n) : n;
}

// A (B, H, rows, cols) operand's element strides and base, addressed per (batch x head, row).
template <typename T>
struct Heads {
  T* base;
  int64_t H, sb, sh, sr, sc;
  Heads(const Tensor& t, int64_t heads)
      : base(static_cast<T*>(t.raw_data())),
        H(heads),
        sb(t.strides()[0]),
        sh(t.strides()[1]),
        sr(t.dim() > 2 ? t.strides()[2] : 0),
        sc(t.dim() > 3 ? t.strides()[3] : 1) {}
  T* row(int64_t bh, int64_t r) const { return base + (bh / H) * sb + (bh % H) * sh + r * sr; }
};

// Threads for a loop of `tasks` items worth `work` multiply-adds in all: one inside another
// parallel region or for small problems.
int threads_for(int64_t tasks, double work) {
  if (omp_in_parallel() || work < 4.0 * kParallelGrain * 64) return 1;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(omp_get_max_threads(), tasks)));
}

// The operands the kernels read: unit last stride (a copy otherwise, O(rows x d)).
Tensor unit_rows(const Tensor& t) { return t.strides()[3] == 1 ? t : t.contiguous(); }

// Adds the additive mask's rows i0.. (m of them) and keys j0.. (n) to the (m, n) scores s.
template <typename T>
void add_mask(const Heads<T>& M, int64_t bh, int64_t i0, int64_t m, int64_t j0, int64_t n, T* s) {
  for (int64_t r = 0; r < m; ++r) {
    const T* mr = M.row(bh, i0 + r) + j0 * M.sc;
    T* x = s + r * n;
    for (int64_t j = 0; j < n; ++j) x[j] += mr[j * M.sc];
  }
}

// The dropout factors (scale or 0) of head bh's row i for keys j0 .. j0 + n, into f.
template <typename T>
void row_dropout(const DropoutDraw& drop, int64_t bh, int64_t L, int64_t S, int64_t i, int64_t j0, int64_t n, T* f) {
  dropout_factors<T>(f, (bh * L + i) * S + j0, n, drop.seed, drop.counter, static_cast<T>(drop.scale()),
                     drop.keep_below());
}

template <typename T>
void forward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double scale_d, bool causal,
             const DropoutDraw& drop, Tensor& out, Tensor& lse) {
  const int64_t B = q.shape()[0], H = q.shape()[1], L = q.shape()[2], d = q.shape()[3];
  const int64_t S = k.shape()[2], dv = v.shape()[3], BH = B * H;
  const Heads<T> Q(q, H), K(k, H), V(v, H), O(out, H), LS(lse, H), M(mask.defined() ? mask : q, H);
  const bool masked = mask.defined();
  const T scale = static_cast<T>(scale_d);
  const int64_t row_blocks = (L + kForwardRows - 1) / kForwardRows, tasks = BH * row_blocks;
  const double work = static_cast<double>(BH) * L * S * (d + dv) * (causal ? 0.5 : 1.0);
  constexpr T kNegInf = -std::numeric_limits<T>::infinity();
#pragma omp parallel num_threads(threads_for(tasks, work))
  {
    std::vector<T> scores(kForwardRows * kForwardKeys), acc(kForwardRows * dv), row_max(kForwardRows),
        row_sum(kForwardRows), factors(drop.active() ? kForwardKeys : 0);
    // Heaviest tasks first (causal: the last row blocks see the most keys), handed out dynamically.
#pragma omp for schedule(dynamic, 1)
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t bh = t % BH, rb = row_blocks - 1 - t / BH;
      const int64_t i0 = rb * kForwardRows, m = std::min(kForwardRows, L - i0);
      const T* qp = Q.row(bh, i0);
      std::fill(acc.begin(), acc.begin() + m * dv, T(0));
      std::fill(row_max.begin(), row_max.begin() + m, kNegInf);
      std::fill(row_sum.begin(), row_sum.begin() + m, T(0));
      const int64_t key_end = causal ? std::min(S, i0 + m) : S;
      for (int64_t j0 = 0; j0 < key_end; j0 += kForwardKeys) {
        const int64_t n = std::min(kForwardKeys, key_end - j0);
        T* s = scores.data();
        gemm_block<T>(false, true, m, n, d, scale, qp, Q.sr, K.row(bh, j0), K.sr, T(0), s, n);
        if (masked) add_mask(M, bh, i0, m, j0, n, s);
        for (int64_t r = 0; r < m; ++r) {
          T* x = s + r * n;
          const int64_t nv = visible_keys(i0 + r, j0, n, causal);
          T block_max = kNegInf;
#pragma omp simd reduction(max : block_max)
          for (int64_t j = 0; j < nv; ++j) block_max = x[j] > block_max ? x[j] : block_max;
          const T new_max = std::max(row_max[r], block_max);
          // Nothing finite seen yet (only -inf scores): p stays 0 and the row untouched.
          const T shift = new_max == kNegInf ? T(0) : new_max;
          T sum = 0;
#pragma omp simd reduction(+ : sum)
          for (int64_t j = 0; j < nv; ++j) {
            const T p = vexp(x[j] - shift);
            x[j] = p;
            sum += p;
          }
          for (int64_t j = nv; j < n; ++j) x[j] = T(0);
          if (drop.active()) {  // the row sum above is the undropped softmax's; only what meets v is dropped
            row_dropout(drop, bh, L, S, i0 + r, j0, nv, factors.data());
            const T* f = factors.data();
#pragma omp simd
            for (int64_t j = 0; j < nv; ++j) x[j] *= f[j];
          }
          const T rescale = row_max[r] == kNegInf ? T(0) : vexp(row_max[r] - shift);
          if (rescale != T(1)) {
            T* a = acc.data() + r * dv;
#pragma omp simd
            for (int64_t c = 0; c < dv; ++c) a[c] *= rescale;
          }
          row_sum[r] = row_sum[r] * rescale + sum;
          row_max[r] = new_max;
        }
        gemm_block<T>(false, false, m, dv, n, T(1), s, n, V.row(bh, j0), V.sr, T(1), acc.data(), dv);
      }
      for (int64_t r = 0; r < m; ++r) {
        const T l = row_sum[r];
        const T inv = l > T(0) ? T(1) / l : T(0);  // a row with nothing visible: zero output
        T* o = O.row(bh, i0 + r);
        const T* a = acc.data() + r * dv;
        for (int64_t c = 0; c < dv; ++c) o[c * O.sc] = a[c] * inv;
        *LS.row(bh, i0 + r) = l > T(0) ? row_max[r] + std::log(l) : kNegInf;
      }
    }
  }
}

template <typename T>
void backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, const Tensor& dout,
              const Tensor& lse, const Tensor& delta, double scale_d, bool causal, const DropoutDraw& drop, Tensor& dq,
              Tensor& dk, Tensor& dv_out) {
  const int64_t B = q.shape()[0], H = q.shape()[1], L = q.shape()[2], d = q.shape()[3];
  const int64_t S = k.shape()[2], dv = v.shape()[3], BH = B * H;
  const Heads<T> Q(q, H), K(k, H), V(v, H), DO(dout, H), LS(lse, H), DL(delta, H), DQ(dq, H), DK(dk, H), DV(dv_out, H),
      M(mask.defined() ? mask : q, H);
  const bool masked = mask.defined();
  const T scale = static_cast<T>(scale_d);
  const int64_t row_blocks = (L + kBackwardRows - 1) / kBackwardRows,
                key_blocks = (S + kBackwardKeys - 1) / kBackwardKeys;
  const double work = static_cast<double>(BH) * L * S * (2 * d + 2 * dv) * (causal ? 0.5 : 1.0);
  const int threads = threads_for(BH * key_blocks, work);
  // Tasks are (head, chunk of key blocks): one chunk per head when there are twice as many heads
  // as threads, else the key blocks of a head are dealt round-robin to several chunks (which balances
  // the causal triangle), and each chunk sums its share of dq into its own buffer.
  const int64_t chunks_used = threads == 1 ? 1 : std::clamp<int64_t>((2 * threads + BH - 1) / BH, 1, key_blocks);
  // A tensor, so the allocator's statistics see it (O(L d) per head and chunk).
  const Tensor dq_buffer = Tensor::empty({chunks_used * BH * L * d}, q.dtype());
  T* const dq_part = dq_buffer.data<T>();
  std::fill_n(dq_part, chunks_used * BH * L * d, T(0));
  const int64_t tasks = BH * chunks_used;
#pragma omp parallel num_threads(threads)
  {
    std::vector<T> p(kBackwardRows * kBackwardKeys), dp(kBackwardRows * kBackwardKeys), dk_acc(kBackwardKeys * d),
        dv_acc(kBackwardKeys * dv), factors(drop.active() ? kBackwardKeys : 0);
#pragma omp for schedule(dynamic, 1)
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t bh = t % BH, chunk = t / BH;
      T* dq_acc = dq_part + (chunk * BH + bh) * L * d;
      for (int64_t kb = chunk; kb < key_blocks; kb += chunks_used) {
        const int64_t j0 = kb * kBackwardKeys, n = std::min(kBackwardKeys, S - j0);
        const T* kp = K.row(bh, j0);
        const T* vp = V.row(bh, j0);
        std::fill(dk_acc.begin(), dk_acc.begin() + n * d, T(0));
        std::fill(dv_acc.begin(), dv_acc.begin() + n * dv, T(0));
        // Causal: rows before j0 see none of these keys.
        for (int64_t rb = causal ? j0 / kBackwardRows : 0; rb < row_blocks; ++rb) {
          const int64_t i0 = rb * kBackwardRows, m = std::min(kBackwardRows, L - i0);
          const T* qp = Q.row(bh, i0);
          const T* gp = DO.row(bh, i0);
          gemm_block<T>(false, true, m, n, d, scale, qp, Q.sr, kp, K.sr, T(0), p.data(), n);
          if (masked) add_mask(M, bh, i0, m, j0, n, p.data());
          gemm_block<T>(false, true, m, n, dv, T(1), gp, DO.sr, vp, V.sr, T(0), dp.data(), n);
          for (int64_t r = 0; r < m; ++r) {
            const int64_t nv = visible_keys(i0 + r, j0, n, causal);
            const T l = *LS.row(bh, i0 + r), D = *DL.row(bh, i0 + r);
            T* x = p.data() + r * n;
            T* g = dp.data() + r * n;
            // p = exp(s - lse) (0 for a row with nothing visible); ds = scale p (dp - delta), the
            // gradient of the raw q k^T.
            const int64_t live = l == -std::numeric_limits<T>::infinity() ? 0 : nv;
            if (drop.active()) {
              // With dropout factors f: v meets z = p f, so dv takes z and dp = f (dout v^T).
              row_dropout(drop, bh, L, S, i0 + r, j0, live, factors.data());
              const T* f = factors.data();
#pragma omp simd
              for (int64_t j = 0; j < live; ++j) {
                const T pj = vexp(x[j] - l);
                x[j] = pj * f[j];
                g[j] = scale * pj * (g[j] * f[j] - D);
              }
            } else {
#pragma omp simd
              for (int64_t j = 0; j < live; ++j) {
                const T pj = vexp(x[j] - l);
                x[j] = pj;
                g[j] = scale * pj * (g[j] - D);
              }
            }
            for (int64_t j = live; j < n; ++j) {
              x[j] = T(0);
              g[j] = T(0);
            }
          }
          gemm_block<T>(true, false, n, dv, m, T(1), p.data(), n, gp, DO.sr, T(1), dv_acc.data(), dv);
          gemm_block<T>(false, false, m, d, n, T(1), dp.data(), n, kp, K.sr, T(1), dq_acc + i0 * d, d);
          gemm_block<T>(true, false, n, d, m, T(1), dp.data(), n, qp, Q.sr, T(1), dk_acc.data(), d);
        }
        for (int64_t r = 0; r < n; ++r) {
          T* a = DK.row(bh, j0 + r);
          T* b = DV.row(bh, j0 + r);
          for (int64_t c = 0; c < d; ++c) a[c * DK.sc] = dk_acc[r * d + c];
          for (int64_t c = 0; c < dv; ++c) b[c * DV.sc] = dv_acc[r * dv + c];
        }
      }
      if (chunks_used == 1) {  // this task owns the head's dq
        for (int64_t i = 0; i < L; ++i) {
          T* a = DQ.row(bh, i);
          for (int64_t c = 0; c < d; ++c) a[c * DQ.sc] = dq_acc[i * d + c];
        }
      }
    }
    if (chunks_used > 1) {  // sum the chunks' dq (after the loop's barrier)
#pragma omp for schedule(static)
      for (int64_t row = 0; row < BH * L; ++row) {
        const int64_t bh = row / L, i = row % L;
        T* a = DQ.row(bh, i);
        for (int64_t c = 0; c < d; ++c) {
          T sum = 0;
          for (int64_t ch = 0; ch < chunks_used; ++ch) sum += dq_part[((ch * BH + bh) * L + i) * d + c];
          a[c * DQ.sc] = sum;
        }
      }
    }
  }
}

// The operands this kernel takes: 4-d (B, H, rows, d) float32 or float64 of one dtype, lse of
// the accumulation dtype (float64 for float64, else float32) and shape (B, H, L), a mask (where
// defined) of that dtype and shape (B, H, L, S), any strides.
bool takes_mask(const Tensor& q, const Tensor& k, const Tensor& mask) {
  if (!mask.defined()) return true;
  return mask.dtype() == q.dtype() && mask.dim() == 4 &&
         mask.shape() == Shape{q.shape()[0], q.shape()[1], q.shape()[2], k.shape()[2]};
}

bool takes(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& lse) {
  const Dtype dt = q.dtype();
  if (dt != Dtype::Float32 && dt != Dtype::Float64) return false;
  if (k.dtype() != dt || v.dtype() != dt || q.dim() != 4 || k.dim() != 4 || v.dim() != 4) return false;
  if (lse.dtype() != dt || lse.dim() != 3) return false;
  const Shape& qs = q.shape();
  const Shape& ks = k.shape();
  const Shape& vs = v.shape();
  return ks[0] == qs[0] && vs[0] == qs[0] && ks[1] == qs[1] && vs[1] == qs[1] && ks[3] == qs[3] && vs[2] == ks[2] &&
         q.numel() > 0 && k.numel() > 0 && v.numel() > 0;
}

void single_threaded_blas() {
  // OpenBLAS's own threads would fight the OpenMP loop around the block products.
  if (scipy_openblas_get_num_threads() != 1) scipy_openblas_set_num_threads(1);
}

// Half operands (bfloat16, float16, one dtype for q, k, v, out and dout; no additive mask) run the
// float32 kernels on float32 copies that live only during the call: the caller keeps, and the
// autograd node saves, the half tensors, not float32 copies of them. Outputs are rounded once.
bool half_operands(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, const Tensor& o) {
  return is_half(q.dtype()) && k.dtype() == q.dtype() && v.dtype() == q.dtype() && o.dtype() == q.dtype() &&
         !mask.defined();
}

Tensor widened(const Tensor& t) {
  Tensor f = Tensor::empty(t.shape(), Dtype::Float32, t.device());
  copy(t, f);
  return f;
}

Tensor float_like(const Tensor& t) { return Tensor::empty(t.shape(), Dtype::Float32, t.device()); }

}  // namespace

bool flash_attention_masked(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, double scale,
                            bool causal, const DropoutDraw& dropout, Tensor& out, Tensor& lse) {
  if (half_operands(q, k, v, mask, out)) {
    Tensor of = float_like(out);
    if (!flash_attention_masked(widened(q), widened(k), widened(v), mask, scale, causal, dropout, of, lse)) {
      return false;
    }
    copy(of, out);
    return true;
  }
  if (!takes(q, k, v, lse) || !takes_mask(q, k, mask)) return false;
  const Tensor qu = unit_rows(q), ku = unit_rows(k), vu = unit_rows(v);
  single_threaded_blas();
  if (q.dtype() == Dtype::Float64) {
    forward<double>(qu, ku, vu, mask, scale, causal, dropout, out, lse);
  } else {
    forward<float>(qu, ku, vu, mask, scale, causal, dropout, out, lse);
  }
  return true;
}

bool flash_attention_masked_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                                     const Tensor& out, const Tensor& dout, const Tensor& lse, const Tensor& delta,
                                     double scale, bool causal, const DropoutDraw& dropout, Tensor& dq, Tensor& dk,
                                     Tensor& dv) {
  if (half_operands(q, k, v, mask, dout) && dq.dtype() == q.dtype() && dk.dtype() == q.dtype() &&
      dv.dtype() == q.dtype()) {
    Tensor dqf = float_like(dq), dkf = float_like(dk), dvf = float_like(dv);
    // out is not read here (delta comes from the op layer)
    if (!flash_attention_masked_backward(widened(q), widened(k), widened(v), mask, Tensor(), widened(dout), lse, delta,
                                         scale, causal, dropout, dqf, dkf, dvf)) {
      return false;
    }
    copy(dqf, dq);
    copy(dkf, dk);
    copy(dvf, dv);
    return true;
  }
  if (!takes(q, k, v, lse) || !takes_mask(q, k, mask) || dout.dtype() != q.dtype() || delta.dtype() != lse.dtype()) {
    return false;
  }
  const Tensor qu = unit_rows(q), ku = unit_rows(k), vu = unit_rows(v), du = unit_rows(dout);
  single_threaded_blas();
  if (q.dtype() == Dtype::Float64) {
    backward<double>(qu, ku, vu, mask, du, lse, delta, scale, causal, dropout, dq, dk, dv);
  } else {
    backward<float>(qu, ku, vu, mask, du, lse, delta, scale, causal, dropout, dq, dk, dv);
  }
  return true;
}

bool flash_attention(const Tensor& q, const Tensor& k, const Tensor& v, double scale, bool causal, Tensor& out,
                     Tensor& lse) {
  return flash_attention_masked(q, k, v, Tensor(), scale, causal, DropoutDraw{}, out, lse);
}

bool flash_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out, const Tensor& dout,
                              const Tensor& lse, const Tensor& delta, double scale, bool causal, Tensor& dq, Tensor& dk,
                              Tensor& dv) {
  return flash_attention_masked_backward(q, k, v, Tensor(), out, dout, lse, delta, scale, causal, DropoutDraw{}, dq, dk,
                                         dv);
}

}  // namespace st::backend::cpu::CPU_CAPABILITY
