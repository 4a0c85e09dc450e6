// Sampling from distributions given per element: poisson, bernoulli, multinomial, randperm. Kernels:
// Backend::poisson (src/backend/cpu/scan.cpp and src/backend/cuda/scan.cu share
// src/backend/poisson_sampler.h; src/backend/wgpu/random.cpp) and Backend::random, whose uniforms
// the others compare or sort on the operand's device, so every backend draws through one path.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "ops/common.h"

namespace st {

using detail::backend_of;

namespace {

// Rates beyond this are refused: PTRS is exact at any rate, but counts above 2^24 stop being integers
// in float32, and no use of torch.poisson we know of goes near it.
constexpr double kMaxPoissonRate = 1e6;

// Uniforms in [0, 1) of `shape` drawn by the backend of `device` from `gen`'s stream (four per
// Philox block, as rand reserves them).
Tensor device_uniform(const Shape& shape, Dtype dtype, Device device, Generator* gen) {
  Tensor u = Tensor::empty(shape, dtype, device);
  if (u.numel() == 0) return u;
  Generator& g = gen ? *gen : default_generator();
  const uint64_t counter = g.reserve((static_cast<uint64_t>(u.numel()) + 3) / 4);
  backend::backend_for(device).random(u, false, 0.0, 1.0, g.seed(), counter);
  return u;
}

// Values of `parts` (0-d tensors on any device) in one read to the host.
std::vector<double> host_values(const std::vector<Tensor>& parts) {
  NoGradGuard no_grad;
  return cast(to_device(stack(parts), Device{}), Dtype::Float64).contiguous().to_vector<double>();
}

// A double as printf's %g writes it (0.2, 1.5, nan), for error messages.
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

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

Tensor bernoulli(const Tensor& probs, Generator* gen) {
  if (!is_floating(probs.dtype())) {
    throw DtypeError(std::string("bernoulli: probabilities must be floating point, got ") + dtype_name(probs.dtype()));
  }
  const Dtype compute = compute_float(probs.dtype());
  const Tensor p = detail::cast_raw(probs.detach(), compute);
  if (p.numel() > 0) {
    const std::vector<double> b = host_values({amin(p), amax(p)});
    if (std::isnan(b[0]) || std::isnan(b[1]) || b[0] < 0 || b[1] > 1) {
      throw ValueError("bernoulli: probabilities must be in [0, 1], got a minimum of " + num(b[0]) +
                       " and a maximum of " + num(b[1]));
    }
  }
  NoGradGuard no_grad;
  const Tensor u = device_uniform(p.shape(), compute, p.device(), gen);
  return cast(lt(u, p), probs.dtype());
}

Tensor bernoulli(const Tensor& x, double p, Generator* gen) {
  if (!(p >= 0 && p <= 1)) throw ValueError("bernoulli: p must be in [0, 1], got " + num(p));
  NoGradGuard no_grad;
  const Dtype compute = is_floating(x.dtype()) ? compute_float(x.dtype()) : Dtype::Float32;
  const Tensor u = device_uniform(x.shape(), compute, x.device(), gen);
  return cast(lt(u, scalar_tensor(p, compute, x.device())), x.dtype());
}

Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement, Generator* gen) {
  if (probs.dim() != 1 && probs.dim() != 2) {
    throw ShapeError("multinomial: expected a 1-D or 2-D input, got shape " + shape_str(probs.shape()));
  }
  if (!is_floating(probs.dtype())) {
    throw DtypeError(std::string("multinomial: probabilities must be floating point, got ") +
                     dtype_name(probs.dtype()));
  }
  if (num_samples <= 0) {
    throw ValueError("multinomial: num_samples must be positive, got " + std::to_string(num_samples));
  }
  NoGradGuard no_grad;
  const Dtype compute = compute_float(probs.dtype());
  const Tensor p = detail::cast_raw(probs.detach(), compute);
  const Tensor rows = probs.dim() == 2 ? p : reshape(p, {1, -1});
  const int64_t n = rows.shape()[1];
  if (n == 0) throw ValueError("multinomial: a row of probabilities has no categories");
  // Every check in one read: the minimum (NaN shows), the non-finite count and the fewest positive entries
  // (in the compute dtype: a device may have no float64; the counts stay exact below 2^24).
  const Tensor positive = sum(gt(rows, scalar_tensor(0.0, compute, p.device())), {1});
  const std::vector<double> c =
      host_values({amin(rows), cast(sum(logical_not(isfinite(rows))), compute), cast(amin(positive), compute)});
  if (std::isnan(c[0]) || c[1] > 0 || c[0] < 0) {
    throw ValueError("multinomial: probabilities must be finite and non-negative, got a minimum of " + num(c[0]) +
                     " and " + std::to_string(static_cast<int64_t>(c[1])) + " non-finite entries");
  }
  if (c[2] == 0) throw ValueError("multinomial: a row of probabilities sums to zero");
  if (!replacement && c[2] < static_cast<double>(num_samples)) {
    throw ValueError("multinomial: cannot draw " + std::to_string(num_samples) +
                     " samples without replacement from a row with " + std::to_string(static_cast<int64_t>(c[2])) +
                     " non-zero categories");
  }
  const int64_t r = rows.shape()[0];
  Tensor out;
  if (replacement) {
    // Category i is drawn when cdf[i-1] <= u < cdf[i]; rounding may leave the last cdf below u.
    const Tensor cdf = cumsum(div(rows, sum(rows, {1}, true)), 1);
    const Tensor u = device_uniform({r, num_samples}, compute, p.device(), gen);
    out = clamp(searchsorted(cdf, u, true), std::nullopt, Scalar(n - 1));
  } else {
    // Gumbel keys log p - log(-log g): the top k are a draw without replacement.
    const double tiny = compute == Dtype::Float64 ? 1e-300 : 1e-37;  // keeps log(-log g) finite
    const Tensor g = clamp(device_uniform({r, n}, compute, p.device(), gen), Scalar(tiny), std::nullopt);
    out = topk(sub(log(rows), log(neg(log(g)))), num_samples, 1).second;
  }
  return probs.dim() == 2 ? out : reshape(out, {-1});
}

Tensor randperm(int64_t n, Dtype dtype, Device device, Generator* gen) {
  if (n < 0) throw ValueError("randperm: n must be non-negative, got " + std::to_string(n));
  NoGradGuard no_grad;
  // float32 keys run on every backend; ties (rare below millions of elements) keep index order.
  const Tensor keys = device_uniform({n}, Dtype::Float32, device, gen);
  const Tensor perm = argsort(keys);
  return perm.dtype() == dtype ? perm : cast(perm, dtype);
}

}  // namespace st
