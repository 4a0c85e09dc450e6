"""Rank-k planning and execution: ``plan``, ``plan_topk``, ``RankPlan``, the rank-k ops
``rank_k``/``midk``/``bottomk``, and the probes ``probe_gpu_path`` and ``hip_probe``.

A ``RankPlan`` holds the launch parameters a GPU rank-k kernel would use for a (rows, cols, k)
problem on a backend's device: workgroup size, K-loop depth (``lanes``), column tiles, merge
strategy, two-stage compaction and an FFT tiling. They come from fixed formulas over the problem
size and the device's capabilities (``DeviceCaps``), so a plan is a pure function of its
arguments; for CUDA, when a GPU is present, the capabilities are read from the device. The plan
is metadata: ``RankPlan.execute`` and ``rank_k`` compute the actual top/mid/bottom-k with
SpiralTorch's sort kernels on whatever device the input lives on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from . import _core

__all__ = ["DeviceCaps", "RankPlan", "bottomk", "hip_probe", "midk", "plan", "plan_topk", "probe_gpu_path",
           "rank_k"]

_BACKENDS = {"wgpu": "wgpu", "webgpu": "wgpu", "mps": "mps", "cuda": "cuda", "hip": "hip", "rocm": "hip",
             "cpu": "cpu"}
_KINDS = {"topk": "topk", "top_k": "topk", "midk": "midk", "mid_k": "midk", "bottomk": "bottomk",
          "bottom_k": "bottomk", "fft": "fft"}
_MERGE = ("bitonic", "shared", "warp")
_MERGE_DETAIL = ("auto", "heap", "kway", "bitonic", "warp_heap", "warp_bitonic")


def _parse_backend(backend: str | None) -> str:
    if backend is None or str(backend).lower() == "auto":
        # The best backend this process can run: CUDA when a GPU is usable, else the CPU.
        return "cuda" if _core._cuda_is_available() else "cpu"
    key = str(backend).lower()
    if key not in _BACKENDS:
        raise ValueError(f"unknown backend '{backend}', expected 'wgpu', 'mps', 'cuda', 'hip', or 'cpu'")
    return _BACKENDS[key]


def _runtime_ready(backend: str) -> bool:
    """Whether this process can execute on `backend` (only the CPU and, when built and present,
    CUDA have kernels here; WGPU, MPS and HIP are planned for but never executed)."""
    return backend == "cpu" or (backend == "cuda" and _core._cuda_is_available())


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
        table = {"wgpu": (True, 32, 256, None), "mps": (False, 32, 256, None), "cuda": (True, 32, 1024, 98304),
                 "hip": (True, 32, 1024, 65536), "cpu": (False, 1, 128, None)}
        sg, lw, mw, sm = table[backend]
        if backend == "cuda" and _core._cuda_is_available():
            sm = 48 * 1024
        caps = DeviceCaps(backend, sg if subgroup is None else bool(subgroup), lw if lane_width is None else lane_width,
                          mw if max_workgroup is None else max_workgroup,
                          sm if shared_mem_per_workgroup is None else shared_mem_per_workgroup)
        for name in ("lane_width", "max_workgroup", "shared_mem_per_workgroup"):
            v = getattr(caps, name)
            if v is not None and (not isinstance(v, int) or v <= 0):
                raise ValueError(f"device caps '{name}' must be a positive integer, got {v!r}")
        if caps.lane_width > caps.max_workgroup:
            raise ValueError(f"lane_width={caps.lane_width} exceeds max_workgroup={caps.max_workgroup}")
        return caps

    def align_workgroup(self, w: int) -> int:
        """`w` clamped to [lane_width, max_workgroup] and rounded up to a multiple of the lane width
        (down to the largest such multiple when rounding up would pass the maximum)."""
        lanes, top = self.lane_width, self.max_workgroup
        w = min(max(w, lanes), top)
        up = -(-w // lanes) * lanes
        return up if up <= top else (top // lanes) * lanes


def _lane_align(v: int, lanes: int) -> int:
    return max(lanes, (v // lanes) * lanes)


def _choose(kind: str, rows: int, cols: int, k: int, caps: DeviceCaps) -> dict[str, Any]:
    """The baseline rank-k launch choice (the upstream formulas, without its environment, key-value
    store and tuner-table overrides, so the result depends on the arguments only)."""
    L, M, be = caps.lane_width, caps.max_workgroup, caps.backend
    low_latency = rows <= max(4 * L, 64) and cols <= 131072 and k <= 8 * L
    col_heavy, k_heavy = cols > 32768, k > 4 * L
    if be in ("wgpu", "mps"):
        two_stage = col_heavy or (k_heavy and rows >= 256)
    elif be in ("cuda", "hip"):
        two_stage = col_heavy or (k_heavy and rows > 8 * L)
    else:
        two_stage = col_heavy and rows > 512
    target = min(max(8 * L if caps.subgroup else 4 * L, min(64, M)), M)
    wg = target if rows >= target else min(max(-(-rows // L) * L, L), target)
    wg = caps.align_workgroup(wg)
    kl = 32 if k > 4 * L else (16 if k > 2 * L else 8)
    shared = caps.shared_mem_per_workgroup
    if cols <= 16384:
        ch = 0
    elif be == "cpu":
        ch = 4096
    else:
        ch = 4096 if shared is not None and shared < 48 * 1024 else 8192
    tile = 256
    for t in (256, 512, 1024, 2048, 4096, 8192, 16384):
        if t <= cols:
            tile = t
    tile = min(tile, M * L)
    if shared is not None:
        tile = min(tile, max(128, shared // 8))
    tile = max(128, _lane_align(tile, L))
    ctile = 1024 if cols > 65536 else (512 if cols > 8192 else 256)
    ctile = min(ctile, tile)
    if shared is not None and shared < 48 * 1024:
        ctile = min(ctile, 512)
    ctile = max(128, _lane_align(ctile, L))
    if low_latency:
        ch = 0
        tile = min(max(tile, 128), 512 if cols <= 16384 else 1024)
        if kind == "bottomk":
            ctile = max(min(ctile, tile // 2), 64)
    if be in ("wgpu", "mps"):
        mk = 2 if caps.subgroup and k <= 256 else (1 if k <= 2048 else 0)
    elif be == "cuda":
        mk = 2 if k <= 4 * L else (1 if k <= 4096 else 0)
    elif be == "hip":
        mk = 2 if k <= 2 * L else (1 if k <= 4096 else 0)
    else:
        mk = 0
    if low_latency and caps.subgroup and kind == "topk" and k <= 8 * L:
        mk = 2
    mkd = (4 if k <= 128 else 5) if mk == 2 else ((1 if k <= 1024 else 2) if mk == 1 else 3)
    fft_tile = 1 << (min(max(cols, 2), 8192) - 1).bit_length()
    return {
        "use_two_stage": bool(two_stage and not low_latency), "workgroup": wg, "lanes": kl, "channel_stride": ch,
        "merge_kind": mk, "merge_detail": mkd, "tile": tile, "compaction_tile": ctile, "subgroup": caps.subgroup,
        "fft_tile": fft_tile, "fft_radix": 4 if k & (k - 1) == 0 else 2,
        "fft_segments": 4 if cols > 131072 else (2 if cols > 32768 else 1),
    }


class RankPlan:
    """Launch parameters for a rank-k (top/mid/bottom-k, or FFT-tiled) problem on one backend.
    Attributes are read-only; ``execute`` runs the rank-k it plans for."""

    __slots__ = ("kind", "rows", "cols", "k", "requested_backend", "effective_backend", "runtime_ready",
                 "accelerator_fallback", "caps", "workgroup", "lanes", "channel_stride", "merge_strategy",
                 "merge_detail", "use_two_stage", "subgroup", "tile", "compaction_tile", "fft_tile", "fft_radix",
                 "fft_segments", "_choice")

    def __init__(self, kind: str, rows: int, cols: int, k: int, requested: str, caps: DeviceCaps) -> None:
        put = object.__setattr__
        choice = _choose("topk" if kind == "fft" else kind, rows, cols, k, caps)
        for name, value in (("kind", kind), ("rows", rows), ("cols", cols), ("k", k), ("requested_backend", requested),
                            ("effective_backend", caps.backend), ("runtime_ready", _runtime_ready(caps.backend)),
                            ("accelerator_fallback",
                             "forbid" if os.environ.get("SPIRALTORCH_STRICT_GPU", "") in ("1", "true", "TRUE")
                             else "allow"),
                            ("caps", caps), ("_choice", choice)):
            put(self, name, value)
        for name in ("workgroup", "lanes", "channel_stride", "use_two_stage", "subgroup", "tile", "compaction_tile",
                     "fft_tile", "fft_radix", "fft_segments"):
            put(self, name, choice[name])
        put(self, "merge_strategy", _MERGE[choice["merge_kind"]])
        put(self, "merge_detail", _MERGE_DETAIL[choice["merge_detail"]])

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"RankPlan.{name} is read-only")

    def __repr__(self) -> str:
        return (f"RankPlan(kind={self.kind!r}, rows={self.rows}, cols={self.cols}, k={self.k}, "
                f"backend={self.effective_backend!r}, workgroup={self.workgroup}, lanes={self.lanes}, "
                f"merge={self.merge_strategy}/{self.merge_detail}, tile={self.tile}, two_stage={self.use_two_stage})")

    def latency_window(self) -> None:
        """Upstream's low-latency compaction window is not modelled here: always None."""
        return None

    def to_unison_script(self) -> str:
        """The plan as a Unison-style text block (first line ``unison <kind> {``)."""
        rank_kind = "topk" if self.kind == "fft" else self.kind
        lines = [f"unison {rank_kind} {{", f"  workgroup {self.workgroup}", f"  lanes {self.lanes}"]
        if self.channel_stride:
            lines.append(f"  channel_stride {self.channel_stride}")
        lines.append(f"  merge {self.merge_strategy} {self.merge_detail}")
        if self.tile:
            lines.append(f"  tile {self.tile}")
        if self.compaction_tile:
            lines.append(f"  compaction_tile {self.compaction_tile}")
        lines += [f"  two_stage {'true' if self.use_two_stage else 'false'}", f"  fft_tile {self.fft_tile}",
                  f"  fft_radix {self.fft_radix}", f"  fft_segments {self.fft_segments}", "}"]
        return "\n".join(lines)

    def fft_spiralk_hint(self) -> str:
        """SpiralK soft constraints that steer a tuner towards this plan's FFT tiling (the
        confidence weights are fixed: 0.85 tile, 0.90 radix, 0.75 segments)."""
        t = self.fft_tile
        return (f"soft (tile_cols, {t}, 0.85, c >= {t});\n"
                f"soft (radix, {self.fft_radix}, 0.90, true);\n"
                f"soft (segments, {self.fft_segments}, 0.75, true);")

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

    def execute(self, x: Any) -> tuple[Any, Any]:
        """Runs the planned rank-k on the 2-D tensor ``x`` (shape (rows, cols)): ``(values, indices)``,
        see ``rank_k``."""
        shape = tuple(x.shape)
        if shape != (self.rows, self.cols):
            raise ValueError(f"RankPlan.execute: planned for ({self.rows}, {self.cols}), got {shape}")
        return rank_k(x, self.k, "topk" if self.kind == "fft" else self.kind)


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
    if k > cols:
        raise ValueError(f"rank-plan k={k} exceeds cols={cols}")
    requested = "auto" if backend is None or str(backend).lower() == "auto" else str(backend).lower()
    effective = _parse_backend(backend)
    if effective == "mps":
        effective = "cpu"  # no Metal backend here: MPS plans run on the CPU surrogate
    caps = DeviceCaps.for_backend(effective, lane_width=lane_width, subgroup=subgroup, max_workgroup=max_workgroup,
                                  shared_mem_per_workgroup=shared_mem_per_workgroup)
    return RankPlan(_KINDS[key], rows, cols, k, requested, caps)


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
    the GPU backend alone (strict), then allowing the CPU as a fallback (non-strict). Reports
    what ran, the values and indices (flat, row-major) and any error; a GPU path that is not
    built or has no device is reported, never faked."""
    be = _parse_backend(backend)
    if be not in ("cuda", "hip"):
        raise ValueError(f"probe_gpu_path: backend must be 'cuda' or 'hip', got '{backend}'")
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

