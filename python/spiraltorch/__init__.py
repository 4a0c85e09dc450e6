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
from ._core import (  # noqa: F401
    CheckpointError,
    DeviceUnavailableError,
    DtypeError,
    OutOfMemoryError,
    ShapeError,
    SpiralError,
    SpiralIndexError,
    SpiralValueError,
    Tensor,
    dtype,
)
from ._tensor_extras import Size, install as _install, return_types as _return_types
from .autograd import AutogradTensor, enable_grad, no_grad, set_grad_enabled
from .runtime import (  # noqa: F401
    _require_backend,
    describe_device,
    describe_runtime_devices,
    evaluate_runtime_device_route,
    init_backend,
    observe_runtime_device_probe,
)
from . import autograd  # noqa: F401
from . import optim  # noqa: F401
from . import data, datasets, ecosystem, model_zoo, nn  # noqa: F401
from . import compat, dataset, distributed  # noqa: F401
from .compat import capture, share  # noqa: F401
from . import amp, backends, cpu, cuda, wgpu  # noqa: F401
from .amp import autocast, get_autocast_dtype, is_autocast_enabled  # noqa: F401
from . import accelerator, utils, vision  # noqa: F401
from .accelerator import device  # noqa: F401
from . import planner  # noqa: F401
from .planner import bottomk, hip_probe, midk, plan, plan_topk, probe_gpu_path, rank_k  # noqa: F401
from .session import SpiralSession  # noqa: F401
from . import ops, plugin, rec, rl, spiral_rl, telemetry  # noqa: F401
from . import spiralk  # noqa: F401
from . import linalg, special  # noqa: F401
from . import _legacy_rl

_legacy_rl.install()  # `import rl` -> spiraltorch.rl, unless another rl module exists
from ._core import geometry  # noqa: F401
from .zspace import ComplexTensor, GradientSummary, Hypergrad, LanguageWaveEncoder, Realgrad, ZSpaceTrainer  # noqa: F401
from .zspace import (  # noqa: F401
    ZMetrics,
    ZSpaceInference,
    ZSpaceInferencePipeline,
    ZSpacePartialBundle,
    blend_zspace_partials,
    compile_inference,
    decode_zspace,
    encode_zspace,
    hypergrad,
    infer_from_partial,
    realgrad,
    z,
    z_metrics,
)
from .telemetry import training_telemetry_projection  # noqa: F401
from .amegagrad import AmegagradSession, HypergradSession, amegagrad_session, hypergrad_session  # noqa: F401
from . import runtime, zspace  # noqa: F401
from . import trainer_trace, zspace_atlas, zspace_trace  # noqa: F401
from .trainer_trace import summarize_trainer_trace_events  # noqa: F401
from ._core.canvas import CanvasProjector  # noqa: F401
from .serialization import load, save  # noqa: F401

_install()
from ._torch_compat import install as _install_torch_compat  # noqa: E402

if _os.environ.get("SPIRALTORCH_STUBGEN") != "1":  # scripts/gen_stubs.py describes the native class alone
    _install_torch_compat(globals())
    from ._torch_compat_ops import install as _install_torch_compat_ops  # noqa: E402

    _install_torch_compat_ops(globals())
from ._seed_tensor import install as _install_seed_tensor  # noqa: E402

_install_seed_tensor()

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

_NATIVE_FUNCTIONS = [
    name
    for name in dir(_core)
    if not name.startswith("_") and name not in globals()
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
from .desire import build_desire_adapter_from_downstream_hook, desire_step_from_downstream_hook  # noqa: E402

__version__ = "0.1.0"

# ``from spiraltorch import *`` gives every public name above except the dtype aliases that would
# shadow Python builtins (bool, int, float).
__all__ = sorted(n for n in globals() if not n.startswith("_") and n not in {"annotations", "bool", "int", "float"})
