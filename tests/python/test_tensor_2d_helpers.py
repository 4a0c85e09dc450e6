"""The original spiraltorch's 2-D Tensor helpers, as implemented here: rows/cols, scale,
squared_l2_norm, add_scaled_, add_row_inplace, row_softmax (with its backend labels),
scaled_dot_attention, cat_rows, project_to_poincare and to_dlpack/from_dlpack."""

import math

import numpy as np
import pytest

import spiraltorch as st


def test_rows_cols_scale_and_norm():
    t = st.Tensor(2, 3, [1, 2, 3, 4, 5, 6])
    assert (t.rows, t.cols) == (2, 3)
    assert t.scale(2).tolist() == [[2, 4, 6], [8, 10, 12]]
    assert st.Tensor(1, 2, [3, 4]).squared_l2_norm() == 25.0
    with pytest.raises(ValueError, match="finite"):
        t.scale(float("nan"))
    with pytest.raises(st.ShapeError, match="2-D"):
        st.ones(2).rows


def test_add_scaled_and_add_row_inplace():
    t = st.Tensor(2, 2, [1, 1, 1, 1])
    t.add_scaled_(st.Tensor(2, 2, [1, 2, 3, 4]), 0.5)
    assert t.tolist() == [[1.5, 2.0], [2.5, 3.0]]
    t.add_row_inplace([1, -1])
    assert t.tolist() == [[2.5, 1.0], [3.5, 2.0]]
    t.add_row_inplace(st.tensor([0.5, 0.5]))
    assert t.tolist() == [[3.0, 1.5], [4.0, 2.5]]
    with pytest.raises(st.ShapeError, match="bias has 3 values but the tensor has 2 columns"):
        t.add_row_inplace([1, 2, 3])
    with pytest.raises(st.ShapeError, match="differ"):
        t.add_scaled_(st.ones(3, 3), 1.0)
    assert t.tolist() == [[3.0, 1.5], [4.0, 2.5]]  # failed calls changed nothing


def test_row_softmax_and_backend_labels():
    x = st.Tensor(2, 3, [1, 2, 3, -1, 0, 1])
    p = x.row_softmax()
    np.testing.assert_allclose(p.sum(1).numpy(), [1, 1], rtol=1e-6)
    np.testing.assert_allclose(x.row_softmax(backend="cpu").numpy(), p.numpy())
    assert x.row_softmax(backend="auto").tolist() == p.tolist()
    if st.wgpu.is_available():  # the label only checks where the tensor lives
        with pytest.raises(ValueError, match="move it first"):
            x.row_softmax(backend="wgpu")
        np.testing.assert_allclose(x.to("wgpu").row_softmax(backend="wgpu").cpu().numpy(), p.numpy(), rtol=1e-6)
    else:
        with pytest.raises(st.DeviceUnavailableError, match="wgpu"):
            x.row_softmax(backend="wgpu")
    with pytest.raises(ValueError, match="unknown backend"):
        x.row_softmax(backend="tpu")


def test_scaled_dot_attention_matches_the_reference_formula():
    rng = np.random.default_rng(0)
    C, S, D = 2, 3, 4
    q, k, v = (rng.standard_normal((C * S, D)) for _ in range(3))
    zb = rng.standard_normal((C, S))
    ab = rng.standard_normal((C * S, S))
    out = st.tensor(q).scaled_dot_attention(st.tensor(k), st.tensor(v), contexts=C, sequence=S, scale=0.5,
                                            z_bias=st.tensor(zb), attn_bias=st.tensor(ab))
    ref = np.zeros((C * S, D))
    for c in range(C):
        for i in range(S):
            logits = np.array([0.5 * q[c * S + i] @ k[c * S + j] + zb[c, j] + ab[c * S + i, j] for j in range(S)])
            w = np.exp(logits - logits.max())
            w /= w.sum()
            ref[c * S + i] = w @ v[c * S:(c + 1) * S]
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10)
    with pytest.raises(st.ShapeError, match="contexts \\* sequence"):
        st.tensor(q).scaled_dot_attention(st.tensor(k), st.tensor(v), contexts=3, sequence=3, scale=1.0)


def test_cat_rows_and_project_to_poincare():
    a, b = st.Tensor(1, 2, [1, 2]), st.Tensor(2, 2, [3, 4, 5, 6])
    assert st.Tensor.cat_rows([a, b]).tolist() == [[1, 2], [3, 4], [5, 6]]
    with pytest.raises(ValueError, match="at least one"):
        st.Tensor.cat_rows([])
    with pytest.raises(st.ShapeError, match="column counts differ"):
        st.Tensor.cat_rows([a, st.ones(1, 3)])
    p = st.Tensor(2, 3, [3, 4, 0, 0, 0, 0]).project_to_poincare(-1.0)
    np.testing.assert_allclose(p.numpy()[0], np.tanh(5) * np.array([0.6, 0.8, 0.0]), rtol=1e-6)
    assert p.numpy()[1].tolist() == [0, 0, 0]
    # Curvature c: the exact exp map lands inside the ball of radius 1/sqrt|c|.
    q = st.Tensor(1, 2, [30.0, 40.0]).project_to_poincare(-4.0)
    assert float(q.norm().item()) < 0.5 and float(q.norm().item()) == pytest.approx(0.5 * math.tanh(100), rel=1e-6)
    with pytest.raises(ValueError, match="negative"):
        a.project_to_poincare(0.5)


def test_to_dlpack_and_from_dlpack_share_memory():
    t = st.Tensor(2, 2, [1, 2, 3, 4])
    back = st.Tensor.from_dlpack(t.to_dlpack())
    back.add_(1)
    assert t.tolist() == [[2, 3], [4, 5]]
    arr = np.arange(4.0).reshape(2, 2)
    assert st.Tensor.from_dlpack(arr).tolist() == [[0, 1], [2, 3]]
