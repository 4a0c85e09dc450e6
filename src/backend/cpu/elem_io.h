#pragma once
// Element loads and stores of the elementwise loops (binary.cpp, unary.cpp). Each storage type T
// is read as Compute<T> and written back from it; bfloat16 goes through its raw 16 bits with
// integer operations that vectorise (the BFloat16 struct's converting constructor does not), with
// the same rounding as that constructor: nearest-even, NaN kept a quiet NaN. float16 goes through
// Half's branch-free conversions, which vectorise too (GCC 12 does not vectorise _Float16's F16C
// conversions without AVX512-FP16: 3-30x slower on a Zen 4).
#include <bit>
#include <cstdint>
#include <type_traits>
#if defined(__F16C__)
#include <immintrin.h>
#endif

#include "backend/cpu/vmath.h"
#include "spiraltorch/dtype.h"

namespace st::backend::cpu {

template <typename S>
inline constexpr bool kHalfType = std::is_same_v<S, BFloat16> || std::is_same_v<S, Half>;

// The type a storage type computes in: float for the half types, the type itself otherwise.
template <typename S>
using Compute = std::conditional_t<kHalfType<S>, float, S>;

// What the loops index: the 16-bit float types as uint16_t, everything else as itself.
template <typename S>
using Raw = std::conditional_t<kHalfType<S>, uint16_t, S>;

template <typename S>
ST_VINLINE Compute<S> load_elem(Raw<S> v) {
  if constexpr (std::is_same_v<S, BFloat16>) {
    return std::bit_cast<float>(static_cast<uint32_t>(v) << 16);
  } else if constexpr (std::is_same_v<S, Half>) {
    return Half::to_float(v);
  } else {
    return static_cast<Compute<S>>(v);
  }
}

template <typename S, typename C>
ST_VINLINE Raw<S> store_elem(C v) {
  if constexpr (std::is_same_v<S, BFloat16>) {
    const uint32_t u = std::bit_cast<uint32_t>(static_cast<float>(v));
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const uint32_t quiet = (u >> 16) | 0x40u;
    return static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? quiet : rounded);
  } else if constexpr (std::is_same_v<S, Half>) {
    return Half::from_float(static_cast<float>(v));
  } else if constexpr (std::is_same_v<S, bool>) {
    return static_cast<bool>(v);
  } else {
    return S(v);
  }
}

// float16 runs through F16C's 8-wide conversions (AVX-512's 16-wide ones) in the kernels compiled
// with them (the avx2 and avx512 capabilities, dispatch.h): the loops below convert a block of
// inputs to float, apply f at float SIMD width, and convert the block back (the bit-manipulating
// Half conversions cost 3-4x PyTorch's time on float16 elementwise ops).
#if defined(__F16C__)
inline constexpr bool kF16cBlocks = true;
#else
inline constexpr bool kF16cBlocks = false;
#endif
inline constexpr int64_t kHalfBlock = 256;

ST_VINLINE void halves_to_floats(const uint16_t* x, int64_t n, float* v) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16) {  // (maskz: the unmasked intrinsic trips GCC 12's -Wmaybe-uninitialized)
    _mm512_storeu_ps(v + i, _mm512_maskz_cvtph_ps(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i))));
  }
#endif
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(v + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
  }
#endif
  for (; i < n; ++i) v[i] = Half::to_float(x[i]);
}

// acc[i] += x[i] as float for i < n, converted and added in registers (the float16 sums). 8 wide
// also where AVX-512 is compiled in: a float16 sum through a buffer of 16-wide conversions took
// 1.25x the time of the 8-wide one on an Intel Xeon (2 threads, 10^6 values).
ST_VINLINE void add_halves(float* acc, const uint16_t* x, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(acc + i, _mm256_add_ps(_mm256_loadu_ps(acc + i),
                                            _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i)))));
  }
#endif
  for (; i < n; ++i) acc[i] += Half::to_float(x[i]);
}

ST_VINLINE void floats_to_halves(const float* v, int64_t n, uint16_t* o) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16) {
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(o + i),
        _mm512_maskz_cvtps_ph(0xffff, _mm512_loadu_ps(v + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
#endif
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(v + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
#endif
  for (; i < n; ++i) o[i] = Half::from_float(v[i]);
}

// o[i] = f(x[i]) (y null) or f(x[i], y[i]) (y_scalar: f(x[i], *y)), for contiguous float16 inputs
// and an output stored as Out.
template <typename Out, typename F>
void half_block_loop(const uint16_t* x, const uint16_t* y, bool y_scalar, Raw<Out>* o, int64_t n, F f) {
  float a[kHalfBlock], b[kHalfBlock];
  const float yv = y && y_scalar ? Half::to_float(*y) : 0.0f;
  for (int64_t s = 0; s < n; s += kHalfBlock) {
    const int64_t m = n - s < kHalfBlock ? n - s : kHalfBlock;
    halves_to_floats(x + s, m, a);
    if (y && !y_scalar) halves_to_floats(y + s, m, b);
    if constexpr (std::is_same_v<Out, Half>) {
      float r[kHalfBlock];
      if (!y) {
#pragma omp simd
        for (int64_t i = 0; i < m; ++i) r[i] = f(a[i], 0.0f);
      } else if (y_scalar) {
#pragma omp simd
        for (int64_t i = 0; i < m; ++i) r[i] = f(a[i], yv);
      } else {
#pragma omp simd
        for (int64_t i = 0; i < m; ++i) r[i] = f(a[i], b[i]);
      }
      floats_to_halves(r, m, o + s);
    } else {
      if (!y) {
#pragma omp simd
        for (int64_t i = 0; i < m; ++i) o[s + i] = store_elem<Out>(f(a[i], 0.0f));
      } else if (y_scalar) {
#pragma omp simd
        for (int64_t i = 0; i < m; ++i) o[s + i] = store_elem<Out>(f(a[i], yv));
      } else {
#pragma omp simd
        for (int64_t i = 0; i < m; ++i) o[s + i] = store_elem<Out>(f(a[i], b[i]));
      }
    }
  }
}

}  // namespace st::backend::cpu
