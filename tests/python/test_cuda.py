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
