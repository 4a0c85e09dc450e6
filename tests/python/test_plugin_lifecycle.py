"""spiraltorch.plugin: unload_all, unregister_safe, clear_services, strict load_path and reset."""

from __future__ import annotations

import sys

import pytest

import spiraltorch as st
from spiraltorch import plugin


@pytest.fixture(autouse=True)
def clean_registry():
    plugin.clear_listeners()
    plugin.reset()
    yield
    plugin.clear_listeners()
    plugin.reset()


class P:
    def __init__(self, pid, deps=(), fail_unload=False):
        self.metadata = {"id": pid, "version": "1", "dependencies": {d: "*" for d in deps}}
        self.unloaded = 0
        self.fail_unload = fail_unload
        self.auto_subscribe = False

    def on_unload(self):
        self.unloaded += 1
        if self.fail_unload:
            raise OSError("disk gone")


def _chain():
    base, mid, top, side = P("base"), P("mid", ["base"]), P("top", ["mid"]), P("side")
    for p in (base, mid, top, side):
        plugin.register_python_plugin(p)
    return base, mid, top, side


def test_unload_all_goes_dependents_first_without_shutdown_event():
    base, mid, top, side = _chain()
    events = plugin.listen("*")
    assert plugin.unload_all() == ["side", "top", "mid", "base"]
    assert plugin.list_plugins() == [] and all(p.unloaded == 1 for p in (base, mid, top, side))
    kinds = [(e["type"], e.get("plugin_id")) for e in events.drain()]
    assert kinds == [("PluginUnloaded", "side"), ("PluginUnloaded", "top"), ("PluginUnloaded", "mid"),
                     ("PluginUnloaded", "base")]
    assert plugin.unload_all() == []
    with pytest.raises(st.SpiralValueError, match="plugin.unload_all: no plugins are registered"):
        plugin.unload_all(strict=True)


def test_unload_all_removes_every_plugin_even_when_a_hook_fails():
    plugin.register_python_plugin(P("a", fail_unload=True))
    b = P("b")
    plugin.register_python_plugin(b)
    with pytest.raises(st.SpiralError, match=r"unloaded \['a', 'b'\].*'a' on_unload failed: OSError: disk gone"):
        plugin.unload_all()
    assert plugin.list_plugins() == [] and b.unloaded == 1


def test_unregister_safe_takes_transitive_dependents_along():
    base, mid, top, side = _chain()
    assert plugin.unregister_safe("mid") == ["top", "mid"]
    assert plugin.list_plugins() == ["base", "side"] and top.unloaded == mid.unloaded == 1 and base.unloaded == 0
    assert plugin.validate_dependencies()["ok"]
    assert plugin.unregister_safe("side") == ["side"]
    assert plugin.unregister_safe("ghost") == []
    with pytest.raises(ValueError, match=r"plugin 'ghost' is not registered \(registered: \['base'\]\)"):
        plugin.unregister_safe("ghost", strict=True)
    assert plugin.list_plugins() == ["base"]


def test_clear_services_by_prefix_and_strict():
    for name in ("db.main", "db.replica", "cache"):
        plugin.register_service(name, object())
    assert plugin.clear_services("db.") == ["db.main", "db.replica"]
    assert plugin.list_services() == ["cache"]
    with pytest.raises(ValueError, match=r"no service under prefix 'db\.' \(registered: \['cache'\]\)"):
        plugin.clear_services("db.", strict=True)
    assert plugin.list_services() == ["cache"]
    assert plugin.clear_services() == ["cache"] and plugin.list_services() == []
    with pytest.raises(TypeError, match="prefix must be a string"):
        plugin.clear_services(3)


def test_reset_reports_and_strict_refuses_an_empty_registry():
    with pytest.raises(st.SpiralValueError, match="plugin.reset: nothing to reset"):
        plugin.reset(strict=True)
    plugin.register_python_plugin(P("x"))
    plugin.register_service("svc", 1)
    plugin.set_config("k", "v")
    assert plugin.reset(strict=True) == {"plugins": ["x"], "services": ["svc"], "config": ["k"]}
    assert plugin.reset() == {"plugins": [], "services": [], "config": []}


GOOD = '''
class Base:
    metadata = {"id": "lp_base", "version": "1"}

class Dep:
    metadata = {"id": "lp_dep", "version": "1", "dependencies": {"lp_base": "*"}}

plugins = [Dep(), Base()]
'''

LOADS_THEN_FAILS = '''
class Bad:
    metadata = {"id": "lp_bad", "version": "1"}
    def on_load(self):
        raise RuntimeError("cannot start")

plugins = [Bad()]
'''


def test_load_path_strict_and_all_or_nothing(tmp_path):
    (tmp_path / "a_good.py").write_text(GOOD)
    (tmp_path / "b_helpers.py").write_text("HELPER = 1\n")
    with pytest.raises(ValueError, match=r"b_helpers.py' exposes no plugin \(strict=True\)"):
        plugin.load_path(str(tmp_path), strict=True)
    assert plugin.list_plugins() == []
    assert not [m for m in sys.modules if m.startswith("spiraltorch_path_plugin_a_good")]
    ids = plugin.load_path(str(tmp_path))
    assert ids == ["lp_base", "lp_dep"]
    meta = plugin.plugin_metadata("lp_dep")["metadata"]
    assert meta["spiraltorch.source"] == "path" and meta["spiraltorch.source_path"].endswith("a_good.py")
    assert plugin.explain("lp_base")["source"] == "path"
    plugin.reset()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert plugin.load_path(str(empty)) == []
    with pytest.raises(ValueError, match="no .py files under"):
        plugin.load_path(str(empty), strict=True)
    # A plugin whose on_load fails after others of the batch loaded: the batch is rolled back.
    (tmp_path / "c_bad.py").write_text(LOADS_THEN_FAILS)
    with pytest.raises(RuntimeError, match="cannot start"):
        plugin.load_path(str(tmp_path))
    assert plugin.list_plugins() == []
    (tmp_path / "c_bad.py").write_text(GOOD)  # the same ids twice in one batch
    with pytest.raises(ValueError, match="plugin id 'lp_dep' is defined twice"):
        plugin.load_path(str(tmp_path))
    assert plugin.list_plugins() == []


def test_cli_load_strict(tmp_path, capsys):
    from spiraltorch import plugin_cli

    (tmp_path / "helpers.py").write_text("X = 1\n")
    assert plugin_cli.main(["--load-path", str(tmp_path), "list", "--json"]) == 0
    capsys.readouterr()
    assert plugin_cli.main(["--load-strict", "--load-path", str(tmp_path), "list"]) == 2
    assert "exposes no plugin" in capsys.readouterr().err
