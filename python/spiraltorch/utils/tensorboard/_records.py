"""TensorBoard's on-disk format written by hand, with no TensorFlow, TensorBoard or protobuf import.

An event file is a sequence of TFRecords: ``uint64 length``, ``uint32 masked_crc32c(length)``,
``length`` bytes of data, ``uint32 masked_crc32c(data)`` (all little-endian), where the mask is
``((crc >> 15 | crc << 17) + 0xa282ead8) mod 2**32`` and CRC-32C is the Castagnoli polynomial
(reflected 0x82F63B78). Each record's data is a serialized ``tensorflow.Event`` protobuf message
(``tensorflow/core/util/event.proto``); the messages below are encoded field by field in the
protobuf wire format (varints, 64-bit, length-delimited, 32-bit), with the field numbers of
``event.proto``, ``summary.proto``, ``tensor.proto``, ``tensor_shape.proto``,
``tensorboard/plugins/hparams/{api,plugin_data}.proto`` and ``google/protobuf/struct.proto``.
"""

from __future__ import annotations

import struct
from typing import Any, Iterable, Iterator, List, Optional, Sequence, Tuple

# ---------------------------------------------------------------- CRC-32C and TFRecord framing


def _crc32c_table() -> List[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data: bytes, crc: int = 0) -> int:
    """CRC-32C (Castagnoli) of ``data``: ``crc32c(b"123456789") == 0xE3069283``."""
    table = _TABLE
    c = crc ^ 0xFFFFFFFF
    for b in data:
        c = table[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    """TFRecord's masked CRC: the CRC rotated right by 15 bits plus 0xa282ead8 (mod 2**32)."""
    c = crc32c(data)
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def frame_record(data: bytes) -> bytes:
    """One TFRecord holding ``data``."""
    header = struct.pack("<Q", len(data))
    return header + struct.pack("<I", masked_crc32c(header)) + data + struct.pack("<I", masked_crc32c(data))


def read_records(raw: bytes) -> Iterator[bytes]:
    """The data of each TFRecord in ``raw``, checking both CRCs (ValueError on a bad record;
    a truncated last record, one still being written, ends the iteration)."""
    pos = 0
    while pos + 12 <= len(raw):
        header = raw[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        (hcrc,) = struct.unpack("<I", raw[pos + 8:pos + 12])
        if hcrc != masked_crc32c(header):
            raise ValueError(f"TFRecord at byte {pos}: length CRC mismatch")
        end = pos + 12 + length + 4
        if end > len(raw):
            return
        data = raw[pos + 12:pos + 12 + length]
        (dcrc,) = struct.unpack("<I", raw[end - 4:end])
        if dcrc != masked_crc32c(data):
            raise ValueError(f"TFRecord at byte {pos}: data CRC mismatch")
        yield data
        pos = end


# ---------------------------------------------------------------- protobuf wire format


def varint(value: int) -> bytes:
    """Base-128 varint; negative values as their 64-bit two's complement (ten bytes)."""
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return varint((field << 3) | wire)


def f_int(field: int, value: int) -> bytes:
    """An int32/int64/enum/bool field (wire type 0)."""
    return _key(field, 0) + varint(int(value))


def f_double(field: int, value: float) -> bytes:
    return _key(field, 1) + struct.pack("<d", float(value))


def f_float(field: int, value: float) -> bytes:
    return _key(field, 5) + struct.pack("<f", float(value))


def f_bytes(field: int, value: bytes) -> bytes:
    """A bytes, string or embedded-message field (wire type 2)."""
    return _key(field, 2) + varint(len(value)) + value


def f_str(field: int, value: str) -> bytes:
    return f_bytes(field, value.encode("utf-8"))


def f_packed_doubles(field: int, values: Sequence[float]) -> bytes:
    return f_bytes(field, struct.pack(f"<{len(values)}d", *values)) if values else b""


def parse_message(raw: bytes) -> List[Tuple[int, int, Any]]:
    """The (field, wire type, value) triples of one message: ints for varints, bytes for
    length-delimited fields, the raw 8/4 bytes for fixed-width ones (used by the tests)."""
    out, pos = [], 0
    while pos < len(raw):
        key, pos = _read_varint(raw, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _read_varint(raw, pos)
        elif wire == 1:
            value, pos = raw[pos:pos + 8], pos + 8
        elif wire == 2:
            n, pos = _read_varint(raw, pos)
            value, pos = raw[pos:pos + n], pos + n
        elif wire == 5:
            value, pos = raw[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"protobuf: unsupported wire type {wire}")
        out.append((field, wire, value))
    return out


def _read_varint(raw: bytes, pos: int) -> Tuple[int, int]:
    shift = value = 0
    while True:
        b = raw[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


# ---------------------------------------------------------------- the messages

DT_FLOAT = 1
DT_STRING = 7


def event(wall_time: float, step: int = 0, *, file_version: Optional[str] = None, summary: Optional[bytes] = None,
          session_log_start: bool = False) -> bytes:
    """``Event{wall_time=1, step=2, file_version=3 | summary=5 | session_log=7}``."""
    out = f_double(1, wall_time)
    if step:
        out += f_int(2, step)
    if file_version is not None:
        out += f_str(3, file_version)
    if summary is not None:
        out += f_bytes(5, summary)
    if session_log_start:  # SessionLog{status=START (1)}
        out += f_bytes(7, f_int(1, 1))
    return out


def summary(values: Iterable[bytes]) -> bytes:
    """``Summary{repeated Value value=1}``."""
    return b"".join(f_bytes(1, v) for v in values)


def plugin_metadata(plugin_name: str, content: bytes = b"") -> bytes:
    """``SummaryMetadata{plugin_data=1: PluginData{plugin_name=1, content=2}}``."""
    data = f_str(1, plugin_name) + (f_bytes(2, content) if content else b"")
    return f_bytes(1, data)


def value(tag: str, *, simple_value: Optional[float] = None, image: Optional[bytes] = None,
          histo: Optional[bytes] = None, tensor: Optional[bytes] = None, metadata: Optional[bytes] = None) -> bytes:
    """``Summary.Value{tag=1, simple_value=2, image=4, histo=5, tensor=8, metadata=9}``."""
    out = f_str(1, tag)
    if simple_value is not None:
        out += f_float(2, simple_value)
    if image is not None:
        out += f_bytes(4, image)
    if histo is not None:
        out += f_bytes(5, histo)
    if tensor is not None:
        out += f_bytes(8, tensor)
    if metadata is not None:
        out += f_bytes(9, metadata)
    return out


def image(height: int, width: int, colorspace: int, png: bytes) -> bytes:
    """``Summary.Image{height=1, width=2, colorspace=3, encoded_image_string=4}``."""
    return f_int(1, height) + f_int(2, width) + f_int(3, colorspace) + f_bytes(4, png)


def histogram(vmin: float, vmax: float, num: float, total: float, sum_squares: float,
              bucket_limit: Sequence[float], bucket: Sequence[float]) -> bytes:
    """``HistogramProto{min=1, max=2, num=3, sum=4, sum_squares=5, bucket_limit=6, bucket=7}``
    (the repeated fields packed)."""
    return (f_double(1, vmin) + f_double(2, vmax) + f_double(3, num) + f_double(4, total) + f_double(5, sum_squares)
            + f_packed_doubles(6, bucket_limit) + f_packed_doubles(7, bucket))


def tensor_shape(dims: Sequence[int]) -> bytes:
    """``TensorShapeProto{repeated Dim dim=2}``, ``Dim{size=1}``."""
    return b"".join(f_bytes(2, f_int(1, d) if d else b"") for d in dims)


def string_tensor(texts: Sequence[bytes]) -> bytes:
    """``TensorProto{dtype=1: DT_STRING, tensor_shape=2, string_val=8}`` of shape (len(texts),)."""
    return f_int(1, DT_STRING) + f_bytes(2, tensor_shape([len(texts)])) + b"".join(f_bytes(8, t) for t in texts)


#: The empty float tensor that TensorBoard's own hparams summaries carry (hparams/metadata.py).
NULL_TENSOR = f_int(1, DT_FLOAT) + f_bytes(2, tensor_shape([0]))


# google.protobuf.Value{null_value=1, number_value=2, string_value=3, bool_value=4, list_value=6}
def struct_value(v: Any) -> bytes:
    if isinstance(v, bool):
        return f_int(4, int(v))
    if isinstance(v, (int, float)):
        return f_double(2, float(v))
    if isinstance(v, str):
        return f_str(3, v)
    raise TypeError(f"hparams: a value must be a bool, number or str, got {type(v).__name__}")


def list_value(values: Sequence[Any]) -> bytes:
    """``ListValue{repeated Value values=1}``."""
    return b"".join(f_bytes(1, struct_value(v)) for v in values)


# tensorboard.hparams
DATA_TYPE_STRING, DATA_TYPE_BOOL, DATA_TYPE_FLOAT64 = 1, 2, 3
STATUS_SUCCESS = 1


def hparam_info(name: str, data_type: int, domain_discrete: Optional[Sequence[Any]] = None) -> bytes:
    """``HParamInfo{name=1, type=4, domain_discrete=5}``."""
    out = f_str(1, name) + f_int(4, data_type)
    if domain_discrete is not None:
        out += f_bytes(5, list_value(domain_discrete))
    return out


def metric_info(tag: str) -> bytes:
    """``MetricInfo{name=1: MetricName{tag=2}}``."""
    return f_bytes(1, f_str(2, tag))


def hparams_plugin_data(*, experiment: Optional[bytes] = None, session_start_info: Optional[bytes] = None,
                        session_end_info: Optional[bytes] = None) -> bytes:
    """``HParamsPluginData{version=1 (0), experiment=2 | session_start_info=3 | session_end_info=4}``."""
    if experiment is not None:
        return f_bytes(2, experiment)
    if session_start_info is not None:
        return f_bytes(3, session_start_info)
    return f_bytes(4, session_end_info or b"")


def experiment(hparam_infos: Sequence[bytes], metric_infos: Sequence[bytes]) -> bytes:
    """``Experiment{hparam_infos=4, metric_infos=5}``."""
    return b"".join(f_bytes(4, h) for h in hparam_infos) + b"".join(f_bytes(5, m) for m in metric_infos)


def session_start_info(hparams: Sequence[Tuple[str, Any]], start_time_secs: float = 0.0) -> bytes:
    """``SessionStartInfo{hparams=1 (map<string, Value>), start_time_secs=5}``."""
    out = b"".join(f_bytes(1, f_str(1, k) + f_bytes(2, struct_value(v))) for k, v in hparams)
    if start_time_secs:
        out += f_double(5, start_time_secs)
    return out


def session_end_info(status: int = STATUS_SUCCESS, end_time_secs: float = 0.0) -> bytes:
    """``SessionEndInfo{status=1, end_time_secs=2}``."""
    out = f_int(1, status)
    if end_time_secs:
        out += f_double(2, end_time_secs)
    return out
