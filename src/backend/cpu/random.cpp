#include <cmath>

#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"
#include "spiraltorch/generator.h"

namespace st::backend::cpu {

// Element i draws from Philox block (counter + i / 4) for uniforms and
// (counter + i / 2) for normals (Box-Muller on a pair), so any thread split gives
// the same numbers.
namespace {
template <typename scalar_t>
void random_typed(Tensor& out, bool normal, double p0, double p1, uint64_t seed, uint64_t counter) {
  const int64_t n = out.numel();
  {
    scalar_t* o = out.data<scalar_t>();
    const int threads = num_threads_for(n * 8);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      if (!normal) {
        const auto block = Generator::philox(seed, counter + static_cast<uint64_t>(i / 4));
        double u;
        if constexpr (std::is_same_v<scalar_t, float>) {
          u = (block[i % 4] >> 8) * (1.0 / 16777216.0);
        } else {
          u = ((static_cast<uint64_t>(block[i % 4]) << 21) ^ block[(i + 1) % 4]) * (1.0 / 9007199254740992.0);
          u = u - std::floor(u);
        }
        scalar_t v = static_cast<scalar_t>(p0 + (p1 - p0) * u);
        if (v >= static_cast<scalar_t>(p1) && p1 > p0)
          v = std::nextafter(static_cast<scalar_t>(p1), static_cast<scalar_t>(p0));
        o[i] = v;
      } else {
        const auto block = Generator::philox(seed, counter + static_cast<uint64_t>(i / 2));
        const double u1 = ((block[0] >> 8) + 1.0) * (1.0 / 16777217.0);  // (0, 1]
        const double u2 = (block[1] >> 8) * (1.0 / 16777216.0);
        const double radius = std::sqrt(-2.0 * std::log(u1));
        const double angle = 2.0 * M_PI * u2;
        const double z = (i % 2 == 0) ? radius * std::cos(angle) : radius * std::sin(angle);
        o[i] = static_cast<scalar_t>(p0 + p1 * z);
      }
    }
  }
}
}  // namespace

void random(Tensor& out, bool normal, double p0, double p1, uint64_t seed, uint64_t counter) {
  ST_DISPATCH_FLOAT(out.dtype(), [&] { random_typed<scalar_t>(out, normal, p0, p1, seed, counter); });
}

}  // namespace st::backend::cpu
