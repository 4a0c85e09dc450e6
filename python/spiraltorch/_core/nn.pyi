"""Native neural-network layers."""

from collections.abc import Callable, Sequence
from typing import TypeAlias, overload

import spiraltorch._core
from spiraltorch.nn import (
    _linear_extra_repr as extra_repr,
    _module_cpu as cpu,
    _module_cuda as cuda,
    _module_get_buffer as get_buffer,
    _module_repr as __repr__
)


class RemovableHandle:
    """Returned by register_*_hook; remove() unregisters the hook."""

    @property
    def id(self) -> int: ...

    def remove(self) -> None: ...

    def __enter__(self) -> object: ...

    def __exit__(self, *args) -> None: ...

class Module:
    """Base of every layer; Python subclasses override forward()."""

    def __init__(self, name: str = '') -> None: ...

    def __setattr__(self, name: str, value: object | None) -> None:
        """
        Assigning a Module registers (or replaces) a child, a parameter (a leaf that requires grad) registers or replaces a parameter, a tensor assigned to a buffer's name replaces the buffer; anything else is a plain attribute. Registered entries are not stored in __dict__ (torch.nn.Module's rules).
        """

    def __getattr__(self, name: str) -> object:
        """The module's own child, parameter or buffer called name."""

    def __delattr__(self, name: str) -> None:
        """Removes a child, parameter, buffer or plain attribute."""

    def add_module(self, name: str, module: object | None) -> None:
        """Registers module (or None) as the child `name`."""

    def register_module(self, name: str, module: object | None) -> None:
        """Alias of add_module."""

    def get_submodule(self, target: str) -> object:
        """
        The submodule at a dotted path of attribute names ('encoder.layers.0').
        """

    def get_parameter(self, target: str) -> object:
        """The parameter at a dotted path ('encoder.layers.0.linear1.weight')."""

    def forward(self, input: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor: ...

    def __call__(self, input: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor:
        """forward(input) with the registered hooks around it."""

    @property
    def name(self) -> str: ...

    @name.setter
    def name(self, arg: str, /) -> None: ...

    def register_parameter(self, name: str, param: spiraltorch._core.Tensor | None) -> None:
        """
        Registers (or replaces) a parameter; None registers the name with no value (the attribute reads None).
        """

    def register_buffer(self, name: str, tensor: spiraltorch._core.Tensor | None, persistent: bool = True) -> None:
        """
        Registers a buffer: moved with the module and listed by named_buffers(); in state_dict() unless persistent=False; the attribute `name` reads it.
        """

    def named_parameters(self, prefix: str = '', recurse: bool = True, remove_duplicate: bool = True) -> object:
        """
        An iterator of (key, parameter) pairs, keys '<module path>::<param>' (prefixed by `prefix`); a shared parameter once unless remove_duplicate=False.
        """

    def parameters(self, recurse: bool = True) -> object:
        """
        An iterator over every parameter below this module (or its own, recurse=False), each once.
        """

    def named_buffers(self, prefix: str = '', recurse: bool = True) -> object:
        """An iterator of (key, buffer) pairs."""

    def buffers(self, recurse: bool = True) -> object:
        """An iterator over the buffers."""

    def children(self) -> object:
        """An iterator over the direct children."""

    def named_children(self) -> object:
        """An iterator of (key, child) pairs."""

    def named_modules(self, memo: object | None = None, prefix: str = '', remove_duplicate: bool = True) -> object:
        """
        An iterator of (path, module) for this module and every descendant, depth-first, each module once.
        """

    def modules(self) -> object:
        """
        An iterator over this module and every descendant, depth-first, each once.
        """

    def apply(self, fn: Callable) -> object:
        """Calls fn(module) on every submodule, then on this one; returns self."""

    def state_dict(self, prefix: str = '', keep_vars: bool = False) -> dict:
        """
        Parameters and buffers keyed '<module>::<param>' (prefixed by `prefix`); detached unless keep_vars.
        """

    def load_state_dict(self, state_dict: object, strict: bool = True) -> object:
        """
        Copies matching entries in; checks everything first, so a failed load changes nothing. Returns IncompatibleKeys(missing_keys, unexpected_keys) (both empty under strict=True).
        """

    def register_forward_pre_hook(self, hook: Callable) -> RemovableHandle:
        """hook(module, args) -> None or a replacement input, run before forward."""

    def register_forward_hook(self, hook: Callable) -> RemovableHandle:
        """
        hook(module, args, output) -> None or a replacement output, run after forward.
        """

    def register_full_backward_hook(self, hook: Callable) -> RemovableHandle:
        """
        hook(module, grad_input, grad_output) -> None or a replacement grad_input, called when the gradient with respect to the module's input is computed (grad_input is (None,) when the input needs none).
        """

    def remove_hook(self, id: int) -> None: ...

    def train(self, mode: bool = True) -> object: ...

    def eval(self) -> object: ...

    @property
    def training(self) -> bool: ...

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drops every parameter's .grad (set_to_none) or zeroes it in place."""

    def to(self, *args, **kwargs) -> object:
        """
        Moves (device) and/or converts (floating dtype) every parameter and buffer in place; returns self.
        """

    def float(self) -> object:
        """
        Converts floating parameters and buffers to float32 in place; returns self.
        """

    def double(self) -> object:
        """
        Converts floating parameters and buffers to float64 in place; returns self.
        """

    def half(self) -> object:
        """
        Converts floating parameters and buffers to float16 in place; returns self.
        """

    def bfloat16(self) -> object:
        """
        Converts floating parameters and buffers to bfloat16 in place; returns self.
        """

    def attach_hypergrad(self, *, curvature: float = -1.0, learning_rate: float = 0.05) -> None:
        """
        Gives every parameter below this module Riemannian SGD updates in the Poincare ball of this curvature.
        """

    def detach_hypergrad(self) -> None: ...

    @property
    def hypergrad(self) -> object: ...

    def num_parameters(self) -> int: ...

    @classmethod
    def __init_subclass__(cls, **kwargs) -> None: ...

    def state_dict_compatibility(self, external: object, *, allow_missing: object | None = None, allow_extra: bool = True) -> dict:
        """
        Read-only report of how `external` (same keys) would load: one entry per module key, sorted.
        """

    def state_dict_compatibility_with_key_map(self, external: object, key_map: object, *, allow_missing: object | None = None, allow_extra: bool = True) -> dict:
        """
        Read-only report through a key map {source: target | {'target', 'transform'}} or a list of rules.
        """

    def load_state_dict_checked(self, external: object, key_map: object | None = None, *, allow_missing: object | None = None, allow_extra: bool = True) -> dict:
        """
        Loads only when compatible (all keys present, shapes equal), atomically; else CheckpointError.
        """

    def load_state_dict_subset_mapped_checked(self, external: object, key_map: object, *, allow_missing: object | None = None, allow_extra: bool = True) -> dict:
        """
        Loads the mapped subset of a larger checkpoint when every module key is mapped and fits; atomic.
        """

    def state_dict_projection_preflight(self, external: object, key_map: object | None = None, *, allow_missing: object | None = None) -> dict:
        """
        What a load (with overlap resizes) would keep, drop and zero-fill per key; loads nothing.
        """

    def adapter_state_dict(self) -> dict:
        """
        The LoRA adapter entries (lora_a, lora_b) of every LoraLinear below this module.
        """

    def load_adapter_state_dict(self, state: object) -> dict:
        """Loads exactly the adapter entries, checked and atomic."""

    def adapter_keys(self) -> list[str]: ...

    def num_trainable_parameters(self) -> int: ...

class Linear(Module):
    """y = x W^T + b; W is (out_features, in_features) like PyTorch."""

    @overload
    def __init__(self, in_features: int, out_features: int, bias: bool = True, name: str = '') -> None: ...

    @overload
    def __init__(self, name: str, in_features: int, out_features: int, bias: bool = True) -> None: ...

    @overload
    def __init__(self, in_features: int, out_features: int, name: str) -> None: ...

    @property
    def weight(self) -> spiraltorch._core.Tensor: ...

    @property
    def bias(self) -> spiraltorch._core.Tensor | None: ...

    @property
    def in_features(self) -> int: ...

    @property
    def out_features(self) -> int: ...

class Sequential(Module):
    """Runs its layers in order."""

    def __init__(self, *layers, name: str = '') -> None: ...

    def add(self, layer: Module) -> None: ...

    def append(self, layer: Module) -> None: ...

    def __len__(self) -> int: ...

    def __getitem__(self, arg: int, /) -> Module: ...

def linear(input: spiraltorch._core.Tensor, weight: spiraltorch._core.Tensor, bias: spiraltorch._core.Tensor | None = None) -> spiraltorch._core.Tensor: ...

def mse_loss(input: spiraltorch._core.Tensor, target: object, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """Mean squared error."""

def l1_loss(input: spiraltorch._core.Tensor, target: object, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """Mean absolute error."""

def huber_loss(input: spiraltorch._core.Tensor, target: object, reduction: str = 'mean', delta: float = 1.0) -> spiraltorch._core.Tensor:
    """Huber loss: 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta)."""

def binary_cross_entropy_with_logits(input: spiraltorch._core.Tensor, target: object, weight: spiraltorch._core.Tensor | None = None, reduction: str = 'mean', pos_weight: spiraltorch._core.Tensor | None = None) -> spiraltorch._core.Tensor:
    """Numerically stable sigmoid + binary cross-entropy on logits."""

def hyperbolic_cross_entropy(input: spiraltorch._core.Tensor, target: object, curvature: float = -1.0, reduction: str = 'mean', epsilon: float = 0.0) -> spiraltorch._core.Tensor:
    """
    Element-wise binary cross-entropy on logits scaled by sqrt(|curvature|); targets are per-element probabilities in [0, 1], not class indices.
    """

def cross_entropy(input: spiraltorch._core.Tensor, target: object, weight: spiraltorch._core.Tensor | None = None, ignore_index: int = -100, reduction: str = 'mean', label_smoothing: float = 0.0) -> spiraltorch._core.Tensor:
    """
    Fused log-softmax + negative log-likelihood over dim 1 (class indices or class probabilities).
    """

def nll_loss(input: spiraltorch._core.Tensor, target: object, weight: spiraltorch._core.Tensor | None = None, ignore_index: int = -100, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """Negative log-likelihood of log-probabilities at class indices."""

def sigmoid_focal_loss(inputs: spiraltorch._core.Tensor, targets: object, alpha: float = 0.25, gamma: float = 2.0, reduction: str = 'none') -> spiraltorch._core.Tensor:
    """Binary focal loss on logits (torchvision.ops.sigmoid_focal_loss)."""

def pairwise_distance(x1: spiraltorch._core.Tensor, x2: spiraltorch._core.Tensor, p: float = 2.0, eps: float = 1e-06, keepdim: bool = False) -> spiraltorch._core.Tensor:
    """||x1 - x2 + eps||_p over the last dim (kept as size 1 with keepdim)."""

def contrastive_loss(x1: spiraltorch._core.Tensor, x2: spiraltorch._core.Tensor, label: object, margin: float = 1.0, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """
    y d^2 + (1 - y) max(0, margin - d)^2 with d the Euclidean distance (label 1 = similar).
    """

def triplet_margin_loss(anchor: spiraltorch._core.Tensor, positive: spiraltorch._core.Tensor, negative: spiraltorch._core.Tensor, margin: float = 1.0, p: float = 2.0, eps: float = 1e-06, swap: bool = False, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """
    max(0, d(a, p) - d(a, n) + margin) like torch.nn.functional.triplet_margin_loss.
    """

class Loss(Module):
    """Base of the losses: call as loss(prediction, target)."""

    def forward(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    def __call__(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    @property
    def reduction(self) -> str: ...

class MeanSquaredError(Loss):
    """Mean squared error (alias MSELoss)."""

    def __init__(self, *, reduction: str = 'mean') -> None: ...

    def forward(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    def __call__(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    @property
    def reduction(self) -> str: ...

MSELoss: TypeAlias = MeanSquaredError

class L1Loss(Loss):
    """Mean absolute error."""

    def __init__(self, *, reduction: str = 'mean') -> None: ...

    def forward(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    def __call__(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    @property
    def reduction(self) -> str: ...

class HuberLoss(Loss):
    """Huber loss with threshold delta (torch.nn.HuberLoss)."""

    def __init__(self, reduction: str = 'mean', delta: float = 1.0) -> None: ...

    @property
    def delta(self) -> float: ...

    def forward(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    def __call__(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    @property
    def reduction(self) -> str: ...

class BCEWithLogits(Loss):
    """
    Numerically stable sigmoid + binary cross-entropy on logits (alias BCEWithLogitsLoss); pos_weight weighs positives per class.
    """

    def __init__(self, weight: spiraltorch._core.Tensor | None = None, reduction: str = 'mean', pos_weight: spiraltorch._core.Tensor | None = None) -> None: ...

    @property
    def weight(self) -> spiraltorch._core.Tensor | None: ...

    @property
    def pos_weight(self) -> spiraltorch._core.Tensor | None: ...

    def forward(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    def __call__(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    @property
    def reduction(self) -> str: ...

BCEWithLogitsLoss: TypeAlias = BCEWithLogits

class HyperbolicCrossEntropy(Loss):
    """
    Element-wise binary cross-entropy on logits scaled by s = sqrt(|curvature|) (a temperature): loss = mean(-t log sigmoid(s p) - (1 - t) log sigmoid(-s p)). Targets are per-element probabilities in [0, 1], not class indices; epsilon > 0 clamps them to [epsilon, 1 - epsilon]. Alias CrossEntropy (for softmax cross-entropy over classes use CategoricalCrossEntropy / CrossEntropyLoss).
    """

    def __init__(self, curvature: float = -1.0, *, epsilon: float = 0.0, reduction: str = 'mean') -> None: ...

    @property
    def curvature(self) -> float: ...

    @property
    def epsilon(self) -> float: ...

    def forward(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    def __call__(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    @property
    def reduction(self) -> str: ...

CrossEntropy: TypeAlias = HyperbolicCrossEntropy

class CategoricalCrossEntropy(Loss):
    """
    Softmax cross-entropy on logits (N, C) or (N, C, d...) with int64 class indices or class probabilities, like torch.nn.CrossEntropyLoss (alias CrossEntropyLoss, SoftmaxCrossEntropy). Log-softmax and gather are fused.
    """

    def __init__(self, weight: spiraltorch._core.Tensor | None = None, ignore_index: int = -100, reduction: str = 'mean', label_smoothing: float = 0.0) -> None: ...

    @property
    def weight(self) -> spiraltorch._core.Tensor | None: ...

    @property
    def ignore_index(self) -> int: ...

    @property
    def label_smoothing(self) -> float: ...

    def forward(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    def __call__(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    @property
    def reduction(self) -> str: ...

CrossEntropyLoss: TypeAlias = CategoricalCrossEntropy

SoftmaxCrossEntropy: TypeAlias = CategoricalCrossEntropy

class NLLLoss(Loss):
    """Negative log-likelihood of log-probabilities at class indices."""

    def __init__(self, weight: spiraltorch._core.Tensor | None = None, ignore_index: int = -100, reduction: str = 'mean') -> None: ...

    @property
    def weight(self) -> spiraltorch._core.Tensor | None: ...

    @property
    def ignore_index(self) -> int: ...

    def forward(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    def __call__(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    @property
    def reduction(self) -> str: ...

class FocalLoss(Loss):
    """
    Binary focal loss on logits like torchvision.ops.sigmoid_focal_loss: alpha_t (1 - p_t)^gamma BCE(logits, t); alpha < 0 disables alpha_t.
    """

    def __init__(self, alpha: float = 0.25, gamma: float = 2.0, *, reduction: str = 'mean') -> None: ...

    @property
    def alpha(self) -> float: ...

    @property
    def gamma(self) -> float: ...

    def forward(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    def __call__(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    @property
    def reduction(self) -> str: ...

class ContrastiveLoss(Loss):
    """
    mean(y d^2 + (1 - y) max(0, margin - d)^2), label y = 1 for similar pairs. Call with (x1, x2, y) (d = Euclidean distance over the last dim) or with precomputed distances (d, y).
    """

    def __init__(self, margin: float = 1.0, *, reduction: str = 'mean') -> None: ...

    @property
    def margin(self) -> float: ...

    @overload
    def forward(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    @overload
    def forward(self, x1: spiraltorch._core.Tensor, x2: spiraltorch._core.Tensor, label: object) -> spiraltorch._core.Tensor: ...

    @overload
    def __call__(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    @overload
    def __call__(self, x1: spiraltorch._core.Tensor, x2: spiraltorch._core.Tensor, label: object) -> spiraltorch._core.Tensor: ...

    @property
    def reduction(self) -> str: ...

class TripletLoss(Loss):
    """
    max(0, d(a, p) - d(a, n) + margin) with the p-norm distance, like torch.nn.TripletMarginLoss (alias TripletMarginLoss). Call with (anchor, positive, negative).
    """

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-06, swap: bool = False, reduction: str = 'mean') -> None: ...

    @property
    def margin(self) -> float: ...

    @property
    def p(self) -> float: ...

    @property
    def eps(self) -> float: ...

    @property
    def swap(self) -> bool: ...

    @property
    def reduction(self) -> str: ...

    def forward(self, anchor: spiraltorch._core.Tensor, positive: spiraltorch._core.Tensor, negative: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor: ...

    def __call__(self, anchor: spiraltorch._core.Tensor, positive: spiraltorch._core.Tensor, negative: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor: ...

TripletMarginLoss: TypeAlias = TripletLoss

def ctc_loss(log_probs: spiraltorch._core.Tensor, targets: object, input_lengths: object, target_lengths: object, blank: int = 0, reduction: str = 'mean', zero_infinity: bool = False) -> spiraltorch._core.Tensor:
    """
    Connectionist Temporal Classification loss of log_probs (T, N, C) (log-softmax outputs) against targets (N, S) padded or 1-D concatenated, with each sample's input and target lengths; 'mean' divides each loss by its target length before averaging.
    """

def binary_cross_entropy(input: spiraltorch._core.Tensor, target: object, weight: spiraltorch._core.Tensor | None = None, *, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """
    Binary cross-entropy -w (t log x + (1 - t) log(1 - x)) of probabilities x in [0, 1] (logs clamped at -100).
    """

def kl_div(input: spiraltorch._core.Tensor, target: object, *, reduction: str = 'mean', log_target: bool = False) -> spiraltorch._core.Tensor:
    """
    KL divergence target (log target - input) of log-probabilities; reduction 'mean', 'batchmean', 'sum' or 'none'.
    """

def smooth_l1_loss(input: spiraltorch._core.Tensor, target: object, *, reduction: str = 'mean', beta: float = 1.0) -> spiraltorch._core.Tensor:
    """Smooth L1 loss: 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta."""

def soft_margin_loss(input: spiraltorch._core.Tensor, target: object, *, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """log(1 + exp(-y x)) for labels y in {-1, 1}."""

def margin_ranking_loss(input1: spiraltorch._core.Tensor, input2: object, target: object, margin: float = 0.0, *, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """max(0, -y (x1 - x2) + margin)."""

def hinge_embedding_loss(input: spiraltorch._core.Tensor, target: object, margin: float = 1.0, *, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """x where y == 1, max(0, margin - x) where y == -1."""

def cosine_embedding_loss(input1: spiraltorch._core.Tensor, input2: object, target: object, margin: float = 0.0, *, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """
    1 - cos(x1, x2) where y == 1, max(0, cos(x1, x2) - margin) where y == -1.
    """

def poisson_nll_loss(input: spiraltorch._core.Tensor, target: object, log_input: bool = True, full: bool = False, *, eps: float = 1e-08, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """
    Poisson negative log-likelihood: exp(x) - t x (log_input) or x - t log(x + eps); full adds Stirling's term.
    """

def gaussian_nll_loss(input: spiraltorch._core.Tensor, target: object, var: object, full: bool = False, eps: float = 1e-06, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """
    Gaussian negative log-likelihood 0.5 (log v + (x - t)^2 / v), v = max(var, eps).
    """

def multilabel_soft_margin_loss(input: spiraltorch._core.Tensor, target: object, weight: spiraltorch._core.Tensor | None = None, *, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """
    Per-class binary cross-entropy on logits averaged over the last (class) dim.
    """

def multi_margin_loss(input: spiraltorch._core.Tensor, target: object, p: int = 1, margin: float = 1.0, weight: spiraltorch._core.Tensor | None = None, *, reduction: str = 'mean') -> spiraltorch._core.Tensor:
    """
    Multi-class hinge loss sum_{i != y} w_y max(0, margin - x_y + x_i)^p / C at int64 class indices.
    """

class BCELoss(Loss):
    """Binary cross-entropy of probabilities (torch.nn.BCELoss)."""

    def __init__(self, weight: spiraltorch._core.Tensor | None = None, *, reduction: str = 'mean') -> None: ...

    @property
    def weight(self) -> spiraltorch._core.Tensor | None: ...

    def forward(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    def __call__(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    @property
    def reduction(self) -> str: ...

class KLDivLoss(Loss):
    """KL divergence of log-probabilities (torch.nn.KLDivLoss)."""

    def __init__(self, *, reduction: str = 'mean', log_target: bool = False) -> None: ...

    @property
    def log_target(self) -> bool: ...

    def forward(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    def __call__(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    @property
    def reduction(self) -> str: ...

class SmoothL1Loss(Loss):
    """Smooth L1 loss with threshold beta (torch.nn.SmoothL1Loss)."""

    def __init__(self, *, reduction: str = 'mean', beta: float = 1.0) -> None: ...

    @property
    def beta(self) -> float: ...

    def forward(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    def __call__(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    @property
    def reduction(self) -> str: ...

class SoftMarginLoss(Loss):
    """log(1 + exp(-y x)) (torch.nn.SoftMarginLoss)."""

    def __init__(self, *, reduction: str = 'mean') -> None: ...

    def forward(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    def __call__(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    @property
    def reduction(self) -> str: ...

class MarginRankingLoss(Loss):
    """max(0, -y (x1 - x2) + margin); call with (input1, input2, target)."""

    def __init__(self, margin: float = 0.0, *, reduction: str = 'mean') -> None: ...

    @property
    def margin(self) -> float: ...

    def forward(self, input1: spiraltorch._core.Tensor, input2: object, target: object) -> spiraltorch._core.Tensor: ...

    def __call__(self, input1: spiraltorch._core.Tensor, input2: object, target: object) -> spiraltorch._core.Tensor: ...

    @property
    def reduction(self) -> str: ...

class HingeEmbeddingLoss(Loss):
    """x where y == 1, max(0, margin - x) where y == -1."""

    def __init__(self, margin: float = 1.0, *, reduction: str = 'mean') -> None: ...

    @property
    def margin(self) -> float: ...

    def forward(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    def __call__(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    @property
    def reduction(self) -> str: ...

class CosineEmbeddingLoss(Loss):
    """
    1 - cos(x1, x2) where y == 1, max(0, cos - margin) where y == -1; call with (input1, input2, target).
    """

    def __init__(self, margin: float = 0.0, *, reduction: str = 'mean') -> None: ...

    @property
    def margin(self) -> float: ...

    def forward(self, input1: spiraltorch._core.Tensor, input2: object, target: object) -> spiraltorch._core.Tensor: ...

    def __call__(self, input1: spiraltorch._core.Tensor, input2: object, target: object) -> spiraltorch._core.Tensor: ...

    @property
    def reduction(self) -> str: ...

class PoissonNLLLoss(Loss):
    """Poisson negative log-likelihood (torch.nn.PoissonNLLLoss)."""

    def __init__(self, log_input: bool = True, full: bool = False, *, eps: float = 1e-08, reduction: str = 'mean') -> None: ...

    @property
    def log_input(self) -> bool: ...

    @property
    def full(self) -> bool: ...

    @property
    def eps(self) -> float: ...

    def forward(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    def __call__(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    @property
    def reduction(self) -> str: ...

class GaussianNLLLoss(Loss):
    """Gaussian negative log-likelihood; call with (input, target, var)."""

    def __init__(self, *, full: bool = False, eps: float = 1e-06, reduction: str = 'mean') -> None: ...

    @property
    def full(self) -> bool: ...

    @property
    def eps(self) -> float: ...

    def forward(self, input: spiraltorch._core.Tensor, target: object, var: object) -> spiraltorch._core.Tensor: ...

    def __call__(self, input: spiraltorch._core.Tensor, target: object, var: object) -> spiraltorch._core.Tensor: ...

    @property
    def reduction(self) -> str: ...

class MultiLabelSoftMarginLoss(Loss):
    """Per-class BCE on logits averaged over classes."""

    def __init__(self, weight: spiraltorch._core.Tensor | None = None, *, reduction: str = 'mean') -> None: ...

    @property
    def weight(self) -> spiraltorch._core.Tensor | None: ...

    def forward(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    def __call__(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    @property
    def reduction(self) -> str: ...

class MultiMarginLoss(Loss):
    """Multi-class hinge loss (torch.nn.MultiMarginLoss)."""

    def __init__(self, p: int = 1, margin: float = 1.0, weight: spiraltorch._core.Tensor | None = None, *, reduction: str = 'mean') -> None: ...

    @property
    def p(self) -> int: ...

    @property
    def margin(self) -> float: ...

    @property
    def weight(self) -> spiraltorch._core.Tensor | None: ...

    def forward(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    def __call__(self, input: spiraltorch._core.Tensor, target: object) -> spiraltorch._core.Tensor: ...

    @property
    def reduction(self) -> str: ...

class Identity(Module):
    """Returns its input unchanged; ignores constructor arguments."""

    def __init__(self, *args, name: str = '', **kwargs) -> None: ...

    def __repr__(self) -> str: ...

class ZSpaceProjector(Module):
    """
    y = exp_0(x + tanh(x W^T + b)): a bounded residual projection of each row into the Poincare ball of `curvature` (outputs stay strictly inside); works inside Sequential and transformer stacks.
    """

    def __init__(self, features: int, curvature: float = -1.0, name: str = '') -> None: ...

    @property
    def features(self) -> int: ...

    @property
    def curvature(self) -> float: ...

    @property
    def weight(self) -> spiraltorch._core.Tensor: ...

    @property
    def bias(self) -> spiraltorch._core.Tensor: ...

    def extra_repr(self) -> str: ...

class Flatten(Module):
    """Flattens dims start_dim..end_dim into one."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1, name: str = '') -> None: ...

    @property
    def start_dim(self) -> int: ...

    @property
    def end_dim(self) -> int: ...

    def __repr__(self) -> str: ...

class Dropout(Module):
    """
    Zeroes elements with probability p in training (scaling the rest by 1/(1-p)); the identity in eval mode.
    """

    def __init__(self, p: float = 0.5, inplace: object | None = False, name: str = '', *, seed: int | None = None, training: bool = True) -> None:
        """
        inplace=True writes the result into the input (in training); seed= gives the layer its own Philox stream (the same masks on every run); training=False starts in eval mode.
        """

    @property
    def inplace(self) -> bool: ...

    @property
    def p(self) -> float: ...

    @property
    def probability(self) -> float:
        """The original's name for p."""

    @property
    def seed(self) -> int | None: ...

    def __repr__(self) -> str: ...

class Embedding(Module):
    """
    Lookup table: weight (num_embeddings, embedding_dim) ~ N(0, 1); the padding_idx row is zero and gets no gradient.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None, name: str = '') -> None: ...

    @staticmethod
    def from_pretrained(embeddings: spiraltorch._core.Tensor, freeze: bool = True, padding_idx: int | None = None, max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Embedding:
        """
        An Embedding whose weight is embeddings (2-D, the same memory), trainable unless freeze.
        """

    @property
    def weight(self) -> spiraltorch._core.Tensor: ...

    @property
    def num_embeddings(self) -> int: ...

    @property
    def embedding_dim(self) -> int: ...

    @property
    def padding_idx(self) -> int | None: ...

    def __repr__(self) -> str: ...

class ReLU(Module):
    """max(x, 0). inplace=True writes the result into the input."""

    def __init__(self, inplace: bool = False, name: str = '') -> None: ...

    @property
    def inplace(self) -> bool: ...

    def __repr__(self) -> str: ...

class GELU(Module):
    """Gaussian error linear unit; approximate='none' (erf) or 'tanh'."""

    def __init__(self, approximate: str = 'none', name: str = '') -> None: ...

    @property
    def approximate(self) -> str: ...

    def __repr__(self) -> str: ...

class SiLU(Module):
    """x * sigmoid(x). inplace=True writes the result into the input."""

    def __init__(self, inplace: bool = False, name: str = '') -> None: ...

    @property
    def inplace(self) -> bool: ...

    def __repr__(self) -> str: ...

class Tanh(Module):
    """tanh(x)."""

    def __init__(self, name: str = '') -> None: ...

    def __repr__(self) -> str: ...

class Sigmoid(Module):
    """1 / (1 + exp(-x))."""

    def __init__(self, name: str = '') -> None: ...

    def __repr__(self) -> str: ...

class Softmax(Module):
    """Softmax along `dim` (default -1)."""

    def __init__(self, dim: int = -1, name: str = '') -> None: ...

    @property
    def dim(self) -> int: ...

    def __repr__(self) -> str: ...

class LayerNorm(Module):
    """
    Normalises over the trailing normalized_shape dims; weight (ones) and bias (zeros) of that shape when elementwise_affine.
    """

    def __init__(self, normalized_shape: object, eps: float = 1e-05, elementwise_affine: bool = True, bias: bool = True, name: str = '') -> None: ...

    @property
    def weight(self) -> spiraltorch._core.Tensor | None: ...

    @property
    def bias(self) -> spiraltorch._core.Tensor | None: ...

    @property
    def normalized_shape(self) -> tuple: ...

    @property
    def eps(self) -> float: ...

    @property
    def elementwise_affine(self) -> bool: ...

    def __repr__(self) -> str: ...

class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L) inputs."""

    def __init__(self, num_features: int, eps: float = 1e-05, momentum: float | None = 0.1, affine: bool = True, track_running_stats: bool = True, name: str = '') -> None: ...

class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W) inputs."""

    def __init__(self, num_features: int, eps: float = 1e-05, momentum: float | None = 0.1, affine: bool = True, track_running_stats: bool = True, name: str = '') -> None: ...

def layer_norm(input: spiraltorch._core.Tensor, normalized_shape: object, weight: spiraltorch._core.Tensor | None = None, bias: spiraltorch._core.Tensor | None = None, eps: float = 1e-05) -> spiraltorch._core.Tensor:
    """
    Layer normalisation over the trailing normalized_shape dims (fused forward and backward).
    """

def embedding(input: spiraltorch._core.Tensor, weight: spiraltorch._core.Tensor, padding_idx: int | None = None) -> spiraltorch._core.Tensor:
    """
    Rows of weight picked by the integer tensor input (PyTorch's argument order).
    """

def dropout(input: spiraltorch._core.Tensor, p: float = 0.5, training: bool = True) -> spiraltorch._core.Tensor: ...

def batch_norm(input: spiraltorch._core.Tensor, running_mean: spiraltorch._core.Tensor | None, running_var: spiraltorch._core.Tensor | None, weight: spiraltorch._core.Tensor | None = None, bias: spiraltorch._core.Tensor | None = None, training: bool = False, momentum: float = 0.1, eps: float = 1e-05) -> spiraltorch._core.Tensor:
    """
    Batch normalisation over dim 1; in training updates running_mean/running_var in place.
    """

def gelu(input: spiraltorch._core.Tensor, approximate: str = 'none') -> spiraltorch._core.Tensor: ...

def relu(input: spiraltorch._core.Tensor, inplace: bool = False) -> spiraltorch._core.Tensor:
    """max(x, 0); inplace=True writes it into x."""

def silu(input: spiraltorch._core.Tensor, inplace: bool = False) -> spiraltorch._core.Tensor:
    """x * sigmoid(x); inplace=True writes it into x."""

def tanh(input: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor: ...

def sigmoid(input: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor: ...

def softmax(input: spiraltorch._core.Tensor, dim: int = -1) -> spiraltorch._core.Tensor: ...

def log_softmax(input: spiraltorch._core.Tensor, dim: int = -1) -> spiraltorch._core.Tensor: ...

def flatten(input: spiraltorch._core.Tensor, start_dim: int = 0, end_dim: int = -1) -> spiraltorch._core.Tensor: ...

class SELU(Module):
    """
    scale * elu(x, alpha) with alpha = 1.6733, scale = 1.0507 (self-normalising).
    """

    def __init__(self, inplace: bool = False, name: str = '') -> None: ...

    @property
    def inplace(self) -> bool: ...

    def extra_repr(self) -> str: ...

class Mish(Module):
    """x * tanh(softplus(x))."""

    def __init__(self, inplace: bool = False, name: str = '') -> None: ...

    @property
    def inplace(self) -> bool: ...

    def extra_repr(self) -> str: ...

class Hardswish(Module):
    """x * clamp(x + 3, 0, 6) / 6."""

    def __init__(self, inplace: bool = False, name: str = '') -> None: ...

    @property
    def inplace(self) -> bool: ...

class Hardsigmoid(Module):
    """clamp(x + 3, 0, 6) / 6."""

    def __init__(self, inplace: bool = False, name: str = '') -> None: ...

    @property
    def inplace(self) -> bool: ...

class ReLU6(Module):
    """min(max(x, 0), 6)."""

    def __init__(self, inplace: bool = False, name: str = '') -> None: ...

    @property
    def inplace(self) -> bool: ...

    def extra_repr(self) -> str: ...

class LogSigmoid(Module):
    """log(sigmoid(x)), computed as -softplus(-x)."""

    def __init__(self, name: str = '') -> None: ...

class Softsign(Module):
    """x / (1 + |x|)."""

    def __init__(self, name: str = '') -> None: ...

class Tanhshrink(Module):
    """x - tanh(x)."""

    def __init__(self, name: str = '') -> None: ...

class LeakyReLU(Module):
    """x for x > 0, negative_slope * x otherwise."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False, name: str = '') -> None: ...

    @property
    def negative_slope(self) -> float: ...

    @property
    def inplace(self) -> bool: ...

    def extra_repr(self) -> str: ...

class ELU(Module):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False, name: str = '') -> None: ...

    @property
    def alpha(self) -> float: ...

    @property
    def inplace(self) -> bool: ...

    def extra_repr(self) -> str: ...

class CELU(Module):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)); alpha != 0."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False, name: str = '') -> None: ...

    @property
    def alpha(self) -> float: ...

    @property
    def inplace(self) -> bool: ...

    def extra_repr(self) -> str: ...

class Softplus(Module):
    """
    log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold.
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0, name: str = '') -> None: ...

    @property
    def beta(self) -> float: ...

    @property
    def threshold(self) -> float: ...

    def extra_repr(self) -> str: ...

class Hardtanh(Module):
    """
    clamp(x, min_val, max_val), with zero gradient at and beyond the bounds.
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False, name: str = '') -> None: ...

    @property
    def min_val(self) -> float: ...

    @property
    def max_val(self) -> float: ...

    @property
    def inplace(self) -> bool: ...

    def extra_repr(self) -> str: ...

class Threshold(Module):
    """x where x > threshold, value elsewhere."""

    def __init__(self, threshold: float, value: float, inplace: bool = False, name: str = '') -> None: ...

    @property
    def threshold(self) -> float: ...

    @property
    def value(self) -> float: ...

    @property
    def inplace(self) -> bool: ...

    def extra_repr(self) -> str: ...

class PReLU(Module):
    """
    max(0, x) + weight * min(0, x) with a learnable weight of shape (num_parameters,) filled with init; num_parameters is 1 or the channel count (dim 1 of the input).
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, name: str = '') -> None: ...

    @property
    def num_parameters(self) -> int: ...

    @property
    def weight(self) -> spiraltorch._core.Tensor: ...

    def extra_repr(self) -> str: ...

class GLU(Module):
    """a * sigmoid(b) for the two halves a, b of the input along dim."""

    def __init__(self, dim: int = -1, name: str = '') -> None: ...

    @property
    def dim(self) -> int: ...

    def extra_repr(self) -> str: ...

class LogSoftmax(Module):
    """log(softmax(x)) along dim (default -1), computed stably."""

    def __init__(self, dim: int = -1, name: str = '') -> None: ...

    @property
    def dim(self) -> int: ...

    def extra_repr(self) -> str: ...

class Softmin(Module):
    """softmax(-x) along dim (default -1)."""

    def __init__(self, dim: int = -1, name: str = '') -> None: ...

    @property
    def dim(self) -> int: ...

    def extra_repr(self) -> str: ...

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

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-05, affine: bool = True, bias: bool = True, name: str = '') -> None: ...

    @property
    def num_groups(self) -> int: ...

    @property
    def num_channels(self) -> int: ...

    @property
    def eps(self) -> float: ...

    @property
    def affine(self) -> bool: ...

    @property
    def weight(self) -> spiraltorch._core.Tensor | None: ...

    @property
    def bias(self) -> spiraltorch._core.Tensor | None: ...

    def extra_repr(self) -> str: ...

class RMSNorm(Module):
    """
    x / sqrt(mean(x^2 over the trailing normalized_shape dims) + eps) * weight; eps=None uses the machine epsilon of the input's dtype, weight (ones) of normalized_shape when elementwise_affine.
    """

    def __init__(self, normalized_shape: object, eps: float | None = None, elementwise_affine: bool = True, name: str = '') -> None: ...

    @property
    def normalized_shape(self) -> tuple: ...

    @property
    def eps(self) -> float | None: ...

    @property
    def elementwise_affine(self) -> bool: ...

    @property
    def weight(self) -> spiraltorch._core.Tensor | None: ...

    def extra_repr(self) -> str: ...

class CosineSimilarity(Module):
    """Cosine similarity of x1 and x2 along dim; call with (x1, x2)."""

    def __init__(self, dim: int = 1, eps: float = 1e-08, name: str = '') -> None: ...

    @property
    def dim(self) -> int: ...

    @property
    def eps(self) -> float: ...

    def forward(self, x1: spiraltorch._core.Tensor, x2: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor: ...

    def __call__(self, x1: spiraltorch._core.Tensor, x2: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor: ...

    def extra_repr(self) -> str: ...

class PairwiseDistance(Module):
    """||x1 - x2 + eps||_p over the last dim; call with (x1, x2)."""

    def __init__(self, p: float = 2.0, eps: float = 1e-06, keepdim: bool = False, name: str = '') -> None: ...

    @property
    def norm(self) -> float:
        """The p of the norm (PyTorch's attribute name)."""

    @property
    def eps(self) -> float: ...

    @property
    def keepdim(self) -> bool: ...

    def forward(self, x1: spiraltorch._core.Tensor, x2: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor: ...

    def __call__(self, x1: spiraltorch._core.Tensor, x2: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor: ...

    def extra_repr(self) -> str: ...

def group_norm(input: spiraltorch._core.Tensor, num_groups: int, weight: spiraltorch._core.Tensor | None = None, bias: spiraltorch._core.Tensor | None = None, eps: float = 1e-05) -> spiraltorch._core.Tensor:
    """
    Group normalisation of (N, C, *) inputs; weight and bias are (C,) when given.
    """

def instance_norm(input: spiraltorch._core.Tensor, running_mean: spiraltorch._core.Tensor | None = None, running_var: spiraltorch._core.Tensor | None = None, weight: spiraltorch._core.Tensor | None = None, bias: spiraltorch._core.Tensor | None = None, use_input_stats: bool = True, momentum: float = 0.1, eps: float = 1e-05) -> spiraltorch._core.Tensor:
    """
    Instance normalisation of (N, C, *spatial): each (sample, channel) over its spatial dims, then weight/bias (C,). use_input_stats=False normalises with the running stats; otherwise given running stats move toward the batch average of the instance means and unbiased variances (in place).
    """

def rms_norm(input: spiraltorch._core.Tensor, normalized_shape: object, weight: spiraltorch._core.Tensor | None = None, eps: float | None = None) -> spiraltorch._core.Tensor:
    """
    x / sqrt(mean(x^2 over the trailing normalized_shape dims) + eps) * weight; eps=None is the dtype's epsilon.
    """

def normalize(input: spiraltorch._core.Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> spiraltorch._core.Tensor:
    """x / max(||x||_p along dim, eps)."""

def cosine_similarity(x1: spiraltorch._core.Tensor, x2: spiraltorch._core.Tensor, dim: int = 1, eps: float = 1e-08) -> spiraltorch._core.Tensor:
    """
    Cosine similarity along dim after broadcasting; each norm is clamped to at least eps.
    """

def conv2d(input: spiraltorch._core.Tensor, weight: spiraltorch._core.Tensor, bias: spiraltorch._core.Tensor | None = None, stride: object = 1, padding: object = 0, dilation: object = 1, groups: int = 1) -> spiraltorch._core.Tensor:
    """
    2-d convolution over (N, C, H, W) or (C, H, W) input; weight (out, C/groups, kh, kw). padding: int, tuple, 'same' or 'valid'.
    """

def conv1d(input: spiraltorch._core.Tensor, weight: spiraltorch._core.Tensor, bias: spiraltorch._core.Tensor | None = None, stride: object = 1, padding: object = 0, dilation: object = 1, groups: int = 1) -> spiraltorch._core.Tensor:
    """
    1-d convolution over (N, C, L) or (C, L) input; weight (out, C/groups, k).
    """

def conv_transpose2d(input: spiraltorch._core.Tensor, weight: spiraltorch._core.Tensor, bias: spiraltorch._core.Tensor | None = None, stride: object = 1, padding: object = 0, output_padding: object = 0, groups: int = 1, dilation: object = 1) -> spiraltorch._core.Tensor:
    """
    2-d transposed convolution over (N, C_in, H, W) or (C_in, H, W) input; weight (C_in, C_out/groups, kh, kw). Returns (N, C_out, (H-1)*stride - 2*padding + dilation*(kh-1) + output_padding + 1, ...).
    """

def conv_transpose1d(input: spiraltorch._core.Tensor, weight: spiraltorch._core.Tensor, bias: spiraltorch._core.Tensor | None = None, stride: object = 1, padding: object = 0, output_padding: object = 0, groups: int = 1, dilation: object = 1) -> spiraltorch._core.Tensor:
    """
    1-d transposed convolution over (N, C_in, L) or (C_in, L) input; weight (C_in, C_out/groups, k).
    """

def max_pool2d(input: spiraltorch._core.Tensor, kernel_size: object, stride: object | None = None, padding: object = 0, dilation: object = 1, ceil_mode: bool = False, return_indices: bool = False) -> object:
    """
    2-d max pooling; stride defaults to kernel_size. return_indices=True also returns the int64 argmax positions in each flattened input plane.
    """

def avg_pool2d(input: spiraltorch._core.Tensor, kernel_size: object, stride: object | None = None, padding: object = 0, ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: int | None = None) -> spiraltorch._core.Tensor:
    """2-d average pooling with PyTorch's divisor rules."""

def adaptive_avg_pool2d(input: spiraltorch._core.Tensor, output_size: object) -> spiraltorch._core.Tensor:
    """Average pooling to a fixed output size (H_out, W_out)."""

class Conv2d(Module):
    """
    2-d convolution layer; weight (out_channels, in_channels/groups, kh, kw), bias (out_channels,), Kaiming-uniform initialised like PyTorch.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: object, stride: object = 1, padding: object = 0, dilation: object = 1, groups: int = 1, bias: bool = True, padding_mode: str = 'zeros', dtype: object | None = None, name: str = '') -> None: ...

    @property
    def weight(self) -> spiraltorch._core.Tensor: ...

    @property
    def bias(self) -> spiraltorch._core.Tensor | None: ...

    @property
    def in_channels(self) -> int: ...

    @property
    def out_channels(self) -> int: ...

    @property
    def kernel_size(self) -> tuple: ...

    @property
    def stride(self) -> tuple: ...

    @property
    def padding(self) -> object: ...

    @property
    def dilation(self) -> tuple: ...

    @property
    def groups(self) -> int: ...

    def __repr__(self) -> str: ...

class Conv1d(Module):
    """
    1-d convolution layer; weight (out_channels, in_channels/groups, k), bias (out_channels,), Kaiming-uniform initialised like PyTorch.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: object, stride: object = 1, padding: object = 0, dilation: object = 1, groups: int = 1, bias: bool = True, padding_mode: str = 'zeros', dtype: object | None = None, name: str = '') -> None: ...

    @property
    def weight(self) -> spiraltorch._core.Tensor: ...

    @property
    def bias(self) -> spiraltorch._core.Tensor | None: ...

    @property
    def in_channels(self) -> int: ...

    @property
    def out_channels(self) -> int: ...

    @property
    def kernel_size(self) -> tuple: ...

    @property
    def stride(self) -> tuple: ...

    @property
    def padding(self) -> object: ...

    @property
    def dilation(self) -> tuple: ...

    @property
    def groups(self) -> int: ...

    def __repr__(self) -> str: ...

class MaxPool2d(Module):
    """2-d max pooling; stride defaults to kernel_size."""

    def __init__(self, kernel_size: object, stride: object | None = None, padding: object = 0, dilation: object = 1, ceil_mode: bool = False, name: str = '') -> None: ...

    @property
    def kernel_size(self) -> tuple: ...

    @property
    def stride(self) -> tuple: ...

    @property
    def padding(self) -> tuple: ...

    @property
    def dilation(self) -> tuple: ...

    @property
    def ceil_mode(self) -> bool: ...

    def __repr__(self) -> str: ...

class AvgPool2d(Module):
    """2-d average pooling; stride defaults to kernel_size."""

    def __init__(self, kernel_size: object, stride: object | None = None, padding: object = 0, ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: int | None = None, name: str = '') -> None: ...

    @property
    def kernel_size(self) -> tuple: ...

    @property
    def stride(self) -> tuple: ...

    @property
    def padding(self) -> tuple: ...

    @property
    def ceil_mode(self) -> bool: ...

    @property
    def count_include_pad(self) -> bool: ...

    def __repr__(self) -> str: ...

class AdaptiveAvgPool2d(Module):
    """Average pooling to a fixed output size."""

    def __init__(self, output_size: object, name: str = '') -> None: ...

    @property
    def output_size(self) -> tuple: ...

    def __repr__(self) -> str: ...

class RNNBase(Module):
    """Shared base of LSTM and GRU."""

    @property
    def input_size(self) -> int: ...

    @property
    def hidden_size(self) -> int: ...

    @property
    def num_layers(self) -> int: ...

    @property
    def bias(self) -> bool: ...

    @property
    def batch_first(self) -> bool: ...

    @property
    def dropout(self) -> float: ...

    @property
    def bidirectional(self) -> bool: ...

    def __repr__(self) -> str: ...

class LSTM(RNNBase):
    """
    Multi-layer LSTM with PyTorch's parameters (weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}; gate order i, f, g, o).

    batch_first defaults to False as in PyTorch (input (seq, batch, feature)); pass batch_first=True for (batch, seq, feature); input may also be a nn.utils.rnn.PackedSequence (output then packed too). forward(input, h0=None) returns (output, (h_n, c_n)); h0 is a tuple (h_0, c_0) of (num_layers, batch, hidden) tensors, or just h_0, or None.
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True, batch_first: bool = False, dropout: float = 0.0, name: str = '') -> None: ...

    def forward(self, input: object, h0: object | None = None) -> object: ...

    def __call__(self, input: object, h0: object | None = None) -> object: ...

class GRU(RNNBase):
    """
    Multi-layer GRU with PyTorch's parameters (gate order r, z, n).

    batch_first defaults to False as in PyTorch (input (seq, batch, feature)), or a nn.utils.rnn.PackedSequence. forward(input, h0=None) returns (output, h_n).
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True, batch_first: bool = False, dropout: float = 0.0, name: str = '') -> None: ...

    def forward(self, input: object, h0: spiraltorch._core.Tensor | None = None) -> object: ...

    def __call__(self, input: object, h0: spiraltorch._core.Tensor | None = None) -> object: ...

class MultiheadAttention(Module):
    """
    Multi-head attention with torch.nn.MultiheadAttention's parameters (in_proj_weight, in_proj_bias, out_proj.weight, out_proj.bias) and masks (bool True = blocked, or float added).

    batch_first defaults to False as in PyTorch. forward(query, key, value, attn_mask=None, key_padding_mask=None, need_weights=True, is_causal=False, average_attn_weights=True) returns (output, weights or None); key/value default to query. is_causal without attn_mask applies the causal mask.
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True, batch_first: bool = False, name: str = '') -> None: ...

    def forward(self, query: spiraltorch._core.Tensor, key: spiraltorch._core.Tensor | None = None, value: spiraltorch._core.Tensor | None = None, attn_mask: spiraltorch._core.Tensor | None = None, key_padding_mask: spiraltorch._core.Tensor | None = None, need_weights: bool = True, is_causal: bool = False, average_attn_weights: bool = True) -> tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor | None]: ...

    def __call__(self, query: spiraltorch._core.Tensor, key: spiraltorch._core.Tensor | None = None, value: spiraltorch._core.Tensor | None = None, attn_mask: spiraltorch._core.Tensor | None = None, key_padding_mask: spiraltorch._core.Tensor | None = None, need_weights: bool = True, is_causal: bool = False, average_attn_weights: bool = True) -> tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor | None]: ...

    @property
    def embed_dim(self) -> int: ...

    @property
    def num_heads(self) -> int: ...

    @property
    def head_dim(self) -> int: ...

    @property
    def dropout(self) -> float: ...

    @property
    def batch_first(self) -> bool: ...

    @property
    def in_proj_weight(self) -> spiraltorch._core.Tensor: ...

    @property
    def in_proj_bias(self) -> spiraltorch._core.Tensor | None: ...

    @property
    def out_proj(self) -> Linear: ...

    def __repr__(self) -> str: ...

class TransformerEncoderLayer(Module):
    """
    torch.nn.TransformerEncoderLayer with the same children (self_attn, linear1, dropout, linear2, norm1, norm2, dropout1, dropout2) and parameter names.

    batch_first defaults to False as in PyTorch. forward(src, src_mask=None, src_key_padding_mask=None, is_causal=False) (PyTorch's argument order); is_causal without src_mask applies the causal mask.
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1, activation: str = 'relu', batch_first: bool = False, norm_first: bool = False, layer_norm_eps: float = 1e-05, name: str = '') -> None: ...

    def forward(self, src: spiraltorch._core.Tensor, src_mask: spiraltorch._core.Tensor | None = None, src_key_padding_mask: spiraltorch._core.Tensor | None = None, is_causal: bool = False) -> spiraltorch._core.Tensor: ...

    def __call__(self, src: spiraltorch._core.Tensor, src_mask: spiraltorch._core.Tensor | None = None, src_key_padding_mask: spiraltorch._core.Tensor | None = None, is_causal: bool = False) -> spiraltorch._core.Tensor: ...

    @property
    def self_attn(self) -> MultiheadAttention: ...

    @property
    def linear1(self) -> Linear: ...

    @property
    def linear2(self) -> Linear: ...

    @property
    def norm1(self) -> LayerNorm: ...

    @property
    def norm2(self) -> LayerNorm: ...

    @property
    def dropout(self) -> Dropout: ...

    @property
    def dropout1(self) -> Dropout: ...

    @property
    def dropout2(self) -> Dropout: ...

    @property
    def norm_first(self) -> bool: ...

    @property
    def activation(self) -> str: ...

    def __repr__(self) -> str: ...

    def clone(self) -> TransformerEncoderLayer:
        """
        A new layer with this one's configuration, copies of its current values and its train/eval mode.
        """

class TransformerEncoder(Module):
    """
    torch.nn.TransformerEncoder: num_layers independent copies of encoder_layer (its configuration and current values, as PyTorch's deep copies), applied in order, then norm if given. Children: layers (indexable) and norm; keys 'layers.0.self_attn::in_proj_weight', 'norm::weight'.

    forward(src, mask=None, src_key_padding_mask=None, is_causal=None) returns the encoded src (same shape); the masks go to every layer.
    """

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm: Module | None = None, enable_nested_tensor: bool = True, mask_check: bool = True, name: str = '') -> None: ...

    def forward(self, src: spiraltorch._core.Tensor, mask: spiraltorch._core.Tensor | None = None, src_key_padding_mask: spiraltorch._core.Tensor | None = None, is_causal: bool | None = None) -> spiraltorch._core.Tensor: ...

    def __call__(self, src: spiraltorch._core.Tensor, mask: spiraltorch._core.Tensor | None = None, src_key_padding_mask: spiraltorch._core.Tensor | None = None, is_causal: bool | None = None) -> spiraltorch._core.Tensor: ...

    @property
    def num_layers(self) -> int: ...

    @property
    def norm(self) -> Module: ...

    @property
    def layers(self) -> list[TransformerEncoderLayer]:
        """The layers, in order (a list)."""

    def __repr__(self) -> str: ...

class TransformerDecoderLayer(Module):
    """
    torch.nn.TransformerDecoderLayer with the same children (self_attn, multihead_attn, linear1, dropout, linear2, norm1, norm2, norm3, dropout1, dropout2, dropout3) and parameter names.

    batch_first defaults to False as in PyTorch. forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False) returns the decoded tgt.
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1, activation: str = 'relu', batch_first: bool = False, norm_first: bool = False, layer_norm_eps: float = 1e-05, name: str = '') -> None: ...

    def forward(self, tgt: spiraltorch._core.Tensor, memory: spiraltorch._core.Tensor, tgt_mask: spiraltorch._core.Tensor | None = None, memory_mask: spiraltorch._core.Tensor | None = None, tgt_key_padding_mask: spiraltorch._core.Tensor | None = None, memory_key_padding_mask: spiraltorch._core.Tensor | None = None, tgt_is_causal: bool = False, memory_is_causal: bool = False) -> spiraltorch._core.Tensor: ...

    def __call__(self, tgt: spiraltorch._core.Tensor, memory: spiraltorch._core.Tensor, tgt_mask: spiraltorch._core.Tensor | None = None, memory_mask: spiraltorch._core.Tensor | None = None, tgt_key_padding_mask: spiraltorch._core.Tensor | None = None, memory_key_padding_mask: spiraltorch._core.Tensor | None = None, tgt_is_causal: bool = False, memory_is_causal: bool = False) -> spiraltorch._core.Tensor: ...

    @property
    def self_attn(self) -> MultiheadAttention: ...

    @property
    def multihead_attn(self) -> MultiheadAttention: ...

    @property
    def linear1(self) -> Linear: ...

    @property
    def linear2(self) -> Linear: ...

    @property
    def norm1(self) -> LayerNorm: ...

    @property
    def norm2(self) -> LayerNorm: ...

    @property
    def norm3(self) -> LayerNorm: ...

    @property
    def dropout(self) -> Dropout: ...

    @property
    def dropout1(self) -> Dropout: ...

    @property
    def dropout2(self) -> Dropout: ...

    @property
    def dropout3(self) -> Dropout: ...

    @property
    def norm_first(self) -> bool: ...

    @property
    def activation(self) -> str: ...

    def __repr__(self) -> str: ...

    def clone(self) -> TransformerDecoderLayer:
        """
        A new layer with this one's configuration, copies of its current values and its train/eval mode.
        """

class TransformerDecoder(Module):
    """
    torch.nn.TransformerDecoder: num_layers independent copies of decoder_layer, applied in order, then norm if given. Children: layers (indexable) and norm.

    forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False).
    """

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None, name: str = '') -> None: ...

    def forward(self, tgt: spiraltorch._core.Tensor, memory: spiraltorch._core.Tensor, tgt_mask: spiraltorch._core.Tensor | None = None, memory_mask: spiraltorch._core.Tensor | None = None, tgt_key_padding_mask: spiraltorch._core.Tensor | None = None, memory_key_padding_mask: spiraltorch._core.Tensor | None = None, tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> spiraltorch._core.Tensor: ...

    def __call__(self, tgt: spiraltorch._core.Tensor, memory: spiraltorch._core.Tensor, tgt_mask: spiraltorch._core.Tensor | None = None, memory_mask: spiraltorch._core.Tensor | None = None, tgt_key_padding_mask: spiraltorch._core.Tensor | None = None, memory_key_padding_mask: spiraltorch._core.Tensor | None = None, tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> spiraltorch._core.Tensor: ...

    @property
    def num_layers(self) -> int: ...

    @property
    def norm(self) -> Module: ...

    @property
    def layers(self) -> list[TransformerDecoderLayer]:
        """The layers, in order (a list)."""

    def __repr__(self) -> str: ...

class Transformer(Module):
    """
    torch.nn.Transformer: a TransformerEncoder and a TransformerDecoder (each closed by a LayerNorm), matrices Xavier-uniform like PyTorch's reset. Children encoder and decoder, PyTorch's keys (a subclass may replace them, as PyTorch's word_language_model replaces decoder with a Linear; forward then refuses to run).

    batch_first defaults to False as in PyTorch. forward(src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None, memory_is_causal=False) returns the decoded tgt.
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6, num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1, activation: str = 'relu', custom_encoder: object | None = None, custom_decoder: object | None = None, layer_norm_eps: float = 1e-05, batch_first: bool = False, norm_first: bool = False, bias: bool = True, name: str = '') -> None: ...

    def forward(self, src: spiraltorch._core.Tensor, tgt: spiraltorch._core.Tensor, src_mask: spiraltorch._core.Tensor | None = None, tgt_mask: spiraltorch._core.Tensor | None = None, memory_mask: spiraltorch._core.Tensor | None = None, src_key_padding_mask: spiraltorch._core.Tensor | None = None, tgt_key_padding_mask: spiraltorch._core.Tensor | None = None, memory_key_padding_mask: spiraltorch._core.Tensor | None = None, src_is_causal: bool | None = None, tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> spiraltorch._core.Tensor: ...

    def __call__(self, src: spiraltorch._core.Tensor, tgt: spiraltorch._core.Tensor, src_mask: spiraltorch._core.Tensor | None = None, tgt_mask: spiraltorch._core.Tensor | None = None, memory_mask: spiraltorch._core.Tensor | None = None, src_key_padding_mask: spiraltorch._core.Tensor | None = None, tgt_key_padding_mask: spiraltorch._core.Tensor | None = None, memory_key_padding_mask: spiraltorch._core.Tensor | None = None, src_is_causal: bool | None = None, tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> spiraltorch._core.Tensor: ...

    @property
    def encoder(self) -> object:
        """
        The child 'encoder' (a TransformerEncoder unless a subclass replaced it).
        """

    @property
    def decoder(self) -> object:
        """
        The child 'decoder' (a TransformerDecoder unless a subclass replaced it).
        """

    @property
    def d_model(self) -> int: ...

    @property
    def nhead(self) -> int: ...

    @property
    def batch_first(self) -> bool: ...

    @staticmethod
    def generate_square_subsequent_mask(sz: int) -> spiraltorch._core.Tensor:
        """A float (sz, sz) causal mask: 0 on and below the diagonal, -inf above."""

    def __repr__(self) -> str: ...

def scaled_dot_product_attention(query: spiraltorch._core.Tensor, key: spiraltorch._core.Tensor, value: spiraltorch._core.Tensor, attn_mask: spiraltorch._core.Tensor | None = None, dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None) -> spiraltorch._core.Tensor:
    """
    softmax(q k^T * scale + mask) v like torch.nn.functional.scaled_dot_product_attention: attn_mask is bool (True = may attend) or float (added); is_causal masks keys after each query; scale defaults to 1/sqrt(head_dim).
    """

def generate_square_subsequent_mask(sz: int, dtype: object | None = None, device: object | None = None) -> spiraltorch._core.Tensor:
    """
    A float (sz, sz) causal mask: 0 on and below the diagonal, -inf above (like torch.nn.Transformer.generate_square_subsequent_mask).
    """

class WaveRnn(Module):
    """
    Attentionless recurrent layer: a causal convolution over the last `kernel_size` inputs gives the gate pre-activations of a GRU-style gated recurrence, and each hidden state is mapped into the Poincare ball (exp_0, `curvature`).

    Input (batch, seq, input_size). forward(input, lengths=None, h0=None) returns (output (batch, seq, hidden) in the ball, h_n (batch, hidden)); with `lengths` (int64, one per right-padded row) outputs past a row's length are zero and h_n is its state after the last valid step.
    """

    def __init__(self, input_size: int, hidden_size: int, kernel_size: int = 3, curvature: float = -1.0, name: str = '') -> None: ...

    def forward(self, input: spiraltorch._core.Tensor, lengths: spiraltorch._core.Tensor | None = None, h0: spiraltorch._core.Tensor | None = None) -> tuple: ...

    def __call__(self, input: spiraltorch._core.Tensor, lengths: spiraltorch._core.Tensor | None = None, h0: spiraltorch._core.Tensor | None = None) -> tuple: ...

    @property
    def input_size(self) -> int: ...

    @property
    def hidden_size(self) -> int: ...

    @property
    def kernel_size(self) -> int: ...

    @property
    def curvature(self) -> float: ...

    def extra_repr(self) -> str: ...

class WaveGate(Module):
    """
    Highway gate per position, mapped into the Poincare ball: g = sigmoid(x W_g^T + b_g), v = tanh(x W_v^T + b_v), y = exp_0(g * v + (1 - g) * x). Works on any (..., features) input.
    """

    def __init__(self, features: int, curvature: float = -1.0, name: str = '') -> None: ...

    def gate(self, input: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor:
        """The gate g = sigmoid(x W_g^T + b_g) for an input."""

    @property
    def features(self) -> int: ...

    @property
    def curvature(self) -> float: ...

    def extra_repr(self) -> str: ...

class ZSpaceMixer(Module):
    """
    Causal depthwise mixing along time: y[b, t, f] = sum_k weight[f, K-1-k] * x[b, t-k, f]. Input (batch, seq, features), or (batch, features) for one step (y = x * weight[:, K-1]). Initialised to the identity.
    """

    def __init__(self, features: int, kernel_size: int = 4, name: str = '') -> None: ...

    @property
    def features(self) -> int: ...

    @property
    def kernel_size(self) -> int: ...

    @property
    def weight(self) -> spiraltorch._core.Tensor: ...

    def extra_repr(self) -> str: ...

class FeatureReorder2d(Module):
    """
    Moves image features between channel-last (NHWC) and the canonical channel-first (NCHW) layout. Input (batch, C*H*W) (output flattened too) or 4-d; layout 'NCHW' is the identity; direction 'to_canonical' ('to') or 'from_canonical' ('from').
    """

    def __init__(self, channels: int, height: int, width: int, layout: str = 'NCHW', direction: str = 'to_canonical', name: str = '') -> None: ...

    @property
    def shape(self) -> tuple: ...

    @property
    def layout(self) -> str: ...

    @property
    def direction(self) -> str: ...

    def extra_repr(self) -> str: ...

class DesireTrainerBridge:
    """
    Collects the steps of the pipelines it is attached to; drain_summary() returns per-phase counts and mean entropy, temperature and weights since the last drain (None when empty).
    """

    def __init__(self) -> None: ...

    def __len__(self) -> int: ...

    def is_empty(self) -> bool: ...

    def drain_summary(self) -> object: ...

class DesireRoundtableBridge:
    """
    Turns each step's weights into roundtable band multipliers: bary = (alpha, gamma, beta) / sum, multipliers (above, here, beneath) = clamp(1 + blend * (bary - 1/3), 0.35, 1.65), drift = clamp(tanh(lambda) * drift_gain, -1, 1). blend and drift_gain are clamped to [0, 1].
    """

    def __init__(self, blend: float = 0.35, drift_gain: float = 0.35) -> None: ...

    @property
    def blend(self) -> float: ...

    @blend.setter
    def blend(self, arg: float, /) -> None: ...

    @property
    def drift_gain(self) -> float: ...

    @drift_gain.setter
    def drift_gain(self, arg: float, /) -> None: ...

    def impulse(self) -> object:
        """
        The latest {'multipliers': (above, here, beneath), 'drift'}, or None before any step.
        """

    def drain_summary(self) -> object: ...

class DesireTelemetryBundle:
    """
    A trainer bridge and a roundtable bridge, shared with every pipeline built with bundle=this.
    """

    def __init__(self, *, trainer: bool = True, roundtable: bool = True, blend: float = 0.35, drift_gain: float = 0.35) -> None: ...

    def has_trainer(self) -> bool: ...

    def has_roundtable(self) -> bool: ...

    def trainer_bridge(self) -> DesireTrainerBridge: ...

    def roundtable_bridge(self) -> DesireRoundtableBridge: ...

    def drain_trainer_summary(self) -> object: ...

    def drain_roundtable_summary(self) -> object: ...

class DesirePipeline:
    """
    Reshapes a next-token distribution: score_i = log_softmax(l)_i / T + alpha * transition[prev, i] + beta * avoidance_i + gamma * sum_k c_k bridge[i, k] - lambda * repression_i, q = softmax(score); T follows eta * (target_entropy - H(q)) within [temp_min, temp_max]. Phases observation -> injection -> integration by step count; alpha and beta warm up over integration_horizon steps. The defaults (all weights 0, eta 0) leave the distribution unchanged. See spiraltorch/nn/desire.h for every formula.
    """

    def __init__(self, vocab_size: int, *, concepts: int = 3, alpha_end: float = 0.0, beta_end: float = 0.0, gamma: float = 0.0, lambda_: float = 0.0, observation_horizon: int = 1, integration_horizon: int = 2, target_entropy: float = 0.8, eta: float = 0.0, temp_min: float = 0.4, temp_max: float = 1.6, bundle: DesireTelemetryBundle | None = None) -> None: ...

    def step(self, logits: object, previous_token: int, concept: object | None = None) -> dict:
        """
        One step: returns {'step', 'phase', 'temperature' (used), 'next_temperature', 'entropy' and 'base_entropy' (nats), 'weights' {alpha, beta, gamma, lambda}, 'probabilities', 'logit_offsets'}.
        """

    @property
    def vocab_size(self) -> int: ...

    @property
    def concepts(self) -> int: ...

    @property
    def temperature(self) -> float: ...

    @property
    def steps_taken(self) -> int: ...

    def set_transition_prior(self, matrix: object) -> None:
        """
        Row-major vocab x vocab log-prior of token i after token p (flattened or a 2-d Tensor).
        """

    def set_repression(self, values: object) -> None: ...

    def set_concept_bridge(self, matrix: object) -> None:
        """Row-major vocab x concepts non-negative affinities."""

    @property
    def concept_bridge(self) -> list[float]: ...

    def ingest_geometry_bias(self, signal: object, *, source: str = 'zspace') -> None:
        """
        Stores a bias signal from 'zspace' or 'roundtable' as telemetry (it never changes the distribution).
        """

    def clear_geometry_bias(self) -> None: ...

    def geometry_bias_metrics(self) -> object:
        """
        rms energies of the stored signals (z x0.25, roundtable x0.1), composite, balance, counts; None if empty.
        """

    def attach_trainer_bridge(self, bridge: DesireTrainerBridge) -> None: ...

    def attach_roundtable_bridge(self, bridge: DesireRoundtableBridge) -> None: ...

    def reset(self) -> None: ...

class MellinBasis:
    """
    Power-law feature map: y_i = sign(x_i) max(|x_i|, 1e-9)^e_i (e_i = 1 past the given exponents), then each row L2-normalised (zero rows stay zero). Differentiable.
    """

    def __init__(self, exponents: Sequence[float]) -> None: ...

    @staticmethod
    def constant(dim: int, exponent: float) -> MellinBasis: ...

    @staticmethod
    def ramp(dim: int, start: float, end: float) -> MellinBasis: ...

    @property
    def dimension(self) -> int: ...

    @property
    def exponents(self) -> list[float]: ...

    def project(self, x: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor: ...

    def __repr__(self) -> str: ...

class ZSpaceVaeState:
    """latent, reconstruction, mu and logvar of one forward pass."""

    @property
    def latent(self) -> spiraltorch._core.Tensor: ...

    @property
    def reconstruction(self) -> spiraltorch._core.Tensor: ...

    @property
    def mu(self) -> spiraltorch._core.Tensor: ...

    @property
    def logvar(self) -> spiraltorch._core.Tensor: ...

class ZSpaceVae(Module):
    """
    Gaussian VAE with linear encoder/decoder: mu, logvar = linear encodings of x; z = mu + exp(logvar/2) eps in training (mu in eval); x^ = z D^T + b. loss(x, kl_weight) = reconstruction (mean ||x - x^||^2 / D) + kl_weight * KL(q(z|x) || N(0, I)); train with any optimizer. Calling it returns the reconstruction.
    """

    def __init__(self, input_dim: int, latent_dim: int, seed: int = 42, name: str = '') -> None: ...

    @property
    def input_dim(self) -> int: ...

    @property
    def latent_dim(self) -> int: ...

    @property
    def seed(self) -> int: ...

    def encode(self, x: spiraltorch._core.Tensor) -> tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor]:
        """Returns (mu, logvar)."""

    def sample_latent(self, mu: spiraltorch._core.Tensor, logvar: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor: ...

    def decode(self, z: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor: ...

    def forward_full(self, x: spiraltorch._core.Tensor, use_mean: bool = False) -> ZSpaceVaeState: ...

    def loss_terms(self, x: spiraltorch._core.Tensor, state: ZSpaceVaeState) -> tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor]:
        """(reconstruction, kl) as differentiable scalars."""

    def loss(self, x: spiraltorch._core.Tensor, kl_weight: float = 1.0) -> tuple:
        """
        One forward pass; returns (loss tensor to backpropagate, stats dict with recon_loss, kl_loss, evidence_lower_bound, weighted_loss, kl_weight, batch_size).
        """

    def evaluate(self, x: spiraltorch._core.Tensor, kl_weight: float = 1.0) -> dict:
        """Stats of the mean reconstruction (z = mu), no gradients."""

    def prior_recon_loss(self, x: spiraltorch._core.Tensor) -> float:
        """
        Reconstruction error when decoding z ~ N(0, I) instead of the posterior: the baseline to beat.
        """

class ZSpaceTextVae(ZSpaceVae):
    """
    ZSpaceVae over the Z-space wave encoding of text fitted to window_chars characters (truncated or padded with spaces); input_dim = 2 * window_chars.
    """

    def __init__(self, window_chars: int, latent_dim: int, curvature: float = -1.0, temperature: float = 1.0, seed: int = 42, name: str = '') -> None: ...

    @property
    def window_chars(self) -> int: ...

    @property
    def curvature(self) -> float: ...

    @property
    def temperature(self) -> float: ...

    def fit_text(self, text: str) -> str: ...

    def encode_texts(self, texts: Sequence[str]) -> spiraltorch._core.Tensor:
        """(len(texts), 2 * window_chars) float32 wave encodings."""

def state_dict_hash(state: object) -> str:
    """sha256 over the sorted keys, dtypes, shapes and bytes of a state dict."""

def external_state(state: object) -> dict:
    """
    Converts a dict of tensors/arrays/lists to SpiralTorch tensors (DLPack, no copy when possible).
    """

def apply_transform(tensor: spiraltorch._core.Tensor, transform: str, shape: object | None = None) -> spiraltorch._core.Tensor: ...

class LoraLinear(Module):
    """
    LoRA around a frozen Linear: y = x W^T + b + (alpha/rank) * dropout(x) A^T B^T.
    """

    def __init__(self, in_features: int, out_features: int, rank: int, alpha: float = 1.0, dropout: float = 0.0, bias: bool = True, name: str = '') -> None: ...

    @staticmethod
    def from_linear(linear: Linear, rank: int, alpha: float = 1.0, dropout: float = 0.0) -> LoraLinear:
        """
        Wraps an existing Linear, sharing its weight and bias as the frozen base.
        """

    @property
    def weight(self) -> spiraltorch._core.Tensor: ...

    @property
    def bias(self) -> spiraltorch._core.Tensor | None: ...

    @property
    def lora_a(self) -> spiraltorch._core.Tensor: ...

    @property
    def lora_b(self) -> spiraltorch._core.Tensor: ...

    @property
    def in_features(self) -> int: ...

    @property
    def out_features(self) -> int: ...

    @property
    def rank(self) -> int: ...

    @property
    def alpha(self) -> float: ...

    @property
    def scaling(self) -> float: ...

    @property
    def scale(self) -> float: ...

    @property
    def dropout(self) -> float: ...

    @property
    def merged(self) -> bool: ...

    def merge(self) -> None: ...

    def unmerge(self) -> None: ...

    def set_trainable(self, trainable: bool = True) -> None:
        """Makes the adapters (lora_a, lora_b) trainable or frozen."""

    def set_base_trainable(self, trainable: bool = True) -> None:
        """Makes the base weight/bias trainable or frozen (frozen by default)."""

    def base_state_dict(self) -> dict: ...

def embedding_bag(input: spiraltorch._core.Tensor, weight: spiraltorch._core.Tensor, offsets: spiraltorch._core.Tensor | None = None, max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = 'mean', sparse: bool = False, per_sample_weights: spiraltorch._core.Tensor | None = None, include_last_offset: bool = False, padding_idx: int | None = None) -> spiraltorch._core.Tensor:
    """
    Sums, means or maxima of bags of rows of weight: input 2-D (bags, length), or 1-D with offsets where each bag starts. Returns (bags, embedding_dim); empty bags give zeros, padding_idx entries are left out.
    """

def max_pool1d(input: spiraltorch._core.Tensor, kernel_size: object, stride: object | None = None, padding: object = 0, dilation: object = 1, ceil_mode: bool = False, return_indices: bool = False) -> object:
    """
    1-d max pooling over (N, C, L) or (C, L); stride defaults to kernel_size. return_indices=True also returns the int64 argmax positions along L.
    """

def avg_pool1d(input: spiraltorch._core.Tensor, kernel_size: object, stride: object | None = None, padding: object = 0, ceil_mode: bool = False, count_include_pad: bool = True) -> spiraltorch._core.Tensor:
    """
    1-d average pooling over (N, C, L) or (C, L) with PyTorch's divisor rules.
    """

def adaptive_avg_pool1d(input: spiraltorch._core.Tensor, output_size: object) -> spiraltorch._core.Tensor:
    """Average pooling of (N, C, L) or (C, L) to length output_size."""

def adaptive_max_pool2d(input: spiraltorch._core.Tensor, output_size: object, return_indices: bool = False) -> object:
    """
    Max pooling of (N, C, H, W) or (C, H, W) to a fixed (H_out, W_out) over PyTorch's adaptive windows; return_indices=True also returns int64 argmax positions in each flattened input plane.
    """

class MaxPool1d(Module):
    """1-d max pooling; stride defaults to kernel_size."""

    def __init__(self, kernel_size: object, stride: object | None = None, padding: object = 0, dilation: object = 1, ceil_mode: bool = False, name: str = '') -> None: ...

    @property
    def kernel_size(self) -> int: ...

    @property
    def stride(self) -> int: ...

    @property
    def padding(self) -> int: ...

    @property
    def dilation(self) -> int: ...

    @property
    def ceil_mode(self) -> bool: ...

    def __repr__(self) -> str: ...

class AvgPool1d(Module):
    """1-d average pooling; stride defaults to kernel_size."""

    def __init__(self, kernel_size: object, stride: object | None = None, padding: object = 0, ceil_mode: bool = False, count_include_pad: bool = True, name: str = '') -> None: ...

    @property
    def kernel_size(self) -> tuple: ...

    @property
    def stride(self) -> tuple: ...

    @property
    def padding(self) -> tuple: ...

    @property
    def ceil_mode(self) -> bool: ...

    @property
    def count_include_pad(self) -> bool: ...

    def __repr__(self) -> str: ...

class AdaptiveAvgPool1d(Module):
    """Average pooling to a fixed output length."""

    def __init__(self, output_size: object, name: str = '') -> None: ...

    @property
    def output_size(self) -> int: ...

    def __repr__(self) -> str: ...

class AdaptiveMaxPool2d(Module):
    """Max pooling to a fixed output size (H_out, W_out)."""

    def __init__(self, output_size: object, name: str = '') -> None: ...

    @property
    def output_size(self) -> tuple: ...

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

    def __init__(self, upscale_factor: int, name: str = '') -> None: ...

    @property
    def upscale_factor(self) -> int: ...

    def __repr__(self) -> str: ...

class PixelUnshuffle(Module):
    """(*, C, H*r, W*r) -> (*, C*r^2, H, W)."""

    def __init__(self, downscale_factor: int, name: str = '') -> None: ...

    @property
    def downscale_factor(self) -> int: ...

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

    def __init__(self, p: float = 0.5, inplace: object | None = False, name: str = '', *, seed: int | None = None) -> None:
        """
        inplace=True writes the result into the input (in training); seed= gives the layer its own Philox stream (reproducible masks).
        """

    @property
    def p(self) -> float: ...

    @property
    def inplace(self) -> bool: ...

    def __repr__(self) -> str: ...

class Dropout2d(Module):
    """Channel-wise dropout of (N, C, H, W) input in training mode."""

    def __init__(self, p: float = 0.5, inplace: object | None = False, name: str = '', *, seed: int | None = None) -> None:
        """
        inplace=True writes the result into the input (in training); seed= gives the layer its own Philox stream (reproducible masks).
        """

    @property
    def p(self) -> float: ...

    @property
    def inplace(self) -> bool: ...

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

    def __init__(self, p: float = 0.5, inplace: bool = False, name: str = '', *, seed: int | None = None) -> None: ...

    @property
    def p(self) -> float: ...

    def __repr__(self) -> str: ...

class FeatureAlphaDropout(AlphaDropout):
    """Alpha dropout of whole channels of (N, C, *) input (SELU networks)."""

    def __init__(self, p: float = 0.5, inplace: bool = False, name: str = '', *, seed: int | None = None) -> None: ...

def bilinear(input1: spiraltorch._core.Tensor, input2: spiraltorch._core.Tensor, weight: spiraltorch._core.Tensor, bias: spiraltorch._core.Tensor | None = None) -> spiraltorch._core.Tensor:
    """
    y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o].
    """

class Bilinear(Module):
    """
    Bilinear layer: weight (out_features, in1_features, in2_features), bias (out_features,), U(-1/sqrt(in1_features), 1/sqrt(in1_features)) like PyTorch.
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, name: str = '') -> None: ...

    def forward(self, input1: spiraltorch._core.Tensor, input2: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor: ...

    def __call__(self, input1: spiraltorch._core.Tensor, input2: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor: ...

    @property
    def weight(self) -> spiraltorch._core.Tensor: ...

    @property
    def bias(self) -> spiraltorch._core.Tensor | None: ...

    @property
    def in1_features(self) -> int: ...

    @property
    def in2_features(self) -> int: ...

    @property
    def out_features(self) -> int: ...

    def __repr__(self) -> str: ...

class RNNCellBase(Module):
    """Shared base of RNNCell, LSTMCell and GRUCell."""

    @property
    def input_size(self) -> int: ...

    @property
    def hidden_size(self) -> int: ...

    @property
    def bias(self) -> bool: ...

    @property
    def weight_ih(self) -> spiraltorch._core.Tensor: ...

    @property
    def weight_hh(self) -> spiraltorch._core.Tensor: ...

    @property
    def bias_ih(self) -> spiraltorch._core.Tensor | None: ...

    @property
    def bias_hh(self) -> spiraltorch._core.Tensor | None: ...

class RNNCell(RNNCellBase):
    """
    Elman cell h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh), act tanh or relu. forward(input, hx=None) returns h'.
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = 'tanh', name: str = '') -> None: ...

    @property
    def nonlinearity(self) -> str: ...

    def forward(self, input: spiraltorch._core.Tensor, hx: spiraltorch._core.Tensor | None = None) -> spiraltorch._core.Tensor: ...

    def __call__(self, input: spiraltorch._core.Tensor, hx: spiraltorch._core.Tensor | None = None) -> spiraltorch._core.Tensor: ...

    def __repr__(self) -> str: ...

class LSTMCell(RNNCellBase):
    """
    LSTM cell, gate order (i, f, g, o) like PyTorch. forward(input, hx=None) with hx = (h_0, c_0) returns (h_1, c_1).
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, name: str = '') -> None: ...

    def forward(self, input: spiraltorch._core.Tensor, hx: object | None = None) -> tuple: ...

    def __call__(self, input: spiraltorch._core.Tensor, hx: object | None = None) -> tuple: ...

    def __repr__(self) -> str: ...

class GRUCell(RNNCellBase):
    """
    GRU cell, gate order (r, z, n) like PyTorch. forward(input, hx=None) returns h'.
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, name: str = '') -> None: ...

    def forward(self, input: spiraltorch._core.Tensor, hx: spiraltorch._core.Tensor | None = None) -> spiraltorch._core.Tensor: ...

    def __call__(self, input: spiraltorch._core.Tensor, hx: spiraltorch._core.Tensor | None = None) -> spiraltorch._core.Tensor: ...

    def __repr__(self) -> str: ...

class RoundtableConfig:
    """
    Band sizes of the roundtable split. band_weights scale the Above/Here/Beneath gradient bands (a heuristic; the default (1, 1, 1) is plain gradient descent).
    """

    def __init__(self, *, top_k: int = 8, mid_k: int = 8, bottom_k: int = 8, here_tolerance: float = 1e-05, band_weights: Sequence[float] = [1.0, 1.0, 1.0]) -> None: ...

    @property
    def top_k(self) -> int: ...

    @property
    def mid_k(self) -> int: ...

    @property
    def bottom_k(self) -> int: ...

    @property
    def here_tolerance(self) -> float: ...

    @property
    def band_weights(self) -> list[float]: ...

    def __repr__(self) -> str: ...

class RoundtableSchedule:
    """Splits output gradients into Above/Here/Beneath bands."""

    def above_k(self) -> int: ...

    def here_k(self) -> int: ...

    def beneath_k(self) -> int: ...

    def band_energy(self, gradient: spiraltorch._core.Tensor) -> tuple:
        """Sum of |g| in each band: (above, here, beneath)."""

    def classify(self, gradient: spiraltorch._core.Tensor) -> list: ...

    def weight_mask(self, gradient: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor: ...

    def __repr__(self) -> str: ...

class EpochStats:
    """What one epoch did; average_loss is the plain mean of batch losses."""

    @property
    def batches(self) -> int: ...

    @property
    def total_loss(self) -> float: ...

    @property
    def average_loss(self) -> float: ...

    @property
    def skipped_steps(self) -> int: ...

    @property
    def seconds(self) -> float: ...

    @property
    def band_energy(self) -> dict: ...

    @property
    def desire_summary(self) -> object:
        """
        The desire trainer bridge's summary drained at the end of the epoch, or None.
        """

    @property
    def desire_multipliers(self) -> dict:
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
    def current(self) -> float: ...

    @property
    def last_pressure(self) -> float | None: ...

    def sync(self, arg: float, /) -> None: ...

    def observe_pressure(self, arg: float, /) -> dict: ...

class SpectralLearningRatePolicy:
    """
    Heuristic LR scale from roundtable band energies: (target / smoothed above-share)^gain, clamped to lr_bounds and moved by at most max_lr_step per batch. Off unless passed to enable_spectral_learning_rate.
    """

    def __init__(self, *, smoothing: float = 0.2, target_concentration: float = 0.5, gain: float = 0.5, lr_bounds: tuple[float, float] = (0.1, 6.0), max_lr_step: float = 1.4) -> None: ...

    def observe(self, above: float, here: float, beneath: float) -> float: ...

    @property
    def last_scale(self) -> float: ...

    @property
    def concentration(self) -> float | None: ...

class ModuleTrainer:
    """
    Native training loop: Riemannian (Poincare-ball) steps for modules with an attached hypergrad, plain SGD with fallback_learning_rate for the rest.
    """

    def __init__(self, *, backend: str = 'cpu', curvature: float = -1.0, hyper_learning_rate: float = 0.01, fallback_learning_rate: float = 0.01) -> None: ...

    def roundtable(self, rows: int, cols: int, config: RoundtableConfig | None = None) -> RoundtableSchedule: ...

    def train_epoch(self, model: Module, loss: object, batches: object, schedule: RoundtableSchedule) -> EpochStats: ...

    def evaluate_epoch(self, model: Module, loss: object, batches: object) -> EpochStats: ...

    def prepare(self, model: Module) -> None: ...

    def zero(self, model: Module) -> None: ...

    def step(self, model: Module) -> bool:
        """
        Applies one update from .grad; returns False (and changes nothing) if a gradient is not finite.
        """

    def enable_desire_telemetry(self, bundle: DesireTelemetryBundle) -> None:
        """
        Each batch's roundtable band weights are multiplied by the bundle's roundtable impulse (above, here, beneath); each epoch drains its trainer bridge into EpochStats.desire_summary.
        """

    def disable_desire_telemetry(self) -> None: ...

    @property
    def desire_telemetry_enabled(self) -> bool: ...

    def enable_realgrad(self, learning_rate: float) -> None: ...

    def disable_realgrad(self) -> None: ...

    def set_grad_clip_max_norm(self, max_norm: float) -> None: ...

    def clear_grad_clip_max_norm(self) -> None: ...

    def enable_curvature_scheduler(self, scheduler: CurvatureScheduler) -> None: ...

    def disable_curvature_scheduler(self) -> None: ...

    def curvature_metrics(self) -> object: ...

    def enable_spectral_learning_rate(self, policy: SpectralLearningRatePolicy | None = None) -> None: ...

    def disable_spectral_learning_rate(self) -> None: ...

    def spectral_metrics(self) -> object: ...

    def mul_learning_rate(self, model: Module, factor: float) -> None: ...

    @property
    def requested_backend(self) -> str: ...

    @property
    def backend(self) -> str: ...

    @property
    def effective_backend(self) -> str: ...

    @property
    def curvature(self) -> float: ...

    @property
    def hyper_learning_rate(self) -> float: ...

    @property
    def fallback_learning_rate(self) -> float: ...

    @property
    def real_learning_rate(self) -> float | None: ...

    @property
    def grad_clip_max_norm(self) -> float | None: ...

    @property
    def epoch(self) -> int: ...

    @property
    def steps(self) -> int:
        """Batches train_epoch has taken, across epochs (skipped ones included)."""

    def set_trace(self, path: object, *, append: bool = False, overwrite: bool = False) -> None:
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
