import numpy as np
import pytest

import spiraltorch as st
from spiraltorch.nn import Linear, Sequential, Embedding
from spiraltorch.nn.checkpoint_presets import build_key_map, detect_preset, load_with_preset, preset_compatibility


def head_state(head):
    native = dict(head.state_dict())
    return {"lm_head.weight": native["head::weight"], "lm_head.bias": native["head::bias"]}


KEY_MAP = {"lm_head.weight": "head::weight", "lm_head.bias": "head::bias"}


def test_seed_quickstart_mapped_report():
    head = Linear(2, 2, name="head")
    r = head.state_dict_compatibility_with_key_map(head_state(head), KEY_MAP)
    assert r["compatible"] is True
    assert (r["matched"], r["missing"], r["shape_mismatched"], r["extra"]) == (2, 0, 0, 0)
    assert [e["name"] for e in r["entries"]] == ["head::bias", "head::weight"]
    assert r["entries"][1]["source_name"] == "lm_head.weight"
    assert len(r["source"]["hash"]) == 64 and len(r["matched_subset"]["hash"]) == 64


def test_exact_report_and_extra():
    m = Sequential(Linear(2, 3), Linear(3, 1))
    ext = dict(m.state_dict())
    ext["unused"] = st.zeros(2)
    r = m.state_dict_compatibility(ext)
    assert r["compatible"] and r["matched"] == 4 and r["extra"] == 1 and r["extra_keys"] == ["unused"]
    assert not m.state_dict_compatibility(ext, allow_extra=False)["compatible"]


def test_missing_and_shape_mismatch_are_named():
    head = Linear(2, 2, name="head")
    ext = {"lm_head.weight": st.zeros(3, 2)}
    r = head.state_dict_compatibility_with_key_map(ext, KEY_MAP)
    assert not r["compatible"] and r["missing"] == 1 and r["shape_mismatched"] == 1
    by = {e["name"]: e for e in r["entries"]}
    assert by["head::bias"]["status"] == "missing_source"
    assert by["head::weight"]["status"] == "shape_mismatch"
    assert by["head::weight"]["expected_shape"] == (2, 2) and by["head::weight"]["source_shape"] == (3, 2)
    with pytest.raises(st.CheckpointError, match=r"'head::bias'.*'lm_head.bias'.*'head::weight' expects \(2, 2\), got \(3, 2\)"):
        head.load_state_dict_subset_mapped_checked(ext, KEY_MAP)


def test_missing_rule_unexpected_target_and_conflict():
    m = Sequential(Linear(2, 2), Linear(2, 2))
    ext = dict(m.state_dict())
    rules = [("0::weight", "0::weight"), ("1::weight", "0::weight"), ("0::bias", "nope::bias")]
    r = m.state_dict_compatibility_with_key_map(ext, rules)
    st_ = {(e["name"], e["source_name"]): e["status"] for e in r["entries"]}
    assert st_[("0::weight", "0::weight")] == "conflict" and st_[("0::weight", "1::weight")] == "conflict"
    assert st_[("nope::bias", "0::bias")] == "unexpected_target"
    assert st_[("1::bias", "")] == "missing_rule"
    assert r["conflicts"] == 2 and not r["compatible"]
    assert "conflicting rules" in r["problems"]


def test_failed_load_is_atomic():
    m = Sequential(Linear(2, 2), Linear(2, 3))
    before = {k: v.tolist() for k, v in m.state_dict().items()}
    ext = {k: st.ones(*v.shape) for k, v in m.state_dict().items()}
    ext["1::bias"] = st.ones(4)  # wrong shape, checked after 0::* and 1::weight would be fine
    with pytest.raises(st.CheckpointError, match=r"'1::bias' expects \(3,\), got \(4,\)"):
        m.load_state_dict_checked(ext)
    assert {k: v.tolist() for k, v in m.state_dict().items()} == before
    ext["1::bias"] = st.ones(3)
    r = m.load_state_dict_checked(ext)
    assert r["compatible"] and all(np.all(v.numpy() == 1) for v in m.state_dict().values())


def test_transforms():
    w = st.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert st.nn.apply_transform(w, "transpose").tolist() == [[1, 4], [2, 5], [3, 6]]
    assert st.nn.apply_transform(w, "copy_overlap_zeros", (3, 2)).tolist() == [[1, 2], [4, 5], [0, 0]]
    assert st.nn.apply_transform(w, "transpose_copy_overlap_zeros", (2, 4)).tolist() == [[1, 4, 0, 0], [2, 5, 0, 0]]
    with pytest.raises(ValueError, match="unsupported state_dict transform 'flip'"):
        st.nn.apply_transform(w, "flip")
    lin = Linear(2, 3, name="l")  # weight (3, 2)
    r = lin.load_state_dict_checked({"w": w, "b": [1.0, 2.0, 3.0]},
                                    {"w": {"target": "l::weight", "transform": "transpose"}, "b": "l::bias"})
    assert r["compatible"] and lin.weight.tolist() == [[1, 4], [2, 5], [3, 6]]


def test_projection_preflight_reports_resize():
    emb = Embedding(4, 2, name="embed")
    big = np.arange(12, dtype=np.float32).reshape(6, 2)
    before = emb.weight.tolist()
    p = emb.state_dict_projection_preflight({"wte": big}, {"wte": {"target": "embed::weight", "transform": "copy_overlap"}})
    assert p["compatible"] and p["resized"] == ["embed::weight"]
    assert p["kept"] == 8 and p["dropped"] == 4 and p["zero_filled"] == 0
    assert emb.weight.tolist() == before  # preflight loads nothing
    small = np.ones((3, 2), np.float32)
    p = emb.state_dict_projection_preflight({"wte": small}, {"wte": {"target": "embed::weight", "transform": "copy_overlap"}})
    assert p["zero_filled"] == 2 and p["kept"] == 6


def test_inputs_numpy_torch_lists():
    lin = Linear(2, 2, name="l")
    w = np.array([[1, 2], [3, 4]], np.float64)
    r = lin.load_state_dict_checked({"l::weight": w, "l::bias": [0.5, 0.5]})
    assert r["compatible"] and lin.weight.tolist() == [[1, 2], [3, 4]]
    torch = pytest.importorskip("torch")
    tw = torch.tensor([[5.0, 6.0], [7.0, 8.0]], requires_grad=True)
    src = torch.arange(4.0)
    shared = st.nn.external_state({"x": src})["x"]
    src[0] = 10.0  # DLPack: no copy
    assert shared.tolist() == [10, 1, 2, 3]
    r = lin.load_state_dict_checked([("l::weight", tw), ("l::bias", torch.zeros(2))])
    assert r["compatible"] and lin.weight.tolist() == [[5, 6], [7, 8]]
    with pytest.raises(TypeError):
        lin.state_dict_compatibility({"l::weight": object()})


def test_hash_is_order_independent_and_content_sensitive():
    a = {"x": st.ones(2), "y": st.zeros(3)}
    b = {"y": st.zeros(3), "x": st.ones(2)}
    assert st.nn.state_dict_hash(a) == st.nn.state_dict_hash(b)
    assert st.nn.state_dict_hash(a) != st.nn.state_dict_hash({"x": st.ones(2), "y": st.ones(3)})


class TinyGPT(st.nn.Module):
    def __init__(self, v=10, h=4):
        super().__init__()
        self.embed = Embedding(v, h)
        self.head = Linear(h, v)


def gpt2_state(v=10, h=4, prefix="transformer."):
    rng = np.random.default_rng(0)
    return {
        f"{prefix}wte.weight": rng.standard_normal((v, h)).astype(np.float32),
        f"{prefix}wpe.weight": rng.standard_normal((8, h)).astype(np.float32),
        f"{prefix}h.0.attn.c_attn.weight": rng.standard_normal((h, 3 * h)).astype(np.float32),
        f"{prefix}h.0.attn.bias": np.ones((1, 1, 8, 8), np.float32),
    }


def test_preset_detection():
    assert detect_preset(gpt2_state()) == "gpt2"
    assert detect_preset(gpt2_state(prefix="")) == "gpt2_bare"
    assert detect_preset(["model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.weight"]) == "llama"
    assert detect_preset(["model.language_model.embed_tokens.weight"]) == "gemma"
    assert detect_preset(["gpt_neox.embed_in.weight", "embed_out.weight"]) == "gpt_neox"
    assert detect_preset(["bert.embeddings.word_embeddings.weight", "bert.encoder.layer.0.output.dense.weight"]) == "bert"
    with pytest.raises(ValueError):
        detect_preset(["foo.weight"])


def test_gpt2_preset_tied_head_and_synthesised_bias():
    m = TinyGPT()
    ext = gpt2_state()
    r = preset_compatibility(m, ext, "auto")
    plan = r["plan"]
    assert r["preset"] == "gpt2" and r["compatible"]
    assert plan.tied == ["head::weight"] and plan.synthesised == ["head::bias"]
    assert plan.ignored == ["transformer.h.0.attn.bias"]
    load_with_preset(m, ext)
    assert np.allclose(m.head.weight.detach().numpy(), ext["transformer.wte.weight"])
    assert np.all(m.head.bias.detach().numpy() == 0)
    # Conv1D weights are (in, out): the rule transposes them
    rule = next(x for x in build_key_map("gpt2", ext).key_map if "c_attn" in x["source"])
    assert rule["transform"] == "transpose" and rule["target"] == "blocks.0.attn.c_attn::weight"


def test_gpt2_preset_resize_and_mismatch():
    m = TinyGPT(v=12)
    ext = gpt2_state(v=10)
    r = preset_compatibility(m, ext, "gpt2")
    assert not r["compatible"] and r["shape_mismatched"] == 2
    r = load_with_preset(m, ext, "gpt2", resize=True)
    assert r["compatible"]
    assert np.all(m.embed.weight.detach().numpy()[10:] == 0)


def test_llama_preset_rules():
    plan = build_key_map("llama", {"model.layers.3.self_attn.q_proj.weight": np.zeros((2, 2), np.float32),
                                   "model.layers.3.mlp.gate_proj.weight": np.zeros((2, 2), np.float32),
                                   "model.norm.weight": np.zeros(2, np.float32)})
    targets = sorted(r["target"] for r in plan.key_map)
    assert targets == ["layers.3.attn.q_proj::weight", "layers.3.mlp.gate_proj::weight", "norm::weight"]


def test_methods_on_python_subclass_and_containers():
    m = TinyGPT()
    r = m.state_dict_compatibility(m.state_dict())
    assert r["compatible"] and r["matched"] == 3
    s = Sequential(m, Linear(10, 2))
    assert s.state_dict_compatibility(s.state_dict())["compatible"]
