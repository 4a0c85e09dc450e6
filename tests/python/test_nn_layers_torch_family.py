"""torch-family layers (1-d and adaptive max pools, pixel shuffle, padding layers, Upsample,
channel dropout, Bilinear, recurrent cells) against torch side by side: values, gradients,
state-dict keys, train/eval statistics and errors."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.nn as nn

torch = pytest.importorskip("torch")
TF = torch.nn.functional
F = nn.functional

DTYPES = [np.float32, np.float64]


def _np(t):
    return t.detach().numpy()


def _tol(dtype):
    return dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-11)


def _compare(st_fn, torch_fn, arrays, dtype, seed=0):
    """Runs both on the same data; compares outputs (and every tuple entry) and input gradients."""
    rng = np.random.default_rng(seed)
    s_in = [st.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    t_in = [torch.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    s_out, t_out = st_fn(*s_in), torch_fn(*t_in)
    s_outs = s_out if isinstance(s_out, tuple) else (s_out,)
    t_outs = t_out if isinstance(t_out, tuple) else (t_out,)
    s_loss, t_loss = 0, 0
    for s, t in zip(s_outs, t_outs, strict=True):
        assert tuple(s.shape) == tuple(t.shape)
        np.testing.assert_allclose(_np(s), t.detach().numpy(), **_tol(dtype))
        gy = rng.standard_normal(tuple(t.shape)).astype(dtype)
        s_loss = s_loss + (s * st.tensor(gy)).sum()
        t_loss = t_loss + (t * torch.tensor(gy)).sum()
    s_loss.backward()
    t_loss.backward()
    for s, t in zip(s_in, t_in):
        np.testing.assert_allclose(_np(s.grad), t.grad.numpy(), **_tol(dtype))
    return s_in, t_in


def _load(st_mod, torch_mod, dtype):
    """Copies torch's parameters into ours under the same keys (the state-dict contract)."""
    st_mod.to(st.float64 if dtype == np.float64 else st.float32)
    torch_mod.to(torch.float64 if dtype == np.float64 else torch.float32)
    sd = {k: st.tensor(v.detach().numpy()) for k, v in torch_mod.state_dict().items()}
    assert set(sd) == {k for k, _ in st_mod.state_dict().items()}
    st_mod.load_state_dict(sd)


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# ---------------------------------------------------------------- pools

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=3, stride=1, dilation=2), dict(kernel_size=3, stride=2, ceil_mode=True)])
def test_max_pool1d_matches_torch(dtype, kw):
    x = _rand(2, 3, 11)
    _compare(lambda a: F.max_pool1d(a, **kw), lambda a: TF.max_pool1d(a, **kw), [x], dtype)
    _compare(lambda a: nn.MaxPool1d(**kw)(a), lambda a: torch.nn.MaxPool1d(**kw)(a), [x[0]], dtype)
    s_out, s_idx = F.max_pool1d(st.tensor(x), return_indices=True, **kw)
    t_out, t_idx = TF.max_pool1d(torch.tensor(x), return_indices=True, **kw)
    np.testing.assert_array_equal(s_idx.numpy(), t_idx.numpy())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
                                dict(kernel_size=3, stride=2, ceil_mode=True)])
def test_avg_pool1d_matches_torch(dtype, kw):
    x = _rand(2, 3, 10)
    _compare(lambda a: F.avg_pool1d(a, **kw), lambda a: TF.avg_pool1d(a, **kw), [x], dtype)
    _compare(lambda a: nn.AvgPool1d(**kw)(a), lambda a: torch.nn.AvgPool1d(**kw)(a), [x], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", [1, 3, 4, 7])
def test_adaptive_avg_pool1d_matches_torch(dtype, size):
    x = _rand(2, 3, 10)
    _compare(lambda a: F.adaptive_avg_pool1d(a, size), lambda a: TF.adaptive_avg_pool1d(a, size), [x], dtype)
    _compare(lambda a: nn.AdaptiveAvgPool1d(size)(a), lambda a: torch.nn.AdaptiveAvgPool1d(size)(a), [x[1]], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", [(1, 1), (3, 2), (4, 5), 2, (None, 3)])
def test_adaptive_max_pool2d_matches_torch(dtype, size):
    x = _rand(2, 3, 7, 9)
    _compare(lambda a: F.adaptive_max_pool2d(a, size), lambda a: TF.adaptive_max_pool2d(a, size), [x], dtype)
    if isinstance(size, tuple) and None in size:  # the module needs the sizes up front
        with pytest.raises(ValueError, match="AdaptiveMaxPool2d: None in output_size needs an input"):
            nn.AdaptiveMaxPool2d(size)
    else:
        _compare(lambda a: nn.AdaptiveMaxPool2d(size)(a), lambda a: torch.nn.AdaptiveMaxPool2d(size)(a), [x[0]],
                 dtype)
    s_out, s_idx = F.adaptive_max_pool2d(st.tensor(x), size, return_indices=True)
    t_out, t_idx = TF.adaptive_max_pool2d(torch.tensor(x), size, return_indices=True)
    np.testing.assert_array_equal(s_idx.numpy(), t_idx.numpy())
    assert s_idx.dtype == st.int64


def test_pool_errors_name_op_and_values():
    x = st.tensor(_rand(2, 3, 8))
    with pytest.raises(st.ShapeError, match=r"max_pool1d: .*\(2, 3, 8, 1\)"):
        F.max_pool1d(st.tensor(_rand(2, 3, 8, 1)), 2)
    with pytest.raises(ValueError, match="max_pool1d: kernel_size must be positive, got 0"):
        F.max_pool1d(x, 0)
    with pytest.raises(ValueError, match="avg_pool1d: padding 2 must be .* kernel size 3"):
        F.avg_pool1d(x, 3, padding=2)
    with pytest.raises(ValueError, match="adaptive_avg_pool1d: output_size must be positive, got 0"):
        F.adaptive_avg_pool1d(x, 0)
    with pytest.raises(st.ShapeError, match=r"adaptive_max_pool2d: expected a 3-d .* got shape \(3, 8\)"):
        F.adaptive_max_pool2d(st.tensor(_rand(3, 8)), 2)
    with pytest.raises(ValueError, match=r"adaptive_max_pool2d: output_size must be positive, got \(0, 2\)"):
        F.adaptive_max_pool2d(x, (0, 2))
    with pytest.raises(st.DtypeError, match="adaptive_max_pool2d"):
        F.adaptive_max_pool2d(st.tensor(np.ones((1, 2, 2), dtype=np.int64)), 1)
    with pytest.raises(ValueError, match="MaxPool1d"):
        nn.MaxPool1d(2, padding=3)
    with pytest.raises(ValueError, match="AvgPool1d"):
        nn.AvgPool1d(0)
    with pytest.raises(ValueError, match="AdaptiveAvgPool1d"):
        nn.AdaptiveAvgPool1d(-1)
    with pytest.raises(ValueError, match="AdaptiveMaxPool2d"):
        nn.AdaptiveMaxPool2d((2, 0))


def test_pool_module_attributes_and_repr():
    m = nn.MaxPool1d(3, stride=2, padding=1)
    assert (m.kernel_size, m.stride, m.padding, m.dilation, m.ceil_mode) == (3, 2, 1, 1, False)
    a = nn.AvgPool1d(4)
    assert (a.kernel_size, a.stride, a.padding, a.ceil_mode, a.count_include_pad) == ((4,), (4,), (0,), False, True)
    assert nn.AdaptiveAvgPool1d(5).output_size == 5
    assert nn.AdaptiveMaxPool2d(3).output_size == (3, 3)
    assert "AdaptiveMaxPool2d" in repr(nn.AdaptiveMaxPool2d(3)) and "MaxPool1d" in repr(m)
    assert "AvgPool1d" in repr(a) and "AdaptiveAvgPool1d" in repr(nn.AdaptiveAvgPool1d(5))


# ---------------------------------------------------------------- pixel shuffle

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,r", [((2, 8, 3, 4), 2), ((18, 2, 3), 3), ((2, 2, 4, 3, 2), 1), ((1, 2, 4, 3, 2), 2)])
def test_pixel_shuffle_matches_torch(dtype, shape, r):
    x = _rand(*shape)
    _compare(lambda a: F.pixel_shuffle(a, r), lambda a: TF.pixel_shuffle(a, r), [x], dtype)
    _compare(lambda a: nn.PixelShuffle(r)(a), lambda a: torch.nn.PixelShuffle(r)(a), [x], dtype)
    y = _rand(*shape[:-3], shape[-3], shape[-2] * r, shape[-1] * r)
    _compare(lambda a: F.pixel_unshuffle(a, r), lambda a: TF.pixel_unshuffle(a, r), [y], dtype)
    _compare(lambda a: nn.PixelUnshuffle(r)(a), lambda a: torch.nn.PixelUnshuffle(r)(a), [y], dtype)
    # the two are inverses
    np.testing.assert_array_equal(F.pixel_unshuffle(F.pixel_shuffle(st.tensor(x), r), r).numpy(), x)


def test_pixel_shuffle_errors_and_attributes():
    with pytest.raises(st.ShapeError, match=r"pixel_shuffle: channels 6 .*\(1, 6, 2, 2\).* 4"):
        F.pixel_shuffle(st.tensor(_rand(1, 6, 2, 2)), 2)
    with pytest.raises(st.ShapeError, match=r"pixel_unshuffle: height 3 and width 4 .* downscale_factor 2"):
        F.pixel_unshuffle(st.tensor(_rand(1, 1, 3, 4)), 2)
    with pytest.raises(st.ShapeError, match="at least 3 dims"):
        F.pixel_shuffle(st.tensor(_rand(4, 4)), 2)
    with pytest.raises(ValueError, match="upscale_factor must be positive, got 0"):
        F.pixel_shuffle(st.tensor(_rand(1, 4, 2, 2)), 0)
    with pytest.raises(ValueError, match="PixelUnshuffle"):
        nn.PixelUnshuffle(-1)
    assert nn.PixelShuffle(3).upscale_factor == 3 and nn.PixelUnshuffle(2).downscale_factor == 2
    assert repr(nn.PixelShuffle(3)) == "PixelShuffle(upscale_factor=3)"
    assert repr(nn.PixelUnshuffle(2)) == "PixelUnshuffle(downscale_factor=2)"


# ---------------------------------------------------------------- padding and Upsample

PADS = [
    (nn.ZeroPad2d, torch.nn.ZeroPad2d, (1, 2, 0, 3), (), 4),
    (nn.ConstantPad1d, torch.nn.ConstantPad1d, 2, (1.5,), 3),
    (nn.ConstantPad2d, torch.nn.ConstantPad2d, (2, 0, 1, 1), (-0.5,), 4),
    (nn.ReflectionPad1d, torch.nn.ReflectionPad1d, (2, 3), (), 3),
    (nn.ReflectionPad2d, torch.nn.ReflectionPad2d, 2, (), 4),
    (nn.ReplicationPad1d, torch.nn.ReplicationPad1d, (3, 1), (), 3),
    (nn.ReplicationPad2d, torch.nn.ReplicationPad2d, (1, 0, 2, 3), (), 4),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ours,theirs,padding,extra,nd", PADS)
def test_padding_layers_match_torch(dtype, ours, theirs, padding, extra, nd):
    x = _rand(*(2, 3, 5, 6)[:nd])
    _compare(lambda a: ours(padding, *extra)(a), lambda a: theirs(padding, *extra)(a), [x], dtype)
    _compare(lambda a: ours(padding, *extra)(a), lambda a: theirs(padding, *extra)(a), [x[0]], dtype)  # unbatched
    assert type(ours(padding, *extra)).__name__ in repr(ours(padding, *extra))


def test_padding_layer_errors():
    with pytest.raises(ValueError, match=r"ZeroPad2d: padding must be an int or a tuple of 4 ints, got \(1, 2\)"):
        nn.ZeroPad2d((1, 2))
    with pytest.raises(st.ShapeError, match=r"ReflectionPad1d: expected a 2-d or 3-d input, got shape \(5,\)"):
        nn.ReflectionPad1d(1)(st.tensor(_rand(5)))
    with pytest.raises(ValueError, match="reflect"):
        nn.ReflectionPad1d(5)(st.tensor(_rand(1, 1, 4)))
    assert nn.ConstantPad1d(2, 3.0).padding == (2, 2) and nn.ConstantPad1d(2, 3.0).value == 3.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw,nd", [(dict(scale_factor=2), 4), (dict(size=(5, 7), mode="bilinear"), 4),
                                   (dict(scale_factor=1.5, mode="bilinear", align_corners=True), 4),
                                   (dict(size=9, mode="linear"), 3), (dict(scale_factor=3, mode="nearest"), 3)])
def test_upsample_matches_torch(dtype, kw, nd):
    x = _rand(*(2, 3, 4, 5)[:nd])
    _compare(lambda a: nn.Upsample(**kw)(a), lambda a: torch.nn.Upsample(**kw)(a), [x], dtype)


def test_upsample_errors_and_repr():
    with pytest.raises(ValueError, match="Upsample: give exactly one of size and scale_factor"):
        nn.Upsample()
    with pytest.raises(ValueError, match="Upsample: mode must be .* got 'cubic'"):
        nn.Upsample(size=2, mode="cubic")
    with pytest.raises(ValueError, match="align_corners"):
        nn.Upsample(size=2, align_corners=True)
    assert repr(nn.Upsample(scale_factor=2)) == "Upsample(scale_factor=2.0, mode='nearest')"


# ---------------------------------------------------------------- channel dropout

@pytest.mark.parametrize("cls,fn,shape", [(nn.Dropout1d, F.dropout1d, (400, 50, 6)),
                                          (nn.Dropout2d, F.dropout2d, (400, 50, 3, 2))])
@pytest.mark.parametrize("dtype", DTYPES)
def test_channel_dropout_statistics_and_eval(cls, fn, shape, dtype):
    st.manual_seed(0)
    p = 0.3
    x = np.abs(_rand(*shape)).astype(dtype) + 0.5
    m = cls(p)
    y = m(st.tensor(x)).numpy()
    assert y.dtype == dtype
    # every channel is either all zeros or all x / (1 - p)
    flat_y, flat_x = y.reshape(shape[0] * shape[1], -1), x.reshape(shape[0] * shape[1], -1)
    kept = (flat_y != 0).all(axis=1)
    dropped = (flat_y == 0).all(axis=1)
    assert np.all(kept | dropped)
    np.testing.assert_allclose(flat_y[kept], flat_x[kept] / (1 - p), rtol=1e-6)
    assert abs(kept.mean() - (1 - p)) < 0.02  # 20000 channels: std ~0.003
    m.eval()
    np.testing.assert_array_equal(m(st.tensor(x)).numpy(), x)
    np.testing.assert_array_equal(fn(st.tensor(x), p, training=False).numpy(), x)
    assert np.all(fn(st.tensor(x), 1.0).numpy() == 0)
    np.testing.assert_array_equal(fn(st.tensor(x), 0.0).numpy(), x)


def test_channel_dropout_gradient_follows_mask_and_seed():
    xs = st.tensor(_rand(4, 8, 5), requires_grad=True)
    y = nn.Dropout1d(0.5, seed=3)(xs)
    y.sum().backward()
    mask = (y.detach().numpy() != 0).astype(np.float64) * 2.0
    np.testing.assert_allclose(xs.grad.numpy(), mask)
    a = nn.Dropout2d(0.5, seed=7)(st.tensor(_rand(2, 6, 3, 3))).numpy()
    b = nn.Dropout2d(0.5, seed=7)(st.tensor(_rand(2, 6, 3, 3))).numpy()
    np.testing.assert_array_equal(a, b)
    unbatched = nn.Dropout2d(0.5, seed=1)(st.tensor(np.ones((6, 2, 2)))).numpy()
    assert set(np.unique(unbatched)) <= {0.0, 2.0}


def test_channel_dropout_errors():
    with pytest.raises(st.ShapeError, match=r"dropout1d: expected a 2-d \(C, L\) or 3-d \(N, C, L\) input, got shape \(1, 2, 3, 4\)"):
        F.dropout1d(st.tensor(_rand(1, 2, 3, 4)))
    with pytest.raises(st.ShapeError, match=r"dropout2d: .*got shape \(2, 3\)"):
        F.dropout2d(st.tensor(_rand(2, 3)))
    with pytest.raises(ValueError, match=r"Dropout2d: probability p must lie in \[0, 1\], got 1.5"):
        nn.Dropout2d(1.5)
    with pytest.raises(ValueError, match="dropout1d: probability p"):
        F.dropout1d(st.tensor(_rand(2, 3)), -0.1)
    with pytest.raises(st.DtypeError, match="dropout2d"):
        F.dropout2d(st.tensor(np.ones((1, 2, 2, 2), dtype=np.int64)))
    assert nn.Dropout1d(0.25).p == 0.25 and repr(nn.Dropout2d(0.25)) == "Dropout2d(p=0.25)"
    assert repr(nn.Dropout1d()) == "Dropout1d(p=0.5)"


# ---------------------------------------------------------------- Bilinear

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bias", [True, False])
def test_bilinear_matches_torch(dtype, bias):
    torch.manual_seed(0)
    tm = torch.nn.Bilinear(4, 3, 5, bias=bias)
    sm = nn.Bilinear(4, 3, 5, bias=bias)
    _load(sm, tm, dtype)
    a, b = _rand(6, 4, seed=1), _rand(6, 3, seed=2)
    _compare(lambda x, y: sm(x, y), lambda x, y: tm(x, y), [a, b], dtype)
    for s, t in [(sm.weight, tm.weight)] + ([(sm.bias, tm.bias)] if bias else []):
        np.testing.assert_allclose(s.grad.numpy(), t.grad.numpy(), **_tol(dtype))
    # leading dims (2, 3) and the functional form
    a3, b3 = _rand(2, 3, 4, seed=3), _rand(2, 3, 3, seed=4)
    w = tm.weight.detach().numpy()
    bb = [tm.bias.detach().numpy()] if bias else []
    _compare(lambda x, y, ww, *rest: F.bilinear(x, y, ww, *rest), lambda x, y, ww, *rest: TF.bilinear(x, y, ww, *rest),
             [a3, b3, w, *bb], dtype)
    # numpy reference
    ref = np.einsum("ni,oij,nj->no", a, w, b) + (bb[0] if bias else 0)
    np.testing.assert_allclose(sm(st.tensor(a.astype(dtype)), st.tensor(b.astype(dtype))).detach().numpy(), ref,
                               **_tol(dtype))


def test_bilinear_init_attributes_and_errors():
    st.manual_seed(0)
    m = nn.Bilinear(16, 3, 2)
    w = m.weight.detach().numpy()
    assert w.shape == (2, 16, 3) and np.abs(w).max() <= 0.25 and np.abs(w).max() > 0.15
    assert (m.in1_features, m.in2_features, m.out_features) == (16, 3, 2)
    assert nn.Bilinear(2, 2, 2, bias=False).bias is None
    assert repr(m) == "Bilinear(in1_features=16, in2_features=3, out_features=2, bias=True)"
    with pytest.raises(st.ShapeError, match=r"bilinear: inputs of shapes \(4, 15\) and \(4, 3\) do not match weight of shape \(2, 16, 3\)"):
        m(st.tensor(_rand(4, 15)), st.tensor(_rand(4, 3)))
    with pytest.raises(st.ShapeError, match="same leading dims"):
        m(st.tensor(_rand(4, 16)), st.tensor(_rand(5, 3)))
    with pytest.raises(st.ShapeError, match=r"bilinear: bias must have shape \(2,\)"):
        F.bilinear(st.tensor(_rand(4, 16)), st.tensor(_rand(4, 3)), m.weight, st.tensor(_rand(3)))
    with pytest.raises(ValueError, match="Bilinear: in1_features"):
        nn.Bilinear(0, 2, 2)


# ---------------------------------------------------------------- recurrent cells

CELLS = [
    (lambda: nn.RNNCell(4, 5), lambda: torch.nn.RNNCell(4, 5)),
    (lambda: nn.RNNCell(4, 5, nonlinearity="relu", bias=False),
     lambda: torch.nn.RNNCell(4, 5, nonlinearity="relu", bias=False)),
    (lambda: nn.GRUCell(4, 5), lambda: torch.nn.GRUCell(4, 5)),
    (lambda: nn.GRUCell(4, 5, bias=False), lambda: torch.nn.GRUCell(4, 5, bias=False)),
    (lambda: nn.LSTMCell(4, 5), lambda: torch.nn.LSTMCell(4, 5)),
    (lambda: nn.LSTMCell(4, 5, bias=False), lambda: torch.nn.LSTMCell(4, 5, bias=False)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("make_st,make_torch", CELLS)
@pytest.mark.parametrize("batched", [True, False])
def test_cells_match_torch(dtype, make_st, make_torch, batched):
    torch.manual_seed(0)
    tm, sm = make_torch(), make_st()
    _load(sm, tm, dtype)
    lstm = isinstance(sm, nn.LSTMCell)
    lead = (3,) if batched else ()
    x, h, c = _rand(*lead, 4, seed=1), _rand(*lead, 5, seed=2), _rand(*lead, 5, seed=3)
    if lstm:
        _compare(lambda a, b, d: sm(a, (b, d)), lambda a, b, d: tm(a, (b, d)), [x, h, c], dtype)
        _compare(lambda a: sm(a), lambda a: tm(a), [x], dtype)
    else:
        _compare(lambda a, b: sm(a, b), lambda a, b: tm(a, b), [x, h], dtype)
        _compare(lambda a: sm(a), lambda a: tm(a), [x], dtype)
    for key, value in tm.named_parameters():
        np.testing.assert_allclose(getattr(sm, key).grad.numpy(), value.grad.numpy(), **_tol(dtype))


def test_cells_unroll_like_torch_sequence():
    """Ten steps of our LSTMCell equal torch's LSTM over the sequence (same weights)."""
    torch.manual_seed(1)
    tl = torch.nn.LSTM(3, 4, batch_first=True).double()
    cell = nn.LSTMCell(3, 4)
    cell.to(st.float64)
    cell.load_state_dict({k[:-3]: st.tensor(v.detach().numpy()) for k, v in tl.state_dict().items()})
    x = _rand(2, 10, 3)
    out, _ = tl(torch.tensor(x))
    h = c = None
    for t in range(10):
        h, c = cell(st.tensor(x[:, t]), None if h is None else (h, c))
        np.testing.assert_allclose(h.detach().numpy(), out[:, t].detach().numpy(), rtol=1e-10, atol=1e-12)


def test_cell_init_attributes_and_errors():
    st.manual_seed(0)
    m = nn.GRUCell(3, 16)
    assert tuple(m.weight_ih.shape) == (48, 3) and tuple(m.weight_hh.shape) == (48, 16)
    assert np.abs(m.weight_hh.detach().numpy()).max() <= 0.25 and np.abs(m.bias_ih.detach().numpy()).max() <= 0.25
    assert (m.input_size, m.hidden_size, m.bias) == (3, 16, True)
    assert all(isinstance(c, nn.RNNCellBase) for c in (m, nn.LSTMCell(2, 3), nn.RNNCell(2, 3)))
    assert nn.RNNCellBase.hidden_size.__get__(nn.RNNCell(2, 7)) == 7
    assert nn.LSTMCell(2, 3, bias=False).bias_ih is None and nn.RNNCell(2, 3, bias=False).bias_hh is None
    assert nn.RNNCell(2, 3, nonlinearity="relu").nonlinearity == "relu"
    assert repr(nn.RNNCell(2, 3, nonlinearity="relu")) == "RNNCell(2, 3, nonlinearity='relu')"
    assert repr(nn.LSTMCell(2, 3)) == "LSTMCell(2, 3)" and repr(nn.GRUCell(2, 3, bias=False)) == "GRUCell(2, 3, bias=False)"
    with pytest.raises(ValueError, match="RNNCell: nonlinearity must be 'tanh' or 'relu', got 'gelu'"):
        nn.RNNCell(2, 3, nonlinearity="gelu")
    with pytest.raises(st.ShapeError, match=r"GRUCell: expected input of shape \(batch, 3\) or \(3,\), got \(2, 4\)"):
        m(st.tensor(_rand(2, 4)))
    with pytest.raises(st.ShapeError, match=r"GRUCell: hx of shape \(2, 15\) does not match \(2, 16\)"):
        m(st.tensor(_rand(2, 3)), st.tensor(_rand(2, 15)))
    with pytest.raises(st.ShapeError, match=r"LSTMCell: c_0 of shape \(1, 3\)"):
        nn.LSTMCell(2, 3)(st.tensor(_rand(2, 2)), (st.tensor(_rand(2, 3)), st.tensor(_rand(1, 3))))
    with pytest.raises(ValueError, match="LSTMCell: hx must be a tuple"):
        nn.LSTMCell(2, 3)(st.tensor(_rand(2, 2)), st.tensor(_rand(2, 3)))
    with pytest.raises(st.DtypeError, match="RNNCell"):
        nn.RNNCell(2, 3)(st.tensor(np.ones((1, 2), dtype=np.int64)))
    with pytest.raises(ValueError, match="input_size and hidden_size must be positive"):
        nn.LSTMCell(0, 3)


def test_layers_compose_in_sequential_and_state_dict_keys():
    model = nn.Sequential(nn.ReflectionPad1d(1), nn.MaxPool1d(2), nn.AdaptiveAvgPool1d(3))
    assert tuple(model(st.tensor(_rand(2, 4, 9))).shape) == (2, 4, 3)
    seq = nn.Sequential(nn.Linear(3, 4), nn.GRUCell(4, 2))
    assert sorted(k for k, _ in seq.state_dict().items()) == [
        "0::bias", "0::weight", "1::bias_hh", "1::bias_ih", "1::weight_hh", "1::weight_ih"]
    assert tuple(seq(st.tensor(_rand(5, 3).astype(np.float32))).shape) == (5, 2)
