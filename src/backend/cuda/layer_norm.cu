// Layer norm, and residual add + dropout + layer norm in one pass (Backend::layer_norm,
// Backend::add_layer_norm and their backwards). float16/bfloat16 rows are read and written as they
// are and computed in float (T storage, C compute; ST_CUDA_NORM_CASES).
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "backend/cuda/column_sums.cuh"
#include "backend/cuda/common.cuh"
#include "backend/cuda/kernels.h"
#include "backend/cuda/philox.cuh"
#include "backend/cuda/row_regs.cuh"

namespace st::backend::cuda {

namespace {

// Partial column sums of g * xhat (dw) and g (db) over a chunk of rows.
template <typename TG, typename T, typename C>
__global__ void ln_backward_wb_kernel(const TG* g, const T* x, const C* mean, const C* rstd, double* pw, double* pb,
                                      int64_t rows, int64_t cols, int64_t chunk) {
  const int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (j >= cols) return;
  const int64_t b = blockIdx.y * chunk, e = min(rows, b + chunk);
  double sw = 0, sb = 0;
  for (int64_t r = b; r < e; ++r) {
    const C gv = convert<C>(g[r * cols + j]);
    sw += static_cast<double>(gv * ((convert<C>(x[r * cols + j]) - mean[r]) * rstd[r]));
    sb += static_cast<double>(gv);
  }
  pw[blockIdx.y * cols + j] = sw;
  pb[blockIdx.y * cols + j] = sb;
}

// ---- residual add + dropout + layer norm ----
// The dropout factor of y's flat element e (1 without dropout).
struct Drop {
  uint64_t seed = 0, counter = 0;
  float keep_below = 1.0f, scale = 1.0f;
  bool active = false;
  __device__ float operator()(int64_t e) const {
    return active ? dropout_factor(seed, counter, e, keep_below, scale) : 1.0f;
  }
};

Drop drop_of(const DropoutDraw& d) {
  return {d.seed, d.counter, d.keep_below(), static_cast<float>(d.scale()), d.active()};
}

// h = x + y * m, rounded to T as the composite's add stores it; then layer norm of h from registers,
// stored as TO (T, or a half type: autocast's cast folded in). Without y (and h) this is layer_norm(x).
template <typename T, typename TY, typename TO, int VEC, typename C>
__global__ void add_ln_forward_regs_kernel(const T* x, const TY* y, const T* w, const T* b, T* h, TO* out, C* mean_out,
                                           C* rstd_out, int64_t rows, int64_t cols, double eps, Drop drop) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    RowRegs<T, VEC, C> row;
    RowRegs<TY, VEC, C> yr;
    row.load(x + r * cols, cols, C(0));
    if (y) {
      yr.load(y + r * cols, cols, C(0));
#pragma unroll
      for (int it = 0; it < kRowItems; ++it)
#pragma unroll
        for (int q = 0; q < VEC; ++q) {
          const int64_t j = (static_cast<int64_t>(it) * blockDim.x + threadIdx.x) * VEC + q;
          const C m = drop.active ? static_cast<C>(drop(r * cols + j)) : C(1);
          const C v = convert<C>(convert<T>(row.v[it][q] + yr.v[it][q] * m));
          row.v[it][q] = RowRegs<T, VEC, C>::valid(it, cols) ? v : C(0);
        }
      row.store(h + r * cols, cols);
    }
    C s = 0;
#pragma unroll
    for (int it = 0; it < kRowItems; ++it)
#pragma unroll
      for (int q = 0; q < VEC; ++q) s += row.v[it][q];
    const C mu = block_reduce(s, AddOp<C>{}, C(0)) / static_cast<C>(cols);
    C ss = 0;
#pragma unroll
    for (int it = 0; it < kRowItems; ++it)
#pragma unroll
      for (int q = 0; q < VEC; ++q) {
        const C d = row.v[it][q] - mu;
        if (RowRegs<T, VEC, C>::valid(it, cols)) ss += d * d;
      }
    const C var = block_reduce(ss, AddOp<C>{}, C(0)) / static_cast<C>(cols);
    const C rs = static_cast<C>(1.0 / sqrt(static_cast<double>(var) + eps));
    RowRegs<T, VEC, C> wr, br;
    if (w) wr.load(w, cols, C(1));
    if (b) br.load(b, cols, C(0));
#pragma unroll
    for (int it = 0; it < kRowItems; ++it)
#pragma unroll
      for (int q = 0; q < VEC; ++q) {
        C o = (row.v[it][q] - mu) * rs;
        if (w) o = o * wr.v[it][q];
        if (b) o = o + br.v[it][q];
        row.v[it][q] = o;
      }
    row.store(out + r * cols, cols);
    if (threadIdx.x == 0) {
      mean_out[r] = mu;
      rstd_out[r] = rs;
    }
  }
}

// Rows the register kernel declines: h is written first (each thread reads back only its own
// elements), then the statistics and the output are taken from it (from x without y).
template <typename T, typename TY, typename TO, typename C>
__global__ void add_ln_forward_kernel(const T* x, const TY* y, const T* w, const T* b, T* h, TO* out, C* mean_out,
                                      C* rstd_out, int64_t rows, int64_t cols, double eps, Drop drop) {
  auto add = [] __device__(double a, double c) { return a + c; };
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* hr = y ? h + r * cols : x + r * cols;
    double s = 0;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
      if (y) {
        const C m = drop.active ? static_cast<C>(drop(r * cols + j)) : C(1);
        h[r * cols + j] = convert<T>(convert<C>(x[r * cols + j]) + convert<C>(y[r * cols + j]) * m);
      }
      s += to_d(hr[j]);
    }
    s = block_reduce(s, add, 0.0);
    const double mu = s / static_cast<double>(cols);
    double v = 0;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
      const double d = to_d(hr[j]) - mu;
      v += d * d;
    }
    v = block_reduce(v, add, 0.0);
    const double rs = 1.0 / sqrt(v / static_cast<double>(cols) + eps);
    const C m = static_cast<C>(mu), rst = static_cast<C>(rs);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
      C o = (convert<C>(hr[j]) - m) * rst;
      if (w) o = o * convert<C>(w[j]);
      if (b) o = o + convert<C>(b[j]);
      out[r * cols + j] = convert<TO>(o);
    }
    if (threadIdx.x == 0) {
      mean_out[r] = m;
      rstd_out[r] = rst;
    }
  }
}

// dx = gh + rstd * (wg - mean(wg) - hhat * mean(wg * hhat)), wg = w * g; dy = dx * m. Without gh
// and dy this is layer_norm's backward (h the normalised input). With pw and pb, the weight
// gradients' partial column sums too: each thread holds the same columns of every row its block
// visits, so it sums g * hhat and g in registers and writes the block's sums once, to row
// blockIdx.x of pw and pb (finish_column_sums adds those rows); g and h are read once.
template <typename T, typename TY, typename TO, int VEC, typename C>
__global__ void add_ln_backward_regs_kernel(const TO* g, const T* gh, const T* h, const C* mean, const C* rstd,
                                            const T* w, T* dx, TY* dy, C* pw, C* pb, int64_t rows, int64_t cols,
                                            Drop drop) {
  C sum_w[kRowItems][VEC] = {}, sum_b[kRowItems][VEC] = {};
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    RowRegs<TO, VEC, C> gr;
    RowRegs<T, VEC, C> hr, wr;
    gr.load(g + r * cols, cols, C(0));
    hr.load(h + r * cols, cols, C(0));
    if (w) wr.load(w, cols, C(1));
    const C m = mean[r], rs = rstd[r];
    C s1 = 0, s2 = 0;
#pragma unroll
    for (int it = 0; it < kRowItems; ++it)
#pragma unroll
      for (int q = 0; q < VEC; ++q) {
        const C wg = w ? wr.v[it][q] * gr.v[it][q] : gr.v[it][q];
        const C xh = (hr.v[it][q] - m) * rs;
        if (pw) {
          sum_w[it][q] += gr.v[it][q] * xh;
          sum_b[it][q] += gr.v[it][q];
        }
        gr.v[it][q] = wg;
        hr.v[it][q] = xh;
        s1 += wg;
        s2 += wg * xh;
      }
    const C a = block_reduce(s1, AddOp<C>{}, C(0)) / static_cast<C>(cols);
    const C c = block_reduce(s2, AddOp<C>{}, C(0)) / static_cast<C>(cols);
    RowRegs<T, VEC, C> ghr;
    if (gh) ghr.load(gh + r * cols, cols, C(0));
    RowRegs<TY, VEC, C> dyr;
#pragma unroll
    for (int it = 0; it < kRowItems; ++it)
#pragma unroll
      for (int q = 0; q < VEC; ++q) {
        C d = rs * (gr.v[it][q] - a - hr.v[it][q] * c);
        if (gh) d += ghr.v[it][q];
        gr.v[it][q] = d;
        if (dy) {
          const int64_t j = (static_cast<int64_t>(it) * blockDim.x + threadIdx.x) * VEC + q;
          dyr.v[it][q] = drop.active ? d * static_cast<C>(drop(r * cols + j)) : d;
        }
      }
    if (dx) gr.store(dx + r * cols, cols);
    if (dy) dyr.store(dy + r * cols, cols);
  }
  if (!pw) return;
#pragma unroll
  for (int it = 0; it < kRowItems; ++it)
#pragma unroll
    for (int q = 0; q < VEC; ++q) {
      const int64_t j = (static_cast<int64_t>(it) * blockDim.x + threadIdx.x) * VEC + q;
      if (j < cols) {
        pw[blockIdx.x * cols + j] = sum_w[it][q];
        pb[blockIdx.x * cols + j] = sum_b[it][q];
      }
    }
}

template <typename T, typename TY, typename TO, typename C>
__global__ void add_ln_backward_kernel(const TO* g, const T* gh, const T* h, const C* mean, const C* rstd, const T* w,
                                       T* dx, TY* dy, int64_t rows, int64_t cols, Drop drop) {
  auto add = [] __device__(double a, double c) { return a + c; };
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const TO* gr = g + r * cols;
    const T* hr = h + r * cols;
    const C m = mean[r], rs = rstd[r];
    double s1 = 0, s2 = 0;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
      const C wg = w ? convert<C>(w[j]) * convert<C>(gr[j]) : convert<C>(gr[j]);
      const C xh = (convert<C>(hr[j]) - m) * rs;
      s1 += static_cast<double>(wg);
      s2 += static_cast<double>(wg * xh);
    }
    s1 = block_reduce(s1, add, 0.0);
    s2 = block_reduce(s2, add, 0.0);
    const C a = static_cast<C>(s1 / static_cast<double>(cols)), c = static_cast<C>(s2 / static_cast<double>(cols));
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
      const C wg = w ? convert<C>(w[j]) * convert<C>(gr[j]) : convert<C>(gr[j]);
      const C xh = (convert<C>(hr[j]) - m) * rs;
      C d = rs * (wg - a - xh * c);
      if (gh) d += convert<C>(gh[r * cols + j]);
      if (dx) dx[r * cols + j] = convert<T>(d);
      if (dy) dy[r * cols + j] = convert<TY>(drop.active ? d * static_cast<C>(drop(r * cols + j)) : d);
    }
  }
}

// Partial column sums for dw and db, then their finishing pass (layer_norm_backward's).
template <typename TG, typename T, typename C>
void ln_weight_grads(const TG* g, const T* x, const C* mean, const C* rstd, int64_t rows, int64_t cols, Tensor& dw,
                     Tensor& db, const Tensor& like) {
  const int threads = 128;
  const unsigned gx = static_cast<unsigned>((cols + threads - 1) / threads);
  const int64_t nsplit = std::max<int64_t>(1, std::min<int64_t>(rows / 32, std::max<int64_t>(1, 1024 / gx)));
  const int64_t chunk = rows > 0 ? (rows + nsplit - 1) / nsplit : 1;
  Tensor pw = Tensor::empty({nsplit, cols}, Dtype::Float64, like.device());
  Tensor pb = Tensor::empty({nsplit, cols}, Dtype::Float64, like.device());
  ln_backward_wb_kernel<TG, T, C><<<dim3(gx, static_cast<unsigned>(nsplit)), threads, 0, stream()>>>(
      g, x, mean, rstd, pw.data<double>(), pb.data<double>(), rows, cols, chunk);
  ST_CUDA_LAUNCH_CHECK();
  finish_column_sums<double, T>(pw, pb, nsplit, cols, dw, db);
}

unsigned row_blocks(int64_t rows) { return static_cast<unsigned>(std::min<int64_t>(rows, 65535 * 16)); }

template <typename T>
const T* ptr_or_null(const Tensor& t) {
  return t.defined() ? static_cast<const T*>(t.raw_data()) : nullptr;
}
template <typename T>
T* mut_ptr_or_null(Tensor& t) {
  return t.defined() ? static_cast<T*>(t.raw_data()) : nullptr;
}

template <typename T, typename TY, typename TO, typename C>
void add_ln_forward_typed(const Tensor& x, const Tensor& y, const Tensor& w, const Tensor& b, int64_t rows,
                          int64_t cols, double eps, const Drop& drop, Tensor& h, Tensor& out, Tensor& mean,
                          Tensor& rstd) {
  const T* xp = static_cast<const T*>(x.raw_data());
  const TY* yp = ptr_or_null<TY>(y);
  const T *wp = ptr_or_null<T>(w), *bp = ptr_or_null<T>(b);
  T* hp = mut_ptr_or_null<T>(h);
  TO* op = static_cast<TO*>(out.raw_data());
  constexpr int V = vec_width<T, TY, TO>();
  const int rt_pair = regs_threads_vec<V>(cols, {xp, yp, wp, bp, hp, op});
  if (rt_pair > 0) {
    add_ln_forward_regs_kernel<T, TY, TO, V, C><<<row_blocks(rows), rt_pair, 0, stream()>>>(
        xp, yp, wp, bp, hp, op, mean.data<C>(), rstd.data<C>(), rows, cols, eps, drop);
  } else {
    add_ln_forward_kernel<T, TY, TO, C><<<row_blocks(rows), row_threads(cols), 0, stream()>>>(
        xp, yp, wp, bp, hp, op, mean.data<C>(), rstd.data<C>(), rows, cols, eps, drop);
  }
  ST_CUDA_LAUNCH_CHECK();
}

template <typename T, typename TY, typename TO, typename C>
void add_ln_backward_typed(const Tensor& g, const Tensor& gh, const Tensor& h, const Tensor& mean, const Tensor& rstd,
                           const Tensor& w, int64_t rows, int64_t cols, const Drop& drop, Tensor& dx, Tensor& dy,
                           Tensor& dw, Tensor& db) {
  const TO* gp = static_cast<const TO*>(g.raw_data());
  const T* hp = static_cast<const T*>(h.raw_data());
  const T *ghp = ptr_or_null<T>(gh), *wp = ptr_or_null<T>(w);
  T* dxp = mut_ptr_or_null<T>(dx);
  TY* dyp = mut_ptr_or_null<TY>(dy);
  const C *mp = mean.data<C>(), *rp = rstd.data<C>();
  const bool wb = dw.defined() || db.defined();
  if (dxp || dyp) {
    constexpr int V = vec_width<T, TY, TO>();
    const int rt_pair = regs_threads_vec<V>(cols, {gp, hp, ghp, wp, dxp, dyp});
    if (rt_pair > 0 && wb) {
      // A grid that fills the machine once (up to 1024 threads per multiprocessor: enough loads in
      // flight, and fewer partial rows to add), each block summing its rows' weight gradients in
      // registers.
      const auto kernel = add_ln_backward_regs_kernel<T, TY, TO, V, C>;
      int per_sm = 0;
      ST_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, rt_pair, 0));
      const int64_t blocks =
          std::min<int64_t>(rows, int64_t{sm_count()} * std::clamp(per_sm, 1, std::max(1, 1024 / rt_pair)));
      Tensor pw = Tensor::empty({blocks, cols}, dtype_of<C>::value, h.device());
      Tensor pb = Tensor::empty({blocks, cols}, dtype_of<C>::value, h.device());
      kernel<<<static_cast<unsigned>(blocks), rt_pair, 0, stream()>>>(gp, ghp, hp, mp, rp, wp, dxp, dyp, pw.data<C>(),
                                                                      pb.data<C>(), rows, cols, drop);
      ST_CUDA_LAUNCH_CHECK();
      finish_column_sums<C, T>(pw, pb, blocks, cols, dw, db);
      return;
    }
    if (rt_pair > 0) {
      add_ln_backward_regs_kernel<T, TY, TO, V, C><<<row_blocks(rows), rt_pair, 0, stream()>>>(
          gp, ghp, hp, mp, rp, wp, dxp, dyp, nullptr, nullptr, rows, cols, drop);
    } else {
      add_ln_backward_kernel<T, TY, TO, C>
          <<<row_blocks(rows), row_threads(cols), 0, stream()>>>(gp, ghp, hp, mp, rp, wp, dxp, dyp, rows, cols, drop);
    }
    ST_CUDA_LAUNCH_CHECK();
  }
  if (wb) ln_weight_grads<TO, T, C>(gp, hp, mp, rp, rows, cols, dw, db, h);
}

}  // namespace

namespace {

template <typename T>
struct Tag {
  using type = T;
};

// Calls f(Tag<U>{}) for the storage type U of a companion dtype d of T's rows (y, or the output):
// T itself, or a half type beside float32 rows; false, calling nothing, for any other pair.
template <typename T, typename F>
bool companion(Dtype xd, Dtype d, F&& f) {
  if (d == xd) {
    f(Tag<T>{});
    return true;
  }
  if constexpr (std::is_same_v<T, float>) {
    if (d == Dtype::BFloat16) {
      f(Tag<__nv_bfloat16>{});
      return true;
    }
    if (d == Dtype::Float16) {
      f(Tag<__half>{});
      return true;
    }
  }
  return false;
}

// Calls f(Tag<TY>{}, Tag<TO>{}) for the companion types of yd and od beside T's rows; false,
// launching nothing, when either pair is declined.
template <typename T, typename F>
bool companions(Dtype xd, Dtype yd, Dtype od, F&& f) {
  if (!companion<T>(xd, yd, [](auto) {}) || !companion<T>(xd, od, [](auto) {})) return false;
  companion<T>(xd, yd, [&](auto ty) { companion<T>(xd, od, [&](auto to) { f(ty, to); }); });
  return true;
}

}  // namespace

bool add_layer_norm(const Tensor& x, const Tensor& y, const Tensor& w, const Tensor& b, int64_t rows, int64_t cols,
                    double eps, const DropoutDraw& drop, Tensor& h, Tensor& out, Tensor& mean, Tensor& rstd) {
  if (rows == 0) return true;
  const Dtype xd = x.dtype();
  bool taken = false;
  ST_CUDA_NORM_CASES(xd, {
    taken = companions<T>(xd, y.defined() ? y.dtype() : xd, out.dtype(), [&](auto ty, auto to) {
      using TY = typename decltype(ty)::type;
      using TO = typename decltype(to)::type;
      add_ln_forward_typed<T, TY, TO, C>(x, y, w, b, rows, cols, eps, drop_of(drop), h, out, mean, rstd);
    });
  });
  return taken;
}

bool add_layer_norm_backward(const Tensor& g, const Tensor& gh, const Tensor& h, const Tensor& mean, const Tensor& rstd,
                             const Tensor& w, int64_t rows, int64_t cols, const DropoutDraw& drop, Tensor& dx,
                             Tensor& dy, Tensor& dw, Tensor& db) {
  if (rows == 0) return true;
  const Dtype xd = h.dtype();
  bool taken = false;
  ST_CUDA_NORM_CASES(xd, {
    taken = companions<T>(xd, dy.defined() ? dy.dtype() : xd, g.dtype(), [&](auto ty, auto to) {
      using TY = typename decltype(ty)::type;
      using TO = typename decltype(to)::type;
      add_ln_backward_typed<T, TY, TO, C>(g, gh, h, mean, rstd, w, rows, cols, drop_of(drop), dx, dy, dw, db);
    });
  });
  return taken;
}

void layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, int64_t rows, int64_t cols, double eps, Tensor& y,
                Tensor& mean, Tensor& rstd) {
  Tensor none;
  if (!add_layer_norm(x, none, w, b, rows, cols, eps, DropoutDraw{}, none, y, mean, rstd)) {
    throw DtypeError(std::string("layer_norm: CUDA rows of ") + dtype_name(x.dtype()) + " cannot be written as " +
                     dtype_name(y.dtype()));
  }
}

void layer_norm_backward(const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w,
                         int64_t rows, int64_t cols, Tensor& dx, Tensor& dw, Tensor& db) {
  Tensor none;
  if (!add_layer_norm_backward(g, none, x, mean, rstd, w, rows, cols, DropoutDraw{}, dx, none, dw, db)) {
    throw DtypeError(std::string("layer_norm: CUDA gradient of ") + dtype_name(g.dtype()) + " for rows of " +
                     dtype_name(x.dtype()));
  }
}

}  // namespace st::backend::cuda
