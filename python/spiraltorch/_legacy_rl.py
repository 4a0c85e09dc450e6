"""The legacy ``import rl`` alias: after ``import spiraltorch``, ``import rl`` gives
``spiraltorch.rl`` when no other top-level ``rl`` module exists.

A finder is appended to the end of ``sys.meta_path``, so every ordinary finder (installed
packages, ``rl.py`` on ``sys.path``) is asked first and a real ``rl`` always wins. Nothing is
written into ``sys.modules`` ahead of time; the import system records ``rl`` only when
someone imports it and no other module answered. When ``rl`` is already imported, no finder is
installed at all.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from types import ModuleType
from typing import Any, Sequence


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target
        self.original_spec: Any = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.target)
        self.original_spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The import system stamped the alias spec on the module; keep the module's own.
        module.__spec__ = self.original_spec


class LegacyRLFinder(importlib.abc.MetaPathFinder):
    """Answers the top-level name ``rl`` with ``spiraltorch.rl``, asked only after every other finder."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != "rl" or path is not None:
            return None
        return importlib.machinery.ModuleSpec("rl", _AliasLoader("spiraltorch.rl"))


def install() -> bool:
    """Appends the finder once; False when ``rl`` is already imported or the finder is present."""
    if "rl" in sys.modules or any(isinstance(f, LegacyRLFinder) for f in sys.meta_path):
        return False
    sys.meta_path.append(LegacyRLFinder())
    return True
