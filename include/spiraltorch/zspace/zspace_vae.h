#pragma once
// Coherence VAE primitives.
//
// MellinBasis: a power-law feature map with per-coordinate exponents, then L2 row
// normalisation: y_i = sign(x_i) max(|x_i|, 1e-9)^{e_i} / ||.||  (e_i = 1 past the given
// exponents; rows that are all zero stay zero).
//
// ZSpaceVae: a Gaussian VAE with linear encoder and decoder (probabilistic PCA with a
// learned variance), trained with the reparameterisation trick:
//   mu = x E_mu^T + b_mu,  logvar = x E_lv^T + b_lv          (encoder, latent_dim outputs)
//   z  = mu + exp(logvar / 2) * eps, eps ~ N(0, I)   in training;  z = mu in eval
//   x^ = z D^T + b_d                                         (decoder, input_dim outputs)
//   reconstruction = mean over the batch of ||x - x^||^2 / input_dim
//   kl             = mean over the batch of sum_j -1/2 (1 + logvar_j - mu_j^2 - exp(logvar_j))
//   loss = reconstruction + kl_weight * kl,   ELBO = -(reconstruction + kl)
// Any optimizer trains it (its parameters are ordinary module parameters). Parameters:
// "<name>::encoder_mu" (L, D), "bias_mu" (L), "encoder_logvar" (L, D), "bias_logvar" (L),
// "decoder" (D, L), "bias_decoder" (D); initialised like upstream (encoder_mu and decoder
// identity-like, encoder_logvar 0, bias_logvar -3, other biases 0). The noise comes from the
// layer's own generator seeded with `seed`.
//
// ZSpaceTextVae: a ZSpaceVae over the Z-space wave encoding of text fitted to exactly
// `window_chars` characters (truncated or right-padded with spaces); input_dim = 2 window_chars.
#include <string>
#include <string_view>
#include <vector>

#include "spiraltorch/generator.h"
#include "spiraltorch/nn/module.h"
#include "spiraltorch/zspace/language_wave_encoder.h"

namespace st::nn {

class MellinBasis {
 public:
  explicit MellinBasis(std::vector<double> exponents);
  static MellinBasis constant(int64_t dim, double exponent);
  // Exponents linearly from start to end (dim <= 1: {start}).
  static MellinBasis ramp(int64_t dim, double start, double end);
  int64_t dimension() const { return static_cast<int64_t>(exponents_.size()); }
  const std::vector<double>& exponents() const { return exponents_; }
  // Applies the map to each row (last dim) of x; differentiable.
  Tensor project(const Tensor& x) const;

 private:
  std::vector<double> exponents_;
};

struct VaeOutput {
  Tensor latent, reconstruction, mu, logvar;
};

struct VaeStats {
  int64_t batch_size = 0;
  double recon_loss = 0, kl_loss = 0, evidence_lower_bound = 0, weighted_loss = 0, kl_weight = 0;
};

class ZSpaceVae : public Module {
 public:
  ZSpaceVae(int64_t input_dim, int64_t latent_dim, uint64_t seed = 42, std::string name = "");
  std::string type_name() const override { return "ZSpaceVae"; }
  int64_t input_dim() const { return input_dim_; }
  int64_t latent_dim() const { return latent_dim_; }
  uint64_t seed() const { return seed_; }

  std::pair<Tensor, Tensor> encode(const Tensor& x);  // (mu, logvar)
  Tensor sample_latent(const Tensor& mu, const Tensor& logvar);
  Tensor decode(const Tensor& z);
  // Samples z in training mode, uses mu in eval mode (or when `use_mean`).
  VaeOutput forward_full(const Tensor& x, bool use_mean = false);
  Tensor forward(const Tensor& x) override { return forward_full(x).reconstruction; }
  // (reconstruction, kl) as differentiable scalars for x and an output of forward_full(x).
  std::pair<Tensor, Tensor> loss_terms(const Tensor& x, const VaeOutput& out) const;
  // The numbers of loss_terms at `kl_weight`.
  VaeStats stats(const Tensor& x, const VaeOutput& out, double kl_weight) const;
  // Reconstruction error of decoding prior samples z ~ N(0, I) instead of the posterior:
  // the baseline a trained VAE must beat (same metric as VaeStats::recon_loss).
  double prior_recon_loss(const Tensor& x);

 private:
  void check_input(const Tensor& x, int64_t dim, const char* what) const;
  int64_t input_dim_, latent_dim_;
  uint64_t seed_;
  Generator gen_;
};

class ZSpaceTextVae : public ZSpaceVae {
 public:
  ZSpaceTextVae(int64_t window_chars, int64_t latent_dim, double curvature = -1.0, double temperature = 1.0,
                uint64_t seed = 42, std::string name = "");
  std::string type_name() const override { return "ZSpaceTextVae"; }
  int64_t window_chars() const { return window_chars_; }
  double curvature() const { return encoder_.curvature(); }
  double temperature() const { return encoder_.temperature(); }
  // The text fitted to window_chars code points (truncated or right-padded with spaces).
  std::string fit_text(std::string_view utf8) const;
  // (batch, 2 window_chars) wave encodings of the texts, float32.
  Tensor encode_texts(const std::vector<std::string>& texts) const;

 private:
  int64_t window_chars_;
  zspace::LanguageWaveEncoder encoder_;
};

}  // namespace st::nn
