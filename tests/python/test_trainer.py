"""ModuleTrainer, roundtable bands, hypergrad (Poincare-ball RSGD), nn.fit and the zoo."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest

import spiraltorch as st
from spiraltorch import nn

from conftest import PY_DIR

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_example(*parts: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PY_DIR, env.get("PYTHONPATH", "")) if p)
    return subprocess.run([sys.executable, os.path.join(ROOT, "examples", *parts)], capture_output=True, text=True,
                          timeout=120, env=env)


def mse(pred, target):
    return ((pred - target) ** 2).mean()


def test_roundtable_bands_rank_by_magnitude():
    trainer = nn.ModuleTrainer()
    schedule = trainer.roundtable(1, 6, nn.RoundtableConfig(top_k=2, mid_k=1, bottom_k=2, here_tolerance=1e-3))
    g = st.tensor([[0.5, -3.0, 0.1, 2.0, -0.2, 0.0]])
    # Beneath takes the two smallest |g| of the rest (0.0 and 0.1); entries within the
    # tolerance are then forced back to Here.
    assert schedule.classify(g) == ["here", "above", "beneath", "above", "here", "here"]
    above, here, beneath = schedule.band_energy(g)
    assert above == pytest.approx(5.0) and here == pytest.approx(0.7) and beneath == pytest.approx(0.1)


def test_default_roundtable_is_plain_sgd():
    """With band weights (1, 1, 1) and no hypergrad, one epoch equals manual SGD."""
    st.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 2, name="a"))
    ref = {k: v.clone() for k, v in model.state_dict().items()}
    x, y = st.randn(4, 3), st.randn(4, 2)
    trainer = nn.ModuleTrainer(fallback_learning_rate=0.1)
    stats = trainer.train_epoch(model, mse, [(x, y)], trainer.roundtable(4, 2))
    w, b = ref["a::weight"].requires_grad_(), ref["a::bias"].requires_grad_()
    loss = mse(x @ w.T + b, y)
    loss.backward()
    assert stats.batches == 1 and stats.average_loss == pytest.approx(loss.item(), rel=1e-6)
    assert st.allclose(model.state_dict()["a::weight"], (w - 0.1 * w.grad).detach(), atol=1e-6)
    assert st.allclose(model.state_dict()["a::bias"], (b - 0.1 * b.grad).detach(), atol=1e-6)


def test_band_weights_scale_gradient():
    st.manual_seed(1)
    model = nn.Sequential(nn.Linear(2, 1, name="a"))
    start = {k: v.clone() for k, v in model.state_dict().items()}
    x, y = st.randn(8, 2), st.randn(8, 1)
    trainer = nn.ModuleTrainer(fallback_learning_rate=0.1)
    cfg = nn.RoundtableConfig(top_k=8, mid_k=1, bottom_k=1, band_weights=(0.0, 1.0, 1.0))
    trainer.train_epoch(model, mse, [(x, y)], trainer.roundtable(8, 8, cfg))
    # Every output-gradient entry is in the Above band, weighted 0: nothing moves.
    for k, v in model.state_dict().items():
        assert st.allclose(v, start[k])


def test_hypergrad_step_stays_in_ball_and_reduces_loss():
    st.manual_seed(2)
    model = nn.Sequential(nn.Linear(4, 3, name="h"))
    model.attach_hypergrad(curvature=-1.0, learning_rate=0.05)
    trainer = nn.ModuleTrainer(curvature=-1.0, hyper_learning_rate=0.05, fallback_learning_rate=0.05)
    x, y = st.randn(16, 4), st.randn(16, 3) * 0.3
    schedule = trainer.roundtable(16, 3)
    losses = [trainer.train_epoch(model, mse, [(x, y)], schedule).average_loss for _ in range(30)]
    assert losses[-1] < losses[0]
    w = model.state_dict()["h::weight"]
    assert float((w * w).sum(dim=1).max().item()) < 1.0


def test_nonfinite_loss_is_skipped_and_weights_untouched():
    model = nn.Sequential(nn.Linear(2, 1, name="a"))
    before = {k: v.clone() for k, v in model.state_dict().items()}
    trainer = nn.ModuleTrainer()
    bad = [(st.tensor([[float("nan"), 1.0]]), st.tensor([[1.0]]))]
    stats = trainer.train_epoch(model, mse, bad, trainer.roundtable(1, 1))
    assert stats.batches == 0 and stats.skipped_steps == 1
    for k, v in model.state_dict().items():
        assert st.allclose(v, before[k])


def test_trainer_validation_errors():
    with pytest.raises(ValueError, match="curvature"):
        nn.ModuleTrainer(curvature=0.5)
    with pytest.raises(st.DeviceUnavailableError, match="hip"):
        nn.ModuleTrainer(backend="hip")
    with pytest.raises(ValueError):
        nn.RoundtableConfig(top_k=0)


def test_curvature_scheduler_moves_toward_target():
    s = nn.CurvatureScheduler(initial=-1.0, target_pressure=0.05, step=0.05, tolerance=0.0)
    d = s.observe_pressure(1.0)
    assert d["changed"] and d["curvature"] == pytest.approx(-0.95)
    for _ in range(40):  # the smoothed pressure falls below target: curvature moves back down
        d = s.observe_pressure(0.0)
    assert d["smoothed_pressure"] < 0.05 and d["curvature"] < -0.95


def test_python_subclass_trains_with_fit():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(2, 32)
            self.fc2 = nn.Linear(32, 3)

        def forward(self, x):
            return self.fc2(self.fc1(x).tanh())

    st.manual_seed(3)
    from spiraltorch.data import DataLoader, TensorDataset
    from spiraltorch.datasets import make_spirals

    x, y = make_spirals(samples_per_class=100, classes=3, noise=0.1, seed=0)
    net = Net()
    assert [k for k, _ in net.named_parameters()] == ["fc1::weight", "fc1::bias", "fc2::weight", "fc2::bias"]
    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
    hist = nn.fit(net, nn.CategoricalCrossEntropy(), st.optim.Adam(net.parameters(), lr=0.02), loader, epochs=40,
                  val_loader=loader, callbacks=[nn.EarlyStopping(patience=50)], restore_best=True, progress=False)
    assert hist.best_epoch is not None and hist.epochs[hist.best_epoch - 1].val_accuracy > 0.6
    assert hist.epochs[-1].train_loss < hist.epochs[0].train_loss


def test_seed_model_zoo_snippet():
    out = run_example("seed", "model_zoo.py")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("classification recipes:") and "spiral_mlp" in lines[0]
    assert lines[1] == "suggested: ['llm_char']" or lines[1].startswith("suggested: ['llm_char'")
    assert "mlp_regression" in lines[2]
    assert lines[3].endswith("-m spiraltorch.zoo.mlp_regression --help")


@pytest.mark.parametrize("script", ["roundtable_trainer.py", "trainer_harness.py"])
def test_seed_snippets_run(script):
    out = run_example("seed", script)
    assert out.returncode == 0, out.stderr
    assert "avg" in out.stdout
    numbers = [float(tok.split("=")[-1]) for tok in out.stdout.split() if tok.replace(".", "").replace("avg_loss=", "").isdigit()]
    assert all(math.isfinite(v) for v in numbers)


def test_model_zoo_discovery_and_run(capsys):
    from spiraltorch import model_zoo

    keys = [e.key for e in model_zoo.list_models(task="classification")]
    assert "spiral_mlp" in keys and "fashion_mlp" in keys
    assert model_zoo.suggest_models("mlp_regression")[0].key == "mlp_regression"
    cmd = model_zoo.build_model_command("mlp_regression", "--help")
    assert cmd[-1] == "--help" and cmd[1:3] == ["-m", "spiraltorch.zoo.mlp_regression"]
    model_zoo.run_model("spiral_mlp", ["--epochs", "5"])
    out = capsys.readouterr().out
    acc = float(out.strip().splitlines()[-1].split("accuracy")[1].split()[0])
    assert acc > 0.7


def test_spectral_policy_scales_lr_from_band_concentration():
    p = nn.SpectralLearningRatePolicy(smoothing=1.0, target_concentration=0.5, gain=1.0, lr_bounds=(0.1, 6.0),
                                      max_lr_step=10.0)
    assert p.observe(1.0, 0.0, 0.0) == pytest.approx(0.5)  # all mass in Above: halve the step
    assert p.observe(0.25, 0.75, 0.0) == pytest.approx(2.0)  # diffuse: double it
    trainer = nn.ModuleTrainer()
    model = nn.Sequential(nn.Linear(2, 1))
    trainer.enable_spectral_learning_rate(p)
    trainer.train_epoch(model, mse, [(st.randn(4, 2), st.randn(4, 1))], trainer.roundtable(4, 1))
    assert trainer.spectral_metrics()["lr_scale"] > 0
