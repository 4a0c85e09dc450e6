"""Module.cuda() / Module.cpu(): PyTorch's spelling of moving a module's parameters in place."""

from __future__ import annotations

import pytest

import spiraltorch as st
from conftest import HAVE_CUDA


def test_cpu_returns_the_module_on_the_cpu():
    m = st.nn.Sequential(st.nn.Linear(3, 4), st.nn.ReLU(), st.nn.Linear(4, 2))
    assert m.cpu() is m
    assert all(str(p.device) == "cpu" for p in m.parameters())


@pytest.mark.skipif(HAVE_CUDA, reason="checks the refusal without a usable GPU")
def test_cuda_without_a_gpu_refuses_clearly():
    with pytest.raises(st.DeviceUnavailableError, match="CUDA is not available"):
        st.nn.Linear(3, 2).cuda()


@pytest.mark.skipif(not HAVE_CUDA, reason="needs CUDA")
def test_cuda_moves_parameters_and_back():
    m = st.nn.Linear(3, 2)
    assert m.cuda() is m
    assert all(str(p.device).startswith("cuda") for p in m.parameters())
    assert all(str(p.device).startswith("cuda") for p in st.nn.Linear(3, 2).cuda(0).parameters())
    m.cpu()
    assert all(str(p.device) == "cpu" for p in m.parameters())
