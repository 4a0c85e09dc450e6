"""spiraltorch.plugin: event bus, queues, JSONL recording, plugin registry, config and services,
and the events the library itself publishes (custom ops, ModuleTrainer epochs)."""

from __future__ import annotations

import json

import pytest

import spiraltorch as st
from spiraltorch import plugin


@pytest.fixture(autouse=True)
def clean_bus():
    plugin.clear_listeners()
    plugin.reset()
    yield
    plugin.clear_listeners()
    plugin.reset()


def test_dispatch_order_ids_and_report():
    seen = []
    a = plugin.subscribe("*", lambda e: seen.append(("wild", e["type"])))
    b = plugin.subscribe("Ping", lambda e: seen.append(("ping", e["payload"])))
    assert b == a + 1
    rep = plugin.publish_report("Ping", {"ok": True})
    assert rep == {"ok": True, "event_type": "Ping", "matched": 2, "delivered": 2, "panicked": 0, "failures": []}
    assert seen == [("ping", {"ok": True}), ("wild", "Ping")]  # specific listeners first
    assert plugin.has_listeners("Other") and plugin.unsubscribe("Ping", b) and not plugin.unsubscribe("Ping", b)
    plugin.publish("Other", "text payload")
    assert seen[-1] == ("wild", "Other")


def test_failing_listener_is_reported_and_others_still_run(capsys):
    got = []

    def bad(e):
        raise RuntimeError("boom")

    sid = plugin.subscribe("Ping", bad)
    plugin.subscribe("Ping", got.append)
    rep = plugin.publish_report("Ping")
    assert not rep["ok"] and rep["delivered"] == 1 and rep["failures"][0]["subscription_id"] == sid
    assert "RuntimeError: boom" in rep["failures"][0]["message"] and "boom" in capsys.readouterr().err
    assert got[0]["type"] == "Ping" and got[0]["payload"] is None and isinstance(got[0]["ts"], float)


def test_clear_listeners_and_argument_checks():
    plugin.subscribe("A", print)
    plugin.subscribe("B", print)
    plugin.subscribe("B", print)
    assert plugin.clear_listeners("A") == 1 and plugin.clear_listeners() == 2
    with pytest.raises(ValueError, match="no listeners"):
        plugin.clear_listeners("A", strict=True)
    with pytest.raises(TypeError, match="callback must be callable"):
        plugin.subscribe("A", 3)
    with pytest.raises(ValueError, match="built-in event type"):
        plugin.publish("TensorOp")
    with pytest.raises(TypeError, match="not JSON-serialisable"):
        plugin.publish("A", {"x": object()})
    with pytest.raises(ValueError, match="no event types"):
        plugin.subscribe_many([], print)
    subs = plugin.subscribe_many(["A", "B"], print)
    assert plugin.unsubscribe_many(subs) == 2
    assert set(plugin.event_types()) >= {"TensorOp", "EpochStart", "EpochEnd", "PluginLoaded", "*"}


def test_queue_is_bounded_and_drops_the_oldest():
    with plugin.listen("Tick", maxlen=3) as q:
        for i in range(5):
            plugin.publish("Tick", i)
        assert len(q) == 3
        assert [e["payload"] for e in q.drain(2)] == [2, 3]
        assert [e["payload"] for e in q] == [4]
        assert q.poll() is None
    assert q.close() is False and not plugin.has_listeners("Tick")


def _train_two_epochs():
    trainer = st.nn.ModuleTrainer(backend="cpu", curvature=-1.0, hyper_learning_rate=1e-2,
                                  fallback_learning_rate=1e-2)
    schedule = trainer.roundtable(2, 1, st.nn.RoundtableConfig(top_k=1, mid_k=1, bottom_k=1, here_tolerance=1e-5))
    model = st.nn.Sequential()
    model.add(st.nn.Linear(2, 1, name="layer"))
    model.attach_hypergrad(curvature=-1.0, learning_rate=1e-2)
    x, y = st.Tensor.rand(2, 2, seed=3), st.Tensor.rand(2, 1, seed=4)
    return [trainer.train_epoch(model, st.nn.MeanSquaredError(), [(x, y)], schedule) for _ in range(2)]


def test_record_writes_library_events_as_json_lines(tmp_path):
    path = tmp_path / "events.jsonl"
    st.ops.register("half", lambda xs: xs[0] * 0.5, replace=True)
    with plugin.record(str(path), ["TensorOp", "EpochEnd", "EpochStart"]) as rec:
        st.ops.execute("half", st.ones(2, 3))
        stats = _train_two_epochs()
        assert "open" in repr(rec)
    assert rec.closed and not rec.close()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    # The custom op is one event (its inner mul stays silent); the training loop's built-in ops
    # announce themselves too, between the epoch events.
    assert lines[0]["type"] == "TensorOp" and lines[0]["op_name"] == "half"
    assert lines[0]["input_shape"] == [2, 3] == lines[0]["output_shape"]
    epochs = [e for e in lines if e["type"] != "TensorOp"]
    assert [e["type"] for e in epochs] == ["EpochStart", "EpochEnd", "EpochStart", "EpochEnd"]
    assert [e["epoch"] for e in epochs] == [1, 1, 2, 2]
    assert epochs[1]["loss"] == pytest.approx(stats[0].average_loss) and epochs[3]["loss"] == pytest.approx(
        stats[1].average_loss)
    inner = lines[lines.index(epochs[0]) + 1:lines.index(epochs[1])]
    assert inner and all(e["type"] == "TensorOp" and isinstance(e["op_name"], str) for e in inner)
    st.ops.unregister("half")
    with pytest.raises(ValueError, match="text mode"):
        plugin.record(str(path), mode="ab")


class DemoPlugin:
    def __init__(self, pid="demo", deps=None):
        self.metadata = {"id": pid, "version": "1.0", "name": "Demo", "capabilities": ["Telemetry",
                                                                                         "Custom:python-demo"],
                         "dependencies": deps or {}}
        self.events = []
        self.unloaded = False
        self.event_types = ["DemoPing"]

    def on_load(self):
        plugin.set_config(f"{self.metadata['id']}.mode", "on")
        plugin.register_service(f"{self.metadata['id']}.self", self)

    def on_event(self, event):
        self.events.append(event)

    def on_unload(self):
        self.unloaded = True


def test_plugin_lifecycle_capabilities_config_and_services():
    loaded = plugin.listen("PluginLoaded")
    demo = DemoPlugin()
    assert plugin.register_python_plugin(demo) == "demo"
    assert loaded.poll()["plugin_id"] == "demo"
    assert plugin.list_plugins() == ["demo"] and plugin.get_config("demo.mode") == "on"
    assert plugin.get_service("demo.self") is demo
    meta = plugin.plugin_metadata("demo")
    assert meta["capabilities"] == ["Telemetry", "Custom(python-demo)"] and meta["version"] == "1.0"
    assert plugin.find_by_capability("telemetry") == ["demo"] and plugin.find_by_capability("vision") == []
    plugin.publish("DemoPing", {"n": 1})
    plugin.publish("Unrelated")
    assert [e["type"] for e in demo.events] == ["DemoPing"] and demo.events[0]["payload"] == {"n": 1}
    with pytest.raises(RuntimeError, match="already registered"):
        plugin.register_python_plugin(DemoPlugin())
    assert plugin.unregister_plugin("demo") and demo.unloaded and not plugin.unregister_plugin("demo")
    plugin.publish("DemoPing")
    assert len(demo.events) == 1  # unsubscribed with the plugin


def test_dependencies_order_shutdown_and_reset():
    with pytest.raises(ValueError, match="depends on 'base', which is not registered"):
        plugin.register_python_plugin(DemoPlugin("top", {"base": ">=1"}))
    base, top = DemoPlugin("base"), DemoPlugin("top", {"base": ">=1"})
    plugin.register_python_plugin(base)
    plugin.register_python_plugin(top)
    with pytest.raises(ValueError, match="needed by top"):
        plugin.unregister_plugin("base")
    events = plugin.listen("*")
    assert plugin.shutdown() == ["top", "base"] and base.unloaded and top.unloaded
    kinds = [(e["type"], e.get("plugin_id")) for e in events.drain()]
    assert kinds == [("SystemShutdown", None), ("PluginUnloaded", "top"), ("PluginUnloaded", "base")]
    plugin.register_python_plugin(DemoPlugin("again"))
    out = plugin.reset()
    # shutdown() unloads plugins only; reset() also clears what they left in services and config.
    assert out == {"plugins": ["again"], "services": ["again.self", "base.self", "top.self"],
                   "config": ["again.mode", "base.mode", "top.mode"]}


def test_plugin_from_attributes_and_bad_metadata():
    class Attr:
        id = "attr"
        version = "0.1"
        capabilities = "backend:cuda"
        auto_subscribe = False

        def on_event(self, e):
            raise AssertionError("not subscribed")

    plugin.register_python_plugin(Attr())
    assert plugin.plugin_metadata("attr")["capabilities"] == ["Backend(cuda)"]
    plugin.publish("Anything")

    class NoVersion:
        id = "nov"

    with pytest.raises(ValueError, match="version is required"):
        plugin.register_python_plugin(NoVersion())

    class Spaced:
        id = " x "
        version = "1"

    with pytest.raises(ValueError, match="surrounding spaces"):
        plugin.register_python_plugin(Spaced())


def test_dependency_graph_validation_explain_and_dot():
    plugin.register_python_plugin(DemoPlugin("base"))
    plugin.register_python_plugin(DemoPlugin("mid", {"base": "*"}))
    plugin.register_python_plugin(DemoPlugin("top", {"mid": "*"}))
    assert plugin.dependency_graph() == {"base": [], "mid": ["base"], "top": ["mid"]}
    assert plugin.validate_dependencies() == {"ok": True, "missing": {}, "cycles": []}
    e = plugin.explain("base")
    assert e["registered"] and e["direct_dependents"] == ["mid"] and e["transitive_dependents"] == ["mid", "top"]
    assert plugin.explain("ghost")["registered"] is False
    dot = plugin.dependency_dot(rankdir="TB")
    assert dot.startswith('digraph SpiralTorchPluginDeps {\n  rankdir="TB";') and '"top" -> "mid";' in dot
    with pytest.raises(ValueError, match="rankdir"):
        plugin.dependency_dot(rankdir="XY")


PLUGIN_FILE = '''
class Base:
    metadata = {"id": "file_base", "version": "1"}

class Dependent:
    metadata = {"id": "file_dep", "version": "2", "dependencies": {"file_base": ">=1"}}

plugins = [Dependent(), Base()]  # listed dependent first: the loader orders them
'''


def test_load_path_and_the_cli(tmp_path, capsys):
    from spiraltorch import plugin_cli

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pl.py").write_text(PLUGIN_FILE)
    (tmp_path / "empty.py").write_text("x = 1\n")
    assert plugin.load_path(str(tmp_path)) == ["file_base", "file_dep"]
    plugin.reset()
    assert plugin.load_path(str(tmp_path), recursive=False) == []
    with pytest.raises(ValueError, match="does not exist"):
        plugin.load_path(str(tmp_path / "missing"))
    assert plugin_cli.main(["--load-path", str(tmp_path), "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == ["file_base", "file_dep"]
    plugin.reset()
    assert plugin_cli.main(["--load-path", str(tmp_path), "validate"]) == 0
    assert capsys.readouterr().out.splitlines() == ["ok", "missing: 0 plugin(s)", "cycles: 0"]
    plugin.reset()
    assert plugin_cli.main(["--load-path", str(tmp_path / "nope"), "list"]) == 2
    assert "does not exist" in capsys.readouterr().err
