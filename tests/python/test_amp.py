"""Mixed precision (st.autocast, st.amp.GradScaler), activation checkpointing
(st.utils.checkpoint), nn.ModuleList/ModuleDict and the st.backends.cudnn switches.
Device-parametrised cases run on the CPU here and on CUDA where a GPU is present."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.nn.functional  # noqa: F401  (binds st.nn.functional)
from conftest import HAVE_TORCH, is_cuda, needs_torch, to_np  # the `device` fixture comes from conftest

if HAVE_TORCH:
    import torch


def dev_type(device):
    return "cuda" if is_cuda(device) else "cpu"


# ---------------------------------------------------------------- autocast


def test_autocast_op_lists(device):
    st.manual_seed(0)
    lin = st.nn.Linear(8, 4).to(device)
    x = st.randn(3, 8).to(device)
    with st.autocast(dev_type(device), dtype=st.bfloat16):
        assert st.is_autocast_enabled(dev_type(device))
        y = lin(x)
        assert y.dtype == st.bfloat16  # lower-precision list (bias cast too)
        assert (x @ x.T).dtype == st.bfloat16
        assert st.einsum("ij,kj->ik", x, x).dtype == st.bfloat16
        assert st.softmax(y, -1).dtype == st.float32  # float32 list
        assert st.nn.functional.layer_norm(y, [4]).dtype == st.float32
        loss = st.nn.functional.mse_loss(y, st.zeros(3, 4).to(device))
        assert loss.dtype == st.float32
    assert not st.is_autocast_enabled(dev_type(device))
    assert lin(x).dtype == st.float32
    loss.backward()
    # Master weights stay float32 and get float32 gradients.
    assert lin.weight.dtype == st.float32 and lin.weight.grad.dtype == st.float32
    np.testing.assert_allclose(to_np(y.to(st.float32)), to_np(lin(x)), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("half", ["bfloat16", "float16"])
def test_autocast_cross_entropy_reads_half_logits_exactly(device, half):
    """cross_entropy is on autocast's float32 list; half logits with index targets go to the fused
    rows uncast (they read them in float32 and accumulate in float32), so the float32 loss and the
    logits gradient (in the logits' dtype) equal those of an explicit float32 cast: to float32
    rounding for the loss and one rounding of the half type for the gradient (a backend's half rows
    may sum in another order than its float32 rows; the CPU's are equal bit for bit, tested below).
    With a weight or label smoothing (composite path) the cast happens as before."""
    dt = getattr(st, half)
    rng = np.random.default_rng(3)
    logits = st.tensor(rng.standard_normal((37, 300)).astype(np.float32) * 4).to(dt).to(device)
    target = st.tensor(rng.integers(0, 300, 37)).to(device)

    def loss_and_grad(cast, **kw):
        x = logits.detach().requires_grad_(True)
        with st.autocast(dev_type(device), dtype=dt):
            loss = st.nn.functional.cross_entropy(x.to(st.float32) if cast else x, target, **kw)
        loss.backward()
        return loss, x.grad

    for kw in ({}, {"reduction": "sum"}, {"ignore_index": int(to_np(target)[0])}, {"label_smoothing": 0.1},
               {"weight": st.ones(300).to(device)}):
        got, got_grad = loss_and_grad(False, **kw)
        want, want_grad = loss_and_grad(True, **kw)
        assert got.dtype == st.float32 and got_grad.dtype == dt
        ulp = 2.0 ** -7 if half == "bfloat16" else 2.0 ** -10
        np.testing.assert_allclose(to_np(got), to_np(want), rtol=1e-6, err_msg=str(kw))
        np.testing.assert_allclose(to_np(got_grad.to(st.float32)), to_np(want_grad.to(st.float32)), rtol=ulp,
                                   atol=1e-30, err_msg=str(kw))


@pytest.mark.parametrize("half", ["bfloat16", "float16"])
def test_cpu_cross_entropy_half_rows_equal_the_cast_without_its_copy(half):
    """The CPU's fused rows take half logits themselves (each row widened to float32 in a per-thread
    buffer): loss and logits gradient equal the explicit float32 cast's bit for bit, and forward +
    backward allocate the half gradient and a few rows beyond the logits, not the cast's (N, C)
    float32 copy (the composite path they replaced kept that copy and float32 log-probabilities)."""
    dt = getattr(st, half)
    n, c = 512, 2048
    rng = np.random.default_rng(4)
    logits = st.tensor(rng.standard_normal((n, c)).astype(np.float32) * 3).to(dt)
    target = st.tensor(rng.integers(0, c, n))
    results = []
    for cast in (False, True):
        x = logits.detach().requires_grad_(True)
        st.cpu.reset_peak_memory_stats()
        base = st.cpu.memory_allocated()
        with st.autocast("cpu", dtype=dt):
            loss = st.nn.functional.cross_entropy(x.to(st.float32) if cast else x, target)
        loss.backward()
        peak = st.cpu.max_memory_allocated() - base
        results.append((to_np(loss), to_np(x.grad.to(st.float32)), peak))
        del x, loss  # freed here, not inside the next iteration's measurement
    (got, got_grad, got_peak), (want, want_grad, want_peak) = results
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got_grad, want_grad)
    half_bytes = n * c * 2
    assert got_peak < 1.25 * half_bytes, (got_peak, half_bytes)
    assert want_peak >= 3 * half_bytes  # the cast path: its float32 copy and float32 gradient


@pytest.mark.parametrize("half", ["bfloat16", "float16"])
def test_autocast_convolutions_train(device, half):
    """conv1d/conv2d/conv_transpose2d are on autocast's lower-precision list: their output is the
    region's dtype, close to float32, and a small CNN's step runs forward and backward with float32
    gradients for its float32 weights. (On a backend without half convolution kernels the op runs
    them in float32 and casts the result; that fallback once re-entered autocast and recursed until
    the stack overflowed.)"""
    dt = getattr(st, half)
    st.manual_seed(0)
    x = st.randn(2, 3, 9, 9).to(device)
    layers = {
        "conv2d": st.nn.Conv2d(3, 4, 3, padding=1),
        "conv1d": st.nn.Conv1d(3, 4, 3, padding=1),
        "conv_transpose2d": st.nn.ConvTranspose2d(3, 4, 3, stride=2),
    }
    for name, layer in layers.items():
        layer = layer.to(device)
        xi = x[:, :, 0] if name == "conv1d" else x
        want = layer(xi)
        with st.autocast(dev_type(device), dtype=dt):
            got = layer(xi)
        assert got.dtype == dt, name
        np.testing.assert_allclose(to_np(got.to(st.float32)), to_np(want), rtol=5e-2, atol=5e-2, err_msg=name)
    model = st.nn.Sequential(st.nn.Conv2d(3, 8, 3, padding=1), st.nn.BatchNorm2d(8), st.nn.ReLU(),
                             st.nn.MaxPool2d(2), st.nn.AdaptiveAvgPool2d(1), st.nn.Flatten(),
                             st.nn.Linear(8, 5)).to(device)
    with st.autocast(dev_type(device), dtype=dt):
        loss = st.nn.functional.cross_entropy(model(x), st.tensor([1, 4]).to(device))
    loss.backward()
    assert all(p.grad is not None and p.grad.dtype == st.float32 for p in model.parameters())


def test_autocast_nesting_disable_and_decorator():
    with st.autocast("cpu", dtype=st.bfloat16):
        with st.autocast("cpu", enabled=False):
            assert not st.is_autocast_enabled("cpu")
            assert (st.ones(2, 2) @ st.ones(2, 2)).dtype == st.float32
        assert st.is_autocast_enabled("cpu")
        with st.autocast("cpu", dtype=st.float16):
            assert st.get_autocast_dtype("cpu") == st.float16
        assert st.get_autocast_dtype("cpu") == st.bfloat16
    assert not st.is_autocast_enabled("cpu")

    @st.autocast("cpu", dtype="bfloat16")
    def f(a):
        return a @ a

    assert f(st.ones(2, 2)).dtype == st.bfloat16
    assert not st.is_autocast_enabled("cpu")
    # An exception inside the block restores the state.
    with pytest.raises(RuntimeError):
        with st.autocast("cpu"):
            raise RuntimeError("boom")
    assert not st.is_autocast_enabled("cpu")
    assert st.amp.autocast is st.autocast
    assert "bfloat16" in repr(st.autocast("cpu"))


def test_autocast_rejects_bad_arguments():
    with pytest.raises(ValueError, match="float16 or bfloat16"):
        with st.autocast("cpu", dtype=st.float64):
            pass
    with pytest.raises(ValueError, match="device_type"):
        st.autocast("tpu")
    with pytest.raises(ValueError, match="unknown dtype"):
        st.autocast("cpu", dtype="float8")


@needs_torch
def test_autocast_matches_torch_cpu():
    """A small MLP under CPU bfloat16 autocast against torch.autocast("cpu"): same weights,
    same forward within bfloat16 rounding, float32 gradients of the same size."""
    rng = np.random.default_rng(0)
    w1, b1 = rng.standard_normal((16, 8)).astype(np.float32), rng.standard_normal(16).astype(np.float32)
    w2, b2 = rng.standard_normal((3, 16)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    x = rng.standard_normal((5, 8)).astype(np.float32)
    target = rng.integers(0, 3, 5)
    sw = [st.tensor(a, requires_grad=True) for a in (w1, b1, w2, b2)]
    tw = [torch.tensor(a, requires_grad=True) for a in (w1, b1, w2, b2)]
    with st.autocast("cpu", dtype=st.bfloat16):
        h = st.relu(st.nn.functional.linear(st.tensor(x), sw[0], sw[1]))
        out = st.nn.functional.linear(h, sw[2], sw[3])
        loss = st.nn.functional.cross_entropy(out, st.tensor(target))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        th = torch.relu(torch.nn.functional.linear(torch.tensor(x), tw[0], tw[1]))
        tout = torch.nn.functional.linear(th, tw[2], tw[3])
        tloss = torch.nn.functional.cross_entropy(tout, torch.tensor(target))
    assert out.dtype == st.bfloat16 and tout.dtype == torch.bfloat16
    assert loss.dtype == st.float32 and tloss.dtype == torch.float32
    np.testing.assert_allclose(to_np(out.to(st.float32)), tout.float().detach().numpy(), rtol=3e-2, atol=6e-2)
    assert abs(loss.item() - tloss.item()) < 5e-2
    loss.backward()
    tloss.backward()
    for s, t in zip(sw, tw):
        assert s.grad.dtype == st.float32
        np.testing.assert_allclose(to_np(s.grad), t.grad.numpy(), rtol=6e-2, atol=6e-2)


# ---------------------------------------------------------------- GradScaler


def _param(value, device="cpu"):
    p = st.tensor(np.asarray(value, dtype=np.float32)).to(device)
    p.requires_grad_(True)
    return p


def test_grad_scaler_scales_unscales_and_steps(device):
    p = _param([1.0, -2.0], device)
    opt = st.optim.SGD([p], lr=0.1)
    scaler = st.amp.GradScaler(init_scale=8.0, growth_interval=2)
    loss = (p * p).sum()
    scaled = scaler.scale(loss)
    assert scaled.item() == pytest.approx(8.0 * loss.item())
    scaled.backward()
    np.testing.assert_allclose(to_np(p.grad), [16.0, -32.0])  # 8 * 2p
    assert scaler.step(opt) is True
    np.testing.assert_allclose(to_np(p), [1.0 - 0.2, -2.0 + 0.4], rtol=1e-6)  # gradient unscaled to 2p
    scaler.update()
    assert scaler.get_scale() == 8.0
    for _ in range(2):
        opt.zero_grad()
        scaler.scale((p * p).sum()).backward()
        scaler.step(opt)
        scaler.update()
    assert scaler.get_scale() == 16.0  # grew after growth_interval=2 clean steps
    assert scaler.skipped_steps == 0


def test_grad_scaler_skips_non_finite_steps(device):
    p = _param([1.0, 1.0], device)
    opt = st.optim.Adam([p], lr=0.1)
    scaler = st.amp.GradScaler(init_scale=1024.0)
    before = to_np(p).copy()
    loss = (p * st.tensor([float("inf"), 1.0]).to(device)).sum()
    scaler.scale(loss).backward()
    assert scaler.step(opt) is None
    assert scaler.found_inf
    np.testing.assert_array_equal(to_np(p), before)  # nothing changed
    scaler.update()
    assert scaler.get_scale() == 512.0 and scaler.skipped_steps == 1 and not scaler.found_inf


def test_grad_scaler_unscale_clip_state_and_errors():
    p = _param([3.0, 4.0])
    opt = st.optim.SGD([p], lr=1.0)
    scaler = st.amp.GradScaler(init_scale=4.0)
    scaler.scale((p * p).sum()).backward()
    scaler.unscale_(opt)
    np.testing.assert_allclose(to_np(p.grad), [6.0, 8.0])
    with pytest.raises(RuntimeError, match="already called"):
        scaler.unscale_(opt)
    scaler.step(opt)  # does not unscale twice
    np.testing.assert_allclose(to_np(p), [-3.0, -4.0])
    with pytest.raises(RuntimeError, match="already called"):
        scaler.step(opt)
    scaler.update(new_scale=2.0)
    state = scaler.state_dict()
    assert state["scale"] == 2.0 and state["_growth_tracker"] == 0
    other = st.amp.GradScaler()
    other.load_state_dict(state)
    assert other.get_scale() == 2.0
    with pytest.raises(st.CheckpointError, match="missing"):
        other.load_state_dict({"scale": 1.0})
    with pytest.raises(ValueError, match="backoff_factor"):
        st.amp.GradScaler(backoff_factor=1.5)
    with pytest.raises(ValueError, match="init_scale"):
        st.amp.GradScaler(init_scale=float("nan"))
    off = st.amp.GradScaler(enabled=False)
    loss = (p * p).sum()
    assert off.scale(loss) is loss or off.scale(loss).item() == loss.item()
    assert off.get_scale() == 1.0 and not off.is_enabled()
    assert "GradScaler(" in repr(off)
    assert (off.get_growth_factor(), off.get_backoff_factor(), off.get_growth_interval()) == (2.0, 0.5, 2000)


@needs_torch
def test_grad_scaler_matches_torch_schedule():
    """The same sequence of clean and overflowing steps gives torch.amp.GradScaler's scales."""
    sp, tp = _param([1.0]), torch.tensor([1.0], requires_grad=True)
    so, to = st.optim.SGD([sp], lr=0.01), torch.optim.SGD([tp], lr=0.01)
    ss = st.amp.GradScaler("cpu", init_scale=256.0, growth_interval=3)
    ts = torch.amp.GradScaler("cpu", init_scale=256.0, growth_interval=3)
    pattern = [1, 1, 1, 0, 1, 1, 1, 1, 0, 0, 1]
    for finite in pattern:
        so.zero_grad()
        to.zero_grad()
        factor = 1.0 if finite else float("inf")
        ss.scale((sp * factor).sum()).backward()
        ts.scale((tp * factor).sum()).backward()
        ss.step(so)
        ts.step(to)
        ss.update()
        ts.update()
        assert ss.get_scale() == ts.get_scale()
    np.testing.assert_allclose(to_np(sp), tp.detach().numpy(), rtol=1e-6)
    assert ss.skipped_steps == pattern.count(0)


# ---------------------------------------------------------------- checkpoint


def _block(d):
    return st.nn.Sequential(st.nn.Linear(d, 2 * d), st.nn.GELU(), st.nn.Dropout(0.3), st.nn.Linear(2 * d, d))


def test_checkpoint_gradients_match_plain_backward(device):
    st.manual_seed(3)
    block = _block(6).to(device)
    block.train()
    x0 = st.randn(4, 6).to(device)

    def run(use_ckpt):
        for p in block.parameters():
            p.grad = None
        x = x0.detach().requires_grad_(True)
        st.manual_seed(11)
        y = st.utils.checkpoint(block, x) if use_ckpt else block(x)
        (y * y).sum().backward()
        return to_np(y), to_np(x.grad), [to_np(p.grad) for p in block.parameters()]

    y1, gx1, gp1 = run(False)
    y2, gx2, gp2 = run(True)
    np.testing.assert_allclose(y2, y1, rtol=1e-6, atol=1e-6)  # same dropout mask
    np.testing.assert_allclose(gx2, gx1, rtol=1e-5, atol=1e-6)
    for a, b in zip(gp2, gp1):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_checkpoint_float64_finite_differences():
    w = st.tensor(np.random.default_rng(1).standard_normal((3, 3)), requires_grad=True)
    x = st.tensor(np.random.default_rng(2).standard_normal((2, 3)), requires_grad=True)

    def f(a, scale):
        return st.tanh(a @ w) * scale

    y = st.utils.checkpoint(f, x, 2.0)
    y.sum().backward()
    eps = 1e-6
    xa = to_np(x)
    num = np.zeros_like(xa)
    for i in np.ndindex(xa.shape):
        hi, lo = xa.copy(), xa.copy()
        hi[i] += eps
        lo[i] -= eps
        num[i] = (to_np(f(st.tensor(hi), 2.0).sum()) - to_np(f(st.tensor(lo), 2.0).sum())) / (2 * eps)
    np.testing.assert_allclose(to_np(x.grad), num, rtol=1e-6, atol=1e-8)
    assert w.grad is not None


def test_checkpoint_passthrough_and_errors():
    lin = st.nn.Linear(3, 2)
    x = st.randn(4, 3)  # no input requires grad: runs normally, parameters still get gradients
    st.utils.checkpoint(lin, x).sum().backward()
    assert lin.weight.grad is not None
    with st.no_grad():
        assert not st.utils.checkpoint(lin, x.requires_grad_(True)).requires_grad
    with pytest.raises(TypeError, match="a Tensor or a tuple/list of them, got int"):
        st.utils.checkpoint(lambda a: 5, st.randn(2, requires_grad=True))
    assert st.utils.checkpoint(lambda: 5) == 5  # no tensors at all


def _multi(w):
    # Three outputs: tanh(x w), sin(x) * a, and exp(x) that the losses below never use.
    calls = []

    def f(x, a):
        calls.append(1)
        return st.tanh(x @ w), st.sin(x) * a, st.exp(x)
    return f, calls


def test_checkpoint_several_outputs_equal_the_plain_run_exactly():
    rng = np.random.default_rng(5)
    w = st.tensor(rng.standard_normal((4, 2)), requires_grad=True)
    x0, a0 = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    c1, c2 = st.tensor(rng.standard_normal((3, 2))), st.tensor(rng.standard_normal((3, 4)))
    f, calls = _multi(w)

    def run(use_ckpt):
        w.grad = None
        x, a = st.tensor(x0, requires_grad=True), st.tensor(a0, requires_grad=True)
        ys = st.utils.checkpoint(f, x, a) if use_ckpt else f(x, a)
        assert isinstance(ys, tuple) and len(ys) == 3
        ((ys[0] * c1).sum() + (ys[1] * c2).sum()).backward()
        return [to_np(ys[0]), to_np(ys[1]), to_np(x.grad), to_np(a.grad), to_np(w.grad)]

    plain = run(False)
    calls.clear()
    ck = run(True)
    assert len(calls) == 2  # the forward and one recompute for all outputs
    for p, c in zip(plain, ck):
        np.testing.assert_array_equal(c, p)  # float64: bit for bit
    # And against torch.utils.checkpoint's reference values, where torch is installed.
    if HAVE_TORCH:
        tw = torch.tensor(to_np(w), requires_grad=True)
        tx, ta = torch.tensor(x0, requires_grad=True), torch.tensor(a0, requires_grad=True)
        ty = torch.utils.checkpoint.checkpoint(
            lambda x, a: (torch.tanh(x @ tw), torch.sin(x) * a, torch.exp(x)), tx, ta, use_reentrant=False)
        ((ty[0] * torch.tensor(to_np(c1))).sum() + (ty[1] * torch.tensor(to_np(c2))).sum()).backward()
        for mine, ref in zip(ck[2:], (tx.grad, ta.grad, tw.grad)):
            np.testing.assert_allclose(mine, ref.numpy(), rtol=1e-12, atol=1e-14)


def test_checkpoint_several_outputs_finite_differences():
    rng = np.random.default_rng(6)
    w = st.tensor(rng.standard_normal((4, 2)))
    f, _ = _multi(w)
    c1, c2 = rng.standard_normal((3, 2)), rng.standard_normal((3, 4))

    def loss(x, a):
        y0, y1, _ = f(st.tensor(x), st.tensor(a))
        return float((to_np(y0) * c1).sum() + (to_np(y1) * c2).sum())

    x0, a0 = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    x, a = st.tensor(x0, requires_grad=True), st.tensor(a0, requires_grad=True)
    ys = st.utils.checkpoint(f, x, a)
    ((ys[0] * st.tensor(c1)).sum() + (ys[1] * st.tensor(c2)).sum()).backward()
    eps = 1e-6
    for arr, grad, which in ((x0, x.grad, 0), (a0, a.grad, 1)):
        num = np.zeros_like(arr)
        for i in np.ndindex(arr.shape):
            hi, lo = arr.copy(), arr.copy()
            hi[i] += eps
            lo[i] -= eps
            args_hi, args_lo = [x0, a0], [x0, a0]
            args_hi[which], args_lo[which] = hi, lo
            num[i] = (loss(*args_hi) - loss(*args_lo)) / (2 * eps)
        np.testing.assert_allclose(to_np(grad), num, rtol=1e-6, atol=1e-8)


def test_checkpoint_unused_outputs_get_no_gradient():
    x = st.tensor([1.0, 2.0], requires_grad=True)
    y = st.tensor([3.0, 4.0], requires_grad=True)
    outs = st.utils.checkpoint(lambda a, b: [a * 2.0, b * 3.0], x, y)
    assert isinstance(outs, list) and outs[0].grad_fn == outs[1].grad_fn == "CheckpointBackward"
    outs[0].sum().backward()
    np.testing.assert_array_equal(to_np(x.grad), [2.0, 2.0])
    assert y.grad is None


def test_checkpoint_several_outputs_replay_dropout():
    st.manual_seed(2)
    drop = st.nn.Dropout(0.5)
    drop.train()
    x0 = st.randn(6, 5, dtype=st.float64)

    def f(x):
        return drop(st.tanh(x)), drop(x * x)

    def run(use_ckpt):
        x = x0.detach().requires_grad_(True)
        st.manual_seed(9)
        y0, y1 = st.utils.checkpoint(f, x) if use_ckpt else f(x)
        (y0 + 2.0 * y1).sum().backward()
        # The next draw: the recompute's draws must not have moved the caller's generator.
        return to_np(y0), to_np(y1), to_np(x.grad), to_np(st.rand(3))

    plain, ck = run(False), run(True)
    assert 0 < (plain[0] == 0).sum() < plain[0].size  # dropout did drop
    for p, c in zip(plain, ck):
        np.testing.assert_array_equal(c, p)  # the recompute drew the same masks


def test_checkpoint_keeps_non_tensor_values_and_the_container():
    from collections import namedtuple

    Pair = namedtuple("Pair", "y n")
    x = st.tensor([1.0, -2.0], requires_grad=True)
    out = st.utils.checkpoint(lambda a, k: Pair(a * k, k), x, 3)
    assert isinstance(out, Pair) and out.n == 3
    out.y.sum().backward()
    np.testing.assert_array_equal(to_np(x.grad), [3.0, 3.0])
    x.grad = None
    y, same = st.utils.checkpoint(lambda a: (a, a), x)  # one tensor twice: two outputs of the node
    (y + 2.0 * same).sum().backward()
    np.testing.assert_array_equal(to_np(x.grad), [3.0, 3.0])


# ---------------------------------------------------------------- containers and switches


def test_module_list_and_dict():
    layers = st.nn.ModuleList([st.nn.Linear(2, 3), st.nn.Linear(3, 1)])
    layers.append(st.nn.ReLU())
    assert len(layers) == 3 and isinstance(layers[1], st.nn.Linear) and len(layers[:2]) == 2
    assert [k for k, _ in layers.named_parameters()][:2] == ["0::weight", "0::bias"]
    x = st.randn(4, 2)
    for m in layers:
        x = m(x)
    assert x.shape == (4, 1)
    with pytest.raises(IndexError, match="out of range"):
        layers[7]
    with pytest.raises(TypeError, match="Module"):
        layers.append(3)
    with pytest.raises(NotImplementedError):
        layers(x)
    d = st.nn.ModuleDict({"enc": st.nn.Linear(2, 2)})
    d["dec"] = st.nn.Linear(2, 1)
    assert list(d) == ["enc", "dec"] and "dec" in d and len(d) == 2
    assert sorted(k for k, _ in d.named_parameters()) == ["dec::bias", "dec::weight", "enc::bias", "enc::weight"]
    assert [k for k, _ in d.items()] == list(d.keys()) and len(list(d.values())) == 2
    with pytest.raises(ValueError, match="already present"):
        d["enc"] = st.nn.Linear(2, 2)
    with pytest.raises(NotImplementedError):
        d(x)


def test_backends_cudnn_switches():
    c = st.backends.cudnn
    old = (c.enabled, c.benchmark, c.allow_tf32)
    try:
        c.benchmark = True
        c.allow_tf32 = False
        c.enabled = False
        assert (c.enabled, c.benchmark, c.allow_tf32) == (False, True, False)
    finally:
        c.enabled, c.benchmark, c.allow_tf32 = old
    v = c.version()
    assert v is None or v.count(".") == 2
    assert c.is_available() == (v is not None and st.cuda.is_available())
    assert "cudnn(" in repr(c)
    if st.cuda.is_available():
        assert st.describe_device("cuda")["cudnn"] == v


@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_half_types_match_float32(device, causal):
    """The fused attention path in bfloat16/float16 (on the CPU through float32 GEMMs) against
    float32, forward and input gradients."""
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((2, 3, 8, 16)).astype(np.float32) for _ in range(3))
    F = st.nn.functional
    ref_in = [st.tensor(a).to(device).requires_grad_(True) for a in (q, k, v)]
    ref = F.scaled_dot_product_attention(*ref_in, is_causal=causal)
    ref.sum().backward()
    for dt in (st.bfloat16, st.float16):
        ins = [st.tensor(a).to(dt).to(device).requires_grad_(True) for a in (q, k, v)]
        out = F.scaled_dot_product_attention(*ins, is_causal=causal)
        assert out.dtype == dt
        out.to(st.float32).sum().backward()
        np.testing.assert_allclose(to_np(out.to(st.float32)), to_np(ref), rtol=3e-2, atol=3e-2)
        for a, b in zip(ins, ref_in):
            np.testing.assert_allclose(to_np(a.grad.to(st.float32)), to_np(b.grad), rtol=5e-2, atol=8e-2)
