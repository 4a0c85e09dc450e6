// Elementwise kernels besides binary and unary (binary.cu, unary.cu): copy with conversion, fill,
// where, random numbers and the dropout mask.
#include <cmath>

#include "backend/cuda/common.cuh"
#include "backend/cuda/kernels.h"
#include "backend/cuda/philox.cuh"

namespace st::backend::cuda {

namespace {

template <typename S, typename D>
void convert_loop(const Tensor& src, Tensor& dst) {
  const auto g = make_geometry<2>(dst.shape(), {&dst.strides(), &src.strides()});
  D* o = static_cast<D*>(dst.raw_data());
  const S* in = static_cast<const S*>(src.raw_data());
  launch_map1(g, o, in, [] __device__(S v) { return convert<D>(v); });
}

}  // namespace

// Same-device conversion copy.
void copy_on_device(const Tensor& src, Tensor& dst) {
  if (src.dtype() == dst.dtype() && src.is_contiguous() && dst.is_contiguous() && src.shape() == dst.shape()) {
    ST_CUDA_CHECK(cudaMemcpyAsync(dst.raw_data(), src.raw_data(), src.numel() * src.itemsize(),
                                  cudaMemcpyDeviceToDevice, stream()));
    return;
  }
  STK_DISPATCH_ALL(src.dtype(), [&] {
    using S = scalar_t;
    STK_DISPATCH_ALL(dst.dtype(), [&] { convert_loop<S, scalar_t>(src, dst); });
  });
}

void fill(Tensor& dst, Scalar value) {
  STK_DISPATCH_ALL(dst.dtype(), [&] {
    using T = scalar_t;
    const double dv = value.is_float() ? value.to_double() : static_cast<double>(value.to_int());
    T v;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      v = value.is_float() ? static_cast<T>(dv) : static_cast<T>(value.to_int());
    } else {
      v = convert<T>(dv);
    }
    const auto g = make_geometry<1>(dst.shape(), {&dst.strides()});
    T* o = static_cast<T*>(dst.raw_data());
    launch_geometry<1>(g, [=] __device__(const int64_t(&off)[1]) { o[off[0]] = v; });
  });
}

void where(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor& out) {
  STK_DISPATCH_ALL(out.dtype(), [&] {
    using T = scalar_t;
    const auto g = make_geometry<4>(out.shape(), {&out.strides(), &cond.strides(), &a.strides(), &b.strides()});
    T* o = static_cast<T*>(out.raw_data());
    const bool* c = static_cast<const bool*>(cond.raw_data());
    const T* x = static_cast<const T*>(a.raw_data());
    const T* y = static_cast<const T*>(b.raw_data());
    launch_geometry<4>(g, [=] __device__(const int64_t(&off)[4]) { o[off[0]] = c[off[1]] ? x[off[2]] : y[off[3]]; });
  });
}

void random(Tensor& out, bool normal, double p0, double p1, uint64_t seed, uint64_t counter) {
  const int64_t n = out.numel();
  ST_CUDA_FLOAT_CASES(out.dtype(), {
    T* o = static_cast<T*>(out.raw_data());
    for_n(n, [=] __device__(int64_t i) {
      if (!normal) {
        const uint4 block = philox(seed, counter + static_cast<uint64_t>(i / 4));
        double u;
        if constexpr (std::is_same_v<T, float>) {
          u = (philox_lane(block, i % 4) >> 8) * (1.0 / 16777216.0);
        } else {
          u = ((static_cast<uint64_t>(philox_lane(block, i % 4)) << 21) ^ philox_lane(block, (i + 1) % 4)) *
              (1.0 / 9007199254740992.0);
          u = u - floor(u);
        }
        T v = static_cast<T>(p0 + (p1 - p0) * u);
        if (v >= static_cast<T>(p1) && p1 > p0) v = nextafter(static_cast<T>(p1), static_cast<T>(p0));
        o[i] = v;
      } else {
        const uint4 block = philox(seed, counter + static_cast<uint64_t>(i / 2));
        const double u1 = ((block.x >> 8) + 1.0) * (1.0 / 16777217.0);
        const double u2 = (block.y >> 8) * (1.0 / 16777216.0);
        const double radius = sqrt(-2.0 * log(u1));
        const double angle = 2.0 * 3.14159265358979323846 * u2;
        const double z = (i % 2 == 0) ? radius * cos(angle) : radius * sin(angle);
        o[i] = static_cast<T>(p0 + p1 * z);
      }
    });
  });
}

void dropout_mask(Tensor& out, uint64_t seed, uint64_t counter, double scale, double keep) {
  const int64_t n = out.numel();
  const float keep_below = static_cast<float>(keep);
  ST_CUDA_FLOAT_CASES(out.dtype(), {
    T* o = static_cast<T*>(out.raw_data());
    const T s = static_cast<T>(scale);
    for_n(n,
          [=] __device__(int64_t i) { o[i] = dropout_factor(seed, counter, i, keep_below, 1.0f) != 0.0f ? s : T(0); });
  });
}

}  // namespace st::backend::cuda
