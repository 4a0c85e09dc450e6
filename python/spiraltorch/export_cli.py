"""spiral-export: ONNX files, deployment JSON and TorchServe archives from a SpiralTorch model.

Where the model comes from (every command but "layers" takes one of the two):
  --bundle DIR          a model bundle written by spiraltorch.integrations.save_model_bundle
                        (model.safetensors + architecture.json; its SHA-256 is checked). A
                        bundle that names a Python factory instead of an architecture runs
                        that code, so it is refused unless --trust-code is given
  --factory FILE.py:FN  a function (also package.module:FN) returning the module; with
                        --weights PATH (.safetensors, .json or .bin state dict) loaded into it
                        (you name the code to run, so no --trust-code is needed)

Commands:
  onnx        write NAME.onnx (onnx package, checked by onnx.checker), run it in onnxruntime
              against SpiralTorch on the example input (max |diff| <= --atol, default 1e-5)
              and write NAME.card.json, the deployment card (inputs, outputs, dtypes, shapes,
              preprocessing, parameter count, state-dict hash, artefact SHA-256s, the check)
  card        write NAME.safetensors and NAME.card.json (for models with no ONNX mapping)
  torchserve  write NAME.mar with torch-model-archiver (weights, architecture or factory file,
              and a handler that runs SpiralTorch; serve with torchserve --models NAME=NAME.mar)
  layers      list the layers ONNX export maps and what each becomes

The example input is random (--seed) with --input-shape, else the bundle's recorded shape
(the first axis is the batch axis, dynamic in the ONNX file unless --static-batch); int64
inputs (an Embedding first) draw indices below --max-index (default: the first Embedding's
size). Run "spiral-export COMMAND --help" for each command's options.

Examples:
  spiral-export onnx --bundle bundle --out artefacts --name cnn
  spiral-export card --factory mymodel.py:build --weights w.safetensors --input-shape 2,3
  spiral-export torchserve --bundle bundle --out model_store --name cnn --preprocessing '{"scale": 0.0039}'
  spiral-export card --bundle pybundle --trust-code --out artefacts   # a bundle with a factory you trust

Exit status: 0 success, 1 the onnxruntime check failed, 2 bad arguments, a model that does
not load (a factory bundle without --trust-code among them) or a layer with no ONNX mapping
(named on stderr).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from typing import Any, List, Optional, Sequence

import numpy as np

from . import _core

__all__ = ["main"]


def _shape(text: str) -> List[int]:
    try:
        dims = [int(d) for d in text.replace("x", ",").split(",") if d.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"input shape must be integers like 1,3,32,32, got {text!r}")
    if not dims or any(d <= 0 for d in dims):
        raise argparse.ArgumentTypeError(f"input shape must be positive integers like 1,3,32,32, got {text!r}")
    return dims


def _load_model(args: argparse.Namespace) -> Any:
    from .integrations import architecture as arch

    if args.bundle:
        return arch.load_model_bundle(args.bundle, weights=args.weights, trust_code=args.trust_code)
    model = arch.load_factory(args.factory)()
    if args.weights:
        from .nn.serialization import load

        model.load_state_dict(load(args.weights))
    model.eval()
    return model


def _example(args: argparse.Namespace, model: Any, meta: Optional[dict]) -> np.ndarray:
    shape = args.input_shape
    if shape is None and meta and meta.get("input_shape"):
        shape = [2 if d is None else d for d in meta["input_shape"]]
    if shape is None:
        raise _core.SpiralValueError("--input-shape is required (the bundle records no input shape)")
    dtype = args.input_dtype or (meta or {}).get("input_dtype", "float32")
    rng = np.random.default_rng(args.seed)
    if dtype == "int64":
        limit = args.max_index
        if limit is None:
            from .integrations.onnx_export import _leaves

            embeddings = [m for _, m in _leaves(model) if type(m).__name__ == "Embedding"]
            if not embeddings:
                raise _core.SpiralValueError("int64 input needs --max-index (no Embedding layer to size it)")
            limit = embeddings[0].num_embeddings
        return rng.integers(0, limit, size=shape, dtype=np.int64)
    return rng.standard_normal(shape).astype(np.float32)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The ``spiral-export`` command (``argv`` defaults to ``sys.argv[1:]``; ``onnx``, ``card``,
    ``torchserve`` or ``layers``, see the module docstring). Prints the paths it wrote and returns
    the exit status: 0, 1 when onnxruntime disagrees beyond ``--atol``, 2 on an error."""
    doc = __doc__ or ""
    summary, details = doc.split("\n\n", 1)
    ap = argparse.ArgumentParser(prog="spiral-export", description=summary, epilog=details,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True, metavar="{onnx,card,torchserve,layers}")

    def model_args(p: argparse.ArgumentParser) -> None:
        src = p.add_mutually_exclusive_group(required=True)
        src.add_argument("--bundle", metavar="DIR", help="model bundle directory written by save_model_bundle")
        src.add_argument("--factory", metavar="FILE.py:FN",
                         help="function returning the module (FILE.py:FN or package.module:FN)")
        p.add_argument("--weights", metavar="PATH",
                       help="state dict to load (.safetensors, .json, .bin); with --bundle it replaces the bundle's")
        p.add_argument("--trust-code", action="store_true",
                       help="with --bundle: run the Python factory the bundle names (its .py file or module); "
                            "only for bundles from a source you trust")
        p.add_argument("--input-shape", type=_shape, metavar="N,D,...",
                       help="example input shape, batch axis first, e.g. 2,3,32,32 (default: the bundle's)")
        p.add_argument("--input-dtype", choices=("float32", "int64"),
                       help="example input dtype: float32, or int64 indices for an Embedding first "
                            "(default: the bundle's, else float32)")
        p.add_argument("--max-index", type=int, metavar="N",
                       help="int64 inputs: indices are drawn from [0, N) (default: the first Embedding's size)")
        p.add_argument("--seed", type=int, default=0, help="seed of the random example input (default: 0)")
        p.add_argument("--out", default="artefacts", metavar="DIR",
                       help="output directory, created if missing (default: ./artefacts)")
        p.add_argument("--name", default="model", help="base name of the files written (default: model)")
        p.add_argument("--preprocessing", default=None, metavar="JSON",
                       help='JSON object recorded in the card and applied by the TorchServe handler: '
                            '(x * scale - mean) / std, mean/std per channel (axis 1), e.g. '
                            '\'{"scale": 0.0039, "mean": [0.5], "std": [0.25]}\' (default: the bundle\'s, else {})')

    def command(name: str, summary_line: str, description: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=summary_line, description=description,
                              formatter_class=argparse.RawDescriptionHelpFormatter)

    p_onnx = command("onnx", "ONNX file + deployment card, checked against onnxruntime",
                     "Writes OUT/NAME.onnx (onnx package, checked by onnx.checker), runs it in onnxruntime on the\n"
                     "example input against SpiralTorch and writes OUT/NAME.card.json with the result.\n"
                     "Exit 1 when the difference exceeds --atol, 2 when a layer has no ONNX mapping.")
    model_args(p_onnx)
    p_onnx.add_argument("--opset", type=int, default=17, help="ONNX opset, >= 17 (default: 17)")
    p_onnx.add_argument("--static-batch", action="store_true",
                        help="fix the batch axis to the example's size instead of naming it 'batch'")
    p_onnx.add_argument("--atol", type=float, default=1e-5,
                        help="largest allowed |onnxruntime - SpiralTorch| (default: 1e-5)")
    p_onnx.add_argument("--no-verify", action="store_true", help="skip the onnxruntime comparison")
    p_card = command("card", "deployment card (JSON) with the weights' checksum",
                     "Writes OUT/NAME.safetensors and OUT/NAME.card.json (inputs, outputs, dtypes, shapes,\n"
                     "preprocessing, parameter count, state-dict hash, SHA-256 of the weights); works for any\n"
                     "model, also one with no ONNX mapping.")
    model_args(p_card)
    p_ts = command("torchserve", "TorchServe .mar archive (torch-model-archiver)",
                   "Writes OUT/NAME.mar with torch-model-archiver: the safetensors weights as the serialized\n"
                   "file, the architecture (or the factory file), and a handler that runs SpiralTorch on JSON\n"
                   "requests (a nested list or {\"inputs\": nested list}; one sample or a batch).\n"
                   "Serve it with: torchserve --start --model-store OUT --models NAME=NAME.mar")
    model_args(p_ts)
    p_ts.add_argument("--version", default="1.0", help="model version recorded in the archive (default: 1.0)")
    p_ts.add_argument("--force", action="store_true", help="replace an existing OUT/NAME.mar")
    command("layers", "the layers ONNX export maps", "Prints each SpiralTorch layer ONNX export maps and the ONNX "
            "operators it becomes.")

    args = ap.parse_args(argv)
    from .integrations import architecture as arch
    from .integrations.model_card import deployment_card, write_deployment_card
    from .integrations.onnx_export import EXPORTABLE_LAYERS

    if args.command == "layers":
        from .integrations import onnx_export

        table = onnx_export.__doc__.split("====\n", 2)[-1] if onnx_export.__doc__ else ""
        print("\n".join(line for line in table.splitlines() if line and not line.startswith("=")))
        print(f"\nexportable: {', '.join(EXPORTABLE_LAYERS)}")
        return 0
    preprocessing: Any = None
    if args.preprocessing is not None:
        try:
            preprocessing = json.loads(args.preprocessing)
            if not isinstance(preprocessing, dict):
                raise ValueError("not a JSON object")
        except ValueError as exc:
            print(f"spiral-export: error: --preprocessing must be a JSON object, got {args.preprocessing!r}: {exc}",
                  file=sys.stderr)
            return 2
    try:
        model = _load_model(args)
        meta = arch.read_bundle_meta(args.bundle) if args.bundle else None
        if preprocessing is None:
            preprocessing = dict((meta or {}).get("preprocessing") or {})
        example = _example(args, model, meta)
        out = pathlib.Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        if args.command == "onnx":
            from .integrations.onnx_export import export_onnx, verify_onnx

            onnx_path = out / f"{args.name}.onnx"
            export_onnx(model, example, onnx_path, opset=args.opset, dynamic_batch=not args.static_batch)
            extra: dict = {"onnx": {"opset": args.opset, "file": onnx_path.name}}
            if not args.no_verify:
                try:
                    worst = verify_onnx(model, onnx_path, example, atol=args.atol, rtol=0.0)
                except ValueError as exc:
                    print(f"spiral-export: {exc}", file=sys.stderr)
                    return 1
                extra["onnx"]["onnxruntime_max_abs_diff"] = worst
                extra["onnx"]["atol"] = args.atol
            card = deployment_card(model, example, name=args.name, artifacts={"onnx": onnx_path},
                                   preprocessing=preprocessing, dynamic_batch=not args.static_batch, extra=extra)
            card_path = write_deployment_card(card, out / f"{args.name}.card.json")
            print(onnx_path)
            print(card_path)
            if "onnxruntime_max_abs_diff" in extra["onnx"]:
                print(f"onnxruntime max |diff| {extra['onnx']['onnxruntime_max_abs_diff']:.3g} (atol {args.atol})")
        elif args.command == "card":
            weights = out / f"{args.name}.safetensors"
            from .nn.serialization import save

            save(str(weights), model)
            card = deployment_card(model, example, name=args.name, artifacts={"safetensors": weights},
                                   preprocessing=preprocessing)
            print(write_deployment_card(card, out / f"{args.name}.card.json"))
        else:
            from .integrations.torchserve import torchserve_archive

            shape = [None] + [int(d) for d in example.shape[1:]]
            factory = None if args.bundle else args.factory
            if args.bundle and meta and meta.get("architecture") is None:
                factory = arch.bundle_factory(args.bundle, meta, trust_code=args.trust_code)
            mar = torchserve_archive(model, args.name, out, version=args.version, input_shape=shape,
                                     input_dtype=str(example.dtype), preprocessing=preprocessing, factory=factory,
                                     force=args.force)
            print(mar)
    except arch.UnsupportedLayerError as exc:
        print(f"spiral-export: error: {exc}", file=sys.stderr)
        return 2
    except (FileNotFoundError, FileExistsError, _core.SpiralError) as exc:
        # A bundle or factory that does not load, an existing archive, a failed archiver run.
        print(f"spiral-export: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
