"""GEMM dispatch on the CPU (issue #20): OpenBLAS, oneDNN's matmul or Intel MKL (loaded at run time
when `pip install mkl` put libmkl_rt in the environment) per shape and CPU vendor, by the measured rule
of src/backend/cpu/gemm_library.h, reported by describe_device("cpu"). Every shape class gives the
same products (against float64 NumPy) whichever library takes it."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import spiraltorch as st

INFO = st.describe_device("cpu")


def test_describe_device_reports_the_gemm_dispatch():
    for key in ("cpu_model", "cpu_isa", "gemm_backend", "gemm_dispatch", "gemm_dispatch_measured_on", "bf16_matmul"):
        assert key in INFO, key
    assert INFO["gemm_backend"] in ("auto", "openblas", "onednn", "mkl")
    table = INFO["gemm_dispatch"]
    assert set(table) >= {"small (< 2^20 multiply-adds)", "square 128-1024", "square 2048+ (>= 2^32 multiply-adds)",
                          "transformer linear (1024 tokens x 256-4096)", "attention batched (32 x 128x128x64)",
                          "float64", "bfloat16"}
    for cls, lib in table.items():
        if cls != "bfloat16":
            assert lib in ("openblas", "onednn", "mkl"), (cls, lib)
    assert isinstance(INFO["cpu_vendor_intel"], bool)
    if INFO["gemm_backend"] != "auto":
        return
    assert table["float64"] == "openblas"
    assert table["small (< 2^20 multiply-adds)"] == "openblas"
    if INFO["cpu_vendor_intel"] and INFO["mkl"] is not None:
        # On Intel CPUs MKL takes every product from 2^20 multiply-adds.
        assert all(lib == "mkl" for cls, lib in table.items() if cls not in ("bfloat16", "float64", "small (< 2^20 multiply-adds)"))
    elif INFO["onednn"] is None:
        assert all(lib == "openblas" for cls, lib in table.items() if cls != "bfloat16")
    else:
        assert "mkl" not in table.values()  # never on other vendors under "auto"
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


def test_describe_device_reports_mkl():
    """MKL's version and how it is reached: linked in ("static", from mkl-static at build time) or
    libmkl_rt loaded at run time (its file); else None and the reason (naming the packages)."""
    if INFO["mkl"] is None:
        assert "libmkl_rt" in INFO["mkl_reason"] and "pip install mkl" in INFO["mkl_reason"]
        assert "mkl_linkage" not in INFO
    else:
        assert INFO["mkl"][:4].isdigit(), INFO["mkl"]
        assert INFO["mkl_linkage"] in ("static", "runtime")
        if INFO["mkl_linkage"] == "static":
            assert INFO["mkl_library"] is None
        else:
            assert os.path.basename(INFO["mkl_library"]).startswith("libmkl_rt.so")
            assert os.path.exists(INFO["mkl_library"]) or "/" not in INFO["mkl_library"]


def _runtime_mkl():
    """PyPI's libmkl_rt in this environment, or None."""
    for name in ("libmkl_rt.so.3", "libmkl_rt.so.2"):
        path = os.path.join(sys.prefix, "lib", name)
        if os.path.exists(path):
            return path
    return None


@pytest.mark.skipif(INFO.get("mkl_linkage") != "static" or _runtime_mkl() is None,
                    reason="needs MKL linked in and PyPI's mkl in the environment")
def test_named_libmkl_rt_replaces_the_linked_copy():
    """In a build with MKL linked in, SPIRALTORCH_MKL_LIBRARY still names a libmkl_rt to load instead;
    its products agree with NumPy like the linked copy's."""
    code = ("import numpy as np, spiraltorch as st\nd = st.describe_device('cpu')\n"
            "print(d['mkl_linkage'], d['mkl_library'], d['mkl'])\n"
            "r = np.random.default_rng(0); a = r.standard_normal((4, 130, 70)); b = r.standard_normal((70, 90))\n"
            "for dt in (np.float32, np.float64):\n"
            "    got = (st.tensor(a.astype(dt)) @ st.tensor(b.astype(dt))).numpy()\n"
            "    err = np.abs(got - a @ b).max()\n"
            "    assert err < (1e-4 if dt is np.float32 else 1e-10), (dt, err)\n")
    env = dict(os.environ, SPIRALTORCH_MKL_LIBRARY=_runtime_mkl(), SPIRALTORCH_GEMM_BACKEND="mkl")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    linkage, library, version = r.stdout.split()
    assert linkage == "runtime" and library == _runtime_mkl() and version[:4].isdigit()


def _forced_libraries():
    libs = ["openblas"]
    if INFO["onednn"] is not None:
        libs.append("onednn")
    if INFO["mkl"] is not None:
        libs.append("mkl")
    return libs


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
    libs = _forced_libraries()
    if len(libs) < 2:
        pytest.skip("only OpenBLAS in this build and environment")
    outs = {}
    for lib in libs:
        path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"st_gemm_{lib}_{os.getpid()}.npy")
        env = dict(os.environ, SPIRALTORCH_GEMM_BACKEND=lib)
        subprocess.run([sys.executable, "-c", code, path], check=True, env=env)
        outs[lib] = np.load(path)
        os.remove(path)
    scale = np.abs(outs["openblas"]).max()
    for lib in libs[1:]:
        np.testing.assert_allclose(outs[lib], outs["openblas"], rtol=0, atol=2e-5 * scale, err_msg=lib)


@pytest.mark.skipif(INFO["mkl"] is None, reason="MKL is not installed (pip install mkl)")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_forced_mkl_matches_numpy(dtype):
    """SPIRALTORCH_GEMM_BACKEND=mkl sends float32 and float64 products (batched, broadcast, transposed
    views) through MKL, whose results match float64 NumPy."""
    code = (
        "import sys, numpy as np, spiraltorch as st\n"
        "assert st.describe_device('cpu')['gemm_backend'] == 'mkl'\n"
        "r = np.random.default_rng(2); dt = sys.argv[1]\n"
        "a = r.standard_normal((3, 96, 80)).astype(dt); b = r.standard_normal((80, 70)).astype(dt)\n"
        "c = r.standard_normal((3, 70, 50)).astype(dt)\n"
        "got1 = (st.tensor(a) @ st.tensor(b)).numpy()\n"
        "got2 = (st.tensor(a).transpose(-1, -2) @ st.tensor(a)).numpy()\n"
        "got3 = (st.tensor(a) @ st.tensor(b) @ st.tensor(c)).numpy()\n"
        "A, B, C = (x.astype(np.float64) for x in (a, b, c))\n"
        "tol = 1e-4 if dt == 'float32' else 1e-10\n"
        "np.testing.assert_allclose(got1, A @ B, rtol=0, atol=tol * 10)\n"
        "np.testing.assert_allclose(got2, np.swapaxes(A, -1, -2) @ A, rtol=0, atol=tol * 10)\n"
        "np.testing.assert_allclose(got3, A @ B @ C, rtol=0, atol=tol * 100)\n"
        "print('ok')\n")
    env = dict(os.environ, SPIRALTORCH_GEMM_BACKEND="mkl")
    r = subprocess.run([sys.executable, "-c", code, dtype], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


def test_bad_gemm_backend_environment_is_reported():
    env = dict(os.environ, SPIRALTORCH_GEMM_BACKEND="cublas")
    r = subprocess.run([sys.executable, "-c", "import spiraltorch as st\nst.ones(70, 70) @ st.ones(70, 70)"],
                       env=env, capture_output=True, text=True)
    assert r.returncode != 0
    assert "SPIRALTORCH_GEMM_BACKEND" in r.stderr and "cublas" in r.stderr and "'mkl'" in r.stderr


def test_missing_mkl_is_reported_when_forced(tmp_path):
    """SPIRALTORCH_MKL_LIBRARY names the only file tried: a missing one keeps MKL out (describe_device
    says why, "auto" never picks it), and forcing MKL then fails on the first product, naming the file."""
    missing = str(tmp_path / "libmkl_rt.so.3")
    env = dict(os.environ, SPIRALTORCH_MKL_LIBRARY=missing)
    code = ("import spiraltorch as st\nd = st.describe_device('cpu')\n"
            "assert d['mkl'] is None and 'mkl' not in d['gemm_dispatch'].values(), d\nprint(d['mkl_reason'])\n"
            "print((st.ones(300, 300) @ st.ones(300, 300)).sum().item())\n")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    reason, total = r.stdout.strip().splitlines()
    assert missing in reason and "(missing)" in reason and "pip install mkl" in reason
    assert float(total) == 300.0 ** 3
    env["SPIRALTORCH_GEMM_BACKEND"] = "mkl"
    r = subprocess.run([sys.executable, "-c", "import spiraltorch as st\nst.ones(70, 70) @ st.ones(70, 70)"],
                       env=env, capture_output=True, text=True)
    assert r.returncode != 0
    assert "MKL is not available" in r.stderr and missing in r.stderr
