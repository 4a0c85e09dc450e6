"""Deployment JSON ("model card"): what a server or reviewer needs to run an exported model.

The card records the model (class, parameter count, architecture when it has one, the
state-dict hash), the inputs and outputs (names, dtypes, shapes with ``"batch"`` for the
dynamic axis, measured by running the model on the example input), the preprocessing the
caller declares, and every artefact file with its size and SHA-256.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import pathlib
from typing import Any, Dict, Mapping, Optional, Union

import numpy as np

from .. import _core
from .._atomic import atomic_write_text
from .architecture import UnsupportedLayerError, describe_architecture, sha256_of

PathLike = Union[str, "os.PathLike[str]"]
CARD_FORMAT = "spiraltorch-deployment-card/1"


def _dtype_name(t: Any) -> str:
    return str(t.dtype).replace("spiraltorch.", "")


def _io_entry(name: str, t: Any, dynamic_batch: bool) -> Dict[str, Any]:
    shape = [int(d) for d in t.shape]
    if dynamic_batch and shape:
        shape[0] = "batch"  # type: ignore[call-overload]
    return {"name": name, "dtype": _dtype_name(t), "shape": shape}


def deployment_card(
    model: Any,
    example_input: Any,
    *,
    name: str = "spiraltorch-model",
    artifacts: Optional[Mapping[str, PathLike]] = None,
    preprocessing: Optional[Mapping[str, Any]] = None,
    input_name: str = "input",
    output_name: str = "output",
    dynamic_batch: bool = True,
    extra: Optional[Mapping[str, Any]] = None,
) -> Dict[str, Any]:
    """Builds the deployment card of ``model`` as a dict. The output entry comes from running
    ``model`` (eval mode, no grad) on ``example_input``; ``artifacts`` maps a kind ("onnx",
    "safetensors", ...) to a file, recorded with its size and SHA-256 (paths relative to the
    card's directory are resolved when written). ``preprocessing`` is recorded as given
    (e.g. ``{"scale": 1/255, "mean": [...], "std": [...]}``); ``{}`` means raw inputs."""
    from ..autograd import no_grad

    x = example_input if isinstance(example_input, _core.Tensor) else _core.tensor(np.asarray(example_input))
    was_training = model.training
    model.eval()
    try:
        with no_grad():
            y = model(x)
    finally:
        model.train(was_training)
    y = y[0] if isinstance(y, tuple) else y
    state = model.state_dict()
    try:
        architecture: Optional[Dict[str, Any]] = describe_architecture(model)
    except UnsupportedLayerError:
        architecture = None
    files = []
    for kind, path in (artifacts or {}).items():
        p = pathlib.Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"deployment_card: artefact {kind!r} at {str(p)!r} does not exist")
        files.append({"kind": kind, "path": p.name, "bytes": p.stat().st_size, "sha256": sha256_of(p)})
    card: Dict[str, Any] = {
        "format": CARD_FORMAT,
        "name": name,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "spiraltorch_version": getattr(__import__("spiraltorch"), "__version__", ""),
        "model": {
            "class": type(model).__name__,
            "parameters": int(sum(int(np.prod(p.shape)) for p in model.parameters())),
            "state_dict_sha256": _core.nn.state_dict_hash(state),
            "architecture": architecture,
        },
        "inputs": [_io_entry(input_name, x, dynamic_batch)],
        "outputs": [_io_entry(output_name, y, dynamic_batch)],
        "preprocessing": dict(preprocessing or {}),
        "artifacts": files,
    }
    if extra:
        card.update(dict(extra))
    return card


def write_deployment_card(card: Mapping[str, Any], path: PathLike) -> pathlib.Path:
    """Writes ``card`` as indented JSON atomically and returns the path."""
    target = pathlib.Path(path)
    atomic_write_text(target, json.dumps(card, indent=2, sort_keys=False) + "\n")
    return target


def verify_deployment_card(card_path: PathLike) -> Dict[str, bool]:
    """Re-hashes every artefact listed in the card (paths relative to the card's directory);
    returns ``{path: matches}``."""
    p = pathlib.Path(card_path)
    card = json.loads(p.read_text())
    if card.get("format") != CARD_FORMAT:
        raise _core.SpiralValueError(f"verify_deployment_card: {str(p)!r} is not a {CARD_FORMAT} file")
    return {f["path"]: (p.parent / f["path"]).is_file() and sha256_of(p.parent / f["path"]) == f["sha256"]
            for f in card["artifacts"]}


__all__ = ["CARD_FORMAT", "deployment_card", "write_deployment_card", "verify_deployment_card"]
