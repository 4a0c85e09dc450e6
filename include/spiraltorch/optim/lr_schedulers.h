#pragma once
// The rest of torch.optim.lr_scheduler's schedules, with torch's argument names and its
// recursive (chainable) step rules, so each multiplies the rate the groups hold when several
// schedules drive one optimizer. Construction takes the first step, as in torch.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "spiraltorch/optim/lr_scheduler.h"

namespace st::optim {

// lr *= gamma ** (number of milestones equal to the epoch); milestones may repeat.
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(std::shared_ptr<Optimizer> optimizer, std::vector<int64_t> milestones, double gamma = 0.1);
  std::string type_name() const override { return "MultiStepLR"; }
  Options hyperparameters() const override { return {{"gamma", gamma_}}; }
  const std::vector<int64_t>& milestones() const { return milestones_; }

 protected:
  std::vector<double> compute_lr() override;
  std::vector<double> closed_form_lr() override;

 private:
  std::vector<int64_t> milestones_;  // sorted
  double gamma_;
};

// lr *= gamma every epoch.
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(std::shared_ptr<Optimizer> optimizer, double gamma);
  std::string type_name() const override { return "ExponentialLR"; }
  Options hyperparameters() const override { return {{"gamma", gamma_}}; }

 protected:
  std::vector<double> compute_lr() override;
  std::vector<double> closed_form_lr() override;

 private:
  double gamma_;
};

// The factor moves linearly from start_factor to end_factor over total_iters epochs, then stays.
class LinearLR : public LRScheduler {
 public:
  LinearLR(std::shared_ptr<Optimizer> optimizer, double start_factor = 1.0 / 3.0, double end_factor = 1.0,
           int64_t total_iters = 5);
  std::string type_name() const override { return "LinearLR"; }
  Options hyperparameters() const override {
    return {{"start_factor", start_factor_}, {"end_factor", end_factor_}, {"total_iters", double(total_iters_)}};
  }

 protected:
  std::vector<double> compute_lr() override;
  std::vector<double> closed_form_lr() override;

 private:
  double start_factor_, end_factor_;
  int64_t total_iters_;
};

// lr = base_lr * factor for the first total_iters epochs, then base_lr.
class ConstantLR : public LRScheduler {
 public:
  ConstantLR(std::shared_ptr<Optimizer> optimizer, double factor = 1.0 / 3.0, int64_t total_iters = 5);
  std::string type_name() const override { return "ConstantLR"; }
  Options hyperparameters() const override { return {{"factor", factor_}, {"total_iters", double(total_iters_)}}; }

 protected:
  std::vector<double> compute_lr() override;
  std::vector<double> closed_form_lr() override;

 private:
  double factor_;
  int64_t total_iters_;
};

// lr = base_lr * (1 - min(epoch, total_iters) / total_iters) ** power.
class PolynomialLR : public LRScheduler {
 public:
  PolynomialLR(std::shared_ptr<Optimizer> optimizer, int64_t total_iters = 5, double power = 1.0);
  std::string type_name() const override { return "PolynomialLR"; }
  Options hyperparameters() const override { return {{"total_iters", double(total_iters_)}, {"power", power_}}; }

 protected:
  std::vector<double> compute_lr() override;
  std::vector<double> closed_form_lr() override;

 private:
  int64_t total_iters_;
  double power_;
};

// SGDR: cosine annealing from base_lr to eta_min over T_i epochs, restarting with T_i *= T_mult.
class CosineAnnealingWarmRestarts : public LRScheduler {
 public:
  CosineAnnealingWarmRestarts(std::shared_ptr<Optimizer> optimizer, int64_t T_0, int64_t T_mult = 1,
                              double eta_min = 0.0);
  std::string type_name() const override { return "CosineAnnealingWarmRestarts"; }
  Options hyperparameters() const override {
    return {{"T_0", double(T_0_)}, {"T_mult", double(T_mult_)}, {"eta_min", eta_min_}};
  }
  double T_cur() const { return T_cur_; }
  int64_t T_i() const { return T_i_; }

 protected:
  std::vector<double> compute_lr() override;
  void save_extra(SchedulerState& s) const override;
  void load_extra(const SchedulerState& s) override;

 private:
  int64_t T_0_, T_mult_;
  double eta_min_;
  double T_cur_ = -1;
  int64_t T_i_;
};

// A rate set by a function of the epoch per group: lr = base_lr * lr_lambda(epoch) (LambdaLR), or
// multiplied each epoch: lr *= lr_lambda(epoch) (MultiplicativeLR, from epoch 1).
using LrLambda = std::function<double(int64_t)>;

class LambdaLR : public LRScheduler {
 public:
  // One function for every group, or one per group.
  LambdaLR(std::shared_ptr<Optimizer> optimizer, std::vector<LrLambda> lr_lambdas);
  std::string type_name() const override { return "LambdaLR"; }
  Options hyperparameters() const override { return {}; }

 protected:
  LambdaLR(std::shared_ptr<Optimizer> optimizer, std::vector<LrLambda> lr_lambdas, bool take_first_step);
  std::vector<double> compute_lr() override;
  std::vector<LrLambda> lambdas_;
};

class MultiplicativeLR : public LambdaLR {
 public:
  MultiplicativeLR(std::shared_ptr<Optimizer> optimizer, std::vector<LrLambda> lr_lambdas);
  std::string type_name() const override { return "MultiplicativeLR"; }

 protected:
  std::vector<double> compute_lr() override;
};

// Runs schedulers[i] between milestones[i-1] and milestones[i]; at a milestone the next one starts
// from its closed form at epoch 0 (torch's SequentialLR).
class SequentialLR : public LRScheduler {
 public:
  SequentialLR(std::shared_ptr<Optimizer> optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
               std::vector<int64_t> milestones);
  std::string type_name() const override { return "SequentialLR"; }
  Options hyperparameters() const override { return {}; }
  void undo_step() override;
  const std::vector<std::shared_ptr<LRScheduler>>& schedulers() const { return schedulers_; }

 protected:
  std::vector<double> compute_lr() override;
  void save_extra(SchedulerState& s) const override;
  void load_extra(const SchedulerState& s) override;

 private:
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<int64_t> milestones_;
};

// Steps every scheduler in turn each epoch (torch's ChainedScheduler); the rates are the product
// of the chainable rules.
class ChainedScheduler : public LRScheduler {
 public:
  explicit ChainedScheduler(std::vector<std::shared_ptr<LRScheduler>> schedulers,
                            std::shared_ptr<Optimizer> optimizer = nullptr);
  std::string type_name() const override { return "ChainedScheduler"; }
  Options hyperparameters() const override { return {}; }
  void undo_step() override;
  const std::vector<std::shared_ptr<LRScheduler>>& schedulers() const { return schedulers_; }

 protected:
  std::vector<double> compute_lr() override;
  void save_extra(SchedulerState& s) const override;
  void load_extra(const SchedulerState& s) override;

 private:
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
};

// Divides the rates by 1/factor once a metric has not improved for `patience` epochs (torch's
// ReduceLROnPlateau). Not an LRScheduler: its step takes the metric.
struct PlateauState {
  int64_t last_epoch = 0;
  double best = 0.0;
  int64_t num_bad_epochs = 0;
  int64_t cooldown_counter = 0;
  std::vector<double> last_lrs;
};

class ReduceLROnPlateau {
 public:
  ReduceLROnPlateau(std::shared_ptr<Optimizer> optimizer, std::string mode = "min", double factor = 0.1,
                    int64_t patience = 10, double threshold = 1e-4, std::string threshold_mode = "rel",
                    int64_t cooldown = 0, std::vector<double> min_lrs = {0.0}, double eps = 1e-8);
  // Records `metric` for the next epoch and reduces the rates when it has plateaued.
  void step(double metric);
  const std::vector<double>& get_last_lr() const { return last_lrs_; }
  const std::shared_ptr<Optimizer>& optimizer() const { return optimizer_; }
  int64_t last_epoch() const { return state_.last_epoch; }
  double best() const { return state_.best; }
  int64_t num_bad_epochs() const { return state_.num_bad_epochs; }
  bool in_cooldown() const { return state_.cooldown_counter > 0; }
  const std::vector<double>& min_lrs() const { return min_lrs_; }
  Options hyperparameters() const;
  const std::string& mode() const { return mode_; }
  const std::string& threshold_mode() const { return threshold_mode_; }
  PlateauState state_dict() const;
  void load_state_dict(const PlateauState& s);
  // Whether `a` improves on `best` under the mode and threshold.
  bool is_better(double a, double best) const;

 private:
  std::shared_ptr<Optimizer> optimizer_;
  std::string mode_, threshold_mode_;
  double factor_, threshold_, eps_;
  int64_t patience_, cooldown_;
  std::vector<double> min_lrs_;
  PlateauState state_;
  std::vector<double> last_lrs_;
};

}  // namespace st::optim
