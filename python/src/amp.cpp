// spiraltorch._core: mixed precision (autocast regions, GradScaler) and activation
// checkpointing. The Python classes in spiraltorch/amp.py and spiraltorch/utils are thin.
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/vector.h>

#include "convert.h"
#include "spiraltorch/activation_checkpoint.h"
#include "spiraltorch/autocast.h"
#include "spiraltorch/optim/grad_scaler.h"

namespace stpy {

namespace {

st::DeviceType autocast_device(const std::string& device_type) {
  if (device_type == "cpu") return st::DeviceType::CPU;
  if (device_type == "cuda") return st::DeviceType::CUDA;
  throw st::ValueError("autocast: device_type must be 'cpu' or 'cuda', got '" + device_type + "'");
}

}  // namespace

void bind_amp(nb::module_& m) {
  // The whole per-thread state as (cpu_enabled, cpu_dtype, cuda_enabled, cuda_dtype), so the
  // Python context manager can save and restore it exactly.
  m.def("_autocast_get_state", [] {
    const st::autocast::State s = st::autocast::state();
    return nb::make_tuple(s.cpu_enabled, s.cpu_dtype, s.cuda_enabled, s.cuda_dtype);
  }, "This thread's autocast state: (cpu_enabled, cpu_dtype, cuda_enabled, cuda_dtype).");
  m.def("_autocast_set_state",
        [](bool cpu_on, Dtype cpu_dt, bool cuda_on, Dtype cuda_dt) {
    for (Dtype dt : {cpu_dt, cuda_dt}) {
      if (dt != Dtype::Float16 && dt != Dtype::BFloat16) {
        throw st::ValueError(std::string("autocast: dtype must be float16 or bfloat16, got ") + st::dtype_name(dt));
      }
    }
    st::autocast::set_state(st::autocast::State{cpu_on, cuda_on, cpu_dt, cuda_dt});
  }, nb::arg("cpu_enabled"), nb::arg("cpu_dtype"), nb::arg("cuda_enabled"), nb::arg("cuda_dtype"),
        "Sets this thread's autocast state; ValueError unless both dtypes are float16 or bfloat16.");
  m.def("is_autocast_enabled", [](const std::string& device_type) {
    return st::autocast::is_enabled(autocast_device(device_type));
  }, nb::arg("device_type") = "cuda", "Whether an autocast region is active for device_type on this thread.");
  m.def("get_autocast_dtype", [](const std::string& device_type) {
    return st::autocast::dtype(autocast_device(device_type));
  }, nb::arg("device_type") = "cuda", "The dtype autocast lowers to on device_type (float16 or bfloat16).");

  using st::optim::GradScaler;
  nb::class_<GradScaler>(m, "_GradScaler", "The loss scaler behind spiraltorch.amp.GradScaler.")
      .def("__init__",
           [](GradScaler* self, double init_scale, double growth_factor, double backoff_factor, int64_t growth_interval,
              bool enabled) {
    new (self) GradScaler(GradScaler::Options{init_scale, growth_factor, backoff_factor, growth_interval, enabled});
  },
           nb::arg("init_scale") = 65536.0, nb::arg("growth_factor") = 2.0, nb::arg("backoff_factor") = 0.5,
           nb::arg("growth_interval") = 2000, nb::arg("enabled") = true,
           "A scaler starting at init_scale that multiplies the scale by growth_factor after growth_interval "
           "finite steps and by backoff_factor after a non-finite one.")
      .def("scale", &GradScaler::scale, nb::arg("loss"), "loss * scale (the loss itself when disabled).")
      .def("unscale_", &GradScaler::unscale, nb::arg("optimizer"),
           "Divides the optimizer's gradients by the scale (once per step) and records whether any is non-finite; "
           "SpiralError when called twice before update().")
      .def("step", &GradScaler::step, nb::arg("optimizer"), nb::call_guard<nb::gil_scoped_release>(),
           "Unscales if not yet done and runs optimizer.step() unless a gradient was non-finite; returns whether "
           "it stepped.")
      .def("update", &GradScaler::update, nb::arg("new_scale").none() = nb::none(),
           "Adjusts the scale from this step's outcome (or sets new_scale) and starts the next step.")
      .def("get_scale", &GradScaler::get_scale, "The current scale (1.0 when disabled).")
      .def("is_enabled", &GradScaler::is_enabled, "Whether scaling is on.")
      .def_prop_ro("found_inf", &GradScaler::found_inf, "Whether a non-finite gradient was seen in this step so far.")
      .def_prop_ro("skipped_steps", &GradScaler::skipped_steps, "Optimizer steps skipped for non-finite gradients.")
      .def_prop_ro("growth_factor", [](const GradScaler& s) { return s.options().growth_factor; },
                   "The factor applied to the scale after growth_interval finite steps.")
      .def_prop_ro("backoff_factor", [](const GradScaler& s) { return s.options().backoff_factor; },
                   "The factor applied to the scale after a non-finite step.")
      .def_prop_ro("growth_interval", [](const GradScaler& s) { return s.options().growth_interval; },
                   "Finite steps between two growths of the scale.")
      .def("_state", [](const GradScaler& s) {
    const GradScaler::State st = s.state();
    return nb::make_tuple(st.scale, st.growth_tracker, st.skipped_steps);
  }).def("_load_state", [](GradScaler& s, double scale, int64_t tracker, int64_t skipped) {
    s.load_state(GradScaler::State{scale, tracker, skipped});
  });

  m.def("_checkpoint",
        [](const st::CheckpointFn& fn, const std::vector<Tensor>& inputs, bool preserve_rng_state) {
    return st::checkpoint(fn, inputs, preserve_rng_state);
  }, nb::arg("fn"), nb::arg("inputs"), nb::arg("preserve_rng_state") = true,
        "Activation checkpointing: runs fn(inputs) -> list of tensors without keeping its intermediates and "
        "records one node for all of them, whose backward re-runs fn once (with the same random numbers when "
        "preserve_rng_state) and back-propagates every output's gradient.");
}

}  // namespace stpy
