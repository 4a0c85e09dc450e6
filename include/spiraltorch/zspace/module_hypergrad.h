#pragma once
// Riemannian (Poincare-ball) updates attached to the parameters of a module tree, used by
// ModuleTrainer (see geometry/poincare.h). The settings live here, in the Z-space extension, in a
// table keyed by module: nn::Module itself knows nothing of Z-space.
#include <optional>
#include <utility>
#include <vector>

#include "spiraltorch/nn/module.h"

namespace st::zspace {

struct HypergradSettings {
  double curvature;      // negative
  double learning_rate;  // positive
};

// Gives `module` and every module below it these settings. Throws ValueError unless the curvature
// is negative and finite and the learning rate positive and finite.
void attach_hypergrad(nn::Module& module, double curvature, double learning_rate);
// Drops the settings of `module` and every module below it: plain optimizer updates again.
void detach_hypergrad(nn::Module& module);
// Sets (or, with nullopt, clears) the settings of `module` alone, leaving its children as they are.
void set_own_hypergrad(const nn::Module& module, const std::optional<HypergradSettings>& settings);
// The settings of `module` itself, or nullopt.
std::optional<HypergradSettings> hypergrad_of(const nn::Module& module);
// Each parameter below `module` that requires grad, once, with the settings of the module that owns it.
std::vector<std::pair<Tensor, std::optional<HypergradSettings>>> parameters_with_hypergrad(const nn::Module& module);

}  // namespace st::zspace
