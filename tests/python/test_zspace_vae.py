"""MellinBasis, ZSpaceVae and ZSpaceTextVae from Python: formulas against NumPy/PyTorch,
training with SGD, Adam and RMSprop (with their state dicts), the prior-only baseline,
state-dict handoff, the zspace_text_vae recipe."""

from __future__ import annotations

import json

import numpy as np
import pytest

import spiraltorch as st
from spiraltorch import nn

needs_fortunes = pytest.mark.skipif(st.datasets.find_fortunes() is None,
                                    reason="Debian's fortunes package is not installed")


def test_mellin_basis_matches_numpy():
    b = nn.MellinBasis([0.5, 2.0])
    assert b.dimension == 2 and b.exponents == [0.5, 2.0]
    x = np.array([[4.0, -3.0, 2.0], [0.0, 0.0, 0.0]])
    e = np.array([0.5, 2.0, 1.0])  # missing exponents are 1
    y = np.sign(x) * np.maximum(np.abs(x), 1e-9) ** e
    n = np.linalg.norm(y, axis=1, keepdims=True)
    ref = np.where(n > 0, y / np.where(n > 0, n, 1), 0)
    np.testing.assert_allclose(b.project(st.tensor(x)).numpy(), ref, atol=1e-12)
    assert nn.MellinBasis.constant(3, 1.5).exponents == [1.5] * 3
    assert "dimension=3" in repr(nn.MellinBasis.ramp(3, 0.0, 1.0))


def test_vae_loss_matches_torch_and_eval_uses_the_mean():
    torch = pytest.importorskip("torch")
    st.manual_seed(1)
    vae = nn.ZSpaceVae(5, 3, seed=3, name="vae")
    vae.to(st.float64)
    x = st.randn(4, 5, dtype=st.float64)
    vae.eval()
    loss, stats = vae.loss(x, kl_weight=0.25)
    sd = {k.split("::")[1]: torch.tensor(v.detach().numpy()) for k, v in vae.state_dict().items()}
    tx = torch.tensor(x.numpy())
    mu = tx @ sd["encoder_mu"].T + sd["bias_mu"]
    lv = tx @ sd["encoder_logvar"].T + sd["bias_logvar"]
    xr = mu @ sd["decoder"].T + sd["bias_decoder"]
    recon = ((tx - xr) ** 2).sum(1).mean() / 5
    kl = (-0.5 * (1 + lv - mu**2 - lv.exp())).sum(1).mean()
    assert stats["recon_loss"] == pytest.approx(float(recon)) and stats["kl_loss"] == pytest.approx(float(kl))
    assert float(loss) == pytest.approx(float(recon + 0.25 * kl))
    assert stats["evidence_lower_bound"] == pytest.approx(-float(recon + kl)) and stats["batch_size"] == 4
    state = vae.forward_full(x)
    np.testing.assert_array_equal(state.latent.detach().numpy(), state.mu.detach().numpy())
    vae.train()
    a, b = vae.forward_full(x), vae.forward_full(x)
    assert float((a.latent - b.latent).abs().max()) > 0
    z = vae.sample_latent(a.mu, a.logvar)
    assert z.shape == (4, 3)
    assert vae.decode(z).shape == (4, 5)
    mu2, lv2 = vae.encode(x)
    recon_t, kl_t = vae.loss_terms(x, vae.forward_full(x, use_mean=True))
    assert float(kl_t) == pytest.approx(stats["kl_loss"])
    with pytest.raises(st.ShapeError, match=r"expected 5, got \(4, 6\)"):
        vae(st.randn(4, 6, dtype=st.float64))


@pytest.mark.parametrize("make_opt", [
    lambda p: st.optim.SGD(p, lr=0.2, momentum=0.9),
    lambda p: st.optim.Adam(p, lr=0.02),
    lambda p: st.optim.RMSprop(p, lr=0.01),
])
def test_vae_trains_with_each_optimizer_and_beats_its_prior(make_opt):
    st.manual_seed(2)
    # Data on a 2-d subspace of R^6 plus noise: a 2-d latent reconstructs it.
    basis = st.randn(2, 6)
    x = st.randn(256, 2) @ basis + 0.01 * st.randn(256, 6)
    vae = nn.ZSpaceVae(6, 2, seed=5)
    opt = make_opt(vae.parameters())
    first = vae.evaluate(x, kl_weight=1e-3)["recon_loss"]
    for _ in range(300):
        loss, _ = vae.loss(x, kl_weight=1e-3)
        opt.zero_grad()
        loss.backward()
        opt.step()
    after = vae.evaluate(x, kl_weight=1e-3)
    assert after["recon_loss"] < 0.3 * first
    assert after["recon_loss"] < 0.5 * vae.prior_recon_loss(x)
    # The optimizer's state round-trips.
    clone = make_opt(vae.parameters())
    clone.load_state_dict(opt.state_dict())


def test_vae_state_dict_handoff(tmp_path):
    vae = nn.ZSpaceVae(4, 2, name="enc")
    keys = [k for k, _ in vae.named_parameters()]
    assert keys == ["enc::encoder_mu", "enc::bias_mu", "enc::encoder_logvar", "enc::bias_logvar", "enc::decoder",
                    "enc::bias_decoder"]
    np.testing.assert_array_equal(vae.state_dict()["enc::bias_logvar"].detach().numpy(), [-3.0, -3.0])
    path = tmp_path / "vae.safetensors"
    nn.save(path, vae)
    other = nn.ZSpaceVae(4, 2, name="enc")
    with st.no_grad():
        for p in other.parameters():
            p.fill_(0.5)
    nn.load(path, other)
    np.testing.assert_array_equal(other.state_dict()["enc::decoder"].detach().numpy(), vae.state_dict()["enc::decoder"].detach().numpy())
    with pytest.raises(Exception):
        nn.load(path, nn.ZSpaceVae(5, 2, name="enc"))


def test_text_vae_encodes_windows_of_text():
    vae = nn.ZSpaceTextVae(6, 3, curvature=-0.5, temperature=0.8, seed=1)
    assert (vae.window_chars, vae.input_dim, vae.latent_dim) == (6, 12, 3)
    assert vae.curvature == -0.5 and vae.temperature == pytest.approx(0.8) and vae.seed == 1
    assert vae.fit_text("spiral torch") == "spiral" and vae.fit_text("ab") == "ab    "
    enc = vae.encode_texts(["spiral", "torch"])
    direct = st.LanguageWaveEncoder(-0.5, 0.8).encode_z_space("torch ")
    np.testing.assert_allclose(enc[1:2].numpy(), direct.detach().numpy(), atol=1e-6)
    assert vae(enc).shape == (2, 12)
    with pytest.raises(ValueError, match="no texts"):
        vae.encode_texts([])


@needs_fortunes
def test_zspace_text_vae_recipe(tmp_path, capsys):
    out = tmp_path / "vae.jsonl"
    st.model_zoo.run_model("zspace_text_vae", ["--epochs", "2", "--train-windows", "300", "--valid-windows", "100",
                                               "--atlas", "--jsonl", str(out)])
    lines = [json.loads(l) for l in out.read_text().splitlines()]
    assert [l["epoch"] for l in lines] == [1, 2]
    assert lines[-1]["valid_recon_loss"] < lines[-1]["prior_recon_loss"]
    assert "atlas frame" in capsys.readouterr().out


def test_top_level_names_are_the_nn_classes():
    assert st.MellinBasis is nn.MellinBasis and st.ZSpaceVae is nn.ZSpaceVae and st.ZSpaceTextVae is nn.ZSpaceTextVae
    assert st.WaveRnn is nn.WaveRnn and st.WaveGate is nn.WaveGate
    assert st.ZSpaceMixer is nn.ZSpaceMixer and st.FeatureReorder2d is nn.FeatureReorder2d
    assert isinstance(nn.ZSpaceVae(2, 1).forward_full(st.zeros(1, 2)), nn.ZSpaceVaeState)


def test_text_windows_cut_consecutive_pieces():
    from spiraltorch.zoo.zspace_text_vae import text_windows

    assert text_windows(b"abcdef\nghij", 3, 10) == ["abc", "def", " gh"]
    assert text_windows(b"abcdefghij", 3, 2) == ["abc", "def"]
