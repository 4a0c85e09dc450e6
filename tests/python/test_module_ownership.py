"""Modules created from Python and handed to C++ paths that walk the tree (the original's
ownership bugs): modules()/named_modules() of Python-owned roots, ModuleTrainer's curvature
scheduler and mul_learning_rate on Python modules, a Python module held only by a native container."""

import math

import pytest

import spiraltorch as st
from spiraltorch import nn


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 3)
        self.b = nn.Sequential(nn.ReLU(), nn.Linear(3, 1))

    def forward(self, x):
        return self.b(self.a(x))


@pytest.mark.parametrize("make", [lambda: nn.Linear(2, 2), lambda: nn.Sequential(nn.Linear(2, 2)),
                                  lambda: nn.LSTM(2, 3), Small])
def test_modules_of_python_owned_roots(make):
    m = make()
    assert next(m.modules()) is m
    assert len(list(m.named_modules())) == len(list(m.modules()))


def test_trainer_curvature_scheduler_and_mul_learning_rate_on_python_modules():
    st.manual_seed(0)
    model = Small()
    model.attach_hypergrad(curvature=-1.0, learning_rate=0.05)
    trainer = nn.ModuleTrainer(fallback_learning_rate=0.1)
    trainer.enable_curvature_scheduler(nn.CurvatureScheduler(initial=-1.0, target_pressure=1e-6, step=0.2))
    x, y = st.randn(8, 2), st.randn(8, 1)
    stats = trainer.train_epoch(model, lambda p, t: ((p - t) ** 2).mean(), [(x, y)] * 3, trainer.roundtable(8, 1))
    assert stats.batches == 3 and math.isfinite(stats.average_loss)
    assert trainer.curvature != -1.0  # the scheduler moved it and re-attached it on every submodule
    assert all(m.hypergrad is None or m.hypergrad[0] == trainer.curvature for m in model.modules())
    trainer.mul_learning_rate(model, 0.5)
    assert model.a.hypergrad[1] == pytest.approx(0.025)
    assert model.b[1].hypergrad[1] == pytest.approx(0.025)


def test_python_module_held_only_by_a_native_container_stays_alive():
    import gc

    seq = nn.Sequential(Small())
    gc.collect()
    child = seq[0]
    assert isinstance(child, Small) and child.a.in_features == 2
    assert seq(st.ones(1, 2)).shape == (1, 1)
    assert list(seq.modules())[1] is child
