"""Regenerates the .pyi stubs of the native module with nanobind's stubgen.

Run from the repository root with a dev build linked into python/spiraltorch:
    PYTHONPATH=python python scripts/gen_stubs.py
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys


def drop_python_method_imports(text: str) -> str:
    """Removes the module-level imports stubgen writes for the Python functions installed on native
    classes (``from spiraltorch._seed_tensor import (_rows as rows, ...)``): they declare names the
    native module does not have (``_core.rows``) and nothing in the stub uses them. Re-exports
    (``CheckpointError as CheckpointError``) stay."""
    block = re.compile(r"^from spiraltorch[\w.]* import \(\n((?:    \w+ as \w+,?\n)+)\)\n", re.M)

    def renamed_only(m: re.Match) -> str:
        pairs = re.findall(r"(\w+) as (\w+)", m.group(1))
        return "" if all(a != b for a, b in pairs) else m.group(0)

    return block.sub(renamed_only, text)


out = pathlib.Path("python/spiraltorch/_core")
shutil.rmtree(out, ignore_errors=True)
# SPIRALTORCH_STUBGEN=1: the package leaves the Python-level Tensor additions of _torch_compat.py
# out, so the stubs describe the native class (stubgen cannot name lambdas or replaced properties).
subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-m", "spiraltorch._core", "-r", "-P", "-O", "python/spiraltorch"],
               check=True, env=dict(os.environ, SPIRALTORCH_STUBGEN="1"))
for pyi in out.glob("*.pyi"):
    pyi.write_text(drop_python_method_imports(pyi.read_text()))
    compile(pyi.read_text(), str(pyi), "exec")
print("stubs written:", ", ".join(sorted(p.name for p in out.glob("*.pyi"))))
