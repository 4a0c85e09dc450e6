#pragma once
// Posterior completion of partially observed metrics at a latent z.
#include <array>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "spiraltorch/zspace/decode.h"
#include "spiraltorch/zspace/observed_metrics.h"

namespace st::zspace {

struct Inference {
  NamedValues metrics;                                  // decoded, observed ones overriding (decode order)
  NamedValues prior;                                    // decoded only
  NamedValues observed;                                 // the observed base metrics, in the caller's order
  std::vector<double> gradient;                         // d/dz of 1/2 sum (decoded - observed)^2 (central differences)
  double residual = 0.0;                                // RMS of observed - decoded over the observed metrics
  double confidence = 1.0;                              // exp(-residual) * telemetry_reliability
  std::optional<std::vector<double>> control_gradient;  // the gradient supplied with the observation
  std::array<double, 3> barycentric{};                  // softplus(speed, memory, stability) weights, blended
  std::optional<NamedValues> telemetry;                 // the flattened telemetry used, if any
  double telemetry_reliability = 1.0;
};

// Heuristic (the original's telemetry damping, labelled as such): noisy telemetry lowers
// confidence. With `variance` the largest value under a key whose last dotted part is "variance"
// and `focus` the mean of those ending in "focus": 1/(1 + max(variance, 0)) *
// clamp(1 + focus/4, 0.75, 1). 1 when neither is present.
double telemetry_reliability(const NamedValues& telemetry);

// softplus(speed, memory, stability) of metrics (0 when absent), normalised to sum 1.
std::array<double, 3> barycentric_weights(const NamedValues& metrics);

// Decodes z, lets the observed metrics override the decoded ones and measures the disagreement;
// the barycentric weights blend the prior's and the completed metrics' by smoothing in [0, 1].
// ValueError (naming who) for a smoothing outside [0, 1] or an empty z.
Inference infer(std::span<const double> z, double alpha, const ObservedMetrics& observed, double smoothing,
                const NamedValues& telemetry, std::string_view who);

}  // namespace st::zspace
