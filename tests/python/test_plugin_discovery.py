"""spiraltorch.plugin: entry points, reload_path, watch_path (hot reload), unload helpers; TensorOp
events from the built-in ops through the C++ bus; `import spiraltorch` leaves the top-level name `rl` alone."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap
import time

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


# ---------------------------------------------------------------- entry points

EP_MODULE = '''
from spiraltorch import plugin

class Base:
    metadata = {"id": "ep_base", "version": "1.0"}
    def on_load(self):
        plugin.set_config("ep_base.loaded", "yes")

class Dep:
    def __init__(self):
        self.metadata = {"id": "ep_dep", "version": "2.0", "dependencies": {"ep_base": ">=1"}}
        self.events = []
        self.event_types = ["EpPing"]
    def on_event(self, event):
        self.events.append(event["payload"])

def make_pair():
    return [Dep(), Base()]   # discovered dependent first: the loader orders them
'''


def _fake_distribution(root, group):
    (root / "st_ep_demo.py").write_text(EP_MODULE)
    info = root / "st_ep_demo-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: st-ep-demo\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{group}]\npair = st_ep_demo:make_pair\nsolo = st_ep_demo:Base\n")


def test_load_entrypoints_from_an_installed_distribution(tmp_path, monkeypatch, capsys):
    group = "spiraltorch.test_plugins"
    _fake_distribution(tmp_path, group)
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    try:
        # "pair" gives Dep + Base, "solo" another Base: the same id twice is refused before loading.
        with pytest.raises(ValueError, match="plugin id 'ep_base' is defined twice"):
            plugin.load_entrypoints(group=group)
        assert plugin.list_plugins() == []
        (tmp_path / "st_ep_demo-1.0.dist-info" / "entry_points.txt").write_text(
            f"[{group}]\npair = st_ep_demo:make_pair\n")
        importlib.invalidate_caches()
        ids = plugin.load_entrypoints(group=group)
        assert ids == ["ep_base", "ep_dep"]  # the dependency first
        meta = plugin.plugin_metadata("ep_dep")["metadata"]
        assert meta == {"spiraltorch.source": "entrypoint", "spiraltorch.entrypoint_group": group,
                        "spiraltorch.entrypoint_name": "pair", "spiraltorch.entrypoint_value": "st_ep_demo:make_pair"}
        assert plugin.get_config("ep_base.loaded") == "yes" and plugin.explain("ep_dep")["source"] == "entrypoint"
        plugin.publish("EpPing", 7)
        assert plugin.get_service("missing") is None
        with pytest.raises(ValueError, match="already registered"):
            plugin.load_entrypoints(group=group)
        assert plugin.load_entrypoints(group=group, replace=True) == ["ep_base", "ep_dep"]
        assert plugin.load_entrypoints(group="spiraltorch.nobody_uses_this") == []
        assert plugin.unload_entrypoints(group=group) == ["ep_dep", "ep_base"]
        with pytest.raises(ValueError, match="no plugins loaded from group"):
            plugin.unload_entrypoints(group=group, strict=True)
        from spiraltorch import plugin_cli

        assert plugin_cli.main(["--load-entrypoints", group, "list", "--json"]) == 0
        assert plugin.list_plugins() == ["ep_base", "ep_dep"]
    finally:
        sys.modules.pop("st_ep_demo", None)


# ---------------------------------------------------------------- reload and watch

def _plugin_file(version, extra_id=None):
    extra = f'\nclass Extra:\n    metadata = {{"id": "{extra_id}", "version": "1"}}\n' if extra_id else ""
    listing = "[Hot()" + (", Extra()" if extra_id else "") + "]"
    return textwrap.dedent(f'''
        from spiraltorch import plugin

        class Hot:
            metadata = {{"id": "hot", "version": "{version}"}}
            event_types = ["HotPing"]
            def on_load(self):
                plugin.register_service("hot", self)
                self.seen = []
            def on_event(self, event):
                self.seen.append(event["payload"])
            def on_unload(self):
                plugin.set_config("hot.unloaded", "{version}")
        ''') + extra + f"\nplugins = {listing}\n"


def test_reload_path_replaces_plugins_and_drops_stale_ones(tmp_path):
    f = tmp_path / "hot.py"
    f.write_text(_plugin_file("1", extra_id="hot_extra"))
    assert plugin.load_path(str(f)) == ["hot", "hot_extra"]
    old = plugin.get_service("hot")
    f.write_text(_plugin_file("2"))  # same second, maybe same size class: read from the text, not a cache
    assert plugin.reload_path(str(f)) == ["hot"]
    assert plugin.get_config("hot.unloaded") == "1"  # the old instance's on_unload ran
    assert plugin.plugin_metadata("hot")["version"] == "2" and plugin.list_plugins() == ["hot"]
    new = plugin.get_service("hot")
    assert new is not old
    plugin.publish("HotPing", "x")
    assert new.seen == ["x"] and old.seen == []  # only the new instance listens
    assert plugin.unload_path(str(tmp_path)) == ["hot"]
    with pytest.raises(ValueError, match="no plugins were loaded from"):
        plugin.unload_path(str(tmp_path), strict=True)


def test_reload_refuses_when_an_outside_plugin_depends_on_a_replaced_one(tmp_path):
    f = tmp_path / "hot.py"
    f.write_text(_plugin_file("1"))
    plugin.load_path(str(f))

    class Needs:
        metadata = {"id": "needs_hot", "version": "1", "dependencies": {"hot": "*"}}

    plugin.register_python_plugin(Needs())
    with pytest.raises(ValueError, match=r"\['needs_hot'\] depend on them"):
        plugin.reload_path(str(f))
    assert plugin.list_plugins() == ["hot", "needs_hot"]  # nothing changed


def _wait_for(cond, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.01)
    return False


def test_watch_path_hot_reloads_a_rewritten_file_and_stops(tmp_path):
    f = tmp_path / "hot.py"
    f.write_text(_plugin_file("1"))
    errors = []
    with plugin.watch_path(str(tmp_path), poll_interval=0.01, on_error=lambda e, p: errors.append((e, p))) as w:
        assert isinstance(w, plugin.PluginPathWatcher) and w.wait_scanned(5) and w.is_running()
        assert _wait_for(lambda: plugin.list_plugins() == ["hot"])
        tmp = tmp_path / "hot.py.tmp"  # a dot-less temp name is not a .py file: never loaded
        tmp.write_text(_plugin_file("22"))
        os.replace(tmp, f)
        assert _wait_for(lambda: (plugin.plugin_metadata("hot") or {}).get("version") == "22")
        assert plugin.get_config("hot.unloaded") == "1"
        # A broken rewrite is reported, the loaded version stays.
        f.write_text("this is not python(\n")
        assert _wait_for(lambda: errors)
        assert isinstance(errors[0][0], SyntaxError) and errors[0][1] == str(f)
        assert plugin.plugin_metadata("hot")["version"] == "22"
        f.unlink()  # a removed file's plugins go
        assert _wait_for(lambda: plugin.list_plugins() == [])
        assert "running=True" in repr(w)
    assert not w.is_running() and w.stop() is True  # joined; stopping twice is fine
    assert w.reloads >= 2


def test_watch_path_argument_checks(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        plugin.watch_path(str(tmp_path / "nope"))
    with pytest.raises(ValueError, match="poll_interval must be positive"):
        plugin.watch_path(str(tmp_path), poll_interval=0)


def test_unload_all_after_discovery(tmp_path):
    (tmp_path / "hot.py").write_text(_plugin_file("1", extra_id="hot_extra"))
    plugin.load_path(str(tmp_path))
    assert plugin.unload_all() == ["hot", "hot_extra"] and plugin.list_plugins() == []


# ---------------------------------------------------------------- TensorOp from built-in ops

def test_builtin_ops_publish_tensor_op_only_when_listened():
    assert not plugin.has_listeners("TensorOp") and not st._core._events_tensor_op_listened()
    a, b = st.ones(2, 3), st.ones(3, 4)
    with plugin.listen("TensorOp") as q:
        assert st._core._events_tensor_op_listened()
        c = a + a
        d = a @ b
        st.softmax(d, 1)
        events = q.drain()
    assert not st._core._events_tensor_op_listened()
    names = [e["op_name"] for e in events]
    assert names[:3] == ["add", "matmul", "softmax"], names
    assert events[1]["input_shape"] == [2, 3] and events[1]["output_shape"] == [2, 4]
    assert set(events[0]) == {"ts", "type", "op_name", "input_shape", "output_shape"}
    _ = c * 2  # nobody listens: nothing is collected anywhere
    assert q.poll() is None


def test_custom_op_is_one_event_and_a_listener_may_raise(capsys):
    st.ops.register("twice", lambda xs: xs[0] * 2 + 0, replace=True)
    try:
        seen = []

        def bad(event):
            raise KeyError("nope")

        plugin.subscribe("TensorOp", bad)
        plugin.subscribe("TensorOp", seen.append)
        st.ops.execute("twice", st.ones(3))
        assert [e["op_name"] for e in seen] == ["twice"]  # its inner mul and add stay silent
        assert "KeyError" in capsys.readouterr().err
    finally:
        st.ops.unregister("twice")


# ---------------------------------------------------------------- no top-level `rl` alias

def _python(code, extra_path=None):
    paths = [extra_path] if extra_path else []
    paths.append(os.path.dirname(os.path.dirname(os.path.abspath(st.__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                          timeout=120, cwd=os.path.dirname(os.path.abspath(__file__)))


def test_import_spiraltorch_leaves_the_top_level_name_rl_alone(tmp_path):
    # The seed's `import rl` alias needed an import hook on sys.meta_path; the one spelling is
    # `from spiraltorch import rl` (tests/python/test_lazy_import.py checks that no hook is installed).
    r = _python("""
        import sys
        import spiraltorch as st
        assert "rl" not in sys.modules
        try:
            import rl
        except ModuleNotFoundError:
            pass
        else:
            raise AssertionError(f"import rl found {rl!r}")
        from spiraltorch import rl as st_rl
        print("ok", st_rl.stAgent.__name__)
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["ok", "stAgent"]
    (tmp_path / "rl.py").write_text("WHO = 'theirs'\n")
    r = _python("""
        import spiraltorch as st
        import rl
        assert rl is not st.rl
        print(rl.WHO)
    """, extra_path=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "theirs"
