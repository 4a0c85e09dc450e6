"""Optimizers, learning-rate schedules and gradient clipping."""

from collections.abc import Sequence
import inspect

import spiraltorch._core


class ParamGroup:
    """
    One parameter group: behaves like PyTorch's group dict (group['lr'] = 0.1 works).
    """

    def __getitem__(self, arg: str, /) -> object: ...

    def __setitem__(self, arg0: str, arg1: object, /) -> None: ...

    def __contains__(self, arg: str, /) -> bool: ...

    def get(self, key: str, default: object | None = None) -> object: ...

    def keys(self) -> list[str]: ...

    def items(self) -> list: ...

    def to_dict(self) -> dict: ...

    def __repr__(self) -> str: ...

class StepResult:
    """
    What Optimizer.step() did when its verdict is still on the device (wgpu): bool(result) reads it (waiting for that step's work only) and is True when the update was applied, False when a non-finite gradient made it skip.
    """

    def __bool__(self) -> bool: ...

    def __eq__(self, arg: bool, /) -> bool: ...

    @property
    def known(self) -> bool:
        """True when bool() needs no device read."""

    def __repr__(self) -> str: ...

class Optimizer:
    """
    Base of the optimizers. step() first checks every gradient is finite; if one is not, nothing is updated, skipped_steps grows and step() returns False.
    """

    @property
    def param_groups(self) -> list[ParamGroup]: ...

    @property
    def defaults(self) -> dict: ...

    def add_param_group(self, param_group: object) -> None: ...

    def zero_grad(self, set_to_none: bool = True) -> None: ...

    def step(self, closure: object | None = None) -> bool | StepResult:
        """
        Applies one update; returns False (and changes nothing) when a gradient is not finite. Adam, AdamW and SGD on wgpu check on the device and return a StepResult whose bool() reads the verdict when asked.
        """

    @property
    def skipped_steps(self) -> int: ...

    def grads_finite(self) -> bool: ...

    def state_dict(self) -> dict:
        """
        {'state': {index: {'step', buffers...}}, 'param_groups': [...], 'skipped_steps': n} (buffers are copies).
        """

    def load_state_dict(self, state_dict: object) -> None: ...

    def state_of(self, param: spiraltorch._core.Tensor) -> object:
        """The live state of one parameter ({} before its first update)."""

    def __repr__(self) -> str: ...

class SGD(Optimizer):
    """torch.optim.SGD: momentum, dampening, weight decay, Nesterov."""

    def __init__(self, params: object, lr: float = 0.001, momentum: float = 0.0, dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False, *, maximize: bool = False, foreach: object | None = None, fused: object | None = None) -> None: ...

    __signature__: inspect.Signature = ...

class RiemannianSGD(Optimizer):
    """
    Riemannian SGD (Becigneul & Ganea 2019): manifold parameters (nn.ManifoldParameter) step along Poincare-ball geodesics with transported momentum; other parameters get plain SGD.
    """

    def __init__(self, params: object, lr: float = 0.001, momentum: float = 0.0, dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False) -> None: ...

    __signature__: inspect.Signature = ...

class Adam(Optimizer):
    """torch.optim.Adam (L2 weight decay added to the gradient)."""

    def __init__(self, params: object, lr: float = 0.001, betas: object = (0.9, 0.999), eps: float = 1e-08, weight_decay: float = 0.0, amsgrad: bool = False, *, maximize: bool = False, foreach: object | None = None, fused: object | None = None, capturable: bool = False) -> None: ...

    __signature__: inspect.Signature = ...

class RiemannianAdam(Optimizer):
    """
    Riemannian Adam (Becigneul & Ganea 2019): manifold parameters get Riemannian gradients, second moments of the Riemannian norm, exp-map steps and transported first moments; others plain Adam.
    """

    def __init__(self, params: object, lr: float = 0.001, betas: object = (0.9, 0.999), eps: float = 1e-08, weight_decay: float = 0.0, amsgrad: bool = False) -> None: ...

    __signature__: inspect.Signature = ...

class AdamW(Adam):
    """torch.optim.AdamW: Adam with decoupled weight decay."""

    def __init__(self, params: object, lr: float = 0.001, betas: object = (0.9, 0.999), eps: float = 1e-08, weight_decay: float = 0.01, amsgrad: bool = False, *, maximize: bool = False, foreach: object | None = None, fused: object | None = None, capturable: bool = False) -> None: ...

    __signature__: inspect.Signature = ...

class RMSprop(Optimizer):
    """torch.optim.RMSprop (optionally centered, with momentum)."""

    def __init__(self, params: object, lr: float = 0.01, alpha: float = 0.99, eps: float = 1e-08, weight_decay: float = 0.0, momentum: float = 0.0, centered: bool = False, *, maximize: bool = False, foreach: object | None = None, fused: object | None = None) -> None: ...

    __signature__: inspect.Signature = ...

class Adagrad(Optimizer):
    """torch.optim.Adagrad."""

    def __init__(self, params: object, lr: float = 0.01, lr_decay: float = 0.0, weight_decay: float = 0.0, initial_accumulator_value: float = 0.0, eps: float = 1e-10, *, maximize: bool = False, foreach: object | None = None, fused: object | None = None) -> None: ...

    __signature__: inspect.Signature = ...

class LRScheduler:
    """Base of the learning-rate schedules (torch.optim.lr_scheduler)."""

    def step(self, epoch: object | None = None) -> None: ...

    def get_last_lr(self) -> list[float]: ...

    @property
    def last_epoch(self) -> int: ...

    @property
    def base_lrs(self) -> list[float]: ...

    @property
    def optimizer(self) -> Optimizer: ...

    def state_dict(self) -> dict: ...

    def load_state_dict(self, state_dict: object) -> None: ...

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
    """The 1cycle policy, like torch.optim.lr_scheduler.OneCycleLR."""

    def __init__(self, optimizer: Optimizer, max_lr: object, total_steps: int | None = None, epochs: int | None = None, steps_per_epoch: int | None = None, pct_start: float = 0.3, anneal_strategy: str = 'cos', cycle_momentum: bool = True, base_momentum: float = 0.85, max_momentum: float = 0.95, div_factor: float = 25.0, final_div_factor: float = 10000.0, three_phase: bool = False) -> None: ...

class Adamax(Optimizer):
    """torch.optim.Adamax: Adam with the infinity norm."""

    def __init__(self, params: object, lr: float = 0.002, betas: object = (0.9, 0.999), eps: float = 1e-08, weight_decay: float = 0.0, *, maximize: bool = False) -> None: ...

    __signature__: inspect.Signature = ...

class NAdam(Optimizer):
    """
    torch.optim.NAdam: Adam with Nesterov momentum and a momentum schedule.
    """

    def __init__(self, params: object, lr: float = 0.002, betas: object = (0.9, 0.999), eps: float = 1e-08, weight_decay: float = 0.0, momentum_decay: float = 0.004, decoupled_weight_decay: bool = False, *, maximize: bool = False) -> None: ...

    __signature__: inspect.Signature = ...

class RAdam(Optimizer):
    """torch.optim.RAdam: rectified Adam."""

    def __init__(self, params: object, lr: float = 0.001, betas: object = (0.9, 0.999), eps: float = 1e-08, weight_decay: float = 0.0, decoupled_weight_decay: bool = False, *, maximize: bool = False) -> None: ...

    __signature__: inspect.Signature = ...

class Adadelta(Optimizer):
    """torch.optim.Adadelta."""

    def __init__(self, params: object, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-06, weight_decay: float = 0.0, *, maximize: bool = False) -> None: ...

    __signature__: inspect.Signature = ...

class Rprop(Optimizer):
    """torch.optim.Rprop: sign-based steps with per-element step sizes."""

    def __init__(self, params: object, lr: float = 0.01, etas: object = (0.5, 1.2), step_sizes: object = (1e-06, 50.0), *, maximize: bool = False) -> None: ...

    __signature__: inspect.Signature = ...

class ASGD(Optimizer):
    """torch.optim.ASGD: averaged SGD (the average is the state's 'ax')."""

    def __init__(self, params: object, lr: float = 0.01, lambd: float = 0.0001, alpha: float = 0.75, t0: float = 1000000.0, weight_decay: float = 0.0, *, maximize: bool = False) -> None: ...

    __signature__: inspect.Signature = ...

class LBFGS(Optimizer):
    """
    torch.optim.LBFGS: limited-memory BFGS over all parameters (one group); step(closure) runs up to max_iter iterations, calling closure (zero_grad, forward, backward, return the loss) as needed, and returns the first loss. line_search_fn=None or 'strong_wolfe'.
    """

    def __init__(self, params: object, lr: float = 1.0, max_iter: int = 20, max_eval: int | None = None, tolerance_grad: float = 1e-07, tolerance_change: float = 1e-09, history_size: int = 100, line_search_fn: object | None = None) -> None: ...

    def step(self, closure: object = None) -> object:
        """
        Runs the LBFGS iterations; returns what the first closure call returned (the loss before the update).
        """

    __signature__: inspect.Signature = ...

class MultiStepLR(LRScheduler):
    """lr = base_lr * gamma ** (number of milestones <= epoch); chainable."""

    def __init__(self, optimizer: Optimizer, milestones: Sequence[int], gamma: float = 0.1) -> None: ...

    @property
    def milestones(self) -> list[int]: ...

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
    def T_cur(self) -> float: ...

    @property
    def T_i(self) -> int: ...

class LambdaLR(LRScheduler):
    """
    lr = base_lr * lr_lambda(epoch), one callable or one per group. The callables are not part of state_dict().
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: object) -> None: ...

class MultiplicativeLR(LambdaLR):
    """
    lr *= lr_lambda(epoch) every epoch after the first (one callable or one per group).
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: object) -> None: ...

class SequentialLR(LRScheduler):
    """
    Runs schedulers[i] from milestones[i-1] on; at a milestone the next one starts from epoch 0.
    """

    def __init__(self, optimizer: Optimizer, schedulers: Sequence[LRScheduler], milestones: Sequence[int]) -> None: ...

class ChainedScheduler(LRScheduler):
    """Steps every scheduler in turn; their chainable rules multiply."""

    def __init__(self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None) -> None: ...

class ReduceLROnPlateau:
    """
    Multiplies every group's rate by factor (not below min_lr) once the metric passed to step(metric) has not improved for more than patience epochs.
    """

    def __init__(self, optimizer: Optimizer, mode: str = 'min', factor: float = 0.1, patience: int = 10, threshold: float = 0.0001, threshold_mode: str = 'rel', cooldown: int = 0, min_lr: object = 0.0, eps: float = 1e-08) -> None: ...

    def step(self, metrics: object, epoch: object | None = None) -> None:
        """Records the metric of the epoch that just ended."""

    def get_last_lr(self) -> list[float]: ...

    @property
    def optimizer(self) -> Optimizer: ...

    @property
    def last_epoch(self) -> int: ...

    @property
    def best(self) -> float: ...

    @property
    def num_bad_epochs(self) -> int: ...

    @property
    def in_cooldown(self) -> bool: ...

    @property
    def min_lrs(self) -> list[float]: ...

    def is_better(self, a: float, best: float) -> bool:
        """Whether metric a improves on best under the mode and threshold."""

    def state_dict(self) -> dict: ...

    def load_state_dict(self, state_dict: object) -> None: ...
