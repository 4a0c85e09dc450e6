"""Autograd nodes with several outputs: a custom Function with two outputs (one node, one backward
call per pass), svd/qr/eigh recording one node for all their factors, and double backward through
such nodes; float64 against central finite differences and, where installed, PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
from conftest import gradcheck, rand_array, st_tensor, to_np
from spiraltorch.autograd import Function


def R(shape, seed=0):
    return rand_array(shape, np.float64, seed=seed, low=-2.0, high=2.0)


class SinCos(Function):
    """(sin x * y, cos x + y): two outputs of two inputs; counts its backward calls."""

    calls = 0

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x.sin() * y, x.cos() + y

    @staticmethod
    def backward(ctx, ga, gb):
        SinCos.calls += 1
        x, y = ctx.saved_tensors
        return ga * x.cos() * y - gb * x.sin(), ga * x.sin() + gb


def test_two_outputs_used_separately_and_jointly():
    x, y = R((2, 3), seed=1), R((2, 3), seed=2)
    SinCos.calls = 0
    gradcheck(lambda a, b: SinCos.apply(a, b)[0], x, y)
    gradcheck(lambda a, b: SinCos.apply(a, b)[1], x, y)
    gradcheck(lambda a, b: SinCos.apply(a, b), x, y)  # both outputs in one loss

    def joint(a, b):
        p, q = SinCos.apply(a, b)
        return p * q + q.exp()  # each output used twice

    gradcheck(joint, x, y)
    # one backward call per pass, however many outputs the pass reached
    assert SinCos.calls == 4


def test_unused_output_gets_zeros_or_none():
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, x, materialize):
            ctx.set_materialize_grads(materialize)
            return x * 2.0, x * 3.0

        @staticmethod
        def backward(ctx, ga, gb):
            seen.append(gb if gb is None else to_np(gb).tolist())
            return ga * 2.0, None

    for materialize in (True, False):
        x = st_tensor(np.array([1.0, 2.0]), dtype=st.float64, requires_grad=True)
        a, _ = Probe.apply(x, materialize)
        a.sum().backward()
        np.testing.assert_array_equal(to_np(x.grad), [2.0, 2.0])
    assert seen == [[0.0, 0.0], None]


def test_double_backward_through_a_multi_output_function():
    xv, yv = R((4,), seed=3), R((4,), seed=4)
    x = st_tensor(xv, dtype=st.float64, requires_grad=True)
    y = st_tensor(yv, dtype=st.float64, requires_grad=True)
    p, q = SinCos.apply(x, y)
    loss = (p * 2.0).sum() + (q * 5.0).sum()
    (gx,) = st.autograd.grad(loss, x, create_graph=True)
    # d loss / dx = 2 y cos x - 5 sin x;  d/dx sum(that) = -2 y sin x - 5 cos x, d/dy = 2 cos x
    np.testing.assert_allclose(to_np(gx), 2 * yv * np.cos(xv) - 5 * np.sin(xv), rtol=0, atol=1e-12)
    gxx, gxy = st.autograd.grad(gx.sum(), [x, y])
    np.testing.assert_allclose(to_np(gxx), -2 * yv * np.sin(xv) - 5 * np.cos(xv), rtol=0, atol=1e-12)
    np.testing.assert_allclose(to_np(gxy), 2 * np.cos(xv), rtol=0, atol=1e-12)


def _sign_fixed(v, axis):
    """Singular/eigen vectors times their own first entry: free of the sign each is defined up to."""
    first = v[..., :1, :] if axis == -2 else v[..., :, :1]
    return v * first


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 3, 3)])
def test_svd_and_qr_gradients_through_one_node(shape):
    a = R(shape, seed=5)

    def svd_all(t):
        u, s, vh = st.linalg.svd(t, full_matrices=False)
        return _sign_fixed(u, -2), s, _sign_fixed(vh, -1)

    def qr_all(t):
        return st.linalg.qr(t)

    gradcheck(svd_all, a)
    gradcheck(qr_all, a)
    t = st_tensor(a, dtype=st.float64, requires_grad=True)
    u, s, vh = st.linalg.svd(t, full_matrices=False)
    assert u.grad_fn == s.grad_fn == vh.grad_fn == "LinalgSvdBackward"
    torch = pytest.importorskip("torch")
    tt = torch.tensor(a, requires_grad=True)
    tu, ts, tvh = torch.linalg.svd(tt, full_matrices=False)
    loss_t = (_sign_fixed(tu, -2) * 1.5).sum() + (ts * ts).sum() + _sign_fixed(tvh, -1).sum()
    loss_t.backward()
    loss = (_sign_fixed(u, -2) * 1.5).sum() + (s * s).sum() + _sign_fixed(vh, -1).sum()
    loss.backward()
    np.testing.assert_allclose(to_np(t.grad), tt.grad.numpy(), rtol=0, atol=1e-9)


def test_double_backward_through_qr_and_eigh():
    torch = pytest.importorskip("torch")
    a = R((4, 3), seed=6)
    t = st_tensor(a, dtype=st.float64, requires_grad=True)
    q, r = st.linalg.qr(t)
    (g,) = st.autograd.grad((q * q * q).sum() + (r * r).sum(), t, create_graph=True)
    (gg,) = st.autograd.grad((g * g).sum(), t)
    tt = torch.tensor(a, requires_grad=True)
    tq, tr = torch.linalg.qr(tt)
    (tg,) = torch.autograd.grad((tq * tq * tq).sum() + (tr * tr).sum(), tt, create_graph=True)
    (tgg,) = torch.autograd.grad((tg * tg).sum(), tt)
    np.testing.assert_allclose(to_np(g), tg.detach().numpy(), rtol=0, atol=1e-9)
    np.testing.assert_allclose(to_np(gg), tgg.numpy(), rtol=0, atol=1e-8)



def test_eigh_gradient_through_one_node():
    def eigh_all(t):
        w, v = st.linalg.eigh((t + t.transpose(0, 1)) * 0.5)
        return w, _sign_fixed(v, -2)

    gradcheck(eigh_all, R((4, 4), seed=7))


def test_split_chunk_unbind_are_one_node_with_double_backward():
    torch = pytest.importorskip("torch")
    a = R((6, 4), seed=8)
    parts = st_tensor(a, dtype=st.float64, requires_grad=True).split(4)
    assert [p.grad_fn for p in parts] == ["SplitBackward", "SplitBackward"]

    def pieces(t):
        c = t.chunk(3, 0)
        u = t.unbind(1)
        return c[0] * c[2], (u[1] * u[3]).sum()  # c[1], u[0] and u[2] unused

    gradcheck(pieces, a)
    x = st_tensor(a, dtype=st.float64, requires_grad=True)
    xt = torch.tensor(a, requires_grad=True)
    grads = []
    for lib, t in (("st", x), ("torch", xt)):
        p = t.split(3)
        u = t.unbind(1)
        loss = (p[0] * p[0] * p[1]).sum() + (u[0] * u[2] * u[2]).sum()
        autograd = st.autograd if lib == "st" else torch.autograd
        (g,) = autograd.grad(loss, t, create_graph=True)
        (gg,) = autograd.grad((g * g).sum(), t)
        grads.append((to_np(g) if lib == "st" else g.detach().numpy(), to_np(gg) if lib == "st" else gg.numpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=0, atol=1e-10)
