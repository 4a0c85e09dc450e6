"""Z-space tools of issue #10: the exact barycenter, the topos guard, tensor biomes, the
SoT-3D planner and nn.ZSpaceProjector (reference values from the original's study)."""

import math

import numpy as np
import pytest

import spiraltorch as st
from spiraltorch import nn


def dens(*rows):
    return [st.tensor(r, dtype=st.float64) for r in rows]


def test_barycenter_reproduces_the_reference_values():
    b = st.z_space_barycenter([1.0, 2.0], dens([0.8, 0.2], [0.3, 0.7]), entropy_weight=0.1, beta_j=0.0)
    np.testing.assert_allclose(b.density.numpy(), [0.475157, 0.524843], atol=1e-6)
    assert b.kl_energy == pytest.approx(0.393542, abs=1e-6)
    assert b.entropy == pytest.approx(0.691912, abs=1e-6)
    assert b.objective == pytest.approx(0.324351, abs=1e-6)
    objectives = [i.objective for i in b.intermediates()]
    np.testing.assert_allclose(objectives, [0.324800, 0.324603, 0.324463, 0.324379, 0.324351], atol=1e-6)
    assert all(a >= b_ - 1e-12 for a, b_ in zip(objectives, objectives[1:]))  # loss-monotone path
    assert b.intermediates()[-1].interpolation == 1.0 and b.effective_weight == pytest.approx(3.1)
    assert isinstance(b, st.ZSpaceBarycenter) and isinstance(b.intermediates()[0], st.BarycenterIntermediate)


def test_barycenter_is_stationary_and_minimal():
    rng = np.random.default_rng(0)
    raw = rng.uniform(0.1, 1.0, (3, 5))
    w = [0.5, 1.0, 2.0]
    gamma = 0.3
    b = st.z_space_barycenter(w, dens(*raw), gamma, 0.0)
    rho = b.density.numpy()
    q = raw / raw.sum(1, keepdims=True)
    e = sum(w) + gamma
    # Stationarity: log rho* - sum_u W_u log q_u / E is constant across entries.
    resid = np.log(rho) - (np.array(w)[:, None] * np.log(q)).sum(0) / e
    assert np.ptp(resid) < 1e-9

    def objective(p):
        return sum(wu * np.sum(p * np.log(p / qu)) for wu, qu in zip(w, q)) + gamma * np.sum(p * np.log(p))

    assert objective(rho) == pytest.approx(b.objective, abs=1e-9)
    for _ in range(50):
        p = rng.dirichlet(np.ones(5))
        assert objective(p) >= b.objective - 1e-12


def test_barycenter_edge_cases_and_coupling():
    sym = st.z_space_barycenter([1, 1], dens([0.7, 0.3], [0.3, 0.7]), 0.0, 0.0)
    np.testing.assert_allclose(sym.density.numpy(), [0.5, 0.5], atol=1e-12)
    assert sym.kl_energy > 0 and sym.coupling_energy == 0
    uniform = st.z_space_barycenter([0, 0], dens([0.9, 0.1], [0.2, 0.8]), 0.5, 0.0)
    np.testing.assert_allclose(uniform.density.numpy(), [0.5, 0.5]) and None
    assert uniform.kl_energy == 0 and uniform.objective < 0
    sharp = st.z_space_barycenter([1], dens([0.9, 0.1]), -0.999, 0.0)
    assert sharp.density.numpy()[0] > 0.999 and sharp.density.numpy().sum() == pytest.approx(1.0)
    coupled = st.z_space_barycenter([1, 1], dens([0.7, 0.3], [0.3, 0.7]), 0.0, 2.0,
                                    coupling=st.tensor([[0.0, 1.0], [1.0, 0.0]]))
    assert coupled.coupling_energy > 0
    assert coupled.objective == pytest.approx(sym.objective + coupled.coupling_energy)
    np.testing.assert_allclose(coupled.density.numpy(), sym.density.numpy())  # coupling only shifts F
    big = st.z_space_barycenter([3.4e38, 3.4e38], dens([3.4e38, 3.4e38], [3.4e38, 3.4e38]), 0.0, 0.0)
    np.testing.assert_allclose(big.density.numpy(), [0.5, 0.5])


@pytest.mark.parametrize("args,match", [
    (([1.0], dens([0.5, 0.5]), -1.5, 0.0), "degenerate"),
    (([], [], 0.0, 0.0), "at least one"),
    (([1.0, 1.0], dens([0.5, 0.5]), 0.0, 0.0), "2 weights for 1"),
    (([-1.0], dens([0.5, 0.5]), 0.0, 0.0), "weight 0"),
    (([1.0], dens([0.5, float("nan")]), 0.0, 0.0), "not finite"),
    (([1.0], dens([0.5, 0.5]), 0.0, -1.0), "beta_j"),
])
def test_barycenter_errors(args, match):
    with pytest.raises(ValueError, match=match):
        st.z_space_barycenter(*args)
    with pytest.raises(st.ShapeError, match="shape"):
        st.z_space_barycenter([1, 1], dens([0.5, 0.5], [0.2, 0.3, 0.5]), 0.0, 0.0)


def test_topos_guards_and_monotone_saturation():
    topos = st.hypergrad_topos()
    assert isinstance(topos, st.OpenCartesianTopos) and topos.saturation == 1.0 and topos.max_volume == 512
    xs = np.linspace(-20, 20, 2001)
    ys = [topos.saturate(float(x)) for x in xs]
    assert all(b > a for a, b in zip(ys, ys[1:]))  # strictly monotone (the original's was not)
    assert max(abs(y) for y in ys) < 1.0 + topos.porosity * topos.tolerance
    assert topos.saturate(0.5) == pytest.approx(math.tanh(0.5) + 0.2 * 1e-3 * 0.5 / 1.5)
    assert topos.saturate(float("nan")) == 0.0
    t = st.tensor([-3.0, 0.0, 3.0], dtype=st.float64)
    np.testing.assert_allclose(topos.saturate(t).numpy(), [topos.saturate(v) for v in (-3.0, 0.0, 3.0)])
    assert topos.guard_tensor(t) is not None
    with pytest.raises(st.ShapeError, match="volume"):
        topos.guard_tensor(st.zeros(600))
    with pytest.raises(ValueError, match="non-finite"):
        topos.guard_tensor(st.tensor([float("inf")]))
    topos.ensure_loop_free(63)
    with pytest.raises(ValueError, match="depth 64"):
        topos.ensure_loop_free(64)
    assert topos.with_porosity(0.0).saturate(0.5) == pytest.approx(math.tanh(0.5))
    with pytest.raises(ValueError, match="curvature"):
        st.OpenCartesianTopos(0.5, 1e-3, 1.0, 8, 8)


def test_tensor_biome_canopy_harvest_and_ball():
    biome = st.TensorBiome(st.OpenCartesianTopos(-1.0, 1e-3, 10.0, 8, 64, porosity=0.0))
    assert biome.is_empty()
    biome.absorb(st.tensor([[1.0, 2.0]]))
    biome.absorb_weighted(st.tensor([[3.0, -2.0]]), 3.0, "b")
    assert len(biome) == 2 and biome.total_weight() == 4.0 and biome.weights() == [1.0, 3.0]
    sat = lambda v: 10 * np.tanh(np.asarray(v) / 10)  # noqa: E731 - the topos' clip (porosity 0)
    mean = (sat([[1.0, 2.0]]) + 3 * sat([[3.0, -2.0]])) / 4
    np.testing.assert_allclose(biome.canopy().numpy(), sat(mean), rtol=1e-12)
    assert biome.harvest().shape == (2, 1, 2) and biome.stack().shape == (2, 1, 2)
    np.testing.assert_allclose(biome.shoots()[1].numpy(), sat([[3.0, -2.0]]))
    assert biome.stored_volume() == 4 and biome.remaining_volume() == 60
    assert st.OpenTopos is st.OpenCartesianTopos and st.ZSpaceProjector is nn.ZSpaceProjector
    ball = biome.to_ball().numpy()
    assert np.linalg.norm(ball) < 1.0
    with pytest.raises(st.ShapeError, match="differs"):
        biome.absorb(st.zeros(3))
    with pytest.raises(ValueError, match="weight"):
        biome.absorb_weighted(st.zeros(1, 2), 0.0)
    with pytest.raises(st.ShapeError, match="exceed"):
        for _ in range(40):
            biome.absorb(st.zeros(1, 2))
    assert len(biome) == 32  # the refused shoot changed nothing
    biome.clear()
    with pytest.raises(ValueError, match="empty"):
        biome.canopy()


def test_sot_chunking_matches_the_reference():
    assert st.sot.fibonacci_pacing(8) == [1, 1, 2, 3, 1]
    assert st.sot.fibonacci_pacing(24) == [1, 1, 2, 3, 5, 8, 4]
    assert [st.sot.pack_tribonacci_chunks(n) for n in (3, 5, 8, 13)] == [[2, 1], [2, 2, 1], [4, 2, 1, 1], [7, 4, 1, 1]]
    assert st.sot.pack_tetranacci_chunks(13) == [8, 2, 2, 1]
    assert st.sot.golden_angle() == pytest.approx(2.3999632297, abs=1e-9)
    assert st.sot.golden_ratio() == pytest.approx((1 + 5 ** 0.5) / 2)


def test_sot_plan_geometry_and_biome():
    plan = st.sot.generate_plan(24, base_radius=1.0, radial_growth=0.05, base_height=1.0, meso_gain=0.0,
                                micro_gain=0.0)
    steps = plan.steps()
    assert isinstance(plan, st.sot.SoT3DPlan)
    assert len(plan) == len(steps) == 24 and plan.total_steps == 24
    radii = [s["radius"] for s in steps]
    np.testing.assert_allclose(np.array(radii[1:]) / np.array(radii[:-1]), math.exp(0.05))
    heights = [s["height"] for s in steps]
    assert all(b >= a for a, b in zip(heights, heights[1:]))  # gains 0: heights climb
    assert all(0.0 <= s[k]["phase"] <= 1.0 for s in steps for k in ("macro", "meso", "micro"))
    summaries = plan.macro_summaries()
    assert [m["length"] for m in summaries] == [1, 1, 2, 3, 5, 8, 4] and summaries[-1]["ideal_length"] == 13
    assert summaries[-1]["reflection_step"] == 23
    assert plan.as_tensor().shape == (24, 3) and plan.feature_tensor().shape == (24, 9)
    roles = plan.role_tensor().numpy()
    assert set(roles[:, 0]) <= {0, 1, 2} and set(roles[:, 1]) <= {0, 1, 2, 3}
    assert plan.reflection_tensor().numpy()[:, 2].sum() == 7  # one macro end per orbit
    assert steps[0]["meso"]["role"] == "explore" and steps[0]["micro"]["role"] == "diverge"
    biome = plan.grow_biome(st.OpenCartesianTopos(-1.0, 1e-3, 100.0, 64, 24 * 16))
    assert biome.harvest().shape == (1, 24, 16) and biome.labels() == ["sot_plan"]
    assert biome.total_weight() == 1.0
    with pytest.raises(ValueError, match="total_steps"):
        st.sot.generate_plan(0)


def test_zspace_projector_stays_in_the_ball_and_trains():
    st.manual_seed(0)
    proj = nn.ZSpaceProjector(4, curvature=-2.0, name="proj")
    x = st.randn(8, 4) * 10
    y = proj(x)
    assert float((y * y).sum(-1).max().item()) < 0.5  # radius 1/sqrt(2)
    assert sorted(proj.state_dict()) == ["proj::bias", "proj::weight"]
    assert "ZSpaceProjector(features=4, curvature=-2)" in repr(proj)
    model = nn.Sequential(nn.Linear(3, 4), nn.ZSpaceProjector(4))
    target = st.tensor([[0.2, -0.1, 0.3, 0.0]])
    opt = st.optim.Adam(model.parameters(), lr=0.05)
    first = None
    for _ in range(100):
        opt.zero_grad()
        loss = ((model(st.ones(1, 3)) - target) ** 2).sum()
        loss.backward()
        opt.step()
        first = first if first is not None else float(loss.item())
    assert float(loss.item()) < 0.01 * first
    # Checked handoff like Linear: a wrong shape is refused and changes nothing.
    before = proj.weight.detach().clone()
    with pytest.raises(st.CheckpointError):
        proj.load_state_dict({"proj::weight": st.zeros(3, 3), "proj::bias": st.zeros(4)})
    assert proj.weight.detach().tolist() == before.tolist()
    with pytest.raises(st.ShapeError):
        proj(st.ones(2, 3))
    with pytest.raises(ValueError, match="curvature"):
        nn.ZSpaceProjector(4, curvature=1.0)


def test_zspace_projector_gradients_finite_differences():
    st.manual_seed(1)
    proj = nn.ZSpaceProjector(3, curvature=-1.0).to(st.float64)
    x = st.randn(2, 3, dtype=st.float64) * 0.5
    w = proj.weight
    proj(x).sum().backward()
    g = w.grad.numpy().copy()
    eps = 1e-6
    base = w.detach().numpy().copy()
    for idx in np.ndindex(base.shape):
        for sign, store in ((1, "p"), (-1, "m")):
            pert = base.copy()
            pert[idx] += sign * eps
            with st.no_grad():
                w.copy_(st.tensor(pert))
            val = float(proj(x).sum().item())
            if store == "p":
                up = val
            else:
                down = val
        assert g[idx] == pytest.approx((up - down) / (2 * eps), rel=1e-5, abs=1e-8)
    with st.no_grad():
        w.copy_(st.tensor(base))


def test_sot_biome_quickstart_example_runs():
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(st.__file__))))
    proc = subprocess.run([sys.executable, os.path.join(root, "examples", "sot_biome_quickstart.py")],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "macro orbits: [1, 1, 2, 3, 5, 8, 4]" in proc.stdout
    norm = float(proc.stdout.split("max norm ")[1].split()[0])
    assert 0 < norm < 1


def test_hypergrad_follows_the_barycenter_corridor():
    b = st.z_space_barycenter([1.0, 2.0], dens([0.8, 0.2], [0.3, 0.7]), 0.1, 0.0)
    path = b.intermediates()
    rho0 = path[0].density.reshape(1, 2)
    rho_k = path[-1].density.reshape(1, 2)
    tape = st.realgrad(1.0, 1, 2)
    tape.accumulate_barycenter_path(path)
    w = rho0.clone()
    tape.apply(w)
    np.testing.assert_allclose(w.numpy(), rho_k.numpy(), atol=1e-12)  # lr 1 from rho_0 lands on rho_K
    hyper = st.hypergrad(-1.0, 0.01, 1, 2, topos=st.hypergrad_topos())
    hyper.accumulate_barycenter_path(path)
    x = rho0.clone().float()
    before = x.clone()
    hyper.apply(x)
    step = (x - before).double().numpy().ravel()
    assert float(step @ (rho_k - rho0).numpy().ravel()) > 0  # a small RSGD step heads for the barycenter
    with pytest.raises(ValueError, match="cannot be empty"):
        hyper.accumulate_barycenter_path([])
    with pytest.raises(ValueError, match="curvature"):
        st.hypergrad(-0.5, 0.01, 1, 2, topos=st.hypergrad_topos())
    with pytest.raises(st.ShapeError, match="volume"):
        st.realgrad(0.1, 100, 100, topos=st.hypergrad_topos())
