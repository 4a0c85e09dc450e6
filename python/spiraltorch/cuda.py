"""``spiraltorch.cuda``: devices, streams, events and the caching allocator.

Every function works in every build: without the CUDA backend (or without a GPU)
``is_available()`` is False, ``unavailable_reason()`` says why, ``device_count()`` is 0,
and calls that need a device raise ``DeviceUnavailableError``."""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Dict, Iterator, Optional, Union

from . import _core

__all__ = [
    "is_available", "is_built", "unavailable_reason", "device_count", "current_device", "set_device",
    "synchronize", "get_device_name", "get_device_properties", "get_device_capability", "mem_get_info",
    "memory_allocated", "max_memory_allocated", "memory_reserved", "reset_peak_memory_stats", "empty_cache",
    "Stream", "Event", "current_stream", "default_stream", "stream", "set_allow_tf32", "allow_tf32",
    "CUDAGraph", "graph", "make_graphed_step", "is_current_stream_capturing", "manual_seed", "manual_seed_all",
    "seed", "seed_all",
    "initial_seed", "is_bf16_supported", "amp", "tunable",
]


def _index(device: Union[None, int, str]) -> int:
    if device is None:
        return -1
    if isinstance(device, int):
        return device
    s = str(device)
    if s == "cuda":
        return -1
    if s.startswith("cuda:"):
        return int(s[5:])
    raise _core.SpiralValueError(f"cuda: expected a CUDA device, got {device!r}")


def is_built() -> bool:
    """True when this build has the CUDA backend compiled in (a GPU may still be missing)."""
    return _core._cuda_is_built()


def is_available() -> bool:
    """True when the CUDA backend is built and a usable GPU is present."""
    return _core._cuda_is_available()


def unavailable_reason() -> str:
    """Why CUDA is not available (empty when it is): not built, no driver, no device."""
    return _core._cuda_unavailable_reason()


def device_count() -> int:
    """Number of visible CUDA devices (0 without CUDA)."""
    return _core._cuda_device_count()


def current_device() -> int:
    """Index of this thread's current CUDA device."""
    return _core._cuda_current_device()


def set_device(device: Union[int, str]) -> None:
    """Makes ``device`` (an index, ``"cuda"`` or ``"cuda:N"``) this thread's current CUDA device."""
    _core._cuda_set_device(max(_index(device), 0))


def synchronize(device: Union[None, int, str] = None) -> None:
    """Waits until all work queued on ``device`` (default: the current one) has finished."""
    _core._cuda_synchronize(_index(device))


def get_device_properties(device: Union[None, int, str] = None) -> Dict[str, Any]:
    """The device's properties as a dict: name, total_memory, major, minor, multi_processor_count,
    l2_cache_size, driver_version, runtime_version."""
    i = _index(device)
    return _core._cuda_properties(current_device() if i < 0 else i)


def get_device_name(device: Union[None, int, str] = None) -> str:
    """The device's name, e.g. ``'NVIDIA H100 80GB HBM3'``."""
    return get_device_properties(device)["name"]


def get_device_capability(device: Union[None, int, str] = None):
    """The device's compute capability as ``(major, minor)``, e.g. ``(9, 0)`` on Hopper."""
    p = get_device_properties(device)
    return (p["major"], p["minor"])


def mem_get_info(device: Union[None, int, str] = None):
    """``(free, total)`` bytes of device memory, as the driver reports them."""
    i = _index(device)
    return _core._cuda_mem_get_info(current_device() if i < 0 else i)


def memory_allocated(device: Union[None, int, str] = None) -> int:
    """Bytes held by live SpiralTorch tensors on the device (0 without CUDA)."""
    return _core._cuda_memory_allocated(_index(device)) if is_available() else 0


def max_memory_allocated(device: Union[None, int, str] = None) -> int:
    """Peak of ``memory_allocated`` since the start or the last ``reset_peak_memory_stats`` (0 without CUDA)."""
    return _core._cuda_max_memory_allocated(_index(device)) if is_available() else 0


def memory_reserved(device: Union[None, int, str] = None) -> int:
    """Bytes the caching allocator holds from the driver: live blocks plus cached free ones (0 without CUDA)."""
    return _core._cuda_memory_reserved(_index(device)) if is_available() else 0


def reset_peak_memory_stats(device: Union[None, int, str] = None) -> None:
    """Restarts ``max_memory_allocated`` from the current allocation (no-op without CUDA)."""
    if is_available():
        _core._cuda_reset_peak_memory_stats(_index(device))


def empty_cache() -> None:
    """Returns cached, unused device blocks to the driver, except a captured graph's private pool
    (the addresses its replays use, kept until the graph is reset or dropped, as PyTorch keeps them)."""
    _core._cuda_empty_cache()


def allow_tf32() -> bool:
    """Whether float32 matmuls may run on TF32 tensor cores (see ``set_allow_tf32``)."""
    return _core._cuda_allow_tf32()


def set_allow_tf32(allow: bool) -> None:
    """float32 matmul on TF32 tensor cores (like torch.backends.cuda.matmul.allow_tf32)."""
    _core._cuda_set_allow_tf32(bool(allow))


class Stream:
    """A CUDA stream. ``Stream()`` creates a new one; work is queued on the current stream
    (``with spiraltorch.cuda.stream(s):``)."""

    def __init__(self, device: Union[None, int, str] = None, priority: int = 0, _handle: Optional[int] = None):
        i = _index(device)
        self.device = current_device() if i < 0 else i
        self._owned = _handle is None
        self.cuda_stream = _core._cuda_stream_create(self.device, priority) if _handle is None else _handle

    def synchronize(self) -> None:
        """Waits until all work queued on this stream has finished."""
        _core._cuda_stream_synchronize(self.cuda_stream)

    def query(self) -> bool:
        """True when all work queued on this stream has finished."""
        return _core._cuda_stream_query(self.cuda_stream)

    def wait_event(self, event: "Event") -> None:
        """Makes work queued later on this stream wait for ``event`` (no host wait)."""
        _core._cuda_stream_wait_event(self.cuda_stream, event._handle)

    def wait_stream(self, other: "Stream") -> None:
        """Makes work queued later on this stream wait for the work queued so far on ``other``."""
        self.wait_event(other.record_event())

    def record_event(self, event: Optional["Event"] = None) -> "Event":
        """Records ``event`` (a new one by default) on this stream and returns it."""
        event = event or Event()
        event.record(self)
        return event

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and other.cuda_stream == self.cuda_stream

    def __hash__(self) -> int:
        return hash(self.cuda_stream)

    def __repr__(self) -> str:
        return f"<spiraltorch.cuda.Stream device=cuda:{self.device} cuda_stream={self.cuda_stream:#x}>"

    def __del__(self) -> None:
        if getattr(self, "_owned", False) and self.cuda_stream:
            try:
                _core._cuda_stream_destroy(self.cuda_stream)
            except Exception:
                pass


class Event:
    """A CUDA event: a marker in a stream's work, for waiting on it and timing between two
    (``enable_timing=True``, then ``start.elapsed_time(end)``) like ``torch.cuda.Event``."""

    def __init__(self, enable_timing: bool = False, device: Union[None, int, str] = None):
        i = _index(device)
        self._handle = _core._cuda_event_create(current_device() if i < 0 else i, bool(enable_timing))

    def record(self, stream: Optional[Stream] = None) -> None:
        """Marks this point of ``stream``'s work (default: the current stream)."""
        _core._cuda_event_record(self._handle, (stream or current_stream()).cuda_stream)

    def synchronize(self) -> None:
        """Waits until the work recorded before this event has finished."""
        _core._cuda_event_synchronize(self._handle)

    def query(self) -> bool:
        """True when the work recorded before this event has finished."""
        return _core._cuda_event_query(self._handle)

    def wait(self, stream: Optional[Stream] = None) -> None:
        """Makes work queued later on ``stream`` (default: the current one) wait for this event."""
        (stream or current_stream()).wait_event(self)

    def elapsed_time(self, end: "Event") -> float:
        """Milliseconds between this event and ``end``."""
        return _core._cuda_event_elapsed_ms(self._handle, end._handle)

    def __del__(self) -> None:
        if getattr(self, "_handle", 0):
            try:
                _core._cuda_event_destroy(self._handle)
            except Exception:
                pass


def current_stream(device: Union[None, int, str] = None) -> Stream:
    """This thread's current stream on ``device`` (default: the current device)."""
    i = _index(device)
    i = current_device() if i < 0 else i
    return Stream(i, _handle=_core._cuda_current_stream(i))


def default_stream(device: Union[None, int, str] = None) -> Stream:
    """The device's default (legacy) stream."""
    i = _index(device)
    return Stream(current_device() if i < 0 else i, _handle=0)


@contextlib.contextmanager
def stream(s: Optional[Stream]) -> Iterator[Optional[Stream]]:
    """Makes ``s`` the current stream of its device inside the block."""
    if s is None:
        yield s
        return
    prev = _core._cuda_current_stream(s.device)
    _core._cuda_set_current_stream(s.device, s.cuda_stream)
    try:
        yield s
    finally:
        _core._cuda_set_current_stream(s.device, prev)


def is_current_stream_capturing(device: Union[None, int, str] = None) -> bool:
    """True while this thread's current stream on ``device`` is being captured into a CUDA graph
    (False without CUDA)."""
    return bool(_core._cuda_is_current_stream_capturing(_index(device)))


class CUDAGraph:
    """A captured sequence of CUDA work replayed with one launch (like ``torch.cuda.CUDAGraph``).

    Capture with ``with spiraltorch.cuda.graph(g): ...``; memory allocated during the capture
    belongs to the graph (its addresses stay valid for every replay) and returns to the caching
    allocator on ``reset()``. Tensors made before the capture and used in it are static inputs:
    keep them alive and copy new data into them (``x.copy_(batch)``) before ``replay()``.
    Inside a capture nothing may synchronise with the host: no ``.item()``, no host-side checks
    (index bounds checks of cross-entropy, gather and embedding are skipped there, optimizers skip
    their non-finite check on the host: the update kernels read it on the device instead);
    Adam/AdamW are captured only when built with ``capturable=True`` (their step count then lives
    on the device). Run a few warm-up steps before capturing so optimizer state exists."""

    def __init__(self) -> None:
        self._g = _core._CUDAGraph()

    def capture_begin(self, device: Union[None, int, str] = None) -> None:
        """Starts recording this thread's work on ``device`` into the graph (``graph()`` does this for a block)."""
        self._g.capture_begin(_index(device))

    def capture_end(self) -> None:
        """Ends the recording and instantiates the graph; raises if something captured was not capturable."""
        self._g.capture_end()

    def replay(self) -> None:
        """Queues the captured work on the current stream's timeline."""
        self._g.replay()

    def reset(self) -> None:
        """Drops the captured graph and frees its private memory pool."""
        self._g.reset()

    def is_captured(self) -> bool:
        """True once a capture has ended successfully (until ``reset()``)."""
        return bool(self._g.is_captured())

    def num_nodes(self) -> int:
        """Number of nodes (kernels, copies, memsets) in the captured graph."""
        return int(self._g.num_nodes())

    def __repr__(self) -> str:
        state = f"{self.num_nodes()} nodes" if self.is_captured() else "empty"
        return f"CUDAGraph({state})"


@contextlib.contextmanager
def graph(cuda_graph: CUDAGraph, device: Union[None, int, str] = None) -> Iterator[CUDAGraph]:
    """Captures the CUDA work queued inside the block into ``cuda_graph`` (``torch.cuda.graph``).
    The work is recorded, not run: replay it with ``cuda_graph.replay()``. When the block raises,
    the capture is abandoned and the exception propagates."""
    cuda_graph.capture_begin(device)
    try:
        yield cuda_graph
    except BaseException:
        cuda_graph.reset()
        raise
    cuda_graph.capture_end()


class _GraphedStep:
    """The callable ``make_graphed_step`` returns: each call is one step of ``step_fn``."""

    def __init__(self, step_fn: Callable[[], Any], warmup: int, device: Union[None, int, str]) -> None:
        self._fn = step_fn
        self._warmup = warmup
        self._device = device
        self._calls = 0
        self._out: Any = None
        self.graph = CUDAGraph()

    def __call__(self) -> Any:
        if self._calls < self._warmup:
            self._calls += 1
            return self._fn()
        if not self.graph.is_captured():
            with graph(self.graph, self._device):
                self._out = self._fn()
        # A capture records without running: the capturing call replays too, so every call is one step.
        self.graph.replay()
        self._calls += 1
        return self._out

    def is_captured(self) -> bool:
        return self.graph.is_captured()

    def __repr__(self) -> str:
        return f"make_graphed_step({getattr(self._fn, '__name__', 'step')}, calls={self._calls}, graph={self.graph!r})"


def make_graphed_step(step_fn: Callable[[], Any], *, warmup: int = 3,
                      device: Union[None, int, str] = None) -> Callable[[], Any]:
    """Turns a whole training step (forward, backward, optimizer update) into one CUDA graph launch.

    ``step_fn`` takes no arguments and reads its batch from static tensors that the caller refills
    (``x.copy_(batch)``) before each call. Each call of the returned function is one training step:
    the first ``warmup`` calls run ``step_fn`` eagerly (they create gradients and optimizer state,
    which must exist before the capture), the next captures it into a ``CUDAGraph`` and replays
    it, later calls only replay. The return value is ``step_fn``'s (for replays: the tensors
    returned by the captured call, e.g. the loss, rewritten by every replay). The step must be
    capturable: no host reads (``.item()``) inside it, SGD or ``Adam``/``AdamW`` with
    ``capturable=True``, and the learning rate fixed (a scheduler's change after capture is not
    seen by the graph). The graph is ``.graph`` on the returned object. Without a usable CUDA
    device it raises ``DeviceUnavailableError`` at once."""
    if not isinstance(warmup, int) or warmup < 1:
        raise _core.SpiralValueError(
            f"make_graphed_step: warmup must be an int >= 1 (optimizer state must exist before the capture), "
            f"got {warmup!r}")
    if not callable(step_fn):
        raise TypeError(f"make_graphed_step: step_fn must be callable, got {type(step_fn).__name__}")
    # Refused here rather than at the capture: the warm-up calls would otherwise train a few
    # steps eagerly before the first call that cannot run.
    if not is_available():
        raise _core.DeviceUnavailableError(f"make_graphed_step: CUDA is not available: {unavailable_reason()}")
    return _GraphedStep(step_fn, warmup, device)


# ---- seeds ----
# SpiralTorch has one Philox generator for every device: CUDA tensors draw from it too (the
# numbers are made on the host), so seeding "the CUDA generator" means seeding that one when a
# CUDA device is there. Without one, PyTorch silently ignores these calls, and so do we: a CPU
# program that calls torch.cuda.manual_seed(s) after torch.manual_seed(s) keeps its stream.


def manual_seed(seed: int) -> None:
    """Seeds the generator CUDA tensors draw from (the global one) when CUDA is available;
    silently ignored otherwise, as in PyTorch."""
    if is_available():
        _core.manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    """``manual_seed`` for every GPU: there is one generator, so the same call."""
    manual_seed(seed)


def seed() -> None:
    """Seeds the CUDA generator with a non-deterministic number (ignored without CUDA)."""
    if is_available():
        import random

        _core.manual_seed(random.SystemRandom().getrandbits(63))


def seed_all() -> None:
    """``seed()`` for every GPU: there is one generator, so the same call."""
    seed()


def initial_seed() -> int:
    """The seed of the generator CUDA tensors draw from (the global one)."""
    return _core.initial_seed()


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """True when a CUDA device is available and runs bfloat16 (compute capability 8.0 or higher,
    or any device when emulation counts, as PyTorch's answer)."""
    if not is_available():
        return False
    return including_emulation or get_device_capability()[0] >= 8


class _AmpNamespace:
    """``torch.cuda.amp`` (PyTorch's older spelling): ``autocast(...)`` is
    ``st.autocast("cuda", ...)`` and ``GradScaler(...)`` is ``st.amp.GradScaler("cuda", ...)``."""

    @staticmethod
    def autocast(enabled: bool = True, dtype: Any = None, cache_enabled: Optional[bool] = None) -> Any:
        from .amp import autocast as _autocast

        return _autocast("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    @staticmethod
    def GradScaler(init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                   growth_interval: int = 2000, enabled: bool = True) -> Any:
        from .amp import GradScaler as _GradScaler

        return _GradScaler("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


amp = _AmpNamespace()


class _TunableNamespace:
    """``torch.cuda.tunable``'s switch: ``enable(val=True)`` turns it on (or off), ``is_enabled()``
    says whether it is on. With it on, each cuBLASLt GEMM shape (``nn.Linear`` and its fused
    epilogues, forward and backward) times up to eight of cuBLASLt's candidate algorithms once, on
    the call's own operands and outside graph capture (median of five cold-cache runs), and keeps
    the fastest where it beats the heuristic's first choice by 3%. Off (the default),
    the heuristic's first algorithm runs. Tuned choices may differ between processes, and so may
    results' last bits."""

    @staticmethod
    def enable(val: bool = True) -> None:
        """Turns GEMM tuning on (or off with ``val=False``); each shape is timed at its next eager call."""
        _core._cuda_set_gemm_tuning(bool(val))

    @staticmethod
    def is_enabled() -> bool:
        """Whether GEMM tuning is on."""
        return bool(_core._cuda_gemm_tuning())


tunable = _TunableNamespace()
