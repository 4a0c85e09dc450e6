"""float32 LSTM layers through oneDNN against the loop recurrence, and the backend switch.

The comparisons run in every build: without oneDNN both switch settings take the loop
path, and only the oneDNN-specific checks are skipped.
"""

from __future__ import annotations


import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.nn as nn
from spiraltorch import _core

from conftest import HAVE_ONEDNN, native_backend, needs_onednn, run_python


def rnn_backend(name):
    return native_backend("rnn", name)


def _run(backend, state, x, h0, c0, grads, *, num_layers, bias, batch_first):
    """Output, h_n, c_n and every gradient of one LSTM forward+backward on `backend`.

    h0 / c0 None: the module starts from zeros (no state given)."""
    with rnn_backend(backend):
        m = nn.LSTM(x.shape[-1], grads[1].shape[-1], num_layers=num_layers, bias=bias, batch_first=batch_first)
        m.load_state_dict(state)
        xs = st.tensor(x, requires_grad=True)
        hs = None if h0 is None else st.tensor(h0, requires_grad=True)
        cs = None if c0 is None else st.tensor(c0, requires_grad=True)
        out, (hn, cn) = m(xs) if hs is None else m(xs, (hs, cs))
        go, gh, gc = (st.tensor(g) for g in grads)
        ((out * go).sum() + (hn * gh).sum() + (cn * gc).sum()).backward()
        res = {"out": out.detach().numpy(), "h_n": hn.detach().numpy(), "c_n": cn.detach().numpy(),
               "grad x": xs.grad.numpy()}
        if hs is not None:
            res["grad h0"] = hs.grad.numpy()
            res["grad c0"] = cs.grad.numpy()
        for k, p in m.named_parameters():
            res["grad " + k] = p.grad.numpy()
        return res


def _state(rng, I, H, num_layers, bias):
    sd = {}
    for l in range(num_layers):
        inp = I if l == 0 else H
        sd[f"weight_ih_l{l}"] = rng.uniform(-0.3, 0.3, (4 * H, inp)).astype(np.float32)
        sd[f"weight_hh_l{l}"] = rng.uniform(-0.3, 0.3, (4 * H, H)).astype(np.float32)
        if bias:
            sd[f"bias_ih_l{l}"] = rng.uniform(-0.3, 0.3, (4 * H,)).astype(np.float32)
            sd[f"bias_hh_l{l}"] = rng.uniform(-0.3, 0.3, (4 * H,)).astype(np.float32)
    return sd


CASES = [
    # (T, B, I, H, num_layers, bias, batch_first, with_state)
    (5, 3, 4, 6, 1, True, False, False),
    (5, 3, 4, 6, 2, True, False, True),
    (7, 2, 5, 8, 2, False, True, True),
    (1, 4, 3, 5, 1, True, True, True),
    (1, 1, 2, 3, 2, False, False, False),
    (12, 8, 16, 32, 1, True, False, True),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "T{}B{}I{}H{}L{}{}{}{}".format(
    c[0], c[1], c[2], c[3], c[4], "b" if c[5] else "", "bf" if c[6] else "", "s" if c[7] else ""))
def test_lstm_onednn_matches_loop(case):
    T, B, I, H, L, bias, bf, with_state = case
    rng = np.random.default_rng(T * 100 + H)
    state = _state(rng, I, H, L, bias)
    x = rng.standard_normal((B, T, I) if bf else (T, B, I)).astype(np.float32)
    h0 = rng.standard_normal((L, B, H)).astype(np.float32) if with_state else None
    c0 = rng.standard_normal((L, B, H)).astype(np.float32) if with_state else None
    go = rng.standard_normal((B, T, H) if bf else (T, B, H)).astype(np.float32)
    gs = (go, rng.standard_normal((L, B, H)).astype(np.float32), rng.standard_normal((L, B, H)).astype(np.float32))
    kw = dict(num_layers=L, bias=bias, batch_first=bf)
    want = _run("loop", state, x, h0, c0, gs, **kw)
    got = _run("auto", state, x, h0, c0, gs, **kw)
    assert set(got) == set(want)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-5, err_msg=k)


def test_lstm_onednn_inference_and_partial_grads():
    """no_grad takes the inference primitive; frozen weights / input still get the right grads."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 4, 5)).astype(np.float32)
    state = _state(rng, 5, 7, 2, True)
    outs = {}
    for backend in ("loop", "auto"):
        with rnn_backend(backend):
            m = nn.LSTM(5, 7, num_layers=2)
            m.load_state_dict(state)
            with st.no_grad():
                y, (h, c) = m(st.tensor(x))
            assert not y.requires_grad
            m.weight_ih_l0.requires_grad = False
            m.bias_hh_l1.requires_grad = False
            y2, _ = m(st.tensor(x))
            y2.sum().backward()
            outs[backend] = [y.numpy(), h.numpy(), c.numpy(), y2.detach().numpy(),
                             m.weight_hh_l0.grad.numpy(), m.bias_ih_l1.grad.numpy(), m.weight_ih_l1.grad.numpy()]
            assert m.weight_ih_l0.grad is None and m.bias_hh_l1.grad is None
    for a, b in zip(outs["auto"], outs["loop"]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_lstm_onednn_unbatched():
    # float64 keeps the loop path; test_nn_seq.py checks it against PyTorch.
    rng = np.random.default_rng(4)
    state = _state(rng, 3, 4, 1, True)
    x = rng.standard_normal((5, 3)).astype(np.float32)  # unbatched (seq, feature)
    res = {}
    for backend in ("loop", "auto"):
        with rnn_backend(backend):
            m = nn.LSTM(3, 4)
            m.load_state_dict(state)
            y, (h, c) = m(st.tensor(x))
            res[backend] = (y.detach().numpy(), h.detach().numpy(), c.detach().numpy())
    for a, b in zip(res["auto"], res["loop"]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_rnn_backend_switch():
    before = _core._rnn_backend()
    assert before in ("auto", "loop", "onednn")
    with pytest.raises(ValueError, match="'auto', 'loop' or 'onednn'"):
        _core._set_rnn_backend("fast")
    assert _core._rnn_backend() == before
    with rnn_backend("loop"):
        assert _core._rnn_backend() == "loop"
    if not HAVE_ONEDNN:
        with pytest.raises(Exception, match="not available"):
            _core._set_rnn_backend("onednn")


def test_rnn_backend_env_bad_value_is_reported():
    code = ("import spiraltorch as st, spiraltorch.nn as nn\n"
            "m = nn.LSTM(2, 3)\n"
            "try:\n    m(st.zeros((4, 1, 2)))\nexcept ValueError as e:\n    print('ERR', e)\n")
    r = run_python(code, SPIRALTORCH_RNN_BACKEND="bogus")
    assert "ERR" in r.stdout and "SPIRALTORCH_RNN_BACKEND" in r.stdout, r.stdout + r.stderr


@needs_onednn
def test_rnn_backend_env_loop_is_honoured():
    code = "from spiraltorch import _core\nprint(_core._rnn_backend())\n"
    r = run_python(code, SPIRALTORCH_RNN_BACKEND="loop")
    assert r.stdout.strip() == "loop", r.stdout + r.stderr


def _infer(m, x):
    with st.no_grad():
        y, (h, c) = m(st.tensor(x))
    return [y.numpy().copy(), h.numpy().copy(), c.numpy().copy()]


def _check_same(a, b, what):
    for u, v in zip(a, b):
        np.testing.assert_allclose(u, v, rtol=1e-5, atol=1e-5, err_msg=what)


def test_lstm_onednn_weight_cache_never_stale():
    """The inference path caches reordered weights; every way of changing them in place
    between two no-grad calls must be seen (checked against the loop path)."""
    rng = np.random.default_rng(11)
    I, H = 5, 7
    x = rng.standard_normal((6, 3, I)).astype(np.float32)
    state = _state(rng, I, H, 2, True)

    def edits():
        # (name, function of the module) -- each changes the weights in place.
        def opt_step(m):
            opt = st.optim.SGD(m.parameters(), lr=0.1)
            y, _ = m(st.tensor(x))
            (y * y).sum().backward()
            opt.step()
            opt.zero_grad()

        def load(m):
            sd = _state(np.random.default_rng(5), I, H, 2, True)
            m.load_state_dict(sd)

        def data_mul(m):
            m.weight_ih_l0.data.mul_(2)
            m.weight_hh_l1.data.mul_(0.5)

        def nograd_add(m):
            with st.no_grad():
                m.weight_hh_l0.add_(0.01)
                m.weight_ih_l1.add_(-0.02)

        def copy(m):
            with st.no_grad():
                m.weight_hh_l0.copy_(st.tensor(np.random.default_rng(6).uniform(-0.3, 0.3, (4 * H, H)).astype(np.float32)))

        def numpy_view(m):
            # Writes through an exported NumPy view bump no version; the cache must notice anyway.
            m.weight_ih_l0.detach().numpy()[...] *= -1.0
            m.weight_hh_l1.detach().numpy()[0, 0] += 1.0

        return [("optimizer step", opt_step), ("load_state_dict", load), ("data.mul_", data_mul),
                ("no_grad add_", nograd_add), ("copy_", copy), ("numpy view", numpy_view)]

    results = {}
    for backend in ("loop", "auto"):
        with rnn_backend(backend):
            m = nn.LSTM(I, H, num_layers=2)
            m.load_state_dict(state)
            seq = [_infer(m, x), _infer(m, x)]
            for _, edit in edits():
                edit(m)
                seq.append(_infer(m, x))
                seq.append(_infer(m, x))  # the second call may hit the cache
            results[backend] = seq
    names = ["initial", "initial again"] + [n + s for n, _ in edits() for s in ("", " (again)")]
    for name, a, b in zip(names, results["auto"], results["loop"]):
        _check_same(a, b, name)


def test_lstm_onednn_weight_cache_fresh_modules():
    """A freed module's weights must never be served to a new one that happens to reuse the address."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal((4, 2, 3)).astype(np.float32)
    for i in range(6):
        state = _state(np.random.default_rng(100 + i), 3, 4, 1, False)
        got = {}
        for backend in ("loop", "auto"):
            with rnn_backend(backend):
                m = nn.LSTM(3, 4, bias=False)
                m.load_state_dict(state)
                got[backend] = _infer(m, x)
                del m
        _check_same(got["auto"], got["loop"], f"module {i}")


def test_lstm_onednn_weight_cache_many_threads():
    """Concurrent no-grad calls on several modules (more than the cache holds) stay correct."""
    import threading

    rng = np.random.default_rng(13)
    x = rng.standard_normal((5, 2, 3)).astype(np.float32)
    mods, want = [], []
    for i in range(20):
        state = _state(np.random.default_rng(200 + i), 3, 4, 1, True)
        with rnn_backend("loop"):
            m = nn.LSTM(3, 4)
            m.load_state_dict(state)
            want.append(_infer(m, x))
        mods.append(m)
    errors = []

    def work(k):
        try:
            for r in range(3):
                for i in range(k, k + len(mods)):
                    j = i % len(mods)
                    _check_same(_infer(mods[j], x), want[j], f"module {j}")
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    with rnn_backend("auto"):
        ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    assert not errors, errors[0]


def test_weight_version_bumps_on_in_place_updates():
    """The weight cache keys on the storage version: these in-place paths bump it (writes
    through NumPy views do not, which the cache's value snapshot covers)."""
    m = nn.LSTM(3, 4)
    w = m.weight_ih_l0
    seen = [w._version()]
    w.data.mul_(2)
    seen.append(w._version())
    with st.no_grad():
        w.add_(1)
    seen.append(w._version())
    m.load_state_dict({k: np.ones(p.shape, np.float32) for k, p in m.named_parameters()})
    seen.append(w._version())
    y, _ = m(st.tensor(np.ones((2, 1, 3), np.float32)))
    y.sum().backward()
    st.optim.SGD(m.parameters(), lr=0.1).step()
    seen.append(w._version())
    assert all(b > a for a, b in zip(seen, seen[1:])), seen
