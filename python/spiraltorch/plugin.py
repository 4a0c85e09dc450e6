"""Events and plugins: an in-process event bus, listener queues, JSONL recording, and a registry
of Python plugins with shared configuration and services.

Every listener receives one dict with ``"ts"`` (UNIX seconds at dispatch) and ``"type"``, plus
the event's fields: ``TensorOp`` (``op_name``, ``input_shape``, ``output_shape``; published by
``spiraltorch.ops.execute``), ``EpochStart`` (``epoch``) and ``EpochEnd`` (``epoch``, ``loss``;
published by ``nn.ModuleTrainer.train_epoch``), ``PluginLoaded``/``PluginUnloaded``
(``plugin_id``), ``SystemInit``/``SystemShutdown``, and custom types from ``publish`` (``event_type``
and ``payload``). Listeners run synchronously on the publishing thread, type-specific ones first
(in subscription order), then ``"*"`` (wildcard) ones; a listener that raises is reported on
stderr and counted in ``publish_report``, and dispatch goes on.
"""

from __future__ import annotations

import collections
import importlib.util
import json
import os
import sys
import threading
import time
import traceback
import weakref
from typing import Any, Callable, Iterable, Iterator

from . import _core

__all__ = [
    "PluginQueue", "PluginRecorder", "clear_config", "clear_services", "dependency_dot", "dependency_graph", "explain",
    "load_path", "unload_all", "unregister_safe",
    "validate_dependencies", "clear_listeners", "event_types", "find_by_capability",
    "get_config", "get_service", "has_listeners", "initialize_all", "list_config", "list_plugins", "list_services",
    "listen", "plugin_metadata", "publish", "publish_report", "record", "register_python_plugin",
    "register_service", "reset", "set_config", "shutdown", "subscribe", "subscribe_many", "unregister_plugin",
    "unregister_service", "unset_config", "unsubscribe", "unsubscribe_many",
]

_EVENT_TYPES = {
    "SystemInit": "plugin.initialize_all() was called",
    "SystemShutdown": "plugin.shutdown() is unloading every plugin",
    "PluginLoaded": "a plugin finished on_load; keys: plugin_id",
    "PluginUnloaded": "a plugin finished on_unload; keys: plugin_id",
    "TensorOp": "a custom operator ran (spiraltorch.ops.execute); keys: op_name, input_shape, output_shape",
    "EpochStart": "nn.ModuleTrainer.train_epoch started; keys: epoch (1-based)",
    "EpochEnd": "nn.ModuleTrainer.train_epoch finished; keys: epoch, loss (the epoch's average loss)",
    "*": "wildcard: every event",
}
_BUILTIN_KEYS = {"SystemInit": (), "SystemShutdown": (), "PluginLoaded": ("plugin_id",),
                 "PluginUnloaded": ("plugin_id",), "TensorOp": ("op_name", "input_shape", "output_shape"),
                 "EpochStart": ("epoch",), "EpochEnd": ("epoch", "loss")}

_lock = threading.RLock()
_listeners: dict[str, list[tuple[int, Callable[[dict], Any]]]] = {}
_next_id = 0


def event_types() -> dict[str, str]:
    """The built-in event types (and the wildcard) with what each carries."""
    return dict(_EVENT_TYPES)


def subscribe(event_type: str, callback: Callable[[dict], Any]) -> int:
    """Calls ``callback(event_dict)`` for every event of ``event_type`` ("*" for all); returns the
    subscription id (ids increase from 1 across all types)."""
    global _next_id
    if not callable(callback):
        raise TypeError(f"plugin.subscribe: callback must be callable, got {type(callback).__name__}")
    if not isinstance(event_type, str) or not event_type:
        raise ValueError(f"plugin.subscribe: event_type must be a non-empty string, got {event_type!r}")
    with _lock:
        _next_id += 1
        _listeners.setdefault(event_type, []).append((_next_id, callback))
        return _next_id


def unsubscribe(event_type: str, subscription_id: int) -> bool:
    """Removes one subscription; False when ``event_type`` has no such id."""
    with _lock:
        subs = _listeners.get(event_type, [])
        for i, (sid, _) in enumerate(subs):
            if sid == subscription_id:
                del subs[i]
                if not subs:
                    _listeners.pop(event_type, None)
                return True
    return False


def subscribe_many(event_types: str | Iterable[str], callback: Callable[[dict], Any]) -> list[tuple[str, int]]:
    """``subscribe`` for each type; returns ``[(event_type, id), ...]``."""
    types = [event_types] if isinstance(event_types, str) else list(event_types)
    if not types:
        raise ValueError("plugin.subscribe_many: no event types given")
    return [(t, subscribe(t, callback)) for t in types]


def unsubscribe_many(subscriptions: Iterable[tuple[str, int]]) -> int:
    """Removes each ``(event_type, id)``; returns how many existed."""
    return sum(1 for t, sid in subscriptions if unsubscribe(t, sid))


def has_listeners(event_type: str) -> bool:
    """True when an event of this type would reach a listener (specific or wildcard)."""
    with _lock:
        return bool(_listeners.get(event_type)) or bool(_listeners.get("*"))


def clear_listeners(event_type: str | None = None, *, strict: bool = False) -> int:
    """Removes every listener of ``event_type`` (all types when None); returns how many.
    ``strict`` raises ValueError when there was nothing to remove."""
    with _lock:
        if event_type is None:
            n = sum(len(v) for v in _listeners.values())
            _listeners.clear()
        else:
            n = len(_listeners.pop(event_type, []))
    if strict and n == 0:
        raise ValueError(f"plugin.clear_listeners: no listeners for {event_type or 'any event type'}")
    return n


def _event_dict(event_type: str, fields: dict[str, Any]) -> dict[str, Any]:
    return {"ts": time.time(), "type": event_type, **fields}


def _dispatch(event_type: str, fields: dict[str, Any]) -> dict[str, Any]:
    with _lock:  # snapshot, then call out without the lock
        specific = list(_listeners.get(event_type, [])) if event_type != "*" else []
        wildcard = list(_listeners.get("*", []))
    report = {"ok": True, "event_type": event_type, "matched": len(specific) + len(wildcard), "delivered": 0,
              "panicked": 0, "failures": []}
    for sid, cb in specific + wildcard:
        try:
            cb(_event_dict(event_type, fields))
            report["delivered"] += 1
        except Exception as exc:  # a broken listener must not stop the others
            print(f"spiraltorch.plugin: listener {sid} for '{event_type}' raised:", file=sys.stderr)
            traceback.print_exc()
            report["failures"].append({"subscription_id": sid, "message": f"{type(exc).__name__}: {exc}"})
            report["ok"] = False
    return report


def _emit(event_type: str, **fields: Any) -> None:
    """Publishes a built-in event (no-op without listeners, so hot paths stay cheap)."""
    if has_listeners(event_type):
        _dispatch(event_type, fields)


def publish_report(event_type: str, payload: Any = None) -> dict[str, Any]:
    """Publishes a custom event carrying ``payload`` (None, a string, or JSON-serialisable data)
    and reports ``ok, event_type, matched, delivered, panicked, failures``."""
    if not isinstance(event_type, str) or not event_type:
        raise ValueError(f"plugin.publish: event_type must be a non-empty string, got {event_type!r}")
    if event_type in _BUILTIN_KEYS:
        raise ValueError(f"plugin.publish: '{event_type}' is a built-in event type; publish a custom type")
    if payload is not None and not isinstance(payload, str):
        try:
            payload = json.loads(json.dumps(payload))
        except (TypeError, ValueError) as exc:
            raise TypeError(f"plugin.publish: payload is not JSON-serialisable: {exc}") from exc
    return _dispatch(event_type, {"event_type": event_type, "payload": payload})


def publish(event_type: str, payload: Any = None) -> None:
    """``publish_report`` without the report."""
    publish_report(event_type, payload)


# ---------------------------------------------------------------- queues and recording

class PluginQueue:
    """Events of one type collected into a bounded queue (the oldest are dropped when full)."""

    def __init__(self, event_type: str = "*", maxlen: int = 1024) -> None:
        self.event_type = event_type
        self.maxlen = max(1, int(maxlen))
        self._items: collections.deque[dict] = collections.deque(maxlen=self.maxlen)
        self._items_lock = threading.Lock()
        # The bus holds only a weak reference, so a queue nobody keeps is freed (and its
        # subscription dropped) instead of collecting events for the rest of the process.
        ref = weakref.ref(self)

        def push(event: dict, _ref: "weakref.ref[PluginQueue]" = ref) -> None:
            queue = _ref()
            if queue is not None:
                queue._push(event)

        self.subscription_id: int | None = subscribe(event_type, push)
        self._finalizer = weakref.finalize(self, unsubscribe, event_type, self.subscription_id)

    def _push(self, event: dict) -> None:
        with self._items_lock:
            self._items.append(event)

    def poll(self) -> dict | None:
        """The oldest queued event, or None."""
        with self._items_lock:
            return self._items.popleft() if self._items else None

    def drain(self, max_items: int | None = None) -> list[dict]:
        """Up to ``max_items`` (all when None) queued events, oldest first."""
        out = []
        with self._items_lock:
            while self._items and (max_items is None or len(out) < max_items):
                out.append(self._items.popleft())
        return out

    def close(self) -> bool:
        """Stops collecting; False when already closed."""
        if self.subscription_id is None:
            return False
        self._finalizer.detach()
        unsubscribe(self.event_type, self.subscription_id)
        self.subscription_id = None
        return True

    def __len__(self) -> int:
        with self._items_lock:
            return len(self._items)

    def __iter__(self) -> Iterator[dict]:
        return self

    def __next__(self) -> dict:
        item = self.poll()
        if item is None:
            raise StopIteration
        return item

    def __enter__(self) -> PluginQueue:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()



def listen(event_type: str = "*", *, maxlen: int = 1024) -> PluginQueue:
    """A ``PluginQueue`` collecting events of ``event_type``."""
    return PluginQueue(event_type, maxlen)


class PluginRecorder:
    """Writes each event of the chosen types as one JSON line (the listener dict) to a file."""

    def __init__(self, path: str, event_types: str | Iterable[str] = "*", *, mode: str = "a", flush: bool = True):
        if "b" in mode:
            raise ValueError("plugin.record: mode must be a text mode ('a' or 'w'), got " + repr(mode))
        types = [event_types] if isinstance(event_types, str) else list(event_types)
        if not types:
            raise ValueError("plugin.record: no event types given")
        self.path = str(path)
        self.event_types = list(types)
        self._flush = flush
        self._write_lock = threading.Lock()
        self._file = open(self.path, mode, encoding="utf-8")
        self._subs = subscribe_many(types, self._write)

    @property
    def closed(self) -> bool:
        return self._file.closed

    def _write(self, event: dict) -> None:
        line = json.dumps(event, ensure_ascii=True) + "\n"
        with self._write_lock:
            if self._file.closed:
                return
            self._file.write(line)
            if self._flush:
                self._file.flush()

    def close(self) -> bool:
        """Stops recording and closes the file; False when already closed."""
        if self._file.closed:
            return False
        unsubscribe_many(self._subs)
        with self._write_lock:
            self._file.close()
        return True

    def __enter__(self) -> PluginRecorder:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PluginRecorder(path={self.path!r}, events={self.event_types}, {'closed' if self.closed else 'open'})"


def record(path: str, event_types: str | Iterable[str] = "*", *, mode: str = "a", flush: bool = True) -> PluginRecorder:
    """Starts a ``PluginRecorder`` appending (``mode="a"``) or writing (``"w"``) JSON lines to ``path``."""
    return PluginRecorder(path, event_types, mode=mode, flush=flush)


# ---------------------------------------------------------------- config and services

_config: dict[str, str] = {}
_services: dict[str, Any] = {}


def set_config(key: str, value: str) -> None:
    """Sets a shared string setting."""
    if not isinstance(key, str) or not isinstance(value, str):
        raise TypeError("plugin.set_config: key and value must be strings")
    with _lock:
        _config[key] = value


def get_config(key: str) -> str | None:
    with _lock:
        return _config.get(key)


def unset_config(key: str) -> bool:
    with _lock:
        return _config.pop(key, None) is not None


def list_config(prefix: str | None = None) -> dict[str, str]:
    with _lock:
        return {k: v for k, v in _config.items() if prefix is None or k.startswith(prefix)}


def clear_config(prefix: str | None = None, *, strict: bool = False) -> list[str]:
    """Removes the settings under ``prefix`` (all when None); returns their keys, sorted."""
    with _lock:
        keys = sorted(k for k in _config if prefix is None or k.startswith(prefix))
        for k in keys:
            del _config[k]
    if strict and not keys:
        raise ValueError(f"plugin.clear_config: nothing under {prefix!r}")
    return keys


def register_service(name: str, obj: Any) -> None:
    """Shares ``obj`` (by reference) under ``name``."""
    with _lock:
        _services[name] = obj


def get_service(name: str) -> Any:
    with _lock:
        return _services.get(name)


def list_services() -> list[str]:
    with _lock:
        return sorted(_services)


def unregister_service(name: str) -> bool:
    with _lock:
        return _services.pop(name, None) is not None


def clear_services(prefix: str | None = None, *, strict: bool = False) -> list[str]:
    """Removes the shared services whose names start with ``prefix`` (all when None); returns their
    names, sorted. ``strict`` raises SpiralValueError (a ValueError; removing nothing) when no service matches."""
    if prefix is not None and not isinstance(prefix, str):
        raise TypeError(f"plugin.clear_services: prefix must be a string or None, got {type(prefix).__name__}")
    with _lock:
        names = sorted(n for n in _services if prefix is None or n.startswith(prefix))
        if strict and not names:
            raise _core.SpiralValueError(f"plugin.clear_services: no service under prefix {prefix!r} "
                             f"(registered: {sorted(_services)})")
        for n in names:
            del _services[n]
    return names


# ---------------------------------------------------------------- plugins

_CAPABILITIES = {"operators": "Operators", "lossfunctions": "LossFunctions", "optimizers": "Optimizers",
                 "dataloaders": "DataLoaders", "visualization": "Visualization", "telemetry": "Telemetry",
                 "language": "Language", "vision": "Vision", "reinforcementlearning": "ReinforcementLearning",
                 "graphneuralnetworks": "GraphNeuralNetworks", "recommender": "Recommender"}


def _capability(label: str) -> str:
    s = str(label).strip()
    low = s.lower()
    for prefix, kind in (("backend", "Backend"), ("custom", "Custom")):
        if low.startswith(prefix + "(") and s.endswith(")"):
            return f"{kind}({s[len(prefix) + 1:-1].strip()})"
        if low.startswith(prefix + ":"):
            return f"{kind}({s[len(prefix) + 1:].strip()})"
    return _CAPABILITIES.get(low.replace("_", "").replace("-", "").replace(" ", ""), f"Custom({s})")


class _Plugin:
    def __init__(self, obj: Any, meta: dict[str, Any], subs: list[tuple[str, int]]) -> None:
        self.obj, self.meta, self.subs = obj, meta, subs


_plugins: dict[str, _Plugin] = {}
# Ids between their check and their insertion: reserved under _lock so two threads
# registering the same id cannot both pass the check.
_registering: set[str] = set()


def _metadata_of(plugin: Any) -> dict[str, Any]:
    raw = getattr(plugin, "metadata", None)
    if callable(raw):
        raw = raw()
        if raw is not None and not isinstance(raw, dict):
            raise TypeError(f"plugin metadata() must return a dict, got {type(raw).__name__}")
    if not (isinstance(raw, dict) and "id" in raw and "version" in raw):
        extra = raw if isinstance(raw, dict) else {}
        raw = {k: getattr(plugin, k) for k in ("id", "version", "name", "description", "author", "dependencies",
                                               "capabilities") if hasattr(plugin, k)}
        if extra:
            raw["metadata"] = extra
    if not raw.get("id") or not isinstance(raw["id"], str) or raw["id"] != raw["id"].strip():
        raise ValueError(f"plugin: id must be a non-empty string without surrounding spaces, got {raw.get('id')!r}")
    if not raw.get("version"):
        raise ValueError(f"plugin '{raw['id']}': version is required")
    caps = raw.get("capabilities") or []
    caps = [caps] if isinstance(caps, str) else list(caps)
    deps = dict(raw.get("dependencies") or {})
    extra = dict(raw.get("metadata") or {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in extra.items()):
        raise TypeError(f"plugin '{raw['id']}': metadata must map str to str")
    return {"id": raw["id"], "version": str(raw["version"]), "name": raw.get("name"),
            "description": raw.get("description"), "author": raw.get("author"), "dependencies": deps,
            "capabilities": [_capability(c) for c in caps], "metadata": extra}


def register_python_plugin(plugin: Any, *, replace: bool = False) -> str:
    """Registers a plugin object: metadata from ``plugin.metadata`` (a dict or a callable returning
    one) or its ``id``/``version``/``name``/``description``/``author``/``dependencies``/
    ``capabilities`` attributes. Calls ``plugin.on_load()``; subscribes ``plugin.on_event`` to
    ``plugin.event_types`` (default every event) unless ``auto_subscribe`` is False. Every
    dependency must already be registered. Returns the plugin id."""
    meta = _metadata_of(plugin)
    pid = meta["id"]
    auto = getattr(plugin, "auto_subscribe", True)
    if not isinstance(auto, bool):
        raise TypeError(f"plugin '{pid}': auto_subscribe must be a bool")
    with _lock:
        for dep in meta["dependencies"]:
            if dep == pid:
                raise ValueError(f"plugin '{pid}' depends on itself")
            if dep not in _plugins:
                raise ValueError(f"plugin '{pid}' depends on '{dep}', which is not registered")
        if pid in _registering:
            raise RuntimeError(f"plugin '{pid}' is being registered by another thread")
        if pid in _plugins:
            if not replace:
                raise RuntimeError(f"plugin '{pid}' is already registered (pass replace=True)")
            unregister_plugin(pid)
        _registering.add(pid)
    subs: list[tuple[str, int]] = []
    try:
        hook = getattr(plugin, "on_load", None)
        if callable(hook):
            hook()
        on_event = getattr(plugin, "on_event", None)
        if callable(on_event) and auto:
            types = getattr(plugin, "event_types", ["*"])
            types = types() if callable(types) else types
            if types is not None:
                def deliver(event: dict, _cb: Callable[[dict], Any] = on_event, _pid: str = pid) -> None:
                    try:
                        _cb(event)
                    except Exception:
                        print(f"spiraltorch.plugin: plugin '{_pid}' on_event raised:", file=sys.stderr)
                        traceback.print_exc()

                subs = subscribe_many([types] if isinstance(types, str) else list(types), deliver)
        with _lock:
            _plugins[pid] = _Plugin(plugin, meta, subs)
    except BaseException:
        unsubscribe_many(subs)
        raise
    finally:
        with _lock:
            _registering.discard(pid)
    _emit("PluginLoaded", plugin_id=pid)
    return pid


def unregister_plugin(plugin_id: str) -> bool:
    """Removes a plugin (unsubscribing it), then calls its ``on_unload()``; False when unknown.
    Refused while other registered plugins depend on it."""
    with _lock:
        entry = _plugins.get(plugin_id)
        if entry is None:
            return False
        dependents = sorted(p for p, e in _plugins.items() if plugin_id in e.meta["dependencies"])
        if dependents:
            raise ValueError(f"plugin '{plugin_id}' is needed by {', '.join(dependents)}; unregister them first")
        del _plugins[plugin_id]
    unsubscribe_many(entry.subs)
    hook = getattr(entry.obj, "on_unload", None)
    if callable(hook):
        try:
            hook()
        except Exception as exc:
            raise RuntimeError(f"plugin '{plugin_id}' on_unload failed: {type(exc).__name__}: {exc}") from exc
    _emit("PluginUnloaded", plugin_id=plugin_id)
    return True


def list_plugins() -> list[str]:
    with _lock:
        return sorted(_plugins)


def plugin_metadata(plugin_id: str) -> dict[str, Any] | None:
    with _lock:
        entry = _plugins.get(plugin_id)
        return None if entry is None else json.loads(json.dumps(entry.meta))


def find_by_capability(label: str) -> list[str]:
    """Ids of the plugins that declare capability ``label`` (same parsing as registration)."""
    want = _capability(label)
    with _lock:
        return sorted(p for p, e in _plugins.items() if want in e.meta["capabilities"])


def _unload_order() -> list[str]:
    """Registered ids, dependents before their dependencies."""
    with _lock:
        deps = {p: set(e.meta["dependencies"]) & set(_plugins) for p, e in _plugins.items()}
    order: list[str] = []
    while deps:
        free = sorted(p for p in deps if not any(p in d for q, d in deps.items() if q != p)) or sorted(deps)
        for p in free:
            order.append(p)
            del deps[p]
    return order


def initialize_all() -> None:
    """Publishes ``SystemInit``."""
    _emit("SystemInit")


def _unload(order: list[str]) -> list[str]:
    """Unregisters ``order`` (dependents first). Every plugin is removed even when an ``on_unload``
    hook raises; the hook failures are then raised together as one SpiralError (a RuntimeError) naming them."""
    done: list[str] = []
    failures: list[str] = []
    for pid in order:
        try:
            if unregister_plugin(pid):
                done.append(pid)
        except RuntimeError as exc:  # the plugin is already removed; only its hook failed
            done.append(pid)
            failures.append(str(exc))
    if failures:
        raise _core.SpiralError(f"plugin: unloaded {done}, but on_unload failed: " + "; ".join(failures))
    return done


def shutdown() -> list[str]:
    """Publishes ``SystemShutdown``, then unregisters every plugin, dependents first; returns their ids."""
    _emit("SystemShutdown")
    return _unload(_unload_order())


def unload_all(*, strict: bool = False) -> list[str]:
    """Unregisters every plugin, dependents before their dependencies (calling each ``on_unload``
    and publishing ``PluginUnloaded``), without the ``SystemShutdown`` event of ``shutdown``.
    Returns the ids in unload order. ``strict`` raises SpiralValueError when nothing is registered."""
    order = _unload_order()
    if strict and not order:
        raise _core.SpiralValueError("plugin.unload_all: no plugins are registered")
    return _unload(order)


def _dependents_closure(plugin_id: str) -> set[str]:
    with _lock:
        deps = {p: set(e.meta["dependencies"]) for p, e in _plugins.items()}
    found: set[str] = set()
    frontier = [plugin_id]
    while frontier:
        cur = frontier.pop()
        for p, d in deps.items():
            if cur in d and p not in found:
                found.add(p)
                frontier.append(p)
    return found


def unregister_safe(plugin_id: str, *, strict: bool = False) -> list[str]:
    """Unregisters ``plugin_id`` together with every plugin that depends on it, directly or
    transitively, dependents first (so no registered plugin is left with a missing dependency).
    Returns the ids in unload order; an unknown id gives ``[]``, or SpiralValueError with ``strict``."""
    with _lock:
        known = plugin_id in _plugins
        registered = sorted(_plugins)
    if not known:
        if strict:
            raise _core.SpiralValueError(f"plugin.unregister_safe: plugin {plugin_id!r} is not registered "
                             f"(registered: {registered})")
        return []
    doomed = _dependents_closure(plugin_id) | {plugin_id}
    return _unload([p for p in _unload_order() if p in doomed])


def reset(*, strict: bool = False) -> dict[str, list[str]]:
    """Unloads every plugin (dependents first, no ``SystemShutdown`` event), then clears services and
    configuration; returns what went: ``{"plugins": ids, "services": names, "config": keys}``.
    ``strict`` raises SpiralValueError, before changing anything, when there is nothing at all to reset."""
    with _lock:
        empty = not _plugins and not _services and not _config
    if strict and empty:
        raise _core.SpiralValueError("plugin.reset: nothing to reset (no plugins, services or configuration)")
    try:
        plugins = unload_all()
    finally:  # services and config go even when an on_unload hook failed
        services = clear_services()
        config = clear_config()
    return {"plugins": plugins, "services": services, "config": config}


# ---------------------------------------------------------------- dependency graph

def dependency_graph(*, internal_only: bool = False) -> dict[str, list[str]]:
    """``{plugin_id: sorted dependency ids}``; ``internal_only`` keeps registered dependencies only."""
    with _lock:
        return {p: sorted(d for d in e.meta["dependencies"] if not internal_only or d in _plugins)
                for p, e in sorted(_plugins.items())}


def _cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """Elementary cycles found by depth-first search, each rotated to start at its smallest id."""
    found: set[tuple[str, ...]] = set()

    def walk(node: str, path: list[str]) -> None:
        for dep in graph.get(node, []):
            if dep in path:
                cyc = path[path.index(dep):]
                i = cyc.index(min(cyc))
                found.add(tuple(cyc[i:] + cyc[:i]))
            elif dep in graph:
                walk(dep, path + [dep])

    for start in graph:
        walk(start, [start])
    return [list(c) for c in sorted(found, key=lambda c: (len(c), c))]


def validate_dependencies(*, internal_only: bool = False, strict: bool = False) -> dict[str, Any]:
    """``{"ok", "missing": {id: [unregistered deps]}, "cycles": [[ids...]]}``; ``strict`` raises
    ValueError when not ok."""
    graph = dependency_graph()
    with _lock:
        registered = set(_plugins)
    missing = {} if internal_only else {p: [d for d in deps if d not in registered] for p, deps in graph.items()
                                        if any(d not in registered for d in deps)}
    cycles = _cycles({p: [d for d in deps if d in registered] for p, deps in graph.items()})
    report = {"ok": not missing and not cycles, "missing": missing, "cycles": cycles}
    if strict and not report["ok"]:
        raise ValueError(f"dependency validation failed: missing={missing}, cycles={cycles}")
    return report


def explain(plugin_id: str) -> dict[str, Any]:
    """What is known about one plugin: metadata, dependencies (and which are missing), direct and
    transitive dependents."""
    graph = dependency_graph()
    meta = plugin_metadata(plugin_id)
    deps = graph.get(plugin_id, [])
    direct = sorted(p for p, d in graph.items() if plugin_id in d)
    transitive: set[str] = set()
    frontier = list(direct)
    while frontier:
        p = frontier.pop()
        if p not in transitive:
            transitive.add(p)
            frontier.extend(q for q, d in graph.items() if p in d)
    return {"plugin_id": plugin_id, "registered": meta is not None,
            "source": (meta or {}).get("metadata", {}).get("spiraltorch.source"), "metadata": meta,
            "dependencies": deps, "missing_dependencies": [d for d in deps if d not in graph],
            "direct_dependents": direct, "transitive_dependents": sorted(transitive)}


def dependency_dot(*, internal_only: bool = False, show_missing: bool = True, rankdir: str = "LR") -> str:
    """The dependency graph in Graphviz DOT (edges point from a plugin to what it needs)."""
    if rankdir not in ("LR", "RL", "TB", "BT"):
        raise ValueError(f"plugin.dependency_dot: rankdir must be LR, RL, TB or BT, got {rankdir!r}")
    graph = dependency_graph(internal_only=internal_only)
    missing = sorted({d for deps in graph.values() for d in deps if d not in graph})
    lines = ["digraph SpiralTorchPluginDeps {", f'  rankdir="{rankdir}";']
    lines += [f'  "{p}";' for p in graph]
    if show_missing:
        lines += [f'  "{m}" [style=dashed,color="gray50"];' for m in missing]
    for p, deps in graph.items():
        lines += [f'  "{p}" -> "{d}";' for d in deps if show_missing or d in graph]
    return "\n".join(lines) + "\n}\n"


# ---------------------------------------------------------------- discovery

def _plugins_of(module: Any) -> list[Any]:
    for attr in ("__spiraltorch_plugins__", "spiraltorch_plugins", "plugins"):
        if isinstance(getattr(module, attr, None), (list, tuple)):
            return list(getattr(module, attr))
    for attr in ("create_plugins", "get_plugins"):
        if callable(getattr(module, attr, None)):
            return list(getattr(module, attr)())
    for attr in ("create_plugin", "get_plugin"):
        if callable(getattr(module, attr, None)):
            return [getattr(module, attr)()]
    for attr in ("plugin", "PLUGIN"):
        if getattr(module, attr, None) is not None:
            return [getattr(module, attr)]
    return []


def load_path(path: str, *, recursive: bool = True, strict: bool = False) -> list[str]:
    """Imports every ``.py`` file under ``path`` (or the file itself; dot-files, ``__pycache__`` and
    ``__init__.py`` are skipped, ``recursive=False`` ignores sub-directories) and registers the plugins
    each exposes, dependencies before dependents within the batch; returns the ids in load order.
    Each plugin's metadata records ``spiraltorch.source="path"`` and ``spiraltorch.source_path``.

    ``strict``: a path holding no ``.py`` file, or a module that exposes no plugin, raises
    SpiralValueError (non-strict: ``[]`` / the module is skipped). Duplicate ids in the batch and
    dependency cycles raise SpiralValueError (a ValueError). The call is all-or-nothing: when an import, a check or a
    registration fails, the plugins it already registered are unregistered again and its modules
    are dropped from ``sys.modules`` before the error propagates."""
    if not os.path.exists(path):
        raise _core.SpiralValueError(f"plugin.load_path: {path!r} does not exist")
    if os.path.isfile(path):
        if not path.endswith(".py"):
            raise _core.SpiralValueError(f"plugin.load_path: {path!r} is not a .py file")
        files = [path]
    else:
        files = []
        for root, dirs, names in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__") if recursive else []
            files += [os.path.join(root, n) for n in sorted(names)
                      if n.endswith(".py") and not n.startswith(".") and n != "__init__.py"]
    if strict and not files:
        raise _core.SpiralValueError(f"plugin.load_path: no .py files under {path!r} (strict=True)")
    added_modules: list[str] = []
    loaded: list[str] = []
    try:
        objs: list[tuple[Any, str]] = []
        for f in files:
            name = "spiraltorch_path_plugin_" + os.path.splitext(os.path.basename(f))[0] + \
                f"_{abs(hash(os.path.abspath(f))):x}"
            spec = importlib.util.spec_from_file_location(name, f)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            added_modules.append(name)
            spec.loader.exec_module(module)
            found = _plugins_of(module)
            if strict and not found:
                raise _core.SpiralValueError(f"plugin.load_path: {f!r} exposes no plugin (strict=True)")
            objs += [(o, os.path.abspath(f)) for o in found]
        metas = [_metadata_of(o) for o, _ in objs]
        seen: dict[str, str] = {}
        for m, (_, src) in zip(metas, objs):
            if m["id"] in seen:
                raise _core.SpiralValueError(f"plugin.load_path: plugin id {m['id']!r} is defined twice ({seen[m['id']]} and {src})")
            seen[m["id"]] = src
        pending = {m["id"]: o for m, (o, _) in zip(metas, objs)}
        deps = {m["id"]: set(m["dependencies"]) for m in metas}
        while pending:
            ready = [pid for pid in pending if not deps[pid] & pending.keys()]
            if not ready:
                raise _core.SpiralValueError(f"plugin.load_path: dependency cycle among {sorted(pending)}")
            for pid in ready:
                loaded.append(register_python_plugin(pending.pop(pid)))
                with _lock:
                    _plugins[pid].meta["metadata"].update({"spiraltorch.source": "path",
                                                           "spiraltorch.source_path": seen[pid]})
    except BaseException:
        for pid in reversed(loaded):
            try:
                unregister_plugin(pid)
            except Exception:  # the original error is the one to report
                pass
        for name in added_modules:
            sys.modules.pop(name, None)
        raise
    return loaded
