// spiraltorch._core.linalg: the dense linear algebra of include/spiraltorch/linalg.h (LAPACK on
// the CPU, differentiable). spiraltorch/linalg.py re-exports it as st.linalg, with named tuples
// for the factorisations and the norms composed in Python.
#include "spiraltorch/linalg.h"

#include <nanobind/stl/pair.h>
#include <nanobind/stl/tuple.h>

#include "convert.h"

namespace stpy {

void bind_linalg(nb::module_& root) {
  namespace la = st::linalg;
  nb::module_ m = root.def_submodule(
      "linalg",
      "Dense linear algebra like torch.linalg: LAPACK (OpenBLAS) on the CPU, float32/float64, batched over\n"
      "leading dims, differentiable. Tensors on other devices raise DeviceUnavailableError.");
  m.def(
      "inv", &la::inv, nb::arg("A"),
      "inv(A) -> Tensor\n\nThe inverse of each square matrix of A (..., n, n). Raises SpiralValueError (a ValueError)\n"
      "naming the batch element and the zero pivot when a matrix is singular.");
  m.def("solve", &la::solve, nb::arg("A"), nb::arg("B"), nb::kw_only(), nb::arg("left") = true,
        "solve(A, B, *, left=True) -> Tensor\n\nX with A X = B (or X A = B when not left) for A (..., n, n). B is "
        "(..., n, k) ((..., k, n) when not left),\nor a batch of vectors (..., n) when it is 1-d or has A's shape "
        "without the last dim (PyTorch's rule);\nbatch dims broadcast. Raises SpiralValueError for a singular A.");
  m.def(
      "solve_triangular", &la::solve_triangular, nb::arg("A"), nb::arg("B"), nb::kw_only(), nb::arg("upper"),
      nb::arg("left") = true, nb::arg("unitriangular") = false,
      "solve_triangular(A, B, *, upper, left=True, unitriangular=False) -> Tensor\n\nX with A X = B (left) or X A = B "
      "for triangular A (..., n, n): only its upper (or lower)\ntriangle is read, its diagonal taken as ones with "
      "unitriangular. No singularity check (inf/NaN), like PyTorch.");
  m.def("det", &la::det, nb::arg("A"),
        "det(A) -> Tensor\n\nThe determinant of each square matrix of A (..., n, n), shape (...); 0 for a singular "
        "matrix.");
  m.def("slogdet", &la::slogdet, nb::arg("A"),
        "slogdet(A) -> (sign, logabsdet)\n\nThe sign (-1, 0 or 1) and log|det| of each square matrix; a singular "
        "matrix gives (0, -inf).\nOnly logabsdet is differentiable.");
  m.def("cholesky", &la::cholesky, nb::arg("A"), nb::kw_only(), nb::arg("upper") = false,
        "cholesky(A, *, upper=False) -> Tensor\n\nL (lower) with A = L L^T, or U with A = U^T U when upper, for "
        "symmetric positive-definite A;\nonly that triangle of A is read. Raises SpiralValueError naming the leading "
        "minor that is not\npositive-definite.");
  m.def("eigh", &la::eigh, nb::arg("A"), nb::arg("UPLO") = "L",
        "eigh(A, UPLO='L') -> (eigenvalues, eigenvectors)\n\nEigenvalues in ascending order (..., n) and orthonormal "
        "eigenvectors as the columns of (..., n, n)\nof symmetric A, reading only the UPLO triangle.");
  m.def("eigvalsh", &la::eigvalsh, nb::arg("A"), nb::arg("UPLO") = "L",
        "eigvalsh(A, UPLO='L') -> Tensor\n\nThe eigenvalues of symmetric A in ascending order (..., n).");
  m.def("qr", &la::qr, nb::arg("A"), nb::arg("mode") = "reduced",
        "qr(A, mode='reduced') -> (Q, R)\n\nA = Q R for A (..., m, n), k = min(m, n): 'reduced' gives Q (..., m, k) "
        "and R (..., k, n),\n'complete' Q (..., m, m) and R (..., m, n), 'r' an empty Q and the reduced R.");
  m.def("svd", &la::svd, nb::arg("A"), nb::arg("full_matrices") = true,
        "svd(A, full_matrices=True) -> (U, S, Vh)\n\nA = U diag(S) Vh for A (..., m, n), k = min(m, n), S descending "
        "(..., k). full_matrices: U (..., m, m)\nand Vh (..., n, n), else U (..., m, k) and Vh (..., k, n). Singular "
        "vectors are defined up to a sign per pair.");
  m.def("svdvals", &la::svdvals, nb::arg("A"),
        "svdvals(A) -> Tensor\n\nThe singular values of A (..., m, n) in descending order (..., min(m, n)).");
}

}  // namespace stpy
