"""The model zoo: a registry of runnable training recipes, with discovery, ranking
and a CLI (``spiral-model-zoo``).

Each recipe is a module in ``spiraltorch.zoo`` with a ``main()`` that parses its own
arguments; a directory of extra recipe scripts can be added with ``root=`` (or the
``SPIRALTORCH_MODEL_ZOO_ROOT`` environment variable). ``list_models`` filters by
task/family/tag/focus, ``find_model`` resolves a name (exact, unique prefix or unique substring),
``suggest_models`` ranks by a simple documented score (query words found in key/tags/description,
preferred tags, availability of the data the recipe needs), ``focus_presets`` names the focus
tracks, ``model_zoo_summary`` counts what is there, ``build_model_command`` gives the argv
that runs a recipe, ``run_model`` runs it in-process. Names starting with ``_`` are internal
(helpers, diagnostics) and only listed with ``include_internal=True``.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import runpy
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

__all__ = ["ModelEntry", "all_models", "build_model_command", "find_model", "focus_presets", "get_model",
           "list_models", "main", "model_zoo_summary", "recommend_model", "run_model", "suggest_models"]


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
    path: Optional[str] = None  # a recipe script outside the package (found under a zoo root)

    @property
    def internal(self) -> bool:
        """Internal recipes (key starting with ``_``) are hidden unless asked for."""
        return self.key.startswith("_")

    @property
    def available(self) -> bool:
        """True when everything the recipe needs (native layers, data, its script) is present."""
        return all(_REQUIREMENTS[r]() for r in self.requires) and self.script_path is not None

    @property
    def script_path(self) -> Optional[str]:
        if self.path is not None:
            return self.path if os.path.isfile(self.path) else None
        spec = importlib.util.find_spec(self.module)
        return spec.origin if spec else None

    def to_dict(self) -> Dict[str, Any]:
        """The entry as plain data (tags as a list)."""
        return {"key": self.key, "task": self.task, "family": self.family, "description": self.description,
                "module": self.module or None, "tags": list(self.tags), "requires": list(self.requires),
                "internal": self.internal, "available": self.available, "script_path": self.script_path}


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


def _has_fortunes() -> bool:
    from .datasets import find_fortunes

    return find_fortunes() is not None


_REQUIREMENTS = {
    "fashion_mnist": _has_fashion,
    "wordnet": _has_wordnet,
    "fortunes": _has_fortunes,
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
    ModelEntry("wave_rnn_lm", "language-modeling", "rnn",
               "Byte-level WaveRnn language model on English text (Debian's fortunes); --arch wave_gate|lstm|"
               "transformer trains the baselines; prints validation bits per byte against the unigram baseline",
               "spiraltorch.zoo.wave_rnn_lm", ("text", "attentionless", "hyperbolic", "fortunes"), ("fortunes",)),
    ModelEntry("zspace_text_vae", "generative", "vae",
               "ZSpaceTextVae on English text (Debian's fortunes): Z-space wave encodings through a Gaussian latent, "
               "reconstruction against the prior-only decoder, Atlas frames",
               "spiraltorch.zoo.zspace_text_vae", ("text", "coherence", "vae", "fortunes"), ("fortunes",)),
    ModelEntry("zspace_stream_online_vision", "classification", "vision",
               "Online ZSpaceTrainer steps from a moving Fashion-MNIST frame stream through SpiralTorchVision "
               "(EMA volume, flush every N frames; per-frame work in C++)",
               "spiraltorch.zoo.zspace_stream_online_vision",
               ("vision", "zspace", "streaming", "temporal", "online", "fashion-mnist")),
    ModelEntry("zspace_stream_frame_aggregator", "classification", "vision",
               "The stream loop through a bounded ZSpaceStreamFrameAggregator ring with chrono summaries; "
               "--native-frames attaches a ChronoSnapshot to every frame",
               "spiraltorch.zoo.zspace_stream_frame_aggregator",
               ("vision", "zspace", "streaming", "temporal", "aggregator", "chrono", "fashion-mnist")),
    ModelEntry("poincare_wordnet", "embedding", "poincare",
               "Poincare embeddings of WordNet's noun hierarchy (mammal subtree or all nouns), mean rank and MAP",
               "spiraltorch.zoo.poincare_wordnet", ("hyperbolic", "geometry", "wordnet", "graph"), ("wordnet",)),
]


_FOCUS_PRESETS: Dict[str, Dict[str, Any]] = {
    "quickstart": {"task": None, "family": None, "required_tags": ("quick",), "prefer_tags": ("builtin-data",),
                   "avoid_tags": (), "description": "recipes that finish in seconds on built-in data"},
    "zspace_bootstrap": {"task": None, "family": None, "required_tags": ("zspace",),
                         "prefer_tags": ("quick", "builtin-data"), "avoid_tags": ("text",),
                         "description": "a first Z-space (hypergrad) training run"},
    "zspace_stream": {"task": None, "family": None, "required_tags": ("zspace",),
                      "prefer_tags": ("streaming", "temporal", "vision", "online", "aggregator", "hypergrad"),
                      "avoid_tags": (),
                      "description": "Z-space training driven step by step from streams (vision frames)"},
    "vision": {"task": "classification", "family": None, "required_tags": ("vision",),
               "prefer_tags": ("conv", "fashion-mnist"), "avoid_tags": (),
               "description": "image classification"},
    "llm_coherence": {"task": "language-modeling", "family": None, "required_tags": ("text",),
                      "prefer_tags": ("coherence",), "avoid_tags": (),
                      "description": "character-level language modelling"},
}


def _focus_key(name: str) -> str:
    return str(name).strip().lower().replace("-", "_").replace(" ", "_")


def focus_presets() -> Dict[str, Dict[str, Any]]:
    """The focus tracks: ``{name: {"task", "family", "required_tags", "prefer_tags", "avoid_tags",
    "description"}}`` (copies, tags as lists). A focus given to ``list_models`` is a hard filter
    (its task/family when not given, its required tags); ``suggest_models`` also scores its
    preferred and avoided tags."""
    return {k: {f: (list(v) if isinstance(v, tuple) else v) for f, v in p.items()} for k, p in _FOCUS_PRESETS.items()}


def _focus(name: str) -> Dict[str, Any]:
    key = _focus_key(name)
    if key not in _FOCUS_PRESETS:
        raise KeyError(f"model_zoo: unknown focus {name!r} (known: {', '.join(sorted(_FOCUS_PRESETS))})")
    return _FOCUS_PRESETS[key]


def _infer_entry(key: str, path: Optional[str], module: str) -> ModelEntry:
    """Metadata for a recipe the registry does not describe, inferred from its name: the task from
    substrings (regression, classification, vae -> reconstruction, llm/char/text ->
    language-modeling, else other), the family (llm, vae, vision/conv -> vision, else the first
    ``_`` token), the tags from the ``_``-separated tokens."""
    name = key.lstrip("_")
    tokens = tuple(t for t in name.split("_") if t)
    if "regression" in name:
        task = "regression"
    elif "classification" in name:
        task = "classification"
    elif "vae" in name:
        task = "reconstruction"
    elif any(t in name for t in ("llm", "char", "text")):
        task = "language-modeling"
    else:
        task = "other"
    if "llm" in tokens or "char" in tokens:
        family = "llm"
    elif "vae" in tokens:
        family = "vae"
    elif "vision" in tokens or "conv" in tokens:
        family = "vision"
    else:
        family = tokens[0] if tokens else "misc"
    return ModelEntry(key, task, family, f"{name.replace('_', ' ')} recipe.", module, tokens, path=path)


def _roots(root: Optional[str]) -> List[str]:
    found = [r for r in (root, os.environ.get("SPIRALTORCH_MODEL_ZOO_ROOT")) if r]
    for r in found:
        if not os.path.isdir(r):
            raise FileNotFoundError(f"model_zoo: recipe root {r!r} is not a directory")
    return found


def _package_dir() -> Optional[str]:
    spec = importlib.util.find_spec("spiraltorch.zoo")
    return os.path.dirname(spec.origin) if spec and spec.origin else None


def _entries(root: Optional[str] = None) -> List[ModelEntry]:
    """The registry, then recipe modules of ``spiraltorch.zoo`` the registry does not list (files
    defining ``main``), then the ``*.py`` scripts of the extra roots (a key already known is not
    redefined)."""
    out = list(_REGISTRY)
    known = {e.key for e in out}
    pkg = _package_dir()
    if pkg:
        for name in sorted(os.listdir(pkg)):
            key = name[:-3]
            if not name.endswith(".py") or key in known or key == "__init__":
                continue
            with open(os.path.join(pkg, name), encoding="utf-8") as f:
                if "\ndef main(" not in "\n" + f.read():
                    continue  # a helper module, not a recipe
            out.append(_infer_entry(key, None, f"spiraltorch.zoo.{key}"))
            known.add(key)
    for r in _roots(root):
        for name in sorted(os.listdir(r)):
            key = name[:-3]
            if name.endswith(".py") and key not in known and key != "__init__":
                out.append(_infer_entry(key, os.path.abspath(os.path.join(r, name)), ""))
                known.add(key)
    return out


def all_models(*, include_internal: bool = False, root: Optional[str] = None) -> List[ModelEntry]:
    """Every recipe (registry order, then discovered ones); internal ones only with ``include_internal``."""
    return [e for e in _entries(root) if include_internal or not e.internal]


def list_models(task: Optional[str] = None, family: Optional[str] = None, tag: Optional[str] = None,
                available_only: bool = False, *, include_internal: bool = False, focus: Optional[str] = None,
                tags: Optional[Sequence[str]] = None, root: Optional[str] = None) -> List[ModelEntry]:
    """Recipes matching every given filter: ``task``, ``family``, ``tag`` and all of ``tags``,
    ``available_only`` (requirements and script present), and ``focus`` (a ``focus_presets`` name:
    supplies task and family when they are not given and requires its required tags; unknown
    names raise KeyError). Internal recipes (``_`` keys) only with ``include_internal``."""
    want = set(tags or ()) | ({tag} if tag else set())
    if focus is not None:
        preset = _focus(focus)
        task = task or preset["task"]
        family = family or preset["family"]
        want |= set(preset["required_tags"])
    out = []
    for e in all_models(include_internal=include_internal, root=root):
        if task and e.task != task:
            continue
        if family and e.family != family:
            continue
        if not want <= set(e.tags):
            continue
        if available_only and not e.available:
            continue
        out.append(e)
    return out


def find_model(name: str, *, include_internal: bool = False, available_only: bool = False,
               root: Optional[str] = None) -> ModelEntry:
    """The recipe ``name`` refers to: the key itself (case-insensitive, a ``.py`` suffix ignored),
    else the only key starting with it, else the only key containing it. KeyError when nothing
    or more than one recipe matches (naming them)."""
    if not isinstance(name, str) or not name.strip():
        raise KeyError(f"model_zoo.find_model: expected a non-empty name, got {name!r}")
    key = name.strip().lower()
    key = key[:-3] if key.endswith(".py") else key
    pool = list_models(available_only=available_only, include_internal=include_internal, root=root)
    for rule in (lambda k: k == key, lambda k: k.startswith(key), lambda k: key in k):
        hits = [e for e in pool if rule(e.key.lower())]
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            raise KeyError(f"model_zoo.find_model: {name!r} is ambiguous: {', '.join(e.key for e in hits)}")
    raise KeyError(f"model_zoo.find_model: no model matches {name!r} "
                   f"(known: {', '.join(e.key for e in pool)})")


def model_zoo_summary(*, include_internal: bool = False, available_only: bool = False,
                      root: Optional[str] = None) -> Dict[str, Any]:
    """What the zoo holds: ``count``, ``available`` (how many can run here), ``families`` and
    ``tasks`` ({name: count}), ``tags`` ({tag: count}), ``focuses`` (the preset names) and
    ``models`` (each entry's ``to_dict()``)."""
    entries = list_models(available_only=available_only, include_internal=include_internal, root=root)
    count: Callable[[List[str]], Dict[str, int]] = lambda xs: {x: xs.count(x) for x in sorted(set(xs))}  # noqa: E731
    return {"count": len(entries), "available": sum(e.available for e in entries),
            "families": count([e.family for e in entries]), "tasks": count([e.task for e in entries]),
            "tags": count([t for e in entries for t in e.tags]), "focuses": sorted(_FOCUS_PRESETS),
            "models": [e.to_dict() for e in entries]}


def get_model(key: str, *, root: Optional[str] = None) -> ModelEntry:
    """The recipe with this key; KeyError naming the known keys otherwise."""
    entries = _entries(root)
    for e in entries:
        if e.key == key:
            return e
    raise KeyError(f"model_zoo: unknown model '{key}' (known: {', '.join(e.key for e in entries)})")


def suggest_models(query: str = "", task: Optional[str] = None, prefer_tags: Sequence[str] = (),
                   focus: Optional[str] = None, available_only: bool = False, limit: Optional[int] = None
                   ) -> List[ModelEntry]:
    """Recipes ranked by score: +3 per query word in the key, +2 per word in tags, +1 per
    word in the description, +2 per preferred tag present, -2 per avoided tag, +1 if available.
    ``focus`` names a ``focus_presets`` track (its task when none is given, its required tags as a
    filter, its preferred and avoided tags in the score); any other focus string counts as extra
    query words. Entries with score 0 are dropped unless nothing scores."""
    avoid: Sequence[str] = ()
    required: set = set()
    extra = ""
    if focus and _focus_key(focus) in _FOCUS_PRESETS:
        preset = _FOCUS_PRESETS[_focus_key(focus)]
        task = task or preset["task"]
        required = set(preset["required_tags"])
        prefer_tags = list(prefer_tags) + [t for t in preset["prefer_tags"] if t not in prefer_tags]
        avoid = preset["avoid_tags"]
    else:
        extra = focus or ""
    words = [w for w in (query or "").replace("-", "_").lower().split("_") + extra.lower().split("_") if w]
    scored = []
    for e in list_models(task=task, available_only=available_only):
        if not required <= set(e.tags):
            continue
        text_tags = " ".join(e.tags).lower()
        score = 0
        for w in words:
            score += 3 * (w in e.key) + 2 * (w in text_tags) + (w in e.description.lower())
        score += 2 * sum(t in e.tags for t in prefer_tags) - 2 * sum(t in e.tags for t in avoid)
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


def build_model_command(key: str, *args: str, root: Optional[str] = None) -> List[str]:
    """The argv that runs recipe ``key`` with ``args`` in a fresh interpreter."""
    entry = get_model(key, root=root)
    if entry.path is not None:
        return [sys.executable, entry.path, *args]
    return [sys.executable, "-m", entry.module, *args]


def run_model(key: str, args: Sequence[str] = (), *, root: Optional[str] = None) -> None:
    """Runs recipe ``key`` in this process with command-line ``args``."""
    entry = get_model(key, root=root)
    saved = sys.argv
    sys.argv = [entry.path or entry.module, *args]
    try:
        if entry.path is not None:
            runpy.run_path(entry.path, run_name="__main__")
        else:
            importlib.import_module(entry.module).main()
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
