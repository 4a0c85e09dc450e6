"""Small built-in datasets generated on the fly (no downloads)."""

from __future__ import annotations

import math
from typing import Tuple

from . import _core


def make_spirals(
    samples_per_class: int = 200, classes: int = 3, noise: float = 0.2, seed: int = 0
) -> Tuple["_core.Tensor", "_core.Tensor"]:
    """Interleaved spiral arms in the plane, one arm per class.

    Returns ``(x, y)``: ``x`` is float32 of shape ``(samples_per_class * classes, 2)``,
    ``y`` the int64 class index of each point. Points of class ``k`` lie on
    ``r * (sin t, cos t)`` with ``r`` in [0, 1] and ``t = 4 r + 2 pi k / classes``
    plus Gaussian angle noise of std ``noise``; the classes are not linearly separable.
    """
    if samples_per_class <= 0 or classes <= 1:
        raise _core.SpiralValueError(
            f"make_spirals: need samples_per_class > 0 and classes > 1, got {samples_per_class}, {classes}"
        )
    state = _core._get_rng_state()
    _core.manual_seed(seed)
    try:
        n = samples_per_class
        radius = _core.linspace(0.0, 1.0, n).reshape(1, n).expand(classes, n)
        offsets = (_core.arange(classes, dtype="float32") * (2 * math.pi / classes)).reshape(classes, 1)
        theta = radius * 4.0 + offsets + _core.randn(classes, n) * noise
        x = _core.stack([radius * theta.sin(), radius * theta.cos()], dim=-1).reshape(classes * n, 2)
        y = _core.arange(classes).reshape(classes, 1).expand(classes, n).reshape(classes * n)
        return x.contiguous(), y.contiguous()
    finally:
        _core._set_rng_state(*state)
