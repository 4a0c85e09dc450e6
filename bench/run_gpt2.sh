#!/usr/bin/env bash
# The GPT-2 evidence run on a CUDA machine (from the repository root): builds the CUDA module into
# build/cuda-gpt2 (incremental when that folder is already there), runs the capture tests, then
# bench/bench_gpt2.py. Stages: build, test, bench, profile (default: all). Logs and results go to
# ${OUT:-bench/results}.
# Usage: bash bench/run_gpt2.sh [build] [test] [bench] [profile]   (BENCH_ARGS passes options to the bench)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/bench/results}
BUILD=${BUILD:-$ROOT/build/cuda-gpt2}
PY=$(command -v python3)
STAGES=${*:-build test bench profile}
mkdir -p "$OUT"
# A build against scipy's bundled OpenBLAS (DEPS below) loads it from scipy.libs at run time; the
# in-place module's rpath does not name that folder. cuDNN attention needs cudnn-frontend's headers at
# build time: pip install --no-deps nvidia-cudnn-frontend, or CUDNN_FRONTEND_ROOT (a carried copy).
scipy_libs=$("$PY" -c 'import os, scipy; print(os.path.join(os.path.dirname(scipy.__file__), "..", "scipy.libs"))' \
  2>/dev/null || true)
[ -n "$scipy_libs" ] && [ -d "$scipy_libs" ] && export LD_LIBRARY_PATH="$scipy_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
slug=$(echo "$card" | grep -o -i -E 'h100|h200|a100|l40s|b200' | head -1 | tr 'A-Z' 'a-z')
echo "card: $card ($(nvidia-smi --query-gpu=memory.total,driver_version --format=csv,noheader | head -1))"
for stage in $STAGES; do
  t0=$(date +%s)
  case $stage in
    build)
      # DEPS (optional): headers carried for a machine without the PyPI packages: DEPS/openblas/include
      # (scipy-openblas32's, the library then being scipy's bundled copy) and DEPS/json/include.
      extra=()
      if [ -n "${DEPS:-}" ]; then
        blas_lib=$(ls "$("$PY" -c 'import scipy, os; print(os.path.dirname(scipy.__file__))')"/../scipy.libs/libscipy_openblas*.so | head -1)
        mkdir -p "$DEPS/openblas/lib" && ln -sf "$blas_lib" "$DEPS/openblas/lib/libscipy_openblas.so"
        extra=(-DSPIRALTORCH_BLAS_DIR="$DEPS/openblas/lib" -DSPIRALTORCH_BLAS_INCLUDE="$DEPS/openblas/include"
               -DNLOHMANN_JSON_INCLUDE_DIR="$DEPS/json/include")
      fi
      if [ ! -f "$BUILD/build.ninja" ]; then
        cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE="$PY" \
          -DSPIRALTORCH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRALTORCH_BUILD_PYTHON=ON \
          -DSPIRALTORCH_BUILD_EXAMPLES=OFF -DSPIRALTORCH_BUILD_TESTS=OFF "${extra[@]}" > "$OUT/cmake.log" 2>&1 \
          || { tail -30 "$OUT/cmake.log"; exit 1; }
      fi
      ninja -C "$BUILD" _core > "$OUT/ninja.log" 2>&1 || { grep -E -A3 "error|FAILED" "$OUT/ninja.log" | head -60; exit 1; }
      ;;
    test)
      ln -sf "$BUILD/$(cd "$BUILD" && ls _core*.so)" "$ROOT/python/spiraltorch/"
      (cd "$ROOT/python" && PYTHONPATH=$ROOT/python timeout 300 "$PY" -m pytest -q -p no:cacheprovider \
        "$ROOT/tests/python/test_optim_capturable.py" "$ROOT/tests/python/test_cuda_graphs.py" \
        "$ROOT/tests/python/test_feed_forward.py" "$ROOT/tests/python/test_add_layer_norm.py" \
        "$ROOT/tests/python/test_linear_epilogue.py" 2>&1 | tail -15)
      ;;
    bench)
      ln -sf "$BUILD/$(cd "$BUILD" && ls _core*.so)" "$ROOT/python/spiraltorch/"
      PYTHONPATH=$ROOT/python PYTHONUNBUFFERED=1 "$PY" "$ROOT/bench/bench_gpt2.py" ${BENCH_ARGS:-} \
        --out "$OUT/gpt2_${slug:-gpu}.md" 2>&1 | grep -v -i "warn" | tee "$OUT/bench_gpt2.log" | tail -40
      ;;
    profile)
      ln -sf "$BUILD/$(cd "$BUILD" && ls _core*.so)" "$ROOT/python/spiraltorch/"
      PYTHONPATH=$ROOT/python PYTHONUNBUFFERED=1 "$PY" "$ROOT/bench/bench_gpt2.py" --modes bf16 --no-compile \
        --reps 2 --rounds 1 --profile 15 2>&1 | grep -v -i "warn" > "$OUT/profile_gpt2.txt"
      grep -E "==|ms " "$OUT/profile_gpt2.txt" | head -80
      ;;
  esac
  echo "stage $stage: $(( $(date +%s) - t0 )) s"
done
