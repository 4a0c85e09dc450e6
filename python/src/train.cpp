// ModuleTrainer, the roundtable schedule and the curvature scheduler (spiraltorch.nn).
#include <nanobind/stl/array.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "nn_bind.h"
#include "spiraltorch/nn/loss.h"
#include "spiraltorch/optim/optimizer.h"
#include "spiraltorch/optim/training_engine.h"
#include "spiraltorch/train/module_trainer.h"

namespace stpy {

using namespace st::train;

namespace {

// Pulls (input, target) pairs from any Python iterable.
ModuleTrainer::BatchSource batch_source(nb::iterator& it) {
  return [&it](Tensor& x, Tensor& y) {
    if (it == nb::iterator::sentinel()) return false;
    nb::handle item = *it;
    nb::object xo = item[0], yo = item[1];
    x = nb::isinstance<Tensor>(xo) ? nb::cast<Tensor>(xo) : tensor_from_data(xo, std::nullopt);
    y = nb::isinstance<Tensor>(yo) ? nb::cast<Tensor>(yo) : tensor_from_data(yo, std::nullopt);
    ++it;
    return true;
  };
}

// The batch input a Python model receives as it came from the loader when it is not a tensor (a
// tuple or dict of a multi-input model): the engine then carries an undefined input tensor.
using RawInput = std::shared_ptr<nb::object>;

// A fresh pass over a Python iterable of (input, target) pairs each time it is called. With `raw`
// (a Python model), a non-tensor input goes to the model untouched instead of being converted.
std::function<st::optim::TrainingEngine::BatchSource()> batch_sources(nb::object loader, RawInput raw = nullptr) {
  return [loader, raw]() -> st::optim::TrainingEngine::BatchSource {
    auto it = std::make_shared<nb::iterator>(nb::iter(loader));
    return [it, raw](Tensor& x, Tensor& y) {
      if (!raw) return batch_source(*it)(x, y);
      if (*it == nb::iterator::sentinel()) return false;
      nb::handle item = **it;
      nb::object xo = item[0], yo = item[1];
      if (nb::isinstance<Tensor>(xo)) {
        x = nb::cast<Tensor>(xo);
        *raw = nb::none();
      } else {
        x = Tensor();
        *raw = xo;
      }
      y = nb::isinstance<Tensor>(yo) ? nb::cast<Tensor>(yo) : tensor_from_data(yo, std::nullopt);
      ++*it;
      return true;
    };
  };
}

// True for an instance of a class bound here (not a Python subclass, which may override methods).
bool exactly_native(nb::handle obj) {
  const nb::object module = nb::getattr(obj.type(), "__module__", nb::none());
  return nb::isinstance<nb::str>(module) && nb::cast<std::string>(module).starts_with("spiraltorch._core");
}

// A model defined in Python (a callable, or a Module subclass with its own forward): given a
// non-tensor batch input as it came.
bool python_model(nb::handle model) { return !exactly_native(model); }

// nn.fit's step parts from Python objects: native modules, losses and optimizers run in C++,
// anything else (a Python callable, a Python optimizer) is called through Python.
// `raw`: where batch_sources(loader, raw) leaves a non-tensor input for a Python model.
st::optim::StepParts fit_parts(nb::object model, nb::object loss, nb::object optimizer, RawInput raw = nullptr) {
  st::optim::StepParts parts;
  st::nn::Module* module = nullptr;
  if (nb::try_cast(model, module) && module) {
    // The native call runs a Python subclass's forward and the module's hooks.
    parts.forward = [model, module, raw](const Tensor& x) {
      return x.defined() || !raw ? (*module)(x) : nb::cast<Tensor>(model(*raw));
    };
    parts.set_training = [model, module](bool training) {
      const bool was = module->is_training();
      module->train(training);
      return was;
    };
  } else {
    parts.forward = [model, raw](const Tensor& x) {
      return nb::cast<Tensor>(x.defined() || !raw ? model(x) : model(*raw));
    };
    parts.set_training = [model](bool training) {
      const bool was = nb::cast<bool>(nb::getattr(model, "training", nb::bool_(true)));
      model.attr("train")(training);
      return was;
    };
  }
  st::nn::Loss* native_loss = nullptr;
  if (exactly_native(loss) && nb::try_cast(loss, native_loss) && native_loss) {
    parts.loss = [loss, native_loss](const Tensor& p, const Tensor& t) { return (*native_loss)(p, t); };
  } else {
    parts.loss = [loss](const Tensor& p, const Tensor& t) { return nb::cast<Tensor>(loss(p, t)); };
  }
  st::optim::Optimizer* opt = nullptr;
  const bool base_step =
      nb::getattr(optimizer.type(), "step", nb::none()).is(nb::getattr(nb::type<st::optim::Optimizer>(), "step"));
  if (exactly_native(optimizer) && base_step && nb::try_cast(optimizer, opt) && opt) {
    parts.zero_grad = [optimizer, opt] { opt->zero_grad(true); };
    parts.update = [optimizer, opt](st::optim::StepReport&) { return static_cast<bool>(opt->step()); };
  } else {
    parts.zero_grad = [optimizer] { optimizer.attr("zero_grad")(); };
    // False, or a StepResult whose verdict is False (None: an optimizer without one).
    parts.update = [optimizer](st::optim::StepReport&) {
      const nb::object r = optimizer.attr("step")();
      return r.is_none() || nb::cast<bool>(nb::bool_(r));
    };
  }
  return parts;
}

nb::object optional_float(const std::optional<double>& v) { return v ? nb::cast(*v) : nb::none(); }

nb::dict epoch_report(const st::optim::EpochReport& e) {
  nb::dict d;
  d["epoch"] = e.epoch;
  d["train_loss"] = e.average_loss;
  d["seconds"] = e.seconds;
  d["val_loss"] = optional_float(e.val_loss);
  d["val_accuracy"] = optional_float(e.val_accuracy);
  d["skipped_steps"] = e.skipped_steps;
  d["batches"] = e.batches;
  d["samples"] = e.samples;
  d["score"] = e.score;
  d["improved"] = e.improved;
  return d;
}

// Signature-only names for the stubs (plain Python objects at run time).
using LossArg = nb::typed<nb::object, nb::typed<nb::callable, Tensor(Tensor, Tensor)>>;
using BatchesArg = nb::typed<nb::handle, nb::typed<nb::iterable, std::tuple<Tensor, Tensor>>>;
using PathArg = nb::typed<nb::handle, std::filesystem::path>;

ModuleTrainer::Loss loss_fn(nb::object loss) {
  return [loss](const Tensor& pred, const Tensor& target) { return nb::cast<Tensor>(loss(pred, target)); };
}

nb::dict bands(const std::array<double, 3>& e) {
  nb::dict d;
  d["above"] = e[0];
  d["here"] = e[1];
  d["beneath"] = e[2];
  return d;
}

}  // namespace

void bind_train(nb::module_& nn) {
  nb::class_<RoundtableConfig>(nn, "RoundtableConfig",
                               "Band sizes of the roundtable split. band_weights scale the Above/Here/Beneath "
                               "gradient bands (a heuristic; the default (1, 1, 1) is plain gradient descent).")
      .def("__init__",
           [](RoundtableConfig* c, int64_t top_k, int64_t mid_k, int64_t bottom_k, double tol,
              std::array<double, 3> weights) {
    new (c) RoundtableConfig{top_k, mid_k, bottom_k, tol, weights};
    c->validate();
  },
           nb::kw_only(), nb::arg("top_k") = 8, nb::arg("mid_k") = 8, nb::arg("bottom_k") = 8,
           nb::arg("here_tolerance") = 1e-5, nb::arg("band_weights") = std::array<double, 3>{1.0, 1.0, 1.0})
      .def_ro("top_k", &RoundtableConfig::top_k, "How many of the largest |g| entries form the Above band.")
      .def_ro("mid_k", &RoundtableConfig::mid_k, "The Here band's nominal size (Here is what Above/Beneath leave).")
      .def_ro("bottom_k", &RoundtableConfig::bottom_k, "How many of the smallest remaining |g| entries form Beneath.")
      .def_ro("here_tolerance", &RoundtableConfig::here_tolerance, "Entries with |g| <= this are always Here.")
      .def_ro("band_weights", &RoundtableConfig::band_weights, "Gradient scale of the (Above, Here, Beneath) bands.")
      .def("__repr__", [](const RoundtableConfig& c) {
    return "RoundtableConfig(top_k=" + std::to_string(c.top_k) + ", mid_k=" + std::to_string(c.mid_k) +
           ", bottom_k=" + std::to_string(c.bottom_k) + ", here_tolerance=" + std::to_string(c.here_tolerance) + ")";
  });

  nb::class_<RoundtableSchedule>(nn, "RoundtableSchedule",
                                 "Splits an output gradient into bands by rank of |g| over the flattened gradient: "
                                 "Above = the above_k largest, Beneath = the beneath_k smallest of the rest, Here = "
                                 "the others (and every |g| <= here_tolerance). Made by ModuleTrainer.roundtable().")
      .def("above_k", &RoundtableSchedule::above_k, "The Above band's size (top_k clamped to [1, cols]).")
      .def("here_k", &RoundtableSchedule::here_k, "The Here band's nominal size (mid_k clamped to [1, cols]).")
      .def("beneath_k", &RoundtableSchedule::beneath_k, "The Beneath band's size (bottom_k clamped to [1, cols]).")
      .def("band_energy",
           [](const RoundtableSchedule& s, const Tensor& g) {
    const auto e = s.band_energy(g);
    return std::make_tuple(e[0], e[1], e[2]);
  }, nb::arg("gradient"), "Sum of |g| in each band: (above, here, beneath).")
      .def("classify",
           [](const RoundtableSchedule& s, const Tensor& g) {
    static const char* names[] = {"above", "here", "beneath"};
    std::vector<std::string> out;
    for (Band b : s.classify(g)) out.emplace_back(names[static_cast<int>(b)]);
    return out;
  }, nb::arg("gradient"),
           "The band of every element of the flattened gradient: 'above', 'here' or 'beneath' (ties: larger |g|, "
           "then lower index, ranks higher).")
      .def("weight_mask", &RoundtableSchedule::weight_mask, nb::arg("gradient"),
           "A tensor shaped like gradient holding each element's band weight (config.band_weights).")
      .def("__repr__", [](const RoundtableSchedule& s) {
    return "RoundtableSchedule(above_k=" + std::to_string(s.above_k()) + ", here_k=" + std::to_string(s.here_k()) +
           ", beneath_k=" + std::to_string(s.beneath_k()) + ")";
  });

  nb::class_<EpochStats>(nn, "EpochStats", "What one epoch did; average_loss is the plain mean of batch losses.")
      .def_ro("batches", &EpochStats::batches,
              "Batches that counted: updated ones in train_epoch (skipped ones are in skipped_steps), all in "
              "evaluate_epoch.")
      .def_ro("total_loss", &EpochStats::total_loss, "Sum of the losses of the counted batches.")
      .def_ro("average_loss", &EpochStats::average_loss, "total_loss / batches: the plain mean of the batch losses.")
      .def_ro("skipped_steps", &EpochStats::skipped_steps,
              "Batches whose loss or gradients were not finite (nothing was updated for them).")
      .def_ro("seconds", &EpochStats::seconds, "Wall-clock time of the epoch.")
      .def_prop_ro("band_energy", [](const EpochStats& s) { return bands(s.band_energy); },
                   nb::sig("def band_energy(self) -> dict[str, float]"),
                   "Sum of |g| per roundtable band over the epoch: {'above', 'here', 'beneath'}.")
      .def_prop_ro("desire_summary",
                   [](const EpochStats& s) -> nb::object {
    return s.desire_summary ? nb::cast(*s.desire_summary) : nb::none();
  }, nb::sig("def desire_summary(self) -> dict[str, float] | None"),
                   "The desire trainer bridge's summary drained at the end of the epoch, or None.")
      .def_prop_ro("desire_multipliers", [](const EpochStats& s) { return bands(s.desire_multipliers); },
                   nb::sig("def desire_multipliers(self) -> dict[str, float]"),
                   "The band multipliers (above, here, beneath) from the desire roundtable bridge last applied.")
      .def("__repr__", [](const EpochStats& s) {
    return "EpochStats(batches=" + std::to_string(s.batches) + ", total_loss=" + std::to_string(s.total_loss) +
           ", average_loss=" + std::to_string(s.average_loss) + ", skipped_steps=" + std::to_string(s.skipped_steps) +
           ")";
  });

  nb::class_<CurvatureScheduler>(nn, "CurvatureScheduler",
                                 "Proportional controller moving the curvature toward a target mean |grad|.")
      .def("__init__",
           [](CurvatureScheduler* s, std::optional<double> initial, double min_c, double max_c, double target,
              double step, double tol, double smoothing, double gain) {
    new (s) CurvatureScheduler(CurvatureScheduler::Options{initial, min_c, max_c, target, step, tol, smoothing, gain});
  },
           nb::kw_only(), nb::arg("initial") = nb::none(), nb::arg("min_curvature") = -1.5,
           nb::arg("max_curvature") = -0.2, nb::arg("target_pressure") = 0.05, nb::arg("step") = 0.05,
           nb::arg("tolerance") = 0.05, nb::arg("smoothing") = 0.2, nb::arg("proportional_gain") = 1.0)
      .def_prop_ro("current", &CurvatureScheduler::current, "The current curvature (negative).")
      .def_prop_ro("last_pressure", &CurvatureScheduler::last_pressure,
                   "The smoothed pressure (EMA of observed mean |g|), or None before the first observation.")
      .def("sync", &CurvatureScheduler::sync, nb::arg("curvature"),
           "Sets the curvature (clamped into [min_curvature, max_curvature]) and restarts the pressure history.")
      .def("observe_pressure",
           [](CurvatureScheduler& s, double p) {
    const auto d = s.observe_pressure(p);
    nb::dict out;
    out["raw_pressure"] = d.raw_pressure;
    out["smoothed_pressure"] = d.smoothed_pressure;
    out["curvature"] = d.curvature;
    out["changed"] = d.changed;
    return out;
  }, nb::sig("def observe_pressure(self, pressure: float) -> dict[str, float | bool]"), nb::arg("pressure"),
           "Smooths pressure (ema += smoothing * (p - ema)); when |ema - target_pressure| > tolerance moves the "
           "curvature by proportional_gain * error clamped to +-step and to the bounds. Returns {'raw_pressure', "
           "'smoothed_pressure', 'curvature', 'changed'}. ValueError for a non-finite pressure.");

  nb::class_<SpectralLearningRatePolicy>(nn, "SpectralLearningRatePolicy",
                                         "Heuristic LR scale from roundtable band energies: (target / smoothed "
                                         "above-share)^gain, clamped to lr_bounds and moved by at most max_lr_step "
                                         "per batch. Off unless passed to enable_spectral_learning_rate.")
      .def("__init__",
           [](SpectralLearningRatePolicy* p, double smoothing, double target, double gain,
              std::pair<double, double> bounds, double max_step) {
    new (p) SpectralLearningRatePolicy({smoothing, target, gain, bounds.first, bounds.second, max_step});
  },
           nb::kw_only(), nb::arg("smoothing") = 0.2, nb::arg("target_concentration") = 0.5, nb::arg("gain") = 0.5,
           nb::arg("lr_bounds") = std::make_pair(0.1, 6.0), nb::arg("max_lr_step") = 1.4)
      .def("observe", [](SpectralLearningRatePolicy& p, double a, double h, double b) { return p.observe({a, h, b}); },
           nb::arg("above"), nb::arg("here"), nb::arg("beneath"),
           "Observes one batch's band energies and returns the learning-rate scale for that batch.")
      .def_prop_ro("last_scale", &SpectralLearningRatePolicy::last_scale, "The scale the last observe() returned.")
      .def_prop_ro("concentration", &SpectralLearningRatePolicy::concentration,
                   "The smoothed above / (above + here + beneath) share, or None before the first observe().");

  nb::class_<ModuleTrainer>(nn, "ModuleTrainer",
                            "Native training loop: Riemannian (Poincare-ball) steps for modules with an attached "
                            "hypergrad, plain SGD with fallback_learning_rate for the rest. backend: 'cpu' or "
                            "'auto' (the CPU), 'cuda' / 'cuda:N' or 'wgpu' (DeviceUnavailableError with the reason "
                            "where that device is not usable).\n\n"
                            "Example: trainer = st.nn.ModuleTrainer(fallback_learning_rate=0.05); stats = "
                            "trainer.train_epoch(model, lambda p, t: ((p - t) ** 2).mean(), [(x, y)], "
                            "trainer.roundtable(x.shape[0], y.shape[1]))")
      .def(nb::init<std::string, double, double, double>(), nb::kw_only(), nb::arg("backend") = "cpu",
           nb::arg("curvature") = -1.0, nb::arg("hyper_learning_rate") = 1e-2, nb::arg("fallback_learning_rate") = 1e-2)
      .def("roundtable",
           [](const ModuleTrainer& t, int64_t rows, int64_t cols, std::optional<RoundtableConfig> cfg) {
    return t.roundtable(rows, cols, cfg.value_or(RoundtableConfig{}));
  }, nb::arg("rows"), nb::arg("cols"), nb::arg("config") = nb::none(),
           "The roundtable schedule for outputs of shape (rows, cols) (config defaults to RoundtableConfig()).")
      .def("train_epoch",
           [](ModuleTrainer& t, st::nn::Module& model, LossArg loss, BatchesArg batches,
              const RoundtableSchedule& schedule) {
    nb::iterator it = nb::iter(batches);
    return t.train_epoch(model, loss_fn(loss), batch_source(it), schedule);
  },
           nb::arg("model"), nb::arg("loss"), nb::arg("batches"), nb::arg("schedule"),
           "One pass over batches ((input, target) pairs of tensors or array-likes): forward, loss(prediction, "
           "target), backward, roundtable band weighting of the output gradient, then one update per batch "
           "(batches with a non-finite loss or gradient are skipped and counted). Moves model and batches to the "
           "backend's device. Returns EpochStats.")
      .def("evaluate_epoch",
           [](ModuleTrainer& t, st::nn::Module& model, LossArg loss, BatchesArg batches) {
    nb::iterator it = nb::iter(batches);
    return t.evaluate_epoch(model, loss_fn(loss), batch_source(it));
  }, nb::arg("model"), nb::arg("loss"), nb::arg("batches"),
           "The mean loss over batches without gradients or updates; returns EpochStats.")
      .def("prepare", &ModuleTrainer::prepare, nb::arg("model"),
           "Attaches a hypergrad (the trainer's curvature and hyper_learning_rate) to every parameter of model.")
      .def("zero", &ModuleTrainer::zero, nb::arg("model"), "Clears the gradients of model's parameters.")
      .def("step", &ModuleTrainer::step, nb::arg("model"),
           "Applies one update from .grad; returns False (and changes nothing) if a gradient is not finite.")
      .def("enable_desire_telemetry", &ModuleTrainer::enable_desire_telemetry, nb::arg("bundle"),
           "Each batch's roundtable band weights are multiplied by the bundle's roundtable impulse (above, here, "
           "beneath); each epoch drains its trainer bridge into EpochStats.desire_summary.")
      .def("disable_desire_telemetry", &ModuleTrainer::disable_desire_telemetry, "Undoes enable_desire_telemetry.")
      .def_prop_ro("desire_telemetry_enabled", [](const ModuleTrainer& t) { return t.desire_telemetry().has_value(); },
                   "True while a desire telemetry bundle is attached.")
      .def("enable_realgrad", &ModuleTrainer::enable_realgrad, nb::arg("learning_rate"),
           "A Euclidean step of learning_rate: parameters without a hypergrad use it instead of "
           "fallback_learning_rate, those with one take it after their Riemannian step (then clipped into the "
           "ball). ValueError unless positive and finite.")
      .def("disable_realgrad", &ModuleTrainer::disable_realgrad, "Undoes enable_realgrad.")
      .def("set_grad_clip_max_norm", &ModuleTrainer::set_grad_clip_max_norm, nb::arg("max_norm"),
           "Clips the joint gradient norm to max_norm before every update (ValueError unless finite and > 0).")
      .def("clear_grad_clip_max_norm", &ModuleTrainer::clear_grad_clip_max_norm, "Stops gradient clipping.")
      .def("enable_curvature_scheduler", &ModuleTrainer::enable_curvature_scheduler, nb::arg("scheduler"),
           "Syncs scheduler to the trainer's curvature; then each batch feeds it the mean |grad| over the "
           "parameters, and a curvature it moves becomes the trainer's and the attached hypergrads'.")
      .def("disable_curvature_scheduler", &ModuleTrainer::disable_curvature_scheduler,
           "Keeps the current curvature fixed from now on.")
      .def("curvature_metrics",
           [](const ModuleTrainer& t) -> nb::object {
    if (!t.curvature_scheduler() || !t.curvature_scheduler()->last_pressure()) return nb::none();
    nb::dict d;
    d["smoothed_pressure"] = *t.curvature_scheduler()->last_pressure();
    d["curvature"] = t.curvature();
    return d;
  }, nb::sig("def curvature_metrics(self) -> dict[str, float] | None"),
           "{'smoothed_pressure', 'curvature'} from the curvature scheduler, or None before it observed a batch.")
      .def("enable_spectral_learning_rate",
           [](ModuleTrainer& t, std::optional<SpectralLearningRatePolicy> p) {
    t.enable_spectral_learning_rate(p.value_or(SpectralLearningRatePolicy({})));
  }, nb::arg("policy") = nb::none(),
           "Scales each batch's learning rates by policy.observe(band energies) (default policy when None).")
      .def("disable_spectral_learning_rate", &ModuleTrainer::disable_spectral_learning_rate,
           "Back to unscaled learning rates.")
      .def("spectral_metrics",
           [](const ModuleTrainer& t) -> nb::object {
    if (!t.spectral_policy() || !t.spectral_policy()->concentration()) return nb::none();
    nb::dict d;
    d["concentration"] = *t.spectral_policy()->concentration();
    d["lr_scale"] = t.spectral_policy()->last_scale();
    return d;
  }, nb::sig("def spectral_metrics(self) -> dict[str, float] | None"),
           "{'concentration', 'lr_scale'} from the spectral policy, or None before it observed a batch.")
      .def("mul_learning_rate", &ModuleTrainer::mul_learning_rate, nb::arg("model"), nb::arg("factor"),
           "Multiplies every learning rate (the trainer's and those of model's attached hypergrads) by factor.")
      .def_prop_ro("requested_backend", &ModuleTrainer::requested_backend,
                   "The backend asked for ('cpu', 'auto', ...).")
      .def_prop_ro("backend", &ModuleTrainer::requested_backend, "Same as requested_backend.")
      .def_prop_ro("effective_backend", &ModuleTrainer::effective_backend, "The device backend training runs on.")
      .def_prop_ro("curvature", &ModuleTrainer::curvature, "The Poincare-ball curvature of hypergrad steps (< 0).")
      .def_prop_ro("hyper_learning_rate", &ModuleTrainer::hyper_learning_rate,
                   "The Riemannian step size of parameters with a hypergrad.")
      .def_prop_ro("fallback_learning_rate", &ModuleTrainer::fallback_learning_rate,
                   "The SGD step size of parameters without a hypergrad.")
      .def_prop_ro("real_learning_rate", &ModuleTrainer::real_learning_rate,
                   "The realgrad rate set by enable_realgrad, or None.")
      .def_prop_ro("grad_clip_max_norm", &ModuleTrainer::grad_clip_max_norm, "The clipping norm, or None.")
      .def_prop_ro("epoch", &ModuleTrainer::epoch, "train_epoch calls so far (the number of the current epoch).")
      .def_prop_ro("steps", &ModuleTrainer::steps,
                   "Batches train_epoch has taken, across epochs (skipped ones included).")
      .def("set_trace",
           [](ModuleTrainer& t, PathArg path, bool append, bool overwrite) {
    t.set_trace(
        std::make_shared<st::io::TraceWriter>(fs_path(path), "ModuleTrainer", st::io::trace_mode(append, overwrite)));
  }, nb::arg("path"), nb::kw_only(), nb::arg("append") = false, nb::arg("overwrite") = false,
           "Writes a JSONL trace (docs/traces.md) to path (an existing file is refused unless append=True or "
           "overwrite=True): a \"step\" event per batch, "
           "an \"epoch\" event per train_epoch, an \"eval\" event per evaluate_epoch.")
      .def("clear_trace", [](ModuleTrainer& t) { t.set_trace(nullptr); }, "Stops tracing (closes the file).")
      .def_prop_ro("trace_path",
                   [](const ModuleTrainer& t) -> std::optional<std::string> {
    if (!t.trace()) return std::nullopt;
    return t.trace()->path();
  }, "The trace file, or None when not tracing.")
      .def_prop_ro("trace_errors", &ModuleTrainer::trace_errors, "Trace writes that failed (the training went on).");

  // nn.fit and nn.evaluate: the C++ training engine over Python objects (spiraltorch/nn/fit.py is the glue).
  nn.def("_fit",
         [](nb::object model, nb::object loss, nb::object optimizer, nb::object train_loader, int64_t epochs,
            nb::object val_loader, nb::object scheduler, nb::object on_epoch_start, nb::object on_epoch_end) {
    st::optim::TrainingEngine::Options o;
    o.source = "fit";
    if (!scheduler.is_none()) o.scheduler_step = [scheduler] { scheduler.attr("step")(); };
    if (!on_epoch_start.is_none()) o.on_epoch_start = [on_epoch_start](int64_t epoch) { on_epoch_start(epoch); };
    if (!on_epoch_end.is_none()) {
      o.on_epoch_end.push_back([on_epoch_end](const st::optim::EpochReport& e) {
        return nb::cast<bool>(nb::bool_(on_epoch_end(epoch_report(e))));
      });
    }
    st::optim::TrainingEngine engine(std::move(o));
    const RawInput raw = python_model(model) ? std::make_shared<nb::object>() : nullptr;
    const auto report = engine.fit(fit_parts(model, loss, optimizer, raw), epochs, batch_sources(train_loader, raw),
                                   val_loader.is_none() ? nullptr : batch_sources(val_loader, raw));
    return report.stopped_early;
  },
         nb::arg("model"), nb::arg("loss"), nb::arg("optimizer"), nb::arg("train_loader"), nb::arg("epochs"),
         nb::arg("val_loader").none(), nb::arg("scheduler").none(), nb::arg("on_epoch_start").none(),
         nb::arg("on_epoch_end").none(),
         "nn.fit's loop: the training engine's fit over (input, target) batches; on_epoch_end(report dict) returning "
         "True stops. Returns whether it stopped early.");
  nn.def("_evaluate",
         [](nb::object model, nb::object loss, nb::object loader) {
    const RawInput raw = python_model(model) ? std::make_shared<nb::object>() : nullptr;
    st::optim::StepParts parts = fit_parts(model, loss, nb::none(), raw);
    st::optim::TrainingEngine engine([] {
      st::optim::TrainingEngine::Options o;
      o.source = "evaluate";
      return o;
    }());
    const st::optim::EpochReport e = engine.evaluate(parts, batch_sources(loader, raw)());
    nb::dict d;
    d["loss"] = e.batches ? nb::cast(e.average_loss) : nb::none();
    d["accuracy"] = optional_float(e.accuracy);
    return d;
  }, nb::arg("model"), nb::arg("loss"), nb::arg("loader"),
         "nn.evaluate's loop: the engine's mean loss and accuracy (integer targets, (N, C) predictions).");

  using Stop = st::optim::EarlyStopping;
  nb::class_<Stop>(nn, "_EarlyStopping", "The training engine's early stopping (nn.EarlyStopping wraps it).")
      .def("__init__",
           [](Stop* s, int64_t patience, double min_delta, const std::string& monitor) {
    if (monitor != "val_loss" && monitor != "train_loss") {
      throw st::ValueError("EarlyStopping: monitor must be 'val_loss' or 'train_loss', got '" + monitor + "'");
    }
    new (s) Stop(patience, min_delta, monitor == "val_loss" ? Stop::Monitor::ValLoss : Stop::Monitor::TrainLoss);
  }, nb::arg("patience"), nb::arg("min_delta"), nb::arg("monitor"))
      .def("observe", nb::overload_cast<double>(&Stop::observe), nb::arg("value"),
           "Observes an epoch's monitored value; True when training should stop.")
      .def_prop_ro("best", &Stop::best)
      .def_prop_ro("stale", &Stop::stale)
      .def_prop_ro("patience", &Stop::patience)
      .def_prop_ro("min_delta", &Stop::min_delta);
}

}  // namespace stpy
