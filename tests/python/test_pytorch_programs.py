"""PyTorch programs run with only the imports changed.

Each program in ``tests/pytorch_programs/`` is plain PyTorch code in the idioms of PyTorch's
official tutorials and examples. It runs twice, each time in a fresh interpreter: as written
(with ``torch``) and with nothing changed but its imports (``import torch`` ->
``import spiraltorch as torch``, ``import torch.nn as nn`` -> ``import spiraltorch.nn as nn``,
``from torch.x import y`` -> ``from spiraltorch.x import y``). Both runs print a final line
``RESULT <json>``; the two results are compared:

- ``exact`` programs start from the same weights (drawn from NumPy) and see the same data,
  so every recorded loss must agree to a tolerance that allows float32 summation order;
- ``range`` programs draw from the library's own generator (dropout, randn_like, shuffling),
  so both runs must learn (the loss falls) and end in the same range.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys

import pytest

from conftest import PY_DIR, needs_torch, st

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(os.path.dirname(HERE), "pytorch_programs")

# Programs started as two processes by a launcher: torch.distributed.run for torch, spiral-run
# (python -m spiraltorch.launch, over Open MPI) for SpiralTorch; the launcher is not program code.
DISTRIBUTED = {"ddp_trainer"}

_IMPORT = re.compile(r"^(\s*)(import|from)\s+torch(\.[\w.]+)?(\s.*)?$")


def swap_imports(source: str) -> str:
    """The program with ``torch`` replaced by ``spiraltorch`` in its import lines only."""
    out = []
    for line in source.splitlines(keepends=True):
        m = _IMPORT.match(line.rstrip("\n"))
        if not m:
            out.append(line)
            continue
        indent, kind, sub, rest = m.group(1), m.group(2), m.group(3) or "", m.group(4) or ""
        if kind == "import" and not sub and not rest.strip().startswith("as"):
            out.append(f"{indent}import spiraltorch as torch{rest}\n")  # `import torch`
        else:
            out.append(f"{indent}{kind} spiraltorch{sub}{rest}\n")
    return "".join(out)


def run_both(name: str, tmp_path) -> tuple:
    """Runs the program under both imports at once (two processes); returns both results."""
    path = os.path.join(PROGRAMS, name + ".py")
    with open(path) as f:
        source = f.read()
    swapped = swap_imports(source)
    changed = [(a, b) for a, b in zip(source.splitlines(), swapped.splitlines()) if a != b]
    assert changed and all(_IMPORT.match(a) for a, _ in changed), changed
    spiral_path = tmp_path / (name + "_spiraltorch.py")
    spiral_path.write_text(swapped)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PY_DIR, env.get("PYTHONPATH", "")) if p)
    env.setdefault("OMP_NUM_THREADS", "1")  # the two runs share the machine's cores
    procs = {}
    for lib, file in (("torch", path), ("spiraltorch", str(spiral_path))):
        cmd = [sys.executable, file]
        if name in DISTRIBUTED:  # two ranks, each library's launcher (torchrun / spiral-run)
            launcher = (["-m", "torch.distributed.run", "--standalone"] if lib == "torch" else
                        ["-m", "spiraltorch.launch"] + (["--allow-run-as-root"] if os.geteuid() == 0 else []))
            cmd = [sys.executable, *launcher, "--nproc-per-node", "2", file]
        cwd = tmp_path / lib  # each run writes its own files (checkpoints, snapshots)
        cwd.mkdir()
        procs[lib] = subprocess.Popen(cmd, cwd=str(cwd), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True)
    results = {}
    for lib, proc in procs.items():
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, f"{name} with {lib} failed:\n{out[-3000:]}\n{err[-6000:]}"
        lines = [ln for ln in out.splitlines() if ln.startswith("RESULT ")]
        assert lines, f"{name} with {lib} printed no RESULT line:\n{out[-3000:]}"
        results[lib] = json.loads(lines[-1][len("RESULT "):])
    return results["torch"], results["spiraltorch"]


def assert_same(a, b, rtol: float, atol: float, where: str = "result") -> None:
    """Every number in b equals the one in a (to rtol/atol); strings and lengths equal."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and sorted(a) == sorted(b), f"{where}: keys {sorted(a)} vs {sorted(b)}"
        for k in a:
            assert_same(a[k], b[k], rtol, atol, f"{where}[{k!r}]")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), f"{where}: lengths {len(a)} vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, rtol, atol, f"{where}[{i}]")
    elif isinstance(a, (int, float)) and not isinstance(a, bool):
        assert isinstance(b, (int, float)), f"{where}: {a!r} vs {b!r}"
        assert math.isclose(a, b, rel_tol=rtol, abs_tol=atol), f"{where}: torch {a!r}, spiraltorch {b!r}"
    else:
        assert a == b, f"{where}: torch {a!r}, spiraltorch {b!r}"


def falls_and_lands(a: list, b: list, where: str, ratio: float = 1.5) -> None:
    """Both loss curves fall (last third below first third) and end within `ratio` of each other."""
    for lib, curve in (("torch", a), ("spiraltorch", b)):
        n = max(len(curve) // 3, 1)
        head, tail = sum(curve[:n]) / n, sum(curve[-n:]) / n
        assert tail < head, f"{where}: {lib}'s loss did not fall ({head:.4g} -> {tail:.4g})"
    ta, tb = a[-1], b[-1]
    assert max(ta, tb) <= ratio * min(ta, tb), f"{where}: final losses torch {ta:.4g}, spiraltorch {tb:.4g}"


def exact(rtol: float, atol: float = 1e-6):
    def check(t, s):
        assert_same(t, s, rtol, atol)
    return check


def check_polynomial(t, s):
    for r in (t, s):
        assert r["final_loss"] < 1e-3 and r["coef_error"] < 0.2 and abs(r["bias"] - r["bias_target"]) < 0.1, r
    assert t["first_loss"] > 1.0 and s["first_loss"] > 1.0


def check_cnn(t, s):
    falls_and_lands(t["train"], s["train"], "train", ratio=3.0)
    for r in (t, s):
        assert r["test"][-1][1] > 0.9, r["test"]  # accuracy
    assert_same(t["lr"], s["lr"], 1e-12, 0)


def check_vae(t, s):
    falls_and_lands(t["train"], s["train"], "train", ratio=1.25)
    falls_and_lands(t["test"], s["test"], "test", ratio=1.25)


def check_seq2seq(t, s):
    falls_and_lands(t["train"], s["train"], "train", ratio=2.0)


def check_gan(t, s):
    # the first steps run on the same weights and data; adversarial training then amplifies rounding
    assert_same(t["G"][:10], s["G"][:10], 1e-3, 1e-5)
    assert_same(t["D"][:10], s["D"][:10], 1e-3, 1e-5)
    for r in (t, s):
        assert 1.0 < r["radius"] < 3.0, r["radius"]


def check_random_split(t, s):
    falls_and_lands(t["val"], s["val"], "val", ratio=3.0)
    for r in (t, s):
        assert r["final"] < 0.05, r["final"]


def check_gpt(t, s):
    assert_same(t["log"], s["log"], 2e-3, 1e-5, "log")
    assert t["greedy"] == s["greedy"]


CHECKS = {
    "word_lm_lstm": exact(1e-3),
    "word_lm_transformer": exact(2e-3),
    "polynomial_regression": check_polynomial,
    "sine_lstm_lbfgs": exact(1e-6, 1e-9),
    "gpt_trainer": check_gpt,
    "mlp_classifier": exact(1e-4),
    "cnn_mnist": check_cnn,
    "vae": check_vae,
    "gan": check_gan,
    "seq2seq_attention": check_seq2seq,
    "learning_with_examples": exact(1e-4),
    "module_idioms": exact(1e-4),
    "checkpoint_resume": exact(1e-4),
    "lbfgs_curve_fit": exact(1e-6, 1e-9),
    "transformer_classifier": exact(2e-3, 1e-5),
    "conv_autoencoder": exact(5e-3, 1e-6),  # 32 Adam steps through convolutions amplify rounding
    "regression_random_split": check_random_split,
    "char_lstm_generator": exact(1e-3, 1e-5),
    "packed_sequence_classifier": exact(1e-3, 1e-5),
    "ddp_trainer": exact(1e-4, 1e-6),
}


def test_every_program_is_checked():
    found = sorted(f[:-3] for f in os.listdir(PROGRAMS) if f.endswith(".py") and not f.startswith("_"))
    assert found == sorted(CHECKS)


def test_swap_imports_touches_only_imports():
    src = ("import torch\nimport torch.nn as nn\nfrom torch import optim\nfrom torch.utils.data import DataLoader\n"
           "import torch.nn.functional as F\n    import torch\nx = torch.zeros(1)  # import torch\n")
    assert swap_imports(src) == (
        "import spiraltorch as torch\nimport spiraltorch.nn as nn\nfrom spiraltorch import optim\n"
        "from spiraltorch.utils.data import DataLoader\nimport spiraltorch.nn.functional as F\n"
        "    import spiraltorch as torch\nx = torch.zeros(1)  # import torch\n")


@needs_torch
@pytest.mark.parametrize("name", sorted(CHECKS))
def test_program(name, tmp_path):
    if name in DISTRIBUTED and not st.distributed.is_available("mpi"):
        pytest.skip("SpiralTorch's CPU collectives need Open MPI: " + st.distributed.unavailable_reason("mpi"))
    torch_result, spiral_result = run_both(name, tmp_path)
    CHECKS[name](torch_result, spiral_result)
