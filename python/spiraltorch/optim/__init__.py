"""Optimizers, learning-rate schedules and gradient clipping (``spiraltorch.optim``).

Everything is native (``spiraltorch._core.optim``) and follows ``torch.optim``: optimizers take
``model.parameters()`` or a list of parameter-group dicts, ``step()`` updates in place and returns
``False`` (changing nothing, counting ``skipped_steps``) when a gradient is not finite. Adam, AdamW and
SGD on ``wgpu`` check on the device instead of reading a flag in every step: ``step()`` returns a
``StepResult`` whose ``bool()`` reads the verdict when asked, and ``skipped_steps``/``state_dict()``
settle it (``SPIRALTORCH_OPTIM_SYNC_CHECK=1`` restores the read in ``step()``).
"""

from __future__ import annotations

from .. import _core

_native = _core.optim

for _name in dir(_native):
    if not _name.startswith("_"):
        globals()[_name] = getattr(_native, _name)
del _name

__all__ = [n for n in dir(_native) if not n.startswith("_")]

from . import lr_scheduler  # noqa: E402,F401  (torch.optim.lr_scheduler-style access)

# The Z-space tape optimizers (spiraltorch.amegagrad) load on first use, so that importing the
# optimizers does not import Z-space.
_AMEGAGRAD = ("Amegagrad", "DesireGradientControl", "desire_control")


def __getattr__(name: str) -> object:
    if name in _AMEGAGRAD:
        from .. import amegagrad

        return getattr(amegagrad, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list:
    return sorted(set(globals()) | set(_AMEGAGRAD))
