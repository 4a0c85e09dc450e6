"""Checkpoint files: safetensors, JSON, bincode and manifests."""

from collections.abc import Mapping, Sequence
import os
from typing import Any

import spiraltorch._core
import spiraltorch._core.nn


def save_safetensors(path: str | bytes | os.PathLike[str] | os.PathLike[bytes], tensors: Mapping[str, spiraltorch._core.Tensor] | Sequence[tuple[str, spiraltorch._core.Tensor]] | spiraltorch._core.nn.Module, metadata: dict[str, str] | None = None, *, manifest: bool = False, module_type: str | None = None) -> str | None:
    """
    Writes a state dict (dict, (key, tensor) pairs or a Module) as safetensors atomically (a temporary file, then rename); with manifest=True also writes <path>.manifest.json and returns its path, else returns None. metadata maps str to str (ValueError otherwise); module_type is recorded in the manifest (a Module's class name by default).
    """

def load_safetensors(path: str | bytes | os.PathLike[str] | os.PathLike[bytes], *, copy: bool = True) -> tuple[dict[str, spiraltorch._core.Tensor], dict[str, str]]:
    """
    Reads a .safetensors file, a directory, or a sharded model.safetensors.index.json; returns
    (dict of name -> Tensor, metadata dict). By default (copy=True) the tensors own their memory.
    With copy=False they alias a private copy-on-write memory map of the file: cheap to load, and
    writes never reach the file, but the file must stay unchanged while the tensors live -- truncating
    it makes reads fault (SIGBUS, killing the process) and rewriting it in place changes the tensors.
    """

def save_json(path: str | bytes | os.PathLike[str] | os.PathLike[bytes], tensors: Mapping[str, spiraltorch._core.Tensor] | Sequence[tuple[str, spiraltorch._core.Tensor]] | spiraltorch._core.nn.Module, metadata: dict[str, str] | None = None, *, manifest: bool = True, module_type: str | None = None) -> str | None:
    """
    Writes a state dict (dict, (key, tensor) pairs or a Module) as json atomically (a temporary file, then rename); with manifest=True also writes <path>.manifest.json and returns its path, else returns None. metadata maps str to str (ValueError otherwise); module_type is recorded in the manifest (a Module's class name by default).
    """

def load_json(path: str | bytes | os.PathLike[str] | os.PathLike[bytes]) -> tuple[dict[str, spiraltorch._core.Tensor], dict[str, str]]:
    """
    Reads a json state dict; returns (dict of name -> Tensor, metadata dict). CheckpointError for a truncated or malformed file.
    """

def save_bincode(path: str | bytes | os.PathLike[str] | os.PathLike[bytes], tensors: Mapping[str, spiraltorch._core.Tensor] | Sequence[tuple[str, spiraltorch._core.Tensor]] | spiraltorch._core.nn.Module, metadata: dict[str, str] | None = None, *, manifest: bool = True, module_type: str | None = None) -> str | None:
    """
    Writes a state dict (dict, (key, tensor) pairs or a Module) as bincode atomically (a temporary file, then rename); with manifest=True also writes <path>.manifest.json and returns its path, else returns None. metadata maps str to str (ValueError otherwise); module_type is recorded in the manifest (a Module's class name by default).
    """

def load_bincode(path: str | bytes | os.PathLike[str] | os.PathLike[bytes]) -> tuple[dict[str, spiraltorch._core.Tensor], dict[str, str]]:
    """
    Reads a bincode state dict; returns (dict of name -> Tensor, metadata dict). CheckpointError for a truncated or malformed file.
    """

def safetensors_header(path: str | bytes | os.PathLike[str] | os.PathLike[bytes]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """
    Validates a safetensors file's header without reading tensor data; returns (entries, metadata), each entry a dict with name, dtype, shape and data_offsets. CheckpointError for a malformed header.
    """

def save_safetensors_bytes(tensors: Mapping[str, spiraltorch._core.Tensor] | Sequence[tuple[str, spiraltorch._core.Tensor]] | spiraltorch._core.nn.Module, metadata: dict[str, str] | None = None) -> bytes:
    """
    The safetensors encoding of a state dict as bytes (what save_safetensors would write).
    """

def load_safetensors_bytes(data: bytes | bytearray | memoryview) -> tuple[dict[str, spiraltorch._core.Tensor], dict[str, str]]:
    """
    Decodes safetensors bytes into (dict of name -> Tensor, metadata dict); CheckpointError when malformed.
    """

def load_json_bytes(data: bytes | bytearray | memoryview) -> tuple[dict[str, spiraltorch._core.Tensor], dict[str, str]]:
    """
    Decodes the JSON checkpoint format from bytes into (dict of name -> Tensor, metadata dict); CheckpointError when malformed.
    """

def load_bincode_bytes(data: bytes | bytearray | memoryview) -> tuple[dict[str, spiraltorch._core.Tensor], dict[str, str]]:
    """
    Decodes the bincode checkpoint format from bytes into (dict of name -> Tensor, metadata dict); CheckpointError when malformed.
    """

def temporary_host_tag() -> str:
    """
    The tag (16 hex digits) naming this host and PID namespace in the names of atomic saves' temporaries
    (`.<file>.tmp-<tag>-<pid>-<n>`): only temporaries of this tag whose process is gone, or any a day old,
    are removed by later saves.
    """

def encode_structure(obj: Any) -> tuple[str, dict[str, spiraltorch._core.Tensor]]:
    """
    st.save's encoding of obj (tensors, NumPy arrays and scalars, and dicts, lists, tuples, str, int, float, bool
    and None made of them): returns (structure JSON, {key: Tensor}). TypeError/DtypeError for anything else.
    """

def decode_structure(text: str, tensors: dict[str, spiraltorch._core.Tensor]) -> Any:
    """
    Rebuilds what encode_structure described from its JSON and the file's tensors. Data only: any malformed
    description raises CheckpointError.
    """

def write_manifest(weights_path: str | bytes | os.PathLike[str] | os.PathLike[bytes], format: str, tensors: Mapping[str, spiraltorch._core.Tensor] | Sequence[tuple[str, spiraltorch._core.Tensor]] | spiraltorch._core.nn.Module, module_type: str | None = None, metadata: dict[str, str] | None = None) -> str:
    """
    Writes <weights_path>.manifest.json (format, size and sha256 of the weights, tensor names, dtypes and shapes); returns its path.
    """

def read_manifest(path: str | bytes | os.PathLike[str] | os.PathLike[bytes], verify: bool = True) -> dict[str, Any]:
    """
    Parses <weights>.manifest.json; verify=True also checks the weights' size and sha256.
    """

def manifest_path(weights_path: str | bytes | os.PathLike[str] | os.PathLike[bytes]) -> str:
    """The manifest's path for a weights file: <weights_path>.manifest.json."""

def sha256_file(path: str | bytes | os.PathLike[str] | os.PathLike[bytes]) -> str:
    """The SHA-256 of a file's bytes as 64 hex digits."""

MAX_SAFETENSORS_HEADER: int = 100000000
