#include "spiraltorch/generator.h"

#include "core/philox.h"

namespace st {

std::array<uint32_t, 4> Generator::philox(uint64_t seed, uint64_t counter) {
  std::array<uint32_t, 4> out{};
  detail::philox4x32(seed, counter, out.data());
  return out;
}

Generator& default_generator() {
  static Generator gen;
  return gen;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace st
