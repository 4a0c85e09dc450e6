#include "spiraltorch/optim/lbfgs.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "spiraltorch/autograd.h"
#include "spiraltorch/ops.h"

namespace st::optim {

namespace {

// The parameters as one flat vector: gathering gradients, stepping along a direction, saving and
// restoring values.
struct Flat {
  std::vector<Tensor> params;
  int64_t numel = 0;

  explicit Flat(const ParamGroup& group) : params(group.params) {
    for (const Tensor& p : params) numel += p.numel();
  }
  Tensor grad() const {
    std::vector<Tensor> parts;
    for (const Tensor& p : params) {
      const Tensor g = p.grad();
      parts.push_back(reshape(g.defined() ? g.detach() : zeros_like(p), {p.numel()}));
    }
    return cat(parts).contiguous();
  }
  Tensor values() const {
    std::vector<Tensor> parts;
    for (const Tensor& p : params) parts.push_back(reshape(p.detach(), {p.numel()}));
    return cat(parts).contiguous();
  }
  // p += step * d (each parameter its slice of d).
  void add(double step, const Tensor& d) const {
    NoGradGuard ng;
    int64_t off = 0;
    for (Tensor p : params) {
      add_(p, reshape(narrow(d, 0, off, p.numel()), p.shape()), step);
      off += p.numel();
    }
  }
  void set(const Tensor& x) const {
    NoGradGuard ng;
    int64_t off = 0;
    for (Tensor p : params) {
      copy_(p, reshape(narrow(x, 0, off, p.numel()), p.shape()));
      off += p.numel();
    }
  }
};

double dot(const Tensor& a, const Tensor& b) { return sum(mul(a, b)).item(); }
double max_abs(const Tensor& a) { return a.numel() ? max(abs(a)).item() : 0.0; }

// The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to [lo, hi] (by
// default the interval between x1 and x2); the midpoint when the cubic has no minimum.
double cubic_interpolate(double x1, double f1, double g1, double x2, double f2, double g2, double lo, double hi) {
  const double d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2);
  const double d2_square = d1 * d1 - g1 * g2;
  if (d2_square < 0) return (lo + hi) / 2;
  const double d2 = std::sqrt(d2_square);
  const double pos = x1 <= x2 ? x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
                              : x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2));
  return std::min(std::max(pos, lo), hi);
}
double cubic_interpolate(double x1, double f1, double g1, double x2, double f2, double g2) {
  return cubic_interpolate(x1, f1, g1, x2, f2, g2, std::min(x1, x2), std::max(x1, x2));
}

struct Point {
  double t, f, gtd;
  Tensor g;
};

struct LineSearchResult {
  double f, t;
  Tensor g;
  int64_t evals;
};

// A step length along d from x satisfying the strong Wolfe conditions: a bracketing phase that
// grows t by cubic extrapolation (within [t + 0.01 (t - t_prev), 10 t]), then a zoom that shrinks
// the bracket by safeguarded cubic interpolation. evaluate(t) sets the parameters to x + t d,
// returns the loss and leaves the gradient there, and restores x.
LineSearchResult strong_wolfe(const std::function<std::pair<double, Tensor>(double)>& evaluate, double t,
                              const Tensor& d, double f, const Tensor& g, double gtd, double tolerance_change) {
  constexpr double c1 = 1e-4, c2 = 0.9;
  constexpr int64_t max_ls = 25;
  const double d_norm = max_abs(d);
  auto [f_new, g_new] = evaluate(t);
  int64_t evals = 1, ls_iter = 0;
  double gtd_new = dot(g_new, d);
  Point prev{0.0, f, gtd, g};
  std::vector<Point> bracket;
  bool done = false;
  while (ls_iter < max_ls) {
    if (f_new > f + c1 * t * gtd || (ls_iter > 1 && f_new >= prev.f)) {
      bracket = {prev, {t, f_new, gtd_new, g_new}};
      break;
    }
    if (std::abs(gtd_new) <= -c2 * gtd) {
      bracket = {{t, f_new, gtd_new, g_new}};
      done = true;
      break;
    }
    if (gtd_new >= 0) {
      bracket = {prev, {t, f_new, gtd_new, g_new}};
      break;
    }
    const double lo = t + 0.01 * (t - prev.t), hi = t * 10;
    const double next = cubic_interpolate(prev.t, prev.f, prev.gtd, t, f_new, gtd_new, lo, hi);
    prev = {t, f_new, gtd_new, g_new};
    t = next;
    std::tie(f_new, g_new) = evaluate(t);
    ++evals;
    gtd_new = dot(g_new, d);
    ++ls_iter;
  }
  if (ls_iter == max_ls) bracket = {{0.0, f, gtd, g}, {t, f_new, gtd_new, g_new}};

  // Zoom: bracket[low] holds the lowest loss so far.
  bool insufficient_progress = false;
  auto order = [&] {
    return bracket[0].f <= bracket.back().f ? std::pair<size_t, size_t>{0, 1} : std::pair<size_t, size_t>{1, 0};
  };
  auto [low, high] = order();
  while (!done && ls_iter < max_ls) {
    const double b_lo = std::min(bracket[0].t, bracket[1].t), b_hi = std::max(bracket[0].t, bracket[1].t);
    if ((b_hi - b_lo) * d_norm < tolerance_change) break;
    t = cubic_interpolate(bracket[0].t, bracket[0].f, bracket[0].gtd, bracket[1].t, bracket[1].f, bracket[1].gtd);
    // A point too close to an end of the bracket is moved inward once progress stalls.
    const double eps = 0.1 * (b_hi - b_lo);
    if (std::min(b_hi - t, t - b_lo) < eps) {
      if (insufficient_progress || t >= b_hi || t <= b_lo) {
        t = std::abs(t - b_hi) < std::abs(t - b_lo) ? b_hi - eps : b_lo + eps;
        insufficient_progress = false;
      } else {
        insufficient_progress = true;
      }
    } else {
      insufficient_progress = false;
    }
    std::tie(f_new, g_new) = evaluate(t);
    ++evals;
    gtd_new = dot(g_new, d);
    ++ls_iter;
    if (f_new > f + c1 * t * gtd || f_new >= bracket[low].f) {
      bracket[high] = {t, f_new, gtd_new, g_new};
      std::tie(low, high) = order();
    } else {
      if (std::abs(gtd_new) <= -c2 * gtd) {
        done = true;
      } else if (gtd_new * (bracket[high].t - bracket[low].t) >= 0) {
        bracket[high] = bracket[low];
      }
      bracket[low] = {t, f_new, gtd_new, g_new};
    }
  }
  const Point& best = bracket[bracket.size() == 1 ? 0 : low];
  return {best.f, best.t, best.g, evals};
}

Tensor scalar(double v) { return full({}, v, Dtype::Float64); }
double scalar_of(const ParamState& s, const char* key, double fallback) {
  const auto it = s.buffers.find(key);
  return it == s.buffers.end() ? fallback : it->second.item();
}

}  // namespace

LBFGS::LBFGS(std::vector<ParamGroup> groups, double lr, int64_t max_iter, int64_t max_eval, double tolerance_grad,
             double tolerance_change, int64_t history_size, const std::string& line_search_fn)
    : Optimizer({}, {{"lr", lr},
                     {"max_iter", static_cast<double>(max_iter)},
                     {"max_eval", static_cast<double>(max_eval < 0 ? max_iter * 5 / 4 : max_eval)},
                     {"tolerance_grad", tolerance_grad},
                     {"tolerance_change", tolerance_change},
                     {"history_size", static_cast<double>(history_size)},
                     {"strong_wolfe", line_search_fn == "strong_wolfe" ? 1.0 : 0.0}}) {
  if (!line_search_fn.empty() && line_search_fn != "strong_wolfe") {
    throw ValueError("LBFGS: only 'strong_wolfe' is supported as line_search_fn, got '" + line_search_fn + "'");
  }
  if (groups.size() != 1) {
    throw ValueError("LBFGS: doesn't support per-parameter options (parameter groups); got " +
                     std::to_string(groups.size()) + " groups");
  }
  add_param_groups(std::move(groups));
}

void LBFGS::validate(const Options& o) const {
  Optimizer::validate(o);
  if (o.at("max_iter") < 1)
    throw ValueError("LBFGS: max_iter must be at least 1, got " + std::to_string(o.at("max_iter")));
  if (o.at("max_eval") < 1)
    throw ValueError("LBFGS: max_eval must be at least 1, got " + std::to_string(o.at("max_eval")));
  if (o.at("history_size") < 1) {
    throw ValueError("LBFGS: history_size must be at least 1, got " + std::to_string(o.at("history_size")));
  }
}

Shape LBFGS::buffer_shape(const Tensor& param, const std::string& buffer) const {
  const std::string stem = buffer.substr(0, buffer.find('.'));
  if (stem == "d" || stem == "prev_flat_grad" || stem == "old_dirs" || stem == "old_stps") {
    return {Flat(*param_groups().front()).numel};
  }
  return {};  // the scalars
}

void LBFGS::update(const ParamGroup&, Tensor&, const Tensor&, ParamState&) {
  throw ValueError("LBFGS: step() needs a closure that recomputes the loss and its gradients");
}

double LBFGS::step(const std::function<double()>& closure) {
  if (!closure) throw ValueError("LBFGS: step() needs a closure that recomputes the loss and its gradients");
  if (param_groups().size() != 1) {
    throw ValueError("LBFGS: doesn't support per-parameter options (parameter groups); has " +
                     std::to_string(param_groups().size()) + " groups");
  }
  const ParamGroup& group = *param_groups().front();
  const Flat flat(group);
  const double lr = group.get("lr"), tolerance_grad = group.get("tolerance_grad"),
               tolerance_change = group.get("tolerance_change");
  const auto max_iter = static_cast<int64_t>(group.get("max_iter"));
  const auto max_eval = static_cast<int64_t>(group.get("max_eval"));
  const auto history_size = static_cast<size_t>(group.get("history_size"));
  const bool line_search = group.flag("strong_wolfe");
  ParamState& state = mutable_state(group.params.front());
  auto call = [&] {
    EnableGradGuard eg;  // the closure backpropagates whatever the caller's mode
    return closure();
  };

  const double orig_loss = call();
  double loss = orig_loss;
  int64_t current_evals = 1;
  double func_evals = scalar_of(state, "func_evals", 0.0) + 1;
  double n_iter_total = scalar_of(state, "n_iter", 0.0);
  Tensor g = flat.grad();
  bool opt_cond = max_abs(g) <= tolerance_grad;
  auto save_counts = [&] {
    state.buffers["func_evals"] = scalar(func_evals);
    state.buffers["n_iter"] = scalar(n_iter_total);
    state.step = static_cast<int64_t>(n_iter_total);
  };
  if (opt_cond) {
    save_counts();
    return orig_loss;
  }

  // The history from earlier steps.
  Tensor d = state.buffers.count("d") ? state.buffers["d"] : Tensor();
  Tensor prev_g = state.buffers.count("prev_flat_grad") ? state.buffers["prev_flat_grad"] : Tensor();
  double t = scalar_of(state, "t", lr), h_diag = scalar_of(state, "H_diag", 1.0);
  double prev_loss = scalar_of(state, "prev_loss", loss);
  std::vector<Tensor> old_dirs, old_stps;
  std::vector<double> ro;
  for (size_t i = 0; state.buffers.count("old_dirs." + std::to_string(i)); ++i) {
    old_dirs.push_back(state.buffers["old_dirs." + std::to_string(i)]);
    old_stps.push_back(state.buffers["old_stps." + std::to_string(i)]);
    ro.push_back(state.buffers["ro." + std::to_string(i)].item());
  }

  NoGradGuard ng;
  int64_t n_iter = 0;
  while (n_iter < max_iter) {
    ++n_iter;
    ++n_iter_total;
    if (n_iter_total == 1) {
      d = neg(g);
      old_dirs.clear();
      old_stps.clear();
      ro.clear();
      h_diag = 1.0;
    } else {
      // Keep the newest curvature pair when it is informative, then the two-loop recursion.
      const Tensor y = sub(g, prev_g), s = mul(d, t);
      const double ys = dot(y, s);
      if (ys > 1e-10) {
        if (old_dirs.size() == history_size) {
          old_dirs.erase(old_dirs.begin());
          old_stps.erase(old_stps.begin());
          ro.erase(ro.begin());
        }
        old_dirs.push_back(y);
        old_stps.push_back(s);
        ro.push_back(1.0 / ys);
        h_diag = ys / dot(y, y);
      }
      std::vector<double> al(old_dirs.size());
      Tensor q = neg(g);
      for (size_t i = old_dirs.size(); i-- > 0;) {
        al[i] = dot(old_stps[i], q) * ro[i];
        q = sub(q, mul(old_dirs[i], al[i]));
      }
      Tensor r = mul(q, h_diag);
      for (size_t i = 0; i < old_dirs.size(); ++i) {
        const double be = dot(old_dirs[i], r) * ro[i];
        r = add(r, mul(old_stps[i], al[i] - be));
      }
      d = r;
    }
    prev_g = g.clone();
    prev_loss = loss;
    t = n_iter_total == 1 ? std::min(1.0, 1.0 / sum(abs(g)).item()) * lr : lr;
    const double gtd = dot(g, d);
    if (gtd > -tolerance_change) break;  // not a descent direction

    int64_t ls_evals = 0;
    if (line_search) {
      const Tensor x0 = flat.values();  // cat copies: a snapshot
      auto evaluate = [&](double step) {
        flat.add(step, d);
        const double f = call();
        Tensor gt = flat.grad();
        flat.set(x0);
        return std::pair<double, Tensor>{f, gt};
      };
      const LineSearchResult ls = strong_wolfe(evaluate, t, d, loss, g, gtd, tolerance_change);
      loss = ls.f;
      g = ls.g;
      t = ls.t;
      ls_evals = ls.evals;
      flat.add(t, d);
      opt_cond = max_abs(g) <= tolerance_grad;
    } else {
      flat.add(t, d);
      if (n_iter != max_iter) {
        loss = call();
        g = flat.grad();
        opt_cond = max_abs(g) <= tolerance_grad;
        ls_evals = 1;
      }
    }
    current_evals += ls_evals;
    func_evals += static_cast<double>(ls_evals);

    if (n_iter == max_iter || current_evals >= max_eval || opt_cond) break;
    if (max_abs(d) * std::abs(t) <= tolerance_change) break;
    if (std::abs(loss - prev_loss) < tolerance_change) break;
  }

  state.buffers["d"] = d;
  state.buffers["prev_flat_grad"] = prev_g;
  state.buffers["t"] = scalar(t);
  state.buffers["H_diag"] = scalar(h_diag);
  state.buffers["prev_loss"] = scalar(prev_loss);
  for (auto it = state.buffers.begin(); it != state.buffers.end();) {
    const bool history = it->first.rfind("old_", 0) == 0 || it->first.rfind("ro.", 0) == 0;
    it = history ? state.buffers.erase(it) : std::next(it);
  }
  for (size_t i = 0; i < old_dirs.size(); ++i) {
    state.buffers["old_dirs." + std::to_string(i)] = old_dirs[i];
    state.buffers["old_stps." + std::to_string(i)] = old_stps[i];
    state.buffers["ro." + std::to_string(i)] = scalar(ro[i]);
  }
  save_counts();
  return orig_loss;
}

}  // namespace st::optim
