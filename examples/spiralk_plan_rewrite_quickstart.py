"""SpiralK plan rewrite: plan a top-k, rewrite its launch fields with a SpiralK program, run both
plans and see the execution follow the rewritten fields (docs/spiralk.md has the grammar)."""

import spiraltorch as st

rows, cols, k = 64, 4096, 8
plan = st.plan("topk", rows, cols, k, backend="cpu")
print("baseline plan:", plan)
print(plan.to_unison_script())

program = """
# smaller tiles and a two-stage compaction for wide rows
if c >= 1024 {
    tile: 512;
    u2: true;
    ctile: clamp(k * 16, 128, 1024);
}
algo: 2;                         # merge by a full (bitonic) sort
soft (radix, 2, 0.90, k > 4);    # a hint for a tuner: reported, not applied
"""
rewritten, said = plan.rewrite_with_spiralk_explain(program)
print("rewritten plan:", rewritten)
print("hard:", said["hard"])
print("soft:", said["soft"])

st.manual_seed(0)
x = st.randn(rows, cols)
v0, i0, s0 = plan.execute(x, return_stats=True)
v1, i1, s1 = rewritten.execute(x, return_stats=True)
for name, s in (("baseline", s0), ("rewritten", s1)):
    print(f"{name:9s}: tile {s['tile']}, {s['tiles_per_row']} tiles/row, {s['candidates_per_row']} candidates/row, "
          f"two_stage {s['two_stage']} ({s['compaction_blocks_per_row']} blocks of {s['compaction_tile']}), "
          f"merge {s['merge']} over {s['merge_candidates_per_row']}")
print("same answer:", v0.tolist() == v1.tolist() and i0.tolist() == i1.tolist())
print("top-3 of row 0:", [round(v, 4) for v in v1[0].tolist()[:3]], "at columns", i1[0].tolist()[:3])

# The unison script reads back into the same plan.
print("round trip:", plan.rewrite_with_spiralk(rewritten.to_unison_script()) == rewritten)

# Errors name the line and column.
try:
    plan.rewrite_with_spiralk("tile: 512;\nwg: 64\nlanes: 8;")
except st.SpiralKError as e:
    print("error:", e, f"(line {e.line}, column {e.column})")
