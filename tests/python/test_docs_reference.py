"""Every public name of tests/api/PUBLIC_API.md has an entry in the API reference.

The static test checks the pages docs/_ext/apigen.py generates (one per public module, an entry per
name); the build test runs Sphinx over those pages (autodoc, no C++ and no HTML output) and checks
that each name became an object of the Python domain, the entries of the site's search and
objects.inv, and that rendering the docstrings raised no warning. Under scripts/test.sh, which builds
the whole site first (SPIRALTORCH_DOCS_SITE names it), the build test reads that site's objects.inv. Skipped without Sphinx
(pip install -r docs/requirements.txt).
"""

from __future__ import annotations

import os
import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TABLE = ROOT / "tests" / "api" / "PUBLIC_API.md"
sys.path.insert(0, str(ROOT / "docs" / "_ext"))


def public_names() -> list[str]:
    rows = re.findall(r"^\| (spiraltorch[\w.]*) \| (\w+) \|", TABLE.read_text(), flags=re.M)
    assert len(rows) > 1000, "tests/api/PUBLIC_API.md lost its table"
    return [f"{module}.{name}" for module, name in rows]


def test_generated_pages_have_an_entry_for_every_public_name():
    import apigen

    pages = apigen.plan()
    entries = {f"{module}.{name}" for module, items in pages.items() for name, _, _ in items}
    entries |= set(pages)  # a submodule listed as a name is its own page
    missing = [n for n in public_names() if n not in entries]
    assert not missing, f"{len(missing)} public names without a reference entry: {missing[:20]}"


def site_objects(site: pathlib.Path) -> set[str]:
    """The Python objects of a built site's objects.inv."""
    import posixpath

    from sphinx.util.inventory import InventoryFile

    with (site / "objects.inv").open("rb") as f:
        inv = InventoryFile.load(f, "", posixpath.join)
    return {name for kind, entries in inv.items() if kind.startswith("py:") for name in entries}


def test_sphinx_documents_every_public_name(tmp_path, monkeypatch):
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    site = os.environ.get("SPIRALTORCH_DOCS_SITE")
    if site:
        # scripts/test.sh has just built the whole site from this tree with warnings as errors
        # (scripts/docs.sh): its inventory is the reference's, no second Sphinx run needed.
        documented = site_objects(pathlib.Path(site))
        missing = [n for n in public_names() if n not in documented]
        assert not missing, f"{len(missing)} public names have no entry in the site: {missing[:20]}"
        return
    from sphinx.application import Sphinx

    monkeypatch.setenv("SPIRALTORCH_DOCS_NO_CPP", "1")
    warnings = tmp_path / "warnings.txt"
    with warnings.open("w") as warn:
        app = Sphinx(
            srcdir=str(ROOT / "docs"), confdir=str(ROOT / "docs"), outdir=str(tmp_path / "out"),
            doctreedir=str(tmp_path / "doctrees"), buildername="dummy", status=None, warning=warn,
            freshenv=True, confoverrides={"root_doc": "api/index", "include_patterns": "api/**"},
        )
        app.build()
    documented = set(app.env.domains["py"].objects)
    missing = [n for n in public_names() if n not in documented]
    assert not missing, f"{len(missing)} public names have no entry in the reference: {missing[:20]}"
    text = warnings.read_text()
    assert not text.strip(), f"the API reference builds with warnings:\n{text[:4000]}"


def test_public_python_names_have_docstrings():
    import dataclasses

    import apigen

    missing = set()
    for module, items in apigen.plan().items():
        mod = apigen.module_object(module)
        for name, kind, home in items:
            if home is not None or kind in ("module", "data"):
                continue
            obj = getattr(mod, name)
            if (getattr(obj, "__module__", "") or "").startswith("spiraltorch._core"):
                continue  # native: the bindings' docstrings (tests/python/test_stub_signatures.py)
            doc = obj.__doc__ or ""
            if dataclasses.is_dataclass(obj) and doc.startswith(obj.__name__ + "("):
                doc = ""  # the dataclass' generated signature is not a description
            if not doc.strip():
                missing.add(f"{module}.{name}")
    assert not missing, f"public names without a docstring: {sorted(missing)}"


def test_plain_docstrings_read_as_written():
    docutils_core = pytest.importorskip("docutils.core")
    from plaindoc import plain_to_rst

    doc = (
        "Norm |x|^2 of 2*x, see add_ and x_i; ``a*b`` stays literal.\n"
        "Example:\n"
        "    y = f(x)  # |y| <= 1\n"
        "Terms:\n"
        "* first, with a\n"
        "  continuation\n"
        "* second\n"
        "\n"
        "Code::\n"
        "\n"
        "    def g(*args):\n"
        "        return args\n"
        "\n"
        ">>> 1 + 1\n"
        "2\n"
    )
    rst = "\n".join(plain_to_rst(doc.splitlines()))
    errors = []
    out = docutils_core.publish_parts(
        rst, writer="html",
        settings_overrides={"report_level": 2, "halt_level": 5, "warning_stream": _Collect(errors)},
    )["body"]
    assert not errors, "".join(errors)
    for text in ("|x|^2 of 2*x, see add_ and x_i", "literal\">a*b<", "y = f(x)  # |y| &lt;= 1",
                 "def g(*args):", "&gt;&gt;&gt; 1 + 1"):
        assert text in out, (text, out)
    assert out.count("<li>") == 2 and "continuation" in out


class _Collect:
    def __init__(self, sink):
        self.sink = sink

    def write(self, text):
        self.sink.append(text)
