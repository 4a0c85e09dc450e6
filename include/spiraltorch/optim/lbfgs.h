#pragma once
#include <functional>
#include <string>

#include "spiraltorch/optim/optimizer.h"

namespace st::optim {

// torch.optim.LBFGS: limited-memory BFGS over all parameters as one flat vector (one parameter
// group). step(closure) runs up to max_iter iterations; closure recomputes the loss and its
// gradients (zero_grad + forward + backward) and returns the loss. Directions from the two-loop
// recursion over the last history_size (s, y) pairs (a pair is kept when y.s > 1e-10), the first
// step scaled by min(1, 1/|g|_1) * lr, then lr; with line_search_fn "strong_wolfe" the step length
// satisfies the strong Wolfe conditions (c1 = 1e-4, c2 = 0.9, cubic interpolation, at most 25
// evaluations). Stops at max_iter, max_eval closure calls (default max_iter * 5 / 4), max |g| <=
// tolerance_grad, or a step or loss change below tolerance_change. The history lives in the first
// parameter's state (buffers d, prev_flat_grad, old_dirs.i, old_stps.i, ro.i and the scalars t,
// H_diag, prev_loss, n_iter, func_evals), so state dicts round-trip.
class LBFGS : public Optimizer {
 public:
  explicit LBFGS(std::vector<ParamGroup> groups, double lr = 1.0, int64_t max_iter = 20, int64_t max_eval = -1,
                 double tolerance_grad = 1e-7, double tolerance_change = 1e-9, int64_t history_size = 100,
                 const std::string& line_search_fn = "");
  std::string type_name() const override { return "LBFGS"; }
  // Returns the loss of the first closure call (before any update).
  double step(const std::function<double()>& closure);

 protected:
  void validate(const Options& options) const override;
  Shape buffer_shape(const Tensor& param, const std::string& buffer) const override;
  void update(const ParamGroup& group, Tensor& param, const Tensor& grad, ParamState& state) override;
};

}  // namespace st::optim
