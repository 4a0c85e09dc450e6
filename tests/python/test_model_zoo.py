"""spiraltorch.model_zoo: find_model, list_models(include_internal=, focus=), focus_presets,
model_zoo_summary, and recipes found under an extra root."""

from __future__ import annotations

import sys

import pytest

from spiraltorch import model_zoo


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.delenv("SPIRALTORCH_MODEL_ZOO_ROOT", raising=False)
    (tmp_path / "my_custom_recipe.py").write_text("import sys\nprint('custom ran', sys.argv[1:])\n")
    (tmp_path / "_internal_probe.py").write_text("print('internal')\n")
    (tmp_path / "vae_text_classification.py").write_text("print('vae')\n")
    return str(tmp_path)


def test_find_model_exact_prefix_substring_and_errors(root):
    assert model_zoo.find_model("mlp_regression").key == "mlp_regression"
    assert model_zoo.find_model("LLM_CHAR.py").key == "llm_char"
    assert model_zoo.find_model("spiral").key == "spiral_mlp"  # unique prefix
    assert model_zoo.find_model("regress").key == "mlp_regression"  # unique substring
    assert model_zoo.find_model("custom_recipe", root=root).key == "my_custom_recipe"
    with pytest.raises(KeyError, match="'fashion' is ambiguous: fashion_mlp, fashion_cnn"):
        model_zoo.find_model("fashion")
    with pytest.raises(KeyError, match="no model matches 'transformer'"):
        model_zoo.find_model("transformer")
    with pytest.raises(KeyError, match="no model matches '_internal'"):
        model_zoo.find_model("_internal", root=root)
    assert model_zoo.find_model("_internal", root=root, include_internal=True).key == "_internal_probe"


def test_list_models_internal_and_focus_filters(root):
    keys = [e.key for e in model_zoo.list_models(root=root)]
    assert keys[:5] == ["spiral_mlp", "mlp_regression", "fashion_mlp", "fashion_cnn", "llm_char"]
    assert "my_custom_recipe" in keys and "_internal_probe" not in keys
    assert "_internal_probe" in [e.key for e in model_zoo.list_models(root=root, include_internal=True)]
    # A focus is a hard filter: its task (when none is given) and its required tags.
    assert [e.key for e in model_zoo.list_models(focus="zspace-bootstrap")] == [
        "mlp_regression", "zspace_stream_online_vision", "zspace_stream_frame_aggregator"]
    assert [e.key for e in model_zoo.list_models(focus="llm coherence")] == ["llm_char", "wave_rnn_lm"]
    assert [e.key for e in model_zoo.list_models(focus="quickstart")] == ["spiral_mlp", "mlp_regression"]
    assert model_zoo.list_models(focus="vision", task="regression") == []
    assert [e.key for e in model_zoo.list_models(tags=["vision", "conv"])] == ["fashion_cnn"]
    with pytest.raises(KeyError, match="unknown focus 'nope' \\(known: "):
        model_zoo.list_models(focus="nope")


def test_inferred_metadata_for_unlisted_scripts(root):
    e = model_zoo.find_model("vae_text", root=root)
    assert (e.task, e.family, e.tags) == ("classification", "vae", ("vae", "text", "classification"))
    assert e.description == "vae text classification recipe." and e.internal is False and e.available
    other = model_zoo.find_model("my_custom", root=root)
    assert (other.task, other.family) == ("other", "my")


def test_focus_presets_are_copies_with_lists():
    presets = model_zoo.focus_presets()
    assert set(presets) == {"quickstart", "zspace_bootstrap", "zspace_stream", "vision", "llm_coherence"}
    assert presets["vision"]["task"] == "classification" and presets["vision"]["required_tags"] == ["vision"]
    presets["vision"]["required_tags"].append("mutated")
    assert model_zoo.focus_presets()["vision"]["required_tags"] == ["vision"]


def test_suggest_models_uses_a_preset_focus():
    ranked = [e.key for e in model_zoo.suggest_models(focus="zspace_stream")]
    # Only recipes tagged zspace; the stream recipes carry the preferred streaming/vision tags.
    assert ranked == ["zspace_stream_online_vision", "zspace_stream_frame_aggregator", "mlp_regression"]
    assert model_zoo.suggest_models("llm_char", prefer_tags=["coherence"])[0].key == "llm_char"


def test_model_zoo_summary_counts(root):
    s = model_zoo.model_zoo_summary()
    assert s["count"] == 10
    assert s["tasks"] == {"classification": 5, "embedding": 1, "generative": 1, "language-modeling": 2,
                          "regression": 1}
    assert s["families"] == {"cnn": 1, "mlp": 3, "poincare": 1, "rnn": 2, "vae": 1, "vision": 2}
    assert s["tags"]["builtin-data"] == 3 and s["focuses"] == sorted(model_zoo.focus_presets())
    assert [m["key"] for m in s["models"]][:2] == ["spiral_mlp", "mlp_regression"]
    assert s["models"][0]["script_path"].endswith("spiral_mlp.py") and s["models"][0]["tags"] == [
        "raw-autograd", "builtin-data", "quick"]
    assert s["available"] == sum(m["available"] for m in s["models"])
    full = model_zoo.model_zoo_summary(root=root, include_internal=True)
    assert full["count"] == 13 and full["tasks"]["other"] == 2
    assert model_zoo.model_zoo_summary(available_only=True)["count"] == s["available"]


def test_root_recipes_build_and_run(root, capsys, monkeypatch):
    cmd = model_zoo.build_model_command("my_custom_recipe", "--x", "1", root=root)
    assert cmd[0] == sys.executable and cmd[1].endswith("my_custom_recipe.py") and cmd[2:] == ["--x", "1"]
    model_zoo.run_model("my_custom_recipe", ["a"], root=root)
    assert capsys.readouterr().out == "custom ran ['a']\n"
    monkeypatch.setenv("SPIRALTORCH_MODEL_ZOO_ROOT", root)
    assert model_zoo.find_model("custom").key == "my_custom_recipe"
    monkeypatch.setenv("SPIRALTORCH_MODEL_ZOO_ROOT", root + "/missing")
    with pytest.raises(FileNotFoundError, match="is not a directory"):
        model_zoo.list_models()
