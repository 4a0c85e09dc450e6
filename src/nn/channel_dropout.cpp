#include "spiraltorch/nn/channel_dropout.h"

#include <cmath>

#include "spiraltorch/error.h"
#include "spiraltorch/ops.h"

namespace st::nn {

namespace {

void check_p(double p, const char* op) {
  if (!(p >= 0.0 && p <= 1.0)) {
    throw ValueError(std::string(op) + ": probability p must lie in [0, 1], got " + std::to_string(p));
  }
}

}  // namespace

Tensor channel_dropout(const Tensor& input, int64_t spatial_dims, double p, bool training, Generator* gen) {
  const std::string op = spatial_dims == 1 ? "dropout1d" : "dropout2d";
  if (!input.defined()) throw ValueError(op + ": input is required");
  check_p(p, op.c_str());
  const int64_t nd = input.dim();
  if (nd != spatial_dims + 1 && nd != spatial_dims + 2) {
    const std::string want =
        spatial_dims == 1 ? "a 2-d (C, L) or 3-d (N, C, L)" : "a 3-d (C, H, W) or 4-d (N, C, H, W)";
    throw ShapeError(op + ": expected " + want + " input, got shape " + shape_str(input.shape()));
  }
  if (!is_floating(input.dtype())) {
    throw DtypeError(op + ": expected a floating-point input, got " + dtype_name(input.dtype()));
  }
  if (!training || p == 0.0) return input;
  if (p == 1.0) return mul(input, 0.0);
  // One draw per (sample, channel), broadcast over the spatial dims.
  Shape ms = input.shape();
  for (int64_t d = nd - spatial_dims; d < nd; ++d) ms[d] = 1;
  const Dtype mdt = input.dtype() == Dtype::Float64 ? Dtype::Float64 : Dtype::Float32;
  Tensor keep = ge(rand(ms, mdt, gen), full(ms, p, mdt));
  Tensor mask = to_device(mul(cast(keep, input.dtype()), 1.0 / (1.0 - p)), input.device());
  return mul(input, mask);
}

namespace {

// The shared body of alpha_dropout (one draw per element) and feature_alpha_dropout (per channel).
Tensor alpha_dropout_impl(const Tensor& input, double p, bool training, Generator* gen, bool feature) {
  const char* op = feature ? "feature_alpha_dropout" : "alpha_dropout";
  if (!input.defined()) throw ValueError(std::string(op) + ": input is required");
  check_p(p, op);
  if (!is_floating(input.dtype())) {
    throw DtypeError(std::string(op) + ": expected a floating-point input, got " + dtype_name(input.dtype()));
  }
  if (feature && input.dim() < 2) {
    throw ShapeError(std::string(op) + ": expected an input of shape (N, C, *), got " + shape_str(input.shape()));
  }
  if (!training || p == 0.0) return input;
  if (p == 1.0) return mul(input, 0.0);
  constexpr double kAlpha = 1.7580993408473766;  // SELU's scale * alpha
  const double a = 1.0 / std::sqrt((kAlpha * kAlpha * p + 1.0) * (1.0 - p));
  Shape ms = input.shape();
  if (feature) {
    for (int64_t d = 2; d < input.dim(); ++d) ms[static_cast<size_t>(d)] = 1;
  }
  const Dtype mdt = input.dtype() == Dtype::Float64 ? Dtype::Float64 : Dtype::Float32;
  const Tensor keep = to_device(cast(ge(rand(ms, mdt, gen), full(ms, p, mdt)), input.dtype()), input.device());
  // a (x keep + (-alpha)(1 - keep)) + a alpha p = x (a keep) + a alpha (keep - 1 + p).
  const Tensor shift = mul(add(keep, p - 1.0), a * kAlpha);
  return add(mul(input, mul(keep, a)), shift);
}

}  // namespace

Tensor alpha_dropout(const Tensor& input, double p, bool training, Generator* gen) {
  return alpha_dropout_impl(input, p, training, gen, false);
}

Tensor feature_alpha_dropout(const Tensor& input, double p, bool training, Generator* gen) {
  return alpha_dropout_impl(input, p, training, gen, true);
}

AlphaDropout::AlphaDropout(double p, bool feature, std::string name, std::optional<uint64_t> seed)
    : Module(std::move(name)), p_(p), feature_(feature) {
  check_p(p, feature ? "FeatureAlphaDropout" : "AlphaDropout");
  if (seed) generator_.emplace(*seed);
}

Tensor AlphaDropout::forward(const Tensor& input) {
  return alpha_dropout_impl(input, p_, is_training(), generator_ ? &*generator_ : nullptr, feature_);
}

Tensor dropout1d(const Tensor& input, double p, bool training, Generator* gen) {
  return channel_dropout(input, 1, p, training, gen);
}

Tensor dropout2d(const Tensor& input, double p, bool training, Generator* gen) {
  return channel_dropout(input, 2, p, training, gen);
}

Dropout1d::Dropout1d(double p, std::string name, std::optional<uint64_t> seed) : Module(std::move(name)), p_(p) {
  check_p(p, "Dropout1d");
  if (seed) generator_.emplace(*seed);
}

Tensor Dropout1d::forward(const Tensor& input) {
  if (!is_training()) return input;
  Generator* gen = generator_ ? &*generator_ : nullptr;
  return apply_fn(input, [&](const Tensor& x) { return dropout1d(x, p_, true, gen); }, "Dropout1d");
}

Dropout2d::Dropout2d(double p, std::string name, std::optional<uint64_t> seed) : Module(std::move(name)), p_(p) {
  check_p(p, "Dropout2d");
  if (seed) generator_.emplace(*seed);
}

Tensor Dropout2d::forward(const Tensor& input) {
  if (!is_training()) return input;
  Generator* gen = generator_ ? &*generator_ : nullptr;
  return apply_fn(input, [&](const Tensor& x) { return dropout2d(x, p_, true, gen); }, "Dropout2d");
}

}  // namespace st::nn
