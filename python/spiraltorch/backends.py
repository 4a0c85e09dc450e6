"""Library switches of the compute backends, spelled like ``torch.backends``.

``st.backends.cudnn`` controls how CUDA convolutions run: ``enabled`` (cuDNN when the build has
it, otherwise im2col + cuBLAS), ``benchmark`` (time every cuDNN algorithm once per shape and keep
the fastest, instead of cuDNN's heuristic ranking) and ``allow_tf32`` (TF32 tensor cores for
float32 convolutions; on by default as in PyTorch). ``version()`` is the cuDNN version the library
runs with, or ``None`` when it has none.

``st.backends.cuda`` holds the attention switches: ``enable_cudnn_sdp(bool)`` /
``cudnn_sdp_enabled()`` choose whether ``scaled_dot_product_attention`` on CUDA may take cuDNN's fused
attention (its graph API; float16/bfloat16, tried first; default on), and ``enable_flash_sdp(bool)`` /
``flash_sdp_enabled()`` whether it may take SpiralTorch's own flash kernels (float16/bfloat16, head dims
32/64/128; default on) instead of GEMMs around a materialised (L, S) softmax; and ``cuda.matmul.allow_tf32``, the TF32 switch of float32 CUDA
matmuls (the same switch as ``st.cuda.set_allow_tf32``; off by default, as in PyTorch).

``st.backends.mps`` answers like PyTorch's on a machine without Apple's Metal backend
(``is_available()`` and ``is_built()`` are False): SpiralTorch has no MPS backend.

Every switch exists in every build; where the backend is absent it keeps its value and
changes nothing, so ``torch.backends.cuda.matmul.allow_tf32 = True`` runs on a CPU-only machine.
"""
from __future__ import annotations

from typing import Optional

from . import _core

__all__ = ["cuda", "cudnn", "mps"]


def _native_switch(getter: str, setter: str, doc: str | None = None) -> property:
    """A process-wide bool switch read and written through the native functions ``_core.<getter>``
    and ``_core.<setter>`` (looked up at each access)."""
    return property(lambda self: getattr(_core, getter)(),
                    lambda self, value: getattr(_core, setter)(bool(value)), doc=doc)


def _held_switch(attr: str, doc: str | None = None) -> property:
    """A bool switch that keeps the value set in ``attr`` and changes nothing else."""
    return property(lambda self: getattr(self, attr), lambda self, value: setattr(self, attr, bool(value)), doc=doc)


class _CudnnSwitches:
    """Process-wide cuDNN settings; assignments take effect for the next convolution."""

    enabled = _native_switch("_cudnn_enabled", "_cudnn_set_enabled")
    benchmark = _native_switch("_cudnn_benchmark", "_cudnn_set_benchmark")
    deterministic = _held_switch(
        "_deterministic",
        """Whether convolutions must pick deterministic algorithms (PyTorch's switch). SpiralTorch's
        CUDA convolutions already use only deterministic cuDNN algorithms, so this holds the value
        set and changes nothing.""")
    _deterministic = False
    allow_tf32 = _native_switch("_cudnn_allow_tf32", "_cudnn_set_allow_tf32")

    def version(self) -> Optional[str]:
        """The cuDNN version string ("9.10.2"), or None when this build has no cuDNN."""
        return _core._cudnn_version() or None

    def is_available(self) -> bool:
        """True when the build has cuDNN and a CUDA device is present."""
        return bool(_core._cudnn_version()) and _core._cuda_is_available()

    def __repr__(self) -> str:
        return (f"cudnn(version={self.version()!r}, enabled={self.enabled}, benchmark={self.benchmark}, "
                f"allow_tf32={self.allow_tf32})")


cudnn = _CudnnSwitches()


class _CudaMatmulSwitches:
    """``torch.backends.cuda.matmul``: ``allow_tf32`` lets float32 CUDA matmuls use TF32 tensor
    cores (the switch behind ``st.cuda.set_allow_tf32``). The reduced-precision-reduction switches
    are accepted and keep their value; SpiralTorch's half-precision GEMMs always accumulate in
    float32, which is what their default (and safest) setting asks for."""

    def __init__(self) -> None:
        self._fp16_reduction = True
        self._bf16_reduction = True

    allow_tf32 = _native_switch("_cuda_allow_tf32", "_cuda_set_allow_tf32")
    allow_fp16_reduced_precision_reduction = _held_switch("_fp16_reduction")
    allow_bf16_reduced_precision_reduction = _held_switch("_bf16_reduction")

    def __repr__(self) -> str:
        return f"matmul(allow_tf32={self.allow_tf32})"


class _CudaSwitches:
    """Process-wide CUDA attention and matmul settings, spelled like ``torch.backends.cuda``."""

    matmul = _CudaMatmulSwitches()

    def is_built(self) -> bool:
        """True when this SpiralTorch was built with its CUDA backend."""
        return _core._cuda_is_built()

    def enable_flash_sdp(self, enabled: bool) -> None:
        """Allow (True) or forbid (False) the fused flash attention kernels for the next calls."""
        _core._cuda_set_flash_sdp_enabled(bool(enabled))

    def flash_sdp_enabled(self) -> bool:
        """Whether scaled-dot-product attention may take the fused flash kernels on CUDA."""
        return _core._cuda_flash_sdp_enabled()

    def enable_cudnn_sdp(self, enabled: bool) -> None:
        """Allow (True) or forbid (False) cuDNN's fused attention (tried before the flash kernels)."""
        _core._cuda_set_cudnn_sdp_enabled(bool(enabled))

    def cudnn_sdp_enabled(self) -> bool:
        """Whether scaled-dot-product attention may take cuDNN's fused attention on CUDA (float16 and
        bfloat16, where the build has cuDNN's graph API and cuDNN takes the operands)."""
        return _core._cuda_cudnn_sdp_enabled()

    def __repr__(self) -> str:
        return f"cuda(flash_sdp_enabled={self.flash_sdp_enabled()}, cudnn_sdp_enabled={self.cudnn_sdp_enabled()})"


cuda = _CudaSwitches()


class _MpsSwitches:
    """``torch.backends.mps`` on a library without an MPS backend: nothing is available."""

    def is_available(self) -> bool:
        return False

    def is_built(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "mps(available=False)"


mps = _MpsSwitches()
