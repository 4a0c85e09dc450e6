"""Tensor.register_hook and Tensor.register_post_accumulate_grad_hook: the same graphs and hooks run
through SpiralTorch and PyTorch side by side give the same gradients, calls and call order."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st

torch = pytest.importorskip("torch")


def both(values):
    a = np.asarray(values, dtype=np.float64)
    return (st.tensor(a).requires_grad_(True), torch.tensor(a, requires_grad=True))


def test_leaf_hook_scales_the_summed_gradient_like_torch():
    xs, xt = both([1.0, -2.0, 0.5])
    calls = {"st": [], "torch": []}
    for lib, x in (("st", xs), ("torch", xt)):
        x.register_hook(lambda g, lib=lib: calls[lib].append(np.array(g.tolist())) or g * 10)
    for x in (xs, xt):
        ((x * x).sum() + (3 * x).sum()).backward()  # two uses: one call with their sum
    assert len(calls["st"]) == len(calls["torch"]) == 1
    np.testing.assert_allclose(calls["st"][0], calls["torch"][0])
    np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy())


def test_non_leaf_hooks_chain_in_order_and_reach_retain_grad():
    xs, xt = both([[1.0, 2.0], [3.0, -4.0]])
    grads = {}
    for lib, x in (("st", xs), ("torch", xt)):
        y = (x * 2).tanh()
        y.retain_grad()
        order = []
        y.register_hook(lambda g, order=order: order.append("a") or g * 3)
        y.register_hook(lambda g, order=order: order.append("b"))  # None keeps the gradient
        (y * y).sum().backward()
        grads[lib] = (order, np.array(y.grad.tolist()), np.array(x.grad.tolist()))
    assert grads["st"][0] == grads["torch"][0] == ["a", "b"]
    np.testing.assert_allclose(grads["st"][1], grads["torch"][1], rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(grads["st"][2], grads["torch"][2], rtol=1e-9, atol=1e-15)


def test_hooks_apply_under_autograd_grad():
    """Leaf and non-leaf hooks shape what autograd.grad returns, and nothing lands in .grad. (PyTorch
    skips a non-leaf input's hook when a leaf is asked for in the same call; each alone matches.)"""
    xs, xt = both([1.0, 2.0])
    out = {}
    for lib, x, grad in (("st", xs, st.autograd.grad), ("torch", xt, torch.autograd.grad)):
        y = x * x
        x.register_hook(lambda g: g + 1)
        y.register_hook(lambda g: g * 0.5)
        (gx,) = grad(y.sum(), [x], retain_graph=True)
        (gy,) = grad(y.sum(), [y])
        out[lib] = (np.array(gx.tolist()), np.array(gy.tolist()))
        assert x.grad is None
    np.testing.assert_allclose(out["st"][0], out["torch"][0])
    np.testing.assert_allclose(out["st"][0], [2.0, 3.0])  # 0.5 * 2x + 1
    np.testing.assert_allclose(out["st"][1], out["torch"][1])


def test_handle_remove_and_with_block():
    x = st.tensor([1.0, 2.0], dtype=st.float64).requires_grad_(True)
    calls = []
    handle = x.register_hook(lambda g: calls.append(1))
    assert isinstance(handle, st._core.TensorHookHandle) and handle.id > 0
    (x * 2).sum().backward()
    handle.remove()
    handle.remove()  # idempotent
    (x * 2).sum().backward()
    assert calls == [1]
    with x.register_hook(lambda g: g * 0):
        x.grad = None
        (x * 2).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])
    x.grad = None
    (x * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def test_gradient_hook_in_a_training_loop_clips_like_torch():
    """A per-parameter clipping hook (a common use) gives PyTorch's updated weights."""
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((4, 3))
    xdata = rng.standard_normal((8, 3))
    ws, wt = both(w0)
    for w in (ws, wt):
        w.register_hook(lambda g: g.clamp(-0.1, 0.1))
    for w, lib in ((ws, st), (wt, torch)):
        opt = lib.optim.SGD([w], lr=0.5)
        for _ in range(3):
            opt.zero_grad()
            x = lib.tensor(xdata)
            ((x @ w.t()) ** 2).mean().backward()
            opt.step()
    np.testing.assert_allclose(ws.detach().numpy(), wt.detach().numpy(), rtol=1e-12)


def test_post_accumulate_grad_hook_sees_the_full_grad():
    xs, xt = both([1.0, 1.0])
    seen = {}

    def keep(lib):
        def hook(t):  # a post-accumulate hook returns nothing (PyTorch refuses anything else)
            seen[lib] = np.array(t.grad.tolist())
        return hook

    for lib, x in (("st", xs), ("torch", xt)):
        x.register_hook(lambda g: g * 2)
        x.register_post_accumulate_grad_hook(keep(lib))
        ((x * 1).sum() + (x * 4).sum()).backward()
    np.testing.assert_allclose(seen["st"], seen["torch"])
    np.testing.assert_allclose(seen["st"], [10.0, 10.0])
    handle = xs.register_post_accumulate_grad_hook(lambda t: seen.__setitem__("again", True))
    handle.remove()
    (xs * 1).sum().backward()
    assert "again" not in seen


def test_bad_hooks_are_clear_errors_and_leave_grad_untouched():
    c = st.tensor([1.0, 2.0])
    with pytest.raises(st.SpiralError, match="does not require grad"):
        c.register_hook(lambda g: g)
    x = st.tensor([1.0, 2.0], dtype=st.float64).requires_grad_(True)
    h = x.register_hook(lambda g: st.zeros(3, dtype=st.float64))
    with pytest.raises(st.ShapeError, match=r"shape \(3,\) for a gradient of shape \(2,\)"):
        (x * 2).sum().backward()
    assert x.grad is None
    h.remove()
    h = x.register_hook(lambda g: "not a tensor")
    with pytest.raises(st.DtypeError, match="must return a Tensor or None, got str"):
        (x * 2).sum().backward()
    h.remove()
    h = x.register_hook(lambda g: g.to(st.float32))
    with pytest.raises(st.DtypeError, match="float32 gradient for a float64"):
        (x * 2).sum().backward()
    h.remove()

    def boom(g):
        raise KeyError("from the hook")

    x.register_hook(boom)
    with pytest.raises(KeyError, match="from the hook"):
        (x * 2).sum().backward()
