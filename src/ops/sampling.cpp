// Sampling from distributions given per element: poisson. Kernels: Backend::poisson
// (src/backend/cpu/scan.cpp and src/backend/cuda/scan.cu share src/backend/poisson_sampler.h;
// src/backend/wgpu/random.cpp).
#include <cmath>
#include <string>

#include "ops/common.h"

namespace st {

using detail::backend_of;

namespace {

// Rates beyond this are refused: PTRS is exact at any rate, but counts above 2^24 stop being integers
// in float32, and no use of torch.poisson we know of goes near it.
constexpr double kMaxPoissonRate = 1e6;

}  // namespace

Tensor poisson(const Tensor& rates, Generator* gen) {
  if (!is_floating(rates.dtype())) {
    throw DtypeError(std::string("poisson: rates must be floating point, got ") + dtype_name(rates.dtype()));
  }
  const Dtype compute = compute_float(rates.dtype());
  const Tensor r = detail::cast_raw(rates.detach(), compute).contiguous();
  Tensor out = Tensor::empty(rates.shape(), compute, rates.device());
  if (out.numel() == 0) return detail::cast_raw(out, rates.dtype());
  {
    // The rates' range, in one read from the device: min and max side by side (NaN propagates into both).
    NoGradGuard no_grad;
    const Tensor bounds = cast(to_device(stack({amin(r), amax(r)}), Device{}), Dtype::Float64).contiguous();
    const double lo = bounds.data<double>()[0], hi = bounds.data<double>()[1];
    if (std::isnan(lo) || std::isnan(hi)) throw ValueError("poisson: rates must not be NaN");
    if (lo < 0) throw ValueError("poisson: rates must be non-negative, got a minimum of " + std::to_string(lo));
    if (!(hi <= kMaxPoissonRate)) {
      throw ValueError("poisson: rates up to 1e6 are supported, got a maximum of " + std::to_string(hi));
    }
  }
  Generator& g = gen ? *gen : default_generator();
  const uint64_t counter = g.reserve(static_cast<uint64_t>(out.numel()));  // one block per element and attempt
  backend_of(rates).poisson(r, out, g.seed(), counter);
  return detail::cast_raw(out, rates.dtype());
}

}  // namespace st
