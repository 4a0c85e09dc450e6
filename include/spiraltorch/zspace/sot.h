#pragma once
// SoT-3D: a deterministic golden-angle spiral schedule of `total_steps` steps, paced in
// three scales. Macro orbits follow Fibonacci lengths (the last one truncated so they sum
// to total_steps); each orbit splits into meso chunks of tribonacci sizes and each meso
// chunk into micro chunks of tetranacci sizes (greedily: the sequence value <= what is
// left that is closest to half of it, ties to the larger). Step i sits at angle
// golden_angle * i and radius base_radius * e^(radial_growth * i); its height climbs
// base_height / phi^m over macro orbit m, plus meso/micro phase offsets.
#include <string>
#include <vector>

#include "spiraltorch/zspace/biome.h"

namespace st::zspace::sot {

double golden_ratio();
double golden_angle();  // pi (3 - sqrt 5)
// Macro lengths for n steps: 1, 1, 2, 3, 5, ... with the last cut so the sum is n.
std::vector<int64_t> fibonacci_pacing(int64_t n);
std::vector<int64_t> pack_tribonacci_chunks(int64_t n);
std::vector<int64_t> pack_tetranacci_chunks(int64_t n);

struct Scale {
  int64_t index = 0;        // which chunk of this scale
  int64_t length = 0;       // its length in steps
  int64_t position = 0;     // the step's position inside it
  double phase = 0;         // position / (length - 1), 0 for a chunk of one step
  bool reflection = false;  // the chunk's last step
  int64_t role = 0;         // meso: explore/structure/verify; micro: diverge/ground/design/test
};

struct Step {
  int64_t index;
  double angle, radius, x, y, height, z_track, curvature;
  Scale macro, meso, micro;
};

struct MacroSummary {
  int64_t index, length, ideal_length;
  double height_gain, mean_curvature;
  int64_t reflection_step;
};

class Plan {
 public:
  Plan(int64_t total_steps, double base_radius = 1.0, double radial_growth = 0.05, double base_height = 1.0,
       double meso_gain = 0.2, double micro_gain = 0.05);
  const std::vector<Step>& steps() const { return steps_; }
  const std::vector<MacroSummary>& macro_summaries() const { return macros_; }
  int64_t total_steps() const { return total_steps_; }
  double meso_gain() const { return meso_gain_; }
  double micro_gain() const { return micro_gain_; }
  Tensor as_tensor() const;          // (n, 3): x, y, height
  Tensor feature_tensor() const;     // (n, 9): radius, angle, height, curvature, 3 phases, meso/micro gain
  Tensor role_tensor() const;        // (n, 2): meso and micro role indices
  Tensor reflection_tensor() const;  // (n, 3): 0/1 flags for micro, meso, macro chunk ends
  // One shoot: [x, y, height, radius, angle, curvature, 3 phases, gains] (+ roles, + reflections),
  // weight 1 + meso_gain + micro_gain, absorbed into a biome under `topos`.
  TensorBiome grow_biome(const OpenCartesianTopos& topos, const std::string& label_prefix = "sot",
                         bool include_reflections = true, bool include_roles = true) const;

  static const std::vector<std::string>& meso_roles();
  static const std::vector<std::string>& micro_roles();

 private:
  int64_t total_steps_;
  double base_radius_, radial_growth_, base_height_, meso_gain_, micro_gain_;
  std::vector<Step> steps_;
  std::vector<MacroSummary> macros_;
};

}  // namespace st::zspace::sot
