#include "spiraltorch/geometry/poincare_embedding.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "spiraltorch/error.h"
#include "spiraltorch/generator.h"
#include "spiraltorch/threads.h"

namespace st::geometry {

namespace {

// Rows are kept this far inside the boundary so 1 - k|x|^2 stays positive in float64.
constexpr double kBoundaryEps = 1e-5;
// Below this much work per batch (examples x targets x dim) a thread team costs more than it saves:
// the paper's mammal batches (10 x 51 x 5) ran faster on one thread of a busy 2-core host.
constexpr int64_t kParallelWork = 16384;

double check_curvature(double c, const char* op) {
  if (!(c < 0) || !std::isfinite(c)) {
    throw ValueError(std::string(op) + ": curvature must be negative and finite, got " + std::to_string(c));
  }
  return -c;
}

// (node, ancestor) pairs, validated, flattened row-major.
std::vector<int64_t> checked_pairs(const Tensor& edges, int64_t num_nodes, const char* op) {
  if (edges.dtype() != Dtype::Int64) {
    throw DtypeError(std::string(op) + ": edges must be int64, got " + dtype_name(edges.dtype()));
  }
  if (edges.dim() != 2 || edges.shape()[1] != 2) {
    throw ShapeError(std::string(op) + ": edges must have shape (E, 2), got " + shape_str(edges.shape()));
  }
  if (edges.shape()[0] == 0) throw ValueError(std::string(op) + ": edges is empty");
  std::vector<int64_t> pairs = edges.to_vector<int64_t>();
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (pairs[i] < 0 || pairs[i] >= num_nodes) {
      throw ValueError(std::string(op) + ": edge " + std::to_string(i / 2) + " names node " + std::to_string(pairs[i]) +
                       ", outside [0, " + std::to_string(num_nodes) + ")");
    }
    if (i % 2 == 1 && pairs[i] == pairs[i - 1]) {
      throw ValueError(std::string(op) + ": edge " + std::to_string(i / 2) + " pairs node " + std::to_string(pairs[i]) +
                       " with itself");
    }
  }
  return pairs;
}

// Sorted, distinct ancestors of every node (CSR).
struct Ancestors {
  std::vector<int64_t> start, ids;
  std::span<const int64_t> of(int64_t u) const {
    return {ids.data() + start[u], static_cast<size_t>(start[u + 1] - start[u])};
  }
};

Ancestors build_ancestors(const std::vector<int64_t>& pairs, int64_t num_nodes) {
  Ancestors a;
  a.start.assign(num_nodes + 1, 0);
  for (size_t i = 0; i < pairs.size(); i += 2) ++a.start[pairs[i] + 1];
  for (int64_t u = 0; u < num_nodes; ++u) a.start[u + 1] += a.start[u];
  a.ids.resize(pairs.size() / 2);
  std::vector<int64_t> fill(a.start.begin(), a.start.end() - 1);
  for (size_t i = 0; i < pairs.size(); i += 2) a.ids[fill[pairs[i]]++] = pairs[i + 1];
  // Dedupe in place, then compact.
  std::vector<int64_t> start(num_nodes + 1, 0), ids;
  ids.reserve(a.ids.size());
  for (int64_t u = 0; u < num_nodes; ++u) {
    auto b = a.ids.begin() + a.start[u], e = a.ids.begin() + a.start[u + 1];
    std::sort(b, e);
    ids.insert(ids.end(), b, std::unique(b, e));
    start[u + 1] = static_cast<int64_t>(ids.size());
  }
  return {std::move(start), std::move(ids)};
}

// Independent Philox key per (seed, stream), so streams never share counters.
uint64_t stream_key(uint64_t seed, uint64_t stream) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (stream + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform integer in [0, n) from 32 random bits (bias < n / 2^32).
int64_t below(uint32_t bits, int64_t n) { return static_cast<int64_t>((static_cast<uint64_t>(bits) * n) >> 32); }

double sq_norm(const double* x, int64_t dim) {
  double s = 0;
  for (int64_t i = 0; i < dim; ++i) s += x[i] * x[i];
  return s;
}

// Scratch per target of pair_loss.
struct TargetTerms {
  double delta, inv_ab, inv_root, r;  // |u - t|^2, 1/((1 - k|u|^2)(1 - k|t|^2)), 1/sqrt(gamma^2 - 1), e^(sqrt(k) d)
};

// Loss of one pair over targets idx[0..n) (idx[0] the true ancestor) and its gradients.
// d(u, t) = arcosh(gamma) / sqrt(k), gamma = 1 + 2k|u - t|^2 / ((1 - k|u|^2)(1 - k|t|^2)).
// Softmax weights use e^(-d) = r^(-1/sqrt(k)) with r = gamma + sqrt(gamma^2 - 1), taken relative
// to the nearest target so nothing underflows, and without a transcendental per target at k = 1.
double pair_loss(const double* u, const double* table, const int64_t* idx, int64_t n, int64_t dim, double k,
                 TargetTerms* terms, double* grad_u, double* grad_t) {
  const double sk = std::sqrt(k);
  const double alpha = std::max(1 - k * sq_norm(u, dim), 1e-15);
  double rmin = INFINITY;
  for (int64_t j = 0; j < n; ++j) {
    const double* t = table + idx[j] * dim;
    double delta = 0, t2 = 0;
    for (int64_t i = 0; i < dim; ++i) {
      const double diff = u[i] - t[i];
      delta += diff * diff;
      t2 += t[i] * t[i];
    }
    const double inv_ab = 1 / (alpha * std::max(1 - k * t2, 1e-15));
    const double gamma = 1 + 2 * k * delta * inv_ab;
    // At u = t the gamma gradient is 0 too; the clamp keeps 0 * inf out of the product.
    const double root = std::sqrt(std::max(gamma * gamma - 1, 1e-24));
    terms[j] = {delta, inv_ab, 1 / root, gamma + root};
    rmin = std::min(rmin, gamma + root);
  }
  const auto weight = [&](double r) { return k == 1 ? rmin / r : std::pow(rmin / r, 1 / sk); };
  double denom = 0;
  for (int64_t j = 0; j < n; ++j) denom += weight(terms[j].r);
  // L = d_0 - d_min + log(sum_j e^(d_min - d_j)).
  const double loss = std::log(terms[0].r / rmin) / sk + std::log(denom);
  const double inv_denom = 1 / denom, cu_base = k / alpha;
  std::fill(grad_u, grad_u + dim, 0.0);
  for (int64_t j = 0; j < n; ++j) {
    const TargetTerms& tt = terms[j];
    // dL/dd_j = [j == 0] - softmax_j(-d), dd/dgamma = 1 / (sqrt(k) sqrt(gamma^2 - 1)).
    const double dl_dd = (j == 0 ? 1.0 : 0.0) - weight(tt.r) * inv_denom;
    const double c = dl_dd * tt.inv_root * (4 * sk) * tt.inv_ab;
    const double cu = cu_base * tt.delta, ct = k * tt.delta * alpha * tt.inv_ab;  // k delta / alpha, k delta / beta
    const double* t = table + idx[j] * dim;
    double* gt = grad_t + j * dim;
    for (int64_t i = 0; i < dim; ++i) {
      const double diff = u[i] - t[i];
      grad_u[i] += c * (diff + cu * u[i]);
      gt[i] = c * (-diff + ct * t[i]);
    }
  }
  return loss;
}

// The Euclidean baseline's loss: the same softmax over -d with d(u, t) = |u - t|^2.
double euclidean_pair_loss(const double* u, const double* table, const int64_t* idx, int64_t n, int64_t dim,
                           TargetTerms* terms, double* grad_u, double* grad_t) {
  double dmin = INFINITY;
  for (int64_t j = 0; j < n; ++j) {
    const double* t = table + idx[j] * dim;
    double delta = 0;
    for (int64_t i = 0; i < dim; ++i) delta += (u[i] - t[i]) * (u[i] - t[i]);
    terms[j].delta = delta;
    dmin = std::min(dmin, delta);
  }
  double denom = 0;
  for (int64_t j = 0; j < n; ++j) denom += std::exp(dmin - terms[j].delta);
  const double loss = terms[0].delta - dmin + std::log(denom);
  std::fill(grad_u, grad_u + dim, 0.0);
  for (int64_t j = 0; j < n; ++j) {
    const double dl_dd = (j == 0 ? 1.0 : 0.0) - std::exp(dmin - terms[j].delta) / denom;
    const double* t = table + idx[j] * dim;
    double* gt = grad_t + j * dim;
    for (int64_t i = 0; i < dim; ++i) {
      const double g = 2 * dl_dd * (u[i] - t[i]);
      grad_u[i] += g;
      gt[i] = -g;
    }
  }
  return loss;
}

// Scales x back to radius (1 - eps)/sqrt(k) if it left the ball.
void project(double* x, int64_t dim, double k) {
  const double radius = (1 - kBoundaryEps) / std::sqrt(k);
  const double n2 = sq_norm(x, dim);
  if (n2 > radius * radius) {
    const double scale = radius / std::sqrt(n2);
    for (int64_t i = 0; i < dim; ++i) x[i] *= scale;
  }
}

void check_options(const EmbeddingFitOptions& o) {
  const auto fail = [](const std::string& what) { throw ValueError("PoincareEmbedding.fit: " + what); };
  if (o.epochs < 0) fail("epochs must be >= 0, got " + std::to_string(o.epochs));
  if (!(o.lr > 0) || !std::isfinite(o.lr)) fail("lr must be positive and finite, got " + std::to_string(o.lr));
  if (o.negatives < 1) fail("negatives must be >= 1, got " + std::to_string(o.negatives));
  if (o.burn_in < 0) fail("burn_in must be >= 0, got " + std::to_string(o.burn_in));
  if (o.batch_size < 1) fail("batch_size must be >= 1, got " + std::to_string(o.batch_size));
  if (o.threads < 0) fail("threads must be >= 0, got " + std::to_string(o.threads));
  if (!(o.final_lr_fraction >= 0 && o.final_lr_fraction <= 1)) {
    fail("final_lr_fraction must be in [0, 1], got " + std::to_string(o.final_lr_fraction));
  }
  if (!(o.max_seconds >= 0) || !std::isfinite(o.max_seconds)) {
    fail("max_seconds must be >= 0 and finite, got " + std::to_string(o.max_seconds));
  }
}

// A unigram table for drawing nodes in proportion to degree^0.75 (degree = closure edges at either
// end, +1 so every node can be drawn) in O(1), as word2vec and the authors' code do: node i fills
// about 8 n w_i / sum(w) slots (at least one). A binary search over the CDF cost ~17 cache misses
// per draw and dominated burn-in epochs on the 82k-node noun closure.
std::vector<int32_t> degree_table(const std::vector<int64_t>& pairs, int64_t num_nodes) {
  std::vector<double> w(num_nodes, 1.0);
  for (const int64_t v : pairs) w[v] += 1.0;
  double total = 0;
  for (double& x : w) total += (x = std::pow(x, 0.75));
  const double per_weight = 8.0 * static_cast<double>(num_nodes) / total;
  std::vector<int32_t> table;
  table.reserve(static_cast<size_t>(9 * num_nodes));
  for (int64_t i = 0; i < num_nodes; ++i) {
    const auto slots = std::max<int64_t>(1, std::llround(w[i] * per_weight));
    table.insert(table.end(), static_cast<size_t>(slots), static_cast<int32_t>(i));
  }
  return table;
}

}  // namespace

PoincareEmbedding::PoincareEmbedding(int64_t num_nodes, int64_t dim, double curvature, uint64_t seed,
                                     EmbeddingGeometry geometry)
    : num_nodes_(num_nodes), dim_(dim), curvature_(curvature), seed_(seed), geometry_(geometry) {
  if (num_nodes < 2 || dim < 1) {
    throw ValueError("PoincareEmbedding: need num_nodes >= 2 and dim >= 1, got " + std::to_string(num_nodes) + " and " +
                     std::to_string(dim));
  }
  check_curvature(curvature, "PoincareEmbedding");
  weight_ = Tensor::empty({num_nodes, dim}, Dtype::Float64);
  double* w = weight_.data<double>();
  const uint64_t key = stream_key(seed, 0);
  for (int64_t i = 0; i < num_nodes * dim; i += 4) {
    const auto r = Generator::philox(key, static_cast<uint64_t>(i / 4));
    for (int64_t j = 0; j < 4 && i + j < num_nodes * dim; ++j) w[i + j] = (r[j] * 0x1p-32 * 2 - 1) * 1e-3;
  }
}

std::vector<EmbeddingEpoch> PoincareEmbedding::fit(const Tensor& edges, const EmbeddingFitOptions& opt,
                                                   const EmbeddingCallback& callback) {
  check_options(opt);
  const std::vector<int64_t> pairs = checked_pairs(edges, num_nodes_, "PoincareEmbedding.fit");
  const Ancestors anc = build_ancestors(pairs, num_nodes_);
  const double k = -curvature_;
  const int64_t n_edges = static_cast<int64_t>(pairs.size() / 2), dim = dim_, K = opt.negatives;
  const int64_t B = std::min(opt.batch_size, n_edges), T = K + 1;
  const int threads = opt.threads > 0 ? opt.threads : get_num_threads();
  const bool euclid = geometry_ == EmbeddingGeometry::Euclidean;
  const bool any_degree = (opt.burn_in > 0 && opt.burn_in_sampling == NegativeSampling::Degree) ||
                          (opt.epochs > opt.burn_in && opt.sampling == NegativeSampling::Degree);
  const std::vector<int32_t> table = any_degree ? degree_table(pairs, num_nodes_) : std::vector<int32_t>{};
  const auto table_size = static_cast<int64_t>(table.size());
  const auto fit_start = std::chrono::steady_clock::now();

  // Train on a copy; the result replaces weight_ only when every epoch finished.
  Tensor work = weight_.clone();
  double* w = work.data<double>();
  std::vector<double> grad_sum(num_nodes_ * dim, 0.0);
  std::vector<char> touched(num_nodes_, 0);
  // Per thread: marks u and its ancestors while u's negatives are drawn (O(1) rejection).
  std::vector<char> excluded(static_cast<size_t>(threads) * num_nodes_, 0);
  std::vector<int64_t> rows;
  std::vector<int64_t> order(n_edges), idx(B * T), count(B);
  std::vector<TargetTerms> terms(B * T);
  std::vector<double> grad_u(B * dim), grad_t(B * T * dim), loss(B);
  std::vector<EmbeddingEpoch> reports;

  for (int64_t epoch = 0; epoch < opt.epochs; ++epoch) {
    const auto t0 = std::chrono::steady_clock::now();
    const uint64_t global = static_cast<uint64_t>(epochs_done_ + epoch);
    // Fisher-Yates from the epoch's shuffle stream.
    const uint64_t shuffle_key = stream_key(seed_, 2 * global + 1), neg_key = stream_key(seed_, 2 * global + 2);
    for (int64_t i = 0; i < n_edges; ++i) order[i] = i;
    for (int64_t i = n_edges - 1; i > 0; --i) {
      const auto r = Generator::philox(shuffle_key, static_cast<uint64_t>(i));
      std::swap(order[i], order[below(r[0], i + 1)]);
    }
    const bool burning = epoch < opt.burn_in;
    const bool by_degree = (burning ? opt.burn_in_sampling : opt.sampling) == NegativeSampling::Degree;
    double lr = burning ? opt.lr / 10 : opt.lr;
    if (!burning && opt.schedule == LrSchedule::Linear) {
      // Progress through the post-burn-in part of the run, by epochs or by the time budget.
      double p = static_cast<double>(epoch - opt.burn_in) /
                 static_cast<double>(std::max<int64_t>(1, opt.epochs - opt.burn_in));
      if (opt.max_seconds > 0) {
        const double used = std::chrono::duration<double>(t0 - fit_start).count();
        p = std::max(p, used / opt.max_seconds);
      }
      lr = opt.lr * (1 - (1 - opt.final_lr_fraction) * std::min(p, 1.0));
      if (!(lr > 0)) lr = opt.lr * 1e-3;  // the last epoch of a budget still moves a little
    }
    double loss_sum = 0;
    int64_t loss_count = 0, skipped = 0;
    for (int64_t start = 0; start < n_edges; start += B) {
      const int64_t nb = std::min(B, n_edges - start);
      // Host orchestration: one range of pairs per thread (range r uses the r-th exclusion buffer).
      const int64_t grain = nb * T * dim >= kParallelWork ? (nb + threads - 1) / threads : nb;
      parallel_for(nb, grain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const int64_t pos = start + i, e = order[pos];
          const int64_t u = pairs[2 * e];
          int64_t* ix = idx.data() + i * T;
          ix[0] = pairs[2 * e + 1];
          // Negatives: uniform nodes that are neither u nor one of its ancestors, drawn from
          // counters tied to the pair's position in the epoch (thread-count independent).
          char* skip = excluded.data() + static_cast<size_t>(begin / grain) * num_nodes_;
          const auto a = anc.of(u);
          skip[u] = 1;
          for (const int64_t x : a) skip[x] = 1;
          int64_t found = 0;
          const uint64_t base = static_cast<uint64_t>(pos) << 20;
          for (uint64_t block = 0; found < K && block < static_cast<uint64_t>(4 * K + 64); ++block) {
            const auto r = Generator::philox(neg_key, base + block);
            for (int j = 0; j < 4 && found < K; ++j) {
              const int64_t cand = by_degree ? table[below(r[j], table_size)] : below(r[j], num_nodes_);
              if (!skip[cand]) ix[1 + found++] = cand;
            }
          }
          skip[u] = 0;
          for (const int64_t x : a) skip[x] = 0;
          count[i] = 1 + found;
          loss[i] = euclid ? euclidean_pair_loss(w + u * dim, w, ix, count[i], dim, terms.data() + i * T,
                                                 grad_u.data() + i * dim, grad_t.data() + i * T * dim)
                           : pair_loss(w + u * dim, w, ix, count[i], dim, k, terms.data() + i * T,
                                       grad_u.data() + i * dim, grad_t.data() + i * T * dim);
        }
      }, threads);
      // A non-finite loss or gradient drops the whole batch, leaving the weights as they were.
      // grad_u sums every target's term, so a non-finite target gradient shows up there too.
      bool finite = true;
      for (int64_t i = 0; i < nb; ++i) {
        double s = loss[i];
        for (int64_t j = 0; j < dim; ++j) s += grad_u[i * dim + j];
        finite = finite && std::isfinite(s);
      }
      if (!finite) {
        ++skipped;
        continue;
      }
      // Mean loss over the batch: accumulate every example's gradient, in order, then step.
      const double scale = 1.0 / static_cast<double>(nb);
      const auto accumulate = [&](int64_t row, const double* g) {
        if (!touched[row]) {
          touched[row] = 1;
          rows.push_back(row);
        }
        double* acc = grad_sum.data() + row * dim;
        for (int64_t j = 0; j < dim; ++j) acc[j] += g[j] * scale;
      };
      for (int64_t i = 0; i < nb; ++i) {
        loss_sum += loss[i];
        ++loss_count;
        accumulate(pairs[2 * order[start + i]], grad_u.data() + i * dim);
        for (int64_t j = 0; j < count[i]; ++j) accumulate(idx[i * T + j], grad_t.data() + (i * T + j) * dim);
      }
      // Riemannian SGD: the Euclidean gradient times the inverse metric (1 - k|x|^2)^2 / 4
      // (plain SGD for the Euclidean baseline).
      for (const int64_t row : rows) {
        double* x = w + row * dim;
        double* g = grad_sum.data() + row * dim;
        const double f = euclid ? 1.0 : 1 - k * sq_norm(x, dim);
        const double step = euclid ? lr : lr * f * f / 4;
        for (int64_t j = 0; j < dim; ++j) {
          x[j] -= step * g[j];
          g[j] = 0;
        }
        if (!euclid) project(x, dim, k);
        touched[row] = 0;
      }
      rows.clear();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    reports.push_back({epoch + 1, loss_count ? loss_sum / loss_count : NAN, seconds, lr, skipped});
    if (callback) callback(reports.back());
    if (opt.max_seconds > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - fit_start).count() >= opt.max_seconds) {
      break;
    }
  }
  weight_ = work;
  epochs_done_ += static_cast<int64_t>(reports.size());
  return reports;
}

void PoincareEmbedding::load_weight(const Tensor& weight) {
  const char* op = "PoincareEmbedding.load_weight";
  if (!weight.defined() || !is_floating(weight.dtype())) {
    throw DtypeError(std::string(op) + ": weight must be a floating tensor");
  }
  if (weight.shape() != Shape{num_nodes_, dim_}) {
    throw ShapeError(std::string(op) + ": expected shape " + shape_str(Shape{num_nodes_, dim_}) + ", got " +
                     shape_str(weight.shape()));
  }
  Tensor w = weight.detach().to(Dtype::Float64).contiguous().clone();
  const double* x = w.data<double>();
  const double k = -curvature_;
  for (int64_t i = 0; i < num_nodes_; ++i) {
    const double n2 = sq_norm(x + i * dim_, dim_);
    if (!std::isfinite(n2)) throw ValueError(std::string(op) + ": row " + std::to_string(i) + " is not finite");
    if (geometry_ == EmbeddingGeometry::Poincare && !(k * n2 < 1)) {
      throw ValueError(std::string(op) + ": row " + std::to_string(i) + " has norm " + std::to_string(std::sqrt(n2)) +
                       ", outside the ball of radius " + std::to_string(1 / std::sqrt(k)));
    }
  }
  weight_ = std::move(w);
}

double embedding_pair_loss(std::span<const double> u, std::span<const double> targets, double curvature,
                           std::span<double> grad_u, std::span<double> grad_targets) {
  const double k = check_curvature(curvature, "embedding_pair_loss");
  const int64_t dim = static_cast<int64_t>(u.size());
  if (dim == 0 || targets.empty() || targets.size() % u.size() != 0 || grad_u.size() != u.size() ||
      grad_targets.size() != targets.size()) {
    throw ShapeError("embedding_pair_loss: sizes u " + std::to_string(u.size()) + ", targets " +
                     std::to_string(targets.size()) + ", grad_u " + std::to_string(grad_u.size()) + ", grad_targets " +
                     std::to_string(grad_targets.size()) + " do not fit (n, dim) targets");
  }
  const int64_t n = static_cast<int64_t>(targets.size()) / dim;
  std::vector<int64_t> idx(n);
  for (int64_t j = 0; j < n; ++j) idx[j] = j;
  std::vector<TargetTerms> terms(n);
  return pair_loss(u.data(), targets.data(), idx.data(), n, dim, k, terms.data(), grad_u.data(), grad_targets.data());
}

ReconstructionMetrics reconstruction_metrics(const Tensor& weight, const Tensor& edges, double curvature,
                                             EmbeddingGeometry geometry) {
  const double k = check_curvature(curvature, "reconstruction_metrics");
  if (weight.dim() != 2 || weight.shape()[0] < 2 || weight.shape()[1] < 1) {
    throw ShapeError("reconstruction_metrics: weight must be (num_nodes >= 2, dim >= 1), got " +
                     shape_str(weight.shape()));
  }
  if (!is_floating(weight.dtype())) {
    throw DtypeError(std::string("reconstruction_metrics: weight must be floating point, got ") +
                     dtype_name(weight.dtype()));
  }
  const int64_t n = weight.shape()[0], dim = weight.shape()[1];
  const std::vector<double> w = weight.to(Dtype::Float64).to_vector<double>();
  const Ancestors anc = build_ancestors(checked_pairs(edges, n, "reconstruction_metrics"), n);
  std::vector<double> norms(n);
  for (int64_t i = 0; i < n; ++i) {
    // Euclidean: rank by |u - x|^2 itself (all "norm" factors 1).
    norms[i] =
        geometry == EmbeddingGeometry::Euclidean ? 1.0 : std::max(1 - k * sq_norm(w.data() + i * dim, dim), 1e-15);
  }
  std::vector<double> rank_sum(n, 0.0), ap(n, 0.0);

  // Host orchestration: nodes handed out 16 at a time, each range with its own scratch.
  parallel_for(n, 16, [&](int64_t u_begin, int64_t u_end) {
    // Ranking only needs a monotone function of the distance: |u - x|^2 / ((1 - k|u|^2)(1 - k|x|^2)).
    std::vector<double> d(n), sorted;
    std::vector<int64_t> below_count;
    std::vector<char> is_anc(n, 0);
    for (int64_t u = u_begin; u < u_end; ++u) {
      const auto a = anc.of(u);
      if (a.empty()) continue;
      const double* x = w.data() + u * dim;
      for (int64_t v = 0; v < n; ++v) {
        const double* y = w.data() + v * dim;
        double delta = 0;
        for (int64_t j = 0; j < dim; ++j) delta += (x[j] - y[j]) * (x[j] - y[j]);
        d[v] = delta / (norms[u] * norms[v]);
      }
      sorted.clear();
      for (const int64_t v : a) {
        sorted.push_back(d[v]);
        is_anc[v] = 1;
      }
      std::sort(sorted.begin(), sorted.end());
      // below_count[i]: non-ancestors strictly closer than the i-th closest ancestor.
      below_count.assign(sorted.size() + 1, 0);
      for (int64_t v = 0; v < n; ++v) {
        if (v == u || is_anc[v]) continue;
        ++below_count[std::upper_bound(sorted.begin(), sorted.end(), d[v]) - sorted.begin()];
      }
      double rs = 0, precision = 0;
      int64_t closer = 0;
      for (size_t i = 0; i < sorted.size(); ++i) {
        closer += below_count[i];
        const double rank = 1.0 + static_cast<double>(closer);
        rs += rank;
        // Precision at the i-th ancestor: (i + 1) ancestors among (i + rank) nodes.
        precision += static_cast<double>(i + 1) / (static_cast<double>(i) + rank);
      }
      rank_sum[u] = rs;
      ap[u] = precision / static_cast<double>(sorted.size());
      for (const int64_t v : a) is_anc[v] = 0;
    }
  });
  ReconstructionMetrics m;
  double ranks = 0, aps = 0;
  for (int64_t u = 0; u < n; ++u) {
    const int64_t deg = static_cast<int64_t>(anc.of(u).size());
    if (deg == 0) continue;
    ranks += rank_sum[u];
    aps += ap[u];
    m.pairs += deg;
    ++m.nodes;
  }
  m.mean_rank = ranks / static_cast<double>(m.pairs);
  m.map = aps / static_cast<double>(m.nodes);
  return m;
}

}  // namespace st::geometry
