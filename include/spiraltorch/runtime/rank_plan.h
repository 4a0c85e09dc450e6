#pragma once
// The rank-k planner: launch parameters for a top/mid/bottom-k (or FFT-tiled) problem of
// (rows, cols, k) on a backend's device, a SpiralK rewrite of them, and a CPU execution that
// follows the plan (column tiles of `tile`, optional two-stage compaction in blocks of
// `compaction_tile`, the planned merge) and reports what it did.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "spiraltorch/runtime/spiralk.h"
#include "spiraltorch/tensor.h"

namespace st::runtime {

enum class RankKind { TopK, MidK, BottomK, Fft };

const char* rank_kind_name(RankKind kind);
// "topk"/"top_k", "midk"/"mid_k", "bottomk"/"bottom_k", "fft" (any case); ValueError otherwise.
RankKind parse_rank_kind(std::string_view name);
// The rank-k a kind computes (an FFT plan ranks like topk).
RankKind rank_of(RankKind kind);

// What the planner needs to know about a device.
struct DeviceCaps {
  std::string backend;  // wgpu, mps, cuda, hip or cpu
  bool subgroup = false;
  int64_t lane_width = 1;
  int64_t max_workgroup = 128;
  std::optional<int64_t> shared_mem_per_workgroup;

  struct Overrides {
    std::optional<int64_t> lane_width, max_workgroup, shared_mem_per_workgroup;
    std::optional<bool> subgroup;
  };
  // The table entry for `backend`; a present CUDA GPU gets the 48 KiB of static shared memory a
  // block has without opting in. Overrides are validated (positive; lane_width <= max_workgroup).
  static DeviceCaps for_backend(const std::string& backend, const Overrides& overrides = {});
  // `w` clamped to [lane_width, max_workgroup] and rounded up to a multiple of the lane width
  // (down to the largest such multiple when rounding up would pass the maximum).
  int64_t align_workgroup(int64_t w) const;
};

inline constexpr const char* kMergeStrategies[] = {"bitonic", "shared", "warp"};
inline constexpr const char* kMergeDetails[] = {"auto", "heap", "kway", "bitonic", "warp_heap", "warp_bitonic"};

// The launch choice. Field names follow the SpiralK hard fields (docs/spiralk.md).
struct RankChoice {
  bool use_two_stage = false;
  int64_t workgroup = 0, lanes = 0, channel_stride = 0;
  int merge_kind = 0, merge_detail = 0;  // indices into kMergeStrategies / kMergeDetails
  int64_t tile = 0, compaction_tile = 0;
  bool subgroup = false;
  int64_t fft_tile = 0, fft_radix = 0, fft_segments = 0;
  bool operator==(const RankChoice&) const = default;
};

// The baseline formulas (deterministic: a pure function of the arguments).
RankChoice baseline_choice(RankKind kind, int64_t rows, int64_t cols, int64_t k, const DeviceCaps& caps);

// Whether this process can execute on `backend` (the CPU always; CUDA when built and present).
bool runtime_ready(const std::string& backend);
// "auto" -> cuda when usable else cpu; aliases (webgpu, rocm) resolved; ValueError when unknown.
std::string resolve_backend(const std::string& backend);

struct RankExecution;

struct RankPlan {
  RankKind kind = RankKind::TopK;
  int64_t rows = 0, cols = 0, k = 0;
  std::string requested_backend, effective_backend;
  DeviceCaps caps;
  RankChoice choice;

  std::string merge_strategy() const { return kMergeStrategies[choice.merge_kind]; }
  std::string merge_detail() const { return kMergeDetails[choice.merge_detail]; }

  // `unison <kind> { ... }`: one setting per line; SpiralK reads it back (round trip).
  std::string to_unison_script() const;
  // Three soft rules steering a tuner towards this plan's FFT tiling (fixed weights 0.85/0.90/0.75).
  std::string fft_spiralk_hint() const;
  // The variables a SpiralK program sees: r, c, k, sg, sgc, kc, and the current choice
  // (wg, kl, ch, tile, ctile, u2, tile_cols, radix, segments).
  spiralk::Variables spiralk_variables() const;
  // A new plan whose choice is this one overridden by the program's hard assignments, then
  // validated (ValueError naming the field). Soft rules are evaluated and reported in `result`.
  // `extra` adds variables (e.g. `channel` for Maxwell hints); it may not shadow the plan's own.
  RankPlan rewrite_with_spiralk(std::string_view script, spiralk::Result* result = nullptr,
                                const spiralk::Variables& extra = {}) const;
  // Throws ValueError when the choice cannot be launched on `caps`.
  void validate() const;

  // Runs the planned rank-k on the CPU 2-D tensor `x` of shape (rows, cols).
  RankExecution execute(const Tensor& x) const;
};

// Plans `kind` over rows x cols keeping k per row for `backend` ("auto": CUDA when usable, else
// the CPU; "mps" plans for the CPU surrogate). ValueError on non-positive sizes or k > cols.
RankPlan plan_rank(RankKind kind, int64_t rows, int64_t cols, int64_t k, const std::string& backend = "auto",
                   const DeviceCaps::Overrides& overrides = {});

// What one planned execution did, per row: the columns were cut into `tiles_per_row` tiles of at
// most `tile` columns, each reduced to its best `need` candidates; with two-stage execution those
// candidates were compacted in `compaction_blocks_per_row` blocks of `compaction_tile`; the final
// merge ranked `merge_candidates_per_row` candidates (`merge`: bitonic = a full sort, the others a
// partial heap selection).
struct RankExecutionStats {
  int64_t tile = 0, tiles_per_row = 0, candidates_per_row = 0;
  bool two_stage = false;
  int64_t compaction_tile = 0, compaction_blocks_per_row = 0, merge_candidates_per_row = 0;
  std::string merge;
};

struct RankExecution {
  Tensor values, indices;  // (rows, k): values in x's float dtype, indices int64; NaN / -1 padding
  RankExecutionStats stats;
};

}  // namespace st::runtime
