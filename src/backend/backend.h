#pragma once
// One kernel table per device. Ops prepare operands (broadcast views, dtype casts,
// output allocation) and call into the table; they never branch on the device.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "spiraltorch/tensor.h"

namespace st::backend {

enum class BinaryOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  FloorDiv,
  Rem,
  Pow,
  Min,
  Max,
  Atan2,
  ReluGrad,      // a * (b > 0): the ReLU backward in one pass (a = gradient, b = output)
  GeluGrad,      // a * GELU'(b), erf form (a = gradient, b = input); floating dtypes
  GeluTanhGrad,  // a * GELU'(b), tanh form
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  And,
  Or,
  Xor,
};
enum class UnaryOp : uint8_t {
  Neg,
  Abs,
  Sign,
  Exp,
  Log,
  Log1p,
  Expm1,
  Sqrt,
  Rsqrt,
  Square,
  Reciprocal,
  Sin,
  Cos,
  Tan,
  Tanh,
  Atanh,
  Sigmoid,
  Relu,
  Gelu,
  GeluTanh,
  Silu,
  Softplus,
  LeakyRelu,
  Elu,
  Floor,
  Ceil,
  Round,
  Trunc,
  Not,
  IsNan,
  IsInf,
  IsFinite,
  Clamp,
  Erf,
};
enum class ReduceOp : uint8_t { Sum, Prod, Max, Min, Any, All };
// The point-wise losses a backend may fuse (Backend::pointwise_loss).
enum class PointwiseLoss : uint8_t { Mse, L1, Huber, BceWithLogits, HyperbolicBce };
// The running combinations of scan() (the running sum has its own entry, cumsum).
enum class ScanOp : uint8_t { Prod, LogSumExp, Max, Min };

// The key of Philox round r >= 1 of poisson(): seed + r * kPoissonRoundKey (round 0 uses the seed itself).
inline constexpr uint64_t kPoissonRoundKey = 0x9E3779B97F4A7C15ull;

inline bool is_comparison(BinaryOp op) { return op >= BinaryOp::Eq; }

// The name of each op (its TensorOp event and the name its errors give), kept with the enum: a
// switch without a default, compiled with -Wswitch as an error, so an enumerator added without a
// name fails to build instead of reading past a positional array.
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"
constexpr const char* op_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
      return "add";
    case BinaryOp::Sub:
      return "sub";
    case BinaryOp::Mul:
      return "mul";
    case BinaryOp::Div:
      return "div";
    case BinaryOp::FloorDiv:
      return "floor_divide";
    case BinaryOp::Rem:
      return "remainder";
    case BinaryOp::Pow:
      return "pow";
    case BinaryOp::Min:
      return "minimum";
    case BinaryOp::Max:
      return "maximum";
    case BinaryOp::Atan2:
      return "atan2";
    case BinaryOp::ReluGrad:
      return "relu_backward";
    case BinaryOp::GeluGrad:
      return "gelu_backward";
    case BinaryOp::GeluTanhGrad:
      return "gelu_tanh_backward";
    case BinaryOp::Eq:
      return "eq";
    case BinaryOp::Ne:
      return "ne";
    case BinaryOp::Lt:
      return "lt";
    case BinaryOp::Le:
      return "le";
    case BinaryOp::Gt:
      return "gt";
    case BinaryOp::Ge:
      return "ge";
    case BinaryOp::And:
      return "logical_and";
    case BinaryOp::Or:
      return "logical_or";
    case BinaryOp::Xor:
      return "logical_xor";
  }
  return "?";  // not reached: every enumerator has a case
}
constexpr const char* op_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg:
      return "neg";
    case UnaryOp::Abs:
      return "abs";
    case UnaryOp::Sign:
      return "sign";
    case UnaryOp::Exp:
      return "exp";
    case UnaryOp::Log:
      return "log";
    case UnaryOp::Log1p:
      return "log1p";
    case UnaryOp::Expm1:
      return "expm1";
    case UnaryOp::Sqrt:
      return "sqrt";
    case UnaryOp::Rsqrt:
      return "rsqrt";
    case UnaryOp::Square:
      return "square";
    case UnaryOp::Reciprocal:
      return "reciprocal";
    case UnaryOp::Sin:
      return "sin";
    case UnaryOp::Cos:
      return "cos";
    case UnaryOp::Tan:
      return "tan";
    case UnaryOp::Tanh:
      return "tanh";
    case UnaryOp::Atanh:
      return "atanh";
    case UnaryOp::Sigmoid:
      return "sigmoid";
    case UnaryOp::Relu:
      return "relu";
    case UnaryOp::Gelu:
      return "gelu";
    case UnaryOp::GeluTanh:
      return "gelu_tanh";
    case UnaryOp::Silu:
      return "silu";
    case UnaryOp::Softplus:
      return "softplus";
    case UnaryOp::LeakyRelu:
      return "leaky_relu";
    case UnaryOp::Elu:
      return "elu";
    case UnaryOp::Floor:
      return "floor";
    case UnaryOp::Ceil:
      return "ceil";
    case UnaryOp::Round:
      return "round";
    case UnaryOp::Trunc:
      return "trunc";
    case UnaryOp::Not:
      return "logical_not";
    case UnaryOp::IsNan:
      return "isnan";
    case UnaryOp::IsInf:
      return "isinf";
    case UnaryOp::IsFinite:
      return "isfinite";
    case UnaryOp::Clamp:
      return "clamp";
    case UnaryOp::Erf:
      return "erf";
  }
  return "?";  // not reached: every enumerator has a case
}
#pragma GCC diagnostic pop

// ---- convolution kernels: geometry ----
// One 2-d sliding window: input C x H x W, kernel kh x kw, stride, top/left padding,
// dilation, and the output size OH x OW (computed by the op layer).
struct Conv2dGeom {
  int64_t C, H, W, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW;
  // Layout of the column buffer: element (row r, batch n, position l) lives at
  // r * col_ld + n * col_batch_stride + l.
  int64_t col_ld, col_batch_stride;
};
using Pool2dGeom = Conv2dGeom;  // C unused (planes are passed separately); col_* unused

// ---- dropout drawn inside a fused kernel (attention, add_layer_norm) ----
// Element e of the tensor dropout() would mask (for attention, e = (bh * L + i) * S + j of the
// (B * H, L, S) probabilities; for add_layer_norm, the flat index of y) is kept, scaled by scale(),
// where the uniform from Philox block (counter + e / 4), lane e % 4, of `seed` is below keep_below():
// exactly the mask dropout() draws for that tensor from the same generator state, so a fused
// kernel and the composite agree element for element. p = 0: no dropout.
struct DropoutDraw {
  double p = 0.0;
  uint64_t seed = 0, counter = 0;
  bool active() const { return p > 0.0; }
  float keep_below() const { return static_cast<float>(1.0 - p); }  // dropout()'s float32 threshold
  double scale() const { return p < 1.0 ? 1.0 / (1.0 - p) : 0.0; }
};

class Backend {
 public:
  virtual ~Backend() = default;
  // out = op(a, b); a and b are views already broadcast to out's shape. Both share a
  // dtype; out has it too, or bool for comparisons and logical ops.
  virtual void binary(BinaryOp op, const Tensor& a, const Tensor& b, Tensor& out) = 0;
  // out = op(x) with scalars p0, p1 (clamp bounds, softplus beta/threshold, slopes).
  virtual void unary(UnaryOp op, const Tensor& x, Tensor& out, double p0, double p1) = 0;
  // dst = src elementwise, converting dtypes; shapes match (src may be a broadcast view).
  virtual void copy(const Tensor& src, Tensor& dst) = 0;
  virtual void fill(Tensor& dst, Scalar value) = 0;
  // out = cond ? a : b; all broadcast to out's shape.
  virtual void where(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor& out) = 0;
  // x is contiguous and seen as (outer, r, inner); out is contiguous (outer, inner).
  virtual void reduce(ReduceOp op, const Tensor& x, int64_t outer, int64_t r, int64_t inner, Tensor& out) = 0;
  // Index (int64) of the max or min along r, first occurrence; NaN wins like PyTorch.
  virtual void arg_reduce(bool is_max, const Tensor& x, int64_t outer, int64_t r, int64_t inner, Tensor& values,
                          Tensor& indices) = 0;
  // C[b] = alpha * op(A[b]) @ op(B[b]) + beta * C[b] for `batch` matrices at the given element strides.
  virtual void gemm(Dtype dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                    const void* a, int64_t lda, int64_t stride_a, const void* b, int64_t ldb, int64_t stride_b,
                    double beta, void* c, int64_t ldc, int64_t stride_c, int64_t batch) = 0;
  // Fills a contiguous float tensor: uniform in [low, high) or normal(mean=p0, std=p1).
  virtual void random(Tensor& out, bool normal, double p0, double p1, uint64_t seed, uint64_t counter) = 0;
  // One Poisson count per rate: rates and out are contiguous float32/float64 of one dtype and size,
  // rates finite in [0, 1e6] (checked by the op). Element i reads Philox block (key, counter + i) with
  // key = seed for its first attempt and seed + r * kPoissonRoundKey for attempt r, so counts do not
  // depend on the thread split; CPU and CUDA draw the same counts (src/backend/poisson_sampler.h),
  // wgpu computes in float32.
  virtual void poisson(const Tensor& rates, Tensor& out, uint64_t seed, uint64_t counter) = 0;
  // Softmax / log-softmax over the last axis of a contiguous (rows, cols) float tensor.
  virtual void softmax(const Tensor& x, int64_t rows, int64_t cols, bool log, Tensor& out) = 0;
  // Its backward from the output y: dx = y * (g - sum(g * y)) or, for log-softmax,
  // dx = g - exp(y) * sum(g); all contiguous (rows, cols) of one float dtype.
  virtual void softmax_backward(const Tensor& g, const Tensor& y, int64_t rows, int64_t cols, bool log, Tensor& dx) = 0;

  // ---- indexing kernels ----
  // Inputs and outputs are contiguous and seen as (outer, n, inner) blocks around one dim;
  // index tensors are contiguous int64 whose values the op layer has already range-checked.
  // Joins the inputs (each contiguous with out's dtype) along a dim: input i is a block of
  // (outer, numel_i / outer) elements, written side by side into the rows of out.
  virtual void cat(const std::vector<Tensor>& xs, int64_t outer, Tensor& out) = 0;
  // out(o, j, i) = x(o, index(o, j, i), i); x is (outer, n, inner), index and out (outer, k, inner).
  virtual void gather(const Tensor& x, const Tensor& index, int64_t outer, int64_t n, int64_t k, int64_t inner,
                      Tensor& out) = 0;
  // out(o, index(o, j, i), i) += src(o, j, i); out is (outer, n, inner), index and src (outer, k, inner).
  virtual void scatter_add(Tensor& out, const Tensor& index, const Tensor& src, int64_t outer, int64_t n, int64_t k,
                           int64_t inner) = 0;
  // out(o, j, i) = x(o, index(j), i); x is (outer, n, inner), index has k entries, out is (outer, k, inner).
  virtual void index_select(const Tensor& x, const Tensor& index, int64_t outer, int64_t n, int64_t k, int64_t inner,
                            Tensor& out) = 0;
  // Writes the elements of x where mask (bool, same shape) is true into the 1-D out, in order.
  virtual void masked_select(const Tensor& x, const Tensor& mask, Tensor& out) = 0;
  // The first k entries of a stable sort along n (NaN is the largest value): values (x's
  // dtype, no half types) and int64 positions, both (outer, k, inner).
  virtual void sort(const Tensor& x, int64_t outer, int64_t n, int64_t inner, int64_t k, bool descending,
                    Tensor& values, Tensor& indices) = 0;
  // Inclusive prefix sum along n; x and out share a dtype (int64, float32 or float64).
  virtual void cumsum(const Tensor& x, int64_t outer, int64_t n, int64_t inner, Tensor& out) = 0;
  // Inclusive scan along n of x into out (both contiguous (outer, n, inner), one dtype: float32,
  // float64, or int64 for Prod/Max/Min): Prod multiplies (floats accumulate in float64); LogSumExp
  // writes log(sum_{i<=j} exp(x_i)) max-shifted (stays -inf while every term is -inf); Max/Min write
  // the running extreme and, into int64 `indices` (same shape), where it came from, torch.cummax's
  // rule: a later value equal to the extreme takes over, and so does every NaN (numbers after a NaN
  // never do). `indices` is ignored (may be undefined) for Prod and LogSumExp.
  virtual void scan(ScanOp op, const Tensor& x, int64_t outer, int64_t n, int64_t inner, Tensor& out,
                    Tensor& indices) = 0;
  // Keeps x(b, r, c) where c - r <= diagonal (lower) or c - r >= diagonal (upper), zeroes the rest.
  virtual void triangle(const Tensor& x, int64_t batch, int64_t rows, int64_t cols, int64_t diagonal, bool upper,
                        Tensor& out) = 0;

  // ---- convolution kernels ----
  // Tensors are contiguous NCHW float32/float64; `planes` = N * C for pooling.
  // im2col: x is (batch, C, H, W); writes cols[r * col_ld + n * col_batch_stride + l] =
  // x(n, c, oh*sh - ph + i*dh, ow*sw - pw + j*dw) (0 in the padding) for r = (c*kh + i)*kw + j
  // and l = oh*OW + ow; cols has x's dtype.
  virtual void im2col(const Tensor& x, const Conv2dGeom& g, int64_t batch, Tensor& cols) = 0;
  // The adjoint: x (batch, C, H, W) = sum of cols scattered back (x is overwritten).
  virtual void col2im(const Tensor& cols, const Conv2dGeom& g, int64_t batch, Tensor& x) = 0;
  // Max pooling over (planes, H, W) -> (planes, OH, OW); indices are int64 offsets h*W+w into the plane.
  virtual void max_pool2d(const Tensor& x, const Pool2dGeom& g, int64_t planes, Tensor& out, Tensor& indices) = 0;
  // gx (planes, H, W) is overwritten with the gradient routed through the saved indices.
  virtual void max_pool2d_backward(const Tensor& gy, const Tensor& indices, const Pool2dGeom& g, int64_t planes,
                                   Tensor& gx) = 0;
  // Average pooling with PyTorch's divisor rule (count_include_pad, divisor_override > 0 replaces it).
  virtual void avg_pool2d(const Tensor& x, const Pool2dGeom& g, int64_t planes, bool count_include_pad,
                          int64_t divisor_override, Tensor& out) = 0;
  virtual void avg_pool2d_backward(const Tensor& gy, const Pool2dGeom& g, int64_t planes, bool count_include_pad,
                                   int64_t divisor_override, Tensor& gx) = 0;
  // Adaptive average pooling: window [floor(o*I/O), ceil((o+1)*I/O)) per axis.
  virtual void adaptive_avg_pool2d(const Tensor& x, const Pool2dGeom& g, int64_t planes, Tensor& out) = 0;
  virtual void adaptive_avg_pool2d_backward(const Tensor& gy, const Pool2dGeom& g, int64_t planes, Tensor& gx) = 0;
  // Depthwise convolution (groups == C == out channels): x (batch, C, H, W), w (C, 1, kh, kw),
  // out (batch, C, OH, OW) overwritten; bias (C,) may be undefined.
  virtual void depthwise_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeom& g,
                                int64_t batch, Tensor& out) = 0;
  // gx (batch, C, H, W) overwritten with the input gradient.
  virtual void depthwise_conv2d_backward_input(const Tensor& gy, const Tensor& w, const Conv2dGeom& g, int64_t batch,
                                               Tensor& gx) = 0;
  // gw (C, 1, kh, kw) overwritten with the weight gradient.
  virtual void depthwise_conv2d_backward_weight(const Tensor& gy, const Tensor& x, const Conv2dGeom& g, int64_t batch,
                                                Tensor& gw) = 0;

  // ---- batch norm: x, g, y, dx are contiguous (n, c, l) float32/float64; per-channel tensors (c,)
  // share that dtype; w and b may be undefined (1 and 0) ----
  // Per channel over n * l values: mean, rstd = 1 / sqrt(var + eps) and the biased var.
  virtual void batch_norm_stats(const Tensor& x, int64_t n, int64_t c, int64_t l, double eps, Tensor& mean,
                                Tensor& rstd, Tensor& var) = 0;
  // y = (x - mean) * rstd * w + b.
  virtual void batch_norm_apply(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w,
                                const Tensor& b, int64_t n, int64_t c, int64_t l, Tensor& y) = 0;
  // dw = sum g * xhat, db = sum g (xhat = (x - mean) * rstd); dx (when defined) =
  // w rstd (g - mean(g) - xhat mean(g xhat)) when the batch stats were used (training), else g w rstd.
  virtual void batch_norm_backward(const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                   const Tensor& w, int64_t n, int64_t c, int64_t l, bool training, Tensor& dx,
                                   Tensor& dw, Tensor& db) = 0;

  // ---- attention softmax (the fused scaled-dot-product path of src/nn/attention.cpp) ----
  // s is a contiguous (batch, L, S) float tensor of raw q k^T scores. Each row i of a matrix
  // becomes p = softmax(scale * s + mask) in p (same shape and dtype; may alias s), where the
  // causal mask blocks columns j > i; lse (batch * L; float64 for float64 scores, else float32) gets the row's
  // log-sum-exp of scale * s + mask (-inf, and p = 0, for a row with nothing unmasked).
  virtual void attention_softmax(const Tensor& s, int64_t batch, int64_t L, int64_t S, double scale, bool causal,
                                 Tensor& p, Tensor& lse) = 0;
  // The backward's elementwise part: with raw scores s, lse and delta (batch * L, lse's dtype;
  // delta = rowsum(dO * O)) and dp = dO v^T, writes p = exp(scale * s + mask - lse) over s and
  // ds = scale * p * (dp - delta) over dp (the gradient of the raw scores).
  virtual void attention_softmax_backward(Tensor& s, Tensor& dp, const Tensor& lse, const Tensor& delta, int64_t batch,
                                          int64_t L, int64_t S, double scale, bool causal) = 0;

  // ---- recurrent kernels (the fused LSTM / GRU recurrences of src/nn/rnn.cpp) ----
  // float32/float64 only. xproj (steps, batch, G*H) holds the input projections x W_ih^T (+ biases)
  // with a unit last stride (any strides otherwise); w (G*H, H), h0, c0 (batch, H) and bhh (3H,)
  // are contiguous; every output is contiguous and fully overwritten.
  // LSTM, gates i, f, g, o (PyTorch's order): hc (2, steps, batch, H) = all h_t, then all c_t;
  // acts (steps, batch, 4H) = sigmoid(i), sigmoid(f), tanh(g), sigmoid(o) for the backward.
  virtual void lstm_forward(const Tensor& xproj, const Tensor& w, const Tensor& h0, const Tensor& c0, Tensor& hc,
                            Tensor& acts) = 0;
  // g (2, steps, batch, H) is the gradient w.r.t. hc. dx (steps, batch, 4H) = the gradient w.r.t.
  // xproj; dw (4H, H), dh0 and dc0 (batch, H) are written when defined.
  virtual void lstm_backward(const Tensor& g, const Tensor& hc, const Tensor& acts, const Tensor& w, const Tensor& h0,
                             const Tensor& c0, Tensor& dx, Tensor& dw, Tensor& dh0, Tensor& dc0) = 0;
  // GRU, gates r, z, n (PyTorch's): n = tanh(x_n + r * (W_hn h + b_hn)); bhh may be undefined (zero).
  // hs (steps, batch, H) = all h_t; saved (steps, batch, 4H) = r, z, n, W_hn h + b_hn per step.
  virtual void gru_forward(const Tensor& xproj, const Tensor& w, const Tensor& bhh, const Tensor& h0, Tensor& hs,
                           Tensor& saved) = 0;
  // g (steps, batch, H) is the gradient w.r.t. hs. dx (steps, batch, 3H) = the gradient w.r.t.
  // xproj; dw (3H, H), dbhh (3H,) and dh0 (batch, H) are written when defined.
  virtual void gru_backward(const Tensor& g, const Tensor& hs, const Tensor& saved, const Tensor& w, const Tensor& h0,
                            Tensor& dx, Tensor& dw, Tensor& dbhh, Tensor& dh0) = 0;

  // ---- dense factorizations (optional: LAPACK on the CPU; the ops of src/ops/dense_linalg.cpp) ----
  // Each works on `batch` float32/float64 matrices stored one after another in a contiguous tensor,
  // row-major or column-major as the entry says (column-major, LAPACK's and cuSOLVER's layout, holds
  // element (i, j) of an m x n matrix at j * m + i); sizes fit 32-bit integers (the op checks).
  // info (batch entries) gets each matrix's status: 0; i > 0, the numerical failure the entry names
  // (1-based), after which that matrix's outputs are unspecified; < 0, an argument the library
  // rejected (a bug). Backends without these kernels say so in has_dense_linalg(), so the ops refuse
  // their tensors before building operands, and each entry declines: returns false, writing nothing.
  virtual bool has_dense_linalg() const { return false; }
  // a (column-major n x n) := A^-1 through A = P L U (getrf, getri); info i: U(i, i) is exactly zero.
  virtual bool lu_inverse(Tensor& a, int64_t batch, int64_t n, std::span<int> info) { return false; }
  // Solves A X = B: a (column-major n x n) := A's LU factors (getrf), b (column-major n x k) := X
  // (getrs); info i: U(i, i) is exactly zero.
  virtual bool lu_solve(Tensor& a, Tensor& b, int64_t batch, int64_t n, int64_t k, std::span<int> info) {
    return false;
  }
  // From the LU factors of each column-major n x n a (overwritten; a zero pivot is no failure),
  // writes whichever of the (batch,) tensors of a's dtype are defined: det = the product of U's
  // diagonal with the pivots' sign, sign = its sign (0 for det 0, NaN for NaN) and logabsdet =
  // log|det|, each accumulated in float64 (1, 1 and 0 for n = 0).
  virtual bool lu_determinant(Tensor& a, int64_t batch, int64_t n, Tensor& det, Tensor& sign, Tensor& logabsdet) {
    return false;
  }
  // The gradient of det: out (row-major n x n) = g det(A) A^-T, or at a singular A the cofactor
  // matrix g det(U) det(V) U diag(prod_{j != i} s_j) V^T from the SVD A = U diag(s) V^T; a
  // (column-major n x n) is read only, g (batch,) has a's dtype. info i: the SVD did not converge.
  virtual bool determinant_backward(const Tensor& a, const Tensor& g, int64_t batch, int64_t n, Tensor& out,
                                    std::span<int> info) {
    return false;
  }
  // Solves A X = B for triangular A, both ROW-major: a (n x n) is read only, its `upper` (or lower)
  // triangle, diagonal taken as ones when `unit`; b (n x k) := X. No singularity check (like
  // PyTorch's solve_triangular): a zero on the diagonal gives inf/NaN.
  virtual bool triangular_solve(const Tensor& a, Tensor& b, int64_t batch, int64_t n, int64_t k, bool upper,
                                bool unit) {
    return false;
  }
  // a (row-major n x n, symmetric; its `upper` (or lower) triangle is read) := the Cholesky factor
  // U (A = U^T U) or L (A = L L^T), the other triangle zeroed; info i: the leading minor of order i
  // is not positive-definite.
  virtual bool cholesky(Tensor& a, int64_t batch, int64_t n, bool upper, std::span<int> info) { return false; }
  // The eigenvalues, ascending, of each symmetric a (row-major n x n; its `upper` (or lower)
  // triangle is read) into w (batch, n); with `vectors` a := V^T (row i: the unit eigenvector of
  // w[i]), otherwise a is destroyed. Divide and conquer (syevd); info i: it did not converge.
  virtual bool eigh(Tensor& a, int64_t batch, int64_t n, bool upper, bool vectors, Tensor& w, std::span<int> info) {
    return false;
  }
  // Householder QR (geqrf, orgqr) of each column-major m x n a (destroyed), k = min(m, n): r
  // (row-major, m x n when `complete`, else k x n) := R, zeros below its diagonal; q (row-major,
  // m x m when `complete`, else m x k) := Q when q is defined. info: LAPACK's code.
  virtual bool qr(Tensor& a, int64_t batch, int64_t m, int64_t n, bool complete, Tensor& q, Tensor& r,
                  std::span<int> info) {
    return false;
  }
  // A = U diag(s) V^T of each column-major m x n a (destroyed), divide and conquer (gesdd): s
  // (batch, k = min(m, n)) descending; when u and vh are defined (both or neither), u (row-major,
  // m x m when `full`, else m x k) := U and vh (n x n when `full`, else k x n) := V^T (for k = 0,
  // identities). info i: it did not converge.
  virtual bool svd(Tensor& a, int64_t batch, int64_t m, int64_t n, bool full, Tensor& s, Tensor& u, Tensor& vh,
                   std::span<int> info) {
    return false;
  }

  // ---- device capabilities and fused kernels (optional) ----
  // Backends that run these natively override them; the defaults below decline (return false)
  // or throw where a caller must ask first.
  // Whether this backend has flash attention kernels at all (callers skip building their
  // operands where it does not); flash_attention may still refuse particular operands.
  virtual bool has_flash_attention() const { return false; }
  // Whether the flash backward takes an undefined delta and forms rowsum(dout * out) itself (CUDA:
  // cuDNN's backward forms it inside, and the other kernels in one pass), so callers skip theirs.
  virtual bool flash_attention_forms_delta() const { return false; }
  // Sorted search: out (rows, m), int64, = for each of values (rows, m) the number of entries of its
  // row of sorted (rows or 1, n) before its insertion point (after equal entries with `right`; NaN
  // after everything, as torch's binary search). All contiguous, values and sorted of one dtype
  // (float32, float64 or int64). Backends without the kernel decline; the op counts comparisons.
  virtual bool searchsorted(const Tensor& sorted, const Tensor& values, bool right, Tensor& out) {
    (void)sorted, (void)values, (void)right, (void)out;
    return false;
  }
  // The smallest and largest entry of idx (contiguous int64, non-empty) into lo and hi: the range
  // check of every indexing op, so it must cost little where the host reads the memory directly.
  // Other backends decline; the op then reduces on the device and reads both ends back in one copy.
  virtual bool index_range(const Tensor& idx, int64_t& lo, int64_t& hi) {
    (void)idx, (void)lo, (void)hi;
    return false;
  }
  // out(o, index(j), i) += src(o, j, i), the rows of src added in index order: out is
  // (outer, n, inner), index has k range-checked entries, src is (outer, k, inner); all contiguous,
  // one dtype. The gradient of index_select and embedding. Backends without the kernel decline
  // (nothing written); the op then scatter-adds through an index expanded over src.
  virtual bool index_add(Tensor& out, const Tensor& index, const Tensor& src, int64_t outer, int64_t n, int64_t k,
                         int64_t inner) {
    (void)out, (void)index, (void)src, (void)outer, (void)n, (void)k, (void)inner;
    return false;
  }
  // Fused (flash) attention: q (B, H, L, d), k and v (B, H, S, d), one float dtype, any strides
  // with a unit last one (head views of a packed projection are read in place). Writes out
  // (B, H, L, d) = softmax(scale q k^T [+ causal mask blocking j > i]) v and lse (B, H, L), float32
  // (float64 for float64 operands) = each row's log-sum-exp of the scaled, masked scores (-inf and
  // a zero output for a row with nothing visible) through their own strides, with no (L, S)
  // buffer. Returns false, having written nothing, where this backend has no kernel for these
  // operands.
  virtual bool flash_attention(const Tensor& q, const Tensor& k, const Tensor& v, double scale, bool causal,
                               Tensor& out, Tensor& lse) {
    return false;
  }
  // Its backward, for operands flash_attention took: with that call's out and lse, dout (out's
  // shape) and delta = rowsum(dout * out) (lse's shape and strides; undefined for backends whose
  // flash_attention_forms_delta() is true: they form it where they need it), writes dq, dk, dv
  // (shapes of q, k, v).
  virtual bool flash_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                                        const Tensor& dout, const Tensor& lse, const Tensor& delta, double scale,
                                        bool causal, Tensor& dq, Tensor& dk, Tensor& dv) {
    return false;
  }
  // flash_attention with an additive mask (scaled_dot_product_attention's attn_mask, booleans
  // made -inf / 0): the scores are scale q k^T + mask [+ the causal mask]; mask is a (B, H, L, S)
  // tensor of the operands' dtype read through its strides (0 on broadcast dims), so a mask given
  // as (L, S) costs no (B, H, L, S) buffer. A row whose keys are all masked gets a zero output and
  // lse = -inf. An undefined mask is flash_attention; backends without a masked kernel decline.
  // With dropout.active(), the probabilities multiplying v are dropped as DropoutDraw says
  // (lse stays that of the undropped softmax). Backends without these kernels decline.
  virtual bool flash_attention_masked(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                                      double scale, bool causal, const DropoutDraw& dropout, Tensor& out, Tensor& lse) {
    return !mask.defined() && !dropout.active() && flash_attention(q, k, v, scale, causal, out, lse);
  }
  // Its backward, for operands flash_attention_masked took (the mask gets no gradient; the same
  // dropout regenerates the same mask).
  virtual bool flash_attention_masked_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                                               const Tensor& out, const Tensor& dout, const Tensor& lse,
                                               const Tensor& delta, double scale, bool causal,
                                               const DropoutDraw& dropout, Tensor& dq, Tensor& dk, Tensor& dv) {
    return !mask.defined() && !dropout.active() &&
           flash_attention_backward(q, k, v, out, dout, lse, delta, scale, causal, dq, dk, dv);
  }
  // Row-wise cross-entropy of contiguous (rows, C) float logits x against int64 targets t (rows,),
  // each in [0, C) or equal to ignore_index: loss[r] = scale (logsumexp(x_r) - x_r[t_r]) (0 where
  // ignored; scale = 1/rows makes the rows' sum their mean) and lse[r] = logsumexp(x_r), both
  // (rows,) in float64 for float64 logits, else float32. dx, where defined (x's shape and dtype, not
  // overlapping x), also receives each row's own gradient d loss[r] / d x_r = scale (softmax(x_r) -
  // onehot(t_r)), 0 where ignored: linear_cross_entropy forms its chunks' gradients in the forward,
  // and a kernel that holds the row reads the logits once for both. Returns false, having written
  // nothing, where this backend has no such kernel.
  virtual bool cross_entropy_rows(const Tensor& x, const Tensor& t, int64_t ignore_index, double scale, Tensor& loss,
                                  Tensor& lse, Tensor& dx) {
    return false;
  }
  // Its backward: dx[r] = scale g[r] (softmax(x_r) - onehot(t_r)), 0 where ignored; g contiguous
  // (rows,), or one element for every row (a mean's gradient), in lse's dtype; dx the shape and
  // dtype of x.
  virtual bool cross_entropy_rows_backward(const Tensor& x, const Tensor& t, const Tensor& lse, const Tensor& g,
                                           int64_t ignore_index, double scale, Tensor& dx) {
    return false;
  }
  // Fused point-wise losses (src/nn/loss_fused.h; each loss is defined by its composite of ops,
  // which this kernel must equal): over contiguous tensors p, t of one float dtype, writes
  // out = l(p, t) and, where defined, dp = dl/dp and dt = dl/dt (the composite's gradient), in
  // one pass. aux (BceWithLogits' pos_weight, broadcast to p's shape and made contiguous) may be
  // undefined (1). p0 = Huber's delta or HyperbolicBce's logit scale s, p1 = HyperbolicBce's
  // target clamp epsilon (no target gradient where it clamps). Mse (p - t)^2; L1 |p - t|; Huber
  // 0.5 d^2 if |d| < delta else delta (|d| - 0.5 delta); BceWithLogits (1 - t) x + (1 + (pw - 1) t)
  // log(1 + exp(-x)); HyperbolicBce BceWithLogits(s x, clamp(t, eps, 1 - eps)). Returns false,
  // having written nothing, where this backend has no such kernel (the op runs the composite).
  virtual bool pointwise_loss(PointwiseLoss op, const Tensor& p, const Tensor& t, const Tensor& aux, double p0,
                              double p1, Tensor& out, Tensor& dp, Tensor& dt) {
    return false;
  }
  // Fused layers and products (oneDNN on the CPU, cuDNN convolutions on CUDA). Each returns false, having written
  // nothing, where this backend has no kernel for the operands; the op then runs its composite (im2col + gemm, the
  // input projection + lstm_forward, float32 gemm), which defines the result and its gradient. conv2d with the padding
  // allowed to differ per side: g's ph / pw pad the top / left, pad_bottom / pad_right the bottom / right. x (N, C, H,
  // W), w (O, C/groups, kh, kw) and bias (O,) (may be undefined) are contiguous NCHW of one dtype; writes out (N, O,
  // g.OH, g.OW), contiguous.
  virtual bool conv2d_fused(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeom& g,
                            int64_t pad_bottom, int64_t pad_right, int64_t groups, Tensor& out) {
    return false;
  }
  // Its backward, for a call conv2d_fused took (has_bias: whether it had a bias): from gy (out's
  // shape, contiguous) writes each of gx (x's shape), gw (w's shape) and gb (O,) that is defined.
  virtual bool conv2d_fused_backward(const Tensor& gy, const Tensor& x, const Tensor& w, bool has_bias,
                                     const Conv2dGeom& g, int64_t pad_bottom, int64_t pad_right, int64_t groups,
                                     Tensor& gx, Tensor& gw, Tensor& gb) {
    return false;
  }
  // An LSTM layer's results output (T, B, H) = all h_t, h_n = h_T and c_n = c_T (B, H), or their
  // gradients; and the gradients of its operands (db: that of b_ih and of b_hh alike).
  struct LstmOutputs {
    Tensor output, h_n, c_n;
  };
  struct LstmGrads {
    Tensor dx, dw_ih, dw_hh, db, dh0, dc0;
  };
  // Whether lstm_layer may take operands of this dtype now (the op prepares them only then).
  virtual bool has_lstm_layer(Dtype dtype) const { return false; }
  // One unidirectional LSTM layer (gates i, f, g, o), time-major: x (T, B, I), w_ih (4H, I), w_hh
  // (4H, H), b_ih and b_hh (4H,) (both undefined: no bias), h0 and c0 (B, H), all contiguous of one
  // dtype; writes out's three tensors (contiguous). With `workspace` non-null (training) it sets
  // *workspace to what lstm_layer_backward needs, a tensor only this backend reads.
  virtual bool lstm_layer(const Tensor& x, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                          const Tensor& b_hh, const Tensor& h0, const Tensor& c0, LstmOutputs& out, Tensor* workspace) {
    return false;
  }
  // Its backward, for a training call lstm_layer took (same operands, its outputs and workspace):
  // from g (the gradients of out's three tensors, contiguous, zeros where none came) writes grads'
  // tensors (contiguous, the shapes of the operands; db undefined without a bias).
  virtual bool lstm_layer_backward(const LstmOutputs& g, const LstmOutputs& out, const Tensor& workspace,
                                   const Tensor& x, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                                   const Tensor& b_hh, const Tensor& h0, const Tensor& c0, LstmGrads& grads) {
    return false;
  }
  // C[b] = op(A[b]) @ op(B[b]) for `batch` products of float16/bfloat16 operands of `dtype`,
  // accumulated in float32 and rounded once into C (contiguous (batch, m, n), same dtype); A is
  // (m, k) (stored (k, m) when trans_a) at leading dimension lda and batch stride sa (0: one A for
  // every b), B likewise (k, n); k > 0. matmul asks only where native_half_gemm() is false.
  virtual bool half_matmul(Dtype dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void* a,
                           int64_t lda, int64_t sa, const void* b, int64_t ldb, int64_t sb, void* c, int64_t batch) {
    return false;
  }
  // True when gemm() takes float16/bfloat16 operands directly (fp32 accumulation).
  virtual bool native_half_gemm() const { return false; }
  // nn.Linear with the bias in the GEMM: out (m, n) = x (m, k) w^T + bias, w (n, k), bias (n,) or
  // undefined (no bias); all contiguous, one float dtype (products as gemm() computes them). Returns
  // false, having written nothing, where this backend has no such kernel; the op then composes
  // matmul and add. Callers ask has_linear_bias() before building the operands.
  virtual bool has_linear_bias() const { return false; }
  virtual bool linear_bias(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& out) {
    (void)x, (void)w, (void)bias, (void)out;
    return false;
  }
  // Its weight and bias gradients in one call: dw (n, k) = dy^T x and db (n,) = dy's column sums
  // (db undefined: no bias), dy (m, n), x (m, k) of one float dtype; dw and db of that dtype, or
  // float32 for float16/bfloat16 dy and x (autocast's float32 master weights: accumulated in float32
  // and written without rounding to the half type). accumulate: dw += dy^T x (db must be undefined),
  // the GEMM reading dw as it writes it. False, nothing written: declined.
  virtual bool linear_bias_backward_weight(const Tensor& dy, const Tensor& x, Tensor& dw, Tensor& db, bool accumulate) {
    (void)dy, (void)x, (void)dw, (void)db, (void)accumulate;
    return false;
  }
  // The feed-forward block's first linear with GELU (tanh approximation) in the GEMM's epilogue:
  // pre (m, n) = x w^T + bias and out = gelu_tanh(pre), both of x's dtype; operands as
  // linear_bias's. False, nothing written: declined (the op then composes linear and gelu).
  virtual bool linear_bias_gelu(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& out, Tensor& pre) {
    (void)x, (void)w, (void)bias, (void)out, (void)pre;
    return false;
  }
  // The second linear's input gradient through that GELU: da (m, n) = (dy w) * gelu_tanh'(pre), dy
  // (m, n2), w (n2, n) and pre (m, n) of one float dtype. False, nothing written: declined.
  virtual bool linear_gelu_backward_input(const Tensor& dy, const Tensor& w, const Tensor& pre, Tensor& da) {
    (void)dy, (void)w, (void)pre, (void)da;
    return false;
  }
  // Rows per chunk for an op that streams a (rows, n) product through a reused buffer and sums a
  // result over the chunks (linear_cross_entropy: its weight gradient). Each chunk after the first
  // adds one pass over that sum against the chunk's GEMMs, so a device that multiplies many flops per
  // byte it moves wants few large chunks: by default at most 2^28 elements (a GPU multiplies ~300
  // flops per byte; GPT-2's 16384 x 50304 head in four chunks took 0.3 ms over the whole-logits
  // step on an H100).
  virtual int64_t stream_chunk_rows(int64_t n) const {
    return std::max<int64_t>(1, (int64_t{1} << 28) / std::max<int64_t>(n, 1));
  }
  // True when reduce() takes a float16/bfloat16 x directly and writes a float32 out (accumulating
  // as for float32); otherwise the op layer reduces a float32 copy.
  virtual bool native_half_reduce() const { return false; }
  // True when binary() and unary() take float16/bfloat16 tensors directly (computing in
  // float32 per element, one rounding to the storage type); otherwise the op layer runs
  // them on float32 copies.
  virtual bool native_half_elementwise() const { return false; }
  // True when binary() also takes, beside a float16/bfloat16 operand, a 0-dim float32 one (a
  // number the half type cannot hold, broadcast with zero strides) and computes with its float32
  // value; out has the half dtype. Otherwise the op layer computes such pairs in float32.
  virtual bool half_with_float_scalar() const { return false; }
  // True when layer_norm() and layer_norm_backward() take float16/bfloat16 rows directly;
  // otherwise the op layer runs them on float32 copies.
  virtual bool native_half_layer_norm() const { return false; }
  // Layer norm over the last `cols` of a contiguous (rows, cols) float tensor; w and b
  // (cols,) may be undefined; mean and rstd (rows,) are written for the backward. x, y, w, b
  // share one dtype: float32/float64, or float16/bfloat16 where native_half_layer_norm() (then
  // computed in float32, and mean and rstd are float32); there y may also be a half type beside
  // float32 x (the result rounded once to it: autocast's cast folded in) and the backward's g
  // then has y's dtype.
  virtual void layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, int64_t rows, int64_t cols, double eps,
                          Tensor& y, Tensor& mean, Tensor& rstd);
  // dx (rows, cols), dw and db (cols,) are each written when defined, in x's dtype.
  virtual void layer_norm_backward(const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                   const Tensor& w, int64_t rows, int64_t cols, Tensor& dx, Tensor& dw, Tensor& db);
  // Residual add, dropout and layer norm in one pass over contiguous (rows, cols) tensors:
  // h = x + y * m (m the factors of `drop`, over y's flat index) and out = layer_norm(h) exactly
  // as layer_norm() computes it. x, h, w, b share x's dtype (float32 or float64, or a half type
  // where native_half_layer_norm()); y and out have x's dtype or, for float32 x, float16/bfloat16
  // (autocast's half outputs added to a float32 residual stream; the normalised rows rounded once
  // to the half type their consumer casts them to). y undefined: h is not written and out =
  // layer_norm(x). mean and rstd as layer_norm(). Returns false, having written nothing, where
  // this backend has no such kernel or dtype pair: the op layer then runs the same computation with
  // this backend's binary, dropout_mask and layer_norm entries (the composite it must equal).
  virtual bool add_layer_norm(const Tensor& x, const Tensor& y, const Tensor& w, const Tensor& b, int64_t rows,
                              int64_t cols, double eps, const DropoutDraw& drop, Tensor& h, Tensor& out, Tensor& mean,
                              Tensor& rstd) {
    return false;
  }
  // Its backward: g = dL/dout (out's dtype), gh = dL/dh from h's other uses (undefined: none);
  // dx = gh + layer_norm_backward(g) in x's dtype, dy = dx * m in y's dtype, dw and db (x's
  // dtype) as layer_norm_backward(); each written when defined. false: the op layer runs it with
  // layer_norm_backward, binary and dropout_mask.
  virtual bool add_layer_norm_backward(const Tensor& g, const Tensor& gh, const Tensor& h, const Tensor& mean,
                                       const Tensor& rstd, const Tensor& w, int64_t rows, int64_t cols,
                                       const DropoutDraw& drop, Tensor& dx, Tensor& dy, Tensor& dw, Tensor& db) {
    return false;
  }
  // Dropout mask: out = (uniform < keep) * scale from the Philox stream at (seed, counter),
  // the same numbers the CPU draws.
  virtual void dropout_mask(Tensor& out, uint64_t seed, uint64_t counter, double scale, double keep) = 0;
  // ---- fused optimizer updates (every device; src/optim's optimizers only queue slots) ----
  // One optimizer step over many parameters at once (a few launches, or one parallel region on
  // the CPU, for all of them): every slot holds contiguous param/grad/state tensors of one dtype
  // (float32 or float64, the same in all slots); undefined optional state (vmax, buf, grad_avg)
  // switches that part off. `skip`, when set, points at one int32 on this device (a
  // flag_nonfinite flag): nothing is written when it holds a nonzero value, so a step can be
  // skipped without the host reading the flag first. Each update repeats PyTorch's
  // single-tensor arithmetic operation by operation, so results match torch.optim step by step.
  // Adam/AdamW: g' = (maximize ? -g : g) (+ wd p unless decoupled; p *= decay when decoupled),
  // m = lerp(m, g', 1 - beta1), v = beta2 v + (1 - beta2) g'^2 (vmax = max(vmax, v) with amsgrad),
  // p += -step_size m / (sqrt(v or vmax) / bc2_sqrt + eps).
  // Where native_half_adam(), Adam's slots may also be float16/bfloat16 (param, grad and moments
  // alike, computed in float32: PyTorch's fused Adam on half parameters).
  // device_step (Adam(capturable=True)): every slot's `step` (a one-element tensor of the slot's
  // compute dtype, float32 for half slots, on this device) is incremented by the update itself and the bias correction
  // is taken from it there, step_size then holding the learning rate and bc2_sqrt unused: the host passes no per-step
  // number, so the launch can be captured into a CUDA graph and replayed.
  struct AdamArgs {
    double step_size, beta1, beta2, eps, weight_decay, decay, bc2_sqrt;
    bool amsgrad, maximize, decoupled;
    const int32_t* skip = nullptr;
    bool device_step = false;
    bool operator==(const AdamArgs&) const = default;
  };
  struct AdamSlot {
    Tensor param, grad, m, v, vmax, step;
  };
  virtual void adam_update(std::span<const AdamSlot> slots, const AdamArgs& a) = 0;
  // Whether adam_update takes device_step (Adam(capturable=True)); the optimizer refuses
  // capturable=True for parameters on a backend without it.
  virtual bool has_device_step_adam() const { return false; }
  // Whether adam_update takes float16/bfloat16 slots (otherwise the optimizer updates float32
  // copies of half parameters and keeps float32 moments).
  virtual bool native_half_adam() const { return false; }
  // SGD: d = (maximize ? -g : g) + wd p; with a buffer, buf = first_step ? d : momentum buf +
  // (1 - dampening) d and d = nesterov ? d + momentum buf : buf; p += -lr d.
  struct SgdArgs {
    double lr, momentum, dampening, weight_decay;
    bool nesterov, maximize, first_step;
    const int32_t* skip = nullptr;  // as in AdamArgs
    bool operator==(const SgdArgs&) const = default;
  };
  struct SgdSlot {
    Tensor param, grad, buf;
  };
  virtual void sgd_update(std::span<const SgdSlot> slots, const SgdArgs& a) = 0;
  // Adagrad: g' = (maximize ? -g : g) + wd p, sum += g'^2, p += -clr (g' / (sqrt(sum) + eps)),
  // clr = lr / (1 + (step - 1) lr_decay) computed by the host.
  struct AdagradArgs {
    double clr, weight_decay, eps;
    bool maximize;
    const int32_t* skip = nullptr;  // as in AdamArgs
    bool operator==(const AdagradArgs&) const = default;
  };
  struct AdagradSlot {
    Tensor param, grad, sum;
  };
  virtual void adagrad_update(std::span<const AdagradSlot> slots, const AdagradArgs& a) = 0;
  // RMSprop: g' = (maximize ? -g : g) + wd p, sq = alpha sq + (1 - alpha) g'^2; centered:
  // ga = lerp(ga, g', 1 - alpha), avg = sqrt(sq - ga^2) + eps, else avg = sqrt(sq) + eps; with a
  // momentum buffer buf = momentum buf + g' / avg, p += -lr buf, else p += -lr (g' / avg).
  struct RmspropArgs {
    double lr, alpha, eps, weight_decay, momentum;
    bool maximize;
    const int32_t* skip = nullptr;  // as in AdamArgs
    bool operator==(const RmspropArgs&) const = default;
  };
  struct RmspropSlot {
    Tensor param, grad, square_avg, grad_avg, buf;
  };
  virtual void rmsprop_update(std::span<const RmspropSlot> slots, const RmspropArgs& a) = 0;
  // Sets `flag` (one int32 element on this device) to 1 when any of the contiguous
  // float32/float64 tensors xs holds a NaN or an infinity, and leaves it as it is otherwise:
  // one flag collects every gradient in a few launches, then a single read.
  virtual void flag_nonfinite(std::span<const Tensor> xs, Tensor& flag) = 0;
  // Starts copying `flag` (one int32 element on this device) to the host and returns a function
  // that yields it; the function waits only for the work queued before read_later, never for
  // later work. Default: reads now (the function returns the value read).
  virtual std::function<int32_t()> read_later(const Tensor& flag);
  // True when read_later returns before the read completes (a step's verdict can then be
  // fetched during the next step, without a sync point in this one).
  virtual bool reads_later() const { return false; }
};

Backend& backend_for(Device device);
Backend& cpu_backend();
// The CUDA backend of one device (src/backend/cuda/; a build without CUDA links cuda_stub.cpp, which throws
// DeviceUnavailableError with the reason when CUDA is not built or not present).
Backend& cuda_backend(int index);
// The wgpu backend (src/backend/wgpu/; wgpu_stub.cpp in builds without it throws
// DeviceUnavailableError with the reason, as does a machine where no adapter is found).
Backend& wgpu_backend(int index);

}  // namespace st::backend
