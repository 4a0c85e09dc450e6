"""LoRA helpers on top of the native ``LoraLinear``: wrap Linear layers of a model,
freeze everything else, and count trainable parameters.

``LoraLinear`` keeps the keys of the Linear it replaces (``...::weight``, ``...::bias``)
and adds ``...::lora_a`` / ``...::lora_b``, so a base checkpoint still loads through the
checked handoff with ``allow_missing=ADAPTER_PATTERNS``; ``model.adapter_state_dict()`` /
``model.load_adapter_state_dict(state)`` save and restore only the adapters.
"""

from __future__ import annotations

from typing import Any, Iterable

from .. import _core

__all__ = ["ADAPTER_PATTERNS", "apply_lora", "freeze", "trainable_parameters", "merge_all", "unmerge_all"]

ADAPTER_PATTERNS = ("*::lora_a", "*::lora_b")
_native = _core.nn


def freeze(model: Any, *, keep: Iterable[str] = ()) -> None:
    """Sets requires_grad False on every parameter of ``model`` except the LoRA adapters and
    those whose key starts with one of the ``keep`` prefixes (e.g. ``"head::"``)."""
    keep = tuple(keep)
    for key, p in model.named_parameters():
        if key.endswith(("::lora_a", "::lora_b")) or (keep and key.startswith(keep)):
            p.requires_grad = True
        else:
            p.requires_grad = False


def trainable_parameters(model: Any) -> list:
    """The parameters of ``model`` that require grad, in ``parameters()`` order (after
    ``apply_lora``: the adapters and whatever was left unfrozen), for the optimizer."""
    return [p for p in model.parameters() if p.requires_grad]


def apply_lora(model: Any, targets: Iterable[str] = ("query", "value"), rank: int = 4, alpha: float = 8.0,
               dropout: float = 0.0) -> list[str]:
    """Replaces every Linear child whose attribute/slot name is in ``targets`` by a
    ``LoraLinear`` sharing its weights (frozen). Returns the full paths replaced."""
    targets = set(targets)
    replaced: list[str] = []
    for path, parent in _walk(model, ""):
        for slot, child in list(parent.named_children()):
            if slot in targets and type(child) is _native.Linear:
                lora = _native.LoraLinear.from_linear(child, rank, alpha, dropout)
                if isinstance(parent, _native.Module) and slot in getattr(parent, "__dict__", {}):
                    setattr(parent, slot, lora)  # Python module: attribute and registry
                else:
                    parent._register_module(slot, lora)
                replaced.append(f"{path}.{slot}" if path else slot)
    return replaced


def _walk(m: Any, path: str):
    # named_modules() needs a C++-owned root; walk the children from Python instead.
    yield path, m
    for key, child in list(m.named_children()):
        yield from _walk(child, f"{path}.{key}" if path else key)


def _modules(model: Any):
    return [m for _, m in _walk(model, "")]


def merge_all(model: Any) -> None:
    """Merges every unmerged ``LoraLinear`` in ``model`` (the adapter's update added into its
    weight, for inference without the extra matmuls)."""
    for m in _modules(model):
        if isinstance(m, _native.LoraLinear) and not m.merged:
            m.merge()


def unmerge_all(model: Any) -> None:
    """Undoes ``merge_all``: every merged ``LoraLinear`` subtracts its adapter's update from its
    weight again, so training can continue."""
    for m in _modules(model):
        if isinstance(m, _native.LoraLinear) and m.merged:
            m.unmerge()
