#include "spiraltorch/zspace/language_wave_encoder.h"

#include <cmath>

#include "checks.h"
#include "spiraltorch/geometry/poincare.h"
#include "spiraltorch/zspace/spectrum.h"

namespace st::zspace {

std::vector<char32_t> utf8_code_points(std::string_view s, const char* who) {
  std::vector<char32_t> out;
  const auto bad = [&] { return ValueError(std::string(who) + ": text is not valid UTF-8"); };
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const int len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + static_cast<size_t>(len) > s.size()) throw bad();
    char32_t cp = len == 1 ? b : b & (0x7F >> len);
    for (int j = 1; j < len; ++j) {
      const auto c = static_cast<unsigned char>(s[i + static_cast<size_t>(j)]);
      if ((c >> 6) != 0x2) throw bad();
      cp = (cp << 6) | (c & 0x3F);
    }
    out.push_back(cp);
    i += static_cast<size_t>(len);
  }
  return out;
}

LanguageWaveEncoder::LanguageWaveEncoder(double curvature, double temperature)
    : c_(detail::check_curvature(curvature, "LanguageWaveEncoder")), t_(temperature) {
  if (!(std::isfinite(temperature) && temperature > 0)) {
    throw ValueError("LanguageWaveEncoder: temperature must be positive and finite, got " + detail::num(temperature));
  }
}

std::vector<double> LanguageWaveEncoder::signal(std::string_view utf8) const {
  const auto cps = utf8_code_points(utf8, "LanguageWaveEncoder");
  if (cps.empty()) throw ValueError("LanguageWaveEncoder: text must be a non-empty string");
  const auto n = static_cast<double>(cps.size());
  std::vector<double> s(cps.size());
  for (size_t i = 0; i < cps.size(); ++i) {
    s[i] = t_ * (static_cast<double>(cps[i] % 1024) / 1024.0 + std::fabs(std::sin(static_cast<double>(i + 1) / n)));
  }
  return s;
}

ComplexTensor LanguageWaveEncoder::encode_wave(std::string_view utf8) const {
  const auto s = signal(utf8);
  return {1, static_cast<int64_t>(s.size()), dft(s)};
}

Tensor LanguageWaveEncoder::encode_z_space(std::string_view utf8) const {
  const double sqrt_k = std::sqrt(-c_);
  const ComplexTensor wave = encode_wave(utf8);
  std::vector<double> coords;
  coords.reserve(2 * wave.data().size());
  for (const auto& z : wave.data()) {
    const double r = std::tanh(sqrt_k * std::abs(z));
    const double theta = std::arg(z);
    coords.push_back(r * std::cos(theta));
    coords.push_back(r * std::sin(theta));
  }
  // tanh saturates to exactly 1 for large spectra: clip back inside the open ball so the point
  // stays valid for the ball's log map and distance.
  const Tensor v = Tensor::from_vector(coords, {1, static_cast<int64_t>(coords.size())});
  return geometry::clip_to_ball(geometry::expmap0(v, c_), c_).to(Dtype::Float32);
}

}  // namespace st::zspace
