"""The "nccl" backend with world size 1 on one GPU: every collective against NumPy, async handles,
stream ordering, argument errors, and DistributedDataParallel's whole path (broadcast at wrap time,
buckets, all-reduces started during backward, no_sync) against plain training of the same model.

Self-contained: one process, no launcher (rank 0 of 1 needs no rendezvous). Skipped without CUDA
or without NCCL in the build. With one rank every reduction's result equals its input, so what is
checked is that NCCL really ran on the right buffers in the right order and the results come
back intact (and, for DDP, that the averaged gradients equal the local ones).

To run it: a CUDA build that found NCCL (``pip install -r requirements-cuda.txt`` puts the
nvidia-nccl-cu13 wheel where cmake/SpiralCUDA.cmake looks, or set NCCL_ROOT; configure prints
"SpiralTorch: NCCL ..."), then ``python -m pytest tests/python/test_distributed_cuda.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.distributed as dist
from spiraltorch import nn

HAVE_CUDA = st.cuda.is_available()
HAVE_NCCL = HAVE_CUDA and dist.is_available("nccl")
pytestmark = pytest.mark.skipif(
    not HAVE_NCCL,
    reason="needs CUDA and NCCL: " + ("" if HAVE_NCCL else (st.cuda.unavailable_reason() if not HAVE_CUDA
                                                            else dist.unavailable_reason("nccl"))))


@pytest.fixture
def group():
    """A world-size-1 NCCL group on cuda:0, destroyed after the test."""
    dist.init_process_group("nccl", rank=0, world_size=1, timeout=60, device=0)
    try:
        yield
    finally:
        dist.destroy_process_group()
    assert not dist.is_initialized()


def cuda(a: np.ndarray):
    return st.tensor(a, device="cuda:0")


def test_group_identity(group):
    assert dist.is_initialized()
    assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (0, 1, "nccl")
    assert "nccl" in dist.available_backends()
    with pytest.raises(st.SpiralError, match="already exists"):
        dist.init_process_group("nccl", rank=0, world_size=1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("op", ["sum", "avg", "max", "min"])
def test_all_reduce_matches_numpy(group, dtype, op):
    if op == "avg" and dtype == np.int64:
        t = cuda(np.arange(6, dtype=dtype))
        with pytest.raises(st.DtypeError, match="op 'avg' needs a floating dtype"):
            dist.all_reduce(t, op)
        return
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((33, 17)) * 100).astype(dtype)
    t = cuda(a)
    dist.all_reduce(t, op)
    # One rank: sum, mean, max and min over the single contribution are the contribution itself.
    want = {"sum": np.sum, "avg": np.mean, "max": np.max, "min": np.min}[op](a[None], axis=0)
    np.testing.assert_array_equal(t.cpu().numpy(), want.astype(dtype))


def test_half_types_and_non_contiguous_views(group):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((8, 6)).astype(np.float32)
    for dt in (st.float16, st.bfloat16):
        t = cuda(a).to(dtype=dt)
        before = t.float().cpu().numpy()
        dist.all_reduce(t, "sum")
        assert t.dtype == dt
        np.testing.assert_array_equal(t.float().cpu().numpy(), before)
    base = cuda(a)
    view = base.t()  # non-contiguous: reduced through a staged copy written back into the view
    dist.all_reduce(view, dist.ReduceOp.MAX)
    np.testing.assert_array_equal(base.cpu().numpy(), a)


def test_broadcast_gather_scatter_barrier(group):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 5)).astype(np.float32)
    t = cuda(a)
    dist.broadcast(t, src=0)
    np.testing.assert_array_equal(t.cpu().numpy(), a)
    with pytest.raises(st.SpiralValueError, match="root 1 is outside"):
        dist.broadcast(t, src=1)

    out = st.zeros(4, 5, device="cuda:0")
    dist.all_gather_into_tensor(out, cuda(a))
    np.testing.assert_array_equal(out.cpu().numpy(), a)
    outs = [st.zeros(4, 5, device="cuda:0")]
    dist.all_gather(outs, cuda(a))
    np.testing.assert_array_equal(outs[0].cpu().numpy(), a)

    rs = st.zeros(4, 5, device="cuda:0")
    dist.reduce_scatter_tensor(rs, cuda(a), "sum")
    np.testing.assert_array_equal(rs.cpu().numpy(), a)
    rs2 = st.zeros(4, 5, device="cuda:0")
    dist.reduce_scatter(rs2, [cuda(a)], "min")
    np.testing.assert_array_equal(rs2.cpu().numpy(), a)
    assert dist.barrier() is None


def test_errors_name_the_operation_and_change_nothing(group):
    a = np.arange(6, dtype=np.float32)
    cpu = st.tensor(a)
    with pytest.raises(st.DeviceUnavailableError, match="all_reduce: the nccl backend takes CUDA tensors"):
        dist.all_reduce(cpu)
    np.testing.assert_array_equal(cpu.numpy(), a)
    with pytest.raises(st.ShapeError, match="all_gather: with world size 1"):
        dist.all_gather_into_tensor(st.zeros(7, device="cuda:0"), cuda(a))
    with pytest.raises(st.DtypeError, match="dtypes differ"):
        dist.all_gather_into_tensor(st.zeros(6, dtype=st.float64, device="cuda:0"), cuda(a))
    with pytest.raises(st.DtypeError, match="cannot reduce bool"):
        dist.all_reduce(st.ones(3, dtype=st.bool, device="cuda:0"))


def test_async_work_is_ordered_after_the_producing_kernels(group):
    """Each all_gather copies a matmul result queued just before it on the caller's stream into
    a fresh buffer: a collective that ran early would copy unfinished data."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((1024, 1024)).astype(np.float32)
    x = cuda(a)
    works, pairs = [], []
    for k in range(4):
        y = x @ x + float(k)  # queued on the current stream; the collective must wait for it
        out = st.zeros(1024, 1024, device="cuda:0")
        works.append(dist.all_gather_into_tensor(out, y, async_op=True))
        pairs.append((y, out))
    w_b = dist.barrier(async_op=True)
    assert all(w.wait() is True for w in works) and w_b.wait() is True
    assert all(w.is_completed() for w in works)
    ref = a.astype(np.float64) @ a.astype(np.float64)
    for k, (y, out) in enumerate(pairs):
        np.testing.assert_array_equal(out.cpu().numpy(), y.cpu().numpy())
        # TF32 matmuls may round: a loose check that y is the product, not a stale buffer.
        np.testing.assert_allclose(y.cpu().numpy(), ref + k, rtol=0, atol=0.5)


def _mlp(seed: int):
    st.manual_seed(seed)
    return nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)).to("cuda:0")


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_ddp_training_equals_plain_training(group, optimizer):
    """DDP over NCCL with one rank takes exactly the steps of the unwrapped model, while every
    bucket but the last starts its all-reduce inside backward."""
    plain, wrapped = _mlp(5), _mlp(5)  # the same initial weights
    # Wrapping broadcasts rank 0's weights: with one rank they stay the wrapped model's own.
    before = {k: v.cpu().numpy() for k, v in wrapped.state_dict().items()}
    ddp = nn.parallel.DistributedDataParallel(wrapped, bucket_cap_mb=0.2)
    for k, v in wrapped.state_dict().items():
        np.testing.assert_array_equal(v.cpu().numpy(), before[k])
    # 0.2 MB buckets: the 256x256 weight (256 KB) alone, then the rest in cap-sized groups.
    assert len(ddp.bucket_indices) >= 3
    assert sorted(i for b in ddp.bucket_indices for i in b) == list(range(6))
    assert ddp.bucket_indices[0][0] == 5  # reverse registration order: the last bias first

    def make(params):
        return st.optim.Adam(params, lr=1e-3) if optimizer == "adam" else st.optim.SGD(params, lr=0.05, momentum=0.9)

    opt_p, opt_d = make(plain.parameters()), make(ddp.parameters())
    loss_fn = nn.CrossEntropyLoss()
    rng = np.random.default_rng(7)
    for step in range(5):
        x = cuda(rng.standard_normal((32, 64)).astype(np.float32))
        y = st.tensor(rng.integers(0, 10, size=32), device="cuda:0")
        for model, opt in ((plain, opt_p), (ddp, opt_d)):
            opt.zero_grad()
            loss_fn(model(x), y).backward()
        for p, q in zip(plain.parameters(), wrapped.parameters()):
            # An average over one rank: the local gradient (NCCL's avg may scale by 1/1 in float).
            np.testing.assert_allclose(q.grad.cpu().numpy(), p.grad.cpu().numpy(), rtol=1e-6, atol=1e-8)
        opt_p.step()
        opt_d.step()
        assert ddp.overlapped_buckets >= len(ddp.bucket_indices) - 1
    assert ddp.synced_steps == 5
    for (k, p), q in zip(plain.state_dict().items(), wrapped.state_dict().values()):
        np.testing.assert_allclose(q.cpu().numpy(), p.cpu().numpy(), rtol=1e-5, atol=1e-6, err_msg=k)


def test_ddp_no_sync_accumulates_locally(group):
    model = _mlp(8)
    ref = _mlp(8)
    ddp = nn.parallel.DistributedDataParallel(model)
    rng = np.random.default_rng(9)
    xs = [cuda(rng.standard_normal((16, 64)).astype(np.float32)) for _ in range(3)]
    with ddp.no_sync():
        assert ddp.require_backward_grad_sync is False
        ddp(xs[0]).sum().backward()
        ddp(xs[1]).sum().backward()
    assert ddp.require_backward_grad_sync is True
    assert ddp.synced_steps == 0
    ddp(xs[2]).sum().backward()
    assert ddp.synced_steps == 1
    for x in xs:
        ref(x).sum().backward()
    for p, q in zip(ref.parameters(), model.parameters()):
        np.testing.assert_allclose(q.grad.cpu().numpy(), p.grad.cpu().numpy(), rtol=1e-6, atol=1e-6)


def test_ddp_with_nn_fit(group):
    model = _mlp(10)
    ref = _mlp(10)
    ddp = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.1)
    rng = np.random.default_rng(11)
    x = st.tensor(rng.standard_normal((64, 64)).astype(np.float32))
    y = st.tensor(rng.integers(0, 10, size=64))
    ds = st.data.TensorDataset(x, y)
    loss_fn = nn.CrossEntropyLoss()
    for m in (ddp, ref):
        loader = st.data.DataLoader(ds, batch_size=16, device="cuda:0")
        nn.fit(m, loss_fn, st.optim.SGD(m.parameters(), lr=0.1), loader, epochs=1, progress=False)
    assert ddp.synced_steps == 4
    for (k, p), q in zip(ref.state_dict().items(), model.state_dict().values()):
        np.testing.assert_allclose(q.cpu().numpy(), p.cpu().numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
