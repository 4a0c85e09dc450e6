"""The attentionless layers, the coherence VAE and MellinBasis on every device: outputs and
gradients on the device equal the CPU's (float64, so the comparison is tight)."""

from __future__ import annotations

import numpy as np

import spiraltorch as st
from spiraltorch import nn


def _check(make, inputs, device, forward, atol=1e-9):
    """Runs `forward(module, *inputs)` on the CPU and on `device` with the same weights and
    compares the outputs and every gradient."""
    st.manual_seed(0)
    ref = make()
    ref.to(st.float64)
    dev = make()
    dev.to(st.float64)
    dev.load_state_dict(ref.state_dict())
    dev.to(device)
    xs = [x.clone().requires_grad_(x.dtype == st.float64) for x in inputs]
    xd = [x.to(device).detach().requires_grad_(x.dtype == st.float64) for x in inputs]
    a, b = forward(ref, *xs), forward(dev, *xd)
    assert b.device.startswith(device.split(":")[0])
    np.testing.assert_allclose(b.detach().cpu().numpy(), a.detach().numpy(), atol=atol)
    w = st.randn(*a.shape, dtype=st.float64)
    (a * w).sum().backward()
    (b * w.to(device)).sum().backward()
    for (name, p), (_, q) in zip(ref.named_parameters(), dev.named_parameters()):
        np.testing.assert_allclose(q.grad.cpu().numpy(), p.grad.numpy(), atol=atol, err_msg=name)
    for x, y in zip(xs, xd):
        if x.requires_grad:
            np.testing.assert_allclose(y.grad.cpu().numpy(), x.grad.numpy(), atol=atol)


def test_wave_rnn_on_device(device):
    x = st.randn(3, 7, 4, dtype=st.float64)
    lengths = st.tensor([7, 3, 5])
    _check(lambda: nn.WaveRnn(4, 6, kernel_size=3), [x], device,
           lambda m, x: m(x, lengths=lengths.to(x.device))[0])


def test_wave_gate_and_mixer_on_device(device):
    x = st.randn(2, 5, 6, dtype=st.float64)
    _check(lambda: nn.Sequential(nn.ZSpaceMixer(6, kernel_size=3), nn.WaveGate(6)), [x], device, lambda m, x: m(x))


def test_feature_reorder_on_device(device):
    x = st.randn(2, 3 * 4 * 5, dtype=st.float64)
    _check(lambda: nn.Sequential(nn.FeatureReorder2d(5, 3, 4, layout="NHWC"), nn.Linear(60, 2)), [x], device,
           lambda m, x: m(x))


def test_vae_and_mellin_on_device(device):
    x = st.randn(4, 6, dtype=st.float64)

    def forward(m, x):
        m.eval()
        state = m.forward_full(x)
        recon, kl = m.loss_terms(x, state)
        return (recon + 0.5 * kl).reshape(1)

    _check(lambda: nn.ZSpaceVae(6, 3), [x], device, forward, atol=1e-10)
    b = nn.MellinBasis.ramp(6, 0.5, 1.5)
    np.testing.assert_allclose(b.project(x.to(device)).cpu().numpy(), b.project(x).numpy(), atol=1e-12)
