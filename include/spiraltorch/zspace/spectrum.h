#pragma once
// The discrete Fourier transform used across Z-space (text encoding, spectral penalty, decoding).
#include <complex>
#include <span>
#include <vector>

namespace st::zspace {

// X_k = sum_j x_j exp(-2 pi i k j / n), unnormalised, in float64. O(n^2): Z-space signals are
// short (a text's characters, a latent of a few dims), so exactness beats an FFT here.
std::vector<std::complex<double>> dft(std::span<const double> values);

}  // namespace st::zspace
