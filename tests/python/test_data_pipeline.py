"""The native data pipeline (spiraltorch._core.data) behind spiraltorch.data and
spiraltorch.dataset: Philox shuffles, coverage, row segments, prefetch on a C++ thread,
early exit and errors."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

import spiraltorch as st
from spiraltorch import _core


def _rows(n):
    return st.arange(n * 3, dtype=st.float32).reshape(n, 3), st.arange(n)


def test_permutation_is_seeded_and_generator_driven():
    a = _core.data.permutation(100, seed=5)
    assert sorted(a) == list(range(100)) and a == _core.data.permutation(100, seed=5)
    assert a != _core.data.permutation(100, seed=6)
    g = st.Generator().manual_seed(3)
    first = _core.data.permutation(50, generator=g)
    assert first != _core.data.permutation(50, generator=g)  # the generator moved on
    assert first == _core.data.permutation(50, generator=st.Generator().manual_seed(3))


@pytest.mark.parametrize("prefetch", [0, 2])
def test_tensor_loader_covers_every_row_once_in_a_reproducible_order(prefetch):
    x, y = _rows(203)
    ds = st.data.TensorDataset(x, y)
    assert len(ds.native) == 203 and ds.native.num_fields == 2

    def epoch(seed):
        loader = st.data.DataLoader(ds, batch_size=16, shuffle=True, prefetch=prefetch,
                                    generator=st.Generator().manual_seed(seed))
        labels = []
        for xb, yb in loader:
            np.testing.assert_array_equal(xb.numpy()[:, 0], 3 * yb.numpy())  # rows stay paired
            labels += yb.tolist()
        return labels

    a = epoch(1)
    assert sorted(a) == list(range(203)) and a != sorted(a)
    assert a == epoch(1) and a != epoch(2)
    plain = [yb.tolist() for _, yb in st.data.DataLoader(ds, batch_size=50, drop_last=True, prefetch=prefetch)]
    assert [len(b) for b in plain] == [50, 50, 50, 50] and plain[0][:3] == [0, 1, 2]


def test_native_dataset_segments_gather_and_errors():
    nd = _core.data.TensorDataset([st.zeros(5, 2), st.ones(3)], offsets=[[0, 2, 5], [0, 1, 3]])
    assert len(nd) == 2 and nd.rows(0, 1) == 3 and nd.rows(1, 1) == 2
    xb, yb = nd.gather([1, 0])
    assert tuple(xb.shape) == (5, 2) and tuple(yb.shape) == (3,)
    assert tuple(nd.field(0).shape) == (5, 2)
    with pytest.raises(st.ShapeError, match="cover rows"):
        _core.data.TensorDataset([st.zeros(4, 2)], offsets=[[0, 2, 5]])
    with pytest.raises(st.ShapeError, match="same first dim"):
        _core.data.TensorDataset([st.zeros(4, 2), st.zeros(3)])
    with pytest.raises(IndexError):
        nd.gather([2])
    loader = _core.data.DataLoader(nd, max_rows=3)
    assert len(loader) == 2
    with pytest.raises(ValueError, match="batch_size must be positive"):
        _core.data.DataLoader(nd, batch_size=0)


def test_early_break_stops_the_prefetch_thread_and_errors_reach_the_consumer():
    x, y = _rows(1000)
    loader = st.data.DataLoader(st.data.TensorDataset(x, y), batch_size=10, prefetch=4)
    it = iter(loader)
    next(it)
    assert 1 <= it.produced <= 5  # bounded queue: never more than 4 batches ahead
    it.close()
    assert list(it) == []
    for _ in range(3):  # abandoned iterators are joined when collected
        next(iter(loader))
    gc.collect()
    nd = _core.data.TensorDataset([x])
    # Indices are checked when the epoch is planned, before any thread starts; errors raised while
    # a batch is gathered reach next() (tests/cpp/test_data.cpp, ProducerErrorsReachTheConsumer).
    with pytest.raises(IndexError, match="sample index 5000 is out of range"):
        _core.data.DataLoader(nd, batch_size=2, prefetch=2).epoch(order=[0, 1, 2, 5000])
    sub = _core.data.DataLoader(nd, batch_size=2, prefetch=2).epoch(order=[7, 3, 9])
    assert len(sub) == 2 and [b[0][:, 0].tolist() for b in sub] == [[21.0, 9.0], [27.0]]


def test_generic_datasets_keep_the_python_path_and_device_requires_tensors():
    class Squares:
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return float(i * i)

    loader = st.data.DataLoader(Squares(), batch_size=2, prefetch=1)
    assert [b.tolist() for b in loader] == [[0.0, 1.0], [4.0, 9.0], [16.0]]
    with pytest.raises(ValueError, match="device= needs a TensorDataset"):
        iter(st.data.DataLoader(Squares(), device="cpu"))
    names = []
    for _ in st.data.DataLoader(st.data.TensorDataset(*_rows(8)), batch_size=2, prefetch=1, device="cpu"):
        names.append(threading.current_thread().name)
    assert len(names) == 4


@pytest.mark.skipif(not st.cuda.is_available(), reason="needs CUDA")
def test_cuda_device_batches_arrive_through_pinned_async_copies():
    x, y = _rows(300)
    loader = st.data.DataLoader(st.data.TensorDataset(x, y), batch_size=32, shuffle=True, prefetch=2, device="cuda")
    seen = []
    for xb, yb in loader:
        assert str(xb.device).startswith("cuda")
        np.testing.assert_array_equal(xb.cpu().numpy()[:, 0], 3 * yb.cpu().numpy())
        seen += yb.cpu().tolist()
    assert sorted(seen) == list(range(300))
