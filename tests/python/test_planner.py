"""Rank-k planning (plan, plan_topk, RankPlan), the rank-k ops and the GPU/HIP probes."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import spiraltorch as st
from conftest import run_python, tensor_on, to_np


def test_seed_rank_k_snippet_runs():
    code = textwrap.dedent("""
        import spiraltorch as st

        plan = st.plan_topk(rows=2, cols=4, k=2, backend="auto")
        print(plan.kind, plan.effective_backend)
        print("tile/workgroup:", plan.tile, plan.workgroup)
        print(plan.to_unison_script().splitlines()[0])
        print(plan.fft_spiralk_hint().splitlines()[0])
    """)
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    backend = "cuda" if st.cuda.is_available() else "cpu"
    p = st.plan_topk(2, 4, 2, backend=backend)
    assert r.stdout.splitlines() == [f"topk {backend}", f"tile/workgroup: {p.tile} {p.workgroup}", "unison topk {",
                                      "soft (tile_cols, 4, 0.85, c >= 4);"]


def test_wgpu_worked_example_matches_the_baseline_formulas():
    p = st.plan_topk(rows=2, cols=4, k=2, backend="wgpu")
    assert (p.kind, p.requested_backend, p.effective_backend) == ("topk", "wgpu", "wgpu")
    assert p.runtime_ready is st.wgpu.is_available()
    assert (p.workgroup, p.lanes, p.channel_stride, p.merge_strategy, p.merge_detail) == (32, 8, 0, "warp",
                                                                                          "warp_heap")
    assert (p.tile, p.compaction_tile, p.use_two_stage) == (256, 256, False)
    assert (p.fft_tile, p.fft_radix, p.fft_segments) == (4, 4, 1)
    assert p.to_unison_script().splitlines() == [
        "unison topk {", "  workgroup 32", "  lanes 8", "  merge warp warp_heap", "  tile 256",
        "  compaction_tile 256", "  two_stage false", "  fft_tile 4", "  fft_radix 4", "  fft_segments 1", "}"]
    assert p.fft_spiralk_hint().splitlines() == ["soft (tile_cols, 4, 0.85, c >= 4);", "soft (radix, 4, 0.90, true);",
                                                 "soft (segments, 1, 0.75, true);"]
    assert st.plan("topk", 2, 128, 8, backend="wgpu", lane_width=32, max_workgroup=32).workgroup == 32


def test_plan_choices_follow_problem_size():
    big = st.plan("bottomk", 4096, 200_000, 300, backend="cuda")
    assert big.use_two_stage and big.fft_segments == 4 and big.lanes == 32
    assert big.channel_stride in (4096, 8192) and big.workgroup % 32 == 0 and big.workgroup <= 1024
    assert "  channel_stride" in big.to_unison_script()
    mid = st.plan("midk", 300, 40_000, 70, backend="hip")
    assert mid.fft_segments == 2 and mid.lanes == 16 and mid.merge_strategy == "shared"
    fft = st.plan("fft", 8, 1000, 3, backend="cpu")
    assert fft.kind == "fft" and fft.fft_tile == 1024 and fft.fft_radix == 2
    assert fft.to_unison_script().splitlines()[0] == "unison topk {"
    # Pure: the same arguments give the same plan.
    assert st.plan("topk", 64, 5000, 16, backend="cuda").contract() == \
        st.plan("topk", 64, 5000, 16, backend="cuda").contract()
    c = big.contract()
    assert c["input_elements"] == 4096 * 200_000 and c["output_elements"] == 4096 * 300
    assert c["device_caps"]["backend"] == "cuda" and c["choice"]["workgroup"] == big.workgroup


def test_plan_validation_errors():
    with pytest.raises(ValueError, match="rank-plan dimension 'rows' must be positive"):
        st.plan_topk(0, 4, 2)
    with pytest.raises(ValueError, match="rank-plan k=9 exceeds cols=8"):
        st.plan_topk(2, 8, 9)
    with pytest.raises(ValueError, match="unknown backend 'tpu'"):
        st.plan_topk(2, 8, 2, backend="tpu")
    with pytest.raises(ValueError, match="unknown rank kind 'median'"):
        st.plan("median", 2, 8, 2)
    with pytest.raises(ValueError, match="lane_width=64 exceeds max_workgroup=32"):
        st.plan_topk(2, 8, 2, backend="cuda", lane_width=64, max_workgroup=32)
    with pytest.raises(ValueError, match="'max_workgroup' must be a positive integer"):
        st.plan_topk(2, 8, 2, backend="cpu", max_workgroup=0)
    p = st.plan_topk(2, 8, 2)
    with pytest.raises(AttributeError, match="read-only"):
        p.workgroup = 7
    assert st.plan_topk(2, 8, 2, backend="mps").effective_backend == "cpu"


def _reference(a, k, kind):
    vals = np.full((a.shape[0], k), np.nan)
    idx = np.full((a.shape[0], k), -1)
    for r, row in enumerate(a):
        cols = [c for c in range(len(row)) if np.isfinite(row[c])]
        order = sorted(cols, key=lambda c: (-row[c], c) if kind == "topk" else (row[c], c))
        if kind == "midk":
            start = max((len(order) - k) // 2, 0)
            order = order[start:]
        order = order[:k]
        vals[r, :len(order)] = row[order]
        idx[r, :len(order)] = order
    return vals, idx


@pytest.mark.parametrize("kind", ["topk", "midk", "bottomk"])
@pytest.mark.parametrize("k", [1, 3, 7])
def test_rank_k_matches_reference_with_ties_and_nonfinite(kind, k, device):
    g = np.random.default_rng(k)
    a = g.integers(-4, 5, size=(6, 9)).astype(np.float64)  # many ties
    a[1, [0, 4]] = np.nan
    a[2, 3] = np.inf
    a[3, :] = np.nan  # no finite value: all padding
    a[4, 2:] = -np.inf  # fewer finite values than k for k = 3, 7
    v, i = st.rank_k(tensor_on(a, device=device), k, kind)
    rv, ri = _reference(a, k, kind)
    assert v.dtype == st.float64 and i.dtype == st.int64 and tuple(v.shape) == (6, k)
    np.testing.assert_array_equal(to_np(i), ri)
    np.testing.assert_array_equal(to_np(v), rv)  # NaN padding compares equal in assert_array_equal


def test_rank_k_argument_checks_and_plan_execute():
    x = st.tensor([[1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match=r"k must be in \[1, 3\]"):
        st.rank_k(x, 4)
    with pytest.raises(ValueError, match="expected a 2-D tensor"):
        st.rank_k(st.zeros(3), 1)
    with pytest.raises(ValueError, match="kind must be"):
        st.rank_k(x, 1, "fft")
    p = st.plan("bottomk", 1, 3, 2)
    v, i = p.execute(x)
    assert to_np(v).tolist() == [[1.0, 2.0]] and to_np(i).tolist() == [[0, 1]]
    with pytest.raises(ValueError, match=r"planned for \(1, 3\)"):
        p.execute(st.zeros(2, 3))


def test_probe_gpu_path_reports_what_ran():
    r = st.probe_gpu_path("bottomk", backend="cuda", rows=2, cols=5, k=2)
    assert (r["backend"], r["kind"], r["rows"], r["cols"], r["k"]) == ("cuda", "bottomk", 2, 5, 2)
    expected_v, expected_i = [-2.5, -1.5, -2.375, -1.375], [0, 1, 0, 1]
    assert r["non_strict_values"] == expected_v and r["non_strict_indices"] == expected_i
    if st.cuda.is_available():
        assert r["strict_success"] and r["gpu_path_available"] and not r["used_fallback"]
        assert r["strict_values"] == expected_v
    else:
        assert not r["strict_success"] and r["used_fallback"] and not r["gpu_path_available"]
        assert r["strict_error"].startswith("CUDA is not available: ") and r["strict_values"] is None
    h = st.probe_gpu_path("topk", backend="hip", rows=1, cols=3, k=1)
    assert not h["strict_success"] and "HIP kernels are not built" in h["strict_error"]
    assert h["non_strict_values"] == [0.5] and h["non_strict_indices"] == [2]
    with pytest.raises(ValueError, match="backend must be 'cuda', 'hip' or 'wgpu'"):
        st.probe_gpu_path(backend="cpu")
    with pytest.raises(ValueError, match="k=6 exceeds cols=5"):
        st.probe_gpu_path(k=6)


def test_hip_probe_never_invents_devices(monkeypatch):
    monkeypatch.setenv("HIP_VISIBLE_DEVICES", "0,1")
    r = st.hip_probe()
    assert set(r) == {"available", "initialized", "devices", "error", "env_visible_devices"}
    assert r["env_visible_devices"] == ["0", "1"]
    if not r["available"]:
        assert r["devices"] == [] and not r["initialized"] and "HIP runtime not found" in r["error"]
