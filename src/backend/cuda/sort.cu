// Sorting and stream compaction through CUB (part of the CUDA toolkit).
//
// sort: every (outer, inner) column of the (outer, n, inner) input becomes one contiguous
// segment of radix keys (an unsigned integer whose ascending order is the requested
// order: NaN largest, -0.0 == +0.0, descending = bitwise complement) paired with the
// element's position. The segments are sorted stably, so ties keep their positions
// exactly like the CPU's stable sort, and the first k pairs of each segment are written
// out (values gathered from x by position). Many segments go through
// cub::DeviceSegmentedSort::StableSortPairs (which gives each large segment one thread
// block); a few long segments are sorted one after another by the device-wide
// cub::DeviceRadixSort::SortPairs (also stable), which uses the whole GPU per segment.
// masked_select: cub::DeviceSelect::Flagged on the raw element bits.
// searchsorted: one thread per value, a binary search of its row.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <cub/device/device_select.cuh>

#include <climits>
#include <type_traits>

#include "backend/common/sorted_bound.h"
#include "backend/cuda/common.cuh"
#include "backend/cuda/kernels.h"

namespace st::backend::cuda {

namespace {

// Device scratch space from the caching allocator (stream-ordered reuse makes it safe to
// release as soon as the work using it is queued).
Tensor scratch_bytes(size_t bytes, Device device) {
  return Tensor::empty({static_cast<int64_t>(bytes > 0 ? bytes : 1)}, Dtype::UInt8, device);
}

// The radix key type of a value type: an unsigned integer of the same width.
template <typename T>
using key_t_of = std::conditional_t<sizeof(T) == 8, unsigned long long,
                                    std::conditional_t<sizeof(T) == 4, unsigned int, unsigned char>>;

template <typename T, typename K>
__device__ inline K sort_key(T v, bool descending) {
  constexpr K top = static_cast<K>(K(1) << (sizeof(K) * 8 - 1));
  K u;
  if constexpr (std::is_floating_point_v<T>) {
    if (v != v) {
      u = static_cast<K>(~K(0));  // every NaN: the largest key (ties among NaNs stay in order)
    } else {
      if (v == T(0)) v = T(0);  // -0.0 and +0.0 compare equal, so they must tie
      if constexpr (sizeof(T) == 8) {
        u = static_cast<K>(__double_as_longlong(v));
      } else {
        u = static_cast<K>(__float_as_uint(v));
      }
      u = (u & top) ? static_cast<K>(~u) : static_cast<K>(u | top);
    }
  } else if constexpr (std::is_signed_v<T>) {
    u = static_cast<K>(static_cast<K>(v) ^ top);
  } else {
    u = static_cast<K>(v);  // bool, uint8
  }
  return descending ? static_cast<K>(~u) : u;
}

// I is the offset and position type: int32 when the whole problem fits, else int64.
template <typename T, typename I>
void sort_segments(const Tensor& x, int64_t outer, int64_t n, int64_t inner, int64_t k, bool descending, Tensor& values,
                   Tensor& indices) {
  using K = key_t_of<T>;
  const Device dev = x.device();
  const int64_t segments = outer * inner, total = segments * n;
  const Dtype kdt = sizeof(K) == 8 ? Dtype::Int64 : sizeof(K) == 4 ? Dtype::Int32 : Dtype::UInt8;
  const Dtype idt = sizeof(I) == 8 ? Dtype::Int64 : Dtype::Int32;
  Tensor keys_a = Tensor::empty({total}, kdt, dev), keys_b = Tensor::empty({total}, kdt, dev);
  Tensor pos_a = Tensor::empty({total}, idt, dev), pos_b = Tensor::empty({total}, idt, dev);
  K* ka = static_cast<K*>(keys_a.raw_data());
  K* kb = static_cast<K*>(keys_b.raw_data());
  I* pa = static_cast<I*>(pos_a.raw_data());
  I* pb = static_cast<I*>(pos_b.raw_data());
  const T* xp = static_cast<const T*>(x.raw_data());

  // Column (o, i) of x -> segment s = o * inner + i, contiguous.
  for_n(total, [=] __device__(int64_t t) {
    const int64_t s = t / n, j = t - s * n;
    const int64_t o = s / inner, i = s - o * inner;
    ka[t] = sort_key<T, K>(xp[(o * n + j) * inner + i], descending);
    pa[t] = static_cast<I>(j);
  });

  // Heuristic switch (performance only; both paths give identical results).
  constexpr int64_t kLongSegment = int64_t{1} << 15, kFewSegments = 32;
  const I* perm = nullptr;
  if (n >= kLongSegment && segments <= kFewSegments) {
    constexpr int kBits = static_cast<int>(sizeof(K) * 8);
    size_t bytes = 0;
    ST_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, ka, kb, pa, pb, n, 0, kBits, stream()));
    Tensor temp = scratch_bytes(bytes, dev);
    for (int64_t s = 0; s < segments; ++s) {
      ST_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.raw_data(), bytes, ka + s * n, kb + s * n, pa + s * n,
                                                    pb + s * n, n, 0, kBits, stream()));
    }
    perm = pb;
  } else {
    Tensor offsets = Tensor::empty({segments + 1}, idt, dev);
    I* off = static_cast<I*>(offsets.raw_data());
    for_n(segments + 1, [=] __device__(int64_t s) { off[s] = static_cast<I>(s * n); });
    cub::DoubleBuffer<K> keys(ka, kb);
    cub::DoubleBuffer<I> pos(pa, pb);
    size_t bytes = 0;
    ST_CUDA_CHECK(
        cub::DeviceSegmentedSort::StableSortPairs(nullptr, bytes, keys, pos, total, segments, off, off + 1, stream()));
    Tensor temp = scratch_bytes(bytes, dev);
    ST_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(temp.raw_data(), bytes, keys, pos, total, segments, off,
                                                            off + 1, stream()));
    perm = pos.Current();
  }

  T* vp = static_cast<T*>(values.raw_data());
  int64_t* ip = indices.data<int64_t>();
  for_n(segments * k, [=] __device__(int64_t t) {
    const int64_t s = t / k, j = t - s * k;
    const int64_t o = s / inner, i = s - o * inner;
    const int64_t p = static_cast<int64_t>(perm[s * n + j]);
    const int64_t at = (o * k + j) * inner + i;
    vp[at] = xp[(o * n + p) * inner + i];
    ip[at] = p;
  });
}

template <typename T>
void sort_typed(const Tensor& x, int64_t outer, int64_t n, int64_t inner, int64_t k, bool descending, Tensor& values,
                Tensor& indices) {
  // Offsets reach segments * n = the element count; int32 covers them when it fits.
  if (x.numel() <= INT_MAX) {
    sort_segments<T, int32_t>(x, outer, n, inner, k, descending, values, indices);
  } else {
    sort_segments<T, int64_t>(x, outer, n, inner, k, descending, values, indices);
  }
}

template <typename U>
void select_flagged(const Tensor& x, const Tensor& mask, Tensor& out) {
  const int64_t n = x.numel();
  const U* xp = static_cast<const U*>(x.raw_data());
  const bool* mp = mask.data<bool>();
  U* op = static_cast<U*>(out.raw_data());
  Tensor count = Tensor::empty({1}, Dtype::Int64, x.device());
  int64_t* cp = count.data<int64_t>();
  size_t bytes = 0;
  ST_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, bytes, xp, mp, op, cp, n, stream()));
  Tensor temp = scratch_bytes(bytes, x.device());
  ST_CUDA_CHECK(cub::DeviceSelect::Flagged(temp.raw_data(), bytes, xp, mp, op, cp, n, stream()));
}

}  // namespace

void sort(const Tensor& x, int64_t outer, int64_t n, int64_t inner, int64_t k, bool descending, Tensor& values,
          Tensor& indices) {
  if (outer * inner * k == 0) return;
  switch (x.dtype()) {
    case Dtype::Bool:
      return sort_typed<bool>(x, outer, n, inner, k, descending, values, indices);
    case Dtype::UInt8:
      return sort_typed<uint8_t>(x, outer, n, inner, k, descending, values, indices);
    case Dtype::Int32:
      return sort_typed<int32_t>(x, outer, n, inner, k, descending, values, indices);
    case Dtype::Int64:
      return sort_typed<int64_t>(x, outer, n, inner, k, descending, values, indices);
    case Dtype::Float32:
      return sort_typed<float>(x, outer, n, inner, k, descending, values, indices);
    case Dtype::Float64:
      return sort_typed<double>(x, outer, n, inner, k, descending, values, indices);
    default:
      throw DtypeError(std::string("sort kernel: unsupported dtype ") + dtype_name(x.dtype()));
  }
}

// The op layer sized out from the mask's true count, so exactly out.numel() elements are written.
void masked_select(const Tensor& x, const Tensor& mask, Tensor& out) {
  if (x.numel() == 0 || out.numel() == 0) return;
  switch (x.itemsize()) {
    case 1:
      return select_flagged<uint8_t>(x, mask, out);
    case 2:
      return select_flagged<uint16_t>(x, mask, out);
    case 4:
      return select_flagged<uint32_t>(x, mask, out);
    case 8:
      return select_flagged<unsigned long long>(x, mask, out);
    default:
      throw DtypeError(std::string("masked_select kernel: unsupported dtype ") + dtype_name(x.dtype()));
  }
}

// Sorted search, one thread per value (the CPU kernel's binary search, common/sorted_bound.h).
template <typename T>
void search_typed(const Tensor& sorted, const Tensor& values, bool right, Tensor& out) {
  const int64_t m = values.shape()[1], n = sorted.shape()[1];
  const bool shared = sorted.shape()[0] == 1 && values.shape()[0] != 1;
  const T* s = sorted.data<T>();
  const T* v = values.data<T>();
  int64_t* o = out.data<int64_t>();
  for_n(values.numel(),
        [=] __device__(int64_t i) { o[i] = sorted_bound(s + (shared ? 0 : (i / m) * n), n, v[i], right); });
}

void searchsorted(const Tensor& sorted, const Tensor& values, bool right, Tensor& out) {
  with_search_type(values.dtype(), [&]<typename T>() { search_typed<T>(sorted, values, right, out); });
}

}  // namespace st::backend::cuda
