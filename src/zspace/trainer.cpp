#include "spiraltorch/zspace/trainer.h"

#include <cmath>

#include "checks.h"
#include "spiraltorch/ops.h"

namespace st::zspace {

namespace {

std::string list_str(const std::vector<double>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + detail::num(v[i]);
  return s + "]";
}

double bias_correction(double beta, int64_t t) {
  // 1 - beta^t without cancellation for beta near 1.
  return beta > 0 ? -std::expm1(static_cast<double>(t) * std::log(beta)) : 1.0;
}

optim::TrainingEngine::Options engine_options() {
  optim::TrainingEngine::Options o;
  o.source = "ZSpaceTrainer";
  return o;
}

}  // namespace

ZSpaceTrainer::ZSpaceTrainer(const Options& options) : opt_(options), engine_(engine_options()) {
  if (opt_.z_dim <= 0) {
    throw ValueError("ZSpaceTrainer: z_dim must be a positive int, got " + std::to_string(opt_.z_dim));
  }
  if (!(opt_.lr > 0 && 0 <= opt_.beta1 && opt_.beta1 < 1 && 0 <= opt_.beta2 && opt_.beta2 < 1 && opt_.eps > 0)) {
    throw ValueError("ZSpaceTrainer: need lr > 0, 0 <= beta1, beta2 < 1 and eps > 0");
  }
  if (opt_.topos && opt_.z_dim > opt_.topos->max_volume()) {
    throw ShapeError("ZSpaceTrainer: z_dim " + std::to_string(opt_.z_dim) + " exceeds the topos volume " +
                     std::to_string(opt_.topos->max_volume()));
  }
  reset();
}

void ZSpaceTrainer::reset() {
  const auto n = static_cast<size_t>(opt_.z_dim);
  z_.assign(n, 0.0);
  m_.assign(n, 0.0);
  v_.assign(n, 0.0);
  t_ = 0;
  last_.reset();
  engine_.set_counts(0, 0);
}

std::vector<double> ZSpaceTrainer::project(const std::optional<std::vector<double>>& grad) const {
  const auto n = static_cast<size_t>(opt_.z_dim);
  if (!grad || grad->empty()) return std::vector<double>(n, 0.0);
  if (opt_.gradient_projection == GradientProjection::Exact && grad->size() != n) {
    throw ValueError("ZSpaceTrainer: the gradient has " + std::to_string(grad->size()) + " entries, z_dim is " +
                     std::to_string(opt_.z_dim));
  }
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = std::tanh((*grad)[i % grad->size()]);
  return out;
}

double ZSpaceTrainer::objective(const NamedValues& metrics, double penalty) const {
  const auto get = [&](std::string_view name) {
    for (const auto& [k, v] : metrics) {
      if (k == name) return v;
    }
    return 0.0;
  };
  double s = 0.0;
  s += opt_.lam_speed * std::tanh(get("speed"));
  s += opt_.lam_mem * std::tanh(get("memory"));
  s += opt_.lam_stab * std::tanh(get("stability"));
  s += opt_.lam_drs * std::tanh(get("drs"));
  return s + opt_.lam_frac * penalty;
}

void ZSpaceTrainer::adam(const std::vector<double>& g) {
  // Compute into fresh vectors, commit only when everything is finite.
  const int64_t t = t_ + 1;
  const size_t n = z_.size();
  std::vector<double> m(n), v(n), z(n);
  const double c1 = bias_correction(opt_.beta1, t), c2 = bias_correction(opt_.beta2, t);
  bool finite = true;
  for (size_t i = 0; i < n; ++i) {
    m[i] = opt_.beta1 * m_[i] + (1 - opt_.beta1) * g[i];
    v[i] = opt_.beta2 * v_[i] + (1 - opt_.beta2) * g[i] * g[i];
    z[i] = z_[i] - opt_.lr * (m[i] / c1) / (std::sqrt(v[i] / c2) + opt_.eps);
    finite = finite && std::isfinite(z[i]) && std::isfinite(m[i]) && std::isfinite(v[i]);
  }
  if (!finite) throw ValueError("ZSpaceTrainer: the update is not finite; the state is unchanged");
  if (opt_.topos) {
    for (double& x : z) x = opt_.topos->saturate(x);
  }
  z_ = std::move(z);
  m_ = std::move(m);
  v_ = std::move(v);
  t_ = t;
}

double ZSpaceTrainer::step(const ObservedMetrics& metrics) {
  const SpectralPenalty pen = fractional_penalty(z_, opt_.alpha);
  const double obj = objective(metrics.values(), pen.value);
  std::vector<double> dir = project(metrics.gradient());
  for (size_t i = 0; i < dir.size(); ++i) dir[i] += opt_.lam_frac * pen.gradient[i];
  return engine_step(obj, dir);
}

double ZSpaceTrainer::engine_step(double objective, const std::vector<double>& direction) {
  optim::StepParts parts;
  parts.loss = [objective](const Tensor&, const Tensor&) { return scalar_tensor(objective, Dtype::Float64); };
  parts.backward = [](const Tensor&, const Tensor&, optim::StepReport&) {};  // the direction is the gradient
  parts.update = [&](optim::StepReport& report) {
    adam(direction);  // throws, changing nothing, when the update is not finite
    double n2 = 0.0;
    for (const double x : z_) n2 += x * x;
    report.metrics.emplace_back("z_norm", std::sqrt(n2));
    return true;
  };
  engine_.step(parts);
  return objective;
}

std::vector<double> ZSpaceTrainer::step_batch(std::span<const ObservedMetrics> samples) {
  ZSpaceTrainer work = *this;  // step a copy, commit only when every sample went through
  std::vector<double> out;
  out.reserve(samples.size());
  for (const ObservedMetrics& s : samples) out.push_back(work.step(s));
  *this = std::move(work);
  return out;
}

Inference ZSpaceTrainer::infer_partial(const ObservedMetrics& partial, double smoothing,
                                       const NamedValues& telemetry) const {
  return infer(z_, opt_.alpha, partial, smoothing, telemetry, "ZSpaceTrainer.infer_partial");
}

double ZSpaceTrainer::step_partial(const ObservedMetrics& partial, double smoothing, const NamedValues& telemetry) {
  Inference inference = infer_partial(partial, smoothing, telemetry);
  const SpectralPenalty pen = fractional_penalty(z_, opt_.alpha);
  const double obj = objective(inference.metrics, pen.value);
  const std::vector<double> proj = project(partial.gradient());
  std::vector<double> dir(proj.size());
  for (size_t i = 0; i < dir.size(); ++i) dir[i] = inference.gradient[i] + proj[i] + opt_.lam_frac * pen.gradient[i];
  engine_step(obj, dir);
  last_ = std::move(inference);
  return obj;
}

void ZSpaceTrainer::load_state_dict(const StateUpdate& state, bool strict) {
  const std::string who = "ZSpaceTrainer.load_state_dict";
  std::vector<double> vecs[3];
  const std::pair<const char*, const std::optional<std::vector<double>>*> given[3] = {
      {"z", &state.z}, {"moment", &state.moment}, {"velocity", &state.velocity}};
  const std::vector<double>* current[3] = {&z_, &m_, &v_};
  for (int i = 0; i < 3; ++i) {
    const auto& [key, vec] = given[i];
    if (!*vec) {
      if (!strict) {
        vecs[i] = *current[i];
        continue;
      }
      throw CheckpointError(who + ": the state has no '" + key + "' vector");
    }
    if (static_cast<int64_t>((*vec)->size()) != opt_.z_dim) {
      throw CheckpointError(who + ": '" + key + "' has " + std::to_string((*vec)->size()) + " entries, z_dim is " +
                            std::to_string(opt_.z_dim));
    }
    std::vector<double> bad;
    for (const double x : **vec) {
      if (!std::isfinite(x)) bad.push_back(x);
    }
    if (!bad.empty()) throw CheckpointError(who + ": '" + key + "' has non-finite values " + list_str(bad));
    vecs[i] = **vec;
  }
  std::vector<double> negative;
  for (const double x : vecs[2]) {
    if (x < 0) negative.push_back(x);
  }
  if (!negative.empty()) {
    throw CheckpointError(who + ": 'velocity' (Adam's second moment) has negative entries " + list_str(negative));
  }
  const int64_t step = state.step ? *state.step : (strict ? 0 : t_);
  if (step < 0) throw CheckpointError(who + ": 'step' must be a non-negative integer, got " + std::to_string(step));
  z_ = std::move(vecs[0]);
  m_ = std::move(vecs[1]);
  v_ = std::move(vecs[2]);
  t_ = step;
}

}  // namespace st::zspace
