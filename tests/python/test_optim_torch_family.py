"""Adamax, NAdam, RAdam, Adadelta, Rprop and ASGD against torch.optim: the same parameters and
gradients in float64, the same parameters after every run to 1e-10."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
from conftest import tensor_on

optim = st.optim
SHAPES = ((3, 4), (4,))


@pytest.fixture
def torch():
    torch = pytest.importorskip("torch")
    # torch keeps NAdam's mu_product (and step counts) in the default dtype; float64 makes it
    # compute in the same precision as ours.
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield torch
    torch.set_default_dtype(old)


def arr(t):
    return np.asarray(t.tolist(), dtype=np.float64)


def init_params():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s) for s in SHAPES]


def grads_for(step):
    rng = np.random.default_rng(100 + step)
    # Some entries keep their sign across steps, some flip, some are zero (Rprop's three cases).
    gs = [rng.standard_normal(s) for s in SHAPES]
    gs[1][0] = 0.0
    gs[0][0, :] = np.abs(gs[0][0, :]) + 0.1
    return gs


def make_pair(torch, name, kw, groups=None, device="cpu"):
    sp = [tensor_on(a, device, dtype=st.float64, requires_grad=True) for a in init_params()]
    tp = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in init_params()]
    if groups is None:
        so, to = getattr(optim, name)(sp, **kw), getattr(torch.optim, name)(tp, **kw)
    else:
        so = getattr(optim, name)([dict(g, params=[sp[i] for i in idx]) for idx, g in groups], **kw)
        to = getattr(torch.optim, name)([dict(g, params=[tp[i] for i in idx]) for idx, g in groups], **kw)
    return so, to, sp, tp


def step_both(so, to, sp, tp, torch, steps, start=0):
    for k in range(start, start + steps):
        for p, tq, g in zip(sp, tp, grads_for(k)):
            p.grad = tensor_on(g, p.device, dtype=st.float64)
            tq.grad = torch.tensor(g, dtype=torch.float64)
        assert so.step() is True
        to.step()


def assert_same(sp, tp, device="cpu"):
    for a, b in zip(sp, tp):
        assert a.device.split(":")[0] == str(device).split(":")[0], f"parameter moved to {a.device}"
        np.testing.assert_allclose(arr(a), b.detach().numpy(), rtol=1e-10, atol=1e-12)


CASES = [
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("Adamax", dict(lr=0.01, maximize=True)),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.01, betas=(0.85, 0.995), weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.05, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict()),
    ("RAdam", dict(lr=0.01, betas=(0.9, 0.9), weight_decay=0.1)),  # the rectified branch from step 2 on
    ("RAdam", dict(lr=0.01, betas=(0.5, 0.8), weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1)),
    ("Adadelta", dict(maximize=True)),
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2))),
    ("Rprop", dict(lr=0.02, maximize=True)),
    ("ASGD", dict()),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=5, weight_decay=0.1)),  # averaging from step 6 on
    ("ASGD", dict(lr=0.05, t0=0, maximize=True)),
]


@pytest.mark.parametrize("name,kw", CASES)
def test_matches_torch(torch, name, kw, device):
    so, to, sp, tp = make_pair(torch, name, kw, device=device)
    step_both(so, to, sp, tp, torch, 15)
    assert_same(sp, tp, device)
    st_state, t_state = so.state_dict()["state"], to.state_dict()["state"]
    for i, ts in t_state.items():
        assert st_state[i]["step"] == int(ts["step"])
        for key, tv in ts.items():
            if key != "step":
                np.testing.assert_allclose(arr(st_state[i][key]), tv.detach().numpy(), rtol=1e-10, atol=1e-12,
                                           err_msg=f"{name} state {key}")


@pytest.mark.parametrize("name,g0,g1", [
    ("Adamax", dict(lr=0.01), dict(lr=0.002, weight_decay=0.2)),
    ("NAdam", dict(lr=0.01, momentum_decay=0.01), dict(lr=0.003)),
    ("RAdam", dict(lr=0.01), dict(lr=0.002, betas=(0.9, 0.9))),
    ("Adadelta", dict(rho=0.8), dict(lr=0.5, weight_decay=0.1)),
    ("Rprop", dict(lr=0.03, etas=(0.4, 1.1)), dict(step_sizes=(1e-4, 0.05))),
    ("ASGD", dict(lr=0.03, t0=3), dict(lambd=0.1, alpha=0.9)),
])
def test_param_groups_match_torch(torch, name, g0, g1):
    so, to, sp, tp = make_pair(torch, name, {}, groups=[([0], g0), ([1], g1)])
    step_both(so, to, sp, tp, torch, 12)
    assert_same(sp, tp)
    for sg, tg in zip(so.param_groups, to.param_groups):
        for key in ("lr", "betas", "etas", "step_sizes", "rho", "weight_decay"):
            if key in tg:
                np.testing.assert_allclose(np.asarray(sg[key], dtype=float), np.asarray(tg[key], dtype=float))


@pytest.mark.parametrize("name,kw", [("Adamax", dict(weight_decay=0.1)), ("NAdam", dict(weight_decay=0.1)),
                                     ("RAdam", dict(betas=(0.9, 0.9))), ("Adadelta", dict()), ("Rprop", dict()),
                                     ("ASGD", dict(t0=3))])
def test_state_dict_round_trip_continues_identically(torch, name, kw):
    so, to, sp, tp = make_pair(torch, name, kw)
    step_both(so, to, sp, tp, torch, 6)
    # A fresh optimizer over copies of the parameters, loaded from the state dict, continues
    # exactly as the original (and as torch).
    cp = [st.tensor(p.tolist(), dtype=st.float64, requires_grad=True) for p in sp]
    so2 = getattr(optim, name)(cp, **kw)
    so2.load_state_dict(so.state_dict())
    step_both(so, to, sp, tp, torch, 6, start=6)
    for k in range(6, 12):
        for p, g in zip(cp, grads_for(k)):
            p.grad = st.tensor(g, dtype=st.float64)
        assert so2.step() is True
    assert_same(sp, tp)
    for a, b in zip(cp, sp):
        np.testing.assert_array_equal(arr(a), arr(b))


@pytest.mark.parametrize("name", ["Adamax", "NAdam", "RAdam", "Adadelta", "Rprop", "ASGD"])
def test_nonfinite_gradient_changes_nothing(name):
    p = st.tensor([1.0, 2.0], dtype=st.float64, requires_grad=True)
    o = getattr(optim, name)([p])
    p.grad = st.tensor([0.5, -0.5], dtype=st.float64)
    assert o.step() is True
    before, state = p.tolist(), {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in o.state_of(p).items()}
    p.grad = st.tensor([float("nan"), 1.0], dtype=st.float64)
    assert o.step() is False
    assert p.tolist() == before
    assert {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in o.state_of(p).items()} == state
    assert o.skipped_steps == 1


def test_bad_options_name_the_optimizer_and_value():
    p = st.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="Adamax: invalid beta1 1.5"):
        optim.Adamax([p], betas=(1.5, 0.9))
    with pytest.raises(ValueError, match="NAdam: invalid momentum_decay value -1"):
        optim.NAdam([p], momentum_decay=-1.0)
    with pytest.raises(ValueError, match="RAdam: invalid epsilon value -1"):
        optim.RAdam([p], eps=-1.0)
    with pytest.raises(ValueError, match=r"Adadelta: invalid rho value 1.5.* \(must be in \[0, 1\]\)"):
        optim.Adadelta([p], rho=1.5)
    with pytest.raises(ValueError, match=r"Rprop: invalid eta values \(1.5.*, 1.2.*\)"):
        optim.Rprop([p], etas=(1.5, 1.2))
    with pytest.raises(ValueError, match=r"Rprop: invalid step_sizes \(1.0.*, 0.1.*\)"):
        optim.Rprop([p], step_sizes=(1.0, 0.1))
    with pytest.raises(ValueError, match="Rprop: etas must be a pair of floats"):
        optim.Rprop([p], etas=(0.5,))
    with pytest.raises(ValueError, match="invalid learning rate"):
        optim.Adadelta([p], lr=-1.0)
    with pytest.raises(ValueError, match="ASGD: invalid weight_decay -0.5"):
        optim.ASGD([p], weight_decay=-0.5)


def test_a_bad_group_edit_fails_the_step_without_changes():
    p = st.tensor([1.0, 2.0], dtype=st.float64, requires_grad=True)
    o = optim.Rprop([p])
    p.grad = st.tensor([0.5, -0.5], dtype=st.float64)
    o.step()
    before = p.tolist()
    o.param_groups[0]["etas"] = (2.0, 3.0)
    assert o.param_groups[0]["etas"] == (2.0, 3.0)
    with pytest.raises(ValueError, match="Rprop: invalid eta values"):
        o.step()
    assert p.tolist() == before and o.state_of(p)["step"] == 1


def test_load_state_dict_checks_buffer_shapes():
    p = st.zeros(3, dtype=st.float64, requires_grad=True)
    o = optim.NAdam([p])
    p.grad = st.ones(3, dtype=st.float64)
    o.step()
    sd = o.state_dict()
    assert sd["state"][0]["mu_product"].shape == ()
    sd["state"][0]["exp_avg"] = st.zeros(4, dtype=st.float64)
    with pytest.raises(st.CheckpointError, match=r"buffer 'exp_avg' of parameter 0 has shape \(4,\), expected \(3,\)"):
        o.load_state_dict(sd)
    assert o.state_of(p)["exp_avg"].shape == (3,)


def test_float32_parameters_follow_torch(torch):
    sp = [st.tensor(a, dtype=st.float32, requires_grad=True) for a in init_params()]
    tp = [torch.tensor(a, dtype=torch.float32, requires_grad=True) for a in init_params()]
    so, to = optim.NAdam(sp, lr=0.01), torch.optim.NAdam(tp, lr=0.01)
    for k in range(8):
        for p, tq, g in zip(sp, tp, grads_for(k)):
            p.grad = st.tensor(g, dtype=st.float32)
            tq.grad = torch.tensor(g, dtype=torch.float32)
        so.step()
        to.step()
    for a, b in zip(sp, tp):
        assert a.dtype == st.float32
        np.testing.assert_allclose(arr(a), b.detach().numpy(), rtol=1e-5, atol=1e-6)
