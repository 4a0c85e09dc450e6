// The adaptive-step optimizers (Adamax, NAdam, RAdam, Adadelta, Rprop, ASGD), LBFGS and
// torch.optim.lr_scheduler's schedules (MultiStepLR ... ReduceLROnPlateau), bound into spiraltorch._core.optim. The
// updates and schedules are C++ (include/spiraltorch/optim/); this file only converts arguments.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>

#include <utility>

#include "convert.h"
#include "optim_args.h"
#include "spiraltorch/optim/adadelta.h"
#include "spiraltorch/optim/adamax.h"
#include "spiraltorch/optim/asgd.h"
#include "spiraltorch/optim/lbfgs.h"
#include "spiraltorch/optim/lr_schedulers.h"
#include "spiraltorch/optim/nadam.h"
#include "spiraltorch/optim/radam.h"
#include "spiraltorch/optim/rprop.h"

namespace stpy {

using namespace st::optim;

std::vector<ParamGroup> optim_groups_from_py(nb::handle params);  // python/src/optim.cpp

namespace {

std::pair<double, double> pair_of(nb::handle h, const char* what) {
  nb::sequence seq = nb::borrow<nb::sequence>(h);
  if (nb::len(seq) != 2) throw st::ValueError(std::string(what) + " must be a pair of floats");
  return {nb::cast<double>(seq[0]), nb::cast<double>(seq[1])};
}

// A Python callable epoch -> factor as a C++ schedule function (called with the GIL held:
// schedules step from Python).
LrLambda lambda_of(nb::handle f, const char* who) {
  if (!PyCallable_Check(f.ptr())) {
    throw st::DtypeError(
        std::string(who) + ": lr_lambda must be callable, got " +
        nb::cast<std::string>(nb::str(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(f.ptr()))).attr("__name__"))));
  }
  nb::object fn = nb::borrow(f);
  const std::string name = who;
  return [fn, name](int64_t epoch) {
    nb::object r = fn(epoch);
    if (!PyNumber_Check(r.ptr()) || PyBool_Check(r.ptr())) {
      throw st::DtypeError(name + ": lr_lambda(" + std::to_string(epoch) + ") returned " +
                           nb::cast<std::string>(nb::type_name(r.type())) + ", expected a number");
    }
    return nb::cast<double>(nb::float_(r));
  };
}

std::vector<LrLambda> lambdas_of(nb::handle h, const char* who) {
  std::vector<LrLambda> out;
  if (nb::isinstance<nb::list>(h) || nb::isinstance<nb::tuple>(h)) {
    for (nb::handle f : h) out.push_back(lambda_of(f, who));
  } else {
    out.push_back(lambda_of(h, who));
  }
  return out;
}

double metric_value(nb::handle h) {
  if (nb::isinstance<Tensor>(h)) return nb::cast<Tensor>(h).item();
  return nb::cast<double>(nb::module_::import_("builtins").attr("float")(h));
}

}  // namespace

void bind_optim_adaptive_lbfgs_schedules(nb::module_& m) {
  // ---- optimizers ----
  nb::class_<Adamax, Optimizer>(m, "Adamax", "torch.optim.Adamax: Adam with the infinity norm.")
      .def("__init__",
           [](Adamax* self, ParamsArg params, double lr, FloatPairArg betas, double eps, double weight_decay,
              bool maximize) {
    auto [b1, b2] = pair_of(betas, "Adamax: betas");
    new (self) Adamax(optim_groups_from_py(params), lr, b1, b2, eps, weight_decay, maximize);
  },
           nb::arg("params"), nb::arg("lr") = 2e-3, nb::arg("betas") = nb::make_tuple(0.9, 0.999),
           nb::arg("eps") = 1e-8, nb::arg("weight_decay") = 0.0, nb::kw_only(), nb::arg("maximize") = false);
  nb::class_<NAdam, Optimizer>(m, "NAdam", "torch.optim.NAdam: Adam with Nesterov momentum and a momentum schedule.")
      .def("__init__",
           [](NAdam* self, ParamsArg params, double lr, FloatPairArg betas, double eps, double weight_decay,
              double momentum_decay, bool decoupled_weight_decay, bool maximize) {
    auto [b1, b2] = pair_of(betas, "NAdam: betas");
    new (self) NAdam(optim_groups_from_py(params), lr, b1, b2, eps, weight_decay, momentum_decay,
                     decoupled_weight_decay, maximize);
  },
           nb::arg("params"), nb::arg("lr") = 2e-3, nb::arg("betas") = nb::make_tuple(0.9, 0.999),
           nb::arg("eps") = 1e-8, nb::arg("weight_decay") = 0.0, nb::arg("momentum_decay") = 4e-3,
           nb::arg("decoupled_weight_decay") = false, nb::kw_only(), nb::arg("maximize") = false);
  nb::class_<RAdam, Optimizer>(m, "RAdam", "torch.optim.RAdam: rectified Adam.")
      .def("__init__",
           [](RAdam* self, ParamsArg params, double lr, FloatPairArg betas, double eps, double weight_decay,
              bool decoupled_weight_decay, bool maximize) {
    auto [b1, b2] = pair_of(betas, "RAdam: betas");
    new (self) RAdam(optim_groups_from_py(params), lr, b1, b2, eps, weight_decay, decoupled_weight_decay, maximize);
  },
           nb::arg("params"), nb::arg("lr") = 1e-3, nb::arg("betas") = nb::make_tuple(0.9, 0.999),
           nb::arg("eps") = 1e-8, nb::arg("weight_decay") = 0.0, nb::arg("decoupled_weight_decay") = false,
           nb::kw_only(), nb::arg("maximize") = false);
  nb::class_<Adadelta, Optimizer>(m, "Adadelta", "torch.optim.Adadelta.")
      .def("__init__",
           [](Adadelta* self, ParamsArg params, double lr, double rho, double eps, double weight_decay, bool maximize) {
    new (self) Adadelta(optim_groups_from_py(params), lr, rho, eps, weight_decay, maximize);
  }, nb::arg("params"), nb::arg("lr") = 1.0, nb::arg("rho") = 0.9, nb::arg("eps") = 1e-6, nb::arg("weight_decay") = 0.0,
           nb::kw_only(), nb::arg("maximize") = false);
  nb::class_<Rprop, Optimizer>(m, "Rprop", "torch.optim.Rprop: sign-based steps with per-element step sizes.")
      .def("__init__",
           [](Rprop* self, ParamsArg params, double lr, FloatPairArg etas, FloatPairArg step_sizes, bool maximize) {
    auto [em, ep] = pair_of(etas, "Rprop: etas");
    auto [lo, hi] = pair_of(step_sizes, "Rprop: step_sizes");
    new (self) Rprop(optim_groups_from_py(params), lr, em, ep, lo, hi, maximize);
  }, nb::arg("params"), nb::arg("lr") = 1e-2, nb::arg("etas") = nb::make_tuple(0.5, 1.2),
           nb::arg("step_sizes") = nb::make_tuple(1e-6, 50.0), nb::kw_only(), nb::arg("maximize") = false);

  nb::class_<ASGD, Optimizer>(m, "ASGD", "torch.optim.ASGD: averaged SGD (the average is the state's 'ax').")
      .def("__init__",
           [](ASGD* self, ParamsArg params, double lr, double lambd, double alpha, double t0, double weight_decay,
              bool maximize) {
    new (self) ASGD(optim_groups_from_py(params), lr, lambd, alpha, t0, weight_decay, maximize);
  },
           nb::arg("params"), nb::arg("lr") = 1e-2, nb::arg("lambd") = 1e-4, nb::arg("alpha") = 0.75,
           nb::arg("t0") = 1e6, nb::arg("weight_decay") = 0.0, nb::kw_only(), nb::arg("maximize") = false);

  nb::class_<LBFGS, Optimizer>(
      m, "LBFGS",
      "torch.optim.LBFGS: limited-memory BFGS over all parameters (one group); step(closure) runs up to max_iter "
      "iterations, calling closure (zero_grad, forward, backward, return the loss) as needed, and returns the "
      "first loss. line_search_fn=None or 'strong_wolfe'.")
      .def("__init__",
           [](LBFGS* self, ParamsArg params, double lr, int64_t max_iter, std::optional<int64_t> max_eval,
              double tolerance_grad, double tolerance_change, int64_t history_size,
              nb::typed<nb::handle, std::optional<std::string>> line_search_fn) {
    const std::string ls = line_search_fn.is_none() ? std::string() : nb::cast<std::string>(line_search_fn);
    new (self) LBFGS(optim_groups_from_py(params), lr, max_iter, max_eval.value_or(-1), tolerance_grad,
                     tolerance_change, history_size, ls);
  },
           nb::arg("params"), nb::arg("lr") = 1.0, nb::arg("max_iter") = 20, nb::arg("max_eval").none() = nb::none(),
           nb::arg("tolerance_grad") = 1e-7, nb::arg("tolerance_change") = 1e-9, nb::arg("history_size") = 100,
           nb::arg("line_search_fn").none() = nb::none())
      .def("step",
           [](LBFGS& o, nb::object closure) -> nb::object {
    if (closure.is_none()) throw st::ValueError("LBFGS: step() needs a closure that recomputes the loss");
    nb::object first;
    auto call = [&]() -> double {
      nb::object r = closure();
      if (!first.is_valid()) first = r;
      if (nb::isinstance<Tensor>(r)) return nb::cast<Tensor>(r).item();
      return nb::cast<double>(nb::float_(r));
    };
    o.step(call);
    return first;
  },
           nb::sig(
               "def step(self, closure: collections.abc.Callable[[], spiraltorch._core.Tensor | float] | None = None) "
               "-> spiraltorch._core.Tensor | float"),
           nb::arg("closure").none() = nb::none(),
           "Runs up to max_iter LBFGS iterations, calling closure (zero_grad, forward, backward, return the loss) "
           "as needed; returns what the first closure call returned (the loss before the update). ValueError "
           "without a closure.");

  // ---- schedules ----
  using Opt = std::shared_ptr<Optimizer>;
  using Scheds = std::vector<std::shared_ptr<LRScheduler>>;
  nb::class_<MultiStepLR, LRScheduler>(m, "MultiStepLR",
                                       "lr = base_lr * gamma ** (number of milestones <= epoch); chainable.")
      .def(nb::init<Opt, std::vector<int64_t>, double>(), nb::arg("optimizer"), nb::arg("milestones"),
           nb::arg("gamma") = 0.1)
      .def_prop_ro("milestones", &MultiStepLR::milestones,
                   "The sorted epochs at which the rate is multiplied by gamma.");
  nb::class_<ExponentialLR, LRScheduler>(m, "ExponentialLR", "lr = base_lr * gamma ** epoch; chainable.")
      .def(nb::init<Opt, double>(), nb::arg("optimizer"), nb::arg("gamma"));
  nb::class_<LinearLR, LRScheduler>(m, "LinearLR",
                                    "The factor moves linearly from start_factor to end_factor over total_iters "
                                    "epochs, then stays.")
      .def(nb::init<Opt, double, double, int64_t>(), nb::arg("optimizer"), nb::arg("start_factor") = 1.0 / 3.0,
           nb::arg("end_factor") = 1.0, nb::arg("total_iters") = 5);
  nb::class_<ConstantLR, LRScheduler>(m, "ConstantLR",
                                      "lr = base_lr * factor for the first total_iters epochs, then base_lr.")
      .def(nb::init<Opt, double, int64_t>(), nb::arg("optimizer"), nb::arg("factor") = 1.0 / 3.0,
           nb::arg("total_iters") = 5);
  nb::class_<PolynomialLR, LRScheduler>(m, "PolynomialLR",
                                        "lr = base_lr * (1 - min(epoch, total_iters) / total_iters) ** power.")
      .def(nb::init<Opt, int64_t, double>(), nb::arg("optimizer"), nb::arg("total_iters") = 5, nb::arg("power") = 1.0);
  nb::class_<CosineAnnealingWarmRestarts, LRScheduler>(
      m, "CosineAnnealingWarmRestarts",
      "SGDR: cosine annealing to eta_min over T_i epochs, restarting with T_i = T_0 * T_mult ** restarts.")
      .def(nb::init<Opt, int64_t, int64_t, double>(), nb::arg("optimizer"), nb::arg("T_0"), nb::arg("T_mult") = 1,
           nb::arg("eta_min") = 0.0)
      .def_prop_ro("T_cur", &CosineAnnealingWarmRestarts::T_cur, "Epochs since the last restart.")
      .def_prop_ro("T_i", &CosineAnnealingWarmRestarts::T_i, "The length of the current cycle in epochs.");
  nb::class_<LambdaLR, LRScheduler>(m, "LambdaLR",
                                    "lr = base_lr * lr_lambda(epoch), one callable or one per group. The "
                                    "callables are not part of state_dict().")
      .def("__init__", [](LambdaLR* self, Opt opt, LambdaArg lr_lambda) {
    new (self) LambdaLR(std::move(opt), lambdas_of(lr_lambda, "LambdaLR"));
  }, nb::arg("optimizer"), nb::arg("lr_lambda"));
  nb::class_<MultiplicativeLR, LambdaLR>(m, "MultiplicativeLR",
                                         "lr *= lr_lambda(epoch) every epoch after the first (one callable or one "
                                         "per group).")
      .def("__init__", [](MultiplicativeLR* self, Opt opt, LambdaArg lr_lambda) {
    new (self) MultiplicativeLR(std::move(opt), lambdas_of(lr_lambda, "MultiplicativeLR"));
  }, nb::arg("optimizer"), nb::arg("lr_lambda"));
  nb::class_<SequentialLR, LRScheduler>(m, "SequentialLR",
                                        "Runs schedulers[i] from milestones[i-1] on; at a milestone the next one "
                                        "starts from epoch 0.")
      .def(nb::init<Opt, Scheds, std::vector<int64_t>>(), nb::arg("optimizer"), nb::arg("schedulers"),
           nb::arg("milestones"))
      .def_prop_ro("_schedulers", &SequentialLR::schedulers);
  nb::class_<ChainedScheduler, LRScheduler>(m, "ChainedScheduler",
                                            "Steps every scheduler in turn; their chainable rules multiply.")
      .def(nb::init<Scheds, Opt>(), nb::arg("schedulers"), nb::arg("optimizer") = nb::none())
      .def_prop_ro("_schedulers", &ChainedScheduler::schedulers);

  nb::class_<ReduceLROnPlateau>(m, "ReduceLROnPlateau",
                                "Multiplies every group's rate by factor (not below min_lr) once the metric passed "
                                "to step(metric) has not improved for more than patience epochs.")
      .def(
          "__init__",
          [](ReduceLROnPlateau* self, Opt opt, const std::string& mode, double factor, int64_t patience,
             double threshold, const std::string& threshold_mode, int64_t cooldown, FloatOrListArg min_lr, double eps) {
    std::vector<double> min_lrs;
    if (nb::isinstance<nb::list>(min_lr) || nb::isinstance<nb::tuple>(min_lr)) {
      min_lrs = nb::cast<std::vector<double>>(min_lr);
    } else {
      min_lrs.push_back(nb::cast<double>(min_lr));
    }
    new (self) ReduceLROnPlateau(std::move(opt), mode, factor, patience, threshold, threshold_mode, cooldown,
                                 std::move(min_lrs), eps);
  },
          nb::arg("optimizer"), nb::arg("mode") = "min", nb::arg("factor") = 0.1, nb::arg("patience") = 10,
          nb::arg("threshold") = 1e-4, nb::arg("threshold_mode") = "rel", nb::arg("cooldown") = 0,
          nb::arg("min_lr") = 0.0, nb::arg("eps") = 1e-8)
      .def("step",
           [](ReduceLROnPlateau& s, nb::typed<nb::handle, std::variant<double, Tensor>> metrics,
              nb::typed<nb::object, int64_t> epoch) {
    if (!epoch.is_none()) throw st::ValueError("ReduceLROnPlateau.step: the epoch argument is not supported");
    s.step(metric_value(metrics));
  },
           nb::arg("metrics"), nb::arg("epoch") = nb::none(),
           "Records the metric of the epoch that just ended (a number or a 0-d tensor) and reduces the rates when "
           "it has not improved for more than patience epochs. Passing epoch raises ValueError.")
      .def("get_last_lr", &ReduceLROnPlateau::get_last_lr, "The current rate of each parameter group.")
      .def_prop_ro("optimizer", &ReduceLROnPlateau::optimizer, "The optimizer whose rates this schedule sets.")
      .def_prop_ro("last_epoch", &ReduceLROnPlateau::last_epoch, "The number of step(metrics) calls so far.")
      .def_prop_ro("best", &ReduceLROnPlateau::best, "The best metric seen (inf/-inf before the first step).")
      .def_prop_ro("num_bad_epochs", &ReduceLROnPlateau::num_bad_epochs,
                   "Epochs since the metric last improved on best.")
      .def_prop_ro("in_cooldown", &ReduceLROnPlateau::in_cooldown,
                   "True while the cooldown after a reduction is running (bad epochs are not counted).")
      .def_prop_ro("min_lrs", &ReduceLROnPlateau::min_lrs, "The floor of each group's rate.")
      .def("is_better", &ReduceLROnPlateau::is_better, nb::arg("a"), nb::arg("best"),
           "Whether metric a improves on best under the mode and threshold.")
      .def("state_dict",
           [](const ReduceLROnPlateau& s) {
    const PlateauState st = s.state_dict();
    nb::dict d;
    d["last_epoch"] = st.last_epoch;
    d["best"] = st.best;
    d["num_bad_epochs"] = st.num_bad_epochs;
    d["cooldown_counter"] = st.cooldown_counter;
    d["_last_lr"] = nb::cast(st.last_lrs);
    d["min_lrs"] = nb::cast(s.min_lrs());
    d["mode"] = s.mode();
    d["threshold_mode"] = s.threshold_mode();
    for (const auto& [k, v] : s.hyperparameters()) d[k.c_str()] = v;
    d["type"] = "ReduceLROnPlateau";
    return d;
  }, nb::sig("def state_dict(self) -> dict[str, typing.Any]"),
           "{'last_epoch', 'best', 'num_bad_epochs', 'cooldown_counter', '_last_lr', 'min_lrs', 'mode', "
           "'threshold_mode', hyperparameters..., 'type'}.")
      .def("load_state_dict",
           [](ReduceLROnPlateau& s, StateDictArg obj) {
    nb::dict d = nb::borrow<nb::dict>(obj);
    for (const char* k : {"last_epoch", "best", "num_bad_epochs", "cooldown_counter"}) {
      if (!d.contains(k))
        throw st::CheckpointError(std::string("ReduceLROnPlateau.load_state_dict: missing '") + k + "'");
    }
    PlateauState st;
    st.last_epoch = nb::cast<int64_t>(d["last_epoch"]);
    st.best = nb::cast<double>(d["best"]);
    st.num_bad_epochs = nb::cast<int64_t>(d["num_bad_epochs"]);
    st.cooldown_counter = nb::cast<int64_t>(d["cooldown_counter"]);
    if (d.contains("_last_lr")) st.last_lrs = nb::cast<std::vector<double>>(d["_last_lr"]);
    s.load_state_dict(st);
  }, nb::arg("state_dict"),
           "Restores a state_dict(); CheckpointError when 'last_epoch', 'best', 'num_bad_epochs' or "
           "'cooldown_counter' is missing.");
}

}  // namespace stpy
