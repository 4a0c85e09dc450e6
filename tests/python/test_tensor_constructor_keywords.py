"""The original spiraltorch's Tensor constructor forms, as implemented here: Tensor(data),
Tensor(rows, cols[, data]), Tensor(shape, data) and the data=/shape=/rows=/cols=/dtype=/device=/
requires_grad= keywords; NumPy scalars keep their dtype."""

import numpy as np
import pytest

import spiraltorch as st


def test_tensor_shape_with_data_keyword():
    assert st.Tensor((1, 3), data=[1, 2, 3]).tolist() == [[1.0, 2.0, 3.0]]
    assert st.Tensor([1, 2, 3, 4, 5, 6], shape=(2, 3)).tolist() == [[1, 2, 3], [4, 5, 6]]
    assert st.Tensor(range(6), shape=(3, 2)).shape == (3, 2)
    assert st.Tensor((2, 2), [1, 2, 3, 4]).tolist() == [[1, 2], [3, 4]]
    assert st.Tensor(data=[[1, 2]]).shape == (1, 2)


def test_tensor_rows_cols_keywords_infer_the_other_side():
    assert st.Tensor(rows=2, cols=3).shape == (2, 3)
    assert st.Tensor(data=[1, 2, 3, 4], rows=2).shape == (2, 2)
    assert st.Tensor(data=[1, 2, 3, 4, 5, 6], cols=3).tolist() == [[1, 2, 3], [4, 5, 6]]
    assert st.Tensor(2, 3, rows=2).shape == (2, 3)
    with pytest.raises(ValueError, match="rows=3 conflicts with the positional rows 2"):
        st.Tensor(2, 3, rows=3)
    with pytest.raises(st.ShapeError, match="5 values cannot fill 2 rows"):
        st.Tensor(data=[1, 2, 3, 4, 5], rows=2)
    with pytest.raises(st.ShapeError, match="must be non-negative"):
        st.Tensor(rows=-1, cols=2)


def test_tensor_rejects_unknown_keywords_and_bad_forms():
    with pytest.raises(TypeError, match="unexpected keyword arguments: bogus"):
        st.Tensor(bogus=1)
    with pytest.raises(TypeError, match="unexpected keyword arguments: a, z"):
        st.Tensor([1.0], z=1, a=2)
    with pytest.raises(TypeError, match="at most 3 positional"):
        st.Tensor(1, 2, [1, 2], 4)
    with pytest.raises(st.ShapeError, match="expected 6 values for shape"):
        st.Tensor([1, 2, 3], shape=(2, 3))
    with pytest.raises(TypeError, match="both positionally and as data="):
        st.Tensor(1, 2, [1, 2], data=[3, 4])


def test_tensor_constructor_dtype_device_requires_grad_and_copy():
    t = st.Tensor(data=[1, 2], dtype=st.float64, device="cpu", requires_grad=True)
    assert t.dtype == st.float64 and t.requires_grad and t.device == "cpu"
    src = st.ones(2)
    copy = st.Tensor(src)
    copy.add_(1)
    assert src.tolist() == [1.0, 1.0]
    assert st.Tensor().shape == (0,)


def test_numpy_scalars_keep_their_dtype():
    assert st.tensor(np.float64(0.5)).dtype == st.float64
    assert st.tensor(np.float32(0.5)).dtype == st.float32
    assert st.tensor(np.int32(3)).dtype == st.int32
    assert st.tensor(0.5).dtype == st.float32  # Python floats: the default dtype
