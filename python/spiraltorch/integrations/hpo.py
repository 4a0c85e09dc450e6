"""Hyperparameter search with Optuna and Ray Tune around ``spiraltorch.nn.fit``.

Both integrations take a ``build`` function that makes ``(model, loss, optimizer)`` from the
search's suggestions (an ``optuna.Trial`` or a Ray Tune config dict), train with
``nn.fit`` one epoch at a time and report the monitored value ("val_loss" by default,
"train_loss" without validation data) after every epoch:

* Optuna: ``trial.report(value, epoch)``; when the study's pruner says so the trial stops
  with ``optuna.TrialPruned`` (``OptunaPruningCallback``). The objective returns the best value.
* Ray Tune: ``ray.tune.report({monitor: value, "epoch": epoch})`` per epoch, so Tune's
  schedulers (ASHA, median stopping) can stop trials early.
"""

from __future__ import annotations

import math
import os
import pathlib
import sys
from typing import Any, Callable, Dict, Iterable, Optional, Tuple

from .. import _core

Built = Tuple[Any, Any, Any]  # (model, loss, optimizer)


def _optuna() -> Any:
    try:
        import optuna  # type: ignore
    except ImportError as exc:
        raise ImportError("the Optuna integration needs optuna: pip install optuna") from exc
    return optuna


def _monitored(result: Any, monitor: str) -> float:
    if monitor not in ("val_loss", "train_loss"):
        raise _core.SpiralValueError(f"hpo: monitor must be 'val_loss' or 'train_loss', got {monitor!r}")
    value = getattr(result, monitor)
    return float(result.train_loss if value is None else value)


class OptunaPruningCallback:
    """An ``nn.fit`` callback that reports the monitored value to an Optuna trial after each
    epoch and raises ``optuna.TrialPruned`` when the study's pruner decides to stop it."""

    def __init__(self, trial: Any, monitor: str = "val_loss") -> None:
        self.trial, self.monitor = trial, monitor
        self.values: list = []

    def on_epoch_end(self, result: Any, history: Any) -> bool:
        value = _monitored(result, self.monitor)
        self.values.append(value)
        self.trial.report(value if math.isfinite(value) else float("inf"), result.epoch)
        if self.trial.should_prune():
            raise _optuna().TrialPruned(f"pruned at epoch {result.epoch} with {self.monitor}={value:.6g}")
        return False


def optuna_objective(
    build: Callable[[Any], Built],
    train_loader: Iterable,
    val_loader: Optional[Iterable] = None,
    *,
    epochs: int = 5,
    monitor: Optional[str] = None,
) -> Callable[[Any], float]:
    """An Optuna objective: ``build(trial)`` returns ``(model, loss, optimizer)`` (call
    ``trial.suggest_*`` inside), ``nn.fit`` trains for ``epochs`` epochs reporting ``monitor``
    each epoch (pruning works), and the objective returns the best monitored value (minimise)."""
    if epochs < 1:
        raise _core.SpiralValueError(f"optuna_objective: epochs must be >= 1, got {epochs}")
    key = monitor or ("val_loss" if val_loader is not None else "train_loss")
    from ..nn.fit import fit

    def objective(trial: Any) -> float:
        model, loss, optimizer = build(trial)
        callback = OptunaPruningCallback(trial, key)
        fit(model, loss, optimizer, train_loader, epochs=epochs, val_loader=val_loader, callbacks=[callback], progress=False)
        finite = [v for v in callback.values if math.isfinite(v)]
        return min(finite) if finite else float("inf")

    return objective


def optuna_optimize(
    objective: Callable[[Any], float],
    n_trials: int,
    *,
    direction: str = "minimize",
    sampler: Any = None,
    pruner: Any = None,
    seed: Optional[int] = None,
    study_name: Optional[str] = None,
    storage: Optional[str] = None,
    timeout: Optional[float] = None,
) -> Any:
    """Creates an Optuna study (TPE sampler seeded with ``seed`` unless ``sampler`` is given,
    median pruner unless ``pruner`` is given), runs ``n_trials`` trials and returns the study
    (``study.best_params``, ``study.best_value``, ``study.trials``)."""
    optuna = _optuna()
    if n_trials < 1:
        raise _core.SpiralValueError(f"optuna_optimize: n_trials must be >= 1, got {n_trials}")
    study = optuna.create_study(
        direction=direction,
        sampler=sampler if sampler is not None else optuna.samplers.TPESampler(seed=seed),
        pruner=pruner if pruner is not None else optuna.pruners.MedianPruner(n_startup_trials=2, n_warmup_steps=1),
        study_name=study_name,
        storage=storage,
        load_if_exists=storage is not None,
    )
    study.optimize(objective, n_trials=n_trials, timeout=timeout)
    return study


def ray_tune_trainable(
    build: Callable[[Dict[str, Any]], Built],
    data: Callable[[], Tuple[Iterable, Optional[Iterable]]],
    *,
    epochs: int = 5,
    monitor: Optional[str] = None,
) -> Callable[[Dict[str, Any]], None]:
    """A Ray Tune function trainable: in the trial's worker, ``data()`` makes
    ``(train_loader, val_loader or None)``, ``build(config)`` makes ``(model, loss,
    optimizer)`` and each epoch of ``nn.fit`` is reported with ``ray.tune.report``."""
    if epochs < 1:
        raise _core.SpiralValueError(f"ray_tune_trainable: epochs must be >= 1, got {epochs}")
    try:
        from ray import cloudpickle  # type: ignore
    except ImportError as exc:
        raise ImportError("the Ray Tune integration needs ray[tune]: pip install 'ray[tune]'") from exc
    # Ship the user's functions by value: their module (a script, a test file) need not be
    # importable in Ray's worker processes.
    for fn in (build, data):
        module = sys.modules.get(getattr(fn, "__module__", "") or "")
        if module is not None and module.__name__ not in ("__main__", "builtins") and not module.__name__.startswith("spiraltorch"):
            cloudpickle.register_pickle_by_value(module)

    def trainable(config: Dict[str, Any]) -> None:
        from ray import tune  # type: ignore

        from ..nn.fit import Callback, fit

        train_loader, val_loader = data()
        key = monitor or ("val_loss" if val_loader is not None else "train_loss")

        class _Report(Callback):
            def on_epoch_end(self, result: Any, history: Any) -> bool:
                value = _monitored(result, key)
                tune.report({key: value if math.isfinite(value) else float("inf"), "epoch": result.epoch})
                return False

        model, loss, optimizer = build(config)
        fit(model, loss, optimizer, train_loader, epochs=epochs, val_loader=val_loader, callbacks=[_Report()],
            progress=False)

    return trainable


def ray_tune_run(
    trainable: Callable[[Dict[str, Any]], None],
    param_space: Dict[str, Any],
    *,
    metric: str = "val_loss",
    mode: str = "min",
    num_samples: int = 1,
    scheduler: Any = None,
    storage_path: Optional[str] = None,
    max_concurrent_trials: Optional[int] = None,
    init: bool = True,
    num_cpus: Optional[int] = None,
) -> Any:
    """Runs ``tune.Tuner(trainable, param_space=…, tune_config=TuneConfig(metric, mode,
    num_samples, scheduler))`` and returns the ``ResultGrid`` (``.get_best_result()``). With
    ``init`` a local Ray runtime is started when none is (``ray.init`` with this process's
    ``spiraltorch`` on the workers' ``PYTHONPATH``); stop it with ``ray.shutdown()``. Search
    spaces use Tune's own constructors (``tune.grid_search``, ``tune.loguniform``)."""
    try:
        import ray  # type: ignore
        from ray import tune  # type: ignore
    except ImportError as exc:
        raise ImportError("the Ray Tune integration needs ray[tune]: pip install 'ray[tune]'") from exc
    if init and not ray.is_initialized():
        package_root = str(pathlib.Path(__import__("spiraltorch").__file__).resolve().parents[1])
        path = os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH", "")) if p)
        ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False, configure_logging=False,
                 runtime_env={"env_vars": {"PYTHONPATH": path}})
    tuner = tune.Tuner(
        trainable,
        param_space=param_space,
        tune_config=tune.TuneConfig(metric=metric, mode=mode, num_samples=num_samples, scheduler=scheduler,
                                    max_concurrent_trials=max_concurrent_trials),
        run_config=tune.RunConfig(storage_path=storage_path, verbose=0),
    )
    return tuner.fit()


__all__ = ["OptunaPruningCallback", "optuna_objective", "optuna_optimize", "ray_tune_trainable", "ray_tune_run"]
