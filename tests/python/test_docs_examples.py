"""Every ```python example in the documentation (docs/*.md, docs/*.rst) runs.

The blocks of one page run in order in one namespace (a page may build on its earlier blocks), in a
temporary working directory; the examples assert what they print, so a wrong value fails here too.
"""

from __future__ import annotations

import os
import pathlib
import re

import pytest

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"
_MD_BLOCK = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)
_RST_BLOCK = re.compile(r"^\.\. code-block:: python\n((?:\n|   .*\n)+)", re.M)


def python_blocks(path: pathlib.Path) -> list[str]:
    text = path.read_text()
    if path.suffix == ".md":
        return _MD_BLOCK.findall(text)
    return [re.sub(r"^   ", "", b, flags=re.M) for b in _RST_BLOCK.findall(text)]


PAGES = sorted(p for p in [*DOCS.glob("*.md"), *DOCS.glob("*.rst")] if python_blocks(p))


def test_the_feature_pages_have_examples():
    names = {p.stem for p in PAGES}
    expected = {"index", "zspace", "sequence", "desire", "runtime", "plugins", "telemetry", "rl_rec",
                "integrations", "distributed", "devices", "spiralk", "traces"}
    assert expected <= names, f"pages without a python example: {sorted(expected - names)}"


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_page_examples_run(page, tmp_path, monkeypatch):
    if page.stem == "integrations":
        pytest.importorskip("torch")  # its second block hands a tensor to PyTorch
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": f"docs_{page.stem}"}
    for i, block in enumerate(python_blocks(page), 1):
        code = compile(block, f"{page.relative_to(DOCS.parent)} (python block {i})", "exec")
        exec(code, namespace)
    assert os.getcwd() == str(tmp_path)


README = DOCS.parent / "README.md"
# The README sections the site includes whose python blocks are whole programs (getting_started.md;
# "Coming from PyTorch" is prose, its programs are tests/pytorch_programs); the other README blocks
# are excerpts that name a model or data defined elsewhere (CUDA graphs, integrations, distributed).
README_RUNNABLE = ("## Quickstart",)


def readme_section(title: str) -> str:
    text = README.read_text()
    start = text.index(title + "\n")
    end = text.find("\n## ", start + len(title))
    return text[start:end if end >= 0 else len(text)]


@pytest.mark.parametrize("title", README_RUNNABLE)
def test_readme_examples_the_site_includes_run(title, tmp_path, monkeypatch):
    blocks = _MD_BLOCK.findall(readme_section(title))
    assert blocks, f"README section {title!r} has no python example"
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "docs_readme"}
    exec("import spiraltorch as st", namespace)  # the sections' blocks use `st` as the Quickstart imports it
    for i, block in enumerate(blocks, 1):
        exec(compile(block, f"README.md {title} (python block {i})", "exec"), namespace)
