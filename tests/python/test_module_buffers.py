"""Buffers on modules as PyTorch has them: register_buffer (persistent or not), buffers read
and replaced as attributes, get_buffer, and their place in state_dict / load_state_dict;
sort/argsort's stable= keyword."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
from conftest import to_np

nn = st.nn


class Masked(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 2)
        self.register_buffer("scale", st.full([2], 2.0))
        self.register_buffer("cache", st.zeros(4), persistent=False)

    def forward(self, x):
        return self.lin(x) * self.scale


def test_buffers_read_as_attributes_and_join_the_state_dict():
    m = Masked()
    np.testing.assert_array_equal(to_np(m.scale), [2.0, 2.0])
    np.testing.assert_array_equal(to_np(m.cache), np.zeros(4))
    assert [k for k, _ in m.named_buffers()] == ["scale", "cache"]
    assert list(m.state_dict()) == ["scale", "lin::weight", "lin::bias"]
    assert list(m.state_dict(keep_vars=True)) == list(m.state_dict())
    assert m.state_dict(keep_vars=True)["scale"] is not None
    x = st.randn(4, 3)
    np.testing.assert_allclose(to_np(m(x)), 2.0 * to_np(m.lin(x)), rtol=1e-6)
    np.testing.assert_array_equal(to_np(m.get_buffer("scale")), [2.0, 2.0])
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        m.missing
    with pytest.raises(AttributeError, match="'nope.scale': no submodule 'nope'"):
        m.get_buffer("nope.scale")


def test_assigning_a_buffer_replaces_it_and_keeps_its_persistence():
    m = Masked()
    m.cache = st.ones(3)
    np.testing.assert_array_equal(to_np(m.cache), np.ones(3))
    assert "cache" not in m.state_dict()
    m.scale = st.full([2], 3.0)
    np.testing.assert_array_equal(to_np(m.state_dict()["scale"]), [3.0, 3.0])
    m.to(st.float64)
    assert m.cache.dtype == st.float64 and m.scale.dtype == st.float64


def test_non_persistent_buffers_in_load_state_dict():
    m = Masked()
    sd = m.state_dict()
    r = Masked().load_state_dict(sd)  # strict: no entry is needed for "cache"
    assert list(r.missing_keys) == [] and list(r.unexpected_keys) == []
    sd["cache"] = st.zeros(4)
    with pytest.raises(st.CheckpointError, match="unexpected keys 'cache'"):
        Masked().load_state_dict(sd)
    r = Masked().load_state_dict(sd, strict=False)
    assert list(r.unexpected_keys) == ["cache"]


def test_buffers_on_native_layers_and_nested_get_buffer():
    seq = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    seq[0].register_buffer("step", st.zeros([], dtype=st.int64), persistent=False)
    assert seq[0].step.item() == 0
    np.testing.assert_array_equal(to_np(seq.get_buffer("1.running_var")), np.ones(2))
    assert "0::step" not in seq.state_dict() and "1::running_var" in seq.state_dict()


def test_buffer_keys_match_torch():
    torch = pytest.importorskip("torch")

    class T(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(3, 2)
            self.register_buffer("scale", torch.full((2,), 2.0))
            self.register_buffer("cache", torch.zeros(4), persistent=False)

    t, m = T(), Masked()
    assert [k.replace(".", "::") for k in t.state_dict()] == list(m.state_dict())
    assert [k for k, _ in t.named_buffers()] == [k for k, _ in m.named_buffers()]


@pytest.mark.parametrize("descending", [False, True])
def test_sort_and_argsort_accept_stable(descending):
    torch = pytest.importorskip("torch")
    a = np.array([3.0, 1.0, 2.0, 1.0, 3.0, 2.0, 1.0], dtype=np.float32)
    v, i = st.sort(st.tensor(a), descending=descending, stable=True)
    tv, ti = torch.sort(torch.tensor(a), descending=descending, stable=True)
    np.testing.assert_array_equal(to_np(v), tv.numpy())
    np.testing.assert_array_equal(to_np(i), ti.numpy())
    np.testing.assert_array_equal(to_np(st.tensor(a).argsort(descending=descending, stable=True)),
                                  torch.tensor(a).argsort(descending=descending, stable=True).numpy())
    with pytest.raises(TypeError):
        st.sort(st.tensor(a), -1, False, True)  # stable is keyword-only, as in PyTorch
