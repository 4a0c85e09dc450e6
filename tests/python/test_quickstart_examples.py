"""The seed's example scripts (examples/*.py) run from the repository with a small budget and
produce what they say: files that parse, finite metrics that move."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

from conftest import PY_DIR

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_example(name: str, *args: str, cwd: str | None = None) -> str:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PY_DIR, env.get("PYTHONPATH", "")) if p)
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "examples", name), *args], capture_output=True,
                          text=True, timeout=120, env=env, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def floats(text: str) -> list[float]:
    return [float(v) for v in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", text)]


def test_hello_session(tmp_path):
    out = run_example("hello_session.py", cwd=str(tmp_path))
    lines = out.splitlines()
    z = floats(lines[0])
    assert len(z) > 8 and any(v != 0 for v in z) and all(abs(v) < 1 for v in z)
    assert "barycenter density:" in lines[1]
    before, after = floats(lines[2].split("loss ")[1])
    assert "4 batches" in lines[2] and after < before


def test_canvas_projector_quickstart_writes_the_canvas(tmp_path):
    out = run_example("canvas_projector_quickstart.py", str(tmp_path))
    assert "surface: (96, 128, 4)" in out
    assert "fft power spectrum: (96, 65)" in out
    data = (tmp_path / "spiraltorch_canvas.ppm").read_bytes()
    header = b"P6\n128 96\n255\n"
    assert data.startswith(header) and len(data) == len(header) + 96 * 128 * 3
    rgb = np.frombuffer(data[len(header):], dtype=np.uint8).reshape(96, 128, 3)
    # Heat map of rings: the centre is hot (white), the corners cold (black).
    assert rgb[48, 64].tolist() == [255, 255, 255]
    assert rgb[0, 0, 0] < 16 and rgb[0, 0, 1:].tolist() == [0, 0]
    assert (tmp_path / "spiraltorch_canvas.png").read_bytes().startswith(b"\x89PNG")


def test_canvas_quickstart_defaults_to_the_env_dir(tmp_path):
    env_dir = tmp_path / "out"
    os.environ["SPIRALTORCH_EXAMPLE_OUT"] = str(env_dir)
    try:
        run_example("canvas_projector_quickstart.py", cwd=str(tmp_path))
    finally:
        del os.environ["SPIRALTORCH_EXAMPLE_OUT"]
    assert (env_dir / "spiraltorch_canvas.ppm").exists()


def test_atlas_quickstart():
    out = run_example("atlas_quickstart.py")
    assert "summary: 2 frames" in out
    assert "Concourse district is rising" in out and "psi.total (+0.500)" in out


def test_zspace_optim_quickstart():
    out = run_example("zspace_optim_quickstart.py")
    weights = floats(out.splitlines()[0])
    assert len(weights) == 3 and weights != [0.2, -0.1, 0.05]
    z_line = out.splitlines()[1]
    assert z_line.startswith("z:") and math_finite(floats(z_line))


def math_finite(values: list[float]) -> bool:
    return bool(values) and all(np.isfinite(values))


def test_text_optim_zspace_quickstart():
    out = run_example("text_optim_zspace_quickstart.py")
    head = floats(out.splitlines()[0])
    assert len(head) == 5 and any(v != 0 for v in head)
    z = floats(out.splitlines()[1])
    assert len(z) == 4 and any(v != 0 for v in z)


def test_zspace_inference_quickstart():
    out = run_example("zspace_inference_quickstart.py")
    residual, confidence = floats(out.splitlines()[1])
    assert residual > 0 and 0 < confidence <= 1


def test_amegagrad_session_quickstart_writes_a_trace(tmp_path):
    out = run_example("amegagrad_session_quickstart.py", str(tmp_path), "12")
    m = re.search(r"trace: 12 steps from \['AmegagradSession'\], loss (\S+) -> (\S+)", out)
    assert m and float(m.group(2)) < float(m.group(1))
    assert "atlas: 12 frames" in out
    assert len((tmp_path / "amegagrad_session_trace.jsonl").read_text().splitlines()) == 13


def test_canvas_atlas_session_quickstart_closes_the_loop(tmp_path):
    out = run_example("canvas_atlas_session_quickstart.py", str(tmp_path), "4")
    rounds = [line for line in out.splitlines() if line.startswith("round ")]
    assert len(rounds) == 4
    energies = [floats(line.split("canvas energy ")[1])[0] for line in rounds]
    assert all(np.isfinite(energies)) and len(set(energies)) > 1  # the loop changes what is rendered
    # 1 text step + 4 loopback steps from the session, 4 canvas frames.
    assert "route: 9 frames" in out and "'Surface'" in out
    png = (tmp_path / "spiraltorch_canvas_loop.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")


def test_cpp_canvas_example_when_built(tmp_path):
    exe = next((os.path.join(ROOT, "build", d, "example_canvas") for d in sorted(os.listdir(os.path.join(ROOT, "build")))
                if os.path.exists(os.path.join(ROOT, "build", d, "example_canvas"))), None) \
        if os.path.isdir(os.path.join(ROOT, "build")) else None
    if exe is None:
        pytest.skip("examples/cpp/canvas.cpp is not built (SPIRALTORCH_BUILD_EXAMPLES)")
    proc = subprocess.run([exe, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "surface (96, 128, 4), power spectrum (96, 65)" in proc.stdout
    assert (tmp_path / "spiraltorch_canvas.ppm").read_bytes().startswith(b"P6\n128 96\n255\n")
    lines = (tmp_path / "canvas_session_trace.jsonl").read_text().splitlines()
    assert len(lines) == 6 and '"event":"run_start"' in lines[0]
