"""TorchServe: ``.mar`` archives that serve a SpiralTorch model.

``torchserve_archive(model, "name", export_dir, input_shape=(None, 4))`` writes a model
bundle (``model.safetensors`` as the serialized file, ``architecture.json`` and, for Python
modules, the factory file), generates ``spiraltorch_handler.py`` and runs
``torch-model-archiver`` on them. TorchServe's worker imports the handler from the extracted
archive, builds one instance, calls ``initialize(context)`` and then ``handle(batch, context)``
for each batch of requests; ``SpiralTorchHandler`` implements that protocol on SpiralTorch.

Trust: a ``.mar`` archive is code (TorchServe imports its handler), so whether a bundle's
Python factory may run is decided when the archive is built. ``torchserve_archive(factory=...)``
(``spiral-export torchserve --factory``, or ``--bundle`` with ``--trust-code``) names the factory
itself and writes a handler with ``trust_code = True``; otherwise ``SpiralTorchHandler`` loads only
bundles described by data, unless the worker's environment has ``SPIRALTORCH_TRUST_CODE=1``
(TorchServe workers inherit the environment of ``torchserve --start``).

Request bodies are JSON (bytes or already decoded): a nested list, or ``{"inputs": list}``.
A body whose rank is the model input's rank is a batch, one rank less is one sample; all
requests of a TorchServe batch run in one forward pass. Each response is the nested-list
output of that request (one sample in, one sample out).
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import struct
import subprocess
import sys
import tempfile
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from .. import _core
from .._atomic import atomic_write_text
from .architecture import WEIGHTS_FILE, load_model_bundle, read_bundle_meta, save_model_bundle

PathLike = Union[str, "os.PathLike[str]"]

HANDLER_FILE = "spiraltorch_handler.py"
TRUST_ENV = "SPIRALTORCH_TRUST_CODE"
_HANDLER_SOURCE = '''"""TorchServe handler for a SpiralTorch model (written by spiraltorch.integrations.torchserve_archive)."""
from spiraltorch.integrations.torchserve import SpiralTorchHandler


class ModelHandler(SpiralTorchHandler):
    """Serves the model bundle stored in this archive."""
'''
# Added for an archive built with a factory: whoever built it named that code.
_HANDLER_TRUST = '''
    # The archive was built from a factory its builder named (torchserve_archive(factory=...)).
    trust_code = True
'''


def _env_trusts_code() -> bool:
    return os.environ.get(TRUST_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def apply_preprocessing(batch: np.ndarray, preprocessing: Dict[str, Any]) -> np.ndarray:
    """``(x * scale - mean) / std`` with ``mean``/``std`` broadcast along axis 1 (channels) of
    a batch; keys that are absent leave the values unchanged."""
    out = batch
    if "scale" in preprocessing:
        out = out * np.float32(preprocessing["scale"])
    for key, fn in (("mean", np.subtract), ("std", np.divide)):
        if key in preprocessing:
            v = np.asarray(preprocessing[key], dtype=out.dtype)
            if v.ndim == 1 and out.ndim >= 2:
                v = v.reshape((1, -1) + (1,) * (out.ndim - 2))
            out = fn(out, v)
    return out.astype(batch.dtype, copy=False)


class SpiralTorchHandler:
    """TorchServe custom handler (``initialize`` / ``preprocess`` / ``inference`` /
    ``postprocess`` / ``handle``) that runs a SpiralTorch model bundle.

    ``trust_code`` (class attribute, False here): whether a bundle that names a Python factory
    may run it. The handler ``torchserve_archive`` writes for a factory sets it; otherwise
    ``SPIRALTORCH_TRUST_CODE=1`` in the worker's environment allows it."""

    trust_code: bool = False

    def __init__(self) -> None:
        self.initialized = False
        self.model: Any = None
        self.meta: Dict[str, Any] = {}
        self.context: Any = None
        self._sizes: List[Optional[int]] = []

    def initialize(self, context: Any) -> None:
        """Loads the bundle from ``context.system_properties["model_dir"]``; the weights are the
        manifest's ``serializedFile`` (checked against the recorded SHA-256)."""
        model_dir = pathlib.Path(context.system_properties["model_dir"])
        manifest = getattr(context, "manifest", None) or {}
        serialized = manifest.get("model", {}).get("serializedFile", WEIGHTS_FILE)
        self.meta = read_bundle_meta(model_dir)
        if serialized != self.meta["weights"]:
            raise _core.CheckpointError(f"SpiralTorchHandler: archive serves {serialized!r}, bundle records {self.meta['weights']!r}")
        self.model = load_model_bundle(model_dir, trust_code=bool(self.trust_code) or _env_trusts_code())
        self.context = context
        self.initialized = True

    def _decode(self, request: Any) -> np.ndarray:
        body = request.get("data") if isinstance(request, dict) else request
        if body is None and isinstance(request, dict):
            body = request.get("body")
        if isinstance(body, (bytes, bytearray)):
            body = json.loads(body.decode("utf-8"))
        elif isinstance(body, str):
            body = json.loads(body)
        if isinstance(body, dict):
            if "inputs" not in body:
                raise _core.SpiralValueError(f"SpiralTorchHandler: a JSON object body needs an 'inputs' key, got keys {sorted(body)}")
            body = body["inputs"]
        dtype = np.int64 if self.meta.get("input_dtype") == "int64" else np.dtype(self.meta.get("input_dtype", "float32"))
        arr = np.asarray(body, dtype=dtype)
        shape = self.meta.get("input_shape")
        if shape is not None:
            if arr.ndim == len(shape) - 1:
                arr = arr[None]
                self._sizes.append(None)
            elif arr.ndim == len(shape):
                self._sizes.append(arr.shape[0])
            else:
                raise _core.ShapeError(f"SpiralTorchHandler: request of shape {arr.shape} does not match the model input "
                                       f"{['batch' if d is None else d for d in shape]}")
            for got, want in zip(arr.shape[1:], shape[1:]):
                if want is not None and got != want:
                    raise _core.ShapeError(f"SpiralTorchHandler: request of shape {arr.shape} does not match the model "
                                           f"input {['batch' if d is None else d for d in shape]}")
        else:
            self._sizes.append(arr.shape[0] if arr.ndim else None)
        return arr

    def preprocess(self, data: Sequence[Any]) -> Any:
        """Decodes every request of the batch, stacks them and applies the bundle's preprocessing."""
        self._sizes = []
        arrays = [self._decode(request) for request in data]
        batch = np.concatenate(arrays, axis=0) if len(arrays) > 1 else arrays[0]
        batch = apply_preprocessing(batch, self.meta.get("preprocessing", {}))
        return _core.tensor(np.ascontiguousarray(batch))

    def inference(self, data: Any) -> Any:
        """One eval-mode forward pass without autograd."""
        from ..autograd import no_grad

        with no_grad():
            out = self.model(data)
        return out[0] if isinstance(out, tuple) else out

    def postprocess(self, data: Any) -> List[Any]:
        """Splits the batch output back into one nested list per request."""
        out = data.numpy()
        responses, start = [], 0
        for size in self._sizes:
            if size is None:
                responses.append(out[start].tolist())
                start += 1
            else:
                responses.append(out[start:start + size].tolist())
                start += size
        return responses

    def handle(self, data: Any, context: Any) -> Optional[List[Any]]:
        """TorchServe's entry point: preprocess, inference, postprocess."""
        if not self.initialized:
            self.initialize(context)
        if data is None:
            return None
        return self.postprocess(self.inference(self.preprocess(data)))


def _archiver_command() -> List[str]:
    exe = shutil.which("torch-model-archiver")
    if exe is not None:
        return [exe]
    try:
        import model_archiver  # noqa: F401  # type: ignore
    except ImportError as exc:
        raise ImportError("torchserve_archive needs torch-model-archiver: pip install torch-model-archiver") from exc
    return [sys.executable, "-m", "model_archiver.model_packaging"]


def torchserve_archive(
    model: Any,
    model_name: str,
    export_path: PathLike,
    *,
    version: str = "1.0",
    input_shape: Optional[Sequence[Optional[int]]] = None,
    input_dtype: str = "float32",
    preprocessing: Optional[Dict[str, Any]] = None,
    factory: Optional[str] = None,
    extra_files: Sequence[PathLike] = (),
    requirements_file: Optional[PathLike] = None,
    force: bool = False,
) -> pathlib.Path:
    """Builds ``<export_path>/<model_name>.mar`` with ``torch-model-archiver``: the model's
    safetensors weights as the serialized file, its architecture (or ``factory`` file for a
    Python module), the generated handler and ``extra_files``. ``input_shape`` (``None`` for
    the batch axis) lets the handler tell one sample from a batch. With ``factory`` (code you
    name) the handler is written with ``trust_code = True`` so the server runs it. Returns the
    archive path; raises ``FileExistsError`` when it exists and ``force`` is false,
    ``SpiralError`` with the archiver's output when it fails."""
    if not model_name or any(c in model_name for c in "/\\ "):
        raise _core.SpiralValueError(f"torchserve_archive: invalid model name {model_name!r}")
    out_dir = pathlib.Path(export_path)
    target = out_dir / f"{model_name}.mar"
    if target.exists() and not force:
        raise FileExistsError(f"torchserve_archive: {str(target)!r} exists (pass force=True to replace it)")
    command = _archiver_command()
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="spiral-mar-") as tmp:
        bundle = save_model_bundle(model, pathlib.Path(tmp) / "bundle", input_shape=input_shape, input_dtype=input_dtype,
                                   preprocessing=preprocessing, factory=factory)
        handler = pathlib.Path(tmp) / HANDLER_FILE
        atomic_write_text(handler, _HANDLER_SOURCE + (_HANDLER_TRUST if factory is not None else ""))
        extras = [str(p) for p in sorted(bundle.iterdir()) if p.name != WEIGHTS_FILE] + [str(p) for p in extra_files]
        cmd = command + ["--model-name", model_name, "--version", str(version), "--serialized-file",
                         str(bundle / WEIGHTS_FILE), "--handler", str(handler), "--extra-files", ",".join(extras),
                         "--export-path", str(out_dir)]
        if requirements_file is not None:
            cmd += ["--requirements-file", str(requirements_file)]
        if force:
            cmd.append("--force")
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0 or not target.is_file():
            raise _core.SpiralError(f"torchserve_archive: torch-model-archiver exited with {proc.returncode}: "
                                    f"{(proc.stderr or proc.stdout).strip()[-2000:]}")
    return target


def _decode_predict_response(msg: bytes) -> Tuple[int, str, List[Tuple[int, Any]]]:
    """Parses TorchServe's binary predict response (``ts.protocol.otf_message_handler``):
    overall code and message, then per request: id, content type, status, phrase, headers, body."""
    pos = 0

    def i32() -> int:
        nonlocal pos
        (value,) = struct.unpack_from("!i", msg, pos)
        pos += 4
        return value

    def blob() -> bytes:
        nonlocal pos
        n = i32()
        out = bytes(msg[pos:pos + n])
        pos += n
        return out

    code = i32()
    message = blob().decode()
    results: List[Tuple[int, Any]] = []
    while True:
        n = i32()
        if n == -1:
            break
        pos += n  # request id
        blob()  # content type
        status = i32()
        blob()  # reason phrase
        for _ in range(i32()):
            blob()
            blob()
        body = blob()
        try:
            results.append((status, json.loads(body)))
        except ValueError:
            results.append((status, body.decode("utf-8", "replace")))
    return code, message, results


def torchserve_predict(archive: PathLike, bodies: Sequence[Any], *, batch_size: Optional[int] = None) -> List[Tuple[int, Any]]:
    """Serves ``archive`` (a .mar file) in this process the way TorchServe's Python worker
    does: extracts it, loads the handler through ``ts.model_loader`` with TorchServe's metrics
    cache, sends ``bodies`` (JSON-able values or bytes) as one batch of requests through
    ``Service.predict`` and decodes the binary response. Returns ``(status, value)`` per
    request: 200 and the decoded JSON output, or TorchServe's error code and message. Needs
    the ``torchserve`` package; no server or Java process is started."""
    try:
        import ts  # type: ignore
        from ts.metrics.metric_cache_yaml_impl import MetricsCacheYamlImpl  # type: ignore
        from ts.model_loader import ModelLoaderFactory  # type: ignore
    except ImportError as exc:
        raise ImportError("torchserve_predict needs the torchserve package: pip install torchserve") from exc
    import zipfile

    with tempfile.TemporaryDirectory(prefix="spiral-ts-") as tmp:
        with zipfile.ZipFile(archive) as z:
            z.extractall(tmp)
        manifest = json.loads((pathlib.Path(tmp) / "MAR-INF" / "MANIFEST.json").read_text())
        handler = manifest["model"]["handler"]
        metrics = MetricsCacheYamlImpl(config_file_path=os.path.join(os.path.dirname(ts.__file__), "configs", "metrics.yaml"))
        metrics.initialize_cache()
        sys.path.insert(0, tmp)
        module_name = pathlib.Path(handler).stem
        try:
            sys.modules.pop(module_name, None)
            service = ModelLoaderFactory.get_model_loader().load(
                manifest["model"]["modelName"], tmp, handler, None, batch_size or len(bodies), metrics_cache=metrics)
            service.set_cl_socket(None)
            batch = []
            for i, body in enumerate(bodies):
                value = body if isinstance(body, (bytes, bytearray)) else json.dumps(body).encode()
                batch.append({"requestId": str(i).encode(), "parameters": [
                    {"name": "body", "contentType": "application/json", "value": value}]})
            code, message, results = _decode_predict_response(service.predict(batch))
        finally:
            sys.path.remove(tmp)
            sys.modules.pop(module_name, None)
    if not results:
        raise _core.SpiralError(f"torchserve_predict: TorchServe answered {code} {message!r} with no results")
    return [(status if code == 200 else code, value if code == 200 else message) for status, value in results]


__all__ = ["HANDLER_FILE", "SpiralTorchHandler", "apply_preprocessing", "torchserve_archive", "torchserve_predict"]
