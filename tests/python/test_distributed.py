"""spiraltorch.distributed, nn.parallel.DistributedDataParallel, DistributedSampler and spiral-run.

The two-rank tests start real jobs with the launcher (``python -m spiraltorch.launch``, what the
``spiral-run`` console script runs) over Open MPI and compare what each rank saved with NumPy or
with one process trained on the concatenated batches. Each job is bounded by a timeout, so a
hang fails the test instead of stalling the suite.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tomllib

import numpy as np
import pytest

import spiraltorch as st
import spiraltorch.distributed as dist

from conftest import ROOT

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "distributed_scripts")
HAS_MPI = dist.is_available("mpi")
needs_mpi = pytest.mark.skipif(not HAS_MPI, reason=f"no MPI in this build: {dist.unavailable_reason('mpi')}")


def _load_script(name: str):
    spec = importlib.util.spec_from_file_location(f"_dist_{name}", os.path.join(SCRIPTS, f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# spiral-run refuses to start ranks as root unless told to (CI and containers run as root).
AS_ROOT = ["--allow-run-as-root"] if os.geteuid() == 0 else []


def spiral_run(args, tmp_path, timeout=240):
    """Runs ``spiral-run --nproc-per-node 2 <args>`` with the spiraltorch under test; returns
    the completed process (stdout and stderr as text)."""
    env = dict(os.environ)
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(st.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([pkg_parent] + [p for p in [env.get("PYTHONPATH")] if p])
    env["OMP_NUM_THREADS"] = "1"
    cmd = [sys.executable, "-m", "spiraltorch.launch", "--nproc-per-node", "2", *AS_ROOT, *args]
    return subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=timeout)


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return "zombie" not in f.read()
    except FileNotFoundError:
        return False


# ---------------------------------------------------------------- one process


def test_backends_and_errors_without_a_group():
    assert set(dist.available_backends()) <= {"mpi", "nccl"}
    for b in ("mpi", "nccl"):
        assert dist.is_available(b) == (b in dist.available_backends())
        assert (dist.unavailable_reason(b) == "") == dist.is_available(b)
    with pytest.raises(st.SpiralValueError, match="unknown backend 'gloo'"):
        dist.unavailable_reason("gloo")
    assert not dist.is_initialized()
    with pytest.raises(st.SpiralError, match="not initialised"):
        dist.get_rank()
    with pytest.raises(st.SpiralError, match="not initialised"):
        dist.all_reduce(st.ones(2))
    with pytest.raises(st.SpiralValueError, match="backend must be 'mpi' or 'nccl', got 'ucc'"):
        dist.init_process_group("ucc")  # ("gloo", PyTorch's CPU backend, means "mpi": test_pytorch_programs' ddp)
    with pytest.raises(st.SpiralValueError, match="init_method must be 'env://'"):
        dist.init_process_group("mpi", init_method="tcp://127.0.0.1:1234")
    with pytest.raises(st.SpiralValueError, match="timeout must be a positive number"):
        dist.init_process_group("mpi", timeout=0)
    with pytest.raises(st.SpiralValueError, match="reduce op must be"):
        st._core.distributed.all_reduce(st.ones(1), "prod")
    assert not dist.is_initialized()
    assert issubclass(dist.DistributedError, st.SpiralError)
    assert [dist.ReduceOp.SUM, dist.ReduceOp.AVG, dist.ReduceOp.MAX, dist.ReduceOp.MIN] == list(dist.ReduceOp)


@pytest.mark.skipif(HAS_MPI, reason="this build has MPI")
def test_init_without_mpi_names_the_reason():
    with pytest.raises(st.DeviceUnavailableError, match="backend 'mpi' is unavailable: MPI was"):
        dist.init_process_group("mpi")
    assert st._core.distributed.mpi_library_version() == ""


def test_distributed_sampler_matches_pytorch_semantics():
    data = list(range(10))
    shards = [list(st.data.DistributedSampler(data, num_replicas=3, rank=r, shuffle=False)) for r in range(3)]
    # PyTorch's DistributedSampler: pad by wrapping to 12, rank r takes positions r, r+3, ...
    padded = data + data[:2]
    assert shards == [padded[r::3] for r in range(3)]
    assert [len(st.data.DistributedSampler(data, num_replicas=3, rank=0, shuffle=False))] == [4]
    dropped = [list(st.data.DistributedSampler(data, num_replicas=3, rank=r, shuffle=False, drop_last=True))
               for r in range(3)]
    assert dropped == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    assert len(st.data.DistributedSampler(data, num_replicas=3, rank=0, drop_last=True)) == 3
    # Shuffled: the ranks agree on one permutation per (seed, epoch) and split it.
    s = [st.data.DistributedSampler(data, num_replicas=2, rank=r, seed=7) for r in range(2)]
    e0 = [list(x) for x in s]
    assert sorted(e0[0] + e0[1]) == data
    assert e0 == [list(st.data.DistributedSampler(data, num_replicas=2, rank=r, seed=7)) for r in range(2)]
    for x in s:
        x.set_epoch(1)
    e1 = [list(x) for x in s]
    assert sorted(e1[0] + e1[1]) == data and e1 != e0
    with pytest.raises(st.SpiralValueError, match="rank 2 is outside"):
        st.data.DistributedSampler(data, num_replicas=2, rank=2)
    with pytest.raises(st.SpiralValueError, match="set_epoch"):
        s[0].set_epoch(-1)
    with pytest.raises(st.SpiralError, match="pass num_replicas and rank"):
        st.data.DistributedSampler(data)


def test_dataloader_reads_the_sampler_order():
    x = st.arange(12, dtype=st.float32).reshape(6, 2)
    y = st.arange(6)
    ds = st.data.TensorDataset(x, y)
    sampler = st.data.DistributedSampler(ds, num_replicas=2, rank=1, shuffle=False)  # 1, 3, 5
    loader = st.data.DataLoader(ds, batch_size=2, sampler=sampler)
    assert len(loader) == 2
    got = [yb.numpy().tolist() for _, yb in loader]
    assert got == [[1, 3], [5]]
    xb = next(iter(loader))[0].numpy()
    np.testing.assert_array_equal(xb, np.arange(12, dtype=np.float32).reshape(6, 2)[[1, 3]])
    # A Python dataset (item by item) reads the same order.
    plain = st.data.DataLoader([(float(i), i) for i in range(6)], batch_size=3, sampler=sampler)
    assert [b[1].numpy().tolist() for b in plain] == [[1, 3, 5]]
    with pytest.raises(st.SpiralValueError, match="sampler and shuffle=True"):
        st.data.DataLoader(ds, batch_size=2, sampler=sampler, shuffle=True)


def test_launcher_arguments_and_console_script():
    from spiraltorch import launch

    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        scripts = tomllib.load(f)["project"]["scripts"]
    assert scripts["spiral-run"] == "spiraltorch.launch:main"
    with pytest.raises(SystemExit):
        launch._parse(["--nproc-per-node", "0", "x.py"])
    ns = launch._parse(["--nproc-per-node", "3", "--timeout", "5", "train.py", "--lr", "0.1"])
    assert (ns.nproc, ns.timeout, ns.target, ns.args) == (3, 5.0, "train.py", ["--lr", "0.1"])
    assert not ns.allow_run_as_root
    assert launch._parse(["--allow-run-as-root", "train.py"]).allow_run_as_root


@needs_mpi
def test_mpi_library_is_open_mpi():
    assert st._core.distributed.mpi_library_version().startswith("Open MPI v")
    from spiraltorch import launch

    assert launch.find_mpirun() is not None


# ---------------------------------------------------------------- two ranks


@needs_mpi
def test_collectives_across_two_ranks_match_numpy(tmp_path):
    proc = spiral_run([os.path.join(SCRIPTS, "collectives.py"), str(tmp_path)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    mod = _load_script("collectives")
    xs = [mod.inputs(r) for r in range(2)]
    stack = lambda k: np.stack([x[k] for x in xs])  # noqa: E731
    for r in range(2):
        res = np.load(tmp_path / f"rank{r}.npz")
        assert int(res["rank"]) == r and int(res["world"]) == 2 and str(res["backend"]) == "mpi"
        np.testing.assert_allclose(res["all_reduce_sum"], stack("reduce").sum(0), rtol=1e-6)
        np.testing.assert_allclose(res["all_reduce_avg"], stack("reduce").mean(0), rtol=1e-6)
        np.testing.assert_array_equal(res["all_reduce_max"], stack("reduce").max(0))
        np.testing.assert_array_equal(res["all_reduce_min"], stack("reduce").min(0))
        np.testing.assert_allclose(res["all_reduce_f64"], stack("reduce64").sum(0), rtol=1e-14)
        assert res["all_reduce_int_max"].dtype == np.int64
        np.testing.assert_array_equal(res["all_reduce_int_max"], stack("ints").max(0))
        np.testing.assert_allclose(res["all_reduce_view"], stack("reduce").sum(0), rtol=1e-6)
        np.testing.assert_array_equal(res["broadcast"], xs[1]["bcast"])
        np.testing.assert_array_equal(res["all_gather"], stack("gather"))
        np.testing.assert_array_equal(res["all_gather_into_tensor"], stack("gather").reshape(4, 4))
        np.testing.assert_allclose(res["reduce_scatter"], stack("scatter").sum(0)[2 * r:2 * r + 2], rtol=1e-6)
        np.testing.assert_array_equal(res["reduce_scatter_list_max"], stack("scatter").max(0)[2 * r:2 * r + 2])
        assert res["work_types"].tolist() == [dist.Work.__name__] * 3 + ["True"]
        assert res["async_wait"].tolist() == [True, True, True]
        assert res["async_done"].tolist() == [True, True, True]
        np.testing.assert_allclose(res["async_all_reduce"], stack("reduce").sum(0), rtol=1e-6)
        np.testing.assert_array_equal(res["async_broadcast"], xs[0]["bcast"])
        msg = str(res["shape_error"])
        assert "all_gather" in msg and "world size 2" in msg and "[3, 4]" in msg.replace("(", "[").replace(")", "]")


@needs_mpi
def test_ddp_fashion_mnist_equals_one_process_on_concatenated_batches(tmp_path):
    """The acceptance: two ranks of DDP over MPI (several optimizers, no_sync accumulation,
    nn.fit, ModuleTrainer) end with the weights of one process trained on the concatenated
    batches, to 1e-6."""
    if st.data.find_fashion_mnist() is None:
        pytest.skip("Fashion-MNIST is not installed (Debian: dataset-fashion-mnist)")
    proc = spiral_run([os.path.join(SCRIPTS, "ddp_fashion.py"), str(tmp_path)], tmp_path, timeout=400)
    assert proc.returncode == 0, proc.stderr
    mod = _load_script("ddp_fashion")
    ranks = [np.load(tmp_path / f"rank{r}.npz") for r in range(2)]
    idx = [r["indices"] for r in ranks]
    # DistributedSampler: the two shards partition the 256 samples.
    assert sorted(np.concatenate(idx).tolist()) == list(range(mod.SAMPLES))
    images, labels = st.data.load_fashion_mnist(split="train")
    batches = []
    for s in range(mod.STEPS):
        rows = np.concatenate([i[s * mod.BATCH:(s + 1) * mod.BATCH] for i in idx]).tolist()
        batches.append((images[rows], labels[rows]))
    for kind in mod.EXPERIMENTS:
        want = mod.reference(kind, batches)
        for r, res in enumerate(ranks):
            for k, w in want.items():
                np.testing.assert_allclose(res[f"{kind}.{k}"], w, rtol=0, atol=1e-6, err_msg=f"{kind} rank {r} {k}")
            # Six parameters in 1 MB buckets: each big weight alone, the small ones grouped.
            assert int(res[f"{kind}.buckets"]) == 4, kind
            assert int(res[f"{kind}.synced"]) == mod.STEPS, kind
            # All but the last bucket (the first layer's, whose gradient is the last to arrive
            # and ends the pass) start while backward still runs.
            assert int(res[f"{kind}.overlapped"]) >= 3, kind
        # The weights moved: a run that did nothing would not match a reference that trained.
        start = mod.weights(mod.make_model(1, mod.dtype_of(kind)))
        assert any(np.abs(want[k] - start[k]).max() > 1e-4 for k in want), kind


@needs_mpi
def test_ddp_find_unused_parameters_leaves_globally_unused_ones_without_grad(tmp_path):
    """Rank 0 uses heads a and b, rank 1 only a, nobody c. Either way a's and b's gradients are
    the average over the ranks (b: rank 0's half); head c gets zeros without the flag and keeps
    .grad None with find_unused_parameters=True, as in PyTorch."""
    proc = spiral_run([os.path.join(SCRIPTS, "ddp_unused.py"), str(tmp_path)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    ranks = [np.load(tmp_path / f"rank{r}.npz") for r in range(2)]
    for flag in ("True", "False"):
        for r in ranks:
            # d(sum(x W^T + b))/dW = column sums of x (4 rows of rank + 1), averaged over the ranks
            np.testing.assert_allclose(r[f"{flag}.a__weight"], np.full((2, 3), (4 * 1 + 4 * 2) / 2))
            np.testing.assert_allclose(r[f"{flag}.a__bias"], np.full(2, 4.0))
            np.testing.assert_allclose(r[f"{flag}.b__weight"], np.full((2, 3), 4 * 1 / 2))
            np.testing.assert_allclose(r[f"{flag}.b__bias"], np.full(2, 2.0))
    for r in ranks:
        assert np.isnan(r["True.c__weight"]).all() and np.isnan(r["True.c__bias"]).all()
        assert not r["False.c__weight"].any() and not r["False.c__bias"].any()


@needs_mpi
def test_a_failing_rank_ends_the_job_with_its_error(tmp_path):
    # Rank 0 waits in an all_reduce that rank 1 never joins; the job must end with rank 1's error
    # well before the group's 60 s timeout (mpirun ends the job when a rank exits non-zero).
    proc = spiral_run([os.path.join(SCRIPTS, "failing_rank.py"), "60"], tmp_path, timeout=50)
    assert proc.returncode != 0
    assert "spiral-run: rank 1 failed" in proc.stderr, proc.stderr
    assert "RuntimeError: rank 1 failed on purpose after one all_reduce" in proc.stderr
    assert "rank 0 should not get here" not in proc.stdout


@needs_mpi
def test_the_group_timeout_raises_distributed_error(tmp_path):
    """A collective that never completes raises DistributedError after the group's timeout on
    the waiting rank (here rank 1 sleeps past it), which then ends the job."""
    script = tmp_path / "slow.py"
    script.write_text(
        "import time, spiraltorch as st, spiraltorch.distributed as dist\n"
        "dist.init_process_group('mpi', timeout=2)\n"
        "if dist.get_rank() == 1:\n"
        "    time.sleep(30)\n"
        "t = st.ones(3)\n"
        "dist.all_reduce(t)\n")
    proc = spiral_run([str(script)], tmp_path, timeout=50)
    assert proc.returncode != 0
    assert "spiral-run: rank 0 failed" in proc.stderr, proc.stderr
    assert "DistributedError: all_reduce" in proc.stderr and "the process group's timeout" in proc.stderr


@needs_mpi
def test_launcher_sets_the_torchrun_variables(tmp_path):
    script = tmp_path / "env.py"
    script.write_text(
        "import os, sys\n"
        "keys = ['RANK', 'WORLD_SIZE', 'LOCAL_RANK', 'LOCAL_WORLD_SIZE', 'MASTER_ADDR', 'MASTER_PORT']\n"
        "open(os.path.join(sys.argv[1], 'env' + os.environ['RANK']), 'w').write(' '.join(os.environ[k] for k in keys))\n")
    proc = spiral_run(["--master-port", "29533", str(script), str(tmp_path)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    for r in range(2):
        assert (tmp_path / f"env{r}").read_text().split() == [str(r), "2", str(r), "2", "127.0.0.1", "29533"]


@needs_mpi
def test_sigterm_to_the_launcher_ends_every_rank(tmp_path):
    import signal
    import time

    script = tmp_path / "sleepy.py"
    script.write_text(
        "import os, sys, time\n"
        "open(os.path.join(sys.argv[1], 'pid' + os.environ['RANK']), 'w').write(str(os.getpid()))\n"
        "time.sleep(120)\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(os.path.abspath(st.__file__)))] +
                                        [p for p in [env.get("PYTHONPATH")] if p])
    proc = subprocess.Popen([sys.executable, "-m", "spiraltorch.launch", "--nproc-per-node", "2", *AS_ROOT, str(script),
                             str(tmp_path)], env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not all((tmp_path / f"pid{r}").exists() for r in range(2)):
            assert time.monotonic() < deadline and proc.poll() is None, "the ranks did not start"
            time.sleep(0.1)
        time.sleep(0.2)  # the pid files are complete once both exist and a moment has passed
        pids = [int((tmp_path / f"pid{r}").read_text()) for r in range(2)]
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code != 0
    deadline = time.monotonic() + 10
    alive = pids
    while alive and time.monotonic() < deadline:
        alive = [p for p in pids if _running(p)]
        time.sleep(0.1)
    assert not alive, f"ranks {alive} outlived the launcher"
