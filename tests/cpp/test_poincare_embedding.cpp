// PoincareEmbedding (Nickel & Kiela 2017): loss gradients, training on a small tree,
// determinism, the reconstruction metrics and failing fits that change nothing.
#include <gtest/gtest.h>

#include <cmath>

#include "spiraltorch/geometry/poincare.h"
#include "spiraltorch/geometry/poincare_embedding.h"
#include "spiraltorch/spiraltorch.h"

using namespace st;
using namespace st::geometry;

namespace {

// Transitive closure of the tree 0 -> {1, 2}, 1 -> {3, 4}, 2 -> {5, 6}, as (node, ancestor).
Tensor tiny_tree() {
  return Tensor::from_vector<int64_t>({1, 0, 2, 0, 3, 1, 3, 0, 4, 1, 4, 0, 5, 2, 5, 0, 6, 2, 6, 0}, {10, 2});
}

}  // namespace

TEST(PoincareEmbedding, PairLossGradientsMatchFiniteDifferences) {
  for (const double c : {-1.0, -0.5, -2.0}) {
    const double r = 0.8 / std::sqrt(-c);  // points well inside the ball of this curvature
    std::vector<double> u = {0.3 * r, -0.2 * r, 0.1 * r};
    std::vector<double> t = {0.5 * r,  0.1 * r,  -0.3 * r, -0.4 * r, 0.4 * r, 0.2 * r,
                             0.05 * r, -0.6 * r, 0.3 * r,  0.2 * r,  0.2 * r, 0.2 * r};
    std::vector<double> gu(3), gt(12), tmp_u(3), tmp_t(12);
    embedding_pair_loss(u, t, c, gu, gt);
    const double h = 1e-6;
    const auto loss_at = [&](const std::vector<double>& uu, const std::vector<double>& tt) {
      return embedding_pair_loss(uu, tt, c, tmp_u, tmp_t);
    };
    for (size_t i = 0; i < u.size(); ++i) {
      auto up = u, um = u;
      up[i] += h;
      um[i] -= h;
      EXPECT_NEAR(gu[i], (loss_at(up, t) - loss_at(um, t)) / (2 * h), 1e-7) << "c=" << c << " du" << i;
    }
    for (size_t i = 0; i < t.size(); ++i) {
      auto tp = t, tm = t;
      tp[i] += h;
      tm[i] -= h;
      EXPECT_NEAR(gt[i], (loss_at(u, tp) - loss_at(u, tm)) / (2 * h), 1e-7) << "c=" << c << " dt" << i;
    }
  }
}

TEST(PoincareEmbedding, PairLossIsSoftmaxOverPoincareDistances) {
  const std::vector<double> u = {0.1, 0.2}, t = {0.3, -0.1, -0.5, 0.4, 0.0, 0.7};
  std::vector<double> gu(2), gt(6);
  const double loss = embedding_pair_loss(u, t, -1.0, gu, gt);
  const Tensor d = poincare_distance(Tensor::from_vector<double>({0.1, 0.2, 0.1, 0.2, 0.1, 0.2}, {3, 2}),
                                     Tensor::from_vector<double>(t, {3, 2}), -1.0);
  const auto dv = d.to_vector<double>();
  const double expect = dv[0] + std::log(std::exp(-dv[0]) + std::exp(-dv[1]) + std::exp(-dv[2]));
  EXPECT_NEAR(loss, expect, 1e-12);
}

TEST(PoincareEmbedding, TinyTreeIsReconstructedExactly) {
  PoincareEmbedding emb(7, 2, -1.0, 3);
  EmbeddingFitOptions opt;
  opt.epochs = 300;
  opt.lr = 0.5;
  opt.negatives = 4;
  opt.batch_size = 2;
  opt.schedule = LrSchedule::Linear;
  const auto reports = emb.fit(tiny_tree(), opt);
  ASSERT_EQ(reports.size(), 300u);
  EXPECT_LT(reports.back().loss, reports.front().loss);
  EXPECT_DOUBLE_EQ(reports.front().lr, 0.05);  // burn-in at lr / 10
  EXPECT_DOUBLE_EQ(reports[10].lr, 0.5);       // then the linear decay from lr to 0
  EXPECT_DOUBLE_EQ(reports.back().lr, 0.5 * (1 - 289.0 / 290.0));
  const auto m = reconstruction_metrics(emb.weight(), tiny_tree());
  EXPECT_EQ(m.nodes, 6);
  EXPECT_EQ(m.pairs, 10);
  EXPECT_DOUBLE_EQ(m.map, 1.0);
  EXPECT_DOUBLE_EQ(m.mean_rank, 1.0);
  // Every row stays inside the ball.
  const auto w = emb.weight().to_vector<double>();
  for (size_t i = 0; i < w.size(); i += 2) EXPECT_LT(w[i] * w[i] + w[i + 1] * w[i + 1], 1.0);
}

TEST(PoincareEmbedding, FitIsDeterministicAcrossThreadCounts) {
  EmbeddingFitOptions opt;
  opt.epochs = 5;
  opt.negatives = 50;
  opt.batch_size = 10;  // 10 x 51 x 40: enough work per batch for a thread team
  std::vector<std::vector<double>> results;
  for (const int threads : {1, 2, 1}) {
    PoincareEmbedding emb(7, 40, -1.0, 11);
    opt.threads = threads;
    emb.fit(tiny_tree(), opt);
    results.push_back(emb.weight().to_vector<double>());
  }
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
  PoincareEmbedding other(7, 40, -1.0, 12);
  other.fit(tiny_tree(), opt);
  EXPECT_NE(other.weight().to_vector<double>(), results[0]);
}

TEST(PoincareEmbedding, MetricsOnHandPlacedPoints) {
  // Line embedding: 0 at 0, 1 at 0.3, 2 at 0.35, 3 at -0.6; node 1 has ancestors {0, 3},
  // node 2 has {0}. Node 2 sits closer to 1 than either ancestor, node 1 closer to 2 than 0:
  // every rank is 2; AP(1) = (1/2 + 2/3) / 2, AP(2) = 1/2.
  const Tensor w = Tensor::from_vector<double>({0.0, 0.3, 0.35, -0.6}, {4, 1});
  const Tensor e = Tensor::from_vector<int64_t>({1, 0, 1, 3, 2, 0, 1, 0}, {4, 2});  // duplicate pair counted once
  const auto m = reconstruction_metrics(w, e);
  EXPECT_EQ(m.nodes, 2);
  EXPECT_EQ(m.pairs, 3);
  EXPECT_DOUBLE_EQ(m.mean_rank, 2.0);
  EXPECT_NEAR(m.map, (7.0 / 12 + 0.5) / 2, 1e-15);
}

TEST(PoincareEmbedding, FailingFitChangesNothing) {
  PoincareEmbedding emb(7, 3, -1.0, 5);
  const auto before = emb.weight().to_vector<double>();
  EmbeddingFitOptions opt;
  opt.epochs = 3;
  EXPECT_THROW(emb.fit(Tensor::from_vector<int64_t>({1, 0, 2, 7}, {2, 2}), opt), ValueError);  // id 7 of 7
  EXPECT_THROW(emb.fit(Tensor::from_vector<int64_t>({1, 0, -1, 0}, {2, 2}), opt), ValueError);
  EXPECT_THROW(emb.fit(Tensor::from_vector<int64_t>({1, 0, 2}, {1, 3}), opt), ShapeError);
  EXPECT_THROW(emb.fit(Tensor::from_vector<int64_t>({1, 0, 2, 0}, {4}), opt), ShapeError);
  EXPECT_THROW(emb.fit(Tensor::from_vector<float>({1, 0}, {1, 2}), opt), DtypeError);
  EXPECT_THROW(emb.fit(Tensor::from_vector<int64_t>({3, 3}, {1, 2}), opt), ValueError);  // self pair
  opt.lr = -1;
  EXPECT_THROW(emb.fit(tiny_tree(), opt), ValueError);
  opt.lr = 0.1;
  // A callback that fails after the first epoch: the partial training is discarded.
  EXPECT_THROW(emb.fit(tiny_tree(), opt, [](const EmbeddingEpoch&) { throw SpiralError("stop"); }), SpiralError);
  EXPECT_EQ(emb.weight().to_vector<double>(), before);
  EXPECT_THROW(PoincareEmbedding(7, 3, 0.5), ValueError);
  EXPECT_THROW(PoincareEmbedding(1, 3), ValueError);
  EXPECT_THROW(reconstruction_metrics(emb.weight(), Tensor::from_vector<int64_t>({9, 0}, {1, 2})), ValueError);
}

TEST(PoincareEmbedding, ScheduleSamplingAndBudgetOptions) {
  EmbeddingFitOptions opt;
  opt.epochs = 40;
  opt.lr = 0.5;
  opt.negatives = 4;
  opt.batch_size = 2;
  opt.schedule = LrSchedule::Constant;
  opt.burn_in_sampling = NegativeSampling::Uniform;
  PoincareEmbedding plain(7, 2, -1.0, 3);
  const auto r = plain.fit(tiny_tree(), opt);
  EXPECT_DOUBLE_EQ(r.back().lr, 0.5);
  // Degree-weighted negatives give a different (still deterministic) run.
  opt.burn_in_sampling = NegativeSampling::Degree;
  opt.sampling = NegativeSampling::Degree;
  PoincareEmbedding a(7, 2, -1.0, 3), b(7, 2, -1.0, 3);
  a.fit(tiny_tree(), opt);
  b.fit(tiny_tree(), opt);
  EXPECT_EQ(a.weight().to_vector<double>(), b.weight().to_vector<double>());
  EXPECT_NE(a.weight().to_vector<double>(), plain.weight().to_vector<double>());
  // A wall-clock budget stops after the epoch that reaches it.
  opt.epochs = 1000000;
  opt.max_seconds = 0.05;
  PoincareEmbedding c(7, 2, -1.0, 3);
  const auto rc = c.fit(tiny_tree(), opt);
  EXPECT_LT(rc.size(), 1000000u);
  EXPECT_GE(rc.size(), 1u);
  opt.max_seconds = -1;
  EXPECT_THROW(c.fit(tiny_tree(), opt), ValueError);
  opt.max_seconds = 0;
  opt.final_lr_fraction = 2;
  EXPECT_THROW(c.fit(tiny_tree(), opt), ValueError);
}

TEST(PoincareEmbedding, EuclideanBaselineTrainsAndRanksBySquaredDistance) {
  PoincareEmbedding emb(7, 3, -1.0, 3, EmbeddingGeometry::Euclidean);
  EXPECT_EQ(emb.geometry(), EmbeddingGeometry::Euclidean);
  EmbeddingFitOptions opt;
  opt.epochs = 300;
  opt.lr = 0.5;
  opt.negatives = 4;
  opt.batch_size = 2;
  const auto reports = emb.fit(tiny_tree(), opt);
  EXPECT_LT(reports.back().loss, reports.front().loss);
  const auto m = reconstruction_metrics(emb.weight(), tiny_tree(), -1.0, EmbeddingGeometry::Euclidean);
  EXPECT_EQ(m.pairs, 10);
  EXPECT_GE(m.map, 0.8);
  // Hand-placed points: the Euclidean ranking of node 1's only ancestor 0 among the rest.
  const Tensor w = Tensor::from_vector<double>({0, 0, 3, 0, 1, 0}, {3, 2});
  const Tensor e = Tensor::from_vector<int64_t>({1, 0}, {1, 2});
  EXPECT_DOUBLE_EQ(reconstruction_metrics(w, e, -1.0, EmbeddingGeometry::Euclidean).mean_rank, 2.0);  // 2 is closer
}

TEST(PoincareEmbedding, LoadWeightIsCheckedAndResumes) {
  PoincareEmbedding emb(3, 2);
  const Tensor good = Tensor::from_vector<double>({0.1, 0.2, -0.3, 0.0, 0.5, 0.5}, {3, 2});
  emb.load_weight(good);
  EXPECT_EQ(emb.weight().to_vector<double>(), good.to_vector<double>());
  const auto before = emb.weight().to_vector<double>();
  EXPECT_THROW(emb.load_weight(Tensor::from_vector<double>({0.1, 0.2}, {1, 2})), ShapeError);
  EXPECT_THROW(emb.load_weight(Tensor::from_vector<double>({0.1, 0.2, 0.9, 0.9, 0, 0}, {3, 2})), ValueError);
  EXPECT_THROW(emb.load_weight(Tensor::from_vector<double>({0.1, NAN, 0, 0, 0, 0}, {3, 2})), ValueError);
  EXPECT_THROW(emb.load_weight(Tensor::from_vector<int64_t>({0, 0, 0, 0, 0, 0}, {3, 2})), DtypeError);
  EXPECT_EQ(emb.weight().to_vector<double>(), before);
  PoincareEmbedding flat(3, 2, -1.0, 0, EmbeddingGeometry::Euclidean);
  flat.load_weight(Tensor::from_vector<double>({0.1, 0.2, 0.9, 0.9, 5, 5}, {3, 2}));  // no ball in R^n
}
