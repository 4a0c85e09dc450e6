"""``st.save`` / ``st.load``: PyTorch's habit, backed by safetensors instead of pickle.

A flat ``{str: Tensor}`` dict (a state dict) is written as a plain safetensors file that
any safetensors reader (HF, the ``safetensors`` package) loads with the same keys. Anything
else made of tensors, dicts, lists, tuples, strings, numbers, booleans and ``None`` (an
optimizer state, ``{"model": ..., "epoch": 3}``, a single tensor, NumPy arrays and scalars) is
written as the tensors under generated keys plus a JSON description of the structure in the
file's metadata (C++ ``st::io::encode_structure``), so ``st.load`` rebuilds it. Nothing is ever
unpickled and the decoder only builds values, so loading an untrusted file cannot run code; a
malformed file raises ``CheckpointError``.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Optional, Tuple, Union

from . import _core

__all__ = ["save", "load"]

_STRUCTURE_KEY = "spiraltorch.structure"
_DEVICES_KEY = "spiraltorch.devices"  # {tensor key: device} for the tensors saved from off the CPU
PathOrBuffer = Union[str, "os.PathLike[str]", Any]


def _is_state_dict(obj: Any) -> bool:
    return isinstance(obj, dict) and bool(obj) and all(
        isinstance(k, str) and isinstance(v, _core.Tensor) for k, v in obj.items())


def _is_path(f: Any) -> bool:
    return isinstance(f, (str, bytes, os.PathLike))


def save(obj: Any, f: PathOrBuffer, *, metadata: Optional[Dict[str, str]] = None) -> None:
    """Writes ``obj`` (a state dict, a tensor, a NumPy array, or dicts/lists/tuples of tensors,
    NumPy arrays and plain values) to ``f``, a path or a binary file object, as safetensors. Tensors
    on a device are copied to the host and their device recorded (``load``'s ``map_location``). The
    write to a path is atomic: a failed save leaves any earlier file untouched. Returns None."""
    meta: Dict[str, str] = dict(metadata or {})
    for reserved in (_STRUCTURE_KEY, _DEVICES_KEY):
        if reserved in meta:
            raise ValueError(f"save: metadata key '{reserved}' is reserved")
    if _is_state_dict(obj):
        tensors: Dict[str, Any] = {k: v.detach() for k, v in obj.items()}
    else:
        meta[_STRUCTURE_KEY], tensors = _core.io.encode_structure(obj)
    devices = {k: str(v.device) for k, v in tensors.items() if isinstance(v, _core.Tensor) and str(v.device) != "cpu"}
    if devices:  # copied to the host; where each came from is kept for map_location's dict and callable forms
        meta[_DEVICES_KEY] = json.dumps(devices, sort_keys=True)
        tensors = {k: v.to("cpu") if k in devices else v for k, v in tensors.items()}
    if _is_path(f):
        _core.io.save_safetensors(os.fsdecode(f), tensors, meta, manifest=False)
    else:
        f.write(_core.io.save_safetensors_bytes(tensors, meta))


def _read(f: PathOrBuffer) -> Tuple[Dict[str, Any], Dict[str, str]]:
    if _is_path(f):
        return _core.io.load_safetensors(os.fsdecode(f), copy=True)
    return _core.io.load_safetensors_bytes(f.read())


def load(f: PathOrBuffer, map_location: Any = None, *, weights_only: Optional[bool] = None, mmap: Any = None,
         **kwargs: Any) -> Any:
    """Reads what ``save`` wrote (or any safetensors file) from a path or binary file
    object. Returns the saved object: a ``{key: Tensor}`` dict for a state dict or a plain
    safetensors file, otherwise the saved tensor/structure (NumPy arrays come back as NumPy
    arrays). Tensors load on the CPU unless ``map_location`` says otherwise, as in PyTorch:
    a device ("cpu", "cuda:0", ``st.device``) moves every tensor there; a dict maps the device a
    tensor was saved from (``"cpu"`` for plain safetensors files) to the one it loads on
    (``{"cuda:1": "cuda:0"}``; unlisted devices load on the CPU); a callable
    ``fn(tensor, location)`` receives each tensor (on the CPU) and the device it was saved from and
    returns the tensor to use, or None to keep it on the CPU (``lambda storage, loc: storage``).
    ``weights_only`` (True or False) and ``mmap`` are accepted for PyTorch compatibility and
    change nothing: the file never holds a pickle, so there is no code that weights_only=False
    could let run, and loading is always data only."""
    if kwargs:
        raise TypeError(f"load() got an unexpected keyword argument '{next(iter(kwargs))}'")
    tensors, meta = _read(f)
    if map_location is not None:
        tensors = _mapped(tensors, meta, map_location)
    structure = meta.get(_STRUCTURE_KEY)
    if structure is None:
        return tensors
    return _core.io.decode_structure(structure, tensors)


def _mapped(tensors: Dict[str, Any], meta: Dict[str, str], map_location: Any) -> Dict[str, Any]:
    """The loaded (CPU) tensors placed as ``map_location`` says (see ``load``); the saved device
    of each comes from the file's metadata, "cpu" where it names none. All placed, or none:
    a failing move raises before anything is returned."""
    try:
        saved = json.loads(meta.get(_DEVICES_KEY, "{}"))
    except ValueError:
        raise _core.CheckpointError(f"load: metadata '{_DEVICES_KEY}' is not valid JSON") from None
    if not isinstance(saved, dict):
        raise _core.CheckpointError(f"load: metadata '{_DEVICES_KEY}' must map tensor keys to devices")
    targets = {str(k): v for k, v in map_location.items()} if isinstance(map_location, dict) else None
    out: Dict[str, Any] = {}
    for key, t in tensors.items():
        location = str(saved.get(key, "cpu"))
        if callable(map_location):
            placed = map_location(t, location)
            if placed is not None and not isinstance(placed, _core.Tensor):
                raise TypeError(f"load: map_location returned {type(placed).__name__} for '{key}', expected a "
                                "Tensor or None")
            out[key] = t if placed is None else placed
        elif targets is not None:
            target = targets.get(location, "cpu")
            out[key] = t if str(target) == "cpu" else t.to(str(target))
        else:
            out[key] = t.to(str(map_location))
    return out

