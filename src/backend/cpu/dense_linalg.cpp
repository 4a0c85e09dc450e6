// The CPU's dense factorizations (contracts in src/backend/backend.h): the LAPACK calls of
// lapack.h once per matrix, run over the batch by lapack::for_each_matrix. The op layer
// (src/ops/dense_linalg.cpp) lays the matrices out as each entry's contract says and turns info
// into its errors.
//
// Row-major contracts (cholesky, eigh, triangular_solve) need no transposed copy: a row-major
// matrix read column-major is its transpose, so for a symmetric input LAPACK runs on the plain
// buffer with the triangle flipped, and trsm runs through BLAS's row-major interface.
#include "backend/cpu/dense_linalg.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backend/cpu/lapack.h"

namespace st::backend::cpu {

namespace {

// Runs f.template operator()<T>() with T the C++ type of a float32/float64 dtype.
template <typename F>
void with_real(Dtype dt, F&& f) {
  if (dt == Dtype::Float64) {
    f.template operator()<double>();
  } else {
    f.template operator()<float>();
  }
}

double cube(int64_t n) { return static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n); }

void put(std::span<int> info, const std::vector<int>& codes) { std::copy(codes.begin(), codes.end(), info.begin()); }

// An empty matrix needs no factorization (and LAPACK refuses a zero leading dimension): every info is
// 0 and there is nothing to write.
bool empty_matrices(int64_t n, std::span<int> info) {
  if (n != 0) return false;
  std::fill(info.begin(), info.end(), 0);
  return true;
}

}  // namespace

void lu_inverse(Tensor& a, int64_t batch, int64_t n, std::span<int> info) {
  if (empty_matrices(n, info)) return;  // an empty matrix is its own inverse
  std::vector<int32_t> piv(static_cast<size_t>(batch * n));
  std::vector<int> codes;
  with_real(a.dtype(), [&]<typename T>() {
    T* p = a.data<T>();
    codes = lapack::for_each_matrix(batch, 2.0 * cube(n), [&](int64_t b) {
      T* m = p + b * n * n;
      int32_t* ip = piv.data() + b * n;
      const int r = lapack::getrf<T>(n, n, m, n, ip);
      return r != 0 ? r : lapack::getri<T>(n, m, n, ip);
    });
  });
  put(info, codes);
}

void lu_solve(Tensor& a, Tensor& b, int64_t batch, int64_t n, int64_t k, std::span<int> info) {
  if (empty_matrices(n, info)) return;
  std::vector<int32_t> piv(static_cast<size_t>(batch * n));
  std::vector<int> codes;
  with_real(a.dtype(), [&]<typename T>() {
    T* pa = a.data<T>();
    T* px = b.data<T>();
    codes = lapack::for_each_matrix(batch, cube(n) + 2.0 * n * n * k, [&](int64_t i) {
      T* ab = pa + i * n * n;
      int32_t* ip = piv.data() + i * n;
      const int r = lapack::getrf<T>(n, n, ab, n, ip);
      return r != 0 || k == 0 ? r : lapack::getrs<T>(false, n, k, ab, n, ip, px + i * n * k, n);
    });
  });
  put(info, codes);
}

void lu_determinant(Tensor& a, int64_t batch, int64_t n, Tensor& det_out, Tensor& sign_out, Tensor& logabs_out) {
  with_real(a.dtype(), [&]<typename T>() {
    T* p = a.data<T>();
    T* det = det_out.defined() ? det_out.data<T>() : nullptr;
    T* sign = sign_out.defined() ? sign_out.data<T>() : nullptr;
    T* logabs = logabs_out.defined() ? logabs_out.data<T>() : nullptr;
    lapack::for_each_matrix(batch, cube(n) * 2.0 / 3.0, [&](int64_t b) {
      T* m = p + b * n * n;
      std::vector<int32_t> piv(static_cast<size_t>(n));
      // A zero pivot (info > 0) is no error here: U has a zero diagonal and det(A) = 0.
      const int info = n > 0 ? lapack::getrf<T>(n, n, m, n, piv.data()) : 0;
      if (info < 0) return info;
      // Accumulated in double: float32 products of many pivots under/overflow early.
      double prod = 1.0, s = 1.0, log_sum = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        const double u = m[i * n + i];
        if (piv[static_cast<size_t>(i)] != i + 1) {
          prod = -prod;
          s = -s;
        }
        prod *= u;
        s *= u > 0 ? 1.0 : u < 0 ? -1.0 : u == 0 ? 0.0 : std::numeric_limits<double>::quiet_NaN();
        log_sum += std::log(std::abs(u));
      }
      if (det) det[b] = static_cast<T>(prod);
      if (sign) sign[b] = static_cast<T>(s);
      if (logabs) logabs[b] = static_cast<T>(log_sum);
      return 0;
    });
  });
}

void determinant_backward(const Tensor& a, const Tensor& g, int64_t batch, int64_t n, Tensor& out,
                          std::span<int> info) {
  std::vector<int> codes;
  with_real(a.dtype(), [&]<typename T>() {
    const T* pa = a.data<T>();
    const T* pg = g.data<T>();
    T* po = out.data<T>();
    codes = lapack::for_each_matrix(batch, 4.0 * cube(n), [&](int64_t b) {
      const size_t nn = static_cast<size_t>(n * n);
      std::vector<T> lu(pa + b * n * n, pa + (b + 1) * n * n);
      std::vector<int32_t> piv(static_cast<size_t>(n));
      T* o = po + b * n * n;
      int r = lapack::getrf<T>(n, n, lu.data(), n, piv.data());
      if (r < 0) return r;
      if (r == 0) {
        double d = 1.0;
        for (int64_t i = 0; i < n; ++i) d *= (piv[static_cast<size_t>(i)] != i + 1 ? -1.0 : 1.0) * lu[i * n + i];
        if ((r = lapack::getri<T>(n, lu.data(), n, piv.data())) != 0) return r;
        // The column-major inverse read row-major is A^-T.
        const double scale = d * static_cast<double>(pg[b]);
        for (size_t i = 0; i < nn; ++i) o[i] = static_cast<T>(scale * lu[i]);
        return 0;
      }
      std::vector<T> m(pa + b * n * n, pa + (b + 1) * n * n), s(static_cast<size_t>(n)), u(nn), vt(nn);
      if ((r = lapack::gesdd<T>('S', n, n, m.data(), n, s.data(), u.data(), n, vt.data(), n)) != 0) return r;
      // det of the orthogonal factors: +-1 from their own LU.
      auto det_sign = [n](std::vector<T> f) {
        std::vector<int32_t> p(static_cast<size_t>(n));
        lapack::getrf<T>(n, n, f.data(), n, p.data());
        double sg = 1.0;
        for (int64_t i = 0; i < n; ++i) sg *= (p[static_cast<size_t>(i)] != i + 1 ? -1.0 : 1.0) * f[i * n + i];
        return sg < 0 ? -1.0 : 1.0;
      };
      const double alpha = det_sign(u) * det_sign(vt) * static_cast<double>(pg[b]);
      // prod_{j != i} s_j from prefix and suffix products (exact when some s_j are zero).
      std::vector<double> pre(static_cast<size_t>(n) + 1, 1.0), suf(static_cast<size_t>(n) + 1, 1.0), others(n);
      for (int64_t i = 0; i < n; ++i) pre[i + 1] = pre[i] * s[i];
      for (int64_t i = n; i > 0; --i) suf[i - 1] = suf[i] * s[i - 1];
      for (int64_t i = 0; i < n; ++i) others[i] = pre[i] * suf[i + 1];
      // u, vt column-major: U(i, l) = u[l n + i], V^T(l, j) = vt[j n + l].
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double acc = 0.0;
          for (int64_t l = 0; l < n; ++l) acc += static_cast<double>(u[l * n + i]) * others[l] * vt[j * n + l];
          o[i * n + j] = static_cast<T>(alpha * acc);
        }
      }
      return 0;
    });
  });
  put(info, codes);
}

void triangular_solve(const Tensor& a, Tensor& b, int64_t batch, int64_t n, int64_t k, bool upper, bool unit) {
  if (n == 0 || k == 0) return;
  with_real(a.dtype(), [&]<typename T>() {
    const T* pa = a.data<T>();
    T* px = b.data<T>();
    lapack::for_each_matrix(batch, static_cast<double>(n) * n * k, [&](int64_t i) {
      lapack::trsm_rowmajor<T>(upper, unit, n, k, pa + i * n * n, px + i * n * k);
      return 0;
    });
  });
}

void cholesky(Tensor& a, int64_t batch, int64_t n, bool upper, std::span<int> info) {
  std::vector<int> codes;
  with_real(a.dtype(), [&]<typename T>() {
    T* p = a.data<T>();
    codes = lapack::for_each_matrix(batch, cube(n) / 3.0, [&](int64_t b) {
      T* m = p + b * n * n;
      // potrf on A^T column-major (the same symmetric matrix) with the triangle flipped yields
      // the wanted factor directly in row-major order.
      const int r = n > 0 ? lapack::potrf<T>(!upper, n, m, n) : 0;
      // potrf leaves the other triangle as it was: clear it.
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          if (upper ? j < i : j > i) m[i * n + j] = T(0);
        }
      }
      return r;
    });
  });
  put(info, codes);
}

void eigh(Tensor& a, int64_t batch, int64_t n, bool upper, bool vectors, Tensor& w, std::span<int> info) {
  if (n == 0) {
    std::fill(info.begin(), info.end(), 0);
    return;
  }
  std::vector<int> codes;
  with_real(a.dtype(), [&]<typename T>() {
    T* p = a.data<T>();
    T* pw = w.data<T>();
    // syevd writes the eigenvectors as column-major columns: rows of the row-major buffer.
    codes = lapack::for_each_matrix(batch, 9.0 * cube(n), [&](int64_t b) {
      return lapack::syevd<T>(vectors, !upper, n, p + b * n * n, n, pw + b * n);
    });
  });
  put(info, codes);
}

void qr(Tensor& a, int64_t batch, int64_t m, int64_t n, bool complete, Tensor& q, Tensor& r, std::span<int> info) {
  const int64_t k = std::min(m, n);
  const int64_t q_cols = complete ? m : k, r_rows = complete ? m : k;
  const bool want_q = q.defined();
  std::vector<int> codes;
  with_real(a.dtype(), [&]<typename T>() {
    T* p = a.data<T>();
    T* pq = want_q ? q.data<T>() : nullptr;
    T* pr = r.data<T>();
    codes = lapack::for_each_matrix(batch, 4.0 * static_cast<double>(m) * n * k, [&](int64_t b) {
      T* ab = p + b * m * n;
      std::vector<T> tau(static_cast<size_t>(std::max<int64_t>(k, 1)));
      const int64_t ld = std::max<int64_t>(m, 1);
      int res = k > 0 ? lapack::geqrf<T>(m, n, ab, ld, tau.data()) : 0;
      if (res != 0) return res;
      // R: the upper triangle geqrf left in place, zeros below it.
      T* rb = pr + b * r_rows * n;
      std::fill(rb, rb + r_rows * n, T(0));
      for (int64_t i = 0; i < std::min(r_rows, m); ++i) {
        for (int64_t j = i; j < n; ++j) rb[i * n + j] = ab[j * m + i];
      }
      if (!want_q) return 0;
      T* qb = pq + b * m * q_cols;
      if (q_cols == 0) return 0;
      // Q's columns are generated in place over the reflectors; the complete Q of a tall A
      // needs room for m columns.
      std::vector<T> wide;
      T* qa = ab;
      if (q_cols > n) {
        wide.assign(static_cast<size_t>(m * q_cols), T(0));
        std::copy(ab, ab + m * n, wide.begin());
        qa = wide.data();
      }
      if ((res = lapack::orgqr<T>(m, q_cols, k, qa, ld, tau.data())) != 0) return res;
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < q_cols; ++j) qb[i * q_cols + j] = qa[j * m + i];
      }
      return 0;
    });
  });
  put(info, codes);
}

void svd(Tensor& a, int64_t batch, int64_t m, int64_t n, bool full, Tensor& s, Tensor& u_out, Tensor& vh_out,
         std::span<int> info) {
  const int64_t k = std::min(m, n);
  const int64_t u_cols = full ? m : k, v_rows = full ? n : k;
  const bool want_uv = u_out.defined();
  std::vector<int> codes;
  with_real(a.dtype(), [&]<typename T>() {
    T* p = a.data<T>();
    T* ps = s.data<T>();
    T* pu = want_uv ? u_out.data<T>() : nullptr;
    T* pv = want_uv ? vh_out.data<T>() : nullptr;
    codes = lapack::for_each_matrix(batch, 8.0 * static_cast<double>(m) * n * k, [&](int64_t b) {
      T* ub = want_uv ? pu + b * m * u_cols : nullptr;
      T* vb = want_uv ? pv + b * v_rows * n : nullptr;
      if (k == 0) {
        // Nothing to decompose; the square factors of full_matrices are identities.
        if (!want_uv) return 0;
        std::fill(ub, ub + m * u_cols, T(0));
        std::fill(vb, vb + v_rows * n, T(0));
        for (int64_t i = 0; i < std::min(m, u_cols); ++i) ub[i * u_cols + i] = T(1);
        for (int64_t i = 0; i < std::min(n, v_rows); ++i) vb[i * n + i] = T(1);
        return 0;
      }
      std::vector<T> u(want_uv ? static_cast<size_t>(m * u_cols) : 1),
          vt(want_uv ? static_cast<size_t>(v_rows * n) : 1);
      const char jobz = !want_uv ? 'N' : full ? 'A' : 'S';
      const int r = lapack::gesdd<T>(jobz, m, n, p + b * m * n, m, ps + b * k, u.data(), m, vt.data(),
                                     std::max<int64_t>(v_rows, 1));
      if (r != 0 || !want_uv) return r;
      // Both factors come back column-major.
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < u_cols; ++j) ub[i * u_cols + j] = u[j * m + i];
      }
      for (int64_t i = 0; i < v_rows; ++i) {
        for (int64_t j = 0; j < n; ++j) vb[i * n + j] = vt[j * v_rows + i];
      }
      return 0;
    });
  });
  put(info, codes);
}

}  // namespace st::backend::cpu
