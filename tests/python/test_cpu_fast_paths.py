"""The CPU fast paths of issue #20 against NumPy/PyTorch: native bfloat16/float16 elementwise
kernels (float32 math, one rounding), the SIMD float32 softmax cross-entropy, the vectorised
attention softmax and the multi-tensor Adam/AdamW step."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.nn.functional as F

torch = pytest.importorskip("torch")

HALF = [(st.bfloat16, torch.bfloat16), (st.float16, torch.float16)]


def _half_pair(shape, sdt, tdt, seed, positive=False):
    g = np.random.default_rng(seed)
    a = (g.uniform(0.25, 3.0, size=shape) if positive else g.uniform(-3.0, 3.0, size=shape)).astype(np.float32)
    t = torch.tensor(a).to(tdt)
    s = st.tensor(t.float().numpy()).to(sdt)  # exactly the same half values
    return s, t


def _bits(x):
    """The raw 16 bits of a half tensor (spiraltorch or torch) as uint16."""
    if isinstance(x, torch.Tensor):
        return x.contiguous().view(torch.int16).numpy().view(np.uint16)
    return torch.tensor(x.float().numpy()).to(torch.bfloat16 if x.dtype == st.bfloat16 else torch.float16) \
        .view(torch.int16).numpy().view(np.uint16)


@pytest.mark.parametrize("sdt,tdt", HALF)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum", "minimum"])
def test_half_binary_is_float32_math_rounded_once(sdt, tdt, op):
    a, ta = _half_pair((67, 129), sdt, tdt, 1)
    b, tb = _half_pair((67, 129), sdt, tdt, 2, positive=op == "div")
    out = getattr(st, op)(a, b)
    want = getattr(torch, op)(ta.float(), tb.float()).to(tdt)  # float32 math, one rounding
    assert out.dtype == sdt
    np.testing.assert_array_equal(_bits(out), _bits(want))


@pytest.mark.parametrize("sdt,tdt", HALF)
def test_half_binary_broadcast_scalar_and_strided(sdt, tdt):
    a, ta = _half_pair((33, 40), sdt, tdt, 3)
    row, trow = _half_pair((40,), sdt, tdt, 4)
    np.testing.assert_array_equal(_bits(a * row), _bits((ta.float() * trow.float()).to(tdt)))
    np.testing.assert_array_equal(_bits(a.T + a.T), _bits((ta.float().T + ta.float().T).to(tdt)))
    np.testing.assert_array_equal(_bits(a * 3.0), _bits((ta.float() * 3.0).to(tdt)))
    cmp = a > row
    assert cmp.dtype == st.bool
    np.testing.assert_array_equal(cmp.numpy(), (ta > trow).numpy())


@pytest.mark.parametrize("sdt,tdt", HALF)
def test_half_nan_inf_round_like_torch(sdt, tdt):
    vals = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 65504.0, 3.0e38, 1e-40, -2.5], np.float32)
    t = torch.tensor(vals).to(tdt)
    s = st.tensor(t.float().numpy()).to(sdt)
    got = (s + s).float().numpy()
    want = (t.float() + t.float()).to(tdt).float().numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~np.isnan(got)], want[~np.isnan(want)])
    np.testing.assert_array_equal(st.isnan(s).numpy(), torch.isnan(t).numpy())
    np.testing.assert_array_equal(st.isinf(s).numpy(), torch.isinf(t).numpy())


@pytest.mark.parametrize("sdt,tdt", HALF)
@pytest.mark.parametrize("fn", ["gelu", "gelu_tanh", "sigmoid", "tanh", "relu", "silu", "exp", "neg", "abs"])
def test_half_unary_matches_float32_then_round(sdt, tdt, fn):
    a, ta = _half_pair((70, 130), sdt, tdt, 5)
    s_fn = {"gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"), "sigmoid": st.sigmoid,
            "tanh": st.tanh, "relu": F.relu, "silu": F.silu, "exp": st.exp, "neg": st.neg, "abs": st.abs}[fn]
    t_fn = {"gelu": torch.nn.functional.gelu, "gelu_tanh": lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
            "sigmoid": torch.sigmoid, "tanh": torch.tanh, "relu": torch.relu, "silu": torch.nn.functional.silu,
            "exp": torch.exp, "neg": torch.neg, "abs": torch.abs}[fn]
    out = s_fn(a)
    assert out.dtype == sdt
    got = out.float().numpy().astype(np.float64)
    want = t_fn(ta.float()).to(tdt).float().numpy().astype(np.float64)
    ulp = 2.0 ** -8 if sdt == st.bfloat16 else 2.0 ** -11
    # Our float32 vector math may differ from libm by a few float32 ulp, which can flip one rounding:
    # one unit in the last place, up to 2 eps relative at the bottom of a binade.
    assert np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-2)) <= 2.01 * ulp


@pytest.mark.parametrize("sdt,tdt", HALF)
def test_half_gelu_backward_matches_torch(sdt, tdt):
    a, ta = _half_pair((64, 96), sdt, tdt, 6)
    g, tg = _half_pair((64, 96), sdt, tdt, 7)
    a.requires_grad_(True)
    F.gelu(a).backward(g)
    tf = ta.float().requires_grad_(True)
    torch.nn.functional.gelu(tf).backward(tg.float())
    assert a.grad.dtype == sdt
    ulp = 2.0 ** -8 if sdt == st.bfloat16 else 2.0 ** -11
    got = a.grad.float().numpy().astype(np.float64)
    want = tf.grad.to(tdt).float().numpy().astype(np.float64)
    assert np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-2)) <= 2.01 * ulp


# ---------------------------------------------------------------- softmax cross-entropy (float32 SIMD rows)

@pytest.mark.parametrize("kw", [{}, {"label_smoothing": 0.1}, {"weight": True}, {"ignore_index": 3},
                                {"reduction": "sum"}, {"weight": True, "label_smoothing": 0.2}])
@pytest.mark.parametrize("classes", [7, 1000])
def test_cross_entropy_float32_matches_torch(kw, classes):
    rng = np.random.default_rng(8)
    x = (rng.standard_normal((37, classes)) * 4).astype(np.float32)
    y = rng.integers(0, classes, 37)
    y[::5] = 3
    w = rng.uniform(0.5, 2.0, classes).astype(np.float32)
    skw, tkw = dict(kw), dict(kw)
    if kw.get("weight"):
        skw["weight"], tkw["weight"] = st.tensor(w), torch.tensor(w)
    sx = st.tensor(x).requires_grad_(True)
    tx = torch.tensor(x, requires_grad=True)
    ls = F.cross_entropy(sx, st.tensor(y), **skw)
    lt = torch.nn.functional.cross_entropy(tx, torch.tensor(y), **tkw)
    np.testing.assert_allclose(ls.item(), lt.item(), rtol=2e-6, atol=1e-6)
    ls.backward()
    lt.backward()
    np.testing.assert_allclose(sx.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=2e-7)


def test_cross_entropy_float32_grad_matches_float64_finite_differences():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((5, 300))
    y = rng.integers(0, 300, 5)
    x32 = st.tensor(x.astype(np.float32)).requires_grad_(True)
    F.cross_entropy(x32, st.tensor(y), label_smoothing=0.05).backward()
    x64 = x.astype(np.float32).astype(np.float64)

    def loss64(v):
        return F.cross_entropy(st.tensor(v), st.tensor(y), label_smoothing=0.05).item()

    fd = np.zeros_like(x64)
    h = 1e-6
    for i in range(5):
        for j in list(range(0, 300, 37)) + [int(y[i])]:
            e = np.zeros_like(x64)
            e[i, j] = h
            fd[i, j] = (loss64(x64 + e) - loss64(x64 - e)) / (2 * h)
    mask = fd != 0
    np.testing.assert_allclose(x32.grad.numpy()[mask], fd[mask], rtol=1e-4, atol=1e-7)


def test_cross_entropy_float32_extreme_rows():
    x = np.array([[0.0, -np.inf, 1.0], [-np.inf, -np.inf, -np.inf], [np.nan, 0.0, 1.0], [1e30, -1e30, 0.0]], np.float32)
    y = np.array([0, 0, 1, 0])
    ls = F.cross_entropy(st.tensor(x), st.tensor(y), reduction="none").numpy()
    lt = torch.nn.functional.cross_entropy(torch.tensor(x), torch.tensor(y), reduction="none").numpy()
    np.testing.assert_array_equal(np.isnan(ls), np.isnan(lt))
    finite = np.isfinite(lt)
    np.testing.assert_allclose(ls[finite], lt[finite], rtol=1e-6)


# ---------------------------------------------------------------- attention softmax (vexp rows)

@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("L,S", [(128, 128), (33, 70)])
def test_sdpa_float32_matches_torch(causal, L, S):
    if causal and L != S:
        pytest.skip("torch's is_causal is square-aligned here")
    rng = np.random.default_rng(10)
    q, k, v = (rng.standard_normal((2, 3, n, 32)).astype(np.float32) for n in (L, S, S))
    sq, sk, sv = (st.tensor(a).requires_grad_(True) for a in (q, k, v))
    tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in (q, k, v))
    so = F.scaled_dot_product_attention(sq, sk, sv, is_causal=causal)
    to = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)
    np.testing.assert_allclose(so.detach().numpy(), to.detach().numpy(), rtol=1e-4, atol=2e-5)
    g = rng.standard_normal(so.shape).astype(np.float32)
    so.backward(st.tensor(g))
    to.backward(torch.tensor(g))
    for s, t in ((sq, tq), (sk, tk), (sv, tv)):
        np.testing.assert_allclose(s.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=5e-5)


# ---------------------------------------------------------------- multi-tensor Adam / AdamW

SHAPES = [(3,), (257, 129), (8192,), (8193,), (40, 1000), (1,)]


@pytest.mark.parametrize("name,kw", [("Adam", {}), ("AdamW", {"weight_decay": 0.05}), ("Adam", {"weight_decay": 0.01}),
                                     ("Adam", {"amsgrad": True}), ("AdamW", {"maximize": True, "amsgrad": True}),
                                     ("Adam", {"betas": (0.3, 0.9)})])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multi_tensor_adam_matches_torch(name, kw, dtype):
    rng = np.random.default_rng(11)
    npd = np.float32 if dtype == "float32" else np.float64
    init = [rng.standard_normal(s).astype(npd) for s in SHAPES]
    sp = [st.tensor(a).requires_grad_(True) for a in init]
    tp = [torch.tensor(a, requires_grad=True) for a in init]
    so = getattr(st.optim, name)(sp, lr=1e-2, **kw)
    to = getattr(torch.optim, name)(tp, lr=1e-2, foreach=False, **kw)
    for step in range(4):
        grads = [rng.standard_normal(s).astype(npd) for s in SHAPES]
        for s, t, g in zip(sp, tp, grads):
            s.grad = st.tensor(g)
            t.grad = torch.tensor(g)
        so.step()
        to.step()
    tol = dict(rtol=2e-6, atol=2e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-12)
    for s, t in zip(sp, tp):
        np.testing.assert_allclose(s.detach().numpy(), t.detach().numpy(), **tol)
