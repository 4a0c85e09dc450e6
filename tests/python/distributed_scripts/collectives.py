"""One rank of the collectives test (tests/python/test_distributed.py starts it with spiral-run).

Rank r's inputs are a fixed function of r (``inputs(r)`` below, which the test recomputes with
NumPy); every collective's result on this rank is saved to <out>/rank<r>.npz.
"""

import sys

import numpy as np

import spiraltorch as st
import spiraltorch.distributed as dist


def inputs(rank: int) -> "dict[str, np.ndarray]":
    """The tensors rank ``rank`` contributes (shared with the test)."""
    g = np.random.default_rng(100 + rank)
    return {
        "reduce": g.standard_normal((3, 5)).astype(np.float32),
        "reduce64": g.standard_normal(7),
        "ints": g.integers(-50, 50, size=(4,)).astype(np.int64),
        "bcast": g.standard_normal((2, 3)).astype(np.float32),
        "gather": g.standard_normal((2, 4)).astype(np.float32),
        "scatter": g.standard_normal((4, 3)).astype(np.float32),  # world_size (2) * 2 rows
    }


if __name__ == "__main__":
    out_dir = sys.argv[1]
    dist.init_process_group("mpi", timeout=60)
    rank, world = dist.get_rank(), dist.get_world_size()
    x = inputs(rank)
    res = {"rank": np.array(rank), "world": np.array(world), "backend": np.array(dist.get_backend())}
    for op in ("sum", "avg", "max", "min"):
        t = st.tensor(x["reduce"])
        dist.all_reduce(t, op)
        res[f"all_reduce_{op}"] = t.numpy()
    t64 = st.tensor(x["reduce64"])
    dist.all_reduce(t64, dist.ReduceOp.SUM)
    res["all_reduce_f64"] = t64.numpy()
    ti = st.tensor(x["ints"])
    dist.all_reduce(ti, "max")
    res["all_reduce_int_max"] = ti.numpy()
    # A non-contiguous tensor: the result is written back through the view.
    base = st.tensor(x["reduce"])
    view = base.t()
    dist.all_reduce(view, "sum")
    res["all_reduce_view"] = base.numpy()
    b = st.tensor(x["bcast"])
    dist.broadcast(b, src=1)
    res["broadcast"] = b.numpy()
    outs = [st.zeros(2, 4) for _ in range(world)]
    dist.all_gather(outs, st.tensor(x["gather"]))
    res["all_gather"] = np.stack([o.numpy() for o in outs])
    big = st.zeros(world * 2, 4)
    dist.all_gather_into_tensor(big, st.tensor(x["gather"]))
    res["all_gather_into_tensor"] = big.numpy()
    rs = st.zeros(2, 3)
    dist.reduce_scatter_tensor(rs, st.tensor(x["scatter"]), "sum")
    res["reduce_scatter"] = rs.numpy()
    rs_list = st.zeros(2, 3)
    dist.reduce_scatter(rs_list, [st.tensor(x["scatter"][2 * r:2 * r + 2]) for r in range(world)], "max")
    res["reduce_scatter_list_max"] = rs_list.numpy()
    # Asynchronous: issue three, then wait in order.
    a1, a2 = st.tensor(x["reduce"]), st.tensor(x["bcast"])
    w1 = dist.all_reduce(a1, "sum", async_op=True)
    w2 = dist.broadcast(a2, 0, async_op=True)
    w3 = dist.barrier(async_op=True)
    res["work_types"] = np.array([type(w).__name__ for w in (w1, w2, w3)] +
                                 [str(all(isinstance(w, dist.Work) for w in (w1, w2, w3)))])
    res["async_wait"] = np.array([w1.wait(), w2.wait(), w3.wait()])
    res["async_done"] = np.array([w1.is_completed(), w2.is_completed(), w3.is_completed()])
    res["async_all_reduce"], res["async_broadcast"] = a1.numpy(), a2.numpy()
    # Bad input raises on every rank before anything is issued (so no rank waits).
    try:
        dist.all_gather_into_tensor(st.zeros(3, 4), st.tensor(x["gather"]))
        res["shape_error"] = np.array("")
    except st.ShapeError as e:
        res["shape_error"] = np.array(str(e))
    dist.barrier()
    np.savez(f"{out_dir}/rank{rank}.npz", **res)
    dist.destroy_process_group()
