"""Z-space tools: geometry bindings, LanguageWaveEncoder, Hypergrad/Realgrad tapes, GradientSummary."""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest

import spiraltorch as st
from conftest import run_python, to_np

geo = st.geometry


def _pts(seed, n=4, d=3, scale=0.3):
    g = np.random.default_rng(seed)
    return st.tensor(g.uniform(-scale, scale, size=(n, d)), dtype=st.float64)


@pytest.mark.parametrize("c", [-1.0, -0.5, -2.0])
def test_geometry_identities(c):
    x, y, v = _pts(1), _pts(2), _pts(3, scale=0.5)
    np.testing.assert_allclose(to_np(geo.poincare_distance(x, x, c)), 0.0, atol=1e-7)
    np.testing.assert_allclose(to_np(geo.poincare_distance(x, y, c)), to_np(geo.poincare_distance(y, x, c)),
                               rtol=1e-12)
    np.testing.assert_allclose(to_np(geo.mobius_add(-x, geo.mobius_add(x, y, c), c)), to_np(y), atol=1e-12)
    np.testing.assert_allclose(to_np(geo.logmap(x, geo.expmap(x, v, c), c)), to_np(v), atol=1e-10)
    np.testing.assert_allclose(to_np(geo.logmap0(geo.expmap0(v, c), c)), to_np(v), atol=1e-10)
    k = -c
    a, b = to_np(x), to_np(y)
    want = np.arccosh(1 + 2 * k * ((a - b) ** 2).sum(1) / ((1 - k * (a ** 2).sum(1)) * (1 - k * (b ** 2).sum(1))))
    np.testing.assert_allclose(to_np(geo.poincare_distance(x, y, c)), want / math.sqrt(k), rtol=1e-10)
    far = st.tensor([[30.0, 40.0]], dtype=st.float64)
    once = geo.clip_to_ball(far, c)
    assert np.linalg.norm(to_np(once)) < 1 / math.sqrt(k)
    np.testing.assert_array_equal(to_np(geo.clip_to_ball(once, c)), to_np(once))  # idempotent


def test_encoder_parity_symmetry_and_checks():
    enc = st.LanguageWaveEncoder(-1.0, 0.5)
    z = enc.encode_z_space("spiral")
    assert tuple(z.shape) == (1, 12) and z.dtype == st.float32
    np.testing.assert_allclose(to_np(z)[0], [0.676302, 0, -0.157006, 0.221685, -0.136367, 0.077499, -0.145694, 0,
                                             -0.136367, -0.077499, -0.157006, -0.221685], atol=2e-6)
    wave = enc.encode_wave("spiral")
    assert wave.shape() == (1, 6)
    x = wave.data()
    for j in range(1, 6):  # a real signal has a Hermitian spectrum
        assert abs(x[j] - x[6 - j].conjugate()) < 1e-9
    s = [0.5 * ((ord(ch) % 1024) / 1024 + abs(math.sin((i + 1) / 6))) for i, ch in enumerate("spiral")]
    assert x[0].real == pytest.approx(sum(s), rel=1e-12)
    assert enc.curvature() == -1.0 and enc.temperature() == 0.5
    long = st.LanguageWaveEncoder(-4.0, 2.0).encode_z_space("Z-space wants to be steerable.")
    assert tuple(long.shape) == (1, 60) and np.linalg.norm(to_np(long)) < 0.5  # radius 1/sqrt(4)
    with pytest.raises(ValueError, match="curvature must be negative"):
        st.LanguageWaveEncoder(0.5, 0.5)
    with pytest.raises(ValueError, match="temperature must be positive"):
        st.LanguageWaveEncoder(-1.0, 0.0)
    with pytest.raises(ValueError, match="non-empty string"):
        enc.encode_z_space("")


def test_seed_hello_snippet_moves_toward_the_text():
    code = textwrap.dedent("""
        from spiraltorch import Tensor, Hypergrad, LanguageWaveEncoder

        encoder = LanguageWaveEncoder(-1.0, 0.5)
        wave = encoder.encode_z_space("SpiralTorch in Rust")
        rows, cols = wave.shape()
        z = Tensor(rows, cols, [0.0] * (rows * cols))

        tape = Hypergrad(-1.0, 0.05, *z.shape())
        tape.accumulate_pair(z, wave)
        tape.apply(z)
        print(z.tolist())
    """)
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    z = np.array(eval(r.stdout))
    wave = to_np(st.LanguageWaveEncoder(-1.0, 0.5).encode_z_space("SpiralTorch in Rust"))
    assert z.shape == (1, 38)
    # One step from the origin is exp_0(lr * wave): along the wave's direction, much closer to it.
    np.testing.assert_allclose(z, to_np(geo.expmap0(st.tensor(0.05 * wave, dtype=st.float64), -1.0)), atol=1e-6)
    d0 = to_np(geo.poincare_distance(st.zeros(1, 38, dtype=st.float64), st.tensor(wave, dtype=st.float64), -1.0))
    d1 = to_np(geo.poincare_distance(st.tensor(z, dtype=st.float64), st.tensor(wave, dtype=st.float64), -1.0))
    assert d1[0] < d0[0]


def test_hypergrad_descends_distance_and_is_atomic():
    target = st.tensor([[0.4, -0.3, 0.1]], dtype=st.float64)
    w = st.tensor([[-0.2, 0.1, 0.0]], dtype=st.float64)
    tape = st.Hypergrad(-1.0, 0.1, 1, 3)
    tape.apply(w)  # empty tape: identity
    np.testing.assert_array_equal(to_np(w), [[-0.2, 0.1, 0.0]])
    dist = []
    for _ in range(20):
        dist.append(to_np(geo.poincare_distance(w, target, -1.0))[0])
        tape.accumulate_pair(w, target)
        tape.apply(w)
    assert all(b < a for a, b in zip(dist, dist[1:])) and dist[-1] < 0.5 * dist[0]
    assert tape.pending_gradient() == [0.0, 0.0, 0.0] and tape.applied()  # apply uses the gradient once
    assert tape.gradient() != [0.0, 0.0, 0.0]  # ... and keeps it readable
    with pytest.raises(ValueError, match=r"expected shape \(1, 3\)"):
        tape.accumulate_wave(st.zeros(1, 4))
    tape.accumulate_wave(st.tensor([[1.0, 2.0, 2.0]]))
    assert tape.summary().l2() == pytest.approx(3.0)
    tape.scale_gradient(-0.5)
    assert tape.gradient() == [-0.5, -1.0, -1.0]
    assert tape.rescale_rms(2.0) == pytest.approx(2.0 / math.sqrt(0.75))
    assert tape.summary().rms() == pytest.approx(2.0)
    before = to_np(w).copy()
    big = st.Hypergrad(-1.0, 1e308, 1, 3)
    big.accumulate_wave(st.tensor([[1e308, 1e308, 1e308]], dtype=st.float64))
    with pytest.raises(ValueError):
        big.apply(w)
    np.testing.assert_array_equal(to_np(w), before)
    tape.retune(-2.0, 0.01)
    assert tape.curvature() == -2.0 and tape.learning_rate() == 0.01 and tape.gradient() == [0.0] * 3
    enc = st.LanguageWaveEncoder(-2.0, 0.5)
    t2 = st.Hypergrad(-2.0, 0.05, 1, 4)
    t2.absorb_text(enc, "ab")
    assert t2.summary().count() == 4 and t2.summary().l2() > 0
    with pytest.raises(ValueError, match="encoder curvature"):
        st.Hypergrad(-1.0, 0.05, 1, 4).absorb_text(enc, "ab")


def test_realgrad_is_sgd():
    tape = st.Realgrad(0.1, 1, 3)
    w = st.Tensor(1, 3, [0.0, 0.0, 0.0])
    tape.accumulate_wave(st.Tensor(1, 3, [1.0, -2.0, 0.5]))
    tape.apply(w)
    np.testing.assert_allclose(to_np(w), [[-0.1, 0.2, -0.05]], rtol=1e-6)
    with pytest.raises(ValueError, match="learning_rate must be positive"):
        st.Realgrad(0.0, 1, 3)


def test_gradient_summary_matches_numpy():
    vals = [0.5, -1.5, float("nan"), 2.0, 0.0, 3e-6]
    s = st.GradientSummary.from_values(vals)
    a = np.array([v for v in vals if math.isfinite(v)])
    assert s.count() == 5 and s.l2() == pytest.approx(np.linalg.norm(a)) and s.linf() == 2.0
    assert s.mean() == pytest.approx(a.mean()) and s.variance() == pytest.approx(a.var())
    assert s.rms() == pytest.approx(np.sqrt((a ** 2).mean())) and s.support_width() == 3.5
    assert (s.positive_count(), s.negative_count(), s.zero_count(), s.near_zero_count()) == (3, 1, 1, 2)
    assert s.activation() == pytest.approx(0.6)
    assert st.GradientSummary([]).as_dict()["l2"] == 0.0


def test_zspace_decode_matches_the_reference_values():
    d = st.zspace.decode_zspace([0.12, -0.03, 0.48, -0.2])
    want = {"speed": 0.4463025, "memory": 0.1099104, "stability": 0.6729346, "drs": 0.6413202, "frac": 0.6490009}
    for k, v in want.items():
        assert d[k] == pytest.approx(v, abs=1e-7), k


def test_seed_zspace_inference_snippet():
    code = textwrap.dedent("""
        import spiraltorch as st

        trainer = st.ZSpaceTrainer(z_dim=4)
        loss = trainer.step_partial({"speed": 0.2, "memory": 0.1, "stability": 0.9, "gradient": [0.1, 0.0, 0.0, 0.0]})
        print("z:", trainer.state, "loss:", loss)
        print("last inference:", trainer.last_inference.residual, trainer.last_inference.confidence)
    """)
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    residual, confidence = map(float, lines[1].split(":")[1].split())
    assert residual == pytest.approx(0.134288, abs=1e-6) and confidence == pytest.approx(0.874339, abs=1e-6)
    assert float(lines[0].rsplit("loss:", 1)[1]) == pytest.approx(0.271848, abs=1e-6)


def test_zspace_trainer_step_adam_and_validation():
    t = st.ZSpaceTrainer(z_dim=4)
    assert t.step({"speed": 0.2, "memory": 0.1, "stability": 0.9, "gradient": [0.0] * 3}) == pytest.approx(
        0.5 * math.tanh(0.2) + 0.3 * math.tanh(0.1) + 0.2 * math.tanh(0.9))
    assert t.state == [0.0] * 4  # zero gradient, zero penalty at z = 0: Adam moves nothing
    fresh = st.ZSpaceTrainer(z_dim=4)
    fresh.step({"grad": [0.1, -0.2]})  # tiled and squashed: direction tanh([0.1, -0.2, 0.1, -0.2])
    # A first Adam step moves every coordinate by lr against the sign of its direction.
    np.testing.assert_allclose(fresh.state, [-0.01, 0.01, -0.01, 0.01], rtol=1e-6)
    t.step({"grad": [0.1, -0.2]})  # second step of t: bias-corrected moments of (0, g)
    m_hat, v_hat = 0.1 / (1 - 0.9 ** 2), 0.001 / (1 - 0.999 ** 2)
    np.testing.assert_allclose(t.state, np.array([-1, 1, -1, 1]) * 0.01 * m_hat / math.sqrt(v_hat), rtol=1e-6)
    z = t.state
    before = t.state_dict()
    with pytest.raises(ValueError, match="'speed' is not finite"):
        t.step({"speed": float("nan")})
    assert t.state_dict() == before
    with pytest.raises(ValueError, match="unknown metric 'loss'"):
        t.step({"loss": 1.0})
    with pytest.raises(ValueError, match="given twice"):
        t.step({"speed": 1.0, "velocity": 1.0})
    exact = st.ZSpaceTrainer(z_dim=3, gradient_projection="exact")
    with pytest.raises(ValueError, match="z_dim is 3"):
        exact.step({"gradient": [1.0, 2.0]})
    t2 = st.ZSpaceTrainer(z_dim=4)
    t2.load_state_dict(before)
    assert t2.state == z


def test_step_partial_fits_the_observations():
    t = st.ZSpaceTrainer(z_dim=6, lr=0.05)
    target = {"memory": 0.4, "speed": 0.3}
    residuals = []
    for _ in range(60):
        t.step_partial(target)
        residuals.append(t.last_inference.residual)
    assert residuals[-1] < 0.25 * residuals[0]
    decoded = st.zspace.decode_zspace(t.state)
    assert abs(decoded["memory"] - 0.4) < 0.1 and abs(decoded["speed"] - 0.3) < 0.1


def test_step_batch_is_sequential_steps_and_all_or_nothing():
    samples = [{"speed": 0.3, "gradient": [0.2, -0.1]}, st.z.metrics(memory=0.1, gradient=[0.5])]
    one, many = st.ZSpaceTrainer(z_dim=4), st.ZSpaceTrainer(z_dim=4)
    assert many.step_batch(samples) == [one.step(s) for s in samples] and many.state == one.state
    before = many.state_dict()
    with pytest.raises(ValueError, match="unknown metric 'loss'"):
        many.step_batch([{"speed": 0.1}, {"loss": 1.0}])
    assert many.state_dict() == before


def test_complex_tensor_arithmetic_matches_numpy():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(2, 8)) + 1j * rng.normal(size=(2, 8))
    b = rng.normal(size=(2, 8)) + 1j * rng.normal(size=(2, 8))
    m = rng.normal(size=(8, 3)) + 1j * rng.normal(size=(8, 3))
    ct = lambda x: st.ComplexTensor(x.shape[0], x.shape[1], x.reshape(-1).tolist())  # noqa: E731
    arr = lambda t: np.array(t.data()).reshape(t.shape())  # noqa: E731
    A, B = ct(a), ct(b)
    np.testing.assert_allclose(arr(A + B), a + b, atol=1e-15)
    np.testing.assert_allclose(arr(A - B), a - b, atol=1e-15)
    np.testing.assert_allclose(arr(A * B), a * b, atol=1e-15)
    np.testing.assert_allclose(arr(A @ ct(m)), a @ m, atol=1e-12)
    np.testing.assert_allclose(arr(A.conj()), a.conj())
    np.testing.assert_allclose(to_np(A.abs()), np.abs(a), rtol=1e-15)
    np.testing.assert_allclose(arr(A.fft()), np.fft.fft(a, axis=1), atol=1e-12)
    np.testing.assert_allclose(arr(A.fft().ifft()), a, atol=1e-12)
    odd = a[:, :6]
    np.testing.assert_allclose(arr(ct(odd).fft()), np.fft.fft(odd, axis=1), atol=1e-12)
    with pytest.raises(st.ShapeError, match="incompatible"):
        A @ B


def test_tapes_name_the_method_when_given_a_non_tensor():
    with pytest.raises(TypeError, match=r"Hypergrad.accumulate_wave: expected a spiraltorch.Tensor, got list"):
        st.Hypergrad(-1.0, 0.1, 1, 3).accumulate_wave([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match=r"Realgrad.apply: expected a spiraltorch.Tensor, got NoneType"):
        st.Realgrad(0.1, 1, 3).apply(None)
    w = st.zeros(1, 3)
    assert st.Realgrad(0.1, 1, 3).apply(w) is w  # apply returns the tensor it mutated
