#pragma once
// Poincare embeddings of a hierarchy (Nickel & Kiela 2017): every node is a point of the
// ball of curvature c < 0, trained so that each node lies close to its ancestors in the
// transitive closure and far from the nodes it is not connected to.
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "spiraltorch/tensor.h"

namespace st::geometry {

// What fit reports after each epoch.
struct EmbeddingEpoch {
  int64_t epoch = 0;            // 1-based
  double loss = 0;              // mean loss of the epoch's examples
  double seconds = 0;           // wall time of the epoch
  double lr = 0;                // the learning rate used (lr / 10 during burn-in)
  int64_t skipped_batches = 0;  // batches dropped for a non-finite loss or gradient
};
using EmbeddingCallback = std::function<void(const EmbeddingEpoch&)>;

// Where negatives come from: uniformly over the nodes, or in proportion to degree^0.75 (the
// node's number of closure edges, both ends), the paper's choice during burn-in: frequent (high,
// general) nodes are pushed away from everything early, which spreads the hierarchy out faster.
enum class NegativeSampling { Uniform, Degree };
// The learning rate after burn-in: constant (the paper's, and the default: on the mammal closure a
// linear decay over 300 epochs gave a worse mean rank than a constant rate), or decayed linearly to
// lr * final_lr_fraction over the rest of the run (the remaining epochs or, with max_seconds, the
// remaining time budget, whichever is further along).
enum class LrSchedule { Constant, Linear };

struct EmbeddingFitOptions {
  int64_t epochs = 50;
  double lr = 0.3;
  int64_t negatives = 50;  // sampled non-ancestors per (node, ancestor) pair
  int64_t burn_in = 10;    // first epochs at lr / 10, as in the paper
  int64_t batch_size = 10;
  int threads = 0;  // 0: OpenMP's default
  NegativeSampling burn_in_sampling = NegativeSampling::Degree;
  NegativeSampling sampling = NegativeSampling::Uniform;  // after burn-in
  LrSchedule schedule = LrSchedule::Constant;
  double final_lr_fraction = 0.0;
  // A wall-clock budget for the whole fit (0: none). Training stops after the epoch that
  // reaches it, so a fit may run fewer than `epochs` epochs (each is reported).
  double max_seconds = 0.0;
};

// The distance an embedding is trained and evaluated with. Euclidean is the paper's baseline:
// d(u, v) = |u - v|^2, plain SGD, no ball (the same sampling, loss and schedule otherwise).
enum class EmbeddingGeometry { Poincare, Euclidean };

class PoincareEmbedding {
 public:
  // Rows start uniform in [-1e-3, 1e-3]^dim (the paper's initialisation), drawn from `seed`.
  PoincareEmbedding(int64_t num_nodes, int64_t dim, double curvature = -1.0, uint64_t seed = 0,
                    EmbeddingGeometry geometry = EmbeddingGeometry::Poincare);

  // Trains on `edges`, an (E, 2) int64 tensor of (node, ancestor) pairs of the transitive
  // closure. Loss per pair (u, v): -log softmax over {v} and the sampled negatives of -d(u, .).
  // Riemannian SGD on mini-batches (mean loss), projected back inside the ball. Updates are
  // synchronous per batch, so a fit is deterministic given the seed, at any thread count.
  // Validates everything first and trains on a copy: on error (or if the callback throws)
  // the weights are unchanged. Returns one report per epoch.
  std::vector<EmbeddingEpoch> fit(const Tensor& edges, const EmbeddingFitOptions& options,
                                  const EmbeddingCallback& callback = {});

  // (num_nodes, dim) float64; fit replaces it with a new tensor.
  const Tensor& weight() const { return weight_; }
  // Replaces the weights (a checkpoint to continue from): (num_nodes, dim), floating, finite and,
  // for the Poincare geometry, every row strictly inside the ball. Checked before anything changes.
  void load_weight(const Tensor& weight);
  EmbeddingGeometry geometry() const { return geometry_; }
  int64_t num_nodes() const { return num_nodes_; }
  int64_t dim() const { return dim_; }
  double curvature() const { return curvature_; }
  uint64_t seed() const { return seed_; }

 private:
  int64_t num_nodes_, dim_;
  double curvature_;
  uint64_t seed_;
  EmbeddingGeometry geometry_;
  int64_t epochs_done_ = 0;  // later fits continue the sampling stream instead of replaying it
  Tensor weight_;
};

// The loss of one pair, -log(exp(-d(u, t_0)) / sum_j exp(-d(u, t_j))), with targets t_j the
// rows of `targets` ((n, dim) row-major, t_0 the true ancestor); writes dL/du and dL/dt_j.
double embedding_pair_loss(std::span<const double> u, std::span<const double> targets, double curvature,
                           std::span<double> grad_u, std::span<double> grad_targets);

// The authors' reconstruction protocol: for each node with ancestors in `edges`, rank each
// ancestor among the nodes that are not its ancestors (the node itself excluded) by Poincare
// distance; rank = 1 + the number of those strictly closer. mean_rank averages over all
// (node, ancestor) pairs, map is the mean over nodes of the average precision.
struct ReconstructionMetrics {
  double mean_rank = 0;
  double map = 0;
  int64_t nodes = 0;  // nodes that have at least one ancestor
  int64_t pairs = 0;  // distinct (node, ancestor) pairs
};
ReconstructionMetrics reconstruction_metrics(const Tensor& weight, const Tensor& edges, double curvature = -1.0,
                                             EmbeddingGeometry geometry = EmbeddingGeometry::Poincare);

}  // namespace st::geometry
