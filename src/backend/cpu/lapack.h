#pragma once
// Dense LAPACK routines on the host, through the LAPACKE of OpenBLAS (the scipy-openblas32
// wheel: 32-bit integers, symbols prefixed scipy_). One matrix per call, column-major with a
// leading dimension `ld`; the CPU backend's dense factorizations (dense_linalg.cpp) loop over
// batches laid out that way. Each call returns LAPACK's info: 0 on success, > 0 a numerical
// failure (a 1-based position: the zero pivot, the failing minor), < 0 an argument LAPACK
// rejected (a bug here, so callers raise on it).
//
// The _work entry points are used, not the plain LAPACKE ones: those scan every input for NaN
// first and refuse it (info -4), where PyTorch lets NaN propagate through the result.
//
// Only float and double are instantiated.
#include <cstdint>
#include <functional>
#include <vector>

namespace st::backend::cpu::lapack {

// Keeps OpenBLAS on one thread before a batch loop runs over the OpenMP pool (the reason is in
// backend/cpu/gemm.cpp: its spinning workers and OpenMP's fight for the same cores). Call it
// outside parallel regions.
void single_threaded();
// Runs fn(i) for every i in [0, batch), over the OpenMP pool when the work (`flops` per matrix
// times the batch) pays for threads, and returns the info each call gave. An exception thrown
// by fn is rethrown here once the loop is done (none escapes a parallel region).
std::vector<int> for_each_matrix(int64_t batch, double flops, const std::function<int(int64_t)>& fn);

// LU with partial pivoting in place: A (m x n) = P L U; ipiv gets min(m, n) 1-based row swaps.
// info = i > 0: U(i, i) is exactly zero (the factorisation still completes).
template <typename T>
int getrf(int64_t m, int64_t n, T* a, int64_t lda, int32_t* ipiv);
// The inverse from getrf's factors, in place.
template <typename T>
int getri(int64_t n, T* a, int64_t lda, const int32_t* ipiv);
// Solves A X = B (or A^T X = B when `transpose`) from getrf's factors; B (n x nrhs) is overwritten by X.
template <typename T>
int getrs(bool transpose, int64_t n, int64_t nrhs, const T* lu, int64_t lda, const int32_t* ipiv, T* b, int64_t ldb);
// Cholesky in place: the `upper` (or lower) triangle becomes U (A = U^T U) or L (A = L L^T); the
// other triangle is left as it was. info = i > 0: the leading minor of order i is not positive-definite.
template <typename T>
int potrf(bool upper, int64_t n, T* a, int64_t lda);
// Eigenvalues (ascending, into w) of the symmetric matrix whose `upper` (or lower) triangle is
// given; with `vectors`, A is overwritten by the orthonormal eigenvectors (as columns).
// Divide and conquer (syevd), like PyTorch and NumPy.
template <typename T>
int syevd(bool vectors, bool upper, int64_t n, T* a, int64_t lda, T* w);
// Householder QR in place: R in the upper triangle, the reflectors below it and in tau (min(m, n)).
template <typename T>
int geqrf(int64_t m, int64_t n, T* a, int64_t lda, T* tau);
// The first n columns of Q = H(1)...H(k) from geqrf's reflectors (m >= n >= k), in place.
template <typename T>
int orgqr(int64_t m, int64_t n, int64_t k, T* a, int64_t lda, const T* tau);
// Solves A X = B for triangular A (n x n) with BLAS's trsm, both ROW-major here (A: lda = n, B:
// n x nrhs, ldb = nrhs; X overwrites B); `unit`: the diagonal is taken as ones. No singularity
// check, like PyTorch's solve_triangular: a zero on the diagonal gives inf/NaN.
template <typename T>
void trsm_rowmajor(bool upper, bool unit, int64_t n, int64_t nrhs, const T* a, T* b);
// SVD A (m x n) = U diag(s) V^T, k = min(m, n) singular values (descending) into s, divide and
// conquer. jobz 'N': values only (u, vt unused); 'S': u is m x k (ldu >= m), vt k x n (ldvt >= k);
// 'A': u is m x m, vt n x n. A is destroyed. info > 0: it did not converge.
template <typename T>
int gesdd(char jobz, int64_t m, int64_t n, T* a, int64_t lda, T* s, T* u, int64_t ldu, T* vt, int64_t ldvt);

}  // namespace st::backend::cpu::lapack
