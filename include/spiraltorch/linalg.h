#pragma once
// Dense linear algebra with PyTorch's torch.linalg semantics, computed on the CPU by LAPACK
// (OpenBLAS), differentiable. Every function takes float32 or float64 tensors whose last two
// dims are the matrices and whose leading dims, if any, are a batch: (..., n, n) unless said.
//
// Errors: fewer than 2 dims or non-square matrices are ShapeError; integer, bool and half
// dtypes DtypeError; tensors on another device (cuda, wgpu) DeviceUnavailableError: move them
// to the CPU first, nothing is copied behind the caller's back. Numerical failures (a singular
// matrix in inv/solve, a matrix that is not positive-definite in cholesky) are ValueError naming
// the batch element. Nothing is written to the inputs.
//
// Gradients follow the standard formulas (see each function). The backward passes are made of
// differentiable ops, so higher derivatives work too (create_graph).
#include <string>
#include <tuple>
#include <utility>

#include "spiraltorch/tensor.h"

namespace st::linalg {

// The inverse of each matrix. Gradient: -A^-T g A^-T.
Tensor inv(const Tensor& A);

// X with A X = B (left) or X A = B. B is a batch of matrices (..., n, k) ((..., k, n) when not
// left), or of vectors (..., n) when B is 1-d or B.dim() == A.dim() - 1 with B's shape equal to
// A's without its last dim (torch's rule; left only); the batch dims of A and B broadcast.
// Gradient: gB = solve(A^T, g), gA = -gB X^T.
Tensor solve(const Tensor& A, const Tensor& B, bool left = true);

// X with A X = B (left) or X A = B (not left) for triangular A: only its `upper` (or lower)
// triangle is read, and with `unitriangular` its diagonal is taken as ones. B is (..., n, k)
// (left) or (..., k, n); batch dims broadcast. Like PyTorch there is no singularity check: a
// zero on the diagonal gives inf/NaN.
Tensor solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left = true, bool unitriangular = false);

// det(A) per matrix (0 for a singular one); shape (...). Gradient: g det(A) A^-T, and through
// the SVD's cofactor formula at singular matrices (first derivatives only there).
Tensor det(const Tensor& A);

// (sign, log|det A|) per matrix: sign is -1, 0 or 1 (0 and -inf for a singular matrix). Only
// logabsdet is differentiable: g A^-T.
std::pair<Tensor, Tensor> slogdet(const Tensor& A);

// The Cholesky factor of a symmetric positive-definite matrix: lower L with A = L L^T, or upper
// U with A = U^T U. Only the lower (upper) triangle of A is read. Gradient: the symmetric
// L^-T Phi(L^T gL) L^-1 (Phi: the lower triangle with its diagonal halved, then symmetrised).
Tensor cholesky(const Tensor& A, bool upper = false);

// Eigenvalues (ascending, shape (..., n)) and orthonormal eigenvectors (the columns of (..., n, n))
// of symmetric matrices, reading only the triangle `uplo` ("L" or "U"). Gradient (symmetric):
// V (diag(gw) + sym(F o V^T gV)) V^T with F_ij = 1 / (w_j - w_i) off the diagonal; repeated
// eigenvalues make the eigenvector part infinite, as in PyTorch.
std::pair<Tensor, Tensor> eigh(const Tensor& A, const std::string& uplo = "L");
// The eigenvalues alone. Gradient: V diag(gw) V^T.
Tensor eigvalsh(const Tensor& A, const std::string& uplo = "L");

// Q and R with A = Q R for A (..., m, n), k = min(m, n). mode "reduced": Q (..., m, k) with
// orthonormal columns, R (..., k, n) upper triangular; "complete": Q (..., m, m), R (..., m, n);
// "r": R of the reduced form and an empty Q (shape (0,)). Differentiable in every mode (for "r"
// the Q the gradient needs is computed when A requires grad) except the Q of "complete" with
// m > n, which is not unique: its backward raises.
std::pair<Tensor, Tensor> qr(const Tensor& A, const std::string& mode = "reduced");

// The singular value decomposition A = U diag(S) Vh of A (..., m, n), k = min(m, n), singular values
// descending. full_matrices: U (..., m, m) and Vh (..., n, n), else U (..., m, k) and Vh (..., k, n).
// Like PyTorch, singular vectors are defined up to a sign per pair, so a loss through U or Vh
// should not depend on it; the gradient (PyTorch's svd_backward) is infinite at repeated singular
// values when it flows through U or Vh, and full_matrices' extra columns receive none.
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices = true);
// The singular values alone (..., k), descending. Gradient: U diag(gS) Vh.
Tensor svdvals(const Tensor& A);

}  // namespace st::linalg
