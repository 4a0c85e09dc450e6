// Z-space from C++: encode text into the Poincare ball, pull a point toward it with a Hypergrad
// tape, fit a ZSpaceTrainer's latent to partially observed metrics, and train a small model with an
// AmegagradSession that records an Atlas frame per step.
#include <cstdio>

#include "spiraltorch/geometry/poincare.h"
#include "spiraltorch/spiraltorch.h"
#include "spiraltorch/nn/linear.h"
#include "spiraltorch/nn/loss.h"
#include "spiraltorch/zspace/hypergrad.h"
#include "spiraltorch/zspace/language_wave_encoder.h"
#include "spiraltorch/zspace/session.h"
#include "spiraltorch/zspace/trainer.h"

int main() {
  using namespace st;
  const zspace::LanguageWaveEncoder encoder(-1.0, 0.5);
  const Tensor wave = encoder.encode_z_space("SpiralTorch in C++");
  std::printf("encoded %lld coordinates, first %.6f %.6f\n", static_cast<long long>(wave.numel()),
              wave.to(Dtype::Float64).to_vector<double>()[0], wave.to(Dtype::Float64).to_vector<double>()[1]);

  Tensor z = zeros(wave.shape());
  zspace::Hypergrad tape(-1.0, 0.2, wave.shape()[0], wave.shape()[1]);
  for (int step = 0; step < 5; ++step) {
    tape.accumulate_pair(z, wave);
    tape.apply(z);
    const double d = geometry::poincare_distance(z.to(Dtype::Float64), wave.to(Dtype::Float64), -1.0).item();
    std::printf("tape step %d  distance to the text %.6f  |g| %.6f\n", step, d, tape.summary().l2());
  }

  zspace::ZSpaceTrainer trainer;
  zspace::ObservedMetrics partial;
  partial.set("speed", 0.2, "example");
  partial.set("memory", 0.1, "example");
  partial.set("stability", 0.9, "example");
  partial.set_gradient("gradient", {0.1, 0.0, 0.0, 0.0}, "example");
  for (int step = 0; step < 3; ++step) {
    const double loss = trainer.step_partial(partial);
    const auto& z_state = trainer.state();
    std::printf("trainer step %d  loss %.6f  residual %.6f  confidence %.6f  z = [%.5f, %.5f, %.5f, %.5f]\n", step,
                loss, trainer.last_inference()->residual, trainer.last_inference()->confidence, z_state[0], z_state[1],
                z_state[2], z_state[3]);
  }

  // y = 0.3 x0 - 0.2 x1 with a Linear(2, 1): each parameter row is a point of the ball, stepped by
  // its own Amegagrad (Riemannian + Euclidean tapes) under a topos guard.
  nn::Linear model(2, 1);
  model.to(Dtype::Float64);
  const Tensor x = Tensor::from_vector<double>({0.5, -0.2, 0.1, 0.4, -0.3, 0.6, 0.8, 0.1}, {4, 2});
  const Tensor y = Tensor::from_vector<double>({0.19, -0.05, -0.21, 0.22}, {4, 1});
  zspace::AmegagradSession::Options options;
  options.hyper_learning_rate = 0.3;
  options.real_learning_rate = 0.1;
  options.topos = zspace::OpenCartesianTopos(-1.0, 1e-3, 10.0, 64, 512);  // level well above the weights
  zspace::AmegagradSession session(model, [](const Tensor& p, const Tensor& t) { return nn::mse_loss(p, t); }, options);
  for (int step = 0; step < 60; ++step) {
    const zspace::SessionStep s = session.step(x, y);
    if (step % 20 == 0 || step == 59) {
      std::printf("session step %lld  loss %.6f  hypergrad.l2 %.6f  geometry.max_radius %.4f\n",
                  static_cast<long long>(s.step), s.loss, *s.frame.metric("hypergrad.l2"),
                  *s.frame.metric("geometry.max_radius"));
    }
  }
  std::printf("%zu atlas frames kept\n", session.frames().size());
  return 0;
}
