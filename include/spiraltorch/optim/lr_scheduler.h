#pragma once
// Learning-rate schedules over an optimizer's groups, following
// torch.optim.lr_scheduler: construction performs the first step (epoch 0).
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "spiraltorch/optim/optimizer.h"

namespace st::optim {

struct SchedulerState {
  int64_t last_epoch = -1;
  int64_t step_count = 0;
  std::vector<double> base_lrs;
  std::vector<double> last_lrs;
  // What a schedule keeps beyond the common fields (CosineAnnealingWarmRestarts' T_cur, ...),
  // and the states of the schedules a composite one drives (SequentialLR, ChainedScheduler).
  std::map<std::string, double> extra;
  std::vector<SchedulerState> children;
};

class LRScheduler {
 public:
  explicit LRScheduler(std::shared_ptr<Optimizer> optimizer);
  virtual ~LRScheduler() = default;
  virtual std::string type_name() const = 0;
  // Advances one epoch/iteration and writes the new rates into the groups.
  void step();
  const std::vector<double>& get_last_lr() const { return last_lrs_; }
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  int64_t last_epoch() const { return last_epoch_; }
  const std::shared_ptr<Optimizer>& optimizer() const { return optimizer_; }
  SchedulerState state_dict() const;
  void load_state_dict(const SchedulerState& s);
  // Constructor arguments, for display and state dicts.
  virtual Options hyperparameters() const = 0;
  // torch's _initial_step(): resets the step count and takes the first step in "initial" mode.
  void initial_step();
  // Sets last_epoch to `epoch` and writes the closed-form rates for it (torch's _update_lr(epoch),
  // which SequentialLR calls at a milestone); schedules without a closed form use compute_lr().
  void update_lr_at(int64_t epoch);
  // Steps back last_epoch by one (SequentialLR undoes the first step every child took at construction).
  virtual void undo_step() { --last_epoch_; }

 protected:
  // Call at the end of the derived constructor.
  void initialize();
  // The rates for last_epoch_ (may read the groups' current rates).
  virtual std::vector<double> compute_lr() = 0;
  // The rates as a function of last_epoch_ alone (torch's _get_closed_form_lr).
  virtual std::vector<double> closed_form_lr() { return compute_lr(); }
  // Hooks for state beyond SchedulerState's common fields.
  virtual void save_extra(SchedulerState& /*s*/) const {}
  virtual void load_extra(const SchedulerState& /*s*/) {}
  // Writes `lrs` into the groups and records them as the last rates.
  void apply_lrs(std::vector<double> lrs);
  // True during the step taken by the constructor (torch's _is_initial).
  bool is_initial_ = false;
  std::shared_ptr<Optimizer> optimizer_;
  std::vector<double> base_lrs_, last_lrs_;
  int64_t last_epoch_ = -1;
  int64_t step_count_ = 0;
  std::vector<double> current_lrs() const;
};

// lr = base_lr * gamma ** (epoch // step_size).
class StepLR : public LRScheduler {
 public:
  StepLR(std::shared_ptr<Optimizer> optimizer, int64_t step_size, double gamma = 0.1);
  std::string type_name() const override { return "StepLR"; }
  Options hyperparameters() const override { return {{"step_size", double(step_size_)}, {"gamma", gamma_}}; }

 protected:
  std::vector<double> compute_lr() override;

 private:
  int64_t step_size_;
  double gamma_;
};

// Cosine annealing from base_lr to eta_min over T_max steps (torch's recursive form).
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(std::shared_ptr<Optimizer> optimizer, int64_t T_max, double eta_min = 0.0);
  std::string type_name() const override { return "CosineAnnealingLR"; }
  Options hyperparameters() const override { return {{"T_max", double(T_max_)}, {"eta_min", eta_min_}}; }

 protected:
  std::vector<double> compute_lr() override;

 private:
  int64_t T_max_;
  double eta_min_;
};

// lr = base_lr * (start_factor + (1 - start_factor) * min(epoch, warmup_steps) / warmup_steps):
// a linear ramp to the base rate, then constant (torch's LinearLR with end_factor 1).
class LinearWarmup : public LRScheduler {
 public:
  LinearWarmup(std::shared_ptr<Optimizer> optimizer, int64_t warmup_steps, double start_factor = 1.0 / 3.0);
  std::string type_name() const override { return "LinearWarmup"; }
  Options hyperparameters() const override {
    return {{"warmup_steps", double(warmup_steps_)}, {"start_factor", start_factor_}};
  }

 protected:
  std::vector<double> compute_lr() override;

 private:
  int64_t warmup_steps_;
  double start_factor_;
};

// The 1cycle policy of torch.optim.lr_scheduler.OneCycleLR (two phases, optional
// momentum cycling on "momentum" or "beta1").
class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(std::shared_ptr<Optimizer> optimizer, std::vector<double> max_lr, int64_t total_steps,
             double pct_start = 0.3, std::string anneal_strategy = "cos", bool cycle_momentum = true,
             double base_momentum = 0.85, double max_momentum = 0.95, double div_factor = 25.0,
             double final_div_factor = 1e4, bool three_phase = false);
  std::string type_name() const override { return "OneCycleLR"; }
  Options hyperparameters() const override;

 protected:
  std::vector<double> compute_lr() override;

 private:
  struct Phase {
    double end_step;
    int start_lr, end_lr;  // 0 initial, 1 max, 2 min
    int start_m, end_m;    // 0 base momentum, 1 max momentum
  };
  double anneal(double start, double end, double pct) const;
  int64_t total_steps_;
  double pct_start_;
  bool cos_;
  bool cycle_momentum_;
  bool use_beta1_ = false;
  double div_factor_, final_div_factor_;
  bool three_phase_;
  std::vector<Phase> phases_;
  std::vector<double> initial_lr_, max_lr_, min_lr_, base_momentum_, max_momentum_;
};

}  // namespace st::optim
