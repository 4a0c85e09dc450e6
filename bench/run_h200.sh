#!/usr/bin/env bash
# The GPU evidence run: builds the CUDA module, runs every Python test file in its own
# process, then the CUDA benchmark and the per-kernel step profile. Writes
# cuda_h200_tests.md, cuda_h200.md and profile_*.txt into ${OUT:-bench/results}.
# Usage (on a CUDA machine, from the repository root): bash bench/run_h200.sh
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/bench/results}
BUILD=${BUILD:-/tmp/st-h200}
PY=$(command -v python3)
mkdir -p "$OUT"
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE="$PY" -DSPIRALTORCH_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRALTORCH_BUILD_PYTHON=ON -DSPIRALTORCH_BUILD_EXAMPLES=OFF \
  -DSPIRALTORCH_BUILD_TESTS=OFF > "$BUILD.cfg.log" 2>&1 || { tail -30 "$BUILD.cfg.log"; exit 1; }
ninja -C "$BUILD" _core > "$BUILD.log" 2>&1 || { grep -E "error|FAILED" "$BUILD.log" | head -30; exit 1; }
ln -sf "$BUILD/$(cd "$BUILD" && ls _core*.so)" "$ROOT/python/spiraltorch/"
export PYTHONPATH=$ROOT/python
cd "$ROOT/python"
# One pytest process for the whole suite (torch imports once); per-file counts from the junit report.
timeout 1200 "$PY" -m pytest "$ROOT/tests/python" -q -p no:cacheprovider -rf --junitxml="$OUT/junit.xml" \
  > "$OUT/pytest.log" 2>&1
{
  echo "# Test suite on $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader)"
  echo
  echo "$(date -u +%F), torch $($PY -c 'import torch; print(torch.__version__)'), $($PY --version)."
  echo "Command: \`bash bench/run_h200.sh\` (CUDA build, arch 90, the whole of tests/python in one process)."
  echo
  echo "Total: $(tail -1 "$OUT/pytest.log")"
  echo
  "$PY" - "$OUT/junit.xml" <<'PYEOF'
import collections, sys, xml.etree.ElementTree as ET
counts = collections.defaultdict(collections.Counter)
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    f = case.get("classname", "").split(".")[-1] + ".py"
    kind = "passed"
    for child in case:
        if child.tag in ("failure", "error"):
            kind = "failed"
        elif child.tag == "skipped":
            kind = "skipped"
    counts[f][kind] += 1
print("| file | passed | failed | skipped |")
print("|---|---:|---:|---:|")
for f in sorted(counts):
    c = counts[f]
    print(f"| {f} | {c['passed']} | {c['failed']} | {c['skipped']} |")
PYEOF
  echo
  echo "Failures (if any):"
  echo
  grep -E "^FAILED" "$OUT/pytest.log" | head -40 | sed 's/^/    /'
} > "$OUT/cuda_h200_tests.md"
cat "$OUT/cuda_h200_tests.md"
"$PY" "$ROOT/bench/bench_cuda.py" --out "$OUT/cuda_h200.md" > "$OUT/bench_cuda.log" 2>&1; tail -45 "$OUT/bench_cuda.log"
for m in encoder mlp; do
  "$PY" "$ROOT/bench/profile_cuda_step.py" --model $m --rows 12 2>&1 | grep -v -i warn > "$OUT/profile_$m.txt"
  grep "==" "$OUT/profile_$m.txt"
done
