"""CUDA graphs (st.cuda.CUDAGraph, st.cuda.graph): capture records without running, replay
reruns the captured kernels on new data copied into static inputs, a captured SGD training
step matches eager training step for step, uncapturable work fails with a clear error and
leaves the stream usable. Without CUDA: the names exist and refuse with DeviceUnavailableError."""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.nn.functional as F
from conftest import HAVE_CUDA, CUDA_SKIP_REASON, to_np

needs_cuda = pytest.mark.skipif(not HAVE_CUDA, reason=CUDA_SKIP_REASON)


@pytest.mark.skipif(HAVE_CUDA, reason="checks the build without a usable GPU")
def test_graph_without_cuda_refuses_clearly():
    g = st.cuda.CUDAGraph()
    assert not g.is_captured() and g.num_nodes() == 0 and repr(g) == "CUDAGraph(empty)"
    assert st.cuda.is_current_stream_capturing() is False
    with pytest.raises(st.DeviceUnavailableError, match="CUDAGraph.capture_begin"):
        with st.cuda.graph(g):
            pass
    with pytest.raises(st.DeviceUnavailableError, match="CUDAGraph.replay"):
        g.replay()


@needs_cuda
def test_capture_records_and_replay_reruns_on_new_inputs():
    rng = np.random.default_rng(0)
    x = st.tensor(rng.standard_normal((64, 33)).astype(np.float32)).cuda()
    w = st.tensor(rng.standard_normal((33, 17)).astype(np.float32)).cuda()
    st.cuda.synchronize()
    g = st.cuda.CUDAGraph()
    with st.cuda.graph(g):
        assert st.cuda.is_current_stream_capturing()
        y = st.relu(x @ w) * 2.0 + 1.0
    assert not st.cuda.is_current_stream_capturing()
    assert g.is_captured() and g.num_nodes() >= 3
    for seed in (1, 2):
        new = np.random.default_rng(seed).standard_normal((64, 33)).astype(np.float32)
        x.copy_(st.tensor(new).cuda())
        g.replay()
        expect = np.maximum(new @ to_np(w.cpu()), 0) * 2 + 1
        np.testing.assert_allclose(to_np(y.cpu()), expect, rtol=1e-4, atol=1e-4)
    g.reset()
    assert not g.is_captured()


def _mlp(seed: int) -> st.nn.Sequential:
    st.manual_seed(seed)
    return st.nn.Sequential(st.nn.Linear(20, 64), st.nn.ReLU(), st.nn.Linear(64, 5)).to("cuda")


@needs_cuda
def test_captured_sgd_training_step_matches_eager_steps():
    """One warm-up step eagerly, then the whole step (zero_grad, forward, cross-entropy,
    backward, SGD with momentum) captured once and replayed on 5 new batches: the weights
    equal those of 6 eager steps on the same batches."""
    rng = np.random.default_rng(3)
    batches = [(rng.standard_normal((32, 20)).astype(np.float32), rng.integers(0, 5, 32)) for _ in range(6)]
    eager, graphed = _mlp(7), _mlp(7)
    opt_e = st.optim.SGD(eager.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    opt_g = st.optim.SGD(graphed.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    for xb, yb in batches:
        opt_e.zero_grad()
        F.cross_entropy(eager(st.tensor(xb).cuda()), st.tensor(yb).cuda()).backward()
        opt_e.step()

    static_x, static_y = st.tensor(batches[0][0]).cuda(), st.tensor(batches[0][1]).cuda()

    def step():
        opt_g.zero_grad()
        loss = F.cross_entropy(graphed(static_x), static_y)
        loss.backward()
        opt_g.step()
        return loss

    step()  # warm-up: creates the momentum buffers outside the capture
    g = st.cuda.CUDAGraph()
    with st.cuda.graph(g):
        static_loss = step()
    losses = []
    for xb, yb in batches[1:]:
        static_x.copy_(st.tensor(xb).cuda())
        static_y.copy_(st.tensor(yb).cuda())
        g.replay()
        losses.append(static_loss.item())
    assert all(np.isfinite(losses))
    for (name, a), (_, b) in zip(eager.named_parameters(), graphed.named_parameters()):
        np.testing.assert_allclose(to_np(b.detach().cpu()), to_np(a.detach().cpu()), rtol=1e-4, atol=1e-5,
                                   err_msg=name)


@needs_cuda
def test_uncapturable_work_fails_clearly_and_leaves_the_stream_usable():
    model = _mlp(1)
    x = st.randn(8, 20).cuda()
    adam = st.optim.Adam(model.parameters(), lr=1e-3)
    model(x).sum().backward()
    adam.step()
    before = [to_np(p.detach().cpu()) for p in model.parameters()]
    g = st.cuda.CUDAGraph()
    with pytest.raises(st.SpiralError, match="Adam.step: cannot be captured into a CUDA graph"):
        with st.cuda.graph(g):
            model(x).sum().backward()
            adam.step()
    assert not st.cuda.is_current_stream_capturing() and not g.is_captured()
    for p, b in zip(model.parameters(), before):  # the refused step changed nothing
        np.testing.assert_array_equal(to_np(p.detach().cpu()), b)

    with pytest.raises(st.SpiralError):
        with st.cuda.graph(g):
            (x * 2).sum().item()  # a host read inside a capture
    assert not st.cuda.is_current_stream_capturing()
    np.testing.assert_allclose(to_np((x * 2).cpu()), to_np(x.cpu()) * 2)  # eager work runs again

    sgd = st.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model.zero_grad()
    with pytest.raises(st.SpiralError, match="warm-up step"):
        with st.cuda.graph(g):
            model(x).sum().backward()
            sgd.step()
    with pytest.raises(st.SpiralError, match="nothing has been captured"):
        g.replay()


@needs_cuda
def test_out_of_memory_inside_a_capture_is_reported_as_such():
    """An allocation that does not fit inside a capture fails as out of memory, naming the capture:
    releasing the allocator's cached blocks would synchronise the device and invalidate the capture
    (the next launch then failed with an unrelated cuBLAS error). Afterwards eager work runs. For the
    same reason empty_cache() refuses inside a capture."""
    x = st.randn(256, 64).cuda()
    (x * 2.0).sum()  # leaves cached blocks for the allocator to (not) release
    st.cuda.synchronize()
    g = st.cuda.CUDAGraph()
    with pytest.raises(st.SpiralError, match="out of memory.*during a CUDA graph capture"):
        with st.cuda.graph(g):
            y = x * 3.0
            st.empty(1 << 42, device="cuda")  # 16 TiB of float32
    del y
    assert not st.cuda.is_current_stream_capturing()
    np.testing.assert_allclose(to_np((x @ x.T).cpu()), to_np(x.cpu()) @ to_np(x.cpu()).T, rtol=1e-4, atol=1e-3)
    with pytest.raises(st.SpiralError, match="empty_cache.*being captured"):
        with st.cuda.graph(st.cuda.CUDAGraph()):
            st.cuda.empty_cache()
    assert not st.cuda.is_current_stream_capturing()
    st.cuda.empty_cache()  # outside a capture it releases the cache


@needs_cuda
def test_graph_memory_is_private_until_reset():
    x = st.randn(1024, 1024).cuda()
    st.cuda.synchronize()
    g = st.cuda.CUDAGraph()
    with st.cuda.graph(g):
        y = (x * 3.0).exp()
        del y  # freed during capture: stays in the graph's pool, not reused by eager work
        z = x + 1.0
    reserved = st.cuda.memory_reserved()
    eager = [x * 5.0 for _ in range(3)]  # must not receive the pool's blocks
    g.replay()
    np.testing.assert_allclose(to_np(z.cpu()), to_np(x.cpu()) + 1.0, rtol=1e-6)
    np.testing.assert_allclose(to_np(eager[0].cpu()), to_np(x.cpu()) * 5.0, rtol=1e-6)
    del z
    g.reset()
    assert st.cuda.memory_reserved() < reserved + 3 * 4 * 1024 * 1024


@needs_cuda
def test_empty_cache_leaves_a_live_graphs_pool_alone():
    """The blocks a capture freed are addresses its replays write: st.cuda.empty_cache() between
    capture and replay (as a large-batch benchmark calls it to make room) keeps them, so memory
    allocated afterwards never overlaps the graph's temporaries."""
    x = st.randn(2048, 1024).cuda()
    st.cuda.synchronize()
    g = st.cuda.CUDAGraph()
    with st.cuda.graph(g):
        t = (x * 3.0).exp()  # 8 MiB temporaries, freed inside the capture: the graph's pool
        u = t * 0.5
        del t
        z = (u + 1.0).sum(0)
        del u
    g.replay()
    want = to_np(z.cpu()).copy()
    st.cuda.empty_cache()
    # what stays cached is the graph's: t's and u's blocks at least
    assert st.cuda.memory_reserved() - st.cuda.memory_allocated() >= 2 * 8 * 2**20
    others = [st.full((2048, 1024), 7.0).cuda() for _ in range(6)]  # would take freed addresses
    st.cuda.synchronize()
    for _ in range(3):
        g.replay()
    st.cuda.synchronize()
    np.testing.assert_allclose(to_np(z.cpu()), want, rtol=1e-6)
    for o in others:
        assert (to_np(o.cpu()) == 7.0).all()
    g.reset()
