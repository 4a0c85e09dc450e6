#pragma once
// Cache keys of the library plans built once per shape (cuDNN convolutions and attention graphs,
// cuBLASLt GEMMs): N int64 fields compared whole, hashed with FNV-1a.
#include <array>
#include <cstddef>
#include <cstdint>

namespace st::backend::cuda {

template <size_t N>
struct PlanKey {
  std::array<int64_t, N> v{};
  bool operator==(const PlanKey&) const = default;
};

struct PlanKeyHash {
  template <size_t N>
  size_t operator()(const PlanKey<N>& k) const {
    size_t h = 1469598103934665603ull;
    for (const int64_t x : k.v) h = (h ^ static_cast<size_t>(x)) * 1099511628211ull;
    return h;
  }
};

}  // namespace st::backend::cuda
