"""Mixed precision, spelled like ``torch.amp``: ``autocast`` regions and ``GradScaler``.

Inside ``with st.autocast("cuda", dtype=st.bfloat16):`` matmul / bmm / linear / conv / einsum
run their float32 CUDA inputs in bfloat16 (float32 accumulation), while softmax, log_softmax,
layer_norm, logsumexp and the losses compute in float32; the casts are differentiable, so
float32 parameters receive float32 gradients. ``device_type="cpu"`` does the same for CPU
tensors (default dtype bfloat16). The op lists are applied in the C++ core, per thread.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Iterable, Optional, Union

from . import _core

__all__ = ["GradScaler", "autocast", "get_autocast_dtype", "is_autocast_enabled"]

is_autocast_enabled = _core.is_autocast_enabled
get_autocast_dtype = _core.get_autocast_dtype


def _dtype(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return getattr(_core.dtype, value)
        except AttributeError:
            raise _core.SpiralValueError(f"autocast: unknown dtype {value!r}") from None
    return value


class autocast:
    """Context manager (and decorator) for an autocast region on ``device_type`` ("cuda" or
    "cpu"). ``dtype`` is float16 or bfloat16 (default: float16 on CUDA, bfloat16 on the CPU,
    like PyTorch); ``enabled=False`` turns autocast off inside the block. Regions nest; the
    previous state is restored on exit, also when the block raises."""

    def __init__(self, device_type: str = "cuda", dtype: Any = None, enabled: bool = True,
                 cache_enabled: Optional[bool] = None) -> None:
        if device_type not in ("cuda", "cpu"):
            raise _core.SpiralValueError(f"autocast: device_type must be 'cuda' or 'cpu', got {device_type!r}")
        self.device_type = device_type
        self.fast_dtype = _dtype(dtype) if dtype is not None else _core.get_autocast_dtype(device_type)
        self.enabled = bool(enabled)
        self._saved: list = []

    def __enter__(self) -> "autocast":
        prev = _core._autocast_get_state()
        cpu_on, cpu_dt, cuda_on, cuda_dt = prev
        if self.device_type == "cpu":
            cpu_on, cpu_dt = self.enabled, self.fast_dtype
        else:
            cuda_on, cuda_dt = self.enabled, self.fast_dtype
        _core._autocast_set_state(cpu_on, cpu_dt, cuda_on, cuda_dt)
        self._saved.append(prev)
        return self

    def __exit__(self, *exc: object) -> None:
        _core._autocast_set_state(*self._saved.pop())

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with autocast(self.device_type, self.fast_dtype, self.enabled):
                return fn(*args, **kwargs)
        return wrapper

    def __repr__(self) -> str:
        return f"autocast(device_type={self.device_type!r}, dtype={self.fast_dtype}, enabled={self.enabled})"


class GradScaler:
    """Dynamic loss scaling (torch.amp.GradScaler) for float16 training.

    ``scale(loss)`` multiplies the loss by the current scale; ``step(optimizer)`` divides the
    gradients by it (unless ``unscale_`` already did), skips ``optimizer.step()`` when any
    gradient is NaN/inf and returns whether it stepped; ``update()`` multiplies the scale by
    ``backoff_factor`` after a skipped step and by ``growth_factor`` after ``growth_interval``
    clean ones. ``skipped_steps`` counts the skipped steps. The bookkeeping runs in C++."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        self.device = device
        self._native = _core._GradScaler(float(init_scale), float(growth_factor), float(backoff_factor),
                                         int(growth_interval), bool(enabled))

    def scale(self, outputs: Union[Any, Iterable[Any]]) -> Any:
        """outputs * scale: one tensor, or a list/tuple of tensors (scaled one by one)."""
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self._native.scale(o) for o in outputs)
        return self._native.scale(outputs)

    def unscale_(self, optimizer: Any) -> None:
        """Divides optimizer's gradients by the scale now (e.g. before gradient clipping)."""
        self._native.unscale_(optimizer)

    def step(self, optimizer: Any) -> Optional[bool]:
        """Runs optimizer.step() unless a gradient was non-finite; returns True when it stepped,
        None when the step was skipped (PyTorch returns None there too)."""
        return True if self._native.step(optimizer) else None

    def update(self, new_scale: Optional[float] = None) -> None:
        self._native.update(None if new_scale is None else float(new_scale))

    def get_scale(self) -> float:
        return self._native.get_scale()

    def is_enabled(self) -> bool:
        return self._native.is_enabled()

    @property
    def skipped_steps(self) -> int:
        return self._native.skipped_steps

    @property
    def found_inf(self) -> bool:
        """Whether a non-finite gradient was seen in the current step (reset by update())."""
        return self._native.found_inf

    def get_growth_factor(self) -> float:
        return self._native.growth_factor

    def get_backoff_factor(self) -> float:
        return self._native.backoff_factor

    def get_growth_interval(self) -> int:
        return self._native.growth_interval

    def state_dict(self) -> dict:
        scale, tracker, skipped = self._native._state()
        return {"scale": scale, "growth_factor": self.get_growth_factor(), "backoff_factor": self.get_backoff_factor(),
                "growth_interval": self.get_growth_interval(), "_growth_tracker": tracker, "skipped_steps": skipped}

    def load_state_dict(self, state: dict) -> None:
        missing = [k for k in ("scale", "_growth_tracker") if k not in state]
        if missing:
            raise _core.CheckpointError(f"GradScaler.load_state_dict: missing keys {missing}")
        self._native._load_state(float(state["scale"]), int(state["_growth_tracker"]),
                                 int(state.get("skipped_steps", 0)))

    def __repr__(self) -> str:
        return (f"GradScaler(scale={self.get_scale()}, growth_interval={self.get_growth_interval()}, "
                f"enabled={self.is_enabled()}, skipped_steps={self.skipped_steps})")
