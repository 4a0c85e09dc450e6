"""Indexing (__getitem__/__setitem__) and joining/indexing ops against NumPy."""

import numpy as np
import pytest

import spiraltorch as st
from conftest import (
    FLOAT_DTYPES,
    NUMERIC_DTYPES,
    assert_close,
    needs_torch,
    noncontig,
    np_dtype,
    rand_array,
    st_tensor,
    tensor_on,
    to_np,
)


def _arange(shape, dtype=np.float32):
    return np.arange(int(np.prod(shape, dtype=int)), dtype=dtype).reshape(shape)


# ---------------------------------------------------------------------------
# advanced indexing
# ---------------------------------------------------------------------------


def test_integer_tensor_and_list_indices(device):
    a = _arange((5, 4, 3))
    t = st_tensor(a, device=device)
    idx = np.array([4, 0, 2, 2])
    assert_close(t[tensor_on(idx, device=device)], a[idx])
    assert_close(t[[1, 3]], a[[1, 3]])
    assert_close(t[:, tensor_on([2, 0], device=device)], a[:, [2, 0]])
    assert_close(t[..., tensor_on([[0, 1], [2, 2]], device=device)], a[..., np.array([[0, 1], [2, 2]])])
    assert_close(t[tensor_on([-1, -5], device=device)], a[[-1, -5]])
    assert_close(t[1:4, tensor_on([3], device=device)], a[1:4, [3]])


def test_boolean_mask_indices(device):
    a = rand_array((4, 5), np.float32, seed=1)
    t = st_tensor(a, device=device)
    m = a > 0
    assert_close(t[st_tensor(m, device=device)], a[m])
    rows = np.array([True, False, True, True])
    assert_close(t[st_tensor(rows, device=device)], a[rows])
    cols = np.array([False, True, True, False, True])
    assert_close(t[:, st_tensor(cols, device=device)], a[:, cols])
    assert_close(t[t > 1.0], a[a > 1.0])
    assert t[st.zeros(4, 5, dtype=st.bool, device=device)].shape == (0,)


def test_setitem_forms(device):
    a = _arange((4, 5))
    t = st_tensor(a, device=device)
    t[0] = 100.0
    a[0] = 100.0
    t[:, 1] = tensor_on([1.0, 2.0, 3.0, 4.0], device=device)
    a[:, 1] = [1.0, 2.0, 3.0, 4.0]
    t[2:, 3:] = tensor_on([[7.0, 8.0], [9.0, 10.0]], device=device)
    a[2:, 3:] = [[7.0, 8.0], [9.0, 10.0]]
    m = a > 8
    t[st_tensor(m, device=device)] = -1.0
    a[m] = -1.0
    t[tensor_on([1, 3], device=device)] = 0.5
    a[[1, 3]] = 0.5
    t[tensor_on([0, 2], device=device), ...] = tensor_on([[1.0] * 5, [2.0] * 5], device=device)
    a[[0, 2]] = [[1.0] * 5, [2.0] * 5]
    t[..., -1] = 42
    a[..., -1] = 42
    assert_close(t, a)


def test_host_indices_and_values_on_device(device):
    # Index tensors and lists built on the host index a device tensor (PyTorch moves CPU
    # indices to the indexed tensor's device); values given as host tensors/lists too.
    a = _arange((5, 4))
    t = st_tensor(a, device=device)
    assert_close(t[st.tensor([3, -1])], a[[3, -1]])
    assert_close(t[:, st.tensor([True, False, True, False])], a[:, [0, 2]])
    assert_close(t[st.tensor(a > 6)], a[a > 6])
    t[st.tensor([0, 2])] = st.tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
    a[[0, 2]] = [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]
    t[1] = [9.0, 9.0, 9.0, 9.0]
    a[1] = 9.0
    t[st.tensor(a > 8)] = st.tensor(0.5)
    a[a > 8] = 0.5
    assert_close(t, a)


def test_setitem_one_d_bool_mask(device):
    # A 1-d mask on one dim writes the rows it selects (not rows 0 and 1).
    a = _arange((4, 3))
    t = st_tensor(a, device=device)
    rows = np.array([False, True, False, True])
    t[st_tensor(rows, device=device)] = -1.0
    a[rows] = -1.0
    cols = np.array([True, False, True])
    vals = np.array([[10.0, 20.0], [30.0, 40.0], [50.0, 60.0], [70.0, 80.0]], np.float32)
    t[:, st_tensor(cols, device=device)] = st_tensor(vals, device=device)  # value shaped like t[:, cols]
    a[:, cols] = vals
    t[:, tensor_on([1, -1], device=device)] = tensor_on([5.0, 6.0], device=device)  # broadcast over rows
    a[:, [1, -1]] = [5.0, 6.0]
    t[tensor_on([[0], [3]], device=device)] = 7.0
    a[np.array([[0], [3]])] = 7.0
    assert_close(t, a)


def test_index_errors(device):
    t = st.zeros(3, 4, device=device)
    with pytest.raises((st.SpiralIndexError, IndexError)):
        t[3]
    with pytest.raises((st.SpiralIndexError, IndexError)):
        t[0, 0, 0]
    with pytest.raises((st.SpiralIndexError, IndexError)):
        t[tensor_on([0, 7], device=device)]
    with pytest.raises((st.SpiralIndexError, IndexError)):
        t[tensor_on([0.0], device=device)]
    with pytest.raises((st.SpiralValueError, ValueError)):
        t[::-1]


def test_iteration_and_contains(device):
    t = tensor_on([[1, 2], [3, 4]], device=device)
    rows = [r.tolist() for r in t]
    assert rows == [[1, 2], [3, 4]]
    assert 3 in t
    assert 5 not in t
    assert t[1, 0].item() == 3
    assert int(t[0, 1]) == 2
    assert [1, 2, 3][tensor_on(1, device=device)] == 2


# ---------------------------------------------------------------------------
# cat / stack / split / chunk
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES, ids=str)
def test_cat(dtype, device):
    a = rand_array((2, 3, 4), np_dtype(dtype), seed=2)
    b = rand_array((2, 5, 4), np_dtype(dtype), seed=3)
    c = rand_array((2, 0, 4), np_dtype(dtype), seed=4)
    assert_close(st.cat([st_tensor(a, device=device), st_tensor(b, device=device), st_tensor(c, device=device)], dim=1),
                 np.concatenate([a, b, c], axis=1))
    assert_close(st.cat([st_tensor(a, device=device), st_tensor(a, device=device)], dim=-1),
                 np.concatenate([a, a], axis=-1))
    assert_close(st.cat([st_tensor(a, device=device)], dim=0), a)
    assert_close(st.concat([st_tensor(a, device=device), st_tensor(a, device=device)], 0), np.concatenate([a, a], 0))
    # non-contiguous inputs
    x = rand_array((3, 4), np_dtype(dtype), seed=5)
    assert_close(st.cat([noncontig(x, device=device), noncontig(x, "slice", device=device)], dim=0),
                 np.concatenate([x, x]))


def test_cat_promotes_and_checks(device):
    out = st.cat([tensor_on([1, 2], device=device), tensor_on([0.5], device=device)])
    assert out.dtype == st.float32
    assert out.tolist() == [1.0, 2.0, 0.5]
    with pytest.raises(st.ShapeError):
        st.cat([st.zeros(2, 3, device=device), st.zeros(2, 4, device=device)], dim=0)
    with pytest.raises((st.ShapeError, st.SpiralValueError)):
        st.cat([], dim=0)


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_stack(dim, device):
    xs = [rand_array((3, 4), np.float64, seed=s) for s in range(3)]
    assert_close(st.stack([st_tensor(x, device=device) for x in xs], dim=dim), np.stack(xs, axis=dim))
    assert_close(st.stack([noncontig(x, device=device) for x in xs], dim=dim), np.stack(xs, axis=dim))


def test_stack_errors_and_0d(device):
    assert_close(st.stack([tensor_on(1.0, device=device), tensor_on(2.0, device=device)]),
                 np.array([1.0, 2.0], dtype=np.float32))
    with pytest.raises(st.ShapeError):
        st.stack([st.zeros(2, device=device), st.zeros(3, device=device)])


@pytest.mark.parametrize("size,dim", [(2, 0), (3, 1), (4, 1), (1, -1), (10, 0)])
def test_split_by_size(size, dim, device):
    a = _arange((5, 7))
    parts = st.split(st_tensor(a, device=device), size, dim=dim)
    n = a.shape[dim]
    bounds = list(range(size, n, size))
    expected = np.split(a, bounds, axis=dim)
    assert len(parts) == len(expected)
    for p, e in zip(parts, expected):
        assert_close(p, e)


def test_split_sections_and_chunk(device):
    a = _arange((6, 4))
    parts = st_tensor(a, device=device).split([1, 2, 3], dim=0)
    for p, e in zip(parts, np.split(a, [1, 3], axis=0)):
        assert_close(p, e)
    with pytest.raises((st.ShapeError, st.SpiralValueError)):
        st.split(st_tensor(a, device=device), [1, 2], dim=0)
    ch = st.chunk(st_tensor(a, device=device), 3, dim=0)
    assert [tuple(c.shape) for c in ch] == [(2, 4)] * 3
    ch = st_tensor(a, device=device).chunk(3, dim=1)  # 4 -> 2, 2
    assert [tuple(c.shape) for c in ch] == [(6, 2), (6, 2)]
    base = st_tensor(a, device=device)
    view = st.split(base, 2, dim=0)[1]
    view.fill_(0.0)
    assert to_np(base)[2:4].sum() == 0


# ---------------------------------------------------------------------------
# gather / scatter_add / index_select / masked_select
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + [st.int64], ids=str)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather(dim, dtype, device):
    a = rand_array((4, 5), np_dtype(dtype), seed=6)
    g = np.random.default_rng(7)
    d = dim % 2
    idx_shape = (3, 5) if d == 0 else (4, 2)
    idx = g.integers(0, a.shape[d], size=idx_shape)
    assert_close(st.gather(st_tensor(a, device=device), dim, tensor_on(idx, device=device)),
                 np.take_along_axis(a, idx, axis=d))
    assert_close(noncontig(a, device=device).gather(dim, tensor_on(idx, device=device)),
                 np.take_along_axis(a, idx, axis=d))


def test_gather_bad_index(device):
    with pytest.raises((st.SpiralIndexError, IndexError, st.SpiralError)):
        st.gather(st.zeros(2, 2, device=device), 1, tensor_on([[0, 2]], device=device))


@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_add(dim, device):
    g = np.random.default_rng(8)
    x = rand_array((4, 5), np.float64, seed=9)
    src = rand_array((3, 5) if dim == 0 else (4, 3), np.float64, seed=10)
    idx = g.integers(0, x.shape[dim], size=src.shape)
    expected = x.copy()
    for i in range(src.shape[0]):
        for j in range(src.shape[1]):
            if dim == 0:
                expected[idx[i, j], j] += src[i, j]
            else:
                expected[i, idx[i, j]] += src[i, j]
    assert_close(st.scatter_add(st_tensor(x, device=device), dim, tensor_on(idx, device=device),
                                st_tensor(src, device=device)),
                 expected)
    assert_close(st_tensor(x, device=device), x)  # out of place


@pytest.mark.parametrize("dtype", [st.uint8, st.bool, st.float16, st.bfloat16, st.int32, st.int64, st.float32,
                                   st.float64], ids=str)
def test_scatter_add_colliding_indices_every_dtype(dtype, device):
    # Many source rows land on the same few outputs, and neighbouring bytes of one word are
    # updated together (1/2-byte types on CUDA add through a compare-and-swap of the word).
    # Small integers keep every partial sum exact in float16/bfloat16, so summation order cannot
    # matter; uint8 wraps modulo 256 as on the host; bool adds as logical or.
    g = np.random.default_rng(21)
    x = g.integers(0, 3, size=(5, 7))
    high = 2 if dtype == st.bool else (20 if dtype == st.uint8 else 4)
    src = g.integers(0, high, size=(40, 7))
    idx = g.integers(0, 5, size=(40, 7))
    ref = x.copy()
    np.add.at(ref, (idx, np.broadcast_to(np.arange(7), idx.shape)), src)
    if dtype == st.bool:
        ref = ref > 0
    elif dtype == st.uint8:
        ref = ref % 256
    out = st.scatter_add(tensor_on(x, device=device).to(dtype), 0, tensor_on(idx, device=device),
                         tensor_on(src, device=device).to(dtype))
    assert out.dtype == dtype and out.device == tensor_on([0], device=device).device
    np.testing.assert_array_equal(out.to(st.int64).cpu().numpy(), ref.astype(np.int64))


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES, ids=str)
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_index_select(dim, dtype, device):
    a = rand_array((3, 4, 5), np_dtype(dtype), seed=11)
    idx = np.array([0, 2, 2, 1])
    d = dim % 3
    idx = idx[idx < a.shape[d]]
    assert_close(st.index_select(st_tensor(a, device=device), dim, tensor_on(idx, device=device)),
                 np.take(a, idx, axis=d))
    assert_close(st_tensor(a, device=device).index_select(dim, tensor_on(idx, dtype=st.int32, device=device)),
                 np.take(a, idx, axis=d))
    assert_close(st.index_select(st_tensor(a, device=device), dim, tensor_on([], dtype=st.int64, device=device)),
                 np.take(a, [], axis=d))


def test_masked_select(device):
    a = rand_array((3, 4), np.float32, seed=12)
    m = a > 0
    assert_close(st.masked_select(st_tensor(a, device=device), st_tensor(m, device=device)), a[m])
    row = np.array([True, False, False, True])
    assert_close(st_tensor(a, device=device).masked_select(st_tensor(row, device=device)),
                 np.broadcast_to(a, (3, 4))[np.broadcast_to(row, (3, 4))])


# ---------------------------------------------------------------------------
# topk / sort / argsort / cumsum
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES, ids=str)
@pytest.mark.parametrize("largest", [True, False])
def test_topk(largest, dtype, device):
    g = np.random.default_rng(13)
    a = g.permutation(60).reshape(4, 15).astype(np_dtype(dtype))  # distinct values
    for dim in (0, 1, -1):
        for k in (1, 3, a.shape[dim]):
            r = st.topk(st_tensor(a, device=device), k, dim=dim, largest=largest)
            order = np.argsort(-a if largest else a, axis=dim, kind="stable")
            idx = np.take(order, np.arange(k), axis=dim)
            assert_close(r.values, np.take_along_axis(a, idx, axis=dim))
            assert_close(r.indices, idx.astype(np.int64))
    v, i = st_tensor(a, device=device).topk(0)
    assert v.shape == (4, 0) and i.shape == (4, 0)
    with pytest.raises((st.SpiralValueError, st.SpiralIndexError, st.ShapeError)):
        st.topk(st_tensor(a, device=device), 16, dim=1)


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES, ids=str)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_argsort(descending, dtype, device):
    a = rand_array((5, 8), np_dtype(dtype), seed=14)
    for dim in (0, 1):
        v, i = st.sort(st_tensor(a, device=device), dim=dim, descending=descending)
        key = -a.astype(np.float64) if descending else a
        order = np.argsort(key, axis=dim, kind="stable")
        assert_close(v, np.take_along_axis(a, order, axis=dim))
        # indices must reproduce the values (ties may be broken either way)
        assert_close(st.gather(st_tensor(a, device=device), dim, i), np.take_along_axis(a, order, axis=dim))
        ai = st.argsort(st_tensor(a, device=device), dim=dim, descending=descending)
        assert_close(st.gather(st_tensor(a, device=device), dim, ai), np.take_along_axis(a, order, axis=dim))


def test_sort_nan_goes_last(device):
    v, _ = st.sort(tensor_on([3.0, np.nan, 1.0, 2.0], device=device))
    out = to_np(v)
    assert out[:3].tolist() == [1.0, 2.0, 3.0] and np.isnan(out[3])


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES + [st.bool], ids=str)
@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 5), (0, 3)], ids=str)
def test_cumsum(shape, dtype, device):
    a = rand_array(shape, np_dtype(dtype), seed=15)
    for dim in range(-len(shape), len(shape)):
        out = st.cumsum(st_tensor(a, device=device), dim)
        exp = np.cumsum(a, axis=dim)
        if dtype in (st.int32, st.int64, st.bool):
            exp = exp.astype(np.int64)  # PyTorch accumulates integers in int64
        assert_close(out, exp, rtol=1e-5 if dtype == st.float32 else 1e-12, atol=1e-5 if dtype == st.float32 else 1e-12)
    if len(shape) == 2:
        assert_close(noncontig(a, device=device).cumsum(1), np.cumsum(a, axis=1).astype(
            np.int64 if dtype in (st.int32, st.int64, st.bool) else a.dtype), rtol=1e-5, atol=1e-5)


def test_one_hot(device):
    idx = np.array([[0, 2], [1, 4]])
    out = st.one_hot(tensor_on(idx, device=device), 5)
    assert out.dtype == st.int64
    assert_close(out, np.eye(5, dtype=np.int64)[idx])
    assert_close(st.one_hot(tensor_on([2, 0], device=device)), np.eye(3, dtype=np.int64)[[2, 0]])
    with pytest.raises((st.SpiralIndexError, st.SpiralValueError, IndexError)):
        st.one_hot(tensor_on([5], device=device), 3)


@pytest.mark.parametrize("k", [-2, -1, 0, 1, 3])
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3), (2, 3, 4)], ids=str)
def test_tril_triu(shape, k, device):
    a = rand_array(shape, np.float32, seed=16)
    assert_close(st.tril(st_tensor(a, device=device), k), np.tril(a, k))
    assert_close(st_tensor(a, device=device).triu(k), np.triu(a, k))
    if len(shape) == 2:
        assert_close(st.tril(noncontig(a, device=device), k), np.tril(a, k))


# ---------------------------------------------------------------------------
# against PyTorch
# ---------------------------------------------------------------------------


@needs_torch
def test_indexing_ops_match_torch(device):
    import torch

    a = rand_array((4, 6), np.float64, seed=17)
    s = st_tensor(a, device=device)
    t = torch.from_numpy(a.copy())
    idx = np.array([[0, 5, 1], [2, 2, 3], [1, 0, 4], [5, 5, 5]])
    np.testing.assert_array_equal(to_np(s.gather(1, tensor_on(idx, device=device))),
                                  t.gather(1, torch.from_numpy(idx)).numpy())
    v, i = s.topk(3, dim=1)
    tv, ti = t.topk(3, dim=1)
    np.testing.assert_array_equal(to_np(v), tv.numpy())
    np.testing.assert_array_equal(to_np(i), ti.numpy())
    np.testing.assert_allclose(to_np(s.cumsum(0)), t.cumsum(0).numpy(), rtol=1e-12)
    src = rand_array((2, 6), np.float64, seed=18)
    sidx = np.array([[0, 1, 2, 3, 0, 1], [3, 3, 3, 3, 0, 0]])
    np.testing.assert_allclose(
        to_np(st.scatter_add(s, 0, tensor_on(sidx, device=device), st_tensor(src, device=device))),
        torch.scatter_add(t, 0, torch.from_numpy(sidx), torch.from_numpy(src)).numpy(), rtol=1e-12)
    for sp, tp in zip(st.split(s, [1, 5], dim=1), torch.split(t, [1, 5], dim=1)):
        np.testing.assert_array_equal(to_np(sp), tp.numpy())
    np.testing.assert_array_equal(to_np(st.tril(s, -1)), torch.tril(t, -1).numpy())
    np.testing.assert_array_equal(to_np(st.one_hot(tensor_on([1, 3], device=device), 4)),
                                  torch.nn.functional.one_hot(torch.tensor([1, 3]), 4).numpy())
