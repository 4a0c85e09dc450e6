"""Z-space inference: ZSpacePartialBundle, blend_zspace_partials, infer_from_partial,
compile_inference, ZSpaceInferencePipeline, the st.z namespace and z_metrics,
training_telemetry_projection, and ZSpaceTrainer.load_state_dict's checks."""

from __future__ import annotations

import math

import pytest

import spiraltorch as st

OBS = {"speed": 0.2, "memory": 0.1, "stability": 0.9}
GOLDEN_Z = [0.12, -0.03, 0.48, -0.2]


def test_infer_from_partial_matches_the_seed_numbers_and_changes_nothing():
    trainer = st.ZSpaceTrainer(z_dim=4)
    inf = st.infer_from_partial(trainer, OBS)
    # At z = 0 the decoded stability is tanh(2); residual = RMS over the three observed metrics.
    assert inf.prior["stability"] == pytest.approx(math.tanh(2.0))
    assert inf.residual == pytest.approx(0.134288, abs=1e-6)
    assert inf.confidence == pytest.approx(0.874339, abs=1e-6)
    assert inf.metrics["speed"] == 0.2 and inf.metrics["drs"] == inf.prior["drs"] == 0.0
    assert inf.observed == OBS and inf.control_gradient is None and inf.telemetry is None
    assert trainer.state == [0.0] * 4 and trainer.last_inference is None
    same = st.infer_from_partial([0.0] * 4, OBS)
    assert same.as_dict() == inf.as_dict()
    assert st.infer_from_partial(st.zeros(4), OBS).residual == inf.residual
    prior_only = st.infer_from_partial(GOLDEN_Z, None)
    assert prior_only.residual == 0.0 and prior_only.confidence == 1.0 and prior_only.metrics == prior_only.prior
    assert prior_only.prior == st.decode_zspace(GOLDEN_Z)


def test_fit_gradient_points_downhill_and_barycentric_smoothing():
    inf = st.infer_from_partial(GOLDEN_Z, OBS)
    stepped = [z - 0.05 * g for z, g in zip(GOLDEN_Z, inf.gradient)]
    assert st.infer_from_partial(stepped, OBS).residual < inf.residual
    prior_b = st.infer_from_partial(GOLDEN_Z, OBS, smoothing=1.0).barycentric
    obs_b = st.infer_from_partial(GOLDEN_Z, OBS, smoothing=0.0).barycentric
    sp = lambda x: math.log1p(math.exp(x))  # noqa: E731
    w = [sp(0.2), sp(0.1), sp(0.9)]
    assert list(obs_b) == pytest.approx([v / sum(w) for v in w])
    d = st.decode_zspace(GOLDEN_Z)
    w0 = [sp(d["speed"]), sp(d["memory"]), sp(d["stability"])]
    assert list(prior_b) == pytest.approx([v / sum(w0) for v in w0])
    half = st.infer_from_partial(GOLDEN_Z, OBS, smoothing=0.5).barycentric
    assert list(half) == pytest.approx([(a + b) / 2 for a, b in zip(prior_b, obs_b)])


def test_inference_input_errors():
    with pytest.raises(st.SpiralValueError, match="infer_from_partial: unknown metric 'sped'"):
        st.infer_from_partial([0.0] * 4, {"sped": 1.0})
    with pytest.raises(st.SpiralValueError, match="infer_from_partial: z_state is empty"):
        st.infer_from_partial([], OBS)
    with pytest.raises(st.SpiralValueError, match=r"z_state has non-finite values \[nan\]"):
        st.infer_from_partial([0.0, float("nan")], OBS)
    with pytest.raises(st.SpiralValueError, match="smoothing must be in"):
        st.infer_from_partial([0.0] * 4, OBS, smoothing=1.5)
    with pytest.raises(TypeError, match="z_state must be a sequence"):
        st.infer_from_partial("zz", OBS)


def test_telemetry_lowers_confidence_by_the_labelled_heuristic():
    base = st.infer_from_partial(GOLDEN_Z, OBS)
    inf = st.infer_from_partial(GOLDEN_Z, OBS, telemetry={"psi": {"variance": 1.0, "focus": -2.0}})
    assert inf.telemetry == {"psi.variance": 1.0, "psi.focus": -2.0}
    assert inf.telemetry_reliability == pytest.approx(0.5 * 0.75)
    assert inf.confidence == pytest.approx(base.confidence * 0.375) and inf.residual == base.residual
    with pytest.raises(st.SpiralValueError, match="telemetry value 'x' is not finite"):
        st.infer_from_partial(GOLDEN_Z, OBS, telemetry={"x": float("inf")})


def test_partial_bundle_validates_and_canonicalises():
    b = st.ZSpacePartialBundle({"mem": 0.3, "grad": [1, 2]}, weight=2, origin="probe", telemetry={"a": {"b": 1}})
    assert b.metrics == {"memory": 0.3, "gradient": [1.0, 2.0]} and b.weight == 2.0
    assert b.telemetry == {"a.b": 1.0} and b.telemetry_payload() == {"a.b": 1.0} and b.origin == "probe"
    assert b.resolved() == b.metrics and b.resolved() is not b.metrics
    with pytest.raises(st.SpiralValueError, match="weight must be finite and >= 0, got -1"):
        st.ZSpacePartialBundle({"speed": 0.1}, weight=-1)
    with pytest.raises(ValueError, match="metric 'speed' given twice"):
        st.ZSpacePartialBundle({"speed": 0.1, "velocity": 0.2})
    with pytest.raises(TypeError, match="metrics must be a dict or ZMetrics"):
        st.ZSpacePartialBundle([0.1])


def test_blend_strategies_weights_and_gradients():
    parts = [st.ZSpacePartialBundle({"speed": 0.2, "grad": [1.0, 2.0]}),
             st.ZSpacePartialBundle({"speed": 0.8, "memory": 0.5, "grad": [3.0]}, weight=3.0), None]
    mean = st.blend_zspace_partials(parts)
    assert mean["speed"] == pytest.approx(0.65) and mean["memory"] == 0.5
    assert mean["gradient"] == pytest.approx([2.5, 0.5])
    assert st.blend_zspace_partials(parts, strategy="last")["speed"] == 0.8
    assert st.blend_zspace_partials(parts, strategy="max")["speed"] == 0.8
    assert st.blend_zspace_partials(parts, strategy="min")["speed"] == 0.2
    over = st.blend_zspace_partials(parts, weights=[1.0, 0.0, 1.0])  # the second is switched off
    assert over == {"speed": 0.2, "gradient": [1.0, 2.0]}
    with pytest.raises(st.SpiralValueError, match="2 weights for 3 partials"):
        st.blend_zspace_partials(parts, weights=[1.0, 1.0])
    with pytest.raises(st.SpiralValueError, match="strategy must be one of mean, last, max, min, got 'median'"):
        st.blend_zspace_partials(parts, strategy="median")


def test_compile_inference_wraps_a_metric_source():
    @st.compile_inference
    def from_log(loss, prev):
        return {"speed": prev - loss}

    inf = from_log(GOLDEN_Z, 0.5, 0.8)
    assert inf.observed == {"speed": pytest.approx(0.3)}
    assert inf.as_dict() == st.infer_from_partial(GOLDEN_Z, {"speed": 0.8 - 0.5}).as_dict()

    @st.compile_inference(smoothing=1.0)
    def nothing():
        return None

    assert nothing(GOLDEN_Z).residual == 0.0 and nothing.__name__ == "nothing"
    with pytest.raises(TypeError, match="expected a callable"):
        st.compile_inference(3)


def test_pipeline_blends_sources_and_follows_a_trainer():
    trainer = st.ZSpaceTrainer(z_dim=4)
    pipe = st.ZSpaceInferencePipeline(trainer, strategy="mean", telemetry={"noise": {"variance": 0.0}})
    pipe.add_partial({"speed": 0.2}, origin="a")
    pipe.add_partial(st.ZSpacePartialBundle({"speed": 0.4, "memory": 0.1}), weight=3.0, origin="b")
    assert len(pipe) == 2 and [p.origin for p in pipe.partials] == ["a", "b"]
    assert pipe.blended() == pytest.approx({"speed": 0.35, "memory": 0.1})
    with pytest.raises(st.SpiralValueError, match="strategy must be one of"):
        pipe.infer(strategy="median")
    assert len(pipe) == 2  # a failed infer leaves the queue
    inf = pipe.infer()
    assert inf.observed == pytest.approx({"speed": 0.35, "memory": 0.1}) and len(pipe) == 0
    assert inf.as_dict()["residual"] == st.infer_from_partial([0.0] * 4, inf.observed).residual
    assert pipe.last_inference is inf and inf.telemetry == {"noise.variance": 0.0}
    for _ in range(5):
        trainer.step_partial({"memory": 0.5})
    assert pipe.z_state == trainer.state != [0.0] * 4  # read at each infer
    pipe.add_partial({"memory": 0.5})
    assert pipe.infer(clear=False).prior == st.decode_zspace(trainer.state) and pipe.clear() == 1
    with pytest.raises(ValueError, match="unknown metric"):
        pipe.extend([{"speed": 0.1}, {"bogus": 1}])
    assert len(pipe) == 0  # all or nothing
    assert pipe.extend([{"speed": 0.1}, st.z_metrics(mem=0.2)]) == 2


def test_z_namespace_and_z_metrics():
    enc = st.LanguageWaveEncoder(-1.0, 0.5)
    assert st.z["ab"].tolist() == enc.encode_z_space("ab").tolist() == st.z("ab").tolist()
    assert st.z["ab", 0.7].tolist() == st.LanguageWaveEncoder(-1.0, 0.7).encode_z_space("ab").tolist()
    with pytest.raises(TypeError, match="expected text or"):
        st.z[3]
    m = st.z_metrics(velocity=0.2, mem=0.1, stab=0.9, grad=[0.1, 0.0])
    assert m == st.ZMetrics(speed=0.2, memory=0.1, stability=0.9, gradient=(0.1, 0.0)) == st.z.metrics(
        speed=0.2, memory=0.1, stability=0.9, gradient=[0.1, 0.0])
    assert m.as_dict() == {"speed": 0.2, "memory": 0.1, "stability": 0.9, "gradient": [0.1, 0.0]}
    with pytest.raises(st.SpiralValueError, match="metric 'speed' given twice"):
        st.z_metrics(speed=0.1, velocity=0.2)
    with pytest.raises(st.SpiralValueError, match="unknown metric 'temperature'"):
        st.z_metrics(temperature=1.0)
    with pytest.raises(st.SpiralValueError, match="stability is not finite"):
        st.z_metrics(stability=float("nan"))
    t1, t2 = st.ZSpaceTrainer(z_dim=4), st.ZSpaceTrainer(z_dim=4)
    assert t1.step(m) == t2.step(m.as_dict()) and t1.state == t2.state
    p = st.z.partial({"speed": 0.2}, memory=0.4, weight=2.0, origin="cli")
    assert p.metrics == {"speed": 0.2, "memory": 0.4} and p.weight == 2.0
    assert st.z.bundle({"speed": 0.2}, {"speed": 0.6}) == {"speed": pytest.approx(0.4)}


def test_z_process_queue_record_infer_clear():
    st.z.clear()
    assert st.z.record({"speed": 0.2}, st.z.partial(memory=0.1, telemetry={"variance": 1.0})) == 2
    assert [b.metrics for b in st.z.pending()] == [{"speed": 0.2}, {"memory": 0.1}]
    inf = st.z.infer([0.0] * 4)
    assert inf.observed == {"speed": 0.2, "memory": 0.1} and inf.telemetry_reliability == pytest.approx(0.5)
    assert len(st.z.pending()) == 2  # infer does not clear unless asked
    with pytest.raises(ValueError, match="unknown metric"):
        st.z.record({"speed": 0.3}, {"nope": 1})
    assert len(st.z.pending()) == 2
    assert st.z.clear() == 2 and st.z.pending() == [] and st.z.clear() == 0
    st.z.record({"speed": 0.2})
    st.z.infer([0.0] * 4, clear=True)
    assert st.z.pending() == []


def test_training_telemetry_projection_values():
    out = st.training_telemetry_projection(step=25, max_steps=100, epoch=1, loss=0.8, previous_loss=1.0,
                                           grad_norm=3.0, learning_rate=1e-4)
    m = out["metrics"]
    assert m["speed"] == pytest.approx(math.tanh(0.2)) and m["memory"] == pytest.approx(-0.5)
    assert m["stability"] == pytest.approx(0.25) and m["drs"] == pytest.approx(math.tanh(1.0))
    t = out["telemetry"]
    assert t["trainer.progress"] == 0.25 and t["trainer.loss_delta"] == pytest.approx(0.2)
    assert t["trainer.relative_improvement"] == pytest.approx(0.2) and t["trainer.epoch"] == 1.0
    assert out["observation"]["grad_norm"] == 3.0
    assert isinstance(out["partial"], st.ZSpacePartialBundle) and out["partial"].origin == "training_telemetry"
    assert out["partial"].metrics == pytest.approx(m)
    gained = st.training_telemetry_projection(loss=0.8, previous_loss=1.0, desire_gain=2.0, grad_norm=3.0,
                                              psi_gain=0.5)
    assert gained["metrics"] == pytest.approx({"speed": math.tanh(0.4), "stability": 0.4})
    assert st.training_telemetry_projection()["metrics"] == {}
    trainer = st.ZSpaceTrainer(z_dim=4)
    trainer.step_partial(out["partial"])
    assert trainer.last_inference.observed == pytest.approx(m)
    with pytest.raises(st.SpiralValueError, match="step 120.0 exceeds max_steps 100.0"):
        st.training_telemetry_projection(step=120, max_steps=100)
    with pytest.raises(st.SpiralValueError, match="grad_norm must be >= 0, got -1.0"):
        st.training_telemetry_projection(grad_norm=-1)
    with pytest.raises(st.SpiralValueError, match="loss must be a finite number, got nan"):
        st.training_telemetry_projection(loss=float("nan"))


def _trained():
    t = st.ZSpaceTrainer(z_dim=3)
    for _ in range(3):
        t.step({"speed": 0.1, "gradient": [0.5, -0.2, 0.1]})
    return t


@pytest.mark.parametrize("change, message", [
    ({"version": 2}, "unknown state version 2"),
    ({"version": True}, "unknown state version True"),
    ({"velocity": [0.1, -1e-3, 0.2]}, "'velocity' \\(Adam's second moment\\) has negative entries"),
    ({"z": [0.0, 0.0]}, "'z' has 2 entries, z_dim is 3"),
    ({"moment": [0.0, float("nan"), 0.0]}, "'moment' has non-finite values \\[nan\\]"),
    ({"z": [0.0, float("inf"), 0.0]}, "'z' has non-finite values \\[inf\\]"),
    ({"z": "abc"}, "'z' must be a list of 3 numbers, got str"),
    ({"moment": [0.0, "x", 0.0]}, "'moment' holds a value that is not a number"),
    ({"step": -1}, "'step' must be a non-negative integer, got -1"),
    ({"step": 1.5}, "'step' must be a non-negative integer, got 1.5"),
])
def test_load_state_dict_refuses_impossible_states_and_changes_nothing(change, message):
    t = _trained()
    before = t.state_dict()
    bad = dict(before, **change)
    with pytest.raises(st.CheckpointError, match=message):
        t.load_state_dict(bad)
    assert t.state_dict() == before


def test_load_state_dict_round_trip_missing_keys_and_upstream_label():
    src, dst = _trained(), st.ZSpaceTrainer(z_dim=3)
    state = src.state_dict()
    assert state["version"] == 1
    dst.load_state_dict(state)
    assert dst.state_dict() == state
    missing = {k: v for k, v in state.items() if k != "velocity"}
    with pytest.raises(st.CheckpointError, match="the state has no 'velocity' vector"):
        st.ZSpaceTrainer(z_dim=3).load_state_dict(missing)
    partial = _trained()
    kept = partial.state_dict()["velocity"]
    partial.load_state_dict({"z": [0.5, 0.5, 0.5]}, strict=False)  # the rest stays as it was
    assert partial.state == [0.5, 0.5, 0.5] and partial.state_dict()["velocity"] == kept
    assert partial.state_dict()["step"] == 3
    with pytest.raises(st.CheckpointError, match="'moment' has 1 entries"):
        partial.load_state_dict({"moment": [0.0]}, strict=False)
    upstream = {k: v for k, v in state.items() if k != "version"}
    upstream["contract_version"] = "spiraltorch.zspace_meta_optimizer.v2"
    fresh = st.ZSpaceTrainer(z_dim=3)
    fresh.load_state_dict(upstream)
    assert fresh.state == src.state
    with pytest.raises(st.CheckpointError, match="unknown contract_version 'spiraltorch.zspace_meta_optimizer.v9'"):
        fresh.load_state_dict(dict(upstream, contract_version="spiraltorch.zspace_meta_optimizer.v9"))
    with pytest.raises(TypeError, match="expected a dict"):
        fresh.load_state_dict([1, 2])
    # The restored optimiser continues exactly like the original.
    assert src.step({"gradient": [0.3]}) == fresh.step({"gradient": [0.3]}) and src.state == fresh.state
