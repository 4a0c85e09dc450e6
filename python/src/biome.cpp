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
      .def_ro("interpolation", &z::BarycenterIntermediate::interpolation)
      .def_ro("density", &z::BarycenterIntermediate::density)
      .def_ro("kl_energy", &z::BarycenterIntermediate::kl_energy)
      .def_ro("entropy", &z::BarycenterIntermediate::entropy)
      .def_ro("objective", &z::BarycenterIntermediate::objective);
  nb::class_<z::Barycenter>(root, "ZSpaceBarycenter", "The result of z_space_barycenter.")
      .def_ro("density", &z::Barycenter::density)
      .def_ro("kl_energy", &z::Barycenter::kl_energy)
      .def_ro("entropy", &z::Barycenter::entropy)
      .def_ro("coupling_energy", &z::Barycenter::coupling_energy)
      .def_ro("objective", &z::Barycenter::objective)
      .def_ro("effective_weight", &z::Barycenter::effective_weight)
      .def("intermediates", [](const z::Barycenter& b) { return b.intermediates; });
  root.def("z_space_barycenter", [](const std::vector<double>& weights, const std::vector<Tensor>& densities,
                                    double entropy_weight, double beta_j, std::optional<Tensor> coupling) {
    return z::z_space_barycenter(weights, densities, entropy_weight, beta_j, coupling);
  }, nb::arg("weights"), nb::arg("densities"), nb::arg("entropy_weight") = 0.0, nb::arg("beta_j") = 0.0,
     nb::arg("coupling") = nb::none(),
     "The density minimising sum_u W_u KL(rho || rho_u) - entropy_weight * S(rho) (+ a constant coupling "
     "energy): exactly rho* ~ exp(sum_u W_u log rho_u / E), E = sum W + entropy_weight > 0. Each input "
     "tensor is one whole distribution; float64 inside.");

  nb::class_<z::OpenCartesianTopos>(root, "OpenCartesianTopos",
                                    "Guard for Z-space structures: volume and depth limits, finite values, "
                                    "monotone saturation L tanh(v / L) (+ a porosity leak).")
      .def(nb::init<double, double, double, int64_t, int64_t, double>(), nb::arg("curvature"), nb::arg("tolerance"),
           nb::arg("saturation"), nb::arg("max_depth"), nb::arg("max_volume"), nb::arg("porosity") = 0.2)
      .def_prop_ro("curvature", &z::OpenCartesianTopos::curvature)
      .def_prop_ro("tolerance", &z::OpenCartesianTopos::tolerance)
      .def_prop_ro("saturation", &z::OpenCartesianTopos::saturation)
      .def_prop_ro("max_depth", &z::OpenCartesianTopos::max_depth)
      .def_prop_ro("max_volume", &z::OpenCartesianTopos::max_volume)
      .def_prop_ro("porosity", &z::OpenCartesianTopos::porosity)
      .def("with_porosity", &z::OpenCartesianTopos::with_porosity, nb::arg("porosity"))
      .def("guard_tensor", [](const z::OpenCartesianTopos& t, const Tensor& x) { return t.guard_tensor(x); },
           nb::arg("tensor"), "Returns the tensor if it fits the volume and is finite; raises otherwise.")
      .def("ensure_loop_free", &z::OpenCartesianTopos::ensure_loop_free, nb::arg("depth"))
      .def("saturate", [](const z::OpenCartesianTopos& t, nb::handle v) -> nb::object {
        if (nb::isinstance<Tensor>(v)) return nb::cast(t.saturate(nb::cast<Tensor>(v)));
        return nb::float_(t.saturate(nb::cast<double>(v)));
      }, nb::arg("value"), "The monotone soft clip of a number or (element-wise) of a tensor.");
  root.def("hypergrad_topos", [](double curvature, double tolerance, double saturation, int64_t max_depth,
                                 int64_t max_volume) {
    return z::OpenCartesianTopos(curvature, tolerance, saturation, max_depth, max_volume);
  }, nb::arg("curvature") = -1.0, nb::arg("tolerance") = 1e-3, nb::arg("saturation") = 1.0, nb::arg("max_depth") = 64,
     nb::arg("max_volume") = 512, "The original's default topos for tapes and biomes.");

  nb::class_<z::TensorBiome>(root, "TensorBiome", "Weighted shoots under a topos; canopy = saturated weighted mean.")
      .def(nb::init<z::OpenCartesianTopos>(), nb::arg("topos"))
      .def("absorb", &z::TensorBiome::absorb, nb::arg("shoot"), nb::arg("label") = "")
      .def("absorb_weighted", &z::TensorBiome::absorb_weighted, nb::arg("shoot"), nb::arg("weight"),
           nb::arg("label") = "")
      .def("canopy", &z::TensorBiome::canopy)
      .def("harvest", &z::TensorBiome::harvest)
      .def("stack", &z::TensorBiome::harvest, "The shoots stacked along a new first dimension (= harvest).")
      .def("shoots", [](const z::TensorBiome& b) {
        std::vector<Tensor> out;
        if (!b.empty()) {
          const Tensor h = b.harvest();
          for (int64_t i = 0; i < h.shape()[0]; ++i) out.push_back(st::select(h, 0, i));
        }
        return out;
      })
      .def("stored_volume", &z::TensorBiome::stored_volume)
      .def("remaining_volume", &z::TensorBiome::remaining_volume)
      .def("to_ball", &z::TensorBiome::to_ball)
      .def("weights", [](const z::TensorBiome& b) { return b.weights(); })
      .def("labels", [](const z::TensorBiome& b) { return b.labels(); })
      .def("total_weight", &z::TensorBiome::total_weight)
      .def("__len__", &z::TensorBiome::size)
      .def("is_empty", &z::TensorBiome::empty)
      .def("clear", &z::TensorBiome::clear)
      .def("topos", &z::TensorBiome::topos);

  nb::module_ sot = root.def_submodule("sot", "SoT-3D: golden-angle spiral schedules paced by Fibonacci, "
                                              "tribonacci and tetranacci chunks.");
  sot.def("golden_ratio", &z::sot::golden_ratio);
  sot.def("golden_angle", &z::sot::golden_angle);
  sot.def("fibonacci_pacing", &z::sot::fibonacci_pacing, nb::arg("n"));
  sot.def("pack_tribonacci_chunks", &z::sot::pack_tribonacci_chunks, nb::arg("n"));
  sot.def("pack_tetranacci_chunks", &z::sot::pack_tetranacci_chunks, nb::arg("n"));
  nb::class_<z::sot::Plan>(sot, "SoT3DPlan", "A SoT-3D schedule (see spiraltorch.sot.generate_plan).")
      .def_prop_ro("total_steps", &z::sot::Plan::total_steps)
      .def_prop_ro("meso_gain", &z::sot::Plan::meso_gain)
      .def_prop_ro("micro_gain", &z::sot::Plan::micro_gain)
      .def("__len__", [](const z::sot::Plan& p) { return p.steps().size(); })
      .def("steps", [](const z::sot::Plan& p) {
        nb::list out;
        for (const auto& s : p.steps()) out.append(step_dict(s));
        return out;
      }, "Each step as a dict (position, height, curvature, and its macro/meso/micro chunk).")
      .def("macro_summaries", [](const z::sot::Plan& p) {
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
      })
      .def("as_tensor", &z::sot::Plan::as_tensor)
      .def("feature_tensor", &z::sot::Plan::feature_tensor)
      .def("role_tensor", &z::sot::Plan::role_tensor)
      .def("reflection_tensor", &z::sot::Plan::reflection_tensor)
      .def("grow_biome", &z::sot::Plan::grow_biome, nb::arg("topos"), nb::arg("label_prefix") = "sot",
           nb::arg("include_reflections") = true, nb::arg("include_roles") = true);
  sot.def("generate_plan", [](int64_t total_steps, double base_radius, double radial_growth, double base_height,
                              double meso_gain, double micro_gain) {
    return z::sot::Plan(total_steps, base_radius, radial_growth, base_height, meso_gain, micro_gain);
  }, nb::arg("total_steps"), nb::arg("base_radius") = 1.0, nb::arg("radial_growth") = 0.05, nb::arg("base_height") = 1.0,
     nb::arg("meso_gain") = 0.2, nb::arg("micro_gain") = 0.05);
}

}  // namespace stpy
