"""BentoML: SpiralTorch models in the BentoML model store, served by a runner and a service.

``bentoml_save_model(model, "name")`` creates a model in the local store
(``bentoml.models.create``; the store lives under ``$BENTOML_HOME``) holding a SpiralTorch
model bundle (safetensors weights + architecture). ``bentoml_load_model(tag)`` rebuilds it; a
model saved with a Python ``factory`` runs that code when loaded, so loading it (and the runner
and service built on it) needs ``trust_code=True``, as for ``load_model_bundle``.
``bentoml_runner(tag)`` is a (legacy API) ``bentoml.Runner`` whose ``predict`` method runs the
model on a batch; ``bentoml_service(tag)`` is a BentoML service class with a ``/predict``
endpoint that takes ``{"inputs": nested list}`` and returns the nested-list output, ready for
``bentoml serve`` or, in tests, ``starlette.testclient.TestClient(service.to_asgi())``.
"""

from __future__ import annotations

import pathlib
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from .. import _core
from .architecture import load_model_bundle, read_bundle_meta, save_model_bundle

MODULE_NAME = "spiraltorch.integrations.bento"


def _bentoml() -> Any:
    try:
        import bentoml  # type: ignore
    except ImportError as exc:
        raise ImportError("the BentoML integration needs bentoml: pip install bentoml") from exc
    return bentoml


def bentoml_save_model(
    model: Any,
    name: str,
    *,
    input_shape: Optional[Sequence[Optional[int]]] = None,
    input_dtype: str = "float32",
    preprocessing: Optional[Dict[str, Any]] = None,
    factory: Optional[str] = None,
    labels: Optional[Dict[str, str]] = None,
    metadata: Optional[Dict[str, Any]] = None,
) -> Any:
    """Saves ``model`` as a new version of ``name`` in the BentoML model store and returns the
    ``bentoml.Model`` (``.tag`` names the version). The model directory holds the SpiralTorch
    bundle; ``metadata`` gains the parameter count and the state-dict hash."""
    bentoml = _bentoml()
    state = model.state_dict()
    meta = dict(metadata or {})
    meta.setdefault("parameters", int(sum(int(np.prod(p.shape)) for p in model.parameters())))
    meta.setdefault("state_dict_sha256", _core.nn.state_dict_hash(state))
    meta.setdefault("spiraltorch_version", getattr(__import__("spiraltorch"), "__version__", ""))
    context = bentoml.models.ModelContext(framework_name="spiraltorch",
                                          framework_versions={"spiraltorch": meta["spiraltorch_version"]})
    with bentoml.models.create(name, labels=labels, metadata=meta, module=MODULE_NAME, context=context) as bento_model:
        save_model_bundle(model, bento_model.path, input_shape=input_shape, input_dtype=input_dtype,
                          preprocessing=preprocessing, factory=factory)
    # The object ``create`` yields points at its staging directory; return the stored model.
    return bentoml.models.get(bento_model.tag)


def bentoml_load_model(tag: Any, *, trust_code: bool = False) -> Any:
    """The SpiralTorch module stored under ``tag`` (``"name"`` for the latest version,
    ``"name:version"`` or a ``bentoml.Model``), in eval mode. A model saved with a factory is
    refused with ``CheckpointError`` unless ``trust_code=True`` (its factory runs Python code)."""
    bentoml = _bentoml()
    bento_model = tag if hasattr(tag, "path") and hasattr(tag, "tag") else bentoml.models.get(tag)
    if bento_model.info.module != MODULE_NAME:
        raise _core.SpiralValueError(f"bentoml_load_model: {bento_model.tag} was saved by {bento_model.info.module!r}, "
                                     f"not {MODULE_NAME!r}")
    return load_model_bundle(bento_model.path, trust_code=trust_code)


def _predict(model: Any, meta: Dict[str, Any], inputs: Any) -> List[Any]:
    from ..autograd import no_grad
    from .torchserve import apply_preprocessing

    dtype = np.dtype(meta.get("input_dtype", "float32"))
    arr = np.asarray(inputs, dtype=dtype)
    shape = meta.get("input_shape")
    if shape is not None and (arr.ndim != len(shape) or any(w is not None and g != w for g, w in zip(arr.shape[1:], shape[1:]))):
        raise _core.ShapeError(f"bentoml predict: inputs of shape {arr.shape} do not match the model input "
                               f"{['batch' if d is None else d for d in shape]}")
    arr = apply_preprocessing(arr, meta.get("preprocessing", {}))
    with no_grad():
        out = model(_core.tensor(np.ascontiguousarray(arr)))
    out = out[0] if isinstance(out, tuple) else out
    return out.numpy().tolist()


def bentoml_runner(tag: Any, *, name: Optional[str] = None, trust_code: bool = False) -> Any:
    """A ``bentoml.Runner`` (legacy runner API) serving the stored model: ``predict`` takes a
    batch (array or nested list) and returns the output as a nested list. Call
    ``runner.init_local()`` to run it in this process (tests, notebooks). ``trust_code``: as
    for ``bentoml_load_model``."""
    bentoml = _bentoml()
    from bentoml.legacy import Runnable, Runner  # type: ignore

    bento_model = bentoml.models.get(tag)

    class SpiralTorchRunnable(Runnable):
        SUPPORTED_RESOURCES = ("cpu",)
        SUPPORTS_CPU_MULTI_THREADING = True

        def __init__(self) -> None:
            self.model = bentoml_load_model(bento_model, trust_code=trust_code)
            self.meta = read_bundle_meta(bento_model.path)

        @Runnable.method(batchable=True, batch_dim=0)
        def predict(self, inputs: Any) -> Any:
            return np.asarray(_predict(self.model, self.meta, inputs), dtype=np.float32)

    return Runner(SpiralTorchRunnable, name=name or f"{bento_model.tag.name}_runner", models=[bento_model])


def bentoml_service(tag: Any, *, name: Optional[str] = None, trust_code: bool = False) -> Any:
    """A BentoML service class (``@bentoml.service``) for the stored model with one API,
    ``predict(inputs: list) -> list``, exposed as ``POST /predict`` taking
    ``{"inputs": nested list}``. The model is loaded when the service starts. ``trust_code``:
    as for ``bentoml_load_model``."""
    bentoml = _bentoml()
    bento_model = bentoml.models.get(tag)
    service_name = name or f"{bento_model.tag.name}_service"

    class SpiralTorchService:
        model_ref = bentoml.models.BentoModel(str(bento_model.tag))

        def __init__(self) -> None:
            ref = self.model_ref  # BentoML resolves the reference to the stored model
            path = pathlib.Path(ref.path if hasattr(ref, "path") else ref.stored.path)
            self.model = load_model_bundle(path, trust_code=trust_code)
            self.meta = read_bundle_meta(path)

        @bentoml.api
        def predict(self, inputs: List[Any]) -> List[Any]:
            """Runs the model on a batch given as a nested list; returns the nested-list output.
            Inputs of the wrong shape or type answer 400 with the reason."""
            from bentoml.exceptions import InvalidArgument  # type: ignore

            try:
                return _predict(self.model, self.meta, inputs)
            except (ValueError, TypeError) as exc:
                raise InvalidArgument(str(exc)) from exc

    SpiralTorchService.__name__ = SpiralTorchService.__qualname__ = service_name
    return bentoml.service(SpiralTorchService, name=service_name)


__all__ = ["MODULE_NAME", "bentoml_save_model", "bentoml_load_model", "bentoml_runner", "bentoml_service"]
