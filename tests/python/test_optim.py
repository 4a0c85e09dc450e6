"""Optimizers, schedules and clipping against torch.optim."""

from __future__ import annotations

import math

import numpy as np
import pytest

import spiraltorch as st
from conftest import tensor_on

optim = st.optim


def arr(t):
    return np.asarray(t.tolist(), dtype=np.float64)


def make_params(seed=0, shapes=((3, 4), (4,))):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


def grads_for(step, shapes, seed=100):
    rng = np.random.default_rng(seed + step)
    return [rng.standard_normal(s) for s in shapes]


def run_pair(torch, st_ctor, torch_ctor, steps=10, groups=None, dtype="float64", shapes=((3, 4), (4,)), device="cpu"):
    """Steps our optimizer (parameters and gradients on ``device``) and torch's (host) on the same gradients."""
    init = make_params(shapes=shapes)
    sdt = st.float64 if dtype == "float64" else st.float32
    tdt = torch.float64 if dtype == "float64" else torch.float32
    sp = [tensor_on(a, device, dtype=sdt, requires_grad=True) for a in init]
    tp = [torch.tensor(a, dtype=tdt, requires_grad=True) for a in init]
    if groups is None:
        so, to = st_ctor(sp), torch_ctor(tp)
    else:
        so = st_ctor([dict(g, params=[sp[i] for i in idx]) for idx, g in groups])
        to = torch_ctor([dict(g, params=[tp[i] for i in idx]) for idx, g in groups])
    for k in range(steps):
        gs = grads_for(k, shapes)
        for p, g in zip(sp, gs):
            p.grad = tensor_on(g, device, dtype=sdt)
        for p, g in zip(tp, gs):
            p.grad = torch.tensor(g, dtype=tdt)
        assert bool(so.step()) is True  # a StepResult on wgpu
        to.step()
    tol = dict(rtol=1e-10, atol=1e-12) if dtype == "float64" else dict(rtol=1e-5, atol=1e-6)
    for a, b in zip(sp, tp):
        assert a.device.split(":")[0] == str(device).split(":")[0], f"parameter moved to {a.device}"
        np.testing.assert_allclose(arr(a), b.detach().numpy(), **tol)
    return so, to, sp, tp


SGD_CASES = [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01),
    dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1),
    dict(lr=0.05, momentum=0.8, maximize=True),
]


@pytest.mark.parametrize("kw", SGD_CASES)
def test_sgd_matches_torch(kw, device):
    torch = pytest.importorskip("torch")
    run_pair(torch, lambda p: optim.SGD(p, **kw), lambda p: torch.optim.SGD(p, **kw), device=device)


ADAM_CASES = [
    dict(lr=0.01),
    dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1),
    dict(lr=0.02, amsgrad=True, weight_decay=0.05),
]


@pytest.mark.parametrize("kw", ADAM_CASES)
@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_adam_adamw_match_torch(kw, name, device):
    torch = pytest.importorskip("torch")
    run_pair(torch, lambda p: getattr(optim, name)(p, **kw), lambda p: getattr(torch.optim, name)(p, **kw),
             device=device)


def test_adam_float32_matches_torch(device):
    torch = pytest.importorskip("torch")
    run_pair(torch, lambda p: optim.Adam(p, lr=0.01, amsgrad=True), lambda p: torch.optim.Adam(p, lr=0.01, amsgrad=True),
             dtype="float32", device=device)
    run_pair(torch, lambda p: optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
             lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True), dtype="float32", device=device)


RMS_CASES = [
    dict(lr=0.01),
    dict(lr=0.01, alpha=0.9, eps=1e-6, weight_decay=0.1),
    dict(lr=0.01, momentum=0.9),
    dict(lr=0.01, centered=True),
    dict(lr=0.005, centered=True, momentum=0.5, weight_decay=0.01),
]


@pytest.mark.parametrize("kw", RMS_CASES)
def test_rmsprop_matches_torch(kw, device):
    torch = pytest.importorskip("torch")
    run_pair(torch, lambda p: optim.RMSprop(p, **kw), lambda p: torch.optim.RMSprop(p, **kw), device=device)


ADAGRAD_CASES = [
    dict(lr=0.1),
    dict(lr=0.1, lr_decay=0.01, weight_decay=0.1),
    dict(lr=0.05, initial_accumulator_value=0.1, eps=1e-8),
]


@pytest.mark.parametrize("kw", ADAGRAD_CASES)
def test_adagrad_matches_torch(kw, device):
    torch = pytest.importorskip("torch")
    run_pair(torch, lambda p: optim.Adagrad(p, **kw), lambda p: torch.optim.Adagrad(p, **kw), device=device)


@pytest.mark.parametrize("name,kw0,kw1,common", [
    ("SGD", dict(lr=0.1, momentum=0.9), dict(lr=0.01, weight_decay=0.1), dict(lr=0.5)),
    ("Adam", dict(lr=0.01, betas=(0.5, 0.9)), dict(weight_decay=0.1, amsgrad=True), dict(lr=0.02)),
    ("RMSprop", dict(centered=True), dict(momentum=0.5, lr=0.001), dict(lr=0.01)),
])
def test_param_groups_match_torch(name, kw0, kw1, common, device):
    torch = pytest.importorskip("torch")
    so, to, _, _ = run_pair(torch, lambda g: getattr(optim, name)(g, **common),
                            lambda g: getattr(torch.optim, name)(g, **common),
                            groups=[([0], kw0), ([1], kw1)], device=device)
    assert len(so.param_groups) == 2
    for sg, tg in zip(so.param_groups, to.param_groups):
        assert sg["lr"] == pytest.approx(tg["lr"])


def test_param_group_dict_like_and_lr_edit(device):
    p = tensor_on([1.0, 2.0], requires_grad=True, device=device)
    opt = optim.SGD([p], lr=0.1)
    g = opt.param_groups[0]
    assert g["lr"] == 0.1 and "momentum" in g and g["nesterov"] is False
    g["lr"] = 0.5
    assert opt.param_groups[0]["lr"] == 0.5
    p.grad = tensor_on([1.0, 1.0], device=device)
    opt.step()
    np.testing.assert_allclose(arr(p), [0.5, 1.5], rtol=1e-6)
    q = tensor_on([0.0], requires_grad=True, device=device)
    opt.add_param_group({"params": [q], "lr": 1.0})
    assert opt.param_groups[1]["lr"] == 1.0 and opt.param_groups[1]["momentum"] == 0.0
    with pytest.raises(ValueError):
        opt.add_param_group({"params": [q]})
    with pytest.raises(ValueError):
        optim.SGD([], lr=0.1)
    with pytest.raises(ValueError):
        optim.Adam([p], lr=-1.0)


def test_accepts_model_parameters(device):
    st.manual_seed(0)
    model = st.nn.Linear(3, 2).to(device)
    opt = optim.AdamW(model.parameters(), lr=0.01)
    x = st.randn(5, 3, device=device)
    before = arr(model.weight)
    loss = st.nn.MSELoss()(model(x), st.zeros(5, 2, device=device))
    loss.backward()
    assert opt.step()
    assert not np.allclose(before, arr(model.weight))
    opt.zero_grad()
    assert model.weight.grad is None
    loss = st.nn.MSELoss()(model(x), st.zeros(5, 2, device=device))
    loss.backward()
    opt.zero_grad(set_to_none=False)
    assert np.all(arr(model.weight.grad) == 0)


@pytest.mark.parametrize("factory", [
    lambda p: optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
    lambda p: optim.Adam(p, lr=0.01, amsgrad=True),
    lambda p: optim.AdamW(p, lr=0.01),
    lambda p: optim.RMSprop(p, lr=0.01, momentum=0.5, centered=True),
    lambda p: optim.Adagrad(p, lr=0.1, lr_decay=0.01),
])
def test_state_dict_round_trip_resumes_identically(factory, device):
    shapes = ((3, 4), (4,))

    def fresh():
        return [tensor_on(a, dtype=st.float64, requires_grad=True, device=device) for a in make_params(shapes=shapes)]

    def run(opt, params, start, stop):
        for k in range(start, stop):
            for p, g in zip(params, grads_for(k, shapes)):
                p.grad = tensor_on(g, dtype=st.float64, device=device)
            opt.step()

    ref_params = fresh()
    ref = factory(ref_params)
    run(ref, ref_params, 0, 10)

    params = fresh()
    opt = factory(params)
    run(opt, params, 0, 5)
    sd = opt.state_dict()
    saved = [p.detach().clone() for p in params]
    run(opt, params, 5, 7)  # diverge, then restore
    params2 = [s.clone().requires_grad_(True) if hasattr(s, "requires_grad_") else s for s in saved]
    for p in params2:
        p.requires_grad = True
    opt2 = factory(params2)
    opt2.load_state_dict(sd)
    run(opt2, params2, 5, 10)
    for a, b in zip(params2, ref_params):
        np.testing.assert_allclose(arr(a), arr(b), rtol=1e-12, atol=1e-14)
    # the snapshot was a copy: later steps did not change it
    assert sd["state"][0]["step"] == 5


def test_state_dict_format_and_bad_load():
    p = st.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.Adam([p], lr=0.1, betas=(0.8, 0.9))
    p.grad = st.tensor([1.0, -1.0])
    opt.step()
    sd = opt.state_dict()
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq"}
    assert sd["param_groups"][0]["betas"] == (0.8, 0.9) and sd["param_groups"][0]["params"] == [0]
    q = st.tensor([1.0, 2.0, 3.0], requires_grad=True)
    other = optim.Adam([q], lr=0.1)
    with pytest.raises(ValueError):
        other.load_state_dict(sd)  # shape mismatch -> CheckpointError, nothing changed
    assert other.state_dict()["state"] == {}


@pytest.mark.parametrize("factory", [
    lambda p: optim.SGD(p, lr=0.1, momentum=0.9),
    lambda p: optim.Adam(p, lr=0.1),
    lambda p: optim.AdamW(p, lr=0.1),
    lambda p: optim.RMSprop(p, lr=0.1),
    lambda p: optim.Adagrad(p, lr=0.1),
])
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_nonfinite_gradient_skips_step(factory, bad, device):
    a = tensor_on([1.0, 2.0, 3.0], requires_grad=True, device=device)
    b = tensor_on([[0.5, -0.5]], requires_grad=True, device=device)
    opt = factory([a, b])
    a.grad = tensor_on([0.1, 0.2, 0.3], device=device)
    b.grad = tensor_on([[0.1, 0.1]], device=device)
    assert bool(opt.step()) is True  # a StepResult on wgpu
    before_a, before_b = arr(a), arr(b)
    sd = opt.state_dict()
    a.grad = tensor_on([0.1, 0.2, 0.3], device=device)  # finite
    b.grad = tensor_on([[bad, 0.1]], device=device)
    assert bool(opt.step()) is False
    assert opt.skipped_steps == 1
    np.testing.assert_array_equal(arr(a), before_a)
    np.testing.assert_array_equal(arr(b), before_b)
    sd2 = opt.state_dict()
    assert sd2["state"][0]["step"] == sd["state"][0]["step"]
    for k, v in sd["state"][0].items():
        if k != "step":
            np.testing.assert_array_equal(arr(v), arr(sd2["state"][0][k]))
    b.grad = tensor_on([[0.1, 0.1]], device=device)
    assert bool(opt.step()) is True and opt.skipped_steps == 1


@pytest.mark.parametrize("where", [0, 150_000, 300_000])
def test_nonfinite_anywhere_in_a_large_float64_gradient_skips_step(where, device):
    # Spans many thread blocks of the device flag kernel; a strided (transposed) gradient too.
    p = tensor_on(np.zeros((600, 501)), dtype=st.float64, requires_grad=True, device=device)
    q = tensor_on(np.zeros((3, 2)), dtype=st.float64, requires_grad=True, device=device)
    opt = optim.SGD([p, q], lr=0.1)
    g = np.full((600, 501), 0.25)
    g.flat[where] = np.nan
    p.grad = tensor_on(g, dtype=st.float64, device=device)
    q.grad = tensor_on(np.ones((2, 3)), dtype=st.float64, device=device).t()
    assert bool(opt.step()) is False and opt.skipped_steps == 1
    assert not arr(p).any() and not arr(q).any()
    g.flat[where] = 0.25
    p.grad = tensor_on(g, dtype=st.float64, device=device)
    assert bool(opt.step()) is True
    np.testing.assert_allclose(arr(p), -0.025)
    np.testing.assert_allclose(arr(q), -0.1)


# ---------------------------------------------------------------- schedules


def sched_pair(torch, st_sched, torch_sched, opt_name="SGD", steps=30, opt_kw=None, groups=1):
    opt_kw = opt_kw or dict(lr=0.1, momentum=0.9)
    sps = [st.tensor([1.0], requires_grad=True) for _ in range(groups)]
    tps = [torch.tensor([1.0], requires_grad=True) for _ in range(groups)]
    so = getattr(optim, opt_name)([{"params": [p], "lr": opt_kw["lr"] * (i + 1)} for i, p in enumerate(sps)],
                                  **opt_kw)
    to = getattr(torch.optim, opt_name)([{"params": [p], "lr": opt_kw["lr"] * (i + 1)} for i, p in enumerate(tps)],
                                        **opt_kw)
    ss, ts = st_sched(so), torch_sched(to)
    for k in range(steps):
        np.testing.assert_allclose(ss.get_last_lr(), ts.get_last_lr(), rtol=1e-10, atol=1e-15)
        for sg, tg in zip(so.param_groups, to.param_groups):
            assert sg["lr"] == pytest.approx(tg["lr"], rel=1e-10, abs=1e-15)
            if "momentum" in tg:
                assert sg["momentum"] == pytest.approx(tg["momentum"], rel=1e-10)
            if "betas" in tg:
                assert sg["betas"][0] == pytest.approx(tg["betas"][0], rel=1e-10)
        so.step()
        to.step()
        ss.step()
        ts.step()
    return ss, ts


def test_step_lr_matches_torch():
    torch = pytest.importorskip("torch")
    sched_pair(torch, lambda o: optim.StepLR(o, step_size=4, gamma=0.5),
               lambda o: torch.optim.lr_scheduler.StepLR(o, step_size=4, gamma=0.5), groups=2)


@pytest.mark.parametrize("eta_min", [0.0, 0.01])
def test_cosine_matches_torch(eta_min):
    torch = pytest.importorskip("torch")
    sched_pair(torch, lambda o: optim.CosineAnnealingLR(o, T_max=7, eta_min=eta_min),
               lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=7, eta_min=eta_min), steps=30, groups=2)


def test_linear_warmup_matches_torch_linear_lr():
    torch = pytest.importorskip("torch")
    sched_pair(torch, lambda o: optim.LinearWarmup(o, warmup_steps=5, start_factor=0.2),
               lambda o: torch.optim.lr_scheduler.LinearLR(o, start_factor=0.2, end_factor=1.0, total_iters=5))


@pytest.mark.parametrize("kw", [
    dict(max_lr=1.0, total_steps=20),
    dict(max_lr=0.5, total_steps=25, pct_start=0.4, anneal_strategy="linear", div_factor=10.0,
         final_div_factor=100.0),
    dict(max_lr=0.5, total_steps=24, three_phase=True),
    dict(max_lr=0.3, epochs=4, steps_per_epoch=5, cycle_momentum=False),
])
@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
def test_one_cycle_matches_torch(kw, opt_name):
    torch = pytest.importorskip("torch")
    total = kw.get("total_steps") or kw["epochs"] * kw["steps_per_epoch"]
    opt_kw = dict(lr=0.1, momentum=0.9) if opt_name == "SGD" else dict(lr=0.1)
    sched_pair(torch, lambda o: optim.OneCycleLR(o, **kw), lambda o: torch.optim.lr_scheduler.OneCycleLR(o, **kw),
               opt_name=opt_name, steps=total - 1, opt_kw=opt_kw)


def test_scheduler_state_dict_round_trip():
    p = st.tensor([1.0], requires_grad=True)
    opt = optim.SGD([p], lr=0.1)
    s = optim.CosineAnnealingLR(opt, T_max=10)
    for _ in range(3):
        s.step()
    sd = s.state_dict()
    assert sd["last_epoch"] == 3
    lrs = []
    for _ in range(3):
        s.step()
        lrs.append(s.get_last_lr()[0])
    p2 = st.tensor([1.0], requires_grad=True)
    opt2 = optim.SGD([p2], lr=0.1)
    s2 = optim.CosineAnnealingLR(opt2, T_max=10)
    s2.load_state_dict(sd)
    opt2.param_groups[0]["lr"] = sd["_last_lr"][0]
    lrs2 = []
    for _ in range(3):
        s2.step()
        lrs2.append(s2.get_last_lr()[0])
    np.testing.assert_allclose(lrs, lrs2, rtol=1e-12)
    assert optim.lr_scheduler.StepLR is optim.StepLR


def test_one_cycle_refuses_overrun():
    p = st.tensor([1.0], requires_grad=True)
    s = optim.OneCycleLR(optim.SGD([p], lr=0.1), max_lr=1.0, total_steps=3)
    s.step()
    s.step()
    s.step()
    with pytest.raises(ValueError):
        s.step()


# ---------------------------------------------------------------- clipping


@pytest.mark.parametrize("norm_type,max_norm", [(2.0, 0.5), (1.0, 1.0), (float("inf"), 0.3), (3.0, 100.0)])
def test_clip_grad_norm_matches_torch(norm_type, max_norm, device):
    torch = pytest.importorskip("torch")
    gs = make_params(seed=3)
    sp = [tensor_on(np.zeros_like(g), dtype=st.float64, requires_grad=True, device=device) for g in gs]
    tp = [torch.zeros(g.shape, dtype=torch.float64, requires_grad=True) for g in gs]
    for p, g in zip(sp, gs):
        p.grad = tensor_on(g, dtype=st.float64, device=device)
    for p, g in zip(tp, gs):
        p.grad = torch.tensor(g)
    ns = optim.clip_grad_norm_(sp, max_norm, norm_type=norm_type)
    nt = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type=norm_type)
    assert float(ns.item()) == pytest.approx(float(nt), rel=1e-10)
    for a, b in zip(sp, tp):
        np.testing.assert_allclose(arr(a.grad), b.grad.numpy(), rtol=1e-10, atol=1e-14)


def test_clip_grad_norm_nonfinite(device):
    p = tensor_on([1.0, 2.0], requires_grad=True, device=device)
    p.grad = tensor_on([float("nan"), 1.0], device=device)
    assert math.isnan(optim.clip_grad_norm_([p], 1.0).item())
    with pytest.raises(ValueError):
        optim.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    q = tensor_on([1.0], requires_grad=True, device=device)
    q.grad = tensor_on([5.0], device=device)
    optim.clip_grad_value_([q], 2.0)
    assert q.grad.item() == 2.0
