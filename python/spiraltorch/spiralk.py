"""SpiralK, the plan language of the rank-k planner, and the Maxwell-coded envelope -> SpiralK hint
bridge.

``parse(script)`` checks a program with the C++ parser (``spiraltorch/runtime/spiralk.h``; the
grammar is in docs/spiralk.md) and ``SpiralKProgram.eval(**variables)`` runs it, returning the hard
assignments, the soft rules whose condition held and the kind of a ``unison`` block. Errors raise
``SpiralKError`` (a SpiralValueError) with ``.line`` and ``.column``.

The Maxwell bridge is a formatting utility: it turns per-channel statistics of a coded envelope
(blocks of a repeated, modulated signal whose mean response should be ``kappa * lambda``) into
SpiralK soft rules ``soft (maxwell.bias, <z_bias>, <weight>, channel == "<name>" && blocks >=
<n>);`` that a tuner reads when the variables ``channel`` and ``blocks`` are in scope. The
statistics are real (Welford mean/variance, the z statistic of the mean, the number of blocks a
target z needs); the mapping from a z score to a hint weight and bias is a labelled heuristic.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any, Iterable

from . import _core

__all__ = ["MaxwellFingerprint", "MaxwellSpiralKBridge", "MaxwellSpiralKHint", "SequentialZ", "SpiralKError",
           "SpiralKProgram", "expected_z_curve", "hard_fields", "parse", "required_blocks", "simulate_z_curve"]

SpiralKError = _core.SpiralKError


class SpiralKProgram:
    """A parsed SpiralK program (syntax checked at construction)."""

    __slots__ = ("source",)

    def __init__(self, source: str) -> None:
        if not isinstance(source, str):
            raise TypeError(f"spiralk.parse: the program must be a str, got {type(source).__name__}")
        _core._spiralk_check(source)
        self.source = source

    def eval(self, variables: dict[str, Any] | None = None, **more: Any) -> dict[str, Any]:
        """Runs the program with ``variables`` (and keyword variables) in scope: bools, numbers or
        strings. Returns ``{"hard": {field: value}, "soft": [{"field", "value", "weight"}],
        "unison_kind": str | None}``; whole numbers come back as int."""
        scope = dict(variables or {})
        scope.update(more)
        return _core._spiralk_eval(self.source, scope)

    def __repr__(self) -> str:
        first = self.source.strip().splitlines()[0] if self.source.strip() else ""
        return f"SpiralKProgram({first!r}{', ...' if self.source.strip().count(chr(10)) else ''})"


def parse(source: str) -> SpiralKProgram:
    """Parses ``source``; raises SpiralKError (``spiralk: line L, column C: ...``) on a syntax error."""
    return SpiralKProgram(source)


def hard_fields() -> list[str]:
    """The plan fields a program may assign (canonical names; aliases such as ``wg`` map onto them)."""
    return list(_core._spiralk_hard_fields())


# ---------------------------------------------------------------- Maxwell statistics

class SequentialZ:
    """Running mean and unbiased variance of block measurements (Welford), and the z statistic of
    the mean: ``z = mean / (std / sqrt(n))``."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self._n, self._mean, self._m2 = 0, 0.0, 0.0

    def push(self, x: float) -> float | None:
        """Adds one measurement; returns the current z, or None while it is undefined (fewer than
        two samples, or zero variance)."""
        x = float(x)
        if not math.isfinite(x):
            raise _core.SpiralValueError(f"SequentialZ.push: the measurement must be finite, got {x}")
        self._n += 1
        delta = x - self._mean
        self._mean += delta / self._n
        self._m2 += delta * (x - self._mean)
        return self.z_stat()

    def __len__(self) -> int:
        return self._n

    def is_empty(self) -> bool:
        return self._n == 0

    def mean(self) -> float:
        return self._mean

    def variance(self) -> float:
        """The unbiased sample variance (0 with fewer than two samples)."""
        return self._m2 / (self._n - 1) if self._n > 1 else 0.0

    def standard_error(self) -> float | None:
        """``sqrt(variance / n)``, or None when it is not a positive finite number."""
        if self._n < 2:
            return None
        se = math.sqrt(self.variance() / self._n)
        return se if se > 0 and math.isfinite(se) else None

    def z_stat(self) -> float | None:
        se = self.standard_error()
        return None if se is None else self._mean / se


def required_blocks(target_z: float, sigma: float, kappa: float, lambda_: float) -> float | None:
    """Blocks needed for the mean of N(kappa*lambda, sigma^2) measurements to reach z = target_z on
    average: ``(|target_z| * |sigma| / (|kappa| * |lambda|))**2``; None when kappa*lambda is ~0."""
    signal = abs(kappa) * abs(lambda_)
    if signal <= 1e-12:
        return None
    return (abs(target_z) * abs(sigma) / signal) ** 2


def expected_z_curve(blocks: int, sigma: float, kappa: float, lambda_: float) -> list[float]:
    """The expected z after n = 1..blocks blocks: ``(kappa*lambda / sigma) * sqrt(n)``."""
    if not (isinstance(blocks, int) and blocks >= 0):
        raise _core.SpiralValueError(f"expected_z_curve: blocks must be a non-negative int, got {blocks!r}")
    if not (sigma > 0 and math.isfinite(sigma)):
        raise _core.SpiralValueError(f"expected_z_curve: sigma must be positive and finite, got {sigma}")
    return [(kappa * lambda_ / sigma) * math.sqrt(n) for n in range(1, blocks + 1)]


def simulate_z_curve(blocks: int, sigma: float, kappa: float, lambda_: float, *, seed: int = 0) -> list[float]:
    """The z of the running mean over ``blocks`` simulated measurements drawn from
    N(kappa*lambda, sigma^2) with a seeded generator (0.0 while z is undefined, so the first entry
    is 0)."""
    expected_z_curve(blocks, sigma, kappa, lambda_)  # same argument checks
    rng = random.Random(seed)
    z = SequentialZ()
    out = []
    for _ in range(blocks):
        v = z.push(rng.gauss(kappa * lambda_, sigma))
        out.append(0.0 if v is None else v)
    return out


@dataclass(frozen=True)
class MaxwellFingerprint:
    """How strongly a coded envelope should show in one block: ``lambda_() = gamma * modulation_depth
    * tissue_response * 10**(-shielding_db / 20) * transmit_gain * |cos(polarization_angle)| /
    distance_m`` (negative factors clamped to 0, distance at least 1e-9): a received amplitude under
    free-space 1/r falloff, shielding attenuation in dB and polarisation mismatch."""

    gamma: float
    modulation_depth: float
    tissue_response: float
    shielding_db: float
    transmit_gain: float
    polarization_angle: float
    distance_m: float

    def lambda_(self) -> float:
        pos = lambda v: max(float(v), 0.0)  # noqa: E731
        attenuation = 10.0 ** (-float(self.shielding_db) / 20.0)
        return (pos(self.gamma) * pos(self.modulation_depth) * pos(self.tissue_response) * attenuation *
                pos(self.transmit_gain) * abs(math.cos(self.polarization_angle)) / max(float(self.distance_m), 1e-9))

    def expected_block_mean(self, kappa: float) -> float:
        """``kappa * lambda``: the mean block response for code gain ``kappa``."""
        return kappa * self.lambda_()


# ---------------------------------------------------------------- the hint bridge

def _sanitise_channel(name: str) -> str:
    out = "".join(c if c.isascii() and c.isalnum() else ("_" if c in "-_ :/" else "") for c in str(name))
    return out or "maxwell"


@dataclass(frozen=True)
class MaxwellSpiralKHint:
    """One channel's hint: the soft rule ``script_line()`` says "when tuning for ``channel`` after at
    least ``blocks`` blocks, prefer ``maxwell.bias = z_bias`` with confidence ``weight``"."""

    channel: str
    blocks: int
    mean: float
    standard_error: float
    z_score: float
    z_bias: float
    weight: float
    band_energy: tuple[float, float, float] | None = None

    def script_line(self) -> str:
        return (f"soft (maxwell.bias, {self.z_bias:.6f}, {self.weight:.3f}, "
                f"channel == \"{self.channel}\" && blocks >= {self.blocks});")


class MaxwellSpiralKBridge:
    """Collects per-channel Maxwell pulse statistics and formats them as a SpiralK program: the
    optional ``base_program`` (hard rules, ``;`` appended when missing) followed by one soft rule
    per pushed pulse.

    Heuristic (labelled): a pulse with z score z gets weight ``min_weight + (max_weight -
    min_weight) * |z| / (1 + |z|)`` (more evidence, more confidence, saturating) and, unless given,
    ``z_bias = z / (1 + |z|)`` (the signed evidence squashed into (-1, 1))."""

    def __init__(self, base_program: str | None = None, *, min_weight: float = 0.55, max_weight: float = 0.95) -> None:
        if not (0.0 <= min_weight <= max_weight <= 1.0):
            raise _core.SpiralValueError(f"MaxwellSpiralKBridge: need 0 <= min_weight <= max_weight <= 1, got "
                                         f"{min_weight} and {max_weight}")
        self.base_program = base_program
        base = self._base_line()
        if base is not None:
            parse(base)  # a broken base program is reported here, with its position
        self.min_weight = float(min_weight)
        self.max_weight = float(max_weight)
        self._hints: list[MaxwellSpiralKHint] = []

    def _base_line(self) -> str | None:
        if not (self.base_program and self.base_program.strip()):
            return None
        base = self.base_program.strip()
        return base if base.endswith((";", "}")) else base + ";"

    def weight_for(self, z_score: float) -> float:
        a = abs(float(z_score))
        return self.min_weight + (self.max_weight - self.min_weight) * a / (1.0 + a)

    def push_pulse(self, channel: str, blocks: int, mean: float, standard_error: float, z_score: float, *,
                   band_energy: Iterable[float] | None = None, z_bias: float | None = None) -> MaxwellSpiralKHint:
        """Records one channel's statistics and returns its hint (the channel name keeps ASCII
        letters and digits, turns ``- _ space : /`` into ``_``, drops the rest; empty -> "maxwell")."""
        if not (isinstance(blocks, int) and not isinstance(blocks, bool) and blocks >= 0):
            raise _core.SpiralValueError(f"MaxwellSpiralKBridge.push_pulse: blocks must be a non-negative int, "
                                         f"got {blocks!r}")
        for name, v in (("mean", mean), ("standard_error", standard_error), ("z_score", z_score)):
            if not math.isfinite(float(v)):
                raise _core.SpiralValueError(f"MaxwellSpiralKBridge.push_pulse: {name} must be finite, got {v}")
        z = float(z_score)
        bias = z / (1.0 + abs(z)) if z_bias is None else float(z_bias)
        bands = None if band_energy is None else tuple(float(b) for b in band_energy)
        if bands is not None and len(bands) != 3:
            raise _core.SpiralValueError("MaxwellSpiralKBridge.push_pulse: band_energy needs 3 values "
                                         f"(above, here, beneath), got {len(bands)}")
        hint = MaxwellSpiralKHint(_sanitise_channel(channel), blocks, float(mean), float(standard_error), z, bias,
                                  self.weight_for(z), bands)  # type: ignore[arg-type]
        self._hints.append(hint)
        return hint

    def push_measurements(self, channel: str, measurements: Iterable[float], **kwargs: Any) -> MaxwellSpiralKHint:
        """``push_pulse`` from raw block measurements (their count, mean, standard error and z)."""
        z = SequentialZ()
        for m in measurements:
            z.push(m)
        se, zs = z.standard_error(), z.z_stat()
        if se is None or zs is None:
            raise _core.SpiralValueError(f"MaxwellSpiralKBridge.push_measurements: channel {channel!r} needs at "
                                         f"least two measurements that are not all equal, got {len(z)}")
        return self.push_pulse(channel, len(z), z.mean(), se, zs, **kwargs)

    def hints(self) -> list[MaxwellSpiralKHint]:
        return list(self._hints)

    def is_empty(self) -> bool:
        return not self._hints

    def clear(self) -> None:
        self._hints.clear()

    def script(self) -> str | None:
        """The base program line (with ``;`` appended when missing) then one line per hint, joined by
        newlines; None when there is neither."""
        base = self._base_line()
        lines = [] if base is None else [base]
        lines += [h.script_line() for h in self._hints]
        return "\n".join(lines) if lines else None
