"""Layering rule of ARCHITECTURE.md ("One way for each thing"): device-specific code lives only in
src/backend/. Outside it, no file carries an OpenMP pragma (CPU kernels belong in src/backend/cpu;
host-side loops use st::parallel_for from spiraltorch/threads.h) and no file branches on the device
(`DeviceType::` comparisons, `device() == Device{}`, `.is_cpu()`): ops call the backend's kernel
table instead. The allowlist below names every file that still does, each with its reason; entries
marked TEMPORARY are known debts (issue 37), not exemptions. A stale entry fails too, so the list
only shrinks."""
from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
SRC = ROOT / "src"

OMP = re.compile(r"^\s*#\s*pragma\s+omp\b")
# A device branch: a DeviceType enumerator, or a comparison against a default-constructed (CPU)
# Device, or an is_cpu()/is_cuda()-style predicate.
DEVICE_BRANCH = re.compile(r"\bDeviceType::|[!=]=\s*Device\s*(\{\}|\(\))|\.is_(cpu|cuda|wgpu)\s*\(")

# path (relative to src/) -> reason. One line each.
ALLOWED_DEVICE_BRANCHES = {
    "core/device.cpp": "defines Device: parsing and printing device names",
    "core/storage.cpp": "allocation per device (the allocator picks the device's memory)",
    "core/tensor.cpp": "Tensor::to() and item() move bytes between host and device memory",
    "core/autocast.cpp": "autocast keeps one state and one lower-precision dtype per device type",
    "ops/device.cpp": "to_device: picks the side (source or destination) that runs the copy",
    "io/common.cpp": "serialization reads device tensors back to the host before writing bytes",
    "canvas/image_io.cpp": "image files are written from host memory: device tensors are copied back",
    "vision/stream.cpp": "frames are decoded on the host: device tensors are copied back first",
    "data/dataset.cpp": "host datasets are made contiguous in host memory for the loader's row copies",
    "data/loader.cpp": "host-to-device batch transfer: pinned staging and the CUDA copy stream",
    "runtime/distributed.cpp": "process groups pick NCCL for CUDA tensors and MPI/gloo for host tensors",
    "runtime/distributed_nccl.cpp": "the NCCL process group allocates its scratch on its CUDA device",
    "runtime/rank_execute.cpp": "the planner's CPU execution of a plan refuses device tensors by design",
    "train/module_trainer.cpp": "the trainer's device option names a device (\"wgpu\" -> Device(WGPU))",
    "ops/known_range.cpp": "copy plumbing: remembers the value range of index tensors copied host->device",
}
ALLOWED_OMP = {
    "rec/matrix_factorization.cpp": "SIMD hints (omp simd) of the SGD step's float dot products; its threads use parallel_for",
}


def _sources():
    for path in sorted(SRC.rglob("*")):
        if path.suffix not in {".cpp", ".h", ".cu", ".cuh", ".hpp"}:
            continue
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith("backend/"):
            continue
        yield rel, path.read_text(encoding="utf-8", errors="replace").splitlines()


def _code(line):
    """The line without a trailing // comment (comments may name the rule)."""
    return line.split("//", 1)[0]


def _offenders(pattern):
    found = {}
    for rel, lines in _sources():
        hits = [f"{i}: {line.strip()}" for i, line in enumerate(lines, 1) if pattern.search(_code(line))]
        if hits:
            found[rel] = hits
    return found


def _check(pattern, allowed, what):
    found = _offenders(pattern)
    unexpected = {rel: hits for rel, hits in found.items() if rel not in allowed}
    stale = sorted(rel for rel in allowed if rel not in found)
    message = []
    for rel, hits in unexpected.items():
        message.append(f"src/{rel} has {what} outside src/backend:\n  " + "\n  ".join(hits[:5]))
    for rel in stale:
        message.append(f"src/{rel} is allowlisted for {what} but has none: remove the entry")
    assert not message, "\n".join(message)


def test_no_openmp_outside_the_backend():
    _check(OMP, ALLOWED_OMP, "an OpenMP pragma")


def test_no_device_branches_outside_the_backend():
    _check(DEVICE_BRANCH, ALLOWED_DEVICE_BRANCHES, "a device branch")


def test_allowlists_give_a_reason_per_entry():
    for table in (ALLOWED_DEVICE_BRANCHES, ALLOWED_OMP):
        for rel, reason in table.items():
            assert (SRC / rel).is_file(), f"allowlisted src/{rel} does not exist"
            assert reason.strip() and "\n" not in reason, f"src/{rel} needs a one-line reason"


def test_the_scanner_sees_what_it_forbids():
    """The patterns catch the forms this codebase uses to compare devices."""
    for line in ("#pragma omp parallel for", "  #  pragma omp simd",
                 "if (t.device().type != DeviceType::CPU) {", "return device == Device{} ? a : b;",
                 "if (x.device() != Device()) return;", "if (t.device().is_cpu()) {"):
        assert OMP.search(_code(line)) or DEVICE_BRANCH.search(_code(line)), line
    assert not DEVICE_BRANCH.search(_code("x = 1;  // never compare with DeviceType::CPU here"))
