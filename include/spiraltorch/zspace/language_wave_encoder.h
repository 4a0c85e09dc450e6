#pragma once
// Text -> a point of Z-space through a DFT of the text's code points.
#include <string_view>
#include <vector>

#include "spiraltorch/tensor.h"
#include "spiraltorch/zspace/complex_tensor.h"

namespace st::zspace {

// For character i of N with code point u: s_i = T ((u mod 1024)/1024 + |sin((i+1)/N)|);
// X = DFT(s) (unnormalised); bin X_j becomes the 2-d point tanh(sqrt(k)|X_j|) (cos arg X_j,
// sin arg X_j); the 2N coordinates are mapped into the ball with exp_0 and clipped inside it.
// A deterministic feature map with no linguistic content: s is real, so half the output mirrors
// the other half, and code points equal modulo 1024 collide.
class LanguageWaveEncoder {
 public:
  LanguageWaveEncoder(double curvature, double temperature);

  double curvature() const { return c_; }
  double temperature() const { return t_; }
  // The signal s of UTF-8 text (one value per code point); ValueError when empty or not UTF-8.
  std::vector<double> signal(std::string_view utf8) const;
  // DFT(s) as a (1, N) ComplexTensor.
  ComplexTensor encode_wave(std::string_view utf8) const;
  // The (1, 2N) float32 point inside the ball of curvature curvature().
  Tensor encode_z_space(std::string_view utf8) const;

 private:
  double c_, t_;
};

// The code points of UTF-8 text; ValueError on malformed input.
std::vector<char32_t> utf8_code_points(std::string_view utf8, const char* who);

}  // namespace st::zspace
