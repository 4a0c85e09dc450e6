"""The one training engine (include/spiraltorch/optim/training_engine.h) is what nn.fit, ModuleTrainer,
ZSpaceTrainer and the Z-space sessions run: each front-end's steps arrive as the engine's TrainerStep
events with its source, carrying the losses the front-end reports, and nn.fit equals a hand-written
float64 loop step by step."""

import math

import numpy as np
import pytest

import spiraltorch as st
from spiraltorch import nn, plugin


def _data():
    x = st.tensor([[0.5, -0.2], [0.1, 0.4], [-0.3, 0.6], [0.8, 0.1], [0.2, 0.2], [-0.5, -0.1]], dtype=st.float64)
    y = st.tensor([[0.29], [0.05], [-0.11], [0.32], [0.12], [-0.03]], dtype=st.float64)
    return [(x[:3], y[:3]), (x[3:], y[3:])]


def _linear():
    m = nn.Linear(2, 1)
    m.to(st.float64)
    with st.no_grad():
        m.weight.copy_(st.tensor([[0.05, 0.02]], dtype=st.float64))
        m.bias.copy_(st.tensor([0.0], dtype=st.float64))
    return m


class _Events:
    """Collects the engine's events for the length of a with block."""

    def __init__(self, *types):
        self.types, self.seen = types, []

    def __enter__(self):
        self.subs = plugin.subscribe_many(self.types, self.seen.append)
        return self

    def __exit__(self, *exc):
        plugin.unsubscribe_many(self.subs)

    def steps(self, source):
        return [e for e in self.seen if e["type"] == "TrainerStep" and e["source"] == source]


def test_fit_equals_a_hand_written_float64_loop_step_by_step():
    model, hand = _linear(), _linear()
    loader = _data()
    with _Events("TrainerStep") as ev:
        history = nn.fit(model, nn.MSELoss(), st.optim.SGD(model.parameters(), lr=0.2), loader, epochs=15,
                         progress=False)
    opt = st.optim.SGD(hand.parameters(), lr=0.2)
    losses = []
    for _ in range(15):
        for x, y in loader:
            opt.zero_grad()
            loss = nn.MSELoss()(hand(x), y)
            losses.append(loss.item())
            loss.backward()
            opt.step()
    steps = ev.steps("fit")
    assert [e["loss"] for e in steps] == losses  # exactly, step by step
    assert [e["step"] for e in steps] == list(range(1, 31))
    assert model.weight.tolist() == hand.weight.tolist() and model.bias.tolist() == hand.bias.tolist()
    assert [r.train_loss for r in history.epochs] == [(losses[2 * i] + losses[2 * i + 1]) / 2 for i in range(15)]
    assert history.epochs[-1].train_loss < 0.1 * history.epochs[0].train_loss


def test_fit_epoch_events_validation_and_python_parts():
    model = _linear()
    loader = _data()

    def py_loss(p, t):  # a Python loss and a Python optimizer go through Python, the loop stays native
        return ((p - t) ** 2).mean()

    class PyOpt:
        def __init__(self, params):
            self.inner = st.optim.SGD(params, lr=0.2)
            self.calls = 0

        def zero_grad(self):
            self.inner.zero_grad()

        def step(self):
            self.calls += 1
            return self.inner.step()

    opt = PyOpt(model.parameters())
    with _Events("EpochStart", "EpochEnd", "TrainerStep") as ev:
        history = nn.fit(model, py_loss, opt, loader, epochs=3, val_loader=loader[:1], progress=False)
    assert opt.calls == 6
    kinds = [(e["type"], e["epoch"]) for e in ev.seen if e["source"] == "fit"]
    assert kinds[:4] == [("EpochStart", 1), ("TrainerStep", 1), ("TrainerStep", 1), ("EpochEnd", 1)]
    ends = [e for e in ev.seen if e["type"] == "EpochEnd"]
    assert [e["val_loss"] for e in ends] == [r.val_loss for r in history.epochs]
    assert history.best_epoch == 3 and history.best_score == history.epochs[-1].val_loss


def test_each_front_end_runs_on_the_engine():
    x, y = _data()[0]
    with _Events("TrainerStep", "EpochEnd") as ev:
        trainer = nn.ModuleTrainer(fallback_learning_rate=0.1, progress=False)
        stats = trainer.train_epoch(_linear(), nn.MSELoss(), _data(), trainer.roundtable(3, 1))
        session = st.AmegagradSession(_linear(), nn.MSELoss(), z_dim=0)
        out = session.step(x, y)
        hyper = st.HypergradSession(_linear(), nn.MSELoss(), z_dim=0)
        hout = hyper.step(x, y)
        z = st.ZSpaceTrainer(z_dim=4)
        objective = z.step({"speed": 0.2, "memory": 0.1, "stability": 0.9})
    mt = ev.steps("ModuleTrainer")
    assert len(mt) == 2 and sum(e["loss"] for e in mt) == pytest.approx(stats.total_loss, rel=1e-15)
    assert all("band_above" in e for e in mt)
    assert [e["loss"] for e in ev.steps("AmegagradSession")] == [out["loss"]]
    assert [e["loss"] for e in ev.steps("HypergradSession")] == [hout["loss"]]
    (zs,) = ev.steps("ZSpaceTrainer")
    assert zs["loss"] == objective and zs["z_norm"] == pytest.approx(math.sqrt(sum(v * v for v in z.state)))
    (end,) = [e for e in ev.seen if e["type"] == "EpochEnd"]
    assert end["source"] == "ModuleTrainer" and end["loss"] == pytest.approx(stats.average_loss)


def test_session_skip_is_the_engine_skip():
    session = st.AmegagradSession(_linear(), lambda p, t: p.sum() * float("nan"), z_dim=0)
    x, y = _data()[0]
    with _Events("TrainerStep") as ev:
        out = session.step(x, y)
    (e,) = ev.steps("AmegagradSession")
    assert e["skipped"] and e["skip_reason"] == "non-finite loss" and out["notes"] == ["skipped: non-finite loss"]


def test_early_stopping_and_evaluate_are_the_engine_s():
    stop = nn.EarlyStopping(patience=1, min_delta=0.1, monitor="train_loss")
    result = nn.EpochResult(epoch=1, train_loss=1.0, seconds=0.0)
    assert not stop.on_epoch_end(result, nn.FitHistory()) and stop.best == 1.0
    result.train_loss = 0.95
    assert not stop.on_epoch_end(result, nn.FitHistory()) and stop.stale == 1
    assert stop.on_epoch_end(result, nn.FitHistory()) and stop.patience == 1
    with pytest.raises(st.SpiralValueError, match="patience must be >= 0"):
        nn.EarlyStopping(patience=-1)
    model = nn.Linear(2, 2)
    with st.no_grad():
        model.weight.copy_(st.tensor([[1.0, 0.0], [0.0, 1.0]]))
        model.bias.copy_(st.tensor([0.0, 0.0]))
    x = st.tensor([[1.0, 0.0], [0.0, 1.0], [2.0, 1.0], [0.0, 3.0]])
    y = st.tensor([0, 1, 1, 1], dtype=st.int64)
    metrics = nn.evaluate(model, nn.CrossEntropyLoss(), [(x, y)])
    assert metrics["accuracy"] == 0.75 and model.training
    np.testing.assert_allclose(metrics["loss"], nn.CrossEntropyLoss()(model(x), y).item(), rtol=1e-7)
    assert nn.evaluate(model, nn.CrossEntropyLoss(), []) == {"loss": None, "accuracy": None}


def test_fit_gives_a_python_model_its_multi_input_batches_as_they_came():
    """A two-input Python model gets the loader's (x1, x2) tuple, not a stacked tensor; the engine counts
    the batch's samples by its target; evaluate does the same."""

    class TwoInputs(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = _linear(), _linear()

        def forward(self, inputs):
            assert isinstance(inputs, tuple) and len(inputs) == 2
            x1, x2 = inputs
            return self.a(x1) + self.b(x2)

    (x, y), (x2, y2) = _data()
    loader = [((x, x * 2.0), y), ((x2, x2 * 2.0), y2)]
    model = TwoInputs()
    with _Events("TrainerStep") as ev:
        history = nn.fit(model, nn.MSELoss(), st.optim.SGD(model.parameters(), lr=0.1), loader, epochs=20,
                         progress=False)
    steps = ev.steps("fit")
    assert len(steps) == 40
    assert history.epochs[-1].train_loss < 0.2 * history.epochs[0].train_loss
    # The same sum of two linear maps computed by hand from the trained weights.
    with st.no_grad():
        expected = model.a(x) + model.b(x * 2.0)
    assert np.allclose(model((x, x * 2.0)).tolist(), expected.tolist())
    assert nn.evaluate(model, nn.MSELoss(), loader)["loss"] == pytest.approx(
        (nn.MSELoss()(model((x, x * 2.0)), y).item() + nn.MSELoss()(model((x2, x2 * 2.0)), y2).item()) / 2)
