"""Creation functions, dtype inference, conversions and random number determinism."""

import numpy as np
import pytest

import spiraltorch as st
from conftest import SHAPES, assert_close, needs_torch, np_dtype, same_device, tensor_on, to_np


def test_tensor_dtype_inference():
    assert st.tensor([1.0, 2.0]).dtype == st.float32
    assert st.tensor([1, 2]).dtype == st.int64
    assert st.tensor([True, False]).dtype == st.bool
    assert st.tensor([1, 2.5]).dtype == st.float32
    assert st.tensor([True, 2]).dtype == st.int64
    assert st.tensor(3.0).dtype == st.float32 and st.tensor(3.0).shape == ()
    assert st.tensor(3).dtype == st.int64
    assert st.tensor([]).shape == (0,) and st.tensor([]).dtype == st.float32
    assert st.tensor([[], []]).shape == (2, 0)
    assert st.tensor([[[1], [2]]]).shape == (1, 2, 1)


@pytest.mark.parametrize("npdt", [np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_, np.float16])
def test_tensor_from_numpy_array_keeps_dtype_and_copies(npdt, device):
    a = np.arange(6).reshape(2, 3).astype(npdt)
    t = tensor_on(a, device)
    assert t.dtype.name == np.dtype(npdt).name
    assert_close(t, a)
    a[0, 0] = 1
    assert t[0, 0].item() == 0


def test_tensor_from_noncontiguous_numpy():
    a = np.arange(12.0).reshape(3, 4).T[::2]
    assert_close(st.tensor(a), a)


def test_tensor_dtype_argument_forms():
    for spec in (st.float64, "float64", float, np.float64):
        assert st.tensor([1, 2], dtype=spec).dtype == st.float64
    assert st.tensor([1.7, -1.7], dtype=st.int64).tolist() == [1, -1]
    assert st.tensor([0, 3], dtype=st.bool).tolist() == [False, True]
    assert st.tensor([1, 2], dtype=np.int32).dtype == st.int32
    assert st.tensor([1, 2], dtype=int).dtype == st.int64
    assert st.tensor([1, 2], dtype=bool).dtype == st.bool


def test_tensor_from_tensors_and_large_ints():
    t = st.tensor([st.tensor(1.0), st.tensor(2.0)])
    assert t.tolist() == [1.0, 2.0]
    big = st.tensor([2**62, -(2**62)])
    assert big.tolist() == [2**62, -(2**62)]
    with pytest.raises(ValueError):
        st.tensor([2**70])


def test_dtype_aliases():
    assert st.float is st.float32 and st.double is st.float64
    assert st.long is st.int64 and st.int is st.int32 and st.half is st.float16
    assert st.float32.is_floating_point and not st.int64.is_floating_point
    assert st.float64.itemsize == 8 and st.bool.itemsize == 1
    assert repr(st.float32) == "spiraltorch.float32"
    assert st.zeros(2, dtype=st.int32).element_size() == 4


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [st.float32, st.float64, st.int32, st.int64, st.bool, st.uint8], ids=str)
def test_zeros_ones_full_empty(shape, dtype, device):
    nd = np_dtype(dtype)
    assert_close(st.zeros(*shape, dtype=dtype, device=device) if shape else st.zeros((), dtype=dtype, device=device),
                 np.zeros(shape, nd))
    assert_close(st.ones(shape, dtype=dtype, device=device), np.ones(shape, nd))
    assert_close(st.zeros(size=shape, dtype=dtype, device=device), np.zeros(shape, nd))
    assert_close(st.full(shape, 1, dtype=dtype).to(device), np.full(shape, 1, nd))
    e = st.empty(shape, dtype=dtype, device=device)
    assert e.shape == shape and e.dtype == dtype and same_device(e, device)
    proto = st.ones(shape, dtype=dtype, device=device)
    assert_close(st.zeros_like(proto), np.zeros(shape, nd))
    assert_close(st.ones_like(proto), np.ones(shape, nd))
    assert_close(st.full_like(proto, 1), np.full(shape, 1, nd))
    assert st.empty_like(proto).shape == shape and same_device(st.empty_like(proto), device)
    assert st.zeros_like(proto, dtype=st.float64).dtype == st.float64


def test_full_dtype_inference():
    assert st.full((2,), 1.5).dtype == st.float32
    assert st.full((2,), 3).dtype == st.int64
    assert st.full((2,), True).dtype == st.bool
    assert st.full((2, 2), 7.0, dtype=st.float64).tolist() == [[7.0, 7.0], [7.0, 7.0]]
    assert st.full_like(st.zeros(2, dtype=st.int32), 2.7).tolist() == [2, 2]


@pytest.mark.parametrize("args", [(5,), (2, 9), (0, 10, 3), (1.0, 2.0, 0.25), (-3, 3), (0, 1, 0.1), (10, 0, -2),
                                  (0.5, 3), (0,)], ids=str)
def test_arange(args):
    ref = np.arange(*args)
    t = st.arange(*args)
    if all(isinstance(a, int) for a in args):
        assert t.dtype == st.int64
        assert_close(t, ref.astype(np.int64))
    else:
        assert t.dtype == st.float32
        assert_close(t, ref.astype(np.float32), rtol=1e-6, atol=1e-6)


def test_arange_dtype_and_grad():
    assert st.arange(4, dtype=st.float64).tolist() == [0.0, 1.0, 2.0, 3.0]
    t = st.arange(3.0, requires_grad=True)
    assert t.requires_grad and t.dtype == st.float32
    assert st.arange(4.0).dtype == st.float32 and st.arange(0, 4, 1.0).dtype == st.float32
    assert st.arange(1, 4.0).tolist() == [1.0, 2.0, 3.0]
    with pytest.raises((st.SpiralValueError, ValueError)):
        st.arange(0, 5, 0)


@pytest.mark.parametrize("args", [(0.0, 1.0, 5), (-2.0, 2.0, 1), (3.0, -1.0, 9), (0.0, 1.0, 0), (0, 10, 11)], ids=str)
def test_linspace(args):
    assert_close(st.linspace(*args), np.linspace(*args).astype(np.float32), rtol=1e-6, atol=1e-6)
    assert_close(st.linspace(*args, dtype=st.float64), np.linspace(*args), rtol=1e-13, atol=1e-13)


def test_arange_and_linspace_on_a_device(device):
    a = st.arange(2, 11, 3, device=device)
    assert same_device(a, device) and a.dtype == st.int64 and to_np(a).tolist() == [2, 5, 8]
    f = st.arange(1.5, device=device, dtype=st.float64, requires_grad=True)
    assert same_device(f, device) and f.requires_grad and to_np(f.detach()).tolist() == [0.0, 1.0]
    l = st.linspace(0.0, 1.0, 5, dtype=st.float64, device=device)
    assert same_device(l, device)
    assert_close(l, np.linspace(0.0, 1.0, 5), rtol=1e-15, atol=1e-15)
    with pytest.raises(ValueError, match="device"):
        st.arange(3, device="tpu")


@pytest.mark.parametrize("n,m", [(3, None), (2, 4), (4, 2), (0, None), (1, 1)], ids=str)
def test_eye(n, m):
    assert_close(st.eye(n, m), np.eye(n, m, dtype=np.float32))
    assert_close(st.eye(n, m, dtype=st.int64), np.eye(n, m, dtype=np.int64))


def test_requires_grad_kwargs(device):
    for t in (st.zeros(2, requires_grad=True, device=device), st.ones(2, 2, requires_grad=True, device=device),
              st.rand(3, requires_grad=True, device=device), st.randn(3, requires_grad=True, device=device)):
        assert t.requires_grad and t.is_leaf and t.grad is None
        assert same_device(t, device)
    for t in (st.full((2,), 1.0, requires_grad=True), st.tensor([1.0], requires_grad=True)):  # no device= here
        assert t.requires_grad and t.is_leaf and t.grad is None


def test_conversions(device):
    t = tensor_on([[1.5, -2.5], [3.0, 0.0]], device)
    assert t.double().dtype == st.float64
    assert t.float().dtype == st.float32
    assert t.long().tolist() == [[1, -2], [3, 0]]
    assert t.int().dtype == st.int32
    assert t.bool().tolist() == [[True, True], [True, False]]
    assert t.to(st.float64).dtype == st.float64
    assert t.to(dtype=st.int64).dtype == st.int64
    assert t.to(device) is t or t.to(device).data_ptr() == t.data_ptr()  # already there: no copy
    assert t.type() == "float32" or "float" in t.type()
    assert t.type(st.float64).dtype == st.float64
    assert t.to(st.float32).data_ptr() == t.data_ptr()  # same dtype: no copy
    assert t.is_floating_point() and not t.long().is_floating_point()
    for c in (t.double(), t.long(), t.bool(), t.to(st.int32), t.type(st.float64)):
        assert same_device(c, device)  # dtype conversions stay on the device
    h = t.cpu()
    assert h.device == "cpu" and h.tolist() == [[1.5, -2.5], [3.0, 0.0]]
    if device == "cpu":
        assert h.data_ptr() == t.data_ptr()
    else:  # a copy to the host; the device tensor is untouched by writes to it
        h.fill_(0.0)
        assert t.tolist() == [[1.5, -2.5], [3.0, 0.0]]
        assert h.to(device).tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_item_float_int_bool(device):
    assert tensor_on([[2.5]], device=device).item() == 2.5
    assert isinstance(tensor_on([7], device=device).item(), int)
    assert float(tensor_on(1.25, device=device)) == 1.25
    assert int(tensor_on(3.9, device=device)) == 3
    assert bool(tensor_on([0.0], device=device)) is False
    assert bool(tensor_on(2, device=device)) is True


# ---------------------------------------------------------------------------
# random numbers
# ---------------------------------------------------------------------------


def test_manual_seed_determinism(device):
    st.manual_seed(0)
    a = st.rand(1000, device=device)
    st.manual_seed(0)
    b = st.rand(1000, device=device)
    assert a.tolist() == b.tolist()
    c = st.rand(1000, device=device)
    assert c.tolist() != b.tolist()
    assert st.initial_seed() == 0


@pytest.mark.parametrize("fn", ["rand", "randn", "randint", "normal", "rand_f64"])
def test_random_same_across_thread_counts(fn):
    makers = {
        "rand": lambda: st.rand(100003),
        "randn": lambda: st.randn(50001),
        "randint": lambda: st.randint(0, 1000, (40000,)),
        "normal": lambda: st.normal(2.0, 3.0, (30001,)),
        "rand_f64": lambda: st.rand(20001, dtype=st.float64),
    }
    st.set_num_threads(1)
    st.manual_seed(0)
    a = to_np(makers[fn]())
    st.set_num_threads(2)
    st.manual_seed(0)
    b = to_np(makers[fn]())
    np.testing.assert_array_equal(a, b)


def test_random_on_device_draws_the_host_stream(device):
    # rand/randn(device=...) are drawn on the host and moved, so a seed gives the same numbers on every device.
    st.manual_seed(3)
    a = to_np(st.rand(1001, device=device))
    n = to_np(st.randn(1001, dtype=st.float64, device=device))
    st.manual_seed(3)
    np.testing.assert_array_equal(a, to_np(st.rand(1001)))
    np.testing.assert_allclose(n, to_np(st.randn(1001, dtype=st.float64)), rtol=1e-12, atol=1e-12)


def test_rand_thread_determinism_small():
    st.set_num_threads(1)
    st.manual_seed(0)
    a = st.rand(1000).tolist()
    st.set_num_threads(2)
    st.manual_seed(0)
    b = st.rand(1000).tolist()
    assert a == b


def test_random_distributions(device):
    st.manual_seed(42)
    u = to_np(st.rand(200000, device=device))
    assert u.dtype == np.float32
    assert u.min() >= 0.0 and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
    n = to_np(st.randn(200000, dtype=st.float64, device=device))
    assert n.dtype == np.float64
    assert abs(n.mean()) < 0.01 and abs(n.std() - 1) < 0.01
    nm = to_np(st.normal(3.0, 0.5, (100000,)).to(device))
    assert abs(nm.mean() - 3.0) < 0.01 and abs(nm.std() - 0.5) < 0.01
    r = to_np(st.randint(-3, 4, (100000,)).to(device))
    assert r.dtype == np.int64
    assert set(np.unique(r).tolist()) == set(range(-3, 4))
    r2 = st.randint(5, (10,)).to(device)
    assert r2.shape == (10,) and 0 <= int(r2.min()) and int(r2.max()) < 5
    x = st.zeros(50000, device=device)
    x.uniform_(-2, -1)
    v = to_np(x)
    assert v.min() >= -2 and v.max() < -1
    x.normal_(10.0, 2.0)
    assert abs(to_np(x).mean() - 10) < 0.05


def test_rand_shapes_and_like(device):
    st.manual_seed(0)
    assert st.rand(2, 3, device=device).shape == (2, 3)
    assert st.rand((2, 3), device=device).shape == (2, 3)
    assert st.rand((), device=device).shape == ()
    assert st.rand(0, 4, device=device).shape == (0, 4)
    assert st.randn(2, 2, dtype=st.float64, device=device).dtype == st.float64
    assert st.rand_like(st.zeros(3, dtype=st.float64, device=device)).dtype == st.float64
    assert st.randn_like(st.zeros(4, 5, device=device)).shape == (4, 5)
    assert same_device(st.rand_like(st.zeros(3, device=device)), device)
    assert same_device(st.randn(2, device=device), device)


def test_generator_stream_continues(device):
    st.manual_seed(7)
    a = st.rand(10, device=device).tolist() + st.rand(10, device=device).tolist()
    st.manual_seed(7)
    b = st.rand(20, device=device).tolist()
    # Either a continuous stream (like a single call) or at least distinct draws.
    assert a[:10] != a[10:]
    assert len(set(a)) == 20 and len(set(b)) == 20


@needs_torch
def test_creation_matches_torch():
    import torch

    np.testing.assert_array_equal(to_np(st.arange(0, 1, 0.1)), torch.arange(0, 1, 0.1).numpy())
    np.testing.assert_allclose(to_np(st.linspace(-1, 1, 7)), torch.linspace(-1, 1, 7).numpy(), rtol=1e-6, atol=1e-7)
    assert st.linspace(-2, 2, 1).tolist() == torch.linspace(-2, 2, 1).tolist() == [-2.0]
    np.testing.assert_array_equal(to_np(st.eye(3, 4)), torch.eye(3, 4).numpy())
    assert st.arange(5).dtype.name == str(torch.arange(5).dtype).replace("torch.", "")
    assert st.full((1,), 2).dtype.name == str(torch.full((1,), 2).dtype).replace("torch.", "")
