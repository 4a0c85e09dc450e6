#include <algorithm>
#include <cstring>

#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"

namespace st::backend::cpu::CPU_CAPABILITY {  // compiled once per CPU capability (dispatch.h)

namespace {

template <typename S, typename D>
void convert(const Tensor& src, Tensor& dst) {
  const auto g = make_geometry<2>(dst.shape(), {&dst.strides(), &src.strides()},
                                  {static_cast<int64_t>(sizeof(D)), static_cast<int64_t>(sizeof(S))});
  for_each<2>(g, {static_cast<char*>(dst.raw_data()), static_cast<char*>(src.raw_data())},
              [&](std::array<char*, 2> p, int64_t n, std::array<int64_t, 2> s) {
    auto conv = [](S v) -> D {
      if constexpr (std::is_same_v<S, D>) {
        return v;
      } else if constexpr (std::is_same_v<D, bool>) {
        return to_double(v) != 0.0;
      } else if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) {
        return from_double<D>(static_cast<float>(v));
      } else if constexpr (std::is_same_v<D, Half> || std::is_same_v<D, BFloat16>) {
        return D(static_cast<float>(v));
      } else {
        return static_cast<D>(v);
      }
    };
    if (s[0] == static_cast<int64_t>(sizeof(D)) && s[1] == static_cast<int64_t>(sizeof(S))) {
      D* o = reinterpret_cast<D*>(p[0]);
      const S* in = reinterpret_cast<const S*>(p[1]);
      if constexpr (std::is_same_v<S, D>) {
        std::memcpy(o, in, n * sizeof(D));
      } else {
        for (int64_t i = 0; i < n; ++i) o[i] = conv(in[i]);
      }
    } else if (s[0] == static_cast<int64_t>(sizeof(D)) && s[1] == 0) {
      // Materialising a broadcast (e.g. the expanded gradient of sum()): a vectorised fill.
      std::fill_n(reinterpret_cast<D*>(p[0]), n, conv(*reinterpret_cast<const S*>(p[1])));
    } else {
      for (int64_t i = 0; i < n; ++i) {
        *reinterpret_cast<D*>(p[0] + i * s[0]) = conv(*reinterpret_cast<const S*>(p[1] + i * s[1]));
      }
    }
  });
}

}  // namespace

void copy(const Tensor& src, Tensor& dst) {
  ST_DISPATCH_ALL(src.dtype(), [&] {
    using S = scalar_t;
    ST_DISPATCH_ALL(dst.dtype(), [&] { convert<S, scalar_t>(src, dst); });
  });
}

void fill(Tensor& dst, Scalar value) {
  ST_DISPATCH_ALL(dst.dtype(), [&] {
    const scalar_t v = value.is_float() ? from_double<scalar_t>(value.to_double())
                                        : from_double<scalar_t>(static_cast<double>(value.to_int()));
    const Shape zero(dst.dim(), 0);
    const auto g = make_geometry<1>(dst.shape(), {&dst.strides()}, {static_cast<int64_t>(sizeof(scalar_t))});
    for_each<1>(g, {static_cast<char*>(dst.raw_data())},
                [&](std::array<char*, 1> p, int64_t n, std::array<int64_t, 1> s) {
      if (s[0] == static_cast<int64_t>(sizeof(scalar_t))) {
        scalar_t* o = reinterpret_cast<scalar_t*>(p[0]);
        for (int64_t i = 0; i < n; ++i) o[i] = v;
      } else {
        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<scalar_t*>(p[0] + i * s[0]) = v;
      }
    });
  });
}

void where(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor& out) {
  ST_DISPATCH_ALL(out.dtype(), [&] {
    using T = scalar_t;
    const int64_t ts = sizeof(T);
    const auto g =
        make_geometry<4>(out.shape(), {&out.strides(), &cond.strides(), &a.strides(), &b.strides()}, {ts, 1, ts, ts});
    for_each<4>(g,
                {static_cast<char*>(out.raw_data()), static_cast<char*>(cond.raw_data()),
                 static_cast<char*>(a.raw_data()), static_cast<char*>(b.raw_data())},
                [&](std::array<char*, 4> p, int64_t n, std::array<int64_t, 4> s) {
      for (int64_t i = 0; i < n; ++i) {
        const bool c = *reinterpret_cast<const bool*>(p[1] + i * s[1]);
        *reinterpret_cast<T*>(p[0] + i * s[0]) =
            c ? *reinterpret_cast<const T*>(p[2] + i * s[2]) : *reinterpret_cast<const T*>(p[3] + i * s[3]);
      }
    });
  });
}

}  // namespace st::backend::cpu::CPU_CAPABILITY
