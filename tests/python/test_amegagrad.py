"""optim.Amegagrad and DesireGradientControl: the two-tape Z-space optimizer."""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest

import spiraltorch as st
from conftest import run_python, to_np
from spiraltorch.amegagrad import DesireGradientInterpretation, desire_control

SEED_OPTIM = textwrap.dedent("""
    import spiraltorch as st

    opt = st.optim.Amegagrad((1, 3), curvature=-0.9, hyper_learning_rate=0.03, real_learning_rate=0.02)
    weights = st.Tensor(1, 3, [0.2, -0.1, 0.05])

    opt.accumulate_wave(st.Tensor(1, 3, [0.4, -0.6, 0.2]))
    opt.step(weights)  # tunes rates via DesireGradientControl + applies both tapes
    print("weights:", weights.tolist())

    trainer = st.ZSpaceTrainer(z_dim=4)
    loss = trainer.step({"speed": 0.2, "memory": 0.1, "stability": 0.9, "gradient": opt.real.gradient()})
    print("z:", trainer.state, "loss:", loss)
""")

SEED_TEXT = textwrap.dedent("""
    import spiraltorch as st

    encoder = st.LanguageWaveEncoder(-1.0, 0.5)
    rows, cols = encoder.encode_z_space("SpiralTorch").shape()
    opt = st.optim.Amegagrad((rows, cols), curvature=encoder.curvature())
    weights = st.Tensor(rows, cols, [0.0] * (rows * cols))

    opt.absorb_text(encoder, "Z-space wants to be steerable.")  # pads/truncates to (rows, cols)
    opt.step(weights)
    print("weights (head):", [v for row in weights.tolist() for v in row][:5])

    trainer = st.ZSpaceTrainer(z_dim=4)
    trainer.step({"speed": 0.2, "memory": 0.1, "stability": 0.9, "gradient": opt.real.gradient()})
""")


def test_seed_optim_snippets_run():
    r = run_python(SEED_OPTIM)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    w = eval(lines[0].split(":", 1)[1])
    assert w != [[0.2, -0.1, 0.05]] and len(w[0]) == 3
    # The trainer step sees the Euclidean gradient the optimizer just applied (kept readable after
    # the step), so z moves: tanh of the tiled gradient [0.4, -0.6, 0.2, 0.4] through Adam's first step.
    z = eval(lines[1].split("z:", 1)[1].split("loss:")[0])
    assert len(z) == 4 and all(abs(v) > 1e-4 for v in z)
    assert [math.copysign(1, v) for v in z] == [-1.0, 1.0, -1.0, -1.0]
    assert float(lines[1].split("loss:")[1]) == pytest.approx(0.271848, abs=1e-6)
    r = run_python(SEED_TEXT)
    assert r.returncode == 0, r.stderr
    head = eval(r.stdout.split(":", 1)[1])
    assert len(head) == 5 and any(abs(v) > 0 for v in head)


def test_step_composes_rsgd_then_sgd_with_tuned_rates():
    c = -0.9
    opt = st.optim.Amegagrad((1, 3), curvature=c, hyper_learning_rate=0.03, real_learning_rate=0.02)
    w = st.tensor([[0.2, -0.1, 0.05]], dtype=st.float64)
    g = st.tensor([[0.4, -0.6, 0.2]], dtype=st.float64)
    opt.accumulate_wave(g)
    control = opt.desire_control()
    opt.step(w)
    h_lr = 0.03 * control.hyper_rate_scale()
    r_lr = 0.02 * control.real_rate_scale()
    assert opt.hyper.learning_rate() == pytest.approx(h_lr) and opt.real.learning_rate() == pytest.approx(r_lr)
    w0 = st.tensor([[0.2, -0.1, 0.05]], dtype=st.float64)
    want = st.geometry.clip_to_ball(st.geometry.rsgd_step(w0, g, c, h_lr) - g * r_lr, c)
    np.testing.assert_allclose(to_np(w), to_np(want), rtol=1e-12)
    # The tapes keep reporting the gradient they applied; nothing is pending any more.
    assert opt.hyper.pending_gradient() == [0.0] * 3 and opt.real.pending_gradient() == [0.0] * 3
    assert opt.real.gradient() == pytest.approx([0.4, -0.6, 0.2]) and opt.real.applied() and opt.hyper.applied()
    before = to_np(w).copy()
    opt.step(w, tune=False)  # nothing accumulated since: an applied gradient is never applied twice
    np.testing.assert_array_equal(to_np(w), before)
    # Tuning sets absolute rates from the base rates: repeated steps do not compound.
    opt.accumulate_wave(g)
    opt.step(w)
    assert opt.hyper.learning_rate() == pytest.approx(h_lr)


def test_failed_step_changes_nothing():
    opt = st.optim.Amegagrad((1, 2), curvature=-1.0, real_learning_rate=1e300)
    w = st.tensor([[0.1, 0.2]], dtype=st.float64)
    opt.accumulate_wave(st.tensor([[1e10, 1e10]], dtype=st.float64))
    with pytest.raises(ValueError, match="not finite"):
        opt.step(w, tune=False)
    assert to_np(w).tolist() == [[0.1, 0.2]] and opt.real.gradient() == [1e10, 1e10]


def test_control_reads_the_gradient_statistics():
    same = st.GradientSummary([0.4, -0.6, 0.2])
    interp = DesireGradientInterpretation(same, same)
    assert interp.balance == 1.0 and interp.stability == pytest.approx(1.0, abs=1e-5)
    assert interp.sign_alignment == 1.0 and interp.saturation == 0.6
    ctl = desire_control(same, same, gain=1.0)
    sat = math.tanh(0.6)
    scale = 0.4 + 0.9 / (1 + math.exp(-0.9))
    assert ctl.hyper_rate_scale() == pytest.approx((1 - 0.4 * sat) * scale, rel=1e-5)
    assert ctl.real_rate_scale() == pytest.approx((1 - 0.25 * sat) * scale, rel=1e-5)
    strong = desire_control(st.GradientSummary([4.0, -6.0, 2.0]), same)
    assert strong.interpretation.balance == pytest.approx(10.0)
    assert strong.hyper_rate_scale() < ctl.hyper_rate_scale() and strong.penalty_gain() > ctl.penalty_gain()
    for gain in (0.0, 0.5, 1.0):
        k = desire_control(same, same, gain=gain)
        assert 0.1 <= k.hyper_rate_scale() <= 2.0 and 0.1 <= k.real_rate_scale() <= 2.0
    with pytest.raises(ValueError, match="encoder curvature"):
        st.optim.Amegagrad((1, 4), curvature=-0.5).absorb_text(st.LanguageWaveEncoder(-1.0, 0.5), "ab")
