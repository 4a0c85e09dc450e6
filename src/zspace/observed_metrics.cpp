#include "spiraltorch/zspace/observed_metrics.h"

#include <array>
#include <cctype>
#include <cmath>

#include "checks.h"

namespace st::zspace {

std::optional<std::string> ObservedMetrics::canonical_name(std::string_view key) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 12> aliases{{{"speed", "speed"},
                                                                                          {"velocity", "speed"},
                                                                                          {"memory", "memory"},
                                                                                          {"mem", "memory"},
                                                                                          {"stability", "stability"},
                                                                                          {"stab", "stability"},
                                                                                          {"drs", "drs"},
                                                                                          {"drift", "drs"},
                                                                                          {"frac", "frac"},
                                                                                          {"gradient", "gradient"},
                                                                                          {"grad", "gradient"},
                                                                                          {"", ""}}};
  std::string lower(key);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (const auto& [alias, name] : aliases) {
    if (!alias.empty() && alias == lower) return std::string(name);
  }
  return std::nullopt;
}

std::string ObservedMetrics::checked_name(std::string_view key, std::string_view who) const {
  const auto name = canonical_name(key);
  if (!name) {
    throw ValueError(std::string(who) + ": unknown metric '" + std::string(key) +
                     "' (expected speed, memory, stability, drs, frac, gradient)");
  }
  if ((*name == "gradient" && gradient_) || get(*name)) {
    throw ValueError(std::string(who) + ": metric '" + *name + "' given twice (through an alias)");
  }
  return *name;
}

void ObservedMetrics::set(std::string_view key, double value, std::string_view who) {
  const std::string name = checked_name(key, who);
  if (name == "gradient") throw ValueError(std::string(who) + ": 'gradient' takes a list of numbers");
  if (!std::isfinite(value)) {
    throw ValueError(std::string(who) + ": metric '" + name + "' is not finite (" + detail::num(value) + ")");
  }
  values_.emplace_back(name, value);
}

void ObservedMetrics::set_gradient(std::string_view key, std::vector<double> gradient, std::string_view who) {
  const std::string name = checked_name(key, who);
  if (name != "gradient") throw ValueError(std::string(who) + ": metric '" + name + "' takes a number, not a list");
  for (const double g : gradient) {
    if (!std::isfinite(g)) throw ValueError(std::string(who) + ": the gradient has non-finite entries");
  }
  gradient_ = std::move(gradient);
}

std::optional<double> ObservedMetrics::get(std::string_view name) const {
  for (const auto& [k, v] : values_) {
    if (k == name) return v;
  }
  return std::nullopt;
}

}  // namespace st::zspace
