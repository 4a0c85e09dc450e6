"""CUDA parity: ops and gradients on the GPU against the CPU. Skipped without a GPU."""
import math

import pytest

import spiraltorch as st
from spiraltorch.nn import functional as F

cuda = pytest.mark.skipif(not st.cuda.is_available(), reason="CUDA not available: " + st.cuda.unavailable_reason())


def test_unavailable_is_reported():
    if st.cuda.is_available():
        assert st.cuda.device_count() >= 1
    else:
        assert st.cuda.device_count() == 0
        assert st.cuda.unavailable_reason()
        assert st.describe_device("cuda")["available"] is False
        with pytest.raises(st.DeviceUnavailableError):
            st.zeros(2, 2).to("cuda")


def close(a, b, tol=1e-4):
    a = a.cpu().double().tolist()
    b = b.cpu().double().tolist()

    def flat(x):
        return [v for r in x for v in flat(r)] if isinstance(x, list) else [x]

    fa, fb = flat(a), flat(b)
    assert len(fa) == len(fb)
    for x, y in zip(fa, fb):
        if math.isnan(y):
            assert math.isnan(x)
        else:
            assert abs(x - y) <= tol * (1 + abs(y)), (x, y)


DTYPES = [st.float32, st.float64]


@cuda
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum", "minimum", "pow"])
def test_binary_parity(name, dtype):
    a = st.rand(3, 4, 5, dtype=dtype) + 0.5
    b = st.rand(4, 1, dtype=dtype) + 0.5
    f = getattr(st, name)
    close(f(a.cuda(), b.cuda()), f(a, b))


@cuda
@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "tanh", "sigmoid", "relu", "neg", "abs", "sin", "erf"])
def test_unary_parity(name):
    a = st.rand(7, 33) + 0.1
    f = getattr(st, name)
    close(f(a.cuda()), f(a))


@cuda
@pytest.mark.parametrize("dtype", DTYPES)
def test_reductions(dtype):
    a = st.randn(6, 50, 7, dtype=dtype)
    ac = a.cuda()
    for dims in ([0], [1], [2], [0, 2], None):
        kw = {} if dims is None else {"dim": dims}
        close(st.sum(ac, **kw), st.sum(a, **kw))
        close(st.mean(ac, **kw), st.mean(a, **kw))
    close(st.amax(ac), st.amax(a))
    close(st.argmax(ac, dim=1), st.argmax(a, dim=1))
    big = st.rand(3_000_000)
    assert abs(st.sum(big.cuda()).item() - st.sum(big).item()) < 1e-3 * st.sum(big).item()


@cuda
@pytest.mark.parametrize("dtype", [st.float32, st.float64, st.bfloat16, st.float16])
def test_matmul_and_grad(dtype):
    a = st.randn(2, 17, 33).to(dtype)
    b = st.randn(33, 9).to(dtype)
    tol = 1e-4 if dtype in (st.float32, st.float64) else 3e-2
    close(st.matmul(a.cuda(), b.cuda()), st.matmul(a.float(), b.float()).to(dtype), tol)
    x = st.randn(5, 6, requires_grad=True)
    xc = x.detach().cuda().requires_grad_()
    w = st.randn(6, 3)
    (st.matmul(x, w).tanh().sum()).backward()
    (st.matmul(xc, w.cuda()).tanh().sum()).backward()
    close(xc.grad, x.grad)


@cuda
def test_softmax_layernorm_gelu_grad():
    x = st.randn(8, 300, requires_grad=True)
    xc = x.detach().cuda().requires_grad_()
    for f in (lambda t: st.softmax(t, -1), lambda t: st.log_softmax(t, -1), lambda t: F.gelu(t)):
        y, yc = f(x), f(xc)
        close(yc, y)
        g = st.randn(8, 300)
        y.backward(g)
        yc.backward(g.cuda())
        close(xc.grad, x.grad)
        x.grad = None
        xc.grad = None
    ln = st.nn.LayerNorm(300)
    out = ln(x)
    ln.to("cuda")
    outc = ln(xc)
    close(outc, out)


@cuda
def test_indexing_ops():
    a = st.randn(5, 6)
    idx = st.tensor([[0, 2], [1, 1], [4, 0], [3, 3], [2, 5]])
    close(st.gather(a.cuda(), 1, idx.cuda()), st.gather(a, 1, idx))
    close(st.index_select(a.cuda(), 0, st.tensor([4, 0, 2]).cuda()), st.index_select(a, 0, st.tensor([4, 0, 2])))
    close(st.cat([a.cuda(), a.cuda()], 1), st.cat([a, a], 1))
    close(st.cumsum(a.cuda(), 1), st.cumsum(a, 1))
    close(st.sort(a.cuda(), 1)[0], st.sort(a, 1)[0])
    close(st.where(a.cuda() > 0, a.cuda(), st.zeros(5, 6).cuda()), st.where(a > 0, a, st.zeros(5, 6)))


@cuda
def test_mlp_training_matches_cpu():
    st.manual_seed(0)
    model = st.nn.Sequential(st.nn.Linear(10, 32), st.nn.ReLU(), st.nn.Linear(32, 3))
    st.manual_seed(0)
    model_c = st.nn.Sequential(st.nn.Linear(10, 32), st.nn.ReLU(), st.nn.Linear(32, 3)).to("cuda")
    x = st.randn(16, 10)
    y = st.randint(0, 3, (16,))
    opt = st.optim.Adam(model.parameters(), lr=1e-2)
    opt_c = st.optim.Adam(model_c.parameters(), lr=1e-2)
    for _ in range(5):
        for m, o, xx, yy in ((model, opt, x, y), (model_c, opt_c, x.cuda(), y.cuda())):
            o.zero_grad()
            loss = F.cross_entropy(m(xx), yy)
            loss.backward()
            o.step()
    close(model_c(x.cuda()), model(x), 1e-3)


@cuda
def test_runtime_surface():
    props = st.cuda.get_device_properties(0)
    assert props["total_memory"] > 0
    d = st.describe_device("cuda")
    assert d["available"] and d["device_name"] == props["name"]
    before = st.cuda.memory_allocated()
    t = st.zeros(1024, 1024, device="cuda")
    assert st.cuda.memory_allocated() >= before + 4 * 1024 * 1024
    del t
    st.cuda.empty_cache()
    s = st.cuda.Stream()
    e0, e1 = st.cuda.Event(enable_timing=True), st.cuda.Event(enable_timing=True)
    with st.cuda.stream(s):
        e0.record()
        u = st.ones(256, 256, device="cuda") * 2
        e1.record()
    s.synchronize()
    assert e0.elapsed_time(e1) >= 0
    assert u.sum().item() == 2 * 256 * 256
    st.cuda.synchronize()


@cuda
def test_dlpack_torch():
    torch = pytest.importorskip("torch")
    a = st.randn(4, 5).cuda()
    t = torch.from_dlpack(a)
    assert t.is_cuda and t.shape == (4, 5)
    assert abs(t.sum().item() - a.sum().item()) < 1e-4
    tt = torch.arange(6, dtype=torch.float32, device="cuda").reshape(2, 3)
    b = st.from_dlpack(tt)
    assert b.device == "cuda:0" and b.tolist() == tt.cpu().tolist()
    tt.add_(1)  # zero-copy: visible on our side
    assert b.tolist() == tt.cpu().tolist()


# ---------------------------------------------------------------- ported kernels: CUDA against the CPU


def _flat(t):
    x = t.tolist()

    def flat(v):
        return [e for r in v for e in flat(r)] if isinstance(v, list) else [v]

    return flat(x)


def _sort_data(shape, dtype, seed):
    """Values with many ties, NaNs, +-0.0 and infinities (floats), or small integers."""
    import random

    rng = random.Random(seed)
    n = 1
    for s in shape:
        n *= s
    if dtype in (st.float32, st.float64):
        pool = [0.0, -0.0, 1.5, -1.5, 2.0, -3.0, float("nan"), float("inf"), float("-inf"), 0.25]
        vals = [rng.choice(pool) if rng.random() < 0.6 else rng.uniform(-5, 5) for _ in range(n)]
    elif dtype == st.bool:
        vals = [rng.random() < 0.5 for _ in range(n)]
    elif dtype == st.uint8:
        vals = [rng.randrange(0, 256) if rng.random() < 0.3 else rng.randrange(0, 4) for _ in range(n)]
    else:
        lo, hi = (-(2**31), 2**31 - 1) if dtype == st.int32 else (-(2**63), 2**63 - 1)
        vals = [rng.choice([lo, hi, 0, -1, 1, 7]) if rng.random() < 0.5 else rng.randrange(-4, 4) for _ in range(n)]
    return st.reshape(st.tensor(vals, dtype=dtype), shape)


def _same_values(got, want):
    """Exactly equal elements (NaN matches NaN)."""
    fg, fw = _flat(got), _flat(want)
    assert len(fg) == len(fw)
    for a, b in zip(fg, fw):
        if isinstance(b, float) and math.isnan(b):
            assert isinstance(a, float) and math.isnan(a)
        else:
            assert a == b, (a, b)


def _same_sort(got, want):
    """Values equal and positions identical: both sorts are stable."""
    assert _flat(got[1]) == _flat(want[1])
    _same_values(got[0], want[0])


@cuda
@pytest.mark.parametrize("dtype", [st.float32, st.float64, st.int64, st.int32, st.uint8, st.bool])
@pytest.mark.parametrize("shape,dim", [((7, 33), 1), ((7, 33), 0), ((3, 9, 5), 1), ((4, 2, 6), 0), ((40,), 0),
                                       ((3, 2500), 1), ((3000, 5), 1), ((1, 1), 1)])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_parity(dtype, shape, dim, descending):
    x = _sort_data(shape, dtype, seed=hash((shape, dim)) % 1000)
    xc = x.cuda()
    _same_sort(st.sort(xc, dim, descending=descending), st.sort(x, dim, descending=descending))
    assert _flat(st.argsort(xc, dim, descending=descending)) == _flat(st.argsort(x, dim, descending=descending))
    n = shape[dim]
    for k in sorted({0, 1, min(3, n), n}):
        for largest in (True, False):
            got = st.topk(xc, k, dim=dim, largest=largest)
            want = st.topk(x, k, dim=dim, largest=largest)
            _same_sort((got.values, got.indices), (want.values, want.indices))


@cuda
@pytest.mark.parametrize("dtype", [st.float32, st.float64, st.int64])
def test_sort_long_segments(dtype):
    # A few long segments (device-wide radix sort per segment), many long ones (one block
    # each in the segmented sort) and very many short ones.
    for shape, dim in (((2, 70_000), 1), ((40, 33_000), 1), ((50_000, 3), 1), ((5, 20_000), 0)):
        x = _sort_data(shape, dtype, seed=shape[0])
        xc = x.cuda()
        for descending in (False, True):
            _same_sort(st.sort(xc, dim, descending=descending), st.sort(x, dim, descending=descending))


@cuda
def test_sort_grad():
    for dtype in DTYPES:
        x = st.randn(4, 9, dtype=dtype)
        xc = x.cuda()
        x.requires_grad_()
        xc.requires_grad_()
        w = st.randn(4, 3, dtype=dtype)
        (st.topk(x, 3, dim=1).values * w).sum().backward()
        (st.topk(xc, 3, dim=1).values * w.cuda()).sum().backward()
        close(xc.grad, x.grad, 0)


@cuda
@pytest.mark.parametrize("dtype", [st.float32, st.float64, st.int64, st.int32, st.float16])
@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_parity(dtype, right):
    # The CUDA binary-search kernel against the CPU's: per-row and shared sequences, ties, NaN
    # values (after everything) and bucketize.
    seq = st.sort(_sort_data((5, 40), dtype, seed=11), 1).values
    vals = _sort_data((5, 23), dtype, seed=12)
    for s, v in ((seq, vals), (seq[0], vals), (seq, seq)):
        got = st.searchsorted(s.cuda(), v.cuda(), right=right)
        assert got.device.type == "cuda" and got.dtype == st.int64
        assert _flat(got) == _flat(st.searchsorted(s, v, right=right))
        assert _flat(st.bucketize(v.cuda(), s.reshape(-1)[:40].cuda(), right=right)) == _flat(
            st.bucketize(v, s.reshape(-1)[:40], right=right))
    if dtype in (st.float32, st.float64):
        v = st.tensor([[float("nan"), -1e30, 1e30]], dtype=dtype)
        got = st.searchsorted(seq[:1].cuda(), v.cuda(), right=right)
        assert _flat(got) == _flat(st.searchsorted(seq[:1], v, right=right))


@cuda
@pytest.mark.parametrize("dtype", [st.float32, st.float64, st.int64, st.bool, st.float16, st.uint8])
def test_masked_select_parity(dtype):
    x = _sort_data((6, 7, 5), st.float32 if dtype == st.float16 else dtype, seed=3).to(dtype)
    mask = st.rand(6, 7, 5) > 0.4
    _same_values(st.masked_select(x.cuda(), mask.cuda()), st.masked_select(x, mask))
    row = st.rand(5) > 0.5  # broadcast mask
    _same_values(st.masked_select(x.cuda(), row.cuda()), st.masked_select(x, row))
    none = st.zeros(6, 7, 5, dtype=st.bool)
    assert tuple(st.masked_select(x.cuda(), none.cuda()).shape) == (0,)


@cuda
def test_masked_select_large_and_grad():
    x = st.randn(1_000_003)
    mask = st.rand(1_000_003) > 0.7
    close(st.masked_select(x.cuda(), mask.cuda()), st.masked_select(x, mask), 0)
    for dtype in DTYPES:
        x = st.randn(5, 6, dtype=dtype)
        m = st.rand(5, 1) > 0.3
        xc = x.cuda()
        x.requires_grad_()
        xc.requires_grad_()
        (st.masked_select(x, m) ** 2).sum().backward()
        (st.masked_select(xc, m.cuda()) ** 2).sum().backward()
        close(xc.grad, x.grad)


def _grad_parity(fn, inputs, dtype, tol=None):
    """fn on CPU and CUDA copies of inputs: outputs and the gradients of a random projection.

    float64 compares elementwise. float32 compares the CUDA result against the same computation in
    float64 (CPU), scaled by the largest reference magnitude: a weight gradient summed over tens of
    thousands of terms with cancellation legitimately differs elementwise by more than 1e-4 between
    two float32 summation orders, and neither order is the "right" one."""
    tol = tol if tol is not None else (1e-4 if dtype == st.float32 else 1e-10)
    ref_dtype = st.float64 if dtype == st.float32 else dtype
    cpu = [t.to(ref_dtype) for t in inputs]
    gpu = [t.to(dtype).cuda() for t in inputs]
    for t in cpu + gpu:
        t.requires_grad_()
    # cuDNN convolutions default to TF32 (10-bit mantissa) for float32, which is not what this
    # parity check measures; st.cuda's own TF32 switch for matmuls is off by default.
    tf32 = st.backends.cudnn.allow_tf32
    st.backends.cudnn.allow_tf32 = False
    try:
        out, outc = fn(*cpu), fn(*gpu)
        w = st.randn(*out.shape, dtype=dtype)
        (out * w.to(ref_dtype)).sum().backward()
        (outc * w.cuda()).sum().backward()
    finally:
        st.backends.cudnn.allow_tf32 = tf32
    check = close if ref_dtype == dtype else close_scaled
    check(outc, out, tol)
    for a, b in zip(gpu, cpu):
        check(a.grad, b.grad, tol)


def close_scaled(a, b, tol):
    """max |a - b| <= tol * (1 + max |b|): a norm-wise check for float32 against a float64 reference."""
    a = a.cpu().to(st.float64)
    b = b.cpu().to(st.float64)
    assert tuple(a.shape) == tuple(b.shape)
    err = float((a - b).abs().max().item()) if a.numel() else 0.0
    scale = float(b.abs().max().item()) if b.numel() else 0.0
    assert err <= tol * (1 + scale), (err, scale)


@cuda
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1), ceil_mode=True),
    dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1), ceil_mode=True, count_include_pad=False),
    dict(kernel_size=3, stride=2, padding=1, divisor_override=5),
    dict(kernel_size=4, stride=3, padding=2, ceil_mode=True, divisor_override=2),
    dict(kernel_size=5, stride=1, padding=2, count_include_pad=False),
])
def test_avg_pool2d_parity(dtype, kw):
    for shape in ((2, 3, 11, 9), (3, 8, 8)):
        _grad_parity(lambda x: F.avg_pool2d(x, **kw), [st.randn(*shape)], dtype)


@cuda
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("out_size", [(1, 1), (3, 5), (7, 4), (10, 9), (16, 13)])
def test_adaptive_avg_pool2d_parity(dtype, out_size):
    for shape in ((2, 3, 10, 9), (4, 7, 5)):
        _grad_parity(lambda x: F.adaptive_avg_pool2d(x, out_size), [st.randn(*shape)], dtype)


@cuda
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("N,C,hw,k,kw", [
    (2, 4, (6, 6), (3, 3), dict(padding=1)),
    (3, 4, (9, 8), (3, 2), dict(stride=(2, 3), padding=(1, 1), dilation=(2, 1))),
    (2, 3, (7, 7), (5, 5), dict(padding=2, dilation=1, stride=2)),
    (1, 5, (4, 9), (2, 4), dict(padding="same")),
    (8, 3, (64, 64), (3, 3), dict(padding=1)),  # weight gradient split over several blocks
])
@pytest.mark.parametrize("bias", [True, False])
def test_depthwise_conv2d_parity(dtype, N, C, hw, k, kw, bias):
    x = st.randn(N, C, *hw)
    w = st.randn(C, 1, *k)
    if bias:
        _grad_parity(lambda x, w, b: F.conv2d(x, w, b, groups=C, **kw), [x, w, st.randn(C)], dtype)
    else:
        _grad_parity(lambda x, w: F.conv2d(x, w, None, groups=C, **kw), [x, w], dtype)


def _rnn_pair(kind, dtype, **kw):
    st.manual_seed(11)
    m = getattr(st.nn, kind)(**kw)
    st.manual_seed(11)
    mc = getattr(st.nn, kind)(**kw)
    m.to(dtype)
    mc.to(dtype)
    mc.to("cuda")
    return m, mc


@cuda
@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("num_layers", [1, 3])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("with_state", [False, True])
def test_rnn_parity(kind, dtype, num_layers, bias, batch_first, with_state):
    B, T, I, H = 3, 7, 4, 6
    m, mc = _rnn_pair(kind, dtype, input_size=I, hidden_size=H, num_layers=num_layers, bias=bias,
                      batch_first=batch_first)
    tol = 1e-4 if dtype == st.float32 else 1e-9
    x = st.randn(*((B, T, I) if batch_first else (T, B, I)), dtype=dtype)
    xc = x.cuda()
    leaves, leaves_c = [x], [xc]
    if with_state:
        states = [st.randn(num_layers, B, H, dtype=dtype) for _ in range(2 if kind == "LSTM" else 1)]
        states_c = [s.cuda() for s in states]
        leaves += states
        leaves_c += states_c
    for t in leaves + leaves_c:
        t.requires_grad_()

    def run(mod, inp, st_):
        if kind == "LSTM":
            out, (h, c) = mod(inp, (st_[0], st_[1])) if with_state else mod(inp)
            return [out, h, c]
        out, h = mod(inp, st_[0]) if with_state else mod(inp)
        return [out, h]

    outs = run(m, x, leaves[1:])
    outs_c = run(mc, xc, leaves_c[1:])
    loss = 0
    loss_c = 0
    for o, oc in zip(outs, outs_c):
        close(oc, o, tol)
        w = st.randn(*o.shape, dtype=dtype)
        loss = loss + (o * w).sum()
        loss_c = loss_c + (oc * w.cuda()).sum()
    loss.backward()
    loss_c.backward()
    for a, b in zip(leaves_c, leaves):
        close(a.grad, b.grad, tol)
    pc = dict(mc.named_parameters())
    for name, p in m.named_parameters():
        assert pc[name].device == "cuda:0"
        close(pc[name].grad, p.grad, tol)


@cuda
@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_rnn_cuda_unbatched_dropout_and_half(kind):
    m, mc = _rnn_pair(kind, st.float32, input_size=3, hidden_size=5, num_layers=2, dropout=0.5)
    m.eval()
    mc.eval()
    x = st.randn(4, 3)  # unbatched (seq, feature)
    close(mc(x.cuda())[0], m(x)[0])
    m.train()
    mc.train()
    # Inter-layer dropout draws the same Philox numbers on both devices.
    st.manual_seed(5)
    a = m(st.randn(2, 4, 3))[0]
    st.manual_seed(5)
    b = mc(st.randn(2, 4, 3).cuda())[0]
    close(b, a)
    mc.to(st.bfloat16)
    out = mc(st.randn(2, 4, 3).to(st.bfloat16).cuda())[0]
    assert out.dtype == st.bfloat16 and out.device == "cuda:0"
