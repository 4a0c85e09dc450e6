#include <cmath>

#include "ops/common.h"
#include "spiraltorch/generator.h"

namespace st {

Tensor zeros(const Shape& shape, Dtype dtype, Device device) { return full(shape, 0, dtype, device); }
Tensor ones(const Shape& shape, Dtype dtype, Device device) { return full(shape, 1, dtype, device); }

Tensor full(const Shape& shape, Scalar value, std::optional<Dtype> dtype, Device device) {
  Tensor t = Tensor::empty(shape, dtype.value_or(value.natural_dtype()), device);
  backend::backend_for(device).fill(t, value);
  return t;
}

Tensor scalar_tensor(Scalar value, Dtype dtype, Device device) { return full({}, value, dtype, device); }

Tensor arange(double start, double end, double step, std::optional<Dtype> dtype, Device device) {
  if (step == 0) throw ValueError("arange: step must be nonzero");
  if (!std::isfinite(start) || !std::isfinite(end) || !std::isfinite(step)) {
    throw ValueError("arange: start, end and step must be finite");
  }
  if ((step > 0 && end < start) || (step < 0 && end > start)) {
    throw ValueError("arange: upper bound and lower bound are inconsistent with the step sign (start " +
                     std::to_string(start) + ", end " + std::to_string(end) + ", step " + std::to_string(step) + ")");
  }
  const double span = (end - start) / step;
  if (span >= 9.2e18) throw ShapeError("arange: " + std::to_string(span) + " elements do not fit in int64");
  const int64_t n = span > 0 ? static_cast<int64_t>(std::ceil(span)) : 0;
  const bool integral = start == std::floor(start) && end == std::floor(end) && step == std::floor(step);
  const Dtype dt = dtype.value_or(integral ? Dtype::Int64 : Dtype::Float32);
  Tensor t = Tensor::empty({n}, dt);
  ST_DISPATCH_ALL(dt, [&] {
    scalar_t* p = t.data<scalar_t>();
    for (int64_t i = 0; i < n; ++i) p[i] = from_double<scalar_t>(start + static_cast<double>(i) * step);
  });
  return to_device(t, device);
}

Tensor linspace(double start, double end, int64_t steps, Dtype dtype) {
  if (steps < 0) throw ValueError("linspace: number of steps must be non-negative, got " + std::to_string(steps));
  Tensor t = Tensor::empty({steps}, dtype);
  const double step = steps > 1 ? (end - start) / static_cast<double>(steps - 1) : 0.0;
  ST_DISPATCH_ALL(dtype, [&] {
    scalar_t* p = t.data<scalar_t>();
    for (int64_t i = 0; i < steps; ++i) {
      // Fill from both ends so the last value is exactly `end`, like PyTorch.
      const double v = (steps == 1 || i < steps / 2) ? start + step * static_cast<double>(i)
                                                     : end - step * static_cast<double>(steps - 1 - i);
      p[i] = from_double<scalar_t>(v);
    }
  });
  return t;
}

Tensor eye(int64_t n, std::optional<int64_t> m, Dtype dtype) {
  const int64_t cols = m.value_or(n);
  if (n < 0 || cols < 0) throw ValueError("eye: sizes must be non-negative");
  Tensor t = zeros({n, cols}, dtype);
  ST_DISPATCH_ALL(dtype, [&] {
    scalar_t* p = t.data<scalar_t>();
    for (int64_t i = 0; i < std::min(n, cols); ++i) p[i * cols + i] = from_double<scalar_t>(1.0);
  });
  return t;
}

Tensor zeros_like(const Tensor& t, std::optional<Dtype> dtype) {
  return zeros(t.shape(), dtype.value_or(t.dtype()), t.device());
}
Tensor ones_like(const Tensor& t, std::optional<Dtype> dtype) {
  return ones(t.shape(), dtype.value_or(t.dtype()), t.device());
}
Tensor full_like(const Tensor& t, Scalar value, std::optional<Dtype> dtype) {
  return full(t.shape(), value, dtype.value_or(t.dtype()), t.device());
}

namespace {

Tensor random_tensor(const Shape& shape, Dtype dtype, bool normal, double p0, double p1, Generator& gen) {
  if (!is_floating(dtype)) {
    throw DtypeError(std::string(normal ? "randn" : "rand") + ": expected a floating dtype, got " + dtype_name(dtype));
  }
  const Dtype compute = compute_float(dtype);
  Tensor t = Tensor::empty(shape, compute);
  const uint64_t n = static_cast<uint64_t>(t.numel());
  const uint64_t counter = gen.reserve(normal ? (n + 1) / 2 : (n + 3) / 4);
  backend::cpu_backend().random(t, normal, p0, p1, gen.seed(), counter);
  return detail::cast_raw(t, dtype);
}

}  // namespace

Tensor rand(const Shape& shape, Dtype dtype, Generator* gen) { return uniform(0.0, 1.0, shape, dtype, gen); }
Tensor randn(const Shape& shape, Dtype dtype, Generator* gen) { return normal(0.0, 1.0, shape, dtype, gen); }

Tensor uniform(double low, double high, const Shape& shape, Dtype dtype, Generator* gen) {
  if (!(low <= high)) throw ValueError("uniform: low must not exceed high");
  return random_tensor(shape, dtype, false, low, high, gen ? *gen : default_generator());
}

Tensor normal(double mean, double std, const Shape& shape, Dtype dtype, Generator* gen) {
  if (!(std >= 0)) throw ValueError("normal: std must be non-negative, got " + std::to_string(std));
  return random_tensor(shape, dtype, true, mean, std, gen ? *gen : default_generator());
}

Tensor rand_seeded(const Shape& shape, uint64_t seed, Dtype dtype) {
  Generator gen(seed);
  return random_tensor(shape, dtype, false, 0.0, 1.0, gen);
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, Dtype dtype, Generator* gen) {
  if (high <= low) {
    throw ValueError("randint: high must exceed low, got low=" + std::to_string(low) + " high=" + std::to_string(high));
  }
  const Tensor u = random_tensor(shape, Dtype::Float64, false, 0.0, 1.0, gen ? *gen : default_generator());
  Tensor out = Tensor::empty(shape, dtype);
  const double span = static_cast<double>(high - low);
  const double* up = u.data<double>();
  ST_DISPATCH_ALL(dtype, [&] {
    scalar_t* p = out.data<scalar_t>();
    for (int64_t i = 0; i < out.numel(); ++i) {
      p[i] = from_double<scalar_t>(static_cast<double>(low + static_cast<int64_t>(std::floor(up[i] * span))));
    }
  });
  return out;
}

Tensor& uniform_(Tensor& x, double low, double high) {
  // The fill below runs without grad; refuse first what any other in-place op refuses.
  if (grad_enabled() && x.requires_grad() && x.is_leaf()) {
    throw SpiralError(
        "uniform_: a leaf tensor that requires grad is being used in an in-place operation; wrap it in no_grad()");
  }
  // Random floats copied into an integer tensor would truncate (uniform [0, 1) to all zeros).
  if (!is_floating(x.dtype())) {
    throw DtypeError(std::string("uniform_: expected a floating-point tensor, got ") + dtype_name(x.dtype()));
  }
  NoGradGuard ng;
  copy_(x, uniform(low, high, x.shape(), compute_float(x.dtype())));
  return x;
}

Tensor& normal_(Tensor& x, double mean, double std) {
  // The fill below runs without grad; refuse first what any other in-place op refuses.
  if (grad_enabled() && x.requires_grad() && x.is_leaf()) {
    throw SpiralError(
        "normal_: a leaf tensor that requires grad is being used in an in-place operation; wrap it in no_grad()");
  }
  // Random floats copied into an integer tensor would truncate (uniform [0, 1) to all zeros).
  if (!is_floating(x.dtype())) {
    throw DtypeError(std::string("normal_: expected a floating-point tensor, got ") + dtype_name(x.dtype()));
  }
  NoGradGuard ng;
  copy_(x, normal(mean, std, x.shape(), compute_float(x.dtype())));
  return x;
}

}  // namespace st
