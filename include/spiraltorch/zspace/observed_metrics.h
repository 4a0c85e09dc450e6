#pragma once
// Observed training metrics for the Z-space trainer: speed, memory, stability, drs, frac (each
// optional, under their canonical names) and an optional control gradient.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spiraltorch/zspace/decode.h"

namespace st::zspace {

class ObservedMetrics {
 public:
  // The canonical name of a metric key, aliases included (velocity -> speed, mem -> memory,
  // stab -> stability, drift -> drs, grad -> gradient), case-insensitive; nullopt if unknown.
  static std::optional<std::string> canonical_name(std::string_view key);

  // Adds a scalar metric under key (an alias is resolved). ValueError, changing nothing, for an
  // unknown key, a metric given twice, a non-finite value, or a gradient key.
  void set(std::string_view key, double value, std::string_view who);
  // Sets the control gradient (key "gradient" or "grad"); its entries must be finite.
  void set_gradient(std::string_view key, std::vector<double> gradient, std::string_view who);

  // The scalar metrics in insertion order.
  const NamedValues& values() const { return values_; }
  const std::optional<std::vector<double>>& gradient() const { return gradient_; }
  std::optional<double> get(std::string_view name) const;
  bool empty() const { return values_.empty() && !gradient_; }

 private:
  std::string checked_name(std::string_view key, std::string_view who) const;

  NamedValues values_;
  std::optional<std::vector<double>> gradient_;
};

}  // namespace st::zspace
