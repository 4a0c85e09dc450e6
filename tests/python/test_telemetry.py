"""spiraltorch.telemetry: Atlas frames, districts, routes, perspectives and beacons."""

from __future__ import annotations

import math
import textwrap

import pytest

from conftest import run_python
from spiraltorch import telemetry as tm


def test_seed_atlas_snippet_prints_the_expected_guidance():
    code = textwrap.dedent("""
        import spiraltorch as st

        route = st.telemetry.AtlasRoute()
        route.push_bounded(
            st.telemetry.AtlasFrame.from_metrics({"psi.total": 1.0}, timestamp=0.0),
            bound=32,
        )
        route.push_bounded(
            st.telemetry.AtlasFrame.from_metrics({"psi.total": 1.5}, timestamp=1.0),
            bound=32,
        )
        print("summary:", route.summary()["frames"], "frames")
        print("psi perspective:", route.perspective_for("Concourse", focus_prefixes=["psi."])["guidance"])
    """)
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "summary: 2 frames",
        "psi perspective: Concourse district is rising with stable stability (momentum +0.250, volatility 0.250); "
        "focus on psi.total (+0.500).",
    ]


@pytest.mark.parametrize("name,root,district", [
    ("psi.total", "psi", "Concourse"), ("Trainer/loss", "trainer", "Concourse"), ("tensor:add", "tensor", "Substrate"),
    ("__py-x", "py", "Surface"), ("hypergrad.l2", "hypergrad", "Unknown"), ("", "", "Unknown"),
])
def test_districts_by_root_token(name, root, district):
    assert tm.metric_root_token(name) == root and tm.infer_district(name) == district


def test_fragment_and_frame_rules():
    frag = tm.AtlasFragment()
    assert frag.is_empty and frag.to_frame() is None
    frag.push_metric("psi.a", float("nan"))  # dropped
    assert frag.is_empty
    frag.push_metric("psi.a", 1.0)
    frag.push_metric("psi.a", 2.0)  # replaces
    frag.push_metric("tensor.b", 4.0)
    frag.push_metric("x", 6.0, district="Concourse")
    frag.push_note(" first ")
    frag.push_note("second")
    frag.push_note("first")  # moves to the end
    frag.push_note("   ")
    assert frag.to_frame() is None  # no timestamp yet
    frag.set_timestamp(5.0)
    frame = frag.to_frame()
    assert frame.metric_value("psi.a") == 2.0 and frame.metric_value("nope") is None
    assert frame.notes() == ["second", "first"]
    assert [m.name for m in frame.metrics_with_prefix("psi")] == ["psi.a"]
    ds = {d["name"]: d for d in frame.districts()}
    assert ds["Concourse"]["mean"] == 4.0 and ds["Concourse"]["span"] == 4.0  # psi.a = 2 and x = 6
    assert ds["Substrate"]["mean"] == 4.0 and ds["Substrate"]["span"] == 0.0
    with pytest.raises(ValueError, match="finite"):
        tm.AtlasFrame.from_metrics({"a": 1.0}, timestamp=float("inf"))


def test_route_bound_summary_and_beacons():
    route = tm.AtlasRoute()
    assert route.is_empty and route.latest_timestamp is None and route.perspective_for("Concourse") is None
    values = [1.0, 3.0, 2.0, 6.0]
    for t, v in enumerate(values):
        route.push_bounded(tm.AtlasFrame.from_metrics({"psi.x": v, "tensor.y": 10.0}, timestamp=float(t + 1)), bound=3)
    route.push_bounded(tm.AtlasFrame.from_metrics({"psi.x": 99.0}, timestamp=-1.0), bound=3)  # ignored
    assert len(route) == 3 and route.latest_timestamp == 4.0
    s = route.summary()
    assert s["frames"] == 3
    conc = next(d for d in s["districts"] if d["name"] == "Concourse")
    kept = values[1:]
    mean = sum(kept) / 3
    assert conc["coverage"] == 3 and conc["delta"] == kept[-1] - kept[0] and conc["mean"] == pytest.approx(mean)
    assert conc["std_dev"] == pytest.approx(math.sqrt(sum((v - mean) ** 2 for v in kept) / 3))
    p = route.perspective_for("Substrate")
    assert p["delta"] == 0.0 and "is steady" in p["guidance"] and "baseline flow" in p["guidance"]
    assert p["stability"] == 1.0
    b = route.beacons()
    assert [x["metric"] for x in b] == ["psi.x"] and b[0]["trend"] == "rising" and b[0]["intensity"] == 3.0
    with pytest.raises(TypeError, match="expected an AtlasFrame"):
        route.push_bounded({"psi.x": 1.0}, bound=3)
