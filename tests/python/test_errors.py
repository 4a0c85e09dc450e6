"""Error types and messages."""

import re

import numpy as np
import pytest

import spiraltorch as st


def test_error_hierarchy():
    for e in (st.ShapeError, st.DtypeError, st.DeviceUnavailableError, st.SpiralIndexError, st.SpiralValueError,
              st.CheckpointError):
        assert issubclass(e, st.SpiralError)
    assert issubclass(st.SpiralValueError, ValueError)
    assert issubclass(st.SpiralIndexError, IndexError)


def test_seed_constructor_size_mismatch():
    with pytest.raises(st.ShapeError) as ei:
        st.Tensor(2, 2, [1.0])
    msg = str(ei.value)
    assert "4" in msg and "1" in msg
    assert re.search(r"\b4\b", msg) and re.search(r"\b1\b", msg)
    with pytest.raises(st.ShapeError, match="6"):
        st.Tensor(2, 3, [1.0] * 5)
    with pytest.raises(st.ShapeError):
        st.Tensor(-1, 2)


def test_matmul_shape_error_names_both_shapes():
    a = st.zeros(2, 3)
    b = st.zeros(4, 5)
    with pytest.raises(st.ShapeError) as ei:
        a.matmul(b)
    assert "(2, 3)" in str(ei.value) and "(4, 5)" in str(ei.value)
    with pytest.raises(st.ShapeError) as ei:
        a @ b
    assert "(2, 3)" in str(ei.value) and "(4, 5)" in str(ei.value)
    with pytest.raises(st.ShapeError) as ei:
        st.matmul(st.zeros(2, 2, 3), st.zeros(3, 4, 5))
    assert "(2, 2, 3)" in str(ei.value) and "(3, 4, 5)" in str(ei.value)
    with pytest.raises(st.ShapeError) as ei:
        st.matmul(st.zeros(3), st.zeros(4))
    assert "(3,)" in str(ei.value) and "(4,)" in str(ei.value)


@pytest.mark.parametrize("backend", [
    pytest.param("wgpu", marks=pytest.mark.skipif(st.wgpu.is_available(), reason="a wgpu adapter is present")),
    pytest.param("cuda", marks=pytest.mark.skipif(st.cuda.is_available(), reason="a CUDA device is present")),
    "mps",
    "hip",
])
def test_matmul_unavailable_backend(backend):
    a = st.Tensor.rand(2, 3, seed=1)
    b = st.Tensor.rand(3, 2, seed=2)
    with pytest.raises(st.DeviceUnavailableError, match=backend):
        a.matmul(b, backend=backend)
    assert a.matmul(b, backend="cpu").shape == (2, 2)
    assert a.matmul(b, backend="auto").tolist() == a.matmul(b).tolist()


def test_matmul_unknown_backend_is_value_error():
    with pytest.raises(ValueError):
        st.zeros(2, 2).matmul(st.zeros(2, 2), backend="quantum")


def test_describe_device():
    with pytest.raises(ValueError, match="nonsense"):
        st.describe_device("nonsense")
    cpu = st.describe_device("cpu")
    assert cpu["available"] is True and cpu["backend"] == "cpu"
    assert cpu["threads"] >= 1
    assert "float32" in cpu["dtypes"]
    auto = st.describe_device("auto")
    if st.cuda.is_available():  # auto resolves to the GPU where there is one
        assert auto["backend"] == "cuda" and auto["available"] is True
    else:
        assert auto["backend"] == "cpu" and auto["requested"] == "auto" and auto["fallback_reason"]
    w = st.describe_device("wgpu")
    assert w["available"] is st.wgpu.is_available() and (w["available"] or w["reason"])
    assert st.describe_device("CPU")["backend"] == "cpu"
    assert st.describe_device()["backend"] == "cpu"


def test_inplace_on_leaf_requiring_grad():
    x = st.tensor([1.0, 2.0], requires_grad=True)
    for fn in (lambda: x.add_(1.0), lambda: x.mul_(2.0), lambda: x.zero_(), lambda: x.fill_(3.0),
               lambda: x.copy_(st.tensor([0.0, 0.0])), lambda: x.clamp_(0, 1), lambda: x.__iadd__(1.0)):
        with pytest.raises(st.SpiralError):
            fn()
    with pytest.raises(st.SpiralError):
        x[0] = 5.0
    assert x.tolist() == [1.0, 2.0]
    # fine under no_grad (how optimisers update parameters)
    with st.no_grad():
        x.add_(1.0)
        x[0] = 0.0
    assert x.tolist() == [0.0, 3.0]
    # .data writes are allowed too
    x.data = st.tensor([5.0, 6.0])
    assert x.tolist() == [5.0, 6.0] and x.requires_grad


def test_backward_twice_raises_with_message():
    x = st.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(st.SpiralError, match="(?i)retain_graph|second time|freed"):
        y.backward()


def test_backward_on_tensor_without_grad():
    with pytest.raises(st.SpiralError):
        st.tensor([1.0]).sum().backward()


def test_broadcast_errors_name_shapes():
    with pytest.raises(st.ShapeError) as ei:
        st.zeros(2, 3) + st.zeros(4)
    assert "(2, 3)" in str(ei.value) and "(4,)" in str(ei.value)
    with pytest.raises(st.ShapeError):
        st.zeros(2, 3) * st.zeros(3, 2)
    with pytest.raises(st.ShapeError):
        st.where(st.zeros(2, dtype=st.bool), st.zeros(3), st.zeros(3))


def test_dtype_errors():
    with pytest.raises(st.DtypeError):
        st.where(st.tensor([1, 0]), st.zeros(2), st.ones(2))  # condition must be bool
    with pytest.raises(st.DtypeError):
        st.tensor([True]) - st.tensor([False])
    with pytest.raises(st.DtypeError):
        st.tensor(["a"])
    with pytest.raises(st.DtypeError):
        st.zeros(2, dtype="complex128")


def test_integer_division_by_zero():
    with pytest.raises(ValueError):
        st.tensor([1, 2]) // st.tensor([1, 0])
    with pytest.raises(ValueError):
        st.tensor([1, 2]) % 0


def test_dim_out_of_range():
    t = st.zeros(2, 3)
    for fn in (lambda: t.sum(dim=2), lambda: t.softmax(dim=-3), lambda: t.transpose(0, 5), lambda: t.max(dim=2),
               lambda: t.unsqueeze(4), lambda: st.cat([t, t], dim=2)):
        with pytest.raises((st.SpiralIndexError, IndexError)) as ei:
            fn()
        assert isinstance(ei.value, st.SpiralError)


def test_ragged_list_raises_shape_error():
    with pytest.raises(st.ShapeError):
        st.tensor([[1, 2], [3]])
    with pytest.raises(st.ShapeError):
        st.tensor([[1, 2], 3])


def test_item_and_bool_of_multi_element():
    with pytest.raises(ValueError):
        st.zeros(2).item()
    with pytest.raises(ValueError):
        bool(st.zeros(2))
    with pytest.raises(TypeError):
        [1, 2][st.tensor(0.0)]


@pytest.mark.skipif(st.cuda.is_available(), reason="a CUDA device is present")
def test_unavailable_device():
    with pytest.raises(st.DeviceUnavailableError):
        st.zeros(2, device="cuda")
    with pytest.raises(st.DeviceUnavailableError):
        st.zeros(2).to("cuda")
    assert st.zeros(2, device="cpu").device == "cpu"
    assert st.zeros(2).to("cpu").device == "cpu"


def test_set_num_threads_validation():
    with pytest.raises(ValueError):
        st.set_num_threads(0)


def test_gelu_bad_approximate():
    with pytest.raises(ValueError, match="approximate"):
        st.gelu(st.zeros(2), approximate="fast")


def test_errors_are_catchable_as_builtin_types_where_sensible():
    try:
        st.zeros(3)[5]
    except IndexError:
        pass
    else:  # pragma: no cover
        pytest.fail("IndexError expected")
    with pytest.raises(Exception) as ei:
        np.asarray(st.zeros(2, 2)) @ np.zeros(3)
    assert ei.type is ValueError
