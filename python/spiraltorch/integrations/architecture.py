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

Trust: a bundle whose architecture is described by data loads without running any code from
it. A bundle that names a factory runs that Python code, so ``load_model_bundle`` refuses it
unless the caller passes ``trust_code=True`` (``spiral-export --trust-code``). Every path a
bundle names (weights, factory file) must stay inside its directory, and the sizes the
architecture declares are checked against its weights file before anything is allocated. The
recorded SHA-256 comes from the bundle itself: it detects a damaged weights file, not a
deliberately altered bundle.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import pathlib
import shutil
import stat
import sys
import tempfile
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

from .. import _core
from .._atomic import _umask, atomic_write_bytes, atomic_write_text, fsync_directory

nn = _core.nn
PathLike = Union[str, "os.PathLike[str]"]

WEIGHTS_FILE = "model.safetensors"
ARCHITECTURE_FILE = "architecture.json"
BUNDLE_FORMAT = "spiraltorch-model-bundle/1"

# Bounds on what an architecture description may declare (checked before anything is built).
MAX_META_BYTES = 16 << 20  # architecture.json
MAX_DEPTH = 64  # nesting of Sequential / nested specs and of argument lists
MAX_NODES = 100_000  # layers in one description
MAX_LIST = 64  # entries of one argument list (kernel sizes, normalized_shape)
MAX_DIM = 2**31 - 1  # |integer argument|
MAX_ELEMENTS = 2**34  # parameter elements when no weights file bounds them (64 GiB of float32)


class UnsupportedLayerError(_core.SpiralValueError):
    """A layer that an integration cannot describe or export; the message names the layer,
    its path in the model and what is supported."""


def known_layer_kind(prefix: str, model: Any, path: str, otherwise: str, supported: str) -> Tuple[str, str]:
    """``(layer_kind(model), where)`` with ``where`` the path or ``<root>``; for a layer with no
    kind, ``UnsupportedLayerError``: ``prefix`` (the integration), the layer's type and path, why
    (a Python subclass with its own forward, else ``otherwise``) and ``supported``."""
    kind, where = layer_kind(model), path or "<root>"
    if kind is None:
        python_defined = not type(model).__module__.startswith("spiraltorch._core")
        why = "a Python Module subclass with its own forward" if python_defined else otherwise
        raise UnsupportedLayerError(f"{prefix} {type(model).__name__} at {where} is {why}; {supported}")
    return kind, where


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
    "RNN": lambda m: {**_rnn_args(m), "nonlinearity": m.nonlinearity},
    "LSTM": lambda m: {**_rnn_args(m), "proj_size": m.proj_size},
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
    return {"input_size": m.input_size, "hidden_size": m.hidden_size, "num_layers": m.num_layers, "bias": m.bias,
            "batch_first": m.batch_first, "dropout": m.dropout, "bidirectional": m.bidirectional}


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
    kind, where = known_layer_kind(
        "describe_architecture:", model, _path, "a layer with no description",
        f"supported: {', '.join(SUPPORTED_LAYERS)} (rebuild other models with a factory)",
    )
    if kind == "Sequential":
        children = []
        for key, child in model.named_children():
            sub = f"{_path}.{key}" if _path else key
            children.append({"key": key, "module": describe_architecture(child, _path=sub)})
        return {"type": "Sequential", "children": children}
    return {"type": kind, "args": _DESCRIBERS[kind](model)}


def _product(values: Any) -> int:
    out = 1
    for v in values if isinstance(values, (list, tuple)) else [values]:
        out *= v
    return out


def _kernel_elements(args: Dict[str, Any], dims: int) -> int:
    k = args.get("kernel_size", 1)
    return _product(k) if isinstance(k, (list, tuple)) else k ** dims


def _conv_elements(args: Dict[str, Any], dims: int) -> int:
    groups = max(int(args.get("groups", 1)), 1)
    out = args["out_channels"]
    return out * (args["in_channels"] // groups) * _kernel_elements(args, dims) + (out if args.get("bias", True) else 0)


def _rnn_elements(args: Dict[str, Any], gates: int) -> int:
    h, layers = args["hidden_size"], args.get("num_layers", 1)
    p = args.get("proj_size", 0) or h  # features of h: the projection's where there is one
    dirs = 2 if args.get("bidirectional", False) else 1  # each direction its own weights
    bias = 2 * gates * h if args.get("bias", True) else 0
    proj = p * h if args.get("proj_size", 0) else 0  # weight_hr
    if layers < 1:
        return 0
    first = gates * h * (args["input_size"] + p) + bias + proj
    # later layers read both directions' outputs (dirs * p features)
    return dirs * (first + (layers - 1) * (gates * h * (dirs * p + p) + bias + proj))


def _encoder_layer_elements(args: Dict[str, Any]) -> int:
    d, ff = args["d_model"], args.get("dim_feedforward", 2048)
    attention = 4 * d * d + 4 * d
    return attention + (d * ff + ff) + (ff * d + d) + 2 * (2 * d)


# Elements of the state dict each layer creates (parameters and buffers), from its arguments;
# layers absent here create none. A bundle's architecture must not declare more than its
# weights file holds, so a crafted description cannot make the loader allocate more than that.
_ELEMENTS: Dict[str, Callable[[Dict[str, Any]], int]] = {
    "Linear": lambda a: a["in_features"] * a["out_features"] + (a["out_features"] if a.get("bias", True) else 0),
    "LoraLinear": lambda a: (a["in_features"] * a["out_features"] + (a["out_features"] if a.get("bias", True) else 0)
                             + a.get("rank", 4) * (a["in_features"] + a["out_features"])),
    "Conv1d": lambda a: _conv_elements(a, 1),
    "Conv2d": lambda a: _conv_elements(a, 2),
    "BatchNorm1d": lambda a: (2 * a["num_features"] * bool(a.get("affine", True))
                              + (2 * a["num_features"] + 1) * bool(a.get("track_running_stats", True))),
    "BatchNorm2d": lambda a: (2 * a["num_features"] * bool(a.get("affine", True))
                              + (2 * a["num_features"] + 1) * bool(a.get("track_running_stats", True))),
    "LayerNorm": lambda a: (_product(a["normalized_shape"]) * bool(a.get("elementwise_affine", True))
                            * (1 + bool(a.get("bias", True)))),
    "Embedding": lambda a: a["num_embeddings"] * a["embedding_dim"],
    "MultiheadAttention": lambda a: 4 * a["embed_dim"] ** 2 + (4 * a["embed_dim"] if a.get("bias", True) else 0),
    "RNN": lambda a: _rnn_elements(a, 1),
    "LSTM": lambda a: _rnn_elements(a, 4),
    "GRU": lambda a: _rnn_elements(a, 3),
    "WaveGate": lambda a: 2 * a["features"] * a["features"] + 2 * a["features"],
    "TransformerEncoderLayer": _encoder_layer_elements,
    "TransformerEncoder": lambda a: a["num_layers"] * _encoder_layer_elements(a["encoder_layer"]),
}

# Products a layer computes from its arguments at run time, bounded like a single size.
_EXTENTS: Dict[str, Callable[[Dict[str, Any]], int]] = {
    "FeatureReorder2d": lambda a: a["channels"] * a["height"] * a["width"],
}


def _magnitudes(v: Any) -> Any:
    """``v`` with every integer replaced by its absolute value (so that a negative argument,
    which the constructors reject anyway, cannot offset another in a count)."""
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return abs(v)
    if isinstance(v, list):
        return [_magnitudes(x) for x in v]
    if isinstance(v, dict):
        return {k: _magnitudes(x) for k, x in v.items()}
    return v


def declared_elements(spec: Dict[str, Any]) -> int:
    """The number of state-dict elements (parameters and buffers) a module built from ``spec``
    holds, computed from the description alone, without building it. A layer whose arguments
    are not well formed counts 0 (``build_from_architecture`` reports it)."""
    if not isinstance(spec, dict):
        return 0
    if spec.get("type") == "Sequential":
        children = spec.get("children", [])
        return sum(declared_elements(e.get("module")) for e in children if isinstance(e, dict)) \
            if isinstance(children, list) else 0
    args = spec.get("args", {})
    if not isinstance(args, dict):
        return 0
    fn = _ELEMENTS.get(spec.get("type"))  # type: ignore[arg-type]
    try:
        n = fn(_magnitudes(args)) if fn is not None else 0
    except (TypeError, KeyError, ValueError, AttributeError, ZeroDivisionError, OverflowError):
        n = 0
    if isinstance(n, float):
        n = 0 if n != n else int(min(n, 2.0 ** 80))
    if not isinstance(n, int) or isinstance(n, bool):
        n = 0
    if spec.get("type") == "TransformerEncoder" and isinstance(args.get("norm"), dict):
        n += declared_elements(args["norm"])
    return n


def _check_spec(spec: Any, op: str, max_elements: int, budget: str, error: type) -> None:
    """Checks a description before anything is allocated: its shape (dicts with a ``type``,
    Sequential children with keys), nesting and size, every integer argument within
    ``MAX_DIM``, and the state-dict elements it declares (counted layer by layer) within
    ``max_elements``. Raises ``error`` naming the layer."""
    nodes = 0
    total = 0

    def values(v: Any, where: str, field: str, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise error(f"{op}: {where}: argument {field} is nested deeper than {MAX_DEPTH} levels")
        if v is None or isinstance(v, (bool, float)):
            return
        if isinstance(v, int):
            if abs(v) > MAX_DIM:
                raise error(f"{op}: {where}: {field} = {v} is outside the supported range [-{MAX_DIM}, {MAX_DIM}]")
            return
        if isinstance(v, str):
            if len(v) > 256:
                raise error(f"{op}: {where}: {field} is a string of {len(v)} characters (at most 256)")
            return
        if isinstance(v, (list, dict)):
            if len(v) > MAX_LIST:
                raise error(f"{op}: {where}: {field} has {len(v)} entries (at most {MAX_LIST})")
            items = v.items() if isinstance(v, dict) else enumerate(v)
            for k, x in items:
                values(x, where, f"{field}[{k!r}]", depth + 1)
            return
        raise error(f"{op}: {where}: {field} has unsupported type {type(v).__name__}")

    def visit(node: Any, path: str, depth: int) -> None:
        nonlocal nodes, total
        where = path or "<root>"
        if depth > MAX_DEPTH:
            raise error(f"{op}: the description is nested deeper than {MAX_DEPTH} levels at {where}")
        if not isinstance(node, dict) or not isinstance(node.get("type"), str):
            raise error(f"{op}: expected a dict with a 'type' at {where}, got {node!r:.80}")
        nodes += 1
        if nodes > MAX_NODES:
            raise error(f"{op}: the description has more than {MAX_NODES} layers")
        kind = node["type"]
        if kind == "Sequential":
            children = node.get("children", [])
            if not isinstance(children, list):
                raise error(f"{op}: 'children' of the Sequential at {where} must be a list")
            for position, entry in enumerate(children):
                if not isinstance(entry, dict) or "module" not in entry or not isinstance(entry.get("key"), (str, int)) \
                        or isinstance(entry.get("key"), bool) or len(str(entry.get("key"))) > 256:
                    raise error(f"{op}: child {position} of the Sequential at {where} must be "
                                f"{{'key': name, 'module': description}}")
                key = str(entry["key"])
                visit(entry["module"], f"{path}.{key}" if path else key, depth + 1)
            return
        args = node.get("args", {})
        if not isinstance(args, dict):
            raise error(f"{op}: 'args' of {kind} at {where} must be a dict")
        label = f"{kind} at {where}"
        for field, v in args.items():
            if kind == "TransformerEncoder" and field == "norm" and v is not None:
                visit(v, f"{path}.norm" if path else "norm", depth + 1)
            else:
                values(v, label, str(field), depth + 1)
        extent = _EXTENTS.get(kind)
        if extent is not None:
            try:
                size = extent(args)
            except (TypeError, KeyError):
                size = 0
            if isinstance(size, int) and size > MAX_DIM:
                raise error(f"{op}: {label} declares {size} features per sample (at most {MAX_DIM})")
        mine = declared_elements({"type": kind, "args": {k: v for k, v in args.items() if k != "norm"}})
        total += mine
        if total > max_elements:
            raise error(f"{op}: the description declares {total} state-dict elements by {label} "
                        f"({mine} there), more than {budget}")

    visit(spec, "", 0)


def build_from_architecture(spec: Dict[str, Any], *, name: str = "", max_elements: Optional[int] = None) -> Any:
    """A new module built from ``describe_architecture``'s output (fresh random weights; load
    a state dict into it). The description is checked before anything is allocated: nesting
    (``MAX_DEPTH``), layer count (``MAX_NODES``), every integer argument within ``MAX_DIM`` and
    the parameter and buffer elements it declares within ``max_elements`` (default
    ``MAX_ELEMENTS``); a description that breaks one raises ``SpiralValueError`` naming the
    layer. Unknown types raise ``UnsupportedLayerError``."""
    limit = MAX_ELEMENTS if max_elements is None else int(max_elements)
    _check_spec(spec, "build_from_architecture", limit, f"the limit of {limit}", _core.SpiralValueError)
    return _build(spec, name)


def _build(spec: Dict[str, Any], name: str) -> Any:
    kind = spec["type"]
    if kind == "Sequential":
        layers = []
        for position, entry in enumerate(spec.get("children", [])):
            key = str(entry["key"])
            layers.append(_build(entry["module"], "" if key == str(position) else key))
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
        norm = None if args.get("norm") is None else _build(args["norm"], "")
        return cls(layer, args["num_layers"], norm=norm, name=name)
    if kind == "LoraLinear":
        merged = bool(args.pop("merged", False))
        layer = cls(**args, name=name)
        if merged:
            layer.merge()  # sets the flag; the loaded state dict then replaces every weight
        return layer
    return cls(**args, name=name)


def load_factory(factory: str) -> Callable[[], Any]:
    """The callable named by ``"path/to/file.py:function"`` or ``"package.module:function"``.
    This executes the named file or imports the named module: call it only for code you trust
    (``load_model_bundle`` does so for a bundle's factory only with ``trust_code=True``)."""
    if not isinstance(factory, str) or ":" not in factory:
        raise _core.SpiralValueError(f"load_factory: {factory!r} must look like 'file.py:function' or 'module:function'")
    target, func = factory.rsplit(":", 1)
    if not func.isidentifier():
        raise _core.SpiralValueError(f"load_factory: {func!r} in {factory!r} is not a function name")
    if target.endswith(".py"):
        path = pathlib.Path(target)
        if not path.is_file():
            raise FileNotFoundError(f"load_factory: no file {str(path)!r}")
        mod_name = f"_spiral_factory_{hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]}"
        spec = importlib.util.spec_from_file_location(mod_name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(mod_name, None)
            raise
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


def _owned_entries(directory: pathlib.Path) -> set:
    """The names an existing bundle directory may hold that a re-save replaces: its weights,
    manifest, architecture file, factory file, bytecode cache and leftover temporaries."""
    owned = {WEIGHTS_FILE, WEIGHTS_FILE + ".manifest.json", ARCHITECTURE_FILE, "__pycache__"}
    try:
        factory = read_bundle_meta(directory).get("factory")
    except (_core.CheckpointError, OSError):
        factory = None
    if isinstance(factory, str) and ":" in factory and factory.rsplit(":", 1)[0].endswith(".py"):
        owned.add(factory.rsplit(":", 1)[0])
    return owned


def _publish(stage: pathlib.Path, final: pathlib.Path) -> None:
    """Puts the bundle built in ``stage`` at ``final``: renamed into place when ``final`` does
    not exist; moved in file by file (``architecture.json`` last) when ``final`` is a directory
    holding no bundle; swapped in for an existing bundle (old renamed aside, new renamed in, old
    removed), so the old bundle stays loadable until the new one is complete."""
    parent = final.parent
    if not os.path.lexists(final):
        os.chmod(stage, 0o777 & ~_umask())
        os.rename(stage, final)
    elif not (final / ARCHITECTURE_FILE).exists():
        for name in sorted(os.listdir(stage), key=lambda n: n == ARCHITECTURE_FILE):
            os.replace(stage / name, final / name)
        os.rmdir(stage)
        fsync_directory(final)
    else:
        os.chmod(stage, stat.S_IMODE(os.stat(final).st_mode))
        aside = pathlib.Path(tempfile.mkdtemp(dir=parent, prefix=f".{final.name}.old-"))
        os.rename(final, aside)  # onto the empty directory just made for it
        try:
            os.rename(stage, final)
        except BaseException:
            os.rename(aside, final)
            raise
        shutil.rmtree(aside, ignore_errors=True)
    fsync_directory(parent)


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
    that rebuilds it; a ``.py`` factory file is copied into the bundle), the input shape
    (``None`` marks the batch axis), the input dtype and the preprocessing the server applies.

    The bundle is built in a temporary sibling directory and renamed into place; an existing
    bundle at ``directory`` stays loadable until the new one replaces it. A directory that
    holds a bundle and other files is refused (``SpiralValueError``) rather than replaced;
    an existing directory without a bundle receives the files, ``architecture.json`` last.
    Returns the directory."""
    if factory is None:
        architecture: Optional[Dict[str, Any]] = describe_architecture(model)
    else:
        architecture = None
        load_factory(factory)  # fails now rather than at serving time
    if input_dtype not in ("float32", "float64", "int64"):
        raise _core.SpiralValueError(f"save_model_bundle: input_dtype must be float32, float64 or int64, got {input_dtype!r}")
    out = pathlib.Path(directory)
    final = pathlib.Path(os.path.realpath(out))
    if os.path.lexists(final) and not final.is_dir():
        raise _core.SpiralValueError(f"save_model_bundle: {str(out)!r} exists and is not a directory")
    if (final / ARCHITECTURE_FILE).exists():
        foreign = sorted(set(os.listdir(final)) - _owned_entries(final))
        foreign = [n for n in foreign if not (n.startswith(".") and ".tmp" in n)]
        if foreign:
            raise _core.SpiralValueError(
                f"save_model_bundle: {str(out)!r} holds a bundle and other files {foreign[:5]}; replacing the bundle "
                "would remove them: save to a new directory or move them out")
    final.parent.mkdir(parents=True, exist_ok=True)
    stage = pathlib.Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{final.name}.tmp-"))
    try:
        from ..nn.serialization import save

        save(str(stage / WEIGHTS_FILE), model)
        if factory is not None and factory.rsplit(":", 1)[0].endswith(".py"):
            source, func = factory.rsplit(":", 1)
            atomic_write_bytes(stage / pathlib.Path(source).name, pathlib.Path(source).read_bytes())
            factory = f"{pathlib.Path(source).name}:{func}"
        meta = {
            "format": BUNDLE_FORMAT,
            "architecture": architecture,
            "factory": factory,
            "input_shape": None if input_shape is None else [None if d is None else int(d) for d in input_shape],
            "input_dtype": input_dtype,
            "preprocessing": preprocessing or {},
            "weights": WEIGHTS_FILE,
            "weights_sha256": sha256_of(stage / WEIGHTS_FILE),
        }
        atomic_write_text(stage / ARCHITECTURE_FILE, json.dumps(meta, indent=2))
        _publish(stage, final)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return out


def _inside(base: pathlib.Path, name: Any, what: str) -> pathlib.Path:
    """``base / name`` resolved (symlinks followed), refused with ``CheckpointError`` unless
    it is a relative path that stays inside ``base``."""
    if not isinstance(name, str) or not name:
        raise _core.CheckpointError(f"load_model_bundle: {str(base)!r}: the {what} path must be a non-empty string, "
                                    f"got {name!r:.80}")
    rel = pathlib.PurePosixPath(name)
    if rel.is_absolute() or os.path.isabs(name):
        raise _core.CheckpointError(f"load_model_bundle: {str(base)!r}: the {what} path {name!r} is absolute; "
                                    "a bundle may only name files inside its directory")
    if ".." in rel.parts:
        raise _core.CheckpointError(f"load_model_bundle: {str(base)!r}: the {what} path {name!r} leaves the bundle "
                                    "directory")
    try:
        root = base.resolve()
        full = (root / rel).resolve()
    except (OSError, ValueError, RuntimeError) as exc:
        raise _core.CheckpointError(f"load_model_bundle: {str(base)!r}: the {what} path {name!r} does not resolve: "
                                    f"{exc}") from None
    if full != root and not full.is_relative_to(root):
        raise _core.CheckpointError(f"load_model_bundle: {str(base)!r}: the {what} path {name!r} resolves to "
                                    f"{str(full)!r}, outside the bundle directory")
    return full


def _read_limited(path: pathlib.Path, limit: int, op: str) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (FIFOs and devices refused
    before anything blocks on them), else ``CheckpointError``."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise _core.CheckpointError(f"{op}: cannot open {str(path)!r}: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _core.CheckpointError(f"{op}: {str(path)!r} is not a regular file")
        if info.st_size > limit:
            raise _core.CheckpointError(f"{op}: {str(path)!r} is {info.st_size} bytes, more than the {limit} allowed")
        chunks, size = [], 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            size += len(chunk)
            if size > limit:
                raise _core.CheckpointError(f"{op}: {str(path)!r} grew past the {limit} bytes allowed")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_bundle_meta(directory: PathLike) -> Dict[str, Any]:
    """The ``architecture.json`` of a bundle, checked for its format and the types of its
    fields (at most ``MAX_META_BYTES``; a malformed file raises ``CheckpointError``). Reading
    it runs no code."""
    base = pathlib.Path(directory)
    path = base / ARCHITECTURE_FILE
    if not path.exists():
        raise _core.CheckpointError(f"load_model_bundle: {str(path)!r} does not exist")
    _inside(base, ARCHITECTURE_FILE, "architecture file")
    raw = _read_limited(path, MAX_META_BYTES, "load_model_bundle")
    try:
        meta = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise _core.CheckpointError(f"load_model_bundle: {str(path)!r} is not valid JSON: {exc}") from None
    if not isinstance(meta, dict):
        raise _core.CheckpointError(f"load_model_bundle: {str(path)!r} must hold a JSON object")
    if meta.get("format") != BUNDLE_FORMAT:
        raise _core.CheckpointError(f"load_model_bundle: {str(path)!r} has format {meta.get('format')!r:.80}, "
                                    f"expected {BUNDLE_FORMAT!r}")

    def bad(field: str, want: str) -> None:
        raise _core.CheckpointError(f"load_model_bundle: {str(path)!r}: {field} must be {want}, "
                                    f"got {meta.get(field)!r:.80}")

    if not isinstance(meta.get("weights"), str):
        bad("weights", "a file name")
    digest = meta.get("weights_sha256")
    if not (isinstance(digest, str) and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)):
        bad("weights_sha256", "a SHA-256 hex digest")
    arch, factory = meta.get("architecture"), meta.get("factory")
    if (arch is None) == (factory is None):
        raise _core.CheckpointError(f"load_model_bundle: {str(path)!r} must name exactly one of architecture and factory")
    if arch is not None and not isinstance(arch, dict):
        bad("architecture", "an object")
    if factory is not None and not (isinstance(factory, str) and ":" in factory):
        bad("factory", "'file.py:function' or 'module:function'")
    shape = meta.get("input_shape")
    if shape is not None and not (isinstance(shape, list) and len(shape) <= MAX_LIST and all(
            d is None or (isinstance(d, int) and not isinstance(d, bool) and 0 < d <= MAX_DIM) for d in shape)):
        bad("input_shape", "a list of positive sizes (null for the batch axis)")
    if meta.get("input_dtype", "float32") not in ("float32", "float64", "int64"):
        bad("input_dtype", "float32, float64 or int64")
    if not isinstance(meta.get("preprocessing", {}), dict):
        bad("preprocessing", "an object")
    return meta


def bundle_factory(directory: PathLike, meta: Optional[Dict[str, Any]] = None, *, trust_code: bool = False) -> str:
    """The factory a bundle names, ready for ``load_factory``: a ``.py`` file resolved inside
    the bundle (an absolute path, ``..`` or a symlink out of it raises ``CheckpointError``), or
    a ``package.module:function``. Without ``trust_code=True`` it raises ``CheckpointError``
    naming the factory, since loading it runs Python code the bundle chose; a factory file or
    bundle directory that is world-writable or owned by another non-root user is refused even
    with it, as plugin directories are."""
    base = pathlib.Path(directory)
    meta = read_bundle_meta(base) if meta is None else meta
    factory = meta.get("factory")
    where = str(base / ARCHITECTURE_FILE)
    if not isinstance(factory, str) or ":" not in factory:
        raise _core.CheckpointError(f"load_model_bundle: {where!r} names no factory")
    if not trust_code:
        raise _core.CheckpointError(
            f"load_model_bundle: {where!r} rebuilds the model with the factory {factory!r}, which runs Python code "
            "from the bundle; pass trust_code=True (spiral-export --trust-code, SPIRALTORCH_TRUST_CODE=1 for the "
            "TorchServe handler) only if you trust where the bundle came from")
    target, func = factory.rsplit(":", 1)
    if not func.isidentifier():
        raise _core.CheckpointError(f"load_model_bundle: {where!r}: {func!r} in the factory is not a function name")
    if target.endswith(".py"):
        path = _inside(base, target, "factory file")
        if not path.is_file():
            raise _core.CheckpointError(f"load_model_bundle: {where!r}: the factory file {target!r} is not in the bundle")
        from ..plugin import _untrusted  # the rule plugin directories follow

        for place in (path.parent, path):
            why = _untrusted(os.stat(place))
            if why:
                raise _core.CheckpointError(f"load_model_bundle: refusing to run the factory file {str(path)!r}: "
                                            f"{str(place)!r} {why}")
        return f"{path}:{func}"
    if not all(part.isidentifier() for part in target.split(".")):
        raise _core.CheckpointError(f"load_model_bundle: {where!r}: {target!r} is neither a .py file nor a module name")
    return factory


def load_model_bundle(directory: PathLike, *, weights: Optional[PathLike] = None, trust_code: bool = False) -> Any:
    """Rebuilds the model saved by ``save_model_bundle``, checks the weights' SHA-256 (a guard
    against damage: the digest comes from the bundle itself), loads them strictly and returns
    the module in eval mode.

    A bundle described by data (``architecture``) runs no code from the bundle: its declared
    sizes are checked against the weights file's header before anything is built. A bundle that
    names a ``factory`` runs that Python code and is refused with ``CheckpointError`` unless
    ``trust_code=True``. Every path the bundle names must stay inside ``directory``.
    ``weights`` replaces the bundle's weights file (then no digest is checked)."""
    base = pathlib.Path(directory)
    meta = read_bundle_meta(base)
    where = str(base / ARCHITECTURE_FILE)
    factory = bundle_factory(base, meta, trust_code=trust_code) if meta.get("architecture") is None else None
    if weights is None:
        weights_path = _inside(base, meta["weights"], "weights")
        if not weights_path.is_file():
            raise _core.CheckpointError(f"load_model_bundle: the weights file {str(weights_path)!r} does not exist")
        if sha256_of(weights_path) != meta["weights_sha256"]:
            raise _core.CheckpointError(f"load_model_bundle: {str(weights_path)!r} does not match the recorded SHA-256")
    else:
        weights_path = pathlib.Path(weights)
    if factory is None:
        entries, _ = _core.io.safetensors_header(str(weights_path))
        available = sum(_product(list(e["shape"])) for e in entries)
        try:
            _check_spec(meta["architecture"], f"load_model_bundle: {where!r}", available,
                        f"the {available} elements of its weights file", _core.CheckpointError)
            model = _build(meta["architecture"], "")
        except _core.CheckpointError:
            raise
        except (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError, _core.SpiralError) as exc:
            raise _core.CheckpointError(f"load_model_bundle: {where!r}: the architecture does not build: {exc}") from exc
    else:
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
