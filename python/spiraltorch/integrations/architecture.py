"""Architecture descriptions and model bundles: what a server needs to rebuild a model.

``describe_architecture(model)`` turns a tree of native layers (``Sequential``, ``Linear``,
``Conv2d``, ``LSTM``, ...) into a JSON-able dict of constructor arguments;
``build_from_architecture(spec)`` builds a fresh module from it whose ``state_dict`` has the
same keys. ``save_model_bundle`` writes a directory holding ``model.safetensors`` (with its
manifest), ``architecture.json`` and the input description; ``load_model_bundle`` reads it
back. TorchServe archives, BentoML models and ``spiral-export`` all use these bundles.

A Python ``Module`` subclass has its own ``forward``, which no description can capture: such
models are rebuilt by a factory (``"file.py:function"`` or ``"package.module:function"``)
that returns the module; the weights are then loaded into it.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import pathlib
import shutil
import sys
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from .. import _core

nn = _core.nn
PathLike = Union[str, "os.PathLike[str]"]

WEIGHTS_FILE = "model.safetensors"
ARCHITECTURE_FILE = "architecture.json"
BUNDLE_FORMAT = "spiraltorch-model-bundle/1"


class UnsupportedLayerError(_core.SpiralValueError):
    """A layer that an integration cannot describe or export; the message names the layer,
    its path in the model and what is supported."""


def _ints(value: Any) -> Any:
    return list(value) if isinstance(value, (tuple, list)) else value


# Constructor arguments of each native layer, read from its attributes.
_DESCRIBERS: Dict[str, Callable[[Any], Dict[str, Any]]] = {
    "Linear": lambda m: {"in_features": m.in_features, "out_features": m.out_features, "bias": m.bias is not None},
    "Conv1d": lambda m: _conv_args(m),
    "Conv2d": lambda m: _conv_args(m),
    "BatchNorm1d": lambda m: _bn_args(m),
    "BatchNorm2d": lambda m: _bn_args(m),
    "LayerNorm": lambda m: {
        "normalized_shape": list(m.normalized_shape),
        "eps": m.eps,
        "elementwise_affine": m.elementwise_affine,
        "bias": m.bias is not None,
    },
    "ReLU": lambda m: {},
    "SiLU": lambda m: {},
    "Sigmoid": lambda m: {},
    "Tanh": lambda m: {},
    "Identity": lambda m: {},
    "GELU": lambda m: {"approximate": m.approximate},
    "Softmax": lambda m: {"dim": m.dim},
    "Flatten": lambda m: {"start_dim": m.start_dim, "end_dim": m.end_dim},
    "Dropout": lambda m: {"p": m.p},
    "MaxPool2d": lambda m: {
        "kernel_size": _ints(m.kernel_size),
        "stride": _ints(m.stride),
        "padding": _ints(m.padding),
        "dilation": _ints(m.dilation),
        "ceil_mode": m.ceil_mode,
    },
    "AvgPool2d": lambda m: {
        "kernel_size": _ints(m.kernel_size),
        "stride": _ints(m.stride),
        "padding": _ints(m.padding),
        "ceil_mode": m.ceil_mode,
        "count_include_pad": m.count_include_pad,
    },
    "AdaptiveAvgPool2d": lambda m: {"output_size": _ints(m.output_size)},
    "Embedding": lambda m: {"num_embeddings": m.num_embeddings, "embedding_dim": m.embedding_dim,
                            "padding_idx": m.padding_idx},
    "MultiheadAttention": lambda m: {
        "embed_dim": m.embed_dim,
        "num_heads": m.num_heads,
        "dropout": m.dropout,
        "bias": m.in_proj_bias is not None,
        "batch_first": m.batch_first,
    },
    "LSTM": lambda m: _rnn_args(m),
    "GRU": lambda m: _rnn_args(m),
    # A merged adapter is recorded as merged: its weight already holds the low-rank delta.
    "LoraLinear": lambda m: {"in_features": m.in_features, "out_features": m.out_features, "rank": m.rank,
                             "alpha": m.alpha, "dropout": m.dropout, "bias": m.bias is not None, "merged": m.merged},
    "FeatureReorder2d": lambda m: {"channels": m.shape[0], "height": m.shape[1], "width": m.shape[2],
                                   "layout": m.layout, "direction": m.direction},
    "WaveGate": lambda m: {"features": m.features, "curvature": m.curvature},
    "TransformerEncoderLayer": lambda m: {
        "d_model": m.self_attn.embed_dim,
        "nhead": m.self_attn.num_heads,
        "dim_feedforward": m.linear1.out_features,
        "dropout": m.dropout.p,
        "activation": m.activation,
        "batch_first": m.self_attn.batch_first,
        "norm_first": m.norm_first,
        "layer_norm_eps": m.norm1.eps,
    },
    # The copies share one configuration; their values come from the state dict.
    "TransformerEncoder": lambda m: {
        "encoder_layer": _DESCRIBERS["TransformerEncoderLayer"](m.layers[0]),
        "num_layers": m.num_layers,
        "norm": None if m.norm is None else describe_architecture(m.norm, _path="norm"),
    },
}


def _conv_args(m: Any) -> Dict[str, Any]:
    return {
        "in_channels": m.in_channels,
        "out_channels": m.out_channels,
        "kernel_size": _ints(m.kernel_size),
        "stride": _ints(m.stride),
        "padding": _ints(m.padding),
        "dilation": _ints(m.dilation),
        "groups": m.groups,
        "bias": m.bias is not None,
    }


def _bn_args(m: Any) -> Dict[str, Any]:
    return {"num_features": m.num_features, "eps": m.eps, "momentum": m.momentum, "affine": m.affine,
            "track_running_stats": m.track_running_stats}


def _rnn_args(m: Any) -> Dict[str, Any]:
    if m.bidirectional:
        raise UnsupportedLayerError(f"describe_architecture: bidirectional {type(m).__name__} is not supported")
    return {"input_size": m.input_size, "hidden_size": m.hidden_size, "num_layers": m.num_layers, "bias": m.bias,
            "batch_first": m.batch_first, "dropout": m.dropout}


def layer_kind(module: Any) -> Optional[str]:
    """The native layer name of ``module`` ("Linear", "Sequential", ...) when it is exactly
    that native class, else None (a Python subclass or a layer no integration knows)."""
    name = type(module).__name__
    if name == "Sequential" and type(module) is nn.Sequential:
        return name
    native = getattr(nn, name, None)
    if native is not None and type(module) is native and name in _DESCRIBERS:
        return name
    return None


SUPPORTED_LAYERS: tuple = tuple(sorted(_DESCRIBERS)) + ("Sequential",)


def describe_architecture(model: Any, *, _path: str = "") -> Dict[str, Any]:
    """A JSON-able description of ``model``: ``{"type": name, "args": {...}}`` for a native
    layer, ``{"type": "Sequential", "children": [{"key": k, "module": ...}, ...]}`` for a
    Sequential. Raises ``UnsupportedLayerError`` naming the first layer that has no
    description (a Python ``Module`` subclass, or a layer outside ``SUPPORTED_LAYERS``)."""
    kind = layer_kind(model)
    where = _path or "<root>"
    if kind is None:
        python_defined = not type(model).__module__.startswith("spiraltorch._core")
        why = "a Python Module subclass with its own forward" if python_defined else "a layer with no description"
        raise UnsupportedLayerError(
            f"describe_architecture: {type(model).__name__} at {where} is {why}; supported: "
            f"{', '.join(SUPPORTED_LAYERS)} (rebuild other models with a factory)"
        )
    if kind == "Sequential":
        children = []
        for key, child in model.named_children():
            sub = f"{_path}.{key}" if _path else key
            children.append({"key": key, "module": describe_architecture(child, _path=sub)})
        return {"type": "Sequential", "children": children}
    return {"type": kind, "args": _DESCRIBERS[kind](model)}


def build_from_architecture(spec: Dict[str, Any], *, name: str = "") -> Any:
    """A new module built from ``describe_architecture``'s output (fresh random weights; load
    a state dict into it). Unknown types raise ``UnsupportedLayerError``."""
    if not isinstance(spec, dict) or "type" not in spec:
        raise _core.SpiralValueError(f"build_from_architecture: expected a dict with a 'type', got {spec!r:.80}")
    kind = spec["type"]
    if kind == "Sequential":
        layers = []
        for position, entry in enumerate(spec.get("children", [])):
            key = str(entry["key"])
            layers.append(build_from_architecture(entry["module"], name="" if key == str(position) else key))
        return nn.Sequential(*layers, name=name)
    if kind not in _DESCRIBERS:
        raise UnsupportedLayerError(f"build_from_architecture: unknown layer type {kind!r}; supported: "
                                    f"{', '.join(SUPPORTED_LAYERS)}")
    args = dict(spec.get("args", {}))
    cls = getattr(nn, kind)
    for key in ("kernel_size", "stride", "padding", "dilation", "output_size", "normalized_shape"):
        if isinstance(args.get(key), list):
            args[key] = tuple(args[key])
    if kind in ("ReLU", "SiLU", "Sigmoid", "Tanh", "Identity"):
        return cls(name=name)
    if kind == "Dropout":
        return cls(args["p"], name=name)
    if kind == "TransformerEncoder":
        layer = nn.TransformerEncoderLayer(**args["encoder_layer"])
        norm = None if args.get("norm") is None else build_from_architecture(args["norm"])
        return cls(layer, args["num_layers"], norm=norm, name=name)
    if kind == "LoraLinear":
        merged = bool(args.pop("merged", False))
        layer = cls(**args, name=name)
        if merged:
            layer.merge()  # sets the flag; the loaded state dict then replaces every weight
        return layer
    return cls(**args, name=name)


def load_factory(factory: str) -> Callable[[], Any]:
    """The callable named by ``"path/to/file.py:function"`` or ``"package.module:function"``."""
    if ":" not in factory:
        raise _core.SpiralValueError(f"load_factory: {factory!r} must look like 'file.py:function' or 'module:function'")
    target, func = factory.rsplit(":", 1)
    if target.endswith(".py"):
        path = pathlib.Path(target)
        if not path.is_file():
            raise FileNotFoundError(f"load_factory: no file {str(path)!r}")
        mod_name = f"_spiral_factory_{hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]}"
        spec = importlib.util.spec_from_file_location(mod_name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = module
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(target)
    fn = getattr(module, func, None)
    if not callable(fn):
        raise _core.SpiralValueError(f"load_factory: {target!r} has no callable {func!r}")
    return fn


def sha256_of(path: PathLike) -> str:
    """The SHA-256 hex digest of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def save_model_bundle(
    model: Any,
    directory: PathLike,
    *,
    input_shape: Optional[Sequence[Optional[int]]] = None,
    input_dtype: str = "float32",
    preprocessing: Optional[Dict[str, Any]] = None,
    factory: Optional[str] = None,
) -> pathlib.Path:
    """Writes ``model`` to ``directory``: ``model.safetensors`` (+ its manifest) and
    ``architecture.json`` holding the architecture (or, for Python modules, the ``factory``
    that rebuilds it), the input shape (``None`` marks the batch axis), the input dtype and
    the preprocessing the server applies. Returns the directory."""
    if factory is None:
        architecture: Optional[Dict[str, Any]] = describe_architecture(model)
    else:
        architecture = None
        load_factory(factory)  # fails now rather than at serving time
    if input_dtype not in ("float32", "float64", "int64"):
        raise _core.SpiralValueError(f"save_model_bundle: input_dtype must be float32, float64 or int64, got {input_dtype!r}")
    out = pathlib.Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    from ..nn.serialization import save

    save(str(out / WEIGHTS_FILE), model)
    if factory is not None and factory.rsplit(":", 1)[0].endswith(".py"):
        source, func = factory.rsplit(":", 1)
        shutil.copyfile(source, out / pathlib.Path(source).name)
        factory = f"{pathlib.Path(source).name}:{func}"
    meta = {
        "format": BUNDLE_FORMAT,
        "architecture": architecture,
        "factory": factory,
        "input_shape": None if input_shape is None else [None if d is None else int(d) for d in input_shape],
        "input_dtype": input_dtype,
        "preprocessing": preprocessing or {},
        "weights": WEIGHTS_FILE,
        "weights_sha256": sha256_of(out / WEIGHTS_FILE),
    }
    tmp = out / (ARCHITECTURE_FILE + ".tmp")
    tmp.write_text(json.dumps(meta, indent=2))
    os.replace(tmp, out / ARCHITECTURE_FILE)
    return out


def read_bundle_meta(directory: PathLike) -> Dict[str, Any]:
    """The ``architecture.json`` of a bundle, checked for its format."""
    path = pathlib.Path(directory) / ARCHITECTURE_FILE
    if not path.is_file():
        raise _core.CheckpointError(f"load_model_bundle: {str(path)!r} does not exist")
    meta = json.loads(path.read_text())
    if meta.get("format") != BUNDLE_FORMAT:
        raise _core.CheckpointError(f"load_model_bundle: {str(path)!r} has format {meta.get('format')!r}, expected {BUNDLE_FORMAT!r}")
    return meta


def load_model_bundle(directory: PathLike, *, weights: Optional[PathLike] = None) -> Any:
    """Rebuilds the model saved by ``save_model_bundle`` (architecture or factory), checks the
    weights' SHA-256, loads them strictly and returns the module in eval mode."""
    base = pathlib.Path(directory)
    meta = read_bundle_meta(base)
    weights_path = pathlib.Path(weights) if weights is not None else base / meta["weights"]
    if weights is None and sha256_of(weights_path) != meta["weights_sha256"]:
        raise _core.CheckpointError(f"load_model_bundle: {str(weights_path)!r} does not match the recorded SHA-256")
    if meta.get("architecture") is not None:
        model = build_from_architecture(meta["architecture"])
    else:
        factory = meta["factory"]
        target = factory.rsplit(":", 1)[0]
        if target.endswith(".py") and not os.path.isabs(target):
            factory = str(base / target) + ":" + factory.rsplit(":", 1)[1]
        model = load_factory(factory)()
    from ..nn.serialization import load_safetensors

    model.load_state_dict(load_safetensors(str(weights_path)))
    model.eval()
    return model


__all__ = [
    "UnsupportedLayerError",
    "SUPPORTED_LAYERS",
    "layer_kind",
    "describe_architecture",
    "build_from_architecture",
    "load_factory",
    "sha256_of",
    "save_model_bundle",
    "read_bundle_meta",
    "load_model_bundle",
]
