"""The argument forms of nn.save_json/load_json and save_bincode/load_bincode: load(None, path)
returns the state dict, the original's (module, path) order works beside (path) and loads in place,
and wrong arguments name the operation."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
from conftest import to_np


def _linear():
    st.manual_seed(0)
    return st.nn.Linear(3, 2)


@pytest.mark.parametrize("ext, save, load", [("json", "save_json", "load_json"),
                                              ("bin", "save_bincode", "load_bincode")])
def test_load_with_none_returns_the_state_dict(tmp_path, ext, save, load):
    lin = _linear()
    path = str(tmp_path / f"lin.{ext}")
    getattr(st.nn, save)(lin, path)  # the original's order: (module, path)
    state = getattr(st.nn, load)(None, path)  # the seed: "pass None to load_json to get a state dict back"
    assert isinstance(state, dict) and sorted(state) == sorted(dict(lin.state_dict()))
    for k, v in dict(lin.state_dict()).items():
        np.testing.assert_array_equal(to_np(state[k]), to_np(v))
    assert sorted(getattr(st.nn, load)(path)) == sorted(state)  # our order still works
    other = st.nn.Linear(3, 2)
    assert getattr(st.nn, load)(other, path) is other  # (module, path) loads in place
    np.testing.assert_array_equal(to_np(other.weight), to_np(lin.weight))


def test_argument_errors_name_the_operation(tmp_path):
    with pytest.raises(TypeError, match="nn.load_json: expected a file path"):
        st.nn.load_json(None, None)
    with pytest.raises(TypeError, match="nn.save_json: both arguments are paths"):
        st.nn.save_json("a.json", "b.json")
