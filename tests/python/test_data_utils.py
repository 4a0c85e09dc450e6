"""spiraltorch.utils.data's dataset combinators and samplers against torch.utils.data: lengths,
index sets, batch counts and seeded reproducibility (not torch's random streams)."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import spiraltorch as st
from spiraltorch.utils import data as sd


class Squares(sd.Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if isinstance(i, list):
            return [self[j] for j in i]
        if not 0 <= i < self.n:
            raise IndexError(i)
        return float(i * i)


class Counter(sd.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


def gen(seed):
    return st.Generator().manual_seed(seed)


def test_subset_and_concat_match_torch():
    torch = pytest.importorskip("torch")
    tdu = torch.utils.data
    a, b = Squares(5), Squares(3)
    ours, theirs = sd.ConcatDataset([a, b, Squares(0), Squares(4)]), tdu.ConcatDataset([a, b, Squares(0), Squares(4)])
    assert len(ours) == len(theirs) == 12
    assert ours.cumulative_sizes == theirs.cumulative_sizes
    assert [ours[i] for i in range(-12, 12)] == [theirs[i] for i in range(-12, 12)]
    with pytest.raises(ValueError, match="ConcatDataset: absolute value of index -13 should not exceed dataset length 12"):
        ours[-13]
    with pytest.raises(IndexError, match="ConcatDataset: index 12 is out of range for length 12"):
        ours[12]
    with pytest.raises(ValueError, match="should not be an empty iterable"):
        sd.ConcatDataset([])
    with pytest.raises(TypeError, match="does not support IterableDataset"):
        sd.ConcatDataset([a, Counter(3)])
    plus = a + b
    assert isinstance(plus, sd.ConcatDataset) and [plus[i] for i in range(8)] == [tdu.ConcatDataset([a, b])[i]
                                                                                  for i in range(8)]
    idx = [4, 0, 2, 2]
    s, t = sd.Subset(a, idx), tdu.Subset(a, idx)
    assert len(s) == len(t) == 4
    assert [s[i] for i in range(4)] == [t[i] for i in range(4)]
    assert s[[0, 3]] == t[[0, 3]] == [16.0, 4.0]


@pytest.mark.parametrize("n,lengths", [(10, [3, 7]), (10, [0.3, 0.7]), (11, [0.5, 0.5]), (7, [0.1, 0.2, 0.7]),
                                       (100, [0.333, 0.333, 0.334]), (5, [1.0]), (9, [0.25, 0.25, 0.25, 0.25])])
def test_random_split_lengths_match_torch(n, lengths):
    torch = pytest.importorskip("torch")
    ours = sd.random_split(Squares(n), lengths, generator=gen(0))
    theirs = torch.utils.data.random_split(Squares(n), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(x) for x in ours] == [len(x) for x in theirs]
    flat = [i for part in ours for i in part.indices]
    assert sorted(flat) == list(range(n))  # a partition of the indices


def test_random_split_is_reproducible_and_checks_lengths():
    a = sd.random_split(Squares(20), [5, 15], generator=gen(3))
    b = sd.random_split(Squares(20), [5, 15], generator=gen(3))
    c = sd.random_split(Squares(20), [5, 15], generator=gen(4))
    assert [x.indices for x in a] == [x.indices for x in b] != [x.indices for x in c]
    assert [a[0][i] for i in range(5)] == [float(j * j) for j in a[0].indices]
    with pytest.raises(ValueError, match=r"sum of input lengths \(9\) does not equal the length of the dataset \(10\)"):
        sd.random_split(Squares(10), [4, 5])
    with pytest.raises(ValueError, match="random_split: fraction at index 0 is not between 0 and 1: 1.5"):
        sd.random_split(Squares(10), [1.5, -0.5])
    with pytest.warns(UserWarning, match=r"split at index [12] is 0"):
        parts = sd.random_split(Squares(2), [0.9, 0.05, 0.05], generator=gen(0))
    assert [len(p) for p in parts] == [2, 0, 0]  # floor(1.8) = 1, the remainder goes to the first


def test_sequential_and_batch_sampler_match_torch():
    torch = pytest.importorskip("torch")
    tdu = torch.utils.data
    assert list(sd.SequentialSampler(range(7))) == list(tdu.SequentialSampler(range(7)))
    for bs in (1, 3, 7, 10):
        for drop in (False, True):
            ours = sd.BatchSampler(sd.SequentialSampler(range(7)), bs, drop)
            theirs = tdu.BatchSampler(tdu.SequentialSampler(range(7)), bs, drop)
            assert list(ours) == list(theirs) and len(ours) == len(theirs)
    with pytest.raises(ValueError, match="BatchSampler: batch_size should be a positive integer value, but got batch_size=0"):
        sd.BatchSampler(range(3), 0, False)
    with pytest.raises(TypeError, match="drop_last should be a boolean value"):
        sd.BatchSampler(range(3), 2, 1)


def test_random_sampler():
    torch = pytest.importorskip("torch")
    s = sd.RandomSampler(range(10), generator=gen(1))
    order = list(s)
    assert sorted(order) == list(range(10)) and len(s) == 10
    assert list(sd.RandomSampler(range(10), generator=gen(1))) == order  # same seed, same order
    assert list(s) != order  # each epoch draws anew
    long = sd.RandomSampler(range(4), num_samples=10, generator=gen(2))
    theirs = torch.utils.data.RandomSampler(range(4), num_samples=10)
    drawn = list(long)
    assert len(drawn) == len(long) == len(theirs) == 10
    assert sorted(drawn[:8]) == [0, 0, 1, 1, 2, 2, 3, 3]  # whole permutations first, as torch
    rep = list(sd.RandomSampler(range(3), replacement=True, num_samples=300, generator=gen(0)))
    assert len(rep) == 300 and set(rep) == {0, 1, 2}
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=0"):
        sd.RandomSampler(range(3), num_samples=0)
    with pytest.raises(TypeError, match="replacement should be a boolean value"):
        sd.RandomSampler(range(3), replacement=1)


def test_subset_random_sampler():
    idx = [3, 9, 4, 20]
    s = sd.SubsetRandomSampler(idx, generator=gen(5))
    a = list(s)
    assert sorted(a) == sorted(idx) and len(s) == 4
    assert list(sd.SubsetRandomSampler(idx, generator=gen(5))) == a


def test_weighted_random_sampler():
    torch = pytest.importorskip("torch")
    w = [0.1, 0.0, 0.6, 0.3]
    s = sd.WeightedRandomSampler(w, 20000, generator=gen(0))
    draws = list(s)
    assert len(draws) == len(s) == len(torch.utils.data.WeightedRandomSampler(w, 20000)) == 20000
    freq = collections.Counter(draws)
    assert freq[1] == 0
    np.testing.assert_allclose([freq[i] / 20000 for i in range(4)], w, atol=0.02)
    assert list(sd.WeightedRandomSampler(st.tensor(w), 50, generator=gen(0))) == draws[:50]
    nr = list(sd.WeightedRandomSampler(w, 3, replacement=False, generator=gen(1)))
    assert sorted(nr) == [0, 2, 3]
    # Without replacement the heavier index comes first more often.
    firsts = collections.Counter(next(iter(sd.WeightedRandomSampler([1.0, 9.0], 1, replacement=False,
                                                                     generator=gen(k)))) for k in range(400))
    assert firsts[1] > 300
    with pytest.raises(ValueError, match="cannot draw 4 samples without replacement from 3 non-zero weights"):
        sd.WeightedRandomSampler(w, 4, replacement=False)
    with pytest.raises(ValueError, match="weights must be finite, non-negative"):
        sd.WeightedRandomSampler([1.0, -1.0], 2)
    with pytest.raises(st.ShapeError, match="weights should be a 1d sequence"):
        sd.WeightedRandomSampler([[1.0, 2.0]], 2)


def test_dataloader_with_samplers_and_batch_sampler_matches_torch():
    torch = pytest.importorskip("torch")
    tdu = torch.utils.data
    ds = Squares(10)
    for bs, drop in [(3, False), (3, True), (4, False)]:
        ours = sd.DataLoader(ds, batch_size=bs, drop_last=drop, sampler=sd.SequentialSampler(ds))
        theirs = tdu.DataLoader(ds, batch_size=bs, drop_last=drop, sampler=tdu.SequentialSampler(ds))
        assert len(ours) == len(theirs)
        assert [b.tolist() for b in ours] == [b.tolist() for b in theirs]
    bsamp = [[0, 5], [9], [2, 2, 2]]
    ours = sd.DataLoader(ds, batch_sampler=bsamp)
    theirs = tdu.DataLoader(ds, batch_sampler=bsamp)
    assert len(ours) == len(theirs) == 3
    assert [b.tolist() for b in ours] == [b.tolist() for b in theirs]
    ours = sd.DataLoader(ds, batch_sampler=sd.BatchSampler(sd.RandomSampler(ds, generator=gen(0)), 4, True),
                         prefetch=2)
    batches = [b.tolist() for b in ours]
    assert len(ours) == len(batches) == 2 and all(len(b) == 4 for b in batches)
    assert len({x for b in batches for x in b}) == 8
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        sd.DataLoader(ds, batch_size=2, batch_sampler=bsamp)
    # A TensorDataset through a batch sampler: rows are gathered and stacked.
    x = st.arange(12, dtype=st.float32).reshape(6, 2)
    y = st.arange(6, dtype=st.int64)
    out = list(sd.DataLoader(sd.TensorDataset(x, y), batch_sampler=[[5, 0], [3]]))
    assert out[0][0].tolist() == [[10.0, 11.0], [0.0, 1.0]] and out[0][1].tolist() == [5, 0]
    assert out[1][1].tolist() == [3]


def test_dataloader_iterates_an_iterable_dataset_like_torch():
    torch = pytest.importorskip("torch")

    class TCounter(torch.utils.data.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

        def __len__(self):
            return self.n

    for bs, drop in [(3, False), (3, True), (5, False), (1, False)]:
        ours = sd.DataLoader(Counter(11), batch_size=bs, drop_last=drop)
        theirs = torch.utils.data.DataLoader(TCounter(11), batch_size=bs, drop_last=drop)
        assert [b.tolist() for b in ours] == [b.tolist() for b in theirs]
        assert len(ours) == len(theirs)
    assert [b.tolist() for b in sd.DataLoader(Counter(5), batch_size=2, prefetch=2)] == [[0, 1], [2, 3], [4]]
    with pytest.raises(ValueError, match="an IterableDataset takes no shuffle"):
        sd.DataLoader(Counter(5), shuffle=True)
    with pytest.raises(NotImplementedError, match="must define __iter__"):
        iter(sd.IterableDataset())
    with pytest.raises(TypeError, match="itertools.chain"):
        Counter(2) + Counter(3)


def test_sampler_base():
    class Evens(sd.Sampler):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(0, self.n, 2))

        def __len__(self):
            return (self.n + 1) // 2

    assert [b.tolist() for b in sd.DataLoader(Squares(7), batch_size=2, sampler=Evens(7))] == [[0.0, 4.0],
                                                                                               [16.0, 36.0]]
    with pytest.raises(NotImplementedError, match="must define __iter__"):
        iter(sd.Sampler())
