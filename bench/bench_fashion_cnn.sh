#!/usr/bin/env bash
# The Fashion-MNIST CNN from C++: SpiralTorch's examples/cpp/fashion_cnn.cpp against its libtorch twin
# bench/fashion_cnn_libtorch.cpp (same model, hyper-parameters and schedule), both on the same number of
# threads. Builds both, then
#   1. RUNS full runs of each program (EPOCHS epochs each, alternating): test accuracy and seconds per epoch;
#   2. TRIALS short runs of each (one epoch on the first LIMIT training images, alternating): the best
#      seconds per training step, which a machine shared with other work disturbs far less than whole epochs;
# and writes bench/results/fashion_cnn_cpp.md (CPU, both timings, ratios, accuracy, lines of code).
#
#   bench/bench_fashion_cnn.sh [EPOCHS=3] [RUNS=1] [TRIALS=6] [LIMIT=12800]
#
# Env: BUILD_DIR  SpiralTorch build tree configured with SPIRALTORCH_BUILD_EXAMPLES=ON (build/test)
#      THREADS    OMP_NUM_THREADS for both programs (2)
#      PYTHON     the interpreter whose torch wheel provides libtorch (.venv/bin/python, else python3)
#      FASHION_MNIST  Debian's dataset-fashion-mnist directory (/usr/share/datasets/fashion-mnist)
#      BUILD_LOCK a file to flock around the SpiralTorch build (for build trees shared with others)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
epochs=${1:-3}
runs=${2:-1}
trials=${3:-6}
limit=${4:-12800}
threads=${THREADS:-2}
build=${BUILD_DIR:-build/test}
data=${FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
python=${PYTHON:-}
if [ -z "$python" ]; then
  if [ -x .venv/bin/python ]; then python=.venv/bin/python; else python=python3; fi
fi
out=bench/results/fashion_cnn_cpp.md
work=build/fashion_cnn_bench
mkdir -p "$work" bench/results

# SpiralTorch's example (the library and its CMake options as configured in $build).
if [ -n "${BUILD_LOCK:-}" ]; then
  flock "$BUILD_LOCK" cmake --build "$build" --target example_fashion_cnn
else
  cmake --build "$build" --target example_fashion_cnn
fi
# The libtorch twin, against the libtorch inside the torch wheel.
prefix=$("$python" -c 'import torch; print(torch.utils.cmake_prefix_path)')
torch_version=$("$python" -c 'import torch; print(torch.__version__)')
cmake -S bench/libtorch -B build/libtorch -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" > /dev/null
cmake --build build/libtorch
# libtorch's MNIST dataset reads uncompressed IDX files only.
mkdir -p "$work/raw"
for f in "$data"/*-ubyte.gz; do
  raw="$work/raw/$(basename "$f" .gz)"
  [ -f "$raw" ] || gunzip -c "$f" > "$raw"
done

st_run() { OMP_NUM_THREADS=$threads "$build/example_fashion_cnn" --data "$data" --checkpoint "$work/st.safetensors" "$@"; }
lt_run() { OMP_NUM_THREADS=$threads build/libtorch/fashion_cnn_libtorch --data "$work/raw" --checkpoint "$work/lt.pt" "$@"; }
rm -f "$work"/st_*.log "$work"/lt_*.log
for run in $(seq 1 "$runs"); do
  rm -f "$work/st.safetensors" "$work/lt.pt"
  echo "== full run $run: SpiralTorch"
  st_run --epochs "$epochs" | tee "$work/st_full_$run.log"
  echo "== full run $run: libtorch"
  lt_run --epochs "$epochs" | tee "$work/lt_full_$run.log"
done
for trial in $(seq 1 "$trials"); do
  rm -f "$work/st.safetensors" "$work/lt.pt"
  echo "== trial $trial ($limit images): SpiralTorch"
  st_run --epochs 1 --limit "$limit" | tee "$work/st_trial_$trial.log"
  echo "== trial $trial ($limit images): libtorch"
  lt_run --epochs 1 --limit "$limit" | tee "$work/lt_trial_$trial.log"
done

"$python" - "$work" "$runs" "$epochs" "$trials" "$limit" "$threads" "$torch_version" "$out" <<'PY'
import datetime, glob, math, platform, re, subprocess, sys

work, runs, epochs, trials, limit, threads, torch_version, out = sys.argv[1:]
runs, epochs, trials, limit = int(runs), int(epochs), int(trials), int(limit)
batch, train_images = 64, 60000
steps_per_epoch = math.ceil(train_images / batch)

def parse(path):
    text = open(path).read()
    times = [float(t) for t in re.findall(r"train ([0-9.]+) s", text)]
    acc = float(re.search(r"final test accuracy ([0-9.]+)", text).group(1))
    return times, acc

def loc(path):
    n, block = 0, False
    for line in open(path):
        s = line.strip()
        if block:
            block = "*/" not in s
        elif s.startswith("/*"):
            block = "*/" not in s
        elif s and not s.startswith("//"):
            n += 1
    return n

def cpu():
    for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
        if line.startswith("Model name:"):
            return line.split(":", 1)[1].strip()
    return platform.processor()

fmt = lambda xs: ", ".join(f"{x:.2f}" for x in xs)
res = {}
for lib in ("st", "lt"):
    full = [parse(f"{work}/{lib}_full_{r}.log") for r in range(1, runs + 1)]
    best = min(full, key=lambda r: sum(r[0]) / len(r[0]))
    step = [parse(f"{work}/{lib}_trial_{t}.log")[0][0] / math.ceil(limit / batch) for t in range(1, trials + 1)]
    res[lib] = dict(epoch=sum(best[0]) / len(best[0]), epochs=best[0], acc=best[1],
                    runs=[sum(r[0]) / len(r[0]) for r in full], step=min(step), steps=step)
st, lt = res["st"], res["lt"]
st_loc, lt_loc = loc("examples/cpp/fashion_cnn.cpp"), loc("bench/fashion_cnn_libtorch.cpp")
table = f"""| program | s / epoch, full run{'s (best)' if runs > 1 else ''} | s / epoch from the best step of {trials} short runs | final test accuracy ({epochs} epochs) | lines of code |
|---|---:|---:|---:|---:|
| SpiralTorch `examples/cpp/fashion_cnn.cpp` | {st['epoch']:.2f} | {st['step'] * steps_per_epoch:.2f} ({st['step'] * 1e3:.1f} ms / step) | {st['acc']:.4f} | {st_loc} |
| libtorch {torch_version} `bench/fashion_cnn_libtorch.cpp` | {lt['epoch']:.2f} | {lt['step'] * steps_per_epoch:.2f} ({lt['step'] * 1e3:.1f} ms / step) | {lt['acc']:.4f} | {lt_loc} |
| **ours / libtorch** | **{st['epoch'] / lt['epoch']:.2f}** | **{st['step'] / lt['step']:.2f}** | | {st_loc / lt_loc:.2f} |
"""
load = open("/proc/loadavg").read().split()[:3]
with open(out, "w") as f:
    f.write(f"""# Fashion-MNIST CNN from C++: SpiralTorch vs libtorch

CPU: {cpu()} ({platform.machine()}), {threads} threads (OMP_NUM_THREADS) for both; libtorch from the torch
{torch_version} wheel; {datetime.date.today()}; load average at the end {' '.join(load)}.
Command: `bench/bench_fashion_cnn.sh {epochs} {runs} {trials} {limit}`.
Both programs: conv 1->32 3x3, ReLU, max-pool, conv 32->64 3x3, ReLU, max-pool, linear 3136->128, ReLU,
linear 128->10; batch 64, Adam lr 1e-3, lr / 10 after two epochs; the test set evaluated and a checkpoint
written after every epoch (not timed). Seconds per epoch: the training loop alone ({steps_per_epoch} steps),
mean over the epochs of a full run; and {steps_per_epoch} x the best seconds per step of {trials} short runs
(one epoch on {limit} images, {math.ceil(limit / batch)} steps, the two programs alternating), the figure
least disturbed by other work on the machine. Lines of code: non-blank, non-comment lines.

{table}
Full runs, seconds per epoch: SpiralTorch {fmt(st['epochs'])} (runs: {fmt(st['runs'])}); libtorch {fmt(lt['epochs'])}
(runs: {fmt(lt['runs'])}). Short runs, ms per step: SpiralTorch {fmt([x * 1e3 for x in st['steps']])};
libtorch {fmt([x * 1e3 for x in lt['steps']])}.
""")
print(table)
PY
echo "wrote $out"
