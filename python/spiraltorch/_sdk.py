"""Where the C++ SDK of this installation lives (headers, libspiraltorch.so, SpiralTorchConfig.cmake)."""

from __future__ import annotations

import os

_PACKAGE = os.path.dirname(os.path.abspath(__file__))

# The CMake prefix inside the installed package, as torch.utils.cmake_prefix_path is for libtorch:
# find_package(SpiralTorch) with CMAKE_PREFIX_PATH set to it finds lib/cmake/SpiralTorch.
cmake_prefix_path = _PACKAGE


def cmake_dir() -> str:
    """The directory holding SpiralTorchConfig.cmake (pass it as -DSpiralTorch_DIR=...). Raises
    FileNotFoundError in a source tree or a build without the SDK (SPIRALTORCH_SHARED=OFF)."""
    path = os.path.join(_PACKAGE, "lib", "cmake", "SpiralTorch")
    if not os.path.isfile(os.path.join(path, "SpiralTorchConfig.cmake")):
        raise FileNotFoundError(
            f"no SpiralTorchConfig.cmake under {path}: the C++ SDK comes with an installed wheel "
            "(pip install .), not with a source tree")
    return path


def include_dir() -> str:
    """The directory holding the C++ headers (spiraltorch/spiraltorch.h and the rest)."""
    return os.path.join(os.path.dirname(cmake_dir()), "..", "..", "include")
