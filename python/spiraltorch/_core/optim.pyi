"""Optimizers, learning-rate schedules and gradient clipping."""

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

    def __init__(self, params: object, lr: float = 0.001, momentum: float = 0.0, dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False, *, maximize: bool = False) -> None: ...

class RiemannianSGD(Optimizer):
    """
    Riemannian SGD (Becigneul & Ganea 2019): manifold parameters (nn.ManifoldParameter) step along Poincare-ball geodesics with transported momentum; other parameters get plain SGD.
    """

    def __init__(self, params: object, lr: float = 0.001, momentum: float = 0.0, dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False) -> None: ...

class Adam(Optimizer):
    """torch.optim.Adam (L2 weight decay added to the gradient)."""

    def __init__(self, params: object, lr: float = 0.001, betas: object = (0.9, 0.999), eps: float = 1e-08, weight_decay: float = 0.0, amsgrad: bool = False, *, maximize: bool = False) -> None: ...

class RiemannianAdam(Optimizer):
    """
    Riemannian Adam (Becigneul & Ganea 2019): manifold parameters get Riemannian gradients, second moments of the Riemannian norm, exp-map steps and transported first moments; others plain Adam.
    """

    def __init__(self, params: object, lr: float = 0.001, betas: object = (0.9, 0.999), eps: float = 1e-08, weight_decay: float = 0.0, amsgrad: bool = False) -> None: ...

class AdamW(Adam):
    """torch.optim.AdamW: Adam with decoupled weight decay."""

    def __init__(self, params: object, lr: float = 0.001, betas: object = (0.9, 0.999), eps: float = 1e-08, weight_decay: float = 0.01, amsgrad: bool = False, *, maximize: bool = False) -> None: ...

class RMSprop(Optimizer):
    """torch.optim.RMSprop (optionally centered, with momentum)."""

    def __init__(self, params: object, lr: float = 0.01, alpha: float = 0.99, eps: float = 1e-08, weight_decay: float = 0.0, momentum: float = 0.0, centered: bool = False, *, maximize: bool = False) -> None: ...

class Adagrad(Optimizer):
    """torch.optim.Adagrad."""

    def __init__(self, params: object, lr: float = 0.01, lr_decay: float = 0.0, weight_decay: float = 0.0, initial_accumulator_value: float = 0.0, eps: float = 1e-10, *, maximize: bool = False) -> None: ...

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
