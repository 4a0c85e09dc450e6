"""st.linalg (spiraltorch/linalg.py over the C++ of include/spiraltorch/linalg.h): values against NumPy
and torch.linalg side by side, float32 and float64, batched shapes, broadcasting in solve, gradients
(first and second order) against torch's autograd, errors and their messages, and that a failing
call changes nothing."""

from __future__ import annotations

import math

import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.linalg as stla

DTYPES = [(st.float32, np.float32, 2e-4), (st.float64, np.float64, 1e-10)]
BATCHES = [(), (3,), (2, 2)]


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def rng(seed=0):
    return np.random.default_rng(seed)


def well_conditioned(shape, seed=0):
    n = shape[-1]
    return rng(seed).standard_normal(shape) + n * np.eye(n)


def spd(shape, seed=0):
    x = rng(seed).standard_normal(shape)
    return x @ np.swapaxes(x, -1, -2) + np.eye(shape[-1])


def symmetric(shape, seed=0):
    x = rng(seed).standard_normal(shape)
    return (x + np.swapaxes(x, -1, -2)) / 2


def sym_tensor(a, dt):
    return st.tensor(np.asarray(a, dtype=np.float64)).to(dt)


def as_np(t):
    return np.asarray(t.detach().numpy(), dtype=np.float64)


def close(got, want, tol):
    np.testing.assert_allclose(as_np(got) if isinstance(got, st.Tensor) else got, np.asarray(want, dtype=np.float64),
                               rtol=tol, atol=tol)


def tclose(got, tt, tol=1e-10):
    close(got, tt.detach().double().numpy(), tol)


# ---------------------------------------------------------------------------
# the module
# ---------------------------------------------------------------------------


def test_importable_as_module_and_attribute():
    import spiraltorch.linalg as mod

    assert st.linalg is mod is stla
    for name in stla.__all__:
        assert callable(getattr(st.linalg, name)), name
    assert st.linalg.inv.__doc__ and "inverse" in st.linalg.inv.__doc__
    assert "ascending" in st.linalg.eigh.__doc__


# ---------------------------------------------------------------------------
# values against NumPy and torch
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dt,npdt,tol", DTYPES)
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("n", [1, 4])
def test_inv_det_slogdet_against_numpy(dt, npdt, tol, batch, n):
    a = well_conditioned(batch + (n, n)).astype(npdt)
    A = st.tensor(a)
    inv = st.linalg.inv(A)
    assert inv.dtype == dt and tuple(inv.shape) == batch + (n, n)
    close(inv, np.linalg.inv(a.astype(np.float64)), tol)
    close(st.linalg.det(A), np.linalg.det(a.astype(np.float64)), tol * 10 ** n)
    sign, logabs = st.linalg.slogdet(A)
    np_sign, np_logabs = np.linalg.slogdet(a.astype(np.float64))
    close(sign, np_sign, 0)
    close(logabs, np_logabs, tol)
    result = st.linalg.slogdet(A)
    assert result.sign is not None and result.logabsdet.dtype == dt


@pytest.mark.parametrize("dt,npdt,tol", DTYPES)
def test_inv_det_slogdet_against_torch(torch, dt, npdt, tol):
    a = well_conditioned((2, 3, 5, 5), seed=1).astype(npdt)
    A, T = st.tensor(a), torch.from_numpy(a)
    tclose(st.linalg.inv(A), torch.linalg.inv(T), tol)
    tclose(st.linalg.det(A), torch.linalg.det(T), tol * 100)
    s, l = st.linalg.slogdet(A)
    ts, tl = torch.linalg.slogdet(T)
    tclose(s, ts, 0)
    tclose(l, tl, tol)


def test_det_of_singular_and_empty_matrices(torch):
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    assert st.linalg.det(st.tensor(a)).item() == 0.0
    s, l = st.linalg.slogdet(st.tensor(a))
    assert s.item() == 0.0 and l.item() == -math.inf
    # (No comparison with NumPy's or PyTorch's answer here: at a singular matrix it depends on
    # the CPU their LAPACK runs on.)
    empty = st.zeros(2, 0, 0, dtype=st.float64)
    close(st.linalg.det(empty), [1.0, 1.0], 0)
    assert tuple(st.linalg.inv(empty).shape) == (2, 0, 0)


@pytest.mark.parametrize("dt,npdt,tol", DTYPES)
def test_solve_matrix_vector_and_broadcast(torch, dt, npdt, tol):
    # Matrix right-hand sides with batch dims broadcast on both sides.
    a = well_conditioned((2, 1, 3, 3), seed=2).astype(npdt)
    b = rng(3).standard_normal((4, 3, 2)).astype(npdt)
    X = st.linalg.solve(st.tensor(a), st.tensor(b))
    assert tuple(X.shape) == (2, 4, 3, 2)
    close(X, np.linalg.solve(a.astype(np.float64), b.astype(np.float64)), tol)
    tclose(X, torch.linalg.solve(torch.from_numpy(a), torch.from_numpy(b)), tol)
    # torch's rule: B (..., n) with A's shape minus its last dim is a batch of vectors ...
    av = well_conditioned((5, 3, 3), seed=4).astype(npdt)
    bv = rng(5).standard_normal((5, 3)).astype(npdt)
    xv = st.linalg.solve(st.tensor(av), st.tensor(bv))
    assert tuple(xv.shape) == (5, 3)
    tclose(xv, torch.linalg.solve(torch.from_numpy(av), torch.from_numpy(bv)), tol)
    # ... and so is a 1-d B, broadcast over A's batch.
    b1 = rng(6).standard_normal(3).astype(npdt)
    tclose(st.linalg.solve(st.tensor(av), st.tensor(b1)), torch.linalg.solve(torch.from_numpy(av), torch.from_numpy(b1)),
           tol)
    # Otherwise B is a (batch of) matrices (..., n, k), broadcast against A's batch.
    bm = rng(7).standard_normal((3, 5)).astype(npdt)
    tclose(st.linalg.solve(st.tensor(av), st.tensor(bm)), torch.linalg.solve(torch.from_numpy(av), torch.from_numpy(bm)),
           tol)
    # left=False: X A = B.
    bl = rng(8).standard_normal((2, 5, 4, 3)).astype(npdt)
    tclose(st.linalg.solve(st.tensor(av), st.tensor(bl), left=False),
           torch.linalg.solve(torch.from_numpy(av), torch.from_numpy(bl), left=False), tol)


@pytest.mark.parametrize("dt,npdt,tol", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unitriangular", [False, True])
def test_solve_triangular_against_torch(torch, dt, npdt, tol, upper, left, unitriangular):
    a = well_conditioned((2, 4, 4), seed=8).astype(npdt)
    b = rng(9).standard_normal((2, 4, 3) if left else (2, 3, 4)).astype(npdt)
    got = st.linalg.solve_triangular(st.tensor(a), st.tensor(b), upper=upper, left=left, unitriangular=unitriangular)
    want = torch.linalg.solve_triangular(torch.from_numpy(a), torch.from_numpy(b), upper=upper, left=left,
                                         unitriangular=unitriangular)
    tclose(got, want, tol * 10)


@pytest.mark.parametrize("dt,npdt,tol", DTYPES)
@pytest.mark.parametrize("batch", BATCHES)
def test_cholesky_against_numpy_and_torch(torch, dt, npdt, tol, batch):
    a = spd(batch + (4, 4), seed=10).astype(npdt)
    L = st.linalg.cholesky(st.tensor(a))
    close(L, np.linalg.cholesky(a.astype(np.float64)), tol * 10)
    tclose(L, torch.linalg.cholesky(torch.from_numpy(a)), tol * 10)
    U = st.linalg.cholesky(st.tensor(a), upper=True)
    tclose(U, torch.linalg.cholesky(torch.from_numpy(a), upper=True), tol * 10)


@pytest.mark.parametrize("dt,npdt,tol", DTYPES)
@pytest.mark.parametrize("batch", BATCHES)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_eigvalsh_against_numpy_and_torch(torch, dt, npdt, tol, batch, uplo):
    a = symmetric(batch + (5, 5), seed=11)
    # Junk in the triangle that is not read.
    junk = np.triu(np.full((5, 5), 7.0), 1) if uplo == "L" else np.tril(np.full((5, 5), 7.0), -1)
    A = st.tensor((a + junk).astype(npdt))
    w, V = st.linalg.eigh(A, UPLO=uplo)
    np_w = np.linalg.eigvalsh(a)
    close(w, np_w, tol * 10)
    tw, tV = torch.linalg.eigh(torch.from_numpy((a + junk).astype(npdt)), UPLO=uplo)
    tclose(w, tw, tol * 10)
    # Eigenvectors up to sign: align each column with torch's.
    v, tv = as_np(V), tV.double().numpy()
    signs = np.sign(np.sum(v * tv, axis=-2, keepdims=True))
    close(v * signs, tv, tol * 100)
    close(st.linalg.eigvalsh(A, uplo), np_w, tol * 10)
    res = st.linalg.eigh(A, uplo)
    assert res.eigenvalues.shape == w.shape and res.eigenvectors.shape == V.shape


@pytest.mark.parametrize("dt,npdt,tol", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 5, 3), (2, 3, 5)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_against_numpy_and_torch(torch, dt, npdt, tol, shape, mode):
    a = rng(12).standard_normal(shape).astype(npdt)
    Q, R = st.linalg.qr(st.tensor(a), mode=mode)
    tQ, tR = torch.linalg.qr(torch.from_numpy(a), mode=mode)
    # The same Householder convention as LAPACK's, so the factors match exactly, signs included.
    tclose(R, tR, tol * 10)
    assert tuple(Q.shape) == tuple(tQ.shape)
    if mode != "r":
        tclose(Q, tQ, tol * 10)
        nq, nr = np.linalg.qr(a.astype(np.float64), mode=mode)
        close(Q, nq, tol * 10)
        close(R, nr, tol * 10)
    assert st.linalg.qr(st.tensor(a), mode).R.shape == R.shape


@pytest.mark.parametrize("dt,npdt,tol", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_svdvals_against_numpy_and_torch(torch, dt, npdt, tol, shape, full_matrices):
    a = rng(13).standard_normal(shape).astype(npdt)
    U, S, Vh = st.linalg.svd(st.tensor(a), full_matrices=full_matrices)
    tU, tS, tVh = torch.linalg.svd(torch.from_numpy(a), full_matrices=full_matrices)
    assert (tuple(U.shape), tuple(S.shape), tuple(Vh.shape)) == (tuple(tU.shape), tuple(tS.shape), tuple(tVh.shape))
    tclose(S, tS, tol * 10)
    close(st.linalg.svdvals(st.tensor(a)), np.linalg.svd(a.astype(np.float64), compute_uv=False), tol * 10)
    k = min(shape[-2:])
    u, vh = as_np(U)[..., :k], as_np(Vh)[..., :k, :]
    close(u @ (as_np(S)[..., None] * vh), a, tol * 10)
    # Singular vectors up to a sign per pair.
    signs = np.sign(np.sum(u * tU.double().numpy()[..., :k], axis=-2, keepdims=True))
    close(u * signs, tU.double().numpy()[..., :k], tol * 100)
    assert st.linalg.svd(st.tensor(a), full_matrices).Vh.shape == Vh.shape


@pytest.mark.parametrize("ord", [2, 1, math.inf, -math.inf, 0, 3, 0.5, -1])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (None, True), (1, False), ((0, 2), True), (-1, False)])
def test_vector_norm_against_torch(torch, ord, dim, keepdim):
    x = rng(14).standard_normal((2, 3, 4))
    x[0, 0, 0] = 0.0
    got = st.linalg.vector_norm(st.tensor(x), ord=ord, dim=dim, keepdim=keepdim)
    want = torch.linalg.vector_norm(torch.from_numpy(x), ord=ord, dim=dim, keepdim=keepdim)
    assert tuple(got.shape) == tuple(want.shape)
    tclose(got, want)


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf])
@pytest.mark.parametrize("dim,keepdim", [((-2, -1), False), ((0, 2), True), ((2, 1), False)])
def test_matrix_norm_against_torch(torch, ord, dim, keepdim):
    x = rng(15).standard_normal((2, 3, 4))
    got = st.linalg.matrix_norm(st.tensor(x), ord=ord, dim=dim, keepdim=keepdim)
    want = torch.linalg.matrix_norm(torch.from_numpy(x), ord=ord, dim=dim, keepdim=keepdim)
    assert tuple(got.shape) == tuple(want.shape)
    tclose(got, want)


@pytest.mark.parametrize("shape,ord,dim", [
    ((2, 3, 4), None, None), ((3, 4), None, None), ((3, 4), "fro", None), ((3, 4), "nuc", None), ((3, 4), 2, None),
    ((4,), 1, None), ((4,), math.inf, None), ((2, 3, 4), None, 1), ((2, 3, 4), 3, (2,)), ((2, 3, 4), None, (0, 1)),
    ((2, 3, 4), -math.inf, (1, 2)),
])
def test_norm_against_torch(torch, shape, ord, dim):
    x = rng(16).standard_normal(shape)
    for keepdim in (False, True):
        got = st.linalg.norm(st.tensor(x), ord=ord, dim=dim, keepdim=keepdim)
        want = torch.linalg.norm(torch.from_numpy(x), ord=ord, dim=dim, keepdim=keepdim)
        assert tuple(got.shape) == tuple(want.shape)
        tclose(got, want)
    assert st.linalg.norm(st.tensor(x.astype(np.float32)), ord=ord, dim=dim).dtype == st.float32


@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 5])
def test_matrix_power_and_matmul_against_torch(torch, n):
    a = well_conditioned((2, 3, 3), seed=17) / 3
    got = st.linalg.matrix_power(st.tensor(a), n)
    tclose(got, torch.linalg.matrix_power(torch.from_numpy(a), n), 1e-10)
    b = rng(18).standard_normal((3, 2))
    tclose(st.linalg.matmul(st.tensor(a), st.tensor(b)), torch.linalg.matmul(torch.from_numpy(a), torch.from_numpy(b)))
    # n = 1 is a copy, not the input itself.
    A = st.tensor(a)
    assert st.linalg.matrix_power(A, 1) is not A


# ---------------------------------------------------------------------------
# gradients against torch's autograd
# ---------------------------------------------------------------------------


def grad_pair(torch, fn_st, fn_t, *arrays, seed=0, tol=1e-8):
    """Backward through the same function in both libraries with the same random weights; compares
    the outputs and every input's gradient."""
    ss = [st.tensor(a).requires_grad_(True) for a in arrays]
    ts = [torch.from_numpy(np.array(a)).requires_grad_(True) for a in arrays]
    out_s, out_t = fn_st(*ss), fn_t(*ts)
    tclose(out_s, out_t, tol)
    w = rng(seed + 100).standard_normal(tuple(out_t.shape))
    (out_s * st.tensor(w)).sum().backward()
    (out_t * torch.from_numpy(w)).sum().backward()
    for s, t in zip(ss, ts):
        assert s.grad is not None
        tclose(s.grad, t.grad, tol)


def test_gradients_inv_solve_det_slogdet(torch):
    a = well_conditioned((2, 1, 3, 3), seed=20)
    b = rng(21).standard_normal((4, 3, 2))
    grad_pair(torch, st.linalg.inv, torch.linalg.inv, a)
    grad_pair(torch, st.linalg.solve, torch.linalg.solve, a, b)
    grad_pair(torch, st.linalg.solve, torch.linalg.solve, a[:, 0], rng(22).standard_normal((2, 3)))
    grad_pair(torch, lambda x, y: st.linalg.solve(x, y, left=False), lambda x, y: torch.linalg.solve(x, y, left=False),
              a, np.swapaxes(b, -1, -2))
    grad_pair(torch, st.linalg.det, torch.linalg.det, a)
    grad_pair(torch, lambda x: st.linalg.slogdet(x).logabsdet, lambda x: torch.linalg.slogdet(x).logabsdet, a)


def test_det_gradient_at_a_singular_matrix_is_the_cofactor_matrix():
    """At a singular matrix the gradient of det is the cofactor matrix (checked against the
    minors and central differences, not against another library: PyTorch's answer there is
    platform-dependent, all zeros on an AMD EPYC, the cofactors on an Intel Xeon)."""
    singular = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    cofactor = np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(singular, i, 0), j, 1))
                          for j in range(3)] for i in range(3)])
    assert np.abs(cofactor).max() > 1.0  # rank 2: the cofactors do not vanish
    x = st.tensor(singular, dtype=st.float64, requires_grad=True)
    st.linalg.det(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), cofactor, rtol=1e-10, atol=1e-10)
    eps = 1e-6
    fd = np.zeros_like(singular)
    for i in range(3):
        for j in range(3):
            up, down = singular.copy(), singular.copy()
            up[i, j] += eps
            down[i, j] -= eps
            fd[i, j] = (np.linalg.det(up) - np.linalg.det(down)) / (2 * eps)
    np.testing.assert_allclose(x.grad.numpy(), fd, rtol=1e-6, atol=1e-6)


def test_gradients_triangular_cholesky_eigh(torch):
    a = well_conditioned((2, 4, 4), seed=23)
    b = rng(24).standard_normal((2, 4, 3))
    for upper in (False, True):
        grad_pair(torch, lambda x, y: st.linalg.solve_triangular(x, y, upper=upper),
                  lambda x, y: torch.linalg.solve_triangular(x, y, upper=upper), a, b)
        grad_pair(torch, lambda x, y: st.linalg.solve_triangular(x, y, upper=upper, left=False, unitriangular=True),
                  lambda x, y: torch.linalg.solve_triangular(x, y, upper=upper, left=False, unitriangular=True), a,
                  np.swapaxes(b, -1, -2))
        grad_pair(torch, lambda x: st.linalg.cholesky(x, upper=upper),
                  lambda x: torch.linalg.cholesky(x, upper=upper), spd((2, 4, 4), seed=25))
    s = symmetric((2, 4, 4), seed=26)
    grad_pair(torch, st.linalg.eigvalsh, torch.linalg.eigvalsh, s)
    grad_pair(torch, lambda x: st.linalg.eigh(x, "U")[0], lambda x: torch.linalg.eigh(x, "U")[0], s)
    # Eigenvector losses that do not depend on the sign of each eigenvector.
    grad_pair(torch, lambda x: st.linalg.eigh(x).eigenvectors ** 2, lambda x: torch.linalg.eigh(x).eigenvectors ** 2, s)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
def test_gradients_qr_svd(torch, shape):
    a = rng(27).standard_normal(shape)
    for mode in ("reduced", "r"):
        grad_pair(torch, lambda x: st.linalg.qr(x, mode).R, lambda x: torch.linalg.qr(x, "reduced").R, a)
    grad_pair(torch, lambda x: st.linalg.qr(x).Q, lambda x: torch.linalg.qr(x).Q, a)
    grad_pair(torch, st.linalg.svdvals, torch.linalg.svdvals, a)
    k = min(shape[-2:])
    for full in (False, True):
        grad_pair(torch, lambda x: st.linalg.svd(x, full)[1], lambda x: torch.linalg.svd(x, full)[1], a)
        grad_pair(torch, lambda x: st.linalg.svd(x, full).U[..., :k] ** 2,
                  lambda x: torch.linalg.svd(x, full).U[..., :k] ** 2, a)
        grad_pair(torch, lambda x: st.linalg.svd(x, full).Vh[..., :k, :] ** 2,
                  lambda x: torch.linalg.svd(x, full).Vh[..., :k, :] ** 2, a)


def test_gradients_norms_and_powers(torch):
    a = rng(28).standard_normal((2, 3, 4))
    for ord in ("fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf):
        grad_pair(torch, lambda x: st.linalg.matrix_norm(x, ord), lambda x: torch.linalg.matrix_norm(x, ord), a)
    for ord in (2, 1, 3, math.inf):
        grad_pair(torch, lambda x: st.linalg.vector_norm(x, ord, dim=-1),
                  lambda x: torch.linalg.vector_norm(x, ord, dim=-1), a)
    grad_pair(torch, lambda x: st.linalg.norm(x), lambda x: torch.linalg.norm(x), a)
    sq = well_conditioned((2, 3, 3), seed=29) / 3
    for n in (-2, 3):
        grad_pair(torch, lambda x: st.linalg.matrix_power(x, n), lambda x: torch.linalg.matrix_power(x, n), sq)


def test_second_derivatives_against_torch(torch):
    a = well_conditioned((3, 3), seed=30)
    s = spd((3, 3), seed=31)
    cases = [
        (st.linalg.inv, torch.linalg.inv, a),
        (st.linalg.det, torch.linalg.det, a),
        (lambda x: st.linalg.slogdet(x)[1], lambda x: torch.linalg.slogdet(x)[1], a),
        (st.linalg.cholesky, torch.linalg.cholesky, s),
        (st.linalg.eigvalsh, torch.linalg.eigvalsh, s),
        (lambda x: st.linalg.qr(x).R, lambda x: torch.linalg.qr(x).R, a),
        (st.linalg.svdvals, torch.linalg.svdvals, a),
    ]
    for i, (fs, ft, x) in enumerate(cases):
        xs = st.tensor(x).requires_grad_(True)
        xt = torch.from_numpy(x.copy()).requires_grad_(True)
        ys, yt = fs(xs), ft(xt)
        w = rng(32 + i).standard_normal(tuple(yt.shape))
        ws, wt = st.tensor(w), torch.from_numpy(w)
        (gs,) = st.autograd.grad((ys * ws).sum(), xs, create_graph=True)
        (gt,) = torch.autograd.grad((yt * wt).sum(), xt, create_graph=True)
        tclose(gs, gt, 1e-8)
        (gs * gs).sum().backward()
        (gt * gt).sum().backward()
        tclose(xs.grad, xt.grad, 1e-7)


def test_no_history_under_no_grad():
    A = st.tensor(well_conditioned((3, 3))).requires_grad_(True)
    with st.no_grad():
        assert not st.linalg.inv(A).requires_grad
        assert not st.linalg.eigh(A)[1].requires_grad
    assert st.linalg.inv(A).requires_grad


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------


def test_shape_errors_name_the_op_and_shape():
    with pytest.raises(st.ShapeError, match=r"linalg\.inv.*\(2, 3\)"):
        st.linalg.inv(st.zeros(2, 3))
    with pytest.raises(st.ShapeError, match=r"linalg\.det.*\(3,\)"):
        st.linalg.det(st.zeros(3))
    with pytest.raises(st.ShapeError, match=r"linalg\.solve"):
        st.linalg.solve(st.eye(3), st.zeros(4, 2))
    with pytest.raises(st.ShapeError, match=r"linalg\.solve.*left=False"):
        st.linalg.solve(st.eye(3), st.zeros(3), left=False)
    with pytest.raises(st.ShapeError, match=r"linalg\.qr"):
        st.linalg.qr(st.zeros(3))
    with pytest.raises(st.ShapeError, match=r"linalg\.matrix_power"):
        st.linalg.matrix_power(st.zeros(2, 3), 2)
    with pytest.raises(ValueError):  # ShapeError is a ValueError too
        st.linalg.cholesky(st.zeros(2, 3))


@pytest.mark.parametrize("dtype", [st.int64, st.int32, st.bool, st.float16, st.bfloat16])
def test_dtype_errors_name_the_op_and_dtype(dtype):
    A = st.ones(2, 2, dtype=dtype)
    name = str(dtype).split(".")[-1]
    for fn, op in [(st.linalg.inv, "inv"), (st.linalg.det, "det"), (st.linalg.cholesky, "cholesky"),
                   (st.linalg.eigvalsh, "eigvalsh"), (lambda x: st.linalg.qr(x), "qr"), (st.linalg.svdvals, "svdvals")]:
        with pytest.raises(st.DtypeError, match=rf"linalg\.{op}.*{name}"):
            fn(A)
    with pytest.raises(TypeError):  # DtypeError is a TypeError
        st.linalg.solve(st.eye(2, dtype=st.float64), st.ones(2, dtype=st.float32))


def test_value_errors_singular_not_positive_definite_and_arguments():
    singular = st.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    with pytest.raises(st.SpiralValueError, match=r"^linalg\.inv: The diagonal element \d is zero, the inversion could "
                                                  r"not be completed because the input matrix is singular\.$"):
        st.linalg.inv(singular)
    batch = st.stack([st.eye(3), singular])
    with pytest.raises(ValueError, match=r"linalg\.inv: \(Batch element 1\): The diagonal element"):
        st.linalg.inv(batch)
    with pytest.raises(ValueError, match=r"linalg\.solve: \(Batch element 1\).*singular"):
        st.linalg.solve(batch, st.ones(2, 3))
    with pytest.raises(ValueError, match=r"linalg\.cholesky: .*the leading minor of order 2 is not positive-definite"):
        st.linalg.cholesky(st.tensor([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="UPLO"):
        st.linalg.eigh(st.eye(2), "X")
    with pytest.raises(ValueError, match="mode"):
        st.linalg.qr(st.eye(2), "thin")
    with pytest.raises(ValueError, match="order"):
        st.linalg.matrix_norm(st.eye(2), "bad")
    with pytest.raises(TypeError, match="int"):
        st.linalg.matrix_power(st.eye(2), 1.5)


def test_torch_raises_the_same_singular_message(torch):
    a = [[1.0, 2.0], [2.0, 4.0]]
    with pytest.raises(RuntimeError) as te:
        torch.linalg.inv(torch.tensor(a))
    with pytest.raises(ValueError) as se:
        st.linalg.inv(st.tensor(a))
    assert str(se.value) == str(te.value)


def test_complete_qr_of_a_tall_matrix_has_no_q_gradient_but_an_r_one():
    A = st.tensor(rng(33).standard_normal((4, 2))).requires_grad_(True)
    Q, R = st.linalg.qr(A, mode="complete")
    with pytest.raises(ValueError, match=r"linalg\.qr: .*mode='complete'"):
        Q.sum().backward(retain_graph=True)
    assert A.grad is None  # the failed backward left no partial gradient
    R.sum().backward()
    assert A.grad is not None


def test_other_devices_are_refused():
    if st.wgpu.is_available():
        dev = "wgpu"
    elif st.cuda.is_available():
        dev = "cuda"
    else:
        pytest.skip("no cuda or wgpu device here")
    A = st.eye(3).to(dev)
    # The device's backend has no dense factorizations (backend.h's declining defaults): every
    # factorization refuses by name.
    for fn, op in [(st.linalg.inv, "inv"), (st.linalg.det, "det"), (st.linalg.slogdet, "slogdet"),
                   (st.linalg.eigh, "eigh"), (st.linalg.eigvalsh, "eigvalsh"), (st.linalg.cholesky, "cholesky"),
                   (st.linalg.qr, "qr"), (st.linalg.svd, "svd"), (st.linalg.svdvals, "svdvals"),
                   (lambda x: st.linalg.solve(x, x), "solve"),
                   (lambda x: st.linalg.solve_triangular(x, x, upper=True), "solve_triangular")]:
        with pytest.raises(st.DeviceUnavailableError, match=rf"linalg\.{op}: .*but A is on {dev}.*CPU"):
            fn(A)
    with pytest.raises(st.DeviceUnavailableError, match=r"linalg\.solve: .*but B is on"):
        st.linalg.solve(st.eye(3), st.ones(3).to(dev))
    # Norms and positive powers are plain ops: they work there.
    close(st.linalg.matrix_norm(A).to("cpu"), math.sqrt(3.0), 1e-6)
    close(st.linalg.matrix_power(A, 2).to("cpu"), np.eye(3), 1e-6)


def test_a_failing_call_changes_nothing():
    a = np.stack([np.eye(3), [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]])
    A = st.tensor(a).requires_grad_(True)
    B = st.ones(2, 3, dtype=st.float64).requires_grad_(True)
    for call in (lambda: st.linalg.inv(A), lambda: st.linalg.solve(A, B), lambda: st.linalg.cholesky(A - 5 * st.eye(3))):
        with pytest.raises(ValueError):
            call()
    close(A.detach(), a, 0)
    close(B.detach(), np.ones((2, 3)), 0)
    assert A.grad is None and B.grad is None
    # The successful ops never write their inputs either (LAPACK works on copies).
    s = spd((2, 3, 3), seed=34)
    S = st.tensor(s)
    for fn in (st.linalg.inv, st.linalg.det, st.linalg.cholesky, st.linalg.eigh, st.linalg.qr, st.linalg.svd,
               lambda x: st.linalg.solve_triangular(x, x, upper=True), lambda x: st.linalg.solve(x, x)):
        fn(S)
    close(S, s, 0)
