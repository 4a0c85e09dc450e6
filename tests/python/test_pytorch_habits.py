"""PyTorch habits checked against PyTorch itself on the same module structure:
module traversal, hooks, state dicts, train/eval, gradients, repr, factories, einsum,
save/load."""

import io
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import spiraltorch as st
from spiraltorch import nn

torch = pytest.importorskip("torch")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.stack = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))

    def forward(self, x):
        return self.stack(self.flatten(x))


class TNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = torch.nn.Flatten()
        self.stack = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))

    def forward(self, x):
        return self.stack(self.flatten(x))


def pair():
    """The same network in both libraries, with SpiralTorch's weights copied into PyTorch's."""
    s, t = Net(), TNet()
    with torch.no_grad():
        for (sk, sv), (tk, tv) in zip(s.named_parameters(), t.named_parameters()):
            tv.copy_(torch.from_numpy(sv.detach().numpy()))
    return s, t


def test_modules_and_named_modules_match_pytorch_structure():
    s, t = pair()
    s_names = [k for k, _ in s.named_modules()]
    t_names = [k for k, _ in t.named_modules()]
    assert s_names == t_names == ["", "flatten", "stack", "stack.0", "stack.1", "stack.2"]
    assert [type(m).__name__ for m in s.modules()][1:] == [type(m).__name__ for m in t.modules()][1:]
    # The Python objects come back, not copies: the root is the module itself.
    assert next(s.modules()) is s
    assert list(s.named_modules())[2][1] is s.stack


def test_named_modules_on_native_roots_and_shared_children():
    lin = nn.Linear(2, 2)
    assert [k for k, _ in lin.named_modules()] == [""]
    shared = nn.Linear(2, 2)
    seq = nn.Sequential(shared, nn.ReLU(), shared) if False else nn.Sequential(shared, nn.ReLU())
    assert len(list(seq.modules())) == 3
    lstm = nn.LSTM(3, 4)
    assert next(lstm.modules()) is lstm


def test_children_parameters_recurse_and_buffers():
    s, t = pair()
    assert [type(c).__name__ for c in s.children()] == [type(c).__name__ for c in t.children()]
    assert len(list(s.parameters())) == len(list(t.parameters())) == 4
    assert len(list(s.parameters(recurse=False))) == len(list(t.parameters(recurse=False))) == 0
    assert len(list(s.stack[0].parameters(recurse=False))) == 2
    bn = nn.BatchNorm1d(3)
    tbn = torch.nn.BatchNorm1d(3)
    assert len(list(bn.buffers())) >= 2
    assert {tuple(b.shape) for b in bn.buffers()} >= {tuple(b.shape) for b in tbn.buffers() if b.dim() == 1}
    assert [k for k, _ in s.named_parameters(prefix="model.")][0].startswith("model.")


def test_iteration_methods_return_iterators_like_pytorch():
    s, t = pair()
    for name in ("parameters", "named_parameters", "buffers", "named_buffers", "children", "named_children",
                 "modules", "named_modules"):
        it, tit = getattr(s, name)(), getattr(t, name)()
        assert iter(it) is it and iter(tit) is tit, name  # iterators, not lists
        with pytest.raises(TypeError):
            len(it)
    assert next(s.parameters()) is list(s.parameters())[0]
    # a tied parameter appears once (remove_duplicate=True), as in PyTorch
    a, b = nn.Linear(3, 3), nn.Linear(3, 3)
    b.weight = a.weight
    tied = nn.Sequential(a, b)
    assert len(list(tied.parameters())) == 3 and len(list(tied.named_parameters())) == 3
    assert len(list(tied.named_parameters(remove_duplicate=False))) == 4


def test_apply_visits_children_before_parent_like_pytorch():
    s, t = pair()
    s_seen, t_seen = [], []
    s.apply(lambda m: s_seen.append(type(m).__name__))
    t.apply(lambda m: t_seen.append(type(m).__name__))
    assert s_seen[:-1] == t_seen[:-1] and (s_seen[-1], t_seen[-1]) == ("Net", "TNet")
    # A typical initialiser: zero every Linear bias.
    with st.no_grad():
        s.apply(lambda m: m.bias.zero_() if isinstance(m, nn.Linear) else None)
    assert all(float(m.bias.abs().sum().item()) == 0 for m in s.modules() if isinstance(m, nn.Linear))


def test_forward_pre_hook_forward_hook_and_removal():
    s, t = pair()
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    seen = {}
    def record(key):
        def hook(m, args, out):
            seen[key] = out.detach().numpy().copy()
        return hook

    h1 = s.stack[0].register_forward_hook(record("s"))
    h2 = t.stack[0].register_forward_hook(record("t"))
    s(st.tensor(x))
    t(torch.from_numpy(x))
    np.testing.assert_allclose(seen["s"], seen["t"], rtol=1e-5, atol=1e-6)
    # A pre-hook may replace the input, a forward hook the output.
    h3 = s.stack.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    h4 = s.stack[2].register_forward_hook(lambda m, args, out: out + 1)
    y = s(st.tensor(x)).detach().numpy()
    np.testing.assert_allclose(y, s.stack[2].bias.detach().numpy()[None, :].repeat(5, 0) * 0 + y[0], atol=1e-6)
    for h in (h1, h2, h3, h4):
        h.remove()
    seen.clear()
    s(st.tensor(x))
    assert "s" not in seen
    with s.stack[0].register_forward_hook(lambda m, a, o: seen.update(ctx=True)):
        s(st.tensor(x))
    assert seen.pop("ctx")
    s(st.tensor(x))
    assert "ctx" not in seen


def test_full_backward_hook_matches_pytorch():
    s, t = pair()
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    got = {}

    def s_hook(m, gin, gout):
        got["s"] = (gin[0].numpy().copy(), gout[0].numpy().copy())

    def t_hook(m, gin, gout):
        got["t"] = (gin[0].numpy().copy(), gout[0].numpy().copy())

    s.stack[2].register_full_backward_hook(s_hook)
    t.stack[2].register_full_backward_hook(t_hook)
    xs = st.tensor(x, requires_grad=True)
    xt = torch.from_numpy(x).requires_grad_()
    s(xs).square().sum().backward()
    t(xt).square().sum().backward()
    np.testing.assert_allclose(got["s"][0], got["t"][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["s"][1], got["t"][1], rtol=1e-5, atol=1e-6)
    # A backward hook may replace grad_input: doubling it doubles the input's gradient.
    g1 = xs.grad.numpy().copy()
    xs.grad = None
    s.stack[0].register_full_backward_hook(lambda m, gin, gout: (gin[0] * 2,))
    s(xs).square().sum().backward()
    np.testing.assert_allclose(xs.grad.numpy(), 2 * g1, rtol=1e-5)


def test_backward_hook_input_without_grad_reports_none():
    lin = nn.Linear(3, 2)
    got = []
    lin.register_full_backward_hook(lambda m, gin, gout: got.append((gin[0], tuple(gout[0].shape))))
    lin(st.ones(4, 3)).sum().backward()
    assert got == [(None, (4, 2))]


def test_hook_bad_return_is_a_type_error():
    lin = nn.Linear(3, 2)
    lin.register_forward_hook(lambda m, a, o: "nope")
    with pytest.raises(TypeError, match="forward hook"):
        lin(st.ones(1, 3))


def test_hooks_fire_inside_native_containers_and_trainer_paths():
    inner = nn.Linear(2, 2)
    calls = []
    inner.register_forward_hook(lambda m, a, o: calls.append(m is inner) and None)
    seq = nn.Sequential(inner, nn.ReLU())
    seq(st.ones(1, 2))
    assert calls == [True]


def test_python_module_hooks_with_several_arguments():
    class Add(nn.Module):
        def forward(self, a, b):
            return a + b

    m = Add()
    m.register_forward_pre_hook(lambda mod, args: (args[0] * 10, args[1]))
    m.register_forward_hook(lambda mod, args, out: out - 1)
    assert m(st.tensor([1.0]), st.tensor([2.0])).tolist() == [11.0]


def test_state_dict_prefix_and_load_returns_incompatible_keys():
    s, _ = pair()
    sd = s.state_dict(prefix="m.")
    assert all(k.startswith("m.") for k in sd)
    sd = s.state_dict()
    partial = dict(list(sd.items())[:2])
    partial["extra::w"] = st.zeros(1)
    res = s.load_state_dict(partial, strict=False)
    assert sorted(res.missing_keys) == sorted(list(sd)[2:])
    assert res.unexpected_keys == ["extra::w"]
    missing, unexpected = res  # unpacks like PyTorch's named tuple
    res = s.load_state_dict(sd)
    assert res.missing_keys == [] and res.unexpected_keys == []
    with pytest.raises(st.CheckpointError, match="unexpected keys 'extra::w'"):
        s.load_state_dict(partial)


def test_state_dict_keep_vars_returns_live_parameters():
    lin = nn.Linear(2, 2)
    live = lin.state_dict(keep_vars=True)
    assert live["weight"].requires_grad
    assert not lin.state_dict()["weight"].requires_grad


def test_train_eval_recurse_and_return_self():
    s, _ = pair()
    assert s.eval() is s
    assert not any(m.training for m in s.modules())
    assert s.train() is s
    assert all(m.training for m in s.modules())


def test_zero_grad_set_to_none_and_in_place():
    s, _ = pair()
    s(st.ones(2, 4)).sum().backward()
    s.zero_grad(set_to_none=False)
    assert all(p.grad is not None and float(p.grad.abs().sum().item()) == 0 for p in s.parameters())
    s.zero_grad()
    assert all(p.grad is None for p in s.parameters())


def test_requires_grad_freezes_and_unfreezes():
    s, _ = pair()
    assert s.stack[0].requires_grad_(False) is s.stack[0]
    assert [p.requires_grad for p in s.parameters()] == [False, False, True, True]
    s.requires_grad_()
    assert all(p.requires_grad for p in s.parameters())


def test_repr_of_nested_modules_matches_pytorch():
    s, t = pair()
    assert repr(s).replace("Net", "X") == repr(t).replace("TNet", "X")
    assert repr(nn.Linear(3, 4, bias=False)) == repr(torch.nn.Linear(3, 4, bias=False))


def test_linear_and_dropout_original_spellings():
    a = nn.Linear("head", 3, 2)
    assert a.name == "head" and (a.in_features, a.out_features) == (3, 2)
    assert sorted(a.state_dict()) == ["head::bias", "head::weight"]
    b = nn.Linear(3, 2, "tail")
    assert b.name == "tail"
    d1 = nn.Dropout(0.5, seed=11)
    d2 = nn.Dropout(0.5, seed=11)
    x = st.ones(4, 8)
    assert d1(x).tolist() == d2(x).tolist()  # same seed, same mask
    assert d1.probability == 0.5 and d1.seed == 11
    assert not nn.Dropout(0.3, training=False).training
    assert nn.Dropout(0.3, training=False)(x).tolist() == x.tolist()
    assert nn.Relu is nn.ReLU


def test_pool2d_flattened_layout_matches_torch():
    x = np.random.default_rng(2).standard_normal((2, 3 * 4 * 4)).astype(np.float32)
    pool = nn.Pool2d("max", 3, 4, 4, (2, 2))
    y = pool(st.tensor(x))
    ref = torch.nn.functional.max_pool2d(torch.from_numpy(x).reshape(2, 3, 4, 4), 2).reshape(2, -1)
    np.testing.assert_allclose(y.numpy(), ref.numpy())
    assert pool.output_shape() == (3, 2, 2)
    avg = nn.Pool2d("avg", 3, 4, 4, 2)
    np.testing.assert_allclose(avg(st.tensor(x)).numpy(),
                               torch.nn.functional.avg_pool2d(torch.from_numpy(x).reshape(2, 3, 4, 4), 2).reshape(2, -1).numpy(),
                               rtol=1e-6)
    with pytest.raises(st.ShapeError, match="Pool2d"):
        pool(st.ones(2, 5))
    with pytest.raises(ValueError, match="mode"):
        nn.Pool2d("median", 1, 2, 2, 2)


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
def test_shape_factories_take_dtype_device_requires_grad(name):
    f = getattr(st, name)
    t = f(2, 3, dtype=st.float64, device="cpu", requires_grad=True)
    assert t.dtype == st.float64 and t.requires_grad and t.device == "cpu" and tuple(t.shape) == (2, 3)
    with pytest.raises(TypeError, match=f"{name}\\(\\) got an unexpected keyword argument 'bogus'"):
        f(2, bogus=1)


def test_other_factories_take_dtype_device_requires_grad():
    assert st.full((2,), 3.0, dtype=st.float64, requires_grad=True).requires_grad
    assert st.arange(5, device="cpu", requires_grad=False).tolist() == [0, 1, 2, 3, 4]
    assert st.arange(0.0, 1.0, 0.5, requires_grad=True).requires_grad
    assert st.linspace(0, 1, 3, dtype=st.float64, device="cpu").tolist() == [0.0, 0.5, 1.0]
    assert st.eye(2, dtype=st.int64, device="cpu").tolist() == [[1, 0], [0, 1]]
    base = st.ones(2, dtype=st.float64)
    for f in (st.zeros_like, st.ones_like, st.empty_like, st.rand_like, st.randn_like):
        out = f(base, requires_grad=True)
        assert out.dtype == st.float64 and out.requires_grad
    assert st.full_like(base, 7, dtype=st.int32).tolist() == [7, 7]
    assert st.normal(0.0, 1.0, (3,), dtype=st.float64, requires_grad=True).requires_grad
    assert st.tensor([1.0], device="cpu", requires_grad=True).requires_grad


def test_randint_matches_pytorch_quickstart_form():
    y = st.randint(0, 10, (64,), device="cpu")
    assert y.dtype == st.int64 and tuple(y.shape) == (64,)
    assert 0 <= int(y.min().item()) and int(y.max().item()) < 10
    assert st.randint(5, (3,)).dtype == st.int64
    assert st.randint(0, 3, size=(2, 2), dtype=st.int32).dtype == st.int32
    with pytest.raises(TypeError):
        st.randint(0, 10, (2,), bogus=True)


def test_generator_makes_random_factories_reproducible():
    g = st.Generator().manual_seed(7)
    a = st.rand(5, generator=g)
    g.manual_seed(7)
    b = st.rand(5, generator=g)
    assert a.tolist() == b.tolist()
    state = g.get_state()
    c = st.randn(4, generator=g)
    g.set_state(state)
    assert st.randn(4, generator=g).tolist() == c.tolist()
    assert g.initial_seed() == 7
    # The global stream is untouched by a private generator.
    st.manual_seed(3)
    ref = st.rand(3).tolist()
    st.manual_seed(3)
    st.rand(3, generator=st.Generator().manual_seed(1))
    assert st.rand(3).tolist() == ref  # the private draw did not move the global stream
    assert isinstance(st.default_generator, st.Generator)
    st.randint(0, 4, (3,), generator=g)
    st.normal(0.0, 1.0, (2,), generator=g)


EINSUM_CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij->ji", [(3, 4)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("ij,ij->", [(3, 4), (3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 2)]),
    ("...ij,jk", [(2, 3, 4), (4, 2)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("ij,kj", [(3, 4), (5, 4)]),
    ("iij->j", [(3, 3, 2)]),
    ("ij,j->i", [(3, 4), (4,)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM_CASES)
def test_einsum_values_and_gradients_match_pytorch(eq, shapes):
    rng = np.random.default_rng(len(eq))
    arrays = [rng.standard_normal(s) for s in shapes]
    s_in = [st.tensor(a, dtype=st.float64, requires_grad=True) for a in arrays]
    t_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    s_out = st.einsum(eq, *s_in)
    t_out = torch.einsum(eq, *t_in)
    np.testing.assert_allclose(s_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-10, atol=1e-12)
    w = rng.standard_normal(tuple(t_out.shape))
    (s_out * st.tensor(w)).sum().backward()
    (t_out * torch.tensor(w)).sum().backward()
    for a, b in zip(s_in, t_in):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_einsum_list_form_and_errors():
    a, b = st.ones(2, 3), st.ones(3, 4)
    assert st.einsum("ij,jk->ik", [a, b]).tolist() == [[3.0] * 4] * 2
    with pytest.raises(st.ShapeError, match="einsum"):
        st.einsum("ij,jk->ik", st.ones(2, 3), st.ones(4, 4))
    with pytest.raises(ValueError, match="operands"):
        st.einsum("ij,jk->ik", a)
    with pytest.raises(ValueError, match="appears in no input"):
        st.einsum("ij->iz", a)


def test_einsum_finite_differences_float64():
    rng = np.random.default_rng(5)
    a0 = rng.standard_normal((2, 3))
    b0 = rng.standard_normal((3, 3))

    def f(a, b):
        return float(st.einsum("ij,jj,jk->ik", st.tensor(a), st.tensor(b), st.tensor(b)).sum().item())

    a = st.tensor(a0, requires_grad=True)
    b = st.tensor(b0, requires_grad=True)
    st.einsum("ij,jj,jk->ik", a, b, b).sum().backward()
    eps = 1e-6
    for arr, grad, which in ((a0, a.grad.numpy(), 0), (b0, b.grad.numpy(), 1)):
        for idx in np.ndindex(arr.shape):
            plus, minus = arr.copy(), arr.copy()
            plus[idx] += eps
            minus[idx] -= eps
            args_p = (plus, b0) if which == 0 else (a0, plus)
            args_m = (minus, b0) if which == 0 else (a0, minus)
            fd = (f(*args_p) - f(*args_m)) / (2 * eps)
            assert math.isclose(grad[idx], fd, rel_tol=1e-6, abs_tol=1e-7)


def test_save_load_state_dict_round_trip(tmp_path):
    s, _ = pair()
    path = tmp_path / "model.pth"
    st.save(s.state_dict(), path)
    loaded = st.load(path)
    assert sorted(loaded) == sorted(s.state_dict())
    fresh = Net()
    fresh.load_state_dict(st.load(str(path), weights_only=True))
    x = st.ones(2, 4)
    assert fresh(x).tolist() == s(x).tolist()
    # The file is plain safetensors with the module's keys.
    from safetensors.numpy import load_file
    assert sorted(load_file(str(path))) == sorted(s.state_dict())


def test_save_load_tensor_and_nested_objects(tmp_path):
    t = st.tensor([[1.0, 2.0]], dtype=st.float64)
    st.save(t, tmp_path / "t.st")
    back = st.load(tmp_path / "t.st")
    assert back.dtype == st.float64 and back.tolist() == [[1.0, 2.0]]
    obj = {"model": {"w": st.ones(2)}, "epoch": 3, "lr": float("inf"), "tags": ("a", None, True), 7: [st.zeros(1)]}
    buf = io.BytesIO()
    st.save(obj, buf)
    buf.seek(0)
    got = st.load(buf)
    assert got["epoch"] == 3 and got["lr"] == float("inf") and got["tags"] == ("a", None, True)
    assert got["model"]["w"].tolist() == [1.0, 1.0] and got[7][0].tolist() == [0.0]
    with pytest.raises(TypeError, match="cannot store object"):
        st.save({"x": object()}, tmp_path / "bad.st")
    assert not (tmp_path / "bad.st").exists()
    # weights_only=False changes nothing: the file holds no pickle, so loading stays data only.
    assert st.load(tmp_path / "t.st", weights_only=False).tolist() == [[1.0, 2.0]]
    assert st.load(tmp_path / "t.st", map_location="cpu").device == "cpu"


def test_save_load_numpy_arrays_and_scalars(tmp_path):
    import numpy as np
    data = np.sin(np.arange(12, dtype=np.float64).reshape(3, 4))
    st.save(data, tmp_path / "a.pt")  # a bare array, as time_sequence_prediction saves its data
    back = st.load(tmp_path / "a.pt")
    assert isinstance(back, np.ndarray) and back.dtype == np.float64 and np.array_equal(back, data)
    obj = {"x": np.arange(5, dtype=np.uint16), "big": np.arange(3, dtype=">i4"), "flags": np.array([True, False]),
           "names": np.array(["ab", "c"]), "empty": np.zeros((0, 3), np.float32), "n": np.int64(7),
           "f": np.float32(0.5), "w": st.ones(2), "config": {"lr": 0.1, "layers": [2, 3]}}
    st.save(obj, tmp_path / "c.pt")
    got = st.load(tmp_path / "c.pt", weights_only=False)
    for k in ("x", "flags", "names", "empty"):
        assert got[k].dtype == obj[k].dtype and got[k].shape == obj[k].shape and np.array_equal(got[k], obj[k]), k
    assert got["big"].tolist() == [0, 1, 2] and got["big"].dtype == np.dtype("<i4")
    assert type(got["n"]) is np.int64 and got["n"] == 7 and type(got["f"]) is np.float32 and got["f"] == 0.5
    assert got["w"].tolist() == [1.0, 1.0] and got["config"] == {"lr": 0.1, "layers": [2, 3]}
    with pytest.raises(TypeError, match="dtype object"):
        st.save({"o": np.array([object()])}, tmp_path / "bad.pt")


def test_load_refuses_a_hostile_numpy_description(tmp_path):
    import json as _json
    import numpy as np
    st.save({"x": np.arange(4, dtype=np.int32)}, tmp_path / "c.pt")
    tensors, meta = st._core.io.load_safetensors(str(tmp_path / "c.pt"), copy=True)
    desc = _json.loads(meta["spiraltorch.structure"])
    for bad in ({"dtype": "O"}, {"dtype": "|V8"}, {"shape": [5]}, {"shape": [-4]}, {"dtype": 3}):
        entry = dict(desc["dict"][0][1], **bad)
        evil = {"spiraltorch.structure": _json.dumps({"dict": [[{"str": "x"}, entry]]})}
        st._core.io.save_safetensors(str(tmp_path / "evil.pt"), tensors, evil, manifest=False)
        with pytest.raises(st.CheckpointError):
            st.load(tmp_path / "evil.pt")


def test_save_reads_a_pytorch_safetensors_file(tmp_path):
    from safetensors.torch import save_file
    save_file({"weight": torch.arange(6.0).reshape(2, 3)}, str(tmp_path / "w.safetensors"))
    assert st.load(tmp_path / "w.safetensors")["weight"].tolist() == [[0, 1, 2], [3, 4, 5]]


def test_device_and_accelerator():
    assert str(st.device("cpu")) == "cpu" and st.device("cuda:1").index == 1
    assert st.device("cuda", 0) == "cuda:0"
    with pytest.raises(ValueError):
        st.device("tpu")
    assert st.accelerator.is_available() == st.cuda.is_available()
    if not st.cuda.is_available():
        assert st.accelerator.current_accelerator() is None and st.accelerator.device_count() == 0
    assert st.ones(2).to(st.device("cpu")).device == "cpu"


QUICKSTART = os.path.join(os.path.dirname(__file__), "quickstart", "pytorch_quickstart.py")


@pytest.mark.skipif(not st.data.find_fashion_mnist(), reason="Debian's dataset-fashion-mnist is not installed")
def test_pytorch_quickstart_runs_with_only_the_import_changed(tmp_path):
    with open(QUICKSTART) as f:
        text = f.read()
    assert "import torch" not in text.replace("import spiraltorch as torch", "")
    # The same spiraltorch this test imported (a dev tree or the installed package).
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(st.__file__))))
    proc = subprocess.run([sys.executable, QUICKSTART], cwd=tmp_path, capture_output=True, text=True, timeout=900,
                          env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "Shape of X [N, C, H, W]: spiraltorch.Size([64, 1, 28, 28])" in out
    assert "Shape of y: spiraltorch.Size([64]) spiraltorch.int64" in out
    assert "(linear_relu_stack): Sequential(" in out and "(0): Linear(in_features=784, out_features=512, bias=True)" in out
    accuracies = [float(line.split("Accuracy:")[1].split("%")[0]) for line in out.splitlines() if "Accuracy:" in line]
    assert len(accuracies) == 5
    # Plain SGD at lr=1e-3 reaches about 65% after 5 epochs in PyTorch too.
    assert accuracies[-1] > 55.0 and accuracies[-1] > accuracies[0]
    assert (tmp_path / "model.pth").exists()
    assert 'Predicted: "' in out and 'Actual: "Ankle boot"' in out


def test_full_backward_hook_on_a_call_with_several_tensors_matches_torch():
    """grad_input has one entry per positional tensor (None where it needs no gradient), grad_output one
    per tensor output; the hook runs once per backward, as torch's does."""
    rng = np.random.default_rng(5)
    a, b, c = (rng.standard_normal((3, 4)) for _ in range(3))

    def build(lib, mod):
        class Mix(mod.Module):
            def forward(self, x, y, z, scale=2.0):
                return x * y * scale, (x + z).sin()

        return Mix()

    got = {}
    for name, lib, mod in (("st", st, nn), ("torch", torch, torch.nn)):
        m = build(lib, mod)
        calls = []
        m.register_full_backward_hook(lambda mm, gin, gout: calls.append((gin, gout)))
        new = st.tensor if name == "st" else torch.tensor
        x, y = new(a, requires_grad=True), new(b, requires_grad=True)
        z = new(c)  # needs no gradient: its grad_input entry is None
        p, q = m(x, y, z, scale=3.0)
        (p.square().sum() + (q * 2).sum()).backward()
        assert len(calls) == 1
        gin, gout = calls[0]
        got[name] = ([None if g is None else np.asarray(g.detach().numpy()) for g in gin],
                     [np.asarray(g.detach().numpy()) for g in gout], x.grad.numpy().copy(), y.grad.numpy().copy())
    (gin_s, gout_s, xs, ys), (gin_t, gout_t, xt, yt) = got["st"], got["torch"]
    # z needs no gradient: None here; torch 2.13 reports zeros of its shape there.
    assert len(gin_s) == len(gin_t) == 3 and gin_s[2] is None
    assert gin_t[2] is None or not gin_t[2].any()
    for s_, t_ in zip(gin_s[:2] + gout_s + [xs, ys], gin_t[:2] + gout_t + [xt, yt]):
        np.testing.assert_allclose(s_, t_, rtol=1e-6, atol=1e-8)


def test_full_backward_hook_with_several_tensors_may_replace_grad_input():
    class Mul(nn.Module):
        def forward(self, x, y):
            return x * y

    m = Mul()
    x, y = st.tensor([1.0, 2.0], requires_grad=True), st.tensor([3.0, 4.0], requires_grad=True)
    m(x, y).sum().backward()
    gx, gy = x.grad.tolist(), y.grad.tolist()
    x.grad = y.grad = None
    m.register_full_backward_hook(lambda mm, gin, gout: (gin[0] * 10, None))
    m(x, y).sum().backward()
    assert x.grad.tolist() == [10 * v for v in gx] and y.grad is None and gy == [1.0, 2.0]
    m2 = Mul()
    m2.register_full_backward_hook(lambda mm, gin, gout: (gin[0],))  # one gradient for two inputs
    with pytest.raises(ValueError, match="returned 1 gradients for 2 inputs"):
        m2(x, y).sum().backward()


def test_full_backward_hook_with_several_tensors_none_requiring_grad():
    """Inputs that need no gradient: the hook still runs once, from the output side, with None
    entries (torch's behaviour)."""
    class Lin2(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)

        def forward(self, x, y):
            return self.lin(x + y)

    m = Lin2()
    calls = []
    m.register_full_backward_hook(lambda mm, gin, gout: calls.append((gin, tuple(gout[0].shape))))
    m(st.ones(3, 2), st.ones(3, 2)).sum().backward()
    assert calls == [((None, None), (3, 2))]


def test_hooks_see_non_tensor_arguments_and_the_output_as_returned():
    """The native Module runs every hook; Python hooks see the positional tuple with its non-tensor
    entries and what forward returned; grad_input has an entry (None) for each non-tensor argument."""
    import collections

    Pair = collections.namedtuple("Pair", "product total")

    class Scaled(nn.Module):
        def forward(self, x, scale, y, label, *, tag="t"):
            self.last = (label, tag)
            return Pair(x * y * scale, (x + y).sum())

    m = Scaled()
    seen = {}
    m.register_forward_pre_hook(lambda mod, args: seen.update(pre=args) or (args[0], 10.0, args[2], args[3]))
    m.register_forward_hook(lambda mod, args, out: seen.update(args=args, out=out))
    m.register_full_backward_hook(lambda mod, gin, gout: seen.update(gin=gin, gout=gout))
    x, y = st.tensor([1.0, 2.0], requires_grad=True), st.tensor([3.0, 4.0])
    pair = m(x, 2.0, y, "pos", tag="kw")
    assert m.last == ("pos", "kw")  # kwargs reach forward unchanged
    assert seen["pre"][1] == 2.0 and seen["pre"][3] == "pos" and len(seen["pre"]) == 4
    assert seen["args"][1] == 10.0 and isinstance(seen["out"], Pair)
    assert isinstance(pair, Pair) and pair.product.tolist() == [30.0, 80.0]
    (pair.product.sum() + pair.total).backward()
    # One entry per positional argument, as torch's: y needs no gradient, 2.0 and "pos" are no tensors.
    assert len(seen["gin"]) == 4 and seen["gin"][1] is None and seen["gin"][2] is None and seen["gin"][3] is None
    assert seen["gin"][0].tolist() == [31.0, 41.0] and len(seen["gout"]) == 2
    assert x.grad.tolist() == [31.0, 41.0]


def test_hooks_keep_no_module_alive_and_a_graph_may_outlive_its_module():
    import gc

    class Mul(nn.Module):
        def forward(self, x, y):
            return x * y

    calls = []
    m = Mul()
    handle = m.register_full_backward_hook(lambda mod, gin, gout: calls.append(gin))
    m.register_forward_hook(lambda mod, args, out: None)
    x, y = st.tensor([1.0, 2.0], requires_grad=True), st.tensor([3.0, 4.0], requires_grad=True)
    out = m(x, y).sum()
    del m  # the handle, the hooks and the graph hold no strong reference to it
    gc.collect()
    out.backward()  # the module is gone: its hook does not run, the gradients still flow
    assert calls == [] and x.grad.tolist() == [3.0, 4.0]
    handle.remove()  # a handle outliving its module does nothing


def test_full_backward_hook_on_a_subclass_of_a_native_layer():
    class Scaled(nn.Linear):
        def forward(self, x):
            return super().forward(x) * 2

    m = Scaled(3, 2)
    got = []
    m.register_full_backward_hook(lambda mod, gin, gout: got.append((tuple(gin[0].shape), tuple(gout[0].shape))))
    m(st.ones(4, 3, requires_grad=True)).sum().backward()
    assert got == [((4, 3), (4, 2))]


def test_python_module_hooks_inside_a_native_container_see_a_tuple_of_tensors():
    class Double(nn.Module):
        def forward(self, x):
            return x * 2

    inner = Double()
    seen = []
    inner.register_forward_pre_hook(lambda mod, args: seen.append(len(args)) or (args[0] + 1,))
    inner.register_forward_hook(lambda mod, args, out: "not a tensor")
    seq = nn.Sequential(inner)
    with pytest.raises(TypeError, match="Double forward hook: a hook on a call from C\\+\\+"):
        seq(st.ones(1, 2))
    assert seen == [1]


@pytest.mark.parametrize("layer", ["MSELoss", "LSTM", "MultiheadAttention", "Bilinear"])
def test_hooks_on_native_layers_with_several_arguments_match_torch(layer):
    """Native layers whose call takes several arguments (losses, LSTM, attention, Bilinear) run the
    hooks registered from Python like torch's: the pre-hook sees every positional argument and may
    replace them, the forward hook sees the output as returned, the full backward hook gets one
    grad_input per tensor argument and one grad_output per tensor output."""
    ctor, shapes = {
        "MSELoss": ((), [(4, 3), (4, 3)]),
        "LSTM": ((3, 5), [(6, 2, 3)]),
        "MultiheadAttention": ((8, 2), [(5, 1, 8), (5, 1, 8), (5, 1, 8)]),
        "Bilinear": ((3, 4, 2), [(5, 3), (5, 4)]),
    }[layer]
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    results, torch_params = {}, []
    for name, mod in (("torch", torch.nn), ("st", nn)):
        m = getattr(mod, layer)(*ctor)
        if name == "torch":
            torch_params = [p.detach().numpy().copy() for p in m.parameters()]
        else:  # the same weights, in the same (torch's) order
            ours = list(m.parameters())
            assert [tuple(p.shape) for p in ours] == [t.shape for t in torch_params]
            with st.no_grad():
                for p, t in zip(ours, torch_params):
                    p.copy_(st.tensor(t))
        seen = []

        def pre(mm, args, seen=seen):
            seen.append(("pre", len(args)))
            return (args[0] * 2.0,) + tuple(args[1:])  # replaces the first argument

        m.register_forward_pre_hook(pre)
        m.register_forward_hook(lambda mm, args, out, seen=seen: seen.append(("forward", type(out).__name__)))
        # grad_output has an entry (None) for LSTM's (h_n, c_n) tuple too, as torch's
        m.register_full_backward_hook(lambda mm, gin, gout, seen=seen: seen.append(("backward", len(gin), len(gout))))
        new = st.tensor if name == "st" else torch.tensor
        xs = [new(a, requires_grad=True) for a in arrays]
        out = m(*xs)
        first = out[0] if isinstance(out, tuple) else out
        first.sum().backward()
        results[name] = (seen, [np.asarray(x.grad.numpy()) for x in xs], np.asarray(first.detach().numpy()))
    seen_s, grads_s, out_s = results["st"]
    seen_t, grads_t, out_t = results["torch"]
    assert seen_s == seen_t and seen_s[0] == ("pre", len(shapes))
    np.testing.assert_allclose(out_s, out_t, rtol=1e-4, atol=1e-5)
    for g_s, g_t in zip(grads_s, grads_t):
        np.testing.assert_allclose(g_s, g_t, rtol=1e-4, atol=1e-5)


def test_load_map_location_as_device_dict_and_callable(tmp_path):
    """torch.load's three map_location forms. The file records where each tensor was saved from
    (here written as if saved from cuda:1, so no GPU is needed); a dict maps that device, a
    callable gets (tensor, location) and returns the tensor to use (None keeps the CPU copy)."""
    path = str(tmp_path / "ckpt.st")
    st._core.io.save_safetensors(path, {"w": st.ones(2), "b": st.zeros(1)},
                                 {"spiraltorch.devices": '{"w": "cuda:1"}'}, manifest=False)
    seen = []

    def keep(t, location):
        seen.append(location)
        return None if location == "cpu" else t * 2

    got = st.load(path, map_location=keep)
    assert sorted(seen) == ["cpu", "cuda:1"] and got["w"].tolist() == [2.0, 2.0] and got["b"].tolist() == [0.0]
    assert st.load(path, map_location=lambda storage, loc: storage)["w"].device == "cpu"
    assert st.load(path, map_location={"cuda:1": "cpu"})["w"].tolist() == [1.0, 1.0]
    assert st.load(path, map_location={st.device("cuda:1"): "cpu"})["w"].device == "cpu"
    with pytest.raises(TypeError, match="map_location returned int for 'b'"):
        st.load(path, map_location=lambda t, loc: 3)
    # save() records a tensor's device itself and keeps the key to itself
    st.save({"w": st.ones(1)}, path)
    assert "spiraltorch.devices" not in st._core.io.load_safetensors(path)[1]
    with pytest.raises(ValueError, match="reserved"):
        st.save({"w": st.ones(1)}, path, metadata={"spiraltorch.devices": "{}"})
    st._core.io.save_safetensors(path, {"w": st.ones(1)}, {"spiraltorch.devices": "[1"}, manifest=False)
    with pytest.raises(st.CheckpointError, match="not valid JSON"):
        st.load(path, map_location="cpu")


def test_save_copies_device_tensors_and_load_maps_them_back(tmp_path):
    """torch.save of a device model's state works: device tensors are copied to the host and
    their device recorded, so map_location={device: device} (or a callable) puts them back."""
    if not st.wgpu.is_available():
        pytest.skip("no wgpu adapter")
    path = tmp_path / "dev.st"
    st.save({"model": {"w": st.arange(3.0).to("wgpu")}, "step": 4}, path)
    plain = st.load(path)
    assert plain["model"]["w"].device == "cpu" and plain["model"]["w"].tolist() == [0.0, 1.0, 2.0]
    back = st.load(path, map_location={"wgpu": "wgpu"})
    assert back["model"]["w"].device == "wgpu" and back["step"] == 4
    assert st.load(path, map_location=lambda t, loc: t.to(loc))["model"]["w"].device == "wgpu"


def test_utils_data_distributed_module_path():
    """``from torch.utils.data.distributed import DistributedSampler`` has its SpiralTorch twin."""
    from spiraltorch.utils.data.distributed import DistributedSampler
    from spiraltorch.utils.data import DistributedSampler as same

    assert DistributedSampler is same is st.data.DistributedSampler
    assert list(DistributedSampler(list(range(6)), num_replicas=2, rank=1, shuffle=False)) == [1, 3, 5]
