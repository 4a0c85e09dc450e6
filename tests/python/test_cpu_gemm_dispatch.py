"""float32 GEMM dispatch on the CPU (issue #20): OpenBLAS or oneDNN's matmul per shape, by the
measured rule of src/nn/matmul_onednn.h, reported by describe_device("cpu"). Every shape class
gives the same products (against float64 NumPy) whichever library takes it."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.nn.functional as F

INFO = st.describe_device("cpu")


def test_describe_device_reports_the_gemm_dispatch():
    for key in ("cpu_model", "cpu_isa", "gemm_backend", "gemm_dispatch", "gemm_dispatch_measured_on", "bf16_matmul"):
        assert key in INFO, key
    assert INFO["gemm_backend"] in ("auto", "openblas", "onednn")
    table = INFO["gemm_dispatch"]
    assert set(table) >= {"small (< 2^20 multiply-adds)", "square 128-1024", "square 2048+ (>= 2^32 multiply-adds)",
                          "transformer linear (1024 tokens x 256-4096)", "attention batched (32 x 128x128x64)",
                          "bfloat16"}
    for cls, lib in table.items():
        if cls != "bfloat16":
            assert lib in ("openblas", "onednn"), (cls, lib)
    if INFO["onednn"] is None:
        assert all(lib == "openblas" for cls, lib in table.items() if cls != "bfloat16")
    elif INFO["gemm_backend"] == "auto":
        assert table["small (< 2^20 multiply-adds)"] == "openblas"
        assert table["square 128-1024"] == "onednn"
        # OpenBLAS takes the largest products back on AMX CPUs (measured on a Xeon), oneDNN elsewhere.
        want_big = "openblas" if "amx" in INFO["cpu_isa"] else "onednn"
        assert table["square 2048+ (>= 2^32 multiply-adds)"] == want_big
    assert "Intel" in INFO["gemm_dispatch_measured_on"]


@pytest.mark.parametrize("shape", [
    ((7, 9), (9, 5)),                   # small: OpenBLAS
    ((256, 256), (256, 256)),           # square: oneDNN under "auto"
    ((1024, 256), (256, 768)),          # transformer linear
    ((32, 128, 64), (32, 64, 128)),     # attention, batched
    ((4, 1, 96, 80), (3, 80, 70)),      # broadcast batch
])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True)])
def test_float32_matmul_matches_float64(shape, ta, tb):
    rng = np.random.default_rng(0)
    sa, sb = shape
    a = rng.standard_normal(sa).astype(np.float32)
    b = rng.standard_normal(sb).astype(np.float32)
    x = st.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2))).transpose(-1, -2) if ta else st.tensor(a)
    y = st.tensor(np.ascontiguousarray(np.swapaxes(b, -1, -2))).transpose(-1, -2) if tb else st.tensor(b)
    got = (x @ y).numpy()
    want = a.astype(np.float64) @ b.astype(np.float64)
    k = sa[-1]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * np.sqrt(k) * np.abs(want).max() + 1e-6)


def test_linear_gradients_agree_between_libraries():
    """One linear layer's forward and backward under each forced backend (fresh processes: the
    switch is read once per process) give the same numbers to float32 rounding."""
    code = (
        "import numpy as np, spiraltorch as st, spiraltorch.nn.functional as F\n"
        "r = np.random.default_rng(1)\n"
        "x = st.tensor(r.standard_normal((300, 256)).astype(np.float32)).requires_grad_(True)\n"
        "w = st.tensor(r.standard_normal((512, 256)).astype(np.float32)).requires_grad_(True)\n"
        "y = F.linear(x, w); (y * y).sum().backward()\n"
        "np.save(__import__('sys').argv[1], np.concatenate([y.detach().numpy().ravel(), x.grad.numpy().ravel(),"
        " w.grad.numpy().ravel()]))\n")
    if INFO["onednn"] is None:
        pytest.skip("oneDNN is not in this build")
    outs = {}
    for lib in ("openblas", "onednn"):
        path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"st_gemm_{lib}_{os.getpid()}.npy")
        env = dict(os.environ, SPIRALTORCH_GEMM_BACKEND=lib)
        subprocess.run([sys.executable, "-c", code, path], check=True, env=env)
        outs[lib] = np.load(path)
        os.remove(path)
    scale = np.abs(outs["openblas"]).max()
    np.testing.assert_allclose(outs["onednn"], outs["openblas"], rtol=0, atol=2e-5 * scale)


def test_bad_gemm_backend_environment_is_reported():
    env = dict(os.environ, SPIRALTORCH_GEMM_BACKEND="mkl")
    r = subprocess.run([sys.executable, "-c", "import spiraltorch as st\nst.ones(70, 70) @ st.ones(70, 70)"],
                       env=env, capture_output=True, text=True)
    assert r.returncode != 0
    assert "SPIRALTORCH_GEMM_BACKEND" in r.stderr and "mkl" in r.stderr
