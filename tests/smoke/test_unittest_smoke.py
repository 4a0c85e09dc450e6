"""Smoke test of an installed spiraltorch, standard library only (no pytest, no NumPy):

    PYTHONNOUSERSITE=1 python -s -m unittest tests/smoke/test_unittest_smoke.py

The test command runs it in a fresh virtualenv that holds nothing but the wheel it built."""

import os
import subprocess
import sys
import tempfile
import unittest

import spiraltorch as st


class InstalledWheelSmoke(unittest.TestCase):
    def test_tensors_and_autograd(self):
        x = st.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        (x @ x.T).relu().sum().backward()
        self.assertEqual(x.grad.tolist(), [[8.0, 12.0], [8.0, 12.0]])

    def test_a_model_trains_and_round_trips_through_a_file(self):
        st.manual_seed(0)
        model = st.nn.Sequential(st.nn.Linear(4, 16), st.nn.ReLU(), st.nn.Linear(16, 1))
        opt = st.optim.Adam(model.parameters(), lr=0.05)
        x = st.randn(64, 4)
        y = (x * st.tensor([1.0, -2.0, 0.5, 3.0])).sum(1, keepdim=True)
        first = None
        for _ in range(60):
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            first = first if first is not None else loss.item()
        self.assertLess(loss.item(), 0.2 * first)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.safetensors")
            st.nn.save(path, model)
            again = st.nn.Sequential(st.nn.Linear(4, 16), st.nn.ReLU(), st.nn.Linear(16, 1))
            st.nn.load(path, again)
            self.assertEqual(again(x).tolist(), model(x).tolist())

    def test_the_cpu_is_described(self):
        cpu = st.describe_device("cpu")
        self.assertEqual(cpu["backend"], "cpu")
        self.assertGreaterEqual(st.get_num_threads(), 1)

    def test_the_cpp_sdk_is_in_the_wheel(self):
        out = subprocess.run([sys.executable, "-m", "spiraltorch", "--cmake-dir"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertTrue(os.path.isfile(os.path.join(out.stdout.strip(), "SpiralTorchConfig.cmake")))


if __name__ == "__main__":
    unittest.main()
