"""A job whose rank 1 raises while rank 0 waits in a collective (tests/python/test_distributed.py):
spiral-run must end the whole job with rank 1's error instead of hanging."""

import sys

import spiraltorch as st
import spiraltorch.distributed as dist

dist.init_process_group("mpi", timeout=float(sys.argv[1]))
t = st.ones(4)
dist.all_reduce(t)  # both ranks take part once
if dist.get_rank() == 1:
    raise RuntimeError("rank 1 failed on purpose after one all_reduce")
dist.all_reduce(t)  # rank 0 waits here for a rank that is gone
print("rank 0 should not get here", flush=True)
