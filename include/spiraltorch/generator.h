#pragma once
#include <array>
#include <cstdint>

namespace st {

// Counter-based Philox4x32-10. A draw of n numbers reserves n counters, so element
// i of a tensor depends only on (seed, start counter, i): results do not depend on
// how many threads fill the tensor.
class Generator {
 public:
  explicit Generator(uint64_t seed = 0x5eed) { manual_seed(seed); }
  void manual_seed(uint64_t seed) {
    seed_ = seed;
    offset_ = 0;
  }
  uint64_t seed() const { return seed_; }
  uint64_t offset() const { return offset_; }
  void set_offset(uint64_t o) { offset_ = o; }
  // Reserves `n` blocks of four 32-bit outputs and returns the first block index.
  uint64_t reserve(uint64_t n) {
    const uint64_t start = offset_;
    offset_ += n;
    return start;
  }
  // The four 32-bit outputs of block `counter` under `seed`.
  static std::array<uint32_t, 4> philox(uint64_t seed, uint64_t counter);

 private:
  uint64_t seed_ = 0;
  uint64_t offset_ = 0;
};

Generator& default_generator();
void manual_seed(uint64_t seed);

}  // namespace st
