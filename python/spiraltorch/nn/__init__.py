"""Neural-network layers, losses and trainers (``spiraltorch.nn``).

Layers are native C++ modules; ``Module`` can be subclassed in Python like
``torch.nn.Module``: assign layers and parameters as attributes and define ``forward``.
"""

from __future__ import annotations

from typing import Any

from .. import _core
from .._core import Tensor

_native = _core.nn

# Every public native layer, loss and function is re-exported as is.
for _name in dir(_native):
    if not _name.startswith("_") and _name != "Module":
        globals()[_name] = getattr(_native, _name)
del _name


from .fit import Callback, EarlyStopping, EpochResult, FitHistory, evaluate, fit  # noqa: E402,F401
from .serialization import load, load_bincode, load_json, load_safetensors, save, save_bincode, save_json, save_safetensors  # noqa: E402,F401
from . import parallel  # noqa: E402,F401


class ModuleTrainer(_native.ModuleTrainer):
    """The native roundtable trainer (see ``spiraltorch._core.nn.ModuleTrainer``), run by the C++
    training engine, which publishes the ``EpochStart``/``TrainerStep``/``EpochEnd`` plugin events
    (``spiraltorch.plugin``) when anything listens.

    ``progress`` shows a bar per ``train_epoch`` on a terminal (``spiraltorch.utils.progress``);
    ``writer`` (a ``spiraltorch.utils.tensorboard.SummaryWriter``) gets ``train/loss`` per update
    (step = batches taken) and ``epoch/train_loss``/``epoch/skipped_steps`` per epoch, plus
    ``epoch/eval_loss`` from ``evaluate_epoch``. Both follow the C++ loop through its
    ``TrainerStep`` events; both can be changed later as attributes."""

    def __init__(self, *args: Any, writer: Any = None, progress: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.writer, self.progress = writer, progress

    def train_epoch(self, *args: Any, **kwargs: Any) -> Any:
        from ..utils._observe import StepWatch
        from ..utils.progress import epoch_samples

        epoch = self.epoch + 1
        writer = getattr(self, "writer", None)
        batches = args[2] if len(args) > 2 else kwargs.get("batches")
        with StepWatch(epoch_samples(batches), f"epoch {epoch}", getattr(self, "progress", True), writer):
            stats = super().train_epoch(*args, **kwargs)
        if writer is not None:
            if stats.batches:
                writer.add_scalar("epoch/train_loss", stats.average_loss, epoch)
            writer.add_scalar("epoch/skipped_steps", stats.skipped_steps, epoch)
            writer.flush()
        return stats

    def evaluate_epoch(self, *args: Any, **kwargs: Any) -> Any:
        stats = super().evaluate_epoch(*args, **kwargs)
        writer = getattr(self, "writer", None)
        if writer is not None and stats.batches:
            writer.add_scalar("epoch/eval_loss", stats.average_loss, self.epoch)
        return stats


def Parameter(data: Tensor, requires_grad: bool = True) -> Tensor:
    """Returns a leaf copy-free alias of ``data`` that requires grad; assigning it to a
    ``Module`` attribute registers it as a parameter."""
    p = data.detach()
    p.requires_grad = requires_grad
    return p


class Module(_native.Module):
    """Base class for Python-defined modules.

    Attribute assignment follows torch.nn.Module's rules for every module, native layers and
    their subclasses included (the native ``__setattr__``/``__getattr__``/``__delattr__``):
    child modules register under their attribute name (unless the child has an explicit
    ``name``), leaf tensors that require grad (parameters) register as parameters, a tensor
    assigned to a buffer's name replaces the buffer, so ``named_parameters()``/``state_dict()``
    see them with ``<attr>::<param>`` keys.

    Calling the module runs ``forward(*args, **kwargs)`` with the registered hooks around it, run
    by the native ``Module`` (the one hook registry, also for calls from native containers): a
    subclass that defines ``forward`` gets the native ``__call__`` that does so
    (``Module.__init_subclass__``). Pre-hooks and forward hooks see the positional ``args`` as given;
    full backward hooks get one gradient per positional tensor argument and per tensor output.
    """


class ModuleList(Module):
    """torch.nn.ModuleList: an indexable list of child modules, registered under "0", "1", ...
    so their parameters appear as ``<list>.<i>::<param>``. It has no forward of its own."""

    def __init__(self, modules: Any = None, name: str = "") -> None:
        super().__init__(name)
        object.__setattr__(self, "_items", [])
        for m in modules or ():
            self.append(m)

    def append(self, module: Any) -> "ModuleList":
        if not isinstance(module, _native.Module):
            raise TypeError(f"ModuleList.append: expected a Module, got {type(module).__name__}")
        self._register_module(str(len(self._items)), module)
        self._items.append(module)
        return self

    def extend(self, modules: Any) -> "ModuleList":
        for m in modules:
            self.append(m)
        return self

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return ModuleList(self._items[index])
        try:
            return self._items[index]
        except IndexError:
            raise IndexError(f"ModuleList: index {index} is out of range for {len(self._items)} modules") from None

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Any:
        return iter(self._items)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("ModuleList has no forward: iterate over it and call its modules")


class ModuleDict(Module):
    """torch.nn.ModuleDict: child modules by string key (registered under that key), in
    insertion order. It has no forward of its own."""

    def __init__(self, modules: Any = None, name: str = "") -> None:
        super().__init__(name)
        object.__setattr__(self, "_items", {})
        if modules is not None:
            self.update(modules)

    def __setitem__(self, key: str, module: Any) -> None:
        if not isinstance(key, str) or not key:
            raise TypeError(f"ModuleDict: keys must be non-empty strings, got {key!r}")
        if not isinstance(module, _native.Module):
            raise TypeError(f"ModuleDict[{key!r}]: expected a Module, got {type(module).__name__}")
        if key in self._items:
            raise ValueError(f"ModuleDict: key {key!r} is already present (children are never overwritten)")
        self._register_module(key, module)
        self._items[key] = module

    def update(self, modules: Any) -> None:
        for key, module in (modules.items() if hasattr(modules, "items") else modules):
            self[key] = module

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Any:
        return iter(self._items)

    def keys(self) -> Any:
        return self._items.keys()

    def values(self) -> Any:
        return self._items.values()

    def items(self) -> Any:
        return self._items.items()

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("ModuleDict has no forward: look its modules up and call them")


class ParameterList(Module):
    """torch.nn.ParameterList: parameters registered under "0", "1", ... (keys ``<list>::0``), indexable
    and iterable. A tensor that does not require grad is registered as a parameter that requires it
    when floating (as ``nn.Parameter`` would make it)."""

    def __init__(self, values: Any = None, name: str = "") -> None:
        super().__init__(name)
        object.__setattr__(self, "_count", 0)
        for v in values or ():
            self.append(v)

    def append(self, value: Tensor) -> "ParameterList":
        if not isinstance(value, Tensor):
            raise TypeError(f"ParameterList.append: expected a Tensor, got {type(value).__name__}")
        self.register_parameter(str(self._count), value)
        object.__setattr__(self, "_count", self._count + 1)
        return self

    def extend(self, values: Any) -> "ParameterList":
        for v in values:
            self.append(v)
        return self

    def __getitem__(self, index: Any) -> Any:
        items = list(self.parameters(recurse=False))
        if isinstance(index, slice):
            return ParameterList(items[index])
        return items[index]

    def __setitem__(self, index: int, value: Tensor) -> None:
        n = self._count
        if not -n <= index < n:
            raise IndexError(f"ParameterList: index {index} is out of range for {n} parameters")
        self.register_parameter(str(index % n), value)

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Any:
        return self.parameters(recurse=False)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("ParameterList has no forward: use its parameters in your module's forward")


class ParameterDict(Module):
    """torch.nn.ParameterDict: parameters by string key (keys ``<dict>::<key>``), in insertion order."""

    def __init__(self, parameters: Any = None, name: str = "") -> None:
        super().__init__(name)
        object.__setattr__(self, "_keys", [])
        if parameters is not None:
            self.update(parameters)

    def __setitem__(self, key: str, value: Tensor) -> None:
        if not isinstance(key, str) or not key:
            raise TypeError(f"ParameterDict: keys must be non-empty strings, got {key!r}")
        self.register_parameter(key, value)
        if key not in self._keys:
            self._keys.append(key)

    def update(self, parameters: Any) -> None:
        for key, value in (parameters.items() if hasattr(parameters, "items") else parameters):
            self[key] = value

    def __getitem__(self, key: str) -> Tensor:
        if key not in self._keys:
            raise KeyError(key)
        return getattr(self, key)

    def __delitem__(self, key: str) -> None:
        if key not in self._keys:
            raise KeyError(key)
        delattr(self, key)
        self._keys.remove(key)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Any:
        return iter(list(self._keys))

    def keys(self) -> Any:
        return list(self._keys)

    def values(self) -> Any:
        return [self[k] for k in self._keys]

    def items(self) -> Any:
        return [(k, self[k]) for k in self._keys]

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("ParameterDict has no forward: look its parameters up in your module's forward")


# The original's spelling of ReLU (same class: isinstance checks agree).
Relu = _native.ReLU


class Pool2d(Module):
    """The original's ``Pool2d(mode, channels, height, width, kernel, *, stride=None,
    padding=None, layout="NCHW")``: max or average pooling of images stored either as
    ``(batch, channels, height, width)`` or flattened row-wise as
    ``(batch, channels * height * width)`` (the original's 2-D layout). A flattened input
    gives a flattened output ``(batch, channels * out_h * out_w)``; a 4-D input a 4-D
    output. The pooling itself is the native MaxPool2d/AvgPool2d."""

    def __init__(self, mode: str, channels: int, height: int, width: int, kernel: Any, *,
                 stride: Any = None, padding: Any = None, layout: str = "NCHW", name: str = "") -> None:
        super().__init__(name)
        if mode not in ("max", "avg"):
            raise _core.SpiralValueError(f"Pool2d: mode must be 'max' or 'avg', got {mode!r}")
        if layout != "NCHW":
            raise _core.SpiralValueError(f"Pool2d: only layout='NCHW' is supported, got {layout!r}")
        for label, v in (("channels", channels), ("height", height), ("width", width)):
            if not isinstance(v, int) or v <= 0:
                raise _core.SpiralValueError(f"Pool2d: {label} must be a positive int, got {v!r}")
        self.mode, self.channels, self.height, self.width = mode, channels, height, width
        pad = 0 if padding is None else padding
        self.pool = (_native.MaxPool2d if mode == "max" else _native.AvgPool2d)(kernel, stride=stride, padding=pad)

    def output_shape(self) -> tuple:
        """(channels, out_height, out_width) for this layer's input size."""
        (kh, kw), (sh, sw), (ph, pw) = self.pool.kernel_size, self.pool.stride, self.pool.padding
        return (self.channels, (self.height + 2 * ph - kh) // sh + 1, (self.width + 2 * pw - kw) // sw + 1)

    def forward(self, x: Tensor) -> Tensor:
        if x.dim() == 4:
            return self.pool(x)
        if x.dim() != 2 or x.shape[1] != self.channels * self.height * self.width:
            raise _core.ShapeError(
                f"Pool2d: expected (batch, {self.channels * self.height * self.width}) or "
                f"(batch, {self.channels}, {self.height}, {self.width}), got {tuple(x.shape)}")
        y = self.pool(x.reshape(x.shape[0], self.channels, self.height, self.width))
        return y.reshape(x.shape[0], -1)

    def extra_repr(self) -> str:
        return f"mode='{self.mode}', channels={self.channels}, height={self.height}, width={self.width}"


class Unflatten(Module):
    """torch.nn.Unflatten: expands dimension ``dim`` of the input into ``unflattened_size`` (whose
    product must equal that dimension's size; one entry may be -1)."""

    def __init__(self, dim: int, unflattened_size: Any, name: str = "") -> None:
        super().__init__(name)
        self.dim = int(dim)
        self.unflattened_size = tuple(int(s) for s in unflattened_size)
        if not self.unflattened_size or sum(1 for s in self.unflattened_size if s == -1) > 1:
            raise _core.SpiralValueError(f"Unflatten: unflattened_size must be non-empty with at most one -1, "
                                         f"got {unflattened_size}")

    def forward(self, x: Tensor) -> Tensor:
        shape = list(x.shape)
        d = self.dim % max(len(shape), 1)
        if not -len(shape) <= self.dim < len(shape):
            raise _core.SpiralIndexError(f"Unflatten: dim {self.dim} is out of range for a {len(shape)}-D input")
        return x.reshape(tuple(shape[:d]) + self.unflattened_size + tuple(shape[d + 1:]))

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


__all__ = sorted(
    [n for n in dir(_native) if not n.startswith("_") and n != "Module"]
    + ["Callback", "EarlyStopping", "EpochResult", "FitHistory", "Module", "ModuleDict", "ModuleList", "ModuleTrainer",
       "Parameter", "ParameterDict", "ParameterList", "Pool2d",
       "Relu", "Unflatten", "evaluate", "fit", "load", "load_bincode", "load_json", "load_safetensors", "save", "save_bincode",
       "save_json", "save_safetensors"]
)


def ManifoldParameter(data: Tensor, curvature: float = -1.0, requires_grad: bool = True) -> Tensor:
    """A parameter whose rows (vectors along the last dim) are points of the Poincare ball of
    ``curvature`` (< 0): ``optim.RiemannianSGD``/``RiemannianAdam`` step it along geodesics
    with Riemannian gradients, other optimizers treat it as an ordinary tensor. Every row must
    lie strictly inside the ball (norm < 1/sqrt|c|); returns the tagged leaf tensor."""
    c = float(curvature)
    if not (c < 0.0) or c != c or c == float("-inf"):
        raise _core.SpiralValueError(f"ManifoldParameter: curvature must be negative and finite, got {curvature}")
    if data.dim() == 0:
        raise _core.ShapeError("ManifoldParameter: needs at least one dimension (the point coordinates)")
    norms = data.detach().double().square().sum(-1).sqrt()
    radius = (-c) ** -0.5
    worst = float(norms.max().item()) if norms.numel() else 0.0
    if not worst < radius:
        raise _core.SpiralValueError(
            f"ManifoldParameter: a row has norm {worst:.6g}, outside the ball of radius {radius:.6g} (curvature {c})")
    p = Parameter(data, requires_grad)
    p._set_manifold_curvature(c)
    return p


__all__ = sorted(set(__all__) | {"ManifoldParameter"})

# torch.nn.init and torch.nn.utils (parameter initialisers, gradient clipping, flattening).
from . import functional, init, utils  # noqa: E402,F401

# torch.nn's padding layers and Upsample over functional.pad / interpolate.
from .padding_upsample import (  # noqa: E402,F401
    ConstantPad1d, ConstantPad2d, ReflectionPad1d, ReflectionPad2d, ReplicationPad1d, ReplicationPad2d, Upsample,
    ZeroPad1d, ZeroPad2d)

__all__ = sorted(set(__all__) | {"ConstantPad1d", "ConstantPad2d", "ReflectionPad1d", "ReflectionPad2d",
                                 "ReplicationPad1d", "ReplicationPad2d", "Upsample", "ZeroPad1d", "ZeroPad2d"})

# torch.nn's transposed convolutions over the native functional forms.
from .conv_transpose import ConvTranspose1d, ConvTranspose2d  # noqa: E402,F401

__all__ = sorted(set(__all__) | {"ConvTranspose1d", "ConvTranspose2d"})

# torch.nn's instance normalisation over the native functional form.
from .instance_norm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d  # noqa: E402,F401

__all__ = sorted(set(__all__) | {"InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"})

# torch.nn.EmbeddingBag over the native functional form.
from .embedding_bag import EmbeddingBag  # noqa: E402,F401

__all__ = sorted(set(__all__) | {"EmbeddingBag"})

# torch.nn.CTCLoss over the native functional form.
from .ctc import CTCLoss  # noqa: E402,F401

__all__ = sorted(set(__all__) | {"CTCLoss"})
