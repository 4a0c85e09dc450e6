// st::linalg (include/spiraltorch/linalg.h): argument checks, the backend's dense factorizations
// (Backend::lu_inverse ... Backend::svd: LAPACK on the CPU), and each op's backward beside its forward.
//
// Layout: most factorizations take column-major matrices (LAPACK's layout) and our tensors are
// row-major, so their batch is copied transposed (colmajor_copy); those of a symmetric input and
// the triangular solve take the plain row-major copy. Every factorization works on a fresh buffer
// (a triangular solve only reads A): the inputs are never written.
//
// Backward passes: with create_graph (grad mode on inside the backward) the forward is recomputed
// with history from the saved inputs, so the returned gradient is itself differentiable;
// otherwise the saved, detached outputs are used. Ops with several differentiable outputs (eigh,
// qr, svd) record one node per output: a backward is linear in the output gradients, so the engine's
// sum of the per-output contributions is the joint gradient.
#include <algorithm>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "ops/common.h"
#include "spiraltorch/autocast.h"
#include "spiraltorch/linalg.h"

namespace st::linalg {

namespace {

using st::detail::own_output;

// ---- checks ----

Shape batch_of(const Tensor& x) { return Shape(x.shape().begin(), x.shape().end() - 2); }
Tensor mT(const Tensor& x) { return transpose(x, -1, -2); }

// For a tensor whose backend has no dense factorizations (or declined one of them).
[[noreturn]] void refuse_device(const Tensor& x, const char* op, const char* what) {
  throw DeviceUnavailableError(std::string(op) + ": runs on the CPU only (LAPACK), but " + what + " is on " +
                               x.device().str() + "; move it to the CPU first (x.cpu() or x.to('cpu'))");
}

void check_float_supported(const Tensor& x, const char* op, const char* what) {
  if (x.dtype() != Dtype::Float32 && x.dtype() != Dtype::Float64) {
    throw DtypeError(std::string(op) + ": expected " + what + " to be float32 or float64, got " +
                     dtype_name(x.dtype()));
  }
  if (!detail::backend_of(x).has_dense_linalg()) refuse_device(x, op, what);
}

// The factorizations take 32-bit sizes (LAPACK's integers).
bool fits_int32(int64_t v) { return v >= 0 && v <= std::numeric_limits<int32_t>::max(); }

// The input as the op computes with it: float32 under autocast, checked to be a (batch of)
// matrices of a float dtype on a backend with the dense factorizations.
Tensor matrix_arg(const Tensor& x_in, const char* op, const char* what, bool square) {
  const Tensor x = autocast::to_float(x_in);
  if (x.dim() < 2) {
    throw ShapeError(std::string(op) + ": expected " + what + " to have at least 2 dimensions (..., " +
                     (square ? "n, n" : "m, n") + "), got shape " + shape_str(x.shape()));
  }
  const int64_t rows = x.shape()[x.dim() - 2], cols = x.shape().back();
  if (square && rows != cols) {
    throw ShapeError(std::string(op) + ": expected " + what +
                     " to be a square matrix or a batch of square matrices (..., n, n), got shape " +
                     shape_str(x.shape()));
  }
  check_float_supported(x, op, what);
  if (!fits_int32(rows) || !fits_int32(cols) || !fits_int32(rows * cols)) {
    throw ShapeError(std::string(op) + ": matrices of shape " + shape_str(x.shape()) +
                     " are too large for LAPACK's 32-bit sizes");
  }
  return x;
}

// B next to A: the same dtype and device.
void check_pair(const Tensor& A, const Tensor& B, const char* op) {
  check_float_supported(B, op, "B");
  if (A.dtype() != B.dtype()) {
    throw DtypeError(std::string(op) + ": expected A and B to have the same dtype, got " + dtype_name(A.dtype()) +
                     " and " + dtype_name(B.dtype()));
  }
  detail::check_same_device(A, B, op);
}

bool parse_uplo(const std::string& uplo, const char* op) {
  if (uplo == "L" || uplo == "l") return false;
  if (uplo == "U" || uplo == "u") return true;
  throw ValueError(std::string(op) + ": UPLO must be 'L' or 'U', got '" + uplo + "'");
}

// Raises for the first matrix whose LAPACK info is nonzero: a ValueError saying what `explain`
// makes of a positive info (prefixed with the batch element for batched inputs, like PyTorch),
// or an internal error for a rejected argument.
template <typename F>
void raise_on_failure(const std::vector<int>& info, bool batched, const char* op, F explain) {
  for (size_t i = 0; i < info.size(); ++i) {
    if (info[i] == 0) continue;
    if (info[i] < 0) {
      throw SpiralError(std::string(op) + ": LAPACK rejected argument " + std::to_string(-info[i]) +
                        " (an internal error in SpiralTorch)");
    }
    const std::string where = batched ? "(Batch element " + std::to_string(i) + "): " : "";
    throw ValueError(std::string(op) + ": " + where + explain(info[i]));
  }
}

// ---- buffers ----

// A fresh contiguous tensor with x's values (x may be any strided or broadcast view); the
// factorizations write into it, so it never shares x's storage.
Tensor fresh_copy(const Tensor& x) {
  Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
  if (out.numel() > 0) detail::backend_of(x).copy(x, out);
  return out;
}

// The matrices of x column-major: the contiguous (..., cols, rows) tensor holding x^T.
Tensor colmajor_copy(const Tensor& x) { return fresh_copy(mT(x.detach())); }

Tensor eye_like(int64_t n, const Tensor& like) {
  const Tensor e = eye(n, n, like.dtype());
  return e.device() == like.device() ? e : to_device(e, like.device());
}

Tensor unsqueeze2(const Tensor& x) { return unsqueeze(unsqueeze(x, -1), -1); }

// ---- raw computations (no autograd; inputs already checked) ----
// Each hands its buffers to one backend entry; a backend that declines refuses A like one
// without the factorizations.

const char* const kSingularInverse =
    " is zero, the inversion could not be completed because the input matrix is singular.";

// inv(A) through the LU factors; `op` names the caller in the error for a singular matrix.
Tensor inv_raw(const Tensor& A, const char* op) {
  const int64_t n = A.shape().back();
  Tensor buf = colmajor_copy(A);
  const int64_t batch = shape_numel(batch_of(A));
  std::vector<int> info(static_cast<size_t>(batch));
  if (!detail::backend_of(A).lu_inverse(buf, batch, n, info)) refuse_device(A, op, "A");
  raise_on_failure(info, A.dim() > 2, op,
                   [](int i) { return "The diagonal element " + std::to_string(i) + kSingularInverse; });
  return mT(buf).contiguous();
}

// X with A X = B; A (..., n, n) and B (..., n, k) broadcast over `batch`.
Tensor solve_raw(const Tensor& A, const Tensor& B, const Shape& batch) {
  const int64_t n = A.shape().back(), k = B.shape().back();
  Shape a_full = batch, b_full = batch;
  a_full.insert(a_full.end(), {n, n});
  b_full.insert(b_full.end(), {n, k});
  Tensor a = colmajor_copy(detail::expand_view(A.detach(), a_full));
  Tensor x = colmajor_copy(detail::expand_view(B.detach(), b_full));
  const int64_t nbatch = shape_numel(batch);
  std::vector<int> info(static_cast<size_t>(nbatch));
  if (!detail::backend_of(A).lu_solve(a, x, nbatch, n, k, info)) refuse_device(A, "linalg.solve", "A");
  raise_on_failure(info, a_full.size() > 2, "linalg.solve", [](int i) {
    return "The diagonal element " + std::to_string(i) +
           " is zero, the solve could not be completed because the input matrix is singular.";
  });
  return mT(x).contiguous();
}

// X with A X = B for triangular A; shapes as in solve_raw.
Tensor solve_triangular_raw(const Tensor& A, const Tensor& B, const Shape& batch, bool upper, bool unit) {
  const int64_t n = A.shape().back(), k = B.shape().back();
  Shape a_full = batch, b_full = batch;
  a_full.insert(a_full.end(), {n, n});
  b_full.insert(b_full.end(), {n, k});
  // The solve only reads A: a contiguous A is used in place.
  const Tensor a_view = detail::expand_view(A.detach(), a_full);
  const Tensor a = a_view.is_contiguous() ? a_view : fresh_copy(a_view);
  Tensor x = fresh_copy(detail::expand_view(B.detach(), b_full));
  if (!detail::backend_of(A).triangular_solve(a, x, shape_numel(batch), n, k, upper, unit)) {
    refuse_device(A, "linalg.solve_triangular", "A");
  }
  return x;
}

// det and (sign, log|det|) from one LU per matrix.
struct LuDeterminant {
  Tensor det, sign, logabsdet;
};

LuDeterminant determinant_raw(const Tensor& A, bool want_det, bool want_log, const char* op) {
  const int64_t n = A.shape().back();
  const Shape batch = batch_of(A);
  LuDeterminant r;
  if (want_det) r.det = Tensor::empty(batch, A.dtype(), A.device());
  if (want_log) {
    r.sign = Tensor::empty(batch, A.dtype(), A.device());
    r.logabsdet = Tensor::empty(batch, A.dtype(), A.device());
  }
  Tensor buf = colmajor_copy(A);
  if (!detail::backend_of(A).lu_determinant(buf, shape_numel(batch), n, r.det, r.sign, r.logabsdet)) {
    refuse_device(A, op, "A");
  }
  return r;
}

// The first derivative of det at each matrix: g det(A) A^-T, or at a singular matrix the
// cofactor matrix from the SVD (Backend::determinant_backward).
Tensor det_backward_raw(const Tensor& A, const Tensor& g) {
  const char* op = "linalg.det (backward)";
  const int64_t n = A.shape().back();
  const int64_t nbatch = shape_numel(batch_of(A));
  const Tensor gc = fresh_copy(g.detach().to(A.dtype()));
  Tensor out = Tensor::empty(A.shape(), A.dtype(), A.device());
  const Tensor src = colmajor_copy(A);
  std::vector<int> info(static_cast<size_t>(nbatch));
  if (!detail::backend_of(A).determinant_backward(src, gc, nbatch, n, out, info)) refuse_device(A, op, "A");
  raise_on_failure(info, A.dim() > 2, op,
                   [](int i) { return "the SVD did not converge (error code " + std::to_string(i) + ")"; });
  return out;
}

// The Cholesky factor, from the plain row-major copy.
Tensor cholesky_raw(const Tensor& A, bool upper) {
  const int64_t n = A.shape().back();
  Tensor buf = fresh_copy(A.detach());
  const int64_t nbatch = shape_numel(batch_of(A));
  std::vector<int> info(static_cast<size_t>(nbatch));
  if (!detail::backend_of(A).cholesky(buf, nbatch, n, upper, info)) refuse_device(A, "linalg.cholesky", "A");
  raise_on_failure(info, A.dim() > 2, "linalg.cholesky", [](int i) {
    return "The factorization could not be completed because the input is not positive-definite (the leading "
           "minor of order " +
           std::to_string(i) + " is not positive-definite).";
  });
  return buf;
}

// Eigenvalues (ascending) and, with `vectors`, eigenvectors of the symmetric matrices whose
// `upper` (or lower) triangle is given; the backend leaves V^T in the row-major copy.
std::pair<Tensor, Tensor> eigh_raw(const Tensor& A, bool upper, bool vectors, const char* op) {
  const int64_t n = A.shape().back();
  Tensor buf = fresh_copy(A.detach());
  Shape wshape = batch_of(A);
  wshape.push_back(n);
  Tensor w = Tensor::empty(wshape, A.dtype(), A.device());
  const int64_t nbatch = shape_numel(batch_of(A));
  std::vector<int> info(static_cast<size_t>(nbatch));
  if (!detail::backend_of(A).eigh(buf, nbatch, n, upper, vectors, w, info)) refuse_device(A, op, "A");
  raise_on_failure(info, A.dim() > 2, op, [](int i) {
    return "The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated "
           "eigenvalues (error code: " +
           std::to_string(i) + ").";
  });
  return {w, vectors ? mT(buf).contiguous() : Tensor()};
}

// Q and R of A (..., m, n). `complete`: Q (m, m) and R (m, n), else Q (m, k) and R (k, n) with
// k = min(m, n); Q is computed only when `want_q`.
std::pair<Tensor, Tensor> qr_raw(const Tensor& A, bool complete, bool want_q) {
  const int64_t m = A.shape()[A.dim() - 2], n = A.shape().back(), k = std::min(m, n);
  const int64_t q_cols = complete ? m : k, r_rows = complete ? m : k;
  const Shape batch = batch_of(A);
  const int64_t nbatch = shape_numel(batch);
  Shape q_shape = batch, r_shape = batch;
  q_shape.insert(q_shape.end(), {m, q_cols});
  r_shape.insert(r_shape.end(), {r_rows, n});
  Tensor Q = want_q ? Tensor::empty(q_shape, A.dtype(), A.device()) : Tensor();
  Tensor R = Tensor::empty(r_shape, A.dtype(), A.device());
  Tensor buf = colmajor_copy(A);
  std::vector<int> info(static_cast<size_t>(nbatch));
  if (!detail::backend_of(A).qr(buf, nbatch, m, n, complete, Q, R, info)) refuse_device(A, "linalg.qr", "A");
  raise_on_failure(info, A.dim() > 2, "linalg.qr",
                   [](int i) { return "LAPACK failed with code " + std::to_string(i); });
  return {Q, R};
}

// U, S, Vh of A (..., m, n); U and Vh only when `want_uv` (`full`: square ones).
struct SvdFactors {
  Tensor U, S, Vh;
};

SvdFactors svd_raw(const Tensor& A, bool full, bool want_uv, const char* op) {
  const int64_t m = A.shape()[A.dim() - 2], n = A.shape().back(), k = std::min(m, n);
  const int64_t u_cols = full ? m : k, v_rows = full ? n : k;
  const Shape batch = batch_of(A);
  const int64_t nbatch = shape_numel(batch);
  SvdFactors f;
  Shape s_shape = batch, u_shape = batch, v_shape = batch;
  s_shape.push_back(k);
  u_shape.insert(u_shape.end(), {m, u_cols});
  v_shape.insert(v_shape.end(), {v_rows, n});
  f.S = Tensor::empty(s_shape, A.dtype(), A.device());
  if (want_uv) {
    f.U = Tensor::empty(u_shape, A.dtype(), A.device());
    f.Vh = Tensor::empty(v_shape, A.dtype(), A.device());
  }
  Tensor buf = colmajor_copy(A);
  std::vector<int> info(static_cast<size_t>(nbatch));
  if (!detail::backend_of(A).svd(buf, nbatch, m, n, full, f.S, f.U, f.Vh, info)) refuse_device(A, op, "A");
  raise_on_failure(info, A.dim() > 2, op, [](int i) {
    return "The algorithm failed to converge because the input matrix is ill-conditioned or has too many repeated "
           "singular values (error code: " +
           std::to_string(i) + ").";
  });
  return f;
}

// The gradient of A = U diag(S) Vh (thin factors) from gU, gS, gVh, any of them undefined; PyTorch's
// svd_backward for real matrices, built from differentiable ops:
//   gA = U [(skew(U^T gU) S + S skew(V^T gV)) / E + diag(gS)] Vh
//        + (I - U U^T) gU S^-1 Vh (m > n) + U S^-1 gVh (I - V Vh) (m < n),
// with skew(X) = X - X^T and E_ij = S_j^2 - S_i^2 (ones on the diagonal, where skew is zero).
Tensor svd_backward(const Tensor& gU, const Tensor& gS, const Tensor& gVh, const Tensor& U, const Tensor& S,
                    const Tensor& Vh) {
  const int64_t m = U.shape()[U.dim() - 2], n = Vh.shape().back(), k = S.shape().back();
  if (!gU.defined() && !gVh.defined()) return matmul(mul(U, unsqueeze(gS, -2)), Vh);
  const Tensor S2 = mul(S, S);
  const Tensor E = add(sub(unsqueeze(S2, -2), unsqueeze(S2, -1)), eye_like(k, S));
  Tensor inner;
  if (gU.defined()) {
    const Tensor X = matmul(mT(U), gU);
    inner = div(mul(sub(X, mT(X)), unsqueeze(S, -2)), E);
  }
  if (gVh.defined()) {
    const Tensor X = matmul(Vh, mT(gVh));
    const Tensor t = div(mul(unsqueeze(S, -1), sub(X, mT(X))), E);
    inner = inner.defined() ? add(inner, t) : t;
  }
  if (gS.defined()) inner = add(inner, mul(unsqueeze(gS, -2), eye_like(k, S)));
  Tensor gA = matmul(matmul(U, inner), Vh);
  if (m > n && gU.defined()) {
    const Tensor gUSinv = div(gU, unsqueeze(S, -2));
    gA = add(gA, matmul(sub(gUSinv, matmul(U, matmul(mT(U), gUSinv))), Vh));
  }
  if (m < n && gVh.defined()) {
    const Tensor SinvgVh = div(gVh, unsqueeze(S, -1));
    gA = add(gA, matmul(U, sub(SinvgVh, matmul(matmul(SinvgVh, mT(Vh)), Vh))));
  }
  return gA;
}

// The gradient of A = Q R (reduced, Q (m, k), R (k, n)) from gQ and gR, either possibly
// undefined; built from differentiable ops.
Tensor qr_backward(const Tensor& gQ, const Tensor& gR, const Tensor& Q, const Tensor& R) {
  const int64_t m = Q.shape()[Q.dim() - 2], n = R.shape().back();
  if (m < n) {
    // A = [X | Y], R = [U | V] with X = Q U square and Y = Q V: X takes the square-case gradient
    // with gQ + Y gV^T, and gY = Q gV (Liao et al. 2019, "Differentiable programming tensor networks").
    const Tensor U = narrow(R, -1, 0, m);
    Tensor gQx = gQ, gU, gY;
    if (gR.defined()) {
      gU = narrow(gR, -1, 0, m);
      const Tensor gV = narrow(gR, -1, m, n - m);
      const Tensor YgVt = matmul(matmul(Q, narrow(R, -1, m, n - m)), mT(gV));
      gQx = gQx.defined() ? add(gQx, YgVt) : YgVt;
      gY = matmul(Q, gV);
    } else {
      Shape s = Q.shape();
      s.back() = n - m;
      gY = zeros(s, Q.dtype(), Q.device());
    }
    return cat({qr_backward(gQx, gU, Q, U), gY}, -1);
  }
  // m >= n: gA = (gQ + Q copyltu(M)) R^-T with M = R gR^T - gQ^T Q, copyltu(M) the symmetric
  // matrix with M's lower triangle.
  Tensor M;
  if (gR.defined()) M = matmul(R, mT(gR));
  if (gQ.defined()) {
    const Tensor t = matmul(mT(gQ), Q);
    M = M.defined() ? sub(M, t) : neg(t);
  }
  Tensor B = matmul(Q, add(tril(M), mT(tril(M, -1))));
  if (gQ.defined()) B = add(B, gQ);
  return solve_triangular(mT(R), B, /*upper=*/false, /*left=*/false);
}

// X with A X = B for matrices B; A and B checked, batch dims broadcast.
Tensor solve_matrix(const Tensor& A, const Tensor& B) {
  const int64_t n = A.shape().back();
  if (B.shape()[B.dim() - 2] != n) {
    throw ShapeError("linalg.solve: A of shape " + shape_str(A.shape()) + " and B of shape " + shape_str(B.shape()) +
                     " are incompatible (B needs " + std::to_string(n) + " rows)");
  }
  const Shape batch = broadcast_shapes(batch_of(A), batch_of(B), "linalg.solve");
  Tensor X = solve_raw(A, B, batch);
  if (needs_grad({&A, &B})) {
    record(X, "LinalgSolveBackward", {A, B}, [A, B, X0 = X.detach()](const Tensor& g) -> std::vector<Tensor> {
      const Tensor gB = solve_matrix(mT(A), g);
      Tensor gA;
      if (A.requires_grad()) {
        const Tensor X = grad_enabled() ? solve_matrix(A, B) : X0;
        gA = detail::sum_to(neg(matmul(gB, mT(X))), A.shape());
      }
      return {gA, B.requires_grad() ? detail::sum_to(gB, B.shape()) : Tensor()};
    }, {A, B, X});
  }
  return X;
}

// Records the eigenvalue part of eigh's gradient on w: gA = V diag(gw) V^T.
void record_eigenvalue_grad(Tensor& w, const Tensor& A, const Tensor& V, const std::string& uplo) {
  record(w, "LinalgEighBackward", {A}, [A, V0 = V.detach(), uplo](const Tensor& gw) -> std::vector<Tensor> {
    const Tensor V = grad_enabled() ? eigh(A, uplo).second : V0;
    return {matmul(mul(V, unsqueeze(gw, -2)), mT(V))};
  }, {A, V});
}

}  // namespace

Tensor inv(const Tensor& A_in) {
  const op_observer::OpEvent event("linalg.inv");
  const Tensor A = matrix_arg(A_in, "linalg.inv", "A", true);
  Tensor out = inv_raw(A, "linalg.inv");
  if (needs_grad({&A})) {
    record(out, "LinalgInvBackward", {A}, [A, Ai0 = out.detach()](const Tensor& g) -> std::vector<Tensor> {
      const Tensor AiT = mT(grad_enabled() ? inv(A) : Ai0);
      return {neg(matmul(matmul(AiT, g), AiT))};
    }, {A, out});
  }
  event.publish(A, out);
  return out;
}

Tensor solve(const Tensor& A_in, const Tensor& B_in, bool left) {
  const op_observer::OpEvent event("linalg.solve");
  const Tensor A = matrix_arg(A_in, "linalg.solve", "A", true);
  const Tensor B = autocast::to_float(B_in);
  if (B.dim() < 1) {
    throw ShapeError("linalg.solve: expected B to have at least 1 dimension, got shape " + shape_str(B.shape()));
  }
  check_pair(A, B, "linalg.solve");
  // torch's rule: B is a batch of vectors when it is 1-d or has exactly A's shape without the last dim.
  const bool vector =
      B.dim() == 1 || (B.dim() == A.dim() - 1 && std::equal(B.shape().begin(), B.shape().end(), A.shape().begin()));
  if ((!vector && B.dim() < 2) || (vector && !left)) {
    throw ShapeError("linalg.solve: A of shape " + shape_str(A.shape()) + " and B of shape " + shape_str(B.shape()) +
                     " are incompatible" +
                     (left ? "" : " (left=False needs B to be a matrix or a batch of matrices (..., k, n))"));
  }
  Tensor X;
  if (vector) {
    X = squeeze(solve_matrix(A, unsqueeze(B, -1)), -1);
  } else if (left) {
    X = solve_matrix(A, B);
  } else {
    // X A = B is A^T X^T = B^T.
    X = mT(solve_matrix(mT(A), mT(B)));
  }
  event.publish(A, X);
  return X;
}

Tensor solve_triangular(const Tensor& A_in, const Tensor& B_in, bool upper, bool left, bool unitriangular) {
  const char* op = "linalg.solve_triangular";
  const op_observer::OpEvent event(op);
  const Tensor A = matrix_arg(A_in, op, "A", true);
  const Tensor B = matrix_arg(B_in, op, "B", false);
  check_pair(A, B, op);
  const int64_t n = A.shape().back();
  if ((left ? B.shape()[B.dim() - 2] : B.shape().back()) != n) {
    throw ShapeError(std::string(op) + ": A of shape " + shape_str(A.shape()) + " and B of shape " +
                     shape_str(B.shape()) + " are incompatible (B needs " + std::to_string(n) +
                     (left ? " rows" : " columns") + ")");
  }
  // X A = B is A^T X^T = B^T.
  if (!left) return mT(solve_triangular(mT(A), mT(B), !upper, true, unitriangular));
  const Shape batch = broadcast_shapes(batch_of(A), batch_of(B), op);
  Tensor X = solve_triangular_raw(A, B, batch, upper, unitriangular);
  if (needs_grad({&A, &B})) {
    record(X, "LinalgSolveTriangularBackward", {A, B},
           [A, B, X0 = X.detach(), upper, unitriangular](const Tensor& g) -> std::vector<Tensor> {
      const Tensor gB = solve_triangular(mT(A), g, !upper, true, unitriangular);
      Tensor gA;
      if (A.requires_grad()) {
        const Tensor X = grad_enabled() ? solve_triangular(A, B, upper, true, unitriangular) : X0;
        // Only the triangle A's values were read from receives a gradient.
        const Tensor full = neg(matmul(gB, mT(X)));
        const int64_t diag = unitriangular ? 1 : 0;
        gA = detail::sum_to(upper ? triu(full, diag) : tril(full, -diag), A.shape());
      }
      return {gA, B.requires_grad() ? detail::sum_to(gB, B.shape()) : Tensor()};
    }, {A, B, X});
  }
  event.publish(A, X);
  return X;
}

Tensor det(const Tensor& A_in) {
  const op_observer::OpEvent event("linalg.det");
  const Tensor A = matrix_arg(A_in, "linalg.det", "A", true);
  Tensor d = determinant_raw(A, true, false, "linalg.det").det;
  if (needs_grad({&A})) {
    record(d, "LinalgDetBackward", {A}, [A, d0 = d.detach()](const Tensor& g) -> std::vector<Tensor> {
      if (!grad_enabled()) return {det_backward_raw(A.detach(), g)};
      // Differentiable form g det(A) A^-T; it needs A^-1, so singular matrices have first derivatives only.
      if (any(eq(d0, wrap_scalar(0.0, d0))).item() != 0.0) {
        throw ValueError(
            "linalg.det: the gradient at a singular matrix is available to first order only (create_graph "
            "needs A^-1)");
      }
      return {mul(unsqueeze2(mul(g, det(A))), mT(inv(A)))};
    }, {A, d});
  }
  event.publish(A, d);
  return d;
}

std::pair<Tensor, Tensor> slogdet(const Tensor& A_in) {
  const op_observer::OpEvent event("linalg.slogdet");
  const Tensor A = matrix_arg(A_in, "linalg.slogdet", "A", true);
  LuDeterminant r = determinant_raw(A, false, true, "linalg.slogdet");
  if (needs_grad({&A})) {
    record(r.logabsdet, "LinalgSlogdetBackward", {A}, [A](const Tensor& g) -> std::vector<Tensor> {
      const Tensor Ai = grad_enabled() ? inv(A) : inv_raw(A.detach(), "linalg.slogdet (backward)");
      return {mul(unsqueeze2(g), mT(Ai))};
    }, {A});
  }
  event.publish(A, r.logabsdet);
  return {r.sign, r.logabsdet};
}

Tensor cholesky(const Tensor& A_in, bool upper) {
  const op_observer::OpEvent event("linalg.cholesky");
  const Tensor A = matrix_arg(A_in, "linalg.cholesky", "A", true);
  Tensor F = cholesky_raw(A, upper);
  if (needs_grad({&A})) {
    record(F, "LinalgCholeskyBackward", {A}, [A, F0 = F.detach(), upper](const Tensor& g) -> std::vector<Tensor> {
      // Murray (2016), arXiv:1602.07527, in PyTorch's arrangement: with P = tril(L^T gL),
      // gA = L^-T S L^-1 where S = (P + tril(P, -1)^T) / 2 is Phi(P) symmetrised.
      const Tensor F = grad_enabled() ? cholesky(A, upper) : F0;
      const Tensor L = upper ? mT(F) : F;
      const Tensor gL = upper ? mT(g) : g;
      const Tensor P = tril(matmul(mT(L), gL));
      const Tensor S = mul(add(P, mT(tril(P, -1))), 0.5);
      const Tensor Y = solve_triangular(mT(L), S, /*upper=*/true);
      return {solve_triangular(L, Y, /*upper=*/false, /*left=*/false)};
    }, {A, F});
  }
  event.publish(A, F);
  return F;
}

std::pair<Tensor, Tensor> eigh(const Tensor& A_in, const std::string& uplo) {
  const op_observer::OpEvent event("linalg.eigh");
  const bool upper = parse_uplo(uplo, "linalg.eigh");
  const Tensor A = matrix_arg(A_in, "linalg.eigh", "A", true);
  auto [w, V] = eigh_raw(A, upper, true, "linalg.eigh");
  if (needs_grad({&A})) {
    const int64_t n = A.shape().back();
    // One node for w and V: gA = V (diag(gw) + F o skew(V^T gV)) V^T, F_ij = 1 / (w_j - w_i).
    auto self = std::make_shared<std::weak_ptr<Node>>();
    record_multi({w, V}, "LinalgEighBackward", {A},
                 [self, w0 = w.detach(), V0 = V.detach(), n](std::span<const Tensor> g) -> std::vector<Tensor> {
      const Tensor &gw = g[0], &gV = g[1];
      const bool graph = grad_enabled();
      const Tensor w = graph ? own_output(w0, *self, 0) : w0;
      const Tensor V = graph ? own_output(V0, *self, 1) : V0;
      Tensor inner;
      if (gV.defined()) {
        // skew(.) has a zero diagonal, which the ones put on E's diagonal leave at zero.
        const Tensor X = matmul(mT(V), gV);
        const Tensor skew = mul(sub(X, mT(X)), 0.5);
        const Tensor E = add(sub(unsqueeze(w, -2), unsqueeze(w, -1)), eye_like(n, w));
        inner = div(skew, E);
      }
      if (gw.defined()) {
        const Tensor d = mul(unsqueeze(gw, -2), eye_like(n, w));
        inner = inner.defined() ? add(inner, d) : d;
      }
      return {matmul(matmul(V, inner), mT(V))};
    }, {w, V});
    *self = w.grad_fn();
  }
  event.publish(A, V);
  return {w, V};
}

Tensor eigvalsh(const Tensor& A_in, const std::string& uplo) {
  const op_observer::OpEvent event("linalg.eigvalsh");
  const bool upper = parse_uplo(uplo, "linalg.eigvalsh");
  const Tensor A = matrix_arg(A_in, "linalg.eigvalsh", "A", true);
  const bool grad = needs_grad({&A});
  // The eigenvectors are computed only when the gradient needs them.
  auto [w, V] = eigh_raw(A, upper, grad, "linalg.eigvalsh");
  if (grad) record_eigenvalue_grad(w, A, V, uplo);
  event.publish(A, w);
  return w;
}

std::pair<Tensor, Tensor> qr(const Tensor& A_in, const std::string& mode) {
  const op_observer::OpEvent event("linalg.qr");
  if (mode != "reduced" && mode != "complete" && mode != "r") {
    throw ValueError("linalg.qr: mode must be 'reduced', 'complete' or 'r', got '" + mode + "'");
  }
  const Tensor A = matrix_arg(A_in, "linalg.qr", "A", false);
  const int64_t m = A.shape()[A.dim() - 2], n = A.shape().back(), k = std::min(m, n);
  const bool complete = mode == "complete", grad = needs_grad({&A});
  auto [Q, R] = qr_raw(A, complete, mode != "r" || grad);
  if (grad) {
    // The reduced factors the gradient is made of; a complete R of a tall A only adds zero rows.
    const bool tall_complete = complete && m > n;
    const Tensor Qr = (tall_complete ? narrow(Q, -1, 0, k) : Q).detach();
    const Tensor Rr = (tall_complete ? narrow(R, -2, 0, k) : R).detach();
    // One node for Q and R (mode 'r' returns no Q: its slot never receives a gradient).
    record_multi({mode != "r" ? Q : Tensor(), R}, "LinalgQrBackward", {A},
                 [A, Qr, Rr, tall_complete, k](std::span<const Tensor> g) -> std::vector<Tensor> {
      const Tensor &gQ = g[0], &gR = g[1];
      if (tall_complete && gQ.defined()) {
        throw ValueError(
            "linalg.qr: the gradient through Q is not defined for mode='complete' with more rows than "
            "columns (its last m - n columns are not unique); use mode='reduced'");
      }
      Tensor Q = Qr, R = Rr;
      if (grad_enabled()) std::tie(Q, R) = qr(A, "reduced");
      const Tensor gRr = tall_complete && gR.defined() ? narrow(gR, -2, 0, k) : gR;
      return {qr_backward(gQ, gRr, Q, R)};
    }, {A, Q, R});
  }
  if (mode == "r") Q = Tensor::empty({0}, A.dtype(), A.device());
  event.publish(A, R);
  return {Q, R};
}

std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A_in, bool full_matrices) {
  const op_observer::OpEvent event("linalg.svd");
  const Tensor A = matrix_arg(A_in, "linalg.svd", "A", false);
  SvdFactors f = svd_raw(A, full_matrices, true, "linalg.svd");
  if (needs_grad({&A})) {
    const int64_t k = f.S.shape().back();
    auto self = std::make_shared<std::weak_ptr<Node>>();
    // One node for U, S and Vh: the backward sees all three gradients at once.
    record_multi({f.U, f.S, f.Vh}, "LinalgSvdBackward", {A},
                 [self, U0 = f.U.detach(), S0 = f.S.detach(), Vh0 = f.Vh.detach(), k,
                  full_matrices](std::span<const Tensor> g) -> std::vector<Tensor> {
      const bool graph = grad_enabled();
      // The thin factors the gradient is made of: full_matrices' extra columns of U and rows
      // of Vh get no gradient (as in PyTorch).
      const auto thin = [&](const Tensor& t, int64_t dim) {
        return full_matrices && t.defined() ? narrow(t, dim, 0, k) : t;
      };
      const Tensor U = thin(graph ? own_output(U0, *self, 0) : U0, -1);
      const Tensor S = graph ? own_output(S0, *self, 1) : S0;
      const Tensor Vh = thin(graph ? own_output(Vh0, *self, 2) : Vh0, -2);
      return {svd_backward(thin(g[0], -1), g[1], thin(g[2], -2), U, S, Vh)};
    },
                 {f.U, f.S, f.Vh});
    *self = f.S.grad_fn();
  }
  event.publish(A, f.S);
  return {f.U, f.S, f.Vh};
}

Tensor svdvals(const Tensor& A_in) {
  const op_observer::OpEvent event("linalg.svdvals");
  const Tensor A = matrix_arg(A_in, "linalg.svdvals", "A", false);
  const bool grad = needs_grad({&A});
  // The singular vectors are computed only when the gradient needs them.
  SvdFactors f = svd_raw(A, false, grad, "linalg.svdvals");
  if (grad) {
    record(f.S, "LinalgSvdvalsBackward", {A},
           [A, U0 = f.U.detach(), Vh0 = f.Vh.detach()](const Tensor& gS) -> std::vector<Tensor> {
      Tensor U = U0, Vh = Vh0;
      if (grad_enabled()) std::tie(U, std::ignore, Vh) = svd(A, false);
      return {matmul(mul(U, unsqueeze(gS, -2)), Vh)};
    }, {A, f.S});
  }
  event.publish(A, f.S);
  return f.S;
}

}  // namespace st::linalg
