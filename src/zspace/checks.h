#pragma once
// Shared argument checks and number formatting for src/zspace (internal).
#include <charconv>
#include <cmath>
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

inline double check_learning_rate(double lr, const std::string& who) {
  if (!(std::isfinite(lr) && lr > 0)) {
    throw ValueError(who + ": learning_rate must be positive and finite, got " + num(lr));
  }
  return lr;
}

}  // namespace st::zspace::detail
