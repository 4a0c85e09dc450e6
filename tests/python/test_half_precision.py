"""float16 and bfloat16 on every device: values and gradients of the common ops against the
same computation in float32 on the same (already rounded) inputs.

A half-precision result may differ from the float32 one by the rounding of its output and of
any half-precision intermediates, so tolerances scale with the format's unit roundoff
(2^-11 for float16, 2^-8 for bfloat16)."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.nn.functional as F
from conftest import tensor_on

HALF = [st.float16, st.bfloat16]
EPS = {st.float16: 2.0 ** -11, st.bfloat16: 2.0 ** -8}


def _inputs(shape, dtype, device, seed, positive=False):
    """A half tensor on `device` and the float32 tensor on the CPU with exactly its values."""
    g = np.random.default_rng(seed)
    a = g.uniform(0.25, 2.0, size=shape) if positive else g.uniform(-2.0, 2.0, size=shape)
    half = tensor_on(a.astype(np.float32), device=device).to(dtype)
    ref = half.cpu().float()
    return half, ref


def _check(out, ref, dtype, what, ulps=8.0, floor=1.0):
    assert out.dtype == dtype, f"{what}: dtype {out.dtype}"
    got = out.detach().cpu().float().numpy().astype(np.float64)
    want = ref.detach().cpu().float().numpy().astype(np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape} vs {want.shape}"
    # Relative to the output's magnitude, with a floor so values near zero compare absolutely.
    scale = np.maximum(np.abs(want), floor)
    err = np.max(np.abs(got - want) / scale) if got.size else 0.0
    assert err <= ulps * EPS[dtype], f"{what}: error {err:.3g} > {ulps} ulp of {dtype}"


UNARY = {
    "neg": st.neg, "abs": st.abs, "exp": st.exp, "tanh": st.tanh, "sigmoid": st.sigmoid, "relu": st.relu,
    "sin": st.sin, "cos": st.cos, "square": st.square, "gelu": F.gelu, "silu": F.silu, "expm1": st.expm1,
}
POSITIVE_UNARY = {"log": st.log, "sqrt": st.sqrt, "rsqrt": st.rsqrt, "reciprocal": st.reciprocal,
                  "log1p": st.log1p}


@pytest.mark.parametrize("dtype", HALF, ids=str)
@pytest.mark.parametrize("name", list(UNARY) + list(POSITIVE_UNARY))
def test_unary_value_and_grad(name, dtype, device):
    f = UNARY.get(name) or POSITIVE_UNARY[name]
    x, xr = _inputs((7, 33), dtype, device, seed=len(name), positive=name in POSITIVE_UNARY)
    _check(f(x), f(xr), dtype, name)
    x.requires_grad_(True)
    xr.requires_grad_(True)
    w, wr = _inputs((7, 33), dtype, device, seed=99)
    (f(x) * w).sum().backward()
    (f(xr) * wr).sum().backward()
    assert x.grad.dtype == dtype and str(x.grad.device) == str(x.device)
    _check(x.grad, xr.grad, dtype, f"d {name}", ulps=16.0)


BINARY = {"add": st.add, "sub": st.sub, "mul": st.mul, "div": st.div, "maximum": st.maximum,
          "minimum": st.minimum}


@pytest.mark.parametrize("dtype", HALF, ids=str)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_broadcast_value_and_grad(name, dtype, device):
    f = BINARY[name]
    a, ar = _inputs((5, 1, 9), dtype, device, seed=1)
    b, br = _inputs((4, 9), dtype, device, seed=2, positive=name == "div")
    _check(f(a, b), f(ar, br), dtype, name)
    for t in (a, ar, b, br):
        t.requires_grad_(True)
    f(a, b).sum().backward()
    f(ar, br).sum().backward()
    # Summing a broadcast gradient over 4 or 5 terms rounds in half precision.
    _check(a.grad, ar.grad, dtype, f"d{name}/da", ulps=16.0)
    _check(b.grad, br.grad, dtype, f"d{name}/db", ulps=16.0)


@pytest.mark.parametrize("dtype", HALF, ids=str)
def test_reductions(dtype, device):
    x, xr = _inputs((6, 130, 5), dtype, device, seed=3)
    for dims in ([1], [0, 2], None):
        kw = {} if dims is None else {"dim": dims}
        # Sums of signed terms lose relative accuracy where they cancel: compare against the
        # sum of magnitudes.
        mag = st.sum(st.abs(xr), **kw)
        _check(st.sum(x, **kw), st.sum(xr, **kw), dtype, f"sum {dims}", ulps=4.0, floor=mag.abs().max().item())
        _check(st.mean(x, **kw), st.mean(xr, **kw), dtype, f"mean {dims}", ulps=4.0, floor=1.0)
    _check(st.amax(x, dim=1), st.amax(xr, dim=1), dtype, "amax")
    _check(st.amin(x, dim=1), st.amin(xr, dim=1), dtype, "amin")
    np.testing.assert_array_equal(st.argmax(x, dim=1).cpu().numpy(), st.argmax(xr, dim=1).numpy())
    _check(st.var(x, dim=1), st.var(xr, dim=1), dtype, "var", ulps=8.0)
    _check(st.logsumexp(x, dim=1), st.logsumexp(xr, dim=1), dtype, "logsumexp", ulps=4.0)
    _check(st.cumsum(x, 1), st.cumsum(xr, 1), dtype, "cumsum", ulps=4.0, floor=10.0)


@pytest.mark.parametrize("dtype", HALF, ids=str)
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "layer_norm"])
def test_row_kernels_value_and_grad(name, dtype, device):
    cols = 257
    x, xr = _inputs((9, cols), dtype, device, seed=4)
    g, gr = _inputs((9, cols), dtype, device, seed=5)
    if name == "layer_norm":
        w, wr = _inputs((cols,), dtype, device, seed=6)
        b, br = _inputs((cols,), dtype, device, seed=7)
        for t in (w, wr, b, br):
            t.requires_grad_(True)

        def f(t, half):
            return F.layer_norm(t, [cols], w if half else wr, b if half else br)
    else:
        def f(t, half):
            return getattr(st, name)(t, -1)
    x.requires_grad_(True)
    xr.requires_grad_(True)
    y, yr = f(x, True), f(xr, False)
    _check(y, yr, dtype, name, ulps=8.0)
    y.backward(g)
    yr.backward(gr)
    _check(x.grad, xr.grad, dtype, f"d {name}", ulps=16.0, floor=max(1.0, xr.grad.abs().max().item()))
    if name == "layer_norm":
        # Parameter gradients sum over the 9 rows.
        _check(w.grad, wr.grad, dtype, "d weight", ulps=16.0, floor=wr.grad.abs().max().item())
        _check(b.grad, br.grad, dtype, "d bias", ulps=16.0, floor=br.grad.abs().max().item())


@pytest.mark.parametrize("dtype", HALF, ids=str)
def test_linear_layer_and_loss_train_in_half(dtype, device):
    # A Linear layer cast to half precision: forward, cross-entropy, backward, one SGD step,
    # against the float32 layer holding the same rounded weights.
    st.manual_seed(0)
    lin = st.nn.Linear(24, 5).to(dtype).to(device)
    ref = st.nn.Linear(24, 5)
    ref.load_state_dict({k: v.cpu().float() for k, v in lin.state_dict().items()})
    x, xr = _inputs((16, 24), dtype, device, seed=8)
    target = tensor_on(np.arange(16) % 5, device=device)
    logits, logits_r = lin(x), ref(xr)
    _check(logits, logits_r, dtype, "linear", ulps=16.0, floor=2.0)
    loss = F.cross_entropy(logits, target)
    loss_r = F.cross_entropy(logits_r, target.cpu())
    _check(loss, loss_r, dtype, "cross_entropy", ulps=16.0)
    loss.backward()
    loss_r.backward()
    _check(lin.weight.grad, ref.weight.grad, dtype, "d weight", ulps=32.0,
           floor=ref.weight.grad.abs().max().item())
    st.optim.SGD(lin.parameters(), lr=0.5).step()
    st.optim.SGD(ref.parameters(), lr=0.5).step()
    _check(lin.weight.detach(), ref.weight.detach(), dtype, "weight after a step", ulps=4.0)


@pytest.mark.parametrize("dtype", HALF, ids=str)
def test_matmul_batched_value_and_grad(dtype, device):
    a, ar = _inputs((3, 20, 40), dtype, device, seed=9)
    b, br = _inputs((40, 12), dtype, device, seed=10)
    for t in (a, ar, b, br):
        t.requires_grad_(True)
    y, yr = st.matmul(a, b), st.matmul(ar, br)
    # A dot product of 40 terms of size up to 4: the float32 accumulation differs from the
    # reference only by the final rounding, relative to the sum of magnitudes.
    _check(y, yr, dtype, "matmul", ulps=4.0, floor=40.0)
    y.sum().backward()
    yr.sum().backward()
    _check(a.grad, ar.grad, dtype, "d a", ulps=4.0, floor=12.0 * 2)
    _check(b.grad, br.grad, dtype, "d b", ulps=4.0, floor=60.0 * 2)


@pytest.mark.parametrize("dtype", HALF, ids=str)
def test_python_numbers_keep_their_precision_like_torch(dtype, device):
    """A number the half type cannot hold (0.1, 4e6) is used at float32 precision, not rounded to the
    half type first (x / 4e6 in float16 was x / inf = 0); results and dtypes as PyTorch's (on the CPU)."""
    torch = pytest.importorskip("torch")
    tdt = {st.float16: torch.float16, st.bfloat16: torch.bfloat16}[dtype]
    v = np.array([1000.0, 1e-3, -3.5, 60000.0], dtype=np.float32)
    x, t = tensor_on(v, device).to(dtype), torch.from_numpy(v).to(tdt)
    cases = [(lambda a: a / 4e6), (lambda a: a * 0.1), (lambda a: a + 1e-4), (lambda a: a - 0.3),
             (lambda a: a ** 0.5), (lambda a: a[0] * 0.1), (lambda a: a * 100000), (lambda a: a / 70000)]
    for f in cases:
        got, want = f(x), f(t)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got.to(st.float32).cpu().numpy(), want.float().numpy())
    # number / tensor: PyTorch multiplies by the tensor's reciprocal rounded to the half type (4e6 / 1000
    # gives 4002 in float16); here one float32 division and one rounding (4000).
    for f in (lambda a: 4e6 / a, lambda a: 0.7 / a[1]):
        got = f(x).to(st.float32).cpu().numpy()
        exact = f(t.double()).to(tdt).float().numpy()  # from the same half values, rounded once
        np.testing.assert_array_equal(got, exact)
    big = np.full(100000, 0.5, dtype=np.float32)
    assert tensor_on(big, device).to(dtype).mean().to(st.float32).item() == torch.from_numpy(big).to(tdt).mean().item()
    assert tensor_on(big, device).to(dtype).var().to(st.float32).item() == 0.0
