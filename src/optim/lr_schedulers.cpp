#include "spiraltorch/optim/lr_schedulers.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "spiraltorch/error.h"

namespace st::optim {

namespace {

std::string num(double v) {
  std::string s = std::to_string(v);
  return s;
}

void check_positive(int64_t v, const char* who, const char* name) {
  if (v <= 0)
    throw ValueError(std::string(who) + ": " + name + " must be a positive integer, got " + std::to_string(v));
}

}  // namespace

// ---- MultiStepLR
MultiStepLR::MultiStepLR(std::shared_ptr<Optimizer> optimizer, std::vector<int64_t> milestones, double gamma)
    : LRScheduler(std::move(optimizer)), milestones_(std::move(milestones)), gamma_(gamma) {
  std::sort(milestones_.begin(), milestones_.end());
  initialize();
}

std::vector<double> MultiStepLR::compute_lr() {
  std::vector<double> lrs = current_lrs();
  const auto count = std::count(milestones_.begin(), milestones_.end(), last_epoch_);
  if (count == 0) return lrs;
  for (double& lr : lrs) lr *= std::pow(gamma_, static_cast<double>(count));
  return lrs;
}

std::vector<double> MultiStepLR::closed_form_lr() {
  const auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) - milestones_.begin();
  std::vector<double> lrs;
  for (double b : base_lrs_) lrs.push_back(b * std::pow(gamma_, static_cast<double>(passed)));
  return lrs;
}

// ---- ExponentialLR
ExponentialLR::ExponentialLR(std::shared_ptr<Optimizer> optimizer, double gamma)
    : LRScheduler(std::move(optimizer)), gamma_(gamma) {
  initialize();
}

std::vector<double> ExponentialLR::compute_lr() {
  std::vector<double> lrs = current_lrs();
  if (is_initial_) return lrs;
  for (double& lr : lrs) lr *= gamma_;
  return lrs;
}

std::vector<double> ExponentialLR::closed_form_lr() {
  std::vector<double> lrs;
  for (double b : base_lrs_) lrs.push_back(b * std::pow(gamma_, static_cast<double>(last_epoch_)));
  return lrs;
}

// ---- LinearLR
LinearLR::LinearLR(std::shared_ptr<Optimizer> optimizer, double start_factor, double end_factor, int64_t total_iters)
    : LRScheduler(std::move(optimizer)),
      start_factor_(start_factor),
      end_factor_(end_factor),
      total_iters_(total_iters) {
  if (!(start_factor > 0.0 && start_factor <= 1.0)) {
    throw ValueError("LinearLR: start_factor must be in (0, 1], got " + num(start_factor));
  }
  if (!(end_factor >= 0.0 && end_factor <= 1.0)) {
    throw ValueError("LinearLR: end_factor must be in [0, 1], got " + num(end_factor));
  }
  check_positive(total_iters, "LinearLR", "total_iters");
  initialize();
}

std::vector<double> LinearLR::compute_lr() {
  std::vector<double> lrs = current_lrs();
  if (last_epoch_ == 0) {
    for (double& lr : lrs) lr *= start_factor_;
    return lrs;
  }
  if (is_initial_ || last_epoch_ > total_iters_) return lrs;
  const double d = end_factor_ - start_factor_;
  const double f =
      1.0 + d / (static_cast<double>(total_iters_) * start_factor_ + static_cast<double>(last_epoch_ - 1) * d);
  for (double& lr : lrs) lr *= f;
  return lrs;
}

std::vector<double> LinearLR::closed_form_lr() {
  const double t = static_cast<double>(std::min(total_iters_, last_epoch_));
  std::vector<double> lrs;
  for (double b : base_lrs_) {
    lrs.push_back(b * (start_factor_ + (end_factor_ - start_factor_) * t / static_cast<double>(total_iters_)));
  }
  return lrs;
}

// ---- ConstantLR
ConstantLR::ConstantLR(std::shared_ptr<Optimizer> optimizer, double factor, int64_t total_iters)
    : LRScheduler(std::move(optimizer)), factor_(factor), total_iters_(total_iters) {
  if (!(factor > 0.0 && factor <= 1.0)) throw ValueError("ConstantLR: factor must be in (0, 1], got " + num(factor));
  if (total_iters < 0) throw ValueError("ConstantLR: total_iters must be >= 0, got " + std::to_string(total_iters));
  initialize();
}

std::vector<double> ConstantLR::compute_lr() {
  std::vector<double> lrs = current_lrs();
  if (last_epoch_ == 0) {
    for (double& lr : lrs) lr *= factor_;
  } else if (last_epoch_ == total_iters_) {
    for (double& lr : lrs) lr *= 1.0 / factor_;
  }
  return lrs;
}

std::vector<double> ConstantLR::closed_form_lr() {
  const double f = factor_ + (last_epoch_ >= total_iters_ ? 1.0 - factor_ : 0.0);
  std::vector<double> lrs;
  for (double b : base_lrs_) lrs.push_back(b * f);
  return lrs;
}

// ---- PolynomialLR
PolynomialLR::PolynomialLR(std::shared_ptr<Optimizer> optimizer, int64_t total_iters, double power)
    : LRScheduler(std::move(optimizer)), total_iters_(total_iters), power_(power) {
  check_positive(total_iters, "PolynomialLR", "total_iters");
  initialize();
}

std::vector<double> PolynomialLR::compute_lr() {
  std::vector<double> lrs = current_lrs();
  if (is_initial_ || last_epoch_ > total_iters_) return lrs;
  const double T = static_cast<double>(total_iters_), e = static_cast<double>(last_epoch_);
  const double f = std::pow((1.0 - e / T) / (1.0 - (e - 1) / T), power_);
  for (double& lr : lrs) lr *= f;
  return lrs;
}

std::vector<double> PolynomialLR::closed_form_lr() {
  const double t = static_cast<double>(std::min(total_iters_, last_epoch_));
  std::vector<double> lrs;
  for (double b : base_lrs_) lrs.push_back(b * std::pow(1.0 - t / static_cast<double>(total_iters_), power_));
  return lrs;
}

// ---- CosineAnnealingWarmRestarts
CosineAnnealingWarmRestarts::CosineAnnealingWarmRestarts(std::shared_ptr<Optimizer> optimizer, int64_t T_0,
                                                         int64_t T_mult, double eta_min)
    : LRScheduler(std::move(optimizer)), T_0_(T_0), T_mult_(T_mult), eta_min_(eta_min), T_i_(T_0) {
  check_positive(T_0, "CosineAnnealingWarmRestarts", "T_0");
  if (T_mult < 1) {
    throw ValueError("CosineAnnealingWarmRestarts: T_mult must be an integer >= 1, got " + std::to_string(T_mult));
  }
  initialize();
}

std::vector<double> CosineAnnealingWarmRestarts::compute_lr() {
  if (last_epoch_ == 0) {  // the first step (or a restart from a SequentialLR milestone)
    T_i_ = T_0_;
    T_cur_ = 0;
  } else {
    T_cur_ += 1;
    if (T_cur_ >= static_cast<double>(T_i_)) {
      T_cur_ = std::fmod(T_cur_, static_cast<double>(T_i_));
      T_i_ *= T_mult_;
    }
  }
  std::vector<double> lrs;
  for (double b : base_lrs_) {
    lrs.push_back(eta_min_ +
                  (b - eta_min_) * (1 + std::cos(std::numbers::pi * T_cur_ / static_cast<double>(T_i_))) / 2);
  }
  return lrs;
}

void CosineAnnealingWarmRestarts::save_extra(SchedulerState& s) const {
  s.extra["T_cur"] = T_cur_;
  s.extra["T_i"] = static_cast<double>(T_i_);
}

void CosineAnnealingWarmRestarts::load_extra(const SchedulerState& s) {
  const auto c = s.extra.find("T_cur"), i = s.extra.find("T_i");
  if (c == s.extra.end() || i == s.extra.end()) {
    throw CheckpointError("CosineAnnealingWarmRestarts.load_state_dict: state lacks T_cur or T_i");
  }
  if (!(i->second >= 1.0)) throw CheckpointError("CosineAnnealingWarmRestarts.load_state_dict: T_i must be >= 1");
  T_cur_ = c->second;
  T_i_ = static_cast<int64_t>(i->second);
}

// ---- LambdaLR / MultiplicativeLR
LambdaLR::LambdaLR(std::shared_ptr<Optimizer> optimizer, std::vector<LrLambda> lr_lambdas)
    : LambdaLR(std::move(optimizer), std::move(lr_lambdas), true) {}

LambdaLR::LambdaLR(std::shared_ptr<Optimizer> optimizer, std::vector<LrLambda> lr_lambdas, bool take_first_step)
    : LRScheduler(std::move(optimizer)), lambdas_(std::move(lr_lambdas)) {
  const size_t n = optimizer_->param_groups().size();
  if (lambdas_.size() == 1 && n > 1) lambdas_.assign(n, lambdas_[0]);
  if (lambdas_.size() != n) {
    throw ValueError(std::string(take_first_step ? "LambdaLR" : "MultiplicativeLR") + ": expected " +
                     std::to_string(n) + " lr_lambdas (one per group), got " + std::to_string(lambdas_.size()));
  }
  for (const auto& f : lambdas_) {
    if (!f) throw ValueError("LambdaLR: an lr_lambda is empty");
  }
  if (take_first_step) initialize();  // MultiplicativeLR takes it with its own rule
}

std::vector<double> LambdaLR::compute_lr() {
  std::vector<double> lrs;
  for (size_t i = 0; i < base_lrs_.size(); ++i) lrs.push_back(base_lrs_[i] * lambdas_[i](last_epoch_));
  return lrs;
}

MultiplicativeLR::MultiplicativeLR(std::shared_ptr<Optimizer> optimizer, std::vector<LrLambda> lr_lambdas)
    : LambdaLR(std::move(optimizer), std::move(lr_lambdas), false) {
  initialize();
}

std::vector<double> MultiplicativeLR::compute_lr() {
  std::vector<double> lrs = current_lrs();
  if (is_initial_) return lrs;
  for (size_t i = 0; i < lrs.size(); ++i) lrs[i] *= lambdas_[i](last_epoch_);
  return lrs;
}

// ---- composite schedules
namespace {

void check_children(const std::vector<std::shared_ptr<LRScheduler>>& schedulers,
                    const std::shared_ptr<Optimizer>& optimizer, const std::string& who) {
  if (schedulers.empty()) throw ValueError(who + ": expects at least one scheduler, got none");
  for (size_t i = 0; i < schedulers.size(); ++i) {
    if (!schedulers[i]) throw ValueError(who + ": scheduler " + std::to_string(i) + " is None");
    if (schedulers[i]->optimizer() != optimizer) {
      throw ValueError(who + ": expects all schedulers to belong to the same optimizer, but scheduler " +
                       std::to_string(i) + " (" + schedulers[i]->type_name() + ") has a different one");
    }
  }
}

void save_children(const std::vector<std::shared_ptr<LRScheduler>>& schedulers, SchedulerState& s) {
  for (const auto& c : schedulers) s.children.push_back(c->state_dict());
}

void load_children(const std::vector<std::shared_ptr<LRScheduler>>& schedulers, const SchedulerState& s,
                   const std::string& who) {
  if (s.children.size() != schedulers.size()) {
    throw CheckpointError(who + ".load_state_dict: state has " + std::to_string(s.children.size()) +
                          " schedulers, this one has " + std::to_string(schedulers.size()));
  }
  for (size_t i = 0; i < schedulers.size(); ++i) schedulers[i]->load_state_dict(s.children[i]);
}

}  // namespace

SequentialLR::SequentialLR(std::shared_ptr<Optimizer> optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
                           std::vector<int64_t> milestones)
    : LRScheduler(std::move(optimizer)), schedulers_(std::move(schedulers)), milestones_(std::move(milestones)) {
  check_children(schedulers_, optimizer_, "SequentialLR");
  if (milestones_.size() + 1 != schedulers_.size()) {
    throw ValueError("SequentialLR: expects one more scheduler than milestones, got " +
                     std::to_string(schedulers_.size()) + " schedulers and " + std::to_string(milestones_.size()) +
                     " milestones");
  }
  last_epoch_ = 0;
  step_count_ = 1;
  // Back to the initial rates, and undo the first step each child took when it was built.
  for (const auto& g : optimizer_->param_groups()) g->options["lr"] = g->get("initial_lr");
  undo_step();
  const size_t idx = std::upper_bound(milestones_.begin(), milestones_.end(), int64_t{0}) - milestones_.begin();
  schedulers_[idx]->initial_step();
  last_lrs_ = schedulers_[idx]->get_last_lr();
}

void SequentialLR::undo_step() {
  for (const auto& s : schedulers_) s->undo_step();
}

std::vector<double> SequentialLR::compute_lr() {
  const size_t idx = std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) - milestones_.begin();
  const auto& s = schedulers_[idx];
  if (idx > 0 && milestones_[idx - 1] == last_epoch_) {
    s->update_lr_at(0);
  } else {
    s->step();
  }
  return s->get_last_lr();
}

void SequentialLR::save_extra(SchedulerState& s) const { save_children(schedulers_, s); }
void SequentialLR::load_extra(const SchedulerState& s) { load_children(schedulers_, s, "SequentialLR"); }

ChainedScheduler::ChainedScheduler(std::vector<std::shared_ptr<LRScheduler>> schedulers,
                                   std::shared_ptr<Optimizer> optimizer)
    : LRScheduler(optimizer ? std::move(optimizer)
                            : (schedulers.empty() || !schedulers[0] ? nullptr : schedulers[0]->optimizer())),
      schedulers_(std::move(schedulers)) {
  check_children(schedulers_, optimizer_, "ChainedScheduler");
  last_epoch_ = 0;
  step_count_ = 1;
  last_lrs_ = current_lrs();
}

void ChainedScheduler::undo_step() {
  for (const auto& s : schedulers_) s->undo_step();
}

std::vector<double> ChainedScheduler::compute_lr() {
  for (const auto& s : schedulers_) s->step();
  return current_lrs();
}

void ChainedScheduler::save_extra(SchedulerState& s) const { save_children(schedulers_, s); }
void ChainedScheduler::load_extra(const SchedulerState& s) { load_children(schedulers_, s, "ChainedScheduler"); }

// ---- ReduceLROnPlateau
ReduceLROnPlateau::ReduceLROnPlateau(std::shared_ptr<Optimizer> optimizer, std::string mode, double factor,
                                     int64_t patience, double threshold, std::string threshold_mode, int64_t cooldown,
                                     std::vector<double> min_lrs, double eps)
    : optimizer_(std::move(optimizer)),
      mode_(std::move(mode)),
      threshold_mode_(std::move(threshold_mode)),
      factor_(factor),
      threshold_(threshold),
      eps_(eps),
      patience_(patience),
      cooldown_(cooldown),
      min_lrs_(std::move(min_lrs)) {
  if (!optimizer_) throw ValueError("ReduceLROnPlateau: optimizer is None");
  if (!(factor < 1.0)) throw ValueError("ReduceLROnPlateau: factor must be < 1.0, got " + num(factor));
  if (mode_ != "min" && mode_ != "max")
    throw ValueError("ReduceLROnPlateau: mode must be 'min' or 'max', got '" + mode_ + "'");
  if (threshold_mode_ != "rel" && threshold_mode_ != "abs") {
    throw ValueError("ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', got '" + threshold_mode_ + "'");
  }
  if (patience < 0) throw ValueError("ReduceLROnPlateau: patience must be >= 0, got " + std::to_string(patience));
  if (cooldown < 0) throw ValueError("ReduceLROnPlateau: cooldown must be >= 0, got " + std::to_string(cooldown));
  const size_t n = optimizer_->param_groups().size();
  if (min_lrs_.size() == 1 && n > 1) min_lrs_.assign(n, min_lrs_[0]);
  if (min_lrs_.size() != n) {
    throw ValueError("ReduceLROnPlateau: expected " + std::to_string(n) + " min_lrs, got " +
                     std::to_string(min_lrs_.size()));
  }
  state_.best = mode_ == "min" ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  for (const auto& g : optimizer_->param_groups()) last_lrs_.push_back(g->get("lr"));
  state_.last_lrs = last_lrs_;
}

bool ReduceLROnPlateau::is_better(double a, double best) const {
  const bool rel = threshold_mode_ == "rel";
  if (mode_ == "min") return rel ? a < best * (1.0 - threshold_) : a < best - threshold_;
  return rel ? a > best * (threshold_ + 1.0) : a > best + threshold_;
}

void ReduceLROnPlateau::step(double metric) {
  const auto& groups = optimizer_->param_groups();
  if (groups.size() != min_lrs_.size()) {
    throw ValueError("ReduceLROnPlateau: the optimizer has " + std::to_string(groups.size()) +
                     " parameter groups, min_lrs has " + std::to_string(min_lrs_.size()));
  }
  PlateauState s = state_;
  s.last_epoch += 1;
  if (is_better(metric, s.best)) {
    s.best = metric;
    s.num_bad_epochs = 0;
  } else {
    s.num_bad_epochs += 1;
  }
  if (s.cooldown_counter > 0) {
    s.cooldown_counter -= 1;
    s.num_bad_epochs = 0;
  }
  if (s.num_bad_epochs > patience_) {
    for (size_t i = 0; i < groups.size(); ++i) {
      const double old_lr = groups[i]->get("lr");
      const double new_lr = std::max(old_lr * factor_, min_lrs_[i]);
      if (old_lr - new_lr > eps_) groups[i]->options["lr"] = new_lr;
    }
    s.cooldown_counter = cooldown_;
    s.num_bad_epochs = 0;
  }
  s.last_lrs.clear();
  for (const auto& g : groups) s.last_lrs.push_back(g->get("lr"));
  state_ = s;
  last_lrs_ = s.last_lrs;
}

Options ReduceLROnPlateau::hyperparameters() const {
  return {{"factor", factor_},
          {"patience", double(patience_)},
          {"threshold", threshold_},
          {"cooldown", double(cooldown_)},
          {"eps", eps_}};
}

PlateauState ReduceLROnPlateau::state_dict() const { return state_; }

void ReduceLROnPlateau::load_state_dict(const PlateauState& s) {
  if (s.num_bad_epochs < 0 || s.cooldown_counter < 0) {
    throw CheckpointError("ReduceLROnPlateau.load_state_dict: negative num_bad_epochs or cooldown_counter");
  }
  state_ = s;
  last_lrs_ = s.last_lrs;
}

}  // namespace st::optim
