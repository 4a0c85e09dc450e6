"""Checkpoint preflight: what would loading this checkpoint do? Loads nothing.

    python examples/checkpoint_preflight.py <hf_dir | state_dict file> [--preset auto] [--model bert]

<hf_dir> is a local Hugging Face directory (config.json + model.safetensors, or
pytorch_model.bin when torch is installed); a file may be .safetensors, .json, .bin
(SpiralTorch bincode) or .pt/.pth (torch). Prints the detected preset, the plan (tied,
synthesised, ignored, unmapped keys) and, when a SpiralTorch model for the family can be
built from config.json (BERT), the per-key compatibility report and the resize preflight.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import spiraltorch as st
from spiraltorch.nn.checkpoint_presets import build_key_map, detect_preset


def read_state(path: Path) -> tuple[dict, dict | None]:
    config = None
    if path.is_dir():
        if (path / "config.json").exists():
            config = json.loads((path / "config.json").read_text())
        for name in ("model.safetensors", "model.safetensors.index.json"):
            if (path / name).exists():
                return st.nn.load_safetensors(path / name, copy=False), config
        if (path / "pytorch_model.bin").exists():
            path = path / "pytorch_model.bin"
        else:
            sys.exit(f"{path}: no model.safetensors or pytorch_model.bin")
    if path.suffix in (".bin", ".pt", ".pth") and path.suffix != ".bin" or path.name == "pytorch_model.bin":
        try:
            import torch
        except ImportError:
            sys.exit(f"{path}: a PyTorch pickle needs torch installed")
        return dict(torch.load(path, map_location="cpu", weights_only=True)), config
    return st.nn.load(path), config


def build_model(family: str, config: dict | None):
    if family == "bert" and config is not None:
        from spiraltorch.models.bert import BertConfig, BertModel

        names = BertConfig.__dataclass_fields__
        return BertModel(BertConfig(**{k: v for k, v in config.items() if k in names}))
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", type=Path)
    ap.add_argument("--preset", default="auto")
    ap.add_argument("--resize", action="store_true", help="overlap-resize embed/head rules")
    ap.add_argument("--max-entries", type=int, default=40)
    args = ap.parse_args()

    state, config = read_state(args.path)
    print(f"checkpoint: {args.path}  ({len(state)} tensors)")
    print("source hash:", st.nn.state_dict_hash(state))
    preset = detect_preset(state.keys()) if args.preset == "auto" else args.preset
    print("preset:", preset, "(detected)" if args.preset == "auto" else "")

    model = build_model(preset, config)
    plan = build_key_map(preset, state, model, resize=args.resize)
    print(f"rules: {len(plan.key_map)}  ignored buffers: {plan.ignored}  unmapped keys: {plan.unmapped}")
    if plan.tied:
        print("tied to the embedding:", plan.tied)
    if plan.synthesised:
        print("biases synthesised as zeros:", plan.synthesised)
    if model is None:
        print("\n(no SpiralTorch model for this family is built from config.json here; the key map alone:)")
        for r in plan.key_map[: args.max_entries]:
            print(f"  {r['source']:60s} -> {r['target']}  [{r['transform']}]")
        return

    report = model.state_dict_compatibility_with_key_map(plan.state, plan.key_map)
    print(f"\n{'target':48s} {'status':16s} {'transform':12s} expected <- source")
    for e in report["entries"][: args.max_entries]:
        print(f"{e['name']:48s} {e['status']:16s} {e['transform']:12s} {e['expected_shape']} <- "
              f"{e['original_source_shape']} {e['source_name']}")
    if len(report["entries"]) > args.max_entries:
        print(f"... {len(report['entries']) - args.max_entries} more;",
              dict(Counter(e["status"] for e in report["entries"])))
    print(f"\ncompatible: {report['compatible']}  matched: {report['matched']}  missing: {report['missing']}  "
          f"shape_mismatched: {report['shape_mismatched']}  extra: {report['extra']} {report['extra_keys']}")
    proj = model.state_dict_projection_preflight(plan.state, plan.key_map)
    print(f"a load would copy {proj['kept']} values, drop {proj['dropped']}, zero-fill {proj['zero_filled']}; "
          f"resized: {proj['resized'] or 'none'}")
    print("would load:" if report["compatible"] else "would refuse:", report["problems"] or "all keys")


if __name__ == "__main__":
    main()
