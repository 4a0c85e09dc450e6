"""Writes the Python API reference pages (docs/api/*.rst) from the public surface.

The public names are those of tests/api/public_api.py (``spiraltorch.__all__`` and each
public submodule's ``__all__``), the same list tests/api/PUBLIC_API.md is generated from.
Each public module gets one page: its docstring, an autosummary table of its names, then an
autodoc entry per name. An object reachable under several public names (``st.nn.Linear`` is
also ``st.Linear``) is documented once, under the name in the module that defines it, and
the other names are short alias entries that link there, so every public name has its own
entry in the search index and in ``objects.inv`` without duplicate descriptions.
"""

from __future__ import annotations

import importlib
import inspect
import pathlib
import sys
from typing import Dict, List, Tuple

from plaindoc import plain_to_rst

ROOT = pathlib.Path(__file__).resolve().parents[2]
API_DIR = ROOT / "docs" / "api"
# Native submodules exposed under public names; they cannot be imported by their dotted name.
NATIVE = ("spiraltorch.canvas", "spiraltorch.geometry", "spiraltorch.io", "spiraltorch.sot")


def _public_api():
    path = str(ROOT / "tests" / "api")
    if path not in sys.path:
        sys.path.insert(0, path)
    import public_api

    return public_api


def module_object(module_name: str):
    if module_name in NATIVE:
        import spiraltorch

        return getattr(spiraltorch, module_name.split(".")[1])
    return importlib.import_module(module_name)


def surface() -> List[Tuple[str, str]]:
    return _public_api().surface()


def kind_of(obj) -> str:
    if inspect.ismodule(obj):
        return "module"
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    if callable(obj):
        return "function"
    return "data"


def _home(entries: List[Tuple[str, str]], obj) -> Tuple[str, str]:
    """The (module, name) under which a shared object is documented in full."""
    own = getattr(obj, "__module__", None)
    for module, name in entries:
        if module == own:
            return module, name
    return entries[0]


def plan() -> Dict[str, List[Tuple[str, str, object]]]:
    """module -> [(name, kind, home)] where home is None for the full entry, else 'module.name'."""
    by_id: Dict[int, List[Tuple[str, str]]] = {}
    objects = {}
    pages: Dict[str, List[Tuple[str, str, object]]] = {}
    items = surface()
    for module, name in items:
        obj = getattr(module_object(module), name)
        objects[(module, name)] = obj
        if kind_of(obj) in ("class", "exception", "function"):
            by_id.setdefault(id(obj), []).append((module, name))
    for module, name in items:
        obj = objects[(module, name)]
        kind = kind_of(obj)
        home = None
        if kind in ("class", "exception", "function"):
            hm, hn = _home(by_id[id(obj)], obj)
            if (hm, hn) != (module, name):
                home = f"{hm}.{hn}"
        pages.setdefault(module, []).append((name, kind, home))
    return pages


def _title(text: str) -> str:
    return f"{text}\n{'=' * len(text)}\n"


def render_module(module: str, entries: List[Tuple[str, str, object]], shadowed: bool = False) -> str:
    """One module's page; shadowed: the module's dotted name is also a documented object (the
    function ``spiraltorch.nn.fit`` hides the module of that name), so the module gets no index entry."""
    mod = module_object(module)
    out = [_title(f"``{module}``")]
    doc = inspect.getdoc(mod) or ""
    if module in NATIVE and not shadowed:
        # Not importable by its dotted name: declare the module and show its docstring.
        out.append(f".. py:module:: {module}\n")
        out.append("\n".join(plain_to_rst(doc.splitlines())) + "\n")
    elif shadowed:
        # No module entry (the object of the same name has it); the docstring as text.
        out.append("\n".join(plain_to_rst(doc.splitlines())) + "\n")
    else:
        out.append(f".. automodule:: {module}\n   :no-members:\n")
    out.append(f".. currentmodule:: {module}\n")
    documented = [n for n, kind, _ in entries if kind != "module"]
    submodules = [n for n, kind, _ in entries if kind == "module"]
    if submodules:
        out.append("Submodules: " + ", ".join(f":mod:`{module}.{n}`" for n in submodules) + "\n")
    if documented:
        out.append(".. autosummary::\n   :nosignatures:\n\n" + "".join(f"   {n}\n" for n in documented))
    for name, kind, home in entries:
        if kind == "module":
            continue
        if home is not None:
            role = {"class": "class", "exception": "exc", "function": "func"}[kind]
            directive = {"class": "class", "exception": "exception", "function": "function"}[kind]
            out.append(f".. py:{directive}:: {name}\n\n   The same object as :{role}:`{home}`.\n")
        elif kind in ("class", "exception"):
            directive = "autoexception" if kind == "exception" else "autoclass"
            out.append(f".. {directive}:: {name}\n   :members:\n   :undoc-members:\n   :show-inheritance:\n")
        elif kind == "function":
            out.append(f".. autofunction:: {name}\n")
        else:
            out.append(f".. autodata:: {name}\n   :no-value:\n")
    return "\n".join(out)


def render_index(modules: List[str]) -> str:
    out = [_title("Python API reference")]
    out.append(
        "Every public name of the ``spiraltorch`` package, one page per public module, generated from the\n"
        "docstrings by Sphinx autodoc. The list of public names is ``tests/api/PUBLIC_API.md``\n"
        "(``python tests/api/public_api.py``); ``tests/python/test_docs_reference.py`` fails when one of\n"
        "them has no entry here. A name that is also exported elsewhere (``spiraltorch.Linear`` and\n"
        "``spiraltorch.nn.Linear``) is described once and the other entries link to it.\n"
    )
    out.append(".. toctree::\n   :maxdepth: 1\n\n" + "".join(f"   {m}\n" for m in modules))
    return "\n".join(out)


def write(api_dir: pathlib.Path = API_DIR) -> List[str]:
    """Writes api_dir/<module>.rst and api_dir/index.rst; returns the module names."""
    pages = plan()
    api_dir.mkdir(parents=True, exist_ok=True)
    wanted = {f"{m}.rst" for m in pages} | {"index.rst"}
    for old in api_dir.glob("*.rst"):
        if old.name not in wanted:
            old.unlink()
    objects = {f"{m}.{n}" for m, e in pages.items() for n, kind, _ in e if kind != "module"}
    files = {f"{m}.rst": render_module(m, e, m in objects) for m, e in pages.items()}
    files["index.rst"] = render_index(sorted(pages))
    for fname, text in files.items():
        path = api_dir / fname
        # Unchanged pages keep their mtime, so incremental builds reread only what changed.
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
    return sorted(pages)
