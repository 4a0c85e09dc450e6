"""spiraltorch.autograd.Function: custom forward/backward pairs, checked side by side with the
same Function written for torch.autograd.Function (float64, gradients equal to 1e-12), against
central finite differences, and for its error messages."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
from conftest import gradcheck, rand_array, st_tensor, to_np
from spiraltorch.autograd import Function, FunctionCtx, once_differentiable

ATOL = 1e-12


def R(shape, seed=0, low=-2.0, high=2.0):
    return rand_array(shape, np.float64, seed=seed, low=low, high=high)


def pair(arr, requires_grad=True):
    """The same float64 data as a SpiralTorch leaf and a torch leaf."""
    torch = pytest.importorskip("torch")
    return (st_tensor(arr, dtype=st.float64, requires_grad=requires_grad),
            torch.tensor(np.asarray(arr, dtype=np.float64), requires_grad=requires_grad))


def close(st_t, torch_t, atol=ATOL):
    """A SpiralTorch tensor equals a torch tensor to ``atol`` (both None is fine too)."""
    if st_t is None or torch_t is None:
        assert st_t is None and torch_t is None, (st_t, torch_t)
        return
    np.testing.assert_allclose(to_np(st_t), torch_t.detach().numpy(), rtol=0, atol=atol)


def base_of(lib):
    """spiraltorch.autograd.Function or torch.autograd.Function."""
    if lib == "st":
        return Function
    return pytest.importorskip("torch").autograd.Function


# The factories below build one Function per library from the very same source: the bodies use
# tensor methods both libraries share, so each test compares one definition run twice.


def make_square(lib):
    class Square(base_of(lib)):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2.0 * x * g

    return Square


def make_ste_clamp(lib):
    class STEClamp(base_of(lib)):
        """clamp(x, lo, hi) whose gradient passes straight through (and is scaled by `gain`)."""

        @staticmethod
        def forward(ctx, x, lo, hi, gain=1.0):
            ctx.gain = gain
            return x.clamp(lo, hi)

        @staticmethod
        def backward(ctx, g):
            return g * ctx.gain, None, None, None

    return STEClamp


def make_mixed(lib, seen):
    class Mixed(base_of(lib)):
        """a * x + w * y with a Python number `a`, a None slot and tensors needing grad or not."""

        @staticmethod
        def forward(ctx, x, a, nothing, y, w):
            assert nothing is None
            seen.append(ctx.needs_input_grad)
            ctx.a = a
            ctx.save_for_backward(y, w)
            return x * a + w * y

        @staticmethod
        def backward(ctx, g):
            y, w = ctx.saved_tensors
            gx = g * ctx.a if ctx.needs_input_grad[0] else None
            gy = g * w if ctx.needs_input_grad[3] else None
            gw = g * y if ctx.needs_input_grad[4] else None
            return gx, None, None, gy, gw

    return Mixed


def make_two(lib, calls, materialize=True):
    class Two(base_of(lib)):
        @staticmethod
        def forward(ctx, x, y):
            ctx.set_materialize_grads(materialize)
            ctx.save_for_backward(x, y)
            return x * y, x + y

        @staticmethod
        def backward(ctx, g_prod, g_sum):
            calls.append((g_prod is None, g_sum is None))
            x, y = ctx.saved_tensors
            gx = gy = None
            if g_prod is not None:
                gx, gy = g_prod * y, g_prod * x
            if g_sum is not None:
                gx = g_sum if gx is None else gx + g_sum
                gy = g_sum if gy is None else gy + g_sum
            return gx, gy

    return Two


def make_max_index(lib, got):
    class MaxIndex(base_of(lib)):
        """(x * 3, argmax(x), x * 5): the index and the last output are non-differentiable."""

        @staticmethod
        def forward(ctx, x):
            idx = x.argmax()
            frozen = x * 5.0
            ctx.mark_non_differentiable(idx, frozen)
            return x * 3.0, idx, frozen

        @staticmethod
        def backward(ctx, g, g_idx, g_frozen):
            got.append((g_idx, g_frozen))
            return g * 3.0

    return MaxIndex


def make_sincos(lib):
    class SinMulCos(base_of(lib)):
        """(sin(x) * y, cos(x * y)) with a hand-written vector-Jacobian product."""

        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x.sin() * y, (x * y).cos()

        @staticmethod
        def backward(ctx, g1, g2):
            x, y = ctx.saved_tensors
            s = (x * y).sin()
            return g1 * x.cos() * y - g2 * s * y, g1 * x.sin() - g2 * s * x

    return SinMulCos


# ---------------------------------------------------------------------------
# side by side with torch.autograd.Function
# ---------------------------------------------------------------------------


def test_square_save_for_backward_matches_torch():
    arr = R((3, 4), seed=1)
    xs, xt = pair(arr)
    Sq, SqT = make_square("st"), make_square("torch")
    ys, yt = Sq.apply(xs), SqT.apply(xt)
    assert ys.requires_grad and not ys.is_leaf and ys.grad_fn == "SquareBackward"
    close(ys, yt)
    w = R((3, 4), seed=2)
    (ys * st_tensor(w)).sum().backward()
    (yt * pair(w, False)[1]).sum().backward()
    close(xs.grad, xt.grad)
    # the tensors forward saw and returned are left without history
    assert xs.grad_fn is None and xs.is_leaf


def test_straight_through_clamp_matches_torch():
    arr = R((5, 3), seed=3, low=-3.0, high=3.0)
    xs, xt = pair(arr)
    C, CT = make_ste_clamp("st"), make_ste_clamp("torch")
    ys, yt = C.apply(xs, -1.0, 1.0, 0.5), CT.apply(xt, -1.0, 1.0, 0.5)
    close(ys, yt)
    assert float(to_np(ys).max()) <= 1.0 and float(to_np(ys).min()) >= -1.0
    ((ys * ys).sum()).backward()
    ((yt * yt).sum()).backward()
    close(xs.grad, xt.grad)
    # straight through: the gradient is 2 * clamp(x) * gain even where the clamp is flat
    np.testing.assert_allclose(to_np(xs.grad), np.clip(arr, -1, 1), rtol=0, atol=ATOL)
    # the default `gain` and a keyword argument filling a positional parameter
    xs.grad, xt.grad = None, None
    C.apply(xs, -1.0, hi=1.0).sum().backward()
    CT.apply(xt, -1.0, hi=1.0).sum().backward()
    close(xs.grad, xt.grad)


@pytest.mark.parametrize("which", [(True, True, True), (True, False, True), (False, True, False)])
def test_non_tensor_args_and_needs_input_grad_match_torch(which):
    need_x, need_y, need_w = which
    xa, ya, wa = R((2, 3), seed=4), R((2, 3), seed=5), R((2, 3), seed=6)
    xs, xt = pair(xa, need_x)
    ys, yt = pair(ya, need_y)
    ws, wt = pair(wa, need_w)
    seen_st, seen_torch = [], []
    out_s = make_mixed("st", seen_st).apply(xs, 2.5, None, ys, ws)
    out_t = make_mixed("torch", seen_torch).apply(xt, 2.5, None, yt, wt)
    assert seen_st == seen_torch == [(need_x, False, False, need_y, need_w)]
    close(out_s, out_t)
    (out_s * out_s).sum().backward()
    (out_t * out_t).sum().backward()
    for s, t in ((xs, xt), (ys, yt), (ws, wt)):
        close(s.grad, t.grad)


def _two_pair(materialize=True):
    calls_s, calls_t = [], []
    return make_two("st", calls_s, materialize), make_two("torch", calls_t, materialize), calls_s, calls_t


@pytest.mark.parametrize("materialize", [True, False])
@pytest.mark.parametrize("use", ["both", "prod", "sum", "prod_twice"])
def test_two_outputs_match_torch(use, materialize):
    torch = pytest.importorskip("torch")
    xa, ya = R((3, 2), seed=7), R((3, 2), seed=8)
    xs, xt = pair(xa)
    ys, yt = pair(ya)
    Two, TwoT, calls_s, calls_t = _two_pair(materialize)
    (ps, ss), (pt, sst) = Two.apply(xs, ys), TwoT.apply(xt, yt)
    assert isinstance(Two.apply(xs, ys), tuple)
    close(ps, pt)
    close(ss, sst)
    assert ps.requires_grad and ss.requires_grad and ps.grad_fn == "TwoBackward"

    def loss(p, s, lib):
        if use == "both":
            return (p * p).sum() + (s * 3.0).sum() + (p * s).sum()
        if use == "prod":
            return (p * p).sum()
        if use == "sum":
            return (s.sin()).sum()
        return (p * 2.0).sum() + (p * p).sum()

    loss(ps, ss, st).backward()
    loss(pt, sst, torch).backward()
    close(xs.grad, xt.grad)
    close(ys.grad, yt.grad)
    # one backward call per pass, with None exactly where torch passes None
    assert calls_s == calls_t and len(calls_s) == 1


def test_two_outputs_autograd_grad_and_retain_graph():
    torch = pytest.importorskip("torch")
    xa, ya = R((4,), seed=9), R((4,), seed=10)
    xs, xt = pair(xa)
    ys, yt = pair(ya)
    Two, TwoT, calls_s, calls_t = _two_pair(materialize=False)
    (ps, ss), (pt, sst) = Two.apply(xs, ys), TwoT.apply(xt, yt)
    # autograd.grad of each output in turn, the graph retained in between
    for pick in (0, 1, 0):
        gs = st.autograd.grad([(ps, ss)[pick].sum()], [xs, ys], retain_graph=True)
        gt = torch.autograd.grad([(pt, sst)[pick].sum()], [xt, yt], retain_graph=True)
        for a, b in zip(gs, gt):
            close(a, b)
    assert calls_s == calls_t == [(False, True), (True, False), (False, True)]
    # both outputs as roots of one pass, with explicit output gradients
    wa, wb = R((4,), seed=11), R((4,), seed=12)
    st.autograd.backward([ps, ss], [st_tensor(wa), st_tensor(wb)])
    torch.autograd.backward([pt, sst], [torch.tensor(wa), torch.tensor(wb)])
    close(xs.grad, xt.grad)
    close(ys.grad, yt.grad)
    assert calls_s[-1] == calls_t[-1] == (False, False)
    # the graph was not retained by the last pass
    with pytest.raises(RuntimeError, match="second time"):
        ps.sum().backward()


def test_two_outputs_after_a_failed_pass():
    """A pass that fails after one output's gradient arrived must not leak it into the next."""
    events, calls = [], []

    class Boom(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            events.append("boom")
            raise KeyError("boom")

    Two = make_two("st", calls, materialize=False)
    x = st_tensor(np.array([1.0, 2.0]), requires_grad=True)
    y = st_tensor(np.array([3.0, 4.0]), requires_grad=True)
    p, s = Two.apply(x, y)
    p.register_hook(lambda g: events.append("p"))
    for loss in (Boom.apply(s).sum() + p.sum(), p.sum() + Boom.apply(s).sum()):
        with pytest.raises(KeyError):
            loss.backward(retain_graph=True)
    assert "p" in events[:events.index("boom", 1)]  # p's gradient did arrive before a failure
    assert calls == []
    (s * 2.0).sum().backward()
    assert calls == [(True, False)]
    assert to_np(x.grad).tolist() == [2.0, 2.0] and to_np(y.grad).tolist() == [2.0, 2.0]


def test_mark_non_differentiable_index_output_matches_torch():
    arr = np.array([0.3, -1.2, 2.5, 0.7])
    xs, xt = pair(arr)
    got_s, got_t = [], []
    vs, idx_s, fs = make_max_index("st", got_s).apply(xs)
    vt, idx_t, ft = make_max_index("torch", got_t).apply(xt)
    assert idx_s.item() == idx_t.item() == 2 and idx_s.dtype == st.int64
    assert vs.requires_grad and not idx_s.requires_grad and not fs.requires_grad
    assert vt.requires_grad and not idx_t.requires_grad and not ft.requires_grad
    close(fs, ft)
    (vs * vs).sum().backward()
    (vt * vt).sum().backward()
    close(xs.grad, xt.grad)
    # backward gets materialized zeros for the non-differentiable outputs, as in torch
    (gi_s, gf_s), (gi_t, gf_t) = got_s[0], got_t[0]
    assert gi_s.dtype == st.int64 and gi_s.item() == gi_t.item() == 0
    close(gf_s, gf_t)


def test_function_used_twice_in_one_graph_matches_torch():
    pytest.importorskip("torch")
    xa, ya = R((2, 3), seed=13), R((2, 3), seed=14)
    xs, xt = pair(xa)
    ys, yt = pair(ya)
    Sq, SqT = make_square("st"), make_square("torch")
    Two, TwoT, calls_s, calls_t = _two_pair()

    def graph(x, y, sq, two):
        a = sq.apply(x)
        b = sq.apply(sq.apply(x) + y)  # nested, and sharing the input x
        p, s = two.apply(a, b)
        p2, s2 = two.apply(p, x)  # the two-output function again, fed by itself
        return (p2 * s).sum() + (s2 * a).sum() + b.sum()

    graph(xs, ys, Sq, Two).backward()
    graph(xt, yt, SqT, TwoT).backward()
    close(xs.grad, xt.grad)
    close(ys.grad, yt.grad)
    assert calls_s == calls_t and len(calls_s) == 2


def test_gradcheck_against_finite_differences():
    F = make_sincos("st")
    xa, ya = R((3, 2), seed=15), R((3, 2), seed=16)
    analytic = gradcheck(lambda x, y: F.apply(x, y), xa, ya, atol=1e-7, rtol=1e-6)
    assert len(analytic) == 2
    # one output alone, one input held constant, and a one-output function
    gradcheck(lambda x, y: F.apply(x, y)[1], xa, ya, atol=1e-7, rtol=1e-6)
    gradcheck(lambda x, y: F.apply(x, y), xa, ya, atol=1e-7, rtol=1e-6, check_grad_of=[1])
    gradcheck(lambda x: make_square("st").apply(x), R((4,), seed=17), atol=1e-7, rtol=1e-6)
    # the torch twin of the same function passes torch's gradcheck and gives the same gradients
    torch = pytest.importorskip("torch")
    FT = make_sincos("torch")
    xt, yt = torch.tensor(xa, requires_grad=True), torch.tensor(ya, requires_grad=True)
    assert torch.autograd.gradcheck(FT.apply, (xt, yt))
    xs, ys = st_tensor(xa, requires_grad=True), st_tensor(ya, requires_grad=True)
    (a, b), (at, bt) = F.apply(xs, ys), FT.apply(xt, yt)
    ((a * b).sum() + (a * a).sum()).backward()
    ((at * bt).sum() + (at * at).sum()).backward()
    close(xs.grad, xt.grad)
    close(ys.grad, yt.grad)


def test_double_backward_matches_torch():
    torch = pytest.importorskip("torch")
    xa = R((5,), seed=18)
    xs, xt = pair(xa)
    Sq, SqT = make_square("st"), make_square("torch")
    (gs,) = st.autograd.grad([(Sq.apply(xs) * xs).sum()], [xs], create_graph=True)
    (gt,) = torch.autograd.grad([(SqT.apply(xt) * xt).sum()], [xt], create_graph=True)
    close(gs, gt)
    assert gs.requires_grad
    (hs,) = st.autograd.grad([(gs * gs).sum()], [xs])
    (ht,) = torch.autograd.grad([(gt * gt).sum()], [xt])
    close(hs, ht)


def test_once_differentiable_runs_backward_without_graph():
    torch = pytest.importorskip("torch")
    from torch.autograd.function import once_differentiable as once_t

    def make(lib, once, grad_modes):
        class Cube(base_of(lib)):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x * x

            @staticmethod
            @once
            def backward(ctx, g):
                grad_modes.append((st.is_grad_enabled(), torch.is_grad_enabled()))
                (x,) = ctx.saved_tensors
                return 3.0 * x * x * g

        return Cube

    modes_s, modes_t = [], []
    C, CT = make("st", once_differentiable, modes_s), make("torch", once_t, modes_t)
    xa = R((4,), seed=19)
    xs, xt = pair(xa)
    C.apply(xs).sum().backward()
    CT.apply(xt).sum().backward()
    close(xs.grad, xt.grad)
    # under create_graph the backward still runs with grad mode off
    ys = C.apply(xs)
    (g,) = st.autograd.grad([ys], [xs], [st_tensor(np.ones(4)).requires_grad_()], create_graph=True)
    assert modes_s[-1][0] is False
    close(g, torch.tensor(3.0 * xa * xa))
    # and differentiating its result again is refused, as in torch
    with pytest.raises(RuntimeError, match="once_differentiable"):
        g.sum().backward()
    assert C.backward.__name__ == "backward"


def test_setup_context_style_with_keyword_and_default_args_matches_torch():
    pytest.importorskip("torch")

    def make(lib):
        class ScaledExp(base_of(lib)):
            @staticmethod
            def forward(x, scale=2.0, shift=None):
                y = (x * scale).exp()
                return y if shift is None else y + shift

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, scale, shift = inputs
                ctx.scale = scale
                ctx.save_for_backward(output if shift is None else output - shift)

            @staticmethod
            def backward(ctx, g):
                (y,) = ctx.saved_tensors
                return g * y * ctx.scale, None, (g if ctx.needs_input_grad[2] else None)

        return ScaledExp

    E, ET = make("st"), make("torch")
    xa, sa = R((3,), seed=20, low=-1, high=1), R((3,), seed=21)
    xs, xt = pair(xa)
    ss, st_ = pair(sa)
    for kwargs_s, kwargs_t in (({}, {}), ({"scale": 0.5}, {"scale": 0.5}), ({"shift": ss}, {"shift": st_})):
        xs.grad, xt.grad = None, None
        E.apply(xs, **kwargs_s).sum().backward()
        ET.apply(xt, **kwargs_t).sum().backward()
        close(xs.grad, xt.grad)
    close(ss.grad, st_.grad)


def test_broadcast_gradient_is_summed_and_dtype_cast_like_torch():
    torch = pytest.importorskip("torch")

    def make(lib):
        class AddRow(base_of(lib)):
            @staticmethod
            def forward(ctx, m, row):
                return m + row

            @staticmethod
            def backward(ctx, g):
                # the row's gradient is returned at the matrix's shape, in float32
                return g, g.float()

        return AddRow

    ma, ra = R((4, 3), seed=22), R((1, 3), seed=23)
    ms, mt = pair(ma)
    rs, rt = pair(ra)
    w = R((4, 3), seed=24)
    (make("st").apply(ms, rs) * st_tensor(w)).sum().backward()
    (make("torch").apply(mt, rt) * torch.tensor(w)).sum().backward()
    close(ms.grad, mt.grad)
    assert rs.grad.dtype == st.float64 and tuple(rs.grad.shape) == (1, 3)
    close(rs.grad, rt.grad, atol=1e-5)  # float32 round trip


def test_identity_forward_returns_a_new_tensor_with_history():
    torch = pytest.importorskip("torch")

    def make(lib):
        class Ident(base_of(lib)):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2.0

        return Ident

    xs, xt = pair(R((3,), seed=25))
    ys, yt = make("st").apply(xs), make("torch").apply(xt)
    assert ys is not xs and ys.requires_grad and xs.grad_fn is None and ys.grad_fn == "IdentBackward"
    ys.sum().backward()
    yt.sum().backward()
    close(xs.grad, xt.grad)
    assert torch.equal(xt.grad, torch.full((3,), 2.0, dtype=torch.float64))


def test_no_grad_and_constant_inputs_record_nothing():
    Sq = make_square("st")
    x = st_tensor(R((3,), seed=26), dtype=st.float64, requires_grad=True)
    with st.no_grad():
        y = Sq.apply(x)
    assert not y.requires_grad and y.grad_fn is None
    c = st_tensor(R((3,), seed=26), dtype=st.float64)
    assert not Sq.apply(c).requires_grad
    # a forward returning plain Python values and a list is passed through as such
    calls = []

    class Pass(Function):
        @staticmethod
        def forward(ctx, x, k):
            return [x * k, k]

        @staticmethod
        def backward(ctx, g, g_k):
            calls.append(g_k)
            return g * k, None

    k = 3.0
    out = Pass.apply(x, k)
    assert isinstance(out, list) and out[1] == 3.0 and out[0].requires_grad
    out[0].sum().backward()
    assert calls == [None]
    np.testing.assert_allclose(to_np(x.grad), [3.0, 3.0, 3.0])


def test_saved_outputs_do_not_leak_through_the_graph():
    import gc
    import weakref

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            ctx.marker = marker
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    class Marker:
        pass

    marker = Marker()
    ref = weakref.ref(marker)
    x = st_tensor(R((3,), seed=27), dtype=st.float64, requires_grad=True)
    y = Exp.apply(x)
    y.sum().backward(retain_graph=True)
    np.testing.assert_allclose(to_np(x.grad), np.exp(to_np(x)), rtol=0, atol=ATOL)
    marker = None  # forward's closure keeps the name, not the object
    del y
    gc.collect()
    assert ref() is None


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------


def _fn(backward, forward=None):
    class Bad(Function):
        @staticmethod
        def forward(ctx, x, k=1.0):
            return x * k if forward is None else forward(ctx, x, k)

    Bad.backward = staticmethod(backward)
    return Bad


@pytest.fixture
def x():
    return st_tensor(R((2, 3), seed=28), dtype=st.float64, requires_grad=True)


def test_wrong_number_of_gradients(x):
    with pytest.raises(ValueError, match=r"function BadBackward returned an incorrect number of gradients "
                                         r"\(expected 2, got 1\)"):
        _fn(lambda ctx, g: (g,)).apply(x, 2.0).sum().backward()
    with pytest.raises(RuntimeError, match=r"BadBackward returned an incorrect number of gradients "
                                           r"\(expected 2, got 3\)"):
        _fn(lambda ctx, g: (g, None, g)).apply(x, 2.0).sum().backward()
    # trailing None values past the arguments are ignored (as torch does)
    _fn(lambda ctx, g: (g, None, None)).apply(x, 2.0).sum().backward()
    # a single Tensor is the gradient of a single argument
    _fn(lambda ctx, g: g).apply(x).sum().backward()
    np.testing.assert_allclose(to_np(x.grad), np.full((2, 3), 2.0))


def test_gradient_for_a_non_tensor_argument(x):
    with pytest.raises(ValueError, match="returned a gradient different than None at position 2, but the "
                                         "corresponding forward input was not a Tensor"):
        _fn(lambda ctx, g: (g, g)).apply(x, 2.0).sum().backward()


def test_gradient_of_the_wrong_shape_or_type(x):
    with pytest.raises(st.ShapeError, match=r"function BadBackward returned an invalid gradient at position 1 - "
                                            r"got \[3, 2\] but expected shape compatible with \[2, 3\]"):
        _fn(lambda ctx, g: (g.t(), None)).apply(x, 2.0).sum().backward()
    with pytest.raises(TypeError, match="returned a float as the gradient at position 1"):
        _fn(lambda ctx, g: (1.0, None)).apply(x, 2.0).sum().backward()


def test_modified_saved_tensor(x):
    class Saves(Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x)
            return x * w

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2.0, None

    w = st_tensor(np.full((2, 3), 2.0))
    y = Saves.apply(x, w)
    with st.no_grad():
        w.add_(1.0)  # w was not saved: fine
    y.sum().backward(retain_graph=True)
    with st.no_grad():
        x.add_(1.0)
    with pytest.raises(RuntimeError, match="saved tensor 0 of SavesBackward is at version 1; expected version 0"):
        y.sum().backward()


def test_ctx_misuse_and_class_misuse(x):
    ctx = FunctionCtx("ProbeBackward")
    with pytest.raises(TypeError, match="save_for_backward can only save tensors, but argument 1 is of type int"):
        ctx.save_for_backward(x, 3)
    with pytest.raises(TypeError, match="mark_non_differentiable expects tensors"):
        ctx.mark_non_differentiable("idx")
    with pytest.raises(NotImplementedError, match="mark_dirty"):
        ctx.mark_dirty(x)
    ctx.save_for_backward(x, None)
    assert ctx.saved_tensors[0] is x and ctx.saved_tensors[1] is None

    class NoBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0

    y = NoBackward.apply(x)
    with pytest.raises(NotImplementedError, match="must implement either the backward or vjp"):
        y.sum().backward()

    class NoForward(Function):
        pass

    with pytest.raises(NotImplementedError, match="must implement the forward"):
        NoForward.apply(x)
    with pytest.raises(TypeError, match="subclass Function"):
        Function.apply(x)
    with pytest.raises(TypeError, match=r"call the class's static NoForward.apply"):
        NoForward()(x)
    # the exception a backward raises propagates with its own type
    class Oops(LookupError):
        pass

    def boom(ctx, g):
        raise Oops("from backward")

    with pytest.raises(Oops, match="from backward"):
        _fn(boom).apply(x, 2.0).sum().backward()
    assert st.is_grad_enabled()


def test_vjp_alias():
    class Neg(Function):
        @staticmethod
        def forward(ctx, x):
            return -x

        @staticmethod
        def vjp(ctx, g):
            return -g

    x = st_tensor(np.array([1.0, 2.0]), requires_grad=True)
    Neg.apply(x).sum().backward()
    assert to_np(x.grad).tolist() == [-1.0, -1.0]
