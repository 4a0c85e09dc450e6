import numpy as np
import pytest

import spiraltorch as st
from spiraltorch.nn import functional as F
from spiraltorch.nn import Linear, LoraLinear, Sequential
from spiraltorch.nn.lora import ADAPTER_PATTERNS, apply_lora, freeze, merge_all, unmerge_all


def test_layout_and_init():
    st.manual_seed(0)
    l = LoraLinear(6, 4, 2, alpha=4.0, name="adapter")
    keys = list(l.state_dict())
    assert keys == ["adapter::weight", "adapter::bias", "adapter::lora_a", "adapter::lora_b"]
    assert l.lora_a.shape == (2, 6) and l.lora_b.shape == (4, 2) and l.scaling == 2.0
    assert not l.weight.requires_grad and not l.bias.requires_grad and l.lora_a.requires_grad
    assert np.all(l.lora_b.detach().numpy() == 0)
    x = st.randn(3, 6)
    assert np.allclose(l(x).detach().numpy(), st.nn.linear(x, l.weight, l.bias).numpy())
    with pytest.raises(ValueError, match="lora_rank"):
        LoraLinear(4, 4, 5)
    with pytest.raises(ValueError, match="lora_alpha"):
        LoraLinear(4, 4, 2, alpha=0.0)


def test_merge_equals_unmerged_forward():
    st.manual_seed(1)
    l = LoraLinear(5, 3, 2, alpha=2.0)
    with st.no_grad():
        l.lora_b.copy_(st.randn(3, 2))
    x = st.randn(4, 5)
    y = l(x).detach().numpy()
    w0 = l.weight.detach().numpy().copy()
    l.merge()
    assert l.merged
    assert np.allclose(l(x).detach().numpy(), y, atol=1e-5)
    l.unmerge()
    assert np.allclose(l.weight.detach().numpy(), w0, atol=1e-6)
    assert np.allclose(l(x).detach().numpy(), y, atol=1e-5)
    with pytest.raises(ValueError):
        l.unmerge()


def test_trainable_counts_and_set_trainable():
    st.manual_seed(2)
    l = LoraLinear(8, 8, 2)
    assert l.num_trainable_parameters() == 2 * 8 * 2
    l.set_trainable(False)
    assert l.num_trainable_parameters() == 0
    l.set_trainable(True)
    l.set_base_trainable(True)
    assert l.num_trainable_parameters() == 8 * 8 + 8 + 32


class Net(st.nn.Module):
    def __init__(self):
        super().__init__()
        self.query = Linear(4, 4)
        self.out = Linear(4, 1)

    def forward(self, x):
        return self.out(self.query(x).relu())


def test_apply_lora_base_loading_and_adapter_roundtrip(tmp_path):
    st.manual_seed(3)
    base = Net()
    base_state = {k: v.clone() for k, v in base.state_dict().items()}
    net = Net()
    assert apply_lora(net, ("query",), rank=2, alpha=2.0) == ["query"]
    assert isinstance(net.query, LoraLinear)
    # the base checkpoint has no adapters: allowed through the same checked report
    with pytest.raises(st.CheckpointError, match="query::lora_a"):
        net.load_state_dict_checked(base_state)
    r = net.load_state_dict_checked(base_state, allow_missing=ADAPTER_PATTERNS)
    assert r["compatible"] and r["matched"] == 4
    x = st.randn(5, 4)
    assert np.allclose(net(x).detach().numpy(), base(x).detach().numpy(), atol=1e-6)
    with st.no_grad():
        net.query.lora_b.copy_(st.randn(4, 2))
    adapters = net.adapter_state_dict()
    assert sorted(adapters) == ["query::lora_a", "query::lora_b"]
    path = str(tmp_path / "adapter.safetensors")
    st.nn.save(path, adapters)
    other = Net()
    apply_lora(other, ("query",), rank=2, alpha=2.0)
    other.load_state_dict_checked(base_state, allow_missing=ADAPTER_PATTERNS)
    other.load_adapter_state_dict(st.nn.load(path))
    assert np.array_equal(other(x).detach().numpy(), net(x).detach().numpy())
    with pytest.raises(st.CheckpointError, match="not adapter entries"):
        other.load_adapter_state_dict({"query::weight": st.zeros(4, 4)})


def test_finetune_fewer_params_loss_down():
    st.manual_seed(4)
    net = Sequential(Linear(6, 16), st.nn.ReLU(), Linear(16, 2))
    full = net.num_trainable_parameters()
    apply_lora(net, ("0", "2"), rank=2, alpha=4.0)
    freeze(net)
    assert 0 < net.num_trainable_parameters() < full
    x = st.randn(32, 6)
    y = (x.sum(1) > 0).to(st.int64)
    opt = st.optim.Adam([p for p in net.parameters() if p.requires_grad], lr=0.05)
    losses = []
    for _ in range(30):
        loss = F.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0] * 0.8
    before = net(x).detach().numpy()
    merge_all(net)
    assert np.allclose(net(x).detach().numpy(), before, atol=1e-5)
    unmerge_all(net)
