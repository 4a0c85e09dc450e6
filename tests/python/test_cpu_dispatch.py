"""The CPU kernels' run-time capability dispatch (src/backend/cpu/dispatch.h).

For every capability this CPU supports, a fresh interpreter forced to it with
SPIRALTORCH_CPU_CAPABILITY computes a fixed set of ops (elementwise and vector math,
reductions, softmax, layer/batch norm, cross-entropy, attention, LSTM/GRU, Adam steps) in
float32/float64/bfloat16/float16, and its results are compared with the baseline kernels'
(not with PyTorch): the wider kernels may round differently (FMA contraction, summation order)
but only by a few units in the last place. It also checks what describe_device("cpu")
reports, that the default is the best capability, and the errors for bad requests.
"""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
from conftest import run_python

INFO = st.describe_device("cpu")
SUPPORTED = list(INFO["cpu_capabilities"])

# The ops, run in each forced interpreter; results go to an .npz file (half types as float32,
# which holds them exactly).
_SCRIPT = r"""
import sys
import numpy as np
import spiraltorch as st
import spiraltorch.nn.functional as F

out = {}
rng = np.random.default_rng(7)

def np_of(t):
    t = t.detach()
    return (t.to(st.float32) if t.dtype in (st.bfloat16, st.float16) else t).numpy().copy()

def put(name, t, scale=None):
    out[name] = np_of(t)
    if scale is not None:  # the size of the terms summed into each element (see _compare)
        out["scale:" + name] = np.asarray(scale, dtype=np.float64)

special = np.array([0.0, -0.0, 1e-45, -1e-45, 1e-38, 3.4e38, -3.4e38, np.inf, -np.inf, np.nan,
                    88.7, 88.8, -87.5, -103.5, 1e6, -1e7, 0.5, -0.5, 4.0, -9.0], dtype=np.float64)

for dt_name in ("float32", "float64", "bfloat16", "float16"):
    dt = getattr(st, dt_name)
    # 5000 values: a vector body and a remainder at every width, and above the fix-up block size
    xv = np.concatenate([rng.standard_normal(4000) * 4, rng.uniform(-60, 60, 980), special])
    yv = rng.standard_normal(xv.size) * 2
    x = st.from_numpy(xv).to(dt)
    y = st.from_numpy(yv).to(dt)
    out[f"input:{dt_name}"] = np_of(x)
    for op in ("exp", "log", "log1p", "expm1", "tanh", "sigmoid", "sin", "cos", "tan", "erf", "atanh",
               "sqrt", "rsqrt", "abs", "neg", "relu", "reciprocal"):
        put(f"{op}/{dt_name}", getattr(st, op)(x.abs() * 0.3 if op == "atanh" else x))
    put(f"gelu/{dt_name}", F.gelu(x))
    put(f"gelu_tanh/{dt_name}", F.gelu(x, approximate="tanh"))
    put(f"silu/{dt_name}", F.silu(x))
    put(f"softplus/{dt_name}", F.softplus(x))
    put(f"add/{dt_name}", x + y)
    put(f"mul/{dt_name}", x * y)
    put(f"div/{dt_name}", x / y)
    put(f"max/{dt_name}", st.maximum(x, y))
    put(f"mul_scalar/{dt_name}", x * 0.1)
    put(f"lt/{dt_name}", (x < y).to(st.float32))
    # broadcasting: (40, 1, 30) op (1, 50, 30), and a row against a matrix
    a = st.from_numpy(rng.standard_normal((40, 1, 30))).to(dt)
    b = st.from_numpy(rng.standard_normal((1, 50, 30))).to(dt)
    put(f"add_bcast/{dt_name}", a + b)
    put(f"mul_bcast/{dt_name}", a * b)
    m = st.from_numpy(rng.standard_normal((64, 300))).to(dt)
    put(f"sub_row/{dt_name}", m - m[3])
    put(f"cast/{dt_name}", m.to(st.float32 if dt_name != "float32" else st.bfloat16))
    put(f"where/{dt_name}", st.where(m > 0, m, m * 2))
    # reductions: all, along the last and a leading dim, extremes and arg-extremes
    finite = st.from_numpy(rng.standard_normal((257, 129)) * 3).to(dt)
    fa = np.abs(np_of(finite)).astype(np.float64)
    put(f"sum/{dt_name}", finite.sum(), fa.sum())
    put(f"sum1/{dt_name}", finite.sum(1), fa.sum(1))
    put(f"sum0/{dt_name}", finite.sum(0), fa.sum(0))
    put(f"mean/{dt_name}", finite.mean(), fa.mean())
    put(f"amax0/{dt_name}", finite.amax(0))
    put(f"amin1/{dt_name}", finite.amin(1))
    put(f"argmax1/{dt_name}", finite.argmax(1).to(st.float64))
    # softmax / log-softmax and their backward
    s = st.from_numpy(rng.standard_normal((33, 517)) * 3).to(dt).requires_grad_()
    sm = F.softmax(s, dim=-1)
    put(f"softmax/{dt_name}", sm)
    (sm * st.from_numpy(np.linspace(-1, 1, 517)).to(dt)).sum().backward()
    put(f"softmax_grad/{dt_name}", s.grad)
    s2 = st.from_numpy(rng.standard_normal((33, 517)) * 3).to(dt).requires_grad_()
    ls = F.log_softmax(s2, dim=-1)
    put(f"log_softmax/{dt_name}", ls)
    (ls * st.from_numpy(np.linspace(-1, 1, 517)).to(dt)).sum().backward()
    # dx = g - exp(y) sum(g), and sum(g) cancels to about 0 here: its rounding is relative to sum |g|
    put(f"log_softmax_grad/{dt_name}", s2.grad, np.abs(np.linspace(-1, 1, 517)).sum())
    # layer norm forward and backward
    h = st.from_numpy(rng.standard_normal((24, 200)) * 2 + 1).to(dt).requires_grad_()
    w = st.from_numpy(rng.standard_normal(200)).to(dt).requires_grad_()
    bias = st.from_numpy(rng.standard_normal(200)).to(dt).requires_grad_()
    ln = F.layer_norm(h, (200,), w, bias)
    put(f"layer_norm/{dt_name}", ln)
    (ln * st.from_numpy(rng.standard_normal((24, 200))).to(dt)).sum().backward()
    put(f"layer_norm_dx/{dt_name}", h.grad)
    put(f"layer_norm_dw/{dt_name}", w.grad)

for dt_name in ("float32", "float64"):
    dt = getattr(st, dt_name)
    # cross-entropy forward and backward: the fused rows (float32: the SIMD row kernels) and, with
    # label smoothing, the composite (log_softmax and its backward through the dispatched exp)
    logits = st.from_numpy(rng.standard_normal((40, 1000)) * 3).to(dt).requires_grad_()
    target = st.from_numpy(rng.integers(0, 1000, 40).astype(np.int64))
    loss = F.cross_entropy(logits, target)
    put(f"cross_entropy/{dt_name}", loss)
    loss.backward()
    put(f"cross_entropy_grad/{dt_name}", logits.grad)
    logits.grad = None
    loss = F.cross_entropy(logits, target, label_smoothing=0.1)
    put(f"cross_entropy_smoothed/{dt_name}", loss)
    loss.backward()
    put(f"cross_entropy_smoothed_grad/{dt_name}", logits.grad)
    # batch norm (training) forward and backward
    bx = st.from_numpy(rng.standard_normal((8, 6, 5, 7)) * 2 + 0.5).to(dt).requires_grad_()
    bn = st.nn.BatchNorm2d(6).to(dt)
    by = bn(bx)
    put(f"batch_norm/{dt_name}", by)
    (by * st.from_numpy(rng.standard_normal((8, 6, 5, 7))).to(dt)).sum().backward()
    put(f"batch_norm_dx/{dt_name}", bx.grad)
    # attention (the fused softmax between GEMMs), causal, forward and backward
    q, k, v = (st.from_numpy(rng.standard_normal((2, 3, 37, 16))).to(dt).requires_grad_() for _ in range(3))
    att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    put(f"attention/{dt_name}", att)
    (att * att).sum().backward()
    put(f"attention_dq/{dt_name}", q.grad)
    put(f"attention_dv/{dt_name}", v.grad)
    # LSTM / GRU recurrences (the layers' own kernels: SPIRALTORCH_RNN_BACKEND=loop), fwd + bwd
    st.manual_seed(3)
    for name, cls in (("lstm", st.nn.LSTM), ("gru", st.nn.GRU)):
        rnn = cls(12, 20, batch_first=True).to(dt)
        seq = st.from_numpy(rng.standard_normal((3, 9, 12))).to(dt).requires_grad_()
        hs = rnn(seq)[0]
        put(f"{name}/{dt_name}", hs)
        (hs * hs).sum().backward()
        put(f"{name}_dx/{dt_name}", seq.grad)
    # Adam and AdamW steps (the multi-tensor CPU update)
    for name, opt_cls, kw in (("adam", st.optim.Adam, {}), ("adamw", st.optim.AdamW, {"weight_decay": 0.05}),
                              ("adam_amsgrad", st.optim.Adam, {"amsgrad": True, "weight_decay": 0.01})):
        p = st.from_numpy(rng.standard_normal(10000)).to(dt).requires_grad_()
        opt = opt_cls([p], lr=1e-2, **kw)
        for i in range(4):
            p.grad = st.from_numpy(rng.standard_normal(10000) * (i + 1)).to(dt)
            opt.step()
        put(f"{name}/{dt_name}", p.detach())

np.savez(sys.argv[1], **out)
print("capability", st.describe_device("cpu")["cpu_capability"])
"""


def _run(capability, path):
    code = "import sys; sys.argv = ['', %r]\n" % str(path) + _SCRIPT
    env = {"SPIRALTORCH_RNN_BACKEND": "loop"}
    if capability is not None:
        env["SPIRALTORCH_CPU_CAPABILITY"] = capability
    r = run_python(code, **env)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout.split("capability", 1)[1].strip(), dict(np.load(path))


# Allowed differences, in units of the result dtype's epsilon. The vector math is within 3.5 ulp of
# the exact result on every capability (test_cpu_vmath.py), so two capabilities may differ by 8.
# Results that sum terms (reductions, normalisations, softmax backward, attention, recurrences,
# optimizer steps) differ in summation order and FMA contraction: 16 (64 for the compounding
# optimizer steps, recurrences and composites of the vector exp) epsilons of the terms' size -- the scale the script stored, else
# the largest result. GELU/SiLU of negative inputs are x times a quantity that cancels (1 + tanh u):
# their error is relative to min(|x|, 1), the function's scale.
_EPS = {"float32": 2.0 ** -23, "float64": 2.0 ** -52, "bfloat16": 2.0 ** -7, "float16": 2.0 ** -10}
_TINY = {"float32": 2.0 ** -126, "float64": 2.0 ** -1022, "bfloat16": 2.0 ** -126, "float16": 2.0 ** -14}
_SCALED = ("sum", "mean", "softmax_grad", "log_softmax", "layer_norm", "batch_norm", "cross_entropy", "attention",
           "lstm", "gru", "adam")


def _compare(name, got, want, results):
    op, dt = name.split("/")
    assert got.shape == want.shape, name
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{name}: NaN positions")
    inf = np.isinf(want)
    np.testing.assert_array_equal(got[inf], want[inf], err_msg=f"{name}: infinities")
    ok = ~np.isnan(want) & ~inf
    g, w = got.astype(np.float64), want.astype(np.float64)
    eps = _EPS[dt]
    if "scale:" + name in results:
        tol = 16 * eps * np.broadcast_to(results["scale:" + name], w.shape)
    elif op.startswith(_SCALED):
        # compounding: optimizer steps, recurrences, and the smoothed cross-entropy's composite
        # (log_softmax, then exp of it again in the backward: two rounds of the vector exp)
        ulps = 64 if op.startswith(("adam", "lstm", "gru", "cross_entropy_smoothed")) else 16
        tol = np.full(w.shape, ulps * eps * max(np.abs(w[ok]).max(initial=0.0), _TINY[dt]))
    elif op in ("gelu", "gelu_tanh", "silu"):
        x = np.abs(results[f"input:{dt}"].astype(np.float64))
        tol = 8 * eps * np.maximum(np.abs(w), np.minimum(x, 1.0))
    else:
        tol = 8 * eps * np.maximum(np.abs(w), _TINY[dt])  # below the normal range: absolute
    with np.errstate(invalid="ignore"):  # inf - inf where both are infinite (checked above)
        bad = ok & ~(np.abs(g - w) <= tol)
    assert not bad.any(), (f"{name}: {bad.sum()} of {bad.size} differ, e.g. {g[bad][:4]} vs baseline "
                           f"{w[bad][:4]}")


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    cap, res = _run("baseline", tmp_path_factory.mktemp("dispatch") / "baseline.npz")
    assert cap == "baseline"
    return res


def test_describe_device_names_the_capability():
    assert INFO["cpu_capability"] in ("baseline", "avx2", "avx512")
    assert SUPPORTED[0] == "baseline" and INFO["cpu_capability"] in SUPPORTED
    simd = INFO["simd"]
    if simd == "avx512":
        assert SUPPORTED[-1] == "avx512"
    elif simd == "avx2" and "avx512" in SUPPORTED:
        pytest.fail("avx512 kernels offered on a CPU without AVX-512")


def test_default_is_the_best_supported(tmp_path):
    r = run_python("import spiraltorch as st; print(st.describe_device('cpu')['cpu_capability'])",
                   SPIRALTORCH_CPU_CAPABILITY="")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == SUPPORTED[-1]
    r = run_python("import spiraltorch as st; print(st.describe_device('cpu')['cpu_capability'])",
                   SPIRALTORCH_CPU_CAPABILITY="AUTO")
    assert r.stdout.strip() == SUPPORTED[-1]


@pytest.mark.parametrize("capability", ["baseline", "avx2", "avx512"])
def test_forced_capability_matches_the_baseline(capability, baseline, tmp_path):
    if capability not in SUPPORTED:
        pytest.skip(f"this CPU (or build) has no {capability} kernels: {SUPPORTED}")
    cap, res = _run(capability, tmp_path / f"{capability}.npz")
    assert cap == capability
    assert set(res) == set(baseline)
    failures = []
    for name in sorted(k for k in baseline if "/" in k and ":" not in k):
        try:
            _compare(name, res[name], baseline[name], baseline)
        except AssertionError as e:
            failures.append(str(e).splitlines()[0])
    assert not failures, "\n".join(failures)


def test_unknown_capability_is_an_error():
    r = run_python("import spiraltorch as st\nprint((st.ones(4) + 1).tolist())", SPIRALTORCH_CPU_CAPABILITY="avx9000")
    assert r.returncode != 0
    assert "SPIRALTORCH_CPU_CAPABILITY=avx9000" in r.stderr and "unknown capability" in r.stderr


def test_capability_the_cpu_lacks_is_an_error():
    missing = [c for c in ("avx2", "avx512") if c not in SUPPORTED]
    if not missing:
        pytest.skip("this CPU runs every capability (the C++ test covers the rule with fake CPUs)")
    r = run_python("import spiraltorch as st\nprint((st.ones(4) + 1).tolist())",
                   SPIRALTORCH_CPU_CAPABILITY=missing[-1])
    assert r.returncode != 0
    assert f"SPIRALTORCH_CPU_CAPABILITY={missing[-1]}" in r.stderr and "lacks" in r.stderr
