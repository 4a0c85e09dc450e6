"""SpiralK (parse, eval, plan rewrite, unison round trip, planned execution), the Maxwell -> SpiralK
hint bridge, and the two quickstart examples."""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys

import numpy as np
import pytest

import spiraltorch as st
from spiraltorch import spiralk

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ---------------------------------------------------------------- the language

def test_parse_and_eval_hard_soft_let_if():
    prog = spiralk.parse("""
        let half = c / 2;   # a comment
        if c >= 1024 { tile_cols: 1024; } else if c > 8 { wg: max(half, 32); } else { wg: 7; }
        soft (radix, 4, 0.9, c > 1);
        soft (maxwell.bias, -0.5, 0.6, name == "x");
        u2: !(c < 3) && sel(c > 50, true, false);
    """)
    r = prog.eval(c=100, name="y")
    assert r == {"hard": {"workgroup": 50, "two_stage": True}, "soft": [{"field": "radix", "value": 4, "weight": 0.9}],
                 "unison_kind": None}
    assert prog.eval({"c": 4096, "name": "x"})["hard"]["fft_tile"] == 1024
    assert [s["field"] for s in prog.eval(c=4, name="x")["soft"]] == ["radix", "maxwell.bias"]
    assert "workgroup" in spiralk.hard_fields() and "fft_radix" in spiralk.hard_fields()
    assert isinstance(prog, spiralk.SpiralKProgram) and "SpiralKProgram(" in repr(prog)


@pytest.mark.parametrize("src, line, column, detail", [
    ("wg: 32;\n\ntile: 4 }", 3, 9, "expected ';' after the value of 'tile', got '}'"),
    ("  foo: 1;", 1, 3, "unknown field 'foo'"),
    ("wg: q;", 1, 5, "unknown variable 'q'"),
    ("if 3 { wg: 1; }", 1, 4, "the condition of 'if' must be a boolean, got a number"),
    ("wg: 1 % 0;", 1, 7, "division by zero in '%'"),
    ("\n  tile: 4 @ 2;", 2, 11, "unexpected character '@'"),
    ("unison topk { merge warp fastest }", 1, 26, "unknown merge detail 'fastest'"),
    ("soft (radix, 2, 2, true);", 1, 17, "the weight of 'soft' must be in [0, 1], got 2"),
])
def test_errors_name_line_and_column(src, line, column, detail):
    with pytest.raises(st.SpiralKError) as info:
        spiralk.parse(src).eval()
    e = info.value
    assert (e.line, e.column) == (line, column)
    assert str(e).startswith(f"spiralk: line {line}, column {column}: ") and detail in e.detail
    assert isinstance(e, st.SpiralError) and isinstance(e, ValueError)


def test_hostile_nesting_is_an_error_not_a_crash():
    with pytest.raises(st.SpiralKError, match="nesting is too deep"):
        spiralk.parse("wg: " + "(" * 100000)


# ---------------------------------------------------------------- plan rewrite

def test_rewrite_changes_plan_fields_and_leaves_the_original():
    p = st.plan("fft", 256, 4096, 64, backend="wgpu", lane_width=32, subgroup=True)
    assert p.rewrite_with_spiralk("if c >= 1024 { tile_cols: 1024; }\n").fft_tile == 1024
    q = p.rewrite_with_spiralk("algo: 2; tile_cols: 2048; radix: 2; segments: 2; wg: 64; kl: 16; tile: 512;")
    assert (q.merge_strategy, q.merge_detail) == ("bitonic", "bitonic")
    assert (q.fft_tile, q.fft_radix, q.fft_segments, q.workgroup, q.lanes, q.tile) == (2048, 2, 2, 64, 16, 512)
    assert p.contract() == st.plan("fft", 256, 4096, 64, backend="wgpu", lane_width=32, subgroup=True).contract()
    b = st.plan("bottomk", 256, 65536, 1024, backend="wgpu")
    assert b.rewrite_with_spiralk("bottomk: 2;").use_two_stage
    assert not b.rewrite_with_spiralk("bottomk: 1;").use_two_stage
    assert b.rewrite_with_spiralk("midk: 2;").use_two_stage == b.use_two_stage  # another kind's knob
    with pytest.raises(ValueError, match="disagree on two-stage execution"):
        b.rewrite_with_spiralk("u2: false; bottomk: 2;")
    with pytest.raises(st.SpiralValueError, match="choice 'workgroup' must be positive, got 0"):
        p.rewrite_with_spiralk("wg: 0;")
    with pytest.raises(ValueError, match="choice 'fft_radix'=3 is invalid"):
        p.rewrite_with_spiralk("radix: 3;")
    with pytest.raises(ValueError, match="'fft_tile'=1000 is invalid"):
        p.rewrite_with_spiralk("tile_cols: 1000;")
    with pytest.raises(ValueError, match="multiple of the lane width 32"):
        p.rewrite_with_spiralk("wg: 48;")
    with pytest.raises(ValueError, match="field 'workgroup' needs an integer, got 1.5"):
        p.rewrite_with_spiralk("wg: 1.5;")
    with pytest.raises(TypeError):
        p.rewrite_with_spiralk(3)


def test_rewrite_explain_context_and_extra_variables():
    p = st.plan_topk(8, 256, 4, backend="cpu")
    ctx = p.spiralk_context()
    assert (ctx["r"], ctx["c"], ctx["k"], ctx["tile"], ctx["u2"]) == (8, 256, 4, p.tile, p.use_two_stage)
    q, said = p.rewrite_with_spiralk_explain(p.fft_spiralk_hint() + "\ntile: tile / 2;")
    assert q.tile == p.tile // 2 and said["hard"] == {"tile": p.tile // 2}
    assert [s["field"] for s in said["soft"]] == ["tile_cols", "radix", "segments"]  # reported, not applied
    assert q.fft_tile == p.fft_tile
    r = p.rewrite_with_spiralk('if mode == "narrow" { tile: 128; }', mode="narrow")
    assert r.tile == 128
    with pytest.raises(ValueError, match="variable 'c' is the plan's own"):
        p.rewrite_with_spiralk("tile: 128;", c=5)


@pytest.mark.parametrize("args", [("topk", 2, 4, 2, "wgpu"), ("bottomk", 4096, 200_000, 300, "cuda"),
                                  ("midk", 300, 40_000, 70, "hip"), ("fft", 8, 1000, 3, "cpu")])
def test_unison_script_round_trips(args):
    kind, rows, cols, k, backend = args
    p = st.plan(kind, rows, cols, k, backend=backend)
    script = p.to_unison_script()
    assert p.rewrite_with_spiralk(script) == p
    parsed = spiralk.parse(script).eval()
    assert parsed["unison_kind"] == ("topk" if kind == "fft" else kind)
    assert parsed["hard"]["workgroup"] == p.workgroup and parsed["hard"]["two_stage"] == p.use_two_stage
    # Another plan of the same problem, rewritten to other fields, comes back to p with p's script.
    other = p.rewrite_with_spiralk("tile: 128; algo: 2; u2: " + ("false" if p.use_two_stage else "true") + ";")
    assert other != p and other.rewrite_with_spiralk(script) == p
    with pytest.raises(ValueError, match="the unison block is for"):
        st.plan("midk" if kind != "midk" else "topk", rows, cols, k, backend=backend).rewrite_with_spiralk(script)


def test_rewritten_tile_changes_the_planned_execution():
    rows, cols, k = 5, 1000, 7
    g = np.random.default_rng(0)
    a = g.integers(-50, 50, size=(rows, cols)).astype(np.float32)  # many ties
    a[0, :3] = np.nan
    a[1, 10] = np.inf
    x = st.tensor(a)
    p = st.plan_topk(rows, cols, k, backend="cpu")
    q = p.rewrite_with_spiralk("tile: 100; u2: true; ctile: 30;")
    v0, i0, s0 = p.execute(x, return_stats=True)
    v1, i1, s1 = q.execute(x, return_stats=True)
    assert s0["tile"] == p.tile and s0["tiles_per_row"] == math.ceil(cols / p.tile) and not s0["two_stage"]
    assert s1 == {"tile": 100, "tiles_per_row": 10, "candidates_per_row": 70, "two_stage": True,
                  "compaction_tile": 30, "compaction_blocks_per_row": 3, "merge_candidates_per_row": 21,
                  "merge": q.merge_strategy}
    np.testing.assert_array_equal(v0.numpy(), v1.numpy())
    np.testing.assert_array_equal(i0.numpy(), i1.numpy())
    rv, ri = st.rank_k(x, k, "topk")  # the sort-based reference
    np.testing.assert_array_equal(i1.numpy(), ri.numpy())
    np.testing.assert_array_equal(v1.numpy(), rv.numpy())
    assert p.merge_strategy == "bitonic"  # the CPU plan sorts all candidates; algo 1 selects with a heap
    assert p.rewrite_with_spiralk("algo: 1;").execute(x, return_stats=True)[2]["merge"] == "shared"
    for kind in ("midk", "bottomk"):
        pk = st.plan(kind, rows, cols, k, backend="cpu").rewrite_with_spiralk("tile: 64;")
        v, i, s = pk.execute(x, return_stats=True)
        rv, ri = st.rank_k(x, k, kind)
        np.testing.assert_array_equal(i.numpy(), ri.numpy())
        assert s["tiles_per_row"] == math.ceil(cols / 64)


def test_seed_snippet_prints_the_plan():
    plan = st.plan_topk(rows=2, cols=4, k=2, backend="auto")
    assert plan.kind == "topk" and plan.to_unison_script().splitlines()[0] == "unison topk {"
    assert plan.fft_spiralk_hint().splitlines()[0] == "soft (tile_cols, 4, 0.85, c >= 4);"


# ---------------------------------------------------------------- Maxwell

def test_sequential_z_matches_the_statistics_module():
    xs = [0.3, -0.1, 0.8, 0.45, 0.2, 0.05]
    z = spiralk.SequentialZ()
    assert z.is_empty() and z.push(xs[0]) is None  # undefined with one sample
    for x in xs[1:]:
        z.push(x)
    assert len(z) == 6 and z.mean() == pytest.approx(statistics.mean(xs))
    assert z.variance() == pytest.approx(statistics.variance(xs))
    se = statistics.stdev(xs) / math.sqrt(6)
    assert z.standard_error() == pytest.approx(se) and z.z_stat() == pytest.approx(statistics.mean(xs) / se)
    z.reset()
    assert z.is_empty() and z.z_stat() is None
    z.push(1.0)
    assert z.push(1.0) is None  # zero variance
    with pytest.raises(ValueError, match="must be finite"):
        z.push(float("nan"))


def test_required_blocks_and_z_curves():
    assert spiralk.required_blocks(2.0, 1.0, 0.9, 1.0) == pytest.approx((2 / 0.9) ** 2)
    assert spiralk.required_blocks(2.0, 1.0, 0.0, 1.0) is None
    assert spiralk.expected_z_curve(3, 0.5, 1.0, 0.25) == pytest.approx([0.5 * math.sqrt(n) for n in (1, 2, 3)])
    sim = spiralk.simulate_z_curve(200, 0.5, 1.0, 0.25, seed=3)
    assert sim == spiralk.simulate_z_curve(200, 0.5, 1.0, 0.25, seed=3) and sim[0] == 0.0
    assert sim != spiralk.simulate_z_curve(200, 0.5, 1.0, 0.25, seed=4)
    assert abs(sim[-1] - 0.5 * math.sqrt(200)) < 3.5  # z grows like (kappa*lambda/sigma) sqrt(n)
    with pytest.raises(ValueError, match="sigma must be positive"):
        spiralk.expected_z_curve(3, 0.0, 1.0, 1.0)
    fp = spiralk.MaxwellFingerprint(2.0, 0.5, 0.8, 20.0, 1.5, math.pi / 3, 2.0)
    assert fp.lambda_() == pytest.approx(2.0 * 0.5 * 0.8 * 0.1 * 1.5 * 0.5 / 2.0)
    assert fp.expected_block_mean(3.0) == pytest.approx(3 * fp.lambda_())
    assert spiralk.MaxwellFingerprint(-1.0, 0.5, 0.8, 0.0, 1.0, 0.0, 1.0).lambda_() == 0.0


def test_bridge_formats_hints_that_parse_as_spiralk():
    bridge = spiralk.MaxwellSpiralKBridge("tile: 512")
    assert bridge.is_empty() and bridge.script() == "tile: 512;"
    h = bridge.push_pulse("alpha:β-1/x!", 12, 0.4, 0.1, 4.0, band_energy=(0.1, 0.7, 0.2))
    assert isinstance(h, spiralk.MaxwellSpiralKHint)
    assert h.channel == "alpha__1_x" and h.weight == pytest.approx(0.55 + 0.4 * 4 / 5)
    assert h.z_bias == pytest.approx(0.8)
    assert h.script_line() == 'soft (maxwell.bias, 0.800000, 0.870, channel == "alpha__1_x" && blocks >= 12);'
    h2 = bridge.push_pulse("", 3, -0.2, 0.1, -2.0, z_bias=-0.25)
    assert h2.channel == "maxwell" and h2.script_line().startswith("soft (maxwell.bias, -0.250000, 0.817,")
    script = bridge.script()
    assert script.splitlines() == ["tile: 512;", h.script_line(), h2.script_line()]
    prog = spiralk.parse(script)
    assert prog.eval(channel="alpha__1_x", blocks=12)["soft"] == [
        {"field": "maxwell.bias", "value": pytest.approx(0.8), "weight": pytest.approx(0.87)}]
    assert prog.eval(channel="alpha__1_x", blocks=11)["soft"] == []  # not enough blocks yet
    assert prog.eval(channel="maxwell", blocks=3)["hard"] == {"tile": 512}
    m = bridge.push_measurements("m", [0.1, 0.3, 0.2, 0.4])
    assert m.blocks == 4 and m.mean == pytest.approx(0.25) and len(bridge.hints()) == 3
    bridge.clear()
    assert spiralk.MaxwellSpiralKBridge().script() is None
    with pytest.raises(ValueError, match="min_weight <= max_weight"):
        spiralk.MaxwellSpiralKBridge(min_weight=0.9, max_weight=0.5)
    with pytest.raises(st.SpiralKError, match="line 1, column 6"):
        spiralk.MaxwellSpiralKBridge("tile 512;")
    with pytest.raises(ValueError, match="at least two measurements"):
        bridge.push_measurements("m", [1.0])
    with pytest.raises(ValueError, match="band_energy needs 3 values"):
        bridge.push_pulse("m", 2, 0.0, 1.0, 0.0, band_energy=(1.0,))


# ---------------------------------------------------------------- the examples

def _run_example(name):
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(st.__file__))))
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "examples", name)], capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_spiralk_plan_rewrite_quickstart_runs():
    out = _run_example("spiralk_plan_rewrite_quickstart.py")
    assert out.splitlines()[1] == "unison topk {"
    assert "rewritten: tile 512, 8 tiles/row, 64 candidates/row, two_stage True (1 blocks of 128)" in out
    assert "baseline : tile 4096, 1 tiles/row" in out or "baseline : tile" in out
    assert "same answer: True" in out and "round trip: True" in out
    assert "error: spiralk: line 3, column 1: expected ';' after the value of 'wg', got 'lanes' (line 3, column 1)" \
        in out
    assert "soft: [{'field': 'radix', 'value': 2, 'weight': 0.9}]" in out


def test_maxwell_spiralk_bridge_quickstart_runs():
    out = _run_example("maxwell_spiralk_bridge_quickstart.py")
    lines = out.splitlines()
    near = float(lines[0].split("lambda=")[1].split(",")[0])
    far = float(lines[1].split("lambda=")[1].split(",")[0])
    assert near > far > 0
    assert lines[5] == "tile: 512;"
    assert lines[6].startswith('soft (maxwell.bias, ') and 'channel == "alpha_near" && blocks >= 24);' in lines[6]
    assert "alpha_near -> [('maxwell.bias'," in out and "beta_far -> [('maxwell.bias'," in out
    assert "gamma_null" in out
    assert out.rstrip().endswith("| soft hints: 1") and "plan tile:" in out and "-> 512" in out
