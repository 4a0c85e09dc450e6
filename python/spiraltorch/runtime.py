"""Device descriptions and backend selection: ``describe_device`` (one backend, optionally with
the launch/tiling plan the rank-k planner would use for a workgroup size and a column count),
``describe_runtime_devices`` (several backends at once), ``observe_runtime_device_probe`` (the
requested and the effective runtime of one request), ``evaluate_runtime_device_route`` (which
backend a run should take, and what blocks it) and ``init_backend``.

Nothing here reports hardware that is not there: the CPU is always present; CUDA is reported
available only when the build has it and a GPU answers, otherwise with the reason; WGPU likewise
(the real adapter's name, backend, limits and features when one answers); HIP and MPS are not
compiled into SpiralTorch and are reported as such.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Sequence

from . import _core

__all__ = ["KNOWN_BACKENDS", "describe_device", "describe_runtime_devices", "evaluate_runtime_device_route",
           "init_backend", "observe_runtime_device_probe", "runtime_state"]

KNOWN_BACKENDS = ("cpu", "cuda", "wgpu", "hip", "mps", "auto")
_ALIASES = {"webgpu": "wgpu", "rocm": "hip", "faer": "cpu", "simd": "cpu", "cpu-simd": "cpu", "cpu_simd": "cpu",
            "naive": "cpu", "": "auto"}


def _canonical(backend: Any, op: str) -> str:
    if backend is None:
        return "auto"
    if not isinstance(backend, str):
        raise TypeError(f"{op}: backend must be a string, got {type(backend).__name__}")
    name = backend.strip().lower()
    name = _ALIASES.get(name, name)
    if name not in KNOWN_BACKENDS:
        raise _core.SpiralValueError(f"{op}: unknown backend '{backend}' (known: {', '.join(KNOWN_BACKENDS)})")
    return name


def _resolve_auto() -> str:
    return "cuda" if _core._cuda_is_available() else "cpu"


def runtime_state(backend: str) -> Dict[str, Any]:
    """What this process knows about running on ``backend`` right now: ``compiled`` (the build has
    kernels for it), ``runtime_ready`` (a device answers and work can run there), ``runtime_status``
    ("cpu", "ready", "initialization_failed": built but no usable device, "feature_disabled": not
    built) and ``reason`` (why it is not ready, else None). ``"auto"`` is resolved first."""
    name = _canonical(backend, "runtime_state")
    if name == "auto":
        name = _resolve_auto()
    if name == "cpu":
        return {"backend": "cpu", "compiled": True, "runtime_ready": True, "runtime_status": "cpu", "reason": None}
    if name == "cuda":
        built, ready = bool(_core._cuda_is_built()), bool(_core._cuda_is_available())
        return {"backend": "cuda", "compiled": built, "runtime_ready": ready,
                "runtime_status": "ready" if ready else ("initialization_failed" if built else "feature_disabled"),
                "reason": None if ready else _core._cuda_unavailable_reason()}
    if name == "wgpu":
        built, ready = bool(_core._wgpu_is_built()), bool(_core._wgpu_is_available())
        return {"backend": "wgpu", "compiled": built, "runtime_ready": ready,
                "runtime_status": "ready" if ready else ("initialization_failed" if built else "feature_disabled"),
                "reason": None if ready else _core._wgpu_unavailable_reason()}
    return {"backend": name, "compiled": False, "runtime_ready": False, "runtime_status": "feature_disabled",
            "reason": f"the {name} backend is not compiled into this build"}


def _positive(op: str, name: str, v: Any) -> Optional[int]:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise _core.SpiralValueError(f"{op}: {name} must be a positive integer, got {v!r}")
    return v


def _launch_plan(op: str, backend: str, workgroup: Optional[int], cols: Optional[int], rows: int,
                 caps_overrides: Dict[str, Any]) -> Dict[str, Any]:
    """The device capabilities the planner uses for ``backend`` and, for a requested workgroup size
    and/or column count, the launch and tiling it derives (``spiraltorch.planner``)."""
    from . import planner as _planner

    workgroup = _positive(op, "workgroup", workgroup)
    cols = _positive(op, "cols", cols)
    rows = _positive(op, "rows", rows) or 1
    plan_backend = "cpu" if backend == "mps" else backend  # no Metal backend: MPS plans use the CPU surrogate
    try:
        caps = _planner.DeviceCaps.for_backend(plan_backend, **caps_overrides)
    except ValueError as exc:
        raise _core.SpiralValueError(f"{op}: {exc}") from None
    out: Dict[str, Any] = {
        "caps": {"backend": caps.backend, "subgroup": caps.subgroup, "lane_width": caps.lane_width,
                 "max_workgroup": caps.max_workgroup, "shared_mem_per_workgroup": caps.shared_mem_per_workgroup},
        "caps_source": "device" if backend == "cuda" and _core._cuda_is_available() else "table",
    }
    aligned = None
    if workgroup is not None:
        aligned = caps.align_workgroup(workgroup)
        groups = -(-workgroup // aligned)
        lanes = caps.lane_width
        # Heuristic (the original's occupancy score, kept as a labelled heuristic, not a measurement):
        # 0.6 * aligned/max + 0.4 * (1 - min(|aligned - w|/aligned, 0.6)), times
        # min(aligned/lanes/4, 1.25) on subgroup devices, clamped to [0, 1.25].
        score = 0.6 * aligned / caps.max_workgroup + 0.4 * (1.0 - min(abs(aligned - workgroup) / aligned, 0.6))
        if caps.subgroup:
            score *= min(aligned / lanes / 4.0, 1.25)
        out.update(requested_workgroup=workgroup, aligned_workgroup=aligned, workgroups_for_request=groups,
                   lane_utilization=workgroup / (groups * aligned), subgroups_per_workgroup=aligned // lanes,
                   occupancy_score=min(max(score, 0.0), 1.25))
    if cols is not None:
        plan = _planner.plan("topk", rows, cols, 1, backend=plan_backend, **caps_overrides)
        tiles = -(-cols // plan.tile)
        out.update(cols=cols, rows=rows, preferred_tile=plan.tile, preferred_compaction_tile=plan.compaction_tile,
                   column_tiles=tiles, channel_stride=plan.channel_stride, use_two_stage=plan.use_two_stage,
                   fft_tile=plan.fft_tile, planner_workgroup=plan.workgroup)
        if aligned is not None:
            out["elements_per_thread"] = -(-plan.tile // aligned)
            out["dispatch"] = {"workgroups": [tiles, rows, 1], "workgroup_size": aligned,
                               "threads": tiles * rows * aligned}
    return out


def describe_device(backend: str = "cpu", *, workgroup: Optional[int] = None, cols: Optional[int] = None,
                    rows: int = 1, lane_width: Optional[int] = None, subgroup: Optional[bool] = None,
                    max_workgroup: Optional[int] = None,
                    shared_mem_per_workgroup: Optional[int] = None) -> Dict[str, Any]:
    """Describes a backend: ``backend``, ``device``, ``available`` and what is known of
    the hardware. ``"auto"`` describes the backend ``auto`` resolves to here and records why.
    An unavailable backend is reported with ``available=False`` and a ``reason``. Unknown names
    raise ``SpiralValueError``.

    With ``workgroup`` and/or ``cols`` (or capability overrides ``lane_width``, ``subgroup``,
    ``max_workgroup``, ``shared_mem_per_workgroup``) the report adds the planner's view of the
    backend (``caps``; ``caps_source`` "device" when read from a present GPU, else the fixed table)
    and a launch plan: for ``workgroup`` the ``aligned_workgroup`` (clamped to [lane width,
    max workgroup] and rounded to whole lanes), how many workgroups the request needs, the lane
    utilisation and the original's ``occupancy_score`` (a labelled heuristic); for ``cols`` the
    planner's ``preferred_tile``/``preferred_compaction_tile`` for ``rows`` rows of ``cols``
    columns, the number of ``column_tiles`` and, with both, ``elements_per_thread`` and the
    ``dispatch`` grid. These are plans, computed the same whether or not the device is present."""
    name = _canonical(backend, "describe_device")
    info = _describe(name)
    overrides = {k: v for k, v in (("lane_width", lane_width), ("subgroup", subgroup),
                                   ("max_workgroup", max_workgroup),
                                   ("shared_mem_per_workgroup", shared_mem_per_workgroup)) if v is not None}
    if workgroup is not None or cols is not None or overrides:
        info.update(_launch_plan("describe_device", info["backend"], workgroup, cols, rows, overrides))
    return info


def _describe(name: str) -> Dict[str, Any]:
    if name == "cuda" or (name == "auto" and _core._cuda_is_available()):
        if not _core._cuda_is_available():
            return {"backend": "cuda", "device": "cuda", "available": False,
                    "reason": _core._cuda_unavailable_reason()}
        props = _core._cuda_properties(0)
        free, total = _core._cuda_mem_get_info(0)
        info = {
            "backend": "cuda",
            "device": "cuda:0",
            "available": True,
            "device_name": props["name"],
            "device_count": _core._cuda_device_count(),
            "compute_capability": f"{props['major']}.{props['minor']}",
            "total_memory": props["total_memory"],
            "free_memory": free,
            "multi_processor_count": props["multi_processor_count"],
            "l2_cache_size": props["l2_cache_size"],
            "driver_version": props["driver_version"],
            "runtime_version": props["runtime_version"],
            "blas": "cuBLAS",
            "allow_tf32": _core._cuda_allow_tf32(),
            "cudnn": _core._cudnn_version() or None,
            # scaled_dot_product_attention through cuDNN's graph API (cudnn-frontend at build time)
            "cudnn_attention": bool(_core._cuda_cudnn_attention_built()) and bool(_core._cudnn_version()),
            "dtypes": ("float32", "float64", "bfloat16", "float16", "int64", "int32", "uint8", "bool"),
        }
        if name == "auto":
            info["requested"] = "auto"
        return info
    if name == "wgpu":
        if not _core._wgpu_is_available():
            return {"backend": "wgpu", "device": "wgpu", "available": False, "compiled": bool(_core._wgpu_is_built()),
                    "reason": _core._wgpu_unavailable_reason()}
        a = _core._wgpu_adapter_info()
        return {"backend": "wgpu", "device": "wgpu", "available": True, "device_name": a["name"],
                "vendor": a["vendor"], "vendor_id": a["vendor_id"], "device_id": a["device_id"],
                "architecture": a["architecture"], "driver": a["driver"], "graphics_backend": a["backend"],
                "adapter_type": a["adapter_type"], "library": a["library"], "limits": a["limits"],
                "features": a["features"], "shader_f16": "shader-f16" in a["features"],
                "dtypes": ("float32", "float16", "bfloat16", "int64", "int32", "uint8", "bool")}
    if name in ("cpu", "auto"):
        info = _core._describe_cpu()
        if name == "auto":
            info["requested"] = "auto"
            info["fallback_reason"] = ("CUDA is not available (" + _core._cuda_unavailable_reason()
                                       + "); using the CPU")
        return info
    return {
        "backend": name,
        "device": name,
        "available": False,
        "reason": f"the {name} backend is not compiled into this build",
    }


def describe_runtime_devices(backends: Iterable[str] = ("cpu", "cuda", "wgpu", "hip", "mps"), *,
                             continue_on_error: bool = True,
                             required_ready_backends: Optional[Iterable[str]] = None,
                             **describe_kwargs: Any) -> Dict[str, Any]:
    """``describe_device`` for each of ``backends`` (``describe_kwargs`` such as ``workgroup=`` or
    ``cols=`` are passed on), gathered into one report: ``backends`` (as asked), ``reports``
    ({backend: report}), ``ready_backends`` / ``not_ready_backends`` (available here or not),
    ``error_backends`` and ``errors`` ({backend: message}) for requests that failed (an unknown
    name, bad arguments; re-raised instead when ``continue_on_error`` is False),
    ``status_by_backend`` (the ``runtime_state`` status, or "error"), ``all_ready``,
    ``required_ready_backends``, ``missing_ready_backends`` (required but not ready) and
    ``runtime_readiness`` ("ready" when every required backend -- every listed one when none is
    required -- is ready, else "not_ready")."""
    if isinstance(backends, str):
        backends = [backends]
    names = list(backends)
    if not names:
        raise _core.SpiralValueError("describe_runtime_devices: no backends given")
    reports: Dict[str, Any] = {}
    errors: Dict[str, str] = {}
    status: Dict[str, str] = {}
    for b in names:
        try:
            rep = describe_device(b, **describe_kwargs)
            reports[b] = rep
            status[b] = runtime_state(rep["backend"])["runtime_status"]
        except Exception as exc:
            if not continue_on_error:
                raise
            errors[b] = f"{type(exc).__name__}: {exc}"
            status[b] = "error"
    ready = [b for b in names if b in reports and reports[b]["available"]]
    not_ready = [b for b in names if b in reports and not reports[b]["available"]]
    required = list(required_ready_backends) if required_ready_backends is not None else None
    missing = [b for b in (required if required is not None else names) if b not in ready]
    return {"backends": names, "reports": reports, "ready_backends": ready, "not_ready_backends": not_ready,
            "error_backends": [b for b in names if b in errors], "errors": errors, "status_by_backend": status,
            "all_ready": len(ready) == len(names), "has_errors": bool(errors),
            "required_ready_backends": required, "missing_ready_backends": missing,
            "runtime_readiness": "ready" if not missing else "not_ready"}


def observe_runtime_device_probe(requested_backend: str = "cpu", *, requested_workgroup: Optional[int] = None,
                                 cols: Optional[int] = None, rows: int = 1, lane_width: Optional[int] = None,
                                 subgroup: Optional[bool] = None, max_workgroup: Optional[int] = None,
                                 shared_mem_per_workgroup: Optional[int] = None) -> Dict[str, Any]:
    """One probe of ``requested_backend`` in structured form: ``request`` (the arguments),
    ``requested_runtime`` and ``effective_runtime`` (``runtime_state`` of the requested backend and
    of the one work would run on: the request itself when ready, else the CPU),
    ``effective_backend``, ``fallback_reason`` (None unless the effective backend differs from the
    request), ``device`` (``describe_device`` of the effective backend) and, when a workgroup or a
    column count is given, ``launch`` (the plan of ``describe_device(..., workgroup=, cols=)`` for
    the requested backend's capabilities)."""
    op = "observe_runtime_device_probe"
    name = _canonical(requested_backend, op)
    requested = runtime_state(name)
    resolved = requested["backend"]
    if requested["runtime_ready"]:
        effective, reason = resolved, None
    else:
        effective, reason = "cpu", f"{resolved} is not ready: {requested['reason']}"
    overrides = {k: v for k, v in (("lane_width", lane_width), ("subgroup", subgroup),
                                   ("max_workgroup", max_workgroup),
                                   ("shared_mem_per_workgroup", shared_mem_per_workgroup)) if v is not None}
    request = {"requested_backend": name, "requested_workgroup": requested_workgroup, "cols": cols, "rows": rows,
               **overrides}
    out: Dict[str, Any] = {"request": request, "requested_runtime": requested,
                           "effective_backend": effective, "effective_runtime": runtime_state(effective),
                           "fallback_reason": reason, "device": _describe(effective)}
    if requested_workgroup is not None or cols is not None or overrides:
        out["launch"] = _launch_plan(op, resolved, requested_workgroup, cols, rows, overrides)
    return out


def evaluate_runtime_device_route(devices: Any = None, *, prefer: Optional[Sequence[str]] = None,
                                  required_ready_backends: Optional[Iterable[str]] = None,
                                  accelerator_fallback: str = "allow") -> Dict[str, Any]:
    """Decides where a run goes from a ``describe_runtime_devices`` report (or a list of backend
    names, described first; None: every known backend). The candidates are ``prefer`` (default:
    the report's backend order); the first one that is ready is ``selected_backend``. ``route`` is
    "direct" when that is the first preference, "fallback" when an earlier preference was not
    ready (the reasons are in ``skipped``), "none" when nothing is ready. ``blockers`` lists why
    the run may not proceed: ``not_ready:<backend>`` for each required backend that is not ready,
    ``fallback_forbidden:<backend>`` when ``accelerator_fallback="forbid"`` and the first
    preference is not ready, ``no_ready_backend``. ``execution_allowed`` is True when there is
    no blocker; ``status`` is "ready" or "blocked"."""
    if accelerator_fallback not in ("allow", "forbid"):
        raise _core.SpiralValueError(f"evaluate_runtime_device_route: accelerator_fallback must be 'allow' or "
                                     f"'forbid', got {accelerator_fallback!r}")
    if devices is None:
        devices = describe_runtime_devices(("cpu", "cuda", "wgpu", "hip", "mps"))
    elif not isinstance(devices, dict):
        devices = describe_runtime_devices(list(devices))
    for key in ("backends", "reports", "errors"):
        if key not in devices:
            raise _core.SpiralValueError(f"evaluate_runtime_device_route: the report has no {key!r} entry; pass "
                                         "describe_runtime_devices(...) output or a list of backends")
    order = list(prefer) if prefer is not None else list(devices["backends"])
    if not order:
        raise _core.SpiralValueError("evaluate_runtime_device_route: no candidate backends")
    reports = devices["reports"]

    def why_not(b: str) -> Optional[str]:
        if b in devices["errors"]:
            return devices["errors"][b]
        if b not in reports:
            return "not described in the report"
        if not reports[b]["available"]:
            return reports[b].get("reason") or "not available"
        return None

    skipped: List[Dict[str, str]] = []
    selected = None
    for b in order:
        reason = why_not(b)
        if reason is None:
            selected = b
            break
        skipped.append({"backend": b, "reason": reason})
    blockers: List[str] = []
    for b in (required_ready_backends or ()):
        if why_not(b) is not None:
            blockers.append(f"not_ready:{b}")
    if selected is None:
        blockers.append("no_ready_backend")
    elif selected != order[0] and accelerator_fallback == "forbid":
        blockers.append(f"fallback_forbidden:{order[0]}")
    route = "none" if selected is None else ("direct" if selected == order[0] else "fallback")
    device = None if selected is None else reports[selected].get("device")
    return {"candidates": order, "selected_backend": selected, "device": device, "route": route,
            "skipped": skipped, "accelerator_fallback": accelerator_fallback, "blockers": blockers,
            "execution_allowed": not blockers, "status": "ready" if not blockers else "blocked"}


def init_backend(label: str) -> bool:
    """Prepares ``label`` for use and says whether work can run there: the CPU (and its aliases
    "faer", "simd", "naive") always; "auto" resolves to CUDA when a GPU answers, else the CPU;
    "cuda" selects the current device and synchronises it (creating its context), False when the
    build has no CUDA or no GPU answers; "wgpu" creates the adapter's device and waits for it, False
    when the build has no wgpu or no adapter answers; "hip" and "mps" are not compiled in: False.
    Unknown labels raise ``SpiralValueError``."""
    name = _canonical(label, "init_backend")
    if name == "auto":
        name = _resolve_auto()
    if name == "cpu":
        return True
    if name == "cuda":
        if not _core._cuda_is_available():
            return False
        dev = _core._cuda_current_device()
        _core._cuda_set_device(dev)
        _core._cuda_synchronize(dev)
        return True
    if name == "wgpu":
        if not _core._wgpu_is_available():
            return False
        _core._wgpu_synchronize()
        return True
    return False


def _require_backend(backend: str, op: str) -> str:
    """Resolves a requested backend for ``op``: ``auto``/``cpu`` run on the CPU;
    anything else raises ``DeviceUnavailableError`` (or ``ValueError`` if unknown)."""
    name = str(backend).lower()
    if name in ("auto", "cpu"):
        return "cpu"
    if name == "cuda":
        if not _core._cuda_is_available():
            raise _core.DeviceUnavailableError(f"{op}: backend 'cuda' is not available: "
                                               + _core._cuda_unavailable_reason())
        return "cuda"
    if name in ("wgpu", "webgpu"):
        if not _core._wgpu_is_available():
            raise _core.DeviceUnavailableError(f"{op}: backend 'wgpu' is not available: "
                                               + _core._wgpu_unavailable_reason())
        return "wgpu"
    if name not in KNOWN_BACKENDS:
        raise _core.SpiralValueError(f"{op}: unknown backend '{backend}'")
    raise _core.DeviceUnavailableError(f"{op}: backend '{name}' is not available in this build")
