"""Basic layers (Embedding, Dropout, Identity, Flatten, activations, LayerNorm,
BatchNorm1d/2d) and their functional forms, against torch.nn and finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.nn as nn
import spiraltorch.nn.functional as F
from conftest import same_device, tensor_on

DTYPES = [("float32", 1e-5, np.float32), ("float64", 1e-10, np.float64)]


# ---------------------------------------------------------------- helpers

def to_st(a, requires_grad=False, device="cpu"):
    return tensor_on(np.ascontiguousarray(a), device, requires_grad=requires_grad)


def to_np(t):
    return t.detach().cpu().numpy()


def torch_key(key: str) -> str:
    """Our state-dict key ("0::weight", "enc.0::weight") as PyTorch spells it."""
    return key.replace("::", ".")


def copy_from_torch(mod, tmod):
    """Loads a torch module's state dict into ours (keys '<path>.<entry>' -> '<path>::<entry>')."""
    state = {}
    for k, v in tmod.state_dict().items():
        head, _, entry = k.rpartition(".")
        state[f"{head}::{entry}" if head else entry] = v.detach().numpy()
    mod.load_state_dict(state)


def numeric_grad(f, arrays, index, eps=1e-6):
    """Central differences of the scalar f(*arrays) with respect to arrays[index] (float64)."""
    base = [a.copy() for a in arrays]
    g = np.zeros_like(base[index])
    flat = base[index].reshape(-1)
    gflat = g.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        fp = f(*base)
        flat[i] = old - eps
        fm = f(*base)
        flat[i] = old
        gflat[i] = (fp - fm) / (2 * eps)
    return g


def check_grads(fn, arrays, rtol=1e-6, atol=1e-7, seed=0, device="cpu"):
    """fn(*tensors) -> tensor; compares autograd of sum(fn * w) with central differences,
    both computed on ``device``."""
    rng = np.random.default_rng(seed)
    with st.no_grad():
        probe = fn(*[to_st(a, device=device) for a in arrays])
    w = rng.standard_normal(tuple(probe.shape)).astype(np.float64)

    def scalar(*arrs):
        with st.no_grad():
            return float((fn(*[to_st(a, device=device) for a in arrs]) * to_st(w, device=device)).sum().item())

    ts = [to_st(a, requires_grad=True, device=device) for a in arrays]
    (fn(*ts) * to_st(w, device=device)).sum().backward()
    for i, t in enumerate(ts):
        num = numeric_grad(scalar, arrays, i)
        np.testing.assert_allclose(to_np(t.grad), num, rtol=rtol, atol=atol, err_msg=f"input {i}")


# ---------------------------------------------------------------- Embedding

@pytest.mark.parametrize("name,tol,npdt", DTYPES)
@pytest.mark.parametrize("padding_idx", [None, 2, -1])
def test_embedding_matches_torch(name, tol, npdt, padding_idx, device):
    torch = pytest.importorskip("torch")
    tdt = getattr(torch, name)
    temb = torch.nn.Embedding(10, 6, padding_idx=padding_idx).to(tdt)
    emb = nn.Embedding(10, 6, padding_idx=padding_idx)
    emb.to(getattr(st, name))
    copy_from_torch(emb, temb)
    emb.to(device)
    idx = np.array([[1, 2, 9, 2], [0, 9, 5, 1]], dtype=np.int64)
    y = emb(to_st(idx, device=device))
    ty = temb(torch.from_numpy(idx))
    assert tuple(y.shape) == (2, 4, 6)
    np.testing.assert_allclose(to_np(y), ty.detach().numpy(), atol=tol)
    g = np.random.default_rng(1).standard_normal((2, 4, 6)).astype(npdt)
    (y * to_st(g, device=device)).sum().backward()
    (ty * torch.from_numpy(g)).sum().backward()
    np.testing.assert_allclose(to_np(emb.weight.grad), temb.weight.grad.numpy(), atol=tol)
    if padding_idx is not None:
        assert emb.padding_idx == padding_idx % 10
        assert np.all(to_np(emb.weight.grad)[padding_idx % 10] == 0)


def test_embedding_init_and_int32_indices(device):
    emb = nn.Embedding(7, 3, padding_idx=0)
    w = to_np(emb.weight)
    assert w.shape == (7, 3) and emb.weight.requires_grad
    assert np.all(w[0] == 0) and np.any(w[1:] != 0)
    emb.to(device)
    y = emb(tensor_on(np.array([0, 3], dtype=np.int32), device=device))
    np.testing.assert_array_equal(to_np(y), w[[0, 3]])
    assert [k for k, _ in emb.named_parameters()] == ["weight"]


def test_embedding_functional_and_fd(device):
    torch = pytest.importorskip("torch")
    w = np.random.default_rng(0).standard_normal((5, 3))
    idx = np.array([4, 0, 4, 2])
    y = F.embedding(to_st(idx, device=device), to_st(w, device=device))
    np.testing.assert_allclose(to_np(y),
                               torch.nn.functional.embedding(torch.from_numpy(idx), torch.from_numpy(w)).numpy())
    check_grads(lambda wt: F.embedding(to_st(idx, device=device), wt), [w], device=device)


def test_embedding_double_backward(device):
    w = to_st(np.random.default_rng(0).standard_normal((4, 2)), requires_grad=True, device=device)
    idx = to_st(np.array([1, 1, 3]), device=device)
    y = F.embedding(idx, w, padding_idx=3)
    (gw,) = st.autograd.grad((y * y).sum(), w, create_graph=True)
    expected = np.zeros((4, 2))
    expected[1] = 4 * to_np(w)[1]
    np.testing.assert_allclose(to_np(gw), expected, atol=1e-12)
    gw.sum().backward()
    g2 = np.zeros((4, 2))
    g2[1] = 4.0
    np.testing.assert_allclose(to_np(w.grad), g2, atol=1e-12)


def test_embedding_errors(device):
    emb = nn.Embedding(5, 2).to(device)
    with pytest.raises(IndexError, match="out of range"):
        emb(tensor_on([0, 5], device=device))
    with pytest.raises(IndexError, match="out of range"):
        emb(tensor_on([-1], device=device))
    with pytest.raises(st.DtypeError, match=r"Embedding\(5, 2\).*int64"):
        emb(tensor_on([0.0, 1.0], device=device))
    with pytest.raises(ValueError, match="padding_idx"):
        nn.Embedding(5, 2, padding_idx=5)
    with pytest.raises(ValueError, match="positive"):
        nn.Embedding(0, 2)


# ---------------------------------------------------------------- Dropout

def test_dropout_train_statistics_and_backward(device):
    st.manual_seed(0)
    drop = nn.Dropout(0.3)
    assert drop.training and drop.p == 0.3
    x = st.ones(200, 500, requires_grad=True, device=device)
    y = drop(x)
    yn = to_np(y)
    zero_frac = float((yn == 0).mean())
    assert abs(zero_frac - 0.3) < 0.01
    np.testing.assert_allclose(yn[yn != 0], 1 / 0.7, rtol=1e-6)
    y.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), yn, rtol=1e-6)  # grad = mask / (1 - p)


def test_dropout_seeded_and_eval_identity(device):
    drop = nn.Dropout(0.5)
    x = st.randn(64, 64, device=device)
    st.manual_seed(123)
    a = to_np(drop(x))
    st.manual_seed(123)
    b = to_np(drop(x))
    np.testing.assert_array_equal(a, b)
    c = to_np(drop(x))
    assert not np.array_equal(a, c)  # the generator advances
    drop.eval()
    np.testing.assert_array_equal(to_np(drop(x)), to_np(x))
    np.testing.assert_array_equal(to_np(F.dropout(x, 0.5, training=False)), to_np(x))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dropout_edge_probabilities(dtype, device):
    x = st.randn(10, 10, device=device).to(getattr(st, dtype))
    np.testing.assert_array_equal(to_np(F.dropout(x, 0.0)), to_np(x))
    one = F.dropout(x, 1.0)
    assert one.dtype == x.dtype and np.all(to_np(one) == 0)
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError, match="Dropout: probability p"):
            nn.Dropout(p)
        with pytest.raises(ValueError, match="dropout: probability p"):
            F.dropout(x, p)


# ---------------------------------------------------------------- Identity, Flatten

def test_identity_and_flatten(device):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    assert np.array_equal(to_np(nn.Identity(54, unused=0.1)(to_st(x, device=device))), x)
    for s, e in [(1, -1), (0, -1), (1, 2), (2, 3), (-3, -2)]:
        y = nn.Flatten(s, e)(to_st(x, device=device))
        ty = torch.nn.Flatten(s, e)(torch.from_numpy(x))
        assert tuple(y.shape) == tuple(ty.shape)
        np.testing.assert_array_equal(to_np(y), ty.numpy())
    t = to_st(x, requires_grad=True, device=device)
    nn.Flatten()(t).sum().backward()
    np.testing.assert_array_equal(to_np(t.grad), np.ones_like(x))
    with pytest.raises(st.ShapeError, match=r"Flatten\(start_dim=1, end_dim=-1\).*\(5,\)"):
        nn.Flatten()(st.randn(5, device=device))
    assert [k for k, _ in nn.Flatten().named_parameters()] == []


# ---------------------------------------------------------------- activations

ACTIVATIONS = [
    (lambda: nn.ReLU(), "ReLU", {}),
    (lambda: nn.GELU(), "GELU", {}),
    (lambda: nn.GELU(approximate="tanh"), "GELU", {"approximate": "tanh"}),
    (lambda: nn.SiLU(), "SiLU", {}),
    (lambda: nn.Tanh(), "Tanh", {}),
    (lambda: nn.Sigmoid(), "Sigmoid", {}),
    (lambda: nn.Softmax(dim=-1), "Softmax", {"dim": -1}),
    (lambda: nn.Softmax(dim=1), "Softmax", {"dim": 1}),
    (lambda: nn.Softmax(0), "Softmax", {"dim": 0}),
]


@pytest.mark.parametrize("name,tol,npdt", DTYPES)
@pytest.mark.parametrize("make,tname,kwargs", ACTIVATIONS)
def test_activation_matches_torch(make, tname, kwargs, name, tol, npdt, device):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(npdt) * 3
    g = np.random.default_rng(1).standard_normal((3, 4, 5)).astype(npdt)
    t = to_st(x, requires_grad=True, device=device)
    y = make()(t)
    (y * to_st(g, device=device)).sum().backward()
    tx = torch.from_numpy(x).requires_grad_()
    ty = getattr(torch.nn, tname)(**kwargs)(tx)
    (ty * torch.from_numpy(g)).sum().backward()
    np.testing.assert_allclose(to_np(y), ty.detach().numpy(), atol=tol, rtol=tol)
    np.testing.assert_allclose(to_np(t.grad), tx.grad.numpy(), atol=5 * tol, rtol=5 * tol)


@pytest.mark.parametrize("make", [m for m, _, _ in ACTIVATIONS])
def test_activation_grad_fd(make, device):
    x = np.random.default_rng(2).standard_normal((3, 4)) * 2
    x[np.abs(x) < 1e-3] = 0.5  # keep away from the ReLU kink
    check_grads(lambda t: make()(t), [x], device=device)


def test_activation_functional_and_errors(device):
    x = st.randn(3, 4, device=device)
    np.testing.assert_allclose(to_np(F.gelu(x, approximate="tanh")), to_np(nn.GELU("tanh")(x)))
    np.testing.assert_allclose(to_np(F.softmax(x, dim=0)), to_np(nn.Softmax(0)(x)))
    np.testing.assert_allclose(to_np(F.relu(x)), np.maximum(to_np(x), 0))
    with pytest.raises(ValueError, match="approximate"):
        nn.GELU("fast")
    with pytest.raises(st.ShapeError, match=r"Softmax\(dim=2\).*\(3, 4\)"):
        nn.Softmax(dim=2)(x)
    assert repr(nn.GELU("tanh")) == "GELU(approximate='tanh')"


# ---------------------------------------------------------------- LayerNorm

LN_CASES = [((4, 8), 8, {}), ((2, 3, 4, 5), (4, 5), {}), ((6, 16), [16], {"elementwise_affine": False}),
            ((3, 2, 7), 7, {"bias": False}), ((5,), 5, {})]


@pytest.mark.parametrize("name,tol,npdt", DTYPES)
@pytest.mark.parametrize("shape,norm,kwargs", LN_CASES)
def test_layer_norm_matches_torch(shape, norm, kwargs, name, tol, npdt, device):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    tln = torch.nn.LayerNorm(norm, **kwargs).to(getattr(torch, name))
    with torch.no_grad():
        for p in tln.parameters():
            p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape))))
    ln = nn.LayerNorm(norm, **kwargs)
    ln.to(getattr(st, name))
    assert [(k, tuple(v.shape)) for k, v in ln.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tln.state_dict().items()]
    copy_from_torch(ln, tln)
    ln.to(device)
    x = (rng.standard_normal(shape) * 3 + 1).astype(npdt)
    g = rng.standard_normal(shape).astype(npdt)
    t = to_st(x, requires_grad=True, device=device)
    y = ln(t)
    (y * to_st(g, device=device)).sum().backward()
    tx = torch.from_numpy(x).requires_grad_()
    ty = tln(tx)
    (ty * torch.from_numpy(g)).sum().backward()
    np.testing.assert_allclose(to_np(y), ty.detach().numpy(), atol=tol, rtol=tol)
    np.testing.assert_allclose(to_np(t.grad), tx.grad.numpy(), atol=10 * tol, rtol=10 * tol)
    for (k, p) in ln.named_parameters():
        np.testing.assert_allclose(to_np(p.grad), getattr(tln, k).grad.numpy(), atol=10 * tol, rtol=10 * tol)


def test_layer_norm_fd_gradients(device):
    rng = np.random.default_rng(3)
    x, w, b = rng.standard_normal((3, 2, 5)), rng.standard_normal((2, 5)), rng.standard_normal((2, 5))
    check_grads(lambda xt, wt, bt: F.layer_norm(xt, (2, 5), wt, bt, 1e-5), [x, w, b], device=device)
    check_grads(lambda xt: F.layer_norm(xt, 5), [x], device=device)
    check_grads(lambda xt, wt: F.layer_norm(xt, [5], wt, None, 0.1), [x, rng.standard_normal(5)], device=device)


def test_layer_norm_double_backward_matches_torch(device):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    x, w, b = rng.standard_normal((4, 6)), rng.standard_normal(6), rng.standard_normal(6)
    ts = [to_st(a, requires_grad=True, device=device) for a in (x, w, b)]
    tt = [torch.from_numpy(a).requires_grad_() for a in (x, w, b)]
    y = F.layer_norm(ts[0], 6, ts[1], ts[2])
    ty = torch.nn.functional.layer_norm(tt[0], (6,), tt[1], tt[2])
    gs = st.autograd.grad((y ** 3).sum(), ts, create_graph=True)
    tgs = torch.autograd.grad((ty ** 3).sum(), tt, create_graph=True)
    for a, e in zip(gs, tgs):
        np.testing.assert_allclose(to_np(a), e.detach().numpy(), atol=1e-9)
    sum((g * g).sum() for g in gs).backward()
    sum((g * g).sum() for g in tgs).backward()
    for a, e in zip(ts, tt):
        np.testing.assert_allclose(to_np(a.grad), e.grad.numpy(), atol=1e-8)


def test_layer_norm_non_contiguous_and_constant_rows(device):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(5).standard_normal((6, 4)).astype(np.float32)
    t = to_st(x, device=device).T  # (4, 6), non-contiguous
    y = F.layer_norm(t, 6)
    np.testing.assert_allclose(to_np(y), torch.nn.functional.layer_norm(torch.from_numpy(x).T, (6,)).numpy(), atol=1e-5)
    c = F.layer_norm(st.ones(2, 8, device=device), 8)  # zero variance: finite zeros, like torch
    np.testing.assert_array_equal(to_np(c), np.zeros((2, 8), dtype=np.float32))


def test_layer_norm_state_dict_and_errors():
    ln = nn.LayerNorm(8, name="ln")
    assert list(ln.state_dict()) == ["ln::weight", "ln::bias"]
    assert ln.normalized_shape == (8,) and ln.eps == 1e-5 and ln.elementwise_affine
    np.testing.assert_array_equal(to_np(ln.weight), np.ones(8, np.float32))
    np.testing.assert_array_equal(to_np(ln.bias), np.zeros(8, np.float32))
    assert nn.LayerNorm(8, elementwise_affine=False).weight is None
    assert list(nn.LayerNorm((2, 3), elementwise_affine=False).state_dict()) == []
    with pytest.raises(st.ShapeError, match=r"LayerNorm\(\(8,\)\): input of shape \(2, 5\)"):
        ln(st.randn(2, 5))
    with pytest.raises(st.ShapeError, match="layer_norm: weight of shape"):
        F.layer_norm(st.randn(2, 5), 5, st.ones(4))
    with pytest.raises(st.ShapeError, match=r"layer_norm: input of shape \(5,\)"):
        F.layer_norm(st.randn(5), (2, 5))
    with pytest.raises(st.DtypeError, match="layer_norm"):
        F.layer_norm(st.tensor([[1, 2]]), 2)


# ---------------------------------------------------------------- BatchNorm

BN_CASES = [("BatchNorm1d", (8, 4)), ("BatchNorm1d", (5, 4, 7)), ("BatchNorm2d", (3, 4, 5, 6))]


def make_bn_pair(torch, cls, tdt, **kwargs):
    tbn = getattr(torch.nn, cls)(4, **kwargs).to(tdt)
    rng = np.random.default_rng(7)
    with torch.no_grad():
        for p in tbn.parameters():
            p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape))))
    bn = getattr(nn, cls)(4, **kwargs)
    bn.to(getattr(st, str(tdt).split(".")[-1]))
    assert list(bn.state_dict()) == list(tbn.state_dict())
    for (k, v), (tk, tv) in zip(bn.state_dict().items(), tbn.state_dict().items()):
        assert tuple(v.shape) == tuple(tv.shape), k
    copy_from_torch(bn, tbn)
    return bn, tbn


@pytest.mark.parametrize("name,tol,npdt", DTYPES)
@pytest.mark.parametrize("cls,shape", BN_CASES)
@pytest.mark.parametrize("momentum", [0.1, None])
def test_batch_norm_train_eval_matches_torch(cls, shape, name, tol, npdt, momentum, device):
    torch = pytest.importorskip("torch")
    bn, tbn = make_bn_pair(torch, cls, getattr(torch, name), momentum=momentum)
    bn.to(device)
    rng = np.random.default_rng(8)
    for step in range(3):
        x = (rng.standard_normal(shape) * 2 + step).astype(npdt)
        g = rng.standard_normal(shape).astype(npdt)
        t = to_st(x, requires_grad=True, device=device)
        y = bn(t)
        (y * to_st(g, device=device)).sum().backward()
        tx = torch.from_numpy(x).requires_grad_()
        ty = tbn(tx)
        (ty * torch.from_numpy(g)).sum().backward()
        np.testing.assert_allclose(to_np(y), ty.detach().numpy(), atol=10 * tol, rtol=10 * tol)
        np.testing.assert_allclose(to_np(t.grad), tx.grad.numpy(), atol=10 * tol, rtol=10 * tol)
    for k, p in bn.named_parameters():
        np.testing.assert_allclose(to_np(p.grad), getattr(tbn, k).grad.numpy(), atol=30 * tol, rtol=10 * tol)
    for k, v in bn.named_buffers():
        np.testing.assert_allclose(to_np(v), getattr(tbn, k).numpy(), atol=10 * tol, rtol=10 * tol)
    assert int(bn.num_batches_tracked.item()) == 3
    # eval: running statistics, no updates
    bn.eval()
    tbn.eval()
    x = rng.standard_normal(shape).astype(npdt)
    before = to_np(bn.running_mean).copy()
    np.testing.assert_allclose(to_np(bn(to_st(x, device=device))), tbn(torch.from_numpy(x)).detach().numpy(),
                               atol=10 * tol, rtol=10 * tol)
    np.testing.assert_array_equal(to_np(bn.running_mean), before)
    assert int(bn.num_batches_tracked.item()) == 3


@pytest.mark.parametrize("kwargs", [{"affine": False}, {"track_running_stats": False},
                                    {"affine": False, "track_running_stats": False}, {"eps": 1e-3, "momentum": 0.5}])
def test_batch_norm_options_match_torch(kwargs, device):
    torch = pytest.importorskip("torch")
    bn, tbn = make_bn_pair(torch, "BatchNorm2d", torch.float64, **kwargs)
    bn.to(device)
    x = np.random.default_rng(9).standard_normal((2, 4, 3, 3))
    for mode in ("train", "eval"):
        getattr(bn, mode)()
        getattr(tbn, mode)()
        t = to_st(x, requires_grad=True, device=device)
        tx = torch.from_numpy(x).requires_grad_()
        y, ty = bn(t), tbn(tx)
        np.testing.assert_allclose(to_np(y), ty.detach().numpy(), atol=1e-10)
        (y * y).sum().backward()
        (ty * ty).sum().backward()
        np.testing.assert_allclose(to_np(t.grad), tx.grad.numpy(), atol=1e-9)
    if kwargs.get("track_running_stats", True) is False:
        assert bn.running_mean is None and bn.num_batches_tracked is None
        assert list(bn.state_dict()) == [k for k in ("weight", "bias") if kwargs.get("affine", True)]


def test_batch_norm_fd_gradients(device):
    rng = np.random.default_rng(10)
    x, w, b = rng.standard_normal((4, 3, 2)), rng.standard_normal(3), rng.standard_normal(3)
    check_grads(lambda xt, wt, bt: F.batch_norm(xt, None, None, wt, bt, training=True), [x, w, b], device=device)
    rm, rv = rng.standard_normal(3), rng.random(3) + 0.5
    trm, trv = to_st(rm, device=device), to_st(rv, device=device)
    check_grads(lambda xt, wt, bt: F.batch_norm(xt, trm, trv, wt, bt, training=False), [x, w, b], device=device)


def test_batch_norm_functional_updates_running_stats(device):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(11).standard_normal((6, 3))
    rm, rv = st.zeros(3, dtype=st.float64, device=device), st.ones(3, dtype=st.float64, device=device)
    trm, trv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    y = F.batch_norm(to_st(x, device=device), rm, rv, training=True, momentum=0.2)
    ty = torch.nn.functional.batch_norm(torch.from_numpy(x), trm, trv, training=True, momentum=0.2)
    np.testing.assert_allclose(to_np(y), ty.numpy(), atol=1e-12)
    np.testing.assert_allclose(to_np(rm), trm.numpy(), atol=1e-12)
    np.testing.assert_allclose(to_np(rv), trv.numpy(), atol=1e-12)  # unbiased variance


def test_batch_norm_errors_and_state():
    bn = nn.BatchNorm1d(4, name="bn")
    assert list(bn.state_dict()) == ["bn::weight", "bn::bias", "bn::running_mean", "bn::running_var",
                                     "bn::num_batches_tracked"]
    assert [k for k, _ in bn.named_parameters()] == ["bn::weight", "bn::bias"]
    assert bn.num_batches_tracked.dtype == st.int64 and tuple(bn.num_batches_tracked.shape) == ()
    with pytest.raises(st.ShapeError, match=r"BatchNorm1d\(4\): input of shape \(2, 3\) has 3 channels"):
        bn(st.randn(2, 3))
    with pytest.raises(st.ShapeError, match=r"BatchNorm1d\(4\): expected a 2-D .* got shape \(2, 4, 3, 3\)"):
        bn(st.randn(2, 4, 3, 3))
    with pytest.raises(st.ShapeError, match=r"BatchNorm2d\(4\): expected a 4-D .* got shape \(2, 4\)"):
        nn.BatchNorm2d(4)(st.randn(2, 4))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        bn(st.randn(1, 4))
    assert int(bn.num_batches_tracked.item()) == 0  # failed calls change nothing
    bn.eval()
    assert tuple(bn(st.randn(1, 4)).shape) == (1, 4)  # eval with one sample is fine
    bn.train()
    bn(st.randn(5, 4) * 3)
    bn.reset_running_stats()
    np.testing.assert_array_equal(to_np(bn.running_var), np.ones(4, np.float32))
    assert int(bn.num_batches_tracked.item()) == 0


# ---------------------------------------------------------------- composition, state dicts

def test_sequential_loads_torch_state_dict_and_round_trips():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    tmodel = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.BatchNorm1d(8), torch.nn.GELU(),
                                 torch.nn.Dropout(0.2), torch.nn.Linear(8, 8), torch.nn.LayerNorm(8),
                                 torch.nn.Flatten(), torch.nn.Identity())
    model = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.GELU(), nn.Dropout(0.2), nn.Linear(8, 8),
                          nn.LayerNorm(8), nn.Flatten(), nn.Identity())
    assert [torch_key(k) for k in model.state_dict()] == list(tmodel.state_dict())
    tmodel.train()
    tmodel(torch.randn(16, 6))  # moves the running stats away from their defaults
    copy_from_torch(model, tmodel)
    model.eval()
    tmodel.eval()
    x = np.random.default_rng(12).standard_normal((5, 6)).astype(np.float32)
    np.testing.assert_allclose(to_np(model(to_st(x))), tmodel(torch.from_numpy(x)).detach().numpy(), atol=1e-5)
    # round trip through our own state dict
    clone = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.GELU(), nn.Dropout(0.2), nn.Linear(8, 8),
                          nn.LayerNorm(8), nn.Flatten(), nn.Identity())
    clone.load_state_dict(model.state_dict())
    clone.eval()
    np.testing.assert_array_equal(to_np(clone(to_st(x))), to_np(model(to_st(x))))
    assert int(clone[1].num_batches_tracked.item()) == 1


def test_state_dict_loads_across_devices(device):
    # A CPU state dict loads into a module moved to the device (copy_ copies across
    # devices), the parameters stay there, and a device state dict loads back into a CPU
    # module.
    def make():
        return nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.GELU(), nn.Linear(8, 3), nn.LayerNorm(3))

    st.manual_seed(3)
    src = make()
    src.train()
    src(st.randn(16, 6))  # running stats away from their defaults
    src.eval()
    model = make().to(device)
    ptrs_before = [p.data_ptr() for p in model.parameters()]
    model.load_state_dict(src.state_dict())
    assert [p.data_ptr() for p in model.parameters()] == ptrs_before  # loaded in place
    for k, v in model.state_dict().items():
        assert same_device(v, device), f"{k} is on {v.device}"
        np.testing.assert_array_equal(to_np(v), to_np(src.state_dict()[k]))
    model.eval()
    x = np.random.default_rng(14).standard_normal((5, 6)).astype(np.float32)
    np.testing.assert_allclose(to_np(model(to_st(x, device=device))), to_np(src(to_st(x))), rtol=1e-5, atol=1e-5)
    # loading values given as NumPy arrays (host data) works the same way
    model.load_state_dict({k: to_np(v) * 0 + 1 for k, v in src.state_dict().items()})
    assert all((to_np(v) == 1).all() for v in model.state_dict().values())
    # and the other way: device state dict into a host module
    model.load_state_dict(src.state_dict())
    back = make()
    back.load_state_dict(model.state_dict())
    for k, v in back.state_dict().items():
        assert v.device == "cpu"
        np.testing.assert_array_equal(to_np(v), to_np(src.state_dict()[k]))


def test_named_layers_and_embedding_round_trip():
    emb = nn.Embedding(4, 3, name="tok")
    assert list(emb.state_dict()) == ["tok::weight"]
    other = nn.Embedding(4, 3, name="tok")
    other.load_state_dict(emb.state_dict())
    np.testing.assert_array_equal(to_np(other.weight), to_np(emb.weight))
    with pytest.raises(st.CheckpointError, match="tok::weight"):
        nn.Embedding(5, 3, name="tok").load_state_dict(emb.state_dict())
    for layer in (nn.ReLU(name="a"), nn.Dropout(name="a"), nn.Softmax(name="a"), nn.Identity(name="a"),
                  nn.Flatten(name="a"), nn.GELU(name="a"), nn.SiLU(name="a"), nn.Tanh(name="a"),
                  nn.Sigmoid(name="a")):
        assert layer.name == "a" and layer.state_dict() == {}


def test_functional_module_exports():
    for n in ("layer_norm", "embedding", "dropout", "batch_norm", "gelu", "relu", "softmax", "linear"):
        assert getattr(F, n) is getattr(st._core.nn, n)
        assert n in F.__all__
    for n in ("Embedding", "Dropout", "Identity", "Flatten", "ReLU", "GELU", "SiLU", "Tanh", "Sigmoid",
              "Softmax", "LayerNorm", "BatchNorm1d", "BatchNorm2d"):
        assert issubclass(getattr(nn, n), st._core.nn.Module)


def test_dropout_in_sequential_follows_mode(device):
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5)).to(device)
    x = st.randn(8, 4, device=device)
    model.eval()
    a, b = to_np(model(x)), to_np(model(x))
    np.testing.assert_array_equal(a, b)
    model.train()
    st.manual_seed(1)
    c = to_np(model(x))
    assert (c == 0).any()


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_double_backward_matches_torch(training, device):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(13)
    x, w, b = rng.standard_normal((4, 3, 2)), rng.standard_normal(3), rng.standard_normal(3)
    rm, rv = rng.standard_normal(3), rng.random(3) + 0.5
    ts = [to_st(a, requires_grad=True, device=device) for a in (x, w, b)]
    tt = [torch.from_numpy(a).requires_grad_() for a in (x, w, b)]
    y = F.batch_norm(ts[0], to_st(rm, device=device), to_st(rv, device=device), ts[1], ts[2], training=training)
    ty = torch.nn.functional.batch_norm(tt[0], torch.from_numpy(rm.copy()), torch.from_numpy(rv.copy()), tt[1], tt[2],
                                        training=training)
    gs = st.autograd.grad((y ** 3).sum(), ts, create_graph=True)
    tgs = torch.autograd.grad((ty ** 3).sum(), tt, create_graph=True)
    for a, e in zip(gs, tgs):
        np.testing.assert_allclose(to_np(a), e.detach().numpy(), atol=1e-9)
    sum((g * g).sum() for g in gs).backward()
    sum((g * g).sum() for g in tgs).backward()
    for a, e in zip(ts, tt):
        np.testing.assert_allclose(to_np(a.grad), e.grad.numpy(), atol=1e-8)
