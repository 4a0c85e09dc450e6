#include "spiraltorch/data/sampler.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

#include "spiraltorch/error.h"

namespace st::data {

uint64_t permutation_blocks(int64_t n) { return n > 1 ? static_cast<uint64_t>(n) / 2 + 1 : 0; }

std::vector<int64_t> permutation(int64_t n, uint64_t seed, uint64_t counter) {
  if (n < 0) throw ValueError("permutation: n must be non-negative, got " + std::to_string(n));
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  for (int64_t i = n - 1; i > 0; --i) {
    const auto block = Generator::philox(seed, counter + static_cast<uint64_t>(i) / 2);
    const int w = static_cast<int>(i % 2) * 2;
    const uint64_t r = (static_cast<uint64_t>(block[w]) << 32) | block[w + 1];
    // Multiply-high maps r onto [0, i] with a bias below 2^-40 for any realistic n.
    const auto j = static_cast<int64_t>((static_cast<unsigned __int128>(r) * static_cast<uint64_t>(i + 1)) >> 64);
    std::swap(order[i], order[j]);
  }
  return order;
}

std::vector<int64_t> permutation(int64_t n, Generator& gen) {
  const uint64_t start = gen.reserve(permutation_blocks(n));
  return permutation(n, gen.seed(), start);
}

std::vector<int64_t> distributed_shard(int64_t n, int64_t rank, int64_t world_size, bool shuffle, uint64_t seed,
                                       int64_t epoch, bool drop_last) {
  const std::string who = "DistributedSampler";
  if (n < 0) throw ValueError(who + ": the dataset size must be non-negative, got " + std::to_string(n));
  if (world_size <= 0) throw ValueError(who + ": num_replicas must be positive, got " + std::to_string(world_size));
  if (rank < 0 || rank >= world_size) {
    throw ValueError(who + ": rank " + std::to_string(rank) + " is outside [0, " + std::to_string(world_size) + ")");
  }
  if (epoch < 0) throw ValueError(who + ": epoch must be non-negative, got " + std::to_string(epoch));
  std::vector<int64_t> order;
  if (shuffle) {
    // Epoch e reads the Philox blocks after those of epochs 0..e-1: distinct, reproducible orders.
    order = permutation(n, seed, static_cast<uint64_t>(epoch) * permutation_blocks(n));
  } else {
    order.resize(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), int64_t{0});
  }
  const int64_t per_rank = drop_last ? n / world_size : (n + world_size - 1) / world_size;
  const int64_t total = per_rank * world_size;
  std::vector<int64_t> mine;
  mine.reserve(static_cast<size_t>(per_rank));
  for (int64_t pos = rank; pos < total; pos += world_size) mine.push_back(order[static_cast<size_t>(pos % n)]);
  return mine;
}

void BatchingOptions::validate(const char* who) const {
  if (batch_size <= 0)
    throw ValueError(std::string(who) + ": batch_size must be positive, got " + std::to_string(batch_size));
  if (max_rows && *max_rows <= 0)
    throw ValueError(std::string(who) + ": max_rows must be positive, got " + std::to_string(*max_rows));
}

std::vector<std::vector<int64_t>> plan_batches(const TensorDataset& dataset, std::span<const int64_t> order,
                                               const BatchingOptions& options) {
  options.validate("plan_batches");
  for (const int64_t i : order)
    if (i < 0 || i >= dataset.size())
      throw IndexError("plan_batches: sample index " + std::to_string(i) + " is out of range for a dataset of " +
                       std::to_string(dataset.size()));
  std::vector<std::vector<int64_t>> out;
  if (!options.max_rows) {
    const auto b = static_cast<size_t>(options.batch_size);
    for (size_t s = 0; s < order.size(); s += b) {
      const size_t e = std::min(order.size(), s + b);
      if (options.drop_last && e - s < b) break;
      out.emplace_back(order.begin() + s, order.begin() + e);
    }
    return out;
  }
  const int64_t budget = *options.max_rows;
  std::vector<int64_t> group;
  int64_t rows = 0;
  for (const int64_t i : order) {
    const int64_t r = dataset.rows(0, i);
    if (!group.empty() && rows + r > budget) {
      out.push_back(std::move(group));
      group.clear();
      rows = 0;
    }
    group.push_back(i);
    rows += r;
    if (rows >= budget) {
      out.push_back(std::move(group));
      group.clear();
      rows = 0;
    }
  }
  if (!group.empty() && !(options.drop_last && rows < budget)) out.push_back(std::move(group));
  return out;
}

}  // namespace st::data
