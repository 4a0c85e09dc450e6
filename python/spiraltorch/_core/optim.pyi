"""Optimizers, learning-rate schedules and gradient clipping."""

from collections.abc import Callable, Iterable, Sequence
import inspect
from typing import Any

import spiraltorch._core


class ParamGroup:
    """
    One parameter group: behaves like PyTorch's group dict (group['lr'] = 0.1 works).
    """

    def __getitem__(self, key: str, /) -> list[spiraltorch._core.Tensor] | float | bool | tuple[float, float]:
        """
        group[key]: 'params' (the list of tensors), an option as a float, a flag as a bool, or a pair ('betas', 'etas', 'step_sizes') as a tuple. KeyError for an option the group does not have.
        """

    def __setitem__(self, key: str, value: Iterable[spiraltorch._core.Tensor] | float | bool | tuple[float, float] | spiraltorch._core.Tensor | None, /) -> None:
        """
        group[key] = value: sets an option (a number, a bool, a 0-d tensor, or a pair for 'betas'/'etas'/'step_sizes'; None leaves it unchanged) or replaces 'params'. ValueError for a non-finite or negative 'lr'/'weight_decay' or a pair of the wrong length; the group is unchanged then.
        """

    def __contains__(self, key: str) -> bool:
        """key in group: 'params' or an option the group has."""

    def get(self, key: str, default: Any = None) -> Any:
        """
        group[key], or default when the group has no such option (like dict.get).
        """

    def keys(self) -> list[str]:
        """
        'params' followed by the option names (pairs such as 'betas' under one name).
        """

    def items(self) -> list[tuple[str, Any]]:
        """(key, group[key]) for every key in keys()."""

    def to_dict(self) -> dict[str, Any]:
        """
        A plain dict copy of the group: {'params': [tensors], 'lr': ..., ...} (the tensors are the live ones).
        """

    def __repr__(self) -> str:
        """ParamGroup({...}) with the group's dict."""

class StepResult:
    """
    What Optimizer.step() did when its verdict is still on the device (wgpu): bool(result) reads it (waiting for that step's work only) and is True when the update was applied, False when a non-finite gradient made it skip.
    """

    def __bool__(self) -> bool:
        """
        True when the update was applied (reads the device verdict on first use).
        """

    def __eq__(self, other: bool) -> bool:
        """bool(self) == other."""

    @property
    def known(self) -> bool:
        """True when bool() needs no device read."""

    def __repr__(self) -> str:
        """
        StepResult(True), StepResult(False), or StepResult(pending) while the verdict is on the device.
        """

class Optimizer:
    """
    Base of the optimizers. step() first checks every gradient is finite; if one is not, nothing is updated, skipped_steps grows and step() returns False.
    """

    @property
    def param_groups(self) -> list[ParamGroup]:
        """
        The live parameter groups; group['lr'] = x changes the rate used by the next step().
        """

    @property
    def defaults(self) -> dict[str, Any]:
        """
        The constructor's options (a copy): what a group added without them gets.
        """

    def add_param_group(self, param_group: dict) -> None:
        """
        Adds a group {'params': tensors, option: value, ...}; missing options come from defaults. ValueError when it has no 'params' or a parameter is already in a group.
        """

    def zero_grad(self, set_to_none: bool = True) -> None:
        """
        Clears every parameter's gradient: drops it (set_to_none=True, p.grad is None) or fills it with zeros.
        """

    def step(self, closure: Callable[[], Any] | None = None) -> bool | StepResult:
        """
        Applies one update to every parameter with a gradient (closure, if given, is called first with grad enabled, e.g. to recompute the loss). Returns True; returns False and changes nothing when a gradient holds NaN/Inf (skipped_steps grows). Adam, AdamW and SGD on wgpu check on the device and return a StepResult whose bool() reads the verdict when asked.
        """

    @property
    def skipped_steps(self) -> int:
        """How many step() calls were skipped for a non-finite gradient."""

    def grads_finite(self) -> bool:
        """True when every defined gradient is finite (no NaN/Inf)."""

    def state_dict(self) -> dict[str, Any]:
        """
        {'state': {index: {'step': n, buffer: Tensor, ...}}, 'param_groups': [{..., 'params': [indices]}], 'skipped_steps': n, 'type': name}; parameters are numbered in group order like PyTorch and buffers are copies.
        """

    def load_state_dict(self, state_dict: dict) -> None:
        """
        Restores a state_dict() (also PyTorch's layout). CheckpointError when it lacks 'state'/'param_groups' or does not match the groups or parameter shapes; a failed load changes nothing.
        """

    def state_of(self, param: spiraltorch._core.Tensor) -> dict[str, Any]:
        """
        The live state of one parameter: {'step': n, buffer name: Tensor, ...} ({} before its first update).
        """

    def __repr__(self) -> str:
        """Name(options of each group)."""

class SGD(Optimizer):
    """
    torch.optim.SGD: g = grad (negated with maximize) + weight_decay * p; with momentum, b = momentum * b + (1 - dampening) * g (b = g on the first step) and g = b (or g + momentum * b with nesterov); p -= lr * g. Parameters are updated in place. foreach=/fused= are accepted and change nothing.

    Example: opt = st.optim.SGD(model.parameters(), lr=0.1, momentum=0.9); loss.backward(); opt.step(); opt.zero_grad()
    """

    def __init__(self, params: Iterable[spiraltorch._core.Tensor] | Iterable[dict], lr: float = 0.001, momentum: float = 0.0, dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False, *, maximize: bool = False, foreach: bool | None = None, fused: bool | None = None) -> None: ...

    __signature__: inspect.Signature = ...

class RiemannianSGD(Optimizer):
    """
    Riemannian SGD (Becigneul & Ganea 2019): manifold parameters (nn.ManifoldParameter) step along Poincare-ball geodesics with transported momentum; other parameters get plain SGD.
    """

    def __init__(self, params: Iterable[spiraltorch._core.Tensor] | Iterable[dict], lr: float = 0.001, momentum: float = 0.0, dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False) -> None: ...

    __signature__: inspect.Signature = ...

class Adam(Optimizer):
    """
    torch.optim.Adam: g = grad (negated with maximize) + weight_decay * p (L2); m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2; p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps) (amsgrad: the running max of v). capturable=True keeps the step count on the parameters' device so step() can be captured in a CUDA graph. foreach=/fused= are accepted and change nothing.

    Example: opt = st.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999))
    """

    def __init__(self, params: Iterable[spiraltorch._core.Tensor] | Iterable[dict], lr: float = 0.001, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-08, weight_decay: float = 0.0, amsgrad: bool = False, *, maximize: bool = False, foreach: bool | None = None, fused: bool | None = None, capturable: bool = False) -> None: ...

    __signature__: inspect.Signature = ...

class RiemannianAdam(Optimizer):
    """
    Riemannian Adam (Becigneul & Ganea 2019): manifold parameters get Riemannian gradients, second moments of the Riemannian norm, exp-map steps and transported first moments; others plain Adam.
    """

    def __init__(self, params: Iterable[spiraltorch._core.Tensor] | Iterable[dict], lr: float = 0.001, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-08, weight_decay: float = 0.0, amsgrad: bool = False) -> None: ...

    __signature__: inspect.Signature = ...

class AdamW(Adam):
    """
    torch.optim.AdamW: Adam with decoupled weight decay (p *= 1 - lr * weight_decay before the Adam step; default weight_decay 1e-2).

    Example: opt = st.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    """

    def __init__(self, params: Iterable[spiraltorch._core.Tensor] | Iterable[dict], lr: float = 0.001, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-08, weight_decay: float = 0.01, amsgrad: bool = False, *, maximize: bool = False, foreach: bool | None = None, fused: bool | None = None, capturable: bool = False) -> None: ...

    __signature__: inspect.Signature = ...

class RMSprop(Optimizer):
    """torch.optim.RMSprop (optionally centered, with momentum)."""

    def __init__(self, params: Iterable[spiraltorch._core.Tensor] | Iterable[dict], lr: float = 0.01, alpha: float = 0.99, eps: float = 1e-08, weight_decay: float = 0.0, momentum: float = 0.0, centered: bool = False, *, maximize: bool = False, foreach: bool | None = None, fused: bool | None = None) -> None: ...

    __signature__: inspect.Signature = ...

class Adagrad(Optimizer):
    """torch.optim.Adagrad."""

    def __init__(self, params: Iterable[spiraltorch._core.Tensor] | Iterable[dict], lr: float = 0.01, lr_decay: float = 0.0, weight_decay: float = 0.0, initial_accumulator_value: float = 0.0, eps: float = 1e-10, *, maximize: bool = False, foreach: bool | None = None, fused: bool | None = None) -> None: ...

    __signature__: inspect.Signature = ...

class LRScheduler:
    """Base of the learning-rate schedules (torch.optim.lr_scheduler)."""

    def step(self, epoch: int | None = None) -> None:
        """
        Advances one epoch (or iteration) and writes the new rates into the optimizer's groups. Call it after optimizer.step(). Passing epoch raises ValueError (PyTorch deprecated it).
        """

    def get_last_lr(self) -> list[float]:
        """The rates the last step wrote, one per parameter group."""

    @property
    def last_epoch(self) -> int:
        """The epoch count: 0 after construction, +1 per step()."""

    @property
    def base_lrs(self) -> list[float]:
        """Each group's initial rate ('initial_lr')."""

    @property
    def optimizer(self) -> Optimizer:
        """The optimizer whose rates this schedule sets."""

    def state_dict(self) -> dict[str, Any]:
        """
        {'last_epoch', '_step_count', 'base_lrs', '_last_lr', hyperparameters..., 'type'} (PyTorch's keys).
        """

    def load_state_dict(self, state_dict: dict) -> None:
        """
        Restores a state_dict() (epoch count, base and last rates) and writes the restored rates into the groups.
        """

class StepLR(LRScheduler):
    """lr = base_lr * gamma ** (epoch // step_size)."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1) -> None: ...

class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the base rate to eta_min over T_max steps."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0) -> None: ...

class LinearWarmup(LRScheduler):
    """
    Linear ramp from start_factor * base_lr to base_lr over warmup_steps, then constant.
    """

    def __init__(self, optimizer: Optimizer, warmup_steps: int, start_factor: float = 0.3333333333333333) -> None: ...

class OneCycleLR(LRScheduler):
    """
    The 1cycle policy, like torch.optim.lr_scheduler.OneCycleLR: the rate rises from max_lr / div_factor to max_lr over pct_start of total_steps, then anneals ('cos' or 'linear') to max_lr / div_factor / final_div_factor; momentum (or beta1) cycles the other way when cycle_momentum. Give total_steps, or epochs and steps_per_epoch (ValueError otherwise).
    """

    def __init__(self, optimizer: Optimizer, max_lr: float | Sequence[float], total_steps: int | None = None, epochs: int | None = None, steps_per_epoch: int | None = None, pct_start: float = 0.3, anneal_strategy: str = 'cos', cycle_momentum: bool = True, base_momentum: float = 0.85, max_momentum: float = 0.95, div_factor: float = 25.0, final_div_factor: float = 10000.0, three_phase: bool = False) -> None: ...

class Adamax(Optimizer):
    """torch.optim.Adamax: Adam with the infinity norm."""

    def __init__(self, params: Iterable[spiraltorch._core.Tensor] | Iterable[dict], lr: float = 0.002, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-08, weight_decay: float = 0.0, *, maximize: bool = False) -> None: ...

    __signature__: inspect.Signature = ...

class NAdam(Optimizer):
    """
    torch.optim.NAdam: Adam with Nesterov momentum and a momentum schedule.
    """

    def __init__(self, params: Iterable[spiraltorch._core.Tensor] | Iterable[dict], lr: float = 0.002, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-08, weight_decay: float = 0.0, momentum_decay: float = 0.004, decoupled_weight_decay: bool = False, *, maximize: bool = False) -> None: ...

    __signature__: inspect.Signature = ...

class RAdam(Optimizer):
    """torch.optim.RAdam: rectified Adam."""

    def __init__(self, params: Iterable[spiraltorch._core.Tensor] | Iterable[dict], lr: float = 0.001, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-08, weight_decay: float = 0.0, decoupled_weight_decay: bool = False, *, maximize: bool = False) -> None: ...

    __signature__: inspect.Signature = ...

class Adadelta(Optimizer):
    """torch.optim.Adadelta."""

    def __init__(self, params: Iterable[spiraltorch._core.Tensor] | Iterable[dict], lr: float = 1.0, rho: float = 0.9, eps: float = 1e-06, weight_decay: float = 0.0, *, maximize: bool = False) -> None: ...

    __signature__: inspect.Signature = ...

class Rprop(Optimizer):
    """torch.optim.Rprop: sign-based steps with per-element step sizes."""

    def __init__(self, params: Iterable[spiraltorch._core.Tensor] | Iterable[dict], lr: float = 0.01, etas: tuple[float, float] = (0.5, 1.2), step_sizes: tuple[float, float] = (1e-06, 50.0), *, maximize: bool = False) -> None: ...

    __signature__: inspect.Signature = ...

class ASGD(Optimizer):
    """torch.optim.ASGD: averaged SGD (the average is the state's 'ax')."""

    def __init__(self, params: Iterable[spiraltorch._core.Tensor] | Iterable[dict], lr: float = 0.01, lambd: float = 0.0001, alpha: float = 0.75, t0: float = 1000000.0, weight_decay: float = 0.0, *, maximize: bool = False) -> None: ...

    __signature__: inspect.Signature = ...

class LBFGS(Optimizer):
    """
    torch.optim.LBFGS: limited-memory BFGS over all parameters (one group); step(closure) runs up to max_iter iterations, calling closure (zero_grad, forward, backward, return the loss) as needed, and returns the first loss. line_search_fn=None or 'strong_wolfe'.
    """

    def __init__(self, params: Iterable[spiraltorch._core.Tensor] | Iterable[dict], lr: float = 1.0, max_iter: int = 20, max_eval: int | None = None, tolerance_grad: float = 1e-07, tolerance_change: float = 1e-09, history_size: int = 100, line_search_fn: str | None | None = None) -> None: ...

    def step(self, closure: Callable[[], spiraltorch._core.Tensor | float] | None = None) -> spiraltorch._core.Tensor | float:
        """
        Runs up to max_iter LBFGS iterations, calling closure (zero_grad, forward, backward, return the loss) as needed; returns what the first closure call returned (the loss before the update). ValueError without a closure.
        """

    __signature__: inspect.Signature = ...

class MultiStepLR(LRScheduler):
    """lr = base_lr * gamma ** (number of milestones <= epoch); chainable."""

    def __init__(self, optimizer: Optimizer, milestones: Sequence[int], gamma: float = 0.1) -> None: ...

    @property
    def milestones(self) -> list[int]:
        """The sorted epochs at which the rate is multiplied by gamma."""

class ExponentialLR(LRScheduler):
    """lr = base_lr * gamma ** epoch; chainable."""

    def __init__(self, optimizer: Optimizer, gamma: float) -> None: ...

class LinearLR(LRScheduler):
    """
    The factor moves linearly from start_factor to end_factor over total_iters epochs, then stays.
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 0.3333333333333333, end_factor: float = 1.0, total_iters: int = 5) -> None: ...

class ConstantLR(LRScheduler):
    """lr = base_lr * factor for the first total_iters epochs, then base_lr."""

    def __init__(self, optimizer: Optimizer, factor: float = 0.3333333333333333, total_iters: int = 5) -> None: ...

class PolynomialLR(LRScheduler):
    """lr = base_lr * (1 - min(epoch, total_iters) / total_iters) ** power."""

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0) -> None: ...

class CosineAnnealingWarmRestarts(LRScheduler):
    """
    SGDR: cosine annealing to eta_min over T_i epochs, restarting with T_i = T_0 * T_mult ** restarts.
    """

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0) -> None: ...

    @property
    def T_cur(self) -> float:
        """Epochs since the last restart."""

    @property
    def T_i(self) -> int:
        """The length of the current cycle in epochs."""

class LambdaLR(LRScheduler):
    """
    lr = base_lr * lr_lambda(epoch), one callable or one per group. The callables are not part of state_dict().
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]]) -> None: ...

class MultiplicativeLR(LambdaLR):
    """
    lr *= lr_lambda(epoch) every epoch after the first (one callable or one per group).
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]]) -> None: ...

class SequentialLR(LRScheduler):
    """
    Runs schedulers[i] from milestones[i-1] on; at a milestone the next one starts from epoch 0.
    """

    def __init__(self, optimizer: Optimizer, schedulers: Sequence[LRScheduler], milestones: Sequence[int]) -> None: ...

    @property
    def _schedulers(self) -> list[LRScheduler]: ...

class ChainedScheduler(LRScheduler):
    """Steps every scheduler in turn; their chainable rules multiply."""

    def __init__(self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None) -> None: ...

    @property
    def _schedulers(self) -> list[LRScheduler]: ...

class ReduceLROnPlateau:
    """
    Multiplies every group's rate by factor (not below min_lr) once the metric passed to step(metric) has not improved for more than patience epochs.
    """

    def __init__(self, optimizer: Optimizer, mode: str = 'min', factor: float = 0.1, patience: int = 10, threshold: float = 0.0001, threshold_mode: str = 'rel', cooldown: int = 0, min_lr: float | Sequence[float] = 0.0, eps: float = 1e-08) -> None: ...

    def step(self, metrics: float | spiraltorch._core.Tensor, epoch: int | None = None) -> None:
        """
        Records the metric of the epoch that just ended (a number or a 0-d tensor) and reduces the rates when it has not improved for more than patience epochs. Passing epoch raises ValueError.
        """

    def get_last_lr(self) -> list[float]:
        """The current rate of each parameter group."""

    @property
    def optimizer(self) -> Optimizer:
        """The optimizer whose rates this schedule sets."""

    @property
    def last_epoch(self) -> int:
        """The number of step(metrics) calls so far."""

    @property
    def best(self) -> float:
        """The best metric seen (inf/-inf before the first step)."""

    @property
    def num_bad_epochs(self) -> int:
        """Epochs since the metric last improved on best."""

    @property
    def in_cooldown(self) -> bool:
        """
        True while the cooldown after a reduction is running (bad epochs are not counted).
        """

    @property
    def min_lrs(self) -> list[float]:
        """The floor of each group's rate."""

    def is_better(self, a: float, best: float) -> bool:
        """Whether metric a improves on best under the mode and threshold."""

    def state_dict(self) -> dict[str, Any]:
        """
        {'last_epoch', 'best', 'num_bad_epochs', 'cooldown_counter', '_last_lr', 'min_lrs', 'mode', 'threshold_mode', hyperparameters..., 'type'}.
        """

    def load_state_dict(self, state_dict: dict) -> None:
        """
        Restores a state_dict(); CheckpointError when 'last_epoch', 'best', 'num_bad_epochs' or 'cooldown_counter' is missing.
        """

def clip_grad_norm_(parameters: spiraltorch._core.Tensor | Iterable[spiraltorch._core.Tensor], max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False) -> spiraltorch._core.Tensor:
    """
    Scales the gradients in place so their joint norm_type-norm (the norm of the per-tensor norms; inf, -inf and 0 allowed) is at most max_norm, like torch.nn.utils.clip_grad_norm_. Returns the norm before clipping as a 0-d tensor on the gradients' device (float64 for float64 gradients), computed there without a host read; a NaN/Inf norm leaves the gradients unscaled, or raises with error_if_nonfinite.
    """

def clip_grad_value_(parameters: spiraltorch._core.Tensor | Iterable[spiraltorch._core.Tensor], clip_value: float) -> None:
    """
    Clamps every gradient element to [-clip_value, clip_value] in place (torch.nn.utils.clip_grad_value_).
    """
