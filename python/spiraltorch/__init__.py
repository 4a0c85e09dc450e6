"""SpiralTorch: a dependency-light learning library with a C++20 core.

``import spiraltorch as st`` gives PyTorch-style tensors with autograd
(``st.tensor``, ``st.Tensor``, ``st.no_grad``), device descriptions
(``st.describe_device``) and the seed's 2-D conveniences (``st.Tensor(rows, cols, data)``).
"""

from __future__ import annotations

import os as _os

# How long OpenMP threads spin after a parallel region before they sleep: libgomp's default
# (300000 spins, milliseconds) steals the cores OpenBLAS's own threads need, while sleeping at
# once (OMP_WAIT_POLICY=PASSIVE) costs a futex wake-up of ~55 us at the start of every parallel
# op on a 2-core VM (a 65536-float add took 62 us instead of 4). 10000 spins (about 0.3 ms) keeps
# back-to-back ops on awake threads and lets a following OpenBLAS call have the cores. Read when
# libgomp loads with the native module (so PyTorch imported later in the process shares it);
# a user's OMP_WAIT_POLICY or GOMP_SPINCOUNT wins.
if "OMP_WAIT_POLICY" not in _os.environ and "GOMP_SPINCOUNT" not in _os.environ:
    _os.environ["GOMP_SPINCOUNT"] = "10000"

try:
    from . import _core  # noqa: E402
except ImportError as _missing:
    # A dependency outside this environment's site-packages (see _native_deps): load the pip
    # packages' libraries by path and try once more.
    from . import _native_deps

    if "cannot open shared object file" not in str(_missing) or not _native_deps.preload():
        raise
    from . import _core  # noqa: E402
from ._core import (  # noqa: E402
    CheckpointError as CheckpointError,
    DeviceUnavailableError as DeviceUnavailableError,
    DtypeError as DtypeError,
    OutOfMemoryError as OutOfMemoryError,
    ShapeError as ShapeError,
    SpiralError as SpiralError,
    SpiralIndexError as SpiralIndexError,
    SpiralValueError as SpiralValueError,
    Tensor as Tensor,
    dtype as dtype,
)
from ._core import geometry as geometry  # noqa: E402
from ._core.canvas import CanvasProjector as CanvasProjector  # noqa: E402
from ._tensor_extras import Size as Size, install as _install  # noqa: E402
from ._tensor_extras import return_types as _return_types  # noqa: E402,F401 - called by the native ops (python/src/ops.cpp)
from . import autograd as autograd, data as data, nn as nn, optim as optim, utils as utils  # noqa: E402
from .autograd import (  # noqa: E402
    AutogradTensor as AutogradTensor,
    enable_grad as enable_grad,
    no_grad as no_grad,
    set_grad_enabled as set_grad_enabled,
)
from .serialization import load as load, save as save  # noqa: E402

# Everything else loads on first use (PEP 562): ``st.zspace``, ``from spiraltorch import rl``,
# ``import spiraltorch.vision`` and ``st.hypergrad`` each import their module then, not at
# ``import spiraltorch``. Only the tensor, autograd, nn, optim and data modules above (and what they
# import themselves) load with the package. A submodule is listed here when ``st.<name>`` should find
# it before anyone imported it; a name re-exported from a submodule is listed with its module.
# Nothing is added to sys.meta_path: the seed's top-level `import rl` alias needed such a finder (one
# cannot answer `import rl` otherwise without taking the name `rl` in sys.modules from any other
# package), so it is gone and `from spiraltorch import rl` is the one spelling.
_LAZY_MODULES = frozenset({
    "accelerator", "amegagrad", "amp", "backends", "compat", "cpu", "cuda", "datasets", "desire",
    "distributed", "ecosystem", "linalg", "model_zoo", "ops", "planner", "plugin", "rec", "rl", "runtime",
    "session", "special", "spiral_rl", "spiralk", "telemetry", "trainer_trace", "vision", "wgpu",
    "zspace", "zspace_atlas", "zspace_trace",
})
_LAZY_NAMES = {
    **dict.fromkeys(("capture", "share"), "compat"),
    **dict.fromkeys(("autocast", "get_autocast_dtype", "is_autocast_enabled"), "amp"),
    "device": "accelerator",
    **dict.fromkeys(("bottomk", "hip_probe", "midk", "plan", "plan_topk", "probe_gpu_path", "rank_k"), "planner"),
    "SpiralSession": "session",
    **dict.fromkeys((
        "ComplexTensor", "GradientSummary", "Hypergrad", "LanguageWaveEncoder", "Realgrad", "ZMetrics",
        "ZSpaceInference", "ZSpaceInferencePipeline", "ZSpacePartialBundle", "ZSpaceTrainer",
        "blend_zspace_partials", "compile_inference", "decode_zspace", "encode_zspace", "hypergrad",
        "infer_from_partial", "realgrad", "z", "z_metrics",
    ), "zspace"),
    "training_telemetry_projection": "telemetry",
    **dict.fromkeys(("AmegagradSession", "HypergradSession", "amegagrad_session", "hypergrad_session"), "amegagrad"),
    "summarize_trainer_trace_events": "trainer_trace",
    **dict.fromkeys((
        "_require_backend", "describe_device", "describe_runtime_devices", "evaluate_runtime_device_route",
        "init_backend", "observe_runtime_device_probe",
    ), "runtime"),
    **dict.fromkeys(("build_desire_adapter_from_downstream_hook", "desire_step_from_downstream_hook"), "desire"),
}


def __getattr__(name: str) -> object:
    """Loads a lazy submodule or re-exported name on first access and keeps it in the namespace."""
    import importlib

    if name in _LAZY_NAMES:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY_NAMES[name]}"), name)
    elif name in _LAZY_MODULES:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY_MODULES | set(_LAZY_NAMES))


_install()
from ._torch_compat import install as _install_torch_compat  # noqa: E402

if _os.environ.get("SPIRALTORCH_STUBGEN") != "1":  # scripts/gen_stubs.py describes the native class alone
    _install_torch_compat(globals())
    from ._torch_compat_ops import install as _install_torch_compat_ops  # noqa: E402

    _install_torch_compat_ops(globals())

bool = dtype.bool  # noqa: A001 - PyTorch-style dtype names
uint8 = dtype.uint8
int32 = dtype.int32
int64 = dtype.int64
float16 = dtype.float16
bfloat16 = dtype.bfloat16
float32 = dtype.float32
float64 = dtype.float64
half = float16
float = float32  # noqa: A001
double = float64
long = int64
int = int32  # noqa: A001

# The native functions and classes not named above (a lazy name's module has its own version).
_NATIVE_FUNCTIONS = [
    name
    for name in dir(_core)
    if not name.startswith("_") and name not in globals() and name not in _LAZY_MODULES and name not in _LAZY_NAMES
]
for _name in _NATIVE_FUNCTIONS:
    globals()[_name] = getattr(_core, _name)
del _name


def _register_native_modules() -> None:
    """Every native submodule imports by its dotted name (``import spiraltorch.sot``,
    ``from spiraltorch._core.nn import Linear``): the extension creates them as attributes only,
    so they are entered in ``sys.modules`` under the package's own names (never another's)."""
    import sys
    import types

    def visit(module: types.ModuleType) -> None:
        for attr in dir(module):
            sub = getattr(module, attr, None)
            if isinstance(sub, types.ModuleType) and sub.__name__.startswith(module.__name__ + "."):
                sys.modules.setdefault(sub.__name__, sub)
                visit(sub)

    visit(_core)
    for name, value in list(globals().items()):
        if isinstance(value, types.ModuleType) and value.__name__ == f"{_core.__name__}.{name}":
            sys.modules.setdefault(f"{__name__}.{name}", value)  # st.sot -> spiraltorch.sot


_register_native_modules()
OpenTopos = OpenCartesianTopos  # noqa: F821 - the original's alias (native class)
ZSpaceProjector = nn.ZSpaceProjector
# The seed's top-level names for the attentionless layers and the desire adapter.
WaveRnn, WaveGate, ZSpaceMixer, FeatureReorder2d = nn.WaveRnn, nn.WaveGate, nn.ZSpaceMixer, nn.FeatureReorder2d
MellinBasis, ZSpaceVae, ZSpaceTextVae = nn.MellinBasis, nn.ZSpaceVae, nn.ZSpaceTextVae

__version__ = "0.1.0"

# ``from spiraltorch import *`` gives every public name above, the lazy ones included (star-import
# loads them), except the dtype aliases that would shadow Python builtins (bool, int, float).
__all__ = sorted(
    n for n in set(globals()) | _LAZY_MODULES | set(_LAZY_NAMES)
    if not n.startswith("_") and n not in {"annotations", "bool", "int", "float"}
)
