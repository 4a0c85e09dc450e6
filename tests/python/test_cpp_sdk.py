"""The C++ SDK as a user meets it: a CMake project outside the source tree finds SpiralTorch
(find_package(SpiralTorch CONFIG)) in (a) an install prefix made by ``cmake --install`` and (b) the
installed wheel (``python -m spiraltorch --cmake-dir``), builds examples/cpp/*.cpp there and runs them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from spiraltorch import _sdk

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("SPIRALTORCH_BUILD_DIR", os.path.join(ROOT, "build", "test"))
FASHION = "/usr/share/datasets/fashion-mnist"


def _cmake() -> str:
    found = shutil.which("cmake")
    if not found:
        pytest.skip("cmake is not installed")
    return found


def _consumer(tmp_path, **defines: str) -> str:
    """Configures and builds tests/sdk with the examples copied beside it; returns the build dir."""
    src = tmp_path / "app"
    src.mkdir()
    shutil.copy(os.path.join(ROOT, "tests", "sdk", "CMakeLists.txt"), src)
    for name in sorted(os.listdir(os.path.join(ROOT, "examples", "cpp"))):
        if name.endswith(".cpp"):
            shutil.copy(os.path.join(ROOT, "examples", "cpp", name), src)
    build = tmp_path / "build"
    args = [_cmake(), "-S", str(src), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release"]
    if shutil.which("ninja"):
        args += ["-G", "Ninja"]
    args += [f"-D{k}={v}" for k, v in defines.items()]
    configured = subprocess.run(args, capture_output=True, text=True)
    assert configured.returncode == 0, configured.stdout + configured.stderr
    assert "SpiralTorch 0.1.0" in configured.stdout
    built = subprocess.run([_cmake(), "--build", str(build), "-j2"], capture_output=True, text=True)
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    return str(build)


def _run_examples(build: str, tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}  # the rpath must suffice
    mlp = subprocess.run([os.path.join(build, "mlp")], capture_output=True, text=True, env=env, timeout=300)
    assert mlp.returncode == 0, mlp.stderr
    zspace = subprocess.run([os.path.join(build, "zspace")], capture_output=True, text=True, env=env, timeout=300)
    assert zspace.returncode == 0 and "0.271848" in zspace.stdout, zspace.stdout + zspace.stderr
    canvas = subprocess.run([os.path.join(build, "canvas"), str(tmp_path)], capture_output=True, text=True, env=env,
                            timeout=300)
    assert canvas.returncode == 0, canvas.stderr
    fashion = os.path.join(build, "fashion_cnn")
    if os.path.exists(fashion) and os.path.isdir(FASHION):
        run = subprocess.run([fashion, "--epochs", "1", "--limit", "1000", "--checkpoint", str(tmp_path / "c.st")],
                             capture_output=True, text=True, env=env, timeout=600)
        assert run.returncode == 0 and "final test accuracy" in run.stdout, run.stdout[-2000:] + run.stderr[-2000:]


def test_a_cmake_project_builds_against_an_install_prefix(tmp_path):
    if not os.path.isfile(os.path.join(BUILD, "CMakeCache.txt")):
        pytest.skip(f"no build tree at {BUILD} (set SPIRALTORCH_BUILD_DIR)")
    prefix = tmp_path / "prefix"
    for component in ("sdk", "sdk-deps"):
        done = subprocess.run([_cmake(), "--install", BUILD, "--prefix", str(prefix), "--component", component],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    assert (prefix / "lib" / "libspiraltorch.so").exists()
    assert (prefix / "include" / "spiraltorch" / "spiraltorch.h").exists()
    assert (prefix / "lib" / "cmake" / "SpiralTorch" / "SpiralTorchConfig.cmake").exists()
    # Only the library's own symbols are exported, not MKL's (linked in) or the C++ runtime's.
    nm = shutil.which("nm")
    if nm:
        symbols = subprocess.run([nm, "-D", "--defined-only", str(prefix / "lib" / "libspiraltorch.so")],
                                 capture_output=True, text=True).stdout
        names = [line.split()[-1] for line in symbols.splitlines() if line.strip()]
        assert not [n for n in names if n.lower().startswith(("mkl_", "mkl_blas", "dnnl_"))]
        assert any(n.startswith("_ZN2st") for n in names)
    build = _consumer(tmp_path, CMAKE_PREFIX_PATH=str(prefix))
    _run_examples(build, tmp_path)


def test_a_cmake_project_builds_against_the_installed_wheel(tmp_path):
    try:
        cmake_dir = _sdk.cmake_dir()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    out = subprocess.run([sys.executable, "-m", "spiraltorch", "--cmake-dir"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == cmake_dir
    from spiraltorch.utils import cmake_prefix_path
    assert os.path.isdir(os.path.join(cmake_prefix_path, "lib", "cmake", "SpiralTorch"))
    build = _consumer(tmp_path, SpiralTorch_DIR=cmake_dir)
    _run_examples(build, tmp_path)


def test_the_cmake_dir_command_fails_clearly_without_an_sdk(tmp_path, monkeypatch):
    monkeypatch.setattr(_sdk, "_PACKAGE", str(tmp_path))
    from spiraltorch.__main__ import main

    assert main(["--cmake-dir"]) == 1
    with pytest.raises(FileNotFoundError, match="no SpiralTorchConfig.cmake"):
        _sdk.cmake_dir()
