"""spiraltorch.utils.progress: the plain counter (ETA, samples/s), tqdm when importable, silence
off a terminal or with progress=False, and the bars of nn.fit and nn.ModuleTrainer."""

from __future__ import annotations

import io
import sys
import time
import types

import pytest

import spiraltorch as st
from spiraltorch.utils import progress as prog


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def no_tqdm(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # `from tqdm import tqdm` raises ImportError


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    monkeypatch.delenv(prog.ENV, raising=False)
    monkeypatch.delenv("RANK", raising=False)


def test_counter_shows_count_eta_and_rate(no_tqdm):
    out = FakeTTY()
    with prog.progress(100, desc="epoch 1", file=out, min_interval=0.0) as bar:
        assert bar.backend == "counter"
        time.sleep(0.02)
        bar.update(40)
        bar.set_postfix(loss=0.123456)
        text = out.getvalue()
    assert "epoch 1: 40/100 samples" in text and " 40%" in text
    assert "ETA 0:" in text and "samples/s" in text and "loss=0.1235" in text
    assert text.startswith("\r") and "\n" not in text  # one line, rewritten in place
    assert out.getvalue().endswith("\r")  # cleared on close (leave=False)


def test_counter_without_total_and_with_leave(no_tqdm):
    out = FakeTTY()
    with prog.progress(None, desc="prep", unit="synsets", file=out, leave=True, min_interval=0.0) as bar:
        bar.update(3)
    text = out.getvalue()
    assert "prep: 3 synsets [" in text and "synsets/s" in text and "ETA" not in text
    assert text.endswith("\n")


def test_nothing_printed_off_a_terminal_or_when_disabled(no_tqdm, monkeypatch):
    plain = io.StringIO()
    bar = prog.progress(10, file=plain)
    bar.update(10)
    bar.close()
    assert plain.getvalue() == "" and not bar.shown and bar.n == 10
    tty = FakeTTY()
    off = prog.progress(10, file=tty, enable=False)
    off.update(5)
    off.close()
    assert tty.getvalue() == "" and not off.shown
    monkeypatch.setenv(prog.ENV, "0")
    assert not prog.enabled(True, FakeTTY())
    monkeypatch.setenv(prog.ENV, "1")
    assert prog.enabled(True, io.StringIO())  # forced, e.g. by spiral-run for its ranks
    monkeypatch.setenv("RANK", "1")
    assert not prog.enabled(True, FakeTTY())  # only rank 0 draws


def test_tqdm_is_used_when_importable(monkeypatch):
    calls = []

    class FakeBar:
        def __init__(self, **kwargs):
            calls.append(("init", kwargs))

        def update(self, n):
            calls.append(("update", n))

        def set_postfix(self, metrics, refresh=True):
            calls.append(("postfix", metrics))

        def close(self):
            calls.append(("close", None))

    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=FakeBar))
    out = FakeTTY()
    with prog.progress(50, desc="d", file=out) as bar:
        assert bar.backend == "tqdm"
        bar.update(5)
        bar.set_postfix(loss=1.5)
    assert calls[0][0] == "init" and calls[0][1]["total"] == 50 and calls[0][1]["unit"] == "samples"
    assert calls[0][1]["file"] is out
    assert ("update", 5) in calls and ("postfix", {"loss": "1.5"}) in calls and calls[-1][0] == "close"


def test_real_tqdm_prints_rate():
    pytest.importorskip("tqdm")
    out = FakeTTY()
    with prog.progress(20, file=out, min_interval=0.0) as bar:
        time.sleep(0.01)
        bar.update(20)
    assert "samples/s" in out.getvalue() and "20/20" in out.getvalue()


def test_track_counts_items_and_closes(no_tqdm):
    out = FakeTTY()
    items = list(prog.track([[1, 2], [3]], total=3, count=len, unit="samples", file=out))
    assert items == [[1, 2], [3]] and "3/3 samples" in out.getvalue()
    assert list(prog.track(range(4), file=io.StringIO())) == [0, 1, 2, 3]


def test_epoch_and_batch_samples():
    ds = st.data.TensorDataset(st.rand(10, 2), st.rand(10))
    assert prog.epoch_samples(st.data.DataLoader(ds, batch_size=4)) == 10
    assert prog.epoch_samples(st.data.DataLoader(ds, batch_size=4, drop_last=True)) == 8
    assert prog.epoch_samples([(st.rand(3, 2), 0), (st.rand(2, 2), 0)]) == 5
    assert prog.epoch_samples(iter([])) is None
    assert prog.batch_samples(st.rand(7, 3)) == 7 and prog.batch_samples(1.0) == 1
    assert prog.format_seconds(3725) == "1:02:05" and prog.format_seconds(None) == "?"


def _fit(progress):
    from spiraltorch import nn, optim

    st.manual_seed(0)
    model = nn.Linear(4, 2)
    loader = st.data.DataLoader(st.data.TensorDataset(st.rand(32, 4), st.rand(32, 2)), batch_size=8)
    nn.fit(model, nn.MSELoss(), optim.SGD(model.parameters(), lr=0.1), loader, epochs=2, progress=progress,
           log=lambda line: None)


def test_fit_draws_a_counter_on_a_terminal(no_tqdm, monkeypatch):
    err = FakeTTY()
    monkeypatch.setattr(sys, "stderr", err)
    _fit(True)
    text = err.getvalue()
    assert "epoch 1/2: " in text and "epoch 2/2: " in text
    assert "/32 samples" in text and "ETA" in text and "samples/s" in text and "loss=" in text


def test_fit_is_silent_off_a_terminal_and_with_progress_false(no_tqdm, monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    _fit(True)
    assert err.getvalue() == ""
    tty = FakeTTY()
    monkeypatch.setattr(sys, "stderr", tty)
    _fit(False)
    assert tty.getvalue() == ""


def test_module_trainer_bar_follows_trainer_steps(no_tqdm, monkeypatch):
    from spiraltorch import nn

    err = FakeTTY()
    monkeypatch.setattr(sys, "stderr", err)
    st.manual_seed(0)
    model = nn.Linear(3, 1)
    x, y = st.rand(12, 3), st.rand(12, 1)
    batches = [(x[i:i + 4], y[i:i + 4]) for i in range(0, 12, 4)]
    trainer = nn.ModuleTrainer(backend="cpu", curvature=-1.0, hyper_learning_rate=1e-2, fallback_learning_rate=0.1)
    trainer.train_epoch(model, nn.MSELoss(), batches, trainer.roundtable(4, 1))
    text = err.getvalue()
    assert "epoch 1: 12/12 samples" in text and "samples/s" in text and "loss=" in text
    assert not st.plugin.has_listeners("TrainerStep")  # the subscription ended with the epoch
    quiet = nn.ModuleTrainer(backend="cpu", curvature=-1.0, hyper_learning_rate=1e-2, fallback_learning_rate=0.1,
                             progress=False)
    err.truncate(0)
    err.seek(0)
    quiet.train_epoch(model, nn.MSELoss(), batches, quiet.roundtable(4, 1))
    assert err.getvalue() == ""


def test_progress_class_counts_while_hidden_and_prints_above_the_bar(no_tqdm):
    hidden = prog.Progress(10, file=io.StringIO())  # not a terminal: nothing shown, still counted
    hidden.update(3)
    assert (hidden.n, hidden.shown, hidden.backend) == (3, False, None)
    hidden.close()
    out = FakeTTY()
    bar = prog.Progress(5, desc="frames", unit="frames", file=out, min_interval=0.0)
    bar.update(2)
    lines = io.StringIO()
    bar.print("epoch 1 done", file=lines)
    bar.close()
    assert bar.backend == "counter" and bar.n == 2 and "frames: 2/5 frames" in out.getvalue()
    assert lines.getvalue() == "epoch 1 done\n"
