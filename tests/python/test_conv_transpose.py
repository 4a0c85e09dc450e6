"""Transposed convolutions (F.conv_transpose1d/2d, nn.ConvTranspose1d/2d) against PyTorch:
outputs and all three gradients in float64, the shape rule, errors, and a decoder that trains."""

import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.nn.functional as F

torch = pytest.importorskip("torch")

CASES_2D = [
    # (N, Cin, H, W), Cout, k, stride, padding, output_padding, groups, dilation
    ((2, 3, 5, 4), 4, (3, 3), 1, 0, 0, 1, 1),
    ((2, 4, 5, 7), 6, (3, 3), 2, 1, 1, 2, 1),
    ((1, 2, 4, 4), 3, (2, 3), (2, 1), (0, 1), (1, 0), 1, (1, 2)),
    ((3, 4, 6, 5), 4, (1, 1), 1, 0, 0, 1, 1),      # 1x1: the direct GEMM path
    ((2, 4, 5, 5), 4, (3, 3), 2, 1, 0, 4, 1),      # depthwise: one channel per group
    ((1, 1, 3, 3), 2, (4, 4), 3, 2, 2, 1, 2),
]


def _pair(v):
    return v if isinstance(v, tuple) else (v, v)


@pytest.mark.parametrize("case", CASES_2D)
def test_conv_transpose2d_matches_torch_with_gradients(case):
    shape, cout, k, stride, padding, out_pad, groups, dil = case
    r = np.random.default_rng(0)
    x = r.standard_normal(shape)
    w = r.standard_normal((shape[1], cout // groups) + k)
    b = r.standard_normal(cout)
    sx, sw, sb = (st.tensor(a).requires_grad_(True) for a in (x, w, b))
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    y = F.conv_transpose2d(sx, sw, sb, stride, padding, out_pad, groups, dil)
    ty = torch.nn.functional.conv_transpose2d(tx, tw, tb, _pair(stride), _pair(padding), _pair(out_pad), groups,
                                              _pair(dil))
    assert tuple(y.shape) == tuple(ty.shape)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    g = r.standard_normal(tuple(ty.shape))
    (y * st.tensor(g)).sum().backward()
    (ty * torch.tensor(g)).sum().backward()
    for mine, theirs in ((sx, tx), (sw, tw), (sb, tb)):
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("stride,padding,out_pad,groups,dil", [(1, 0, 0, 1, 1), (2, 1, 1, 2, 1), (3, 2, 2, 1, 2)])
def test_conv_transpose1d_matches_torch(stride, padding, out_pad, groups, dil):
    r = np.random.default_rng(1)
    x, w, b = r.standard_normal((2, 4, 7)), r.standard_normal((4, 6 // groups, 3)), r.standard_normal(6)
    sx, sw, sb = (st.tensor(a).requires_grad_(True) for a in (x, w, b))
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    y = F.conv_transpose1d(sx, sw, sb, stride, padding, out_pad, groups, dil)
    ty = torch.nn.functional.conv_transpose1d(tx, tw, tb, stride, padding, out_pad, groups, dil)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    y.sum().backward()
    ty.sum().backward()
    for mine, theirs in ((sx, tx), (sw, tw), (sb, tb)):
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-11, atol=1e-11)


def test_unbatched_inputs_and_float32():
    r = np.random.default_rng(2)
    x, w = r.standard_normal((3, 4, 4)).astype(np.float32), r.standard_normal((3, 2, 3, 3)).astype(np.float32)
    y = F.conv_transpose2d(st.tensor(x), st.tensor(w), stride=2)
    ty = torch.nn.functional.conv_transpose2d(torch.tensor(x)[None], torch.tensor(w), stride=2)[0]
    assert y.dtype == st.float32 and tuple(y.shape) == (2, 9, 9)
    np.testing.assert_allclose(y.numpy(), ty.numpy(), rtol=1e-5, atol=1e-5)
    y1 = F.conv_transpose1d(st.tensor(x[:, 0]), st.tensor(w[:, :, 0]), stride=2)
    ty1 = torch.nn.functional.conv_transpose1d(torch.tensor(x[:, 0])[None], torch.tensor(w[:, :, 0]), stride=2)[0]
    np.testing.assert_allclose(y1.numpy(), ty1.numpy(), rtol=1e-5, atol=1e-5)


def test_modules_match_torch_layers():
    st.manual_seed(0)
    for mine_cls, torch_cls, shape, kw in (
            (st.nn.ConvTranspose2d, torch.nn.ConvTranspose2d, (2, 4, 5, 6),
             dict(kernel_size=3, stride=2, padding=1, output_padding=1, groups=2)),
            (st.nn.ConvTranspose1d, torch.nn.ConvTranspose1d, (2, 4, 9), dict(kernel_size=4, stride=3, bias=False))):
        m = mine_cls(4, 6, **kw)
        t = torch_cls(4, 6, **kw).double()
        assert tuple(m.weight.shape) == tuple(t.weight.shape)
        assert [n for n, _ in m.named_parameters()] == [n for n, _ in t.named_parameters()]
        # PyTorch's default bound, 1/sqrt(out_channels/groups * prod(kernel_size)).
        fan_in = t.weight.shape[1] * int(np.prod(t.weight.shape[2:]))
        assert float(m.weight.abs().max()) <= 1 / np.sqrt(fan_in) + 1e-7
        with torch.no_grad():
            t.weight.copy_(torch.tensor(m.weight.detach().numpy()))
            if m.bias is not None:
                t.bias.copy_(torch.tensor(m.bias.detach().numpy()))
        x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
        np.testing.assert_allclose(m(st.tensor(x)).detach().numpy(), t(torch.tensor(x).double()).detach().numpy(),
                                   rtol=1e-5, atol=1e-5)
        assert type(m).__name__ in repr(m) and "stride" in repr(m)


def test_errors_name_the_operation_and_values():
    x, w = st.randn(1, 3, 4, 4), st.randn(3, 2, 3, 3)
    with pytest.raises(st.ShapeError, match=r"conv_transpose2d: input of shape \(1, 5, 4, 4\) has 5 channels, but weight"):
        F.conv_transpose2d(st.randn(1, 5, 4, 4), w)
    with pytest.raises(ValueError, match=r"conv_transpose2d: output_padding must be .* smaller than the stride"):
        F.conv_transpose2d(x, w, stride=2, output_padding=2)
    with pytest.raises(ValueError, match=r"conv_transpose2d: in_channels \(3\) must be divisible by groups \(2\)"):
        F.conv_transpose2d(x, w, groups=2)
    with pytest.raises(st.ShapeError, match=r"conv_transpose2d: bias of shape"):
        F.conv_transpose2d(x, w, st.randn(5))
    with pytest.raises(st.ShapeError, match=r"non-positive output size"):
        F.conv_transpose2d(st.randn(1, 3, 1, 1), st.randn(3, 2, 1, 1), padding=1)
    with pytest.raises(st.DtypeError, match=r"conv_transpose2d: input is float32 but weight is float64"):
        F.conv_transpose2d(x, w.double())
    with pytest.raises(st.ShapeError, match=r"conv_transpose1d: expected a 3-d weight"):
        F.conv_transpose1d(st.randn(1, 3, 4), w)
    with pytest.raises(ValueError, match=r"ConvTranspose2d: in_channels \(3\) and out_channels \(4\) must both"):
        st.nn.ConvTranspose2d(3, 4, 3, groups=2)


def test_a_small_decoder_trains():
    """A 2-layer upsampling decoder learns to reproduce fixed 8x8 targets from 2x2 codes."""
    st.manual_seed(0)
    dec = st.nn.Sequential(st.nn.ConvTranspose2d(4, 8, 4, stride=2, padding=1), st.nn.ReLU(),
                           st.nn.ConvTranspose2d(8, 1, 4, stride=2, padding=1))
    codes = st.randn(16, 4, 2, 2)
    target = st.randn(16, 1, 8, 8)
    opt = st.optim.Adam(dec.parameters(), lr=1e-2)
    first = None
    for _ in range(150):
        opt.zero_grad()
        loss = F.mse_loss(dec(codes), target)
        loss.backward()
        opt.step()
        first = first if first is not None else float(loss)
    assert float(loss) < 0.5 * first


@pytest.mark.parametrize("device", ["cuda", "wgpu"])
def test_gpu_devices_match_the_cpu(device):
    """The op runs on any backend with im2col/col2im/gemm: values and gradients as on the CPU."""
    if not getattr(st, device).is_available():
        pytest.skip(f"{device} not available")
    r = np.random.default_rng(4)
    x, w, b = (r.standard_normal(s).astype(np.float32) for s in ((2, 4, 5, 6), (4, 3, 3, 3), (6,)))
    outs = {}
    for dev in ("cpu", device):
        sx, sw, sb = (st.tensor(a).to(dev).requires_grad_(True) for a in (x, w, b))
        y = F.conv_transpose2d(sx, sw, sb, stride=2, padding=1, output_padding=1, groups=2)
        (y * y).sum().backward()
        outs[dev] = [t.detach().cpu().numpy() for t in (y, sx.grad, sw.grad, sb.grad)]
    for a, c in zip(outs["cpu"], outs[device]):
        np.testing.assert_allclose(c, a, rtol=1e-4, atol=1e-4)
