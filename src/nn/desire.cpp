#include "spiraltorch/nn/desire.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "spiraltorch/error.h"

namespace st::nn {

namespace {

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void check_finite(const std::vector<double>& v, const char* what) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i])) {
      throw ValueError(std::string("DesirePipeline: ") + what + "[" + std::to_string(i) + "] = " + num(v[i]) +
                       " is not finite");
    }
  }
}

void check_size(const std::vector<double>& v, size_t n, const char* what) {
  if (v.size() != n) {
    throw ValueError(std::string("DesirePipeline: ") + what + " has " + std::to_string(v.size()) +
                     " values, expected " + std::to_string(n));
  }
}

double rms(const std::vector<double>& v) {
  if (v.empty()) return 0.0;
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s / static_cast<double>(v.size()));
}

double mean_of(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

}  // namespace

// --- pipeline -------------------------------------------------------------------------

DesirePipeline::DesirePipeline(DesireConfig config) : config_(config) {
  const DesireConfig& c = config_;
  if (c.vocab_size < 1 || c.concepts < 1) {
    throw ValueError("DesirePipeline: vocab_size and concepts must be >= 1, got " + std::to_string(c.vocab_size) +
                     " and " + std::to_string(c.concepts));
  }
  for (const auto& [name, v] : {std::pair{"alpha_end", c.alpha_end},
                                {"beta_end", c.beta_end},
                                {"gamma", c.gamma},
                                {"lambda_", c.lambda},
                                {"target_entropy", c.target_entropy},
                                {"eta", c.eta}}) {
    if (!std::isfinite(v)) throw ValueError(std::string("DesirePipeline: ") + name + " must be finite, got " + num(v));
  }
  if (c.observation_horizon < 0 || c.integration_horizon < c.observation_horizon) {
    throw ValueError("DesirePipeline: need 0 <= observation_horizon <= integration_horizon, got " +
                     std::to_string(c.observation_horizon) + " and " + std::to_string(c.integration_horizon));
  }
  if (!(c.temp_min > 0) || !(c.temp_max >= c.temp_min) || !std::isfinite(c.temp_max)) {
    throw ValueError("DesirePipeline: need 0 < temp_min <= temp_max (finite), got " + num(c.temp_min) + " and " +
                     num(c.temp_max));
  }
  const size_t V = static_cast<size_t>(c.vocab_size), K = static_cast<size_t>(c.concepts);
  transition_.assign(V * V, 0.0);
  repression_.assign(V, 0.0);
  bridge_.assign(V * K, 0.0);
  for (size_t i = 0; i < V; ++i) bridge_[i * K + i % K] = 1.0;
  avoidance_sum_.assign(V, 0.0);
  temperature_ = std::clamp(1.0, c.temp_min, c.temp_max);
}

void DesirePipeline::reset() {
  temperature_ = std::clamp(1.0, config_.temp_min, config_.temp_max);
  steps_ = observed_ = 0;
  std::fill(avoidance_sum_.begin(), avoidance_sum_.end(), 0.0);
}

void DesirePipeline::set_transition_prior(const std::vector<double>& matrix) {
  const size_t V = static_cast<size_t>(config_.vocab_size);
  check_size(matrix, V * V, "transition prior (vocab x vocab)");
  check_finite(matrix, "transition prior");
  transition_ = matrix;
}

void DesirePipeline::set_repression(const std::vector<double>& values) {
  check_size(values, static_cast<size_t>(config_.vocab_size), "repression");
  check_finite(values, "repression");
  repression_ = values;
}

void DesirePipeline::set_concept_bridge(const std::vector<double>& matrix) {
  check_size(matrix, static_cast<size_t>(config_.vocab_size * config_.concepts), "concept bridge (vocab x concepts)");
  check_finite(matrix, "concept bridge");
  for (size_t i = 0; i < matrix.size(); ++i) {
    if (matrix[i] < 0)
      throw ValueError("DesirePipeline: concept bridge[" + std::to_string(i) + "] = " + num(matrix[i]) +
                       " is negative");
  }
  bridge_ = matrix;
}

DesireStep DesirePipeline::step(const std::vector<double>& logits, int64_t previous_token,
                                const std::vector<double>& concept_mix) {
  const DesireConfig& c = config_;
  const size_t V = static_cast<size_t>(c.vocab_size), K = static_cast<size_t>(c.concepts);
  check_size(logits, V, "logits");
  check_finite(logits, "logits");
  if (previous_token < 0 || previous_token >= c.vocab_size) {
    throw ValueError("DesirePipeline: previous_token " + std::to_string(previous_token) + " is outside [0, " +
                     std::to_string(c.vocab_size) + ")");
  }
  std::vector<double> want;
  if (!concept_mix.empty()) {
    check_size(concept_mix, K, "concept");
    check_finite(concept_mix, "concept");
    double total = 0;
    for (size_t k = 0; k < K; ++k) {
      if (concept_mix[k] < 0)
        throw ValueError("DesirePipeline: concept[" + std::to_string(k) + "] = " + num(concept_mix[k]) +
                         " is negative");
      total += concept_mix[k];
    }
    if (!(total > 0)) throw ValueError("DesirePipeline: concept weights sum to 0");
    want.resize(K);
    for (size_t k = 0; k < K; ++k) want[k] = concept_mix[k] / total;
  }

  DesireStep out;
  out.step = steps_;
  out.phase = steps_ < c.observation_horizon   ? "observation"
              : steps_ < c.integration_horizon ? "injection"
                                               : "integration";
  const double ramp = c.integration_horizon > 0
                          ? std::min(1.0, static_cast<double>(steps_ + 1) / static_cast<double>(c.integration_horizon))
                          : 1.0;
  const bool observing = out.phase == "observation";
  out.weights = {c.alpha_end * ramp, observing ? 0.0 : c.beta_end * ramp, c.gamma, c.lambda};
  out.temperature = temperature_;

  // log_softmax of the logits.
  const double mx = *std::max_element(logits.begin(), logits.end());
  double z = 0;
  for (double l : logits) z += std::exp(l - mx);
  const double lse = mx + std::log(z);
  std::vector<double> base(V), score(V);
  out.base_entropy = 0;
  for (size_t i = 0; i < V; ++i) {
    base[i] = logits[i] - lse;
    out.base_entropy -= std::exp(base[i]) * base[i];
  }
  std::vector<double> avoidance(V, 0.0);
  if (observed_ > 0) {
    for (size_t i = 0; i < V; ++i) avoidance[i] = avoidance_sum_[i] / static_cast<double>(observed_);
    const double m = mean_of(avoidance);
    for (double& a : avoidance) a -= m;
  }
  const DesireWeights& w = out.weights;
  const size_t p = static_cast<size_t>(previous_token);
  for (size_t i = 0; i < V; ++i) {
    double affinity = 0;
    for (size_t k = 0; k < want.size(); ++k) affinity += want[k] * bridge_[i * K + k];
    score[i] = base[i] / temperature_ + w.alpha * transition_[p * V + i] + w.beta * avoidance[i] + w.gamma * affinity -
               w.lambda * repression_[i];
  }
  const double smx = *std::max_element(score.begin(), score.end());
  double sz = 0;
  for (double s : score) sz += std::exp(s - smx);
  const double slse = smx + std::log(sz);
  out.probabilities.resize(V);
  out.logit_offsets.resize(V);
  out.entropy = 0;
  for (size_t i = 0; i < V; ++i) {
    const double lq = score[i] - slse;
    out.probabilities[i] = std::exp(lq);
    out.entropy -= out.probabilities[i] * lq;
    out.logit_offsets[i] = score[i] - base[i];
  }
  if (observing) {
    for (size_t i = 0; i < V; ++i) avoidance_sum_[i] += 1.0 - out.probabilities[i];
    ++observed_;
  }
  temperature_ = std::clamp(temperature_ + c.eta * (c.target_entropy - out.entropy), c.temp_min, c.temp_max);
  out.next_temperature = temperature_;
  ++steps_;
  if (trainer_) trainer_->record(out);
  if (roundtable_) roundtable_->record(out);
  return out;
}

void DesirePipeline::ingest_geometry_bias(const std::vector<double>& signal, const std::string& source) {
  std::string key;
  if (source == "zspace" || source == "z_space" || source == "z-space") {
    key = "zspace";
  } else if (source == "roundtable") {
    key = "roundtable";
  } else {
    throw ValueError("DesirePipeline: geometry bias source must be 'zspace' or 'roundtable', got '" + source + "'");
  }
  check_finite(signal, "geometry bias signal");
  if (signal.empty()) {
    geometry_.erase(key);
    return;
  }
  geometry_[key] = signal;
  ++geometry_ingested_;
  geometry_step_ = steps_;
}

void DesirePipeline::clear_geometry_bias() {
  geometry_.clear();
  geometry_ingested_ = 0;
}

std::optional<std::map<std::string, double>> DesirePipeline::geometry_bias_metrics() const {
  if (geometry_.empty()) return std::nullopt;
  const auto get = [&](const char* k) { return geometry_.count(k) ? rms(geometry_.at(k)) : 0.0; };
  const double ze = 0.25 * get("zspace"), re = 0.1 * get("roundtable");
  const double composite = ze + re;
  return std::map<std::string, double>{
      {"z_energy", ze},
      {"roundtable_energy", re},
      {"composite_energy", composite},
      {"balance", composite > 0 ? std::abs(ze - re) / composite : 0.0},
      {"signals_ingested", static_cast<double>(geometry_ingested_)},
      {"steps_since_ingest", static_cast<double>(steps_ - geometry_step_)},
  };
}

// --- bridges --------------------------------------------------------------------------

void DesireTrainerBridge::record(const DesireStep& step) { steps_.push_back(step); }

std::optional<std::map<std::string, double>> DesireTrainerBridge::drain_summary() {
  if (steps_.empty()) return std::nullopt;
  std::map<std::string, double> s{
      {"total", static_cast<double>(steps_.size())}, {"observation", 0}, {"injection", 0}, {"integration", 0}};
  double n = static_cast<double>(steps_.size());
  double ent = 0, temp = 0, a = 0, b = 0, g = 0, l = 0;
  for (const DesireStep& st : steps_) {
    s[st.phase] += 1;
    ent += st.entropy, temp += st.temperature;
    a += st.weights.alpha, b += st.weights.beta, g += st.weights.gamma, l += st.weights.lambda;
  }
  s["mean_entropy"] = ent / n;
  s["mean_temperature"] = temp / n;
  s["mean_alpha"] = a / n, s["mean_beta"] = b / n, s["mean_gamma"] = g / n, s["mean_lambda"] = l / n;
  steps_.clear();
  return s;
}

DesireRoundtableBridge::DesireRoundtableBridge(double blend, double drift_gain) {
  set_blend(blend);
  set_drift_gain(drift_gain);
}

void DesireRoundtableBridge::set_blend(double v) {
  if (!std::isfinite(v)) throw ValueError("DesireRoundtableBridge: blend must be finite, got " + num(v));
  blend_ = std::clamp(v, 0.0, 1.0);
}

void DesireRoundtableBridge::set_drift_gain(double v) {
  if (!std::isfinite(v)) throw ValueError("DesireRoundtableBridge: drift_gain must be finite, got " + num(v));
  drift_gain_ = std::clamp(v, 0.0, 1.0);
}

void DesireRoundtableBridge::record(const DesireStep& step) {
  const DesireWeights& w = step.weights;
  const double total = w.alpha + w.gamma + w.beta;
  const double third = 1.0 / 3.0;
  const auto bary = [&](double x) { return total != 0 ? x / total : third; };
  const auto mult = [&](double x) { return std::clamp(1.0 + blend_ * (bary(x) - third), 0.35, 1.65); };
  Impulse im{mult(w.alpha), mult(w.gamma), mult(w.beta), std::clamp(std::tanh(w.lambda) * drift_gain_, -1.0, 1.0)};
  last_ = im;
  steps_.push_back({step, im});
}

std::optional<std::map<std::string, double>> DesireRoundtableBridge::drain_summary() {
  if (steps_.empty()) return std::nullopt;
  const double n = static_cast<double>(steps_.size());
  std::map<std::string, double> s{{"steps", n}};
  for (const auto& [step, im] : steps_) {
    s["mean_entropy"] += step.entropy / n;
    s["mean_temperature"] += step.temperature / n;
    s["mean_alpha"] += step.weights.alpha / n;
    s["mean_beta"] += step.weights.beta / n;
    s["mean_gamma"] += step.weights.gamma / n;
    s["mean_lambda"] += step.weights.lambda / n;
    s["mean_above"] += im.above / n;
    s["mean_here"] += im.here / n;
    s["mean_beneath"] += im.beneath / n;
    s["mean_drift"] += im.drift / n;
  }
  steps_.clear();
  return s;
}

}  // namespace st::nn
