"""JSONL traces: written by AmegagradSession and ModuleTrainer in C++, loaded, summarised, compared,
converted to AtlasRoutes and plotted (with matplotlib, or a clear error without it)."""

from __future__ import annotations

import json
import math
import sys

import pytest

import spiraltorch as st
from spiraltorch import nn, trainer_trace, zspace_atlas, zspace_trace
from spiraltorch.zspace_trace import Trace, TraceEvent, TraceWriter


def mse(p, t):
    return ((p - t) ** 2).mean()


def session_trace(path, steps=5, lr=0.2):
    st.manual_seed(0)
    x = st.randn(16, 3)
    y = x @ st.tensor([[0.3], [-0.2], [0.1]])
    session = st.AmegagradSession(nn.Linear(3, 1), mse, hyper_learning_rate=lr, real_learning_rate=0.1,
                                  trace_path=path)
    for _ in range(steps):
        session.step(x, y)
    return session


def trainer_run(path, lr, epochs=3):
    st.manual_seed(1)
    model = nn.Linear(4, 2)
    trainer = nn.ModuleTrainer(fallback_learning_rate=lr)
    trainer.set_trace(path)
    assert trainer.trace_path == str(path)
    x, y = st.randn(8, 4), st.randn(8, 2) * 0.3
    schedule = trainer.roundtable(8, 2)
    for _ in range(epochs):
        trainer.train_epoch(model, mse, [(x, y), (x, y)], schedule)
    trainer.evaluate_epoch(model, mse, [(x, y)])
    trainer.clear_trace()
    assert trainer.trace_path is None and trainer.trace_errors == 0
    return trainer


def test_session_trace_is_written_per_step_and_summarised(tmp_path):
    path = tmp_path / "s.jsonl"
    session = session_trace(path, steps=6)
    assert session.trace_path == str(path) and session.trace_errors == 0
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [d["event"] for d in lines] == ["run_start"] + ["step"] * 6
    assert all(d["schema"] == zspace_trace.SCHEMA and d["version"] == zspace_trace.VERSION == 1 for d in lines)
    trace = zspace_trace.load_trace(path)
    assert len(trace) == 7 and trace.sources() == ["AmegagradSession"]
    assert trace.config()["hyper_learning_rate"] == 0.2
    summary = trace.summary()
    assert summary["steps"] == 6 and summary["events"] == {"run_start": 1, "step": 6}
    loss = summary["metrics"]["session.loss"]
    assert loss["count"] == 6 and loss["last"] < loss["first"] and loss["delta"] < 0
    assert "zspace.loss" in trace.metric_names()
    assert [s for s, _ in trace.series("session.loss")] == [1, 2, 3, 4, 5, 6]
    assert len(trace.of("step")) == 6 and "Trace(" in repr(trace)
    assert zspace_trace.summarize(path)["steps"] == 6


def test_compare_reports_metric_deltas_and_config_changes(tmp_path):
    session_trace(tmp_path / "a.jsonl", steps=4, lr=0.05)
    session_trace(tmp_path / "b.jsonl", steps=4, lr=0.3)
    a, b = zspace_trace.load_trace(tmp_path / "a.jsonl"), zspace_trace.load_trace(tmp_path / "b.jsonl")
    diff = zspace_trace.compare(a, b)
    m = diff["metrics"]["session.loss"]
    assert m["delta"] == pytest.approx(m["b"] - m["a"]) and m["delta"] < 0  # the faster rate got further
    assert m["relative"] == pytest.approx(m["delta"] / abs(m["a"]))
    assert diff["steps"] == (4, 4) and diff["only_in_a"] == diff["only_in_b"] == []
    assert diff["config_changes"] == {"hyper_learning_rate": (0.05, 0.3)}
    same = zspace_trace.compare(a, a)
    assert all(v["delta"] == 0 for v in same["metrics"].values())


def test_trainer_trace_events_summary_and_comparison(tmp_path):
    trainer_run(tmp_path / "slow.jsonl", lr=0.01)
    trainer_run(tmp_path / "fast.jsonl", lr=0.2)
    slow = trainer_trace.load_trainer_trace(tmp_path / "slow.jsonl")
    assert [e.event for e in slow.events].count("step") == 6
    s = st.summarize_trainer_trace_events(slow.events)
    assert (s["steps"], s["epochs"], s["evals"], s["skipped"]) == (6, 3, 1, 0)
    assert len(s["epoch_losses"]) == 3 and s["loss_delta"] < 0 and s["best_epoch"] == 3
    assert s["loss"]["min"] <= s["loss"]["mean"] and math.isfinite(s["eval_losses"][0])
    # Dicts straight from the JSON lines work too.
    raw = [json.loads(line) for line in (tmp_path / "slow.jsonl").read_text().splitlines()]
    assert trainer_trace.summarize_trainer_trace_events(raw)["epoch_losses"] == s["epoch_losses"]
    diff = trainer_trace.compare(tmp_path / "slow.jsonl", tmp_path / "fast.jsonl")
    assert diff["average_loss_delta"] < 0
    assert diff["epoch"]["metrics"]["trainer.average_loss"]["delta"] == diff["average_loss_delta"]
    assert "trainer.loss" in diff["step"]["metrics"]
    session_trace(tmp_path / "s.jsonl", steps=1)
    with pytest.raises(st.SpiralValueError, match="no trainer events"):
        trainer_trace.load_trainer_trace(tmp_path / "s.jsonl")


def test_atlas_adapters_turn_events_into_frames(tmp_path):
    session_trace(tmp_path / "s.jsonl", steps=5)
    trace = zspace_trace.load_trace(tmp_path / "s.jsonl")
    route = zspace_atlas.trace_to_atlas_route(trace, bound=3)
    assert isinstance(route, st.telemetry.AtlasRoute) and len(route) == 3
    assert [f.timestamp for f in route.frames] == [e.timestamp for e in trace.of("step")][-3:]
    names = {d["name"] for d in route.summary()["districts"]}
    assert {"Surface", "Substrate"} <= names  # session.* and zspace./geometry./realgrad.*
    assert trace.to_atlas_route().summary()["frames"] == 5
    assert zspace_atlas.trace_atlas_summary(tmp_path / "s.jsonl")["frames"] == 5
    frame = zspace_atlas.event_to_atlas_frame(trace.of("step")[0])
    assert frame.metric_value("session.loss") == trace.of("step")[0].metrics["session.loss"]
    assert zspace_atlas.event_to_atlas_frame({"schema": "spiraltorch.trace", "version": 1, "event": "x"}) is None
    trainer_run(tmp_path / "t.jsonl", lr=0.1, epochs=2)
    by_epoch = zspace_atlas.trainer_events_to_atlas_route(tmp_path / "t.jsonl")
    assert len(by_epoch) == 2 and by_epoch.frames[-1].metric_value("trainer.average_loss") is not None
    assert len(zspace_atlas.trainer_events_to_atlas_route(tmp_path / "t.jsonl", per="all")) == 4 + 2 + 1
    with pytest.raises(st.SpiralValueError, match="per must be"):
        zspace_atlas.trainer_events_to_atlas_route(trace, per="batch")


def test_writer_reader_round_trip_and_refused_lines(tmp_path):
    path = tmp_path / "own.jsonl"
    w = TraceWriter(path, "Mine")
    w.write("run_start", config={"lr": 0.1}.items(), notes=["hello"])
    w.write("step", step=1, metrics={"mine.loss": 2.0, "mine.bad": float("nan")}.items(), timestamp=5.0)
    assert (w.events_written, w.source, w.path) == (2, "Mine", str(path))
    del w
    trace = zspace_trace.load_trace(path)
    step = trace.of("step")[0]
    assert step.timestamp == 5.0 and step.metrics["mine.loss"] == 2.0 and math.isnan(step.metrics["mine.bad"])
    again = TraceEvent.from_dict(step.to_dict())
    assert again.to_dict() == step.to_dict() and again.to_dict()["metrics"]["mine.bad"] is None
    assert Trace([step.to_dict()]).events[0].metrics["mine.loss"] == 2.0
    good = json.dumps(step.to_dict())
    with pytest.raises(st.SpiralValueError, match=r"<lines>:2: not JSON"):
        zspace_trace.load_trace([good, "{oops"])
    with pytest.raises(st.SpiralValueError, match=r":1: version 2 is newer"):
        zspace_trace.load_trace([good.replace('"version": 1', '"version": 2')])
    with pytest.raises(st.SpiralValueError, match="schema is 'other'"):
        zspace_trace.load_trace(['{"schema": "other", "version": 1, "event": "step"}'])
    with pytest.raises(st.SpiralValueError, match=r"metrics\['x'\] must be a number"):
        zspace_trace.load_trace(['{"schema": "spiraltorch.trace", "version": 1, "event": "s", "metrics": {"x": "1"}}'])
    assert len(zspace_trace.load_trace([good, "", good])) == 2


def test_plots_without_matplotlib_name_the_package(tmp_path, monkeypatch):
    session_trace(tmp_path / "s.jsonl", steps=2)
    trace = zspace_trace.load_trace(tmp_path / "s.jsonl")
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` fail
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match="pip install matplotlib"):
        zspace_trace.plot_trace(trace, tmp_path / "x.png")
    with pytest.raises(ImportError, match="pip install matplotlib"):
        trainer_trace.plot_trainer_trace(
            Trace([{"schema": "spiraltorch.trace", "version": 1, "event": "step", "step": 1,
                    "metrics": {"trainer.loss": 1.0}}]), tmp_path / "y.png")
    with pytest.raises(ImportError, match="pip install matplotlib"):
        zspace_atlas.plot_atlas_route(trace.to_atlas_route(), tmp_path / "z.png")
    assert not list(tmp_path.glob("*.png"))


def test_plots_with_matplotlib_write_pngs(tmp_path):
    pytest.importorskip("matplotlib")
    session_trace(tmp_path / "s.jsonl", steps=4)
    trainer_run(tmp_path / "t.jsonl", lr=0.1, epochs=2)
    trace = zspace_trace.load_trace(tmp_path / "s.jsonl")
    outputs = [trace.plot(tmp_path / "a.png", metrics=["session.loss", "zspace.loss"]),
               trainer_trace.plot_trainer_trace(tmp_path / "t.jsonl", tmp_path / "b.png"),
               zspace_atlas.plot_atlas_route(trace.to_atlas_route(), tmp_path / "c.png")]
    for out in outputs:
        data = open(out, "rb").read()
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 1000
    with pytest.raises(st.SpiralValueError, match="nothing to plot"):
        trace.plot(tmp_path / "d.png", metrics=["no.such"])


def test_bad_paths_fail_at_once_and_refused_sessions_leave_no_file(tmp_path):
    with pytest.raises(st.SpiralError, match="cannot open"):
        nn.ModuleTrainer().set_trace(tmp_path / "missing" / "t.jsonl")
    with pytest.raises(st.SpiralError):
        st.AmegagradSession((2, 2), telemetry_bound=-1, trace_path=tmp_path / "s.jsonl")
    assert not (tmp_path / "s.jsonl").exists()
