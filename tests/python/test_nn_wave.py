"""The attentionless sequence layers (WaveRnn, WaveGate, ZSpaceMixer, FeatureReorder2d)
from Python: values and gradients against PyTorch written out in float64, masks, state
dicts through nn.save/nn.load, errors."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
from spiraltorch import nn

torch = pytest.importorskip("torch")


def t64(x: st.Tensor) -> "torch.Tensor":
    return torch.tensor(x.detach().numpy(), dtype=torch.float64, requires_grad=True)


def expmap0(v: "torch.Tensor", c: float) -> "torch.Tensor":
    k = abs(c) ** 0.5
    n = v.norm(dim=-1, keepdim=True).clamp_min(1e-300)
    return torch.tanh(k * n) * v / (k * n)


def torch_wave_rnn(x, w_ih, b_ih, w_hh, b_hh, c):
    """The same computation in PyTorch: causal conv1d, then a GRU cell loop, then exp_0."""
    K = w_ih.shape[2]
    T = x.shape[1]
    a = torch.nn.functional.conv1d(x.transpose(1, 2), w_ih, b_ih, padding=K - 1)[:, :, :T].transpose(1, 2)
    H = w_hh.shape[1]
    h = torch.zeros(x.shape[0], H, dtype=x.dtype)
    outs = []
    for t in range(T):
        hh = h @ w_hh.T + b_hh
        r = torch.sigmoid(a[:, t, :H] + hh[:, :H])
        z = torch.sigmoid(a[:, t, H : 2 * H] + hh[:, H : 2 * H])
        n = torch.tanh(a[:, t, 2 * H :] + r * hh[:, 2 * H :])
        h = (1 - z) * n + z * h
        outs.append(h)
    hs = torch.stack(outs, 1)
    return expmap0(hs, c), h


def test_wave_rnn_matches_pytorch_values_and_gradients():
    st.manual_seed(0)
    m = nn.WaveRnn(3, 5, kernel_size=2, curvature=-0.5, name="wave")
    m.to(st.float64)
    x = st.randn(2, 6, 3, dtype=st.float64, requires_grad=True)
    y, h = m(x)
    params = {k.split("::")[1]: v for k, v in m.state_dict().items()}
    tx = t64(x)
    tp = {k: t64(v) for k, v in params.items()}
    ty, th = torch_wave_rnn(tx, tp["weight_ih"], tp["bias_ih"], tp["weight_hh"], tp["bias_hh"], -0.5)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(h.detach().numpy(), th.detach().numpy(), atol=1e-12)
    w = np.random.default_rng(1).standard_normal(y.shape)
    (y * st.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.detach().numpy(), tx.grad.detach().numpy(), atol=1e-10)
    for name, p in m.named_parameters():
        np.testing.assert_allclose(p.grad.detach().numpy(), tp[name.split("::")[1]].grad.detach().numpy(), atol=1e-10)


def test_wave_rnn_lengths_mask_padding():
    st.manual_seed(1)
    m = nn.WaveRnn(2, 4)
    x = st.randn(3, 5, 2)
    y, h = m(x, lengths=st.tensor([5, 2, 4]))
    assert float(y[1, 2:].abs().sum()) == 0.0
    y_short, h_short = m(x[1:2, :2])
    np.testing.assert_allclose(h[1].detach().numpy(), h_short[0].detach().numpy(), atol=1e-6)
    assert float(y.norm(dim=2).max()) < 1.0
    with pytest.raises(ValueError, match="lengths must lie in"):
        m(x, lengths=st.tensor([6, 1, 1]))
    with pytest.raises(st.ShapeError, match="WaveRnn"):
        m(st.randn(3, 5, 7))


def test_wave_gate_matches_pytorch():
    st.manual_seed(2)
    g = nn.WaveGate(4, curvature=-1.0, name="gate")
    g.to(st.float64)
    x = st.randn(2, 3, 4, dtype=st.float64)
    sd = {k.split("::")[1]: t64(v) for k, v in g.state_dict().items()}
    tx = t64(x)
    gate = torch.sigmoid(tx @ sd["gate_weight"].T + sd["gate_bias"])
    v = torch.tanh(tx @ sd["value_weight"].T + sd["value_bias"])
    ref = expmap0(gate * v + (1 - gate) * tx, -1.0)
    np.testing.assert_allclose(g(x).detach().numpy(), ref.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(g.gate(x).detach().numpy(), gate.detach().numpy(), atol=1e-12)
    assert [k for k, _ in g.named_parameters()] == ["gate::gate_weight", "gate::gate_bias", "gate::value_weight",
                                                     "gate::value_bias"]


def test_zspace_mixer_is_a_causal_depthwise_conv():
    st.manual_seed(3)
    m = nn.ZSpaceMixer(3, kernel_size=3)
    x = st.randn(2, 5, 3)
    np.testing.assert_allclose(m(x).detach().numpy(), x.detach().numpy(), atol=0)  # identity at init
    with st.no_grad():
        m.weight.copy_(st.randn(3, 3))
    ref = torch.nn.functional.conv1d(torch.tensor(x.detach().numpy()).transpose(1, 2), torch.tensor(m.weight.detach().numpy())[:, None],
                                     padding=2, groups=3)[:, :, :5].transpose(1, 2)
    np.testing.assert_allclose(m(x).detach().numpy(), ref.detach().numpy(), atol=1e-6)
    # Causal: changing step 4 leaves steps 0..3 unchanged.
    x2 = x.clone()
    x2[:, 4] = 100.0
    np.testing.assert_allclose(m(x2)[:, :4].detach().numpy(), m(x)[:, :4].detach().numpy(), atol=0)
    np.testing.assert_allclose(m(x[:, 0]).detach().numpy(), (x[:, 0] * m.weight[:, 2]).detach().numpy(), atol=0)


def test_feature_reorder_matches_numpy_transpose():
    x = st.arange(2 * 3 * 4 * 5, dtype=st.float32).reshape(2, 3, 4, 5)  # (B, H, W, C)
    to = nn.FeatureReorder2d(5, 3, 4, layout="nhwc", direction="to")
    back = nn.FeatureReorder2d(5, 3, 4, layout="NHWC", direction="from_canonical")
    np.testing.assert_array_equal(to(x).detach().numpy(), x.detach().numpy().transpose(0, 3, 1, 2))
    np.testing.assert_array_equal(back(to(x)).detach().numpy(), x.detach().numpy())
    flat = to(x.reshape(2, -1))
    np.testing.assert_array_equal(flat.detach().numpy(), x.detach().numpy().transpose(0, 3, 1, 2).reshape(2, -1))
    assert to.shape == (5, 3, 4) and to.layout == "NHWC" and to.direction == "to_canonical"
    with pytest.raises(ValueError, match="layout"):
        nn.FeatureReorder2d(5, 3, 4, layout="HWCN")


def test_wave_stack_trains_and_round_trips_through_a_file(tmp_path):
    st.manual_seed(4)
    model = nn.Sequential(nn.Embedding(16, 8), nn.ZSpaceMixer(8, name="mix"), nn.WaveGate(8, name="gate"),
                          nn.Linear(8, 16))
    opt = st.optim.Adam(model.parameters(), lr=0.05)
    # A periodic sequence: token t+1 = (token t + 1) mod 16, learnable from the previous token.
    tokens = (st.arange(64) % 16).reshape(2, 32)
    loss_fn = nn.CategoricalCrossEntropy()
    first = None
    for _ in range(60):
        logits = model(tokens[:, :-1])
        loss = loss_fn(logits.reshape(-1, 16), tokens[:, 1:].reshape(-1))
        first = first if first is not None else float(loss)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert float(loss) < 0.25 * first
    path = tmp_path / "wave.safetensors"
    nn.save(path, model)
    clone = nn.Sequential(nn.Embedding(16, 8), nn.ZSpaceMixer(8, name="mix"), nn.WaveGate(8, name="gate"),
                          nn.Linear(8, 16))
    nn.load(path, clone)
    np.testing.assert_allclose(clone(tokens).detach().numpy(), model(tokens).detach().numpy(), atol=0)


def test_wave_rnn_language_step_and_errors():
    st.manual_seed(5)
    rnn = nn.WaveRnn(8, 16, kernel_size=3, name="rnn")
    emb, head = nn.Embedding(10, 8), nn.Linear(16, 10)
    params = list(emb.parameters()) + list(rnn.parameters()) + list(head.parameters())
    opt = st.optim.Adam(params, lr=0.02)
    tokens = (st.arange(80) % 10).reshape(4, 20)
    losses = []
    for _ in range(40):
        out, _ = rnn(emb(tokens[:, :-1]))
        loss = nn.CategoricalCrossEntropy()(head(out).reshape(-1, 10), tokens[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    assert losses[-1] < 0.3 * losses[0]
    with pytest.raises(ValueError, match="curvature"):
        nn.WaveRnn(2, 2, curvature=1.0)
    with pytest.raises(ValueError, match="positive"):
        nn.ZSpaceMixer(0)
