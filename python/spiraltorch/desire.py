"""Adapters from Z-space downstream hooks to desire-pipeline settings (dictionary glue; the
pipeline itself is ``spiraltorch.nn.DesirePipeline`` in C++)."""

from __future__ import annotations

import json
import math
import os
from typing import Any, Dict, Mapping, Optional, Sequence, Union

PHASE_TERMS = {"observation": -0.18, "injection": 0.0, "integration": 0.16}


def _clamp(x: float, lo: float, hi: float) -> float:
    return min(max(x, lo), hi)


def _number(v: Any, default: float) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return default
    return f if math.isfinite(f) else default


def build_desire_adapter_from_downstream_hook(
    hook_or_manifest: Union[Mapping[str, Any], str, os.PathLike],
    *,
    base_gain: float = 1.0,
    min_gain: float = 0.45,
    max_gain: float = 1.8,
    stability_weight: float = 0.45,
    momentum_weight: float = 0.2,
    delta_weight: float = 0.35,
    phase_bias: Optional[Mapping[str, float]] = None,
) -> Dict[str, Any]:
    """Turns a Z-space downstream hook (a dict, or a path to its JSON file) into desire settings.

    Signals, each with a neutral default when the hook does not carry it:
      stability = clamp(desire_candidate.stability, 0, 1), else geometry_bias_coherence.score, else 0.5
      momentum  = tanh(desire_candidate.momentum), else 0
      delta     = tanh(max(desire_candidate.delta, 0)), else 0
      phase     = desire_candidate.phase if given, else "integration" when stability >= 0.8,
                  "injection" when >= 0.5, otherwise "observation"
    Then gain = clamp(base_gain * (1 + stability_weight * (2 stability - 1) + momentum_weight * momentum
    - delta_weight * delta + phase_term[phase]), min_gain, max_gain) with phase terms
    observation -0.18, injection 0, integration +0.16 (``phase_bias`` overrides them), and
    temperature_scale = clamp(1 / gain, 0.6, 1.8). ``top_probability`` is reported as the focus metric.

    Returns {"kind": "spiraltorch.desire_adapter", "gain", "temperature_scale", "phase_hint",
    "stability_signal", "momentum_signal", "delta_signal", "focus_metric",
    "geometry_bias_signal": [stability, momentum, delta, gain / max_gain], "guidance"}.
    """
    hook: Mapping[str, Any]
    if isinstance(hook_or_manifest, (str, os.PathLike)):
        with open(hook_or_manifest, encoding="utf-8") as f:
            hook = json.load(f)
    elif isinstance(hook_or_manifest, Mapping):
        hook = hook_or_manifest
    else:
        raise TypeError("build_desire_adapter_from_downstream_hook: expected a dict or a path, got "
                        f"{type(hook_or_manifest).__name__}")
    if not (0 < min_gain <= max_gain) or not math.isfinite(max_gain):
        raise ValueError(f"build_desire_adapter_from_downstream_hook: need 0 < min_gain <= max_gain, got {min_gain}, {max_gain}")
    if isinstance(hook.get("downstream_hook"), Mapping):
        hook = hook["downstream_hook"]
    cand = hook.get("desire_candidate") if isinstance(hook.get("desire_candidate"), Mapping) else {}
    coherence = hook.get("geometry_bias_coherence") if isinstance(hook.get("geometry_bias_coherence"), Mapping) else {}
    if "stability" in cand:
        stability = _clamp(_number(cand["stability"], 0.5), 0.0, 1.0)
    else:
        stability = _clamp(_number(coherence.get("score"), 0.5), 0.0, 1.0)
    momentum = math.tanh(_number(cand.get("momentum"), 0.0))
    delta = math.tanh(max(_number(cand.get("delta"), 0.0), 0.0))
    phase = cand.get("phase")
    if phase not in PHASE_TERMS:
        phase = "integration" if stability >= 0.8 else "injection" if stability >= 0.5 else "observation"
    terms = dict(PHASE_TERMS)
    terms.update(phase_bias or {})
    gain = _clamp(base_gain * (1 + stability_weight * (2 * stability - 1) + momentum_weight * momentum
                               - delta_weight * delta + terms[phase]), min_gain, max_gain)
    temperature_scale = _clamp(1.0 / gain, 0.6, 1.8)
    focus = _number(hook.get("top_probability"), float("nan"))
    guidance = ("sharpen: scale logits up" if gain > 1.0 else "soften: scale logits down" if gain < 1.0
                else "leave logits unchanged")
    return {
        "kind": "spiraltorch.desire_adapter", "gain": gain, "temperature_scale": temperature_scale,
        "phase_hint": phase, "stability_signal": stability, "momentum_signal": momentum, "delta_signal": delta,
        "focus_metric": None if math.isnan(focus) else focus,
        "geometry_bias_signal": [stability, momentum, delta, gain / max_gain], "guidance": guidance,
    }


def desire_step_from_downstream_hook(pipeline: Any, logits: Sequence[float], previous_token: int,
                                     hook: Union[Mapping[str, Any], str, os.PathLike], *,
                                     concept: Optional[Sequence[float]] = None, **adapter_kwargs: Any) -> Dict[str, Any]:
    """Builds the adapter for ``hook``, stores its bias signal in ``pipeline`` (telemetry), scales the
    logits by the adapter's gain and runs one ``pipeline.step``; the step's dict gains
    ``downstream_adapter``, ``scaled_logits_gain`` and ``geometry_bias_metrics``."""
    adapter = build_desire_adapter_from_downstream_hook(hook, **adapter_kwargs)
    pipeline.ingest_geometry_bias(adapter["geometry_bias_signal"], source="zspace")
    scaled = [float(v) * adapter["gain"] for v in (logits.tolist() if hasattr(logits, "tolist") else logits)]
    step = pipeline.step(scaled, previous_token, concept)
    step["downstream_adapter"] = adapter
    step["scaled_logits_gain"] = adapter["gain"]
    step["geometry_bias_metrics"] = pipeline.geometry_bias_metrics()
    return step
