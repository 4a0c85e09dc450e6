#!/usr/bin/env bash
# Builds the C++ library, its GoogleTest suite and the Python module under AddressSanitizer
# and UndefinedBehaviorSanitizer (gcc; CUDA off) in build/asan, then runs the C++ tests and
# the Python tests given as arguments (default: the hostile-input, IO, autograd and
# interop files) with the sanitizer runtimes preloaded into the interpreter.
#
#   scripts/sanitize.sh                         # the default selection
#   scripts/sanitize.sh tests/python            # the whole Python suite (slow)
#
# Needs the packages of requirements-test.txt (nanobind, numpy, pytest, ...) in the
# active environment. Any sanitizer report makes the run fail.
set -euo pipefail
cd "$(dirname "$0")/.."

build=build/asan
# -O0 -g1: the sanitizers' reports keep file:line, and the build (part of the test command in
# CI) compiles in 0.6x the time of -O1 (1542 vs 2497 CPU-seconds, measured on a cold tree) while the
# tests it runs take 2x as long (118 vs 60 s).
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -O0 -g1"
# The Python module's binding glue gets AddressSanitizer only: UBSan's checks nearly doubled its
# compile time (21 vs 12 s for python/src/ops.cpp) for code that only converts and forwards; the
# library it calls and the C++ tests keep both sanitizers.
module_flags="-fno-sanitize=undefined"
# The wgpu backend is left out here: wgpu-native and the Vulkan driver are not instrumented (and
# RTLD_DEEPBIND, which the backend uses to load Mesa's lavapipe, is refused under ASan); the normal
# test run covers it. MKL is not linked in: this build loads libmkl_rt at run time (when the
# environment has PyPI's mkl), so the sanitizers cover that path and the normal build the static one.
# The CPU kernels are built once (SPIRALTORCH_CPU_DISPATCH=OFF): the AVX2/AVX-512 tables compile the
# same sources with other -march flags (the normal run tests those), and they are the heaviest
# sources of the build: 32 of its 361 objects.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Sanitize -DSPIRALTORCH_CUDA=OFF -DSPIRALTORCH_SHARED=OFF -DSPIRALTORCH_WGPU=OFF -DSPIRALTORCH_MKL_STATIC=OFF \
  -DSPIRALTORCH_CPU_DISPATCH=OFF -DSPIRALTORCH_PYTHON_MODULE_FLAGS="$module_flags" \
  -DSPIRALTORCH_BUILD_PYTHON=ON -DSPIRALTORCH_BUILD_TESTS=ON -DSPIRALTORCH_BUILD_EXAMPLES=OFF \
  -Dnanobind_DIR="$(python -m nanobind --cmake_dir)" -DPython_EXECUTABLE="$(command -v python)" \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_MODULE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
ninja -C "$build" spiraltorch_tests _core

# allocator_may_return_null: the tests ask for impossible allocations on purpose and
# expect OutOfMemoryError; leak checking is off because CPython itself does not free
# everything at exit.
export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=0:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
"$build"/spiraltorch_tests

# The Python package from the source tree, with the sanitized module next to it.
pkg="$build/py"
rm -rf "$pkg" && mkdir -p "$pkg"
cp -r python/spiraltorch "$pkg"/
rm -f "$pkg"/spiraltorch/_core*.so
cp "$build"/_core*.so "$pkg"/spiraltorch/
if [ $# -eq 0 ]; then
  set -- tests/python/test_hostile_inputs.py tests/python/test_io.py tests/python/test_autograd.py \
    tests/python/test_interop.py tests/python/test_errors.py tests/python/test_amp.py
fi
# SPIRALTORCH_TEST_PYDIR makes conftest.py import this copy instead of python/.
LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)" \
  SPIRALTORCH_TEST_PYDIR="$pkg" PYTHONPATH="$pkg" python -m pytest -q -p no:cacheprovider "$@"
