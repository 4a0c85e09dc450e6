#pragma once
// Hypergrad: Riemannian SGD on the Poincare ball, driven by a GradientTape.
#include "spiraltorch/zspace/tape.h"

namespace st::zspace {

// Gradients accumulate in Euclidean coordinates; apply(weights) moves each row x to
// exp_x(-lr (1 - k|x|^2)^2 g) (the metric normalised to the identity at the origin, so a step
// from 0 is exp_0(-lr g)), keeps it inside the ball and writes it back in place. An empty tape
// leaves points where they are (after clipping them into the ball).
class Hypergrad : public GradientTape {
 public:
  Hypergrad(double curvature, double learning_rate, int64_t rows, int64_t cols);
  // Guarded by topos (its curvature must be the tape's; see GradientTape).
  Hypergrad(double curvature, double learning_rate, int64_t rows, int64_t cols, const OpenCartesianTopos& topos);

  double curvature() const { return c_; }
  // The encoder's curvature must match the tape's.
  void absorb_text(const LanguageWaveEncoder& encoder, std::string_view text) override;
  // New curvature and learning rate (a topos follows the new curvature); clears the tape.
  void retune(double curvature, double learning_rate);
  Tensor& apply(Tensor& weights) override;

 private:
  double c_;
};

}  // namespace st::zspace
