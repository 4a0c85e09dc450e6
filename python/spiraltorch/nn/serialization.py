"""Saving and loading state dicts: ``nn.save(path, target)`` / ``nn.load(path, target=None)``.

The format follows the file name:

* ``.safetensors`` (or a directory / ``*.index.json`` of a sharded checkpoint on load):
  safetensors, readable by the ``safetensors`` package and Hugging Face tools;
* ``.json``: SpiralTorch's JSON state dict;
* ``.bin`` / ``.bincode``: SpiralTorch's compact binary state dict;
* ``<weights>.manifest.json`` (load only): the manifest written next to the weights.

Every ``save`` writes atomically (temporary file, fsync, rename) and also writes
``<weights>.manifest.json`` recording the format, keys, shapes, dtypes, the SHA-256 of
the weights file and the SpiralTorch version. Both files go to temporaries first; the
weights are renamed into place, then the manifest, so a save killed in between leaves
the new manifest complete in ``.<weights>.manifest.json.tmp-PID-N``, which loading through
the manifest accepts when it matches the weights (the next save promotes it and removes
temporaries of dead processes). Loading through a manifest verifies the hash first.
Every read is validated; a damaged or hostile file raises ``CheckpointError``, and a
path that is not a regular file (a FIFO) is refused before anything blocks on it.
"""

from __future__ import annotations

import os
from typing import Any, Dict, Optional, Tuple, Union

from .. import _core
from .._core import CheckpointError, Tensor

_io = _core.io

PathLike = Union[str, "os.PathLike[str]"]
StateDict = Dict[str, Tensor]

__all__ = [
    "save",
    "load",
    "save_safetensors",
    "load_safetensors",
    "save_json",
    "load_json",
    "save_bincode",
    "load_bincode",
]

_MANIFEST_SUFFIX = ".manifest.json"


def _format_of(path: str, *, for_save: bool) -> str:
    lower = path.lower()
    if lower.endswith(_MANIFEST_SUFFIX):
        if for_save:
            raise ValueError(f"save: {path!r} is a manifest path; save to the weights file and the manifest is written next to it")
        return "manifest"
    if lower.endswith(".safetensors"):
        return "safetensors"
    if lower.endswith(".index.json") or (not for_save and os.path.isdir(path)):
        if for_save:
            raise ValueError(f"save: writing sharded checkpoints ({path!r}) is not supported; use a .safetensors file")
        return "safetensors"
    if lower.endswith(".json"):
        return "json"
    if lower.endswith((".bin", ".bincode")):
        return "bincode"
    raise ValueError(
        f"{'save' if for_save else 'load'}: cannot tell the format of {path!r}; "
        "use .safetensors, .json, .bin or .bincode (or a .manifest.json to load)"
    )


def _state_of(target: Any) -> Tuple[Any, Optional[str]]:
    """The state (dict or pairs) of a Module or a raw state, and the module's class name."""
    if isinstance(target, _core.nn.Module) or (hasattr(target, "state_dict") and not isinstance(target, dict)):
        return target.state_dict(), type(target).__name__
    if isinstance(target, dict) or isinstance(target, (list, tuple)):
        return target, None
    raise TypeError(f"save: expected a Module, a dict or (key, tensor) pairs, got {type(target).__name__}")


_SAVERS = {"safetensors": _io.save_safetensors, "json": _io.save_json, "bincode": _io.save_bincode}


def _save(path: PathLike, target: Any, fmt: str, metadata: Optional[Dict[str, str]], manifest: bool) -> str:
    p = os.fspath(path)
    state, module_type = _state_of(target)
    parent = os.path.dirname(p)
    if parent:
        os.makedirs(parent, exist_ok=True)
    _SAVERS[fmt](p, state, metadata, manifest=manifest, module_type=module_type)
    return p


def _load_state(path: str, fmt: str) -> Tuple[StateDict, Dict[str, str]]:
    if fmt == "manifest":
        info = _io.read_manifest(path, verify=True)
        tensors, meta = _load_state(info["weights_path"], info["format"])
        expected = {e["name"]: (e["dtype"], tuple(e["shape"])) for e in info["tensors"]}
        got = {k: (t.dtype, tuple(t.shape)) for k, t in tensors.items()}
        if expected and expected != got:
            raise CheckpointError(f"manifest: {path}: the weights' keys, dtypes or shapes differ from the manifest")
        return tensors, meta
    if fmt == "safetensors":
        return _io.load_safetensors(path)
    if fmt == "json":
        return _io.load_json(path)
    return _io.load_bincode(path)


def _finish(state: StateDict, target: Any, strict: bool) -> Any:
    if target is None:
        return state
    if not hasattr(target, "load_state_dict"):
        raise TypeError(f"load: target must be a Module (or None), got {type(target).__name__}")
    # load_state_dict checks every key and shape before writing anything.
    target.load_state_dict(state, strict=strict)
    return target


def save(path: PathLike, target: Any, *, metadata: Optional[Dict[str, str]] = None, manifest: bool = True) -> str:
    """Saves ``target`` (a Module's ``state_dict()``, a dict or ``(key, tensor)`` pairs) to
    ``path`` in the format its extension names, plus ``<path>.manifest.json``. Returns ``path``."""
    p = os.fspath(path)
    return _save(p, target, _format_of(p, for_save=True), metadata, manifest)


def load(path: PathLike, target: Any = None, *, strict: bool = True) -> Any:
    """Loads a checkpoint. ``target=None`` returns the state dict (``{key: Tensor}``); a Module
    is loaded in place (validated first, so a failed load leaves it unchanged) and returned."""
    p = os.fspath(path)
    fmt = _format_of(p, for_save=False)
    # Read with copies (pread), never a memory map: the values are copied into the module anyway,
    # and a map of a file rewritten during the load faults (SIGBUS) instead of raising.
    state, _ = _load_state(p, fmt)
    return _finish(state, target, strict)


def load_with_metadata(path: PathLike) -> Tuple[StateDict, Dict[str, str]]:
    """Like ``load(path)`` but also returns the file's metadata dict."""
    p = os.fspath(path)
    return _load_state(p, _format_of(p, for_save=False))


def save_safetensors(path: PathLike, target: Any, *, metadata: Optional[Dict[str, str]] = None, manifest: bool = True) -> str:
    """Saves ``target`` (a Module's ``state_dict()``, a dict or ``(key, tensor)`` pairs) as
    safetensors whatever the extension of ``path``, atomically, with ``metadata`` in its header and
    (unless ``manifest=False``) ``<path>.manifest.json``. Returns ``path``."""
    return _save(path, target, "safetensors", metadata, manifest)


def load_safetensors(path: PathLike, target: Any = None, *, strict: bool = True, copy: bool = True) -> Any:
    """Loads a .safetensors file, a directory or a sharded ``*.index.json``: the state dict, or
    ``target`` loaded in place and returned. ``copy=False`` (without a target) returns tensors that
    alias a copy-on-write memory map of the file: no copy, but the file must stay unchanged while
    they live (a truncated or rewritten file makes reads fault with SIGBUS and kills the process).
    With a target the file is always read with copies."""
    state, _ = _io.load_safetensors(os.fspath(path), copy=copy or target is not None)
    return _finish(state, target, strict)


def _is_path(x: Any) -> bool:
    return isinstance(x, (str, bytes, os.PathLike))


def _path_first(op: str, a: Any, b: Any) -> Tuple[Any, Any]:
    """``(path, target)`` from either argument order: ``(path, target)`` (ours) or the original's
    ``(target, path)``, where ``target`` may be None, a Module or a state dict."""
    if _is_path(a) and not _is_path(b):
        return a, b
    if _is_path(b) and not _is_path(a):
        return b, a
    if _is_path(a) and _is_path(b):
        raise TypeError(f"nn.{op}: both arguments are paths ({a!r}, {b!r}); pass one path and one target")
    raise TypeError(f"nn.{op}: expected a file path (str or os.PathLike) and a target, got "
                    f"{type(a).__name__} and {type(b).__name__}")


def save_json(path: Any, target: Any, *, metadata: Optional[Dict[str, str]] = None, manifest: bool = True) -> str:
    """Saves ``target`` (a Module, a state dict or ``(key, tensor)`` pairs) as SpiralTorch JSON plus a
    manifest; returns the path. The original's order ``save_json(target, path)`` is accepted too."""
    path, target = _path_first("save_json", path, target)
    return _save(path, target, "json", metadata, manifest)


def load_json(path: Any, target: Any = None, *, strict: bool = True) -> Any:
    """Loads a SpiralTorch JSON state dict. ``target=None`` returns the state dict
    (``{key: Tensor}``); a Module is loaded in place (validated first) and returned. The
    original's order ``load_json(None_or_module, path)`` is accepted too, so
    ``nn.load_json(None, path)`` returns the state dict as the seed describes."""
    if target is not None or not _is_path(path):
        path, target = _path_first("load_json", path, target)
    state, _ = _io.load_json(os.fspath(path))
    return _finish(state, target, strict)


def save_bincode(path: Any, target: Any, *, metadata: Optional[Dict[str, str]] = None, manifest: bool = True) -> str:
    """``save_json`` in the compact binary format (either argument order)."""
    path, target = _path_first("save_bincode", path, target)
    return _save(path, target, "bincode", metadata, manifest)


def load_bincode(path: Any, target: Any = None, *, strict: bool = True) -> Any:
    """``load_json`` for the compact binary format (either argument order; None gives the state dict)."""
    if target is not None or not _is_path(path):
        path, target = _path_first("load_bincode", path, target)
    state, _ = _io.load_bincode(os.fspath(path))
    return _finish(state, target, strict)
