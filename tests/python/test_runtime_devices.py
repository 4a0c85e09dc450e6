"""Runtime device reports: describe_device with a launch plan, describe_runtime_devices,
observe_runtime_device_probe, evaluate_runtime_device_route and init_backend. Nothing may report a
device that is not there."""

from __future__ import annotations

import pytest

import spiraltorch as st
from spiraltorch import planner

HAVE_CUDA = st.cuda.is_available()


def test_describe_device_launch_plan_comes_from_the_planner():
    d = st.describe_device("cpu", workgroup=100, cols=4096)
    caps = planner.DeviceCaps.for_backend("cpu")
    assert d["backend"] == "cpu" and d["available"] is True and d["caps_source"] == "table"
    assert d["caps"] == {"backend": "cpu", "subgroup": False, "lane_width": 1, "max_workgroup": 128,
                         "shared_mem_per_workgroup": None}
    assert d["requested_workgroup"] == 100 and d["aligned_workgroup"] == caps.align_workgroup(100) == 100
    assert d["workgroups_for_request"] == 1 and d["lane_utilization"] == 1.0
    plan = planner.plan("topk", 1, 4096, 1, backend="cpu")
    assert d["preferred_tile"] == plan.tile and d["preferred_compaction_tile"] == plan.compaction_tile
    assert d["column_tiles"] == -(-4096 // plan.tile)
    assert d["elements_per_thread"] == -(-plan.tile // 100)
    assert d["dispatch"] == {"workgroups": [d["column_tiles"], 1, 1], "workgroup_size": 100,
                             "threads": d["column_tiles"] * 100}


def test_workgroup_alignment_and_occupancy_heuristic():
    # wgpu is planned for from its fixed capability table, present or not: the plan is the same.
    d = st.describe_device("wgpu", workgroup=300, cols=4096)
    assert d["available"] is st.wgpu.is_available() and d["caps_source"] == "table"
    assert d.get("reason") == (None if st.wgpu.is_available() else st.wgpu.unavailable_reason())
    assert d["caps"]["max_workgroup"] == 256 and d["aligned_workgroup"] == 256
    assert d["workgroups_for_request"] == 2 and d["lane_utilization"] == pytest.approx(300 / 512)
    # occupancy (labelled heuristic): (0.6 * 256/256 + 0.4 * (1 - min(44/256, 0.6))) * min(256/32/4, 1.25)
    assert d["occupancy_score"] == pytest.approx(min((0.6 + 0.4 * (1 - 44 / 256)) * 1.25, 1.25))
    small = st.describe_device("wgpu", workgroup=40)
    assert small["aligned_workgroup"] == 64 and small["subgroups_per_workgroup"] == 2
    assert "preferred_tile" not in small
    narrow = st.describe_device("wgpu", workgroup=100, lane_width=32, max_workgroup=32)
    assert narrow["aligned_workgroup"] == 32 and narrow["caps"]["max_workgroup"] == 32


def test_describe_device_rejects_bad_arguments():
    with pytest.raises(st.SpiralValueError, match="describe_device: workgroup must be a positive integer, got 0"):
        st.describe_device("cpu", workgroup=0)
    with pytest.raises(st.SpiralValueError, match="describe_device: cols must be a positive integer, got -3"):
        st.describe_device("cpu", cols=-3)
    with pytest.raises(st.SpiralValueError, match="describe_device: lane_width=64 exceeds max_workgroup=32"):
        st.describe_device("wgpu", lane_width=64, max_workgroup=32)
    with pytest.raises(st.SpiralValueError, match="unknown backend 'tpu'"):
        st.describe_device("tpu")
    assert "aligned_workgroup" not in st.describe_device("cpu")  # plain reports stay plain


def test_cuda_is_never_invented():
    d = st.describe_device("cuda", workgroup=256, cols=1024)
    if HAVE_CUDA:
        assert d["available"] is True and d["caps_source"] == "device"
    else:
        assert d["available"] is False and d["reason"] == st.cuda.unavailable_reason() and d["reason"]
        assert d["caps_source"] == "table" and d["caps"]["max_workgroup"] == 1024
        assert "device_name" not in d
    state = st.runtime.runtime_state("cuda")
    assert state["runtime_ready"] is HAVE_CUDA
    assert state["runtime_status"] == ("ready" if HAVE_CUDA else
                                       ("initialization_failed" if st.cuda.is_built() else "feature_disabled"))


def test_describe_runtime_devices_report():
    rep = st.describe_runtime_devices(["cpu", "cuda", "hip", "tpu"], required_ready_backends=["cpu", "hip"],
                                      workgroup=64)
    assert rep["backends"] == ["cpu", "cuda", "hip", "tpu"]
    assert rep["ready_backends"] == (["cpu", "cuda"] if HAVE_CUDA else ["cpu"])
    assert rep["not_ready_backends"] == (["hip"] if HAVE_CUDA else ["cuda", "hip"])
    assert rep["error_backends"] == ["tpu"] and "unknown backend 'tpu'" in rep["errors"]["tpu"]
    assert rep["status_by_backend"]["cpu"] == "cpu" and rep["status_by_backend"]["hip"] == "feature_disabled"
    assert rep["status_by_backend"]["tpu"] == "error"
    assert rep["reports"]["cpu"]["aligned_workgroup"] == 64  # describe_device arguments are passed on
    assert rep["missing_ready_backends"] == ["hip"] and rep["runtime_readiness"] == "not_ready"
    w = st.describe_runtime_devices(["wgpu"])
    assert w["ready_backends"] == (["wgpu"] if st.wgpu.is_available() else [])
    assert w["status_by_backend"]["wgpu"] == st.runtime.runtime_state("wgpu")["runtime_status"]
    assert rep["all_ready"] is False and rep["has_errors"] is True
    assert st.describe_runtime_devices(["cpu"])["runtime_readiness"] == "ready"
    with pytest.raises(st.SpiralValueError, match="unknown backend 'tpu'"):
        st.describe_runtime_devices(["cpu", "tpu"], continue_on_error=False)


def test_observe_runtime_device_probe_requested_vs_effective():
    p = st.observe_runtime_device_probe("cpu", requested_workgroup=63, cols=1024, max_workgroup=64)
    assert p["requested_runtime"] == p["effective_runtime"] and p["effective_backend"] == "cpu"
    assert p["fallback_reason"] is None and p["launch"]["caps"]["max_workgroup"] == 64
    assert p["launch"]["aligned_workgroup"] == 63 and p["request"]["max_workgroup"] == 64
    w = st.observe_runtime_device_probe("hip")
    assert w["requested_runtime"]["runtime_status"] == "feature_disabled" and w["effective_backend"] == "cpu"
    assert w["fallback_reason"].startswith("hip is not ready: the hip backend is not compiled")
    assert w["device"]["backend"] == "cpu" and "launch" not in w
    with pytest.raises(st.SpiralValueError, match="max_workgroup' must be a positive integer"):
        st.observe_runtime_device_probe("cpu", max_workgroup=0)
    with pytest.raises(TypeError):
        st.observe_runtime_device_probe("cpu", bogus=1)


def test_evaluate_runtime_device_route():
    devices = st.describe_runtime_devices(["hip", "cpu"])
    r = st.evaluate_runtime_device_route(devices)
    assert r["selected_backend"] == "cpu" and r["route"] == "fallback" and r["device"] == "cpu"
    assert r["skipped"][0]["backend"] == "hip" and "not compiled" in r["skipped"][0]["reason"]
    assert r["execution_allowed"] and r["status"] == "ready" and r["blockers"] == []
    strict = st.evaluate_runtime_device_route(devices, accelerator_fallback="forbid")
    assert strict["blockers"] == ["fallback_forbidden:hip"] and strict["status"] == "blocked"
    assert not strict["execution_allowed"]
    direct = st.evaluate_runtime_device_route(["cpu", "hip"], required_ready_backends=["hip"])
    assert direct["route"] == "direct" and direct["blockers"] == ["not_ready:hip"]
    none = st.evaluate_runtime_device_route(["mps", "hip"])
    assert none["selected_backend"] is None and none["route"] == "none" and none["blockers"] == ["no_ready_backend"]
    pref = st.evaluate_runtime_device_route(devices, prefer=["cpu"])
    assert pref["route"] == "direct" and pref["candidates"] == ["cpu"]
    with pytest.raises(st.SpiralValueError, match="accelerator_fallback must be 'allow' or 'forbid'"):
        st.evaluate_runtime_device_route(devices, accelerator_fallback="maybe")
    with pytest.raises(st.SpiralValueError, match="has no 'backends' entry"):
        st.evaluate_runtime_device_route({"reports": {}})


def test_init_backend():
    assert st.init_backend("cpu") is True and st.init_backend("faer") is True and st.init_backend("auto") is True
    assert st.init_backend("cuda") is HAVE_CUDA
    assert st.init_backend("wgpu") is st.wgpu.is_available()
    assert st.init_backend("mps") is False and st.init_backend("hip") is False
    with pytest.raises(st.SpiralValueError, match="init_backend: unknown backend 'quantum'"):
        st.init_backend("quantum")


def test_init_backend_cuda_creates_the_context_when_a_gpu_answers(monkeypatch):
    # Simulated GPU: checks the wiring (current device selected and synchronised), not the hardware.
    calls = []
    core = st._core
    monkeypatch.setattr(core, "_cuda_is_available", lambda: True)
    monkeypatch.setattr(core, "_cuda_current_device", lambda: 1)
    monkeypatch.setattr(core, "_cuda_set_device", lambda d: calls.append(("set", d)))
    monkeypatch.setattr(core, "_cuda_synchronize", lambda d: calls.append(("sync", d)))
    assert st.init_backend("cuda") is True and calls == [("set", 1), ("sync", 1)]
    assert st.init_backend("auto") is True and len(calls) == 4
    assert st.runtime.runtime_state("auto")["backend"] == "cuda"
