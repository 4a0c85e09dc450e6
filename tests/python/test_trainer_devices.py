"""ModuleTrainer(backend=...) on the devices this build has: "wgpu" and "cuda" move the module and
every batch to that device and train to the CPU trainer's losses; an unusable device is refused
with DeviceUnavailableError naming why."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
from spiraltorch import nn


def train(backend, epochs=4):
    st.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8, name="a"), nn.ReLU(), nn.Linear(8, 1, name="b"))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 4)).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0], [0.5], [0.0]], np.float32)
    batches = [(st.tensor(x[i:i + 16]), st.tensor(y[i:i + 16])) for i in range(0, 64, 16)]
    trainer = nn.ModuleTrainer(backend=backend, curvature=-1.0, hyper_learning_rate=0.05, fallback_learning_rate=0.05)
    trainer.prepare(model)

    def mse(p, t):
        return ((p - t) ** 2).mean()

    losses = [trainer.train_epoch(model, mse, batches, trainer.roundtable(16, 1)).average_loss for _ in range(epochs)]
    evaluated = trainer.evaluate_epoch(model, mse, batches).average_loss
    return trainer, model, losses, evaluated


@pytest.mark.parametrize("backend", ["wgpu", "cuda"])
def test_trainer_on_a_device_matches_the_cpu(backend):
    available = st.wgpu.is_available() if backend == "wgpu" else st.cuda.is_available()
    if not available:
        with pytest.raises(st.DeviceUnavailableError, match=f"backend '{backend}' is not available: .+"):
            nn.ModuleTrainer(backend=backend)
        return
    _, _, cpu_losses, cpu_eval = train("cpu")
    trainer, model, losses, evaluated = train(backend)
    assert trainer.effective_backend.startswith(backend)
    assert all(str(p.device).startswith(backend) for p in model.parameters())
    assert losses[-1] < losses[0]
    np.testing.assert_allclose(losses, cpu_losses, rtol=1e-4)
    assert evaluated == pytest.approx(cpu_eval, rel=1e-4)


def test_unknown_and_absent_backends():
    with pytest.raises(ValueError, match="unknown backend 'tpu'"):
        nn.ModuleTrainer(backend="tpu")
    with pytest.raises(st.DeviceUnavailableError, match="'mps' is not available"):
        nn.ModuleTrainer(backend="mps")
    assert nn.ModuleTrainer(backend="auto").effective_backend == "cpu"
