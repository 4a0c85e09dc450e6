"""The torch.optim.lr_scheduler family against torch, side by side: the same optimizer groups,
the same schedule arguments, the same rates after every step."""

from __future__ import annotations

import math

import numpy as np
import pytest

import spiraltorch as st

optim = st.optim
lrs = st.optim.lr_scheduler


def opt_pair(torch, groups=2):
    sp = [st.zeros(3, requires_grad=True) for _ in range(groups)]
    tp = [torch.zeros(3, requires_grad=True) for _ in range(groups)]
    rates = [0.1, 0.05, 0.02][:groups]
    so = optim.SGD([{"params": [p], "lr": r} for p, r in zip(sp, rates)], lr=0.1, momentum=0.9)
    to = torch.optim.SGD([{"params": [p], "lr": r} for p, r in zip(tp, rates)], lr=0.1, momentum=0.9)
    return so, to


def check_same(ss, ts, so, to):
    np.testing.assert_allclose(ss.get_last_lr(), ts.get_last_lr(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose([g["lr"] for g in so.param_groups], [g["lr"] for g in to.param_groups],
                               rtol=1e-12, atol=1e-15)


def run(torch, make_st, make_torch, steps=40, groups=2):
    """Builds both schedules (make_*(optimizer)) and compares the rates at construction and after
    every step; returns the schedules and optimizers."""
    so, to = opt_pair(torch, groups)
    ss, ts = make_st(so), make_torch(to)
    check_same(ss, ts, so, to)
    for _ in range(steps):
        so.step()
        to.step()
        ss.step()
        ts.step()
        check_same(ss, ts, so, to)
    return ss, ts, so, to


T = "torch.optim.lr_scheduler."

CASES = [
    ("MultiStepLR", dict(milestones=[3, 10, 10, 25], gamma=0.5)),
    ("MultiStepLR", dict(milestones=[20, 5])),
    ("ExponentialLR", dict(gamma=0.9)),
    ("LinearLR", dict()),
    ("LinearLR", dict(start_factor=0.25, end_factor=0.75, total_iters=12)),
    ("LinearLR", dict(start_factor=1.0, end_factor=0.1, total_iters=30)),
    ("ConstantLR", dict()),
    ("ConstantLR", dict(factor=0.5, total_iters=13)),
    ("PolynomialLR", dict()),
    ("PolynomialLR", dict(total_iters=25, power=2.0)),
    ("PolynomialLR", dict(total_iters=10, power=0.5)),
    ("CosineAnnealingWarmRestarts", dict(T_0=7)),
    ("CosineAnnealingWarmRestarts", dict(T_0=3, T_mult=2, eta_min=0.001)),
]


@pytest.mark.parametrize("name,kw", CASES)
def test_schedule_matches_torch(name, kw):
    torch = pytest.importorskip("torch")
    run(torch, lambda o: getattr(lrs, name)(o, **kw), lambda o: getattr(torch.optim.lr_scheduler, name)(o, **kw))


def test_lambda_and_multiplicative_match_torch():
    torch = pytest.importorskip("torch")
    f = lambda e: 0.95 ** e  # noqa: E731
    g = lambda e: 1.0 / (1 + e)  # noqa: E731
    run(torch, lambda o: lrs.LambdaLR(o, lr_lambda=f), lambda o: torch.optim.lr_scheduler.LambdaLR(o, lr_lambda=f))
    run(torch, lambda o: lrs.LambdaLR(o, [f, g]), lambda o: torch.optim.lr_scheduler.LambdaLR(o, [f, g]))
    m = lambda e: 0.9 if e % 3 else 1.05  # noqa: E731
    run(torch, lambda o: lrs.MultiplicativeLR(o, m), lambda o: torch.optim.lr_scheduler.MultiplicativeLR(o, m))
    run(torch, lambda o: lrs.MultiplicativeLR(o, [m, f]),
        lambda o: torch.optim.lr_scheduler.MultiplicativeLR(o, [m, f]))


def test_a_failing_step_changes_nothing():
    so = optim.SGD([st.zeros(2, requires_grad=True)], lr=1.0)

    def f(e):
        if e == 3:
            raise RuntimeError("no rate for epoch 3")
        return 0.5 ** e

    inner = lrs.LambdaLR(so, f)
    s = lrs.ChainedScheduler([lrs.CosineAnnealingWarmRestarts(so, T_0=2), inner])
    s.step()
    s.step()
    state, lr = s.state_dict(), so.param_groups[0]["lr"]
    with pytest.raises(RuntimeError, match="no rate for epoch 3"):
        s.step()
    assert s.state_dict() == state and so.param_groups[0]["lr"] == lr and inner.last_epoch == 2
    bad = lrs.LambdaLR(so, lambda e: 1.0 if e == 0 else "x")
    with pytest.raises(TypeError, match=r"LambdaLR: lr_lambda\(1\) returned str, expected a number"):
        bad.step()
    assert bad.last_epoch == 0


def test_lambda_errors():
    so = optim.SGD([{"params": [st.zeros(2, requires_grad=True)]}, {"params": [st.zeros(2, requires_grad=True)]}],
                   lr=0.1)
    with pytest.raises(ValueError, match=r"LambdaLR: expected 2 lr_lambdas .* got 3"):
        lrs.LambdaLR(so, [lambda e: 1.0] * 3)
    with pytest.raises(TypeError, match="LambdaLR: lr_lambda must be callable"):
        lrs.LambdaLR(so, 0.5)
    with pytest.raises(TypeError, match="MultiplicativeLR: lr_lambda must be callable"):
        lrs.MultiplicativeLR(so, [0.5, 0.5])


def test_sequential_matches_torch():
    torch = pytest.importorskip("torch")
    tl = torch.optim.lr_scheduler

    def ours(o):
        return lrs.SequentialLR(o, [lrs.LinearLR(o, start_factor=0.1, total_iters=5),
                                    lrs.ExponentialLR(o, gamma=0.9),
                                    lrs.CosineAnnealingWarmRestarts(o, T_0=4)], milestones=[5, 15])

    def theirs(o):
        return tl.SequentialLR(o, [tl.LinearLR(o, start_factor=0.1, total_iters=5), tl.ExponentialLR(o, gamma=0.9),
                                   tl.CosineAnnealingWarmRestarts(o, T_0=4)], milestones=[5, 15])

    run(torch, ours, theirs, steps=35)

    def ours2(o):
        return lrs.SequentialLR(o, [lrs.ConstantLR(o, factor=0.5, total_iters=4), lrs.MultiStepLR(o, [3, 8]),
                                    lrs.PolynomialLR(o, total_iters=6, power=2.0)], milestones=[6, 12])

    def theirs2(o):
        return tl.SequentialLR(o, [tl.ConstantLR(o, factor=0.5, total_iters=4), tl.MultiStepLR(o, [3, 8]),
                                   tl.PolynomialLR(o, total_iters=6, power=2.0)], milestones=[6, 12])

    run(torch, ours2, theirs2, steps=30)


def test_chained_matches_torch():
    torch = pytest.importorskip("torch")
    tl = torch.optim.lr_scheduler
    run(torch, lambda o: lrs.ChainedScheduler([lrs.ConstantLR(o, factor=0.1, total_iters=2),
                                               lrs.ExponentialLR(o, gamma=0.9)]),
        lambda o: tl.ChainedScheduler([tl.ConstantLR(o, factor=0.1, total_iters=2), tl.ExponentialLR(o, gamma=0.9)]))
    run(torch, lambda o: lrs.ChainedScheduler([lrs.LinearLR(o, 0.5, total_iters=8), lrs.MultiStepLR(o, [4, 9]),
                                               lrs.CosineAnnealingWarmRestarts(o, 5, 2)], optimizer=o),
        lambda o: tl.ChainedScheduler([tl.LinearLR(o, 0.5, total_iters=8), tl.MultiStepLR(o, [4, 9]),
                                       tl.CosineAnnealingWarmRestarts(o, 5, 2)], optimizer=o))


def test_composite_errors():
    a = optim.SGD([st.zeros(2, requires_grad=True)], lr=0.1)
    b = optim.SGD([st.zeros(2, requires_grad=True)], lr=0.1)
    with pytest.raises(ValueError, match="SequentialLR: expects one more scheduler than milestones, got 2 "
                                         "schedulers and 2 milestones"):
        lrs.SequentialLR(a, [lrs.ExponentialLR(a, 0.9), lrs.ExponentialLR(a, 0.8)], milestones=[2, 4])
    with pytest.raises(ValueError, match="same optimizer.*scheduler 1 \\(ExponentialLR\\)"):
        lrs.ChainedScheduler([lrs.ExponentialLR(a, 0.9), lrs.ExponentialLR(b, 0.9)])
    with pytest.raises(ValueError, match="at least one scheduler"):
        lrs.SequentialLR(a, [], milestones=[])


@pytest.mark.parametrize("kw", [
    dict(),
    dict(mode="max", factor=0.5, patience=2, threshold=0.05, cooldown=2, min_lr=[0.01, 0.02]),
    dict(factor=0.3, patience=1, threshold=0.1, threshold_mode="abs", eps=1e-3, min_lr=0.004),
    dict(mode="max", patience=0, threshold_mode="abs", threshold=0.0, cooldown=1),
])
def test_reduce_on_plateau_matches_torch(kw):
    torch = pytest.importorskip("torch")
    so, to = opt_pair(torch)
    ss = lrs.ReduceLROnPlateau(so, **kw)
    ts = torch.optim.lr_scheduler.ReduceLROnPlateau(to, **kw)
    rng = np.random.default_rng(0)
    metrics = list(1.0 / (1 + np.arange(10))) + list(0.1 + 0.01 * rng.standard_normal(40))
    for k, m in enumerate(metrics):
        # metrics given as a float, a 0-d tensor and a numpy scalar, as torch accepts
        arg = [float(m), st.tensor(float(m), dtype=st.float64), np.float64(m)][k % 3]
        ss.step(arg)
        ts.step(float(m))
        check_same(ss, ts, so, to)
        assert ss.num_bad_epochs == ts.num_bad_epochs
        assert ss.best == ts.best
        assert ss.in_cooldown == ts.in_cooldown
    assert ss.last_epoch == ts.last_epoch == len(metrics)


def test_reduce_on_plateau_errors_and_state():
    so = optim.SGD([st.zeros(2, requires_grad=True)], lr=0.1)
    with pytest.raises(ValueError, match="ReduceLROnPlateau: factor must be < 1.0, got 1.5"):
        lrs.ReduceLROnPlateau(so, factor=1.5)
    with pytest.raises(ValueError, match="mode must be 'min' or 'max', got 'up'"):
        lrs.ReduceLROnPlateau(so, mode="up")
    with pytest.raises(ValueError, match="threshold_mode must be 'rel' or 'abs'"):
        lrs.ReduceLROnPlateau(so, threshold_mode="x")
    with pytest.raises(ValueError, match="expected 1 min_lrs, got 2"):
        lrs.ReduceLROnPlateau(so, min_lr=[0.1, 0.2])
    s = lrs.ReduceLROnPlateau(so, patience=1)
    assert s.is_better(0.5, 1.0) and not s.is_better(1.0, 1.0)
    for m in [1.0, 2.0, 2.0]:
        s.step(m)
    assert so.param_groups[0]["lr"] == pytest.approx(0.01)
    sd = s.state_dict()
    assert sd["best"] == 1.0 and sd["last_epoch"] == 3
    so2 = optim.SGD([st.zeros(2, requires_grad=True)], lr=0.01)
    so2.load_state_dict(so.state_dict())
    s2 = lrs.ReduceLROnPlateau(so2, patience=1)
    s2.load_state_dict(sd)
    for m in [3.0, 3.0]:
        s.step(m)
        s2.step(m)
    assert s.get_last_lr() == s2.get_last_lr() and s.get_last_lr()[0] == pytest.approx(0.001)
    with pytest.raises(st.CheckpointError, match="missing 'best'"):
        s2.load_state_dict({"last_epoch": 1})


@pytest.mark.parametrize("make", [
    lambda o: lrs.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2),
    lambda o: lrs.MultiStepLR(o, [2, 5], gamma=0.5),
    lambda o: lrs.SequentialLR(o, [lrs.ExponentialLR(o, 0.9), lrs.CosineAnnealingWarmRestarts(o, 4)], [6]),
    lambda o: lrs.ChainedScheduler([lrs.ExponentialLR(o, 0.9), lrs.PolynomialLR(o, 10)]),
])
def test_state_dict_resumes_identically(make):
    """A schedule restored from state_dict() (optimizer state restored too) continues with the same rates."""
    a = optim.SGD([{"params": [st.zeros(2, requires_grad=True)], "lr": 0.1},
                   {"params": [st.zeros(2, requires_grad=True)], "lr": 0.2}])
    sa = make(a)
    for _ in range(7):
        sa.step()
    b = optim.SGD([{"params": [st.zeros(2, requires_grad=True)], "lr": 0.1},
                   {"params": [st.zeros(2, requires_grad=True)], "lr": 0.2}])
    sb = make(b)
    b.load_state_dict(a.state_dict())
    sb.load_state_dict(sa.state_dict())
    for _ in range(12):
        sa.step()
        sb.step()
        assert sa.get_last_lr() == sb.get_last_lr()
        assert [g["lr"] for g in a.param_groups] == [g["lr"] for g in b.param_groups]


def test_argument_errors_name_the_schedule_and_value():
    so = optim.SGD([st.zeros(2, requires_grad=True)], lr=0.1)
    with pytest.raises(ValueError, match=r"LinearLR: start_factor must be in \(0, 1\], got 0"):
        lrs.LinearLR(so, start_factor=0.0)
    with pytest.raises(ValueError, match=r"LinearLR: end_factor must be in \[0, 1\], got 1.5"):
        lrs.LinearLR(so, end_factor=1.5)
    with pytest.raises(ValueError, match=r"ConstantLR: factor must be in \(0, 1\], got 2"):
        lrs.ConstantLR(so, factor=2.0)
    with pytest.raises(ValueError, match="PolynomialLR: total_iters must be a positive integer, got 0"):
        lrs.PolynomialLR(so, total_iters=0)
    with pytest.raises(ValueError, match="CosineAnnealingWarmRestarts: T_0 must be a positive integer, got 0"):
        lrs.CosineAnnealingWarmRestarts(so, T_0=0)
    with pytest.raises(ValueError, match="T_mult must be an integer >= 1, got 0"):
        lrs.CosineAnnealingWarmRestarts(so, T_0=2, T_mult=0)
    assert so.param_groups[0]["lr"] == 0.1  # failed constructions changed nothing


def test_warm_restarts_exposes_cycle_and_closed_form_values():
    so = optim.SGD([st.zeros(2, requires_grad=True)], lr=1.0)
    s = lrs.CosineAnnealingWarmRestarts(so, T_0=2, T_mult=2, eta_min=0.0)
    seen = []
    for _ in range(6):
        seen.append((s.T_cur, s.T_i, s.get_last_lr()[0]))
        s.step()
    assert [(c, i) for c, i, _ in seen] == [(0, 2), (1, 2), (0, 4), (1, 4), (2, 4), (3, 4)]
    for c, i, lr in seen:
        assert lr == pytest.approx((1 + math.cos(math.pi * c / i)) / 2)
    assert isinstance(lrs.MultiStepLR(so, [1]).milestones, list)
    seq = lrs.SequentialLR(so, [lrs.ExponentialLR(so, 0.5), lrs.ExponentialLR(so, 0.9)], [2])
    assert len(seq._schedulers) == 2
    ch = lrs.ChainedScheduler([lrs.ExponentialLR(so, 0.5)])
    assert len(ch._schedulers) == 1
