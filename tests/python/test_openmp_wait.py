"""How OpenMP threads wait between parallel ops: `import spiraltorch` bounds their spinning
(GOMP_SPINCOUNT=10000) unless the user chose a policy, and the choice reaches libgomp."""

import os
import subprocess
import sys

import pytest

CODE = (
    "import os, time, spiraltorch as st\n"
    "st.set_num_threads(2)\n"
    "print(os.environ.get('GOMP_SPINCOUNT'), os.environ.get('OMP_WAIT_POLICY'))\n"
    "a, b = st.randn(1 << 16), st.randn(1 << 16)\n"
    "t = time.perf_counter()\n"
    "for _ in range(400): c = a + b\n"
    "print((time.perf_counter() - t) / 400 * 1e6)\n"
    "assert float(((a + b) - (b + a)).abs().max()) == 0.0\n"
)


def _run(env_changes):
    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    env.update(env_changes)
    r = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    policy, per_op = r.stdout.strip().splitlines()
    return policy, float(per_op)


def test_default_is_a_bounded_spin():
    policy, per_op = _run({})
    assert policy == "10000 None"
    assert per_op > 0


@pytest.mark.parametrize("name,value", [("OMP_WAIT_POLICY", "PASSIVE"), ("GOMP_SPINCOUNT", "0"),
                                        ("OMP_WAIT_POLICY", "ACTIVE")])
def test_a_users_choice_is_kept(name, value):
    policy, _ = _run({name: value})
    spin, wait = policy.split()
    assert (spin if name == "GOMP_SPINCOUNT" else wait) == value
    if name == "OMP_WAIT_POLICY":
        assert spin == "None"  # nothing added beside the user's policy
