#!/usr/bin/env bash
# The CPU evidence run of issue #20 on any x86 host (the GPU machine's Xeon included): a CPU-only
# build with oneDNN, then the GEMM dispatch table, the GEMMs and whole training steps against
# PyTorch, both libraries pinned to the same 2 cores with 2 threads. Writes gemm_dispatch.txt,
# gemm_vs_torch.md and cpu_models.md into ${OUT:-/tmp/st-cpu-results}.
# WHEELS=<dir>: install the wheels there (oneDNN, OpenBLAS, nlohmann-json) offline into a prefix
# first, for machines without PyPI; torch, nanobind, cmake and ninja must be importable already.
# Usage (from the repository root): bash bench/run_cpu_pinned.sh
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/tmp/st-cpu-results}
BUILD=${BUILD:-/tmp/st-cpu-build}
CORES=${CORES:-0,1}
PY=$(command -v python3)
mkdir -p "$OUT"
if [ -n "${WHEELS:-}" ]; then
  "$PY" -m venv --without-pip --system-site-packages /tmp/st-wheels
  /tmp/st-wheels/bin/python -m pip install -q --no-deps --no-index "$WHEELS"/*.whl
  export PYTHONPATH=$(/tmp/st-wheels/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
fi
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE="$PY" -DSPIRALTORCH_CUDA=OFF \
  -DSPIRALTORCH_WGPU=OFF -DSPIRALTORCH_BUILD_PYTHON=ON -DSPIRALTORCH_BUILD_TESTS=OFF -DSPIRALTORCH_BUILD_BENCH=ON \
  > "$BUILD.cfg.log" 2>&1 || { tail -30 "$BUILD.cfg.log"; exit 1; }
grep "oneDNN" "$BUILD.cfg.log" | head -2
ninja -C "$BUILD" _core bench_gemm_dispatch > "$BUILD.log" 2>&1 || { grep -E "error|FAILED" "$BUILD.log" | head -30; exit 1; }
ln -sf "$BUILD/$(cd "$BUILD" && ls _core*.so)" "$ROOT/python/spiraltorch/"
export PYTHONPATH=$ROOT/python${PYTHONPATH:+:$PYTHONPATH}
lscpu | grep -E "Model name|Flags" | cut -c1-160
OMP_NUM_THREADS=2 taskset -c "$CORES" "$BUILD/bench_gemm_dispatch" > "$OUT/gemm_dispatch.txt" 2>&1
taskset -c "$CORES" "$PY" "$ROOT/bench/bench_cpu.py" --only matmul --only linear --threads 2 > "$OUT/gemm_vs_torch.md" 2>&1
taskset -c "$CORES" "$PY" "$ROOT/bench/bench_cpu_models.py" --threads 2 --out "$OUT/cpu_models.md" > "$OUT/cpu_models.log" 2>&1
tail -4 "$OUT/cpu_models.log"
grep -E "^\| (fwd|dgrad|wgrad|[0-9])" "$OUT/gemm_vs_torch.md"
