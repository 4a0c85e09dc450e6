"""atheris fuzz harness for the checkpoint readers (safetensors, bincode, JSON).

    PYTHONPATH=python python tests/fuzz/fuzz_safetensors.py -max_total_time=180 [corpus_dir]

Each input is either fed to the readers as raw bytes, or (first byte odd) decoded into a
*structured* safetensors file whose header fields are drawn from the input (dtype names
including bad ones, negative/huge dims, wrong/overlapping offsets, truncated data), which
reaches the validation paths much faster than byte flipping, since the native library is
not coverage-instrumented. Any exception other than CheckpointError, or a crash, is a bug.

With ST_FUZZ_KEEP=<dir>, the first input seen for each distinct error reason is written
there (that is how tests/data/bad_safetensors/fuzz_* were collected).
"""

from __future__ import annotations

import json
import os
import re
import struct
import sys

import atheris

with atheris.instrument_imports():
    import spiraltorch as st

io = st.io
DTYPES = ["F32", "F64", "BF16", "F16", "I64", "I32", "U8", "BOOL", "I16", "U64", "F8_E4M3", "XX", "", "f32"]
SIZES = {"F32": 4, "F64": 8, "BF16": 2, "F16": 2, "I64": 8, "I32": 4, "U8": 1, "BOOL": 1}
KEEP = os.environ.get("ST_FUZZ_KEEP")
_seen: set[str] = set()


@atheris.instrument_func
def structured(fdp: atheris.FuzzedDataProvider) -> bytes:
    n = fdp.ConsumeIntInRange(0, 4)
    header: dict = {}
    if fdp.ConsumeBool():
        header["__metadata__"] = {"k": fdp.ConsumeUnicodeNoSurrogates(4)} if fdp.ConsumeBool() else fdp.ConsumeIntInRange(-2, 2)
    offset = 0
    for i in range(n):
        dt = DTYPES[fdp.ConsumeIntInRange(0, len(DTYPES) - 1)]
        ndim = fdp.ConsumeIntInRange(0, 3)
        shape = [fdp.ConsumeIntInRange(-1, 5) if fdp.ConsumeProbability() > 0.05 else 2**62 for _ in range(ndim)]
        numel = 1
        for d in shape:
            numel *= d
        size = numel * SIZES.get(dt, 1)
        begin = offset + fdp.ConsumeIntInRange(-2, 2) * int(fdp.ConsumeProbability() < 0.2)
        end = begin + size + fdp.ConsumeIntInRange(-1, 1) * int(fdp.ConsumeProbability() < 0.2)
        offset = end
        entry = {"dtype": dt, "shape": shape, "data_offsets": [begin, end]}
        if fdp.ConsumeProbability() < 0.05:
            entry["extra"] = 1
        if fdp.ConsumeProbability() < 0.05:
            del entry["shape"]
        header[f"t{i % 3}"] = entry
    text = json.dumps(header, separators=(",", ":")).encode()
    if fdp.ConsumeProbability() < 0.1:
        text = text[: fdp.ConsumeIntInRange(0, len(text))]
    text += b" " * ((8 - len(text) % 8) % 8)
    hlen = len(text) + (fdp.ConsumeIntInRange(-3, 3) if fdp.ConsumeProbability() < 0.1 else 0)
    data_len = max(0, offset + (fdp.ConsumeIntInRange(-3, 3) if fdp.ConsumeProbability() < 0.2 else 0))
    data = fdp.ConsumeBytes(min(data_len, 4096))
    data += bytes(min(data_len, 4096) - len(data))
    return struct.pack("<Q", max(0, hlen)) + text + data


@atheris.instrument_func
def keep(data: bytes, reason: str) -> None:
    if not KEEP:
        return
    key = re.sub(r"'[^']*'|\d+|\[[^\]]*\]|line \d+, column \d+", "#", reason)[:90]
    if key in _seen:
        return
    _seen.add(key)
    name = f"fuzz_{len(_seen):03d}.safetensors"
    with open(os.path.join(KEEP, name), "wb") as f:
        f.write(data)


@atheris.instrument_func
def TestOneInput(raw: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(raw)
    data = structured(fdp) if raw[:1] and raw[0] & 1 else raw
    for loader in (io.load_safetensors_bytes, io.load_bincode_bytes, io.load_json_bytes):
        try:
            tensors, meta = loader(data)
            if loader is io.load_safetensors_bytes:
                # A file that loads must survive a write/read round trip unchanged.
                again, meta2 = io.load_safetensors_bytes(io.save_safetensors_bytes(tensors, meta))
                assert sorted(again) == sorted(tensors) and meta2 == meta
        except st.CheckpointError as e:
            msg = str(e)
            assert msg.startswith(("safetensors: ", "bincode: ", "json: ")), msg
            if loader is io.load_safetensors_bytes:
                keep(data, msg.split(": ", 2)[-1])


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
