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
    "CUDAGraph", "graph", "is_current_stream_capturing", "manual_seed", "manual_seed_all", "seed", "seed_all",
    "initial_seed", "is_bf16_supported", "amp",
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
    return _core._cuda_is_built()


def is_available() -> bool:
    return _core._cuda_is_available()


def unavailable_reason() -> str:
    return _core._cuda_unavailable_reason()


def device_count() -> int:
    return _core._cuda_device_count()


def current_device() -> int:
    return _core._cuda_current_device()


def set_device(device: Union[int, str]) -> None:
    _core._cuda_set_device(max(_index(device), 0))


def synchronize(device: Union[None, int, str] = None) -> None:
    _core._cuda_synchronize(_index(device))


def get_device_properties(device: Union[None, int, str] = None) -> Dict[str, Any]:
    i = _index(device)
    return _core._cuda_properties(current_device() if i < 0 else i)


def get_device_name(device: Union[None, int, str] = None) -> str:
    return get_device_properties(device)["name"]


def get_device_capability(device: Union[None, int, str] = None):
    p = get_device_properties(device)
    return (p["major"], p["minor"])


def mem_get_info(device: Union[None, int, str] = None):
    i = _index(device)
    return _core._cuda_mem_get_info(current_device() if i < 0 else i)


def memory_allocated(device: Union[None, int, str] = None) -> int:
    return _core._cuda_memory_allocated(_index(device)) if is_available() else 0


def max_memory_allocated(device: Union[None, int, str] = None) -> int:
    return _core._cuda_max_memory_allocated(_index(device)) if is_available() else 0


def memory_reserved(device: Union[None, int, str] = None) -> int:
    return _core._cuda_memory_reserved(_index(device)) if is_available() else 0


def reset_peak_memory_stats(device: Union[None, int, str] = None) -> None:
    if is_available():
        _core._cuda_reset_peak_memory_stats(_index(device))


def empty_cache() -> None:
    """Returns cached, unused device blocks to the driver."""
    _core._cuda_empty_cache()


def allow_tf32() -> bool:
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
        _core._cuda_stream_synchronize(self.cuda_stream)

    def query(self) -> bool:
        return _core._cuda_stream_query(self.cuda_stream)

    def wait_event(self, event: "Event") -> None:
        _core._cuda_stream_wait_event(self.cuda_stream, event._handle)

    def wait_stream(self, other: "Stream") -> None:
        self.wait_event(other.record_event())

    def record_event(self, event: Optional["Event"] = None) -> "Event":
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
    def __init__(self, enable_timing: bool = False, device: Union[None, int, str] = None):
        i = _index(device)
        self._handle = _core._cuda_event_create(current_device() if i < 0 else i, bool(enable_timing))

    def record(self, stream: Optional[Stream] = None) -> None:
        _core._cuda_event_record(self._handle, (stream or current_stream()).cuda_stream)

    def synchronize(self) -> None:
        _core._cuda_event_synchronize(self._handle)

    def query(self) -> bool:
        return _core._cuda_event_query(self._handle)

    def wait(self, stream: Optional[Stream] = None) -> None:
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
    i = _index(device)
    i = current_device() if i < 0 else i
    return Stream(i, _handle=_core._cuda_current_stream(i))


def default_stream(device: Union[None, int, str] = None) -> Stream:
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
    their non-finite check);
    Adam/AdamW refuse to be captured since their bias correction depends on the step count.
    Run a few warm-up steps before capturing so optimizer state exists."""

    def __init__(self) -> None:
        self._g = _core._CUDAGraph()

    def capture_begin(self, device: Union[None, int, str] = None) -> None:
        self._g.capture_begin(_index(device))

    def capture_end(self) -> None:
        self._g.capture_end()

    def replay(self) -> None:
        """Queues the captured work on the current stream's timeline."""
        self._g.replay()

    def reset(self) -> None:
        """Drops the captured graph and frees its private memory pool."""
        self._g.reset()

    def is_captured(self) -> bool:
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
