#include "backend/cpu/lapack.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <complex>
#include <exception>
#include <mutex>
#include <type_traits>
#include <vector>

// lapack.h declares the complex routines with C's _Complex unless told the C++ type.
#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <lapacke.h>

namespace st::backend::cpu::lapack {

namespace {

constexpr int kColMajor = LAPACK_COL_MAJOR;

lapack_int li(int64_t v) { return static_cast<lapack_int>(v); }
char uplo_of(bool upper) { return upper ? 'U' : 'L'; }

// The optimal workspace size LAPACK reported in a query's work[0] (a floating value).
template <typename T>
lapack_int lwork_of(T query) {
  return std::max<lapack_int>(1, static_cast<lapack_int>(query));
}

}  // namespace

void single_threaded() {
  if (scipy_openblas_get_num_threads() != 1) scipy_openblas_set_num_threads(1);
}

std::vector<int> for_each_matrix(int64_t batch, double flops, const std::function<int(int64_t)>& fn) {
  std::vector<int> info(static_cast<size_t>(batch), 0);
  if (batch == 0) return info;
  single_threaded();
  // About 2^18 flops per thread at least, and never more threads than matrices.
  const double total = flops * static_cast<double>(batch);
  const int max_threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  const int threads = static_cast<int>(std::clamp<double>(total / 262144.0, 1.0, std::min<double>(max_threads, batch)));
  std::exception_ptr error;
  std::mutex error_mu;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1)
  for (int64_t i = 0; i < batch; ++i) {
    try {
      info[static_cast<size_t>(i)] = fn(i);
    } catch (...) {
      const std::lock_guard lock(error_mu);
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
  return info;
}

template <typename T>
int getrf(int64_t m, int64_t n, T* a, int64_t lda, int32_t* ipiv) {
  if constexpr (std::is_same_v<T, float>) {
    return scipy_LAPACKE_sgetrf_work(kColMajor, li(m), li(n), a, li(lda), ipiv);
  } else {
    return scipy_LAPACKE_dgetrf_work(kColMajor, li(m), li(n), a, li(lda), ipiv);
  }
}

template <typename T>
int getri(int64_t n, T* a, int64_t lda, const int32_t* ipiv) {
  T query{};
  auto call = [&](T* work, lapack_int lwork) {
    if constexpr (std::is_same_v<T, float>) {
      return scipy_LAPACKE_sgetri_work(kColMajor, li(n), a, li(lda), ipiv, work, lwork);
    } else {
      return scipy_LAPACKE_dgetri_work(kColMajor, li(n), a, li(lda), ipiv, work, lwork);
    }
  };
  if (const int info = call(&query, -1); info != 0) return info;
  std::vector<T> work(lwork_of(query));
  return call(work.data(), li(static_cast<int64_t>(work.size())));
}

template <typename T>
int getrs(bool transpose, int64_t n, int64_t nrhs, const T* lu, int64_t lda, const int32_t* ipiv, T* b, int64_t ldb) {
  const char trans = transpose ? 'T' : 'N';
  if constexpr (std::is_same_v<T, float>) {
    return scipy_LAPACKE_sgetrs_work(kColMajor, trans, li(n), li(nrhs), lu, li(lda), ipiv, b, li(ldb));
  } else {
    return scipy_LAPACKE_dgetrs_work(kColMajor, trans, li(n), li(nrhs), lu, li(lda), ipiv, b, li(ldb));
  }
}

template <typename T>
int potrf(bool upper, int64_t n, T* a, int64_t lda) {
  if constexpr (std::is_same_v<T, float>) {
    return scipy_LAPACKE_spotrf_work(kColMajor, uplo_of(upper), li(n), a, li(lda));
  } else {
    return scipy_LAPACKE_dpotrf_work(kColMajor, uplo_of(upper), li(n), a, li(lda));
  }
}

template <typename T>
int syevd(bool vectors, bool upper, int64_t n, T* a, int64_t lda, T* w) {
  const char jobz = vectors ? 'V' : 'N';
  auto call = [&](T* work, lapack_int lwork, lapack_int* iwork, lapack_int liwork) {
    if constexpr (std::is_same_v<T, float>) {
      return scipy_LAPACKE_ssyevd_work(kColMajor, jobz, uplo_of(upper), li(n), a, li(lda), w, work, lwork, iwork,
                                       liwork);
    } else {
      return scipy_LAPACKE_dsyevd_work(kColMajor, jobz, uplo_of(upper), li(n), a, li(lda), w, work, lwork, iwork,
                                       liwork);
    }
  };
  T query{};
  lapack_int iquery = 0;
  if (const int info = call(&query, -1, &iquery, -1); info != 0) return info;
  std::vector<T> work(lwork_of(query));
  std::vector<lapack_int> iwork(std::max<lapack_int>(1, iquery));
  return call(work.data(), li(static_cast<int64_t>(work.size())), iwork.data(), li(static_cast<int64_t>(iwork.size())));
}

template <typename T>
int geqrf(int64_t m, int64_t n, T* a, int64_t lda, T* tau) {
  auto call = [&](T* work, lapack_int lwork) {
    if constexpr (std::is_same_v<T, float>) {
      return scipy_LAPACKE_sgeqrf_work(kColMajor, li(m), li(n), a, li(lda), tau, work, lwork);
    } else {
      return scipy_LAPACKE_dgeqrf_work(kColMajor, li(m), li(n), a, li(lda), tau, work, lwork);
    }
  };
  T query{};
  if (const int info = call(&query, -1); info != 0) return info;
  std::vector<T> work(lwork_of(query));
  return call(work.data(), li(static_cast<int64_t>(work.size())));
}

template <typename T>
int orgqr(int64_t m, int64_t n, int64_t k, T* a, int64_t lda, const T* tau) {
  auto call = [&](T* work, lapack_int lwork) {
    if constexpr (std::is_same_v<T, float>) {
      return scipy_LAPACKE_sorgqr_work(kColMajor, li(m), li(n), li(k), a, li(lda), tau, work, lwork);
    } else {
      return scipy_LAPACKE_dorgqr_work(kColMajor, li(m), li(n), li(k), a, li(lda), tau, work, lwork);
    }
  };
  T query{};
  if (const int info = call(&query, -1); info != 0) return info;
  std::vector<T> work(lwork_of(query));
  return call(work.data(), li(static_cast<int64_t>(work.size())));
}

template <typename T>
void trsm_rowmajor(bool upper, bool unit, int64_t n, int64_t nrhs, const T* a, T* b) {
  const auto uplo = upper ? CblasUpper : CblasLower;
  const auto diag = unit ? CblasUnit : CblasNonUnit;
  const auto lda = static_cast<blasint>(std::max<int64_t>(1, n)),
             ldb = static_cast<blasint>(std::max<int64_t>(1, nrhs));
  if constexpr (std::is_same_v<T, float>) {
    scipy_cblas_strsm(CblasRowMajor, CblasLeft, uplo, CblasNoTrans, diag, static_cast<blasint>(n),
                      static_cast<blasint>(nrhs), 1.0f, a, lda, b, ldb);
  } else {
    scipy_cblas_dtrsm(CblasRowMajor, CblasLeft, uplo, CblasNoTrans, diag, static_cast<blasint>(n),
                      static_cast<blasint>(nrhs), 1.0, a, lda, b, ldb);
  }
}

template <typename T>
int gesdd(char jobz, int64_t m, int64_t n, T* a, int64_t lda, T* s, T* u, int64_t ldu, T* vt, int64_t ldvt) {
  std::vector<lapack_int> iwork(static_cast<size_t>(std::max<int64_t>(1, 8 * std::min(m, n))));
  auto call = [&](T* work, lapack_int lwork) {
    if constexpr (std::is_same_v<T, float>) {
      return scipy_LAPACKE_sgesdd_work(kColMajor, jobz, li(m), li(n), a, li(lda), s, u, li(ldu), vt, li(ldvt), work,
                                       lwork, iwork.data());
    } else {
      return scipy_LAPACKE_dgesdd_work(kColMajor, jobz, li(m), li(n), a, li(lda), s, u, li(ldu), vt, li(ldvt), work,
                                       lwork, iwork.data());
    }
  };
  T query{};
  if (const int info = call(&query, -1); info != 0) return info;
  std::vector<T> work(lwork_of(query));
  return call(work.data(), li(static_cast<int64_t>(work.size())));
}

#define ST_LAPACK_INSTANTIATE(T)                                                                 \
  template int getrf<T>(int64_t, int64_t, T*, int64_t, int32_t*);                                \
  template int getri<T>(int64_t, T*, int64_t, const int32_t*);                                   \
  template int getrs<T>(bool, int64_t, int64_t, const T*, int64_t, const int32_t*, T*, int64_t); \
  template int potrf<T>(bool, int64_t, T*, int64_t);                                             \
  template int syevd<T>(bool, bool, int64_t, T*, int64_t, T*);                                   \
  template int geqrf<T>(int64_t, int64_t, T*, int64_t, T*);                                      \
  template int orgqr<T>(int64_t, int64_t, int64_t, T*, int64_t, const T*);                       \
  template void trsm_rowmajor<T>(bool, bool, int64_t, int64_t, const T*, T*);                    \
  template int gesdd<T>(char, int64_t, int64_t, T*, int64_t, T*, T*, int64_t, T*, int64_t);
ST_LAPACK_INSTANTIATE(float)
ST_LAPACK_INSTANTIATE(double)
#undef ST_LAPACK_INSTANTIATE

}  // namespace st::backend::cpu::lapack
