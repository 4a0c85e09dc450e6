#include "spiraltorch/rec/matrix_factorization.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numeric>
#include <string>

#include "spiraltorch/error.h"
#include "spiraltorch/generator.h"
#include "spiraltorch/threads.h"

namespace st::rec {

namespace {

// n standard normals from Philox (Box-Muller), scaled by std.
std::vector<float> normal_init(size_t n, uint64_t seed, uint64_t stream, float std) {
  std::vector<float> out(n);
  constexpr double kTwoPi = 6.283185307179586;
  for (size_t k = 0; k < n; k += 2) {
    const auto b = Generator::philox(seed, (stream << 40) + k / 2);
    const double u1 = (static_cast<double>(b[0]) + 1.0) / 4294967297.0;
    const double u2 = static_cast<double>(b[1]) / 4294967296.0;
    const double rad = std::sqrt(-2.0 * std::log(u1));
    out[k] = static_cast<float>(std * rad * std::cos(kTwoPi * u2));
    if (k + 1 < n) out[k + 1] = static_cast<float>(std * rad * std::sin(kTwoPi * u2));
  }
  return out;
}

// Solves A x = b in place for symmetric positive definite A (n x n, row-major) by Cholesky.
// Returns false (leaving a and b scrambled) when A is not positive definite.
bool cholesky_solve(std::vector<double>& a, std::vector<double>& b, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    double d = a[j * n + j];
    for (int64_t k = 0; k < j; ++k) d -= a[j * n + k] * a[j * n + k];
    if (!(d > 0.0)) return false;
    d = std::sqrt(d);
    a[j * n + j] = d;
    for (int64_t i = j + 1; i < n; ++i) {
      double s = a[i * n + j];
      for (int64_t k = 0; k < j; ++k) s -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = s / d;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    double s = b[i];
    for (int64_t k = 0; k < i; ++k) s -= a[i * n + k] * b[k];
    b[i] = s / a[i * n + i];
  }
  for (int64_t i = n - 1; i >= 0; --i) {
    double s = b[i];
    for (int64_t k = i + 1; k < n; ++k) s -= a[k * n + i] * b[k];
    b[i] = s / a[i * n + i];
  }
  return true;
}

// CSR grouping of rating indices by key (user or item): rows[start[k] .. start[k+1]).
struct Groups {
  std::vector<int64_t> start, rows;
};

Groups group_by(std::span<const int64_t> keys, int64_t n) {
  Groups g;
  g.start.assign(static_cast<size_t>(n) + 1, 0);
  for (const int64_t k : keys) ++g.start[static_cast<size_t>(k) + 1];
  std::partial_sum(g.start.begin(), g.start.end(), g.start.begin());
  g.rows.resize(keys.size());
  std::vector<int64_t> fill(g.start.begin(), g.start.end() - 1);
  for (size_t r = 0; r < keys.size(); ++r)
    g.rows[static_cast<size_t>(fill[static_cast<size_t>(keys[r])]++)] = static_cast<int64_t>(r);
  return g;
}

void check_positive(const char* op, const char* name, int64_t v) {
  if (v <= 0) throw ValueError(std::string(op) + ": " + name + " must be positive, got " + std::to_string(v));
}

// IndexError unless 0 <= id < count: "<op>: <what> <id> is out of range [0, <count>)<where>".
void check_id(int64_t id, int64_t count, const std::string& op, const char* what, const std::string& where = "") {
  if (id < 0 || id >= count) {
    throw IndexError(op + ": " + what + " " + std::to_string(id) + where + " is out of range [0, " +
                     std::to_string(count) + ")");
  }
}

void check_ratings(const Ratings& r, int64_t users, int64_t items, const char* op) {
  if (r.users.size() != r.items.size() || r.users.size() != r.values.size())
    throw ShapeError(std::string(op) + ": users, items and values have " + std::to_string(r.users.size()) + ", " +
                     std::to_string(r.items.size()) + " and " + std::to_string(r.values.size()) + " entries");
  if (r.users.empty()) throw ValueError(std::string(op) + ": no ratings");
  for (size_t k = 0; k < r.users.size(); ++k) {
    check_id(r.users[k], users, op, "user", " at rating " + std::to_string(k));
    check_id(r.items[k], items, op, "item", " at rating " + std::to_string(k));
    if (!std::isfinite(r.values[k]))
      throw ValueError(std::string(op) + ": rating " + std::to_string(k) + " is not finite");
  }
}

void check_rate(const char* op, const char* name, float v) {
  if (!(v >= 0.0f) || !std::isfinite(v))
    throw ValueError(std::string(op) + ": " + name + " must be finite and >= 0, got " + std::to_string(v));
}

std::vector<std::pair<int64_t, float>> best_k(std::vector<std::pair<int64_t, float>> scored, int64_t k) {
  const auto keep = static_cast<size_t>(std::min<int64_t>(k, static_cast<int64_t>(scored.size())));
  std::partial_sort(
      scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(keep), scored.end(),
      [](const auto& a, const auto& b) { return a.second > b.second || (a.second == b.second && a.first < b.first); });
  scored.resize(keep);
  return scored;
}

// The k best items for `user` by score(item), leaving out the items in `exclude` (ids out of
// range there are ignored); ValueError for k < 0, IndexError for a user out of range.
template <typename Score>
std::vector<std::pair<int64_t, float>> top_k_items(const char* op, int64_t user, int64_t k, int64_t users,
                                                   int64_t items, std::span<const int64_t> exclude, Score score) {
  if (k < 0) throw ValueError(std::string(op) + ": k must be >= 0, got " + std::to_string(k));
  check_id(user, users, op, "user");
  std::vector<char> skip(static_cast<size_t>(items), 0);
  for (const int64_t i : exclude)
    if (i >= 0 && i < items) skip[static_cast<size_t>(i)] = 1;
  std::vector<std::pair<int64_t, float>> scored;
  scored.reserve(static_cast<size_t>(items));
  for (int64_t i = 0; i < items; ++i)
    if (!skip[static_cast<size_t>(i)]) scored.emplace_back(i, score(i));
  return best_k(std::move(scored), k);
}

}  // namespace

BiasedMF::BiasedMF(int64_t users, int64_t items, int64_t factors, uint64_t seed, float init_std)
    : users_(users), items_(items), factors_(factors) {
  check_positive("BiasedMF", "users", users);
  check_positive("BiasedMF", "items", items);
  check_positive("BiasedMF", "factors", factors);
  check_rate("BiasedMF", "init_std", init_std);
  p_ = normal_init(static_cast<size_t>(users * factors), seed, 1, init_std);
  q_ = normal_init(static_cast<size_t>(items * factors), seed, 2, init_std);
  bu_.assign(static_cast<size_t>(users), 0.0f);
  bi_.assign(static_cast<size_t>(items), 0.0f);
}

void BiasedMF::check(const Ratings& r, const char* op) const { check_ratings(r, users_, items_, op); }

void BiasedMF::set_global_mean(float mu) {
  if (!std::isfinite(mu)) throw ValueError("BiasedMF.set_global_mean: mu must be finite, got " + std::to_string(mu));
  mu_ = mu;
  mu_set_ = true;
}

void BiasedMF::fit_global_mean(const Ratings& r) {
  check(r, "BiasedMF.fit_global_mean");
  double s = 0.0;
  for (const float v : r.values) s += v;
  set_global_mean(static_cast<float>(s / static_cast<double>(r.values.size())));
}

float BiasedMF::predict(int64_t user, int64_t item) const {
  check_id(user, users_, "BiasedMF.predict", "user");
  check_id(item, items_, "BiasedMF.predict", "item");
  const float* pu = &p_[static_cast<size_t>(user * factors_)];
  const float* qi = &q_[static_cast<size_t>(item * factors_)];
  float dot = 0.0f;
  for (int64_t f = 0; f < factors_; ++f) dot += pu[f] * qi[f];
  return mu_ + bu_[static_cast<size_t>(user)] + bi_[static_cast<size_t>(item)] + dot;
}

std::vector<float> BiasedMF::predict(std::span<const int64_t> users, std::span<const int64_t> items) const {
  if (users.size() != items.size())
    throw ShapeError("BiasedMF.predict: " + std::to_string(users.size()) + " users and " +
                     std::to_string(items.size()) + " items");
  std::vector<float> out(users.size());
  for (size_t k = 0; k < users.size(); ++k) out[k] = predict(users[k], items[k]);
  return out;
}

double BiasedMF::rmse(const Ratings& r) const {
  check(r, "BiasedMF.rmse");
  double s = 0.0;
  for (size_t k = 0; k < r.values.size(); ++k) {
    const double e = static_cast<double>(r.values[k]) - predict(r.users[k], r.items[k]);
    s += e * e;
  }
  return std::sqrt(s / static_cast<double>(r.values.size()));
}

MFEpoch BiasedMF::sgd_epoch(const Ratings& r, float lr, float reg, float reg_bias, std::span<const int64_t> order) {
  const char* op = "BiasedMF.sgd_epoch";
  check(r, op);
  check_rate(op, "lr", lr);
  check_rate(op, "reg", reg);
  check_rate(op, "reg_bias", reg_bias);
  const auto n = static_cast<int64_t>(r.values.size());
  if (!order.empty()) {
    if (static_cast<int64_t>(order.size()) != n)
      throw ShapeError(std::string(op) + ": order has " + std::to_string(order.size()) + " entries, there are " +
                       std::to_string(n) + " ratings");
    for (const int64_t k : order)
      if (k < 0 || k >= n)
        throw IndexError(std::string(op) + ": order entry " + std::to_string(k) + " is out of range");
  }
  if (!mu_set_) fit_global_mean(r);
  const int64_t F = factors_;
  double sq = 0.0;
  for (int64_t step = 0; step < n; ++step) {
    const auto k = static_cast<size_t>(order.empty() ? step : order[static_cast<size_t>(step)]);
    const auto u = static_cast<size_t>(r.users[k]);
    const auto i = static_cast<size_t>(r.items[k]);
    float* pu = &p_[u * static_cast<size_t>(F)];
    float* qi = &q_[i * static_cast<size_t>(F)];
    float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
    for (int64_t f = 0; f < F; ++f) dot += pu[f] * qi[f];
    const float e = r.values[k] - (mu_ + bu_[u] + bi_[i] + dot);
    sq += static_cast<double>(e) * e;
    bu_[u] += lr * (e - reg_bias * bu_[u]);
    bi_[i] += lr * (e - reg_bias * bi_[i]);
#pragma omp simd
    for (int64_t f = 0; f < F; ++f) {
      const float puf = pu[f], qif = qi[f];
      pu[f] = puf + lr * (e * qif - reg * puf);
      qi[f] = qif + lr * (e * puf - reg * qif);
    }
  }
  return {std::sqrt(sq / static_cast<double>(n)), n};
}

MFEpoch BiasedMF::als_sweep(const Ratings& r, float reg, float reg_bias) {
  const char* op = "BiasedMF.als_sweep";
  check(r, op);
  check_rate(op, "reg", reg);
  check_rate(op, "reg_bias", reg_bias);
  if (!mu_set_) fit_global_mean(r);
  const int64_t F = factors_;
  const int64_t D = F + 1;  // [bias, factors]
  // Solves, for every owner o, min sum_{k in o} (y_k - b - w . x_k)^2 + n_o (reg_bias b^2 + reg |w|^2),
  // where y_k = r_k - mu - other_bias and x_k = the other side's factors. Writes into w_new/b_new.
  auto solve_side = [&](std::span<const int64_t> owners, std::span<const int64_t> others, int64_t n_owners,
                        std::vector<float>& w_new, std::vector<float>& b_new, const std::vector<float>& x,
                        const std::vector<float>& other_b) {
    const Groups g = group_by(owners, n_owners);
    // Host orchestration: owners are independent solves, handed out 16 at a time.
    std::atomic<bool> failed{false};
    parallel_for(n_owners, 16, [&](int64_t o_begin, int64_t o_end) {
      for (int64_t o = o_begin; o < o_end; ++o) {
        const int64_t lo = g.start[static_cast<size_t>(o)], hi = g.start[static_cast<size_t>(o) + 1];
        float* wo = &w_new[static_cast<size_t>(o * F)];
        if (lo == hi) {  // no ratings: the penalty alone pulls everything to zero
          std::fill(wo, wo + F, 0.0f);
          b_new[static_cast<size_t>(o)] = 0.0f;
          continue;
        }
        std::vector<double> a(static_cast<size_t>(D * D), 0.0), rhs(static_cast<size_t>(D), 0.0),
            z(static_cast<size_t>(D));
        for (int64_t j = lo; j < hi; ++j) {
          const auto k = static_cast<size_t>(g.rows[static_cast<size_t>(j)]);
          const auto other = static_cast<size_t>(others[k]);
          z[0] = 1.0;
          for (int64_t f = 0; f < F; ++f)
            z[static_cast<size_t>(f + 1)] = x[other * static_cast<size_t>(F) + static_cast<size_t>(f)];
          const double y = static_cast<double>(r.values[k]) - mu_ - other_b[other];
          for (int64_t p = 0; p < D; ++p) {
            rhs[static_cast<size_t>(p)] += y * z[static_cast<size_t>(p)];
            for (int64_t q = 0; q <= p; ++q)
              a[static_cast<size_t>(p * D + q)] += z[static_cast<size_t>(p)] * z[static_cast<size_t>(q)];
          }
        }
        const double cnt = static_cast<double>(hi - lo);
        for (int64_t p = 0; p < D; ++p) {
          for (int64_t q = 0; q < p; ++q) a[static_cast<size_t>(q * D + p)] = a[static_cast<size_t>(p * D + q)];
          a[static_cast<size_t>(p * D + p)] += cnt * (p == 0 ? reg_bias : reg) + 1e-9;
        }
        if (!cholesky_solve(a, rhs, D)) {
          failed.store(true);
          continue;
        }
        b_new[static_cast<size_t>(o)] = static_cast<float>(rhs[0]);
        for (int64_t f = 0; f < F; ++f) wo[f] = static_cast<float>(rhs[static_cast<size_t>(f + 1)]);
      }
    });
    if (failed)
      throw ValueError(std::string(op) + ": the normal equations are singular (reg = " + std::to_string(reg) +
                       ", reg_bias = " + std::to_string(reg_bias) + "); use a positive regularisation");
  };
  // Compute both sides into new buffers, then commit: a failure leaves the model as it was.
  std::vector<float> p_new(p_.size()), bu_new(bu_.size()), q_new(q_.size()), bi_new(bi_.size());
  solve_side(r.users, r.items, users_, p_new, bu_new, q_, bi_);
  solve_side(r.items, r.users, items_, q_new, bi_new, p_new, bu_new);
  p_ = std::move(p_new);
  bu_ = std::move(bu_new);
  q_ = std::move(q_new);
  bi_ = std::move(bi_new);
  return {rmse(r), static_cast<int64_t>(r.values.size())};
}

std::vector<std::pair<int64_t, float>> BiasedMF::top_k(int64_t user, int64_t k,
                                                       std::span<const int64_t> exclude) const {
  return top_k_items("BiasedMF.top_k", user, k, users_, items_, exclude, [&](int64_t i) { return predict(user, i); });
}

// ---- implicit feedback ----

ImplicitALS::ImplicitALS(int64_t users, int64_t items, int64_t factors, float reg, float alpha, uint64_t seed)
    : users_(users), items_(items), factors_(factors), reg_(reg), alpha_(alpha) {
  check_positive("ImplicitALS", "users", users);
  check_positive("ImplicitALS", "items", items);
  check_positive("ImplicitALS", "factors", factors);
  check_rate("ImplicitALS", "reg", reg);
  check_rate("ImplicitALS", "alpha", alpha);
  x_ = normal_init(static_cast<size_t>(users * factors), seed, 3, 0.01f);
  y_ = normal_init(static_cast<size_t>(items * factors), seed, 4, 0.01f);
}

double ImplicitALS::sweep(const Ratings& r) {
  const char* op = "ImplicitALS.sweep";
  check_ratings(r, users_, items_, op);
  for (size_t k = 0; k < r.values.size(); ++k)
    if (r.values[k] < 0.0f)
      throw ValueError(std::string(op) + ": interaction " + std::to_string(k) + " has negative strength " +
                       std::to_string(r.values[k]));
  const int64_t F = factors_;
  auto gram = [&](const std::vector<float>& m, int64_t rows) {
    std::vector<double> g(static_cast<size_t>(F * F), 0.0);
    for (int64_t i = 0; i < rows; ++i) {
      const float* v = &m[static_cast<size_t>(i * F)];
      for (int64_t p = 0; p < F; ++p)
        for (int64_t q = 0; q < F; ++q) g[static_cast<size_t>(p * F + q)] += static_cast<double>(v[p]) * v[q];
    }
    return g;
  };
  // x_o = (Y^T Y + Y_o^T (C_o - I) Y_o + reg I)^-1 Y_o^T C_o p_o
  auto solve_side = [&](std::span<const int64_t> owners, std::span<const int64_t> others, int64_t n_owners,
                        const std::vector<float>& y, int64_t n_others) {
    const std::vector<double> yty = gram(y, n_others);
    const Groups g = group_by(owners, n_owners);
    std::vector<float> w_new(static_cast<size_t>(n_owners * F), 0.0f);
    // Host orchestration: owners are independent solves, handed out 16 at a time.
    std::atomic<bool> failed{false};
    parallel_for(n_owners, 16, [&](int64_t o_begin, int64_t o_end) {
      for (int64_t o = o_begin; o < o_end; ++o) {
        const int64_t lo = g.start[static_cast<size_t>(o)], hi = g.start[static_cast<size_t>(o) + 1];
        if (lo == hi) continue;  // no interactions: the minimiser is 0
        std::vector<double> a(yty), rhs(static_cast<size_t>(F), 0.0);
        for (int64_t j = lo; j < hi; ++j) {
          const auto k = static_cast<size_t>(g.rows[static_cast<size_t>(j)]);
          const float* v = &y[static_cast<size_t>(others[k]) * static_cast<size_t>(F)];
          const double c = 1.0 + static_cast<double>(alpha_) * r.values[k];
          for (int64_t p = 0; p < F; ++p) {
            rhs[static_cast<size_t>(p)] += c * v[p];
            for (int64_t q = 0; q < F; ++q) a[static_cast<size_t>(p * F + q)] += (c - 1.0) * v[p] * v[q];
          }
        }
        for (int64_t p = 0; p < F; ++p) a[static_cast<size_t>(p * F + p)] += reg_ + 1e-9;
        if (!cholesky_solve(a, rhs, F)) {
          failed.store(true);
          continue;
        }
        for (int64_t p = 0; p < F; ++p)
          w_new[static_cast<size_t>(o * F + p)] = static_cast<float>(rhs[static_cast<size_t>(p)]);
      }
    });
    if (failed)
      throw ValueError(std::string(op) + ": the normal equations are singular (reg = " + std::to_string(reg_) +
                       "); use a positive regularisation");
    return w_new;
  };
  std::vector<float> x_new = solve_side(r.users, r.items, users_, y_, items_);
  std::vector<float> y_new = solve_side(r.items, r.users, items_, x_new, users_);
  x_ = std::move(x_new);
  y_ = std::move(y_new);
  // Weighted loss over all pairs: sum over all of (x.y)^2, corrected on observed pairs, plus the penalty.
  const std::vector<double> xtx = gram(x_, users_), yty = gram(y_, items_);
  double loss = 0.0;
  for (size_t p = 0; p < xtx.size(); ++p) loss += xtx[p] * yty[p];
  for (size_t k = 0; k < r.values.size(); ++k) {
    const double s = score(r.users[k], r.items[k]);
    const double c = 1.0 + static_cast<double>(alpha_) * r.values[k];
    loss += c * (1.0 - s) * (1.0 - s) - s * s;
  }
  double pen = 0.0;
  for (const float v : x_) pen += static_cast<double>(v) * v;
  for (const float v : y_) pen += static_cast<double>(v) * v;
  return loss + reg_ * pen;
}

float ImplicitALS::score(int64_t user, int64_t item) const {
  check_id(user, users_, "ImplicitALS.score", "user");
  check_id(item, items_, "ImplicitALS.score", "item");
  float s = 0.0f;
  for (int64_t f = 0; f < factors_; ++f)
    s += x_[static_cast<size_t>(user * factors_ + f)] * y_[static_cast<size_t>(item * factors_ + f)];
  return s;
}

std::vector<std::pair<int64_t, float>> ImplicitALS::top_k(int64_t user, int64_t k,
                                                          std::span<const int64_t> exclude) const {
  return top_k_items("ImplicitALS.top_k", user, k, users_, items_, exclude, [&](int64_t i) { return score(user, i); });
}

}  // namespace st::rec
