"""Neural-network layers, losses and trainers (``spiraltorch.nn``).

Layers are native C++ modules; ``Module`` can be subclassed in Python like
``torch.nn.Module``: assign layers and parameters as attributes and define ``forward``.
"""

from __future__ import annotations

from typing import Any

from .. import _core, plugin
from .._core import Tensor

_native = _core.nn

# Every public native layer, loss and function is re-exported as is.
for _name in dir(_native):
    if not _name.startswith("_") and _name != "Module":
        globals()[_name] = getattr(_native, _name)
del _name


from .fit import Callback, EarlyStopping, EpochResult, FitHistory, evaluate, fit  # noqa: E402,F401
from .serialization import load, load_bincode, load_json, load_safetensors, save, save_bincode, save_json, save_safetensors  # noqa: E402,F401


class ModuleTrainer(_native.ModuleTrainer):
    """The native roundtable trainer (see ``spiraltorch._core.nn.ModuleTrainer``);
    ``train_epoch`` also publishes the ``EpochStart``/``EpochEnd`` plugin events
    (``spiraltorch.plugin``) when anything listens."""

    def train_epoch(self, *args: Any, **kwargs: Any) -> Any:
        epoch = self.epoch + 1
        plugin._emit("EpochStart", epoch=epoch)
        stats = super().train_epoch(*args, **kwargs)
        plugin._emit("EpochEnd", epoch=epoch, loss=float(stats.average_loss))
        return stats


def Parameter(data: Tensor, requires_grad: bool = True) -> Tensor:
    """Returns a leaf copy-free alias of ``data`` that requires grad; assigning it to a
    ``Module`` attribute registers it as a parameter."""
    p = data.detach()
    p.requires_grad = requires_grad
    return p


class Module(_native.Module):
    """Base class for Python-defined modules.

    Attribute assignment registers child modules (keyed by attribute name unless the
    child has an explicit ``name``) and leaf tensors that require grad (parameters),
    so ``named_parameters()``/``state_dict()`` see them with ``<attr>::<param>`` keys.
    """

    def __init__(self, name: str = "") -> None:
        super().__init__(name)

    def __setattr__(self, key: str, value: Any) -> None:
        if isinstance(value, _native.Module):
            self._register_module(key, value)
        elif isinstance(value, Tensor) and value.requires_grad and value.is_leaf:
            self.register_parameter(key, value)
        super().__setattr__(key, value)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def __repr__(self) -> str:
        children = ", ".join(f"{k}={type(v).__name__}" for k, v in self.named_children())
        return f"{type(self).__name__}({children})"


