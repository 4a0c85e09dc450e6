"""Deployment and optimisation bridges (``spiraltorch.integrations``).

Each bridge imports its framework only when called, so none of them is a dependency of
``spiraltorch`` itself:

* ``torchserve_archive`` / ``SpiralTorchHandler`` / ``torchserve_predict``: TorchServe ``.mar``
  archives (``torch-model-archiver``) whose handler runs SpiralTorch;
* ``bentoml_save_model`` / ``bentoml_load_model`` / ``bentoml_runner`` / ``bentoml_service``:
  the BentoML model store, a runner and a service;
* ``optuna_objective`` / ``optuna_optimize`` / ``OptunaPruningCallback``: Optuna studies around
  ``nn.fit`` with per-epoch reports and pruning; ``ray_tune_trainable`` / ``ray_tune_run``: Ray Tune;
* ``export_onnx`` / ``verify_onnx``: real ONNX graphs checked against onnxruntime;
* ``deployment_card``: the deployment JSON (inputs, outputs, dtypes, preprocessing, checksums);
* ``save_model_bundle`` / ``load_model_bundle``: weights + architecture, what servers rebuild.

The ``spiral-export`` command line (``spiraltorch.export_cli``) drives the export side.
"""

from .architecture import (
    SUPPORTED_LAYERS,
    UnsupportedLayerError,
    build_from_architecture,
    describe_architecture,
    load_model_bundle,
    save_model_bundle,
)
from .bento import bentoml_load_model, bentoml_runner, bentoml_save_model, bentoml_service
from .hpo import OptunaPruningCallback, optuna_objective, optuna_optimize, ray_tune_run, ray_tune_trainable
from .model_card import deployment_card, verify_deployment_card, write_deployment_card
from .onnx_export import EXPORTABLE_LAYERS, export_onnx, verify_onnx
from .torchserve import SpiralTorchHandler, torchserve_archive, torchserve_predict

__all__ = [
    "SUPPORTED_LAYERS",
    "EXPORTABLE_LAYERS",
    "UnsupportedLayerError",
    "describe_architecture",
    "build_from_architecture",
    "save_model_bundle",
    "load_model_bundle",
    "export_onnx",
    "verify_onnx",
    "deployment_card",
    "write_deployment_card",
    "verify_deployment_card",
    "torchserve_archive",
    "torchserve_predict",
    "SpiralTorchHandler",
    "bentoml_save_model",
    "bentoml_load_model",
    "bentoml_runner",
    "bentoml_service",
    "OptunaPruningCallback",
    "optuna_objective",
    "optuna_optimize",
    "ray_tune_trainable",
    "ray_tune_run",
]
