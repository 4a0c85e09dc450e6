// MellinBasis and the ZSpaceVae family: formulas against plain loops, the loss gradients
// against central differences in float64, eval uses the mean, training samples, errors.
#include <gtest/gtest.h>

#include <cmath>

#include "spiraltorch/autograd.h"
#include "spiraltorch/zspace/zspace_vae.h"
#include "spiraltorch/ops.h"

using namespace st;

TEST(MellinBasis, PowerLawThenRowNormalised) {
  const nn::MellinBasis b = nn::MellinBasis::ramp(3, 0.5, 1.5);
  EXPECT_EQ(b.exponents(), (std::vector<double>{0.5, 1.0, 1.5}));
  const Tensor x = Tensor::from_vector(std::vector<double>{4.0, -2.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0}, {3, 3});
  const auto y = b.project(x).to_vector<double>();
  const double n0 = std::sqrt(2.0 * 2.0 + 2.0 * 2.0);  // (sqrt 4, -2, ~0)
  EXPECT_NEAR(y[0], 2.0 / n0, 1e-12);
  EXPECT_NEAR(y[1], -2.0 / n0, 1e-12);
  EXPECT_NEAR(y[3], 1.0, 1e-12);
  for (int i = 6; i < 9; ++i) EXPECT_EQ(y[i], 0.0);  // a zero row stays zero
  EXPECT_EQ(nn::MellinBasis::ramp(1, 2.0, 9.0).exponents(), (std::vector<double>{2.0}));
  EXPECT_THROW(nn::MellinBasis::constant(0, 1.0), ValueError);
}

TEST(ZSpaceVae, LossTermsAndGradients) {
  manual_seed(0);
  nn::ZSpaceVae vae(4, 2, 7, "vae");
  vae.to(Dtype::Float64);
  {
    NoGradGuard ng;
    for (const Tensor& p : vae.parameters()) {
      Tensor q = p;
      copy_(q, mul(randn(p.shape(), Dtype::Float64), 0.3));
    }
  }
  const Tensor x = randn({3, 4}, Dtype::Float64);
  vae.eval();  // z = mu: a deterministic function to differentiate
  const auto f = [&] {
    const nn::VaeOutput out = vae.forward_full(x);
    const auto [recon, kl] = vae.loss_terms(x, out);
    return add(recon, mul(kl, 0.5));
  };
  // The formula, by hand.
  {
    NoGradGuard ng;
    const auto [mu, lv] = vae.encode(x);
    const Tensor xr = vae.decode(mu);
    const auto xv = x.to_vector<double>(), rv = xr.to_vector<double>(), mv = mu.to_vector<double>(),
               lvv = lv.to_vector<double>();
    double recon = 0, kl = 0;
    for (size_t i = 0; i < xv.size(); ++i) recon += (xv[i] - rv[i]) * (xv[i] - rv[i]);
    for (size_t i = 0; i < mv.size(); ++i) kl += -0.5 * (1 + lvv[i] - mv[i] * mv[i] - std::exp(lvv[i]));
    EXPECT_NEAR(f().item(), recon / 3 / 4 + 0.5 * kl / 3, 1e-12);
  }
  const std::vector<Tensor> params = vae.parameters();
  for (Tensor p : params) p.set_requires_grad(true);
  f().backward();
  NoGradGuard ng;
  for (Tensor p : params) {
    const auto g = p.grad().to_vector<double>();
    double* d = p.data<double>();
    for (int64_t i = 0; i < p.numel(); ++i) {
      const double o = d[i];
      d[i] = o + 1e-6;
      const double up = f().item();
      d[i] = o - 1e-6;
      const double down = f().item();
      d[i] = o;
      EXPECT_NEAR(g[i], (up - down) / 2e-6, 1e-6);
    }
  }
}

TEST(ZSpaceVae, TrainingSamplesEvalUsesTheMean) {
  nn::ZSpaceVae vae(3, 2);
  const Tensor x = randn({5, 3});
  const nn::VaeOutput a = vae.forward_full(x), b = vae.forward_full(x);
  EXPECT_GT(max(abs(sub(a.latent, b.latent))).item(), 0.0) << "training draws fresh noise";
  vae.eval();
  EXPECT_EQ(max(abs(sub(vae.forward_full(x).latent, a.mu))).item(), 0.0);
  EXPECT_THROW(vae.forward(randn({5, 4})), ShapeError);
  EXPECT_THROW(nn::ZSpaceVae(0, 2), ValueError);
}

TEST(ZSpaceTextVae, FitsTextToTheWindow) {
  nn::ZSpaceTextVae vae(4, 3);
  EXPECT_EQ(vae.input_dim(), 8);
  EXPECT_EQ(vae.fit_text("h\xc3\xa9llo"), "h\xc3\xa9ll");
  EXPECT_EQ(vae.fit_text("ab"), "ab  ");
  const Tensor enc = vae.encode_texts({"abcd", "wxyz"});
  EXPECT_EQ(enc.shape(), (Shape{2, 8}));
  EXPECT_THROW(vae.fit_text("\xff"), ValueError);
  EXPECT_THROW(nn::ZSpaceTextVae(0, 3), ValueError);
}
