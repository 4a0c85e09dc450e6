#pragma once
// Biased matrix factorisation for explicit ratings (Koren, Bell, Volinsky 2009):
//   r_hat(u, i) = mu + b_u + b_i + p_u . q_i
// trained by SGD (the update of Funk / scikit-surprise's SVD) or by alternating least squares.
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace st::rec {

// (user, item, value) triples, stored column-wise.
struct Ratings {
  std::span<const int64_t> users;
  std::span<const int64_t> items;
  std::span<const float> values;
};

struct MFEpoch {
  double rmse;  // of the training errors, each measured before its own update (SGD) or after the sweep (ALS)
  int64_t samples;
};

class BiasedMF {
 public:
  // Factors start ~ N(0, init_std^2) from Philox under `seed`; biases and mu start at 0.
  BiasedMF(int64_t users, int64_t items, int64_t factors, uint64_t seed = 0, float init_std = 0.1f);

  // Sets mu to the mean rating (called by the trainers when mu has not been set yet).
  void fit_global_mean(const Ratings& r);
  // One SGD pass over the ratings in `order` (a permutation of their indices; empty = given order):
  //   e = r - r_hat;  b_u += lr (e - reg_bias b_u);  b_i += lr (e - reg_bias b_i)
  //   p_u += lr (e q_i - reg p_u);  q_i += lr (e p_u - reg q_i)     (old p_u in the q update)
  MFEpoch sgd_epoch(const Ratings& r, float lr, float reg, float reg_bias, std::span<const int64_t> order = {});
  // One ALS sweep: every user's (b_u, p_u) is the exact ridge solution given the items, then every
  // item's (b_i, q_i) given the users (penalties reg_bias b^2 + reg |p|^2 scaled by the count of ratings).
  MFEpoch als_sweep(const Ratings& r, float reg, float reg_bias);

  float predict(int64_t user, int64_t item) const;
  std::vector<float> predict(std::span<const int64_t> users, std::span<const int64_t> items) const;
  double rmse(const Ratings& r) const;
  // The k best items for `user` by predicted rating, skipping `exclude`; ties keep the lower item first.
  std::vector<std::pair<int64_t, float>> top_k(int64_t user, int64_t k, std::span<const int64_t> exclude = {}) const;

  int64_t users() const { return users_; }
  int64_t items() const { return items_; }
  int64_t factors() const { return factors_; }
  float global_mean() const { return mu_; }
  void set_global_mean(float mu);
  const std::vector<float>& user_factors() const { return p_; }  // [users, factors]
  const std::vector<float>& item_factors() const { return q_; }  // [items, factors]
  const std::vector<float>& user_bias() const { return bu_; }
  const std::vector<float>& item_bias() const { return bi_; }

 private:
  void check(const Ratings& r, const char* op) const;
  int64_t users_, items_, factors_;
  float mu_ = 0.0f;
  bool mu_set_ = false;
  std::vector<float> p_, q_, bu_, bi_;
};

// Implicit-feedback matrix factorisation by weighted ALS (Hu, Koren, Volinsky 2008): preference
// p_ui = 1 for observed pairs (0 otherwise) with confidence c_ui = 1 + alpha r_ui; minimises
// sum_{u,i} c_ui (p_ui - x_u . y_i)^2 + reg (|x_u|^2 + |y_i|^2) over all user-item pairs.
class ImplicitALS {
 public:
  ImplicitALS(int64_t users, int64_t items, int64_t factors, float reg = 0.01f, float alpha = 40.0f, uint64_t seed = 0);
  // One sweep (users, then items). Returns the weighted loss over all pairs after the sweep.
  double sweep(const Ratings& r);
  float score(int64_t user, int64_t item) const;
  std::vector<std::pair<int64_t, float>> top_k(int64_t user, int64_t k, std::span<const int64_t> exclude = {}) const;
  int64_t users() const { return users_; }
  int64_t items() const { return items_; }
  int64_t factors() const { return factors_; }
  const std::vector<float>& user_factors() const { return x_; }
  const std::vector<float>& item_factors() const { return y_; }

 private:
  int64_t users_, items_, factors_;
  float reg_, alpha_;
  std::vector<float> x_, y_;
};

}  // namespace st::rec
