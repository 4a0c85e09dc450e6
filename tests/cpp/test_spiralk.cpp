// SpiralK: parsing with positioned errors, evaluation, the rank-plan rewrite, the unison round
// trip, and the planned CPU execution.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "spiraltorch/ops.h"
#include "spiraltorch/runtime/rank_plan.h"
#include "spiraltorch/runtime/spiralk.h"

using namespace st;
using namespace st::runtime;
namespace sk = st::spiralk;

namespace {

std::string error_of(std::string_view src) {
  try {
    sk::Program::parse(src).eval({{"c", 10.0}});
  } catch (const sk::SpiralKError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(SpiralK, ParsesAssignmentsSoftRulesLetAndIf) {
  const auto p = sk::Program::parse(
      "# a comment\n"
      "let half = c / 2;\n"
      "if c >= 1024 { tile_cols: 1024; } else if c > 8 { wg: max(half, 32); } else { wg: 7; }\n"
      "soft (radix, 4, 0.9, c > 1);\n"
      "soft (maxwell.bias, -0.5, 0.6, false);\n"
      "u2: !(c < 3) && true;\n");
  const sk::Result r = p.eval({{"c", 100.0}});
  ASSERT_EQ(r.hard.size(), 2u);
  EXPECT_EQ(r.hard[0].first, "workgroup");
  EXPECT_EQ(std::get<double>(r.hard[0].second), 50.0);
  EXPECT_EQ(r.hard[1].first, "two_stage");
  EXPECT_TRUE(std::get<bool>(r.hard[1].second));
  ASSERT_EQ(r.soft.size(), 1u);  // the maxwell rule's condition is false
  EXPECT_EQ(r.soft[0].field, "radix");
  EXPECT_DOUBLE_EQ(r.soft[0].weight, 0.9);
  EXPECT_EQ(std::get<double>(p.eval({{"c", 4096.0}}).hard.at(0).second), 1024.0);
  EXPECT_EQ(p.eval({{"c", 4096.0}}).hard.at(0).first, "fft_tile");
}

TEST(SpiralK, ErrorsNameLineAndColumn) {
  EXPECT_EQ(error_of("wg: 32;\n\ntile: 4 }"),
            "spiralk: line 3, column 9: expected ';' after the value of 'tile', got '}'");
  EXPECT_EQ(error_of("  foo: 1;"),
            "spiralk: line 1, column 3: unknown field 'foo' (fields: workgroup, lanes, channel_stride, tile, "
            "compaction_tile, two_stage, merge_kind, merge_detail, algo, midk, bottomk, fft_tile, fft_radix, "
            "fft_segments)");
  EXPECT_EQ(error_of("wg: q;"), "spiralk: line 1, column 5: unknown variable 'q' (in scope: c)");
  EXPECT_EQ(error_of("if c { wg: 1; }"),
            "spiralk: line 1, column 4: the condition of 'if' must be a boolean, got a number");
  EXPECT_EQ(error_of("wg: 1 / 0;"), "spiralk: line 1, column 7: division by zero in '/'");
  EXPECT_EQ(error_of("wg: 3 $ 4;"), "spiralk: line 1, column 7: unexpected character '$'");
  EXPECT_EQ(error_of("if true { wg: 1;"),
            "spiralk: line 1, column 17: expected '}' to close the block opened at line 1, "
            "got the end of the program");
  EXPECT_EQ(error_of("soft (radix, 2, 1.5, true);"),
            "spiralk: line 1, column 17: the weight of 'soft' must be in [0, 1], got 1.5");
  EXPECT_EQ(error_of("wg: nope(1);"),
            "spiralk: line 1, column 5: unknown function 'nope' (builtins: abs, ceil, clamp, "
            "floor, log2, max, min, pow, round, sel, sqrt)");
  std::string deep(5000, '(');
  EXPECT_NE(error_of("wg: " + deep), "");  // deep nesting is an error, not a crash
}

// An `else if` chain used to recurse once per branch in the parser (no depth guard) and in the
// evaluator: ~50,000 branches overflowed the stack while parsing, ~20,000 while evaluating.
TEST(SpiralK, LongElseIfChainsParseAndEvaluateWithoutRecursion) {
  constexpr int kBranches = 100000;
  std::string src;
  for (int i = 0; i < kBranches; ++i)
    src += (i ? " else if c == " : "if c == ") + std::to_string(i) + " { wg: " + std::to_string(i) + "; }";
  src += " else { wg: -1; }";
  const auto p = sk::Program::parse(src);
  EXPECT_EQ(std::get<double>(p.eval({{"c", 0.0}}).hard.at(0).second), 0.0);
  EXPECT_EQ(std::get<double>(p.eval({{"c", 77777.0}}).hard.at(0).second), 77777.0);
  EXPECT_EQ(std::get<double>(p.eval({{"c", kBranches - 1.0}}).hard.at(0).second), kBranches - 1.0);
  EXPECT_EQ(std::get<double>(p.eval({{"c", -5.0}}).hard.at(0).second), -1.0);  // the final else
  // Without a final else no branch assigns anything.
  EXPECT_TRUE(sk::Program::parse("if c == 1 { wg: 1; } else if c == 2 { wg: 2; }").eval({{"c", 3.0}}).hard.empty());
  // Nesting inside the branches is still bounded.
  std::string nested;
  for (int i = 0; i < 5000; ++i) nested += "if true { ";
  EXPECT_NE(error_of(nested), "");
}

TEST(SpiralK, RewriteChangesPlanFieldsAndValidates) {
  const RankPlan p = plan_rank(RankKind::Fft, 256, 4096, 64, "wgpu", {.lane_width = 32, .subgroup = true});
  EXPECT_EQ(p.rewrite_with_spiralk("if c >= 1024 { tile_cols: 1024; }\n").choice.fft_tile, 1024);
  const RankPlan q = p.rewrite_with_spiralk("algo: 2; tile_cols: 2048; radix: 2; segments: 2; tile: 512;");
  EXPECT_EQ(q.merge_strategy(), "bitonic");
  EXPECT_EQ(q.merge_detail(), "bitonic");
  EXPECT_EQ(q.choice.fft_tile, 2048);
  EXPECT_EQ(q.choice.fft_radix, 2);
  EXPECT_EQ(q.choice.fft_segments, 2);
  EXPECT_EQ(q.choice.tile, 512);
  EXPECT_EQ(p.choice.fft_radix, 4);  // the original is unchanged
  const RankPlan b = plan_rank(RankKind::BottomK, 256, 65536, 1024, "wgpu");
  EXPECT_TRUE(b.rewrite_with_spiralk("bottomk: 2;").choice.use_two_stage);
  EXPECT_FALSE(b.rewrite_with_spiralk("bottomk: 1;").choice.use_two_stage);
  EXPECT_THROW(b.rewrite_with_spiralk("u2: false; bottomk: 2;"), ValueError);
  try {
    p.rewrite_with_spiralk("wg: 0;");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "rank plan: choice 'workgroup' must be positive, got 0");
  }
  try {
    p.rewrite_with_spiralk("radix: 3;");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(), "rank plan: choice 'fft_radix'=3 is invalid");
  }
  EXPECT_THROW(p.rewrite_with_spiralk("tile_cols: 1000;"), ValueError);
  EXPECT_THROW(p.rewrite_with_spiralk("wg: 1.5;"), ValueError);
  sk::Result r;
  p.rewrite_with_spiralk(p.fft_spiralk_hint(), &r);
  ASSERT_EQ(r.soft.size(), 3u);  // soft rules are reported, not applied
  EXPECT_EQ(r.soft[0].field, "tile_cols");
}

TEST(SpiralK, UnisonScriptRoundTrips) {
  for (const RankPlan& p :
       {plan_rank(RankKind::TopK, 2, 4, 2, "wgpu"), plan_rank(RankKind::BottomK, 4096, 200000, 300, "cuda"),
        plan_rank(RankKind::MidK, 300, 40000, 70, "hip")}) {
    const std::string script = p.to_unison_script();
    const RankPlan back = p.rewrite_with_spiralk(script);
    EXPECT_EQ(back.choice, p.choice) << script;
    // A different plan of the same kind rewritten with p's script takes p's choice (same caps).
    RankPlan other = p;
    other.choice.tile = 128;
    other.choice.merge_kind = 0;
    other.choice.use_two_stage = !p.choice.use_two_stage;
    EXPECT_EQ(other.rewrite_with_spiralk(script).choice, p.choice);
    EXPECT_EQ(sk::Program::parse(script).eval().unison_kind, rank_kind_name(p.kind));
  }
  EXPECT_EQ(plan_rank(RankKind::TopK, 2, 4, 2, "wgpu").to_unison_script(),
            "unison topk {\n  workgroup 32\n  lanes 8\n  merge warp warp_heap\n  tile 256\n  compaction_tile 256\n"
            "  two_stage false\n  fft_tile 4\n  fft_radix 4\n  fft_segments 1\n}");
  EXPECT_THROW(plan_rank(RankKind::MidK, 2, 4, 2, "wgpu").rewrite_with_spiralk("unison topk { lanes 8 }"), ValueError);
  EXPECT_THROW(sk::Program::parse("unison topk { merge warp fastest }"), sk::SpiralKError);
}

TEST(SpiralK, PlannedExecutionFollowsTheTile) {
  const int64_t rows = 3, cols = 1000, k = 5;
  std::vector<float> data(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) data[i] = static_cast<float>((i * 7919) % 613) - 300.0f;
  data[5] = std::nanf("");
  const Tensor x = Tensor::from_vector(data, {rows, cols});
  const RankPlan p = plan_rank(RankKind::TopK, rows, cols, k, "cpu");
  const RankPlan small = p.rewrite_with_spiralk("tile: 100; u2: true; ctile: 20;");
  const RankExecution a = p.execute(x), b = small.execute(x);
  EXPECT_EQ(a.stats.tile, p.choice.tile);
  EXPECT_EQ(a.stats.tiles_per_row, (cols + p.choice.tile - 1) / p.choice.tile);
  EXPECT_EQ(b.stats.tile, 100);
  EXPECT_EQ(b.stats.tiles_per_row, 10);
  EXPECT_EQ(b.stats.candidates_per_row, 50);  // 10 tiles x k
  EXPECT_TRUE(b.stats.two_stage);
  EXPECT_EQ(b.stats.compaction_blocks_per_row, 3);  // 50 candidates in blocks of 20
  EXPECT_EQ(b.stats.merge_candidates_per_row, 15);
  // The split changes, the answer does not.
  EXPECT_EQ(a.values.to_vector<float>(), b.values.to_vector<float>());
  EXPECT_EQ(a.indices.to_vector<int64_t>(), b.indices.to_vector<int64_t>());
  // Against a full sort of each row's finite entries (larger first, ties by the lower column).
  const auto got_i = a.indices.to_vector<int64_t>();
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<std::pair<float, int64_t>> all;
    for (int64_t j = 0; j < cols; ++j) {
      if (std::isfinite(data[r * cols + j])) all.push_back({-data[r * cols + j], j});
    }
    std::sort(all.begin(), all.end());
    for (int64_t i = 0; i < k; ++i) EXPECT_EQ(got_i[r * k + i], all[i].second);
  }
  EXPECT_THROW(p.execute(Tensor::from_vector(std::vector<float>(4, 0.f), {2, 2})), ShapeError);
}
