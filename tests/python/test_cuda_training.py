"""GPU training paths against PyTorch on the same GPU: cuDNN convolutions (forward, input and
weight gradients, every geometry the op takes, float32/float64/bfloat16, heuristic and
benchmark algorithm choice, cuDNN off), CUDA batch norm, autocast + GradScaler training, and
the memory activation checkpointing saves. Skipped without CUDA (and without torch)."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.nn.functional  # noqa: F401  (binds st.nn.functional)
from conftest import HAVE_CUDA, HAVE_TORCH, CUDA_SKIP_REASON, to_np

pytestmark = [pytest.mark.skipif(not HAVE_CUDA, reason=CUDA_SKIP_REASON),
              pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed")]

if HAVE_TORCH:
    import torch

CONV_CASES = [
    # (x shape, w shape, stride, padding, dilation, groups, bias)
    ((4, 3, 17, 15), (8, 3, 3, 3), 1, 1, 1, 1, True),
    ((2, 6, 12, 12), (6, 2, 3, 3), 2, 1, 1, 3, False),
    ((2, 8, 10, 9), (8, 1, 5, 3), 1, (2, 1), 1, 8, True),  # depthwise
    ((3, 4, 16, 16), (5, 4, 3, 3), 1, 2, 2, 1, True),  # dilated
    ((2, 16, 7, 7), (32, 16, 1, 1), 1, 0, 1, 1, True),  # 1x1
    ((1, 3, 32, 32), (4, 3, 7, 7), 3, 3, 1, 1, False),
]


@pytest.fixture
def exact_fp32():
    """float32 convolutions without TF32 on both sides, so they agree to float32 rounding."""
    old = st.backends.cudnn.allow_tf32, torch.backends.cudnn.allow_tf32
    st.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    yield
    st.backends.cudnn.allow_tf32, torch.backends.cudnn.allow_tf32 = old


def run_conv(case, dtype, seed=0):
    xs, ws, stride, padding, dilation, groups, bias = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(xs)
    w = rng.standard_normal(ws) * 0.3
    b = rng.standard_normal(ws[0]) if bias else None
    gy_shape = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), None, stride, padding, dilation,
                                          groups).shape
    gy = rng.standard_normal(tuple(gy_shape))
    tdt = getattr(torch, dtype)
    sdt = getattr(st, dtype)

    def on_st():
        sx = st.tensor(x).to(sdt).to("cuda").requires_grad_(True)
        sw = st.tensor(w).to(sdt).to("cuda").requires_grad_(True)
        sb = st.tensor(b).to(sdt).to("cuda").requires_grad_(True) if bias else None
        y = st.nn.functional.conv2d(sx, sw, sb, stride=stride, padding=padding, dilation=dilation, groups=groups)
        y.backward(st.tensor(gy).to(sdt).to("cuda"))
        return [y, sx.grad, sw.grad] + ([sb.grad] if bias else [])

    tx = torch.tensor(x, dtype=tdt, device="cuda", requires_grad=True)
    tw = torch.tensor(w, dtype=tdt, device="cuda", requires_grad=True)
    tb = torch.tensor(b, dtype=tdt, device="cuda", requires_grad=True) if bias else None
    ty = torch.nn.functional.conv2d(tx, tw, tb, stride, padding, dilation, groups)
    ty.backward(torch.tensor(gy, dtype=tdt, device="cuda"))
    ref = [ty, tx.grad, tw.grad] + ([tb.grad] if bias else [])
    return on_st, [r.detach().float().cpu().numpy() if dtype == "bfloat16" else r.detach().cpu().numpy()
                   for r in ref]


def as_np(t):
    return to_np(t.to(st.float32)) if t.dtype == st.bfloat16 else to_np(t)


@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: "x".join(map(str, c[1])))
@pytest.mark.parametrize("dtype,tol", [("float32", 2e-4), ("float64", 1e-10), ("bfloat16", 6e-2)])
def test_cudnn_conv_matches_torch(case, dtype, tol, exact_fp32):
    assert st.backends.cudnn.version(), "the CUDA test build should find cuDNN"
    on_st, ref = run_conv(case, dtype)
    for got, want in zip(on_st(), ref):
        scale = max(1.0, float(np.abs(want).max()))
        np.testing.assert_allclose(as_np(got), want, rtol=tol, atol=tol * scale)


@pytest.mark.parametrize("case", CONV_CASES[:3], ids=lambda c: "x".join(map(str, c[1])))
def test_cudnn_off_and_benchmark_agree(case, exact_fp32):
    on_st, ref = run_conv(case, "float64")
    old = st.backends.cudnn.enabled, st.backends.cudnn.benchmark
    try:
        st.backends.cudnn.enabled = False  # im2col + cuBLAS
        off = [as_np(t) for t in on_st()]
        st.backends.cudnn.enabled, st.backends.cudnn.benchmark = True, True
        bench = [as_np(t) for t in on_st()]
    finally:
        st.backends.cudnn.enabled, st.backends.cudnn.benchmark = old
    for a, b, want in zip(off, bench, ref):
        np.testing.assert_allclose(a, want, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(b, want, rtol=1e-10, atol=1e-10)


def test_conv_modules_and_conv1d_on_cudnn(exact_fp32):
    st.manual_seed(0)
    conv = st.nn.Conv1d(4, 6, 3, padding=1).to("cuda")
    tconv = torch.nn.Conv1d(4, 6, 3, padding=1).cuda()
    with torch.no_grad():
        tconv.weight.copy_(torch.from_numpy(to_np(conv.weight)))
        tconv.bias.copy_(torch.from_numpy(to_np(conv.bias)))
    x = np.random.default_rng(0).standard_normal((2, 4, 20)).astype(np.float32)
    np.testing.assert_allclose(to_np(conv(st.tensor(x).to("cuda"))),
                               tconv(torch.tensor(x, device="cuda")).detach().cpu().numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape", [(8, 5, 6, 7), (16, 3), (4, 3, 10)])
def test_cuda_batch_norm_matches_torch(shape):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(shape) * 3 + 2).astype(np.float32)
    gy = rng.standard_normal(shape).astype(np.float32)
    c = shape[1]
    bn = (st.nn.BatchNorm2d if len(shape) == 4 else st.nn.BatchNorm1d)(c, momentum=0.2).to("cuda")
    tbn = (torch.nn.BatchNorm2d if len(shape) == 4 else torch.nn.BatchNorm1d)(c, momentum=0.2).cuda()
    for step in range(2):
        sx = st.tensor(x + step).to("cuda").requires_grad_(True)
        tx = torch.tensor(x + step, device="cuda", requires_grad=True)
        y, ty = bn(sx), tbn(tx)
        y.backward(st.tensor(gy).to("cuda"))
        ty.backward(torch.tensor(gy, device="cuda"))
        np.testing.assert_allclose(to_np(y), ty.detach().cpu().numpy(), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(to_np(sx.grad), tx.grad.cpu().numpy(), rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(to_np(bn.weight.grad), tbn.weight.grad.cpu().numpy(), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(to_np(bn.bias.grad), tbn.bias.grad.cpu().numpy(), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(to_np(bn.running_mean), tbn.running_mean.cpu().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(to_np(bn.running_var), tbn.running_var.cpu().numpy(), rtol=1e-5, atol=1e-5)
    bn.eval()
    tbn.eval()
    np.testing.assert_allclose(to_np(bn(st.tensor(x).to("cuda"))), tbn(torch.tensor(x, device="cuda")).detach().cpu().numpy(),
                               rtol=1e-4, atol=1e-4)


def test_bf16_autocast_cnn_step_and_fp16_scaler_training():
    """A CNN+BN classifier trains under bf16 autocast (conv in bfloat16 through cuDNN, float32
    master weights), and an fp16 autocast MLP with GradScaler learns a fixed task."""
    st.manual_seed(0)
    net = st.nn.Sequential(st.nn.Conv2d(3, 8, 3, padding=1), st.nn.BatchNorm2d(8), st.nn.ReLU(),
                           st.nn.AdaptiveAvgPool2d(1), st.nn.Flatten(), st.nn.Linear(8, 4)).to("cuda")
    opt = st.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    x = st.randn(32, 3, 8, 8).to("cuda")
    y = st.tensor(np.arange(32) % 4).to("cuda")
    x = x + (y.to(st.float32).reshape(32, 1, 1, 1) - 1.5)  # learnable: class shifts the mean
    losses = []
    for _ in range(30):
        opt.zero_grad()
        with st.autocast("cuda", dtype=st.bfloat16):
            out = net(x)
            loss = st.nn.functional.cross_entropy(out, y)
        assert out.dtype == st.bfloat16 and loss.dtype == st.float32
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert net[0].weight.dtype == st.float32 and net[0].weight.grad.dtype == st.float32
    assert losses[-1] < 0.5 * losses[0]

    mlp = st.nn.Sequential(st.nn.Linear(16, 64), st.nn.ReLU(), st.nn.Linear(64, 1)).to("cuda")
    opt = st.optim.Adam(mlp.parameters(), lr=1e-2)
    scaler = st.amp.GradScaler(init_scale=2.0 ** 24)  # overflows at first: must back off
    a = st.randn(256, 16).to("cuda")
    t = (a[:, :1] * 2.0 - a[:, 1:2]).detach()
    first = None
    for _ in range(150):
        opt.zero_grad()
        with st.autocast("cuda", dtype=st.float16):
            loss = st.nn.functional.mse_loss(mlp(a), t)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        first = first if first is not None else loss.item()
    assert scaler.skipped_steps >= 1 and scaler.get_scale() < 2.0 ** 24
    assert loss.item() < 0.1 * first


def test_checkpoint_lowers_peak_memory():
    """Activation memory (peak above what parameters and input hold) of six MLP blocks with and
    without checkpointing: checkpointing keeps only each block's input."""
    st.manual_seed(0)
    blocks = [st.nn.Sequential(st.nn.Linear(1024, 4096), st.nn.GELU(), st.nn.Linear(4096, 1024)).to("cuda")
              for _ in range(6)]
    x0 = st.randn(8192, 1024).to("cuda").requires_grad_(True)

    def activation_peak(use):
        for b in blocks:
            for p in b.parameters():
                p.grad = None
        x0.grad = None
        st.cuda.synchronize()
        base = st.cuda.memory_allocated()
        st.cuda.reset_peak_memory_stats()
        h = x0
        for b in blocks:
            h = st.utils.checkpoint(b, h) if use else b(h)
        h.sum().backward()
        st.cuda.synchronize()
        return st.cuda.max_memory_allocated() - base

    plain, ckpt = activation_peak(False), activation_peak(True)
    assert ckpt < 0.6 * plain, (plain, ckpt)


def _many_params(seed):
    # 70 parameters (three multi-tensor packs), sizes from empty to larger than one chunk.
    rng = np.random.default_rng(seed)
    sizes = [(0,), (1,), (7, 3), (5000,), (64, 65)] * 14
    return [rng.standard_normal(s).astype(np.float32) for s in sizes]


@pytest.mark.parametrize("name,kw", [
    ("Adam", dict(lr=1e-2)),
    ("AdamW", dict(lr=1e-2, weight_decay=0.1)),
    ("Adam", dict(lr=1e-2, amsgrad=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=1e-3)),
    ("SGD", dict(lr=0.1)),
])
def test_multi_tensor_cuda_updates_match_torch(name, kw):
    """The CUDA optimizers queue every parameter's update into a few multi-tensor launches:
    three steps over 70 parameters of mixed sizes (one empty, some spanning several chunks)
    match torch.optim on the same GPU."""
    values = _many_params(0)
    sp = [st.tensor(v).cuda().requires_grad_() for v in values]
    tp = [torch.tensor(v, device="cuda", requires_grad=True) for v in values]
    so, to = getattr(st.optim, name)(sp, **kw), getattr(torch.optim, name)(tp, **kw)
    for step in range(3):
        grads = _many_params(step + 1)
        for a, b, g in zip(sp, tp, grads):
            a.grad = st.tensor(g).cuda()
            b.grad = torch.tensor(g, device="cuda")
        assert so.step() is not False
        to.step()
    for a, b in zip(sp, tp):
        np.testing.assert_allclose(to_np(a.detach().cpu()), b.detach().cpu().numpy(), rtol=1e-5, atol=1e-6)


def test_multi_tensor_cuda_step_skips_nonfinite_and_updates_bf16_params():
    """One NaN among many CUDA gradients skips the whole step (nothing changes); bfloat16
    parameters update through float32 working copies, matching the float32 run rounded."""
    values = _many_params(3)[:40]
    sp = [st.tensor(v).cuda().requires_grad_() for v in values]
    opt = st.optim.Adam(sp, lr=1e-2)
    grads = _many_params(4)[:40]
    grads[-1] = grads[-1].copy()
    grads[-1].flat[0] = np.nan
    for a, g in zip(sp, grads):
        a.grad = st.tensor(g).cuda()
    assert opt.step() is False and opt.skipped_steps == 1
    for a, v in zip(sp, values):
        np.testing.assert_array_equal(to_np(a.detach().cpu()), v)
    b16 = [st.tensor(v).to(st.bfloat16).cuda().requires_grad_() for v in values[:6]]
    f32 = [st.tensor(v).to(st.bfloat16).to(st.float32).cuda().requires_grad_() for v in values[:6]]
    ob, of = st.optim.Adam(b16, lr=1e-2), st.optim.Adam(f32, lr=1e-2)
    for a, b, g in zip(b16, f32, _many_params(5)[:6]):
        a.grad = st.tensor(g).to(st.bfloat16).cuda()
        b.grad = st.tensor(g).to(st.bfloat16).to(st.float32).cuda()
    ob.step()
    of.step()
    for a, b in zip(b16, f32):
        np.testing.assert_array_equal(to_np(a.detach().cpu().to(st.float32)),
                                      to_np(b.detach().cpu().to(st.bfloat16).to(st.float32)))
