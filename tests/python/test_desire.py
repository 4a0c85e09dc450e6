"""Desire controls: the seed's snippet as written, every formula of DesirePipeline against
NumPy, the bridges and bundle, the downstream-hook adapter, and errors."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import spiraltorch as st
from spiraltorch import nn

SEED_SNIPPET = '''
import spiraltorch as st

pipeline = st.nn.DesirePipeline(vocab_size=2, concepts=2)
step = pipeline.step([1.2, -0.4], previous_token=0, concept=[0.6, 0.4])
print("phase", step["phase"], "entropy", step["entropy"])

adapter = st.build_desire_adapter_from_downstream_hook(
    {
        "geometry_bias_coherence": {"score": 0.7},
        "top_probability": 0.8,
    }
)
pipeline.ingest_geometry_bias(adapter["geometry_bias_signal"], source="zspace")
print("geometry bias:", pipeline.geometry_bias_metrics())
'''


def log_softmax(x):
    x = np.asarray(x, dtype=np.float64)
    return x - (x.max() + np.log(np.exp(x - x.max()).sum()))


def test_seed_snippet_runs_as_written(capsys):
    exec(compile(SEED_SNIPPET, "seed_desire", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    p = np.exp(log_softmax([1.2, -0.4]))
    words = out[0].split()
    assert words[:3] == ["phase", "observation", "entropy"]
    assert float(words[3]) == pytest.approx(-(p * np.log(p)).sum(), abs=1e-15)
    # stability 0.7 (the coherence score), momentum 0, delta 0, injection: gain = 1 + 0.45 * 0.4 = 1.18
    z = 0.25 * math.sqrt((0.7**2 + (1.18 / 1.8) ** 2) / 4)
    assert out[1].startswith("geometry bias: {")
    metrics = eval(out[1][len("geometry bias: "):])
    assert metrics["z_energy"] == pytest.approx(z) and metrics["signals_ingested"] == 1


def test_defaults_leave_the_distribution_unchanged():
    pipe = nn.DesirePipeline(5)
    logits = [0.3, -1.0, 2.0, 0.0, 0.5]
    for i in range(4):
        s = pipe.step(logits, previous_token=i % 5, concept=[1, 0, 0])
        np.testing.assert_allclose(s["probabilities"], np.exp(log_softmax(logits)), atol=1e-15)
        np.testing.assert_allclose(s["logit_offsets"], 0, atol=1e-15)
        assert s["temperature"] == 1.0 and s["entropy"] == pytest.approx(s["base_entropy"])
    assert [pipe.step(logits, 0)["phase"] for _ in range(2)] == ["integration"] * 2


def test_every_term_matches_the_documented_formula():
    V, K = 4, 2
    pipe = nn.DesirePipeline(V, concepts=K, alpha_end=0.5, beta_end=0.3, gamma=0.8, lambda_=0.2,
                             observation_horizon=1, integration_horizon=3, target_entropy=0.5, eta=0.4)
    rng = np.random.default_rng(0)
    trans = rng.standard_normal((V, V))
    rep = rng.random(V)
    bridge = rng.random((V, K))
    pipe.set_transition_prior(st.tensor(trans))
    pipe.set_repression(rep.tolist())
    pipe.set_concept_bridge(bridge.ravel().tolist())
    T, observed, avoid_sum = 1.0, 0, np.zeros(V)
    for n in range(5):
        logits = rng.standard_normal(V)
        prev, c = n % V, np.array([0.25, 0.75])
        s = pipe.step(logits.tolist(), previous_token=prev, concept=c.tolist())
        phase = "observation" if n < 1 else "injection" if n < 3 else "integration"
        ramp = min(1.0, (n + 1) / 3)
        alpha, beta = 0.5 * ramp, (0.0 if phase == "observation" else 0.3 * ramp)
        avoid = avoid_sum / observed if observed else np.zeros(V)
        avoid = avoid - avoid.mean() if observed else avoid
        base = log_softmax(logits)
        score = base / T + alpha * trans[prev] + beta * avoid + 0.8 * bridge @ c - 0.2 * rep
        q = np.exp(log_softmax(score))
        H = -(q * np.log(q)).sum()
        assert s["phase"] == phase and s["step"] == n
        assert s["weights"] == pytest.approx({"alpha": alpha, "beta": beta, "gamma": 0.8, "lambda": 0.2})
        np.testing.assert_allclose(s["probabilities"], q, atol=1e-12)
        np.testing.assert_allclose(s["logit_offsets"], score - base, atol=1e-12)
        assert s["temperature"] == pytest.approx(T) and s["entropy"] == pytest.approx(H)
        if phase == "observation":
            avoid_sum += 1 - q
            observed += 1
        T = min(max(T + 0.4 * (0.5 - H), 0.4), 1.6)
        assert s["next_temperature"] == pytest.approx(T) and pipe.temperature == pytest.approx(T)
    pipe.reset()
    assert pipe.steps_taken == 0 and pipe.temperature == 1.0


def test_default_concept_bridge_maps_token_to_concept_mod_k():
    pipe = nn.DesirePipeline(5, concepts=2, gamma=1.0)
    assert pipe.concept_bridge == [1, 0, 0, 1, 1, 0, 0, 1, 1, 0]
    s = pipe.step([0.0] * 5, previous_token=0, concept=[1.0, 0.0])
    # tokens 0, 2, 4 (concept 0) get +1 in score.
    q = np.exp(log_softmax([1, 0, 1, 0, 1]))
    np.testing.assert_allclose(s["probabilities"], q, atol=1e-15)


def test_bridges_and_bundle_summarise_the_steps():
    bundle = nn.DesireTelemetryBundle(blend=0.5, drift_gain=1.0)
    assert bundle.has_trainer() and bundle.has_roundtable()
    pipe = nn.DesirePipeline(3, alpha_end=0.6, beta_end=0.2, gamma=0.2, lambda_=0.5, bundle=bundle)
    steps = [pipe.step([0.1, 0.2, 0.3], previous_token=1) for _ in range(4)]
    assert len(bundle.trainer_bridge()) == 4
    t = bundle.drain_trainer_summary()
    assert t["total"] == 4 and t["observation"] == 1 and t["injection"] == 1 and t["integration"] == 2
    assert t["mean_entropy"] == pytest.approx(np.mean([s["entropy"] for s in steps]))
    assert bundle.drain_trainer_summary() is None
    im = bundle.roundtable_bridge().impulse()
    w = steps[-1]["weights"]
    total = w["alpha"] + w["gamma"] + w["beta"]
    expect = [min(max(1 + 0.5 * (x / total - 1 / 3), 0.35), 1.65) for x in (w["alpha"], w["gamma"], w["beta"])]
    assert im["multipliers"] == pytest.approx(tuple(expect))
    assert im["drift"] == pytest.approx(math.tanh(0.5))
    r = bundle.drain_roundtable_summary()
    assert r["steps"] == 4 and r["mean_above"] > 1.0
    solo = nn.DesireRoundtableBridge(blend=7.0)
    assert solo.blend == 1.0 and solo.impulse() is None
    tb = nn.DesireTrainerBridge()
    assert tb.is_empty() and tb.drain_summary() is None
    pipe.attach_trainer_bridge(tb)
    pipe.attach_roundtable_bridge(solo)
    pipe.step([0.0, 0.0, 0.0], 0)
    assert len(tb) == 1 and solo.impulse() is not None
    only_trainer = nn.DesireTelemetryBundle(roundtable=False)
    assert only_trainer.roundtable_bridge() is None and only_trainer.drain_roundtable_summary() is None


def test_geometry_bias_is_telemetry_only():
    pipe = nn.DesirePipeline(3)
    assert pipe.geometry_bias_metrics() is None
    before = pipe.step([1.0, 0.0, -1.0], 0)["probabilities"]
    pipe.ingest_geometry_bias([3.0, 4.0], source="z-space")
    pipe.ingest_geometry_bias(st.tensor([1.0, 1.0, 1.0]), source="roundtable")
    m = pipe.geometry_bias_metrics()
    assert m["z_energy"] == pytest.approx(0.25 * math.sqrt(12.5)) and m["roundtable_energy"] == pytest.approx(0.1)
    assert m["balance"] == pytest.approx(abs(m["z_energy"] - 0.1) / (m["z_energy"] + 0.1))
    assert pipe.step([1.0, 0.0, -1.0], 0)["probabilities"] == before
    assert pipe.geometry_bias_metrics()["steps_since_ingest"] == 1
    with pytest.raises(ValueError, match="not finite"):
        pipe.ingest_geometry_bias([float("nan")])
    with pytest.raises(ValueError, match="source"):
        pipe.ingest_geometry_bias([1.0], source="elsewhere")
    pipe.clear_geometry_bias()
    assert pipe.geometry_bias_metrics() is None


def test_bad_inputs_name_the_values():
    with pytest.raises(ValueError, match="vocab_size"):
        nn.DesirePipeline(0)
    pipe = nn.DesirePipeline(3, concepts=2)
    with pytest.raises(ValueError, match="logits has 2 values, expected 3"):
        pipe.step([1.0, 2.0], 0)
    with pytest.raises(ValueError, match="previous_token 3"):
        pipe.step([1.0, 2.0, 3.0], 3)
    with pytest.raises(ValueError, match=r"concept\[1\] = -1"):
        pipe.step([1.0, 2.0, 3.0], 0, concept=[1.0, -1.0])
    with pytest.raises(ValueError, match=r"logits\[0\] = inf"):
        pipe.step([float("inf"), 0.0, 0.0], 0)
    with pytest.raises(TypeError, match="logits"):
        pipe.step("abc", 0)
    with pytest.raises(ValueError, match="temp_min"):
        nn.DesirePipeline(3, temp_min=0.0)
    assert pipe.steps_taken == 0  # failed steps change nothing


def test_adapter_from_hooks(tmp_path):
    hook = {"desire_candidate": {"stability": 0.94, "momentum": 0.3, "delta": 0.1}}
    a = st.build_desire_adapter_from_downstream_hook(hook)
    gain = 1 + 0.45 * (2 * 0.94 - 1) + 0.2 * math.tanh(0.3) - 0.35 * math.tanh(0.1) + 0.16
    assert a["phase_hint"] == "integration" and a["gain"] == pytest.approx(gain)
    assert a["temperature_scale"] == pytest.approx(1 / gain) and a["temperature_scale"] < 1
    assert a["geometry_bias_signal"][0] == 0.94 and len(a["geometry_bias_signal"]) == 4
    path = tmp_path / "hook.json"
    path.write_text(json.dumps({"downstream_hook": hook}))
    assert st.build_desire_adapter_from_downstream_hook(path) == a
    neutral = st.build_desire_adapter_from_downstream_hook({})
    assert neutral["gain"] == pytest.approx(1.0) and neutral["guidance"] == "leave logits unchanged"
    with pytest.raises(TypeError):
        st.build_desire_adapter_from_downstream_hook(3)
    pipe = nn.DesirePipeline(2)
    s = st.desire_step_from_downstream_hook(pipe, [1.0, 0.0], 0, hook)
    np.testing.assert_allclose(s["probabilities"], np.exp(log_softmax([gain, 0.0])), atol=1e-12)
    assert s["scaled_logits_gain"] == pytest.approx(gain) and s["geometry_bias_metrics"]["z_energy"] > 0


def test_desire_module_exposes_the_phase_terms():
    assert st.desire.PHASE_TERMS == {"observation": -0.18, "injection": 0.0, "integration": 0.16}
    assert st.desire.build_desire_adapter_from_downstream_hook is st.build_desire_adapter_from_downstream_hook


def _trainer_run(bundle=None, desire_steps=0):
    trainer = nn.ModuleTrainer(backend="cpu", curvature=-1.0, hyper_learning_rate=1e-2, fallback_learning_rate=1e-1)
    schedule = trainer.roundtable(4, 1, nn.RoundtableConfig(top_k=1, mid_k=1, bottom_k=1, here_tolerance=1e-5))
    st.manual_seed(0)
    model = nn.Sequential()
    model.add(nn.Linear(3, 1, name="layer"))
    if bundle is not None:
        pipe = nn.DesirePipeline(4, alpha_end=1.0, bundle=bundle)
        for _ in range(desire_steps):
            pipe.step([0.1, 0.2, 0.3, 0.4], previous_token=0)
        trainer.enable_desire_telemetry(bundle)
        assert trainer.desire_telemetry_enabled
    x = st.Tensor.rand(4, 3, seed=3)
    y = st.Tensor.rand(4, 1, seed=4)
    stats = trainer.train_epoch(model, nn.MeanSquaredError(), [(x, y)], schedule)
    return stats, model.state_dict()["layer::weight"].detach().numpy()


def test_module_trainer_applies_the_roundtable_impulse_and_drains_the_summary():
    plain_stats, plain = _trainer_run()
    assert plain_stats.desire_summary is None and plain_stats.desire_multipliers == {"above": 1.0, "here": 1.0,
                                                                                      "beneath": 1.0}
    # No pipeline step yet: no impulse, so the update is the plain one.
    quiet_stats, quiet = _trainer_run(nn.DesireTelemetryBundle(blend=1.0), desire_steps=0)
    np.testing.assert_array_equal(quiet, plain)
    assert quiet_stats.desire_summary is None
    # alpha only: bary (1, 0, 0) -> above 1 + 2/3 clamped to 1.65, here and beneath 2/3.
    bundle = nn.DesireTelemetryBundle(blend=1.0)
    stats, weights = _trainer_run(bundle, desire_steps=3)
    assert stats.desire_multipliers == pytest.approx({"above": 1.65, "here": 2 / 3, "beneath": 2 / 3})
    assert stats.desire_summary["total"] == 3 and bundle.drain_trainer_summary() is None
    assert not np.allclose(weights, plain)
