#include "spiraltorch/zspace/barycenter.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "spiraltorch/autograd.h"
#include "spiraltorch/ops.h"

namespace st::zspace {

namespace {

constexpr double kFloor = 1e-12;
using Dist = std::vector<double>;

// Floors at 1e-12 and renormalises to sum 1.
Dist normalised(Dist p) {
  double total = 0;
  for (double& v : p) {
    v = std::max(v, kFloor);
    total += v;
  }
  for (double& v : p) v /= total;
  return p;
}

double kl(const Dist& p, const Dist& q) {
  double s = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] > 0) s += p[i] * std::log(p[i] / std::max(q[i], kFloor));
  }
  return s;
}

double entropy(const Dist& p) {
  double s = 0;
  for (double v : p) {
    if (v > 0) s -= v * std::log(v);
  }
  return s;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

Barycenter z_space_barycenter(const std::vector<double>& weights, const std::vector<Tensor>& densities,
                              double entropy_weight, double beta_j, const std::optional<Tensor>& coupling) {
  const char* op = "z_space_barycenter";
  const size_t n = densities.size();
  if (n == 0) throw ValueError(std::string(op) + ": needs at least one density");
  if (weights.size() != n) {
    throw ValueError(std::string(op) + ": " + std::to_string(weights.size()) + " weights for " + std::to_string(n) +
                     " densities");
  }
  for (size_t u = 0; u < n; ++u) {
    if (!(weights[u] >= 0) || !std::isfinite(weights[u])) {
      throw ValueError(std::string(op) + ": weight " + std::to_string(u) + " must be finite and >= 0, got " +
                       num(weights[u]));
    }
    if (densities[u].shape() != densities[0].shape()) {
      throw ShapeError(std::string(op) + ": density " + std::to_string(u) + " has shape " +
                       shape_str(densities[u].shape()) + ", density 0 has " + shape_str(densities[0].shape()));
    }
  }
  if (!std::isfinite(entropy_weight)) throw ValueError(std::string(op) + ": entropy_weight must be finite");
  if (!(beta_j >= 0) || !std::isfinite(beta_j)) {
    throw ValueError(std::string(op) + ": beta_j must be finite and >= 0, got " + num(beta_j));
  }
  NoGradGuard ng;
  std::vector<Dist> rho(n);
  for (size_t u = 0; u < n; ++u) {
    rho[u] = densities[u].detach().to(Dtype::Float64).contiguous().to_vector<double>();
    for (double v : rho[u]) {
      if (!std::isfinite(v)) throw ValueError(std::string(op) + ": density " + std::to_string(u) + " is not finite");
    }
    if (rho[u].empty()) throw ShapeError(std::string(op) + ": densities must hold at least one entry");
    rho[u] = normalised(std::move(rho[u]));
  }
  std::vector<double> J;
  if (coupling) {
    if (coupling->shape() != Shape{static_cast<int64_t>(n), static_cast<int64_t>(n)}) {
      throw ShapeError(std::string(op) + ": coupling must be (" + std::to_string(n) + ", " + std::to_string(n) +
                       "), got " + shape_str(coupling->shape()));
    }
    J = coupling->detach().to(Dtype::Float64).contiguous().to_vector<double>();
    for (double v : J) {
      if (!(v >= 0) || !std::isfinite(v))
        throw ValueError(std::string(op) + ": coupling entries must be finite and >= 0");
    }
  }
  double weight_sum = 0;
  for (double w : weights) weight_sum += w;
  const double effective = weight_sum + entropy_weight;
  if (!std::isfinite(effective)) throw ValueError(std::string(op) + ": the effective weight is not finite");
  if (!(effective > 0)) {
    throw ValueError(std::string(op) + ": degenerate barycenter: sum of weights + entropy_weight = " + num(effective) +
                     " must be > 0");
  }
  // The tempered geometric mean, max-shifted before exponentiation.
  const size_t m = rho[0].size();
  Dist logits(m, 0.0);
  for (size_t u = 0; u < n; ++u) {
    // Scaled per weight first so huge finite weights cannot overflow the sum.
    const double scale = weights[u] / effective;
    for (size_t i = 0; i < m; ++i) logits[i] += scale * std::log(rho[u][i]);
  }
  const double top = *std::max_element(logits.begin(), logits.end());
  Dist star(m);
  for (size_t i = 0; i < m; ++i) star[i] = std::exp(logits[i] - top);
  star = normalised(std::move(star));
  double coupling_energy = 0;
  if (!J.empty() && beta_j > 0) {
    for (size_t u = 0; u < n; ++u) {
      for (size_t v = 0; v < n; ++v) {
        if (J[u * n + v] > 0) coupling_energy += J[u * n + v] * (kl(rho[u], rho[v]) + kl(rho[v], rho[u]));
      }
    }
    coupling_energy *= beta_j / 2;
  }
  auto energy = [&](const Dist& p) {
    double e = 0;
    for (size_t u = 0; u < n; ++u) {
      if (weights[u] > 0) e += weights[u] * kl(p, rho[u]);
    }
    return e;
  };
  const Shape& shape = densities[0].shape();
  const Dtype dtype = is_floating(densities[0].dtype()) ? densities[0].dtype() : Dtype::Float64;
  auto as_tensor = [&](const Dist& p) {
    return reshape(Tensor::from_vector<double>(p, {static_cast<int64_t>(m)}), shape).to(dtype);
  };
  Barycenter out;
  out.kl_energy = energy(star);
  out.entropy = entropy(star);
  out.coupling_energy = coupling_energy;
  out.objective = out.kl_energy - entropy_weight * out.entropy + coupling_energy;
  out.effective_weight = effective;
  out.density = as_tensor(star);
  // The arithmetic mean (uniform when every weight is 0) to the barycenter.
  Dist mean(m, weight_sum > 0 ? 0.0 : 1.0 / static_cast<double>(m));
  if (weight_sum > 0) {
    for (size_t u = 0; u < n; ++u) {
      for (size_t i = 0; i < m; ++i) mean[i] += weights[u] * rho[u][i] / weight_sum;
    }
  }
  for (const double alpha : {0.0, 0.25, 0.5, 0.75, 1.0}) {
    Dist p(m);
    for (size_t i = 0; i < m; ++i) p[i] = (1 - alpha) * mean[i] + alpha * star[i];
    p = normalised(std::move(p));
    const double k = energy(p), s = entropy(p);
    out.intermediates.push_back({alpha, as_tensor(p), k, s, k - entropy_weight * s + coupling_energy});
  }
  return out;
}

}  // namespace st::zspace
