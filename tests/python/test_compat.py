"""spiraltorch.compat: capture() and share() across frameworks."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
from conftest import to_np


def test_capture_spiraltorch_lists_and_numpy():
    t = st.arange(4.0)
    c = st.capture(t)
    assert c.data_ptr() != t.data_ptr() and c.tolist() == t.tolist()  # a clone
    assert st.capture([[1.0, 2.0]]).tolist() == [[1.0, 2.0]]
    a = np.arange(6.0).reshape(2, 3)
    s = st.capture(a)
    assert s.data_ptr() == a.ctypes.data and s.dtype == st.float64  # shared through DLPack
    assert st.share(t, "st") is t
    with pytest.raises(TypeError, match="cannot turn a builtins.object"):
        st.capture(object())
    with pytest.raises(ValueError, match="unknown target 'mxnet'"):
        st.share(t, "mxnet")


def test_share_and_capture_with_torch_and_jax():
    torch = pytest.importorskip("torch")
    x = torch.arange(6.0).reshape(2, 3)
    s = st.capture(x)
    assert s.data_ptr() == x.data_ptr()
    back = st.share(s, "pytorch")
    assert isinstance(back, torch.Tensor) and back.data_ptr() == x.data_ptr()
    assert st.share(x, "torch") is x
    w = st.ones(2, requires_grad=True)
    assert st.share(w, "torch").tolist() == [1.0, 1.0]  # detached for the hand-over
    jax = pytest.importorskip("jax")
    j = st.share(x, "jax")  # torch -> SpiralTorch -> JAX
    assert isinstance(j, jax.Array)
    np.testing.assert_array_equal(np.asarray(j), x.numpy())
    np.testing.assert_array_equal(to_np(st.capture(j)), x.numpy())
