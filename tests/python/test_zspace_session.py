"""AmegagradSession / HypergradSession (model and weights forms, Atlas frames), topos objects on
tapes and trainers, and ComplexTensor's complex64 against NumPy."""

from __future__ import annotations

import math

import numpy as np
import pytest

import spiraltorch as st
from spiraltorch import nn


def _batch():
    x = st.tensor([[0.5, -0.2], [0.1, 0.4], [-0.3, 0.6], [0.8, 0.1]], dtype=st.float64)
    y = st.tensor([[0.19], [-0.05], [-0.21], [0.22]], dtype=st.float64)
    return x, y


def _model():
    model = nn.Linear(2, 1).to(st.float64)
    with st.no_grad():
        model.weight.copy_(st.tensor([[0.05, 0.02]], dtype=st.float64))
        model.bias.copy_(st.tensor([0.0], dtype=st.float64))
    return model


def test_amegagrad_session_trains_a_model_and_streams_atlas_frames():
    model = _model()
    sess = st.amegagrad_session(model, nn.mse_loss, hyper_learning_rate=0.3, real_learning_rate=0.1,
                                telemetry_bound=4)
    assert isinstance(sess, st.AmegagradSession) and sess.is_model_session
    assert sess.parameter_names == ["weight", "bias"] and len(sess.optimizers) == 2
    x, y = _batch()
    first = sess.step(x, y)["loss"]
    for _ in range(40):
        out = sess.step(x, y, note="fit")
    assert out["loss"] < 0.2 * first
    # The reported loss is the loss before the step, as PyTorch's training loops print it.
    ref = float(nn.mse_loss(model(x), y).item())
    assert ref < out["loss"]
    assert len(sess.route) == 4 and len(sess.frames()) == 4 and sess.steps == 41
    frame = sess.route.frames[-1] if hasattr(sess.route, "frames") else None
    m = sess.last_step_metrics
    for key in ("session.loss", "session.skipped", "hypergrad.l2", "hypergrad.learning_rate", "realgrad.l2",
                "realgrad.learning_rate", "desire.hyper_rate_scale", "geometry.max_radius", "zspace.loss"):
        assert math.isfinite(m[key]), key
    assert m["session.skipped"] == 0.0 and 0.0 <= m["geometry.max_radius"] < 1.0
    summary = sess.route.summary()
    assert summary["frames"] == 4 and "fit" in summary["latest_notes"]
    assert sess.route.perspective_for("Surface") is not None  # session.* metrics
    del frame


def test_hypergrad_session_is_riemannian_sgd_of_the_loss_gradient():
    model, ref = _model(), _model()
    sess = st.hypergrad_session(model, nn.mse_loss, learning_rate=0.1, curvature=-0.5, z_dim=0)
    assert isinstance(sess, st.HypergradSession) and sess.hyper_only
    x, y = _batch()
    loss = nn.mse_loss(ref(x), y)
    loss.backward()
    want = st.geometry.rsgd_step(ref.weight.detach(), ref.weight.grad, -0.5, 0.1).numpy()
    out = sess.step(x, y)
    np.testing.assert_allclose(model.weight.detach().numpy(), want, rtol=0, atol=1e-12)
    assert "realgrad.l2" not in out["metrics"] and "zspace.loss" not in out["metrics"]


def test_session_skips_non_finite_loss_and_refuses_bad_updates_unchanged():
    model = _model()
    sess = st.AmegagradSession(model, lambda p, t: p.sum() * float("nan"))
    before = model.weight.detach().numpy().copy()
    out = sess.step(*_batch())
    assert out["skipped"] and out["metrics"]["session.skipped"] == 1.0 and sess.skipped_steps == 1
    assert out["notes"] == ["skipped: non-finite loss"]
    np.testing.assert_array_equal(model.weight.detach().numpy(), before)
    # An overflowing Euclidean step raises and changes nothing.
    bad = st.AmegagradSession(model, lambda p, t: p.sum() * 1e300, real_learning_rate=1e10, tune=False)
    with pytest.raises(ValueError, match="not finite"):
        bad.step(*_batch())
    np.testing.assert_array_equal(model.weight.detach().numpy(), before)
    assert bad.steps == 0 and len(bad.route) == 0
    with pytest.raises(ValueError, match="one value"):
        st.AmegagradSession(model, lambda p, t: p).step(*_batch())
    with pytest.raises(TypeError):
        st.AmegagradSession(model)
    with pytest.raises(ValueError, match="model session"):
        sess.step_wave(st.zeros(1, 3))


def test_weights_session_matches_the_seed_amegagrad_step():
    sess = st.amegagrad_session((1, 3), curvature=-0.9, hyper_learning_rate=0.03, real_learning_rate=0.02,
                                weights=[[0.2, -0.1, 0.05]])
    out = sess.step_wave(st.Tensor(1, 3, [0.4, -0.6, 0.2]), note="wave")
    opt = st.optim.Amegagrad((1, 3), curvature=-0.9, hyper_learning_rate=0.03, real_learning_rate=0.02)
    w = st.tensor([[0.2, -0.1, 0.05]], dtype=st.float64)
    opt.accumulate_wave(st.Tensor(1, 3, [0.4, -0.6, 0.2]))
    opt.step(w)
    np.testing.assert_allclose(sess.weights.numpy(), w.numpy(), rtol=0, atol=1e-7)
    assert math.isnan(out["loss"]) and "session.loss" not in out["metrics"]
    assert out["notes"] == ["wave"] and sess.route.summary()["frames"] == 1
    # The rest of the original's surface: .opt/.hyper/.real, step_pair, step_text, accumulate + step().
    assert sess.opt.shape() == (1, 3) and sess.hyper.curvature() == pytest.approx(-0.9)
    sess.step_pair(st.tensor([[0.1, 0.1, 0.1]]), st.tensor([[0.0, 0.0, 0.0]]))
    assert sess.real.gradient() == pytest.approx([0.1, 0.1, 0.1])
    enc = st.LanguageWaveEncoder(-0.9, 0.5)
    sess.step_text(enc, "abc")
    sess.accumulate_wave(st.tensor([[0.3, 0.0, 0.0]]))
    sess.step(note="manual")
    assert sess.steps == 4
    with pytest.raises(ValueError, match="weights session"):
        sess.step(st.zeros(1, 3), st.zeros(1, 3))


def test_hypergrad_session_weights_form_matches_hypergrad_apply():
    sess = st.hypergrad_session(1, 3, learning_rate=0.05)
    wave = st.Tensor(1, 3, [0.3, -0.4, 0.1])
    sess.accumulate_pair(sess.weights, wave)
    out = sess.step()
    tape = st.Hypergrad(-1.0, 0.05, 1, 3)
    z = st.tensor([[0.0, 0.0, 0.0]], dtype=st.float64)
    tape.accumulate_pair(z, wave)
    tape.apply(z)
    np.testing.assert_allclose(sess.weights.numpy(), z.numpy(), rtol=0, atol=1e-12)
    assert out["metrics"]["hypergrad.l2"] == pytest.approx(math.sqrt(0.09 + 0.16 + 0.01))
    assert st.hypergrad_session((1, 3), telemetry=False).route is None


def test_tapes_and_trainer_take_a_topos_object_and_guard_every_step():
    topos = st.OpenTopos(-1.0, 1e-3, 0.5, 8, 6)
    tape = st.hypergrad(-1.0, 0.1, 2, 3, topos=topos)
    assert tape.topos().saturation == 0.5
    tape.accumulate_wave(st.tensor([[3.0, -2.0, 0.1], [0.0, 1.0, -0.4]]))
    np.testing.assert_allclose(tape.gradient(), [topos.saturate(v) for v in [3.0, -2.0, 0.1, 0.0, 1.0, -0.4]],
                               rtol=1e-6)
    tape.accumulate_wave(st.tensor([[3.0, -2.0, 0.1], [0.0, 1.0, -0.4]]))
    assert max(abs(g) for g in tape.gradient()) <= 0.5 + 1e-3  # bounded on every step
    assert st.Hypergrad(-1.0, 0.1, 2, 3, topos=topos).topos() is not None
    assert st.Hypergrad(-1.0, 0.1, 2, 3).topos() is None
    with pytest.raises(st.ShapeError, match="topos volume"):
        st.hypergrad(-1.0, 0.1, 3, 3, topos=topos)
    with pytest.raises(ValueError, match="curvature"):
        st.Hypergrad(-0.5, 0.1, 1, 3, topos=topos)
    # The original's mapping and 5-tuple forms.
    assert st.hypergrad(-1.0, 0.1, 1, 2, topos={"curvature": -1.0, "saturation": 2.0, "volume": 4}).topos().max_volume == 4
    assert st.realgrad(0.1, 1, 2, topos=(-1.0, 1e-3, 2.0, 8, 4)).topos().saturation == 2.0
    with pytest.raises(TypeError):
        st.realgrad(0.1, 1, 2, topos="ball")
    real = st.Realgrad(1.0, 1, 2, topos=topos)
    real.accumulate_wave(st.tensor([[-5.0, 0.1]], dtype=st.float64))
    w = st.tensor([[0.2, 0.0]], dtype=st.float64)
    real.apply(w)
    g0, g1 = topos.saturate(-5.0), topos.saturate(0.1)
    np.testing.assert_allclose(w.numpy(), [[topos.saturate(0.2 - g0), topos.saturate(-g1)]], rtol=1e-12)
    opt = st.optim.Amegagrad((1, 3), topos=st.OpenTopos(-1.0, 1e-3, 0.1, 8, 4))
    assert opt.topos.saturation == 0.1
    opt.accumulate_wave(st.tensor([[4.0, -4.0, 4.0]]))
    ww = st.zeros(1, 3, dtype=st.float64)
    opt.step(ww)
    assert np.abs(ww.numpy()).max() <= 0.1 + 1e-3
    trainer = st.ZSpaceTrainer(z_dim=4, lr=10.0, topos=st.OpenTopos(-1.0, 1e-3, 0.1, 8, 4))
    assert trainer.topos.max_volume == 4
    for _ in range(3):
        trainer.step({"speed": 0.2, "gradient": [1.0, -1.0, 1.0, -1.0]})
    assert max(abs(v) for v in trainer.state) <= 0.1 + 1e-3
    free = st.ZSpaceTrainer(z_dim=4, lr=10.0)
    for _ in range(3):
        free.step({"speed": 0.2, "gradient": [1.0, -1.0, 1.0, -1.0]})
    assert max(abs(v) for v in free.state) > 1.0  # the guard is what bounds it
    with pytest.raises(st.ShapeError):
        st.ZSpaceTrainer(z_dim=5, topos=st.OpenTopos(-1.0, 1e-3, 0.1, 8, 4))
    assert st.zspace.as_topos(None) is None
    sess = st.amegagrad_session((1, 3), topos=st.OpenTopos(-1.0, 1e-3, 0.1, 8, 4))
    sess.step_wave(st.tensor([[9.0, -9.0, 9.0]]))
    assert np.abs(sess.weights.numpy()).max() <= 0.1 + 1e-3


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_tensor_dtypes_match_numpy(dtype):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 8)) + 1j * rng.standard_normal((3, 8))).astype(dtype)
    b = (rng.standard_normal((3, 8)) + 1j * rng.standard_normal((3, 8))).astype(dtype)
    c = (rng.standard_normal((8, 5)) + 1j * rng.standard_normal((8, 5))).astype(dtype)
    ta, tb, tc = (st.ComplexTensor.from_numpy(v) for v in (a, b, c))
    assert ta.dtype == dtype and ta.numpy().dtype == np.dtype(dtype)
    np.testing.assert_array_equal(ta.numpy(), a)
    tol = dict(rtol=2e-6, atol=2e-6) if dtype == "complex64" else dict(rtol=1e-12, atol=1e-12)
    for got, want in [((ta + tb).numpy(), a + b), ((ta * tb).numpy(), a * b), ((ta - tb).numpy(), a - b),
                      (ta.conj().numpy(), np.conj(a)), ((ta @ tc).numpy(), a @ c),
                      (ta.fft().numpy(), np.fft.fft(a, axis=1)), (ta.ifft().numpy(), np.fft.ifft(a, axis=1))]:
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got, want, **tol)
    absval = ta.abs()
    assert absval.dtype == (st.float32 if dtype == "complex64" else st.float64)
    np.testing.assert_allclose(absval.numpy(), np.abs(a), **tol)
    # Non-power-of-two widths take the direct DFT.
    odd = a[:, :6]
    np.testing.assert_allclose(st.ComplexTensor.from_numpy(odd).fft().numpy(), np.fft.fft(odd, axis=1), **tol)


def test_complex64_rounds_once_and_promotes_like_numpy():
    z = st.ComplexTensor(1, 2, [1 / 3 + 1j, 2.0], dtype="complex64")
    assert z.dtype == "complex64" and "complex64" in repr(z)
    assert z.data()[0].real == float(np.float32(1 / 3))
    w = st.ComplexTensor(1, 2, [1 / 3, 1j])
    assert w.dtype == "complex128" and (z + w).dtype == "complex128" and (z * z).dtype == "complex64"
    # complex64 products are the complex128 product rounded once (at least as exact as NumPy's).
    exact = z.to("complex128") * z.to("complex128")
    np.testing.assert_array_equal((z * z).numpy(), exact.numpy().astype(np.complex64))
    assert st.ComplexTensor(1, 1, [1.0], dtype=np.complex64).dtype == "complex64"
    assert z.to(np.complex128).dtype == "complex128"
    with pytest.raises(st.DtypeError, match="complex64"):
        st.ComplexTensor(1, 1, dtype="float32")
    with pytest.raises(st.ShapeError):
        st.ComplexTensor.from_numpy(np.zeros(3, dtype=np.complex64))
    with pytest.raises(st.ShapeError, match="incompatible"):
        z @ z
