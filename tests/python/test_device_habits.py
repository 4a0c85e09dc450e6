"""The new PyTorch habits on every device: einsum (values and gradients), module hooks,
factories with device=, and the Riemannian optimizers (run once on "cpu" and once on
"cuda"; the cuda case skips without a GPU; SPIRALTORCH_TEST_EXTRA_DEVICE=cpu:1 checks
placement on the host)."""

import numpy as np
import pytest

import spiraltorch as st
from spiraltorch import nn

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("eq,shapes", [("ij,jk->ik", [(3, 4), (4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]),
                                       ("ii->i", [(3, 3)]), ("...ij,jk", [(2, 3, 4), (4, 2)]), ("ij,ij->", [(2, 3), (2, 3)])])
def test_einsum_on_device(device, eq, shapes):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    ours = [st.tensor(a).to(device).requires_grad_() for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = st.einsum(eq, *ours)
    ref = torch.einsum(eq, *theirs)
    assert out.device.split(":")[0] == str(device).split(":")[0]
    np.testing.assert_allclose(out.detach().cpu().numpy(), ref.detach().numpy(), rtol=1e-4, atol=1e-5)
    out.sum().backward()
    ref.sum().backward()
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.cpu().numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_hooks_on_device(device):
    lin = nn.Linear(3, 2).to(device)
    seen = []
    lin.register_forward_hook(lambda m, a, o: seen.append(o.device))
    lin.register_full_backward_hook(lambda m, gi, go: seen.append(go[0].device))
    x = st.ones(4, 3, device=device, requires_grad=True)
    lin(x).sum().backward()
    assert len(seen) == 2 and all(d == x.device for d in seen)
    assert x.grad.device == x.device


def test_factories_on_device(device):
    for t in (st.zeros(2, device=device), st.rand(2, device=device), st.randn(2, device=device),
              st.full((2,), 1.0, device=device), st.randint(0, 5, (3,), device=device),
              st.arange(3, device=device), st.eye(2, device=device), st.Tensor(data=[1.0], device=device)):
        assert t.device == st.zeros(1, device=device).device


def test_riemannian_adam_on_device(device):
    target = st.tensor([[0.3, -0.2]]).to(device)
    p = nn.ManifoldParameter(st.tensor([[-0.5, 0.4]]).to(device), curvature=-1.0)
    opt = st.optim.RiemannianAdam([p], lr=0.05)
    first = None
    for _ in range(60):
        opt.zero_grad()
        d = st.geometry.poincare_distance(p, target, -1.0).sum()
        d.backward()
        opt.step()
        first = first or float(d.item())
    assert p.device == target.device
    assert float(st.geometry.poincare_distance(p, target, -1.0).sum().item()) < 0.1 * first
