"""Small built-in datasets generated on the fly (no downloads), and loaders for data that a
system package installs (WordNet from Debian's wordnet-base)."""

from __future__ import annotations

import functools
import math
import os
from typing import Dict, FrozenSet, List, Optional, Tuple

from . import _core


def make_spirals(
    samples_per_class: int = 200, classes: int = 3, noise: float = 0.2, seed: int = 0
) -> Tuple["_core.Tensor", "_core.Tensor"]:
    """Interleaved spiral arms in the plane, one arm per class.

    Returns ``(x, y)``: ``x`` is float32 of shape ``(samples_per_class * classes, 2)``,
    ``y`` the int64 class index of each point. Points of class ``k`` lie on
    ``r * (sin t, cos t)`` with ``r`` in [0, 1] and ``t = 4 r + 2 pi k / classes``
    plus Gaussian angle noise of std ``noise``; the classes are not linearly separable.
    """
    if samples_per_class <= 0 or classes <= 1:
        raise _core.SpiralValueError(
            f"make_spirals: need samples_per_class > 0 and classes > 1, got {samples_per_class}, {classes}"
        )
    state = _core._get_rng_state()
    _core.manual_seed(seed)
    try:
        n = samples_per_class
        radius = _core.linspace(0.0, 1.0, n).reshape(1, n).expand(classes, n)
        offsets = (_core.arange(classes, dtype="float32") * (2 * math.pi / classes)).reshape(classes, 1)
        theta = radius * 4.0 + offsets + _core.randn(classes, n) * noise
        x = _core.stack([radius * theta.sin(), radius * theta.cos()], dim=-1).reshape(classes * n, 2)
        y = _core.arange(classes).reshape(classes, 1).expand(classes, n).reshape(classes * n)
        return x.contiguous(), y.contiguous()
    finally:
        _core._set_rng_state(*state)


# --- WordNet noun hierarchy (Debian's wordnet-base: /usr/share/wordnet) -------------------------

WORDNET_DIRS = ("/usr/share/wordnet", "/usr/local/share/wordnet", "/usr/share/WordNet-3.0/dict")


def find_wordnet() -> Optional[str]:
    """The directory holding WordNet's ``data.noun``/``index.noun``: ``$SPIRALTORCH_WORDNET_DIR``,
    ``$WNSEARCHDIR`` or a standard install location (``apt-get install wordnet-base``); None if absent."""
    candidates = [os.environ.get("SPIRALTORCH_WORDNET_DIR"), os.environ.get("WNSEARCHDIR"), *WORDNET_DIRS]
    for d in candidates:
        if d and os.path.isfile(os.path.join(d, "data.noun")) and os.path.isfile(os.path.join(d, "index.noun")):
            return d
    return None


@functools.lru_cache(maxsize=2)
def _wordnet_nouns(directory: str) -> Tuple[Dict[str, str], Dict[str, List[str]], Dict[str, List[str]]]:
    """(offset -> nltk-style name, offset -> hypernym offsets, offset -> instance-hypernym offsets),
    parsed from data.noun; names follow nltk (first lemma, lower case, sense number from index.noun)."""
    first_lemma: Dict[str, str] = {}
    hyper: Dict[str, List[str]] = {}
    inst: Dict[str, List[str]] = {}
    with open(os.path.join(directory, "data.noun"), encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("  "):  # licence header
                continue
            fields = line.split(" | ", 1)[0].split()
            offset, w_cnt = fields[0], int(fields[3], 16)
            first_lemma[offset] = fields[4].lower()
            p = 4 + 2 * w_cnt
            p_cnt = int(fields[p])
            hs, ins = [], []
            for i in range(p + 1, p + 1 + 4 * p_cnt, 4):
                symbol, target, pos = fields[i], fields[i + 1], fields[i + 2]
                if pos != "n":
                    continue
                if symbol == "@":
                    hs.append(target)
                elif symbol == "@i":
                    ins.append(target)
            hyper[offset], inst[offset] = hs, ins
    # Sense numbers: the position of the synset among the lemma's senses in index.noun.
    senses: Dict[Tuple[str, str], int] = {}
    with open(os.path.join(directory, "index.noun"), encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("  "):
                continue
            fields = line.split()
            lemma, synset_cnt, p_cnt = fields[0], int(fields[2]), int(fields[3])
            offsets = fields[6 + p_cnt: 6 + p_cnt + synset_cnt]
            for i, off in enumerate(offsets):
                senses[(lemma, off)] = i + 1
    names = {off: f"{lemma}.n.{senses.get((lemma, off), 1):02d}" for off, lemma in first_lemma.items()}
    return names, hyper, inst


def wordnet_closure(subtree: str = "mammal", instance_hypernyms: bool = True,
                    directory: Optional[str] = None, progress: bool = True) -> Tuple[List[str], "_core.Tensor"]:
    """The transitive closure of WordNet 3.0's noun hypernymy, read directly from ``data.noun``.

    ``subtree="noun"`` gives every noun synset; ``"mammal"`` (or any synset name such as
    ``"mammal.n.01"``) keeps that synset and its descendants, with only the pairs inside that
    set, as Nickel & Kiela's ``transitive_closure.py`` does. ``instance_hypernyms`` also follows
    instance-of links (a named entity to its class). Returns ``(names, edges)``: nltk-style synset
    names (``'mammal.n.01'``) sorted, and an (E, 2) int64 tensor of (node, ancestor) indices into
    ``names``. FileNotFoundError if WordNet is not installed (``apt-get install wordnet-base``).
    ``progress`` shows a bar over the synsets on a terminal (``spiraltorch.utils.progress``).
    """
    directory = directory or find_wordnet()
    if directory is None:
        raise FileNotFoundError("wordnet_closure: WordNet's data.noun not found; install Debian's wordnet-base "
                                "(apt-get install wordnet-base) or set SPIRALTORCH_WORDNET_DIR")
    names, hyper, inst = _wordnet_nouns(directory)
    parents = {off: hyper[off] + (inst[off] if instance_hypernyms else []) for off in names}
    ancestors: Dict[str, FrozenSet[str]] = {}

    def closure(root: str) -> FrozenSet[str]:
        # Iterative post-order DFS: the hierarchy is a DAG up to 19 levels deep.
        stack = [root]
        while stack:
            off = stack[-1]
            if off in ancestors:
                stack.pop()
                continue
            pending = [p for p in parents[off] if p not in ancestors]
            if pending:
                stack.extend(pending)
                continue
            acc = set(parents[off])
            for p in parents[off]:
                acc |= ancestors[p]
            ancestors[off] = frozenset(acc)
            stack.pop()
        return ancestors[root]

    from .utils.progress import track

    for off in track(names, desc="wordnet closure", unit="synsets", enable=progress):
        closure(off)
    if subtree == "noun":
        keep = set(names)
    else:
        wanted = subtree if "." in subtree else f"{subtree}.n.01"
        roots = [off for off, name in names.items() if name == wanted]
        if not roots:
            raise _core.SpiralValueError(f"wordnet_closure: no noun synset named '{wanted}' "
                                         f"(subtree={subtree!r}; use 'noun', 'mammal' or a name like 'dog.n.01')")
        root = roots[0]
        keep = {off for off in names if root in ancestors[off]} | {root}
    order = sorted(keep, key=lambda off: names[off])
    index = {off: i for i, off in enumerate(order)}
    pairs = [(index[off], index[a]) for off in order for a in sorted(ancestors[off], key=lambda o: names[o])
             if a in keep]
    try:
        import numpy as np

        edges = _core.tensor(np.asarray(pairs, dtype=np.int64).reshape(len(pairs), 2))
    except ImportError:
        edges = _core.tensor(pairs, dtype="int64")
    return [names[off] for off in order], edges


# --- English text: Debian's `fortunes` package (/usr/share/games/fortunes) ---------------------

FORTUNES_DIRS = ("/usr/share/games/fortunes", "/usr/share/fortunes", "/usr/local/share/games/fortunes")
# The English collections of the `fortunes` package that are prose or verse written by people;
# left out: ascii-art (drawings), perl (code), translate-me and disclaimer (boilerplate).
FORTUNES_FILES = (
    "art", "computers", "cookie", "debian", "definitions", "drugs", "education", "ethnic", "food", "fortunes",
    "goedel", "humorists", "kids", "knghtbrd", "law", "linux", "linuxcookie", "literature", "love", "magic",
    "medicine", "men-women", "miscellaneous", "news", "paradoxum", "people", "pets", "platitudes", "politics",
    "pratchett", "riddles", "science", "songs-poems", "sports", "startrek", "tao", "wisdom", "work", "zippy",
)


def find_fortunes() -> Optional[str]:
    """The directory of the `fortunes` data files: ``$SPIRALTORCH_FORTUNES_DIR`` or a standard install
    location (``apt-get install fortunes``); None if absent."""
    for d in (os.environ.get("SPIRALTORCH_FORTUNES_DIR"), *FORTUNES_DIRS):
        if d and os.path.isfile(os.path.join(d, "fortunes")):
            return d
    return None


@functools.lru_cache(maxsize=4)
def fortunes_text(split: str = "train", directory: Optional[str] = None) -> bytes:
    """English text from Debian's ``fortunes`` package as bytes, for byte-level language models.

    Each file of :data:`FORTUNES_FILES` holds entries separated by lines of a single ``%``; the
    entries are taken in file order (files in the order listed) and every tenth one (index 9, 19,
    ...) goes to ``split="validation"``, the rest to ``"train"`` — a fixed split that draws both from
    every file. Entries are joined with a blank line. Raises FileNotFoundError naming the package
    when it is not installed, ValueError for an unknown split."""
    if split not in ("train", "validation"):
        raise ValueError(f"fortunes_text: split must be 'train' or 'validation', got {split!r}")
    root = directory or find_fortunes()
    if root is None:
        raise FileNotFoundError("fortunes_text: the fortunes data files were not found; install Debian's "
                                "'fortunes' package (apt-get install fortunes) or set SPIRALTORCH_FORTUNES_DIR")
    entries: List[bytes] = []
    for name in FORTUNES_FILES:
        path = os.path.join(root, name)
        if not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            current: List[bytes] = []
            for line in f:
                if line.rstrip(b"\r\n") == b"%":
                    if current:
                        entries.append(b"".join(current).strip())
                    current = []
                else:
                    current.append(line)
            if current:
                entries.append(b"".join(current).strip())
    keep = 9 if split == "validation" else None
    chosen = [e for i, e in enumerate(entries) if e and ((i % 10 == 9) == (keep is not None))]
    return b"\n\n".join(chosen) + b"\n"
