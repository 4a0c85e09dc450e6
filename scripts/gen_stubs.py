"""Regenerates the .pyi stubs of the native module with nanobind's stubgen.

Run from the repository root with a dev build linked into python/spiraltorch:
    PYTHONPATH=python python scripts/gen_stubs.py
The dtype properties installed from Python are written out by hand because
stubgen cannot name them.
"""

import os
import pathlib
import shutil
import subprocess
import sys

out = pathlib.Path("python/spiraltorch/_core")
shutil.rmtree(out, ignore_errors=True)
# SPIRALTORCH_STUBGEN=1: the package leaves the Python-level Tensor additions of _torch_compat.py
# out, so the stubs describe the native class (stubgen cannot name lambdas or replaced properties).
subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-m", "spiraltorch._core", "-r", "-O", "python/spiraltorch"],
               check=True, env=dict(os.environ, SPIRALTORCH_STUBGEN="1"))
init = out / "__init__.pyi"
text = init.read_text().replace(
    "    @property\n    @property\n",
    "    @property\n    def is_floating_point(self) -> bool: ...\n\n    @property\n    def itemsize(self) -> int: ...\n\n",
)
init.write_text(text)
for pyi in out.glob("*.pyi"):
    compile(pyi.read_text(), str(pyi), "exec")
print("stubs written:", ", ".join(sorted(p.name for p in out.glob("*.pyi"))))
