#!/usr/bin/env bash
# Repairs a freshly built wheel to the manylinux_2_28 tag with auditwheel and prints its path:
#
#   scripts/repair_wheel.sh <wheel> <out-dir>
#
# Fails when a binary in the wheel needs more than glibc 2.28 (cmake/SpiralManylinux.cmake is what
# keeps them below it) or a system library outside the manylinux_2_28 policy.
# The wheel's native libraries depend on OpenBLAS, oneDNN, Open MPI (and for CUDA cuDNN/NCCL/cuBLAS)
# through the pip packages it requires, so auditwheel leaves those out (--exclude) instead of copying
# them in; and GNU OpenMP, which oneDNN's wheel also takes from the system: a grafted private copy would
# give the process two OpenMP runtimes, and auditwheel rewrites the rpaths of what it grafts for,
# losing the pip packages' paths.
set -euo pipefail
wheel="$1"
out="$2"
excludes=(libgomp.so.1 libscipy_openblas.so libdnnl.so.3 libmpi.so.40 libopen-pal.so.80 libpmix.so.2 libhwloc.so.15
          libcudart.so.12 libcudart.so.13 libcublas.so.12 libcublas.so.13 libcublasLt.so.12 libcublasLt.so.13
          libcudnn.so.9 libnccl.so.2 libcuda.so.1)
mkdir -p "$out"
before=$(ls "$out")
auditwheel repair "${excludes[@]/#/--exclude=}" --plat manylinux_2_28_x86_64 -w "$out" "$wheel" >&2
repaired=$(comm -13 <(echo "$before") <(ls "$out") | grep '\.whl$' | head -1)
[ -n "$repaired" ] || repaired=$(ls -t "$out"/*manylinux_2_28*.whl | head -1 | xargs basename)
echo "$out/$repaired"
