"""Instance normalisation (F.instance_norm, nn.InstanceNorm1d/2d/3d) against PyTorch: values and
gradients in float64, running statistics in training and their use in eval mode, state dicts,
unbatched inputs and errors."""

import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.nn.functional as F

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("shape", [(2, 3, 7), (2, 3, 4, 5), (2, 2, 3, 4, 2)])
@pytest.mark.parametrize("affine", [False, True])
def test_functional_matches_torch_with_gradients(shape, affine):
    r = np.random.default_rng(0)
    x = r.standard_normal(shape) * 3 + 1
    c = shape[1]
    w, b = r.standard_normal(c), r.standard_normal(c)
    sx = st.tensor(x).requires_grad_(True)
    tx = torch.tensor(x, requires_grad=True)
    sw, sb = (st.tensor(a).requires_grad_(True) for a in (w, b)) if affine else (None, None)
    tw, tb = (torch.tensor(a, requires_grad=True) for a in (w, b)) if affine else (None, None)
    y = F.instance_norm(sx, weight=sw, bias=sb, eps=1e-5)
    ty = torch.nn.functional.instance_norm(tx, weight=tw, bias=tb, eps=1e-5)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-10)
    g = r.standard_normal(shape)
    (y * st.tensor(g)).sum().backward()
    (ty * torch.tensor(g)).sum().backward()
    pairs = [(sx, tx)] + ([(sw, tw), (sb, tb)] if affine else [])
    for mine, theirs in pairs:
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("cls,shape", [("InstanceNorm1d", (4, 3, 9)), ("InstanceNorm2d", (4, 3, 5, 6)),
                                       ("InstanceNorm3d", (2, 3, 3, 4, 5))])
def test_running_stats_follow_torch_in_training_and_serve_eval(cls, shape):
    m = getattr(st.nn, cls)(3, affine=True, track_running_stats=True, momentum=0.2)
    t = getattr(torch.nn, cls)(3, affine=True, track_running_stats=True, momentum=0.2)
    assert list(m.state_dict().keys()) == list(t.state_dict().keys())
    r = np.random.default_rng(1)
    for step in range(4):
        x = (r.standard_normal(shape) * (step + 1) + step).astype(np.float32)
        np.testing.assert_allclose(m(st.tensor(x)).detach().numpy(), t(torch.tensor(x)).detach().numpy(),
                                   rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(m.running_mean.numpy(), t.running_mean.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m.running_var.numpy(), t.running_var.numpy(), rtol=1e-5, atol=1e-6)
    m.eval()
    t.eval()
    x = r.standard_normal(shape).astype(np.float32)
    np.testing.assert_allclose(m(st.tensor(x)).detach().numpy(), t(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-5)
    # Unbatched input, like PyTorch.
    np.testing.assert_allclose(m(st.tensor(x[0])).detach().numpy(), t(torch.tensor(x[0])).detach().numpy(),
                               rtol=1e-5, atol=1e-5)


def test_default_layer_has_no_parameters_or_buffers():
    m = st.nn.InstanceNorm2d(4)
    assert list(m.parameters()) == [] and m.running_mean is None
    x = st.randn(2, 4, 3, 3)
    y = m(x)
    flat = y.numpy().reshape(2, 4, -1)
    np.testing.assert_allclose(flat.mean(-1), 0, atol=1e-6)
    np.testing.assert_allclose(flat.var(-1), 1, atol=1e-3)
    assert "InstanceNorm2d(4, eps=1e-05" in repr(m)
    y3 = st.nn.InstanceNorm3d(2)(st.randn(1, 2, 2, 3, 3))
    np.testing.assert_allclose(y3.numpy().reshape(2, -1).mean(-1), 0, atol=1e-6)


def test_errors_name_the_operation():
    with pytest.raises(st.ShapeError, match=r"instance_norm: expected an input of shape \(N, C, \*spatial\)"):
        F.instance_norm(st.randn(2, 3))
    with pytest.raises(ValueError, match=r"instance_norm: use_input_stats=False needs running_mean"):
        F.instance_norm(st.randn(2, 3, 4), use_input_stats=False)
    with pytest.raises(st.ShapeError, match=r"instance_norm: running_mean of shape \(4,\) does not match the 3 channels"):
        F.instance_norm(st.randn(2, 3, 4), st.zeros(4), st.ones(4))
    with pytest.raises(ValueError, match=r"given together"):
        F.instance_norm(st.randn(2, 3, 4), st.zeros(3))
    with pytest.raises(st.ShapeError, match=r"InstanceNorm2d: expected 3 channels"):
        st.nn.InstanceNorm2d(3)(st.randn(2, 4, 3, 3))
    with pytest.raises(st.ShapeError, match=r"InstanceNorm1d: expected a 2-d \(unbatched\) or 3-d input"):
        st.nn.InstanceNorm1d(3)(st.randn(2, 3, 3, 3))
