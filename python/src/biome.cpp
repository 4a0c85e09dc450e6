// Z-space tools: the barycenter, the topos guard, tensor biomes and the SoT-3D planner
// (spiraltorch._core.sot); the maths lives in src/zspace.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/vector.h>

#include "convert.h"
#include "spiraltorch/zspace/barycenter.h"
#include "spiraltorch/zspace/biome.h"
#include "spiraltorch/zspace/sot.h"

namespace stpy {

namespace z = st::zspace;

namespace {

nb::dict scale_dict(const z::sot::Scale& s, const std::vector<std::string>* roles) {
  nb::dict d;
  d["index"] = s.index;
  d["length"] = s.length;
  d["position"] = s.position;
  d["phase"] = s.phase;
  d["reflection"] = s.reflection;
  if (roles) {
    d["role"] = (*roles)[static_cast<size_t>(s.role)];
    d["role_index"] = s.role;
  }
  return d;
}

nb::dict step_dict(const z::sot::Step& s) {
  nb::dict d;
  d["index"] = s.index;
  d["angle"] = s.angle;
  d["radius"] = s.radius;
  d["x"] = s.x;
  d["y"] = s.y;
  d["height"] = s.height;
  d["z_track"] = s.z_track;
  d["curvature"] = s.curvature;
  d["macro"] = scale_dict(s.macro, nullptr);
  d["meso"] = scale_dict(s.meso, &z::sot::Plan::meso_roles());
  d["micro"] = scale_dict(s.micro, &z::sot::Plan::micro_roles());
  return d;
}

}  // namespace

void bind_biome(nb::module_& root) {
  nb::class_<z::BarycenterIntermediate>(root, "BarycenterIntermediate",
                                        "A point of the segment from the weighted mean (0) to the barycenter (1).")
      .def_ro("interpolation", &z::BarycenterIntermediate::interpolation,
              "alpha: 0 at the weighted arithmetic mean, 1 at the barycenter.")
      .def_ro("density", &z::BarycenterIntermediate::density, "The density at alpha (shape of the inputs).")
      .def_ro("kl_energy", &z::BarycenterIntermediate::kl_energy, "sum_u W_u KL(rho || rho_u) at this point.")
      .def_ro("entropy", &z::BarycenterIntermediate::entropy, "Shannon entropy S(rho) at this point.")
      .def_ro("objective", &z::BarycenterIntermediate::objective, "F(rho) at this point.");
  nb::class_<z::Barycenter>(root, "ZSpaceBarycenter", "The result of z_space_barycenter.")
      .def_ro("density", &z::Barycenter::density, "The barycenter rho*, same shape and dtype as the inputs.")
      .def_ro("kl_energy", &z::Barycenter::kl_energy, "sum_u W_u KL(rho* || rho_u).")
      .def_ro("entropy", &z::Barycenter::entropy, "Shannon entropy S(rho*).")
      .def_ro("coupling_energy", &z::Barycenter::coupling_energy,
              "The constant chart-coupling term (beta_j / 2) sum_uv J_uv (KL(rho_u||rho_v) + KL(rho_v||rho_u)).")
      .def_ro("objective", &z::Barycenter::objective,
              "F(rho*) = kl_energy - entropy_weight * entropy + coupling_energy.")
      .def_ro("effective_weight", &z::Barycenter::effective_weight, "E = sum W + entropy_weight.")
      .def("intermediates", [](const z::Barycenter& b) { return b.intermediates; },
           "Points of the segment from the arithmetic mean to rho* at alpha = 0, .25, .5, .75, 1 (the objective "
           "is non-increasing along them).");
  root.def("z_space_barycenter",
           [](const std::vector<double>& weights, const std::vector<Tensor>& densities, double entropy_weight,
              double beta_j, std::optional<Tensor> coupling) {
    return z::z_space_barycenter(weights, densities, entropy_weight, beta_j, coupling);
  },
           nb::arg("weights"), nb::arg("densities"), nb::arg("entropy_weight") = 0.0, nb::arg("beta_j") = 0.0,
           nb::arg("coupling") = nb::none(),
           "The density minimising sum_u W_u KL(rho || rho_u) - entropy_weight * S(rho) (+ a constant coupling "
           "energy): exactly rho* ~ exp(sum_u W_u log rho_u / E), E = sum W + entropy_weight > 0. Each input "
           "tensor is one whole distribution; float64 inside. ValueError/ShapeError (naming the value) for negative "
           "weights, non-finite values, unequal shapes, beta_j < 0, a coupling that is not n x n and >= 0, or E <= 0.");

  nb::class_<z::OpenCartesianTopos>(root, "OpenCartesianTopos",
                                    "Guard for Z-space structures: volume and depth limits, finite values, "
                                    "monotone saturation L tanh(v / L) (+ a porosity leak).")
      .def(nb::init<double, double, double, int64_t, int64_t, double>(), nb::arg("curvature"), nb::arg("tolerance"),
           nb::arg("saturation"), nb::arg("max_depth"), nb::arg("max_volume"), nb::arg("porosity") = 0.2)
      .def_prop_ro("curvature", &z::OpenCartesianTopos::curvature, "The curvature of the guarded ball (< 0).")
      .def_prop_ro("tolerance", &z::OpenCartesianTopos::tolerance, "The numerical tolerance (> 0).")
      .def_prop_ro("saturation", &z::OpenCartesianTopos::saturation, "L, the saturation level of the soft clip.")
      .def_prop_ro("max_depth", &z::OpenCartesianTopos::max_depth, "The depth ensure_loop_free() allows.")
      .def_prop_ro("max_volume", &z::OpenCartesianTopos::max_volume, "The most values a guarded tensor may hold.")
      .def_prop_ro("porosity", &z::OpenCartesianTopos::porosity, "The leak through the saturation, in [0, 1].")
      .def("with_porosity", &z::OpenCartesianTopos::with_porosity, nb::arg("porosity"),
           "The same guard with another porosity (clip = L tanh(v / L) + porosity * tolerance * v / (1 + |v|)).")
      .def("guard_tensor", [](const z::OpenCartesianTopos& t, const Tensor& x) { return t.guard_tensor(x); },
           nb::arg("tensor"),
           "Returns the tensor unchanged if it fits: ShapeError when it holds more than max_volume values, "
           "ValueError when one is not finite.")
      .def("ensure_loop_free", &z::OpenCartesianTopos::ensure_loop_free, nb::arg("depth"),
           "Raises ValueError when depth >= max_depth.")
      .def("saturate",
           [](const z::OpenCartesianTopos& t, nb::handle v) -> nb::object {
    if (nb::isinstance<Tensor>(v)) return nb::cast(t.saturate(nb::cast<Tensor>(v)));
    return nb::float_(t.saturate(nb::cast<double>(v)));
  }, nb::sig("def saturate(self, value: spiraltorch._core.Tensor | float) -> spiraltorch._core.Tensor | float"),
           nb::arg("value"),
           "The monotone soft clip L tanh(v / L) (+ the porosity leak) of a number (non-finite gives 0) or, after "
           "guard_tensor, element-wise of a tensor (a new tensor, same dtype).");
  root.def("hypergrad_topos",
           [](double curvature, double tolerance, double saturation, int64_t max_depth, int64_t max_volume) {
    return z::OpenCartesianTopos(curvature, tolerance, saturation, max_depth, max_volume);
  }, nb::arg("curvature") = -1.0, nb::arg("tolerance") = 1e-3, nb::arg("saturation") = 1.0, nb::arg("max_depth") = 64,
           nb::arg("max_volume") = 512, "The original's default topos for tapes and biomes.");

  nb::class_<z::TensorBiome>(root, "TensorBiome", "Weighted shoots under a topos; canopy = saturated weighted mean.")
      .def(nb::init<z::OpenCartesianTopos>(), nb::arg("topos"))
      .def("absorb", &z::TensorBiome::absorb, nb::arg("shoot"), nb::arg("label") = "",
           "Adds a shoot with weight 1, saturated by the topos. It must match the first shoot's shape, be finite "
           "and keep the stored volume within max_volume (ShapeError/ValueError otherwise; nothing changes).")
      .def("absorb_weighted", &z::TensorBiome::absorb_weighted, nb::arg("shoot"), nb::arg("weight"),
           nb::arg("label") = "", "absorb() with a weight > 0.")
      .def("canopy", &z::TensorBiome::canopy,
           "sum_i w_i T_i / sum_i w_i, saturated by the topos (float64). ValueError when empty.")
      .def("harvest", &z::TensorBiome::harvest, "The shoots stacked along a new first dimension.")
      .def("stack", &z::TensorBiome::harvest, "The shoots stacked along a new first dimension (= harvest).")
      .def("shoots",
           [](const z::TensorBiome& b) {
    std::vector<Tensor> out;
    if (!b.empty()) {
      const Tensor h = b.harvest();
      for (int64_t i = 0; i < h.shape()[0]; ++i) out.push_back(st::select(h, 0, i));
    }
    return out;
  }, "The stored (saturated) shoots as a list of tensors.")
      .def("stored_volume", &z::TensorBiome::stored_volume, "The number of values stored over all shoots.")
      .def("remaining_volume", &z::TensorBiome::remaining_volume, "max_volume - stored_volume().")
      .def("to_ball", &z::TensorBiome::to_ball,
           "exp_0 of the canopy's rows into the Poincare ball of the topos' curvature.")
      .def("weights", [](const z::TensorBiome& b) { return b.weights(); }, "The shoots' weights, in order.")
      .def("labels", [](const z::TensorBiome& b) { return b.labels(); }, "The shoots' labels, in order.")
      .def("total_weight", &z::TensorBiome::total_weight, "The sum of the weights.")
      .def("__len__", &z::TensorBiome::size)
      .def("is_empty", &z::TensorBiome::empty, "True when no shoot is stored.")
      .def("clear", &z::TensorBiome::clear, "Drops every shoot.")
      .def("topos", &z::TensorBiome::topos, "The guarding OpenCartesianTopos.");

  nb::module_ sot = root.def_submodule("sot",
                                       "SoT-3D: golden-angle spiral schedules paced by Fibonacci, "
                                       "tribonacci and tetranacci chunks.");
  sot.def("golden_ratio", &z::sot::golden_ratio, "phi = (1 + sqrt 5) / 2.");
  sot.def("golden_angle", &z::sot::golden_angle, "pi (3 - sqrt 5) radians, about 2.39996.");
  sot.def("fibonacci_pacing", &z::sot::fibonacci_pacing, nb::arg("n"),
          "Macro orbit lengths for n steps: 1, 1, 2, 3, 5, ... with the last cut so they sum to n.");
  sot.def("pack_tribonacci_chunks", &z::sot::pack_tribonacci_chunks, nb::arg("n"),
          "n split into chunks of tribonacci sizes (1, 1, 2, 4, 7, ...), each greedily the sequence value <= "
          "what is left that is closest to half of it (ties to the larger); the chunks sum to n.");
  sot.def("pack_tetranacci_chunks", &z::sot::pack_tetranacci_chunks, nb::arg("n"),
          "n split into chunks of tetranacci sizes (1, 1, 2, 4, 8, ...) by the same greedy rule.");
  nb::class_<z::sot::Plan>(sot, "SoT3DPlan", "A SoT-3D schedule (see spiraltorch.sot.generate_plan).")
      .def_prop_ro("total_steps", &z::sot::Plan::total_steps, "The number of steps.")
      .def_prop_ro("meso_gain", &z::sot::Plan::meso_gain, "The height offset of the meso phase.")
      .def_prop_ro("micro_gain", &z::sot::Plan::micro_gain, "The height offset of the micro phase.")
      .def("__len__", [](const z::sot::Plan& p) { return p.steps().size(); })
      .def("steps",
           [](const z::sot::Plan& p) {
    nb::list out;
    for (const auto& s : p.steps()) out.append(step_dict(s));
    return out;
  }, nb::sig("def steps(self) -> list[dict[str, typing.Any]]"),
           "Each step as a dict: index, angle, radius, x, y, height, z_track, curvature, and its 'macro'/'meso'/"
           "'micro' chunk (index, length, position, phase, reflection; meso and micro add role, role_index).")
      .def("macro_summaries",
           [](const z::sot::Plan& p) {
    nb::list out;
    for (const auto& m : p.macro_summaries()) {
      nb::dict d;
      d["index"] = m.index;
      d["length"] = m.length;
      d["ideal_length"] = m.ideal_length;
      d["height_gain"] = m.height_gain;
      d["mean_curvature"] = m.mean_curvature;
      d["reflection_step"] = m.reflection_step;
      out.append(d);
    }
    return out;
  }, nb::sig("def macro_summaries(self) -> list[dict[str, float]]"),
           "One dict per macro orbit: index, length, ideal_length (the Fibonacci length), height_gain, "
           "mean_curvature, reflection_step.")
      .def("as_tensor", &z::sot::Plan::as_tensor, "(n, 3): x, y, height of each step.")
      .def("feature_tensor", &z::sot::Plan::feature_tensor,
           "(n, 9): radius, angle, height, curvature, the 3 phases, meso and micro gain.")
      .def("role_tensor", &z::sot::Plan::role_tensor, "(n, 2): the meso and micro role indices.")
      .def("reflection_tensor", &z::sot::Plan::reflection_tensor,
           "(n, 3): 0/1 flags for the ends of micro, meso and macro chunks.")
      .def("grow_biome", &z::sot::Plan::grow_biome, nb::arg("topos"), nb::arg("label_prefix") = "sot",
           nb::arg("include_reflections") = true, nb::arg("include_roles") = true,
           "A TensorBiome under topos with one shoot per step ([x, y, height, radius, angle, curvature, 3 phases, "
           "gains] plus roles and reflection flags when included), weight 1 + meso_gain + micro_gain.");
  sot.def("generate_plan",
          [](int64_t total_steps, double base_radius, double radial_growth, double base_height, double meso_gain,
             double micro_gain) {
    return z::sot::Plan(total_steps, base_radius, radial_growth, base_height, meso_gain, micro_gain);
  },
          nb::arg("total_steps"), nb::arg("base_radius") = 1.0, nb::arg("radial_growth") = 0.05,
          nb::arg("base_height") = 1.0, nb::arg("meso_gain") = 0.2, nb::arg("micro_gain") = 0.05,
          "The SoT-3D plan of total_steps steps: step i at angle golden_angle * i and radius base_radius * "
          "e^(radial_growth * i); macro orbits of Fibonacci lengths split into tribonacci meso and tetranacci micro "
          "chunks; height climbs base_height / phi^m over macro orbit m plus the meso/micro phase offsets.");
}

}  // namespace stpy
