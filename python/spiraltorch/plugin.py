"""Events and plugins: an in-process event bus, listener queues, JSONL recording, and a registry
of Python plugins with shared configuration and services.

Every listener receives one dict with ``"ts"`` (UNIX seconds at dispatch) and ``"type"``, plus
the event's fields: ``TensorOp`` (``op_name``, ``input_shape``, ``output_shape``; published by the
built-in ops in C++ and by ``spiraltorch.ops.execute``), ``EpochStart`` (``epoch``) and ``EpochEnd``
(``epoch``, ``loss``, ...) around each epoch and ``TrainerStep`` (``epoch``, ``step``, ``samples``,
``loss``, ``skipped``, ``source``, ...) after each step of the C++ training engine (``nn.fit``,
``nn.ModuleTrainer``, ``ZSpaceTrainer``, ``AmegagradSession``/``HypergradSession``; ``source`` names
which), ``PluginLoaded``/``PluginUnloaded``
(``plugin_id``), ``SystemInit``/``SystemShutdown``, and custom types from ``publish`` (``event_type``
and ``payload``). Listeners run synchronously on the publishing thread, type-specific ones first
(in subscription order), then ``"*"`` (wildcard) ones; a listener that raises is reported on
stderr and counted in ``publish_report``, and dispatch goes on.
"""

from __future__ import annotations

import atexit
import collections
import importlib.util
import json
import logging
import os
import stat
import sys
import threading
import traceback
import weakref
from typing import Any, Callable, Iterable, Iterator

from . import _core

__all__ = [
    "PluginPathWatcher", "PluginQueue", "PluginRecorder", "clear_config", "clear_services", "dependency_dot",
    "dependency_graph", "explain", "load_entrypoints", "load_path", "reload_path", "unload_all", "unload_entrypoints",
    "unload_path", "unregister_safe", "watch_path",
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
    "TensorOp": "a tensor op ran (built-in C++ ops such as add, matmul, sum, softmax, exp, and custom operators "
                "through spiraltorch.ops.execute); keys: op_name, input_shape, output_shape",
    "EpochStart": "an epoch of the training engine (nn.fit, nn.ModuleTrainer.train_epoch) started; keys: epoch "
                  "(1-based), source",
    "EpochEnd": "an epoch of the training engine finished; keys: epoch, loss (the epoch's average loss), batches, "
                "skipped_steps, source, and val_loss, val_accuracy when nn.fit validated",
    "TrainerStep": "one step of the training engine (published in C++): nn.fit, nn.ModuleTrainer, ZSpaceTrainer, "
                   "AmegagradSession, HypergradSession; keys: epoch, step, samples, loss, skipped, source, "
                   "skip_reason when skipped, and the front-end's metrics (ModuleTrainer: band_above, band_here, "
                   "band_beneath, lr_scale once the gradient was computed; ZSpaceTrainer: z_norm)",
    "*": "wildcard: every event",
}
_BUILTIN_KEYS = {"SystemInit": (), "SystemShutdown": (), "PluginLoaded": ("plugin_id",),
                 "PluginUnloaded": ("plugin_id",), "TensorOp": ("op_name", "input_shape", "output_shape"),
                 "EpochStart": ("epoch",), "EpochEnd": ("epoch", "loss"),
                 "TrainerStep": ("epoch", "step", "samples", "loss", "skipped")}

# Guards the plugin registry, configuration and services below; the event bus has its own lock in C++.
_lock = threading.RLock()
_MISSING = object()
# The C++ bus outlives the interpreter: drop the Python listeners before it goes, so no op run
# during shutdown calls into a finalising interpreter.
atexit.register(_core._events_clear)


def event_types() -> dict[str, str]:
    """The built-in event types (and the wildcard) with what each carries."""
    return dict(_EVENT_TYPES)


def _deliver_to(callback: Callable[[dict], Any]) -> Callable[[dict], None]:
    """Adapts a listener to the C++ bus: custom payloads travel as JSON text and are decoded here,
    once per listener, so each listener gets its own copy."""
    def deliver(event: dict) -> None:
        raw = event.pop("payload_json", _MISSING)
        if raw is not _MISSING:
            event["payload"] = None if raw is None else json.loads(raw)
        callback(event)

    return deliver


def subscribe(event_type: str, callback: Callable[[dict], Any]) -> int:
    """Calls ``callback(event_dict)`` for every event of ``event_type`` ("*" for all); returns the
    subscription id (ids increase from 1 across all types). The subscription lives on the C++
    event bus, so events published by C++ code (built-in ``TensorOp``) reach it too."""
    if not callable(callback):
        raise TypeError(f"plugin.subscribe: callback must be callable, got {type(callback).__name__}")
    if not isinstance(event_type, str) or not event_type:
        raise ValueError(f"plugin.subscribe: event_type must be a non-empty string, got {event_type!r}")
    return _core._events_subscribe(event_type, _deliver_to(callback))


def unsubscribe(event_type: str, subscription_id: int) -> bool:
    """Removes one subscription; False when ``event_type`` has no such id."""
    return _core._events_unsubscribe(event_type, subscription_id)


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
    return _core._events_has_listeners(event_type)


def clear_listeners(event_type: str | None = None, *, strict: bool = False) -> int:
    """Removes every listener of ``event_type`` (all types when None); returns how many.
    ``strict`` raises ValueError when there was nothing to remove."""
    n = _core._events_clear(event_type)
    if strict and n == 0:
        raise ValueError(f"plugin.clear_listeners: no listeners for {event_type or 'any event type'}")
    return n


def _dispatch(event_type: str, fields: dict[str, Any]) -> dict[str, Any]:
    """Publishes on the C++ bus: listeners of the type first (subscription order), then wildcard
    ones; a listener that raises is reported on stderr and in the report, and dispatch goes on."""
    return _core._events_publish(event_type, fields)


def _emit(event_type: str, **fields: Any) -> None:
    """Publishes a built-in event (no-op without listeners, so hot paths stay cheap)."""
    if _core._events_has_listeners(event_type):
        _core._events_publish(event_type, fields)


def publish_report(event_type: str, payload: Any = None) -> dict[str, Any]:
    """Publishes a custom event carrying ``payload`` (None, a string, or JSON-serialisable data)
    and reports ``ok, event_type, matched, delivered, panicked, failures``."""
    if not isinstance(event_type, str) or not event_type:
        raise ValueError(f"plugin.publish: event_type must be a non-empty string, got {event_type!r}")
    if event_type in _BUILTIN_KEYS:
        raise ValueError(f"plugin.publish: '{event_type}' is a built-in event type; publish a custom type")
    try:
        text = None if payload is None else json.dumps(payload)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"plugin.publish: payload is not JSON-serialisable: {exc}") from exc
    return _dispatch(event_type, {"event_type": event_type, "payload_json": text})


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
    """The shared setting ``key`` (a string), or None when it is not set."""
    with _lock:
        return _config.get(key)


def unset_config(key: str) -> bool:
    """Removes the shared setting ``key``; True when it was set."""
    with _lock:
        return _config.pop(key, None) is not None


def list_config(prefix: str | None = None) -> dict[str, str]:
    """A copy of the shared settings whose keys start with ``prefix`` (all when None)."""
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
    """The object registered as shared service ``name``, or None."""
    with _lock:
        return _services.get(name)


def list_services() -> list[str]:
    """The names of the registered shared services, sorted."""
    with _lock:
        return sorted(_services)


def unregister_service(name: str) -> bool:
    """Removes shared service ``name``; True when it was registered."""
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
    """The ids of the registered plugins, sorted."""
    with _lock:
        return sorted(_plugins)


def plugin_metadata(plugin_id: str) -> dict[str, Any] | None:
    """A copy of a registered plugin's metadata (id, version, name, description, author,
    dependencies, capabilities), or None for an unknown id."""
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

def _plugins_of(module: Any, *, instantiate: bool = True) -> list[Any]:
    """The plugin objects a module exposes: the first of the iterables ``__spiraltorch_plugins__``,
    ``spiraltorch_plugins``, ``plugins``; the factories ``create_plugins()``/``get_plugins()``; the
    singletons ``create_plugin``/``get_plugin``/``plugin``/``PLUGIN``."""
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


def _register_batch(objs: list[tuple[Any, dict[str, str]]], op: str, *, replace: bool,
                    stale: Iterable[str] = ()) -> list[str]:
    """Registers ``(plugin, annotations)`` pairs, dependencies before dependents within the batch,
    and returns the ids in load order. Everything is checked before anything changes: duplicate
    ids, dependency cycles, ids already registered (unless ``replace``) and, with ``replace``,
    registered plugins outside the batch that depend on a replaced one. ``replace`` unregisters
    the batch's registered ids and the ``stale`` ones (dependents first) before loading. When a
    registration fails, the plugins this call registered are unregistered again."""
    metas = [_metadata_of(o) for o, _ in objs]
    seen: dict[str, str] = {}
    for m, (_, notes) in zip(metas, objs):
        where = notes.get("spiraltorch.source_path") or notes.get("spiraltorch.entrypoint_name", "?")
        if m["id"] in seen:
            raise _core.SpiralValueError(f"{op}: plugin id {m['id']!r} is defined twice ({seen[m['id']]} and {where})")
        seen[m["id"]] = where
    pending = {m["id"]: (o, notes) for m, (o, notes) in zip(metas, objs)}
    deps = {m["id"]: set(m["dependencies"]) for m in metas}
    order: list[str] = []
    while len(order) < len(pending):
        ready = [pid for pid in pending if pid not in order and not (deps[pid] & (pending.keys() - set(order)))]
        if not ready:
            raise _core.SpiralValueError(f"{op}: dependency cycle among {sorted(set(pending) - set(order))}")
        order += ready
    with _lock:
        registered = set(_plugins)
        clash = sorted(pending.keys() & registered)
        if clash and not replace:
            raise _core.SpiralValueError(f"{op}: plugin ids {clash} are already registered (pass replace=True)")
        doomed = (set(clash) | set(stale)) & registered if replace else set()
        outside = sorted(p for p in registered - doomed - pending.keys()
                         if set(_plugins[p].meta["dependencies"]) & doomed)
    if outside:
        raise _core.SpiralValueError(f"{op}: cannot replace {sorted(doomed)}: {outside} depend on them "
                                     f"(unregister those first)")
    if doomed:
        _unload([p for p in _unload_order() if p in doomed])
    loaded: list[str] = []
    try:
        for pid in order:
            obj, notes = pending[pid]
            loaded.append(register_python_plugin(obj))
            with _lock:
                _plugins[pid].meta["metadata"].update(notes)
    except BaseException:
        for pid in reversed(loaded):
            try:
                unregister_plugin(pid)
            except Exception:  # the original error is the one to report
                pass
        raise
    return loaded


def _instantiate(obj: Any) -> Any:
    """An entry point's target: called when it is a class or factory (a TypeError from calling
    it means it wants arguments, so the object itself is the plugin)."""
    if isinstance(obj, type) or (callable(obj) and not hasattr(obj, "on_event")):
        try:
            return obj()
        except TypeError:
            return obj
    return obj


def load_entrypoints(group: str = "spiraltorch.plugins", *, instantiate: bool = True,
                     replace: bool = False) -> list[str]:
    """Registers the plugins that installed distributions advertise as Python entry points in
    ``group`` (``[project.entry-points."spiraltorch.plugins"]`` in a pyproject.toml). Each entry
    point is loaded; with ``instantiate`` a class or factory is called without arguments; a list or
    tuple holds several plugins. Dependencies inside the batch load first. Each plugin's metadata
    records ``spiraltorch.source="entrypoint"``, ``spiraltorch.entrypoint_group``,
    ``spiraltorch.entrypoint_name`` and ``spiraltorch.entrypoint_value``. Returns the ids in load
    order; duplicate ids, cycles and already registered ids (without ``replace``) raise
    SpiralValueError before anything is registered."""
    import importlib.metadata as md

    if not isinstance(group, str) or not group:
        raise _core.SpiralValueError(f"plugin.load_entrypoints: group must be a non-empty string, got {group!r}")
    found = md.entry_points(group=group)
    objs: list[tuple[Any, dict[str, str]]] = []
    seen_eps: set[tuple[str, str]] = set()
    for ep in sorted(found, key=lambda e: e.name):
        if (ep.name, ep.value) in seen_eps:  # the same distribution reachable twice on sys.path
            continue
        seen_eps.add((ep.name, ep.value))
        target = ep.load()
        if isinstance(target, (list, tuple)):
            items = [_instantiate(o) if instantiate else o for o in target]
        else:
            made = _instantiate(target) if instantiate else target
            items = list(made) if isinstance(made, (list, tuple)) else [made]  # a factory of several
        notes = {"spiraltorch.source": "entrypoint", "spiraltorch.entrypoint_group": group,
                 "spiraltorch.entrypoint_name": ep.name, "spiraltorch.entrypoint_value": ep.value}
        objs += [(o, dict(notes)) for o in items]
    return _register_batch(objs, "plugin.load_entrypoints", replace=replace)


def unload_entrypoints(group: str = "spiraltorch.plugins", *, strict: bool = False) -> list[str]:
    """Unregisters the plugins loaded from entry points of ``group`` (dependents first); returns
    their ids. ``strict`` raises SpiralValueError when there are none."""
    with _lock:
        ids = {p for p, e in _plugins.items() if e.meta["metadata"].get("spiraltorch.entrypoint_group") == group}
    if strict and not ids:
        raise _core.SpiralValueError(f"plugin.unload_entrypoints: no plugins loaded from group {group!r}")
    return _unload([p for p in _unload_order() if p in ids])


_log = logging.getLogger("spiraltorch.plugin")


def _untrusted(info: os.stat_result) -> str | None:
    """Why a file or directory with this status may hold code someone else put there, or None:
    it is world-writable, or owned by a user other than this process's and root."""
    if info.st_mode & stat.S_IWOTH:
        return f"is world-writable (mode {oct(stat.S_IMODE(info.st_mode))}), so any user could put code in it"
    if info.st_uid not in (os.geteuid(), 0):
        return f"is owned by uid {info.st_uid}, neither this user ({os.geteuid()}) nor root"
    return None


def _refuse(op: str, path: str, why: str) -> None:
    raise _core.SpiralError(f"{op}: refusing to run plugin code from {path!r}: it {why}; fix its permissions "
                            "(chmod o-w, chown) or move the plugins to a directory only you can write")


def _check_location(path: str, op: str) -> None:
    """Refuses (``SpiralError``) a plugin path that is world-writable or owned by another
    non-root user, or that sits below a directory someone else could rename it out of (one
    owned by another non-root user, or world-writable without the sticky bit)."""
    target = os.path.abspath(path)
    try:
        why = _untrusted(os.stat(target))
    except FileNotFoundError:
        raise _core.SpiralValueError(f"{op}: {path!r} does not exist") from None
    if why:
        _refuse(op, target, why)
    parent = os.path.dirname(target)
    while True:
        try:
            info = os.stat(parent)
        except OSError:
            break
        why = _untrusted(info)
        if why and not (info.st_mode & stat.S_IWOTH and info.st_mode & stat.S_ISVTX and info.st_uid in (os.geteuid(), 0)):
            _refuse(op, target, f"lies in {parent!r}, which {why}")
        up = os.path.dirname(parent)
        if up == parent:
            break
        parent = up


def _py_files(path: str, recursive: bool, op: str) -> list[str]:
    """The ``.py`` files under ``path`` that loading it executes, after checking that nobody
    but this user (or root) can change them: ``path``, its parents, every directory walked and
    every file (``SpiralError`` naming the first that fails)."""
    if not os.path.exists(path):
        raise _core.SpiralValueError(f"{op}: {path!r} does not exist")
    _check_location(path, op)
    if os.path.isfile(path):
        if not path.endswith(".py"):
            raise _core.SpiralValueError(f"{op}: {path!r} is not a .py file")
        return [os.path.abspath(path)]
    files = []
    for root, dirs, names in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__") if recursive else []
        for d in list(dirs):
            try:
                why = _untrusted(os.stat(os.path.join(root, d)))
            except FileNotFoundError:  # removed since its parent was read
                dirs.remove(d)
                continue
            if why:
                _refuse(op, os.path.abspath(os.path.join(root, d)), why)
        for n in sorted(names):
            if n.endswith(".py") and not n.startswith(".") and n != "__init__.py":
                f = os.path.abspath(os.path.join(root, n))
                try:
                    why = _untrusted(os.stat(f))
                except FileNotFoundError:  # removed (or a dangling link) since the directory was read
                    continue
                if why:
                    _refuse(op, f, why)
                files.append(f)
    return files


def _module_name(path: str) -> str:
    stem = "".join(c if c.isalnum() or c == "_" else "_" for c in os.path.splitext(os.path.basename(path))[0])
    return f"spiraltorch_path_plugin_{stem}_{abs(hash(path)):x}"


def _import_file(path: str, op: str = "plugin.load_path") -> Any:
    """Executes ``path`` as a fresh module compiled from its current text (never a cached .pyc,
    which a rewrite within the same second could leave looking up to date). The opened file is
    checked again (world-writable or another user's: ``SpiralError``) and the execution logged
    on the ``spiraltorch.plugin`` logger."""
    name = _module_name(path)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    with open(path, "rb") as f:
        why = _untrusted(os.fstat(f.fileno()))
        if why:
            _refuse(op, path, why)
        code = compile(f.read(), path, "exec")
    _log.info("%s: executing %s", op, path)
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _load_files(path: str, *, recursive: bool, strict: bool, replace: bool, op: str) -> list[str]:
    files = _py_files(path, recursive, op)
    if strict and not files:
        raise _core.SpiralValueError(f"{op}: no .py files under {path!r} (strict=True)")
    modules: list[str] = []
    try:
        objs: list[tuple[Any, dict[str, str]]] = []
        for f in files:
            module = _import_file(f, op)
            modules.append(module.__name__)
            found = _plugins_of(module)
            if strict and not found:
                raise _core.SpiralValueError(f"{op}: {f!r} exposes no plugin (strict=True)")
            objs += [(o, {"spiraltorch.source": "path", "spiraltorch.source_path": f,
                          "spiraltorch.source_module": module.__name__}) for o in found]
        # On a reload, plugins a file no longer defines go too.
        stale = _ids_from_files(set(files)) if replace else set()
        return _register_batch(objs, op, replace=replace, stale=stale)
    except BaseException:
        for name in modules:
            sys.modules.pop(name, None)
        raise


def _ids_from_files(files: set[str]) -> set[str]:
    with _lock:
        return {p for p, e in _plugins.items() if e.meta["metadata"].get("spiraltorch.source_path") in files}


def load_path(path: str, *, recursive: bool = True, strict: bool = False) -> list[str]:
    """Imports every ``.py`` file under ``path`` (or the file itself; dot-files, ``__pycache__`` and
    ``__init__.py`` are skipped, ``recursive=False`` ignores sub-directories) and registers the plugins
    each exposes, dependencies before dependents within the batch; returns the ids in load order.
    Each plugin's metadata records ``spiraltorch.source="path"``, ``spiraltorch.source_path`` and
    ``spiraltorch.source_module``; each file executed is logged (INFO, logger ``spiraltorch.plugin``).

    This runs the code in those files, so the location must be one only this user (or root) can
    change: a path, sub-directory or file that is world-writable or owned by another non-root
    user, or a parent directory through which someone else could swap it, raises ``SpiralError``
    before anything runs.

    ``strict``: a path holding no ``.py`` file, or a module that exposes no plugin, raises
    SpiralValueError (non-strict: ``[]`` / the module is skipped). Duplicate ids in the batch,
    dependency cycles and ids already registered raise SpiralValueError (a ValueError). The call is
    all-or-nothing: when an import, a check or a registration fails, the plugins it already
    registered are unregistered again and its modules are dropped from ``sys.modules`` before the
    error propagates."""
    return _load_files(path, recursive=recursive, strict=strict, replace=False, op="plugin.load_path")


def reload_path(path: str, *, recursive: bool = True, strict: bool = False) -> list[str]:
    """Re-imports the ``.py`` files under ``path`` from their current text and replaces their
    plugins: a registered plugin with the same id is unregistered first (its ``on_unload`` runs),
    plugins those files defined before but no longer define are unregistered, then the new
    objects are registered (their ``on_load`` runs). Returns the ids loaded. Refused, before
    anything changes, when a plugin from elsewhere depends on one being replaced."""
    return _load_files(path, recursive=recursive, strict=strict, replace=True, op="plugin.reload_path")


def unload_path(path: str, *, recursive: bool = True, strict: bool = False) -> list[str]:
    """Unregisters the plugins loaded from the ``.py`` files under ``path`` (dependents first);
    returns their ids. ``strict`` raises SpiralValueError when there are none."""
    target = os.path.abspath(path)
    with _lock:
        ids = set()
        for p, e in _plugins.items():
            src = e.meta["metadata"].get("spiraltorch.source_path")
            if src is None:
                continue
            inside = src == target or (src.startswith(target.rstrip(os.sep) + os.sep) and
                                       (recursive or os.path.dirname(src) == target))
            if inside:
                ids.add(p)
    if strict and not ids:
        raise _core.SpiralValueError(f"plugin.unload_path: no plugins were loaded from {path!r}")
    return _unload([p for p in _unload_order() if p in ids])


class PluginPathWatcher:
    """A background thread that polls the ``.py`` files under a path and hot-reloads them: a new
    or changed file (by modification time and size) is re-imported with ``reload_path``, a removed
    file's plugins are unregistered. Errors go to ``on_error(exc, path)`` (or stderr) and the
    watcher keeps going. ``stop()`` ends the thread and joins it; the watcher is also a context
    manager. ``reloads`` counts the successful (re)loads, ``last_ids`` holds the ids of the last.
    The path is checked like ``load_path``'s (at once, and on every scan: files that appear later
    are held to the same rule, and a scan that finds the location unsafe loads nothing and reports
    the error); every file executed is logged on ``spiraltorch.plugin``."""

    def __init__(self, path: str, *, recursive: bool = True, poll_interval: float = 0.25,
                 on_error: Callable[[BaseException, str], Any] | None = None, unload_on_stop: bool = False) -> None:
        if not os.path.exists(path):
            raise _core.SpiralValueError(f"plugin.watch_path: {path!r} does not exist")
        if not (isinstance(poll_interval, (int, float)) and poll_interval > 0):
            raise _core.SpiralValueError(f"plugin.watch_path: poll_interval must be positive, got {poll_interval!r}")
        _check_location(path, "plugin.watch_path")
        self.path = os.path.abspath(path)
        self.recursive = recursive
        self.poll_interval = float(poll_interval)
        self.on_error = on_error
        self.unload_on_stop = unload_on_stop
        self.reloads = 0
        self.errors = 0
        self.last_ids: list[str] = []
        self._seen: dict[str, tuple[int, int]] = {}
        self._refusal = ""
        self._pending: dict[str, tuple[int, int]] = {}
        self._stop = threading.Event()
        self._scanned = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"spiraltorch-watch:{self.path}", daemon=True)
        self._thread.start()

    def _signatures(self) -> dict[str, tuple[int, int]]:
        out = {}
        try:
            files = _py_files(self.path, self.recursive, "plugin.watch_path")
        except ValueError:  # the watched path vanished: every file is gone
            return out
        for f in files:
            try:
                st_ = os.stat(f)
            except OSError:
                continue
            out[f] = (st_.st_mtime_ns, st_.st_size)
        return out

    def _report(self, exc: BaseException, where: str) -> None:
        self.errors += 1
        if self.on_error is not None:
            try:
                self.on_error(exc, where)
            except Exception:  # the callback's failure must not stop the watcher
                pass
        else:
            print(f"spiraltorch.plugin: watch_path could not reload {where}: {type(exc).__name__}: {exc}",
                  file=sys.stderr)

    def poll_once(self) -> list[str]:
        """One scan: reloads new and changed files, unloads removed ones; returns the files acted on.
        A location that has become unsafe (see ``load_path``) is reported and nothing changes."""
        try:
            now = self._signatures()
        except _core.SpiralError as exc:
            if str(exc) != self._refusal:  # once per distinct refusal, not on every scan
                self._refusal = str(exc)
                self._report(exc, self.path)
            return []
        self._refusal = ""
        acted = []
        for f in sorted(set(self._seen) - set(now)):
            try:
                unload_path(f)
            except Exception as exc:
                self._report(exc, f)
            acted.append(f)
        first = not self._scanned.is_set()
        settled = {}
        for f, sig in sorted(now.items()):
            if self._seen.get(f) == sig:
                continue
            # A file being rewritten (truncated, then written) may be caught half-way: act on a
            # change only once two scans in a row see the same size and mtime.
            if not first and self._pending.get(f) != sig:
                self._pending[f] = sig
                continue
            self._pending.pop(f, None)
            settled[f] = sig
            try:
                self.last_ids = reload_path(f, recursive=False)
                self.reloads += 1
            except Exception as exc:
                self._report(exc, f)
            acted.append(f)
        # A failed file is retried when it changes again; unsettled files keep their old signature.
        self._seen = {f: settled.get(f, self._seen.get(f)) for f in now if f in settled or f in self._seen}
        self._pending = {f: sig for f, sig in self._pending.items() if f in now}
        return acted

    def _run(self) -> None:
        while not self._stop.is_set():
            self.poll_once()
            self._scanned.set()
            self._stop.wait(self.poll_interval)

    def wait_scanned(self, timeout: float | None = None) -> bool:
        """Blocks until the first scan has finished; False on timeout."""
        return self._scanned.wait(timeout)

    def is_running(self) -> bool:
        return self._thread.is_alive()

    def stop(self, timeout: float | None = None) -> bool:
        """Stops polling and joins the thread; with ``unload_on_stop`` unloads the watched plugins.
        Returns False when the thread did not end within ``timeout``."""
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)
        if self.unload_on_stop:
            unload_path(self.path)
        return not self._thread.is_alive()

    def __enter__(self) -> PluginPathWatcher:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def __repr__(self) -> str:
        return (f"PluginPathWatcher(path={self.path!r}, running={self.is_running()}, reloads={self.reloads}, "
                f"errors={self.errors})")


def watch_path(path: str, *, recursive: bool = True, poll_interval: float = 0.25,
               on_error: Callable[[BaseException, str], Any] | None = None,
               unload_on_stop: bool = False) -> PluginPathWatcher:
    """Starts a ``PluginPathWatcher`` on ``path``: its files are loaded at once and reloaded
    whenever they change (polling every ``poll_interval`` seconds). Call ``stop()`` on the returned
    handle (or use it in a ``with`` block) to end it."""
    return PluginPathWatcher(path, recursive=recursive, poll_interval=poll_interval, on_error=on_error,
                             unload_on_stop=unload_on_stop)
