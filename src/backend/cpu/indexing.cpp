// CPU kernels for joining, gathering, scattering, sorting and prefix sums. Every
// operand is contiguous and seen as (outer, n, inner) blocks around one dim; index
// values were range-checked by the op layer (src/ops/indexing.cpp).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"

namespace st::backend::cpu {

namespace {

// Columns of inner elements handled by one task in the scatter and cumsum kernels.
constexpr int64_t kColumnBlock = 256;

template <typename T>
T add_values(T a, T b) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(static_cast<float>(a) + static_cast<float>(b));
  } else if constexpr (std::is_same_v<T, bool>) {
    return a || b;
  } else {
    return static_cast<T>(a + b);
  }
}

// Strict orders in which NaN is the largest value.
template <typename T>
bool less_nan_last(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(b) ? !std::isnan(a) : a < b;
  } else {
    return a < b;
  }
}

template <typename T>
bool greater_nan_first(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(a) ? !std::isnan(b) : a > b;
  } else {
    return a > b;
  }
}

template <typename T>
void gather_impl(const T* x, const int64_t* idx, T* out, int64_t outer, int64_t n, int64_t k, int64_t inner) {
  const int64_t rows = outer * k;
#pragma omp parallel for num_threads(num_threads_for(rows* inner)) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const T* xb = x + (r / k) * n * inner;
    const int64_t* ip = idx + r * inner;
    T* op = out + r * inner;
    for (int64_t i = 0; i < inner; ++i) op[i] = xb[ip[i] * inner + i];
  }
}

// Runs f(o, i0, i1) in parallel over the tasks (outer row o, columns [i0, i1) of one block of
// `inner`). Tasks own disjoint columns, so a kernel that accumulates along the dim needs no
// atomics and sums in a fixed order (deterministic results).
template <typename F>
void for_column_blocks(int64_t outer, int64_t inner, int64_t work, F&& f, int64_t block = kColumnBlock) {
  const int64_t blocks = (inner + block - 1) / block;
  const int64_t tasks = outer * blocks;
  const int threads = static_cast<int>(std::min<int64_t>(tasks, num_threads_for(work)));
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t i0 = (t % blocks) * block;
    f(t / blocks, i0, std::min(inner, i0 + block));
  }
}

template <typename T>
void scatter_add_impl(T* out, const int64_t* idx, const T* src, int64_t outer, int64_t n, int64_t k, int64_t inner) {
  for_column_blocks(outer, inner, outer * k * inner, [&](int64_t o, int64_t i0, int64_t i1) {
    T* ob = out + o * n * inner;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t* ip = idx + (o * k + j) * inner;
      const T* sp = src + (o * k + j) * inner;
      for (int64_t i = i0; i < i1; ++i) {
        T& dst = ob[ip[i] * inner + i];
        dst = add_values(dst, sp[i]);
      }
    }
  });
}

// Whole rows of `inner` accumulate at once, so the column blocks are narrower than the scatter's:
// an embedding gradient of 128 columns still spreads over two threads.
template <typename T>
void index_add_impl(T* out, const int64_t* idx, const T* src, int64_t outer, int64_t n, int64_t k, int64_t inner) {
  constexpr int64_t kRowBlock = 64;
  for_column_blocks(outer, inner, outer * k * inner, [&](int64_t o, int64_t i0, int64_t i1) {
    T* ob = out + o * n * inner;
    const T* sb = src + o * k * inner;
    for (int64_t j = 0; j < k; ++j) {
      T* dst = ob + idx[j] * inner;
      const T* sp = sb + j * inner;
#pragma omp simd
      for (int64_t i = i0; i < i1; ++i) dst[i] = add_values(dst[i], sp[i]);
    }
  }, kRowBlock);
}

template <typename T>
void sort_impl(const T* x, T* values, int64_t* indices, int64_t outer, int64_t n, int64_t inner, int64_t k,
               bool descending) {
  const int64_t columns = outer * inner;
  const int64_t work = columns * n * std::max<int64_t>(1, static_cast<int64_t>(std::log2(n + 1)));
#pragma omp parallel num_threads(num_threads_for(work))
  {
    std::vector<T> buf(n);
    std::vector<int64_t> perm(n);
#pragma omp for schedule(static)
    for (int64_t c = 0; c < columns; ++c) {
      const int64_t o = c / inner, i = c % inner;
      const T* src = x + o * n * inner + i;
      for (int64_t j = 0; j < n; ++j) buf[j] = src[j * inner];
      std::iota(perm.begin(), perm.end(), int64_t{0});
      auto before = [&](int64_t a, int64_t b) {
        return descending ? greater_nan_first(buf[a], buf[b]) : less_nan_last(buf[a], buf[b]);
      };
      if (k < n) {
        // Ties broken by position: the same prefix a stable sort would give.
        std::partial_sort(perm.begin(), perm.begin() + k, perm.end(), [&](int64_t a, int64_t b) {
          if (before(a, b)) return true;
          if (before(b, a)) return false;
          return a < b;
        });
      } else {
        std::stable_sort(perm.begin(), perm.end(), before);
      }
      T* vo = values + o * k * inner + i;
      int64_t* io = indices + o * k * inner + i;
      for (int64_t j = 0; j < k; ++j) {
        vo[j * inner] = buf[perm[j]];
        io[j * inner] = perm[j];
      }
    }
  }
}

template <typename T>
void cumsum_impl(const T* x, T* out, int64_t outer, int64_t n, int64_t inner) {
  using A = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  for_column_blocks(outer, inner, outer * n * inner, [&](int64_t o, int64_t i0, int64_t i1) {
    const int64_t w = i1 - i0;
    std::array<A, kColumnBlock> acc{};
    const T* xb = x + o * n * inner + i0;
    T* ob = out + o * n * inner + i0;
    for (int64_t j = 0; j < n; ++j) {
      const T* xr = xb + j * inner;
      T* orow = ob + j * inner;
      for (int64_t i = 0; i < w; ++i) {
        acc[i] += static_cast<A>(xr[i]);
        orow[i] = static_cast<T>(acc[i]);
      }
    }
  });
}

template <typename T>
void triangle_impl(const T* x, T* out, int64_t batch, int64_t rows, int64_t cols, int64_t diagonal, bool upper) {
  const int64_t total_rows = batch * rows;
#pragma omp parallel for num_threads(num_threads_for(total_rows* cols)) schedule(static)
  for (int64_t br = 0; br < total_rows; ++br) {
    const int64_t r = br % rows;
    const T* xr = x + br * cols;
    T* orow = out + br * cols;
    for (int64_t c = 0; c < cols; ++c) {
      const bool keep = upper ? c - r >= diagonal : c - r <= diagonal;
      orow[c] = keep ? xr[c] : T{};
    }
  }
}

}  // namespace

void cat(const std::vector<Tensor>& xs, int64_t outer, Tensor& out) {
  if (outer == 0 || out.numel() == 0) return;
  const int64_t isz = static_cast<int64_t>(out.itemsize());
  const int64_t nx = static_cast<int64_t>(xs.size());
  std::vector<int64_t> row_bytes(nx), offset(nx);
  std::vector<const char*> src(nx);
  int64_t out_row = 0;
  for (int64_t i = 0; i < nx; ++i) {
    row_bytes[i] = xs[i].numel() / outer * isz;
    offset[i] = out_row;
    out_row += row_bytes[i];
    src[i] = static_cast<const char*>(xs[i].raw_data());
  }
  char* dst = static_cast<char*>(out.raw_data());
  const int64_t tasks = outer * nx;
#pragma omp parallel for num_threads(num_threads_for(out.numel())) schedule(static)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t r = t / nx, i = t % nx;
    if (row_bytes[i] > 0) std::memcpy(dst + r * out_row + offset[i], src[i] + r * row_bytes[i], row_bytes[i]);
  }
}

void gather(const Tensor& x, const Tensor& index, int64_t outer, int64_t n, int64_t k, int64_t inner, Tensor& out) {
  ST_DISPATCH_ALL(x.dtype(), [&] {
    gather_impl(x.data<scalar_t>(), index.data<int64_t>(), out.data<scalar_t>(), outer, n, k, inner);
  });
}

void scatter_add(Tensor& out, const Tensor& index, const Tensor& src, int64_t outer, int64_t n, int64_t k,
                 int64_t inner) {
  ST_DISPATCH_ALL(out.dtype(), [&] {
    scatter_add_impl(out.data<scalar_t>(), index.data<int64_t>(), src.data<scalar_t>(), outer, n, k, inner);
  });
}

void index_range(const Tensor& idx, int64_t& lo, int64_t& hi) {
  const int64_t* p = idx.data<int64_t>();
  const int64_t n = idx.numel();
  int64_t a = p[0], b = p[0];
#pragma omp simd reduction(min : a) reduction(max : b)
  for (int64_t i = 1; i < n; ++i) {
    a = std::min(a, p[i]);
    b = std::max(b, p[i]);
  }
  lo = a;
  hi = b;
}

void index_add(Tensor& out, const Tensor& index, const Tensor& src, int64_t outer, int64_t n, int64_t k,
               int64_t inner) {
  ST_DISPATCH_ALL(out.dtype(), [&] {
    index_add_impl(out.data<scalar_t>(), index.data<int64_t>(), src.data<scalar_t>(), outer, n, k, inner);
  });
}

void index_select(const Tensor& x, const Tensor& index, int64_t outer, int64_t n, int64_t k, int64_t inner,
                  Tensor& out) {
  const int64_t isz = static_cast<int64_t>(x.itemsize());
  const int64_t run = inner * isz;
  const char* xp = static_cast<const char*>(x.raw_data());
  const int64_t* ip = index.data<int64_t>();
  char* op = static_cast<char*>(out.raw_data());
  const int64_t rows = outer * k;
#pragma omp parallel for num_threads(num_threads_for(rows* inner)) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t o = r / k, j = r % k;
    std::memcpy(op + r * run, xp + (o * n + ip[j]) * run, run);
  }
}

void masked_select(const Tensor& x, const Tensor& mask, Tensor& out) {
  const int64_t total = x.numel();
  const bool* m = mask.data<bool>();
  const int64_t isz = static_cast<int64_t>(x.itemsize());
  const char* xp = static_cast<const char*>(x.raw_data());
  char* op = static_cast<char*>(out.raw_data());
  int64_t w = 0;
  for (int64_t i = 0; i < total; ++i) {
    if (m[i]) std::memcpy(op + (w++) * isz, xp + i * isz, isz);
  }
}

void sort(const Tensor& x, int64_t outer, int64_t n, int64_t inner, int64_t k, bool descending, Tensor& values,
          Tensor& indices) {
  ST_DISPATCH_ARITH(x.dtype(), [&] {
    sort_impl(x.data<scalar_t>(), values.data<scalar_t>(), indices.data<int64_t>(), outer, n, inner, k, descending);
  });
}

void cumsum(const Tensor& x, int64_t outer, int64_t n, int64_t inner, Tensor& out) {
  ST_DISPATCH_ARITH(x.dtype(), [&] { cumsum_impl(x.data<scalar_t>(), out.data<scalar_t>(), outer, n, inner); });
}

void triangle(const Tensor& x, int64_t batch, int64_t rows, int64_t cols, int64_t diagonal, bool upper, Tensor& out) {
  ST_DISPATCH_ALL(x.dtype(),
                  [&] { triangle_impl(x.data<scalar_t>(), out.data<scalar_t>(), batch, rows, cols, diagonal, upper); });
}

}  // namespace st::backend::cpu
