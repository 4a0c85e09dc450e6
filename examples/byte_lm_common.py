"""Shared pieces of the byte-LM diagnostics examples (byte_lm_profile_smoke.py,
byte_lm_transformers_trace.py, checkpoint_preflight.py): checkpoint reading, runtime and WGPU
evidence, Z-space projection metrics, and JSONL evidence files.

Evidence presets (the seed's names):

* ``--runtime-contract-preset hf-runtime``: transformers, torch and tokenizers must import in this
  process; their versions (or the import errors) are recorded.
* ``--wgpu-readiness-preset observed|balanced|strict``: reads ``spiraltorch.describe_device("wgpu")``.
  ``observed`` requires the report; ``balanced`` also requires that an unavailable WGPU states its
  reason and that the run records the backend it actually used (the CPU fallback); ``strict``
  requires WGPU to be available.
* ``--ft-readiness-preset hf-wgpu-observed|hf-wgpu-balanced|hf-wgpu-strict`` expands to
  ``--runtime-contract-preset hf-runtime --wgpu-readiness-preset observed|balanced|strict`` (explicit
  lower-level flags win).
* ``--transformers-audit``: co-imports the checkpoint directory's config and tokenizer with
  Transformers (when installed; a clear skip otherwise) and checks them against the weights
  (:func:`transformers_audit`).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import os
import re
import sys
from pathlib import Path
from typing import Any, Iterable

# Transformers would otherwise import TensorFlow/JAX when they are installed (slow, unused here).
os.environ.setdefault("USE_TF", "0")
os.environ.setdefault("USE_FLAX", "0")
os.environ.setdefault("USE_JAX", "0")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

import spiraltorch as st  # noqa: E402

FT_READINESS_PRESETS = {
    "hf-wgpu-observed": ("hf-runtime", "observed"),
    "hf-wgpu-balanced": ("hf-runtime", "balanced"),
    "hf-wgpu-strict": ("hf-runtime", "strict"),
}
RUNTIME_CONTRACT_PRESETS = ("hf-runtime",)
WGPU_READINESS_PRESETS = ("observed", "balanced", "strict")
TRANSFORMERS_SKIP = "transformers is not installed: skipping the Transformers part (pip install transformers)"


# ---- files ----
def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def checkpoint_file(path: Path) -> Path:
    """The weights file of a checkpoint path (a file, or a HF directory's model.safetensors / .bin)."""
    if path.is_dir():
        for name in ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin"):
            if (path / name).exists():
                return path / name
        raise FileNotFoundError(f"{path}: no model.safetensors or pytorch_model.bin")
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such checkpoint")
    return path


def read_state(path: Path) -> dict[str, Any]:
    """All tensors of a checkpoint: safetensors (mapped, no copy), SpiralTorch .json/.bin, or a torch
    pickle (.pt/.pth/pytorch_model.bin, which needs torch; ``{"state_dict"|"model": ...}`` unwrapped)."""
    f = checkpoint_file(path)
    if f.suffix == ".safetensors" or f.name.endswith(".safetensors.index.json"):
        return st.nn.load_safetensors(f, copy=False)
    if f.suffix in (".pt", ".pth") or f.name == "pytorch_model.bin":
        try:
            import torch
        except ImportError:
            sys.exit(f"{f}: a PyTorch pickle needs torch installed")
        obj = torch.load(f, map_location="cpu", weights_only=True)
        for key in ("state_dict", "model"):
            if isinstance(obj, dict) and isinstance(obj.get(key), dict):
                obj = obj[key]
        return {k: st.tensor(v.float().numpy()) for k, v in obj.items()}
    return st.nn.load(f)


def safetensors_shapes(path: Path) -> dict[str, dict[str, Any]]:
    """Dtype and shape of every tensor from a safetensors header alone (8-byte little-endian length,
    then JSON), without reading any tensor data."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        if n <= 0 or n > 100 * 1024 * 1024:
            raise ValueError(f"{path}: implausible safetensors header length {n}")
        header = json.loads(f.read(n))
    return {k: {"dtype": v["dtype"], "shape": v["shape"]} for k, v in header.items() if k != "__metadata__"}


# ---- evidence rows ----
def write_jsonl(path: Path | None, rows: Iterable[dict[str, Any]]) -> None:
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        for row in rows:
            f.write(json.dumps(row, sort_keys=True, default=_json_default) + "\n")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def _json_default(o: Any) -> Any:
    if isinstance(o, (np.floating, np.integer)):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (tuple, set)):
        return list(o)
    return str(o)


# ---- runtime evidence ----
def runtime_evidence() -> dict[str, Any]:
    """Imports transformers, torch and tokenizers in this process and records versions or errors."""
    out: dict[str, Any] = {"python": sys.version.split()[0], "spiraltorch": getattr(st, "__version__", "dev")}
    for name in ("transformers", "torch", "tokenizers"):
        try:
            mod = importlib.import_module(name)
            out[name] = {"imported": True, "version": getattr(mod, "__version__", "unknown")}
        except Exception as exc:  # noqa: BLE001 - any import failure is evidence
            out[name] = {"imported": False, "error": f"{type(exc).__name__}: {exc}"}
    return out


def check_runtime_contract(preset: str | None, evidence: dict[str, Any]) -> list[str]:
    """Problems of ``evidence`` under a runtime contract preset ([] when satisfied or no preset)."""
    if preset is None:
        return []
    if preset not in RUNTIME_CONTRACT_PRESETS:
        raise ValueError(f"unknown runtime contract preset {preset!r} (known: {', '.join(RUNTIME_CONTRACT_PRESETS)})")
    return [f"runtime contract {preset}: {name} is not importable in this process ({evidence[name].get('error')})"
            for name in ("transformers", "torch", "tokenizers") if not evidence[name]["imported"]]


def check_wgpu_readiness(preset: str | None, evidence: dict[str, Any], run_backend: str | None) -> list[str]:
    """Problems of the WGPU evidence under a readiness preset ([] when satisfied or no preset)."""
    if preset is None:
        return []
    if preset not in WGPU_READINESS_PRESETS:
        raise ValueError(f"unknown WGPU readiness preset {preset!r} (known: {', '.join(WGPU_READINESS_PRESETS)})")
    problems = []
    if "available" not in evidence:
        problems.append("wgpu readiness: describe_device('wgpu') gave no 'available' field")
    available = bool(evidence.get("available"))
    if preset in ("balanced", "strict") and not available and not evidence.get("reason"):
        problems.append("wgpu readiness balanced: WGPU is unavailable and states no reason")
    if preset in ("balanced", "strict") and not run_backend:
        problems.append(f"wgpu readiness {preset}: the run summary does not record the backend it used")
    if preset == "strict" and not available:
        problems.append(f"wgpu readiness strict: WGPU is not available ({evidence.get('reason', 'no reason given')})")
    return problems


def resolve_presets(args: Any) -> tuple[str | None, str | None]:
    """(runtime contract preset, WGPU readiness preset) after expanding ``--ft-readiness-preset``;
    explicit lower-level flags override the recipe."""
    runtime = getattr(args, "runtime_contract_preset", None)
    wgpu = getattr(args, "wgpu_readiness_preset", None)
    recipe = getattr(args, "ft_readiness_preset", None)
    if recipe is not None:
        r_runtime, r_wgpu = FT_READINESS_PRESETS[recipe]
        runtime = runtime or r_runtime
        wgpu = wgpu or r_wgpu
    return runtime, wgpu


def describe_backend(backend: str) -> dict[str, Any]:
    """``describe_device(backend)`` with non-scalar values stringified (for JSONL rows)."""
    d = dict(st.describe_device(backend))
    return {k: v if isinstance(v, (str, int, float, bool, type(None))) else str(v) for k, v in d.items()}


def transformers_audit(model_dir: Path | None, state_shapes: dict[str, tuple[int, ...]]) -> tuple[dict[str, Any], list[str]]:
    """Loads the checkpoint directory's config and tokenizer with Transformers (local files only)
    in this process and checks them against the weights: the word-embedding shape must be
    ``(config.vocab_size, config.hidden_size)`` and the tokenizer must not produce ids beyond the
    embedding. Returns (evidence row, problems); without Transformers the row says it was skipped
    and there are no problems (the audit is optional evidence, not a requirement)."""
    row: dict[str, Any] = {"row_type": "transformers_audit"}
    try:
        import transformers
    except ImportError:
        row.update(status="skipped", reason=TRANSFORMERS_SKIP)
        return row, []
    if model_dir is None or not (Path(model_dir) / "config.json").exists():
        row.update(status="skipped", reason="the checkpoint is not a directory with config.json")
        return row, []
    cfg = transformers.AutoConfig.from_pretrained(str(model_dir), local_files_only=True)
    tok = transformers.AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    row.update(status="ok", transformers=transformers.__version__, model_type=cfg.model_type,
               config_vocab_size=cfg.vocab_size, config_hidden_size=cfg.hidden_size,
               config_layers=getattr(cfg, "num_hidden_layers", None), tokenizer_class=type(tok).__name__,
               tokenizer_size=len(tok))
    problems = []
    embed = next((k for k in state_shapes if k.endswith(("word_embeddings.weight", "embed_tokens.weight", "wte.weight",
                                                        "embed_in.weight"))), None)
    row["embedding_key"] = embed
    if embed is None:
        problems.append("transformers audit: no token-embedding tensor found in the checkpoint")
    else:
        shape = tuple(state_shapes[embed])
        row["embedding_shape"] = list(shape)
        if shape != (cfg.vocab_size, cfg.hidden_size):
            problems.append(f"transformers audit: {embed} has shape {shape}, config says "
                            f"({cfg.vocab_size}, {cfg.hidden_size})")
        if len(tok) > shape[0]:
            problems.append(f"transformers audit: tokenizer has {len(tok)} tokens, embedding only {shape[0]} rows")
    layers = getattr(cfg, "num_hidden_layers", None)
    if layers is not None:
        found = {int(m) for k in state_shapes for m in re.findall(r"layers?\.(\d+)\.", k)}
        row["checkpoint_layers"] = len(found)
        if found and len(found) != layers:
            problems.append(f"transformers audit: config has {layers} layers, the checkpoint {len(found)}")
    row["problems"] = problems
    return row, problems


# ---- Z-space projection ----
def zspace_project(x: np.ndarray, strength: float, curvature: float = -1.0) -> tuple[np.ndarray, dict[str, float]]:
    """Blends each row of ``x`` towards its Z-space projection: y = (1 - s) x + s P(x) with
    P = ``nn.ZSpaceProjector`` (zero weights, so P(x) = exp_0(x), the exponential map at the
    origin of the Poincare ball of ``curvature``). Returns y and L2 metrics of the move."""
    if not 0.0 <= strength <= 1.0:
        raise ValueError(f"zspace projection: strength must be in [0, 1], got {strength}")
    a = np.atleast_2d(np.asarray(x, np.float32))
    proj = st.nn.ZSpaceProjector(a.shape[1], curvature)
    with st.no_grad():
        proj.weight.zero_()
        proj.bias.zero_()
        p = proj(st.tensor(a)).numpy()
    y = (1.0 - strength) * a + strength * p
    l2_in, l2_out = float(np.linalg.norm(a)), float(np.linalg.norm(y))
    delta = float(np.linalg.norm(y - a))
    metrics = {"zspace_projection_strength": strength, "zspace_projection_curvature": curvature,
               "zspace_projection_input_l2": l2_in, "zspace_projection_output_l2": l2_out,
               "zspace_projection_delta_l2": delta,
               "zspace_projection_output_ratio": l2_out / l2_in if l2_in > 0 else None,
               "zspace_projection_delta_ratio": delta / l2_in if l2_in > 0 else None,
               "zspace_projection_max_row_norm": float(np.linalg.norm(p, axis=1).max()),
               "zspace_projection_status": "ok" if np.isfinite(y).all() else "non_finite"}
    return y.reshape(np.shape(x)) if np.ndim(x) == 1 else y, metrics


def finite(x: float) -> float | None:
    return x if math.isfinite(x) else None
