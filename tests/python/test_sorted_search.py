"""searchsorted and bucketize, a C++ op (src/ops/search.cpp, the CPU kernel in src/backend/cpu/search.cpp)
bound in python/src: results equal torch's on the same float64 (and integer) inputs, NaN included,
and errors name the op and the shapes."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)


def same(s, t):
    assert tuple(s.shape) == tuple(t.shape)
    assert s.tolist() == t.tolist()


@pytest.mark.parametrize("right", [False, True])
def test_random_rows_and_shared_sequence_match_torch(right):
    seq = np.sort(np.round(rng.standard_normal((3, 4, 17)), 1), -1)  # rounded: repeated entries
    v = np.round(rng.standard_normal((3, 4, 9)), 1)
    v[0, 0, :3] = [np.nan, np.inf, -np.inf]
    same(st.searchsorted(st.tensor(seq), st.tensor(v), right=right),
         torch.searchsorted(torch.tensor(seq), torch.tensor(v), right=right))
    flat = seq[0, 0]
    same(st.searchsorted(st.tensor(flat), st.tensor(v), right=right),
         torch.searchsorted(torch.tensor(flat), torch.tensor(v), right=right))
    same(st.bucketize(st.tensor(v), st.tensor(flat), right=right),
         torch.bucketize(torch.tensor(v), torch.tensor(flat), right=right))
    ints = np.sort(rng.integers(-5, 5, 12))
    iv = rng.integers(-6, 6, (2, 7))
    same(st.searchsorted(st.tensor(ints), st.tensor(iv), right=right),
         torch.searchsorted(torch.tensor(ints), torch.tensor(iv), right=right))
    same(st.searchsorted(st.tensor(flat).to(st.float32), st.tensor(v).to(st.float32), right=right),
         torch.searchsorted(torch.tensor(flat).float(), torch.tensor(v).float(), right=right))


def test_scalars_out_int32_sorter_and_gradients_stop():
    seq = st.tensor([1.0, 3.0, 5.0], requires_grad=True)
    out = st.searchsorted(seq, 4.0)
    assert out.dim() == 0 and out.item() == 2 and not out.requires_grad
    assert st.bucketize(3, st.tensor([1, 3, 5]), right=True).item() == 2
    assert st.searchsorted(st.tensor([1.0, 3.0]), st.tensor([2.0]), out_int32=True).dtype == st.int32
    unsorted = np.array([5.0, 1.0, 9.0, 3.0, 7.0])
    sorter = np.argsort(unsorted)
    vals = np.array([0.0, 3.0, 8.0, 10.0])
    for side in ("left", "right"):
        same(st.searchsorted(st.tensor(unsorted), st.tensor(vals), side=side, sorter=st.tensor(sorter)),
             torch.searchsorted(torch.tensor(unsorted), torch.tensor(vals), side=side, sorter=torch.tensor(sorter)))


def test_errors_name_the_op_and_values():
    with pytest.raises(st.ShapeError, match=r"searchsorted: sorted_sequence \(2, 3\) and input \(3, 1\) must agree"):
        st.searchsorted(st.zeros((2, 3)), st.zeros((3, 1)))
    with pytest.raises(st.ShapeError, match="searchsorted: sorted_sequence must have at least one dimension"):
        st.searchsorted(st.zeros(()), st.zeros(1))
    with pytest.raises(st.ShapeError, match=r"searchsorted: sorter \(2,?\) must have the shape"):
        st.searchsorted(st.zeros(3), st.zeros(1), sorter=st.tensor([0, 1]))
    with pytest.raises(ValueError, match="searchsorted: side must be 'left' or 'right', got 'up'"):
        st.searchsorted(st.zeros(3), st.zeros(1), side="up")
    with pytest.raises(st.ShapeError, match=r"bucketize: boundaries must be 1-D, got shape \(2, 2\)"):
        st.bucketize(st.zeros(3), st.zeros((2, 2)))


@pytest.mark.skipif(not st.wgpu.is_available(), reason="no wgpu adapter")
@pytest.mark.parametrize("right", [False, True])
def test_wgpu_comparison_count_equals_the_cpu_kernel(right):
    seq = np.sort(np.round(rng.standard_normal((3, 11)), 1), -1).astype(np.float32)
    v = np.round(rng.standard_normal((3, 6)), 1).astype(np.float32)
    v[0, 0] = np.nan
    cpu = st.searchsorted(st.tensor(seq), st.tensor(v), right=right)
    gpu = st.searchsorted(st.tensor(seq).to("wgpu"), st.tensor(v).to("wgpu"), right=right)
    assert str(gpu.device).startswith("wgpu")
    same(gpu.to("cpu"), torch.searchsorted(torch.tensor(seq), torch.tensor(v), right=right))
    same(cpu, torch.searchsorted(torch.tensor(seq), torch.tensor(v), right=right))
