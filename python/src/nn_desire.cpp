// spiraltorch._core.nn: desire controls — DesirePipeline, DesireTrainerBridge,
// DesireRoundtableBridge, DesireTelemetryBundle.
#include <nanobind/stl/map.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "nn_bind.h"
#include "spiraltorch/nn/desire.h"
#include "spiraltorch/ops.h"

namespace stpy {

namespace {

using namespace st::nn;

// A sequence of numbers or a Tensor as float64 values; matrices (flatten = true) are read row-major.
std::vector<double> as_values(nb::handle h, const char* what, bool flatten = false) {
  if (nb::isinstance<Tensor>(h)) {
    const Tensor t = nb::cast<Tensor>(h);
    if (t.dim() > 1 && !flatten) throw nb::value_error((std::string(what) + " must be 1-d").c_str());
    return st::to_device(st::cast(t.detach(), st::Dtype::Float64), st::Device()).contiguous().to_vector<double>();
  }
  try {
    return nb::cast<std::vector<double>>(h);
  } catch (const nb::cast_error&) {
    throw nb::type_error((std::string(what) + " must be a sequence of numbers or a Tensor").c_str());
  }
}

// Numbers given as a sequence or a Tensor (what as_values reads), for the stubs.
using ValuesArg = nb::typed<nb::handle, std::variant<Tensor, std::vector<double>>>;
using OptSummary = nb::typed<nb::object, std::optional<std::map<std::string, double>>>;

OptSummary opt_dict(const std::optional<std::map<std::string, double>>& m) {
  return OptSummary(m ? nb::cast(*m) : nb::none());
}

nb::dict step_dict(const DesireStep& s) {
  nb::dict d;
  d["step"] = s.step;
  d["phase"] = s.phase;
  d["temperature"] = s.temperature;
  d["next_temperature"] = s.next_temperature;
  d["entropy"] = s.entropy;
  d["base_entropy"] = s.base_entropy;
  nb::dict w;
  w["alpha"] = s.weights.alpha;
  w["beta"] = s.weights.beta;
  w["gamma"] = s.weights.gamma;
  w["lambda"] = s.weights.lambda;
  d["weights"] = w;
  d["probabilities"] = s.probabilities;
  d["logit_offsets"] = s.logit_offsets;
  return d;
}

}  // namespace

void bind_nn_desire(nb::module_& nn) {
  nb::class_<DesireTrainerBridge>(nn, "DesireTrainerBridge",
                                  "Collects the steps of the pipelines it is attached to; drain_summary() returns "
                                  "per-phase counts and mean entropy, temperature and weights since the last drain "
                                  "(None when empty).")
      .def(nb::new_([] { return std::make_shared<DesireTrainerBridge>(); }),
           "An empty bridge; attach it to pipelines (attach_trainer_bridge) to collect their steps.")
      .def("__len__", &DesireTrainerBridge::size, "The number of steps collected since the last drain.")
      .def("is_empty", [](const DesireTrainerBridge& b) { return b.size() == 0; },
           "True when no step was collected since the last drain.")
      .def("drain_summary", [](DesireTrainerBridge& b) { return opt_dict(b.drain_summary()); },
           "Per-phase step counts and mean entropy, temperature and weights of the collected steps, then clears them; "
           "None when empty.");

  nb::class_<DesireRoundtableBridge>(
      nn, "DesireRoundtableBridge",
      "Turns each step's weights into roundtable band multipliers: bary = (alpha, gamma, beta) / sum, "
      "multipliers (above, here, beneath) = clamp(1 + blend * (bary - 1/3), 0.35, 1.65), drift = "
      "clamp(tanh(lambda) * drift_gain, -1, 1). blend and drift_gain are clamped to [0, 1].")
      .def(nb::new_([](double blend, double drift_gain) {
    return std::make_shared<DesireRoundtableBridge>(blend, drift_gain);
  }),
           nb::arg("blend") = 0.35, nb::arg("drift_gain") = 0.35,
           "blend and drift_gain are clamped to [0, 1]; attach it to pipelines (attach_roundtable_bridge).")
      .def_prop_rw("blend", &DesireRoundtableBridge::blend, &DesireRoundtableBridge::set_blend,
                   "How far the multipliers move from 1 with the weights' barycentre, in [0, 1].")
      .def_prop_rw("drift_gain", &DesireRoundtableBridge::drift_gain, &DesireRoundtableBridge::set_drift_gain,
                   "The scale of drift = tanh(lambda) * drift_gain, in [0, 1].")
      .def("impulse",
           [](const DesireRoundtableBridge& b) -> nb::typed<nb::object, std::optional<nb::dict>> {
    const auto im = b.impulse();
    if (!im) return nb::none();
    nb::dict d;
    d["multipliers"] = nb::make_tuple(im->above, im->here, im->beneath);
    d["drift"] = im->drift;
    return d;
  }, "The latest {'multipliers': (above, here, beneath), 'drift'}, or None before any step.")
      .def("drain_summary", [](DesireRoundtableBridge& b) { return opt_dict(b.drain_summary()); },
           "Mean multipliers and drift of the collected steps, then clears them; None when empty.");

  nb::class_<DesireTelemetryBundle>(nn, "DesireTelemetryBundle",
                                    "A trainer bridge and a roundtable bridge, shared with every pipeline built "
                                    "with bundle=this.")
      .def("__init__",
           [](DesireTelemetryBundle* self, bool trainer, bool roundtable, double blend, double drift_gain) {
    new (self)
        DesireTelemetryBundle{trainer ? std::make_shared<DesireTrainerBridge>() : nullptr,
                              roundtable ? std::make_shared<DesireRoundtableBridge>(blend, drift_gain) : nullptr};
  }, nb::kw_only(), nb::arg("trainer") = true, nb::arg("roundtable") = true, nb::arg("blend") = 0.35,
           nb::arg("drift_gain") = 0.35,
           "A trainer bridge (trainer=True) and a roundtable bridge (roundtable=True, with blend and drift_gain) to "
           "share between pipelines.")
      .def("has_trainer", [](const DesireTelemetryBundle& b) { return b.trainer != nullptr; },
           "Whether the bundle holds a trainer bridge.")
      .def("has_roundtable", [](const DesireTelemetryBundle& b) { return b.roundtable != nullptr; },
           "Whether the bundle holds a roundtable bridge.")
      .def("trainer_bridge", [](const DesireTelemetryBundle& b) { return b.trainer; }, "The trainer bridge, or None.")
      .def("roundtable_bridge", [](const DesireTelemetryBundle& b) { return b.roundtable; },
           "The roundtable bridge, or None.")
      .def("drain_trainer_summary",
           [](DesireTelemetryBundle& b) {
    return b.trainer ? opt_dict(b.trainer->drain_summary()) : OptSummary(nb::none());
  }, "The trainer bridge's drain_summary(), or None without one.")
      .def("drain_roundtable_summary", [](DesireTelemetryBundle& b) {
    return b.roundtable ? opt_dict(b.roundtable->drain_summary()) : OptSummary(nb::none());
  }, "The roundtable bridge's drain_summary(), or None without one.");

  nb::class_<DesirePipeline>(
      nn, "DesirePipeline",
      "Reshapes a next-token distribution: score_i = log_softmax(l)_i / T + alpha * transition[prev, i] + "
      "beta * avoidance_i + gamma * sum_k c_k bridge[i, k] - lambda * repression_i, q = softmax(score); "
      "T follows eta * (target_entropy - H(q)) within [temp_min, temp_max]. Phases observation -> injection -> "
      "integration by step count; alpha and beta warm up over integration_horizon steps. The defaults (all "
      "weights 0, eta 0) leave the distribution unchanged. See spiraltorch/nn/desire.h for every formula.")
      .def("__init__",
           [](DesirePipeline* self, int64_t vocab_size, int64_t concepts, double alpha_end, double beta_end,
              double gamma, double lambda_, int64_t observation_horizon, int64_t integration_horizon,
              double target_entropy, double eta, double temp_min, double temp_max,
              std::optional<DesireTelemetryBundle> bundle) {
    DesireConfig c;
    c.vocab_size = vocab_size, c.concepts = concepts, c.alpha_end = alpha_end, c.beta_end = beta_end;
    c.gamma = gamma, c.lambda = lambda_, c.observation_horizon = observation_horizon;
    c.integration_horizon = integration_horizon, c.target_entropy = target_entropy, c.eta = eta;
    c.temp_min = temp_min, c.temp_max = temp_max;
    new (self) DesirePipeline(c);
    if (bundle) self->attach_bundle(*bundle);
  },
           nb::arg("vocab_size"), nb::kw_only(), nb::arg("concepts") = 3, nb::arg("alpha_end") = 0.0,
           nb::arg("beta_end") = 0.0, nb::arg("gamma") = 0.0, nb::arg("lambda_") = 0.0,
           nb::arg("observation_horizon") = 1, nb::arg("integration_horizon") = 2, nb::arg("target_entropy") = 0.8,
           nb::arg("eta") = 0.0, nb::arg("temp_min") = 0.4, nb::arg("temp_max") = 1.6,
           nb::arg("bundle").none() = nb::none(),
           "vocab_size tokens and `concepts` concept weights; alpha_end/beta_end (reached after integration_horizon "
           "steps), gamma and lambda_ weigh the transition prior, avoidance, concept bridge and repression; eta "
           "steers the temperature toward target_entropy within [temp_min, temp_max]; bundle attaches its bridges. "
           "The defaults leave the distribution unchanged.")
      .def("step",
           [](DesirePipeline& p, ValuesArg logits, int64_t previous_token, ValuesArg concept_mix) {
    const std::vector<double> c = concept_mix.is_none() ? std::vector<double>{} : as_values(concept_mix, "concept");
    return step_dict(p.step(as_values(logits, "logits"), previous_token, c));
  }, nb::arg("logits"), nb::arg("previous_token"), nb::arg("concept").none() = nb::none(),
           "One step: returns {'step', 'phase', 'temperature' (used), 'next_temperature', 'entropy' and "
           "'base_entropy' (nats), 'weights' {alpha, beta, gamma, lambda}, 'probabilities', 'logit_offsets'}.")
      .def_prop_ro("vocab_size", [](const DesirePipeline& p) { return p.config().vocab_size; }, "The number of tokens.")
      .def_prop_ro("concepts", [](const DesirePipeline& p) { return p.config().concepts; },
                   "The number of concept weights.")
      .def_prop_ro("temperature", &DesirePipeline::temperature, "The temperature the next step uses.")
      .def_prop_ro("steps_taken", &DesirePipeline::steps_taken, "The number of steps since construction or reset().")
      .def("set_transition_prior",
           [](DesirePipeline& p, ValuesArg m) { p.set_transition_prior(as_values(m, "transition", true)); },
           nb::arg("matrix"), "Row-major vocab x vocab log-prior of token i after token p (flattened or a 2-d Tensor).")
      .def("set_repression", [](DesirePipeline& p, ValuesArg v) { p.set_repression(as_values(v, "repression")); },
           nb::arg("values"), "vocab_size finite values subtracted (times lambda) from each token's score.")
      .def("set_concept_bridge",
           [](DesirePipeline& p, ValuesArg m) { p.set_concept_bridge(as_values(m, "bridge", true)); },
           nb::arg("matrix"), "Row-major vocab x concepts non-negative affinities.")
      .def_prop_ro("concept_bridge", &DesirePipeline::concept_bridge,
                   "The row-major vocab x concepts affinities (empty when unset).")
      .def("ingest_geometry_bias",
           [](DesirePipeline& p, ValuesArg signal, const std::string& source) {
    p.ingest_geometry_bias(as_values(signal, "signal"), source);
  }, nb::arg("signal"), nb::kw_only(), nb::arg("source") = "zspace",
           "Stores a bias signal from 'zspace' or 'roundtable' as telemetry (it never changes the distribution).")
      .def("clear_geometry_bias", &DesirePipeline::clear_geometry_bias, "Drops the stored geometry bias signals.")
      .def("geometry_bias_metrics", [](const DesirePipeline& p) { return opt_dict(p.geometry_bias_metrics()); },
           "rms energies of the stored signals (z x0.25, roundtable x0.1), composite, balance, counts; None if empty.")
      .def("attach_trainer_bridge", &DesirePipeline::attach_trainer_bridge, nb::arg("bridge"),
           "Sends every later step to this trainer bridge.")
      .def("attach_roundtable_bridge", &DesirePipeline::attach_roundtable_bridge, nb::arg("bridge"),
           "Sends every later step to this roundtable bridge.")
      .def("reset", &DesirePipeline::reset,
           "Restarts the schedule, temperature and avoidance statistics (keeps priors and bridges).");
}

}  // namespace stpy
