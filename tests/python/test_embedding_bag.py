"""EmbeddingBag (F.embedding_bag, nn.EmbeddingBag) against PyTorch: every mode with 2-D input and
with offsets (empty bags, include_last_offset, padding_idx, per_sample_weights), gradients for the
weight and the per-sample weights in float64, the module's init and from_pretrained, errors."""

import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.nn.functional as F

torch = pytest.importorskip("torch")

R = np.random.default_rng(0)
W = R.standard_normal((12, 5))
IDX = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 7, 7, 11])

CASES = [
    # (input, offsets, include_last_offset, padding_idx, psw)
    (IDX.reshape(3, 4), None, False, None, False),
    (IDX, np.array([0, 4, 4, 9]), False, None, False),   # an empty bag
    (IDX, np.array([0, 3, 8, 12]), True, None, False),   # the last offset closes the last bag
    (IDX, np.array([0, 5, 9]), False, 4, False),         # padding entries left out
    (IDX, np.array([0, 5, 5, 9]), False, None, True),    # weighted sum
    (IDX.reshape(4, 3), None, False, 7, True),
]


def _run(lib, mode, inp, off, last, pad, psw, w):
    if lib == "st":
        wt = st.tensor(w).requires_grad_(True)
        ps = st.tensor(psw).requires_grad_(True) if psw is not None else None
        out = F.embedding_bag(st.tensor(inp), wt, None if off is None else st.tensor(off), mode=mode,
                              per_sample_weights=ps, include_last_offset=last, padding_idx=pad)
        g = st.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))
    else:
        wt = torch.tensor(w, requires_grad=True)
        ps = torch.tensor(psw, requires_grad=True) if psw is not None else None
        out = torch.nn.functional.embedding_bag(torch.tensor(inp), wt, None if off is None else torch.tensor(off),
                                                mode=mode, per_sample_weights=ps, include_last_offset=last,
                                                padding_idx=pad)
        g = torch.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))
    (out * g).sum().backward()
    grads = [wt.grad.numpy()] + ([ps.grad.numpy()] if ps is not None else [])
    return out.detach().numpy(), grads


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_matches_torch_with_gradients(mode, case):
    inp, off, last, pad, with_psw = CASES[case]
    if with_psw and mode != "sum":
        pytest.skip("per_sample_weights are for mode='sum' only")
    psw = np.sin(np.arange(inp.size, dtype=np.float64)).reshape(inp.shape) if with_psw else None
    got, ggot = _run("st", mode, inp, off, last, pad, psw, W)
    want, gwant = _run("torch", mode, inp, off, last, pad, psw, W)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    for a, b in zip(ggot, gwant):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_module_init_from_pretrained_and_training():
    st.manual_seed(0)
    bag = st.nn.EmbeddingBag(20, 4, mode="sum", padding_idx=3)
    assert tuple(bag.weight.shape) == (20, 4) and float(bag.weight[3].abs().sum()) == 0.0
    assert "EmbeddingBag(20, 4, mode='sum', padding_idx=3)" == repr(bag)
    pre = st.nn.EmbeddingBag.from_pretrained(st.tensor(W), mode="max")
    assert not pre.weight.requires_grad
    np.testing.assert_allclose(pre(st.tensor(IDX.reshape(3, 4))).numpy(),
                               torch.nn.EmbeddingBag.from_pretrained(torch.tensor(W), mode="max")(
                                   torch.tensor(IDX.reshape(3, 4))).numpy(), rtol=1e-12)
    # A bag-of-words classifier learns labels that depend on which words a bag holds.
    st.manual_seed(1)
    model = st.nn.EmbeddingBag(16, 8, mode="mean")
    head = st.nn.Linear(8, 2)
    opt = st.optim.Adam(list(model.parameters()) + list(head.parameters()), lr=0.05)
    r = np.random.default_rng(2)
    words = r.integers(0, 16, size=(64, 5))
    labels = st.tensor((words < 8).sum(1) >= 3).long()
    for _ in range(80):
        opt.zero_grad()
        loss = F.cross_entropy(head(model(st.tensor(words))), labels)
        loss.backward()
        opt.step()
    acc = float((head(model(st.tensor(words))).argmax(1) == labels).float().mean())
    assert acc > 0.9, acc


def test_errors_name_the_operation_and_values():
    w = st.tensor(W)
    with pytest.raises(ValueError, match=r"embedding_bag: mode must be 'sum', 'mean' or 'max', got 'avg'"):
        F.embedding_bag(st.tensor(IDX.reshape(3, 4)), w, mode="avg")
    with pytest.raises(ValueError, match=r"embedding_bag: offsets\[0\] must be 0, got 1"):
        F.embedding_bag(st.tensor(IDX), w, st.tensor(np.array([1, 4])))
    with pytest.raises(ValueError, match=r"non-decreasing"):
        F.embedding_bag(st.tensor(IDX), w, st.tensor(np.array([0, 5, 3])))
    with pytest.raises(ValueError, match=r"per_sample_weights are only supported for mode='sum'"):
        F.embedding_bag(st.tensor(IDX.reshape(3, 4)), w, per_sample_weights=st.ones(3, 4, dtype=st.float64))
    with pytest.raises(IndexError, match=r"embedding_bag: index 12 is out of range for 12 embeddings"):
        F.embedding_bag(st.tensor(np.array([[1, 12]])), w)
    with pytest.raises(ValueError, match=r"offsets must be None for 2-D input"):
        F.embedding_bag(st.tensor(IDX.reshape(3, 4)), w, st.tensor(np.array([0, 1])))
    with pytest.raises(ValueError, match=r"EmbeddingBag: mode must be"):
        st.nn.EmbeddingBag(4, 2, mode="median")


@pytest.mark.parametrize("device", ["cuda", "wgpu"])
def test_gpu_devices_match_the_cpu(device):
    if not getattr(st, device).is_available():
        pytest.skip(f"{device} not available")
    w32 = W.astype(np.float32)
    for mode in ("sum", "mean", "max"):
        outs = []
        for dev in ("cpu", device):
            wt = st.tensor(w32).to(dev).requires_grad_(True)
            out = F.embedding_bag(st.tensor(IDX).to(dev), wt, st.tensor(np.array([0, 4, 4, 9])).to(dev), mode=mode)
            (out * out).sum().backward()
            outs.append((out.detach().cpu().numpy(), wt.grad.cpu().numpy()))
        for a, b in zip(*outs):
            np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)
