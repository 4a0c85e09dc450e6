#include "spiraltorch/zspace/session.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "checks.h"
#include "spiraltorch/autograd.h"
#include "spiraltorch/ops.h"

namespace st::zspace {

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::pair<int64_t, int64_t> matrix_shape(const Tensor& t) {
  if (t.dim() == 0) return {1, 1};
  if (t.dim() == 1) return {1, t.numel()};
  const int64_t rows = t.shape()[0];
  return {rows, rows == 0 ? 0 : t.numel() / rows};
}

void push(AtlasFrame& f, std::string name, double value) {
  if (std::isfinite(value)) f.metrics.emplace_back(std::move(name), value);
}

}  // namespace

std::optional<double> AtlasFrame::metric(std::string_view name) const {
  for (const auto& [n, v] : metrics) {
    if (n == name) return v;
  }
  return std::nullopt;
}

AmegagradSession::AmegagradSession(nn::Module& model, Loss loss, Options options) : opt_(std::move(options)) {
  if (!loss) throw ValueError("AmegagradSession: a loss function is required");
  for (const auto& [name, p] : model.named_parameters()) {
    if (is_floating(p.dtype()) && p.numel() > 0) add_slot(name, p);
  }
  if (slots_.empty()) throw ValueError("AmegagradSession: the model has no floating parameters to train");
  init_common();
  model_ = &model;
  loss_ = std::move(loss);
}

AmegagradSession::AmegagradSession(int64_t rows, int64_t cols, Options options, const std::optional<Tensor>& weights)
    : opt_(std::move(options)) {
  if (rows <= 0 || cols <= 0) {
    throw ValueError("AmegagradSession: rows and cols must be positive, got (" + std::to_string(rows) + ", " +
                     std::to_string(cols) + ")");
  }
  Tensor w = zeros({rows, cols}, Dtype::Float64);
  if (weights) {
    if (!weights->defined() || !is_floating(weights->dtype()) || matrix_shape(*weights) != std::make_pair(rows, cols)) {
      throw ShapeError("AmegagradSession: weights must be a floating (" + std::to_string(rows) + ", " +
                       std::to_string(cols) + ") tensor, got " +
                       (weights->defined() ? shape_str(weights->shape()) : std::string("an undefined tensor")));
    }
    w = *weights;
  }
  add_slot("weights", w);
  init_common();
}

void AmegagradSession::init_common() {
  if (opt_.telemetry_bound < 0) {
    throw ValueError("AmegagradSession: telemetry_bound must be >= 0, got " + std::to_string(opt_.telemetry_bound));
  }
  optim::TrainingEngine::Options engine;
  engine.source = opt_.hyper_only ? "HypergradSession" : "AmegagradSession";
  engine.check_gradients = true;  // a non-finite gradient skips the step, changing nothing
  engine_ = optim::TrainingEngine(std::move(engine));
  if (opt_.z_dim > 0) {
    ZSpaceTrainer::Options z;
    z.z_dim = opt_.z_dim;
    z.lr = opt_.z_lr;
    z.lam_frac = opt_.z_lam_frac;
    z.topos = opt_.topos;
    ztrainer_.emplace(z);
  }
  if (opt_.trace) {
    io::TraceEvent e;
    e.event = "run_start";
    e.config = {{"hyper_only", opt_.hyper_only ? 1.0 : 0.0},
                {"curvature", opt_.curvature},
                {"hyper_learning_rate", opt_.hyper_learning_rate},
                {"real_learning_rate", opt_.real_learning_rate},
                {"gain", opt_.gain},
                {"tune", opt_.tune ? 1.0 : 0.0},
                {"z_dim", static_cast<double>(opt_.z_dim)},
                {"parameters", static_cast<double>(slots_.size())}};
    // Construction must not fail on an observer; a failed write shows up in trace_errors().
    try {
      opt_.trace->write(e);
    } catch (const SpiralError&) {
      ++trace_errors_;
    }
  }
}

Amegagrad AmegagradSession::make_optimizer(int64_t rows, int64_t cols) const {
  return Amegagrad(rows, cols, opt_.curvature, opt_.hyper_learning_rate, opt_.real_learning_rate, opt_.gain,
                   opt_.topos);
}

void AmegagradSession::add_slot(std::string name, const Tensor& param) {
  const auto [rows, cols] = matrix_shape(param);
  opts_.push_back(make_optimizer(rows, cols));
  slots_.push_back({param, rows, cols});
  names_.push_back(std::move(name));
}

Tensor& AmegagradSession::weights() {
  if (model_) throw ValueError("AmegagradSession.weights: a model session steps the model's parameters");
  return slots_.front().param;
}

Amegagrad& AmegagradSession::single(const char* op) {
  if (model_) {
    throw ValueError(std::string("AmegagradSession.") + op +
                     ": a model session takes its gradients from the loss; use step(input, target)");
  }
  return opts_.front();
}

void AmegagradSession::zero_grad() {
  for (auto& o : opts_) o.zero_grad();
}

void AmegagradSession::accumulate_wave(const Tensor& wave) {
  Amegagrad& a = single("accumulate_wave");
  if (opt_.hyper_only) {
    a.hyper().accumulate_wave(wave);
  } else {
    a.accumulate_wave(wave);
  }
}

void AmegagradSession::accumulate_pair(const Tensor& prediction, const Tensor& target) {
  Amegagrad& a = single("accumulate_pair");
  if (opt_.hyper_only) {
    a.hyper().accumulate_pair(prediction, target);
  } else {
    a.accumulate_pair(prediction, target);
  }
}

void AmegagradSession::absorb_text(const LanguageWaveEncoder& encoder, std::string_view text) {
  Amegagrad& a = single("absorb_text");
  if (opt_.hyper_only) {
    a.hyper().absorb_text(encoder, text);
  } else {
    a.absorb_text(encoder, text);
  }
}

SessionStep AmegagradSession::apply(std::string_view note) {
  single("apply");
  return tape_step(note, "apply");
}

SessionStep AmegagradSession::tape_step(std::string_view note, const char* op) {
  optim::StepParts parts;  // no loss: the update applies what the tapes hold
  std::optional<SessionStep> done;
  parts.update = [&](optim::StepReport&) {
    done = update({}, NAN, note, op);
    return true;
  };
  engine_.step(parts);
  return std::move(*done);
}

SessionStep AmegagradSession::accumulate_then_update(const std::function<void()>& accumulate, std::string_view note,
                                                     const char* op) {
  const std::vector<Amegagrad> saved = opts_;  // a refused input leaves the tapes as they were
  try {
    zero_grad();
    accumulate();
  } catch (...) {
    opts_ = saved;
    throw;
  }
  return tape_step(note, op);
}

SessionStep AmegagradSession::step_wave(const Tensor& wave, std::string_view note) {
  return accumulate_then_update([&] { accumulate_wave(wave); }, note, "step_wave");
}

SessionStep AmegagradSession::step_pair(const Tensor& prediction, const Tensor& target, std::string_view note) {
  return accumulate_then_update([&] { accumulate_pair(prediction, target); }, note, "step_pair");
}

SessionStep AmegagradSession::step_text(const LanguageWaveEncoder& encoder, std::string_view text,
                                        std::string_view note) {
  return accumulate_then_update([&] { absorb_text(encoder, text); }, note, "step_text");
}

SessionStep AmegagradSession::step(const Tensor& input, const Tensor& target, std::string_view note) {
  if (!model_) {
    throw ValueError(
        "AmegagradSession.step: a weights session is stepped with step_wave, step_pair, step_text or "
        "apply");
  }
  optim::StepParts parts;
  parts.zero_grad = [this] { model_->zero_grad(true); };
  parts.forward = [this](const Tensor& x) { return (*model_)(x); };
  parts.loss = loss_;
  for (const Slot& s : slots_) parts.parameters.push_back(s.param);
  std::optional<SessionStep> done;
  parts.update = [&](optim::StepReport& report) {
    std::vector<Tensor> grads;
    for (const Slot& s : slots_) {
      const Tensor g = s.param.grad();
      grads.push_back(g.defined() ? reshape(g.detach().to(Dtype::Float64).contiguous(), {s.rows, s.cols})
                                  : zeros({s.rows, s.cols}, Dtype::Float64));
    }
    done = update(grads, report.loss, note, "step");
    return true;
  };
  const optim::StepReport r = engine_.step(parts, input, target);
  if (done) return std::move(*done);
  SessionStep s;
  s.step = r.step;
  s.loss = r.loss;
  s.skipped = true;
  ++skipped_;
  s.frame.notes.emplace_back("skipped: " + r.skip_reason);
  return finish(std::move(s), note);
}

SessionStep AmegagradSession::update(const std::vector<Tensor>& grads, double loss, std::string_view note,
                                     const char* op) {
  // Everything is computed on copies (optimizers, weights, z trainer) and committed at the end.
  std::vector<Amegagrad> next = opts_;
  std::vector<Tensor> updated;
  std::vector<double> hyper_g, real_g;
  double h_lr = 0, r_lr = 0, h_scale = 0, r_scale = 0, max_radius = 0;
  const double k = -opt_.curvature;
  const bool tune = opt_.tune && !opt_.hyper_only;
  for (size_t i = 0; i < slots_.size(); ++i) {
    Amegagrad& a = next[i];
    if (!grads.empty()) {
      a.zero_grad();
      if (opt_.hyper_only) {
        a.hyper().accumulate_wave(grads[i]);
      } else {
        a.accumulate_wave(grads[i]);
      }
    }
    const auto hp = a.hyper().pending_gradient(), rp = a.real().pending_gradient();
    hyper_g.insert(hyper_g.end(), hp.begin(), hp.end());
    real_g.insert(real_g.end(), rp.begin(), rp.end());
    Tensor w =
        reshape(slots_[i].param.detach().to(Dtype::Float64).contiguous().clone(), {slots_[i].rows, slots_[i].cols});
    a.step(w, tune);
    h_lr += a.hyper().learning_rate();
    r_lr += a.real().learning_rate();
    if (a.last_control()) {
      h_scale += a.last_control()->hyper_rate_scale();
      r_scale += a.last_control()->real_rate_scale();
    }
    const std::vector<double> v = w.to_vector<double>();
    for (int64_t r = 0; r < slots_[i].rows; ++r) {
      double n2 = 0;
      for (int64_t c = 0; c < slots_[i].cols; ++c) n2 += v[r * slots_[i].cols + c] * v[r * slots_[i].cols + c];
      max_radius = std::max(max_radius, std::sqrt(k * n2));
    }
    updated.push_back(std::move(w));
  }
  const double n = static_cast<double>(slots_.size());
  const GradientSummary hs(hyper_g), rs(real_g);
  std::optional<ZSpaceTrainer> z = ztrainer_;
  double z_loss = NAN;
  if (z) {
    ObservedMetrics m;
    const std::string who = std::string("AmegagradSession.") + op;
    const GradientSummary& src = opt_.hyper_only ? hs : rs;
    m.set("speed", src.mean_abs(), who);
    m.set("memory", src.l2(), who);
    m.set("stability", 1.0 / (1.0 + src.l2()), who);
    m.set_gradient("gradient", opt_.hyper_only ? hyper_g : real_g, who);
    z_loss = z->step(m);
  }
  // Commit.
  for (size_t i = 0; i < slots_.size(); ++i) {
    NoGradGuard no_grad;
    Tensor& p = slots_[i].param;
    copy_(p, reshape(updated[i].to(p.dtype()), p.shape()));
  }
  opts_ = std::move(next);
  ztrainer_ = std::move(z);

  SessionStep s;
  s.step = engine_.steps();  // the engine counted this step when it began
  s.loss = loss;
  AtlasFrame& f = s.frame;
  if (model_) push(f, "session.loss", loss);
  push(f, "hypergrad.l2", hs.l2());
  push(f, "hypergrad.mean_abs", hs.mean_abs());
  push(f, "hypergrad.linf", hs.linf());
  push(f, "hypergrad.learning_rate", h_lr / n);
  if (!opt_.hyper_only) {
    push(f, "realgrad.l2", rs.l2());
    push(f, "realgrad.mean_abs", rs.mean_abs());
    push(f, "realgrad.learning_rate", r_lr / n);
    if (tune) {
      push(f, "desire.hyper_rate_scale", h_scale / n);
      push(f, "desire.real_rate_scale", r_scale / n);
    }
  }
  push(f, "geometry.max_radius", max_radius);
  if (ztrainer_) push(f, "zspace.loss", z_loss);
  return finish(std::move(s), note);
}

SessionStep AmegagradSession::finish(SessionStep s, std::string_view note) {
  s.frame.timestamp = now_seconds();
  s.frame.metrics.insert(s.frame.metrics.begin() + (model_ && !s.skipped ? 1 : 0),
                         {"session.skipped", s.skipped ? 1.0 : 0.0});
  if (s.skipped && std::isfinite(s.loss)) s.frame.metrics.insert(s.frame.metrics.begin(), {"session.loss", s.loss});
  if (!note.empty()) s.frame.notes.emplace_back(note);
  if (opt_.trace) {
    io::TraceEvent e;
    e.event = "step";
    e.timestamp = s.frame.timestamp;
    e.step = s.step;
    e.metrics = s.frame.metrics;
    e.notes = s.frame.notes;
    try {
      opt_.trace->write(e);
    } catch (const SpiralError& err) {
      ++trace_errors_;
      s.frame.notes.emplace_back(std::string("trace: ") + err.what());
    }
  }
  frames_.push_back(s.frame);
  while (opt_.telemetry_bound > 0 && static_cast<int64_t>(frames_.size()) > opt_.telemetry_bound) frames_.pop_front();
  last_ = s;
  return s;
}

}  // namespace st::zspace
