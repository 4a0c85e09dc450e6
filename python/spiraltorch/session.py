"""``SpiralSession``: where a piece of work runs, decided once and recorded with its evidence.

A session resolves a backend label to a backend this process can execute on, keeps the
``describe_device`` report that justified the choice, seeds the global generator when asked, and
hands out plans, tensors, data loaders and trainers bound to that device, so a script states its
device intent in one place.
"""

from __future__ import annotations

import os
from typing import Any, Iterable, Sequence

from . import _core
from . import planner as _planner
from .runtime import describe_device

__all__ = ["SpiralSession"]

_ALIASES = {"": "auto", "faer": "cpu", "simd": "cpu", "cpu-simd": "cpu", "cpu_simd": "cpu", "naive": "cpu",
            "webgpu": "wgpu", "rocm": "hip"}
_LABELS = ("auto", "cpu", "cuda", "wgpu", "mps", "hip")


def _unavailable_reason(label: str) -> str | None:
    """None when this process can execute on `label`, else why not."""
    if label == "cpu":
        return None
    if label == "cuda":
        return None if _core._cuda_is_available() else _core._cuda_unavailable_reason()
    if label == "wgpu":
        return None if _core._wgpu_is_available() else _core._wgpu_unavailable_reason()
    return {"mps": "SpiralTorch has no Metal (MPS) backend",
            "hip": "SpiralTorch has no HIP backend"}[label]


def _runtime_status(label: str) -> str:
    if label == "cpu":
        return "cpu"
    if label == "cuda":
        if _core._cuda_is_available():
            return "ready"
        return "initialization_failed" if _core._cuda_is_built() else "feature_disabled"
    if label == "wgpu":
        if _core._wgpu_is_available():
            return "ready"
        return "initialization_failed" if _core._wgpu_is_built() else "feature_disabled"
    return "feature_disabled"


class SpiralSession:
    """Resolves ``backend`` ("auto", "cpu", "cuda", "wgpu", or "mps"/"hip", which this build can
    plan for but not run) once; "wgpu" runs when the build has the wgpu backend and an adapter answers.

    "auto" takes CUDA when a GPU is usable, else the CPU. An explicit backend that cannot run
    here falls back to the CPU when ``accelerator_fallback`` is "allow" (the default, or
    ``SPIRALTORCH_STRICT_GPU=1`` for "forbid"), recording ``fallback_reason``; with "forbid" it
    raises ``DeviceUnavailableError``. ``seed`` seeds the global generator (``st.manual_seed``).

    Attributes: ``backend`` (the label as given), ``seed``, ``requested_backend``,
    ``effective_backend``, ``device`` ("cpu", "cuda:N" or "wgpu"), ``accelerator_fallback``,
    ``fallback_reason`` (None unless a fallback happened), ``device_preflight`` (the
    ``describe_device`` report of the effective backend)."""

    def __init__(self, backend: str | None = "auto", seed: int | None = None, *,
                 accelerator_fallback: str | None = None) -> None:
        label = _ALIASES.get(str(backend or "").strip().lower(), str(backend or "").strip().lower())
        if label not in _LABELS:
            raise ValueError(f"unknown SpiralSession backend label '{backend}', expected one of {', '.join(_LABELS)}")
        if accelerator_fallback is None:
            strict = os.environ.get("SPIRALTORCH_STRICT_GPU", "") in ("1", "true", "TRUE")
            accelerator_fallback = "forbid" if strict else "allow"
        if accelerator_fallback not in ("allow", "forbid"):
            raise ValueError(f"invalid accelerator fallback override {accelerator_fallback!r}, "
                             "expected 'allow' or 'forbid'")
        self.backend = backend
        self.seed = seed
        self.accelerator_fallback = accelerator_fallback
        self.fallback_reason: str | None = None
        if label == "auto":
            self.requested_backend = self.effective_backend = "cuda" if _unavailable_reason("cuda") is None else "cpu"
        else:
            self.requested_backend = label
            reason = _unavailable_reason(label)
            if reason is None:
                self.effective_backend = label
            elif accelerator_fallback == "forbid":
                raise _core.DeviceUnavailableError(
                    f"SpiralSession: backend '{label}' cannot run here ({reason}) and accelerator_fallback='forbid'")
            else:
                self.effective_backend = "cpu"
                self.fallback_reason = reason
        self.device = (f"cuda:{_core._cuda_current_device()}" if self.effective_backend == "cuda"
                       else "wgpu" if self.effective_backend == "wgpu" else "cpu")
        # The effective backend's report, with the runtime status of both backends:
        # "cpu", "ready" (a usable GPU), "initialization_failed" (built, no usable device) or
        # "feature_disabled" (not built into this package).
        self.device_preflight = dict(describe_device(self.effective_backend),
                                     runtime_status=_runtime_status(self.effective_backend),
                                     requested_backend=self.requested_backend,
                                     requested_runtime_status=_runtime_status(self.requested_backend))
        if seed is not None:
            _core.manual_seed(int(seed))
        self._closed = False

    def __repr__(self) -> str:
        extra = f", fallback_reason={self.fallback_reason!r}" if self.fallback_reason else ""
        return (f"SpiralSession(requested={self.requested_backend!r}, effective={self.effective_backend!r}, "
                f"device={self.device!r}{extra})")

    def __enter__(self) -> SpiralSession:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Marks the session closed; later calls that hand out objects raise. Owns no resources
        of its own (tensors it created live on independently)."""
        self._closed = True

    def _check_open(self, what: str) -> None:
        if self._closed:
            raise RuntimeError(f"SpiralSession.{what}: the session is closed")

    # ---- planning
    def plan(self, kind: str, rows: int, cols: int, k: int, **caps: Any) -> _planner.RankPlan:
        """``st.plan`` for this session's effective backend."""
        self._check_open("plan")
        return _planner.plan(kind, rows, cols, k, backend=self.effective_backend, **caps)

    def plan_topk(self, rows: int, cols: int, k: int, **caps: Any) -> _planner.RankPlan:
        """``st.plan_topk`` for this session's effective backend."""
        return self.plan("topk", rows, cols, k, **caps)

    # ---- tensors and data
    def tensor(self, data: Any, **kwargs: Any) -> Any:
        """``st.tensor(data, **kwargs)`` placed on the session's device."""
        self._check_open("tensor")
        requires_grad = kwargs.pop("requires_grad", False)
        t = _core.tensor(data, **kwargs).to(self.device)
        return t.requires_grad_(True) if requires_grad else t

    def dataset(self, samples: Iterable[Sequence[Any]]) -> Any:
        """A ``data.TensorDataset`` of ``(input, target)`` pairs stacked along a new first dim and
        placed on the session's device. Each item may be a tensor or anything ``st.tensor`` takes;
        ``samples`` may be any iterable (a generator is read once). ``.samples()`` on the result
        gives the pairs back as a list of ``(input, target)`` tensors."""
        from .data import TensorDataset
        from .dataset import _as_pair

        self._check_open("dataset")
        inputs, targets = [], []
        for i, sample in enumerate(samples):
            x, y = _as_pair(sample, i, "SpiralSession.dataset")
            inputs.append(x.to(self.device))
            targets.append(y.to(self.device))
        if not inputs:
            raise ValueError("SpiralSession.dataset: no samples")
        return TensorDataset(_core.stack(inputs), _core.stack(targets))

    def dataloader(self, samples: Iterable[Sequence[Any]], *, batch_size: int = 1, shuffle: bool = False,
                   drop_last: bool = False, prefetch: int = 0) -> Any:
        """A ``data.DataLoader`` over ``self.dataset(samples)``. ``prefetch=N`` (N >= 0) makes a
        background C++ thread of the native pipeline assemble up to N batches ahead of the
        consumer; 0 assembles each batch on demand."""
        from .data import DataLoader

        self._check_open("dataloader")
        if not isinstance(prefetch, int) or isinstance(prefetch, bool) or prefetch < 0:
            raise _core.SpiralValueError(f"SpiralSession.dataloader: prefetch must be a non-negative int, "
                                         f"got {prefetch!r}")
        return DataLoader(self.dataset(samples), batch_size=batch_size, shuffle=shuffle, drop_last=drop_last,
                          prefetch=prefetch)

    def trainer(self, *, curvature: float = -1.0, hyper_learning_rate: float = 1e-2,
                fallback_learning_rate: float = 1e-2) -> Any:
        """An ``nn.ModuleTrainer`` on this session's effective backend."""
        from . import nn

        self._check_open("trainer")
        return nn.ModuleTrainer(backend=self.effective_backend, curvature=curvature,
                                hyper_learning_rate=hyper_learning_rate, fallback_learning_rate=fallback_learning_rate)

    module_trainer = trainer
