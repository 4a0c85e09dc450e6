"""The native module's dependencies found through their pip packages when its rpath cannot reach them
(python/spiraltorch/_native_deps.py)."""
import os
import shutil
import subprocess
import sys

import pytest

import spiraltorch
from spiraltorch import _native_deps


def test_library_path_finds_openblas_in_its_distribution():
    path = _native_deps.library_path("scipy-openblas32", "libscipy_openblas.so")
    assert path is not None and os.path.isfile(path) and path.endswith("libscipy_openblas.so")
    assert _native_deps.library_path("scipy-openblas32", "no-such-library.so") is None
    assert _native_deps.library_path("no-such-distribution-xyz", "libscipy_openblas.so") is None


def test_preload_loads_installed_libraries_by_path():
    loaded = _native_deps.preload()
    assert any(p.endswith("libscipy_openblas.so") for p in loaded)
    assert all(os.path.isabs(p) for p in loaded)


def test_package_moved_away_from_its_dependencies_still_imports(tmp_path):
    # A copy of the package in a folder of its own: its relative rpaths ($ORIGIN/../scipy_openblas32/lib,
    # ...) point at nothing there, as in a venv whose dependencies live in the system site-packages.
    package = os.path.dirname(spiraltorch.__file__)
    shutil.copytree(package, tmp_path / "spiraltorch", symlinks=False,
                    ignore=shutil.ignore_patterns("__pycache__"))
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import spiraltorch as st; "
            "print(float((st.ones(3) @ st.ones(3)).item())); "
            "print('spiraltorch._native_deps' in sys.modules)")
    env = dict(os.environ, PYTHONPATH="")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    value, used_fallback = out.stdout.split()
    assert float(value) == 3.0
    runpath = subprocess.run(["readelf", "-d", spiraltorch._core.__file__], capture_output=True, text=True).stdout
    if "$ORIGIN/../scipy_openblas32" not in runpath:
        pytest.skip("this build's rpath is absolute (a development tree): the copy finds its libraries without the fallback")
    assert used_fallback == "True"
