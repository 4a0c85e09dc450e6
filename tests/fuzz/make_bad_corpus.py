"""Writes the hand-made part of tests/data/bad_safetensors/ (one hostile file per check).

    python tests/fuzz/make_bad_corpus.py tests/data/bad_safetensors

Files named fuzz_*.safetensors in that directory come from fuzz_safetensors.py (ST_FUZZ_KEEP).
"""

from __future__ import annotations

import json
import os
import struct
import sys


def st_file(header, data: bytes = b"", *, raw_header: bytes | None = None, length: int | None = None) -> bytes:
    text = raw_header if raw_header is not None else json.dumps(header, separators=(",", ":")).encode()
    return struct.pack("<Q", len(text) if length is None else length) + text + data


F32x2 = {"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}
GOOD = st_file(F32x2, b"\0" * 8)

CASES = {
    "empty_file": b"",
    "truncated_length": b"\x10\x00\x00",
    "truncated_header": GOOD[:20],
    "truncated_data": GOOD[:-3],
    "header_length_beyond_eof": st_file(F32x2, b"\0" * 8, length=4096),
    "header_length_huge": struct.pack("<Q", 2**63 + 5) + b"{}",
    "header_over_limit": struct.pack("<Q", 100_000_001) + b"{}" + b" " * 16,
    "bad_json": st_file(None, b"\0" * 8, raw_header=b'{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}'),
    "bad_json_trailing": st_file(None, b"", raw_header=b"{} x"),
    "bad_utf8": st_file(None, b"", raw_header=b'{"\xff\xfe":{}}'),
    "not_an_object": st_file(None, b"", raw_header=b"[1, 2, 3]"),
    "deep_nesting": st_file(None, b"", raw_header=b'{"a":' + b"[" * 5000 + b"]" * 5000 + b"}"),
    "duplicate_key": st_file(None, b"\0" * 8, raw_header=b'{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},'
                                                         b'"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'),
    "unknown_dtype": st_file({"x": {"dtype": "F33", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 8),
    "unsupported_dtype": st_file({"x": {"dtype": "I16", "shape": [4], "data_offsets": [0, 8]}}, b"\0" * 8),
    "dtype_not_string": st_file({"x": {"dtype": 4, "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 8),
    "shape_size_mismatch": st_file({"x": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\0" * 8),
    "negative_dim": st_file({"x": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}}, b"\0" * 8),
    "float_dim": st_file({"x": {"dtype": "F32", "shape": [2.0], "data_offsets": [0, 8]}}, b"\0" * 8),
    "shape_overflow": st_file({"x": {"dtype": "F32", "shape": [2**32, 2**32, 16], "data_offsets": [0, 8]}}, b"\0" * 8),
    "dim_beyond_u64": st_file(None, b"\0" * 8, raw_header=b'{"x":{"dtype":"F32","shape":[99999999999999999999],"data_offsets":[0,8]}}'),
    "negative_offset": st_file({"x": {"dtype": "F32", "shape": [2], "data_offsets": [-8, 0]}}, b"\0" * 8),
    "offsets_reversed": st_file({"x": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}}, b"\0" * 8),
    "offsets_three": st_file({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8, 9]}}, b"\0" * 8),
    "offsets_beyond_eof": st_file({"x": {"dtype": "F32", "shape": [2], "data_offsets": [1000, 1008]}}, b"\0" * 8),
    "overlapping_offsets": st_file({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                    "y": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, b"\0" * 8),
    "gap_in_data": st_file({"x": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, b"\0" * 8),
    "trailing_data": st_file({"x": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 8),
    "missing_field": st_file({"x": {"dtype": "F32", "data_offsets": [0, 8]}}, b"\0" * 8),
    "unknown_field": st_file({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8], "crc": 1}}, b"\0" * 8),
    "entry_not_object": st_file({"x": [1, 2]}, b""),
    "metadata_not_strings": st_file({"__metadata__": {"a": 1}}, b""),
    "metadata_not_object": st_file({"__metadata__": "text"}, b""),
    "bool_bad_bytes": st_file({"m": {"dtype": "BOOL", "shape": [2], "data_offsets": [0, 2]}}, b"\x01\x07"),
}

if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "data", "bad_safetensors")
    os.makedirs(out, exist_ok=True)
    for name, data in CASES.items():
        with open(os.path.join(out, name + ".safetensors"), "wb") as f:
            f.write(data)
    print(f"wrote {len(CASES)} files to {out}")
