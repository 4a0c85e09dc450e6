"""Writes the valid seed inputs of the fuzz corpora (tests/fuzz/corpus/<target>/seed_*).

    PYTHONPATH=python python tests/fuzz/make_seed_corpus.py

The seeds are small, well-formed files of each format (every dtype, 0-d, empty and
multi-dimensional shapes, metadata); the fuzzers mutate them, and scripts/fuzz.sh merges
what they find into the same directories.
"""

from __future__ import annotations

import pathlib
import shutil
import tempfile

import numpy as np

import spiraltorch as st

CORPUS = pathlib.Path(__file__).resolve().parent / "corpus"


def samples() -> list[tuple[dict[str, st.Tensor], dict[str, str]]]:
    rng = np.random.default_rng(0)
    f32 = st.from_numpy(rng.standard_normal((2, 3)).astype(np.float32))
    f64 = st.from_numpy(np.array([1.5, -np.inf, np.nan, 0.0]))
    i64 = st.from_numpy(np.arange(6, dtype=np.int64).reshape(1, 2, 3))
    i32 = st.from_numpy(np.array([-7, 2**31 - 1], dtype=np.int32))
    u8 = st.from_numpy(np.array([0, 255, 3], dtype=np.uint8))
    b = st.from_numpy(np.array([True, False]))
    scalar = st.from_numpy(np.array(3.25, dtype=np.float32))
    empty = st.zeros(0, 4)
    half = st.from_numpy(rng.standard_normal(5).astype(np.float32)).to(dtype=st.float16)
    bf = st.from_numpy(rng.standard_normal(3).astype(np.float32)).to(dtype=st.bfloat16)
    return [
        ({"w": f32}, {}),
        ({"layer.weight": f32, "layer.bias": f64}, {"format": "pt", "note": "caf\u00e9"}),
        ({"i64": i64, "i32": i32, "u8": u8, "mask": b}, {}),
        ({"scalar": scalar, "empty": empty}, {"k": ""}),
        ({"half": half, "bf16": bf}, {}),
        ({}, {}),
    ]


def main() -> None:
    for target in ("safetensors", "json", "bincode", "manifest"):
        (CORPUS / target).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for i, (tensors, meta) in enumerate(samples()):
            (CORPUS / "safetensors" / f"seed_{i}").write_bytes(st.io.save_safetensors_bytes(tensors, meta))
            for fmt, save in (("json", st.io.save_json), ("bincode", st.io.save_bincode)):
                path = pathlib.Path(tmp) / f"s{i}.{fmt}"
                save(str(path), tensors, meta)
                shutil.copy(path, CORPUS / fmt / f"seed_{i}")
            weights = pathlib.Path(tmp) / f"m{i}.safetensors"
            st.io.save_safetensors(str(weights), tensors, meta)
            manifest = st.io.write_manifest(str(weights), "safetensors", tensors, "Linear" if i % 2 else None)
            shutil.copy(manifest, CORPUS / "manifest" / f"seed_{i}")


if __name__ == "__main__":
    main()
