"""Z-space text and gradient tapes: ``LanguageWaveEncoder``, ``Hypergrad``, ``Realgrad``,
``GradientSummary``, ``ComplexTensor`` and ``ZSpaceTrainer``.

Z-space is the Poincaré ball of curvature c < 0 (k = -c, radius 1/sqrt(k)); each row of a tensor
is one point. ``LanguageWaveEncoder`` maps text to a point through a DFT of its code points,
``Hypergrad`` is a Riemannian SGD tape on the ball (gradients accumulate in Euclidean
coordinates, ``apply`` moves each row along the geodesic), ``Realgrad`` the Euclidean SGD tape.
The ball operations are ``spiraltorch.geometry`` (Möbius addition, exp/log maps, distance).

The per-step code is C++ (``include/spiraltorch/zspace/``, bound as ``spiraltorch._core.zspace``);
this module re-exports it and keeps the Python glue: metric records (``ZMetrics``,
``ZSpacePartialBundle``), telemetry flattening, inference pipelines and the ``st.z`` notation.
"""

from __future__ import annotations

import functools
import math
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from . import _core

__all__ = ["ComplexTensor", "GradientSummary", "Hypergrad", "LanguageWaveEncoder", "Realgrad", "ZMetrics",
           "ZSpaceInference", "ZSpaceInferencePipeline", "ZSpaceNotation", "ZSpacePartialBundle", "ZSpaceTrainer",
           "blend_zspace_partials", "compile_inference", "decode_zspace", "encode_zspace", "infer_from_partial", "z",
           "z_metrics"]

_zs = _core.zspace
_f64 = _core.dtype.float64

ComplexTensor = _zs.ComplexTensor
LanguageWaveEncoder = _zs.LanguageWaveEncoder
GradientSummary = _zs.GradientSummary
Hypergrad = _zs.Hypergrad
Realgrad = _zs.Realgrad


# ---------------------------------------------------------------- ZSpaceTrainer

_METRIC_ALIASES = {"speed": "speed", "velocity": "speed", "memory": "memory", "mem": "memory",
                   "stability": "stability", "stab": "stability", "drs": "drs", "drift": "drs", "frac": "frac",
                   "gradient": "gradient", "grad": "gradient"}
_BASE_METRICS = ("speed", "memory", "stability", "drs", "frac")


def _canonical_metrics(metrics: Any, who: str) -> dict[str, Any]:
    if isinstance(metrics, ZSpaceInference):
        return dict(metrics.metrics, gradient=list(metrics.gradient))
    if isinstance(metrics, (ZMetrics, ZSpacePartialBundle)):
        metrics = metrics.as_dict() if isinstance(metrics, ZMetrics) else dict(metrics.metrics)
    return _zs.canonical_metrics(metrics, who)


def decode_zspace(z: Sequence[float], alpha: float = 0.35) -> dict[str, float]:
    """The metrics a latent z stands for: speed = tanh(mean|dz| + |z|/(4n)), memory =
    tanh(mean(z) + |z|^2/(4n)), stability = tanh(1.5 (1/(1 + mean|d2z|) + 1/(1 + mean|dz|)) - 1),
    frac = tanh(E_alpha/|z|^2) and drs = tanh((E_high - E_low)/(E_high + E_low)) from the
    Parseval-normalised one-sided power spectrum (frequencies w_k = 2k/n, split at w = 0.5)."""
    return _zs.decode_zspace(z, alpha)


class ZSpaceInference:
    """What ``ZSpaceTrainer.infer_partial`` / ``infer_from_partial`` concluded: ``metrics`` (decoded
    from z, observed ones overriding), ``prior`` (decoded only), ``observed``, ``residual`` (RMS of
    observed - decoded over the observed base metrics), ``confidence`` = exp(-residual) times the
    telemetry reliability, ``gradient`` (the gradient of the fit loss 1/2 sum (decoded - observed)^2
    with respect to z), ``control_gradient`` (a gradient supplied with the observation, else None),
    ``barycentric`` (softplus weights of speed/memory/stability, the prior's and the completed
    metrics' blended by ``smoothing``), ``telemetry`` (the flattened telemetry used, or None) and
    ``telemetry_reliability`` (1 without telemetry)."""

    def __init__(self, metrics: dict[str, float], prior: dict[str, float], observed: dict[str, float],
                 gradient: list[float], residual: float, *, control_gradient: list[float] | None = None,
                 barycentric: tuple[float, float, float] | None = None, telemetry: dict[str, float] | None = None,
                 telemetry_reliability: float = 1.0) -> None:
        self.metrics, self.prior, self.observed = metrics, prior, observed
        self.gradient, self.residual = gradient, residual
        self.control_gradient = control_gradient
        self.barycentric = barycentric if barycentric is not None else _zs.barycentric_weights(metrics)
        self.telemetry, self.telemetry_reliability = telemetry, telemetry_reliability
        self.confidence = math.exp(-residual) * telemetry_reliability

    def as_dict(self) -> dict[str, Any]:
        return {"metrics": dict(self.metrics), "prior": dict(self.prior), "observed": dict(self.observed),
                "gradient": list(self.gradient), "residual": self.residual, "confidence": self.confidence,
                "control_gradient": None if self.control_gradient is None else list(self.control_gradient),
                "barycentric": list(self.barycentric),
                "telemetry": None if self.telemetry is None else dict(self.telemetry),
                "telemetry_reliability": self.telemetry_reliability}

    def __repr__(self) -> str:
        return f"ZSpaceInference(residual={self.residual:.6f}, confidence={self.confidence:.6f})"


def _z_vector(z_state: Any, who: str) -> list[float]:
    """A latent z from a list of floats, a tensor, or anything with a ``state`` (a trainer)."""
    if isinstance(z_state, ZSpaceTrainer):
        return z_state.state
    if isinstance(z_state, _core.Tensor):
        z_state = z_state.detach().to(_f64).reshape(-1).tolist()
    if isinstance(z_state, (str, bytes)) or not hasattr(z_state, "__iter__"):
        raise TypeError(f"{who}: z_state must be a sequence of floats, a Tensor or a ZSpaceTrainer, "
                        f"got {type(z_state).__name__}")
    z = [float(v) for v in z_state]
    if not z:
        raise _core.SpiralValueError(f"{who}: z_state is empty")
    bad = [v for v in z if not math.isfinite(v)]
    if bad:
        raise _core.SpiralValueError(f"{who}: z_state has non-finite values {bad}")
    return z


def _flatten_telemetry(payload: Any, who: str, prefix: str = "") -> dict[str, float]:
    if payload is None:
        return {}
    if isinstance(payload, ZSpacePartialBundle):
        return dict(payload.telemetry or {})
    if not isinstance(payload, dict):
        raise TypeError(f"{who}: telemetry must be a dict of numbers, got {type(payload).__name__}")
    out: dict[str, float] = {}
    for key, value in payload.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten_telemetry(value, who, name + "."))
            continue
        v = float(value)
        if not math.isfinite(v):
            raise _core.SpiralValueError(f"{who}: telemetry value {name!r} is not finite ({value})")
        out[name] = v
    return out


def _inference(d: dict[str, Any]) -> ZSpaceInference:
    return ZSpaceInference(d["metrics"], d["prior"], d["observed"], d["gradient"], d["residual"],
                           control_gradient=d["control_gradient"], barycentric=d["barycentric"],
                           telemetry=d["telemetry"], telemetry_reliability=d["telemetry_reliability"])


def _infer(z: list[float], alpha: float, obs: dict[str, Any], smoothing: float,
           telemetry: dict[str, float] | None, who: str) -> ZSpaceInference:
    """The posterior completion of partial observations ``obs`` (canonical) at latent ``z`` (C++:
    ``spiraltorch._core.zspace.infer``)."""
    return _inference(_zs.infer(z, alpha, obs, float(smoothing), telemetry or None, who))


class ZSpaceTrainer(_zs.ZSpaceTrainer):
    """Adam on a latent vector z (length ``z_dim``, starting at zero).

    ``step(metrics)``: the update direction is tanh of the supplied ``gradient`` (tiled or truncated
    to z_dim, or exactly z_dim long with ``gradient_projection="exact"``) plus ``lam_frac`` times the
    direction of the fractional spectral penalty R_alpha(z); the returned value is the objective
    *before* the update: lam_speed tanh(speed) + lam_mem tanh(memory) + lam_stab tanh(stability) +
    lam_drs tanh(drs) + lam_frac R_alpha(z) -- a weighted squash of the caller's metrics plus the
    penalty, not something the update minimises.

    ``topos`` (an ``OpenCartesianTopos``/``OpenTopos``, mapping or 5-tuple) guards every step: z_dim
    must fit its volume and each updated z passes through its monotone saturation.

    ``step_partial(partial)`` fits z to partially observed metrics: it decodes z (``decode_zspace``),
    compares with the observed ones (``last_inference``), and steps along the gradient of
    1/2 sum (decoded - observed)^2 (by central differences) plus the supplied gradient and the
    penalty direction, so repeated calls reduce the residual."""

    STATE_VERSION = _zs.STATE_VERSION
    #: The original's checkpoint label; its states carry the same vectors and are accepted too.
    UPSTREAM_CONTRACT = _zs.UPSTREAM_CONTRACT

    def __init__(self, z_dim: int = 4, *, topos: Any = None, writer: Any = None, **kwargs: Any) -> None:
        super().__init__(z_dim, topos=as_topos(topos, "ZSpaceTrainer"), **kwargs)
        self.last_inference: ZSpaceInference | None = None
        #: A ``spiraltorch.utils.tensorboard.SummaryWriter`` (or None): each step writes
        #: ``zspace/objective`` and ``zspace/z_norm`` (|z| after the step) at the trainer's step count.
        self.writer = writer

    def _log_steps(self, objectives: list[float]) -> None:
        if self.writer is None or not objectives:
            return
        step = int(self.state_dict()["step"])
        for i, objective in enumerate(objectives):
            self.writer.add_scalar("zspace/objective", objective, step - len(objectives) + 1 + i)
        self.writer.add_scalar("zspace/z_norm", math.sqrt(sum(v * v for v in self.state)), step)

    def reset(self) -> None:
        super().reset()
        self.last_inference = None

    def step(self, metrics: Any) -> float:
        """One Adam step on z; returns the objective before the update (see the class docs)."""
        objective = super().step(_canonical_metrics(metrics, "ZSpaceTrainer.step"))
        self._log_steps([objective])
        return objective

    def step_batch(self, samples: Iterable[Any]) -> list[float]:
        """``step`` on each sample in turn; returns the objectives. All or nothing: when a sample is
        refused the trainer is left as it was before the batch."""
        objectives = super().step_batch([_canonical_metrics(s, "ZSpaceTrainer.step_batch") for s in samples])
        self._log_steps(list(objectives))
        return objectives

    def _telemetry(self, partial: Any, telemetry: Any, who: str) -> dict[str, float]:
        tele = _flatten_telemetry(telemetry, who)
        if isinstance(partial, ZSpacePartialBundle):
            tele = {**(partial.telemetry or {}), **tele}
        return tele

    def infer_partial(self, partial: Any, *, smoothing: float = 0.35, telemetry: Any = None) -> ZSpaceInference:
        """Decodes z, overrides with the observed metrics and measures the disagreement
        (``infer_from_partial`` at this trainer's z and alpha)."""
        who = "ZSpaceTrainer.infer_partial"
        obs = _canonical_metrics(partial, who)
        return _inference(self._infer_partial(obs, float(smoothing), self._telemetry(partial, telemetry, who) or None))

    def step_partial(self, partial: Any, *, smoothing: float = 0.35, telemetry: Any = None) -> float:
        """``infer_partial``, then one Adam step along the fit gradient plus the supplied gradient
        (tanh, tiled) and the penalty direction; returns the objective before the update, on the
        inferred metrics. ``partial`` may be a dict, ``ZMetrics`` or a ``ZSpacePartialBundle``;
        ``smoothing`` and ``telemetry`` only shape the reported inference (barycentric weights,
        confidence), not the step. The inference is kept in ``last_inference``."""
        obs = _canonical_metrics(partial, "ZSpaceTrainer.step_partial")
        tele = self._telemetry(partial, telemetry, "ZSpaceTrainer.infer_partial")
        objective, inference = self._step_partial(obs, float(smoothing), tele or None)
        self.last_inference = _inference(inference)
        self._log_steps([objective])
        return objective

    def load_state_dict(self, state: dict[str, Any], *, strict: bool = True) -> None:
        """Restores ``z``, ``moment``, ``velocity`` and ``step`` from ``state_dict()`` output (or an
        original-format state labelled ``contract_version`` "spiraltorch.zspace_meta_optimizer.v2").

        Everything is checked before anything is written, so a refused state leaves the trainer
        unchanged. Raises ``CheckpointError`` (a ValueError) for: an unknown ``version`` or
        ``contract_version``; a missing vector; vectors that are not z_dim long or hold
        non-numbers or non-finite values; a negative ``velocity`` entry (Adam's second moment is a
        running mean of squares); a ``step`` that is not a non-negative integer. ``TypeError``
        when ``state`` is not a dict. With ``strict=False`` a missing vector keeps the trainer's
        current one (a present one is still checked)."""
        super().load_state_dict(state, strict=strict)


# ---------------------------------------------------------------- Z-space inference

_ZM_FIELDS = ("speed", "memory", "stability", "drs", "frac")


@dataclass(frozen=True)
class ZMetrics:
    """A (possibly partial) set of Z-space metrics: ``speed``, ``memory``, ``stability``, ``drs``,
    ``frac`` (None when not observed) and an optional ``gradient``. ``ZSpaceTrainer.step``,
    ``infer_from_partial`` and the pipeline accept it wherever a metrics dict goes."""

    speed: float | None = None
    memory: float | None = None
    stability: float | None = None
    drs: float | None = None
    frac: float | None = None
    gradient: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        for name in _ZM_FIELDS:
            v = getattr(self, name)
            if v is not None:
                f = float(v)
                if not math.isfinite(f):
                    raise _core.SpiralValueError(f"z_metrics: {name} is not finite ({v!r})")
                object.__setattr__(self, name, f)
        if self.gradient is not None:
            g = tuple(float(v) for v in self.gradient)
            if not all(math.isfinite(v) for v in g):
                raise _core.SpiralValueError(f"z_metrics: the gradient has non-finite entries {list(g)}")
            object.__setattr__(self, "gradient", g)

    def as_dict(self) -> dict[str, Any]:
        """The observed entries only (None fields are left out), gradient as a list."""
        out: dict[str, Any] = {n: getattr(self, n) for n in _ZM_FIELDS if getattr(self, n) is not None}
        if self.gradient is not None:
            out["gradient"] = list(self.gradient)
        return out


def z_metrics(*, speed: float | None = None, memory: float | None = None, stability: float | None = None,
              drs: float | None = None, frac: float | None = None, gradient: Iterable[float] | None = None,
              **aliases: Any) -> ZMetrics:
    """Builds a ``ZMetrics``; the aliases velocity/mem/stab/drift/grad are accepted. An unknown
    name, or a metric given twice (directly and through an alias), raises SpiralValueError."""
    values: dict[str, Any] = {"speed": speed, "memory": memory, "stability": stability, "drs": drs, "frac": frac,
                              "gradient": gradient}
    for key, value in aliases.items():
        name = _METRIC_ALIASES.get(key.lower())
        if name is None:
            raise _core.SpiralValueError(f"z_metrics: unknown metric {key!r} (expected speed, memory, stability, "
                                         "drs, frac, gradient or the aliases velocity, mem, stab, drift, grad)")
        if values[name] is not None:
            raise _core.SpiralValueError(f"z_metrics: metric {name!r} given twice (through alias {key!r})")
        values[name] = value
    grad = values.pop("gradient")
    return ZMetrics(**values, gradient=None if grad is None else tuple(grad))


@dataclass(frozen=True, eq=False)
class ZSpacePartialBundle:
    """One partial observation and its weight: ``metrics`` (canonical names; validated on
    construction), ``weight`` (>= 0; 0 switches the bundle off when blending), ``origin`` (a free
    label saying where it came from) and ``telemetry`` (flattened name -> number, used to judge how
    reliable the inference is)."""

    metrics: dict[str, Any]
    weight: float = 1.0
    origin: str | None = None
    telemetry: dict[str, float] | None = None

    def __post_init__(self) -> None:
        src = self.metrics.as_dict() if isinstance(self.metrics, ZMetrics) else (self.metrics or {})
        if not isinstance(src, dict):
            raise TypeError(f"ZSpacePartialBundle: metrics must be a dict or ZMetrics, got {type(src).__name__}")
        object.__setattr__(self, "metrics", _canonical_metrics(dict(src), "ZSpacePartialBundle"))
        w = float(self.weight)
        if not (math.isfinite(w) and w >= 0):
            raise _core.SpiralValueError(f"ZSpacePartialBundle: weight must be finite and >= 0, got {self.weight!r}")
        object.__setattr__(self, "weight", w)
        tele = _flatten_telemetry(self.telemetry, "ZSpacePartialBundle") if self.telemetry is not None else None
        object.__setattr__(self, "telemetry", tele)

    def resolved(self) -> dict[str, Any]:
        """A copy of the canonical metrics."""
        return {k: (list(v) if isinstance(v, list) else v) for k, v in self.metrics.items()}

    def telemetry_payload(self) -> dict[str, float] | None:
        return None if self.telemetry is None else dict(self.telemetry)


_STRATEGIES = ("mean", "last", "max", "min")


def blend_zspace_partials(partials: Sequence[Any], *, weights: Sequence[float] | None = None,
                          strategy: str = "mean") -> dict[str, Any]:
    """Fuses partial observations (dicts, ``ZMetrics`` or ``ZSpacePartialBundle``; None entries are
    skipped) into one canonical dict. Per metric: ``"mean"`` the weighted mean over the partials
    that observe it, ``"last"`` the last one, ``"max"``/``"min"``. Gradients are zero-padded to the
    longest and averaged with the weights. ``weights`` (one per partial) replace the bundles' own;
    a zero weight leaves a partial out."""
    who = "blend_zspace_partials"
    if strategy not in _STRATEGIES:
        raise _core.SpiralValueError(f"{who}: strategy must be one of {', '.join(_STRATEGIES)}, got {strategy!r}")
    items = list(partials)
    if weights is not None and len(weights) != len(items):
        raise _core.SpiralValueError(f"{who}: {len(weights)} weights for {len(items)} partials")
    per_metric: dict[str, list[tuple[float, float]]] = {}
    grads: list[tuple[list[float], float]] = []
    for i, p in enumerate(items):
        if p is None:
            continue
        bundle = p if isinstance(p, ZSpacePartialBundle) else ZSpacePartialBundle(p)
        w = bundle.weight if weights is None else float(weights[i])
        if not (math.isfinite(w) and w >= 0):
            raise _core.SpiralValueError(f"{who}: weight {i} must be finite and >= 0, got {w!r}")
        if w == 0:
            continue
        for k, v in bundle.metrics.items():
            if k == "gradient":
                grads.append((list(v), w))
            else:
                per_metric.setdefault(k, []).append((v, w))
    out: dict[str, Any] = {}
    for k, vals in per_metric.items():
        if strategy == "last":
            out[k] = vals[-1][0]
        elif strategy == "max":
            out[k] = max(v for v, _ in vals)
        elif strategy == "min":
            out[k] = min(v for v, _ in vals)
        else:
            out[k] = sum(v * w for v, w in vals) / sum(w for _, w in vals)
    if grads:
        n = max(len(g) for g, _ in grads)
        total = sum(w for _, w in grads)
        out["gradient"] = [sum((g[j] if j < len(g) else 0.0) * w for g, w in grads) / total for j in range(n)]
    return out


def infer_from_partial(z_state: Any, partial: Any, *, alpha: float = 0.35, smoothing: float = 0.35,
                       telemetry: Any = None) -> ZSpaceInference:
    """Completes partial observations at a latent z (a list, a Tensor, or a ``ZSpaceTrainer``, whose
    state is used): decodes z (``decode_zspace``), lets the observed metrics override the decoded
    ones, and reports the residual (RMS of observed - decoded), confidence, the gradient of the
    fit loss with respect to z and the barycentric weights (see ``ZSpaceInference``). ``partial``
    may be a dict, ``ZMetrics``, a ``ZSpacePartialBundle`` (its telemetry is used) or None (no
    observation: the prior). Nothing is modified."""
    who = "infer_from_partial"
    z = _z_vector(z_state, who)
    obs = {} if partial is None else _canonical_metrics(partial, who)
    tele = _flatten_telemetry(partial, who) if isinstance(partial, ZSpacePartialBundle) else {}
    tele.update(_flatten_telemetry(telemetry, who))
    return _infer(z, float(alpha), obs, smoothing, tele, who)


def compile_inference(fn: Callable[..., Any] | None = None, *, alpha: float = 0.35,
                      smoothing: float = 0.35) -> Any:
    """Wraps ``fn`` (which returns partial observations: a dict, ``ZMetrics``, a bundle, or None)
    into ``wrapped(z_state, *args, **kwargs) -> ZSpaceInference`` that calls ``fn(*args, **kwargs)``
    and completes its output at ``z_state`` with ``infer_from_partial``. Usable as ``@compile_inference``
    or ``@compile_inference(alpha=..., smoothing=...)``."""

    def wrap(f: Callable[..., Any]) -> Callable[..., ZSpaceInference]:
        if not callable(f):
            raise TypeError(f"compile_inference: expected a callable, got {type(f).__name__}")

        @functools.wraps(f)
        def wrapped(z_state: Any, *args: Any, **kwargs: Any) -> ZSpaceInference:
            return infer_from_partial(z_state, f(*args, **kwargs), alpha=alpha, smoothing=smoothing)

        return wrapped

    return wrap if fn is None else wrap(fn)


class ZSpaceInferencePipeline:
    """Collects partial observations from several sources and completes them together at a latent
    z (a list, a Tensor, or a ``ZSpaceTrainer``, read at each ``infer`` so it follows training).

    ``add_partial`` queues a bundle (with weight, origin and telemetry); ``infer`` blends the
    queue (``blend_zspace_partials`` with ``strategy``), merges the bundles' and the pipeline's
    telemetry, runs ``infer_from_partial`` and, with ``clear=True`` (default), empties the queue.
    A failing ``infer`` leaves the queue as it was."""

    def __init__(self, z_state: Any, *, alpha: float = 0.35, smoothing: float = 0.35, strategy: str = "mean",
                 telemetry: dict[str, Any] | None = None) -> None:
        if strategy not in _STRATEGIES:
            raise _core.SpiralValueError(f"ZSpaceInferencePipeline: strategy must be one of "
                                         f"{', '.join(_STRATEGIES)}, got {strategy!r}")
        if not 0.0 <= float(smoothing) <= 1.0:
            raise _core.SpiralValueError(f"ZSpaceInferencePipeline: smoothing must be in [0, 1], got {smoothing!r}")
        if not isinstance(z_state, ZSpaceTrainer):
            z_state = _z_vector(z_state, "ZSpaceInferencePipeline")
        self._z_source = z_state
        self.alpha, self.smoothing, self.strategy = float(alpha), float(smoothing), strategy
        self._telemetry = _flatten_telemetry(telemetry, "ZSpaceInferencePipeline")
        self._partials: list[ZSpacePartialBundle] = []
        self.last_inference: ZSpaceInference | None = None

    @property
    def z_state(self) -> list[float]:
        return _z_vector(self._z_source, "ZSpaceInferencePipeline")

    @property
    def partials(self) -> list[ZSpacePartialBundle]:
        return list(self._partials)

    def __len__(self) -> int:
        return len(self._partials)

    def add_partial(self, partial: Any, *, weight: float | None = None, origin: str | None = None,
                    telemetry: dict[str, Any] | None = None) -> ZSpacePartialBundle:
        """Queues one observation (dict, ``ZMetrics`` or bundle; ``weight``/``origin``/``telemetry``
        override the bundle's) and returns the queued bundle."""
        if isinstance(partial, ZSpacePartialBundle):
            bundle = ZSpacePartialBundle(partial.metrics, partial.weight if weight is None else weight,
                                         partial.origin if origin is None else origin,
                                         {**(partial.telemetry or {}), **(telemetry or {})} or None)
        else:
            bundle = ZSpacePartialBundle(partial, 1.0 if weight is None else weight, origin, telemetry)
        self._partials.append(bundle)
        return bundle

    def extend(self, partials: Iterable[Any]) -> int:
        """Queues each of ``partials``; returns how many were added (all or none: they are
        validated first)."""
        bundles = [p if isinstance(p, ZSpacePartialBundle) else ZSpacePartialBundle(p) for p in partials]
        self._partials.extend(bundles)
        return len(bundles)

    def clear(self) -> int:
        """Empties the queue; returns how many partials it held."""
        n = len(self._partials)
        self._partials.clear()
        return n

    def blended(self, *, strategy: str | None = None, weights: Sequence[float] | None = None) -> dict[str, Any]:
        """The queue fused into one observation (nothing is removed)."""
        return blend_zspace_partials(self._partials, strategy=strategy or self.strategy, weights=weights)

    def infer(self, *, strategy: str | None = None, weights: Sequence[float] | None = None, clear: bool = True,
              telemetry: dict[str, Any] | None = None) -> ZSpaceInference:
        """Blends the queued partials and completes them at the current z; see the class docs."""
        merged = self.blended(strategy=strategy, weights=weights)
        tele = dict(self._telemetry)
        for b in self._partials:
            tele.update(b.telemetry or {})
        tele.update(_flatten_telemetry(telemetry, "ZSpaceInferencePipeline.infer"))
        inference = _infer(self.z_state, self.alpha, merged, self.smoothing, tele, "ZSpaceInferencePipeline.infer")
        if clear:
            self._partials.clear()
        self.last_inference = inference
        return inference


def encode_zspace(text: str, *, curvature: float = -1.0, temperature: float = 0.5) -> Any:
    """``LanguageWaveEncoder(curvature, temperature).encode_z_space(text)``: the text as a (1, 2N)
    point of the ball."""
    return LanguageWaveEncoder(curvature, temperature).encode_z_space(text)


class ZSpaceNotation:
    """The ``st.z`` namespace.

    ``st.z("text")``, ``st.z["text"]`` and ``st.z["text", 0.7]`` (temperature) encode text
    (``encode_zspace``); ``st.z.metrics(...)`` is ``z_metrics``; ``st.z.partial(...)`` builds a
    ``ZSpacePartialBundle``; ``st.z.bundle(...)`` blends partials. It also holds a process-wide
    queue of observations: ``st.z.record(...)`` adds partials (from anywhere in the program),
    ``st.z.pending()`` lists them, ``st.z.infer(z_state)`` blends and completes them at a latent z
    (``clear=True`` also empties the queue), ``st.z.clear()`` empties it and says how many went."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: list[ZSpacePartialBundle] = []

    def __call__(self, text: str, **kwargs: Any) -> Any:
        return encode_zspace(text, **kwargs)

    def __getitem__(self, selector: Any) -> Any:
        if isinstance(selector, str):
            return encode_zspace(selector)
        if isinstance(selector, tuple) and len(selector) == 2 and isinstance(selector[0], str) \
                and isinstance(selector[1], (int, float)) and not isinstance(selector[1], bool):
            return encode_zspace(selector[0], temperature=float(selector[1]))
        raise TypeError(f"st.z[...]: expected text or (text, temperature), got {selector!r}")

    def metrics(self, **kwargs: Any) -> ZMetrics:
        return z_metrics(**kwargs)

    def partial(self, metrics: Any = None, *, weight: float = 1.0, origin: str | None = None,
                telemetry: dict[str, Any] | None = None, **named: Any) -> ZSpacePartialBundle:
        """A bundle from a mapping/``ZMetrics`` and/or keyword metrics (keywords win)."""
        base = metrics.as_dict() if isinstance(metrics, ZMetrics) else dict(metrics or {})
        base.update(z_metrics(**named).as_dict() if named else {})
        return ZSpacePartialBundle(base, weight, origin, telemetry)

    def bundle(self, *partials: Any, strategy: str = "mean", weights: Sequence[float] | None = None) -> dict[str, Any]:
        return blend_zspace_partials(list(partials), strategy=strategy, weights=weights)

    blend = bundle

    def record(self, *partials: Any) -> int:
        """Adds partials to the process-wide queue (validated first); returns the queue length."""
        bundles = [p if isinstance(p, ZSpacePartialBundle) else ZSpacePartialBundle(p) for p in partials]
        with self._lock:
            self._queue.extend(bundles)
            return len(self._queue)

    def pending(self) -> list[ZSpacePartialBundle]:
        with self._lock:
            return list(self._queue)

    def infer(self, z_state: Any, *, strategy: str = "mean", alpha: float = 0.35, smoothing: float = 0.35,
              clear: bool = False) -> ZSpaceInference:
        """Blends the queued partials and completes them at ``z_state`` (``infer_from_partial``)."""
        with self._lock:
            queued = list(self._queue)
            tele: dict[str, float] = {}
            for b in queued:
                tele.update(b.telemetry or {})
            result = infer_from_partial(z_state, blend_zspace_partials(queued, strategy=strategy), alpha=alpha,
                                        smoothing=smoothing, telemetry=tele or None)
            if clear:
                self._queue.clear()
            return result

    def clear(self) -> int:
        """Empties the process-wide queue; returns how many partials it held."""
        with self._lock:
            n = len(self._queue)
            self._queue.clear()
            return n


z = ZSpaceNotation()


_TOPOS_KEYS = {"curvature": "curvature", "tolerance": "tolerance", "saturation": "saturation",
               "max_depth": "max_depth", "depth": "max_depth", "max_volume": "max_volume", "volume": "max_volume",
               "porosity": "porosity"}


def as_topos(topos: Any, op: str = "topos") -> Any:
    """An ``OpenCartesianTopos`` from the object itself, a mapping (keys curvature, tolerance,
    saturation, max_depth|depth, max_volume|volume, porosity) or a 5-tuple (curvature, tolerance,
    saturation, max_depth, max_volume); None stays None."""
    if topos is None or isinstance(topos, _core.OpenCartesianTopos):
        return topos
    if isinstance(topos, dict):
        kwargs: dict[str, Any] = {}
        for key, value in topos.items():
            name = _TOPOS_KEYS.get(str(key))
            if name is None:
                raise _core.SpiralValueError(f"{op}: unknown topos key {key!r} (expected {', '.join(_TOPOS_KEYS)})")
            kwargs[name] = value
        porosity = kwargs.pop("porosity", None)
        base = _core.hypergrad_topos(**kwargs)
        return base if porosity is None else base.with_porosity(float(porosity))
    if isinstance(topos, (tuple, list)) and len(topos) == 5:
        c, tol, sat, depth, volume = topos
        return _core.OpenCartesianTopos(float(c), float(tol), float(sat), int(depth), int(volume))
    raise TypeError(f"{op}: topos must be an OpenCartesianTopos, a mapping or a 5-tuple, got {type(topos).__name__}")


def hypergrad(curvature: float = -1.0, learning_rate: float = 0.05, rows: int = 1, cols: int = 1, *,
              topos: Any = None) -> Hypergrad:
    """The original's factory: ``Hypergrad(curvature, learning_rate, rows, cols, topos=topos)``.
    ``topos`` (an ``OpenCartesianTopos``/``OpenTopos``, a mapping or a 5-tuple, see ``as_topos``)
    guards every step: same curvature as the tape, volume, saturation of gradients and weights."""
    return Hypergrad(curvature, learning_rate, rows, cols, topos=as_topos(topos, "hypergrad"))


def realgrad(learning_rate: float = 0.05, rows: int = 1, cols: int = 1, *, topos: Any = None) -> Realgrad:
    """The original's factory: ``Realgrad(learning_rate, rows, cols, topos=topos)``; ``topos`` guards
    every step (volume, saturation of gradients and weights)."""
    return Realgrad(learning_rate, rows, cols, topos=as_topos(topos, "realgrad"))


__all__ += ["as_topos", "hypergrad", "realgrad"]
