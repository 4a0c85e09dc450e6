"""The original spiraltorch's documented Python API, as implemented here: the Tensor
constructor keywords, the 2-D helpers, AutogradTensor, and the module-ownership bugs
(modules created from Python handed to C++ paths that walk the tree)."""

import math

import numpy as np
import pytest

import spiraltorch as st
from spiraltorch import nn


# ---- Tensor(...) keywords -------------------------------------------------------------

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


# ---- the 2-D helpers -------------------------------------------------------------------

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


# ---- AutogradTensor -------------------------------------------------------------------

def test_autograd_tensor_accumulates_like_the_original():
    x = st.AutogradTensor(st.Tensor(1, 1, [2.0]))
    loss = x.hadamard(x)
    loss.backward()
    loss.backward()
    assert x.grad().tolist() == [[8.0]]  # 2 * 2x, twice
    assert loss.operation_name() == "hadamard" and x.operation_name() == "leaf"


def test_autograd_tensor_ops_and_intermediate_gradients():
    rng = np.random.default_rng(1)
    a = st.AutogradTensor.variable(st.tensor(rng.standard_normal((2, 3))))
    b = st.AutogradTensor.variable(st.tensor(rng.standard_normal((3, 2))))
    c = st.AutogradTensor.constant(st.tensor(rng.standard_normal((2, 2))))
    h = (a @ b).sub(c)
    loss = h.mean_squared_error(st.AutogradTensor.constant(st.zeros(2, 2, dtype=st.float64)))
    receipt = loss.backward()
    an, bn, cn = a.value().numpy(), b.value().numpy(), c.value().numpy()
    hn = an @ bn - cn
    np.testing.assert_allclose(h.grad().numpy(), 2 * hn / 4, rtol=1e-10)
    np.testing.assert_allclose(a.grad().numpy(), (2 * hn / 4) @ bn.T, rtol=1e-10)
    np.testing.assert_allclose(b.grad().numpy(), an.T @ (2 * hn / 4), rtol=1e-10)
    assert c.grad() is None
    assert receipt["leaf_count"] == 4 and receipt["trainable_leaf_count"] == 2
    assert loss.graph_summary()["max_depth"] >= 3
    assert loss.item() == pytest.approx(float((hn ** 2).mean()))
    vjp = loss.vector_jacobian_product(a)
    np.testing.assert_allclose(vjp.numpy(), a.grad().numpy(), rtol=1e-10)  # one backward so far
    loss.zero_grad_graph()
    assert a.grad() is None and h.grad() is None
    s = a.scale(3.0).transpose().sum()
    s.backward()
    assert a.grad().tolist() == [[3.0] * 3] * 2
    assert a.dot(a).item() == pytest.approx(float((an ** 2).sum()))


def test_autograd_tensor_errors():
    x = st.AutogradTensor(st.ones(2, 2))
    with pytest.raises(ValueError, match="explicit output gradient"):
        x.add(x).backward()
    with pytest.raises(st.ShapeError, match="differ"):
        x.add(st.AutogradTensor(st.ones(1, 2)))
    with pytest.raises(ValueError, match="non-finite"):
        st.AutogradTensor(st.tensor([[float("inf")]]))
    y = x.add(x)
    y.backward(st.ones(2, 2))
    assert x.grad().tolist() == [[2.0, 2.0], [2.0, 2.0]]
    assert st.AutogradTensor(st.ones(1, 1)).detach().requires_grad() is False


# ---- ownership crossings: modules made in Python, walked by C++ -------------------------

class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 3)
        self.b = nn.Sequential(nn.ReLU(), nn.Linear(3, 1))

    def forward(self, x):
        return self.b(self.a(x))


@pytest.mark.parametrize("make", [lambda: nn.Linear(2, 2), lambda: nn.Sequential(nn.Linear(2, 2)),
                                  lambda: nn.LSTM(2, 3), Small])
def test_modules_of_python_owned_roots(make):
    m = make()
    assert next(m.modules()) is m
    assert len(list(m.named_modules())) == len(list(m.modules()))


def test_trainer_curvature_scheduler_and_mul_learning_rate_on_python_modules():
    st.manual_seed(0)
    model = Small()
    model.attach_hypergrad(curvature=-1.0, learning_rate=0.05)
    trainer = nn.ModuleTrainer(fallback_learning_rate=0.1)
    trainer.enable_curvature_scheduler(nn.CurvatureScheduler(initial=-1.0, target_pressure=1e-6, step=0.2))
    x, y = st.randn(8, 2), st.randn(8, 1)
    stats = trainer.train_epoch(model, lambda p, t: ((p - t) ** 2).mean(), [(x, y)] * 3, trainer.roundtable(8, 1))
    assert stats.batches == 3 and math.isfinite(stats.average_loss)
    assert trainer.curvature != -1.0  # the scheduler moved it and re-attached it on every submodule
    assert all(m.hypergrad is None or m.hypergrad[0] == trainer.curvature for m in model.modules())
    trainer.mul_learning_rate(model, 0.5)
    assert model.a.hypergrad[1] == pytest.approx(0.025)
    assert model.b[1].hypergrad[1] == pytest.approx(0.025)


def test_python_module_held_only_by_a_native_container_stays_alive():
    import gc

    seq = nn.Sequential(Small())
    gc.collect()
    child = seq[0]
    assert isinstance(child, Small) and child.a.in_features == 2
    assert seq(st.ones(1, 2)).shape == (1, 1)
    assert list(seq.modules())[1] is child
