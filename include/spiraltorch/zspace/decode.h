#pragma once
// What a latent z stands for: the decoded metrics and the fractional spectral penalty.
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace st::zspace {

// (name, value) pairs in a fixed or insertion order; small, so a vector beats a map.
using NamedValues = std::vector<std::pair<std::string, double>>;

// speed = tanh(mean|dz| + |z|/(4n)), memory = tanh(mean(z) + |z|^2/(4n)),
// stability = tanh(1.5 (1/(1 + mean|d2z|) + 1/(1 + mean|dz|)) - 1), frac = tanh(E_alpha/|z|^2) and
// drs = tanh((E_high - E_low)/(E_high + E_low)) from the Parseval-normalised one-sided power
// spectrum (frequencies w_k = 2k/n, split at w = 0.5). Returned in the order speed, memory,
// stability, drs, frac. ValueError for an empty z.
NamedValues decode_zspace(std::span<const double> z, double alpha = 0.35);

struct SpectralPenalty {
  double value = 0.0;
  std::vector<double> gradient;  // dR/dz scaled to max-abs <= 1 (a direction, not the gradient)
};

// R_alpha(z) = (1/B) sum_{k<B} (k/(B-1))^(2 alpha) |Z_k|^2 over the one-sided spectrum
// (B = n/2 + 1 bins of the unnormalised DFT Z); zero for n <= 1.
SpectralPenalty fractional_penalty(std::span<const double> z, double alpha);

}  // namespace st::zspace
