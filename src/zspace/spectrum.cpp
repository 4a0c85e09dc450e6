#include "spiraltorch/zspace/spectrum.h"

#include <cmath>
#include <numbers>

namespace st::zspace {

std::vector<std::complex<double>> dft(std::span<const double> values) {
  const size_t n = values.size();
  std::vector<std::complex<double>> out(n);
  const double step = -2.0 * std::numbers::pi / static_cast<double>(n);
  for (size_t k = 0; k < n; ++k) {
    double re = 0.0, im = 0.0;
    for (size_t j = 0; j < n; ++j) {
      // (k * j) is exact in double for any realistic n; the angle is formed as in the reference.
      const double ang = static_cast<double>(k * j) * step;
      re += values[j] * std::cos(ang);
      im += values[j] * std::sin(ang);
    }
    out[k] = {re, im};
  }
  return out;
}

}  // namespace st::zspace
