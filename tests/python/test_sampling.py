"""bernoulli, multinomial and randperm, C++ ops (src/ops/sampling.cpp) bound in python/src: frequencies over
many draws within a few standard errors, the same draws under the same seed, the Tensor methods, and
errors naming the op and the values."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st

torch = pytest.importorskip("torch")


def arr(t):
    return np.asarray(t.tolist(), dtype=np.float64).reshape(tuple(t.shape))


@pytest.mark.parametrize("dtype", [st.float64, st.float32])
def test_bernoulli_frequencies(dtype):
    probs = np.array([0.0, 0.05, 0.5, 0.9, 1.0])
    n = 20000
    g = st.Generator().manual_seed(3)
    draws = st.bernoulli(st.tensor(np.tile(probs, (n, 1))).to(dtype), generator=g)
    assert draws.dtype == dtype and tuple(draws.shape) == (n, 5)
    d = arr(draws)
    assert set(np.unique(d)) <= {0.0, 1.0}
    se = np.sqrt(probs * (1 - probs) / n)
    np.testing.assert_array_less(np.abs(d.mean(0) - probs), 6 * se + 1e-12)


def test_bernoulli_method_scalar_p_seed_and_errors():
    x = st.zeros((40000,), dtype=st.int64)
    d = x.bernoulli(0.25)
    assert d.dtype == st.int64
    assert abs(arr(d).mean() - 0.25) < 6 * np.sqrt(0.25 * 0.75 / 40000)
    p = st.full((500,), 0.3, dtype=st.float64)
    st.manual_seed(7)
    first = p.bernoulli().tolist()
    st.manual_seed(7)
    assert st.bernoulli(p).tolist() == first
    g1, g2 = st.Generator().manual_seed(5), st.Generator().manual_seed(5)
    assert p.bernoulli(generator=g1).tolist() == st.bernoulli(p, generator=g2).tolist()
    with pytest.raises(ValueError, match=r"bernoulli: probabilities must be in \[0, 1\].*1\.5"):
        st.bernoulli(st.tensor([0.5, 1.5]))
    with pytest.raises(ValueError, match=r"bernoulli: p must be in \[0, 1\], got -0\.1"):
        st.zeros(3).bernoulli(-0.1)
    with pytest.raises(TypeError, match="bernoulli: probabilities must be floating point, got int64"):
        st.bernoulli(st.tensor([0, 1]))
    # Torch's law on the same probabilities: both sample means near p (not the same draws).
    pt = torch.full((40000,), 0.7, dtype=torch.float64)
    assert abs(torch.bernoulli(pt).mean().item() - arr(st.bernoulli(st.full((40000,), 0.7, dtype=st.float64))).mean()) < 0.02


def test_multinomial_with_replacement_frequencies():
    probs = np.array([0.1, 0.0, 0.6, 0.3])
    n = 40000
    draws = st.multinomial(st.tensor(probs * 5), n, replacement=True, generator=st.Generator().manual_seed(8))
    assert draws.dtype == st.int64 and tuple(draws.shape) == (n,)
    freq = np.bincount(np.asarray(draws.tolist()), minlength=4) / n
    np.testing.assert_array_less(np.abs(freq - probs), 6 * np.sqrt(probs * (1 - probs) / n) + 1e-12)


def test_multinomial_without_replacement_method_and_seed():
    probs = np.array([0.1, 0.0, 0.6, 0.3])
    rows = st.tensor(np.stack([probs, probs[::-1].copy()]))
    g = st.Generator().manual_seed(9)
    firsts = []
    for _ in range(3000):
        out = rows.multinomial(3, generator=g).tolist()
        assert sorted(out[0]) == [0, 2, 3] and sorted(out[1]) == [0, 1, 3]
        firsts.append(out[0][0])
    freq = np.bincount(np.array(firsts), minlength=4) / 3000
    np.testing.assert_array_less(np.abs(freq - probs), 6 * np.sqrt(probs * (1 - probs) / 3000) + 1e-12)
    a = st.multinomial(rows, 2, generator=st.Generator().manual_seed(1)).tolist()
    b = st.multinomial(rows, 2, generator=st.Generator().manual_seed(1)).tolist()
    assert a == b


def test_multinomial_errors():
    with pytest.raises(ValueError, match="multinomial: cannot draw 4 samples without replacement from a row with 3"):
        st.multinomial(st.tensor([0.1, 0.0, 0.6, 0.3]), 4)
    with pytest.raises(ValueError, match="multinomial: probabilities must be finite and non-negative.*-0.1"):
        st.multinomial(st.tensor([0.5, -0.1]), 1)
    with pytest.raises(ValueError, match="multinomial: a row of probabilities sums to zero"):
        st.multinomial(st.zeros((2, 3)), 1, True)
    with pytest.raises(ValueError, match="multinomial: num_samples must be positive, got 0"):
        st.multinomial(st.ones(3), 0)
    with pytest.raises(ValueError, match=r"multinomial: expected a 1-D or 2-D input, got shape \(1, 2, 3\)"):
        st.multinomial(st.ones((1, 2, 3)), 1)


def test_randperm_uniform_seed_dtype_and_errors():
    g = st.Generator().manual_seed(21)
    first = np.zeros(4)
    for _ in range(4000):
        p = st.randperm(4, generator=g).tolist()
        assert sorted(p) == [0, 1, 2, 3]
        first[p[0]] += 1 / 4000
    np.testing.assert_array_less(np.abs(first - 0.25), 6 * np.sqrt(0.25 * 0.75 / 4000))
    assert st.randperm(100, generator=st.Generator().manual_seed(4)).tolist() == \
        st.randperm(100, generator=st.Generator().manual_seed(4)).tolist()
    assert st.randperm(5, dtype=st.int32).dtype == st.int32
    assert st.randperm(0).shape == (0,)
    with pytest.raises(ValueError, match="randperm: n must be non-negative, got -1"):
        st.randperm(-1)


@pytest.mark.skipif(not st.wgpu.is_available(), reason="no wgpu adapter")
def test_wgpu_draws_on_the_device_through_the_backend_random_entry():
    n = 20000
    b = st.bernoulli(st.full((n,), 0.3).to("wgpu"), generator=st.Generator().manual_seed(2))
    assert str(b.device).startswith("wgpu")
    assert abs(arr(b.to("cpu")).mean() - 0.3) < 6 * np.sqrt(0.3 * 0.7 / n)
    m = st.multinomial(st.tensor([0.2, 0.0, 0.8]).to("wgpu"), n, True, generator=st.Generator().manual_seed(3))
    freq = np.bincount(np.asarray(m.to("cpu").tolist()), minlength=3) / n
    np.testing.assert_array_less(np.abs(freq - [0.2, 0.0, 0.8]), 6 * np.sqrt(0.2 * 0.8 / n))
    assert sorted(st.randperm(7, device="wgpu").to("cpu").tolist()) == list(range(7))
