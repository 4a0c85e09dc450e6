"""Host-memory counters (st.cpu) and what autograd keeps alive: the saved tensors of a
transformer layer, residual adds that keep no operands, nodes freed after backward, and the
fused GELU backward and gradient routes that make this possible."""
import gc

import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.nn.functional as sF

torch = pytest.importorskip("torch")

MiB = 1 << 20


def test_cpu_counters_follow_allocations():
    gc.collect()
    st.cpu.reset_peak_memory_stats()
    before = st.cpu.memory_allocated()
    assert st.cpu.max_memory_allocated() == before
    t = st.zeros(1024, 1024)  # 4 MiB of float32
    assert st.cpu.memory_allocated() - before == 4 * MiB
    del t
    gc.collect()
    assert st.cpu.memory_allocated() == before
    assert st.cpu.max_memory_allocated() - before == 4 * MiB
    st.cpu.reset_peak_memory_stats()
    assert st.cpu.max_memory_allocated() == st.cpu.memory_allocated()
    big = st.zeros(4096, 1024)  # 16 MiB: large enough for the block cache
    del big
    gc.collect()
    assert st.cpu.memory_cached() >= 16 * MiB
    assert st.cpu.empty_cache() >= 16 * MiB
    assert st.cpu.memory_cached() == 0


def test_residual_add_keeps_no_operands():
    x = st.randn(512, 512, requires_grad=True)
    gc.collect()
    base = st.cpu.memory_allocated()
    h = x * 2.0  # MulBackward saves x (a leaf, not counted) and the scalar
    y = h + x  # AddBackward needs only shapes
    size = 512 * 512 * 4
    assert 2 * size <= st.cpu.memory_allocated() - base < 2 * size + 4096  # + the saved scalar
    del h
    gc.collect()
    assert size <= st.cpu.memory_allocated() - base < size + 4096  # h went, though y's graph lives on
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((512, 512), 3.0, np.float32))


def test_backward_frees_saved_tensors_while_the_output_lives():
    x = st.randn(256, 256, requires_grad=True)
    gc.collect()
    base = st.cpu.memory_allocated()
    y = st.tanh(st.exp(x * 0.1) * 2.0)  # exp and tanh keep their outputs
    assert st.cpu.memory_allocated() - base >= 3 * 256 * 256 * 4
    y.sum().backward()
    x.grad = None
    gc.collect()
    # Only y itself remains: the graph's saved tensors went with the backward.
    assert st.cpu.memory_allocated() - base == 256 * 256 * 4
    with pytest.raises(st.SpiralError, match="second time"):
        y.sum().backward()


def test_transformer_layer_saves_16_activation_units():
    B, T, d, h = 2, 64, 128, 4
    layer = st.nn.TransformerEncoderLayer(d, h, 4 * d, dropout=0.0, activation="gelu", norm_first=True,
                                          batch_first=True)
    x = st.randn(B, T, d)
    unit = B * T * d * 4
    gc.collect()
    base = st.cpu.memory_allocated()
    y = layer(x, is_causal=True)
    held = (st.cpu.memory_allocated() - base) / unit
    # LN1 out 1, qkv 3 (the CPU's flash kernel reads the heads in place), attention's output 1
    # (laid out (B, L, H, d), so its (B, L, E) form is a view), x1 1, LN2 out 1, fc1 out 4, GELU
    # out 4, y 1 = 16 units (plus per-row statistics); the projection outputs before their bias
    # adds and the residual operands are not kept.
    assert 16.0 <= held < 16.1, held
    y.sum().backward()
    gc.collect()
    grads = sum(p.numel() * 4 for p in layer.parameters())
    assert st.cpu.memory_allocated() - base == unit + grads


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_gelu_backward_matches_torch(approximate, dtype):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 33)) * 3.0
    a[0, :5] = [0.0, -10.0, 10.0, 1e-4, -40.0]
    g = rng.standard_normal((64, 33))
    x = st.tensor(a.astype(dtype), requires_grad=True)
    sF.gelu(x, approximate=approximate).backward(st.tensor(g.astype(dtype)))
    # The reference in float64: PyTorch's own float32 backward cancels to 0 where the two
    # terms of Phi(x) + x phi(x) nearly cancel (x near -5), which ours does not.
    tx = torch.tensor(a, requires_grad=True)
    torch.nn.functional.gelu(tx, approximate=approximate).backward(torch.tensor(g))
    tol = 1e-12 if dtype == "float64" else 2e-6
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=tol, atol=tol)


def test_gelu_second_derivative_matches_torch():
    a = np.linspace(-4, 4, 41)
    x = st.tensor(a, requires_grad=True)
    (gx,) = st.autograd.grad(sF.gelu(x).sum(), [x], create_graph=True)
    (gx * gx).sum().backward()
    tx = torch.tensor(a, requires_grad=True)
    (tgx,) = torch.autograd.grad(torch.nn.functional.gelu(tx).sum(), [tx], create_graph=True)
    (tgx * tgx).sum().backward()
    np.testing.assert_allclose(gx.detach().numpy(), tgx.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shared", ["leaf", "nonleaf", "separate"])
def test_fused_attention_double_backward(shared):
    """Second derivatives through the fused path (which keeps gradient routes, not the
    inputs), including one tensor used as q, k and v."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 3, 5, 4))
    b = rng.standard_normal((2, 3, 5, 4))

    def run(lib, F):
        w = lib.tensor(a, requires_grad=True)
        u = lib.tensor(b, requires_grad=True)
        if shared == "leaf":
            q = k = v = w
        elif shared == "nonleaf":
            q = k = v = w * 1.5
        else:
            q, k, v = w, u * 0.5, w + u
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        gw, gu = lib.autograd.grad((y * y).sum(), [w, u], create_graph=True, allow_unused=True)
        total = (gw * gw).sum() + ((gu * gu).sum() if gu is not None else 0.0)
        total.backward()
        return gw, w.grad, u.grad

    class TorchMath:  # PyTorch's fused kernels have no double backward: the formula instead
        @staticmethod
        def scaled_dot_product_attention(q, k, v, is_causal):
            L, S = q.shape[-2], k.shape[-2]
            scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
            mask = torch.triu(torch.full((L, S), float("-inf"), dtype=q.dtype), 1)
            return torch.softmax(scores + mask, -1) @ v

    s = run(st, sF)
    t = run(torch, TorchMath)
    np.testing.assert_allclose(s[0].detach().numpy(), t[0].detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(s[1].numpy(), t[1].numpy(), rtol=1e-9, atol=1e-11)
    if shared == "separate":
        np.testing.assert_allclose(s[2].numpy(), t[2].numpy(), rtol=1e-9, atol=1e-11)
