"""Regenerates the .pyi stubs of the native module with nanobind's stubgen.

Run from the repository root with a dev build linked into python/spiraltorch:
    PYTHONPATH=python python scripts/gen_stubs.py
The dtype properties installed from Python are written out by hand because
stubgen cannot name them.
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
init = out / "__init__.pyi"
# stubgen writes a bare "@property" line for each property whose getter is a Python function: first
# the dtype's two (installed by _tensor_extras.py), then Tensor.rows and Tensor.cols (_seed_tensor.py).
python_properties = [
    ("is_floating_point", "bool", "Whether the dtype is one of the floating-point types."),
    ("itemsize", "int", "Bytes per element."),
    ("rows", "int", "Number of rows of a 2-D tensor (ShapeError for another rank)."),
    ("cols", "int", "Number of columns of a 2-D tensor (ShapeError for another rank)."),
]
lines = init.read_text().split("\n")
bare = [i for i, line in enumerate(lines[:-1]) if line == "    @property" and not lines[i + 1].startswith("    def ")]
if len(bare) != len(python_properties):
    sys.exit(f"gen_stubs: expected {len(python_properties)} bare @property lines in __init__.pyi, found {len(bare)}")
for i, (name, ret, doc) in zip(bare, python_properties):
    lines[i] = f'    @property\n    def {name}(self) -> {ret}:\n        """{doc}"""\n'
init.write_text("\n".join(lines))
for pyi in out.glob("*.pyi"):
    pyi.write_text(drop_python_method_imports(pyi.read_text()))
    compile(pyi.read_text(), str(pyi), "exec")
print("stubs written:", ", ".join(sorted(p.name for p in out.glob("*.pyi"))))
