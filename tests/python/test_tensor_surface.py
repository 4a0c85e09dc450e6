"""The Tensor and Module surfaces are defined in C++ and bound in python/src (ARCHITECTURE.md, "One way
for each thing"): importing the ``spiraltorch`` package adds no attribute to the native ``Tensor`` or
``nn.Module`` classes and replaces none.

A subprocess loads the extension module alone (by its file, without running the package's
``__init__``), records ``vars()`` of the classes, then imports the package on top of the same module
object and compares. What Python still attaches is listed below by name, each entry to be removed
when it moves into the binding; the test fails on anything attached that is not listed, and on
a listed name that is no longer attached (so the lists only shrink).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Tensor attributes still attached from Python at import, by the file attaching them (none: issue 37
# item 4 moved the last one, bernoulli, into src/ops/sampling.cpp).
TENSOR_PENDING: dict[str, set[str]] = {}

# nn.Module (and subclass) attributes still attached from Python at import (none).
MODULE_PENDING: dict[str, set[str]] = {"Module": set(), "Linear": set()}

_PROBE = r"""
import importlib.machinery, importlib.util, json, os, sys

pkg_dir = sys.argv[1]
name = "spiraltorch._core"
path = next(os.path.join(pkg_dir, f) for f in os.listdir(pkg_dir)
            if f.startswith("_core.") and f.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)))
spec = importlib.util.spec_from_file_location(name, path)
core = importlib.util.module_from_spec(spec)
spec.loader.exec_module(core)
assert "spiraltorch" not in sys.modules, "loading the extension imported the package"

classes = {"Tensor": core.Tensor, "nn.Module": core.nn.Module, "nn.Linear": core.nn.Linear}
before = {k: {n: id(v) for n, v in vars(c).items()} for k, c in classes.items()}
keep_alive = {k: dict(vars(c)) for k, c in classes.items()}  # ids stay unique while the objects live

sys.modules[name] = core  # the package's `from . import _core` takes this very module
import spiraltorch  # noqa: E402,F401
import spiraltorch.nn  # noqa: E402,F401

assert spiraltorch._core is core
out = {}
for k, c in classes.items():
    after = {n: id(v) for n, v in vars(c).items()}
    out[k] = {
        "added": sorted(n for n in after if n not in before[k]),
        "replaced": sorted(n for n in after if n in before[k] and after[n] != before[k][n]),
    }
print(json.dumps(out))
"""


def _probe() -> dict:
    # The package under test: the source tree's in a development build, the installed one otherwise
    # (conftest.py chose it before this module was imported).
    import spiraltorch

    pkg_dir = os.path.dirname(os.path.abspath(spiraltorch.__file__))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(pkg_dir) + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", _PROBE, pkg_dir], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _attached(result: dict) -> set[str]:
    return set(result["added"]) | set(result["replaced"])


def test_python_adds_no_tensor_attribute_beyond_the_pending_list():
    result = _probe()
    attached = _attached(result["Tensor"])
    pending = set().union(*TENSOR_PENDING.values())
    unexpected = sorted(attached - pending)
    assert not unexpected, f"Python attaches these to the native Tensor; bind them in python/src: {unexpected}"
    moved = sorted(pending - attached)
    assert not moved, f"no longer attached from Python: remove from TENSOR_PENDING: {moved}"


def test_python_adds_no_module_attribute_beyond_the_pending_list():
    result = _probe()
    for cls, pending in MODULE_PENDING.items():
        attached = _attached(result[f"nn.{cls}"])
        unexpected = sorted(attached - pending)
        assert not unexpected, f"Python attaches these to the native nn.{cls}; bind them in python/src: {unexpected}"
        moved = sorted(pending - attached)
        assert not moved, f"no longer attached to nn.{cls} from Python: remove from MODULE_PENDING: {moved}"
