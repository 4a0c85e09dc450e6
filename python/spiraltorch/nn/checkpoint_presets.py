"""Key presets for loading Hugging Face style checkpoints into SpiralTorch modules.

A preset maps HF state-dict names to SpiralTorch module keys (``<module path>::<param>``)
with a transform per rule, and is applied through the checked handoff on ``Module``
(``state_dict_compatibility_with_key_map`` / ``load_state_dict_subset_mapped_checked``),
so every load is reported key by key and happens atomically or not at all.

Presets: ``gpt2`` (``transformer.*``), ``gpt2_bare`` (no prefix), ``llama``, ``gpt_neox``,
``gemma``, ``bert``, and ``auto`` (detected from the external keys, :func:`detect_preset`).

SpiralTorch target layouts (what a module must be called for a preset to fit):

* GPT-2: ``embed``, ``pos_embed``, ``blocks.{i}.ln_1``, ``blocks.{i}.attn.c_attn``,
  ``blocks.{i}.attn.c_proj``, ``blocks.{i}.ln_2``, ``blocks.{i}.mlp.c_fc``,
  ``blocks.{i}.mlp.c_proj``, ``ln_f``, ``head``. Conv1D weights are stored ``(in, out)`` by
  HF and need ``transpose`` (SpiralTorch ``Linear.weight`` is ``(out, in)``).
* Llama / Gemma: ``embed``, ``layers.{i}.attn.{q,k,v,o}_proj``, ``layers.{i}.mlp.{gate,up,down}_proj``,
  ``layers.{i}.input_norm``, ``layers.{i}.post_attn_norm`` (Gemma 2/3 also
  ``layers.{i}.pre_ffn_norm``, ``layers.{i}.post_ffn_norm``), ``norm``, ``head``.
* GPT-NeoX: ``embed``, ``layers.{i}.input_norm``, ``layers.{i}.post_attn_norm``,
  ``layers.{i}.attn.qkv``, ``layers.{i}.attn.out_proj``, ``layers.{i}.mlp.fc_in``,
  ``layers.{i}.mlp.fc_out``, ``norm``, ``head``.
* BERT (:mod:`spiraltorch.models.bert`): ``embeddings.word``, ``embeddings.position``,
  ``embeddings.token_type``, ``embeddings.norm``, ``layers.{i}.{query,key,value}``,
  ``layers.{i}.attn_out``, ``layers.{i}.attn_norm``, ``layers.{i}.ffn_in``, ``layers.{i}.ffn_out``,
  ``layers.{i}.ffn_norm``, ``pooler``.

Rules whose target the module does not have are dropped (their source keys then show as
``extra``), so a partial module (say only ``embed`` and ``head``) can take its part of a
full checkpoint. Tied embeddings: when the checkpoint has no LM-head weight the head is
fed from the token embedding. A bias the module has but the checkpoint lacks is
synthesised as zeros when the matching weight is mapped (GPT-2's head, Llama's
projections in a biased module), and listed in the plan.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

__all__ = [
    "PRESETS",
    "Preset",
    "PresetPlan",
    "detect_preset",
    "build_key_map",
    "preset_compatibility",
    "load_with_preset",
]

I = r"(?P<i>\d+)"


@dataclass(frozen=True)
class Preset:
    """How one checkpoint family's keys map onto SpiralTorch's: ``rules`` are (regex over the
    external key, target template, transform) triples; ``signature`` the key patterns that identify
    the family for ``"auto"`` (all must match) and ``exclude`` those that rule it out; ``ignore``
    the buffers that are never weights; ``tied`` fills a target from another source when its own is
    absent (a head tied to the embedding); ``resizable`` the targets ``resize=True`` may crop or pad.
    The presets themselves are in ``PRESETS``."""

    name: str
    # (regex over the HF key, target template using the regex groups, transform)
    rules: tuple[tuple[str, str, str], ...]
    # keys (regexes) that identify the family for "auto"; all must match some key
    signature: tuple[str, ...]
    # HF keys that are buffers/caches, never weights (dropped before reporting)
    ignore: tuple[str, ...] = ()
    # (target, fallback source regex): fill target from this source when its own source is absent
    tied: tuple[tuple[str, str], ...] = ()
    # keys whose presence rules this preset out in "auto"
    exclude: tuple[str, ...] = ()
    # embed/head targets whose transform switches to the overlap version with resize=True
    resizable: tuple[str, ...] = ("embed::weight", "head::weight", "head::bias")


def _gpt2(prefix: str, name: str, signature: tuple[str, ...], exclude: tuple[str, ...] = ()) -> Preset:
    p = re.escape(prefix)
    return Preset(
        name=name,
        rules=(
            (rf"{p}wte\.weight", "embed::weight", "identity"),
            (rf"{p}wpe\.weight", "pos_embed::weight", "identity"),
            (rf"{p}h\.{I}\.ln_1\.(?P<p>weight|bias)", "blocks.{i}.ln_1::{p}", "identity"),
            (rf"{p}h\.{I}\.ln_2\.(?P<p>weight|bias)", "blocks.{i}.ln_2::{p}", "identity"),
            (rf"{p}h\.{I}\.attn\.c_attn\.weight", "blocks.{i}.attn.c_attn::weight", "transpose"),
            (rf"{p}h\.{I}\.attn\.c_attn\.bias", "blocks.{i}.attn.c_attn::bias", "identity"),
            (rf"{p}h\.{I}\.attn\.c_proj\.weight", "blocks.{i}.attn.c_proj::weight", "transpose"),
            (rf"{p}h\.{I}\.attn\.c_proj\.bias", "blocks.{i}.attn.c_proj::bias", "identity"),
            (rf"{p}h\.{I}\.mlp\.c_fc\.weight", "blocks.{i}.mlp.c_fc::weight", "transpose"),
            (rf"{p}h\.{I}\.mlp\.c_fc\.bias", "blocks.{i}.mlp.c_fc::bias", "identity"),
            (rf"{p}h\.{I}\.mlp\.c_proj\.weight", "blocks.{i}.mlp.c_proj::weight", "transpose"),
            (rf"{p}h\.{I}\.mlp\.c_proj\.bias", "blocks.{i}.mlp.c_proj::bias", "identity"),
            (rf"{p}ln_f\.(?P<p>weight|bias)", "ln_f::{p}", "identity"),
            (r"lm_head\.weight", "head::weight", "identity"),
            (r"lm_head\.bias", "head::bias", "identity"),
        ),
        signature=signature,
        ignore=(rf"{p}h\.\d+\.attn\.(masked_)?bias",),
        tied=(("head::weight", rf"{p}wte\.weight"),),
        exclude=exclude,
    )


def _llama_like(prefix: str, name: str, signature: tuple[str, ...], exclude: tuple[str, ...] = (),
                extra_norms: bool = False) -> Preset:
    p = re.escape(prefix)
    rules = [
        (rf"{p}embed_tokens\.weight", "embed::weight", "identity"),
        (rf"{p}layers\.{I}\.self_attn\.(?P<m>[qkvo])_proj\.(?P<p>weight|bias)", "layers.{i}.attn.{m}_proj::{p}", "identity"),
        (rf"{p}layers\.{I}\.mlp\.(?P<m>gate|up|down)_proj\.(?P<p>weight|bias)", "layers.{i}.mlp.{m}_proj::{p}", "identity"),
        (rf"{p}layers\.{I}\.input_layernorm\.weight", "layers.{i}.input_norm::weight", "identity"),
        (rf"{p}layers\.{I}\.post_attention_layernorm\.weight", "layers.{i}.post_attn_norm::weight", "identity"),
        (rf"{p}norm\.weight", "norm::weight", "identity"),
        (r"(?:model\.)?lm_head\.weight", "head::weight", "identity"),
        (r"(?:model\.)?lm_head\.bias", "head::bias", "identity"),
    ]
    if extra_norms:
        rules += [
            (rf"{p}layers\.{I}\.pre_feedforward_layernorm\.weight", "layers.{i}.pre_ffn_norm::weight", "identity"),
            (rf"{p}layers\.{I}\.post_feedforward_layernorm\.weight", "layers.{i}.post_ffn_norm::weight", "identity"),
            (rf"{p}layers\.{I}\.self_attn\.(?P<m>q|k)_norm\.weight", "layers.{i}.attn.{m}_norm::weight", "identity"),
        ]
    return Preset(
        name=name,
        rules=tuple(rules),
        signature=signature,
        ignore=(rf"{p}layers\.\d+\.self_attn\.rotary_emb\.inv_freq",),
        tied=(("head::weight", rf"{p}embed_tokens\.weight"),),
        exclude=exclude,
    )


_BERT_P = r"(?:bert\.)?"
PRESETS: dict[str, Preset] = {
    "gpt2": _gpt2("transformer.", "gpt2", (r"transformer\.wte\.weight",)),
    "gpt2_bare": _gpt2("", "gpt2_bare", (r"wte\.weight",), exclude=(r"transformer\..*",)),
    "llama": _llama_like(
        "model.", "llama", (r"model\.embed_tokens\.weight",),
        exclude=(r"model\.layers\.\d+\.pre_feedforward_layernorm\.weight", r"model\.language_model\..*"),
    ),
    "gemma": _llama_like(
        "model.language_model.", "gemma", (r"model\.language_model\.embed_tokens\.weight",), extra_norms=True,
    ),
    "gpt_neox": Preset(
        name="gpt_neox",
        rules=(
            (r"gpt_neox\.embed_in\.weight", "embed::weight", "identity"),
            (rf"gpt_neox\.layers\.{I}\.input_layernorm\.(?P<p>weight|bias)", "layers.{i}.input_norm::{p}", "identity"),
            (rf"gpt_neox\.layers\.{I}\.post_attention_layernorm\.(?P<p>weight|bias)", "layers.{i}.post_attn_norm::{p}", "identity"),
            (rf"gpt_neox\.layers\.{I}\.attention\.query_key_value\.(?P<p>weight|bias)", "layers.{i}.attn.qkv::{p}", "identity"),
            (rf"gpt_neox\.layers\.{I}\.attention\.dense\.(?P<p>weight|bias)", "layers.{i}.attn.out_proj::{p}", "identity"),
            (rf"gpt_neox\.layers\.{I}\.mlp\.dense_h_to_4h\.(?P<p>weight|bias)", "layers.{i}.mlp.fc_in::{p}", "identity"),
            (rf"gpt_neox\.layers\.{I}\.mlp\.dense_4h_to_h\.(?P<p>weight|bias)", "layers.{i}.mlp.fc_out::{p}", "identity"),
            (r"gpt_neox\.final_layer_norm\.(?P<p>weight|bias)", "norm::{p}", "identity"),
            (r"embed_out\.weight", "head::weight", "identity"),
            (r"embed_out\.bias", "head::bias", "identity"),
        ),
        signature=(r"gpt_neox\.embed_in\.weight",),
        ignore=(r"gpt_neox\.layers\.\d+\.attention\.(masked_bias|bias|rotary_emb\.inv_freq)",),
        tied=(("head::weight", r"gpt_neox\.embed_in\.weight"),),
    ),
    "bert": Preset(
        name="bert",
        rules=(
            (rf"{_BERT_P}embeddings\.word_embeddings\.weight", "embeddings.word::weight", "identity"),
            (rf"{_BERT_P}embeddings\.position_embeddings\.weight", "embeddings.position::weight", "identity"),
            (rf"{_BERT_P}embeddings\.token_type_embeddings\.weight", "embeddings.token_type::weight", "identity"),
            (rf"{_BERT_P}embeddings\.LayerNorm\.(?P<p>weight|gamma)", "embeddings.norm::weight", "identity"),
            (rf"{_BERT_P}embeddings\.LayerNorm\.(?P<p>bias|beta)", "embeddings.norm::bias", "identity"),
            (rf"{_BERT_P}encoder\.layer\.{I}\.attention\.self\.(?P<m>query|key|value)\.(?P<p>weight|bias)", "layers.{i}.{m}::{p}", "identity"),
            (rf"{_BERT_P}encoder\.layer\.{I}\.attention\.output\.dense\.(?P<p>weight|bias)", "layers.{i}.attn_out::{p}", "identity"),
            (rf"{_BERT_P}encoder\.layer\.{I}\.attention\.output\.LayerNorm\.(?:weight|gamma)", "layers.{i}.attn_norm::weight", "identity"),
            (rf"{_BERT_P}encoder\.layer\.{I}\.attention\.output\.LayerNorm\.(?:bias|beta)", "layers.{i}.attn_norm::bias", "identity"),
            (rf"{_BERT_P}encoder\.layer\.{I}\.intermediate\.dense\.(?P<p>weight|bias)", "layers.{i}.ffn_in::{p}", "identity"),
            (rf"{_BERT_P}encoder\.layer\.{I}\.output\.dense\.(?P<p>weight|bias)", "layers.{i}.ffn_out::{p}", "identity"),
            (rf"{_BERT_P}encoder\.layer\.{I}\.output\.LayerNorm\.(?:weight|gamma)", "layers.{i}.ffn_norm::weight", "identity"),
            (rf"{_BERT_P}encoder\.layer\.{I}\.output\.LayerNorm\.(?:bias|beta)", "layers.{i}.ffn_norm::bias", "identity"),
            (rf"{_BERT_P}pooler\.dense\.(?P<p>weight|bias)", "pooler::{p}", "identity"),
        ),
        signature=(rf"{_BERT_P}embeddings\.word_embeddings\.weight", rf"{_BERT_P}encoder\.layer\.0\..*"),
        ignore=(rf"{_BERT_P}embeddings\.position_ids",),
    ),
}

_OVERLAP = {"identity": "copy_overlap_zeros", "transpose": "transpose_copy_overlap_zeros"}


def _any_match(pattern: str, keys: Iterable[str]) -> bool:
    rx = re.compile(pattern)
    return any(rx.fullmatch(k) for k in keys)


def detect_preset(keys: Iterable[str]) -> str:
    """The preset whose signature keys are all present (and no exclusion key is).

    Raises ValueError when none or more than one fits, naming the candidates."""
    keys = list(keys)
    hits = [
        name for name, p in PRESETS.items()
        if all(_any_match(s, keys) for s in p.signature) and not any(_any_match(e, keys) for e in p.exclude)
    ]
    if not hits:
        # Gemma 1/2 share Llama's names except for the extra norms.
        if _any_match(r"model\.layers\.\d+\.pre_feedforward_layernorm\.weight", keys):
            return "gemma_text"
        sample = ", ".join(sorted(keys)[:5])
        raise ValueError(f"detect_preset: no preset matches these keys (first: {sample})")
    if len(hits) > 1:
        raise ValueError(f"detect_preset: ambiguous checkpoint, presets {hits} all match")
    return hits[0]


# Gemma 1/2 text checkpoints ("model.*" with the extra feed-forward norms).
PRESETS["gemma_text"] = _llama_like(
    "model.", "gemma_text", (r"model\.layers\.\d+\.pre_feedforward_layernorm\.weight",), extra_norms=True,
)


@dataclass
class PresetPlan:
    """What a preset does with one checkpoint for one module."""

    preset: str
    key_map: list[dict[str, str]]          # rules {"source", "target", "transform"}
    state: dict[str, Any]                  # the external state plus synthesised tensors
    synthesised: list[str] = field(default_factory=list)   # targets filled with zeros
    tied: list[str] = field(default_factory=list)          # targets fed from the embedding
    ignored: list[str] = field(default_factory=list)       # HF buffers dropped
    unmapped: list[str] = field(default_factory=list)      # keys no rule covers
    dropped_rules: list[dict[str, str]] = field(default_factory=list)  # targets the module lacks


def _shape_of(value: Any) -> tuple[int, ...]:
    s = getattr(value, "shape", None)
    if s is None:
        import numpy as np

        return tuple(np.asarray(value).shape)
    return tuple(s() if callable(s) and not isinstance(s, tuple) else s)


def build_key_map(
    preset: str,
    external: Mapping[str, Any],
    module: Any = None,
    *,
    resize: bool = False,
    tie_embeddings: bool = True,
    synthesise_biases: bool = True,
) -> PresetPlan:
    """Rules for ``external`` under ``preset`` ("auto" detects it).

    With ``module`` the rules are restricted to its keys, a missing head weight is tied to
    the embedding, and missing biases are synthesised as zeros of the module's shape.
    ``resize=True`` turns the embed/head rules into overlap copies (vocab resize)."""
    from .. import _core

    keys = list(external.keys())
    name = detect_preset(keys) if preset == "auto" else preset
    if name not in PRESETS:
        raise ValueError(f"unknown checkpoint preset '{preset}' (known: {', '.join(sorted(PRESETS))}, auto)")
    p = PRESETS[name]
    ignore = [re.compile(x) for x in p.ignore]
    compiled = [(re.compile(rx), tpl, tr) for rx, tpl, tr in p.rules]
    state: dict[str, Any] = {}
    plan = PresetPlan(preset=name, key_map=[], state=state)
    for k in keys:
        if any(rx.fullmatch(k) for rx in ignore):
            plan.ignored.append(k)
            continue
        state[k] = external[k]
        for rx, tpl, tr in compiled:
            m = rx.fullmatch(k)
            if m:
                target = tpl.format(**m.groupdict())
                if resize and target in p.resizable:
                    tr = _OVERLAP.get(tr, tr)
                plan.key_map.append({"source": k, "target": target, "transform": tr})
                break
        else:
            plan.unmapped.append(k)

    if module is not None:
        shapes = {k: tuple(t.shape) for k, t in module.state_dict().items()}
        kept = [r for r in plan.key_map if r["target"] in shapes]
        plan.dropped_rules = [r for r in plan.key_map if r["target"] not in shapes]
        plan.key_map = kept
        targeted = {r["target"] for r in kept}
        if tie_embeddings:
            for target, source_rx in p.tied:
                if target in shapes and target not in targeted:
                    rx = re.compile(source_rx)
                    src = next((k for k in state if rx.fullmatch(k)), None)
                    if src is not None:
                        tr = "copy_overlap_zeros" if resize else "identity"
                        if _shape_of(state[src]) != shapes[target] and not resize:
                            tr = "identity"  # reported as a shape mismatch, precisely
                        plan.key_map.append({"source": src, "target": target, "transform": tr})
                        plan.tied.append(target)
                        targeted.add(target)
        if synthesise_biases:
            for target, shape in shapes.items():
                if not target.endswith("::bias") or target in targeted:
                    continue
                if target[: -len("bias")] + "weight" not in targeted:
                    continue
                src = f"<zeros>{target}"
                state[src] = _core.zeros(*shape) if shape else _core.zeros(1).reshape(())
                plan.key_map.append({"source": src, "target": target, "transform": "identity"})
                plan.synthesised.append(target)
    return plan


def preset_compatibility(module: Any, external: Mapping[str, Any], preset: str = "auto", **kw: Any) -> dict:
    """Read-only report of ``module`` against ``external`` through a preset; the plan is
    attached under ``"plan"``."""
    allow_missing = kw.pop("allow_missing", None)
    plan = build_key_map(preset, external, module, **kw)
    report = module.state_dict_compatibility_with_key_map(plan.state, plan.key_map, allow_missing=allow_missing)
    report["preset"] = plan.preset
    report["plan"] = plan
    return report


def load_with_preset(module: Any, external: Mapping[str, Any], preset: str = "auto", **kw: Any) -> dict:
    """Checked, atomic load of ``external`` into ``module`` through a preset; raises
    ``CheckpointError`` naming every missing or mismatched key otherwise."""
    allow_missing = kw.pop("allow_missing", None)
    plan = build_key_map(preset, external, module, **kw)
    report = module.load_state_dict_subset_mapped_checked(plan.state, plan.key_map, allow_missing=allow_missing)
    report["preset"] = plan.preset
    report["plan"] = plan
    return report
