#include "spiraltorch/zspace/zspace_vae.h"

#include <algorithm>
#include <cmath>

#include "spiraltorch/autograd.h"
#include "spiraltorch/nn/linear.h"
#include "spiraltorch/ops.h"

namespace st::nn {

// --- MellinBasis ------------------------------------------------------------------------

MellinBasis::MellinBasis(std::vector<double> exponents) : exponents_(std::move(exponents)) {
  for (size_t i = 0; i < exponents_.size(); ++i) {
    if (!std::isfinite(exponents_[i])) {
      throw ValueError("MellinBasis: exponent " + std::to_string(i) + " is not finite");
    }
  }
}

MellinBasis MellinBasis::constant(int64_t dim, double exponent) {
  if (dim < 1) throw ValueError("MellinBasis.constant: dim must be >= 1, got " + std::to_string(dim));
  return MellinBasis(std::vector<double>(static_cast<size_t>(dim), exponent));
}

MellinBasis MellinBasis::ramp(int64_t dim, double start, double end) {
  if (dim < 1) throw ValueError("MellinBasis.ramp: dim must be >= 1, got " + std::to_string(dim));
  std::vector<double> e(static_cast<size_t>(dim), start);
  for (int64_t i = 1; i < dim; ++i)
    e[i] = start + (end - start) * static_cast<double>(i) / static_cast<double>(dim - 1);
  return MellinBasis(std::move(e));
}

Tensor MellinBasis::project(const Tensor& x) const {
  if (x.dim() == 0) throw ShapeError("MellinBasis.project: input must have at least one dim");
  const int64_t n = x.shape().back();
  std::vector<double> e(static_cast<size_t>(n), 1.0);
  for (int64_t i = 0; i < n && i < dimension(); ++i) e[i] = exponents_[i];
  const Tensor ex = to_device(cast(Tensor::from_vector(e, {n}), x.dtype()), x.device());
  const Tensor y = mul(sign(x), pow(clamp(abs(x), 1e-9, std::nullopt), ex));
  const Tensor norm2 = sum(mul(y, y), {-1}, /*keepdim=*/true);
  // Rows of norm 0 divide by 1 and stay 0.
  const Tensor denom = sqrt(where(gt(norm2, zeros_like(norm2)), norm2, ones_like(norm2)));
  return div(y, denom);
}

// --- ZSpaceVae --------------------------------------------------------------------------

ZSpaceVae::ZSpaceVae(int64_t input_dim, int64_t latent_dim, uint64_t seed, std::string name)
    : Module(std::move(name)), input_dim_(input_dim), latent_dim_(latent_dim), seed_(seed), gen_(seed) {
  if (input_dim < 1 || latent_dim < 1) {
    throw ValueError("ZSpaceVae: input_dim and latent_dim must be >= 1, got " + std::to_string(input_dim) + " and " +
                     std::to_string(latent_dim));
  }
  register_parameter("encoder_mu", eye(latent_dim, input_dim));
  register_parameter("bias_mu", zeros({latent_dim}));
  register_parameter("encoder_logvar", zeros({latent_dim, input_dim}));
  register_parameter("bias_logvar", full({latent_dim}, -3.0, Dtype::Float32));
  register_parameter("decoder", eye(input_dim, latent_dim));
  register_parameter("bias_decoder", zeros({input_dim}));
}

void ZSpaceVae::check_input(const Tensor& x, int64_t dim, const char* what) const {
  if (x.dim() != 2 || x.shape()[1] != dim) {
    throw ShapeError(type_name() + "." + what + ": input must be (batch, " + std::to_string(dim) + ") (expected " +
                     std::to_string(dim) + ", got " + shape_str(x.shape()) + ")");
  }
}

std::pair<Tensor, Tensor> ZSpaceVae::encode(const Tensor& x) {
  check_input(x, input_dim_, "encode");
  return {linear(x, *find_parameter("encoder_mu"), *find_parameter("bias_mu")),
          linear(x, *find_parameter("encoder_logvar"), *find_parameter("bias_logvar"))};
}

Tensor ZSpaceVae::sample_latent(const Tensor& mu, const Tensor& logvar) {
  if (mu.shape() != logvar.shape()) {
    throw ShapeError("ZSpaceVae.sample_latent: mu " + shape_str(mu.shape()) + " and logvar " +
                     shape_str(logvar.shape()) + " differ");
  }
  const Tensor eps = to_device(randn(mu.shape(), mu.dtype(), &gen_), mu.device());
  return add(mu, mul(exp(mul(logvar, 0.5)), eps));
}

Tensor ZSpaceVae::decode(const Tensor& z) {
  check_input(z, latent_dim_, "decode");
  return linear(z, *find_parameter("decoder"), *find_parameter("bias_decoder"));
}

VaeOutput ZSpaceVae::forward_full(const Tensor& x, bool use_mean) {
  auto [mu, logvar] = encode(x);
  const Tensor z = use_mean || !is_training() ? mu : sample_latent(mu, logvar);
  return {z, decode(z), mu, logvar};
}

std::pair<Tensor, Tensor> ZSpaceVae::loss_terms(const Tensor& x, const VaeOutput& out) const {
  const Tensor diff = sub(x, out.reconstruction);
  const Tensor recon = div(mean(sum(mul(diff, diff), {1})), static_cast<double>(input_dim_));
  const Tensor kl_rows = mul(sum(sub(sub(add(out.logvar, 1.0), mul(out.mu, out.mu)), exp(out.logvar)), {1}), -0.5);
  return {recon, mean(kl_rows)};
}

VaeStats ZSpaceVae::stats(const Tensor& x, const VaeOutput& out, double kl_weight) const {
  NoGradGuard ng;
  const auto [recon, kl] = loss_terms(x, out);
  VaeStats s;
  s.batch_size = x.shape()[0];
  s.recon_loss = recon.item();
  s.kl_loss = kl.item();
  s.evidence_lower_bound = -(s.recon_loss + s.kl_loss);
  s.weighted_loss = s.recon_loss + kl_weight * s.kl_loss;
  s.kl_weight = kl_weight;
  return s;
}

double ZSpaceVae::prior_recon_loss(const Tensor& x) {
  check_input(x, input_dim_, "prior_recon_loss");
  NoGradGuard ng;
  const Tensor z = to_device(randn({x.shape()[0], latent_dim_}, x.dtype(), &gen_), x.device());
  const Tensor diff = sub(x, decode(z));
  return mean(sum(mul(diff, diff), {1})).item() / static_cast<double>(input_dim_);
}

// --- ZSpaceTextVae ----------------------------------------------------------------------

ZSpaceTextVae::ZSpaceTextVae(int64_t window_chars, int64_t latent_dim, double curvature, double temperature,
                             uint64_t seed, std::string name)
    : ZSpaceVae(2 * std::max<int64_t>(window_chars, 1), latent_dim, seed, std::move(name)),
      window_chars_(window_chars),
      encoder_(curvature, temperature) {
  if (window_chars < 1)
    throw ValueError("ZSpaceTextVae: window_chars must be >= 1, got " + std::to_string(window_chars));
}

std::string ZSpaceTextVae::fit_text(std::string_view utf8) const {
  // Validates the UTF-8; then the first window_chars code points are copied byte-wise
  // (a lead byte gives its sequence length) and spaces pad the rest.
  const auto n = static_cast<int64_t>(zspace::utf8_code_points(utf8, "ZSpaceTextVae").size());
  const int64_t keep = std::min(n, window_chars_);
  size_t pos = 0;
  for (int64_t i = 0; i < keep; ++i) {
    const auto lead = static_cast<unsigned char>(utf8[pos]);
    pos += lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
  }
  std::string out(utf8.substr(0, pos));
  out.append(static_cast<size_t>(window_chars_ - keep), ' ');
  return out;
}

Tensor ZSpaceTextVae::encode_texts(const std::vector<std::string>& texts) const {
  if (texts.empty()) throw ValueError("ZSpaceTextVae.encode_texts: no texts given");
  std::vector<Tensor> rows;
  rows.reserve(texts.size());
  for (const std::string& t : texts) rows.push_back(encoder_.encode_z_space(fit_text(t)));
  return cat(rows, 0);
}

}  // namespace st::nn
