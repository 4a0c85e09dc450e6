"""nn.ManifoldParameter with optim.RiemannianSGD / RiemannianAdam, checked against a
reference step built from geoopt's Poincare-ball maths (the peer named in issue #10),
plus the geometry behind them (gyration, parallel transport)."""

import numpy as np
import pytest

import spiraltorch as st
from spiraltorch import nn

torch = pytest.importorskip("torch")
geoopt = pytest.importorskip("geoopt")

C = -1.5  # curvature; geoopt's c is -C


def points(n=4, d=3, seed=0, scale=0.3):
    rng = np.random.default_rng(seed)
    return rng.uniform(-scale, scale, (n, d))


def test_manifold_parameter_tags_and_checks():
    p = nn.ManifoldParameter(st.tensor(points()), curvature=C)
    assert p.manifold_curvature == C and p.requires_grad and p.is_leaf
    assert st.ones(2).manifold_curvature is None
    with pytest.raises(ValueError, match="outside the ball"):
        nn.ManifoldParameter(st.ones(1, 3), curvature=-1.0)
    with pytest.raises(ValueError, match="negative"):
        nn.ManifoldParameter(st.zeros(1, 3), curvature=0.5)


def test_gyration_and_transport_match_geoopt():
    ball = geoopt.PoincareBall(c=-C)
    x, y, v = points(seed=1), points(seed=2), points(seed=3, scale=2.0)
    tx, ty, tv = (torch.tensor(a) for a in (x, y, v))
    sx, sy, sv = (st.tensor(a) for a in (x, y, v))
    # geoopt clamps its denominators (float32-sized minima), so agreement is to ~1e-7.
    np.testing.assert_allclose(st.geometry.parallel_transport(sx, sy, sv, C).numpy(),
                               ball.transp(tx, ty, tv).numpy(), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(st.geometry.egrad2rgrad(sx, sv, C).numpy(), ball.egrad2rgrad(tx, tv).numpy(), rtol=1e-6)
    np.testing.assert_allclose(st.geometry.conformal_factor(sx, C).numpy(), ball.lambda_x(tx, keepdim=True).numpy(),
                               rtol=1e-6)
    # gyr[a, b] w = -(a + b) + (a + (b + w)) for w inside the ball (Mobius sums).
    a, b, w = sx, sy, st.tensor(points(seed=4, scale=0.2))
    lhs = st.geometry.gyration(a, b, w, C)
    rhs = st.geometry.mobius_add(-st.geometry.mobius_add(a, b, C),
                                 st.geometry.mobius_add(a, st.geometry.mobius_add(b, w, C), C), C)
    np.testing.assert_allclose(lhs.numpy(), rhs.numpy(), rtol=1e-9, atol=1e-12)
    # Transport keeps the Riemannian norm.
    t = st.geometry.parallel_transport(sx, sy, sv, C)
    nx = (st.geometry.conformal_factor(sx, C) ** 2 * (sv * sv).sum(-1, keepdim=True)).numpy()
    ny = (st.geometry.conformal_factor(sy, C) ** 2 * (t * t).sum(-1, keepdim=True)).numpy()
    np.testing.assert_allclose(nx, ny, rtol=1e-10)


def loss_fn(lib, p, target):
    return ((p - target) ** 2).sum() + (p ** 3).sum() * 0.1


def reference_adam(x0, target, steps, lr, betas=(0.9, 0.999), eps=1e-8):
    """Becigneul & Ganea's Riemannian Adam with exact exp maps, from geoopt's ball maths."""
    ball = geoopt.PoincareBall(c=-C)
    x = torch.tensor(x0, requires_grad=True)
    m = torch.zeros_like(x)
    v = torch.zeros_like(x)
    for t in range(1, steps + 1):
        x.grad = None
        loss_fn(torch, x, torch.tensor(target)).backward()
        with torch.no_grad():
            g = ball.egrad2rgrad(x, x.grad)
            m = betas[0] * m + (1 - betas[0]) * g
            v = betas[1] * v + (1 - betas[1]) * ball.component_inner(x, g)
            denom = (v / (1 - betas[1] ** t)).sqrt() + eps
            step = -(lr / (1 - betas[0] ** t)) * m / denom
            nxt = ball.projx(ball.expmap(x, step))
            m = ball.transp(x, nxt, m)
            x.copy_(nxt)
    return x.detach().numpy()


def reference_sgd(x0, target, steps, lr, momentum):
    ball = geoopt.PoincareBall(c=-C)
    x = torch.tensor(x0, requires_grad=True)
    buf = None
    for _ in range(steps):
        x.grad = None
        loss_fn(torch, x, torch.tensor(target)).backward()
        with torch.no_grad():
            g = ball.egrad2rgrad(x, x.grad)
            buf = g.clone() if buf is None else momentum * buf + g
            nxt = ball.projx(ball.expmap(x, -lr * buf))
            buf = ball.transp(x, nxt, buf)
            x.copy_(nxt)
    return x.detach().numpy()


@pytest.mark.parametrize("kind", ["adam", "sgd"])
def test_riemannian_optimizers_match_the_reference(kind):
    x0, target = points(seed=5), points(seed=6)
    p = nn.ManifoldParameter(st.tensor(x0), curvature=C)
    opt = st.optim.RiemannianAdam([p], lr=0.05) if kind == "adam" else st.optim.RiemannianSGD([p], lr=0.05, momentum=0.9)
    for _ in range(25):
        opt.zero_grad()
        loss_fn(st, p, st.tensor(target)).backward()
        assert opt.step()
    ref = reference_adam(x0, target, 25, 0.05) if kind == "adam" else reference_sgd(x0, target, 25, 0.05, 0.9)
    np.testing.assert_allclose(p.detach().numpy(), ref, rtol=1e-6, atol=1e-9)
    radius = (-C) ** -0.5
    assert float(p.detach().norm(dim=-1).max().item()) < radius


def test_euclidean_parameters_get_plain_adam_and_sgd():
    w0 = np.random.default_rng(7).standard_normal((3, 2))
    for ours, theirs in ((lambda ps: st.optim.RiemannianAdam(ps, lr=0.1), lambda ps: torch.optim.Adam(ps, lr=0.1)),
                         (lambda ps: st.optim.RiemannianSGD(ps, lr=0.1, momentum=0.5, nesterov=True),
                          lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.5, nesterov=True))):
        a = st.tensor(w0, requires_grad=True)
        b = torch.tensor(w0, requires_grad=True)
        oa, ob = ours([a]), theirs([b])
        for _ in range(5):
            oa.zero_grad()
            ob.zero_grad()
            (a ** 4).sum().backward()
            (b ** 4).sum().backward()
            oa.step()
            ob.step()
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10)


def test_riemannian_step_descends_the_poincare_distance_and_skips_non_finite():
    target = st.tensor([[0.5, -0.2]], dtype=st.float64)
    p = nn.ManifoldParameter(st.tensor([[-0.6, 0.3]], dtype=st.float64), curvature=-1.0)
    opt = st.optim.RiemannianAdam([p], lr=0.05)
    dists = []
    for _ in range(60):
        opt.zero_grad()
        d = st.geometry.poincare_distance(p, target, -1.0).sum()
        d.backward()
        opt.step()
        dists.append(float(d.item()))
    assert dists[-1] < 0.05 * dists[0]
    before = p.detach().clone()
    opt.zero_grad()
    (p * float("nan")).sum().backward()
    assert not opt.step() and p.detach().tolist() == before.tolist()
    sd = opt.state_dict()
    opt2 = st.optim.RiemannianAdam([p], lr=0.05)
    opt2.load_state_dict(sd)
    assert isinstance(opt2, st.optim.Optimizer)


def test_riemannian_option_checks():
    p = nn.ManifoldParameter(st.zeros(1, 2), curvature=-1.0)
    with pytest.raises(ValueError, match="Nesterov"):
        st.optim.RiemannianSGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="beta1"):
        st.optim.RiemannianAdam([p], betas=(1.5, 0.9))
    with pytest.raises(ValueError, match="learning rate"):
        st.optim.RiemannianAdam([p], lr=-1.0)
