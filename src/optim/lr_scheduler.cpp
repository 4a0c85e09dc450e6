#include "spiraltorch/optim/lr_scheduler.h"

#include <cmath>
#include <numbers>

#include "spiraltorch/error.h"

namespace st::optim {

namespace {
int64_t py_mod(int64_t a, int64_t m) { return ((a % m) + m) % m; }
}  // namespace

LRScheduler::LRScheduler(std::shared_ptr<Optimizer> optimizer) : optimizer_(std::move(optimizer)) {
  if (!optimizer_) throw ValueError("LRScheduler: optimizer is None");
  for (const auto& g : optimizer_->param_groups()) {
    g->options.emplace("initial_lr", g->get("lr"));
    base_lrs_.push_back(g->get("initial_lr"));
  }
}

void LRScheduler::initialize() {
  last_epoch_ = -1;
  initial_step();
}

void LRScheduler::initial_step() {
  step_count_ = 0;
  is_initial_ = true;
  try {
    step();
  } catch (...) {
    is_initial_ = false;
    throw;
  }
  is_initial_ = false;
}

void LRScheduler::apply_lrs(std::vector<double> lrs) {
  const auto& groups = optimizer_->param_groups();
  if (lrs.size() != groups.size()) throw ValueError(type_name() + ": the optimizer's parameter groups changed");
  for (size_t i = 0; i < groups.size(); ++i) groups[i]->options["lr"] = lrs[i];
  last_lrs_ = std::move(lrs);
}

void LRScheduler::update_lr_at(int64_t epoch) {
  last_epoch_ = epoch;
  apply_lrs(closed_form_lr());
}

std::vector<double> LRScheduler::current_lrs() const {
  std::vector<double> out;
  for (const auto& g : optimizer_->param_groups()) out.push_back(g->get("lr"));
  return out;
}

void LRScheduler::step() {
  // A step that fails (a LambdaLR callable raising, a child schedule failing) leaves the schedule,
  // its children and the groups' rates as they were.
  const SchedulerState before = state_dict();
  const std::vector<double> lrs_before = current_lrs();
  try {
    ++step_count_;
    ++last_epoch_;
    apply_lrs(compute_lr());
  } catch (...) {
    load_state_dict(before);
    const auto& groups = optimizer_->param_groups();
    for (size_t i = 0; i < groups.size() && i < lrs_before.size(); ++i) groups[i]->options["lr"] = lrs_before[i];
    throw;
  }
}

SchedulerState LRScheduler::state_dict() const {
  SchedulerState s{last_epoch_, step_count_, base_lrs_, last_lrs_, {}, {}};
  save_extra(s);
  return s;
}

void LRScheduler::load_state_dict(const SchedulerState& s) {
  if (s.base_lrs.size() != base_lrs_.size()) {
    throw CheckpointError(type_name() + ".load_state_dict: state has " + std::to_string(s.base_lrs.size()) +
                          " groups, the optimizer has " + std::to_string(base_lrs_.size()));
  }
  load_extra(s);  // checks first: a failed load changes nothing
  last_epoch_ = s.last_epoch;
  step_count_ = s.step_count;
  base_lrs_ = s.base_lrs;
  last_lrs_ = s.last_lrs;
}

// ---- StepLR
StepLR::StepLR(std::shared_ptr<Optimizer> optimizer, int64_t step_size, double gamma)
    : LRScheduler(std::move(optimizer)), step_size_(step_size), gamma_(gamma) {
  if (step_size <= 0) throw ValueError("StepLR: step_size must be positive, got " + std::to_string(step_size));
  initialize();
}

std::vector<double> StepLR::compute_lr() {
  std::vector<double> lrs = current_lrs();
  if (last_epoch_ == 0 || last_epoch_ % step_size_ != 0) return lrs;
  for (double& lr : lrs) lr *= gamma_;
  return lrs;
}

// ---- CosineAnnealingLR
CosineAnnealingLR::CosineAnnealingLR(std::shared_ptr<Optimizer> optimizer, int64_t T_max, double eta_min)
    : LRScheduler(std::move(optimizer)), T_max_(T_max), eta_min_(eta_min) {
  if (T_max <= 0) throw ValueError("CosineAnnealingLR: T_max must be positive, got " + std::to_string(T_max));
  initialize();
}

std::vector<double> CosineAnnealingLR::compute_lr() {
  std::vector<double> lrs = current_lrs();
  if (last_epoch_ == 0) return lrs;
  const double pi = std::numbers::pi, T = static_cast<double>(T_max_), e = static_cast<double>(last_epoch_);
  if (step_count_ == 1 && last_epoch_ > 0) {
    for (size_t i = 0; i < lrs.size(); ++i) {
      lrs[i] = eta_min_ + (base_lrs_[i] - eta_min_) * (1 + std::cos(e * pi / T)) / 2;
    }
    return lrs;
  }
  if (py_mod(last_epoch_ - 1 - T_max_, 2 * T_max_) == 0) {
    for (size_t i = 0; i < lrs.size(); ++i) lrs[i] = lrs[i] + (base_lrs_[i] - eta_min_) * (1 - std::cos(pi / T)) / 2;
    return lrs;
  }
  for (double& lr : lrs) {
    lr = (1 + std::cos(pi * e / T)) / (1 + std::cos(pi * (e - 1) / T)) * (lr - eta_min_) + eta_min_;
  }
  return lrs;
}

// ---- LinearWarmup
LinearWarmup::LinearWarmup(std::shared_ptr<Optimizer> optimizer, int64_t warmup_steps, double start_factor)
    : LRScheduler(std::move(optimizer)), warmup_steps_(warmup_steps), start_factor_(start_factor) {
  if (warmup_steps <= 0)
    throw ValueError("LinearWarmup: warmup_steps must be positive, got " + std::to_string(warmup_steps));
  if (!(start_factor > 0.0 && start_factor <= 1.0)) {
    throw ValueError("LinearWarmup: start_factor must be in (0, 1], got " + std::to_string(start_factor));
  }
  initialize();
}

std::vector<double> LinearWarmup::compute_lr() {
  const double t = static_cast<double>(std::min(last_epoch_, warmup_steps_)) / static_cast<double>(warmup_steps_);
  const double factor = start_factor_ + (1.0 - start_factor_) * t;
  std::vector<double> lrs;
  for (double b : base_lrs_) lrs.push_back(b * factor);
  return lrs;
}

// ---- OneCycleLR
OneCycleLR::OneCycleLR(std::shared_ptr<Optimizer> optimizer, std::vector<double> max_lr, int64_t total_steps,
                       double pct_start, std::string anneal_strategy, bool cycle_momentum, double base_momentum,
                       double max_momentum, double div_factor, double final_div_factor, bool three_phase)
    : LRScheduler(std::move(optimizer)),
      total_steps_(total_steps),
      pct_start_(pct_start),
      cycle_momentum_(cycle_momentum),
      div_factor_(div_factor),
      final_div_factor_(final_div_factor),
      three_phase_(three_phase) {
  if (total_steps <= 0)
    throw ValueError("OneCycleLR: total_steps must be positive, got " + std::to_string(total_steps));
  if (!(pct_start >= 0.0 && pct_start <= 1.0)) {
    throw ValueError("OneCycleLR: pct_start must be in [0, 1], got " + std::to_string(pct_start));
  }
  if (anneal_strategy != "cos" && anneal_strategy != "linear") {
    throw ValueError("OneCycleLR: anneal_strategy must be 'cos' or 'linear', got '" + anneal_strategy + "'");
  }
  cos_ = anneal_strategy == "cos";
  const auto& groups = optimizer_->param_groups();
  if (max_lr.size() == 1 && groups.size() > 1) max_lr.assign(groups.size(), max_lr[0]);
  if (max_lr.size() != groups.size()) {
    throw ValueError("OneCycleLR: expected " + std::to_string(groups.size()) + " values for max_lr, got " +
                     std::to_string(max_lr.size()));
  }
  const double T = static_cast<double>(total_steps);
  if (three_phase) {
    phases_ = {{pct_start * T - 1, 0, 1, 1, 0}, {2 * pct_start * T - 2, 1, 0, 0, 1}, {T - 1, 0, 2, 1, 1}};
  } else {
    phases_ = {{pct_start * T - 1, 0, 1, 1, 0}, {T - 1, 1, 2, 0, 1}};
  }
  base_lrs_.clear();
  for (size_t i = 0; i < groups.size(); ++i) {
    const double initial = max_lr[i] / div_factor;
    initial_lr_.push_back(initial);
    max_lr_.push_back(max_lr[i]);
    min_lr_.push_back(initial / final_div_factor);
    groups[i]->options["initial_lr"] = initial;
    groups[i]->options["max_lr"] = max_lr[i];
    groups[i]->options["min_lr"] = initial / final_div_factor;
    base_lrs_.push_back(initial);
  }
  if (cycle_momentum) {
    const Options& d = optimizer_->defaults();
    const bool has_m = d.count("momentum") > 0, has_b = d.count("beta1") > 0;
    if (!has_m && !has_b) {
      throw ValueError("OneCycleLR: optimizer must support momentum or beta1 with cycle_momentum enabled");
    }
    use_beta1_ = has_b;
    for (const auto& g : groups) {
      g->options[use_beta1_ ? "beta1" : "momentum"] = max_momentum;
      g->options["max_momentum"] = max_momentum;
      g->options["base_momentum"] = base_momentum;
      base_momentum_.push_back(base_momentum);
      max_momentum_.push_back(max_momentum);
    }
  }
  initialize();
}

Options OneCycleLR::hyperparameters() const {
  return {{"total_steps", double(total_steps_)},
          {"pct_start", pct_start_},
          {"div_factor", div_factor_},
          {"final_div_factor", final_div_factor_},
          {"cycle_momentum", cycle_momentum_ ? 1.0 : 0.0},
          {"three_phase", three_phase_ ? 1.0 : 0.0},
          {"anneal_cos", cos_ ? 1.0 : 0.0}};
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (cos_) return end + (start - end) / 2.0 * (std::cos(std::numbers::pi * pct) + 1);
  return (end - start) * pct + start;
}

std::vector<double> OneCycleLR::compute_lr() {
  const int64_t step_num = last_epoch_;
  if (step_num > total_steps_) {
    throw ValueError("OneCycleLR: tried to step " + std::to_string(step_num) + " times; total_steps is " +
                     std::to_string(total_steps_));
  }
  const auto& groups = optimizer_->param_groups();
  std::vector<double> lrs;
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const double lr_of[3] = {initial_lr_[gi], max_lr_[gi], min_lr_[gi]};
    double start_step = 0.0, lr = 0.0, mom = 0.0;
    for (size_t i = 0; i < phases_.size(); ++i) {
      const Phase& ph = phases_[i];
      if (static_cast<double>(step_num) <= ph.end_step || i + 1 == phases_.size()) {
        const double pct = (static_cast<double>(step_num) - start_step) / (ph.end_step - start_step);
        lr = anneal(lr_of[ph.start_lr], lr_of[ph.end_lr], pct);
        if (cycle_momentum_) {
          const double m_of[2] = {base_momentum_[gi], max_momentum_[gi]};
          mom = anneal(m_of[ph.start_m], m_of[ph.end_m], pct);
        }
        break;
      }
      start_step = ph.end_step;
    }
    lrs.push_back(lr);
    if (cycle_momentum_) groups[gi]->options[use_beta1_ ? "beta1" : "momentum"] = mom;
  }
  return lrs;
}

}  // namespace st::optim
