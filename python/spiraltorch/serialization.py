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

import os
from typing import Any, Dict, Optional, Tuple, Union

from . import _core

__all__ = ["save", "load"]

_STRUCTURE_KEY = "spiraltorch.structure"
PathOrBuffer = Union[str, "os.PathLike[str]", Any]


def _is_state_dict(obj: Any) -> bool:
    return isinstance(obj, dict) and bool(obj) and all(
        isinstance(k, str) and isinstance(v, _core.Tensor) for k, v in obj.items())


def _is_path(f: Any) -> bool:
    return isinstance(f, (str, bytes, os.PathLike))


def save(obj: Any, f: PathOrBuffer, *, metadata: Optional[Dict[str, str]] = None) -> None:
    """Writes ``obj`` (a state dict, a tensor, a NumPy array, or dicts/lists/tuples of tensors,
    NumPy arrays and plain values) to ``f``, a path or a binary file object, as safetensors. The write to a path is
    atomic: a failed save leaves any earlier file untouched. Returns None."""
    meta: Dict[str, str] = dict(metadata or {})
    if _STRUCTURE_KEY in meta:
        raise ValueError(f"save: metadata key '{_STRUCTURE_KEY}' is reserved")
    if _is_state_dict(obj):
        tensors: Dict[str, Any] = {k: v.detach() for k, v in obj.items()}
    else:
        meta[_STRUCTURE_KEY], tensors = _core.io.encode_structure(obj)
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
    arrays). ``map_location`` ("cpu", "cuda:0", a device) moves every tensor there.
    ``weights_only`` (True or False) and ``mmap`` are accepted for PyTorch compatibility and
    change nothing: the file never holds a pickle, so there is no code that weights_only=False
    could let run, and loading is always data only."""
    if kwargs:
        raise TypeError(f"load() got an unexpected keyword argument '{next(iter(kwargs))}'")
    tensors, meta = _read(f)
    if map_location is not None:
        device = str(map_location)
        tensors = {k: v.to(device) for k, v in tensors.items()}
    structure = meta.get(_STRUCTURE_KEY)
    if structure is None:
        return tensors
    return _core.io.decode_structure(structure, tensors)

