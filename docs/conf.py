"""Sphinx configuration of the SpiralTorch site (built by scripts/docs.sh)."""

from __future__ import annotations

import os
import pathlib
import sys

DOCS = pathlib.Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))

# A development tree (python/spiraltorch/_core*.so linked from a build dir) is documented in
# place, as tests/python/conftest.py tests it; otherwise (or while that build is half-linked and
# does not import) the installed package is. SPIRALTORCH_DOCS_PYDIR names another directory.
_PKG = ROOT / "python" / "spiraltorch"
if os.environ.get("SPIRALTORCH_DOCS_PYDIR"):
    sys.path.insert(0, os.environ["SPIRALTORCH_DOCS_PYDIR"])
elif any(p.name.startswith("_core") and p.suffix == ".so" and p.exists() for p in _PKG.iterdir()):
    sys.path.insert(0, str(ROOT / "python"))
    try:
        import spiraltorch  # noqa: F401
    except ImportError as exc:
        print(f"docs: the in-place package does not import ({exc}); documenting the installed one")
        sys.path.remove(str(ROOT / "python"))
        for name in [m for m in sys.modules if m == "spiraltorch" or m.startswith("spiraltorch.")]:
            del sys.modules[name]

import apigen  # noqa: E402
import benchgen  # noqa: E402
import cppgen  # noqa: E402
import spiraltorch  # noqa: E402

project = "SpiralTorch"
author = "SpiralTorch contributors"
copyright = "SpiralTorch contributors"
release = getattr(spiraltorch, "__version__", "")
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "plaindoc",
]

# The Python reference pages (docs/api) and the benchmark result pages (docs/bench) are generated on every build, before Sphinx reads the
# sources; the C++ reference is Doxygen's HTML, copied in as docs/_build/html/cpp.
# SPIRALTORCH_DOCS_NO_CPP=1 leaves Doxygen out (the reference test needs only the Python API).
apigen.write()
benchgen.write()
html_extra_path = []
if os.environ.get("SPIRALTORCH_DOCS_NO_CPP") != "1":
    html_extra_path.append(str(cppgen.run_doxygen().relative_to(DOCS)))

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "requirements.txt", "Doxyfile", "cpp_mainpage.md"]

myst_enable_extensions = ["colon_fence"]
# README sections are included as they are; their "#section" links resolve to these anchors.
myst_heading_anchors = 3

autodoc_default_options = {"member-order": "alphabetical"}
# nanobind puts each native function's signature on the first line of its docstring.
autodoc_docstring_signature = True
autodoc_typehints = "signature"
autodoc_inherit_docstrings = True
autosummary_generate = False

html_theme = "furo"
html_title = f"SpiralTorch {release}".strip()
html_static_path = []
html_show_sourcelink = False
