"""Runs Doxygen over include/spiraltorch (docs/Doxyfile).

The C++ reference is Doxygen's own HTML (with its own search), written to
docs/_build/doxygen/cpp; docs/conf.py lists docs/_build/doxygen in ``html_extra_path``, so the
pages land in docs/_build/html/cpp/ next to the Sphinx site, which links to them.
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "_build" / "doxygen"


def run_doxygen() -> pathlib.Path:
    """Writes the C++ pages; returns the directory to copy into the site (it holds cpp/)."""
    if shutil.which("doxygen") is None:
        raise RuntimeError("docs: doxygen is not installed (scripts/docs.sh installs Debian's doxygen)")
    if (OUT / "cpp").exists():
        shutil.rmtree(OUT / "cpp")
    OUT.mkdir(parents=True, exist_ok=True)
    subprocess.run(["doxygen", "docs/Doxyfile"], cwd=ROOT, check=True, stderr=subprocess.DEVNULL)
    if not (OUT / "cpp" / "index.html").exists():
        raise RuntimeError(f"docs: doxygen wrote no {OUT / 'cpp' / 'index.html'}")
    return OUT
