"""Rank-k planning and execution: ``plan``, ``plan_topk``, ``RankPlan``, the rank-k ops
``rank_k``/``midk``/``bottomk``, and the probes ``probe_gpu_path`` and ``hip_probe``.

A ``RankPlan`` holds the launch parameters of a rank-k kernel for a (rows, cols, k) problem on a
backend's device: workgroup size, K-loop depth (``lanes``), column tiles, merge strategy,
two-stage compaction and an FFT tiling. The planner lives in the C++ runtime
(``spiraltorch/runtime/rank_plan.h``); this class is a read-only view of a native plan. Plans come
from fixed formulas over the problem size and the device's capabilities (``DeviceCaps``), so a
plan is a pure function of its arguments; for CUDA, when a GPU is present, the capabilities are
read from the device. ``RankPlan.rewrite_with_spiralk`` overrides fields with a SpiralK program
(docs/spiralk.md), and ``RankPlan.execute`` runs the plan: on the CPU the C++ execution follows
its ``tile``, ``use_two_stage``/``compaction_tile`` and merge, and reports what it did.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from . import _core

__all__ = ["DeviceCaps", "RankPlan", "bottomk", "hip_probe", "midk", "plan", "plan_topk", "probe_gpu_path",
           "rank_k"]

_KINDS = {"topk": "topk", "top_k": "topk", "midk": "midk", "mid_k": "midk", "bottomk": "bottomk",
          "bottom_k": "bottomk", "fft": "fft"}


def _parse_backend(backend: str | None) -> str:
    """The backend a request resolves to ("auto"/None: CUDA when usable, else the CPU)."""
    return _core._rank_resolve_backend("auto" if backend is None else str(backend))


def _check_caps(**values: Any) -> None:
    for name, v in values.items():
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v <= 0):
            raise ValueError(f"device caps '{name}' must be a positive integer, got {v!r}")


@dataclass(frozen=True)
class DeviceCaps:
    """What the planner needs to know about a device. Defaults per backend follow the upstream
    table; a present CUDA GPU reports its own limits (warp 32, 1024 threads per block, the
    48 KiB of static shared memory a block gets without opting in)."""

    backend: str
    subgroup: bool
    lane_width: int
    max_workgroup: int
    shared_mem_per_workgroup: int | None

    @staticmethod
    def for_backend(backend: str, *, lane_width: int | None = None, subgroup: bool | None = None,
                    max_workgroup: int | None = None, shared_mem_per_workgroup: int | None = None) -> DeviceCaps:
        """The capabilities of ``backend`` with the given overrides (validated in C++)."""
        _check_caps(lane_width=lane_width, max_workgroup=max_workgroup,
                    shared_mem_per_workgroup=shared_mem_per_workgroup)
        d = _core._rank_device_caps(backend, lane_width, None if subgroup is None else bool(subgroup), max_workgroup,
                                    shared_mem_per_workgroup)
        return DeviceCaps(**d)

    def align_workgroup(self, w: int) -> int:
        """`w` clamped to [lane_width, max_workgroup] and rounded up to a multiple of the lane width
        (down to the largest such multiple when rounding up would pass the maximum)."""
        return _core._rank_align_workgroup(self.lane_width, self.max_workgroup, int(w))


_FIELDS = ("workgroup", "lanes", "channel_stride", "use_two_stage", "subgroup", "tile", "compaction_tile",
           "fft_tile", "fft_radix", "fft_segments")


class RankPlan:
    """Launch parameters for a rank-k (top/mid/bottom-k, or FFT-tiled) problem on one backend: a
    read-only view of a C++ ``st::runtime::RankPlan``. Build one with ``plan``/``plan_topk``;
    ``rewrite_with_spiralk`` returns a new plan, ``execute`` runs the rank-k it plans for."""

    __slots__ = ("kind", "rows", "cols", "k", "requested_backend", "effective_backend", "runtime_ready",
                 "accelerator_fallback", "caps", "workgroup", "lanes", "channel_stride", "merge_strategy",
                 "merge_detail", "use_two_stage", "subgroup", "tile", "compaction_tile", "fft_tile", "fft_radix",
                 "fft_segments", "_choice", "_native")

    def __init__(self, native: Any, accelerator_fallback: str | None = None) -> None:
        if not isinstance(native, _core._RankPlan):
            raise TypeError("RankPlan wraps a native plan; build one with spiraltorch.plan(...) or plan_topk(...)")
        put = object.__setattr__
        if accelerator_fallback is None:
            strict = os.environ.get("SPIRALTORCH_STRICT_GPU", "") in ("1", "true", "TRUE")
            accelerator_fallback = "forbid" if strict else "allow"
        choice = native.choice
        for name, value in (("kind", native.kind), ("rows", native.rows), ("cols", native.cols), ("k", native.k),
                            ("requested_backend", native.requested_backend),
                            ("effective_backend", native.effective_backend), ("runtime_ready", native.runtime_ready),
                            ("accelerator_fallback", accelerator_fallback), ("caps", DeviceCaps(**native.caps)),
                            ("merge_strategy", native.merge_strategy), ("merge_detail", native.merge_detail),
                            ("_choice", choice), ("_native", native)):
            put(self, name, value)
        for name in _FIELDS:
            put(self, name, choice[name])

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"RankPlan.{name} is read-only")

    def __repr__(self) -> str:
        return (f"RankPlan(kind={self.kind!r}, rows={self.rows}, cols={self.cols}, k={self.k}, "
                f"backend={self.effective_backend!r}, workgroup={self.workgroup}, lanes={self.lanes}, "
                f"merge={self.merge_strategy}/{self.merge_detail}, tile={self.tile}, two_stage={self.use_two_stage})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RankPlan):
            return NotImplemented
        return self.contract() == other.contract()

    __hash__ = None  # type: ignore[assignment]

    def latency_window(self) -> None:
        """Upstream's low-latency compaction window is not modelled here: always None."""
        return None

    def to_unison_script(self) -> str:
        """The plan as a Unison-style text block (first line ``unison <kind> {``, one setting per
        line); SpiralK reads it back: ``p.rewrite_with_spiralk(q.to_unison_script())`` takes q's choice."""
        return self._native.to_unison_script()

    def fft_spiralk_hint(self) -> str:
        """SpiralK soft constraints that steer a tuner towards this plan's FFT tiling (the
        confidence weights are fixed: 0.85 tile, 0.90 radix, 0.75 segments)."""
        return self._native.fft_spiralk_hint()

    def spiralk_context(self) -> dict[str, Any]:
        """The variables a SpiralK program sees when rewriting this plan: ``r, c, k`` (problem size),
        ``sg`` (subgroup), ``sgc``, ``kc`` (k class), and the current ``wg, kl, ch, tile, ctile, u2,
        tile_cols, radix, segments``."""
        return self._native.spiralk_variables()

    def rewrite_with_spiralk(self, script: str, **variables: Any) -> RankPlan:
        """A new plan whose fields are this plan's, overridden by the hard assignments of the SpiralK
        ``script`` (e.g. ``"tile: 512; if c >= 1024 { tile_cols: 1024; }"`` or a ``unison`` block),
        then validated. ``variables`` adds names the program may read (bool, number or str) besides
        ``spiralk_context()``. Raises SpiralKError (a ValueError) with line and column on a bad
        program, SpiralValueError on a field value the device cannot launch. Soft rules are not
        applied (see ``rewrite_with_spiralk_explain``)."""
        return self.rewrite_with_spiralk_explain(script, **variables)[0]

    def rewrite_with_spiralk_explain(self, script: str, **variables: Any) -> tuple[RankPlan, dict[str, Any]]:
        """``rewrite_with_spiralk`` plus what the program said: ``{"hard": {field: value}, "soft":
        [{"field", "value", "weight"}], "unison_kind"}`` (soft rules whose condition held)."""
        if not isinstance(script, str):
            raise TypeError(f"RankPlan.rewrite_with_spiralk: script must be a str, got {type(script).__name__}")
        native, result = self._native.rewrite_with_spiralk(script, variables)
        return RankPlan(native, self.accelerator_fallback), result

    def contract(self) -> dict[str, Any]:
        """Everything that determined the plan and everything it chose, as plain data."""
        c = self.caps
        return {
            "kind": "spiraltorch.rank_plan", "contract_version": "spiraltorch.rank_plan.v2",
            "rank_kind": "topk" if self.kind == "fft" else self.kind, "rows": self.rows, "cols": self.cols,
            "k": self.k, "input_elements": self.rows * self.cols, "output_elements": self.rows * self.k,
            "device_caps": {"backend": c.backend, "subgroup": c.subgroup, "lane_width": c.lane_width,
                            "max_workgroup": c.max_workgroup, "shared_mem_per_workgroup": c.shared_mem_per_workgroup},
            "choice": dict(self._choice, latency_window=None),
            "execution": {"accelerator_fallback": self.accelerator_fallback},
            "execution_client": "python", "requested_backend": self.requested_backend,
            "effective_backend": self.effective_backend, "runtime_ready": self.runtime_ready,
        }

    def execute(self, x: Any, *, return_stats: bool = False) -> Any:
        """Runs the planned rank-k on the 2-D tensor ``x`` of shape (rows, cols): ``(values, indices)``
        as ``rank_k`` defines them. A CPU tensor runs the C++ planned execution: column tiles of
        ``tile``, each reduced to its best candidates, compacted in blocks of ``compaction_tile``
        when ``use_two_stage``, then merged (``merge_strategy`` bitonic: full sort, else a heap
        selection). With ``return_stats`` the result is ``(values, indices, stats)`` where stats
        reports ``tile, tiles_per_row, candidates_per_row, two_stage, compaction_tile,
        compaction_blocks_per_row, merge_candidates_per_row, merge`` (None for other devices, which
        run ``rank_k`` on their sort kernels)."""
        shape = tuple(x.shape)
        if shape != (self.rows, self.cols):
            raise ValueError(f"RankPlan.execute: planned for ({self.rows}, {self.cols}), got {shape}")
        if str(x.device) == "cpu":
            values, indices, stats = self._native.execute(x)
        else:
            (values, indices), stats = rank_k(x, self.k, "topk" if self.kind == "fft" else self.kind), None
        return (values, indices, stats) if return_stats else (values, indices)


def plan(kind: str, rows: int, cols: int, k: int, *, backend: str | None = None, lane_width: int | None = None,
         subgroup: bool | None = None, max_workgroup: int | None = None,
         shared_mem_per_workgroup: int | None = None) -> RankPlan:
    """Plans a rank-k problem of ``kind`` (topk, midk, bottomk, or fft) over ``rows`` x ``cols``
    keeping ``k`` per row, for ``backend`` ("auto"/None: CUDA when usable, else the CPU).
    ``lane_width``/``subgroup``/``max_workgroup``/``shared_mem_per_workgroup`` override the
    device's capabilities."""
    key = str(kind).lower()
    if key not in _KINDS:
        raise ValueError(f"unknown rank kind '{kind}', expected 'topk', 'midk', 'bottomk' or 'fft'")
    for name, v in (("rows", rows), ("cols", cols), ("k", k)):
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            raise ValueError(f"rank-plan dimension '{name}' must be positive, got {v!r}")
    _check_caps(lane_width=lane_width, max_workgroup=max_workgroup, shared_mem_per_workgroup=shared_mem_per_workgroup)
    native = _core._rank_plan(_KINDS[key], rows, cols, k, "auto" if backend is None else str(backend), lane_width,
                              None if subgroup is None else bool(subgroup), max_workgroup, shared_mem_per_workgroup)
    return RankPlan(native)


def plan_topk(rows: int, cols: int, k: int, **kwargs: Any) -> RankPlan:
    """``plan("topk", rows, cols, k, **kwargs)``."""
    return plan("topk", rows, cols, k, **kwargs)


# ---------------------------------------------------------------- rank-k execution

def rank_k(x: Any, k: int, kind: str = "topk") -> tuple[Any, Any]:
    """Per row of the 2-D tensor ``x``, after dropping NaN and infinite entries: ``topk`` the
    ``k`` largest (descending), ``bottomk`` the ``k`` smallest (ascending), ``midk`` the ``k``
    middle values (ascending, the window starting at (n_finite - k) // 2). Ties keep the lower
    column first. Rows with fewer than ``k`` finite values are padded with NaN values and index -1.
    Returns ``(values, indices)`` of shape (rows, k), values in x's dtype, indices int64, both on
    x's device."""
    key = _KINDS.get(str(kind).lower())
    if key is None or key == "fft":
        raise ValueError(f"rank_k: kind must be 'topk', 'midk' or 'bottomk', got {kind!r}")
    if x.dim() != 2:
        raise ValueError(f"rank_k: expected a 2-D tensor, got shape {tuple(x.shape)}")
    if not x.dtype.is_floating_point:
        x = x.to(_core.dtype.float64 if x.dtype == _core.dtype.int64 else _core.dtype.float32)
    rows, cols = x.shape
    if not isinstance(k, int) or k <= 0 or k > cols:
        raise ValueError(f"rank_k: k must be in [1, {cols}], got {k!r}")
    finite = _core.isfinite(x)
    n_finite = finite.sum(1, keepdim=True)  # (rows, 1) int64
    inf = float("inf")
    # Non-finite entries sort after every finite one (stable sorts keep ties in column order).
    keyed = _core.where(finite, x, _core.full_like(x, -inf if key == "topk" else inf))
    values, order = _core.sort(keyed, 1, descending=key == "topk")
    pos = _core.arange(k, device=x.device).reshape(1, k).expand(rows, k)
    if key == "midk":
        start = _core.clamp((n_finite - k) // 2, 0, None)
        pos = pos + start
    take = _core.clamp(pos, None, cols - 1)
    vals = _core.gather(values, 1, take)
    idx = _core.gather(order, 1, take)
    ok = pos < n_finite
    vals = _core.where(ok, vals, _core.full_like(vals, float("nan")))
    idx = _core.where(ok, idx, _core.full_like(idx, -1))
    return vals, idx


def midk(x: Any, k: int) -> tuple[Any, Any]:
    """``rank_k(x, k, "midk")``."""
    return rank_k(x, k, "midk")


def bottomk(x: Any, k: int) -> tuple[Any, Any]:
    """``rank_k(x, k, "bottomk")``."""
    return rank_k(x, k, "bottomk")


# ---------------------------------------------------------------- probes

def probe_gpu_path(kind: str = "bottomk", *, backend: str = "cuda", rows: int = 2, cols: int = 5,
                   k: int = 2) -> dict[str, Any]:
    """Runs a rank-k of ``kind`` on the synthetic matrix x[r][c] = (c - cols/2) + 0.125 r, first on
    the GPU backend alone (strict: "cuda", "wgpu", or "hip", which is not built), then allowing
    the CPU as a fallback (non-strict). Reports what ran, the values and indices (flat, row-major)
    and any error; a GPU path that is not built or has no device is reported, never faked."""
    be = _parse_backend(backend)
    if be not in ("cuda", "hip", "wgpu"):
        raise ValueError(f"probe_gpu_path: backend must be 'cuda', 'hip' or 'wgpu', got '{backend}'")
    p = plan(kind, rows, cols, k, backend=be)
    x = _core.tensor([[(c - cols / 2) + 0.125 * r for c in range(cols)] for r in range(rows)],
                     dtype=_core.dtype.float32)

    def run(device: str) -> tuple[list[float], list[int]]:
        v, i = p.execute(x.to(device))
        return [float(a) for a in v.cpu().reshape(-1).tolist()], [int(a) for a in i.cpu().reshape(-1).tolist()]

    out: dict[str, Any] = {"backend": be, "kind": p.kind, "rows": rows, "cols": cols, "k": k,
                           "hip_real_enabled": False}
    try:
        if be == "hip":
            raise RuntimeError("HIP kernels are not built into SpiralTorch (hip_probe() reports the runtime)")
        if be == "wgpu":
            if not _core._wgpu_is_available():
                raise RuntimeError(f"wgpu is not available: {_core._wgpu_unavailable_reason()}")
            sv, si = run("wgpu")
        else:
            if not _core._cuda_is_available():
                raise RuntimeError(f"CUDA is not available: {_core._cuda_unavailable_reason()}")
            sv, si = run("cuda")
        out.update(strict_success=True, strict_values=sv, strict_indices=si, strict_error=None)
    except Exception as exc:  # reported, not raised: the probe's job is to say what happened
        out.update(strict_success=False, strict_values=None, strict_indices=None, strict_error=str(exc))
    if out["strict_success"]:
        out.update(non_strict_success=True, non_strict_values=out["strict_values"],
                   non_strict_indices=out["strict_indices"], non_strict_error=None)
    else:
        try:
            nv, ni = run("cpu")
            out.update(non_strict_success=True, non_strict_values=nv, non_strict_indices=ni, non_strict_error=None)
        except Exception as exc:
            out.update(non_strict_success=False, non_strict_values=None, non_strict_indices=None,
                       non_strict_error=str(exc))
    out["gpu_path_available"] = out["strict_success"]
    out["used_fallback"] = not out["strict_success"] and out["non_strict_success"]
    return out


def hip_probe() -> dict[str, Any]:
    """Whether a ROCm/HIP runtime can be loaded here and which devices it sees, asked of the runtime
    itself (``libamdhip64``: hipGetDeviceCount, hipDeviceGetName). Devices named only by
    environment variables are listed under ``env_visible_devices``, never as devices."""
    import ctypes  # here, not at import time: ctypes.util pulls in subprocess and friends
    import ctypes.util

    env = os.environ.get("HIP_VISIBLE_DEVICES") or os.environ.get("ROCR_VISIBLE_DEVICES")
    report: dict[str, Any] = {"available": False, "initialized": False, "devices": [], "error": None,
                              "env_visible_devices": [t for t in (env or "").split(",") if t]}
    path = ctypes.util.find_library("amdhip64")
    candidates = [p for p in (path, "libamdhip64.so", os.path.join(os.environ.get("ROCM_PATH", "/opt/rocm"), "lib",
                                                                       "libamdhip64.so")) if p]
    lib = None
    for cand in candidates:
        try:
            lib = ctypes.CDLL(cand)
            break
        except OSError:
            continue
    if lib is None:
        report["error"] = "HIP runtime not found (libamdhip64 could not be loaded); install ROCm to use AMD GPUs"
        return report
    report["available"] = True
    count = ctypes.c_int(0)
    status = lib.hipGetDeviceCount(ctypes.byref(count))
    if status != 0:
        report["error"] = f"hipGetDeviceCount failed with hipError_t {status}"
        return report
    report["initialized"] = True
    for dev in range(count.value):
        name = ctypes.create_string_buffer(256)
        ok = lib.hipDeviceGetName(name, 256, dev) == 0
        report["devices"].append({"id": dev, "name": name.value.decode(errors="replace") if ok else None})
    return report

