"""The seed's 2-D API: Tensor(rows, cols, flat), Tensor.rand(rows, cols, seed=),
shape() == shape, tolist, matmul(backend=), row_softmax."""

import numpy as np
import pytest

import spiraltorch as st
from conftest import assert_close, needs_torch, to_np


def test_constructor_from_flat_list():
    t = st.Tensor(2, 3, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    assert t.shape() == (2, 3)
    assert t.shape == (2, 3)
    assert t.shape() == t.shape
    assert t.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert t.dtype == st.float32
    assert t.is_contiguous()
    # ints in the flat list become float32 values
    assert st.Tensor(1, 2, [1, 2]).dtype == st.float32
    assert st.Tensor(1, 2, [1, 2]).tolist() == [[1.0, 2.0]]
    assert st.Tensor(2, 2, [1, 2, 3, 4], dtype=st.float64).dtype == st.float64


def test_constructor_zeros_and_empty():
    z = st.Tensor(3, 2)
    assert z.shape() == (3, 2)
    assert z.tolist() == [[0.0, 0.0]] * 3
    e = st.Tensor(0, 4, [])
    assert e.shape() == (0, 4) and e.tolist() == []
    assert st.Tensor(2, 0).tolist() == [[], []]


def test_constructor_from_data_and_tuple_or_numpy():
    assert st.Tensor([[1.0, 2.0]]).shape == (1, 2)
    assert st.Tensor(2, 2, (1.0, 2.0, 3.0, 4.0)).tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert st.Tensor(2, 2, np.array([1.0, 2.0, 3.0, 4.0])).tolist() == [[1.0, 2.0], [3.0, 4.0]]
    t = st.Tensor(1, 2, [1.0, 2.0], requires_grad=True)
    assert t.requires_grad and t.is_leaf


def test_constructor_size_mismatch_message():
    with pytest.raises(st.ShapeError) as ei:
        st.Tensor(2, 2, [1.0])
    msg = str(ei.value)
    assert "4" in msg and "1" in msg


def test_seeded_rand_is_reproducible_and_isolated():
    a = st.Tensor.rand(4, 5, seed=3)
    st.manual_seed(0)
    g1 = st.rand(3).tolist()
    st.manual_seed(0)
    b = st.Tensor.rand(4, 5, seed=3)
    g2 = st.rand(3).tolist()
    assert a.tolist() == b.tolist()
    assert g1 == g2  # the seeded form does not touch the global generator
    assert a.shape() == (4, 5)
    v = to_np(a)
    assert v.dtype == np.float32
    assert np.all((v >= 0) & (v < 1))
    assert len(np.unique(v)) == 20
    c = st.Tensor.rand(4, 5, seed=4)
    assert c.tolist() != a.tolist()
    # a prefix property: the same seed gives the same stream for a different shape
    assert st.Tensor.rand(2, 3, seed=3).shape() == (2, 3)


def test_seeded_rand_thread_independent():
    st.set_num_threads(1)
    a = st.Tensor.rand(100, 50, seed=11).tolist()
    st.set_num_threads(2)
    b = st.Tensor.rand(100, 50, seed=11).tolist()
    assert a == b


def test_seeded_randn_restores_global_state():
    st.manual_seed(5)
    before = st.rand(4).tolist()
    st.manual_seed(5)
    n1 = st.Tensor.randn(3, 3, seed=9)
    after = st.rand(4).tolist()
    n2 = st.Tensor.randn(3, 3, seed=9)
    assert before == after
    assert n1.tolist() == n2.tolist()


def test_rand_requires_rows_cols_with_seed():
    with pytest.raises(st.ShapeError):
        st.Tensor.rand(2, 3, 4, seed=1)
    with pytest.raises(st.ShapeError):
        st.Tensor.rand(-1, 3, seed=1)


def test_tolist_shapes_and_types():
    assert st.Tensor(1, 1, [2.5]).tolist() == [[2.5]]
    assert st.tensor(3).tolist() == 3
    assert isinstance(st.tensor(3).tolist(), int)
    assert isinstance(st.tensor(3.0).tolist(), float)
    assert st.tensor([True, False]).tolist() == [True, False]
    assert isinstance(st.tensor([True]).tolist()[0], bool)
    assert st.tensor([[1, 2], [3, 4]]).T.tolist() == [[1, 3], [2, 4]]


def test_matmul_seed_form():
    a = st.Tensor(2, 3, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    b = st.Tensor(3, 2, [7.0, 8.0, 9.0, 10.0, 11.0, 12.0])
    c = a.matmul(b, backend="cpu")
    assert c.shape() == (2, 2)
    assert c.tolist() == [[58.0, 64.0], [139.0, 154.0]]
    assert a.matmul(b).tolist() == c.tolist()
    assert st.matmul(a, b, backend="auto").tolist() == c.tolist()
    r = st.Tensor.rand(64, 48, seed=1)
    s = st.Tensor.rand(48, 32, seed=2)
    assert_close(r.matmul(s, backend="cpu"), to_np(r) @ to_np(s), rtol=1e-5, atol=1e-5)


def test_matmul_wgpu_runs_there_or_is_refused():
    a = st.Tensor(2, 2, [1.0, 2.0, 3.0, 4.0])
    if st.wgpu.is_available():
        r = a.matmul(a, backend="wgpu")  # computed on the adapter, handed back where `a` lives
        assert r.device == "cpu" and r.tolist() == [[7.0, 10.0], [15.0, 22.0]]
    else:
        with pytest.raises(st.DeviceUnavailableError):
            a.matmul(a, backend="wgpu")


def test_row_softmax():
    t = st.Tensor(2, 3, [1.0, 2.0, 3.0, 0.0, 0.0, 0.0])
    s = t.row_softmax()
    assert s.shape() == (2, 3)
    v = to_np(s)
    e = np.exp(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(v[0], e / e.sum(), rtol=1e-6)
    np.testing.assert_allclose(v[1], [1 / 3] * 3, rtol=1e-6)
    np.testing.assert_allclose(v.sum(axis=1), [1.0, 1.0], rtol=1e-6)
    big = st.Tensor(1, 3, [1000.0, 1001.0, 1002.0]).row_softmax()
    np.testing.assert_allclose(to_np(big)[0], e / e.sum(), rtol=1e-5)
    with pytest.raises(st.ShapeError):
        st.zeros(2, 2, 2).row_softmax()
    with pytest.raises(st.ShapeError):
        st.zeros(3).row_softmax()


def test_row_softmax_noncontiguous_and_seeded():
    r = st.Tensor.rand(5, 7, seed=3)
    expected = np.exp(to_np(r).T)
    expected /= expected.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(to_np(r.T.row_softmax()), expected, rtol=1e-6)


@needs_torch
def test_seed_forms_match_torch():
    import torch

    a = st.Tensor.rand(6, 4, seed=7)
    b = st.Tensor.rand(4, 3, seed=8)
    ta = torch.from_dlpack(a)
    tb = torch.from_dlpack(b)
    np.testing.assert_allclose(to_np(a.matmul(b, backend="cpu")), (ta @ tb).numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_np(a.row_softmax()), torch.softmax(ta, dim=1).numpy(), rtol=1e-6, atol=1e-7)


def test_repr_mentions_values():
    t = st.Tensor(1, 2, [1.0, 2.5])
    r = repr(t)
    assert r.startswith("tensor(") and "2.5" in r
    assert "requires_grad=True" in repr(st.tensor([1.0], requires_grad=True))
    assert "float64" in repr(st.tensor([1.0], dtype=st.float64))
