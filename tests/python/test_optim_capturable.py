"""Adam/AdamW(capturable=True) and st.cuda.make_graphed_step.

capturable=True keeps each parameter's step count on its device (state 'device_step') and lets
the update kernel advance it, so the update equals torch's Adam/AdamW and a CUDA graph can capture
the optimizer step. make_graphed_step captures a whole training step (forward, backward, AdamW)
and replays it; a graphed run equals the eager run step by step. CPU tests run everywhere; CUDA
tests skip cleanly without a GPU."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import spiraltorch as st
import spiraltorch.nn.functional as F
from conftest import HAVE_CUDA, CUDA_SKIP_REASON, to_np

needs_cuda = pytest.mark.skipif(not HAVE_CUDA, reason=CUDA_SKIP_REASON)


def _grads(steps, shape, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape) * (1 + k) for k in range(steps)]


@pytest.mark.parametrize("cls", ["Adam", "AdamW"])
@pytest.mark.parametrize("amsgrad", [False, True])
def test_capturable_matches_torch_on_cpu(cls, amsgrad):
    w0 = np.random.default_rng(1).standard_normal((4, 3))
    p = st.tensor(w0.copy(), dtype=st.float64, requires_grad=True)
    tp = torch.tensor(w0.copy(), dtype=torch.float64, requires_grad=True)
    opt = getattr(st.optim, cls)([p], lr=0.05, weight_decay=0.02, amsgrad=amsgrad, capturable=True)
    topt = getattr(torch.optim, cls)([tp], lr=0.05, weight_decay=0.02, amsgrad=amsgrad)
    for g in _grads(7, (4, 3), 2):
        p.grad = st.tensor(g, dtype=st.float64)
        tp.grad = torch.tensor(g)
        assert opt.step()
        topt.step()
        np.testing.assert_allclose(to_np(p.detach()), tp.detach().numpy(), rtol=1e-12, atol=1e-14)
    state = opt.state_of(p)
    assert float(state["device_step"].item()) == 7.0 and state["device_step"].shape == ()
    assert opt.param_groups[0]["capturable"] is True


def test_capturable_skips_non_finite_and_round_trips_its_state():
    p = st.tensor([1.0, -2.0, 3.0], requires_grad=True)
    opt = st.optim.AdamW([p], lr=0.1, capturable=True)
    p.grad = st.tensor([0.5, -0.5, 1.0])
    assert opt.step()
    before = to_np(p.detach()).copy()
    p.grad = st.tensor([0.5, float("nan"), 1.0])
    assert not opt.step()
    np.testing.assert_array_equal(to_np(p.detach()), before)
    assert float(opt.state_of(p)["device_step"].item()) == 1.0 and opt.skipped_steps == 1

    sd = opt.state_dict()
    assert float(sd["state"][0]["device_step"].item()) == 1.0
    q = st.tensor(before.tolist(), requires_grad=True)
    fresh = st.optim.AdamW([q], lr=0.1, capturable=True)
    fresh.load_state_dict(sd)
    for g in ([0.2, 0.1, -0.3], [1.0, 2.0, 3.0]):
        p.grad, q.grad = st.tensor(g), st.tensor(g)
        opt.step()
        fresh.step()
        np.testing.assert_array_equal(to_np(q.detach()), to_np(p.detach()))
    assert float(fresh.state_of(q)["device_step"].item()) == 3.0


def test_plain_state_loaded_into_capturable_continues_the_count():
    w = [0.3, -0.7]
    a, b = st.tensor(w, requires_grad=True), st.tensor(w, requires_grad=True)
    plain, dev = st.optim.Adam([a], lr=0.1), st.optim.Adam([b], lr=0.1, capturable=True)
    a.grad = st.tensor([1.0, -1.0])
    plain.step()
    b.grad = st.tensor([1.0, -1.0])
    dev.step()
    sd = plain.state_dict()
    sd["param_groups"][0]["capturable"] = True
    c = st.tensor(to_np(a.detach()).tolist(), requires_grad=True)
    cont = st.optim.Adam([c], lr=0.1, capturable=True)
    cont.load_state_dict(sd)
    for g in ([0.4, 0.2], [-1.0, 0.5]):
        b.grad, c.grad = st.tensor(g), st.tensor(g)
        dev.step()
        cont.step()
    np.testing.assert_allclose(to_np(c.detach()), to_np(b.detach()), rtol=1e-6)
    assert float(cont.state_of(c)["device_step"].item()) == 3.0


def test_make_graphed_step_checks_its_arguments():
    with pytest.raises(ValueError, match="make_graphed_step: warmup must be an int >= 1"):
        st.cuda.make_graphed_step(lambda: None, warmup=0)
    with pytest.raises(TypeError, match="make_graphed_step: step_fn must be callable"):
        st.cuda.make_graphed_step(3)


@pytest.mark.skipif(HAVE_CUDA, reason="checks the build without a usable GPU")
def test_make_graphed_step_without_cuda_refuses_before_any_step():
    calls = []
    with pytest.raises(st.DeviceUnavailableError, match="make_graphed_step: CUDA is not available: "):
        st.cuda.make_graphed_step(lambda: calls.append(1), warmup=2)
    assert calls == []  # no warm-up step ran


def _model(seed):
    st.manual_seed(seed)
    return st.nn.Sequential(st.nn.Linear(24, 64), st.nn.GELU(), st.nn.LayerNorm(64), st.nn.Linear(64, 7)).to("cuda")


def _batches(n, seed=5):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((32, 24)).astype(np.float32), rng.integers(0, 7, 32)) for _ in range(n)]


@needs_cuda
def test_capturable_adamw_on_cuda_equals_plain_adamw():
    a, b = _model(3), _model(3)
    opt_a = st.optim.AdamW(a.parameters(), lr=1e-2, weight_decay=0.05)
    opt_b = st.optim.AdamW(b.parameters(), lr=1e-2, weight_decay=0.05, capturable=True)
    for xb, yb in _batches(4):
        x, y = st.tensor(xb).cuda(), st.tensor(yb).cuda()
        for m, o in ((a, opt_a), (b, opt_b)):
            o.zero_grad()
            F.cross_entropy(m(x), y).backward()
            o.step()
    for (name, pa), (_, pb) in zip(a.named_parameters(), b.named_parameters()):
        np.testing.assert_allclose(to_np(pb.detach().cpu()), to_np(pa.detach().cpu()), rtol=1e-6, atol=1e-7,
                                   err_msg=name)


@needs_cuda
@pytest.mark.parametrize("amsgrad", [False, True])
def test_graph_captured_adamw_step_equals_eager_step_by_step(amsgrad):
    """The whole step (zero_grad, forward, cross-entropy, backward, AdamW) captured once with
    st.cuda.CUDAGraph and replayed: after every step the weights equal the eager run's."""
    batches = _batches(7)
    eager, graphed = _model(11), _model(11)
    opt_e = st.optim.AdamW(eager.parameters(), lr=1e-2, weight_decay=0.01, amsgrad=amsgrad, capturable=True)
    opt_g = st.optim.AdamW(graphed.parameters(), lr=1e-2, weight_decay=0.01, amsgrad=amsgrad, capturable=True)
    static_x, static_y = st.tensor(batches[0][0]).cuda(), st.tensor(batches[0][1]).cuda()

    def step(model, opt, x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    step(eager, opt_e, static_x, static_y)
    step(graphed, opt_g, static_x, static_y)  # warm-up: creates gradients and state outside the capture
    g = st.cuda.CUDAGraph()
    with st.cuda.graph(g):
        static_loss = step(graphed, opt_g, static_x, static_y)
    for xb, yb in batches[1:]:
        x, y = st.tensor(xb).cuda(), st.tensor(yb).cuda()
        loss_e = step(eager, opt_e, x, y)
        static_x.copy_(x)
        static_y.copy_(y)
        g.replay()
        assert static_loss.item() == pytest.approx(loss_e.item(), rel=1e-6, abs=1e-7)
        for (name, pe), (_, pg) in zip(eager.named_parameters(), graphed.named_parameters()):
            np.testing.assert_allclose(to_np(pg.detach().cpu()), to_np(pe.detach().cpu()), rtol=1e-6, atol=1e-7,
                                       err_msg=name)
    steps = {float(opt_g.state_of(p)["device_step"].item()) for p in graphed.parameters()}
    assert steps == {float(len(batches))}


@needs_cuda
def test_make_graphed_step_equals_eager_step_by_step_and_skips_non_finite():
    batches = _batches(8, seed=9)
    eager, graphed = _model(21), _model(21)
    opt_e = st.optim.AdamW(eager.parameters(), lr=5e-3, capturable=True)
    opt_g = st.optim.AdamW(graphed.parameters(), lr=5e-3, capturable=True)
    static_x, static_y = st.tensor(batches[0][0]).cuda(), st.tensor(batches[0][1]).cuda()

    def train_step():
        opt_g.zero_grad()
        loss = F.cross_entropy(graphed(static_x), static_y)
        loss.backward()
        opt_g.step()
        return loss

    graphed_step = st.cuda.make_graphed_step(train_step, warmup=2)
    for k, (xb, yb) in enumerate(batches):
        x, y = st.tensor(xb).cuda(), st.tensor(yb).cuda()
        if k == 5:  # a poisoned batch: both runs skip the update
            x = x * float("nan")
        opt_e.zero_grad()
        loss_e = F.cross_entropy(eager(x), y)
        loss_e.backward()
        opt_e.step()
        static_x.copy_(x)
        static_y.copy_(y)
        loss_g = graphed_step()
        assert graphed_step.is_captured() == (k >= 2)
        if k != 5:
            assert loss_g.item() == pytest.approx(loss_e.item(), rel=1e-6, abs=1e-7)
        for (name, pe), (_, pg) in zip(eager.named_parameters(), graphed.named_parameters()):
            np.testing.assert_allclose(to_np(pg.detach().cpu()), to_np(pe.detach().cpu()), rtol=1e-6, atol=1e-7,
                                       err_msg=f"{name} after step {k}")
    assert graphed_step.graph.num_nodes() > 10
    assert {float(opt_g.state_of(p)["device_step"].item()) for p in graphed.parameters()} == {7.0}


@pytest.mark.skipif(not st.wgpu.is_available(), reason="no wgpu adapter")
def test_capturable_refuses_a_backend_without_a_device_step_and_changes_nothing():
    """The backend says whether its Adam update keeps the step count on the device (the wgpu
    backend's does not): capturable=True on a wgpu parameter is refused by name, before any change."""
    p = st.tensor([1.0, -2.0, 3.0]).to("wgpu").requires_grad_()
    p.grad = st.tensor([0.5, 0.5, 0.5]).to("wgpu")
    opt = st.optim.Adam([p], lr=0.1, capturable=True)
    with pytest.raises(st.SpiralError, match=r"Adam\(capturable=True\): the wgpu backend keeps no device-side step"):
        opt.step()
    assert p.cpu().tolist() == [1.0, -2.0, 3.0]
    st.optim.Adam([p], lr=0.1).step()  # plain Adam runs there: the first step moves each weight by lr
    assert np.allclose(p.cpu().tolist(), [0.9, -2.1, 2.9], atol=1e-6)


def _bf16(a):
    """Round float32 values to bfloat16 (nearest, ties to even) and back, as the kernel stores them."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32)


@needs_cuda
@pytest.mark.parametrize("capturable", [False, True])
def test_cuda_adamw_on_bfloat16_params_keeps_bfloat16_moments(capturable):
    """AdamW on bfloat16 CUDA parameters updates them in place with bfloat16 moments computed in
    float32 (PyTorch's fused AdamW does the same), no float32 copies: against a NumPy float32
    simulation that rounds every stored value to bfloat16. The step count stays float32."""
    rng = np.random.default_rng(3)
    w0 = _bf16(rng.standard_normal((64, 33)).astype(np.float32))
    p = st.tensor(w0).to(st.bfloat16).cuda().requires_grad_(True)
    lr, b1, b2, eps, wd = 1e-2, 0.9, 0.999, 1e-8, 0.1
    opt = st.optim.AdamW([p], lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd, capturable=capturable)
    w, m, v = w0.copy(), np.zeros_like(w0), np.zeros_like(w0)
    for k, g in enumerate(_grads(4, (64, 33), 5), start=1):
        g = _bf16(g.astype(np.float32))
        p.grad = st.tensor(g).to(st.bfloat16).cuda()
        assert opt.step()
        f = np.float32
        wd_w = w * f(1 - lr * wd)
        m_new = m + f(1 - b1) * (g - m)
        v_new = v * f(b2) + f(1 - b2) * g * g
        step = f(lr / (1 - b1 ** k))
        denom = np.sqrt(v_new) / f(np.sqrt(1 - b2 ** k)) + f(eps)
        # the update reads the float32 moments; they are stored rounded
        w = _bf16(wd_w - step * (m_new / denom))
        m, v = _bf16(m_new), _bf16(v_new)
        state = opt.state_of(p)
        assert state["exp_avg"].dtype == st.bfloat16 and state["exp_avg_sq"].dtype == st.bfloat16
        for got, want in ((p.detach(), w), (state["exp_avg"], m), (state["exp_avg_sq"], v)):
            got = to_np(got.to(st.float32))
            # within one bfloat16 rounding of the simulation (float32 order of operations may differ)
            np.testing.assert_allclose(got, want, rtol=8e-3, atol=1e-6)
    if capturable:
        assert state["device_step"].dtype == st.float32 and float(state["device_step"].item()) == 4.0
