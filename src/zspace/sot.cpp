#include "spiraltorch/zspace/sot.h"

#include <cmath>
#include <limits>
#include <numbers>

#include "spiraltorch/ops.h"

namespace st::zspace::sot {

namespace {

// The greedy split of n into members of the sequence with the given seeds.
std::vector<int64_t> pack(int64_t n, std::vector<int64_t> seq, const char* op) {
  if (n < 0) throw ValueError(std::string(op) + ": n must be >= 0, got " + std::to_string(n));
  const size_t order = seq.size();
  while (seq.back() < n) {
    int64_t next = 0;
    for (size_t k = seq.size() - order; k < seq.size(); ++k) next += seq[k];
    seq.push_back(next);
  }
  std::vector<int64_t> out;
  for (int64_t left = n; left > 0;) {
    int64_t best = 0;
    double best_gap = std::numeric_limits<double>::infinity();
    for (int64_t v : seq) {
      if (v > left) continue;
      const double gap = std::abs(static_cast<double>(v) - static_cast<double>(left) / 2.0);
      if (gap < best_gap || (gap == best_gap && v > best)) {
        best = v;
        best_gap = gap;
      }
    }
    out.push_back(best);
    left -= best;
  }
  return out;
}

double phase_of(int64_t position, int64_t length) {
  return length > 1 ? static_cast<double>(position) / static_cast<double>(length - 1) : 0.0;
}

}  // namespace

double golden_ratio() { return std::numbers::phi; }
double golden_angle() { return std::numbers::pi * (3.0 - std::sqrt(5.0)); }

std::vector<int64_t> fibonacci_pacing(int64_t n) {
  if (n < 0) throw ValueError("fibonacci_pacing: n must be >= 0, got " + std::to_string(n));
  std::vector<int64_t> out;
  int64_t a = 1, b = 1, left = n;
  while (left > 0) {
    out.push_back(std::min(a, left));
    left -= out.back();
    const int64_t c = a + b;
    a = b;
    b = c;
  }
  return out;
}

std::vector<int64_t> pack_tribonacci_chunks(int64_t n) { return pack(n, {1, 1, 2}, "pack_tribonacci_chunks"); }
std::vector<int64_t> pack_tetranacci_chunks(int64_t n) { return pack(n, {1, 1, 2, 4}, "pack_tetranacci_chunks"); }

const std::vector<std::string>& Plan::meso_roles() {
  static const std::vector<std::string> roles{"explore", "structure", "verify"};
  return roles;
}

const std::vector<std::string>& Plan::micro_roles() {
  static const std::vector<std::string> roles{"diverge", "ground", "design", "test"};
  return roles;
}

Plan::Plan(int64_t total_steps, double base_radius, double radial_growth, double base_height, double meso_gain,
           double micro_gain)
    : total_steps_(total_steps),
      base_radius_(base_radius),
      radial_growth_(radial_growth),
      base_height_(base_height),
      meso_gain_(meso_gain),
      micro_gain_(micro_gain) {
  if (total_steps <= 0)
    throw ValueError("sot.generate_plan: total_steps must be positive, got " + std::to_string(total_steps));
  for (double v : {base_radius, radial_growth, base_height, meso_gain, micro_gain}) {
    if (!std::isfinite(v)) throw ValueError("sot.generate_plan: every parameter must be finite");
  }
  const std::vector<int64_t> macro = fibonacci_pacing(total_steps);
  int64_t i = 0, meso_global = 0, micro_global = 0, ideal_a = 1, ideal_b = 1;
  double z = 0;
  for (size_t m = 0; m < macro.size(); ++m) {
    const double gain = base_height / std::pow(std::numbers::phi, static_cast<double>(m));
    MacroSummary summary{static_cast<int64_t>(m), macro[m], ideal_a, gain, 0.0, -1};
    const int64_t c = ideal_a + ideal_b;
    ideal_a = ideal_b;
    ideal_b = c;
    double curvature_sum = 0;
    int64_t curvature_n = 0, in_macro = 0;
    for (int64_t meso_len : pack_tribonacci_chunks(macro[m])) {
      int64_t in_meso = 0;
      for (int64_t micro_len : pack_tetranacci_chunks(meso_len)) {
        for (int64_t k = 0; k < micro_len; ++k, ++i, ++in_meso, ++in_macro) {
          Step s{};
          s.index = i;
          s.angle = golden_angle() * static_cast<double>(i);
          s.radius = base_radius * std::exp(radial_growth * static_cast<double>(i));
          s.x = s.radius * std::cos(s.angle);
          s.y = s.radius * std::sin(s.angle);
          z += gain / static_cast<double>(macro[m]);
          s.z_track = z;
          s.macro = {static_cast<int64_t>(m),  macro[m], in_macro, phase_of(in_macro, macro[m]),
                     in_macro == macro[m] - 1, 0};
          s.meso = {meso_global,    meso_len, in_meso, phase_of(in_meso, meso_len), in_meso == meso_len - 1,
                    meso_global % 3};
          s.micro = {micro_global, micro_len, k, phase_of(k, micro_len), k == micro_len - 1, micro_global % 4};
          s.height = z + meso_gain * (s.meso.phase - 0.5) + micro_gain * (s.micro.phase - 0.5);
          // The log-spiral curvature sqrt(1 + g^2) / r.
          s.curvature = s.radius != 0.0 ? std::sqrt(1.0 + radial_growth * radial_growth) / std::abs(s.radius)
                                        : std::numeric_limits<double>::infinity();
          if (std::isfinite(s.curvature)) {
            curvature_sum += s.curvature;
            ++curvature_n;
          }
          if (s.macro.reflection) summary.reflection_step = i;
          steps_.push_back(s);
        }
        ++micro_global;
      }
      ++meso_global;
    }
    summary.mean_curvature = curvature_n ? curvature_sum / static_cast<double>(curvature_n) : 0.0;
    macros_.push_back(summary);
  }
}

namespace {

template <class F>
Tensor table(const std::vector<Step>& steps, int64_t cols, F row) {
  std::vector<double> v;
  v.reserve(steps.size() * static_cast<size_t>(cols));
  for (const Step& s : steps) row(s, v);
  return Tensor::from_vector<double>(v, {static_cast<int64_t>(steps.size()), cols});
}

}  // namespace

Tensor Plan::as_tensor() const {
  return table(steps_, 3, [](const Step& s, std::vector<double>& v) { v.insert(v.end(), {s.x, s.y, s.height}); });
}

Tensor Plan::feature_tensor() const {
  return table(steps_, 9, [this](const Step& s, std::vector<double>& v) {
    v.insert(v.end(), {s.radius, s.angle, s.height, s.curvature, s.macro.phase, s.meso.phase, s.micro.phase, meso_gain_,
                       micro_gain_});
  });
}

Tensor Plan::role_tensor() const {
  return table(steps_, 2, [](const Step& s, std::vector<double>& v) {
    v.insert(v.end(), {static_cast<double>(s.meso.role), static_cast<double>(s.micro.role)});
  });
}

Tensor Plan::reflection_tensor() const {
  return table(steps_, 3, [](const Step& s, std::vector<double>& v) {
    v.insert(v.end(), {s.micro.reflection ? 1.0 : 0.0, s.meso.reflection ? 1.0 : 0.0, s.macro.reflection ? 1.0 : 0.0});
  });
}

TensorBiome Plan::grow_biome(const OpenCartesianTopos& topos, const std::string& label_prefix, bool include_reflections,
                             bool include_roles) const {
  std::vector<Tensor> parts{as_tensor(), narrow(feature_tensor(), 1, 0, 2), narrow(feature_tensor(), 1, 3, 6)};
  // [x, y, height] + [radius, angle] + [curvature, phases x3, gains x2]: the layout of the docstring.
  if (include_roles) parts.push_back(role_tensor());
  if (include_reflections) parts.push_back(reflection_tensor());
  TensorBiome biome(topos);
  biome.absorb_weighted(cat(parts, 1), 1.0 + meso_gain_ + micro_gain_, label_prefix + "_plan");
  return biome;
}

}  // namespace st::zspace::sot
