#pragma once
// The Z-space barycenter: the density minimising
//   F(rho) = sum_u W_u KL(rho || rho_u) - gamma S(rho) + C
// over the simplex, where S is the Shannon entropy and C = (beta_J / 2) sum_uv J_uv (KL(rho_u||rho_v) +
// KL(rho_v||rho_u)) is a constant "chart coupling" energy. With E = sum W + gamma > 0 the minimiser is
// exact: rho*_i proportional to exp(sum_u W_u log rho_u,i / E), a tempered geometric mean.
// Every input tensor is one whole distribution (any shape); the maths runs in float64.
#include <optional>
#include <vector>

#include "spiraltorch/tensor.h"

namespace st::zspace {

// One point of the segment from the weighted arithmetic mean to the barycenter.
struct BarycenterIntermediate {
  double interpolation;  // 0 at the arithmetic mean, 1 at the barycenter
  Tensor density;
  double kl_energy;
  double entropy;
  double objective;
};

struct Barycenter {
  Tensor density;  // same shape and dtype as the inputs
  double kl_energy;
  double entropy;
  double coupling_energy;
  double objective;
  double effective_weight;
  // F along alpha in {0, .25, .5, .75, 1}: non-increasing, since F is convex on the
  // segment with its minimum at alpha = 1.
  std::vector<BarycenterIntermediate> intermediates;
};

// Checks everything first (weights >= 0, finite values, equal shapes, beta_j >= 0, J n x n
// and >= 0, E > 0) and raises ValueError/ShapeError naming the offending value.
Barycenter z_space_barycenter(const std::vector<double>& weights, const std::vector<Tensor>& densities,
                              double entropy_weight, double beta_j, const std::optional<Tensor>& coupling = {});

}  // namespace st::zspace
