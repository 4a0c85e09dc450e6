// The CPU execution of a RankPlan: each row is cut into column tiles of `tile`, every tile is
// reduced to its best candidates, optionally compacted in blocks (two-stage), then merged. The
// result is exact whatever the plan says; the plan decides how the work is split.
#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <vector>

#include "spiraltorch/error.h"
#include "spiraltorch/ops.h"
#include "spiraltorch/runtime/rank_plan.h"
#include "spiraltorch/threads.h"

namespace st::runtime {

namespace {

struct Candidate {
  double value;
  int64_t col;
};

// Keeps the best `need` of `c[begin, end)` (in rank order) at its front; returns the new end.
template <class Better>
size_t keep_best(std::vector<Candidate>& c, size_t begin, size_t end, size_t need, Better better) {
  if (end - begin > need) {
    std::nth_element(c.begin() + begin, c.begin() + begin + need, c.begin() + end, better);
    end = begin + need;
  }
  return end;
}

}  // namespace

RankExecution RankPlan::execute(const Tensor& x_in) const {
  const std::string op = "RankPlan.execute";
  if (x_in.device().type != DeviceType::CPU) {
    throw ValueError(op + ": the planned execution runs on the CPU; got a tensor on " + x_in.device().str());
  }
  if (x_in.dim() != 2 || x_in.shape()[0] != rows || x_in.shape()[1] != cols) {
    throw ShapeError(op + ": planned for (" + std::to_string(rows) + ", " + std::to_string(cols) + "), got " +
                     shape_str(x_in.shape()));
  }
  const Dtype out_dtype = is_floating(x_in.dtype())      ? x_in.dtype()
                          : x_in.dtype() == Dtype::Int64 ? Dtype::Float64
                                                         : Dtype::Float32;
  const std::vector<double> x = x_in.to(Dtype::Float64).to_vector<double>();
  const RankKind rank = rank_of(kind);
  const bool descending = rank == RankKind::TopK;
  // Rank order: the larger (topk) or smaller value first, ties by the lower column.
  const auto better = [descending](const Candidate& a, const Candidate& b) {
    if (a.value != b.value) return descending ? a.value > b.value : a.value < b.value;
    return a.col < b.col;
  };
  const int64_t tile = choice.tile, ctile = choice.compaction_tile;
  const bool full_sort = choice.merge_kind == 0;  // bitonic: every candidate is sorted
  RankExecutionStats stats;
  stats.tile = tile;
  stats.tiles_per_row = (cols + tile - 1) / tile;
  stats.two_stage = choice.use_two_stage;
  stats.compaction_tile = choice.use_two_stage ? ctile : 0;
  stats.merge = merge_strategy();

  std::vector<double> values(static_cast<size_t>(rows * k), std::numeric_limits<double>::quiet_NaN());
  std::vector<int64_t> indices(static_cast<size_t>(rows * k), -1);
  // Host orchestration (the planner's CPU execution of a plan, not a device kernel): rows split
  // into one range per thread, each range's maxima merged under a lock.
  int64_t all_candidates = 0, all_blocks = 0, all_merge = 0;
  std::mutex stats_mutex;
  const int64_t threads = get_num_threads();
  parallel_for(rows, rows >= 64 ? (rows + threads - 1) / threads : rows, [&](int64_t r_begin, int64_t r_end) {
    int64_t max_candidates = 0, max_blocks = 0, max_merge = 0;
    for (int64_t r = r_begin; r < r_end; ++r) {
      const double* row = x.data() + r * cols;
      int64_t n_finite = 0;
      for (int64_t j = 0; j < cols; ++j) n_finite += std::isfinite(row[j]) ? 1 : 0;
      // midk takes the window starting at (n_finite - k) / 2 of the ascending order.
      const int64_t start = rank == RankKind::MidK ? std::max<int64_t>((n_finite - k) / 2, 0) : 0;
      const size_t need = static_cast<size_t>(std::min(n_finite, start + k));
      std::vector<Candidate> cand;
      cand.reserve(static_cast<size_t>(std::min<int64_t>(cols, stats.tiles_per_row * static_cast<int64_t>(need))));
      // Stage 1: each column tile keeps its best `need`.
      for (int64_t t0 = 0; t0 < cols; t0 += tile) {
        const size_t begin = cand.size();
        for (int64_t j = t0; j < std::min(cols, t0 + tile); ++j) {
          if (std::isfinite(row[j])) cand.push_back({row[j], j});
        }
        cand.resize(keep_best(cand, begin, cand.size(), need, better));
      }
      max_candidates = std::max<int64_t>(max_candidates, static_cast<int64_t>(cand.size()));
      // Stage 2 (two-stage plans): compact the candidates block by block before the merge.
      if (choice.use_two_stage && need > 0) {
        int64_t blocks = 0;
        size_t write = 0;
        for (size_t b0 = 0; b0 < cand.size(); b0 += static_cast<size_t>(ctile), ++blocks) {
          const size_t b1 = std::min(cand.size(), b0 + static_cast<size_t>(ctile));
          const size_t kept = keep_best(cand, b0, b1, need, better);
          std::move(cand.begin() + b0, cand.begin() + kept, cand.begin() + write);
          write += kept - b0;
        }
        cand.resize(write);
        max_blocks = std::max(max_blocks, blocks);
      }
      max_merge = std::max<int64_t>(max_merge, static_cast<int64_t>(cand.size()));
      // Merge: rank the survivors and take the positions [start, start + k).
      if (full_sort) {
        std::sort(cand.begin(), cand.end(), better);
      } else {
        std::partial_sort(cand.begin(), cand.begin() + std::min(need, cand.size()), cand.end(), better);
      }
      for (int64_t i = 0; i < k && start + i < static_cast<int64_t>(need); ++i) {
        values[r * k + i] = cand[start + i].value;
        indices[r * k + i] = cand[start + i].col;
      }
    }
    const std::lock_guard<std::mutex> lock(stats_mutex);
    all_candidates = std::max(all_candidates, max_candidates);
    all_blocks = std::max(all_blocks, max_blocks);
    all_merge = std::max(all_merge, max_merge);
  });
  stats.candidates_per_row = all_candidates;
  stats.compaction_blocks_per_row = all_blocks;
  stats.merge_candidates_per_row = all_merge;
  RankExecution out;
  out.values = Tensor::from_vector(values, {rows, k}).to(out_dtype);
  out.indices = Tensor::from_vector(indices, {rows, k});
  out.stats = std::move(stats);
  return out;
}

}  // namespace st::runtime
