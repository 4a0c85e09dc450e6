"""``st.save`` / ``st.load``: PyTorch's habit, backed by safetensors instead of pickle.

A flat ``{str: Tensor}`` dict (a state dict) is written as a plain safetensors file that
any safetensors reader (HF, the ``safetensors`` package) loads with the same keys. Anything
else made of tensors, dicts, lists, tuples, strings, numbers, booleans and ``None`` (an
optimizer state, ``{"model": ..., "epoch": 3}``, a single tensor) is written as the tensors
under generated keys plus a JSON description of the structure in the file's metadata, so
``st.load`` rebuilds it. Nothing is ever unpickled, so loading an untrusted file cannot
run code.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Optional, Tuple, Union

from . import _core

__all__ = ["save", "load"]

_STRUCTURE_KEY = "spiraltorch.structure"
PathOrBuffer = Union[str, "os.PathLike[str]", Any]


def _is_state_dict(obj: Any) -> bool:
    return isinstance(obj, dict) and bool(obj) and all(
        isinstance(k, str) and isinstance(v, _core.Tensor) for k, v in obj.items())


def _encode(obj: Any, tensors: Dict[str, Any], where: str) -> Any:
    """The JSON description of ``obj``; tensors go to ``tensors`` under fresh keys."""
    if isinstance(obj, _core.Tensor):
        key = f"t{len(tensors)}"
        tensors[key] = obj.detach()
        return {"tensor": key, "requires_grad": bool(obj.requires_grad)}
    if obj is None or isinstance(obj, (bool, int, str)):
        return {"value": obj}
    if isinstance(obj, float):
        # JSON has no inf/nan; repr() round-trips every float exactly.
        return {"float": repr(obj)}
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if not isinstance(k, (str, int)) or isinstance(k, bool):
                raise TypeError(f"save: dictionary keys must be str or int, got {type(k).__name__} at {where}")
            items.append([{"str": k} if isinstance(k, str) else {"int": k}, _encode(v, tensors, f"{where}[{k!r}]")])
        return {"dict": items}
    if isinstance(obj, (list, tuple)):
        kind = "list" if isinstance(obj, list) else "tuple"
        return {kind: [_encode(v, tensors, f"{where}[{i}]") for i, v in enumerate(obj)]}
    raise TypeError(
        f"save: cannot store {type(obj).__name__} at {where}; st.save takes tensors and dicts, lists, tuples, "
        "str, int, float, bool and None made of them (no pickle)")


def _decode(desc: Any, tensors: Dict[str, Any]) -> Any:
    if not isinstance(desc, dict) or len(desc) < 1:
        raise _core.CheckpointError(f"load: malformed structure entry {desc!r}")
    if "tensor" in desc:
        key = desc["tensor"]
        if key not in tensors:
            raise _core.CheckpointError(f"load: the structure names tensor '{key}', which the file does not hold")
        t = tensors[key]
        if desc.get("requires_grad"):
            t.requires_grad = True
        return t
    if "value" in desc:
        return desc["value"]
    if "float" in desc:
        return float(desc["float"])
    if "dict" in desc:
        out = {}
        for key_desc, value in desc["dict"]:
            key = key_desc["str"] if "str" in key_desc else int(key_desc["int"])
            out[key] = _decode(value, tensors)
        return out
    if "list" in desc:
        return [_decode(v, tensors) for v in desc["list"]]
    if "tuple" in desc:
        return tuple(_decode(v, tensors) for v in desc["tuple"])
    raise _core.CheckpointError(f"load: unknown structure entry {sorted(desc)}")


def _is_path(f: Any) -> bool:
    return isinstance(f, (str, bytes, os.PathLike))


def save(obj: Any, f: PathOrBuffer, *, metadata: Optional[Dict[str, str]] = None) -> None:
    """Writes ``obj`` (a state dict, a tensor, or dicts/lists/tuples of tensors and plain
    values) to ``f``, a path or a binary file object, as safetensors. The write to a path is
    atomic: a failed save leaves any earlier file untouched. Returns None."""
    meta: Dict[str, str] = dict(metadata or {})
    if _STRUCTURE_KEY in meta:
        raise ValueError(f"save: metadata key '{_STRUCTURE_KEY}' is reserved")
    if _is_state_dict(obj):
        tensors: Dict[str, Any] = {k: v.detach() for k, v in obj.items()}
    else:
        tensors = {}
        meta[_STRUCTURE_KEY] = json.dumps(_encode(obj, tensors, "obj"))
    if _is_path(f):
        _core.io.save_safetensors(os.fsdecode(f), tensors, meta, manifest=False)
    else:
        f.write(_core.io.save_safetensors_bytes(tensors, meta))


def _read(f: PathOrBuffer) -> Tuple[Dict[str, Any], Dict[str, str]]:
    if _is_path(f):
        return _core.io.load_safetensors(os.fsdecode(f), copy=True)
    return _core.io.load_safetensors_bytes(f.read())


def load(f: PathOrBuffer, map_location: Any = None, *, weights_only: bool = True) -> Any:
    """Reads what ``save`` wrote (or any safetensors file) from a path or binary file
    object. Returns the saved object: a ``{key: Tensor}`` dict for a state dict or a plain
    safetensors file, otherwise the saved tensor/structure. ``map_location`` ("cpu",
    "cuda:0") moves every tensor there. ``weights_only`` is accepted for PyTorch
    compatibility; loading never unpickles, so it is always weights-only."""
    if not weights_only:
        raise ValueError("load: weights_only=False would mean unpickling; SpiralTorch files never hold pickles")
    tensors, meta = _read(f)
    if map_location is not None:
        device = str(map_location)
        tensors = {k: v.to(device) for k, v in tensors.items()}
    structure = meta.get(_STRUCTURE_KEY)
    if structure is None:
        return tensors
    try:
        desc = json.loads(structure)
    except json.JSONDecodeError as exc:
        raise _core.CheckpointError(f"load: the file's structure metadata is not JSON ({exc})") from None
    return _decode(desc, tensors)

