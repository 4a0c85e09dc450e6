"""A parameter is one Python object, as in PyTorch: the attribute, named_parameters(),
parameters() and an optimizer's param groups hand back the same object, so identity, id()
keys, dict and set membership work; other tensors stay plain values."""

from __future__ import annotations

import gc

import numpy as np

import spiraltorch as st
from conftest import to_np

nn = st.nn


def test_parameters_are_the_same_object_everywhere():
    m = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    w = m[0].weight
    assert m[0].weight is w and id(m[0].weight) == id(w)
    names = {p: n for n, p in m.named_parameters()}
    assert [names[p] for p in m.parameters()] == [n for n, _ in m.named_parameters()]
    assert w in set(m.parameters())
    by_id = {id(p): n for n, p in m.named_parameters()}
    opt = st.optim.AdamW(m.parameters(), lr=1e-3)
    assert [by_id[id(p)] for p in opt.param_groups[0]["params"]] == list(by_id.values())
    # decay / no-decay split as PyTorch training scripts write it
    no_decay = {p for n, p in m.named_parameters() if n.endswith("bias")}
    groups = [{"params": [p for p in m.parameters() if p not in no_decay], "weight_decay": 0.1},
              {"params": [p for p in m.parameters() if p in no_decay], "weight_decay": 0.0}]
    assert [len(g["params"]) for g in groups] == [2, 2]
    st.optim.AdamW(groups, lr=1e-3)


def test_the_object_follows_moves_and_training():
    m = nn.Linear(3, 2)
    w = m.weight
    m.to(st.float64)
    assert m.weight is w and w.dtype == st.float64
    loss = m(st.randn(5, 3, dtype=st.float64)).sum()
    loss.backward()
    assert w.grad is not None
    np.testing.assert_allclose(to_np(w.grad), to_np(m.weight.grad))
    del w
    gc.collect()
    assert m.weight is m.weight  # a new shared object once the old one is gone


def test_other_tensors_stay_values():
    x = st.randn(2, 3)
    assert (x + 1) is not (x + 1)
    p = st.zeros(3, requires_grad=True)
    assert p.detach() is not p
    y = p * 2  # a non-leaf: fresh object per access, as before
    assert y is y


def test_id_sets_pick_parameters_as_in_torch_and_dropped_models_release_theirs():
    # The fine-tuning idiom: a set of ids taken earlier still matches later (the objects persist
    # while the parameters do, as in PyTorch).
    m = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
    head_ids = set(map(id, m[1].parameters()))
    gc.collect()
    base = [p for p in m.parameters() if id(p) not in head_ids]
    assert len(base) == 2 and all(p is q for p, q in zip(base, m[0].parameters()))
    opt = st.optim.SGD([{"params": base}, {"params": m[1].parameters(), "lr": 0.1}], lr=0.01)
    assert [len(g["params"]) for g in opt.param_groups] == [2, 2]
    # Models that come and go do not keep their parameters' wrappers (or tensors) alive.
    held = st._core._shared_wrapper_count()
    for _ in range(500):
        tmp = nn.Linear(16, 16)
        list(tmp.parameters())
        del tmp
    assert st._core._shared_wrapper_count() < held + 200


def test_dropping_a_tensor_that_requires_grad_frees_it_at_once():
    # The identity registry only borrows a wrapper Python still refers to: `del x` releases the
    # tensor's memory immediately (it used to wait for a sweep of up to 64 such tensors).
    gc.collect()
    before = st.cpu.memory_allocated()
    for _ in range(20):
        x = st.randn(100_000, requires_grad=True)
        y = st.zeros(100_000).requires_grad_()
        z = st.zeros(100_000)
        z.requires_grad = True
        w = nn.Linear(3, 4).weight.detach().requires_grad_()
        del x, y, z, w
    assert st.cpu.memory_allocated() == before
    t = st.zeros(3)
    assert t.requires_grad_() is t and t.requires_grad


def test_a_parameter_keeps_its_object_after_python_drops_it():
    lin = nn.Linear(3, 4)
    first = lin.weight
    ident = id(first)
    del first
    gc.collect()
    assert id(lin.weight) == ident and lin.weight is lin.weight
    weights = [nn.Linear(8, 8) for _ in range(3)]
    params = [p for m in weights for p in m.parameters()]
    del weights
    gc.collect()
    assert all(p.requires_grad and p.shape[0] == 8 for p in params)  # alive through Python's references


def test_gc_collect_releases_the_parameters_of_dropped_models():
    # A parameter's wrapper outlives Python's references while its module holds the tensor; once the
    # module is gone, Python's garbage collection releases both (a gc.callbacks entry).
    gc.collect()
    before, held = st.cpu.memory_allocated(), st._core._shared_wrapper_count()
    for _ in range(50):
        tmp = nn.Linear(64, 64)
        list(tmp.parameters())
        del tmp
    gc.collect()
    assert st.cpu.memory_allocated() == before
    assert st._core._shared_wrapper_count() <= held
