"""Views and shape manipulation: values, strides and storage sharing."""

import numpy as np
import pytest

import spiraltorch as st
from conftest import assert_close, needs_torch, noncontig, rand_array, st_tensor, tensor_on, to_np


def _arange(shape, dtype=np.float32):
    return np.arange(int(np.prod(shape, dtype=int)), dtype=dtype).reshape(shape)


def _shares_storage(view, base):
    """Writing through ``view`` changes ``base``: proves a view, not a copy."""
    before = to_np(base)
    view.fill_(-12345)
    after = to_np(base)
    return not np.array_equal(before, after)


@pytest.mark.parametrize("src,dst", [((2, 3, 4), (6, 4)), ((2, 3, 4), (-1,)), ((24,), (2, -1, 3)), ((0, 4), (4, 0)),
                                     ((1,), ()), ((), (1, 1)), ((2, 3, 4), (4, 3, 2)), ((0,), (0, 5))], ids=str)
def test_reshape_and_view(src, dst, device):
    a = _arange(src)
    r = st_tensor(a, device=device).reshape(*dst) if dst else st_tensor(a, device=device).reshape(())
    assert_close(r, a.reshape(dst))
    assert_close(st.reshape(st_tensor(a, device=device), dst), a.reshape(dst))
    base = st_tensor(a, device=device)
    v = base.view(*dst) if dst else base.view(())
    assert_close(v, a.reshape(dst))
    if a.size:
        assert _shares_storage(v, base)


def test_view_of_noncontiguous_raises_and_reshape_copies(device):
    a = _arange((3, 4))
    t = st_tensor(a, device=device).T
    with pytest.raises(st.ShapeError):
        t.view(12)
    r = t.reshape(12)
    assert_close(r, a.T.reshape(12))
    assert r.is_contiguous()
    # reshape of a contiguous tensor is a view
    base = st_tensor(a, device=device)
    assert _shares_storage(base.reshape(2, 6), base)


def test_reshape_bad_sizes():
    with pytest.raises(st.ShapeError):
        st.zeros(2, 3).reshape(4, 2)
    with pytest.raises((st.ShapeError, st.SpiralValueError)):
        st.zeros(2, 3).reshape(-1, -1)


def test_view_dtype_reinterprets_bits(device):
    a = np.array([1.5, -2.0, 0.25, 8.0], dtype=np.float32)
    t = st_tensor(a, device=device)
    v = t.view(st.int32)
    assert v.dtype == st.int32
    assert v.tolist() == a.view(np.int32).tolist()
    assert v.data_ptr() == t.data_ptr()


@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 4), (1, 5, 1, 2)], ids=str)
def test_transpose_permute_t(shape, device):
    a = _arange(shape)
    t = st_tensor(a, device=device)
    nd = len(shape)
    for d0 in range(-nd, nd):
        for d1 in range(-nd, nd):
            tr = t.transpose(d0, d1)
            assert_close(tr, np.swapaxes(a, d0, d1))
            assert list(tr.stride()) == [s // a.itemsize for s in np.swapaxes(a, d0, d1).strides]
    perm = list(reversed(range(nd)))
    assert_close(t.permute(*perm), np.transpose(a, perm))
    assert_close(st.permute(t, perm), np.transpose(a, perm))
    assert_close(t.T, a.T)
    assert_close(st.t(t), a.T)
    assert_close(t.mT, np.swapaxes(a, -1, -2))
    assert _shares_storage(t.permute(*perm), t)


def test_permute_bad_dims():
    with pytest.raises((st.ShapeError, st.SpiralValueError, st.SpiralIndexError)):
        st.zeros(2, 3).permute(0, 0)
    with pytest.raises((st.ShapeError, st.SpiralValueError, st.SpiralIndexError)):
        st.zeros(2, 3).permute(0)


def test_strides_contiguity_and_offset(device):
    t = st.zeros(3, 4, 5, device=device)
    assert t.stride() == [20, 5, 1] or tuple(t.stride()) == (20, 5, 1)
    assert t.is_contiguous()
    assert not t.transpose(0, 2).is_contiguous()
    s = t[1:, 2]
    assert s.storage_offset() == 20 + 10
    assert tuple(s.stride()) == (20, 1)
    assert t.stride(1) == 5
    assert t.stride(-1) == 1
    c = t.transpose(0, 2).contiguous()
    assert c.is_contiguous() and tuple(c.shape) == (5, 4, 3)


@pytest.mark.parametrize("kind", ["transpose", "slice"])
def test_contiguous_and_clone_copy(kind, device):
    a = rand_array((4, 6), np.float64, seed=1)
    v = noncontig(a, kind, device=device)
    c = v.contiguous()
    assert c.is_contiguous()
    assert_close(c, a)
    k = v.clone()
    assert_close(k, a)
    k.fill_(0)
    assert_close(v, a)  # clone does not alias
    base = st.zeros(3, device=device)
    assert base.contiguous().data_ptr() == base.data_ptr()  # no copy when already contiguous


def test_slicing_views_match_numpy(device):
    a = _arange((5, 6, 7))
    t = st_tensor(a, device=device)
    cases = [
        (slice(1, 4),),
        (slice(None, None, 2),),
        (slice(None), slice(1, None, 3)),
        (Ellipsis, slice(2, 5)),
        (1, slice(None), 2),
        (-1,),
        (slice(-3, -1), -2),
        (None, 1),
        (slice(None), None, slice(None, 2)),
        (Ellipsis, None),
        (slice(10, 20),),
        (slice(3, 1),),
        (0, 0, 0),
        (Ellipsis, -1),
        (slice(None), Ellipsis, 0),
    ]
    for idx in cases:
        got = t[idx]
        assert_close(got, a[idx])
    # assigning through chained slices writes into the original
    t[1:3, ::2, 4] = 0.0
    a[1:3, ::2, 4] = 0.0
    assert_close(t, a)


def test_select_narrow_and_functional_forms(device):
    a = _arange((4, 5, 6))
    t = st_tensor(a, device=device)
    assert_close(t.select(1, 2), a[:, 2])
    assert_close(st.select(t, -1, -1), a[..., -1])
    assert_close(t.narrow(2, 1, 3), a[:, :, 1:4])
    assert_close(st.narrow(t, 0, 2, 2), a[2:4])
    assert _shares_storage(t.narrow(2, 1, 3), t)
    with pytest.raises((st.SpiralIndexError, st.ShapeError, IndexError)):
        t.select(0, 4)
    with pytest.raises((st.SpiralIndexError, st.ShapeError, IndexError, st.SpiralValueError)):
        t.narrow(0, 3, 2)


@pytest.mark.parametrize("src,dst", [((3, 1), (3, 4)), ((1,), (2, 3, 1)), ((4,), (3, 4)), ((), (2, 2)),
                                     ((2, 1, 3), (2, 5, 3)), ((1, 1), (0, 4)), ((3, 1), (-1, 4))], ids=str)
def test_expand_and_broadcast_to(src, dst, device):
    a = _arange(src)
    np_dst = tuple(src[i - (len(dst) - len(src))] if d == -1 else d for i, d in enumerate(dst))
    e = st_tensor(a, device=device).expand(*dst)
    assert_close(e, np.broadcast_to(a, np_dst))
    assert_close(st.broadcast_to(st_tensor(a, device=device), np_dst), np.broadcast_to(a, np_dst))
    # expanded dims have stride 0
    for i, (s, d) in enumerate(zip((1,) * (len(np_dst) - len(src)) + tuple(src), np_dst)):
        if s == 1 and d != 1:
            assert e.stride(i) == 0
    assert_close(st_tensor(a, device=device).expand_as(st.zeros(*np_dst, device=device)), np.broadcast_to(a, np_dst))


def test_expand_invalid():
    with pytest.raises(st.ShapeError):
        st.zeros(3, 2).expand(3, 4)
    with pytest.raises(st.ShapeError):
        st.zeros(3).expand(2)


def test_squeeze_unsqueeze_flatten(device):
    a = _arange((1, 3, 1, 2))
    t = st_tensor(a, device=device)
    assert_close(t.squeeze(), np.squeeze(a))
    assert_close(t.squeeze(0), np.squeeze(a, 0))
    assert_close(t.squeeze(2), np.squeeze(a, 2))
    assert_close(t.squeeze(1), a)  # size != 1: unchanged
    assert_close(st.squeeze(t, -2), np.squeeze(a, -2))
    for d in range(-5, 5):
        assert_close(t.unsqueeze(d), np.expand_dims(a, d))
    with pytest.raises((st.SpiralIndexError, IndexError, st.ShapeError)):
        t.unsqueeze(5)
    b = _arange((2, 3, 4, 5))
    tb = st_tensor(b, device=device)
    assert_close(tb.flatten(), b.reshape(-1))
    assert_close(tb.flatten(1), b.reshape(2, -1))
    assert_close(st.flatten(tb, 1, 2), b.reshape(2, 12, 5))
    assert_close(tb.flatten(-2, -1), b.reshape(2, 3, 20))
    assert_close(tensor_on(5.0, device=device).flatten(), np.array([5.0], dtype=np.float32))
    assert_close(st_tensor(b, device=device).T.flatten(), b.T.reshape(-1))
    assert_close(tensor_on(3.0, device=device).unsqueeze(0), np.array([3.0], dtype=np.float32))
    assert_close(tensor_on([3.0], device=device).squeeze(), np.float32(3.0))


def test_shape_size_numel_dim():
    t = st.zeros(2, 3, 4)
    assert t.shape == (2, 3, 4)
    assert t.size() == (2, 3, 4)
    assert t.size(1) == 3
    assert t.size(-1) == 4
    assert t.numel() == 24
    assert t.dim() == 3 and t.ndim == 3
    assert len(t) == 2
    assert isinstance(t.shape, tuple)
    assert t.shape.numel() == 24
    assert st.zeros(()).shape == ()
    assert st.zeros(0, 5).numel() == 0
    with pytest.raises(TypeError):
        len(st.tensor(1.0))


@needs_torch
def test_views_match_torch_strides(device):
    import torch

    a = _arange((3, 4, 5))
    s = st_tensor(a, device=device)
    t = torch.from_numpy(a.copy())
    pairs = [
        (s.transpose(0, 2), t.transpose(0, 2)),
        (s[1:, ::2], t[1:, ::2]),
        (s.permute(1, 2, 0), t.permute(1, 2, 0)),
        (s[:, 1], t[:, 1]),
        (s.unsqueeze(1), t.unsqueeze(1)),
        (s[:, :1].expand(3, 6, 5), t[:, :1].expand(3, 6, 5)),
        (s.narrow(2, 1, 2), t.narrow(2, 1, 2)),
    ]
    for sv, tv in pairs:
        assert tuple(sv.shape) == tuple(tv.shape)
        assert tuple(sv.stride()) == tuple(tv.stride())
        assert sv.storage_offset() == tv.storage_offset()
        assert sv.is_contiguous() == tv.is_contiguous()
        np.testing.assert_array_equal(to_np(sv), tv.numpy())
