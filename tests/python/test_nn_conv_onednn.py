"""float32 conv2d through oneDNN against the im2col path and PyTorch, and the backend switch.

The comparisons run in every build: without oneDNN both switch settings take the im2col
path, and only the oneDNN-specific checks are skipped.
"""

from __future__ import annotations


import os
import sys

import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.nn as nn
from spiraltorch import _core

from conftest import HAVE_ONEDNN, native_backend, needs_onednn, run_python


def conv_backend(name):
    return native_backend("conv", name)


torch = pytest.importorskip("torch")
F = torch.nn.functional


def _run(x, w, b, gy, kwargs, conv=nn.conv2d):
    """Output and input/weight/bias gradients of one float32 convolution."""
    xs = st.tensor(x, requires_grad=True)
    ws = st.tensor(w, requires_grad=True)
    bs = None if b is None else st.tensor(b, requires_grad=True)
    y = conv(xs, ws, bs, **kwargs)
    (y * st.tensor(gy)).sum().backward()
    return [y.detach().numpy(), xs.grad.numpy(), ws.grad.numpy()] + ([] if b is None else [bs.grad.numpy()])


def _torch(x, w, b, gy, kwargs, conv=F.conv2d):
    xt = torch.tensor(x, requires_grad=True)
    wt = torch.tensor(w, requires_grad=True)
    bt = None if b is None else torch.tensor(b, requires_grad=True)
    y = conv(xt, wt, bt, **kwargs)
    y.backward(torch.tensor(gy))
    return [y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy()] + ([] if b is None else [bt.grad.numpy()])


def _assert_close(got, want, what):
    for name, g, t in zip(("output", "grad input", "grad weight", "grad bias"), got, want):
        scale = max(1.0, float(np.abs(t).max()))
        np.testing.assert_allclose(g, t, rtol=1e-4, atol=2e-5 * scale, err_msg=f"{what}: {name}")


CASES = [
    # id, N, C, O, (H, W), (kh, kw), kwargs
    ("stride2", 3, 8, 16, (13, 12), (3, 3), dict(stride=2, padding=1)),
    ("stride2-odd", 2, 4, 8, (5, 5), (2, 2), dict(stride=2)),  # last input row unused
    ("padding", 2, 3, 8, (9, 7), (3, 3), dict(padding=(2, 1))),
    ("same-even-kernel", 2, 3, 5, (7, 6), (2, 4), dict(padding="same")),  # pad begin != end
    ("dilation", 2, 4, 6, (11, 10), (3, 3), dict(dilation=(2, 3), padding=2)),
    ("groups2", 2, 8, 12, (9, 9), (3, 3), dict(padding=1, groups=2)),
    ("depthwise", 3, 16, 16, (10, 10), (3, 3), dict(padding=1, groups=16)),
    ("depthwise-x2", 2, 8, 16, (7, 9), (3, 3), dict(stride=2, padding=1, groups=8)),
    ("1x1", 2, 16, 32, (8, 8), (1, 1), {}),
    ("1x1-stride2", 2, 16, 8, (9, 9), (1, 1), dict(stride=2)),
    ("batch1", 1, 3, 32, (28, 28), (3, 3), dict(padding=1)),
    ("fashion-conv1", 8, 1, 32, (28, 28), (3, 3), dict(padding=1)),
    ("fashion-conv2", 4, 32, 64, (14, 14), (3, 3), dict(padding=1)),
    ("kernel-covers-input", 2, 3, 4, (5, 5), (5, 5), {}),
]


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_conv2d_float32_paths_match_each_other_and_torch(case, bias):
    _, n, c, o, (h, w), (kh, kw), kwargs = case
    groups = kwargs.get("groups", 1)
    rng = np.random.default_rng(abs(hash(case[0])) % 2**32)
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    wt = (rng.standard_normal((o, c // groups, kh, kw)) / np.sqrt(c // groups * kh * kw)).astype(np.float32)
    b = rng.standard_normal(o).astype(np.float32) if bias else None
    y_shape = F.conv2d(torch.tensor(x), torch.tensor(wt), None, **kwargs).shape
    gy = rng.standard_normal(tuple(y_shape)).astype(np.float32)
    want = _torch(x, wt, b, gy, kwargs)
    with conv_backend("im2col"):
        im2col = _run(x, wt, b, gy, kwargs)
    with conv_backend("auto"):
        auto = _run(x, wt, b, gy, kwargs)
    _assert_close(im2col, want, "im2col vs torch")
    _assert_close(auto, want, "auto (oneDNN when built) vs torch")
    _assert_close(auto, im2col, "auto vs im2col")


def test_conv1d_float32_through_both_paths():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 6, 20)).astype(np.float32)
    w = (rng.standard_normal((8, 3, 5)) * 0.3).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    kwargs = dict(stride=2, padding=2, dilation=2, groups=2)
    gy = rng.standard_normal(tuple(F.conv1d(torch.tensor(x), torch.tensor(w), None, **kwargs).shape))
    gy = gy.astype(np.float32)
    want = _torch(x, w, b, gy, kwargs, conv=F.conv1d)
    for name in ("im2col", "auto"):
        with conv_backend(name):
            _assert_close(_run(x, w, b, gy, kwargs, conv=nn.conv1d), want, name)


@pytest.mark.parametrize("grads", ["x", "w", "b", "wb", "xb"])
def test_conv2d_partial_gradients(grads):
    """Only the requested gradients are computed (frozen weight with a trainable bias, ...)."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 4, 8, 8)).astype(np.float32)
    w = (rng.standard_normal((6, 4, 3, 3)) * 0.2).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    xs = st.tensor(x, requires_grad="x" in grads)
    ws = st.tensor(w, requires_grad="w" in grads)
    bs = st.tensor(b, requires_grad="b" in grads)
    xt = torch.tensor(x, requires_grad="x" in grads)
    wt = torch.tensor(w, requires_grad="w" in grads)
    bt = torch.tensor(b, requires_grad="b" in grads)
    nn.conv2d(xs, ws, bs, padding=1).square().sum().backward()
    F.conv2d(xt, wt, bt, padding=1).square().sum().backward()
    for s, t, key in ((xs, xt, "x"), (ws, wt, "w"), (bs, bt, "b")):
        if key in grads:
            np.testing.assert_allclose(s.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-3)
        else:
            assert s.grad is None


def test_conv2d_module_training_steps_match_across_paths():
    """A few SGD steps of a small CNN give the same weights through either path."""
    results = []
    for name in ("im2col", "auto"):
        with conv_backend(name):
            st.manual_seed(3)
            net = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 4, 3, stride=2, groups=4),
                                nn.Flatten(), nn.Linear(4 * 6 * 6, 3))
            opt = st.optim.SGD(net.parameters(), lr=0.05)
            x = st.randn(5, 1, 14, 14)
            y = st.tensor(np.array([0, 1, 2, 1, 0]))
            for _ in range(3):
                opt.zero_grad()
                nn.CategoricalCrossEntropy()(net(x), y).backward()
                opt.step()
            results.append([p.detach().numpy().copy() for p in net.parameters()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_float64_stays_exact_with_onednn_on():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 7, 7))
    w = rng.standard_normal((4, 3, 3, 3))
    got = nn.conv2d(st.tensor(x), st.tensor(w), padding=1).numpy()
    np.testing.assert_allclose(got, F.conv2d(torch.tensor(x), torch.tensor(w), padding=1).numpy(),
                               rtol=1e-12, atol=1e-12)


def test_describe_cpu_reports_onednn():
    info = st.describe_device("cpu")
    assert info["conv_backend"] in ("auto", "im2col", "onednn")
    if HAVE_ONEDNN:
        major, minor, patch = (int(p) for p in info["onednn"].split("."))
        assert major >= 2 and "onednn_reason" not in info
    else:
        assert info["onednn"] is None and info["onednn_reason"]


def test_describe_cpu_reports_the_onednn_the_build_compiled_against():
    """Whether oneDNN is built in comes from the compile-time headers; describe_device must
    then report the library loaded at run time, of the same major version and no older."""
    built = _core._onednn_header_version()
    info = st.describe_device("cpu")
    if built is None:
        assert info["onednn"] is None and info["onednn_reason"]
        return
    assert info["onednn"] is not None, info.get("onednn_reason")
    header = tuple(int(p) for p in built.split("."))
    runtime = tuple(int(p) for p in info["onednn"].split("."))
    assert runtime[0] == header[0] and runtime[:2] >= header[:2], (built, info["onednn"])


def _pypi_onednn_files():
    """The files of PyPI's onednn-cpu-gomp in this environment (empty when absent)."""
    import importlib.metadata as md
    try:
        dist = md.distribution("onednn-cpu-gomp")
    except md.PackageNotFoundError:
        return set()
    return {os.path.realpath(dist.locate_file(f)) for f in dist.files or []}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_onednn_3_is_loaded_from_the_pypi_wheel():
    """A build against PyPI's headers (oneDNN 3.x: pyproject's build requirement) runs the
    libdnnl.so.3 of the onednn-cpu-gomp wheel, found by the module's rpath."""
    built = _core._onednn_header_version()
    files = _pypi_onednn_files()
    if built is None or not built.startswith("3.") or not files:
        pytest.skip(f"not built against PyPI's oneDNN 3 (headers {built}, wheel installed: {bool(files)})")
    with open("/proc/self/maps") as maps:
        loaded = {os.path.realpath(ln.split(None, 5)[5].strip()) for ln in maps
                  if len(ln.split(None, 5)) == 6 and "libdnnl.so" in ln}
    assert loaded and loaded <= files, loaded


def test_conv_backend_switch_errors():
    with pytest.raises(ValueError, match="'winograd'"):
        _core._set_conv_backend("winograd")
    assert _core._conv_backend() in ("auto", "im2col", "onednn")
    if not HAVE_ONEDNN:
        with pytest.raises(st.DeviceUnavailableError, match="oneDNN is not available"):
            _core._set_conv_backend("onednn")
    else:
        with conv_backend("onednn"):
            assert _core._conv_backend() == "onednn"


CONV_SNIPPET = ("import spiraltorch as st, spiraltorch.nn as nn\n"
                "x = st.randn(2, 3, 8, 8, requires_grad=True)\n"
                "w = st.randn(4, 3, 3, 3, requires_grad=True)\n"
                "nn.conv2d(x, w, padding=1).sum().backward()\n"
                "print('backend', st._core._conv_backend())\n")


def test_conv_backend_env_var():
    r = run_python(CONV_SNIPPET, SPIRALTORCH_CONV_BACKEND="im2col")
    assert r.returncode == 0, r.stderr
    assert "backend im2col" in r.stdout
    r = run_python(CONV_SNIPPET, SPIRALTORCH_CONV_BACKEND="fastest")
    assert r.returncode != 0
    assert "SPIRALTORCH_CONV_BACKEND" in r.stderr and "'fastest'" in r.stderr
    if not HAVE_ONEDNN:
        r = run_python(CONV_SNIPPET, SPIRALTORCH_CONV_BACKEND="onednn")
        assert r.returncode != 0 and "oneDNN is not available" in r.stderr


@needs_onednn
def test_onednn_primitives_actually_run():
    """DNNL_VERBOSE lists every primitive oneDNN executes: forward, backward-data and
    backward-weights convolutions under `auto`, none under `im2col`."""
    r = run_python(CONV_SNIPPET, DNNL_VERBOSE="1", SPIRALTORCH_CONV_BACKEND="auto")
    assert r.returncode == 0, r.stderr
    # The prefix is onednn_verbose (dnnl_verbose before 2.5).
    lines = [ln for ln in r.stdout.splitlines() if "_verbose,exec,cpu,convolution" in ln]
    assert any("forward_training" in ln for ln in lines), r.stdout
    assert any("backward_data" in ln for ln in lines), r.stdout
    assert any("backward_weights" in ln for ln in lines), r.stdout
    r = run_python(CONV_SNIPPET, DNNL_VERBOSE="1", SPIRALTORCH_CONV_BACKEND="im2col")
    assert r.returncode == 0, r.stderr
    assert "_verbose,exec,cpu,convolution" not in r.stdout
