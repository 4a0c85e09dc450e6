"""The English byte corpus (Debian's fortunes), the byte-level language models and the
wave_rnn_lm recipe."""

from __future__ import annotations

import json
import math

import pytest

import spiraltorch as st
from spiraltorch.zoo import byte_lm

needs_fortunes = pytest.mark.skipif(st.datasets.find_fortunes() is None,
                                    reason="Debian's fortunes package is not installed")


@needs_fortunes
def test_fortunes_split_is_fixed_disjoint_and_real_text():
    train = st.datasets.fortunes_text("train")
    valid = st.datasets.fortunes_text("validation")
    assert len(train) > 2_000_000 and len(valid) > 200_000
    assert 0.08 < len(valid) / (len(train) + len(valid)) < 0.12
    assert st.datasets.fortunes_text("validation") == valid  # same bytes every call
    entries_v = set(valid.split(b"\n\n"))
    entries_t = set(train.split(b"\n\n"))
    assert len(entries_v & entries_t) < 0.05 * len(entries_v)  # only repeated sayings coincide
    letters = sum(chr(b).isalpha() or chr(b) == " " for b in valid[:20000]) / 20000
    assert letters > 0.85
    with pytest.raises(ValueError, match="split"):
        st.datasets.fortunes_text("test")


def test_fortunes_missing_names_the_package(tmp_path, monkeypatch):
    monkeypatch.setattr(st.datasets, "FORTUNES_DIRS", (str(tmp_path / "absent"),))
    monkeypatch.delenv("SPIRALTORCH_FORTUNES_DIR", raising=False)
    assert st.datasets.find_fortunes() is None
    with pytest.raises(FileNotFoundError, match="apt-get install fortunes"):
        st.datasets.fortunes_text.__wrapped__("train")
    # A directory of its own: entries split on '%' lines, every tenth to validation.
    (tmp_path / "fortunes").write_bytes(b"%\n".join(f"saying {i}\n".encode() for i in range(20)))
    valid = st.datasets.fortunes_text.__wrapped__("validation", str(tmp_path))
    assert valid == b"saying 9\n\nsaying 19\n"


def test_byte_tensor_holds_the_bytes_as_int64():
    t = byte_lm.byte_tensor(b"A\x00\xff")
    assert t.dtype == st.int64 and t.tolist() == [65, 0, 255]


def test_unigram_baseline_is_the_smoothed_cross_entropy():
    train, valid = b"aab", b"ab"
    p_a, p_b = 3 / 259, 2 / 259
    assert byte_lm.unigram_bits_per_byte(train, valid) == pytest.approx(-(math.log2(p_a) + math.log2(p_b)) / 2)


@pytest.mark.parametrize("arch", byte_lm.ARCHS)
def test_byte_models_map_bytes_to_logits_at_similar_size(arch):
    st.manual_seed(0)
    model = byte_lm.ByteLM(arch, seq=16)
    tokens = st.randint(0, 256, (3, 16))
    assert model(tokens).shape == (3, 16, 256)
    assert 200_000 < byte_lm.parameter_count(model) < 300_000
    # Causal: the logits at step 5 do not depend on bytes after it.
    later = tokens.clone()
    later[:, 6:] = 7
    assert float((model(tokens)[:, :6] - model(later)[:, :6]).abs().max()) < 1e-5
    with pytest.raises(ValueError, match="arch"):
        byte_lm.ByteLM("gpt", seq=16)


@needs_fortunes
def test_wave_rnn_lm_recipe_trains_and_writes_jsonl(tmp_path):
    out = tmp_path / "m.jsonl"
    st.model_zoo.run_model("wave_rnn_lm", ["--steps", "30", "--batch", "8", "--seq", "32", "--log-every", "10",
                                           "--eval-windows", "16", "--jsonl", str(out)])
    lines = [json.loads(l) for l in out.read_text().splitlines()]
    assert [l["step"] for l in lines[:-1]] == [10, 20, 30]
    result = lines[-1]
    assert result["arch"] == "wave_rnn" and result["steps"] == 30
    assert result["unigram_bits_per_byte"] == pytest.approx(4.7586, abs=1e-3)
    assert 0 < result["valid_bits_per_byte"] < 8.5 and result["tokens_per_second"] > 0


@needs_fortunes
def test_byte_lm_cli_trains_a_baseline(capsys):
    r = byte_lm.cli(["--arch", "lstm", "--steps", "5", "--batch", "4", "--seq", "16", "--log-every", "0",
                     "--eval-windows", "8"])
    assert r["arch"] == "lstm" and r["steps"] == 5 and r["valid_bits_per_byte"] > 0
    assert "lstm: " in capsys.readouterr().out


@needs_fortunes
def test_llm_char_trains_on_the_fortunes_corpus(capsys):
    st.model_zoo.run_model("llm_char", ["--corpus", "fortunes", "--epochs", "2", "--max-windows", "64",
                                        "--hidden", "32"])
    out = capsys.readouterr().out
    assert "vocabulary 256, 64 windows of 48" in out
    bits = [float(l.split("validation ")[1].split()[0]) for l in out.splitlines() if "validation" in l]
    assert len(bits) == 2 and bits[1] < bits[0] < 8.0
