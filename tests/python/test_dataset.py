"""spiraltorch.dataset: Dataset, the DataLoader pipeline builder and the byte-LM helpers."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
from spiraltorch import dataset as dsm


def _samples(n, rows=1):
    return [(st.full((rows, 2), float(i)), st.full((rows, 1), float(-i))) for i in range(n)]


def test_dataset_and_fixed_batches():
    ds = dsm.Dataset.from_samples(x for x in _samples(5))  # generators are fine
    ds.push([[9.0, 9.0]], [[-9.0]])
    assert len(ds) == 6 and not ds.is_empty()
    loader = ds.loader().batched(4)
    assert len(loader) == 6 and loader.batch_size() == 4
    batches = list(loader)
    assert [tuple(x.shape) for x, _ in batches] == [(4, 2), (2, 2)]
    assert batches[1][1].tolist() == [[-4.0], [-9.0]]
    assert [x.tolist() for x, _ in ds] [0] == [[0.0, 0.0]]  # iterating a dataset: batch size 1
    with pytest.raises(TypeError, match="sample 0 has 3 values"):
        dsm.Dataset.from_samples([(1.0, 2.0, 3.0)])
    with pytest.raises(ValueError, match="batch_size must be a positive int"):
        loader.batched(0)


def test_shuffle_is_a_fixed_permutation_and_builders_are_immutable():
    base = dsm.DataLoader.from_samples(_samples(10))
    shuffled = base.shuffle(7)
    first = [x[0, 0].item() for x, _ in shuffled]
    assert sorted(first) == [float(i) for i in range(10)] and first != sorted(first)
    assert [x[0, 0].item() for x, _ in shuffled] == first  # same order on every pass
    assert [x[0, 0].item() for x, _ in base.shuffle(7)] == first  # and for the same seed
    assert [x[0, 0].item() for x, _ in base] == [float(i) for i in range(10)]  # base unchanged


def test_dynamic_batches_by_rows():
    samples = [(st.zeros(r, 3), st.zeros(r, 1)) for r in (2, 2, 3, 5, 1, 1)]
    loader = dsm.DataLoader.from_samples(samples).dynamic_batch_by_rows(4)
    assert [x.shape[0] for x, _ in loader] == [4, 3, 5, 2]  # 2+2 | 3 | 5 alone | 1+1
    assert loader.batch_size() == 4
    with pytest.raises(ValueError, match="max_rows must be a positive int"):
        loader.dynamic_batch_by_rows(0)


def test_prefetch_matches_on_demand_and_reraises_errors():
    loader = dsm.DataLoader.from_samples(_samples(25)).shuffle(1).batched(3)
    plain = [(x.tolist(), y.tolist()) for x, y in loader]
    pre = [(x.tolist(), y.tolist()) for x, y in loader.prefetch(2)]
    assert pre == plain and loader.prefetch(2).prefetch_depth() == 2
    it = iter(loader.prefetch(1))
    next(it)
    it.close()  # an abandoned prefetching iterator stops its thread
    bad = dsm.DataLoader.from_samples([(st.zeros(1, 2), st.zeros(1, 1)), (st.zeros(1, 3), st.zeros(1, 1))])
    with pytest.raises(st.ShapeError):
        list(bad.batched(2).prefetch(1))


def test_byte_lm_helpers():
    w = dsm.byte_lm_windows("héllo", 3)  # 6 UTF-8 bytes -> 3 windows
    assert len(w) == 3 and tuple(w[0][0].shape) == (3, dsm.BYTE_LM_VOCAB)
    data = "héllo".encode()
    assert np.argmax(w[1][0].numpy(), 1).tolist() == list(data[1:4])
    assert np.argmax(w[1][1].numpy(), 1).tolist() == list(data[2:5])
    assert dsm.byte_lm_windows("ab", 2) == []
    assert len(dsm.byte_lm_corpus_windows(["abcd", "", "xyz"], 2)) == 3
    assert dsm.byte_lm_sample_stats(w) == {"samples": 3, "active_rows": 9, "target_rows": 9}
    assert dsm.interleave_replay_samples([1, 2, 3, 4], ["r"], target_per_replay=2) == [1, 2, "r", 3, 4, "r"]
    with pytest.raises(ValueError, match="context must be a positive int"):
        dsm.byte_lm_windows("abc", 0)
