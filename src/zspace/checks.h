#pragma once
// Shared argument checks and number formatting for src/zspace (internal).
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>

#include "spiraltorch/error.h"

namespace st::zspace::detail {

// The shortest round-trip form of v, as Python's repr prints it (0.5, 1e-05, nan), so the
// messages read the same as the Python implementation's did.
inline std::string num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

inline double check_curvature(double c, const std::string& who) {
  if (!(std::isfinite(c) && c < 0)) {
    throw ValueError(who + ": curvature must be negative and finite (a hyperbolic ball), got " + num(c));
  }
  return c;
}

// The arguments of a feature-wise layer on the ball (WaveGate, ZSpaceProjector): features > 0
// and a negative finite curvature.
inline void check_ball_layer(int64_t features, double curvature, const std::string& who) {
  if (features <= 0) throw ValueError(who + ": features must be positive, got " + std::to_string(features));
  if (!(curvature < 0) || !std::isfinite(curvature)) {
    throw ValueError(who + ": curvature must be negative and finite, got " + std::to_string(curvature));
  }
}

inline double check_learning_rate(double lr, const std::string& who) {
  if (!(std::isfinite(lr) && lr > 0)) {
    throw ValueError(who + ": learning_rate must be positive and finite, got " + num(lr));
  }
  return lr;
}

}  // namespace st::zspace::detail
