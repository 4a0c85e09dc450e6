"""The model zoo: a registry of runnable training recipes, with discovery, ranking
and a CLI (``spiral-model-zoo``).

Each recipe is a module in ``spiraltorch.zoo`` with a ``main()`` that parses its own
arguments. ``list_models`` filters by task/family/tag, ``suggest_models`` ranks by a
simple documented score (query words found in key/tags/description, preferred tags,
availability of the data the recipe needs), ``build_model_command`` gives the argv
that runs a recipe, ``run_model`` runs it in-process.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence, Tuple


@dataclass(frozen=True)
class ModelEntry:
    """One recipe: its key, task, family, tags, description and module."""

    key: str
    task: str
    family: str
    description: str
    module: str
    tags: Tuple[str, ...] = ()
    requires: Tuple[str, ...] = field(default=())  # names checked by `available`

    @property
    def available(self) -> bool:
        """True when everything the recipe needs (native layers, data) is present."""
        return all(_REQUIREMENTS[r]() for r in self.requires)

    @property
    def script_path(self) -> Optional[str]:
        spec = importlib.util.find_spec(self.module)
        return spec.origin if spec else None


def _has_native(name: str) -> Callable[[], bool]:
    def check() -> bool:
        from . import nn

        return hasattr(nn, name)

    return check


def _has_fashion() -> bool:
    from .data import find_fashion_mnist

    return find_fashion_mnist() is not None


def _has_wordnet() -> bool:
    from .datasets import find_wordnet

    return find_wordnet() is not None


_REQUIREMENTS = {
    "fashion_mnist": _has_fashion,
    "wordnet": _has_wordnet,
    "conv": _has_native("Conv2d"),
    "losses": _has_native("CategoricalCrossEntropy"),
    "lstm": _has_native("LSTM"),
}

_REGISTRY: List[ModelEntry] = [
    ModelEntry("spiral_mlp", "classification", "mlp",
               "3-layer MLP on the built-in 3-arm spiral data, raw tensors + autograd + momentum SGD",
               "spiraltorch.zoo.spiral_mlp", ("raw-autograd", "builtin-data", "quick")),
    ModelEntry("mlp_regression", "regression", "mlp",
               "MLP regression of a noisy sine with ModuleTrainer's roundtable and hypergrad steps",
               "spiraltorch.zoo.mlp_regression", ("roundtable", "hypergrad", "zspace", "builtin-data", "quick")),
    ModelEntry("fashion_mlp", "classification", "mlp",
               "MLP on Fashion-MNIST (spirals if the dataset is absent) with nn.fit and Adam",
               "spiraltorch.zoo.fashion_mlp", ("vision", "fashion-mnist"), ("losses",)),
    ModelEntry("fashion_cnn", "classification", "cnn",
               "Small CNN on Fashion-MNIST with nn.fit and Adam",
               "spiraltorch.zoo.fashion_cnn", ("vision", "fashion-mnist", "conv"), ("losses", "conv", "fashion_mnist")),
    ModelEntry("llm_char", "language-modeling", "rnn",
               "Character-level LSTM language model on built-in text",
               "spiraltorch.zoo.llm_char", ("coherence", "text", "builtin-data"), ("losses", "lstm")),
    ModelEntry("poincare_wordnet", "embedding", "poincare",
               "Poincare embeddings of WordNet's noun hierarchy (mammal subtree or all nouns), mean rank and MAP",
               "spiraltorch.zoo.poincare_wordnet", ("hyperbolic", "geometry", "wordnet", "graph"), ("wordnet",)),
]


def all_models() -> List[ModelEntry]:
    """Every registered recipe, in registration order."""
    return list(_REGISTRY)


def list_models(task: Optional[str] = None, family: Optional[str] = None, tag: Optional[str] = None,
                available_only: bool = False) -> List[ModelEntry]:
    """Recipes matching every given filter."""
    out = []
    for e in _REGISTRY:
        if task and e.task != task:
            continue
        if family and e.family != family:
            continue
        if tag and tag not in e.tags:
            continue
        if available_only and not e.available:
            continue
        out.append(e)
    return out


def get_model(key: str) -> ModelEntry:
    """The recipe with this key; KeyError naming the known keys otherwise."""
    for e in _REGISTRY:
        if e.key == key:
            return e
    raise KeyError(f"model_zoo: unknown model '{key}' (known: {', '.join(e.key for e in _REGISTRY)})")


def suggest_models(query: str = "", task: Optional[str] = None, prefer_tags: Sequence[str] = (),
                   focus: Optional[str] = None, available_only: bool = False, limit: Optional[int] = None
                   ) -> List[ModelEntry]:
    """Recipes ranked by score: +3 per query word in the key, +2 per word in tags, +1 per
    word in the description, +2 per preferred tag present, +1 if available. ``focus``
    counts as an extra query. Entries with score 0 are dropped unless nothing scores."""
    words = [w for w in (query or "").replace("-", "_").lower().split("_") + (focus or "").lower().split("_") if w]
    scored = []
    for e in list_models(task=task, available_only=available_only):
        text_tags = " ".join(e.tags).lower()
        score = 0
        for w in words:
            score += 3 * (w in e.key) + 2 * (w in text_tags) + (w in e.description.lower())
        score += 2 * sum(t in e.tags for t in prefer_tags)
        score += 1 if e.available else 0
        scored.append((score, e))
    relevant = [p for p in scored if p[0] > (1 if words or prefer_tags else 0)] or scored
    relevant.sort(key=lambda p: -p[0])
    ranked = [e for _, e in relevant]
    return ranked[:limit] if limit else ranked


def recommend_model(query: str = "", **kwargs) -> Optional[ModelEntry]:  # type: ignore[no-untyped-def]
    """The best-ranked suggestion, or None."""
    ranked = suggest_models(query, **kwargs)
    return ranked[0] if ranked else None


def build_model_command(key: str, *args: str) -> List[str]:
    """The argv that runs recipe ``key`` with ``args`` in a fresh interpreter."""
    return [sys.executable, "-m", get_model(key).module, *args]


def run_model(key: str, args: Sequence[str] = ()) -> None:
    """Runs recipe ``key`` in this process with command-line ``args``."""
    entry = get_model(key)
    module = importlib.import_module(entry.module)
    saved = sys.argv
    sys.argv = [entry.module, *args]
    try:
        module.main()
    finally:
        sys.argv = saved


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``spiral-model-zoo list|suggest|run|focuses``."""
    parser = argparse.ArgumentParser(prog="spiral-model-zoo", description="SpiralTorch model zoo")
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_list = sub.add_parser("list", help="list recipes")
    p_list.add_argument("--task")
    p_list.add_argument("--family")
    p_list.add_argument("--tag")
    p_list.add_argument("--available-only", action="store_true")
    p_sug = sub.add_parser("suggest", help="rank recipes for a query")
    p_sug.add_argument("query", nargs="?", default="")
    p_sug.add_argument("--task")
    p_sug.add_argument("--prefer-tag", action="append", default=[])
    p_sug.add_argument("--focus")
    p_sug.add_argument("--available-only", action="store_true")
    p_sug.add_argument("--limit", type=int)
    p_run = sub.add_parser("run", help="run a recipe: spiral-model-zoo run KEY -- [recipe args]")
    p_run.add_argument("key")
    p_run.add_argument("rest", nargs=argparse.REMAINDER)
    sub.add_parser("focuses", help="list tasks and tags")
    ns = parser.parse_args(argv)
    if ns.cmd == "list":
        for e in list_models(ns.task, ns.family, ns.tag, ns.available_only):
            print(f"{e.key:16s} {e.task:18s} {e.family:5s} {'yes' if e.available else 'no ':3s}  {e.description}")
    elif ns.cmd == "suggest":
        for e in suggest_models(ns.query, task=ns.task, prefer_tags=ns.prefer_tag, focus=ns.focus,
                                available_only=ns.available_only, limit=ns.limit):
            print(f"{e.key:16s} {e.task:18s} {', '.join(e.tags)}")
    elif ns.cmd == "run":
        rest = ns.rest[1:] if ns.rest[:1] == ["--"] else ns.rest
        run_model(ns.key, rest)
    else:
        print("tasks:", ", ".join(sorted({e.task for e in _REGISTRY})))
        print("tags:", ", ".join(sorted({t for e in _REGISTRY for t in e.tags})))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
