"""``import spiraltorch`` loads the native core and the tensor/autograd/nn/optim/data modules only;
the domain packages load on first attribute access (PEP 562), and nothing is added to
``sys.meta_path``. Each check runs in a fresh interpreter, since this process has imported
everything already."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import spiraltorch as st

# Python submodules that must not load with the package: the domain packages, and every submodule the
# package lists as lazy (the native parts of zspace, rl, rec, canvas and vision are in the one
# extension module and load with it).
DOMAIN = sorted({
    "amegagrad", "datasets", "desire", "ecosystem", "integrations", "model_zoo", "planner", "rec", "rl",
    "session", "spiral_rl", "spiralk", "telemetry", "trainer_trace", "vision", "zspace", "zspace_atlas",
    "zspace_trace",
} | st._LAZY_MODULES)


def _python(code: str) -> subprocess.CompletedProcess:
    root = os.path.dirname(os.path.dirname(os.path.abspath(st.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return r


def test_import_loads_no_domain_module_and_adds_no_finder():
    r = _python(f"""
        import sys
        finders = list(sys.meta_path)
        import spiraltorch as st
        assert sys.meta_path == finders, sys.meta_path
        loaded = [m for m in {DOMAIN!r} if "spiraltorch." + m in sys.modules]
        assert not loaded, loaded
        # The core is there: tensors, autograd, nn, optim, data.
        x = st.tensor([1.0, 2.0], requires_grad=True)
        (x * x).sum().backward()
        assert x.grad.tolist() == [2.0, 4.0]
        assert st.nn.Linear and st.optim.SGD and st.data.DataLoader
        print("ok")
    """)
    assert r.stdout.split() == ["ok"]


def test_attribute_access_loads_the_module():
    r = _python("""
        import sys
        import spiraltorch as st
        assert "spiraltorch.zspace" not in sys.modules
        z = st.zspace                                   # a lazy submodule
        assert z is sys.modules["spiraltorch.zspace"]
        assert "spiraltorch.rl" not in sys.modules
        from spiraltorch import rl                      # from-import of a lazy submodule
        assert rl is sys.modules["spiraltorch.rl"] is st.rl
        assert "spiraltorch.telemetry" not in sys.modules
        f = st.training_telemetry_projection            # a name re-exported from a lazy module
        assert f is sys.modules["spiraltorch.telemetry"].training_telemetry_projection
        import spiraltorch.vision.transforms            # a dotted import
        assert st.vision.transforms is sys.modules["spiraltorch.vision.transforms"]
        assert "spiraltorch.amegagrad" not in sys.modules
        assert st.optim.Amegagrad is sys.modules["spiraltorch.amegagrad"].Amegagrad
        print("ok")
    """)
    assert r.stdout.split() == ["ok"]


def test_dir_and_all_list_the_lazy_names_without_loading_them():
    r = _python("""
        import sys
        import spiraltorch as st
        names = dir(st)
        for n in ("zspace", "rl", "vision", "hypergrad", "SpiralSession", "Tensor", "nn"):
            assert n in names and n in st.__all__, n
        assert "spiraltorch.zspace" not in sys.modules and "spiraltorch.session" not in sys.modules
        try:
            st.no_such_name
        except AttributeError as e:
            assert "no_such_name" in str(e)
        else:
            raise AssertionError("st.no_such_name did not raise")
        print("ok")
    """)
    assert r.stdout.split() == ["ok"]


def test_every_lazy_name_resolves():
    for name in st.__all__:
        assert getattr(st, name) is not None, name
    assert sys.modules["spiraltorch.zspace"].hypergrad is st.hypergrad
