#pragma once
// Sample orders and batch plans of the data pipeline.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "spiraltorch/data/dataset.h"
#include "spiraltorch/generator.h"

namespace st::data {

// A uniformly random permutation of 0..n-1 (Fisher-Yates). Swap k draws its 64-bit number from
// Philox block counter + k/2 under seed, so the order depends only on (seed, counter, n).
std::vector<int64_t> permutation(int64_t n, uint64_t seed, uint64_t counter = 0);
// A permutation drawn from gen: reserves its Philox blocks, so the next draw gives a new order.
std::vector<int64_t> permutation(int64_t n, Generator& gen);
// Philox blocks one permutation of n samples consumes.
uint64_t permutation_blocks(int64_t n);

// The samples rank `rank` of `world_size` reads in one epoch (PyTorch's DistributedSampler): the
// order is 0..n-1, or when shuffling a permutation fixed by (seed, epoch) alone, so every rank
// draws the same one; without drop_last the order is padded by wrapping around to a multiple of
// world_size, with drop_last its tail is cut; rank r takes positions r, r + world_size, ...
std::vector<int64_t> distributed_shard(int64_t n, int64_t rank, int64_t world_size, bool shuffle, uint64_t seed,
                                       int64_t epoch, bool drop_last);

struct BatchingOptions {
  int64_t batch_size = 1;
  // Row-budget batches: a batch holds at most max_rows rows of field 0 (a larger sample forms a
  // batch alone); batch_size is then ignored.
  std::optional<int64_t> max_rows;
  // Fixed batches: drop a last batch smaller than batch_size. Row batches: drop a last batch
  // holding fewer than max_rows rows.
  bool drop_last = false;
  void validate(const char* who) const;
};

// Splits `order` into batches of sample indices.
std::vector<std::vector<int64_t>> plan_batches(const TensorDataset& dataset, std::span<const int64_t> order,
                                               const BatchingOptions& options);

}  // namespace st::data
