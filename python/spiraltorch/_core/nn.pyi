"""Native neural-network layers."""

from collections.abc import (
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence
)
import os
import types
from typing import Any, Self, TypeAlias, overload

import numpy.typing

import spiraltorch._core
import spiraltorch.accelerator
import spiraltorch.nn.utils.rnn


class RemovableHandle:
    """Returned by register_*_hook; remove() unregisters the hook."""

    @property
    def id(self) -> int:
        """The hook's id on its module (what remove_hook takes)."""

    def remove(self) -> None:
        """Unregisters the hook; a second call does nothing."""

    def __enter__(self) -> Self:
        """Returns the handle itself."""

    def __exit__(self, exc_type: type[BaseException] | None, exc_value: BaseException | None, traceback: types.TracebackType | None) -> None:
        """Unregisters the hook (remove())."""

class Module:
    """Base of every layer; Python subclasses override forward()."""

    def __init__(self, name: str = '') -> None:
        """
        A module with no parameters; `name` prefixes its parameters' keys ('' takes its place in the parent). Subclass it in Python and override forward().
        """

    def __setattr__(self, name: str, value: Any) -> None:
        """
        Assigning a Module registers (or replaces) a child, a parameter (a leaf that requires grad) registers or replaces a parameter, a tensor assigned to a buffer's name replaces the buffer; anything else is a plain attribute. Registered entries are not stored in __dict__ (torch.nn.Module's rules).
        """

    def extra_repr(self) -> str:
        """
        The layer's own settings for ``repr`` (empty by default; override like PyTorch).
        """

    def __repr__(self) -> str:
        """
        PyTorch's nested module repr: ``Name(extra)`` for leaves, one indented ``(key): child`` line per child otherwise.
        """

    def cuda(self, device: int | str | None = None) -> Module:
        """
        Moves every parameter and buffer to a CUDA device (``"cuda"``, or ``cuda:<device>`` for an int) in place, like ``torch.nn.Module.cuda``; returns the module.
        """

    def cpu(self) -> Module:
        """
        Moves every parameter and buffer to the CPU in place; returns the module.
        """

    def get_buffer(self, target: str) -> spiraltorch._core.Tensor:
        """
        The buffer at ``target`` (a dotted path: ``"block.norm.running_mean"``), like torch.nn.Module.get_buffer; raises AttributeError naming the path when there is none.
        """

    def __getattr__(self, name: str) -> object:
        """The module's own child, parameter or buffer called name."""

    def __delattr__(self, name: str) -> None:
        """Removes a child, parameter, buffer or plain attribute."""

    def add_module(self, name: str, module: Module | None) -> None:
        """
        Registers module (or None) as the child `name`; TypeError for anything else.
        """

    def register_module(self, name: str, module: Module | None) -> None:
        """Alias of add_module."""

    def get_submodule(self, target: str) -> Module:
        """
        The submodule at a dotted path of attribute names ('encoder.layers.0'); AttributeError naming the missing part.
        """

    def get_parameter(self, target: str) -> spiraltorch._core.Tensor:
        """The parameter at a dotted path ('encoder.layers.0.linear1.weight')."""

    def forward(self, input: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor:
        """
        The layer's computation on one tensor; Python subclasses override it (call the module, not forward, so hooks run).
        """

    def __call__(self, input: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor:
        """forward(input) with the registered hooks around it."""

    @property
    def name(self) -> str:
        """The explicit name ('' when the module takes its key from its parent)."""

    @name.setter
    def name(self, arg: str, /) -> None: ...

    def _register_module(self, arg0: str, arg1: Module, /) -> None: ...

    def _remove_child(self, arg: str, /) -> None: ...

    def register_parameter(self, name: str, param: spiraltorch._core.Tensor | None) -> None:
        """
        Registers (or replaces) a parameter; None registers the name with no value (the attribute reads None).
        """

    def register_buffer(self, name: str, tensor: spiraltorch._core.Tensor | None, persistent: bool = True) -> None:
        """
        Registers a buffer: moved with the module and listed by named_buffers(); in state_dict() unless persistent=False; the attribute `name` reads it.
        """

    def _is_persistent_buffer(self, name: str) -> bool: ...

    def named_parameters(self, prefix: str = '', recurse: bool = True, remove_duplicate: bool = True) -> Iterator[tuple[str, spiraltorch._core.Tensor]]:
        """
        An iterator of (key, parameter) pairs, keys '<module path>::<param>' (prefixed by `prefix`); a shared parameter once unless remove_duplicate=False.
        """

    def parameters(self, recurse: bool = True) -> Iterator[spiraltorch._core.Tensor]:
        """
        An iterator over every parameter below this module (or its own, recurse=False), each once.
        """

    def named_buffers(self, prefix: str = '', recurse: bool = True) -> Iterator[tuple[str, spiraltorch._core.Tensor]]:
        """
        An iterator of (key, buffer) pairs, keys '<module path>::<buffer>' (prefixed by `prefix`).
        """

    def buffers(self, recurse: bool = True) -> Iterator[spiraltorch._core.Tensor]:
        """An iterator over the buffers (running statistics and the like)."""

    def children(self) -> Iterator[Module]:
        """An iterator over the direct children."""

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """An iterator of (key, child) pairs."""

    def named_modules(self, memo: set | None = None, prefix: str = '', remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """
        An iterator of (path, module) for this module and every descendant, depth-first, each module once (memo and remove_duplicate are accepted for PyTorch compatibility and ignored).
        """

    def modules(self) -> Iterator[Module]:
        """
        An iterator over this module and every descendant, depth-first, each once.
        """

    def apply(self, fn: Callable) -> Self:
        """Calls fn(module) on every submodule, then on this one; returns self."""

    def state_dict(self, prefix: str = '', keep_vars: bool = False) -> dict:
        """
        Parameters and buffers keyed '<module>::<param>' (prefixed by `prefix`); detached unless keep_vars.
        """

    def load_state_dict(self, state_dict: Mapping[str, spiraltorch._core.Tensor | numpy.typing.ArrayLike] | Iterable[tuple[str, spiraltorch._core.Tensor | numpy.typing.ArrayLike]], strict: bool = True) -> tuple[list[str], list[str]]:
        """
        Copies matching entries in; checks everything first, so a failed load changes nothing. Returns IncompatibleKeys(missing_keys, unexpected_keys) (both empty under strict=True); CheckpointError or ShapeError name the offending key.
        """

    def register_forward_pre_hook(self, hook: Callable) -> RemovableHandle:
        """
        hook(module, args) -> None or replacement args, run before forward; args is the positional tuple as given (non-tensor arguments included; a tuple of the tensors when a native container calls the module). A result that is not a tuple is the single argument.
        """

    def register_forward_hook(self, hook: Callable) -> RemovableHandle:
        """
        hook(module, args, output) -> None or a replacement output, run after forward; output is what forward returned.
        """

    def register_full_backward_hook(self, hook: Callable) -> RemovableHandle:
        """
        hook(module, grad_input, grad_output) -> None or a replacement grad_input, run once per backward pass with one entry per positional argument (None for non-tensor arguments and where no gradient flows, e.g. an input that needs none) and one per element of the output (a single tensor: one), as PyTorch's; a replacement has as many entries (ValueError otherwise).
        """

    def remove_hook(self, id: int) -> None:
        """
        Unregisters the hook with this id (RemovableHandle.id); an unknown id does nothing.
        """

    def requires_grad_(self, requires_grad: bool = True) -> Self:
        """Sets requires_grad on every floating parameter; returns self."""

    def train(self, mode: bool = True) -> Self:
        """
        Sets training mode on this module and every descendant (dropout active, batch norm updates its running statistics); returns self.
        """

    def eval(self) -> Self:
        """
        train(False): inference behaviour for dropout and batch norm; returns self.
        """

    @property
    def training(self) -> bool:
        """True in training mode (the default), False after eval()."""

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drops every parameter's .grad (set_to_none) or zeroes it in place."""

    def to(self, *args: str | spiraltorch._core.dtype | spiraltorch._core.Tensor, **kwargs: str | spiraltorch._core.dtype | spiraltorch._core.Tensor | bool) -> Self:
        """
        Moves (device) and/or converts (floating dtype) every parameter and buffer in place; returns self. Takes to(device), to(dtype), to(tensor), to(device, dtype) and the keywords device=, dtype=, non_blocking= (accepted and ignored); e.g. model.to('cpu', st.float64).
        """

    def float(self) -> Self:
        """
        Converts floating parameters and buffers to float32 in place; returns self.
        """

    def double(self) -> Self:
        """
        Converts floating parameters and buffers to float64 in place; returns self.
        """

    def half(self) -> Self:
        """
        Converts floating parameters and buffers to float16 in place; returns self.
        """

    def bfloat16(self) -> Self:
        """
        Converts floating parameters and buffers to bfloat16 in place; returns self.
        """

    def attach_hypergrad(self, *, curvature: float = -1.0, learning_rate: float = 0.05) -> None:
        """
        Gives every parameter below this module Riemannian SGD updates in the Poincare ball of this curvature.
        """

    def detach_hypergrad(self) -> None:
        """
        Drops the Riemannian updates attach_hypergrad gave; parameters get plain optimizer updates again.
        """

    @property
    def hypergrad(self) -> tuple[float, float] | None:
        """
        (curvature, learning_rate) of attach_hypergrad, or None when not attached.
        """

    def num_parameters(self) -> int:
        """The number of scalar parameters (each shared parameter counted once)."""

    @classmethod
    def __init_subclass__(cls, **kwargs: Any) -> None:
        """
        Gives a Python subclass that overrides forward a __call__ running its forward (with the hooks).
        """

    def state_dict_compatibility(self, external: Module | Mapping[str, spiraltorch._core.Tensor | numpy.typing.ArrayLike] | Iterable[tuple[str, spiraltorch._core.Tensor | numpy.typing.ArrayLike]], *, allow_missing: str | Sequence[str] | None = None, allow_extra: bool = True) -> dict:
        """
        Read-only report of how `external` (same keys) would load: one entry per module key, sorted.
        """

    def state_dict_compatibility_with_key_map(self, external: Module | Mapping[str, spiraltorch._core.Tensor | numpy.typing.ArrayLike] | Iterable[tuple[str, spiraltorch._core.Tensor | numpy.typing.ArrayLike]], key_map: Mapping[str, str | dict[str, str]] | Sequence[tuple[str, str] | tuple[str, str, str] | dict[str, str]], *, allow_missing: str | Sequence[str] | None = None, allow_extra: bool = True) -> dict:
        """
        Read-only report through a key map {source: target | {'target', 'transform'}} or a list of rules.
        """

    def load_state_dict_checked(self, external: Module | Mapping[str, spiraltorch._core.Tensor | numpy.typing.ArrayLike] | Iterable[tuple[str, spiraltorch._core.Tensor | numpy.typing.ArrayLike]], key_map: Mapping[str, str | dict[str, str]] | Sequence[tuple[str, str] | tuple[str, str, str] | dict[str, str]] | None = None, *, allow_missing: str | Sequence[str] | None = None, allow_extra: bool = True) -> dict:
        """
        Loads only when compatible (all keys present, shapes equal), atomically; else CheckpointError.
        """

    def load_state_dict_subset_mapped_checked(self, external: Module | Mapping[str, spiraltorch._core.Tensor | numpy.typing.ArrayLike] | Iterable[tuple[str, spiraltorch._core.Tensor | numpy.typing.ArrayLike]], key_map: Mapping[str, str | dict[str, str]] | Sequence[tuple[str, str] | tuple[str, str, str] | dict[str, str]], *, allow_missing: str | Sequence[str] | None = None, allow_extra: bool = True) -> dict:
        """
        Loads the mapped subset of a larger checkpoint when every module key is mapped and fits; atomic.
        """

    def state_dict_projection_preflight(self, external: Module | Mapping[str, spiraltorch._core.Tensor | numpy.typing.ArrayLike] | Iterable[tuple[str, spiraltorch._core.Tensor | numpy.typing.ArrayLike]], key_map: Mapping[str, str | dict[str, str]] | Sequence[tuple[str, str] | tuple[str, str, str] | dict[str, str]] | None = None, *, allow_missing: str | Sequence[str] | None = None) -> dict:
        """
        What a load (with overlap resizes) would keep, drop and zero-fill per key; loads nothing.
        """

    def adapter_state_dict(self) -> dict[str, spiraltorch._core.Tensor]:
        """
        The LoRA adapter entries (lora_a, lora_b) of every LoraLinear below this module.
        """

    def load_adapter_state_dict(self, state: Module | Mapping[str, spiraltorch._core.Tensor | numpy.typing.ArrayLike] | Iterable[tuple[str, spiraltorch._core.Tensor | numpy.typing.ArrayLike]]) -> dict:
        """Loads exactly the adapter entries, checked and atomic."""

    def adapter_keys(self) -> list[str]:
        """
        The state-dict keys of the LoRA adapters (<path>::lora_a, <path>::lora_b) below this module.
        """

    def num_trainable_parameters(self) -> int:
        """
        The number of scalar parameters that require grad (each shared parameter counted once).
        """

class Linear(Module):
    """y = x W^T + b; W is (out_features, in_features) like PyTorch."""

    @overload
    def __init__(self, in_features: int, out_features: int, bias: bool = True, name: str = '') -> None:
        """
        Weight (out_features, in_features) and bias (out_features,) drawn from U(-1/sqrt(in_features), 1/sqrt(in_features)) (Kaiming-uniform, PyTorch's init); input (..., in_features) -> (..., out_features). e.g. nn.Linear(4, 2)(st.randn(8, 4)).shape == (8, 2)
        """

    @overload
    def __init__(self, name: str, in_features: int, out_features: int, bias: bool = True) -> None:
        """The original's spelling Linear(name, in_features, out_features)."""

    @overload
    def __init__(self, in_features: int, out_features: int, name: str) -> None:
        """The original's spelling Linear(in_features, out_features, name)."""

    def extra_repr(self) -> str:
        """``in_features=..., out_features=..., bias=...`` for ``repr``."""

    @property
    def weight(self) -> spiraltorch._core.Tensor:
        """The (out_features, in_features) weight parameter."""

    @property
    def bias(self) -> spiraltorch._core.Tensor | None:
        """The (out_features,) bias parameter, or None (bias=False)."""

    @property
    def in_features(self) -> int:
        """Size of the input's last dim."""

    @property
    def out_features(self) -> int:
        """Size of the output's last dim."""

class Sequential(Module):
    """Runs its layers in order."""

    def __init__(self, *layers: Module, name: str = '') -> None:
        """
        Sequential(layer0, layer1, ...): each layer's output is the next one's input; unnamed layers take the keys '0', '1', ... (parameters '0::weight'). e.g. nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        """

    def add(self, layer: Module) -> None:
        """Appends layer at the end."""

    def append(self, layer: Module) -> None:
        """Alias of add (torch.nn.Sequential.append)."""

    def __len__(self) -> int:
        """The number of layers."""

    def __getitem__(self, index: int) -> Module:
        """
        The layer at index (negative counts from the end); IndexError when out of range.
        """

def linear(input: spiraltorch._core.Tensor, weight: spiraltorch._core.Tensor, bias: spiraltorch._core.Tensor | None = None) -> spiraltorch._core.Tensor:
    """
    x W^T + b with W (out_features, in_features), x (..., in_features); ShapeError when the inner sizes differ.
    """

def mse_loss(input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """Mean squared error."""

def l1_loss(input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """Mean absolute error."""

def huber_loss(input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike, reduction: str = 'mean', delta: float = 1.0) -> spiraltorch._core.Tensor:
    """Huber loss: 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta)."""

def binary_cross_entropy_with_logits(input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike, weight: spiraltorch._core.Tensor | None = None, reduction: str = 'mean', pos_weight: spiraltorch._core.Tensor | None = None) -> spiraltorch._core.Tensor:
    """Numerically stable sigmoid + binary cross-entropy on logits."""

def hyperbolic_cross_entropy(input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike, curvature: float = -1.0, reduction: str = 'mean', epsilon: float = 0.0) -> spiraltorch._core.Tensor:
    """
    Element-wise binary cross-entropy on logits scaled by sqrt(|curvature|); targets are per-element probabilities in [0, 1], not class indices.
    """

def cross_entropy(input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike, weight: spiraltorch._core.Tensor | None = None, ignore_index: int = -100, reduction: str = 'mean', label_smoothing: float = 0.0) -> spiraltorch._core.Tensor:
    """
    Fused log-softmax + negative log-likelihood over dim 1 (class indices or class probabilities).
    """

def linear_cross_entropy(input: spiraltorch._core.Tensor, weight: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike, bias: spiraltorch._core.Tensor | None = None, ignore_index: int = -100, reduction: str = 'mean', chunk_rows: int = 0) -> spiraltorch._core.Tensor:
    """
    cross_entropy(linear(input, weight, bias), target) without the (rows, classes) logits in memory: the rows go through in chunks whose gradient is multiplied into the input's and weight's at once. reduction 'mean' or 'sum'; no create_graph.
    """

def nll_loss(input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike, weight: spiraltorch._core.Tensor | None = None, ignore_index: int = -100, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """Negative log-likelihood of log-probabilities at class indices."""

def sigmoid_focal_loss(inputs: spiraltorch._core.Tensor, targets: spiraltorch._core.Tensor | numpy.typing.ArrayLike, alpha: float = 0.25, gamma: float = 2.0, reduction: str = 'none') -> spiraltorch._core.Tensor:
    """Binary focal loss on logits (torchvision.ops.sigmoid_focal_loss)."""

def pairwise_distance(x1: spiraltorch._core.Tensor, x2: spiraltorch._core.Tensor, p: float = 2.0, eps: float = 1e-06, keepdim: bool = False) -> spiraltorch._core.Tensor:
    """||x1 - x2 + eps||_p over the last dim (kept as size 1 with keepdim)."""

def contrastive_loss(x1: spiraltorch._core.Tensor, x2: spiraltorch._core.Tensor, label: spiraltorch._core.Tensor | numpy.typing.ArrayLike, margin: float = 1.0, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """
    y d^2 + (1 - y) max(0, margin - d)^2 with d the Euclidean distance (label 1 = similar).
    """

def triplet_margin_loss(anchor: spiraltorch._core.Tensor, positive: spiraltorch._core.Tensor, negative: spiraltorch._core.Tensor, margin: float = 1.0, p: float = 2.0, eps: float = 1e-06, swap: bool = False, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """
    max(0, d(a, p) - d(a, n) + margin) like torch.nn.functional.triplet_margin_loss.
    """

class Loss(Module):
    """Base of the losses: call as loss(prediction, target)."""

    def forward(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """
        The loss of input against target (a tensor, or data converted to input's floating dtype), reduced by `reduction` ('none' keeps input's shape); ShapeError when they do not broadcast.
        """

    def __call__(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """forward(input, target)."""

    @property
    def reduction(self) -> str:
        """'mean', 'sum' or 'none'."""

class MeanSquaredError(Loss):
    """Mean squared error (alias MSELoss)."""

    def __init__(self, *, reduction: str = 'mean') -> None:
        """
        mean((input - target)^2); reduction: 'mean' (default), 'sum' or 'none' (ValueError otherwise).
        """

    def forward(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """
        The loss of input against target (a tensor, or data converted to input's floating dtype), reduced by `reduction` ('none' keeps input's shape); ShapeError when they do not broadcast.
        """

    def __call__(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """forward(input, target)."""

    @property
    def reduction(self) -> str:
        """'mean', 'sum' or 'none'."""

MSELoss: TypeAlias = MeanSquaredError

class L1Loss(Loss):
    """Mean absolute error."""

    def __init__(self, *, reduction: str = 'mean') -> None:
        """
        mean(|input - target|); reduction: 'mean' (default), 'sum' or 'none' (ValueError otherwise).
        """

    def forward(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """
        The loss of input against target (a tensor, or data converted to input's floating dtype), reduced by `reduction` ('none' keeps input's shape); ShapeError when they do not broadcast.
        """

    def __call__(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """forward(input, target)."""

    @property
    def reduction(self) -> str:
        """'mean', 'sum' or 'none'."""

class HuberLoss(Loss):
    """Huber loss with threshold delta (torch.nn.HuberLoss)."""

    def __init__(self, reduction: str = 'mean', delta: float = 1.0) -> None:
        """
        0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta), d = input - target; reduction: 'mean' (default), 'sum' or 'none' (ValueError otherwise).
        """

    @property
    def delta(self) -> float:
        """The threshold between the quadratic and linear parts."""

    def forward(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """
        The loss of input against target (a tensor, or data converted to input's floating dtype), reduced by `reduction` ('none' keeps input's shape); ShapeError when they do not broadcast.
        """

    def __call__(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """forward(input, target)."""

    @property
    def reduction(self) -> str:
        """'mean', 'sum' or 'none'."""

class BCEWithLogits(Loss):
    """
    Numerically stable sigmoid + binary cross-entropy on logits (alias BCEWithLogitsLoss); pos_weight weighs positives per class.
    """

    def __init__(self, weight: spiraltorch._core.Tensor | None = None, reduction: str = 'mean', pos_weight: spiraltorch._core.Tensor | None = None) -> None:
        """
        -w [pos_weight t log sigmoid(x) + (1 - t) log sigmoid(-x)] on logits x; weight rescales each element (broadcast), pos_weight (one per class, last dim) weighs positives; reduction: 'mean' (default), 'sum' or 'none' (ValueError otherwise).
        """

    @property
    def weight(self) -> spiraltorch._core.Tensor | None:
        """The per-element rescaling weight, or None."""

    @property
    def pos_weight(self) -> spiraltorch._core.Tensor | None:
        """The per-class weight of positive examples, or None."""

    def forward(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """
        The loss of input against target (a tensor, or data converted to input's floating dtype), reduced by `reduction` ('none' keeps input's shape); ShapeError when they do not broadcast.
        """

    def __call__(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """forward(input, target)."""

    @property
    def reduction(self) -> str:
        """'mean', 'sum' or 'none'."""

BCEWithLogitsLoss: TypeAlias = BCEWithLogits

class HyperbolicCrossEntropy(Loss):
    """
    Element-wise binary cross-entropy on logits scaled by s = sqrt(|curvature|) (a temperature): loss = mean(-t log sigmoid(s p) - (1 - t) log sigmoid(-s p)). Targets are per-element probabilities in [0, 1], not class indices; epsilon > 0 clamps them to [epsilon, 1 - epsilon]. Alias CrossEntropy (for softmax cross-entropy over classes use CategoricalCrossEntropy / CrossEntropyLoss).
    """

    def __init__(self, curvature: float = -1.0, *, epsilon: float = 0.0, reduction: str = 'mean') -> None:
        """
        Logits are scaled by sqrt(|curvature|) before the binary cross-entropy; epsilon > 0 clamps targets to [epsilon, 1 - epsilon]; reduction: 'mean' (default), 'sum' or 'none' (ValueError otherwise).
        """

    @property
    def curvature(self) -> float:
        """The curvature whose sqrt(|.|) scales the logits."""

    @property
    def epsilon(self) -> float:
        """The target clamp margin (0 = none)."""

    def forward(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """
        The loss of input against target (a tensor, or data converted to input's floating dtype), reduced by `reduction` ('none' keeps input's shape); ShapeError when they do not broadcast.
        """

    def __call__(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """forward(input, target)."""

    @property
    def reduction(self) -> str:
        """'mean', 'sum' or 'none'."""

CrossEntropy: TypeAlias = HyperbolicCrossEntropy

class CategoricalCrossEntropy(Loss):
    """
    Softmax cross-entropy on logits (N, C) or (N, C, d...) with int64 class indices or class probabilities, like torch.nn.CrossEntropyLoss (alias CrossEntropyLoss, SoftmaxCrossEntropy). Log-softmax and gather are fused.
    """

    def __init__(self, weight: spiraltorch._core.Tensor | None = None, ignore_index: int = -100, reduction: str = 'mean', label_smoothing: float = 0.0) -> None:
        """
        weight: (C,) per-class weights or None; targets equal to ignore_index add nothing (and leave the mean's denominator); label_smoothing in [0, 1] mixes the targets with the uniform distribution; reduction: 'mean' (default), 'sum' or 'none' (ValueError otherwise). e.g. nn.CrossEntropyLoss()(st.randn(4, 3), st.tensor([0, 2, 1, 0]))
        """

    @property
    def weight(self) -> spiraltorch._core.Tensor | None:
        """The (C,) class weights, or None."""

    @property
    def ignore_index(self) -> int:
        """The class index whose targets are skipped."""

    @property
    def label_smoothing(self) -> float:
        """The label smoothing factor in [0, 1]."""

    def forward(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """
        The loss of input against target: int64 class indices (a tensor or nested lists) or class probabilities shaped like input; reduced by `reduction`.
        """

    def __call__(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """forward(input, target)."""

    @property
    def reduction(self) -> str:
        """'mean', 'sum' or 'none'."""

CrossEntropyLoss: TypeAlias = CategoricalCrossEntropy

SoftmaxCrossEntropy: TypeAlias = CategoricalCrossEntropy

class NLLLoss(Loss):
    """Negative log-likelihood of log-probabilities at class indices."""

    def __init__(self, weight: spiraltorch._core.Tensor | None = None, ignore_index: int = -100, reduction: str = 'mean') -> None:
        """
        -input[n, target[n]] (times weight[target[n]]) for log-probabilities (N, C) or (N, C, d...); targets equal to ignore_index are skipped; reduction: 'mean' (default), 'sum' or 'none' (ValueError otherwise).
        """

    @property
    def weight(self) -> spiraltorch._core.Tensor | None:
        """The (C,) class weights, or None."""

    @property
    def ignore_index(self) -> int:
        """The class index whose targets are skipped."""

    def forward(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """
        The loss of input against target: int64 class indices (a tensor or nested lists) or class probabilities shaped like input; reduced by `reduction`.
        """

    def __call__(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """forward(input, target)."""

    @property
    def reduction(self) -> str:
        """'mean', 'sum' or 'none'."""

class FocalLoss(Loss):
    """
    Binary focal loss on logits like torchvision.ops.sigmoid_focal_loss: alpha_t (1 - p_t)^gamma BCE(logits, t); alpha < 0 disables alpha_t.
    """

    def __init__(self, alpha: float = 0.25, gamma: float = 2.0, *, reduction: str = 'mean') -> None:
        """
        alpha in [0, 1] weighs positives (alpha < 0 disables it), gamma >= 0 focuses on hard examples; reduction: 'mean' (default), 'sum' or 'none' (ValueError otherwise).
        """

    @property
    def alpha(self) -> float:
        """The weight of positives (negatives get 1 - alpha); < 0 disables it."""

    @property
    def gamma(self) -> float:
        """The focusing exponent on (1 - p_t)."""

    def forward(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """
        The loss of input against target (a tensor, or data converted to input's floating dtype), reduced by `reduction` ('none' keeps input's shape); ShapeError when they do not broadcast.
        """

    def __call__(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """forward(input, target)."""

    @property
    def reduction(self) -> str:
        """'mean', 'sum' or 'none'."""

class ContrastiveLoss(Loss):
    """
    mean(y d^2 + (1 - y) max(0, margin - d)^2), label y = 1 for similar pairs. Call with (x1, x2, y) (d = Euclidean distance over the last dim) or with precomputed distances (d, y).
    """

    def __init__(self, margin: float = 1.0, *, reduction: str = 'mean') -> None:
        """
        margin: the distance beyond which dissimilar pairs cost nothing; reduction: 'mean' (default), 'sum' or 'none' (ValueError otherwise).
        """

    @property
    def margin(self) -> float:
        """The margin for dissimilar pairs."""

    @overload
    def forward(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """
        The loss of input against target (a tensor, or data converted to input's floating dtype), reduced by `reduction` ('none' keeps input's shape); ShapeError when they do not broadcast.
        """

    @overload
    def forward(self, x1: spiraltorch._core.Tensor, x2: spiraltorch._core.Tensor, label: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """
        The loss of the pair (x1, x2) (Euclidean distance over the last dim) with label 1 for similar, 0 for dissimilar pairs.
        """

    @overload
    def __call__(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """forward(input, target)."""

    @overload
    def __call__(self, x1: spiraltorch._core.Tensor, x2: spiraltorch._core.Tensor, label: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """forward(x1, x2, label)."""

    @property
    def reduction(self) -> str:
        """'mean', 'sum' or 'none'."""

class TripletLoss(Loss):
    """
    max(0, d(a, p) - d(a, n) + margin) with the p-norm distance, like torch.nn.TripletMarginLoss (alias TripletMarginLoss). Call with (anchor, positive, negative).
    """

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-06, swap: bool = False, reduction: str = 'mean') -> None:
        """
        margin, the p of the p-norm distance (with eps added to differences), swap=True uses min(d(a, n), d(p, n)) as the negative distance; reduction: 'mean' (default), 'sum' or 'none' (ValueError otherwise).
        """

    @property
    def margin(self) -> float:
        """The margin between positive and negative distances."""

    @property
    def p(self) -> float:
        """The p of the p-norm distance."""

    @property
    def eps(self) -> float:
        """Added to differences before the norm."""

    @property
    def swap(self) -> bool:
        """Whether the distance swap of Balntas et al. is used."""

    @property
    def reduction(self) -> str:
        """'mean', 'sum' or 'none'."""

    def forward(self, anchor: spiraltorch._core.Tensor, positive: spiraltorch._core.Tensor, negative: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor:
        """
        max(0, d(anchor, positive) - d(anchor, negative) + margin) over rows of (N, D) or (D,) inputs, reduced.
        """

    def __call__(self, anchor: spiraltorch._core.Tensor, positive: spiraltorch._core.Tensor, negative: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor:
        """forward(anchor, positive, negative)."""

TripletMarginLoss: TypeAlias = TripletLoss

def ctc_loss(log_probs: spiraltorch._core.Tensor, targets: spiraltorch._core.Tensor | numpy.typing.ArrayLike, input_lengths: spiraltorch._core.Tensor | Sequence[int] | int, target_lengths: spiraltorch._core.Tensor | Sequence[int] | int, blank: int = 0, reduction: str = 'mean', zero_infinity: bool = False) -> spiraltorch._core.Tensor:
    """
    Connectionist Temporal Classification loss of log_probs (T, N, C) (log-softmax outputs) against targets (N, S) padded or 1-D concatenated, with each sample's input and target lengths; 'mean' divides each loss by its target length before averaging.
    """

def binary_cross_entropy(input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike, weight: spiraltorch._core.Tensor | None = None, *, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """
    Binary cross-entropy -w (t log x + (1 - t) log(1 - x)) of probabilities x in [0, 1] (logs clamped at -100).
    """

def kl_div(input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike, *, reduction: str = 'mean', log_target: bool = False) -> spiraltorch._core.Tensor:
    """
    KL divergence target (log target - input) of log-probabilities; reduction 'mean', 'batchmean', 'sum' or 'none'.
    """

def smooth_l1_loss(input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike, *, reduction: str = 'mean', beta: float = 1.0) -> spiraltorch._core.Tensor:
    """Smooth L1 loss: 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta."""

def soft_margin_loss(input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike, *, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """log(1 + exp(-y x)) for labels y in {-1, 1}."""

def margin_ranking_loss(input1: spiraltorch._core.Tensor, input2: spiraltorch._core.Tensor | numpy.typing.ArrayLike, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike, margin: float = 0.0, *, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """max(0, -y (x1 - x2) + margin)."""

def hinge_embedding_loss(input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike, margin: float = 1.0, *, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """x where y == 1, max(0, margin - x) where y == -1."""

def cosine_embedding_loss(input1: spiraltorch._core.Tensor, input2: spiraltorch._core.Tensor | numpy.typing.ArrayLike, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike, margin: float = 0.0, *, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """
    1 - cos(x1, x2) where y == 1, max(0, cos(x1, x2) - margin) where y == -1.
    """

def poisson_nll_loss(input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike, log_input: bool = True, full: bool = False, *, eps: float = 1e-08, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """
    Poisson negative log-likelihood: exp(x) - t x (log_input) or x - t log(x + eps); full adds Stirling's term.
    """

def gaussian_nll_loss(input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike, var: spiraltorch._core.Tensor | numpy.typing.ArrayLike, full: bool = False, eps: float = 1e-06, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """
    Gaussian negative log-likelihood 0.5 (log v + (x - t)^2 / v), v = max(var, eps).
    """

def multilabel_soft_margin_loss(input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike, weight: spiraltorch._core.Tensor | None = None, *, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """
    Per-class binary cross-entropy on logits averaged over the last (class) dim.
    """

def multi_margin_loss(input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike, p: int = 1, margin: float = 1.0, weight: spiraltorch._core.Tensor | None = None, *, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """
    Multi-class hinge loss sum_{i != y} w_y max(0, margin - x_y + x_i)^p / C at int64 class indices.
    """

class BCELoss(Loss):
    """Binary cross-entropy of probabilities (torch.nn.BCELoss)."""

    def __init__(self, weight: spiraltorch._core.Tensor | None = None, *, reduction: str = 'mean') -> None:
        """
        -w (t log x + (1 - t) log(1 - x)) of probabilities x in [0, 1] (logs clamped at -100); weight rescales each element (broadcast); reduction: 'mean' (default), 'sum' or 'none'.
        """

    @property
    def weight(self) -> spiraltorch._core.Tensor | None:
        """The per-element rescaling weight, or None."""

    def forward(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """
        The loss of input against target (a tensor, or data converted to input's floating dtype), reduced by `reduction` ('none' keeps input's shape).
        """

    def __call__(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """forward(input, target)."""

    @property
    def reduction(self) -> str:
        """'mean', 'sum' or 'none'."""

class KLDivLoss(Loss):
    """KL divergence of log-probabilities (torch.nn.KLDivLoss)."""

    def __init__(self, *, reduction: str = 'mean', log_target: bool = False) -> None:
        """
        target (log target - input) for log-probability inputs (log_target=True: target is given as log-probabilities too); reduction 'mean', 'batchmean' (sum / batch size, the true KL), 'sum' or 'none'.
        """

    @property
    def log_target(self) -> bool:
        """Whether target is given as log-probabilities."""

    def forward(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """
        The loss of input against target (a tensor, or data converted to input's floating dtype), reduced by `reduction` ('none' keeps input's shape).
        """

    def __call__(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """forward(input, target)."""

    @property
    def reduction(self) -> str:
        """'mean', 'batchmean', 'sum' or 'none'."""

class SmoothL1Loss(Loss):
    """Smooth L1 loss with threshold beta (torch.nn.SmoothL1Loss)."""

    def __init__(self, *, reduction: str = 'mean', beta: float = 1.0) -> None:
        """
        0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (beta >= 0; 0 is the L1 loss); reduction: 'mean' (default), 'sum' or 'none'.
        """

    @property
    def beta(self) -> float:
        """The threshold between the quadratic and linear parts."""

    def forward(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """
        The loss of input against target (a tensor, or data converted to input's floating dtype), reduced by `reduction` ('none' keeps input's shape).
        """

    def __call__(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """forward(input, target)."""

    @property
    def reduction(self) -> str:
        """'mean', 'sum' or 'none'."""

class SoftMarginLoss(Loss):
    """log(1 + exp(-y x)) (torch.nn.SoftMarginLoss)."""

    def __init__(self, *, reduction: str = 'mean') -> None:
        """
        log(1 + exp(-y x)) for labels y in {-1, 1}; reduction: 'mean' (default), 'sum' or 'none'.
        """

    def forward(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """
        The loss of input against target (a tensor, or data converted to input's floating dtype), reduced by `reduction` ('none' keeps input's shape).
        """

    def __call__(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """forward(input, target)."""

    @property
    def reduction(self) -> str:
        """'mean', 'sum' or 'none'."""

class MarginRankingLoss(Loss):
    """max(0, -y (x1 - x2) + margin); call with (input1, input2, target)."""

    def __init__(self, margin: float = 0.0, *, reduction: str = 'mean') -> None:
        """
        max(0, -y (x1 - x2) + margin) with y = 1 when x1 should rank higher, -1 otherwise; reduction: 'mean' (default), 'sum' or 'none'.
        """

    @property
    def margin(self) -> float:
        """The margin of the hinge."""

    def forward(self, input1: spiraltorch._core.Tensor, input2: spiraltorch._core.Tensor | numpy.typing.ArrayLike, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """
        The loss of the three operands (the second and third may be data, converted to the first's floating dtype), reduced by `reduction`.
        """

    def __call__(self, input1: spiraltorch._core.Tensor, input2: spiraltorch._core.Tensor | numpy.typing.ArrayLike, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """forward with the same three operands."""

    @property
    def reduction(self) -> str:
        """'mean', 'sum' or 'none'."""

class HingeEmbeddingLoss(Loss):
    """x where y == 1, max(0, margin - x) where y == -1."""

    def __init__(self, margin: float = 1.0, *, reduction: str = 'mean') -> None:
        """
        x where y == 1, max(0, margin - x) where y == -1; reduction: 'mean' (default), 'sum' or 'none'.
        """

    @property
    def margin(self) -> float:
        """The margin of the hinge."""

    def forward(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """
        The loss of input against target (a tensor, or data converted to input's floating dtype), reduced by `reduction` ('none' keeps input's shape).
        """

    def __call__(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """forward(input, target)."""

    @property
    def reduction(self) -> str:
        """'mean', 'sum' or 'none'."""

class CosineEmbeddingLoss(Loss):
    """
    1 - cos(x1, x2) where y == 1, max(0, cos - margin) where y == -1; call with (input1, input2, target).
    """

    def __init__(self, margin: float = 0.0, *, reduction: str = 'mean') -> None:
        """
        1 - cos(x1, x2) where y == 1, max(0, cos(x1, x2) - margin) where y == -1 (cos over the last dim); reduction: 'mean' (default), 'sum' or 'none'.
        """

    @property
    def margin(self) -> float:
        """The margin of the hinge."""

    def forward(self, input1: spiraltorch._core.Tensor, input2: spiraltorch._core.Tensor | numpy.typing.ArrayLike, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """
        The loss of the three operands (the second and third may be data, converted to the first's floating dtype), reduced by `reduction`.
        """

    def __call__(self, input1: spiraltorch._core.Tensor, input2: spiraltorch._core.Tensor | numpy.typing.ArrayLike, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """forward with the same three operands."""

    @property
    def reduction(self) -> str:
        """'mean', 'sum' or 'none'."""

class PoissonNLLLoss(Loss):
    """Poisson negative log-likelihood (torch.nn.PoissonNLLLoss)."""

    def __init__(self, log_input: bool = True, full: bool = False, *, eps: float = 1e-08, reduction: str = 'mean') -> None:
        """
        exp(x) - t x when log_input, else x - t log(x + eps); full adds Stirling's approximation t log t - t + 0.5 log(2 pi t) where t > 1; reduction: 'mean' (default), 'sum' or 'none'.
        """

    @property
    def log_input(self) -> bool:
        """Whether the input is the log of the rate."""

    @property
    def full(self) -> bool:
        """Whether Stirling's term is added."""

    @property
    def eps(self) -> float:
        """Added inside the log when not log_input."""

    def forward(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """
        The loss of input against target (a tensor, or data converted to input's floating dtype), reduced by `reduction` ('none' keeps input's shape).
        """

    def __call__(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """forward(input, target)."""

    @property
    def reduction(self) -> str:
        """'mean', 'sum' or 'none'."""

class GaussianNLLLoss(Loss):
    """Gaussian negative log-likelihood; call with (input, target, var)."""

    def __init__(self, *, full: bool = False, eps: float = 1e-06, reduction: str = 'mean') -> None:
        """
        0.5 (log v + (x - t)^2 / v) with v = max(var, eps); full adds 0.5 log(2 pi); reduction: 'mean' (default), 'sum' or 'none'.
        """

    @property
    def full(self) -> bool:
        """Whether the constant 0.5 log(2 pi) is added."""

    @property
    def eps(self) -> float:
        """The lower clamp of the variance."""

    def forward(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike, var: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """
        The loss of the three operands (the second and third may be data, converted to the first's floating dtype), reduced by `reduction`.
        """

    def __call__(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike, var: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """forward with the same three operands."""

    @property
    def reduction(self) -> str:
        """'mean', 'sum' or 'none'."""

class MultiLabelSoftMarginLoss(Loss):
    """Per-class BCE on logits averaged over classes."""

    def __init__(self, weight: spiraltorch._core.Tensor | None = None, *, reduction: str = 'mean') -> None:
        """
        Binary cross-entropy on logits per class, averaged over the last (class) dim; weight (C,) rescales classes; reduction: 'mean' (default), 'sum' or 'none'.
        """

    @property
    def weight(self) -> spiraltorch._core.Tensor | None:
        """The (C,) class weights, or None."""

    def forward(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """
        The loss of input against target (a tensor, or data converted to input's floating dtype), reduced by `reduction` ('none' keeps input's shape).
        """

    def __call__(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """forward(input, target)."""

    @property
    def reduction(self) -> str:
        """'mean', 'sum' or 'none'."""

class MultiMarginLoss(Loss):
    """Multi-class hinge loss (torch.nn.MultiMarginLoss)."""

    def __init__(self, p: int = 1, margin: float = 1.0, weight: spiraltorch._core.Tensor | None = None, *, reduction: str = 'mean') -> None:
        """
        sum over i != y of w_y max(0, margin - x_y + x_i)^p / C for int64 class indices y; p is 1 or 2; weight (C,) or None; reduction: 'mean' (default), 'sum' or 'none'.
        """

    @property
    def p(self) -> int:
        """The exponent of the hinge (1 or 2)."""

    @property
    def margin(self) -> float:
        """The margin of the hinge."""

    @property
    def weight(self) -> spiraltorch._core.Tensor | None:
        """The (C,) class weights, or None."""

    def forward(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """
        The loss of input (N, C) against int64 class indices target (N,) (a tensor or a list), reduced by `reduction`.
        """

    def __call__(self, input: spiraltorch._core.Tensor, target: spiraltorch._core.Tensor | numpy.typing.ArrayLike) -> spiraltorch._core.Tensor:
        """forward(input, target)."""

    @property
    def reduction(self) -> str:
        """'mean', 'sum' or 'none'."""

class Identity(Module):
    """Returns its input unchanged; ignores constructor arguments."""

    def __init__(self, *args: Any, name: str = '', **kwargs: Any) -> None:
        """
        Any positional and keyword arguments are accepted and ignored (torch.nn.Identity's contract).
        """

    def __repr__(self) -> str: ...

class ZSpaceProjector(Module):
    """
    y = exp_0(x + tanh(x W^T + b)): a bounded residual projection of each row into the Poincare ball of `curvature` (outputs stay strictly inside); works inside Sequential and transformer stacks.
    """

    def __init__(self, features: int, curvature: float = -1.0, name: str = '') -> None:
        """
        weight (features, features) Kaiming-uniform and bias zeros (features,); curvature must be negative and finite (else ValueError). Input (..., features) -> (..., features).
        """

    @property
    def features(self) -> int:
        """The size of the last dim, in and out."""

    @property
    def curvature(self) -> float:
        """The (negative) curvature of the Poincare ball."""

    @property
    def weight(self) -> spiraltorch._core.Tensor:
        """The (features, features) weight parameter."""

    @property
    def bias(self) -> spiraltorch._core.Tensor:
        """The (features,) bias parameter."""

    def extra_repr(self) -> str:
        """The constructor arguments as repr() shows them."""

class Flatten(Module):
    """Flattens dims start_dim..end_dim into one."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1, name: str = '') -> None:
        """
        Flattens dims start_dim..end_dim (negative counts from the end) into one; the default keeps dim 0 (the batch).
        """

    @property
    def start_dim(self) -> int:
        """The first dim flattened."""

    @property
    def end_dim(self) -> int:
        """The last dim flattened."""

    def __repr__(self) -> str: ...

class Dropout(Module):
    """
    Zeroes elements with probability p in training (scaling the rest by 1/(1-p)); the identity in eval mode.
    """

    def __init__(self, p: float = 0.5, inplace: bool | str | None = False, name: str = '', *, seed: int | None = None, training: bool = True) -> None:
        """
        inplace=True writes the result into the input (in training); seed= gives the layer its own Philox stream (the same masks on every run); training=False starts in eval mode.
        """

    @property
    def inplace(self) -> bool:
        """Whether the result is written into the input (in training)."""

    @property
    def p(self) -> float:
        """The probability of zeroing an element, in [0, 1]."""

    @property
    def probability(self) -> float:
        """The original's name for p."""

    @property
    def seed(self) -> int | None:
        """The layer's own Philox seed, or None (the global generator)."""

    def __repr__(self) -> str: ...

class Embedding(Module):
    """
    Lookup table: weight (num_embeddings, embedding_dim) ~ N(0, 1); the padding_idx row is zero and gets no gradient.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None, name: str = '') -> None:
        """
        weight (num_embeddings, embedding_dim) ~ N(0, 1); the padding_idx row (negative counts from the end) is zeros and gets no gradient. Input: integer indices of any shape -> (*, embedding_dim). e.g. nn.Embedding(10, 3)(st.tensor([1, 2])).shape == (2, 3)
        """

    @staticmethod
    def from_pretrained(embeddings: spiraltorch._core.Tensor, freeze: bool = True, padding_idx: int | None = None, max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Embedding:
        """
        An Embedding whose weight is embeddings (2-D, the same memory), trainable unless freeze.
        """

    @property
    def weight(self) -> spiraltorch._core.Tensor:
        """The (num_embeddings, embedding_dim) table."""

    @property
    def num_embeddings(self) -> int:
        """The number of rows (valid indices 0..num_embeddings-1)."""

    @property
    def embedding_dim(self) -> int:
        """The size of each row."""

    @property
    def padding_idx(self) -> int | None:
        """The row kept at zero with no gradient, or None."""

    def __repr__(self) -> str: ...

class ReLU(Module):
    """max(x, 0). inplace=True writes the result into the input."""

    def __init__(self, inplace: bool = False, name: str = '') -> None:
        """inplace=True writes the result into the input tensor."""

    @property
    def inplace(self) -> bool:
        """Whether the result is written into the input."""

    def __repr__(self) -> str: ...

class GELU(Module):
    """Gaussian error linear unit; approximate='none' (erf) or 'tanh'."""

    def __init__(self, approximate: str = 'none', name: str = '') -> None:
        """
        approximate='none' uses x * Phi(x) with the exact erf; 'tanh' the tanh approximation (ValueError for other strings).
        """

    @property
    def approximate(self) -> str:
        """'none' or 'tanh'."""

    def __repr__(self) -> str: ...

class SiLU(Module):
    """x * sigmoid(x). inplace=True writes the result into the input."""

    def __init__(self, inplace: bool = False, name: str = '') -> None:
        """inplace=True writes the result into the input tensor."""

    @property
    def inplace(self) -> bool:
        """Whether the result is written into the input."""

    def __repr__(self) -> str: ...

class Tanh(Module):
    """tanh(x)."""

    def __init__(self, name: str = '') -> None:
        """name names the module (no parameters)."""

    def __repr__(self) -> str: ...

class Sigmoid(Module):
    """1 / (1 + exp(-x))."""

    def __init__(self, name: str = '') -> None:
        """name names the module (no parameters)."""

    def __repr__(self) -> str: ...

class Softmax(Module):
    """Softmax along `dim` (default -1)."""

    def __init__(self, dim: int = -1, name: str = '') -> None:
        """Softmax along dim (negative counts from the end)."""

    @property
    def dim(self) -> int:
        """The dim normalised over."""

    def __repr__(self) -> str: ...

class LayerNorm(Module):
    """
    Normalises over the trailing normalized_shape dims; weight (ones) and bias (zeros) of that shape when elementwise_affine.
    """

    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-05, elementwise_affine: bool = True, bias: bool = True, name: str = '') -> None:
        """
        normalized_shape: the trailing dims normalised over (an int or a sequence); elementwise_affine adds weight (ones) and, with bias=True, bias (zeros) of that shape. e.g. nn.LayerNorm(8)(st.randn(2, 8))
        """

    @property
    def weight(self) -> spiraltorch._core.Tensor | None:
        """The normalized_shape scale, or None when not elementwise_affine."""

    @property
    def bias(self) -> spiraltorch._core.Tensor | None:
        """The normalized_shape shift, or None."""

    @property
    def normalized_shape(self) -> tuple[int, ...]:
        """The trailing dims normalised over."""

    @property
    def eps(self) -> float:
        """Added to the variance for numerical stability."""

    @property
    def elementwise_affine(self) -> bool:
        """Whether the layer has learnable weight and bias."""

    def __repr__(self) -> str: ...

class _BatchNorm(Module):
    """Common base of BatchNorm1d and BatchNorm2d."""

    @property
    def weight(self) -> spiraltorch._core.Tensor | None:
        """The (num_features,) scale, or None when not affine."""

    @property
    def bias(self) -> spiraltorch._core.Tensor | None:
        """The (num_features,) shift, or None when not affine."""

    @property
    def running_mean(self) -> spiraltorch._core.Tensor | None:
        """
        The (num_features,) running mean buffer, or None without track_running_stats.
        """

    @property
    def running_var(self) -> spiraltorch._core.Tensor | None:
        """
        The (num_features,) running (unbiased) variance buffer, or None without track_running_stats.
        """

    @property
    def num_batches_tracked(self) -> spiraltorch._core.Tensor | None:
        """
        The int64 count of training batches seen, or None without track_running_stats.
        """

    @property
    def num_features(self) -> int:
        """The expected size of dim 1 (channels)."""

    @property
    def eps(self) -> float:
        """Added to the variance for numerical stability."""

    @property
    def momentum(self) -> float | None:
        """
        The running-statistics update factor, or None for a cumulative average.
        """

    @property
    def affine(self) -> bool:
        """Whether the layer has learnable weight and bias."""

    @property
    def track_running_stats(self) -> bool:
        """Whether running statistics are kept (and used in eval mode)."""

    def reset_running_stats(self) -> None:
        """Sets running_mean to 0, running_var to 1 and num_batches_tracked to 0."""

    def reset_parameters(self) -> None:
        """reset_running_stats(), then weight to 1 and bias to 0."""

    def __repr__(self) -> str: ...

class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L) inputs."""

    def __init__(self, num_features: int, eps: float = 1e-05, momentum: float | None = 0.1, affine: bool = True, track_running_stats: bool = True, name: str = '') -> None:
        """
        Normalises each of num_features channels with batch statistics in training (updating running_mean/var with momentum; None = cumulative average) and with the running statistics in eval; affine adds weight (ones) and bias (zeros).
        """

class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W) inputs."""

    def __init__(self, num_features: int, eps: float = 1e-05, momentum: float | None = 0.1, affine: bool = True, track_running_stats: bool = True, name: str = '') -> None:
        """
        Normalises each of num_features channels over (N, H, W) with batch statistics in training (updating running_mean/var with momentum; None = cumulative average) and with the running statistics in eval; affine adds weight (ones) and bias (zeros).
        """

def layer_norm(input: spiraltorch._core.Tensor, normalized_shape: int | Sequence[int], weight: spiraltorch._core.Tensor | None = None, bias: spiraltorch._core.Tensor | None = None, eps: float = 1e-05) -> spiraltorch._core.Tensor:
    """
    Layer normalisation over the trailing normalized_shape dims (fused forward and backward).
    """

def add_layer_norm(residual: spiraltorch._core.Tensor, delta: spiraltorch._core.Tensor | None, normalized_shape: int | Sequence[int], weight: spiraltorch._core.Tensor | None = None, bias: spiraltorch._core.Tensor | None = None, eps: float = 1e-05, p: float = 0.0, training: bool = True, out_dtype: spiraltorch._core.dtype | str | None = None) -> tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor]:
    """
    The transformer's residual step: h = residual + dropout(delta, p, training) and layer_norm(h, normalized_shape, weight, bias, eps), returned as the tuple (h, normalised). Equals that composite (dropout draws the same numbers from the global generator; the normalised output then cast to out_dtype when given); on CUDA one fused pass forward and one backward, on other devices the composite's kernels (where residual, delta and the output share a dtype); either way one autograd node that keeps neither the dropout mask nor delta for the backward. residual and delta share a shape; under autocast delta may stay half beside a float32 residual. delta=None: h is residual and only the layer norm runs.
    """

def embedding(input: spiraltorch._core.Tensor, weight: spiraltorch._core.Tensor, padding_idx: int | None = None) -> spiraltorch._core.Tensor:
    """
    Rows of weight picked by the integer tensor input (PyTorch's argument order).
    """

def dropout(input: spiraltorch._core.Tensor, p: float = 0.5, training: bool = True) -> spiraltorch._core.Tensor:
    """
    Zeroes elements with probability p and scales the rest by 1/(1-p) when training (from the global generator); the input itself when not training or p == 0. ValueError unless 0 <= p <= 1.
    """

def batch_norm(input: spiraltorch._core.Tensor, running_mean: spiraltorch._core.Tensor | None, running_var: spiraltorch._core.Tensor | None, weight: spiraltorch._core.Tensor | None = None, bias: spiraltorch._core.Tensor | None = None, training: bool = False, momentum: float = 0.1, eps: float = 1e-05) -> spiraltorch._core.Tensor:
    """
    Batch normalisation over dim 1; in training updates running_mean/running_var in place.
    """

def gelu(input: spiraltorch._core.Tensor, approximate: str = 'none') -> spiraltorch._core.Tensor:
    """
    x * Phi(x) (approximate='none', exact erf) or its tanh approximation (approximate='tanh').
    """

def feed_forward(input: spiraltorch._core.Tensor, weight1: spiraltorch._core.Tensor, bias1: spiraltorch._core.Tensor | None, weight2: spiraltorch._core.Tensor, bias2: spiraltorch._core.Tensor | None, activation: str = 'gelu_tanh') -> spiraltorch._core.Tensor:
    """
    A transformer's feed-forward block without dropout: linear(act(linear(input, weight1, bias1)), weight2, bias2), activation 'relu', 'gelu' (erf) or 'gelu_tanh' (GELU's tanh approximation); weight1 (hidden, in), weight2 (out, hidden), biases (hidden,) and (out,) or None. Equal to that composite; on CUDA 'gelu_tanh' is one autograd node whose GEMMs apply the activation and its derivative in their epilogues (cuBLASLt), with autocast's float32 weights receiving float32 gradients. Returns the block's output, input's shape with the last dim out. ValueError for another activation, ShapeError for mismatched shapes.
    """

def relu(input: spiraltorch._core.Tensor, inplace: bool = False) -> spiraltorch._core.Tensor:
    """max(x, 0); inplace=True writes it into x."""

def silu(input: spiraltorch._core.Tensor, inplace: bool = False) -> spiraltorch._core.Tensor:
    """x * sigmoid(x); inplace=True writes it into x."""

def tanh(input: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor:
    """tanh(x) element-wise."""

def sigmoid(input: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor:
    """1 / (1 + exp(-x)) element-wise."""

def softmax(input: spiraltorch._core.Tensor, dim: int = -1) -> spiraltorch._core.Tensor:
    """exp(x) / sum(exp(x)) along dim, computed stably (max subtracted)."""

def log_softmax(input: spiraltorch._core.Tensor, dim: int = -1) -> spiraltorch._core.Tensor:
    """x - logsumexp(x) along dim, computed stably."""

def flatten(input: spiraltorch._core.Tensor, start_dim: int = 0, end_dim: int = -1) -> spiraltorch._core.Tensor:
    """A view (or copy) with dims start_dim..end_dim merged into one."""

class SELU(Module):
    """
    scale * elu(x, alpha) with alpha = 1.6733, scale = 1.0507 (self-normalising).
    """

    def __init__(self, inplace: bool = False, name: str = '') -> None:
        """
        inplace=True writes the result into the input tensor; name names the module (no parameters).
        """

    @property
    def inplace(self) -> bool:
        """Whether the result is written into the input."""

    def extra_repr(self) -> str:
        """The constructor arguments as repr() shows them."""

class Mish(Module):
    """x * tanh(softplus(x))."""

    def __init__(self, inplace: bool = False, name: str = '') -> None:
        """
        inplace=True writes the result into the input tensor; name names the module (no parameters).
        """

    @property
    def inplace(self) -> bool:
        """Whether the result is written into the input."""

    def extra_repr(self) -> str:
        """The constructor arguments as repr() shows them."""

class Hardswish(Module):
    """x * clamp(x + 3, 0, 6) / 6."""

    def __init__(self, inplace: bool = False, name: str = '') -> None:
        """
        inplace=True writes the result into the input tensor; name names the module (no parameters).
        """

    @property
    def inplace(self) -> bool:
        """Whether the result is written into the input."""

class Hardsigmoid(Module):
    """clamp(x + 3, 0, 6) / 6."""

    def __init__(self, inplace: bool = False, name: str = '') -> None:
        """
        inplace=True writes the result into the input tensor; name names the module (no parameters).
        """

    @property
    def inplace(self) -> bool:
        """Whether the result is written into the input."""

class ReLU6(Module):
    """min(max(x, 0), 6)."""

    def __init__(self, inplace: bool = False, name: str = '') -> None:
        """
        inplace=True writes the result into the input tensor; name names the module (no parameters).
        """

    @property
    def inplace(self) -> bool:
        """Whether the result is written into the input."""

    def extra_repr(self) -> str:
        """The constructor arguments as repr() shows them."""

class LogSigmoid(Module):
    """log(sigmoid(x)), computed as -softplus(-x)."""

    def __init__(self, name: str = '') -> None:
        """name names the module (no parameters)."""

class Softsign(Module):
    """x / (1 + |x|)."""

    def __init__(self, name: str = '') -> None:
        """name names the module (no parameters)."""

class Tanhshrink(Module):
    """x - tanh(x)."""

    def __init__(self, name: str = '') -> None:
        """name names the module (no parameters)."""

class LeakyReLU(Module):
    """x for x > 0, negative_slope * x otherwise."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False, name: str = '') -> None:
        """
        negative_slope scales the negative part; inplace=True writes the result into the input.
        """

    @property
    def negative_slope(self) -> float:
        """The slope for x < 0."""

    @property
    def inplace(self) -> bool:
        """Whether the result is written into the input."""

    def extra_repr(self) -> str:
        """The constructor arguments as repr() shows them."""

class ELU(Module):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False, name: str = '') -> None:
        """
        alpha scales the negative part; inplace=True writes the result into the input.
        """

    @property
    def alpha(self) -> float:
        """The saturation value of the negative part is -alpha."""

    @property
    def inplace(self) -> bool:
        """Whether the result is written into the input."""

    def extra_repr(self) -> str:
        """The constructor arguments as repr() shows them."""

class CELU(Module):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)); alpha != 0."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False, name: str = '') -> None:
        """
        alpha (nonzero, else ValueError) scales the negative part; inplace=True writes the result into the input.
        """

    @property
    def alpha(self) -> float:
        """The alpha of max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""

    @property
    def inplace(self) -> bool:
        """Whether the result is written into the input."""

    def extra_repr(self) -> str:
        """The constructor arguments as repr() shows them."""

class Softplus(Module):
    """
    log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold.
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0, name: str = '') -> None:
        """
        beta (nonzero) sharpens the curve; above beta * x > threshold the output is x.
        """

    @property
    def beta(self) -> float:
        """The beta of log(1 + exp(beta * x)) / beta."""

    @property
    def threshold(self) -> float:
        """Above beta * x > threshold the output is x (linear, for stability)."""

    def extra_repr(self) -> str:
        """The constructor arguments as repr() shows them."""

class Hardtanh(Module):
    """
    clamp(x, min_val, max_val), with zero gradient at and beyond the bounds.
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False, name: str = '') -> None:
        """
        Clamps to [min_val, max_val] (min_val > max_val raises ValueError); inplace=True writes into the input.
        """

    @property
    def min_val(self) -> float:
        """The lower bound."""

    @property
    def max_val(self) -> float:
        """The upper bound."""

    @property
    def inplace(self) -> bool:
        """Whether the result is written into the input."""

    def extra_repr(self) -> str:
        """The constructor arguments as repr() shows them."""

class Threshold(Module):
    """x where x > threshold, value elsewhere."""

    def __init__(self, threshold: float, value: float, inplace: bool = False, name: str = '') -> None:
        """
        Keeps x where x > threshold and writes value elsewhere; inplace=True writes into the input.
        """

    @property
    def threshold(self) -> float:
        """Elements at or below it are replaced."""

    @property
    def value(self) -> float:
        """The replacement for elements at or below threshold."""

    @property
    def inplace(self) -> bool:
        """Whether the result is written into the input."""

    def extra_repr(self) -> str:
        """The constructor arguments as repr() shows them."""

class PReLU(Module):
    """
    max(0, x) + weight * min(0, x) with a learnable weight of shape (num_parameters,) filled with init; num_parameters is 1 or the channel count (dim 1 of the input).
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, name: str = '') -> None:
        """
        A learnable slope per channel (num_parameters = channels, dim 1 of the input) or one shared slope (1), each starting at init.
        """

    @property
    def num_parameters(self) -> int:
        """The number of learnable slopes (1 or the channel count)."""

    @property
    def weight(self) -> spiraltorch._core.Tensor:
        """The (num_parameters,) learnable slopes of the negative part."""

    def extra_repr(self) -> str:
        """The constructor arguments as repr() shows them."""

class GLU(Module):
    """a * sigmoid(b) for the two halves a, b of the input along dim."""

    def __init__(self, dim: int = -1, name: str = '') -> None:
        """Splits the input in halves along dim (its size must be even)."""

    @property
    def dim(self) -> int:
        """The dim split in halves."""

    def extra_repr(self) -> str:
        """The constructor arguments as repr() shows them."""

class LogSoftmax(Module):
    """log(softmax(x)) along dim (default -1), computed stably."""

    def __init__(self, dim: int = -1, name: str = '') -> None:
        """Log-softmax along dim."""

    @property
    def dim(self) -> int:
        """The dim normalised over."""

    def extra_repr(self) -> str:
        """The constructor arguments as repr() shows them."""

class Softmin(Module):
    """softmax(-x) along dim (default -1)."""

    def __init__(self, dim: int = -1, name: str = '') -> None:
        """Softmin along dim."""

    @property
    def dim(self) -> int:
        """The dim normalised over."""

    def extra_repr(self) -> str:
        """The constructor arguments as repr() shows them."""

def leaky_relu(input: spiraltorch._core.Tensor, negative_slope: float = 0.01, inplace: bool = False) -> spiraltorch._core.Tensor:
    """x for x > 0, negative_slope * x otherwise."""

def elu(input: spiraltorch._core.Tensor, alpha: float = 1.0, inplace: bool = False) -> spiraltorch._core.Tensor:
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""

def selu(input: spiraltorch._core.Tensor, inplace: bool = False) -> spiraltorch._core.Tensor:
    """scale * elu(x, alpha) with PyTorch's SELU constants."""

def celu(input: spiraltorch._core.Tensor, alpha: float = 1.0, inplace: bool = False) -> spiraltorch._core.Tensor:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""

def softplus(input: spiraltorch._core.Tensor, beta: float = 1.0, threshold: float = 20.0) -> spiraltorch._core.Tensor:
    """
    log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold.
    """

def mish(input: spiraltorch._core.Tensor, inplace: bool = False) -> spiraltorch._core.Tensor:
    """x * tanh(softplus(x))."""

def hardswish(input: spiraltorch._core.Tensor, inplace: bool = False) -> spiraltorch._core.Tensor:
    """x * clamp(x + 3, 0, 6) / 6."""

def hardsigmoid(input: spiraltorch._core.Tensor, inplace: bool = False) -> spiraltorch._core.Tensor:
    """clamp(x + 3, 0, 6) / 6."""

def hardtanh(input: spiraltorch._core.Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> spiraltorch._core.Tensor:
    """
    clamp(x, min_val, max_val), with zero gradient at and beyond the bounds.
    """

def relu6(input: spiraltorch._core.Tensor, inplace: bool = False) -> spiraltorch._core.Tensor:
    """min(max(x, 0), 6)."""

def logsigmoid(input: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor:
    """log(sigmoid(x)), computed as -softplus(-x)."""

def softsign(input: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor:
    """x / (1 + |x|)."""

def tanhshrink(input: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor:
    """x - tanh(x)."""

def threshold(input: spiraltorch._core.Tensor, threshold: float, value: float, inplace: bool = False) -> spiraltorch._core.Tensor:
    """x where x > threshold, value elsewhere."""

def prelu(input: spiraltorch._core.Tensor, weight: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor:
    """
    max(0, x) + weight * min(0, x); weight has 1 element or one per channel (dim 1).
    """

def glu(input: spiraltorch._core.Tensor, dim: int = -1) -> spiraltorch._core.Tensor:
    """
    a * sigmoid(b) for the two halves a, b of the input along dim (its size must be even).
    """

def softmin(input: spiraltorch._core.Tensor, dim: int = -1) -> spiraltorch._core.Tensor:
    """softmax(-x) along dim (default -1)."""

class GroupNorm(Module):
    """
    Normalises (N, C, *) inputs over groups of C / num_groups channels (with the trailing dims), then scales by weight (ones) and shifts by bias (zeros), both (num_channels,), when affine.
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-05, affine: bool = True, bias: bool = True, name: str = '') -> None:
        """
        num_channels must be divisible by num_groups (else ValueError); affine adds weight (ones) and, with bias=True, bias (zeros), both (num_channels,).
        """

    @property
    def num_groups(self) -> int:
        """The number of channel groups."""

    @property
    def num_channels(self) -> int:
        """The expected size of dim 1."""

    @property
    def eps(self) -> float:
        """Added to the variance for numerical stability."""

    @property
    def affine(self) -> bool:
        """Whether the layer has a learnable weight (and bias)."""

    @property
    def weight(self) -> spiraltorch._core.Tensor | None:
        """The (num_channels,) scale, or None when not affine."""

    @property
    def bias(self) -> spiraltorch._core.Tensor | None:
        """The (num_channels,) shift, or None."""

    def extra_repr(self) -> str:
        """The constructor arguments as repr() shows them."""

class RMSNorm(Module):
    """
    x / sqrt(mean(x^2 over the trailing normalized_shape dims) + eps) * weight; eps=None uses the machine epsilon of the input's dtype, weight (ones) of normalized_shape when elementwise_affine.
    """

    def __init__(self, normalized_shape: int | Sequence[int], eps: float | None = None, elementwise_affine: bool = True, name: str = '') -> None:
        """
        normalized_shape: the trailing dims normalised over (an int or a sequence); eps=None uses the dtype's machine epsilon; elementwise_affine adds a weight (ones) of that shape.
        """

    @property
    def normalized_shape(self) -> tuple[int, ...]:
        """The trailing dims normalised over."""

    @property
    def eps(self) -> float | None:
        """Added to the mean square, or None for the dtype's machine epsilon."""

    @property
    def elementwise_affine(self) -> bool:
        """Whether the layer has a learnable weight."""

    @property
    def weight(self) -> spiraltorch._core.Tensor | None:
        """The normalized_shape scale, or None when not elementwise_affine."""

    def extra_repr(self) -> str:
        """The constructor arguments as repr() shows them."""

class CosineSimilarity(Module):
    """Cosine similarity of x1 and x2 along dim; call with (x1, x2)."""

    def __init__(self, dim: int = 1, eps: float = 1e-08, name: str = '') -> None:
        """Similarity along dim; each vector norm is clamped to at least eps."""

    @property
    def dim(self) -> int:
        """The dim the similarity is taken along."""

    @property
    def eps(self) -> float:
        """The lower bound of each vector norm."""

    def forward(self, x1: spiraltorch._core.Tensor, x2: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor:
        """
        sum(x1 * x2) / (max(||x1||, eps) * max(||x2||, eps)) along dim after broadcasting; the result drops dim.
        """

    def __call__(self, x1: spiraltorch._core.Tensor, x2: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor:
        """forward(x1, x2)."""

    def extra_repr(self) -> str:
        """The constructor arguments as repr() shows them."""

class PairwiseDistance(Module):
    """||x1 - x2 + eps||_p over the last dim; call with (x1, x2)."""

    def __init__(self, p: float = 2.0, eps: float = 1e-06, keepdim: bool = False, name: str = '') -> None:
        """
        The p-norm distance over the last dim; eps is added to the difference; keepdim keeps that dim as size 1.
        """

    @property
    def norm(self) -> float:
        """The p of the norm (PyTorch's attribute name)."""

    @property
    def eps(self) -> float:
        """Added to x1 - x2 before the norm (keeps the gradient finite at 0)."""

    @property
    def keepdim(self) -> bool:
        """Whether the last dim stays as size 1."""

    def forward(self, x1: spiraltorch._core.Tensor, x2: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor:
        """
        ||x1 - x2 + eps||_p over the last dim of (N, D) or (D,) inputs: (N,) or () (keepdim adds a size-1 dim).
        """

    def __call__(self, x1: spiraltorch._core.Tensor, x2: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor:
        """forward(x1, x2)."""

    def extra_repr(self) -> str:
        """The constructor arguments as repr() shows them."""

def group_norm(input: spiraltorch._core.Tensor, num_groups: int, weight: spiraltorch._core.Tensor | None = None, bias: spiraltorch._core.Tensor | None = None, eps: float = 1e-05) -> spiraltorch._core.Tensor:
    """
    Group normalisation of (N, C, *) inputs; weight and bias are (C,) when given.
    """

def instance_norm(input: spiraltorch._core.Tensor, running_mean: spiraltorch._core.Tensor | None = None, running_var: spiraltorch._core.Tensor | None = None, weight: spiraltorch._core.Tensor | None = None, bias: spiraltorch._core.Tensor | None = None, use_input_stats: bool = True, momentum: float = 0.1, eps: float = 1e-05) -> spiraltorch._core.Tensor:
    """
    Instance normalisation of (N, C, *spatial): each (sample, channel) over its spatial dims, then weight/bias (C,). use_input_stats=False normalises with the running stats; otherwise given running stats move toward the batch average of the instance means and unbiased variances (in place).
    """

def rms_norm(input: spiraltorch._core.Tensor, normalized_shape: int | Sequence[int], weight: spiraltorch._core.Tensor | None = None, eps: float | None = None) -> spiraltorch._core.Tensor:
    """
    x / sqrt(mean(x^2 over the trailing normalized_shape dims) + eps) * weight; eps=None is the dtype's epsilon.
    """

def normalize(input: spiraltorch._core.Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> spiraltorch._core.Tensor:
    """x / max(||x||_p along dim, eps)."""

def cosine_similarity(x1: spiraltorch._core.Tensor, x2: spiraltorch._core.Tensor, dim: int = 1, eps: float = 1e-08) -> spiraltorch._core.Tensor:
    """
    Cosine similarity along dim after broadcasting; each norm is clamped to at least eps.
    """

def conv2d(input: spiraltorch._core.Tensor, weight: spiraltorch._core.Tensor, bias: spiraltorch._core.Tensor | None = None, stride: int | tuple[int, int] = 1, padding: int | tuple[int, int] | str = 0, dilation: int | tuple[int, int] = 1, groups: int = 1) -> spiraltorch._core.Tensor:
    """
    2-d convolution over (N, C, H, W) or (C, H, W) input; weight (out, C/groups, kh, kw). padding: int, tuple, 'same' or 'valid'.
    """

def conv1d(input: spiraltorch._core.Tensor, weight: spiraltorch._core.Tensor, bias: spiraltorch._core.Tensor | None = None, stride: int | tuple[int] = 1, padding: int | tuple[int] | str = 0, dilation: int | tuple[int] = 1, groups: int = 1) -> spiraltorch._core.Tensor:
    """
    1-d convolution over (N, C, L) or (C, L) input; weight (out, C/groups, k).
    """

def conv_transpose2d(input: spiraltorch._core.Tensor, weight: spiraltorch._core.Tensor, bias: spiraltorch._core.Tensor | None = None, stride: int | tuple[int, int] = 1, padding: int | tuple[int, int] = 0, output_padding: int | tuple[int, int] = 0, groups: int = 1, dilation: int | tuple[int, int] = 1) -> spiraltorch._core.Tensor:
    """
    2-d transposed convolution over (N, C_in, H, W) or (C_in, H, W) input; weight (C_in, C_out/groups, kh, kw). Returns (N, C_out, (H-1)*stride - 2*padding + dilation*(kh-1) + output_padding + 1, ...).
    """

def conv_transpose1d(input: spiraltorch._core.Tensor, weight: spiraltorch._core.Tensor, bias: spiraltorch._core.Tensor | None = None, stride: int | tuple[int] = 1, padding: int | tuple[int] = 0, output_padding: int | tuple[int] = 0, groups: int = 1, dilation: int | tuple[int] = 1) -> spiraltorch._core.Tensor:
    """
    1-d transposed convolution over (N, C_in, L) or (C_in, L) input; weight (C_in, C_out/groups, k).
    """

def max_pool2d(input: spiraltorch._core.Tensor, kernel_size: int | tuple[int, int], stride: int | tuple[int, int] | None = None, padding: int | tuple[int, int] = 0, dilation: int | tuple[int, int] = 1, ceil_mode: bool = False, return_indices: bool = False) -> spiraltorch._core.Tensor | tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor]:
    """
    2-d max pooling; stride defaults to kernel_size. return_indices=True also returns the int64 argmax positions in each flattened input plane.
    """

def avg_pool2d(input: spiraltorch._core.Tensor, kernel_size: int | tuple[int, int], stride: int | tuple[int, int] | None = None, padding: int | tuple[int, int] = 0, ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: int | None = None) -> spiraltorch._core.Tensor:
    """2-d average pooling with PyTorch's divisor rules."""

def adaptive_avg_pool2d(input: spiraltorch._core.Tensor, output_size: int | tuple[int | None, int | None]) -> spiraltorch._core.Tensor:
    """Average pooling to a fixed output size (H_out, W_out)."""

class Conv2d(Module):
    """
    2-d convolution layer; weight (out_channels, in_channels/groups, kh, kw), bias (out_channels,), Kaiming-uniform initialised like PyTorch.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int, int], stride: int | tuple[int, int] = 1, padding: int | tuple[int, int] | str = 0, dilation: int | tuple[int, int] = 1, groups: int = 1, bias: bool = True, padding_mode: str = 'zeros', dtype: spiraltorch._core.dtype | str | None = None, name: str = '') -> None:
        """
        Input (N, in_channels, H, W) or unbatched -> (N, out_channels, H_out, W_out). kernel_size, stride, dilation: an int or (h, w); padding: an int, (h, w), 'same' or 'valid'; in/out_channels must be divisible by groups. Only padding_mode='zeros' (else ValueError); dtype= converts the parameters. e.g. nn.Conv2d(3, 8, 3, padding=1)
        """

    @property
    def weight(self) -> spiraltorch._core.Tensor:
        """The (out_channels, in_channels/groups, kh, kw) weight parameter."""

    @property
    def bias(self) -> spiraltorch._core.Tensor | None:
        """The (out_channels,) bias parameter, or None (bias=False)."""

    @property
    def in_channels(self) -> int:
        """The expected size of the input's channel dim."""

    @property
    def out_channels(self) -> int:
        """The number of output channels."""

    @property
    def kernel_size(self) -> tuple[int, int]:
        """(kh, kw)."""

    @property
    def stride(self) -> tuple[int, int]:
        """(sh, sw)."""

    @property
    def padding(self) -> tuple[int, int] | str:
        """(ph, pw), or the string 'same'/'valid' it was given."""

    @property
    def dilation(self) -> tuple[int, int]:
        """(dh, dw)."""

    @property
    def groups(self) -> int:
        """
        The number of channel groups (in and out channels split into groups convolved separately).
        """

    def __repr__(self) -> str: ...

class Conv1d(Module):
    """
    1-d convolution layer; weight (out_channels, in_channels/groups, k), bias (out_channels,), Kaiming-uniform initialised like PyTorch.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int], stride: int | tuple[int] = 1, padding: int | tuple[int] | str = 0, dilation: int | tuple[int] = 1, groups: int = 1, bias: bool = True, padding_mode: str = 'zeros', dtype: spiraltorch._core.dtype | str | None = None, name: str = '') -> None:
        """
        Input (N, in_channels, L) or (in_channels, L) -> (N, out_channels, L_out). kernel_size, stride, dilation: an int or (k,); padding: an int, (p,), 'same' or 'valid'; in/out_channels must be divisible by groups. Only padding_mode='zeros' (else ValueError); dtype= converts the parameters.
        """

    @property
    def weight(self) -> spiraltorch._core.Tensor:
        """The (out_channels, in_channels/groups, k) weight parameter."""

    @property
    def bias(self) -> spiraltorch._core.Tensor | None:
        """The (out_channels,) bias parameter, or None (bias=False)."""

    @property
    def in_channels(self) -> int:
        """The expected size of the input's channel dim."""

    @property
    def out_channels(self) -> int:
        """The number of output channels."""

    @property
    def kernel_size(self) -> tuple[int]:
        """(k,)."""

    @property
    def stride(self) -> tuple[int]:
        """(s,)."""

    @property
    def padding(self) -> tuple[int] | str:
        """(p,), or the string 'same'/'valid' it was given."""

    @property
    def dilation(self) -> tuple[int]:
        """(d,)."""

    @property
    def groups(self) -> int:
        """
        The number of channel groups (in and out channels split into groups convolved separately).
        """

    def __repr__(self) -> str: ...

class MaxPool2d(Module):
    """2-d max pooling; stride defaults to kernel_size."""

    def __init__(self, kernel_size: int | tuple[int, int], stride: int | tuple[int, int] | None = None, padding: int | tuple[int, int] = 0, dilation: int | tuple[int, int] = 1, ceil_mode: bool = False, name: str = '') -> None:
        """
        Max over kernel_size windows of (N, C, H, W) or (C, H, W) inputs; stride defaults to kernel_size; padding (at most half the kernel) pads with -inf; ceil_mode rounds the output size up.
        """

    @property
    def kernel_size(self) -> tuple[int, int]:
        """(kh, kw)."""

    @property
    def stride(self) -> tuple[int, int]:
        """(sh, sw)."""

    @property
    def padding(self) -> tuple[int, int]:
        """(ph, pw)."""

    @property
    def dilation(self) -> tuple[int, int]:
        """(dh, dw)."""

    @property
    def ceil_mode(self) -> bool:
        """Whether the output size is rounded up (a last partial window is kept)."""

    def __repr__(self) -> str: ...

class AvgPool2d(Module):
    """2-d average pooling; stride defaults to kernel_size."""

    def __init__(self, kernel_size: int | tuple[int, int], stride: int | tuple[int, int] | None = None, padding: int | tuple[int, int] = 0, ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: int | None = None, name: str = '') -> None:
        """
        Mean over kernel_size windows of (N, C, H, W) or (C, H, W) inputs; stride defaults to kernel_size; count_include_pad counts zero padding in the divisor; divisor_override (positive) replaces the divisor.
        """

    @property
    def kernel_size(self) -> tuple[int, int]:
        """(kh, kw)."""

    @property
    def stride(self) -> tuple[int, int]:
        """(sh, sw)."""

    @property
    def padding(self) -> tuple[int, int]:
        """(ph, pw)."""

    @property
    def ceil_mode(self) -> bool:
        """Whether the output size is rounded up (a last partial window is kept)."""

    @property
    def count_include_pad(self) -> bool:
        """Whether zero padding counts in the divisor."""

    def __repr__(self) -> str: ...

class AdaptiveAvgPool2d(Module):
    """Average pooling to a fixed output size."""

    def __init__(self, output_size: int | tuple[int, int], name: str = '') -> None:
        """
        Average pooling of (N, C, H, W) or (C, H, W) inputs to output_size (an int or (H_out, W_out)), with PyTorch's window bounds floor(i*H/H_out)..ceil((i+1)*H/H_out).
        """

    @property
    def output_size(self) -> tuple[int, int]:
        """(H_out, W_out)."""

    def __repr__(self) -> str: ...

class RNNBase(Module):
    """Shared base of RNN, LSTM and GRU."""

    @property
    def input_size(self) -> int:
        """The size of each input step's features."""

    @property
    def hidden_size(self) -> int:
        """The size of the hidden state."""

    @property
    def num_layers(self) -> int:
        """The number of stacked layers."""

    @property
    def bias(self) -> bool:
        """Whether the layers have bias_ih/bias_hh parameters."""

    @property
    def batch_first(self) -> bool:
        """
        True: input and output are (batch, seq, feature); False: (seq, batch, feature).
        """

    @property
    def dropout(self) -> float:
        """
        The dropout probability on each layer's output except the last (in training).
        """

    @property
    def bidirectional(self) -> bool:
        """
        Whether each layer also runs over the reversed sequence (output features 2 * hidden_size, states (num_layers * 2, batch, hidden_size)).
        """

    def __repr__(self) -> str: ...

class LSTM(RNNBase):
    """
    Multi-layer LSTM with PyTorch's parameters (weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}; gate order i, f, g, o; bidirectional adds weight_ih_l{k}_reverse, ...).

    batch_first defaults to False as in PyTorch (input (seq, batch, feature)); pass batch_first=True for (batch, seq, feature); input may also be a nn.utils.rnn.PackedSequence (output then packed too). forward(input, h0=None) returns (output, (h_n, c_n)); h0 is a tuple (h_0, c_0) of (num_layers * num_directions, batch, hidden) tensors, or just h_0, or None.
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0, name: str = '') -> None:
        """
        Weights U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) like PyTorch; dropout applies between layers in training; proj_size > 0 projects h to proj_size features (weight_hr_l{k}). e.g. out, (h, c) = nn.LSTM(8, 16, batch_first=True)(st.randn(2, 5, 8))
        """

    @property
    def proj_size(self) -> int:
        """Features of h with a projection (0: none, h has hidden_size)."""

    def forward(self, input: spiraltorch._core.Tensor | spiraltorch.nn.utils.rnn.PackedSequence, h0: spiraltorch._core.Tensor | tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor] | None = None) -> tuple[spiraltorch._core.Tensor | spiraltorch.nn.utils.rnn.PackedSequence, tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor]]:
        """
        Runs the sequence: input (seq, batch, input_size) (batch_first: (batch, seq, input_size)), unbatched (seq, input_size), or a PackedSequence. Returns (output, (h_n, c_n)): output (..., hidden_size) from the last layer at every step (2 * hidden_size with bidirectional: forward, then backward), h_n and c_n (num_layers * num_directions, batch, hidden_size). h0: (h_0, c_0), h_0 alone or None (zeros).
        """

    def __call__(self, input: spiraltorch._core.Tensor | spiraltorch.nn.utils.rnn.PackedSequence, h0: spiraltorch._core.Tensor | tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor] | None = None) -> tuple[spiraltorch._core.Tensor | spiraltorch.nn.utils.rnn.PackedSequence, tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor]]:
        """forward(input, h0)."""

class GRU(RNNBase):
    """
    Multi-layer GRU with PyTorch's parameters (gate order r, z, n).

    batch_first defaults to False as in PyTorch (input (seq, batch, feature)), or a nn.utils.rnn.PackedSequence. forward(input, h0=None) returns (output, h_n).
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, name: str = '') -> None:
        """
        Weights U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) like PyTorch; dropout applies between layers in training.
        """

    def forward(self, input: spiraltorch._core.Tensor | spiraltorch.nn.utils.rnn.PackedSequence, h0: spiraltorch._core.Tensor | None = None) -> tuple[spiraltorch._core.Tensor | spiraltorch.nn.utils.rnn.PackedSequence, spiraltorch._core.Tensor]:
        """
        Runs the sequence: input (seq, batch, input_size) (batch_first: (batch, seq, input_size)), unbatched (seq, input_size), or a PackedSequence. Returns (output, h_n): output (..., hidden_size) from the last layer at every step (2 * hidden_size with bidirectional), h_n (num_layers * num_directions, batch, hidden_size); h0 None means zeros.
        """

    def __call__(self, input: spiraltorch._core.Tensor | spiraltorch.nn.utils.rnn.PackedSequence, h0: spiraltorch._core.Tensor | None = None) -> tuple[spiraltorch._core.Tensor | spiraltorch.nn.utils.rnn.PackedSequence, spiraltorch._core.Tensor]:
        """forward(input, h0)."""

class RNN(RNNBase):
    """
    Multi-layer Elman RNN with PyTorch's parameters: h' = tanh(W_ih x + b_ih + W_hh h + b_hh) (nonlinearity 'relu' for ReLU).

    batch_first defaults to False as in PyTorch (input (seq, batch, feature)), or a nn.utils.rnn.PackedSequence. forward(input, h0=None) returns (output, h_n).
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = 'tanh', bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, name: str = '') -> None:
        """
        Weights U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) like PyTorch; dropout applies between layers in training. e.g. out, h = nn.RNN(8, 16, batch_first=True)(st.randn(2, 5, 8))
        """

    @property
    def nonlinearity(self) -> str:
        """'tanh' or 'relu'."""

    def forward(self, input: spiraltorch._core.Tensor | spiraltorch.nn.utils.rnn.PackedSequence, h0: spiraltorch._core.Tensor | None = None) -> tuple[spiraltorch._core.Tensor | spiraltorch.nn.utils.rnn.PackedSequence, spiraltorch._core.Tensor]:
        """
        Runs the sequence: input (seq, batch, input_size) (batch_first: (batch, seq, input_size)), unbatched (seq, input_size), or a PackedSequence. Returns (output, h_n): output (..., hidden_size) from the last layer at every step (2 * hidden_size with bidirectional), h_n (num_layers * num_directions, batch, hidden_size); h0 None means zeros.
        """

    def __call__(self, input: spiraltorch._core.Tensor | spiraltorch.nn.utils.rnn.PackedSequence, h0: spiraltorch._core.Tensor | None = None) -> tuple[spiraltorch._core.Tensor | spiraltorch.nn.utils.rnn.PackedSequence, spiraltorch._core.Tensor]:
        """forward(input, h0)."""

class MultiheadAttention(Module):
    """
    Multi-head attention with torch.nn.MultiheadAttention's parameters (in_proj_weight, in_proj_bias, out_proj.weight, out_proj.bias) and masks (bool True = blocked, or float added).

    batch_first defaults to False as in PyTorch. forward(query, key, value, attn_mask=None, key_padding_mask=None, need_weights=True, is_causal=False, average_attn_weights=True) returns (output, weights or None); key/value default to query. is_causal without attn_mask applies the causal mask.
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True, batch_first: bool = False, name: str = '') -> None:
        """
        embed_dim must be divisible by num_heads (else ValueError); dropout applies to the attention weights in training. e.g. out, w = nn.MultiheadAttention(16, 4, batch_first=True)(q, q, q)
        """

    def forward(self, query: spiraltorch._core.Tensor, key: spiraltorch._core.Tensor | None = None, value: spiraltorch._core.Tensor | None = None, attn_mask: spiraltorch._core.Tensor | None = None, key_padding_mask: spiraltorch._core.Tensor | None = None, need_weights: bool = True, is_causal: bool = False, average_attn_weights: bool = True) -> tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor | None]:
        """
        Attention of query (L, N, E) over key (S, N, E) and value (S, N, E) (batch_first: batch first; unbatched (L, E) too); key and value default to query. attn_mask (L, S) or (N*heads, L, S): bool True = blocked, or float added; key_padding_mask (N, S) blocks padded keys. Returns (output like query, weights (N, L, S) averaged over heads, or per head (N, heads, L, S) without average_attn_weights, or None without need_weights).
        """

    def __call__(self, query: spiraltorch._core.Tensor, key: spiraltorch._core.Tensor | None = None, value: spiraltorch._core.Tensor | None = None, attn_mask: spiraltorch._core.Tensor | None = None, key_padding_mask: spiraltorch._core.Tensor | None = None, need_weights: bool = True, is_causal: bool = False, average_attn_weights: bool = True) -> tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor | None]:
        """forward(query, key, value, ...)."""

    @property
    def embed_dim(self) -> int:
        """The model dim E of query and output."""

    @property
    def num_heads(self) -> int:
        """The number of attention heads."""

    @property
    def head_dim(self) -> int:
        """embed_dim // num_heads."""

    @property
    def dropout(self) -> float:
        """The dropout probability on attention weights."""

    @property
    def batch_first(self) -> bool:
        """Whether inputs are (batch, seq, embed)."""

    @property
    def in_proj_weight(self) -> spiraltorch._core.Tensor:
        """The (3 * embed_dim, embed_dim) stacked query/key/value projection."""

    @property
    def in_proj_bias(self) -> spiraltorch._core.Tensor | None:
        """The (3 * embed_dim,) projection bias, or None (bias=False)."""

    @property
    def out_proj(self) -> Linear:
        """The output projection (a Linear)."""

    def __repr__(self) -> str: ...

class TransformerEncoderLayer(Module):
    """
    torch.nn.TransformerEncoderLayer with the same children (self_attn, linear1, dropout, linear2, norm1, norm2, dropout1, dropout2) and parameter names.

    batch_first defaults to False as in PyTorch. forward(src, src_mask=None, src_key_padding_mask=None, is_causal=False) (PyTorch's argument order); is_causal without src_mask applies the causal mask.
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1, activation: str | Callable = 'relu', batch_first: bool = False, norm_first: bool = False, layer_norm_eps: float = 1e-05, name: str = '') -> None:
        """
        Self-attention (nhead heads over d_model) and a feed-forward block d_model -> dim_feedforward -> d_model, each with dropout, a residual and a LayerNorm (after, or before with norm_first); activation 'relu', 'gelu' or 'gelu_tanh' (GELU's tanh approximation), or PyTorch's callable forms of these: nn.ReLU(), nn.GELU(approximate=...), F.relu, F.gelu, functools.partial(F.gelu, approximate='tanh').
        """

    def forward(self, src: spiraltorch._core.Tensor, src_mask: spiraltorch._core.Tensor | None = None, src_key_padding_mask: spiraltorch._core.Tensor | None = None, is_causal: bool = False) -> spiraltorch._core.Tensor:
        """
        Encodes src (seq, batch, d_model) (batch_first: batch first; unbatched (seq, d_model) too); src_mask (seq, seq): bool True = blocked or float added; src_key_padding_mask (batch, seq) blocks padded positions. Returns a tensor shaped like src.
        """

    def __call__(self, src: spiraltorch._core.Tensor, src_mask: spiraltorch._core.Tensor | None = None, src_key_padding_mask: spiraltorch._core.Tensor | None = None, is_causal: bool = False) -> spiraltorch._core.Tensor:
        """forward(src, src_mask, src_key_padding_mask, is_causal)."""

    @property
    def self_attn(self) -> MultiheadAttention:
        """The self-attention block (a MultiheadAttention)."""

    @property
    def linear1(self) -> Linear:
        """The feed-forward input projection d_model -> dim_feedforward."""

    @property
    def linear2(self) -> Linear:
        """The feed-forward output projection dim_feedforward -> d_model."""

    @property
    def norm1(self) -> LayerNorm:
        """The LayerNorm of the self-attention block."""

    @property
    def norm2(self) -> LayerNorm:
        """The LayerNorm of the feed-forward block."""

    @property
    def dropout(self) -> Dropout:
        """The dropout inside the feed-forward block."""

    @property
    def dropout1(self) -> Dropout:
        """The dropout after self-attention."""

    @property
    def dropout2(self) -> Dropout:
        """The dropout after the feed-forward block."""

    @property
    def norm_first(self) -> bool:
        """
        Whether each block normalises its input (pre-norm) instead of its output.
        """

    @property
    def activation(self) -> str:
        """The feed-forward activation, 'relu', 'gelu' or 'gelu_tanh'."""

    def __repr__(self) -> str: ...

    def clone(self) -> TransformerEncoderLayer:
        """
        A new layer with this one's configuration, copies of its current values (same device and dtype), its requires_grad flags and its train/eval mode.
        """

class TransformerEncoder(Module):
    """
    torch.nn.TransformerEncoder: num_layers independent copies of encoder_layer (its configuration and current values, as PyTorch's deep copies), applied in order, then norm if given. Children: layers (indexable) and norm; keys 'layers.0.self_attn::in_proj_weight', 'norm::weight'.

    forward(src, mask=None, src_key_padding_mask=None, is_causal=None) returns the encoded src (same shape); the masks go to every layer.
    """

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm: Module | None = None, enable_nested_tensor: bool = True, mask_check: bool = True, name: str = '') -> None:
        """
        num_layers copies of encoder_layer, then norm (a module, or None); enable_nested_tensor and mask_check are accepted for PyTorch compatibility and ignored.
        """

    def forward(self, src: spiraltorch._core.Tensor, mask: spiraltorch._core.Tensor | None = None, src_key_padding_mask: spiraltorch._core.Tensor | None = None, is_causal: bool | None = None) -> spiraltorch._core.Tensor:
        """
        Runs src (shaped as the layers expect) through every layer with the same masks, then norm; returns a tensor shaped like src. is_causal=True without mask applies the causal mask.
        """

    def __call__(self, src: spiraltorch._core.Tensor, mask: spiraltorch._core.Tensor | None = None, src_key_padding_mask: spiraltorch._core.Tensor | None = None, is_causal: bool | None = None) -> spiraltorch._core.Tensor:
        """forward(src, mask, src_key_padding_mask, is_causal)."""

    @property
    def num_layers(self) -> int:
        """The number of stacked layers."""

    @property
    def norm(self) -> Module:
        """The final normalisation module, or None."""

    @property
    def layers(self) -> list[TransformerEncoderLayer]:
        """The layers, in order (a list)."""

    def __repr__(self) -> str: ...

class TransformerDecoderLayer(Module):
    """
    torch.nn.TransformerDecoderLayer with the same children (self_attn, multihead_attn, linear1, dropout, linear2, norm1, norm2, norm3, dropout1, dropout2, dropout3) and parameter names.

    batch_first defaults to False as in PyTorch. forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False) returns the decoded tgt.
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1, activation: str | Callable = 'relu', batch_first: bool = False, norm_first: bool = False, layer_norm_eps: float = 1e-05, name: str = '') -> None:
        """
        Self-attention, cross-attention over the encoder's memory and a feed-forward block d_model -> dim_feedforward -> d_model, each with dropout, a residual and a LayerNorm (after, or before with norm_first); activation 'relu', 'gelu' or 'gelu_tanh', or nn.ReLU(), nn.GELU(approximate=...), F.relu, F.gelu, functools.partial(F.gelu, approximate='tanh').
        """

    def forward(self, tgt: spiraltorch._core.Tensor, memory: spiraltorch._core.Tensor, tgt_mask: spiraltorch._core.Tensor | None = None, memory_mask: spiraltorch._core.Tensor | None = None, tgt_key_padding_mask: spiraltorch._core.Tensor | None = None, memory_key_padding_mask: spiraltorch._core.Tensor | None = None, tgt_is_causal: bool = False, memory_is_causal: bool = False) -> spiraltorch._core.Tensor:
        """
        Decodes tgt (T, batch, d_model) against memory (S, batch, d_model) (batch_first: batch first); tgt_mask (T, T) / memory_mask (T, S): bool True = blocked or float added; the key padding masks (batch, T) / (batch, S) block padded positions; *_is_causal apply the causal mask when the mask is None. Returns a tensor shaped like tgt.
        """

    def __call__(self, tgt: spiraltorch._core.Tensor, memory: spiraltorch._core.Tensor, tgt_mask: spiraltorch._core.Tensor | None = None, memory_mask: spiraltorch._core.Tensor | None = None, tgt_key_padding_mask: spiraltorch._core.Tensor | None = None, memory_key_padding_mask: spiraltorch._core.Tensor | None = None, tgt_is_causal: bool = False, memory_is_causal: bool = False) -> spiraltorch._core.Tensor:
        """forward(tgt, memory, ...)."""

    @property
    def self_attn(self) -> MultiheadAttention:
        """The self-attention block (a MultiheadAttention)."""

    @property
    def multihead_attn(self) -> MultiheadAttention:
        """The cross-attention block over memory (a MultiheadAttention)."""

    @property
    def linear1(self) -> Linear:
        """The feed-forward input projection d_model -> dim_feedforward."""

    @property
    def linear2(self) -> Linear:
        """The feed-forward output projection dim_feedforward -> d_model."""

    @property
    def norm1(self) -> LayerNorm:
        """The LayerNorm of the self-attention block."""

    @property
    def norm2(self) -> LayerNorm:
        """The LayerNorm of the cross-attention block."""

    @property
    def norm3(self) -> LayerNorm:
        """The LayerNorm of the feed-forward block."""

    @property
    def dropout(self) -> Dropout:
        """The dropout inside the feed-forward block."""

    @property
    def dropout1(self) -> Dropout:
        """The dropout after self-attention."""

    @property
    def dropout2(self) -> Dropout:
        """The dropout after cross-attention."""

    @property
    def dropout3(self) -> Dropout:
        """The dropout after the feed-forward block."""

    @property
    def norm_first(self) -> bool:
        """
        Whether each block normalises its input (pre-norm) instead of its output.
        """

    @property
    def activation(self) -> str:
        """The feed-forward activation, 'relu', 'gelu' or 'gelu_tanh'."""

    def __repr__(self) -> str: ...

    def clone(self) -> TransformerDecoderLayer:
        """
        A new layer with this one's configuration, copies of its current values (same device and dtype), its requires_grad flags and its train/eval mode.
        """

class TransformerDecoder(Module):
    """
    torch.nn.TransformerDecoder: num_layers independent copies of decoder_layer, applied in order, then norm if given. Children: layers (indexable) and norm.

    forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False).
    """

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None, name: str = '') -> None:
        """
        num_layers copies of decoder_layer (its configuration and current values), then norm (a module, or None).
        """

    def forward(self, tgt: spiraltorch._core.Tensor, memory: spiraltorch._core.Tensor, tgt_mask: spiraltorch._core.Tensor | None = None, memory_mask: spiraltorch._core.Tensor | None = None, tgt_key_padding_mask: spiraltorch._core.Tensor | None = None, memory_key_padding_mask: spiraltorch._core.Tensor | None = None, tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> spiraltorch._core.Tensor:
        """
        Runs tgt through every layer against memory with the same masks, then norm; returns a tensor shaped like tgt.
        """

    def __call__(self, tgt: spiraltorch._core.Tensor, memory: spiraltorch._core.Tensor, tgt_mask: spiraltorch._core.Tensor | None = None, memory_mask: spiraltorch._core.Tensor | None = None, tgt_key_padding_mask: spiraltorch._core.Tensor | None = None, memory_key_padding_mask: spiraltorch._core.Tensor | None = None, tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> spiraltorch._core.Tensor:
        """forward(tgt, memory, ...)."""

    @property
    def num_layers(self) -> int:
        """The number of stacked layers."""

    @property
    def norm(self) -> Module:
        """The final normalisation module, or None."""

    @property
    def layers(self) -> list[TransformerDecoderLayer]:
        """The layers, in order (a list)."""

    def __repr__(self) -> str: ...

class Transformer(Module):
    """
    torch.nn.Transformer: a TransformerEncoder and a TransformerDecoder (each closed by a LayerNorm), matrices Xavier-uniform like PyTorch's reset. Children encoder and decoder, PyTorch's keys (a subclass may replace them, as PyTorch's word_language_model replaces decoder with a Linear; forward then refuses to run).

    batch_first defaults to False as in PyTorch. forward(src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None, memory_is_causal=False) returns the decoded tgt.
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6, num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1, activation: str | Callable = 'relu', custom_encoder: Module | None = None, custom_decoder: Module | None = None, layer_norm_eps: float = 1e-05, batch_first: bool = False, norm_first: bool = False, bias: bool = True, name: str = '') -> None:
        """
        An encoder of num_encoder_layers and a decoder of num_decoder_layers layers (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, norm_first as in the layers). custom_encoder/custom_decoder and bias=False raise ValueError (not supported). e.g. nn.Transformer(d_model=32, nhead=4, num_encoder_layers=2, num_decoder_layers=2)
        """

    def forward(self, src: spiraltorch._core.Tensor, tgt: spiraltorch._core.Tensor, src_mask: spiraltorch._core.Tensor | None = None, tgt_mask: spiraltorch._core.Tensor | None = None, memory_mask: spiraltorch._core.Tensor | None = None, src_key_padding_mask: spiraltorch._core.Tensor | None = None, tgt_key_padding_mask: spiraltorch._core.Tensor | None = None, memory_key_padding_mask: spiraltorch._core.Tensor | None = None, src_is_causal: bool | None = None, tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> spiraltorch._core.Tensor:
        """
        Encodes src (S, N, d_model) and decodes tgt (T, N, d_model) against it (batch_first: batch first); masks as in TransformerEncoder/TransformerDecoder. Returns (T, N, d_model). ValueError when a subclass replaced encoder or decoder.
        """

    def __call__(self, src: spiraltorch._core.Tensor, tgt: spiraltorch._core.Tensor, src_mask: spiraltorch._core.Tensor | None = None, tgt_mask: spiraltorch._core.Tensor | None = None, memory_mask: spiraltorch._core.Tensor | None = None, src_key_padding_mask: spiraltorch._core.Tensor | None = None, tgt_key_padding_mask: spiraltorch._core.Tensor | None = None, memory_key_padding_mask: spiraltorch._core.Tensor | None = None, src_is_causal: bool | None = None, tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> spiraltorch._core.Tensor:
        """forward(src, tgt, ...)."""

    @property
    def encoder(self) -> Module | None:
        """
        The child 'encoder' (a TransformerEncoder unless a subclass replaced it).
        """

    @property
    def decoder(self) -> Module | None:
        """
        The child 'decoder' (a TransformerDecoder unless a subclass replaced it).
        """

    @property
    def d_model(self) -> int:
        """The model dim."""

    @property
    def nhead(self) -> int:
        """The number of attention heads."""

    @property
    def batch_first(self) -> bool:
        """Whether inputs are (batch, seq, d_model)."""

    @staticmethod
    def generate_square_subsequent_mask(sz: int) -> spiraltorch._core.Tensor:
        """A float (sz, sz) causal mask: 0 on and below the diagonal, -inf above."""

    def __repr__(self) -> str: ...

def scaled_dot_product_attention(query: spiraltorch._core.Tensor, key: spiraltorch._core.Tensor, value: spiraltorch._core.Tensor, attn_mask: spiraltorch._core.Tensor | None = None, dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None) -> spiraltorch._core.Tensor:
    """
    softmax(q k^T * scale + mask) v like torch.nn.functional.scaled_dot_product_attention: attn_mask is bool (True = may attend) or float (added); is_causal masks keys after each query; scale defaults to 1/sqrt(head_dim).
    """

def generate_square_subsequent_mask(sz: int, dtype: spiraltorch._core.dtype | str | None = None, device: str | spiraltorch.accelerator.device | None = None) -> spiraltorch._core.Tensor:
    """
    A float (sz, sz) causal mask: 0 on and below the diagonal, -inf above (like torch.nn.Transformer.generate_square_subsequent_mask).
    """

class WaveRnn(Module):
    """
    Attentionless recurrent layer: a causal convolution over the last `kernel_size` inputs gives the gate pre-activations of a GRU-style gated recurrence, and each hidden state is mapped into the Poincare ball (exp_0, `curvature`).

    Input (batch, seq, input_size). forward(input, lengths=None, h0=None) returns (output (batch, seq, hidden) in the ball, h_n (batch, hidden)); with `lengths` (int64, one per right-padded row) outputs past a row's length are zero and h_n is its state after the last valid step.
    """

    def __init__(self, input_size: int, hidden_size: int, kernel_size: int = 3, curvature: float = -1.0, name: str = '') -> None:
        """
        input_size -> hidden_size with a causal window of kernel_size steps; curvature (negative) of the Poincare ball the states are mapped into.
        """

    def forward(self, input: spiraltorch._core.Tensor, lengths: spiraltorch._core.Tensor | None = None, h0: spiraltorch._core.Tensor | None = None) -> tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor]:
        """
        (output (batch, seq, hidden_size), h_n (batch, hidden_size)) for input (batch, seq, input_size); lengths (int64, one per row) marks right padding; h0 (batch, hidden_size) or None (zeros).
        """

    def __call__(self, input: spiraltorch._core.Tensor, lengths: spiraltorch._core.Tensor | None = None, h0: spiraltorch._core.Tensor | None = None) -> tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor]:
        """forward(input, lengths, h0)."""

    @property
    def input_size(self) -> int:
        """The size of each input step."""

    @property
    def hidden_size(self) -> int:
        """The size of the hidden state."""

    @property
    def kernel_size(self) -> int:
        """The causal convolution window (steps)."""

    @property
    def curvature(self) -> float:
        """The (negative) curvature of the Poincare ball."""

    def extra_repr(self) -> str:
        """The constructor arguments as repr() shows them."""

class WaveGate(Module):
    """
    Highway gate per position, mapped into the Poincare ball: g = sigmoid(x W_g^T + b_g), v = tanh(x W_v^T + b_v), y = exp_0(g * v + (1 - g) * x). Works on any (..., features) input.
    """

    def __init__(self, features: int, curvature: float = -1.0, name: str = '') -> None:
        """
        Gate and value projections features -> features (Linear-style init); curvature (negative) of the ball.
        """

    def gate(self, input: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor:
        """The gate g = sigmoid(x W_g^T + b_g) for an input."""

    @property
    def features(self) -> int:
        """The size of the last dim, in and out."""

    @property
    def curvature(self) -> float:
        """The (negative) curvature of the Poincare ball."""

    def extra_repr(self) -> str:
        """The constructor arguments as repr() shows them."""

class ZSpaceMixer(Module):
    """
    Causal depthwise mixing along time: y[b, t, f] = sum_k weight[f, K-1-k] * x[b, t-k, f]. Input (batch, seq, features), or (batch, features) for one step (y = x * weight[:, K-1]). Initialised to the identity.
    """

    def __init__(self, features: int, kernel_size: int = 4, name: str = '') -> None:
        """
        A (features, kernel_size) depthwise causal kernel, initialised to the identity (1 at the current step).
        """

    @property
    def features(self) -> int:
        """The size of the last dim, in and out."""

    @property
    def kernel_size(self) -> int:
        """The number of past steps mixed (including the current one)."""

    @property
    def weight(self) -> spiraltorch._core.Tensor:
        """The (features, kernel_size) mixing weights."""

    def extra_repr(self) -> str:
        """The constructor arguments as repr() shows them."""

class FeatureReorder2d(Module):
    """
    Moves image features between channel-last (NHWC) and the canonical channel-first (NCHW) layout. Input (batch, C*H*W) (output flattened too) or 4-d; layout 'NCHW' is the identity; direction 'to_canonical' ('to') or 'from_canonical' ('from').
    """

    def __init__(self, channels: int, height: int, width: int, layout: str = 'NCHW', direction: str = 'to_canonical', name: str = '') -> None:
        """
        An image of channels x height x width; layout 'NCHW' (identity) or 'NHWC'; direction 'to_canonical' ('to') or 'from_canonical' ('from'). ValueError for other strings.
        """

    @property
    def shape(self) -> tuple[int, int, int]:
        """(channels, height, width)."""

    @property
    def layout(self) -> str:
        """'NCHW' or 'NHWC'."""

    @property
    def direction(self) -> str:
        """'to_canonical' or 'from_canonical'."""

    def extra_repr(self) -> str:
        """The constructor arguments as repr() shows them."""

class DesireTrainerBridge:
    """
    Collects the steps of the pipelines it is attached to; drain_summary() returns per-phase counts and mean entropy, temperature and weights since the last drain (None when empty).
    """

    def __init__(self) -> None:
        """
        An empty bridge; attach it to pipelines (attach_trainer_bridge) to collect their steps.
        """

    def __len__(self) -> int:
        """The number of steps collected since the last drain."""

    def is_empty(self) -> bool:
        """True when no step was collected since the last drain."""

    def drain_summary(self) -> dict[str, float] | None:
        """
        Per-phase step counts and mean entropy, temperature and weights of the collected steps, then clears them; None when empty.
        """

class DesireRoundtableBridge:
    """
    Turns each step's weights into roundtable band multipliers: bary = (alpha, gamma, beta) / sum, multipliers (above, here, beneath) = clamp(1 + blend * (bary - 1/3), 0.35, 1.65), drift = clamp(tanh(lambda) * drift_gain, -1, 1). blend and drift_gain are clamped to [0, 1].
    """

    def __init__(self, blend: float = 0.35, drift_gain: float = 0.35) -> None:
        """
        blend and drift_gain are clamped to [0, 1]; attach it to pipelines (attach_roundtable_bridge).
        """

    @property
    def blend(self) -> float:
        """
        How far the multipliers move from 1 with the weights' barycentre, in [0, 1].
        """

    @blend.setter
    def blend(self, arg: float, /) -> None: ...

    @property
    def drift_gain(self) -> float:
        """The scale of drift = tanh(lambda) * drift_gain, in [0, 1]."""

    @drift_gain.setter
    def drift_gain(self, arg: float, /) -> None: ...

    def impulse(self) -> dict | None:
        """
        The latest {'multipliers': (above, here, beneath), 'drift'}, or None before any step.
        """

    def drain_summary(self) -> dict[str, float] | None:
        """
        Mean multipliers and drift of the collected steps, then clears them; None when empty.
        """

class DesireTelemetryBundle:
    """
    A trainer bridge and a roundtable bridge, shared with every pipeline built with bundle=this.
    """

    def __init__(self, *, trainer: bool = True, roundtable: bool = True, blend: float = 0.35, drift_gain: float = 0.35) -> None:
        """
        A trainer bridge (trainer=True) and a roundtable bridge (roundtable=True, with blend and drift_gain) to share between pipelines.
        """

    def has_trainer(self) -> bool:
        """Whether the bundle holds a trainer bridge."""

    def has_roundtable(self) -> bool:
        """Whether the bundle holds a roundtable bridge."""

    def trainer_bridge(self) -> DesireTrainerBridge:
        """The trainer bridge, or None."""

    def roundtable_bridge(self) -> DesireRoundtableBridge:
        """The roundtable bridge, or None."""

    def drain_trainer_summary(self) -> dict[str, float] | None:
        """The trainer bridge's drain_summary(), or None without one."""

    def drain_roundtable_summary(self) -> dict[str, float] | None:
        """The roundtable bridge's drain_summary(), or None without one."""

class DesirePipeline:
    """
    Reshapes a next-token distribution: score_i = log_softmax(l)_i / T + alpha * transition[prev, i] + beta * avoidance_i + gamma * sum_k c_k bridge[i, k] - lambda * repression_i, q = softmax(score); T follows eta * (target_entropy - H(q)) within [temp_min, temp_max]. Phases observation -> injection -> integration by step count; alpha and beta warm up over integration_horizon steps. The defaults (all weights 0, eta 0) leave the distribution unchanged. See spiraltorch/nn/desire.h for every formula.
    """

    def __init__(self, vocab_size: int, *, concepts: int = 3, alpha_end: float = 0.0, beta_end: float = 0.0, gamma: float = 0.0, lambda_: float = 0.0, observation_horizon: int = 1, integration_horizon: int = 2, target_entropy: float = 0.8, eta: float = 0.0, temp_min: float = 0.4, temp_max: float = 1.6, bundle: DesireTelemetryBundle | None = None) -> None:
        """
        vocab_size tokens and `concepts` concept weights; alpha_end/beta_end (reached after integration_horizon steps), gamma and lambda_ weigh the transition prior, avoidance, concept bridge and repression; eta steers the temperature toward target_entropy within [temp_min, temp_max]; bundle attaches its bridges. The defaults leave the distribution unchanged.
        """

    def step(self, logits: spiraltorch._core.Tensor | Sequence[float], previous_token: int, concept: spiraltorch._core.Tensor | Sequence[float] | None = None) -> dict:
        """
        One step: returns {'step', 'phase', 'temperature' (used), 'next_temperature', 'entropy' and 'base_entropy' (nats), 'weights' {alpha, beta, gamma, lambda}, 'probabilities', 'logit_offsets'}.
        """

    @property
    def vocab_size(self) -> int:
        """The number of tokens."""

    @property
    def concepts(self) -> int:
        """The number of concept weights."""

    @property
    def temperature(self) -> float:
        """The temperature the next step uses."""

    @property
    def steps_taken(self) -> int:
        """The number of steps since construction or reset()."""

    def set_transition_prior(self, matrix: spiraltorch._core.Tensor | Sequence[float]) -> None:
        """
        Row-major vocab x vocab log-prior of token i after token p (flattened or a 2-d Tensor).
        """

    def set_repression(self, values: spiraltorch._core.Tensor | Sequence[float]) -> None:
        """
        vocab_size finite values subtracted (times lambda) from each token's score.
        """

    def set_concept_bridge(self, matrix: spiraltorch._core.Tensor | Sequence[float]) -> None:
        """Row-major vocab x concepts non-negative affinities."""

    @property
    def concept_bridge(self) -> list[float]:
        """The row-major vocab x concepts affinities (empty when unset)."""

    def ingest_geometry_bias(self, signal: spiraltorch._core.Tensor | Sequence[float], *, source: str = 'zspace') -> None:
        """
        Stores a bias signal from 'zspace' or 'roundtable' as telemetry (it never changes the distribution).
        """

    def clear_geometry_bias(self) -> None:
        """Drops the stored geometry bias signals."""

    def geometry_bias_metrics(self) -> dict[str, float] | None:
        """
        rms energies of the stored signals (z x0.25, roundtable x0.1), composite, balance, counts; None if empty.
        """

    def attach_trainer_bridge(self, bridge: DesireTrainerBridge) -> None:
        """Sends every later step to this trainer bridge."""

    def attach_roundtable_bridge(self, bridge: DesireRoundtableBridge) -> None:
        """Sends every later step to this roundtable bridge."""

    def reset(self) -> None:
        """
        Restarts the schedule, temperature and avoidance statistics (keeps priors and bridges).
        """

class MellinBasis:
    """
    Power-law feature map: y_i = sign(x_i) max(|x_i|, 1e-9)^e_i (e_i = 1 past the given exponents), then each row L2-normalised (zero rows stay zero). Differentiable.
    """

    def __init__(self, exponents: Sequence[float]) -> None:
        """One exponent per feature (each finite, else ValueError)."""

    @staticmethod
    def constant(dim: int, exponent: float) -> MellinBasis:
        """A basis of dim features all with the same exponent (dim >= 1)."""

    @staticmethod
    def ramp(dim: int, start: float, end: float) -> MellinBasis:
        """A basis of dim exponents spaced evenly from start to end (dim >= 1)."""

    @property
    def dimension(self) -> int:
        """The number of exponents."""

    @property
    def exponents(self) -> list[float]:
        """The exponents, one per feature."""

    def project(self, x: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor:
        """
        The power-law map of x (..., features), each row then L2-normalised; differentiable.
        """

    def __repr__(self) -> str: ...

class ZSpaceVaeState:
    """latent, reconstruction, mu and logvar of one forward pass."""

    @property
    def latent(self) -> spiraltorch._core.Tensor:
        """The sampled (or mean) latent z, (batch, latent_dim)."""

    @property
    def reconstruction(self) -> spiraltorch._core.Tensor:
        """The decoded x^, (batch, input_dim)."""

    @property
    def mu(self) -> spiraltorch._core.Tensor:
        """The posterior mean, (batch, latent_dim)."""

    @property
    def logvar(self) -> spiraltorch._core.Tensor:
        """The posterior log-variance, (batch, latent_dim)."""

class ZSpaceVae(Module):
    """
    Gaussian VAE with linear encoder/decoder: mu, logvar = linear encodings of x; z = mu + exp(logvar/2) eps in training (mu in eval); x^ = z D^T + b. loss(x, kl_weight) = reconstruction (mean ||x - x^||^2 / D) + kl_weight * KL(q(z|x) || N(0, I)); train with any optimizer. Calling it returns the reconstruction.
    """

    def __init__(self, input_dim: int, latent_dim: int, seed: int = 42, name: str = '') -> None:
        """
        Linear encoders input_dim -> latent_dim for mu and logvar and a decoder latent_dim -> input_dim, initialised from the layer's own generator seeded with seed.
        """

    @property
    def input_dim(self) -> int:
        """The size of each input row."""

    @property
    def latent_dim(self) -> int:
        """The size of the latent code."""

    @property
    def seed(self) -> int:
        """The seed of the layer's own generator (initialisation and sampling)."""

    def encode(self, x: spiraltorch._core.Tensor) -> tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor]:
        """Returns (mu, logvar)."""

    def sample_latent(self, mu: spiraltorch._core.Tensor, logvar: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor:
        """
        mu + exp(logvar / 2) * eps with eps ~ N(0, I) from the layer's generator (differentiable in mu and logvar).
        """

    def decode(self, z: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor:
        """x^ = z D^T + b for z (batch, latent_dim)."""

    def forward_full(self, x: spiraltorch._core.Tensor, use_mean: bool = False) -> ZSpaceVaeState:
        """
        One pass over x (batch, input_dim): encodes, samples z (the mean when use_mean or in eval mode) and decodes; returns a ZSpaceVaeState.
        """

    def loss_terms(self, x: spiraltorch._core.Tensor, state: ZSpaceVaeState) -> tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor]:
        """(reconstruction, kl) as differentiable scalars."""

    def loss(self, x: spiraltorch._core.Tensor, kl_weight: float = 1.0) -> tuple[spiraltorch._core.Tensor, dict[str, float]]:
        """
        One forward pass; returns (loss tensor to backpropagate, stats dict with recon_loss, kl_loss, evidence_lower_bound, weighted_loss, kl_weight, batch_size).
        """

    def evaluate(self, x: spiraltorch._core.Tensor, kl_weight: float = 1.0) -> dict[str, float]:
        """Stats of the mean reconstruction (z = mu), no gradients."""

    def prior_recon_loss(self, x: spiraltorch._core.Tensor) -> float:
        """
        Reconstruction error when decoding z ~ N(0, I) instead of the posterior: the baseline to beat.
        """

class ZSpaceTextVae(ZSpaceVae):
    """
    ZSpaceVae over the Z-space wave encoding of text fitted to window_chars characters (truncated or padded with spaces); input_dim = 2 * window_chars.
    """

    def __init__(self, window_chars: int, latent_dim: int, curvature: float = -1.0, temperature: float = 1.0, seed: int = 42, name: str = '') -> None:
        """
        A ZSpaceVae with input_dim = 2 * window_chars over the wave encoding of text (curvature, temperature of the encoder).
        """

    @property
    def window_chars(self) -> int:
        """The number of characters each text is fitted to."""

    @property
    def curvature(self) -> float:
        """The curvature of the wave encoder."""

    @property
    def temperature(self) -> float:
        """The temperature of the wave encoder."""

    def fit_text(self, text: str) -> str:
        """text truncated or padded with spaces to window_chars characters."""

    def encode_texts(self, texts: Sequence[str]) -> spiraltorch._core.Tensor:
        """(len(texts), 2 * window_chars) float32 wave encodings."""

def state_dict_hash(state: Module | Mapping[str, spiraltorch._core.Tensor | numpy.typing.ArrayLike] | Iterable[tuple[str, spiraltorch._core.Tensor | numpy.typing.ArrayLike]]) -> str:
    """sha256 over the sorted keys, dtypes, shapes and bytes of a state dict."""

def external_state(state: Module | Mapping[str, spiraltorch._core.Tensor | numpy.typing.ArrayLike] | Iterable[tuple[str, spiraltorch._core.Tensor | numpy.typing.ArrayLike]]) -> dict[str, spiraltorch._core.Tensor]:
    """
    Converts a dict of tensors/arrays/lists to SpiralTorch tensors (DLPack, no copy when possible).
    """

def apply_transform(tensor: spiraltorch._core.Tensor, transform: str, shape: int | Sequence[int] | None = None) -> spiraltorch._core.Tensor:
    """
    tensor as it would be loaded into a parameter of `shape` (default: its own shape, transposed for the transpose transforms): transform 'identity', 'transpose', 'copy_overlap_zeros' (the overlapping block copied, the rest zero) or 'transpose_copy_overlap_zeros'. Returns a new contiguous tensor.
    """

class LoraLinear(Module):
    """
    LoRA around a frozen Linear: y = x W^T + b + (alpha/rank) * dropout(x) A^T B^T.
    """

    def __init__(self, in_features: int, out_features: int, rank: int, alpha: float = 1.0, dropout: float = 0.0, bias: bool = True, name: str = '') -> None:
        """
        A frozen base Linear(in_features, out_features, bias) plus trainable adapters lora_a (rank, in_features; Kaiming-uniform) and lora_b (out_features, rank; zeros), so the output starts equal to the base; scaling = alpha / rank (alpha > 0); dropout applies to the adapter's input in training.
        """

    @staticmethod
    def from_linear(linear: Linear, rank: int, alpha: float = 1.0, dropout: float = 0.0) -> LoraLinear:
        """
        Wraps an existing Linear, sharing its weight and bias as the frozen base.
        """

    @property
    def weight(self) -> spiraltorch._core.Tensor:
        """The frozen (out_features, in_features) base weight."""

    @property
    def bias(self) -> spiraltorch._core.Tensor | None:
        """The frozen (out_features,) base bias, or None."""

    @property
    def lora_a(self) -> spiraltorch._core.Tensor:
        """The (rank, in_features) down-projection adapter."""

    @property
    def lora_b(self) -> spiraltorch._core.Tensor:
        """The (out_features, rank) up-projection adapter."""

    @property
    def in_features(self) -> int:
        """The size of the input's last dim."""

    @property
    def out_features(self) -> int:
        """The size of the output's last dim."""

    @property
    def rank(self) -> int:
        """The adapter rank."""

    @property
    def alpha(self) -> float:
        """The LoRA alpha (scaling = alpha / rank)."""

    @property
    def scaling(self) -> float:
        """alpha / rank, the factor of the adapter's contribution."""

    @property
    def scale(self) -> float:
        """Alias of scaling."""

    @property
    def dropout(self) -> float:
        """The dropout probability on the adapter's input."""

    @property
    def merged(self) -> bool:
        """Whether the adapter is folded into the base weight (merge())."""

    def merge(self) -> None:
        """
        Adds scaling * lora_b @ lora_a into the base weight (the adapter is then skipped); ValueError when already merged.
        """

    def unmerge(self) -> None:
        """
        Subtracts the merged adapter from the base weight again; ValueError when not merged.
        """

    def set_trainable(self, trainable: bool = True) -> None:
        """Makes the adapters (lora_a, lora_b) trainable or frozen."""

    def set_base_trainable(self, trainable: bool = True) -> None:
        """Makes the base weight/bias trainable or frozen (frozen by default)."""

    def base_state_dict(self) -> dict[str, spiraltorch._core.Tensor]:
        """
        The base weight (and bias), detached, keyed '<name>::weight' / '<name>::bias'.
        """

def embedding_bag(input: spiraltorch._core.Tensor, weight: spiraltorch._core.Tensor, offsets: spiraltorch._core.Tensor | None = None, max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = 'mean', sparse: bool = False, per_sample_weights: spiraltorch._core.Tensor | None = None, include_last_offset: bool = False, padding_idx: int | None = None) -> spiraltorch._core.Tensor:
    """
    Sums, means or maxima of bags of rows of weight: input 2-D (bags, length), or 1-D with offsets where each bag starts. Returns (bags, embedding_dim); empty bags give zeros, padding_idx entries are left out.
    """

def max_pool1d(input: spiraltorch._core.Tensor, kernel_size: int | tuple[int], stride: int | tuple[int] | None = None, padding: int | tuple[int] = 0, dilation: int | tuple[int] = 1, ceil_mode: bool = False, return_indices: bool = False) -> spiraltorch._core.Tensor | tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor]:
    """
    1-d max pooling over (N, C, L) or (C, L); stride defaults to kernel_size. return_indices=True also returns the int64 argmax positions along L.
    """

def avg_pool1d(input: spiraltorch._core.Tensor, kernel_size: int | tuple[int], stride: int | tuple[int] | None = None, padding: int | tuple[int] = 0, ceil_mode: bool = False, count_include_pad: bool = True) -> spiraltorch._core.Tensor:
    """
    1-d average pooling over (N, C, L) or (C, L) with PyTorch's divisor rules.
    """

def adaptive_avg_pool1d(input: spiraltorch._core.Tensor, output_size: int | tuple[int]) -> spiraltorch._core.Tensor:
    """Average pooling of (N, C, L) or (C, L) to length output_size."""

def adaptive_max_pool2d(input: spiraltorch._core.Tensor, output_size: int | tuple[int | None, int | None], return_indices: bool = False) -> spiraltorch._core.Tensor | tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor]:
    """
    Max pooling of (N, C, H, W) or (C, H, W) to a fixed (H_out, W_out) over PyTorch's adaptive windows; return_indices=True also returns int64 argmax positions in each flattened input plane.
    """

class MaxPool1d(Module):
    """1-d max pooling; stride defaults to kernel_size."""

    def __init__(self, kernel_size: int | tuple[int], stride: int | tuple[int] | None = None, padding: int | tuple[int] = 0, dilation: int | tuple[int] = 1, ceil_mode: bool = False, name: str = '') -> None:
        """
        Max over kernel_size windows along L of (N, C, L) or (C, L); stride defaults to kernel_size; padding (at most half the kernel, else ValueError) pads with -inf; ceil_mode rounds the output length up.
        """

    @property
    def kernel_size(self) -> int:
        """The window length."""

    @property
    def stride(self) -> int:
        """The step between windows."""

    @property
    def padding(self) -> int:
        """The implicit -inf padding on each side."""

    @property
    def dilation(self) -> int:
        """The spacing between window elements."""

    @property
    def ceil_mode(self) -> bool:
        """
        Whether the output length is rounded up (a last partial window is kept).
        """

    def __repr__(self) -> str: ...

class AvgPool1d(Module):
    """1-d average pooling; stride defaults to kernel_size."""

    def __init__(self, kernel_size: int | tuple[int], stride: int | tuple[int] | None = None, padding: int | tuple[int] = 0, ceil_mode: bool = False, count_include_pad: bool = True, name: str = '') -> None:
        """
        Mean over kernel_size windows along L of (N, C, L) or (C, L); stride defaults to kernel_size; padding at most half the kernel; count_include_pad counts zero padding in the divisor.
        """

    @property
    def kernel_size(self) -> tuple[int]:
        """(k,)."""

    @property
    def stride(self) -> tuple[int]:
        """(s,)."""

    @property
    def padding(self) -> tuple[int]:
        """(p,)."""

    @property
    def ceil_mode(self) -> bool:
        """
        Whether the output length is rounded up (a last partial window is kept).
        """

    @property
    def count_include_pad(self) -> bool:
        """Whether zero padding counts in the divisor."""

    def __repr__(self) -> str: ...

class AdaptiveAvgPool1d(Module):
    """Average pooling to a fixed output length."""

    def __init__(self, output_size: int | tuple[int], name: str = '') -> None:
        """
        Average pooling of (N, C, L) or (C, L) to length output_size over PyTorch's adaptive windows.
        """

    @property
    def output_size(self) -> int:
        """The output length."""

    def __repr__(self) -> str: ...

class AdaptiveMaxPool2d(Module):
    """Max pooling to a fixed output size (H_out, W_out)."""

    def __init__(self, output_size: int | tuple[int | None, int | None], name: str = '') -> None:
        """
        Max pooling of (N, C, H, W) or (C, H, W) to output_size (an int or (H_out, W_out)) over PyTorch's adaptive windows.
        """

    @property
    def output_size(self) -> tuple[int, int]:
        """(H_out, W_out)."""

    def __repr__(self) -> str: ...

def pixel_shuffle(input: spiraltorch._core.Tensor, upscale_factor: int) -> spiraltorch._core.Tensor:
    """
    Rearranges (*, C*r^2, H, W) into (*, C, H*r, W*r) with r = upscale_factor.
    """

def pixel_unshuffle(input: spiraltorch._core.Tensor, downscale_factor: int) -> spiraltorch._core.Tensor:
    """
    Rearranges (*, C, H*r, W*r) into (*, C*r^2, H, W) with r = downscale_factor (inverse of pixel_shuffle).
    """

class PixelShuffle(Module):
    """(*, C*r^2, H, W) -> (*, C, H*r, W*r)."""

    def __init__(self, upscale_factor: int, name: str = '') -> None:
        """
        (*, C*r^2, H, W) -> (*, C, H*r, W*r) with r = upscale_factor (positive).
        """

    @property
    def upscale_factor(self) -> int:
        """The factor r."""

    def __repr__(self) -> str: ...

class PixelUnshuffle(Module):
    """(*, C, H*r, W*r) -> (*, C*r^2, H, W)."""

    def __init__(self, downscale_factor: int, name: str = '') -> None:
        """
        (*, C, H*r, W*r) -> (*, C*r^2, H, W) with r = downscale_factor (positive).
        """

    @property
    def downscale_factor(self) -> int:
        """The factor r."""

    def __repr__(self) -> str: ...

def dropout1d(input: spiraltorch._core.Tensor, p: float = 0.5, training: bool = True) -> spiraltorch._core.Tensor:
    """
    Zeroes whole channels of (N, C, L) or (C, L) with probability p, scaling the rest by 1/(1-p), when training; the identity otherwise.
    """

def dropout2d(input: spiraltorch._core.Tensor, p: float = 0.5, training: bool = True) -> spiraltorch._core.Tensor:
    """
    Zeroes whole channels of (N, C, H, W) or (C, H, W) with probability p, scaling the rest by 1/(1-p), when training; the identity otherwise.
    """

class Dropout1d(Module):
    """Channel-wise dropout of (N, C, L) input in training mode."""

    def __init__(self, p: float = 0.5, inplace: bool | str | None = False, name: str = '', *, seed: int | None = None) -> None:
        """
        inplace=True writes the result into the input (in training); seed= gives the layer its own Philox stream (reproducible masks).
        """

    @property
    def p(self) -> float:
        """The probability of zeroing, in [0, 1]."""

    @property
    def inplace(self) -> bool:
        """Whether the result is written into the input (in training)."""

    def __repr__(self) -> str: ...

class Dropout2d(Module):
    """Channel-wise dropout of (N, C, H, W) input in training mode."""

    def __init__(self, p: float = 0.5, inplace: bool | str | None = False, name: str = '', *, seed: int | None = None) -> None:
        """
        inplace=True writes the result into the input (in training); seed= gives the layer its own Philox stream (reproducible masks).
        """

    @property
    def p(self) -> float:
        """The probability of zeroing, in [0, 1]."""

    @property
    def inplace(self) -> bool:
        """Whether the result is written into the input (in training)."""

    def __repr__(self) -> str: ...

def alpha_dropout(input: spiraltorch._core.Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> spiraltorch._core.Tensor:
    """
    Alpha dropout for SELU networks (keeps zero mean and unit variance); the identity unless training.
    """

def feature_alpha_dropout(input: spiraltorch._core.Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> spiraltorch._core.Tensor:
    """
    Alpha dropout of whole channels of (N, C, *) input; the identity unless training.
    """

class AlphaDropout(Module):
    """
    Alpha dropout (SELU networks): zero mean and unit variance kept; the identity in eval mode.
    """

    def __init__(self, p: float = 0.5, inplace: bool = False, name: str = '', *, seed: int | None = None) -> None:
        """
        p in [0, 1]; inplace=True raises ValueError (not supported); seed= gives the layer its own Philox stream.
        """

    @property
    def p(self) -> float:
        """The probability of zeroing, in [0, 1]."""

    def __repr__(self) -> str: ...

class FeatureAlphaDropout(AlphaDropout):
    """Alpha dropout of whole channels of (N, C, *) input (SELU networks)."""

    def __init__(self, p: float = 0.5, inplace: bool = False, name: str = '', *, seed: int | None = None) -> None:
        """
        p in [0, 1]; inplace=True raises ValueError (not supported); seed= gives the layer its own Philox stream.
        """

def bilinear(input1: spiraltorch._core.Tensor, input2: spiraltorch._core.Tensor, weight: spiraltorch._core.Tensor, bias: spiraltorch._core.Tensor | None = None) -> spiraltorch._core.Tensor:
    """
    y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o].
    """

class Bilinear(Module):
    """
    Bilinear layer: weight (out_features, in1_features, in2_features), bias (out_features,), U(-1/sqrt(in1_features), 1/sqrt(in1_features)) like PyTorch.
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, name: str = '') -> None:
        """
        y = x1^T A x2 + b: weight (out_features, in1_features, in2_features) and bias (out_features,) from U(-1/sqrt(in1_features), 1/sqrt(in1_features)).
        """

    def forward(self, input1: spiraltorch._core.Tensor, input2: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor:
        """
        y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]; input1 (..., in1_features), input2 (..., in2_features) with the same leading dims.
        """

    def __call__(self, input1: spiraltorch._core.Tensor, input2: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor:
        """forward(input1, input2)."""

    @property
    def weight(self) -> spiraltorch._core.Tensor:
        """The (out_features, in1_features, in2_features) weight."""

    @property
    def bias(self) -> spiraltorch._core.Tensor | None:
        """The (out_features,) bias, or None."""

    @property
    def in1_features(self) -> int:
        """The size of input1's last dim."""

    @property
    def in2_features(self) -> int:
        """The size of input2's last dim."""

    @property
    def out_features(self) -> int:
        """The size of the output's last dim."""

    def __repr__(self) -> str: ...

class RNNCellBase(Module):
    """Shared base of RNNCell, LSTMCell and GRUCell."""

    @property
    def input_size(self) -> int:
        """The size of the input's last dim."""

    @property
    def hidden_size(self) -> int:
        """The size of the hidden state."""

    @property
    def bias(self) -> bool:
        """Whether the cell has bias_ih and bias_hh."""

    @property
    def weight_ih(self) -> spiraltorch._core.Tensor:
        """
        The (gates * hidden_size, input_size) input weight (gates: 1 RNN, 4 LSTM, 3 GRU).
        """

    @property
    def weight_hh(self) -> spiraltorch._core.Tensor:
        """The (gates * hidden_size, hidden_size) hidden weight."""

    @property
    def bias_ih(self) -> spiraltorch._core.Tensor | None:
        """The (gates * hidden_size,) input bias, or None."""

    @property
    def bias_hh(self) -> spiraltorch._core.Tensor | None:
        """The (gates * hidden_size,) hidden bias, or None."""

class RNNCell(RNNCellBase):
    """
    Elman cell h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh), act tanh or relu. forward(input, hx=None) returns h'.
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = 'tanh', name: str = '') -> None:
        """
        nonlinearity 'tanh' or 'relu'; weights U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).
        """

    @property
    def nonlinearity(self) -> str:
        """'tanh' or 'relu'."""

    def forward(self, input: spiraltorch._core.Tensor, hx: spiraltorch._core.Tensor | None = None) -> spiraltorch._core.Tensor:
        """
        One step: input (batch, input_size) or (input_size,), hx (batch, hidden_size) or None (zeros); returns h' shaped like hx.
        """

    def __call__(self, input: spiraltorch._core.Tensor, hx: spiraltorch._core.Tensor | None = None) -> spiraltorch._core.Tensor:
        """forward(input, hx)."""

    def __repr__(self) -> str: ...

class LSTMCell(RNNCellBase):
    """
    LSTM cell, gate order (i, f, g, o) like PyTorch. forward(input, hx=None) with hx = (h_0, c_0) returns (h_1, c_1).
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, name: str = '') -> None:
        """Weights U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) like PyTorch."""

    def forward(self, input: spiraltorch._core.Tensor, hx: tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor] | None = None) -> tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor]:
        """
        One step: input (batch, input_size) or (input_size,), hx = (h_0, c_0) each (batch, hidden_size), or None (zeros); returns (h_1, c_1).
        """

    def __call__(self, input: spiraltorch._core.Tensor, hx: tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor] | None = None) -> tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor]:
        """forward(input, hx)."""

    def __repr__(self) -> str: ...

class GRUCell(RNNCellBase):
    """
    GRU cell, gate order (r, z, n) like PyTorch. forward(input, hx=None) returns h'.
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, name: str = '') -> None:
        """Weights U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) like PyTorch."""

    def forward(self, input: spiraltorch._core.Tensor, hx: spiraltorch._core.Tensor | None = None) -> spiraltorch._core.Tensor:
        """
        One step: input (batch, input_size) or (input_size,), hx (batch, hidden_size) or None (zeros); returns h'.
        """

    def __call__(self, input: spiraltorch._core.Tensor, hx: spiraltorch._core.Tensor | None = None) -> spiraltorch._core.Tensor:
        """forward(input, hx)."""

    def __repr__(self) -> str: ...

class RoundtableConfig:
    """
    Band sizes of the roundtable split. band_weights scale the Above/Here/Beneath gradient bands (a heuristic; the default (1, 1, 1) is plain gradient descent).
    """

    def __init__(self, *, top_k: int = 8, mid_k: int = 8, bottom_k: int = 8, here_tolerance: float = 1e-05, band_weights: Sequence[float] = [1.0, 1.0, 1.0]) -> None: ...

    @property
    def top_k(self) -> int:
        """How many of the largest |g| entries form the Above band."""

    @property
    def mid_k(self) -> int:
        """The Here band's nominal size (Here is what Above/Beneath leave)."""

    @property
    def bottom_k(self) -> int:
        """How many of the smallest remaining |g| entries form Beneath."""

    @property
    def here_tolerance(self) -> float:
        """Entries with |g| <= this are always Here."""

    @property
    def band_weights(self) -> list[float]:
        """Gradient scale of the (Above, Here, Beneath) bands."""

    def __repr__(self) -> str: ...

class RoundtableSchedule:
    """
    Splits an output gradient into bands by rank of |g| over the flattened gradient: Above = the above_k largest, Beneath = the beneath_k smallest of the rest, Here = the others (and every |g| <= here_tolerance). Made by ModuleTrainer.roundtable().
    """

    def above_k(self) -> int:
        """The Above band's size (top_k clamped to [1, cols])."""

    def here_k(self) -> int:
        """The Here band's nominal size (mid_k clamped to [1, cols])."""

    def beneath_k(self) -> int:
        """The Beneath band's size (bottom_k clamped to [1, cols])."""

    def band_energy(self, gradient: spiraltorch._core.Tensor) -> tuple[float, float, float]:
        """Sum of |g| in each band: (above, here, beneath)."""

    def classify(self, gradient: spiraltorch._core.Tensor) -> list[str]:
        """
        The band of every element of the flattened gradient: 'above', 'here' or 'beneath' (ties: larger |g|, then lower index, ranks higher).
        """

    def weight_mask(self, gradient: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor:
        """
        A tensor shaped like gradient holding each element's band weight (config.band_weights).
        """

    def __repr__(self) -> str: ...

class EpochStats:
    """What one epoch did; average_loss is the plain mean of batch losses."""

    @property
    def batches(self) -> int:
        """
        Batches that counted: updated ones in train_epoch (skipped ones are in skipped_steps), all in evaluate_epoch.
        """

    @property
    def total_loss(self) -> float:
        """Sum of the losses of the counted batches."""

    @property
    def average_loss(self) -> float:
        """total_loss / batches: the plain mean of the batch losses."""

    @property
    def skipped_steps(self) -> int:
        """
        Batches whose loss or gradients were not finite (nothing was updated for them).
        """

    @property
    def seconds(self) -> float:
        """Wall-clock time of the epoch."""

    @property
    def band_energy(self) -> dict[str, float]:
        """
        Sum of |g| per roundtable band over the epoch: {'above', 'here', 'beneath'}.
        """

    @property
    def desire_summary(self) -> dict[str, float] | None:
        """
        The desire trainer bridge's summary drained at the end of the epoch, or None.
        """

    @property
    def desire_multipliers(self) -> dict[str, float]:
        """
        The band multipliers (above, here, beneath) from the desire roundtable bridge last applied.
        """

    def __repr__(self) -> str: ...

class CurvatureScheduler:
    """
    Proportional controller moving the curvature toward a target mean |grad|.
    """

    def __init__(self, *, initial: float | None = None, min_curvature: float = -1.5, max_curvature: float = -0.2, target_pressure: float = 0.05, step: float = 0.05, tolerance: float = 0.05, smoothing: float = 0.2, proportional_gain: float = 1.0) -> None: ...

    @property
    def current(self) -> float:
        """The current curvature (negative)."""

    @property
    def last_pressure(self) -> float | None:
        """
        The smoothed pressure (EMA of observed mean |g|), or None before the first observation.
        """

    def sync(self, curvature: float) -> None:
        """
        Sets the curvature (clamped into [min_curvature, max_curvature]) and restarts the pressure history.
        """

    def observe_pressure(self, pressure: float) -> dict[str, float | bool]:
        """
        Smooths pressure (ema += smoothing * (p - ema)); when |ema - target_pressure| > tolerance moves the curvature by proportional_gain * error clamped to +-step and to the bounds. Returns {'raw_pressure', 'smoothed_pressure', 'curvature', 'changed'}. ValueError for a non-finite pressure.
        """

class SpectralLearningRatePolicy:
    """
    Heuristic LR scale from roundtable band energies: (target / smoothed above-share)^gain, clamped to lr_bounds and moved by at most max_lr_step per batch. Off unless passed to enable_spectral_learning_rate.
    """

    def __init__(self, *, smoothing: float = 0.2, target_concentration: float = 0.5, gain: float = 0.5, lr_bounds: tuple[float, float] = (0.1, 6.0), max_lr_step: float = 1.4) -> None: ...

    def observe(self, above: float, here: float, beneath: float) -> float:
        """
        Observes one batch's band energies and returns the learning-rate scale for that batch.
        """

    @property
    def last_scale(self) -> float:
        """The scale the last observe() returned."""

    @property
    def concentration(self) -> float | None:
        """
        The smoothed above / (above + here + beneath) share, or None before the first observe().
        """

class ModuleTrainer:
    """
    Native training loop: Riemannian (Poincare-ball) steps for modules with an attached hypergrad, plain SGD with fallback_learning_rate for the rest. backend: 'cpu' or 'auto' (the CPU), 'cuda' / 'cuda:N' or 'wgpu' (DeviceUnavailableError with the reason where that device is not usable).

    Example: trainer = st.nn.ModuleTrainer(fallback_learning_rate=0.05); stats = trainer.train_epoch(model, lambda p, t: ((p - t) ** 2).mean(), [(x, y)], trainer.roundtable(x.shape[0], y.shape[1]))
    """

    def __init__(self, *, backend: str = 'cpu', curvature: float = -1.0, hyper_learning_rate: float = 0.01, fallback_learning_rate: float = 0.01) -> None: ...

    def roundtable(self, rows: int, cols: int, config: RoundtableConfig | None = None) -> RoundtableSchedule:
        """
        The roundtable schedule for outputs of shape (rows, cols) (config defaults to RoundtableConfig()).
        """

    def train_epoch(self, model: Module, loss: Callable[[spiraltorch._core.Tensor, spiraltorch._core.Tensor], spiraltorch._core.Tensor], batches: Iterable[tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor]], schedule: RoundtableSchedule) -> EpochStats:
        """
        One pass over batches ((input, target) pairs of tensors or array-likes): forward, loss(prediction, target), backward, roundtable band weighting of the output gradient, then one update per batch (batches with a non-finite loss or gradient are skipped and counted). Moves model and batches to the backend's device. Returns EpochStats.
        """

    def evaluate_epoch(self, model: Module, loss: Callable[[spiraltorch._core.Tensor, spiraltorch._core.Tensor], spiraltorch._core.Tensor], batches: Iterable[tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor]]) -> EpochStats:
        """
        The mean loss over batches without gradients or updates; returns EpochStats.
        """

    def prepare(self, model: Module) -> None:
        """
        Attaches a hypergrad (the trainer's curvature and hyper_learning_rate) to every parameter of model.
        """

    def zero(self, model: Module) -> None:
        """Clears the gradients of model's parameters."""

    def step(self, model: Module) -> bool:
        """
        Applies one update from .grad; returns False (and changes nothing) if a gradient is not finite.
        """

    def enable_desire_telemetry(self, bundle: DesireTelemetryBundle) -> None:
        """
        Each batch's roundtable band weights are multiplied by the bundle's roundtable impulse (above, here, beneath); each epoch drains its trainer bridge into EpochStats.desire_summary.
        """

    def disable_desire_telemetry(self) -> None:
        """Undoes enable_desire_telemetry."""

    @property
    def desire_telemetry_enabled(self) -> bool:
        """True while a desire telemetry bundle is attached."""

    def enable_realgrad(self, learning_rate: float) -> None:
        """
        A Euclidean step of learning_rate: parameters without a hypergrad use it instead of fallback_learning_rate, those with one take it after their Riemannian step (then clipped into the ball). ValueError unless positive and finite.
        """

    def disable_realgrad(self) -> None:
        """Undoes enable_realgrad."""

    def set_grad_clip_max_norm(self, max_norm: float) -> None:
        """
        Clips the joint gradient norm to max_norm before every update (ValueError unless finite and > 0).
        """

    def clear_grad_clip_max_norm(self) -> None:
        """Stops gradient clipping."""

    def enable_curvature_scheduler(self, scheduler: CurvatureScheduler) -> None:
        """
        Syncs scheduler to the trainer's curvature; then each batch feeds it the mean |grad| over the parameters, and a curvature it moves becomes the trainer's and the attached hypergrads'.
        """

    def disable_curvature_scheduler(self) -> None:
        """Keeps the current curvature fixed from now on."""

    def curvature_metrics(self) -> dict[str, float] | None:
        """
        {'smoothed_pressure', 'curvature'} from the curvature scheduler, or None before it observed a batch.
        """

    def enable_spectral_learning_rate(self, policy: SpectralLearningRatePolicy | None = None) -> None:
        """
        Scales each batch's learning rates by policy.observe(band energies) (default policy when None).
        """

    def disable_spectral_learning_rate(self) -> None:
        """Back to unscaled learning rates."""

    def spectral_metrics(self) -> dict[str, float] | None:
        """
        {'concentration', 'lr_scale'} from the spectral policy, or None before it observed a batch.
        """

    def mul_learning_rate(self, model: Module, factor: float) -> None:
        """
        Multiplies every learning rate (the trainer's and those of model's attached hypergrads) by factor.
        """

    @property
    def requested_backend(self) -> str:
        """The backend asked for ('cpu', 'auto', ...)."""

    @property
    def backend(self) -> str:
        """Same as requested_backend."""

    @property
    def effective_backend(self) -> str:
        """The device backend training runs on."""

    @property
    def curvature(self) -> float:
        """The Poincare-ball curvature of hypergrad steps (< 0)."""

    @property
    def hyper_learning_rate(self) -> float:
        """The Riemannian step size of parameters with a hypergrad."""

    @property
    def fallback_learning_rate(self) -> float:
        """The SGD step size of parameters without a hypergrad."""

    @property
    def real_learning_rate(self) -> float | None:
        """The realgrad rate set by enable_realgrad, or None."""

    @property
    def grad_clip_max_norm(self) -> float | None:
        """The clipping norm, or None."""

    @property
    def epoch(self) -> int:
        """train_epoch calls so far (the number of the current epoch)."""

    @property
    def steps(self) -> int:
        """Batches train_epoch has taken, across epochs (skipped ones included)."""

    def set_trace(self, path: str | os.PathLike, *, append: bool = False, overwrite: bool = False) -> None:
        """
        Writes a JSONL trace (docs/traces.md) to path (an existing file is refused unless append=True or overwrite=True): a "step" event per batch, an "epoch" event per train_epoch, an "eval" event per evaluate_epoch.
        """

    def clear_trace(self) -> None:
        """Stops tracing (closes the file)."""

    @property
    def trace_path(self) -> str | None:
        """The trace file, or None when not tracing."""

    @property
    def trace_errors(self) -> int:
        """Trace writes that failed (the training went on)."""

def _fit(model: object, loss: object, optimizer: object, train_loader: object, epochs: int, val_loader: object | None, scheduler: object | None, on_epoch_start: object | None, on_epoch_end: object | None) -> bool:
    """
    nn.fit's loop: the training engine's fit over (input, target) batches; on_epoch_end(report dict) returning True stops. Returns whether it stopped early.
    """

def _evaluate(model: object, loss: object, loader: object) -> dict:
    """
    nn.evaluate's loop: the engine's mean loss and accuracy (integer targets, (N, C) predictions).
    """

class _EarlyStopping:
    """The training engine's early stopping (nn.EarlyStopping wraps it)."""

    def __init__(self, patience: int, min_delta: float, monitor: str) -> None: ...

    def observe(self, value: float) -> bool:
        """Observes an epoch's monitored value; True when training should stop."""

    @property
    def best(self) -> float: ...

    @property
    def stale(self) -> int: ...

    @property
    def patience(self) -> int: ...

    @property
    def min_delta(self) -> float: ...
