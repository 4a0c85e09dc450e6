"""SpiralTorch native core"""

from collections.abc import Callable, Iterator, Sequence
import enum
import types
from typing import Any

import numpy.typing

from spiraltorch import (
    CheckpointError as CheckpointError,
    DeviceUnavailableError as DeviceUnavailableError,
    DistributedError as DistributedError,
    DtypeError as DtypeError,
    OutOfMemoryError as OutOfMemoryError,
    ShapeError as ShapeError,
    SpiralError as SpiralError,
    SpiralIndexError as SpiralIndexError,
    SpiralKError as SpiralKError,
    SpiralValueError as SpiralValueError
)
from spiraltorch._core import (
    _trace as _trace,
    canvas as canvas,
    data as data,
    distributed as distributed,
    geometry as geometry,
    io as io,
    linalg as linalg,
    nn as nn,
    optim as optim,
    rec as rec,
    rl as rl,
    sot as sot,
    vision as vision,
    zspace as zspace
)


class dtype(enum.Enum):
    """Element types of a tensor."""

    def __str__(self) -> str:
        """The dtype as spiraltorch prints it: ``spiraltorch.<name>``."""

    def __repr__(self) -> str:
        """The dtype as spiraltorch prints it: ``spiraltorch.<name>``."""

    bool = 0

    uint8 = 1

    int32 = 2

    int64 = 3

    float16 = 4

    bfloat16 = 5

    float32 = 6

    float64 = 7

    @property
    def is_floating_point(self) -> bool:
        """Whether the dtype is one of the floating-point types."""

    @property
    def itemsize(self) -> int:
        """Bytes per element."""

class Tensor:
    """An N-d strided tensor with autograd (PyTorch semantics)."""

    def __init__(self, *args: Any, data: Any = None, shape: Sequence[int] | None = None, rows: int | None = None, cols: int | None = None, dtype: dtype | str | None = None, device: str | None = None, requires_grad: bool = False) -> None:
        """
        Tensor(data), Tensor(rows, cols[, data]), Tensor(shape, data) or keywords data=, shape=, rows=, cols=, dtype=, device=, requires_grad= (explicit shape= > rows=/cols= > positional shape).

        data is nested lists, a number, a NumPy array or a Tensor (copied); without data the tensor is zeros. Raises ShapeError when the number of values does not fill the shape, TypeError on unknown keywords.
        Example: Tensor(2, 3, [1, 2, 3, 4, 5, 6]).shape == (2, 3)
        """

    @property
    def shape(self) -> tuple[int, ...]:
        """
        The sizes of the dims, a tuple that can also be called (t.shape == t.shape()).
        """

    def size(self, dim: int | None = None) -> tuple[int, ...] | int:
        """
        The shape (a tuple), or the size of dim `dim` (negative counts from the end; IndexError out of range).
        """

    @property
    def dtype(self) -> dtype:
        """The element type."""

    @property
    def device(self) -> str:
        """
        Where the storage lives: 'cpu', 'cuda:<i>' or 'wgpu', a str with torch's .type and .index.
        """

    @property
    def ndim(self) -> int:
        """The number of dims (0 for a scalar)."""

    def dim(self) -> int:
        """The number of dims (0 for a scalar)."""

    def numel(self) -> int:
        """The number of elements (the product of the shape)."""

    def element_size(self) -> int:
        """Bytes per element of the dtype."""

    def stride(self, dim: int | None = None) -> list[int] | int:
        """The strides in elements (a list), or the stride of dim `dim`."""

    def storage_offset(self) -> int:
        """The offset of the first element in the storage, in elements."""

    def data_ptr(self) -> int:
        """The address of the first element (a device address for CUDA tensors)."""

    def is_contiguous(self) -> bool:
        """True when the elements are laid out densely in row-major order."""

    def __len__(self) -> int: ...

    def item(self) -> float | int | bool:
        """
        The value of a one-element tensor as a Python float, int or bool (by dtype); ValueError otherwise.
        """

    def tolist(self) -> list[Any] | float | int | bool:
        """
        The values as nested Python lists (a number for a 0-d tensor), copied to the host.
        """

    def __float__(self) -> float: ...

    def __int__(self) -> int: ...

    def __bool__(self) -> bool: ...

    def __index__(self) -> int: ...

    @property
    def requires_grad(self) -> bool:
        """
        Whether backward() computes a gradient for this tensor (set it on leaves).
        """

    @requires_grad.setter
    def requires_grad(self, arg: bool, /) -> None: ...

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Sets requires_grad in place and returns this tensor (the same object)."""

    @property
    def grad(self) -> Tensor | None:
        """
        The gradient accumulated by backward() (a leaf, or a tensor that called retain_grad()), or None.
        """

    @grad.setter
    def grad(self, value: Tensor | None) -> None: ...

    @property
    def grad_fn(self) -> str | None:
        """
        The name of the autograd node that produced this tensor (e.g. 'MulBackward'), None for a leaf.
        """

    @property
    def is_leaf(self) -> bool:
        """
        True for tensors not produced by a recorded op (user-created, parameters, detached).
        """

    @property
    def manifold_curvature(self) -> float | None:
        """
        The Poincare-ball curvature of a manifold parameter (nn.ManifoldParameter), None otherwise.
        """

    def _set_manifold_curvature(self, curvature: float) -> None:
        """
        Marks this tensor as a point of the Poincare ball of curvature c < 0 (nn.ManifoldParameter).
        """

    def backward(self, gradient: Tensor | None = None, retain_graph: bool = False, create_graph: bool = False) -> None:
        """
        Accumulates d(self)/d(leaf) into the .grad of every leaf that requires grad. gradient (same shape) is required unless self has one element. retain_graph keeps the graph for another backward; create_graph records the backward itself (higher-order gradients).
        """

    def retain_grad(self) -> None:
        """
        Keeps .grad on this non-leaf tensor after backward (leaves always keep it).
        """

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> TensorHookHandle:
        """
        Calls hook(grad) with the gradient each backward computes for this tensor (a leaf: the pass's summed gradient before it is added to .grad; a non-leaf: before it flows on and into a retained .grad). Returning a Tensor (same shape, dtype, device) replaces the gradient, None keeps it. Hooks run in registration order, also under autograd.grad. Returns a TensorHookHandle.
        """

    def register_post_accumulate_grad_hook(self, hook: Callable[[Tensor], None]) -> TensorHookHandle:
        """
        Calls hook(tensor) once per backward after this leaf's gradient is fully accumulated into .grad (not under autograd.grad). Returns a TensorHookHandle.
        """

    @property
    def retains_grad(self) -> bool:
        """True when retain_grad() was called on this non-leaf tensor."""

    def detach(self) -> Tensor:
        """
        A view sharing storage that is cut from the autograd graph (requires_grad=False).
        """

    def detach_(self) -> Tensor:
        """
        Cuts this tensor from the graph in place (it becomes a leaf with requires_grad=False); returns it.
        """

    @property
    def data(self) -> Tensor:
        """
        A detached view of the values; assigning copies src's values in without recording autograd.
        """

    @data.setter
    def data(self, arg: Tensor, /) -> None: ...

    def _version(self) -> int:
        """
        The storage's write counter (in-place ops bump it; autograd uses it to detect stale saved tensors).
        """

    def contiguous(self) -> Tensor:
        """
        This tensor if it is contiguous, else a row-major copy (autograd flows through).
        """

    def clone(self) -> Tensor:
        """A copy with its own contiguous storage; autograd flows through."""

    def to(self, target: dtype | str | None = None, *, dtype: dtype | str | None = None, device: str | None = None) -> Tensor:
        """
        Converts to a device ('cpu', 'cuda:0', 'wgpu') and/or a dtype (a dtype, its name, a NumPy/PyTorch dtype): to('cuda'), to(st.float64), to(device='cpu', dtype='float16'). Returns self when nothing changes; autograd flows through. DeviceUnavailableError for a device that is not there.
        """

    def cpu(self) -> Tensor:
        """A copy on the host (self if already there)."""

    def cuda(self, device: int | None = None) -> Tensor:
        """
        A copy on CUDA device `device` (default 0); DeviceUnavailableError without CUDA.
        """

    @property
    def is_cuda(self) -> bool:
        """True when the tensor lives on a CUDA device."""

    def float(self) -> Tensor:
        """A float32 copy (self if already float32)."""

    def double(self) -> Tensor:
        """A float64 copy (self if already float64)."""

    def half(self) -> Tensor:
        """A float16 copy (self if already float16)."""

    def bfloat16(self) -> Tensor:
        """A bfloat16 copy (self if already bfloat16)."""

    def long(self) -> Tensor:
        """An int64 copy (floats truncate toward zero)."""

    def int(self) -> Tensor:
        """An int32 copy (floats truncate toward zero)."""

    def bool(self) -> Tensor:
        """A bool copy (nonzero is True)."""

    def type(self, dtype: dtype | str | None = None) -> str | Tensor:
        """
        Without dtype: the dtype's name ('float32'); with one: the tensor converted to it.
        """

    def numpy(self) -> numpy.typing.NDArray[Any]:
        """
        A NumPy array sharing this host tensor's memory (read-only when the memory is). SpiralError when the tensor requires grad or is not on the host; DtypeError for bfloat16.
        """

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> numpy.typing.NDArray[Any]: ...

    def __dlpack__(self, *, stream: int | None = None, max_version: tuple[int, int] | None = None, dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any:
        """
        A DLPack capsule of this tensor (the array API protocol); on CUDA the consumer's `stream` is made to wait for the work queued on ours.
        """

    def __dlpack_device__(self) -> tuple[int, int]: ...

    def _set_repr_hook(self) -> None: ...

    def __add__(self, other: Tensor | float, /) -> Tensor: ...

    def __radd__(self, other: Tensor | float, /) -> Tensor: ...

    def __sub__(self, other: Tensor | float, /) -> Tensor: ...

    def __rsub__(self, other: Tensor | float, /) -> Tensor: ...

    def __mul__(self, other: Tensor | float, /) -> Tensor: ...

    def __rmul__(self, other: Tensor | float, /) -> Tensor: ...

    def __truediv__(self, other: Tensor | float, /) -> Tensor: ...

    def __rtruediv__(self, other: Tensor | float, /) -> Tensor: ...

    def __floordiv__(self, other: Tensor | float, /) -> Tensor: ...

    def __rfloordiv__(self, other: Tensor | float, /) -> Tensor: ...

    def __mod__(self, other: Tensor | float, /) -> Tensor: ...

    def __rmod__(self, other: Tensor | float, /) -> Tensor: ...

    def __pow__(self, other: Tensor | float, /) -> Tensor: ...

    def __rpow__(self, other: Tensor | float, /) -> Tensor: ...

    def __matmul__(self, other: Tensor | Sequence[Any], /) -> Tensor: ...

    def __rmatmul__(self, other: Tensor | Sequence[Any], /) -> Tensor: ...

    def __eq__(self, other: object, /) -> Tensor: ...

    def __ne__(self, other: object, /) -> Tensor: ...

    def __lt__(self, other: Tensor | float, /) -> Tensor: ...

    def __le__(self, other: Tensor | float, /) -> Tensor: ...

    def __gt__(self, other: Tensor | float, /) -> Tensor: ...

    def __ge__(self, other: Tensor | float, /) -> Tensor: ...

    def __and__(self, other: Tensor | bool | int, /) -> Tensor: ...

    def __or__(self, other: Tensor | bool | int, /) -> Tensor: ...

    def __xor__(self, other: Tensor | bool | int, /) -> Tensor: ...

    def __neg__(self) -> Tensor: ...

    def __pos__(self) -> Tensor: ...

    def __abs__(self) -> Tensor: ...

    def __invert__(self) -> Tensor: ...

    def __iadd__(self, other: Tensor | float, /) -> Tensor: ...

    def __isub__(self, other: Tensor | float, /) -> Tensor: ...

    def __imul__(self, other: Tensor | float, /) -> Tensor: ...

    def __itruediv__(self, other: Tensor | float, /) -> Tensor: ...

    def __getitem__(self, index: int | slice | types.EllipsisType | None | Tensor | Sequence[Any], /) -> Tensor:
        """
        Basic indexing (ints, slices with positive steps, None, ...) gives a view; one advanced index (an integer tensor/list, negative entries counting from the end, or a bool mask) gives a copy. IndexError for out-of-range or unsupported indices.
        """

    def __setitem__(self, index: int | slice | types.EllipsisType | None | Tensor | Sequence[Any], value: Tensor | float, /) -> None:
        """
        Writes `value` (a number, or a tensor broadcast to the indexed part) in place; with an integer index a repeated position keeps the last write.
        """

    def __hash__(self) -> int: ...

    def mul(self, other: Tensor | float) -> Tensor:
        """Elementwise product input * other (broadcasting)."""

    def multiply(self, other: Tensor | float) -> Tensor:
        """Elementwise product input * other (broadcasting); alias of mul."""

    def div(self, other: Tensor | float) -> Tensor:
        """
        Elementwise true division input / other (broadcasting); integer inputs give float32.
        """

    def divide(self, other: Tensor | float) -> Tensor:
        """Elementwise true division (broadcasting); alias of div."""

    def true_divide(self, other: Tensor | float) -> Tensor:
        """Elementwise true division (broadcasting); alias of div."""

    def floor_divide(self, other: Tensor | float) -> Tensor:
        """
        Elementwise floor(input / other), rounding toward minus infinity like Python's //; no gradient.
        """

    def remainder(self, other: Tensor | float) -> Tensor:
        """
        Elementwise Python-style modulo: the result has the sign of other (remainder(-7, 3) == 2).
        """

    def minimum(self, other: Tensor | float) -> Tensor:
        """Elementwise minimum of input and other (NaN propagates)."""

    def maximum(self, other: Tensor | float) -> Tensor:
        """Elementwise maximum of input and other (NaN propagates)."""

    def atan2(self, other: Tensor | float) -> Tensor:
        """
        Elementwise atan2(input, other): the angle of the point (other, input), in (-pi, pi].
        """

    def eq(self, other: Tensor | float) -> Tensor:
        """Elementwise input == other as a bool tensor."""

    def ne(self, other: Tensor | float) -> Tensor:
        """Elementwise input != other as a bool tensor."""

    def lt(self, other: Tensor | float) -> Tensor:
        """Elementwise input < other as a bool tensor."""

    def le(self, other: Tensor | float) -> Tensor:
        """Elementwise input <= other as a bool tensor."""

    def gt(self, other: Tensor | float) -> Tensor:
        """Elementwise input > other as a bool tensor."""

    def ge(self, other: Tensor | float) -> Tensor:
        """Elementwise input >= other as a bool tensor."""

    def logical_and(self, other: Tensor | float) -> Tensor:
        """Elementwise logical and (nonzero is true) as a bool tensor."""

    def logical_or(self, other: Tensor | float) -> Tensor:
        """Elementwise logical or (nonzero is true) as a bool tensor."""

    def logical_xor(self, other: Tensor | float) -> Tensor:
        """Elementwise logical exclusive or (nonzero is true) as a bool tensor."""

    def bmm(self, other: Tensor) -> Tensor:
        """
        Batched matrix product of (b, n, k) and (b, k, m) tensors: (b, n, m). ShapeError otherwise.
        """

    def add(self, other: Tensor | float, alpha: float | None = None) -> Tensor:
        """
        input + alpha * other, elementwise with broadcasting (alpha defaults to 1).
        """

    def sub(self, other: Tensor | float, alpha: float | None = None) -> Tensor:
        """
        input - alpha * other, elementwise with broadcasting (alpha defaults to 1).
        """

    def subtract(self, other: Tensor | float, alpha: float | None = None) -> Tensor:
        """input - alpha * other (broadcasting); alias of sub."""

    def pow(self, exponent: Tensor | float) -> Tensor:
        """Elementwise input ** exponent (a number or a broadcast tensor)."""

    def matmul(self, other: Tensor, backend: str | None = None) -> Tensor:
        """
        Matrix product with NumPy's rules (1-d vectors, batched and broadcast leading dims). backend: None, 'auto' or 'cpu' run where the tensors are; 'cuda' or 'wgpu' run the product there and return the result on input's device (DeviceUnavailableError when absent). ShapeError when inner dims differ.
        """

    def mm(self, mat2: Tensor) -> Tensor:
        """
        Product of 2-d matrices (n, k) @ (k, m) -> (n, m); ShapeError for other ranks.
        """

    def neg(self) -> Tensor:
        """Elementwise -input."""

    def negative(self) -> Tensor:
        """Elementwise -input; alias of neg."""

    def abs(self) -> Tensor:
        """Elementwise absolute value."""

    def sign(self) -> Tensor:
        """Elementwise sign: -1, 0 or 1 (zero gradient)."""

    def exp(self) -> Tensor:
        """Elementwise e ** input."""

    def log(self) -> Tensor:
        """Elementwise natural logarithm (-inf at 0, NaN below)."""

    def log1p(self) -> Tensor:
        """Elementwise log(1 + input), accurate for small input."""

    def expm1(self) -> Tensor:
        """Elementwise exp(input) - 1, accurate for small input."""

    def sqrt(self) -> Tensor:
        """Elementwise square root (NaN below 0)."""

    def rsqrt(self) -> Tensor:
        """Elementwise 1 / sqrt(input)."""

    def square(self) -> Tensor:
        """Elementwise input * input."""

    def reciprocal(self) -> Tensor:
        """Elementwise 1 / input."""

    def sin(self) -> Tensor:
        """Elementwise sine (radians)."""

    def cos(self) -> Tensor:
        """Elementwise cosine (radians)."""

    def tan(self) -> Tensor:
        """Elementwise tangent (radians)."""

    def tanh(self) -> Tensor:
        """Elementwise hyperbolic tangent."""

    def atanh(self) -> Tensor:
        """Elementwise inverse hyperbolic tangent (+-inf at +-1, NaN outside)."""

    def sigmoid(self) -> Tensor:
        """Elementwise logistic function 1 / (1 + exp(-input))."""

    def erf(self) -> Tensor:
        """Elementwise Gauss error function."""

    def lgamma(self) -> Tensor:
        """Elementwise log |Gamma(input)|."""

    def digamma(self) -> Tensor:
        """Elementwise digamma, the derivative of lgamma."""

    def relu(self) -> Tensor:
        """Elementwise max(input, 0)."""

    def silu(self) -> Tensor:
        """Elementwise input * sigmoid(input) (swish)."""

    def floor(self) -> Tensor:
        """Elementwise round toward minus infinity (zero gradient)."""

    def ceil(self) -> Tensor:
        """Elementwise round toward plus infinity (zero gradient)."""

    def round(self) -> Tensor:
        """
        Elementwise round to nearest, ties to even (round(2.5) == 2); zero gradient.
        """

    def trunc(self) -> Tensor:
        """Elementwise round toward zero (zero gradient)."""

    def logical_not(self) -> Tensor:
        """Elementwise logical not (zero is true) as a bool tensor."""

    def isnan(self) -> Tensor:
        """Elementwise test for NaN, a bool tensor."""

    def isinf(self) -> Tensor:
        """Elementwise test for +-inf, a bool tensor."""

    def isfinite(self) -> Tensor:
        """Elementwise test for a finite value (not NaN or inf), a bool tensor."""

    def t(self) -> Tensor:
        """
        The dims in reverse order as a view: the transpose of a matrix, a 0-d or 1-d tensor as is.
        """

    @property
    def T(self) -> Tensor:
        """The dims reversed (a view); the transpose of a matrix."""

    @property
    def mT(self) -> Tensor:
        """
        The last two dims swapped (a view): a batch of transposed matrices. Needs at least 2 dims.
        """

    def gelu(self, approximate: str = 'none') -> Tensor:
        """
        Elementwise GELU: x * Phi(x) (approximate='none', with erf) or its tanh approximation (approximate='tanh'); ValueError otherwise.
        """

    def softplus(self, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
        """
        Elementwise log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold.
        """

    def leaky_relu(self, negative_slope: float = 0.01) -> Tensor:
        """Elementwise x for x >= 0, negative_slope * x below."""

    def elu(self, alpha: float = 1.0) -> Tensor:
        """Elementwise x for x > 0, alpha * (exp(x) - 1) below."""

    def clamp(self, min: float | None = None, max: float | None = None) -> Tensor:
        """
        Elementwise clamp into [min, max] (either bound may be None); the gradient is 1 inside, 0 outside. DtypeError when a bound is not a number.
        """

    def clip(self, min: float | None = None, max: float | None = None) -> Tensor:
        """Alias of clamp."""

    def masked_fill(self, mask: Tensor, value: float) -> Tensor:
        """
        A copy of input with `value` where the bool mask (broadcast to input's shape) is True.
        """

    def where(self, condition: Tensor, other: Tensor | float) -> Tensor:
        """
        Elementwise choice: self where condition is True, other elsewhere (broadcasting).
        """

    def sum(self, dim: int | Sequence[int] | None = None, keepdim: bool = False, dtype: dtype | str | None = None) -> Tensor:
        """
        The sum over `dim` (all dims by default); keepdim keeps reduced dims as size 1. Integer and bool inputs sum in int64; dtype converts the input first. Example: tensor([[1, 2], [3, 4]]).sum(0) -> [4, 6]
        """

    def mean(self, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
        """The mean over `dim` (all dims by default)."""

    def var(self, dim: int | Sequence[int] | None = None, unbiased: bool | None = None, keepdim: bool = False, correction: float | None = None) -> Tensor:
        """
        The variance over `dim`: sum((x - mean)^2) / (N - correction). correction defaults to 1 (Bessel); unbiased=False means correction 0; correction wins when both are given.
        """

    def std(self, dim: int | Sequence[int] | None = None, unbiased: bool | None = None, keepdim: bool = False, correction: float | None = None) -> Tensor:
        """
        The standard deviation over `dim`: the square root of var with the same arguments.
        """

    def prod(self, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
        """The product over `dim` (all dims by default)."""

    def amax(self, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
        """
        The maximum over `dim` (all dims by default), values only; the gradient is shared among ties.
        """

    def amin(self, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
        """
        The minimum over `dim` (all dims by default), values only; the gradient is shared among ties.
        """

    def max(self, dim: int | Tensor | None = None, keepdim: bool = False) -> Tensor | tuple[Tensor, Tensor]:
        """
        max() is the largest element (a 0-d tensor); max(dim) a (values, indices) named tuple along dim; max(other_tensor) the elementwise maximum.
        """

    def min(self, dim: int | Tensor | None = None, keepdim: bool = False) -> Tensor | tuple[Tensor, Tensor]:
        """
        min() is the smallest element (a 0-d tensor); min(dim) a (values, indices) named tuple along dim; min(other_tensor) the elementwise minimum.
        """

    def argmax(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        """
        The int64 index of the largest element along dim (of the flattened tensor when dim is None); the first one among ties.
        """

    def argmin(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        """
        The int64 index of the smallest element along dim (of the flattened tensor when dim is None); the first one among ties.
        """

    def logsumexp(self, dim: int | Sequence[int], keepdim: bool = False) -> Tensor:
        """
        log(sum(exp(input))) over dim, computed stably (shifted by the maximum).
        """

    def norm(self, p: float | str | None = None, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
        """
        The vector p-norm (sum |x|^p)^(1/p) over dim (all elements by default); p defaults to 2, 'fro' is 2. ValueError for another string.
        """

    def all(self, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
        """True where every element over dim is nonzero (a bool tensor)."""

    def any(self, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
        """True where some element over dim is nonzero (a bool tensor)."""

    def softmax(self, dim: int = -1) -> Tensor:
        """exp(x) / sum(exp(x)) along dim, computed stably."""

    def log_softmax(self, dim: int = -1) -> Tensor:
        """log(softmax(x)) along dim, computed stably."""

    def reshape(self, *shape: int | Sequence[int]) -> Tensor:
        """
        The same elements in shape `shape` (one dim may be -1): a view when the strides allow, else a copy. ShapeError when the element counts differ.
        """

    def view(self, *shape: int | Sequence[int] | dtype) -> Tensor:
        """
        A view with shape `shape` sharing storage (ShapeError when the strides do not allow one; use reshape), or view(dtype): the same bytes read as another dtype of the same element size.
        """

    def expand(self, *shape: int | Sequence[int]) -> Tensor:
        """
        A broadcast view with shape `shape` (size-1 dims repeat with stride 0; -1 keeps a dim).
        """

    def expand_as(self, other: Tensor) -> Tensor:
        """expand to other's shape."""

    def reshape_as(self, other: Tensor) -> Tensor:
        """reshape to other's shape."""

    def view_as(self, other: Tensor) -> Tensor:
        """view with other's shape."""

    def permute(self, *dims: int | Sequence[int]) -> Tensor:
        """
        A view with the dims reordered: dim i of the result is dim dims[i] of self.
        """

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        """A view with dims dim0 and dim1 swapped."""

    def squeeze(self, dim: int | None = None) -> Tensor:
        """
        A view without size-1 dims (all of them, or only dim if it has size 1).
        """

    def unsqueeze(self, dim: int) -> Tensor:
        """A view with a new size-1 dim inserted at position dim."""

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        """Dims start_dim..end_dim merged into one."""

    def narrow(self, dim: int, start: int, length: int) -> Tensor:
        """A view of elements start..start+length-1 along dim."""

    def select(self, dim: int, index: int) -> Tensor:
        """A view of position `index` along dim, with that dim removed."""

    def split(self, split_size_or_sections: int | Sequence[int], dim: int = 0) -> list[Tensor]:
        """
        Views along dim: chunks of split_size_or_sections elements (the last may be smaller), or one per listed size (which must add up to the dim's size).
        """

    def chunk(self, chunks: int, dim: int = 0) -> list[Tensor]:
        """
        At most `chunks` views along dim, each ceil(size / chunks) long (the last may be shorter).
        """

    def gather(self, dim: int, index: Tensor) -> Tensor:
        """
        out[i][j] = input[index[i][j]][j] for dim 0 (and so on): values picked along dim by an int64 index of the output's shape.
        """

    def scatter_add(self, dim: int, index: Tensor, src: Tensor) -> Tensor:
        """
        A copy of input with src's values added at the positions index gives along dim (the reverse of gather; repeated positions accumulate).
        """

    def index_select(self, dim: int, index: Tensor) -> Tensor:
        """
        The slices along dim at the positions of the 1-d integer tensor index (a copy).
        """

    def masked_select(self, mask: Tensor) -> Tensor:
        """A 1-d tensor of the elements where the bool mask (broadcast) is True."""

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> tuple[Tensor, Tensor]:
        """
        The k largest (or smallest) elements along dim as a (values, indices) named tuple.
        """

    def sort(self, dim: int = -1, descending: bool = False, *, stable: bool = False) -> tuple[Tensor, Tensor]:
        """
        The elements sorted along dim as a (values, indices) named tuple. Every sort is stable, so stable= changes nothing.
        """

    def argsort(self, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Tensor:
        """The int64 indices that sort input along dim (stable)."""

    def cumsum(self, dim: int) -> Tensor:
        """Running sums along dim: out[i] = input[0] + ... + input[i]."""

    def tril(self, diagonal: int = 0) -> Tensor:
        """
        A copy of the last two dims' lower triangle (on and below diagonal `diagonal`), zeros above.
        """

    def triu(self, diagonal: int = 0) -> Tensor:
        """
        A copy of the last two dims' upper triangle (on and above diagonal `diagonal`), zeros below.
        """

    def equal(self, other: Tensor) -> bool:
        """True when both tensors have the same shape and values."""

    def add_(self, other: Tensor | float, alpha: float | None = None) -> Tensor:
        """
        In place self += alpha * other (other broadcasts to self's shape); returns self.
        """

    def sub_(self, other: Tensor | float, alpha: float | None = None) -> Tensor:
        """In place self -= alpha * other; returns self."""

    def mul_(self, other: Tensor | float) -> Tensor:
        """In place self *= other; returns self."""

    def div_(self, other: Tensor | float) -> Tensor:
        """In place self /= other; returns self."""

    def zero_(self) -> Tensor:
        """Fills self with zeros; returns self."""

    def fill_(self, value: float) -> Tensor:
        """Fills self with `value`; returns self."""

    def copy_(self, src: Tensor | float) -> Tensor:
        """
        Copies src's values (broadcast, converted to self's dtype, from any device) into self; returns self.
        """

    def clamp_(self, min: float | None = None, max: float | None = None) -> Tensor:
        """Clamps self into [min, max] in place; returns self."""

    def masked_fill_(self, mask: Tensor, value: float) -> Tensor:
        """Writes `value` where the bool mask (broadcast) is True; returns self."""

    def uniform_(self, a: float = 0.0, b: float = 1.0) -> Tensor:
        """
        Fills self with uniform samples in [a, b) from the global generator; returns self.
        """

    def normal_(self, mean: float = 0.0, std: float = 1.0) -> Tensor:
        """
        Fills self with samples of N(mean, std^2) from the global generator; returns self.
        """

    def cumprod(self, dim: int, *, dtype: dtype | str | None = None) -> Tensor:
        """
        Running products along ``dim`` (integers and bool accumulate in int64), differentiable through zeros, as torch.cumprod.
        """

    def cumprod_(self, dim: int, *, dtype: dtype | str | None = None) -> Tensor:
        """In-place cumprod: writes the result into ``self`` and returns it."""

    def logcumsumexp(self, dim: int) -> Tensor:
        """
        ``log(cumsum(exp(input)))`` along ``dim``, computed stably, as torch.logcumsumexp.
        """

    def cummax(self, dim: int) -> tuple[Tensor, Tensor]:
        """
        Running maxima along ``dim`` and the index of each (the latest among ties; NaN propagates from its first occurrence); the values carry the gradient to the chosen elements, as torch.cummax.
        """

    def cummin(self, dim: int) -> tuple[Tensor, Tensor]:
        """
        Running minima along ``dim`` and the index of each (the latest among ties), as torch.cummin.
        """

    def diff(self, n: int = 1, dim: int = -1, prepend: Tensor | None = None, append: Tensor | None = None) -> Tensor:
        """
        The ``n``-th forward difference ``x[i+1] - x[i]`` along ``dim`` (bool inputs use xor), after concatenating ``prepend`` and ``append``, as torch.diff.
        """

    def flip(self, dims: int | Sequence[int]) -> Tensor:
        """
        The elements of ``input`` in reverse order along each of ``dims`` (a copy, as torch.flip).
        """

    def roll(self, shifts: int | Sequence[int], dims: int | Sequence[int] | None = None) -> Tensor:
        """
        ``input`` shifted cyclically by ``shifts`` along ``dims`` (flattened and restored when dims is None).
        """

    def rot90(self, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
        """
        ``input`` rotated by 90 degrees ``k`` times in the plane of ``dims`` (from the first towards the second axis), as torch.rot90.
        """

    def movedim(self, source: int | Sequence[int], destination: int | Sequence[int]) -> Tensor:
        """
        A view of ``input`` with the dims at ``source`` moved to ``destination`` (the others keep their order), as torch.movedim.
        """

    def moveaxis(self, source: int | Sequence[int], destination: int | Sequence[int]) -> Tensor:
        """
        A view of ``input`` with the dims at ``source`` moved to ``destination`` (the others keep their order), as torch.movedim.
        """

    def swapaxes(self, axis0: int, axis1: int) -> Tensor:
        """
        A view of ``input`` with dims ``axis0`` and ``axis1`` exchanged (torch.swapaxes = transpose).
        """

    def swapdims(self, axis0: int, axis1: int) -> Tensor:
        """
        A view of ``input`` with dims ``axis0`` and ``axis1`` exchanged (torch.swapaxes = transpose).
        """

    def unflatten(self, dim: int, sizes: Sequence[int]) -> Tensor:
        """
        ``input`` with dim ``dim`` expanded into ``sizes`` (one may be -1), as torch.unflatten.
        """

    def unbind(self, dim: int = 0) -> tuple[Tensor, ...]:
        """
        The slices of ``input`` along ``dim`` (each without that dim), as a tuple of views.
        """

    def tensor_split(self, indices_or_sections: int | Sequence[int] | Tensor, dim: int = 0) -> tuple[Tensor, ...]:
        """
        ``input`` split along ``dim`` into ``n`` nearly equal parts (the first ``size % n`` one longer) when given an int, or at the given indices (clamped to the size), as torch.tensor_split.
        """

    def take_along_dim(self, indices: Tensor, dim: int | None = None) -> Tensor:
        """
        Values of ``input`` at ``indices`` along ``dim`` (the other dims broadcast; the flattened input when dim is None), as torch.take_along_dim.
        """

    def bernoulli(self, p: float | None = None, *, generator: Generator | None = None) -> Tensor:
        """
        0/1 draws in the input's dtype, 1 with probability ``input`` elementwise (floating, each in [0, 1]) or, given ``p``, with probability p for every element, drawn from ``generator`` (the global one when None) on the input's device, as torch.bernoulli. ValueError naming the range for a probability outside [0, 1].
        """

    def multinomial(self, num_samples: int, replacement: bool = False, *, generator: Generator | None = None) -> Tensor:
        """
        ``num_samples`` int64 category indices per row of the 1-D or 2-D non-negative weights ``input``, as torch.multinomial: with replacement by searching uniforms in each row's cumulative distribution, without it by the Gumbel top-k trick (the law of drawing one at a time without replacement).
        """

    def isclose(self, other: Tensor | float, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
        """
        Elementwise ``|input - other| <= atol + rtol * |other|`` (exact matches and, with equal_nan, NaN pairs count as close), a bool tensor as torch.isclose.
        """

    def nan_to_num(self, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Tensor:
        """
        ``input`` with NaN replaced by ``nan`` and +/-inf by ``posinf``/``neginf`` (the dtype's largest and lowest finite values by default); integers are returned as copies; the gradient is 1 at kept elements and 0 at replaced ones, as torch.nan_to_num.
        """

    def nan_to_num_(self, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Tensor:
        """In-place nan_to_num: writes the result into ``self`` and returns it."""

    def heaviside(self, values: Tensor) -> Tensor:
        """
        The Heaviside step: 0 where ``input < 0``, 1 where ``input > 0``, ``values`` where ``input == 0`` (same dtype required), as torch.heaviside.
        """

    def heaviside_(self, values: Tensor) -> Tensor:
        """In-place heaviside: writes the result into ``self`` and returns it."""

    def hypot(self, other: Tensor | float) -> Tensor:
        """
        ``sqrt(input**2 + other**2)`` elementwise without overflow for large values (infinite when either is), as torch.hypot.
        """

    def hypot_(self, other: Tensor | float) -> Tensor:
        """In-place hypot: writes the result into ``self`` and returns it."""

    def fmod(self, other: Tensor | float) -> Tensor:
        """
        The C remainder ``input - trunc(input / other) * other`` (the sign of the dividend), as torch.fmod; :func:`remainder` takes the divisor's sign.
        """

    def fmod_(self, other: Tensor | float) -> Tensor:
        """In-place fmod: writes the result into ``self`` and returns it."""

    def frac(self) -> Tensor:
        """
        The fractional part ``input - trunc(input)`` (sign of input), as torch.frac.
        """

    def frac_(self) -> Tensor:
        """In-place frac: writes the result into ``self`` and returns it."""

    def xlogy(self, other: Tensor | float) -> Tensor:
        """
        ``input * log(other)``, 0 where ``input == 0`` (unless other is NaN); the gradient for input is ``log(other)``, for other ``input / other``, as torch.xlogy.
        """

    def xlogy_(self, other: Tensor | float) -> Tensor:
        """In-place xlogy: writes the result into ``self`` and returns it."""

    def logit(self, eps: float | None = None) -> Tensor:
        """
        ``log(p / (1 - p))`` with p clamped to ``[eps, 1 - eps]`` when eps is given, as torch.logit.
        """

    def logit_(self, eps: float | None = None) -> Tensor:
        """In-place logit: writes the result into ``self`` and returns it."""

    def sinc(self) -> Tensor:
        """The normalised sinc ``sin(pi x) / (pi x)``, 1 at 0, as torch.sinc."""

    def sinc_(self) -> Tensor:
        """In-place sinc: writes the result into ``self`` and returns it."""

    def clamp_min(self, min: float) -> Tensor:
        """``clamp(self, min=min)``: elementwise max with ``min``."""

    def clamp_max(self, max: float) -> Tensor:
        """``clamp(self, max=max)``: elementwise min with ``max``."""

    def clamp_min_(self, min: float) -> Tensor:
        """In-place clamp_min: writes the result into ``self`` and returns it."""

    def clamp_max_(self, max: float) -> Tensor:
        """In-place clamp_max: writes the result into ``self`` and returns it."""

    def lerp(self, end: Tensor, weight: Tensor | float) -> Tensor:
        """``input + weight * (end - input)``, as torch.lerp."""

    def addcmul(self, tensor1: Tensor, tensor2: Tensor, *, value: float = 1.0) -> Tensor:
        """``input + value * tensor1 * tensor2``, as torch.addcmul."""

    def addcdiv(self, tensor1: Tensor, tensor2: Tensor, *, value: float = 1.0) -> Tensor:
        """``input + value * tensor1 / tensor2``, as torch.addcdiv."""

    def addmm(self, mat1: Tensor, mat2: Tensor, *, beta: float = 1.0, alpha: float = 1.0) -> Tensor:
        """
        ``beta * input + alpha * (mat1 @ mat2)`` (input broadcast to the product's shape), as torch.addmm.
        """

    def baddbmm(self, batch1: Tensor, batch2: Tensor, *, beta: float = 1.0, alpha: float = 1.0) -> Tensor:
        """
        ``beta * input + alpha * (batch1 @ batch2)`` for 3-D batches, as torch.baddbmm.
        """

    def outer(self, vec2: Tensor) -> Tensor:
        """
        The outer product ``input[i] * vec2[j]`` of two 1-D tensors, as torch.outer.
        """

    def kron(self, other: Tensor) -> Tensor:
        """
        The Kronecker product: block ``(i, j, ...)`` is ``input[i, j, ...] * other`` (the shorter shape padded with leading ones), as torch.kron.
        """

    def trace(self) -> Tensor:
        """
        The sum of the main diagonal of a 2-D tensor (integers sum to int64), as torch.trace.
        """

    def cross(self, other: Tensor, dim: int | None = None) -> Tensor:
        """
        The 3-vector cross product along ``dim`` (shapes broadcast; when dim is None the first dim of size 3), as torch.cross.
        """

    def new_zeros(self, *size: int | Sequence[int], dtype: dtype | str | None = None, device: str | None = None, requires_grad: bool = False) -> Tensor:
        """
        Zeros of shape ``size`` with self's dtype and device unless given, as torch's Tensor.new_zeros.
        """

    def new_ones(self, *size: int | Sequence[int], dtype: dtype | str | None = None, device: str | None = None, requires_grad: bool = False) -> Tensor:
        """
        Ones of shape ``size`` with self's dtype and device unless given, as torch's Tensor.new_ones.
        """

    def new_empty(self, *size: int | Sequence[int], dtype: dtype | str | None = None, device: str | None = None, requires_grad: bool = False) -> Tensor:
        """
        An uninitialised tensor of shape ``size`` with self's dtype and device unless given, as torch's Tensor.new_empty.
        """

    def new_full(self, size: Sequence[int], fill_value: float, *, dtype: dtype | str | None = None, device: str | None = None, requires_grad: bool = False) -> Tensor:
        """
        A tensor of shape ``size`` filled with ``fill_value``, self's dtype and device unless given, as torch's Tensor.new_full.
        """

    def new_tensor(self, data: Any, *, dtype: dtype | str | None = None, device: str | None = None, requires_grad: bool = False) -> Tensor:
        """
        A copy of ``data`` (lists, numbers, arrays or a tensor) with self's dtype and device unless given, as torch's Tensor.new_tensor.
        """

    def type_as(self, other: Tensor) -> Tensor:
        """
        self converted to ``other``'s dtype (self itself when it already has it), as torch's Tensor.type_as.
        """

    def is_complex(self) -> bool:
        """
        Whether the tensor is complex: always False (complex numbers live in ``ComplexTensor``).
        """

    @property
    def rows(self) -> int:
        """Number of rows of a 2-D tensor."""

    @property
    def cols(self) -> int:
        """Number of columns of a 2-D tensor."""

    def scale(self, value: float) -> Tensor:
        """Returns ``value * self`` (a new tensor); ``value`` must be finite."""

    def add_scaled_(self, other: Tensor, scale: float) -> Tensor:
        """
        In place ``self += scale * other`` (same shape required); returns self.
        """

    def add_row_inplace(self, bias: Tensor | Sequence[float]) -> Tensor:
        """
        In place: adds ``bias`` (``cols`` values: a list or a tensor) to every row; returns self.
        """

    def squared_l2_norm(self) -> float:
        """Sum of squares of every element, as a Python float."""

    def row_softmax(self, *, backend: str | None = None) -> Tensor:
        """
        Softmax of every row of a 2-D tensor (max-shifted, rows sum to 1), on the tensor's device. ``backend`` (auto/cpu/cuda/wgpu) only checks where the tensor lives.
        """

    def scaled_dot_attention(self, keys: Tensor, values: Tensor, *, contexts: int, sequence: int, scale: float, z_bias: Tensor | None = None, attn_bias: Tensor | None = None, backend: str | None = None) -> Tensor:
        """
        Attention of the original's flat layout: queries (self), keys and values are ``(contexts * sequence, head_dim)``. Per context c and query i, ``logit_ij = scale * <q_i, k_j> + z_bias[c, j] + attn_bias[c * sequence + i, j]``, softmax over j, ``out_i = sum_j w_ij v_j``. Returns ``(contexts * sequence, head_dim)``.
        """

    @staticmethod
    def cat_rows(tensors: Sequence[Tensor]) -> Tensor:
        """
        Stacks 2-D tensors with equal column counts vertically (``cat`` along rows).
        """

    def project_to_poincare(self, curvature: float = -1.0) -> Tensor:
        """
        Maps every row into the Poincare ball of curvature ``curvature`` (< 0) with the exponential map at the origin, ``tanh(sqrt|c| |x|) x / (sqrt|c| |x|)``; zero rows stay zero. (The original divided by sqrt|c| and always landed in the unit ball; this is the exact map into the ball of radius 1/sqrt|c|, equal to it at c = -1.)
        """

    def to_dlpack(self) -> Any:
        """A DLPack capsule sharing this tensor's memory (``__dlpack__()``)."""

    @staticmethod
    def from_dlpack(ext_tensor: Any) -> Tensor:
        """
        ``spiraltorch.from_dlpack`` as a static method (the seed's ``Tensor.from_dlpack``): wraps a DLPack-capable array without copying.
        """

    def median(self, dim: int | None = None, keepdim: bool = False) -> Tensor | tuple[Tensor, Tensor]:
        """
        The lower median (the element at ``(n - 1) // 2`` in sorted order; NaN when a NaN is present): of all elements when dim is None, else ``(values, indices)`` along ``dim``; the gradient goes to the chosen element, as torch.median.
        """

    def nanmedian(self, dim: int | None = None, keepdim: bool = False) -> Tensor | tuple[Tensor, Tensor]:
        """
        As :func:`median` with NaNs ignored (NaN only where every element is NaN), as torch.nanmedian.
        """

    def kthvalue(self, k: int, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
        """
        The ``k``-th smallest element along ``dim`` (1-based) and its index, as torch.kthvalue.
        """

    def mode(self, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
        """
        The most frequent value along ``dim`` (the smallest among equally frequent ones) and the index of its last occurrence, as torch.mode.
        """

    def aminmax(self, *, dim: int | None = None, keepdim: bool = False) -> tuple[Tensor, Tensor]:
        """
        ``(min, max)`` of ``input`` (all elements, or along ``dim``), as torch.aminmax.
        """

    def count_nonzero(self, dim: int | Sequence[int] | None = None) -> Tensor:
        """
        The number of non-zero elements (over ``dim``, or all), int64, as torch.count_nonzero.
        """

    def quantile(self, q: float | Tensor, dim: int | None = None, keepdim: bool = False, *, interpolation: str = 'linear') -> Tensor:
        """
        The ``q``-quantiles of ``input`` (all elements, or along ``dim``): the value at rank ``q * (n - 1)`` in sorted order, interpolated linearly between neighbours (or 'lower', 'higher', 'midpoint', 'nearest'); a tensor q puts its values along a new first dim; NaN where a NaN is present. As torch.quantile.
        """

    def nanquantile(self, q: float | Tensor, dim: int | None = None, keepdim: bool = False, *, interpolation: str = 'linear') -> Tensor:
        """
        As :func:`quantile` with NaNs ignored (NaN only where every element is NaN), as torch.nanquantile.
        """

    def cov(self, *, correction: int = 1, fweights: Tensor | None = None, aweights: Tensor | None = None) -> Tensor:
        """
        The covariance matrix of the rows of ``input`` (variables) over its columns (observations), with optional integer frequency weights and float observation weights, as torch.cov.
        """

    def corrcoef(self) -> Tensor:
        """
        Pearson correlation coefficients between the rows of ``input``, clipped to [-1, 1], as torch.corrcoef.
        """

    def bincount(self, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
        """
        How often each value 0..max occurs in a 1-D non-negative integer tensor (summing ``weights`` instead of ones when given), at least ``minlength`` long, as torch.bincount.
        """

    def histc(self, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
        """
        Counts of the elements of ``input`` in ``bins`` equal-width bins over [min, max] (the data's range when min == max; elements outside are ignored), in the input's dtype, as torch.histc.
        """

    def __repr__(self) -> str:
        """
        PyTorch-style repr: ``tensor([[1., 2.]], dtype=spiraltorch.float64, requires_grad=True)``.
        """

    def __str__(self) -> str:
        """
        PyTorch-style repr: ``tensor([[1., 2.]], dtype=spiraltorch.float64, requires_grad=True)``.
        """

    def __iter__(self) -> Iterator[Tensor]:
        """Iterates over the first dimension, like a sequence of sub-tensors."""

    def __contains__(self, value: Any, /) -> bool:
        """``value in t``: whether any element equals ``value``."""

    def is_floating_point(self) -> bool:
        """
        Whether the tensor's dtype is floating-point, as torch.is_floating_point.
        """

    @staticmethod
    def rand(*size: int | Sequence[int], seed: int | None = None, **kwargs: Any) -> Tensor:
        """
        ``Tensor.rand(rows, cols, seed=3)``: uniform [0, 1) values; a seed gives a fixed stream without touching the global generator; other arguments as ``spiraltorch.rand``.
        """

    @staticmethod
    def randn(*size: int | Sequence[int], seed: int | None = None, **kwargs: Any) -> Tensor:
        """
        ``Tensor.randn(rows, cols, seed=None)``: standard normal values; a seed gives a fixed stream without touching the global generator; other arguments as ``spiraltorch.randn``.
        """

    @staticmethod
    def zeros(*size: int | Sequence[int], **kwargs: Any) -> Tensor:
        """``Tensor.zeros(rows, cols)``: as ``spiraltorch.zeros``."""

    def nonzero(self, *, as_tuple: bool = False) -> Tensor | tuple[Tensor, ...]:
        """
        Indices of the non-zero elements of ``input``, row-major: an (n, ndim) int64 tensor, or with as_tuple one 1-D index tensor per dimension, as torch.nonzero.
        """

    def index_add(self, dim: int, index: Tensor, source: Tensor, *, alpha: float = 1.0) -> Tensor:
        """
        ``input`` with ``alpha * source`` slices added at ``index`` along ``dim`` (repeats accumulate), as torch.index_add.
        """

    def index_add_(self, dim: int, index: Tensor, source: Tensor, *, alpha: float = 1.0) -> Tensor:
        """In-place index_add: writes the result into ``self`` and returns it."""

    def scatter_add_(self, dim: int, index: Tensor, src: Tensor) -> Tensor:
        """
        In-place scatter_add: adds ``src`` at the positions ``index`` gives along ``dim``; returns self.
        """

    def repeat_interleave(self, repeats: int | Tensor, dim: int | None = None) -> Tensor:
        """
        Each element (each slice along ``dim``; of the flattened input when dim is None) repeated ``repeats`` times (an int, or one count per element), as torch.repeat_interleave.
        """

    def diag(self, diagonal: int = 0) -> Tensor:
        """
        A 1-D input becomes a square matrix with it on the ``diagonal``-th diagonal; a 2-D input gives that diagonal as 1-D, as torch.diag.
        """

    def unique(self, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None) -> Tensor | tuple[Tensor, ...]:
        """
        The distinct values of ``input`` in ascending order, with (optionally) each element's index into them and their counts, as torch.unique over the flattened input.
        """

class TensorHookHandle:
    """
    Returned by Tensor.register_hook / register_post_accumulate_grad_hook; remove() unregisters the hook (idempotent), as does leaving a with-block.
    """

    @property
    def id(self) -> int:
        """The hook's registration id (unique in this process)."""

    def remove(self) -> None:
        """Unregisters the hook; calling it again does nothing."""

    def __enter__(self) -> TensorHookHandle: ...

    def __exit__(self, *exc_info: Any) -> None:
        """Removes the hook."""

def from_dlpack(ext_tensor: Any) -> Tensor:
    """
    Wraps a DLPack-capable array (NumPy, PyTorch, ...) without copying; a CUDA producer is asked to order its pending work before our current stream. Read-only inputs (a non-writeable NumPy array, a read-only memmap, bytes, a JAX array) are shared too, but marked: in-place ops and optimizer steps on them raise SpiralError (write to a .clone()), and .numpy() gives a read-only array.
    """

def from_numpy(array: numpy.typing.NDArray[Any]) -> Tensor:
    """
    Wraps a NumPy array without copying; writes are visible on both sides. A read-only array (writeable=False, np.frombuffer of bytes, a read-only memmap, a broadcast_to view) is shared too, but marked: in-place ops and optimizer steps on it raise SpiralError (write to a .clone()), and .numpy() gives a read-only array.
    """

def _set_size_type(size_type: object) -> None:
    """Sets the class (spiraltorch.Size) that Tensor.shape and size() return."""

def _shared_wrapper_count() -> int:
    """How many parameter wrappers the identity registry holds (for tests)."""

def _release_unused_wrappers_after_gc(phase: str, info: object) -> None:
    """
    gc.callbacks entry: after a collection, releases the parameter wrappers (and tensors) nothing refers to.
    """

def mul(input: Tensor, other: Tensor | float) -> Tensor:
    """Elementwise product input * other (broadcasting)."""

def multiply(input: Tensor, other: Tensor | float) -> Tensor:
    """Elementwise product input * other (broadcasting); alias of mul."""

def div(input: Tensor, other: Tensor | float) -> Tensor:
    """
    Elementwise true division input / other (broadcasting); integer inputs give float32.
    """

def divide(input: Tensor, other: Tensor | float) -> Tensor:
    """Elementwise true division (broadcasting); alias of div."""

def true_divide(input: Tensor, other: Tensor | float) -> Tensor:
    """Elementwise true division (broadcasting); alias of div."""

def floor_divide(input: Tensor, other: Tensor | float) -> Tensor:
    """
    Elementwise floor(input / other), rounding toward minus infinity like Python's //; no gradient.
    """

def remainder(input: Tensor, other: Tensor | float) -> Tensor:
    """
    Elementwise Python-style modulo: the result has the sign of other (remainder(-7, 3) == 2).
    """

def minimum(input: Tensor, other: Tensor | float) -> Tensor:
    """Elementwise minimum of input and other (NaN propagates)."""

def maximum(input: Tensor, other: Tensor | float) -> Tensor:
    """Elementwise maximum of input and other (NaN propagates)."""

def atan2(input: Tensor, other: Tensor | float) -> Tensor:
    """
    Elementwise atan2(input, other): the angle of the point (other, input), in (-pi, pi].
    """

def eq(input: Tensor, other: Tensor | float) -> Tensor:
    """Elementwise input == other as a bool tensor."""

def ne(input: Tensor, other: Tensor | float) -> Tensor:
    """Elementwise input != other as a bool tensor."""

def lt(input: Tensor, other: Tensor | float) -> Tensor:
    """Elementwise input < other as a bool tensor."""

def le(input: Tensor, other: Tensor | float) -> Tensor:
    """Elementwise input <= other as a bool tensor."""

def gt(input: Tensor, other: Tensor | float) -> Tensor:
    """Elementwise input > other as a bool tensor."""

def ge(input: Tensor, other: Tensor | float) -> Tensor:
    """Elementwise input >= other as a bool tensor."""

def logical_and(input: Tensor, other: Tensor | float) -> Tensor:
    """Elementwise logical and (nonzero is true) as a bool tensor."""

def logical_or(input: Tensor, other: Tensor | float) -> Tensor:
    """Elementwise logical or (nonzero is true) as a bool tensor."""

def logical_xor(input: Tensor, other: Tensor | float) -> Tensor:
    """Elementwise logical exclusive or (nonzero is true) as a bool tensor."""

def bmm(input: Tensor, other: Tensor) -> Tensor:
    """
    Batched matrix product of (b, n, k) and (b, k, m) tensors: (b, n, m). ShapeError otherwise.
    """

def add(input: Tensor, other: Tensor | float, alpha: float | None = None) -> Tensor:
    """
    input + alpha * other, elementwise with broadcasting (alpha defaults to 1).
    """

def sub(input: Tensor, other: Tensor | float, alpha: float | None = None) -> Tensor:
    """
    input - alpha * other, elementwise with broadcasting (alpha defaults to 1).
    """

def subtract(input: Tensor, other: Tensor | float, alpha: float | None = None) -> Tensor:
    """input - alpha * other (broadcasting); alias of sub."""

def pow(input: Tensor, exponent: Tensor | float) -> Tensor:
    """Elementwise input ** exponent (a number or a broadcast tensor)."""

def matmul(input: Tensor, other: Tensor, backend: str | None = None) -> Tensor:
    """
    Matrix product with NumPy's rules (1-d vectors, batched and broadcast leading dims). backend: None, 'auto' or 'cpu' run where the tensors are; 'cuda' or 'wgpu' run the product there and return the result on input's device (DeviceUnavailableError when absent). ShapeError when inner dims differ.
    """

def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """
    Product of 2-d matrices (n, k) @ (k, m) -> (n, m); ShapeError for other ranks.
    """

def neg(input: Tensor) -> Tensor:
    """Elementwise -input."""

def negative(input: Tensor) -> Tensor:
    """Elementwise -input; alias of neg."""

def abs(input: Tensor) -> Tensor:
    """Elementwise absolute value."""

def sign(input: Tensor) -> Tensor:
    """Elementwise sign: -1, 0 or 1 (zero gradient)."""

def exp(input: Tensor) -> Tensor:
    """Elementwise e ** input."""

def log(input: Tensor) -> Tensor:
    """Elementwise natural logarithm (-inf at 0, NaN below)."""

def log1p(input: Tensor) -> Tensor:
    """Elementwise log(1 + input), accurate for small input."""

def expm1(input: Tensor) -> Tensor:
    """Elementwise exp(input) - 1, accurate for small input."""

def sqrt(input: Tensor) -> Tensor:
    """Elementwise square root (NaN below 0)."""

def rsqrt(input: Tensor) -> Tensor:
    """Elementwise 1 / sqrt(input)."""

def square(input: Tensor) -> Tensor:
    """Elementwise input * input."""

def reciprocal(input: Tensor) -> Tensor:
    """Elementwise 1 / input."""

def sin(input: Tensor) -> Tensor:
    """Elementwise sine (radians)."""

def cos(input: Tensor) -> Tensor:
    """Elementwise cosine (radians)."""

def tan(input: Tensor) -> Tensor:
    """Elementwise tangent (radians)."""

def tanh(input: Tensor) -> Tensor:
    """Elementwise hyperbolic tangent."""

def atanh(input: Tensor) -> Tensor:
    """Elementwise inverse hyperbolic tangent (+-inf at +-1, NaN outside)."""

def sigmoid(input: Tensor) -> Tensor:
    """Elementwise logistic function 1 / (1 + exp(-input))."""

def erf(input: Tensor) -> Tensor:
    """Elementwise Gauss error function."""

def lgamma(input: Tensor) -> Tensor:
    """Elementwise log |Gamma(input)|."""

def digamma(input: Tensor) -> Tensor:
    """Elementwise digamma, the derivative of lgamma."""

def relu(input: Tensor) -> Tensor:
    """Elementwise max(input, 0)."""

def silu(input: Tensor) -> Tensor:
    """Elementwise input * sigmoid(input) (swish)."""

def floor(input: Tensor) -> Tensor:
    """Elementwise round toward minus infinity (zero gradient)."""

def ceil(input: Tensor) -> Tensor:
    """Elementwise round toward plus infinity (zero gradient)."""

def round(input: Tensor) -> Tensor:
    """
    Elementwise round to nearest, ties to even (round(2.5) == 2); zero gradient.
    """

def trunc(input: Tensor) -> Tensor:
    """Elementwise round toward zero (zero gradient)."""

def logical_not(input: Tensor) -> Tensor:
    """Elementwise logical not (zero is true) as a bool tensor."""

def isnan(input: Tensor) -> Tensor:
    """Elementwise test for NaN, a bool tensor."""

def isinf(input: Tensor) -> Tensor:
    """Elementwise test for +-inf, a bool tensor."""

def isfinite(input: Tensor) -> Tensor:
    """Elementwise test for a finite value (not NaN or inf), a bool tensor."""

def t(input: Tensor) -> Tensor:
    """
    The dims in reverse order as a view: the transpose of a matrix, a 0-d or 1-d tensor as is.
    """

def gelu(input: Tensor, approximate: str = 'none') -> Tensor:
    """
    Elementwise GELU: x * Phi(x) (approximate='none', with erf) or its tanh approximation (approximate='tanh'); ValueError otherwise.
    """

def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """
    Elementwise log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold.
    """

def leaky_relu(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """Elementwise x for x >= 0, negative_slope * x below."""

def elu(input: Tensor, alpha: float = 1.0) -> Tensor:
    """Elementwise x for x > 0, alpha * (exp(x) - 1) below."""

def clamp(input: Tensor, min: float | None = None, max: float | None = None) -> Tensor:
    """
    Elementwise clamp into [min, max] (either bound may be None); the gradient is 1 inside, 0 outside. DtypeError when a bound is not a number.
    """

def clip(input: Tensor, min: float | None = None, max: float | None = None) -> Tensor:
    """Alias of clamp."""

def masked_fill(input: Tensor, mask: Tensor, value: float) -> Tensor:
    """
    A copy of input with `value` where the bool mask (broadcast to input's shape) is True.
    """

def where(condition: Tensor, input: Tensor | float, other: Tensor | float) -> Tensor:
    """
    Elementwise choice: input where condition is True, other elsewhere (all three broadcast). A number takes the dtype of the tensor operand (float32 when both are numbers).
    """

def sum(input: Tensor, dim: int | Sequence[int] | None = None, keepdim: bool = False, dtype: dtype | str | None = None) -> Tensor:
    """
    The sum over `dim` (all dims by default); keepdim keeps reduced dims as size 1. Integer and bool inputs sum in int64; dtype converts the input first. Example: tensor([[1, 2], [3, 4]]).sum(0) -> [4, 6]
    """

def mean(input: Tensor, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
    """The mean over `dim` (all dims by default)."""

def var(input: Tensor, dim: int | Sequence[int] | None = None, unbiased: bool | None = None, keepdim: bool = False, correction: float | None = None) -> Tensor:
    """
    The variance over `dim`: sum((x - mean)^2) / (N - correction). correction defaults to 1 (Bessel); unbiased=False means correction 0; correction wins when both are given.
    """

def std(input: Tensor, dim: int | Sequence[int] | None = None, unbiased: bool | None = None, keepdim: bool = False, correction: float | None = None) -> Tensor:
    """
    The standard deviation over `dim`: the square root of var with the same arguments.
    """

def prod(input: Tensor, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
    """The product over `dim` (all dims by default)."""

def amax(input: Tensor, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
    """
    The maximum over `dim` (all dims by default), values only; the gradient is shared among ties.
    """

def amin(input: Tensor, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
    """
    The minimum over `dim` (all dims by default), values only; the gradient is shared among ties.
    """

def max(input: Tensor, dim: int | Tensor | None = None, keepdim: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """
    max() is the largest element (a 0-d tensor); max(dim) a (values, indices) named tuple along dim; max(other_tensor) the elementwise maximum.
    """

def min(input: Tensor, dim: int | Tensor | None = None, keepdim: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """
    min() is the smallest element (a 0-d tensor); min(dim) a (values, indices) named tuple along dim; min(other_tensor) the elementwise minimum.
    """

def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """
    The int64 index of the largest element along dim (of the flattened tensor when dim is None); the first one among ties.
    """

def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """
    The int64 index of the smallest element along dim (of the flattened tensor when dim is None); the first one among ties.
    """

def logsumexp(input: Tensor, dim: int | Sequence[int], keepdim: bool = False) -> Tensor:
    """
    log(sum(exp(input))) over dim, computed stably (shifted by the maximum).
    """

def norm(input: Tensor, p: float | str | None = None, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
    """
    The vector p-norm (sum |x|^p)^(1/p) over dim (all elements by default); p defaults to 2, 'fro' is 2. ValueError for another string.
    """

def all(input: Tensor, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
    """True where every element over dim is nonzero (a bool tensor)."""

def any(input: Tensor, dim: int | Sequence[int] | None = None, keepdim: bool = False) -> Tensor:
    """True where some element over dim is nonzero (a bool tensor)."""

def softmax(input: Tensor, dim: int = -1) -> Tensor:
    """exp(x) / sum(exp(x)) along dim, computed stably."""

def log_softmax(input: Tensor, dim: int = -1) -> Tensor:
    """log(softmax(x)) along dim, computed stably."""

def reshape(input: Tensor, shape: Sequence[int]) -> Tensor:
    """
    The same elements in shape `shape` (one dim may be -1): a view when the strides allow, else a copy.
    """

def broadcast_to(input: Tensor, shape: Sequence[int]) -> Tensor:
    """
    A broadcast view of input with shape `shape` (NumPy's rules); ShapeError when they do not broadcast.
    """

def permute(input: Tensor, dims: Sequence[int]) -> Tensor:
    """
    A view with the dims reordered: dim i of the result is dim dims[i] of input.
    """

def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """A view with dims dim0 and dim1 swapped."""

def squeeze(input: Tensor, dim: int | None = None) -> Tensor:
    """
    A view without size-1 dims (all of them, or only dim if it has size 1).
    """

def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """A view with a new size-1 dim inserted at position dim."""

def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Dims start_dim..end_dim merged into one."""

def narrow(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """A view of elements start..start+length-1 along dim."""

def select(input: Tensor, dim: int, index: int) -> Tensor:
    """A view of position `index` along dim, with that dim removed."""

def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """
    Concatenates tensors of equal shape except along dim. ShapeError otherwise.
    """

def concat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Alias of cat."""

def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Joins tensors of one shape along a new dim at position dim."""

def split(input: Tensor, split_size_or_sections: int | Sequence[int], dim: int = 0) -> list[Tensor]:
    """
    Views along dim: chunks of split_size_or_sections elements (the last may be smaller), or one per listed size (which must add up to the dim's size).
    """

def chunk(input: Tensor, chunks: int, dim: int = 0) -> list[Tensor]:
    """
    At most `chunks` views along dim, each ceil(size / chunks) long (the last may be shorter).
    """

def gather(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """
    out[i][j] = input[index[i][j]][j] for dim 0 (and so on): values picked along dim by an int64 index of the output's shape.
    """

def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """
    A copy of input with src's values added at the positions index gives along dim (the reverse of gather; repeated positions accumulate).
    """

def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """
    The slices along dim at the positions of the 1-d integer tensor index (a copy).
    """

def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """A 1-d tensor of the elements where the bool mask (broadcast) is True."""

def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> tuple[Tensor, Tensor]:
    """
    The k largest (or smallest) elements along dim as a (values, indices) named tuple.
    """

def sort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False) -> tuple[Tensor, Tensor]:
    """
    The elements sorted along dim as a (values, indices) named tuple. Every sort is stable, so stable= changes nothing.
    """

def argsort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Tensor:
    """The int64 indices that sort input along dim (stable)."""

def cumsum(input: Tensor, dim: int) -> Tensor:
    """Running sums along dim: out[i] = input[0] + ... + input[i]."""

def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """
    A copy of the last two dims' lower triangle (on and below diagonal `diagonal`), zeros above.
    """

def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """
    A copy of the last two dims' upper triangle (on and above diagonal `diagonal`), zeros below.
    """

def einsum(equation: str, *operands: Tensor | Sequence[Tensor]) -> Tensor:
    """
    Einstein summation over the operands ('ij,jk->ik', 'bij,bjk->bik', 'ii->i', '...ij,...jk'), with autograd. The operands come as arguments or as one list.
    """

def one_hot(input: Tensor, num_classes: int = -1) -> Tensor:
    """
    int64 one-hot rows of an integer tensor: shape input.shape + (num_classes,); num_classes=-1 uses max + 1.
    """

def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08) -> bool:
    """
    True when |input - other| <= atol + rtol * |other| everywhere (broadcasting, compared in float64); NaN matches NaN.
    """

def equal(input: Tensor, other: Tensor) -> bool:
    """True when both tensors have the same shape and values."""

def cumprod(input: Tensor, dim: int, *, dtype: dtype | str | None = None) -> Tensor:
    """
    Running products along ``dim`` (integers and bool accumulate in int64), differentiable through zeros, as torch.cumprod.
    """

def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """
    ``log(cumsum(exp(input)))`` along ``dim``, computed stably, as torch.logcumsumexp.
    """

def cummax(input: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    """
    Running maxima along ``dim`` and the index of each (the latest among ties; NaN propagates from its first occurrence); the values carry the gradient to the chosen elements, as torch.cummax.
    """

def cummin(input: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    """
    Running minima along ``dim`` and the index of each (the latest among ties), as torch.cummin.
    """

def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None, append: Tensor | None = None) -> Tensor:
    """
    The ``n``-th forward difference ``x[i+1] - x[i]`` along ``dim`` (bool inputs use xor), after concatenating ``prepend`` and ``append``, as torch.diff.
    """

def flip(input: Tensor, dims: int | Sequence[int]) -> Tensor:
    """
    The elements of ``input`` in reverse order along each of ``dims`` (a copy, as torch.flip).
    """

def roll(input: Tensor, shifts: int | Sequence[int], dims: int | Sequence[int] | None = None) -> Tensor:
    """
    ``input`` shifted cyclically by ``shifts`` along ``dims`` (flattened and restored when dims is None).
    """

def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """
    ``input`` rotated by 90 degrees ``k`` times in the plane of ``dims`` (from the first towards the second axis), as torch.rot90.
    """

def movedim(input: Tensor, source: int | Sequence[int], destination: int | Sequence[int]) -> Tensor:
    """
    A view of ``input`` with the dims at ``source`` moved to ``destination`` (the others keep their order), as torch.movedim.
    """

def moveaxis(input: Tensor, source: int | Sequence[int], destination: int | Sequence[int]) -> Tensor:
    """
    A view of ``input`` with the dims at ``source`` moved to ``destination`` (the others keep their order), as torch.movedim.
    """

def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """
    A view of ``input`` with dims ``axis0`` and ``axis1`` exchanged (torch.swapaxes = transpose).
    """

def swapdims(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """
    A view of ``input`` with dims ``axis0`` and ``axis1`` exchanged (torch.swapaxes = transpose).
    """

def unflatten(input: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    """
    ``input`` with dim ``dim`` expanded into ``sizes`` (one may be -1), as torch.unflatten.
    """

def unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """
    The slices of ``input`` along ``dim`` (each without that dim), as a tuple of views.
    """

def tensor_split(input: Tensor, indices_or_sections: int | Sequence[int] | Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """
    ``input`` split along ``dim`` into ``n`` nearly equal parts (the first ``size % n`` one longer) when given an int, or at the given indices (clamped to the size), as torch.tensor_split.
    """

def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """
    Values of ``input`` at ``indices`` along ``dim`` (the other dims broadcast; the flattened input when dim is None), as torch.take_along_dim.
    """

def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:
    """
    Poisson counts with rates ``input`` elementwise, in the input's dtype, as torch.poisson: rates below 10 by the multiplication method, larger ones (up to 1e6) by Hörmann's transformed rejection (PTRS), drawn from ``generator`` (the global one when None) on the input's device.
    """

def bernoulli(input: Tensor, p: float | None = None, *, generator: Generator | None = None) -> Tensor:
    """
    0/1 draws in the input's dtype, 1 with probability ``input`` elementwise (floating, each in [0, 1]) or, given ``p``, with probability p for every element, drawn from ``generator`` (the global one when None) on the input's device, as torch.bernoulli. ValueError naming the range for a probability outside [0, 1].
    """

def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *, generator: Generator | None = None) -> Tensor:
    """
    ``num_samples`` int64 category indices per row of the 1-D or 2-D non-negative weights ``input``, as torch.multinomial: with replacement by searching uniforms in each row's cumulative distribution, without it by the Gumbel top-k trick (the law of drawing one at a time without replacement).
    """

def randperm(n: int, *, generator: Generator | None = None, dtype: dtype | str | None = None, device: str | None = None, requires_grad: bool = False) -> Tensor:
    """
    A uniformly random permutation of 0, 1, ..., n-1 (int64 unless dtype says otherwise), drawn from ``generator`` (the global one when None) on ``device``, as torch.randperm.
    """

def searchsorted(sorted_sequence: Tensor, input: Tensor | float, *, out_int32: bool = False, right: bool = False, side: str | None = None, sorter: Tensor | None = None) -> Tensor:
    """
    Indices at which each of ``input`` would be inserted into the sorted last dim of ``sorted_sequence`` to keep it sorted (the first such place, or after equal entries with ``right=True``/``side='right'``; NaN last), as torch.searchsorted. A 1-D sequence serves every value, else the leading dims agree; ``sorter`` gives the sorted order of an unsorted sequence. int64 (int32 with out_int32); a number gives a 0-d result.
    """

def bucketize(input: Tensor | float, boundaries: Tensor, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """
    The bucket of each element of ``input`` given sorted 1-D ``boundaries``: the index i with ``boundaries[i-1] < x <= boundaries[i]`` (``<=`` and ``<`` swapped with right=True), as torch.bucketize.
    """

def isclose(input: Tensor, other: Tensor | float, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """
    Elementwise ``|input - other| <= atol + rtol * |other|`` (exact matches and, with equal_nan, NaN pairs count as close), a bool tensor as torch.isclose.
    """

def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Tensor:
    """
    ``input`` with NaN replaced by ``nan`` and +/-inf by ``posinf``/``neginf`` (the dtype's largest and lowest finite values by default); integers are returned as copies; the gradient is 1 at kept elements and 0 at replaced ones, as torch.nan_to_num.
    """

def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """
    The Heaviside step: 0 where ``input < 0``, 1 where ``input > 0``, ``values`` where ``input == 0`` (same dtype required), as torch.heaviside.
    """

def hypot(input: Tensor, other: Tensor | float) -> Tensor:
    """
    ``sqrt(input**2 + other**2)`` elementwise without overflow for large values (infinite when either is), as torch.hypot.
    """

def fmod(input: Tensor, other: Tensor | float) -> Tensor:
    """
    The C remainder ``input - trunc(input / other) * other`` (the sign of the dividend), as torch.fmod; :func:`remainder` takes the divisor's sign.
    """

def frac(input: Tensor) -> Tensor:
    """
    The fractional part ``input - trunc(input)`` (sign of input), as torch.frac.
    """

def xlogy(input: Tensor | float, other: Tensor | float) -> Tensor:
    """
    ``input * log(other)``, 0 where ``input == 0`` (unless other is NaN); the gradient for input is ``log(other)``, for other ``input / other``, as torch.xlogy.
    """

def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """
    ``log(p / (1 - p))`` with p clamped to ``[eps, 1 - eps]`` when eps is given, as torch.logit.
    """

def sinc(input: Tensor) -> Tensor:
    """The normalised sinc ``sin(pi x) / (pi x)``, 1 at 0, as torch.sinc."""

def lerp(input: Tensor, end: Tensor, weight: Tensor | float) -> Tensor:
    """``input + weight * (end - input)``, as torch.lerp."""

def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: float = 1.0) -> Tensor:
    """``input + value * tensor1 * tensor2``, as torch.addcmul."""

def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: float = 1.0) -> Tensor:
    """``input + value * tensor1 / tensor2``, as torch.addcdiv."""

def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: float = 1.0, alpha: float = 1.0) -> Tensor:
    """
    ``beta * input + alpha * (mat1 @ mat2)`` (input broadcast to the product's shape), as torch.addmm.
    """

def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: float = 1.0, alpha: float = 1.0) -> Tensor:
    """
    ``beta * input + alpha * (batch1 @ batch2)`` for 3-D batches, as torch.baddbmm.
    """

def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """
    The outer product ``input[i] * vec2[j]`` of two 1-D tensors, as torch.outer.
    """

def kron(input: Tensor, other: Tensor) -> Tensor:
    """
    The Kronecker product: block ``(i, j, ...)`` is ``input[i, j, ...] * other`` (the shorter shape padded with leading ones), as torch.kron.
    """

def trace(input: Tensor) -> Tensor:
    """
    The sum of the main diagonal of a 2-D tensor (integers sum to int64), as torch.trace.
    """

def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """
    The 3-vector cross product along ``dim`` (shapes broadcast; when dim is None the first dim of size 3), as torch.cross.
    """

def tensordot(a: Tensor, b: Tensor, dims: int | Sequence[int | Sequence[int]] | Tensor = 2) -> Tensor:
    """
    Sums the products of ``a`` and ``b`` over the last ``dims`` dims of a and the first of b (an int), or over the listed pairs ``dims=([a dims], [b dims])``, as torch.tensordot (differentiable).
    """

def cdist(x1: Tensor, x2: Tensor, p: float = 2.0) -> Tensor:
    """
    Pairwise p-norm distances between the rows of ``x1`` (..., P, M) and ``x2`` (..., R, M), shape (..., P, R), as torch.cdist (computed from the differences, not the |a|^2 + |b|^2 - 2ab shortcut; differentiable).
    """

def meshgrid(*tensors: Tensor | Sequence[Tensor], indexing: str = 'ij') -> tuple[Tensor, ...]:
    """
    Coordinate grids from 0-D or 1-D tensors (``indexing='ij'`` matrix order or ``'xy'`` Cartesian): expanded views of the inputs, as torch.meshgrid.
    """

def block_diag(*tensors: Tensor) -> Tensor:
    """
    A block-diagonal matrix with the given 0-, 1- or 2-D tensors on its diagonal, in their promoted dtype, as torch.block_diag (differentiable).
    """

def cartesian_prod(*tensors: Tensor) -> Tensor:
    """
    Every combination of the elements of the 1-D inputs, one per row (a single input is returned as is), as torch.cartesian_prod (differentiable).
    """

def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """
    The length-``r`` combinations of the elements of a 1-D tensor (with or without replacement), one per row in itertools order, as torch.combinations (differentiable).
    """

def median(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """
    The lower median (the element at ``(n - 1) // 2`` in sorted order; NaN when a NaN is present): of all elements when dim is None, else ``(values, indices)`` along ``dim``; the gradient goes to the chosen element, as torch.median.
    """

def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """
    As :func:`median` with NaNs ignored (NaN only where every element is NaN), as torch.nanmedian.
    """

def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    """
    The ``k``-th smallest element along ``dim`` (1-based) and its index, as torch.kthvalue.
    """

def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    """
    The most frequent value along ``dim`` (the smallest among equally frequent ones) and the index of its last occurrence, as torch.mode.
    """

def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    """
    ``(min, max)`` of ``input`` (all elements, or along ``dim``), as torch.aminmax.
    """

def count_nonzero(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """
    The number of non-zero elements (over ``dim``, or all), int64, as torch.count_nonzero.
    """

def quantile(input: Tensor, q: float | Tensor, dim: int | None = None, keepdim: bool = False, *, interpolation: str = 'linear') -> Tensor:
    """
    The ``q``-quantiles of ``input`` (all elements, or along ``dim``): the value at rank ``q * (n - 1)`` in sorted order, interpolated linearly between neighbours (or 'lower', 'higher', 'midpoint', 'nearest'); a tensor q puts its values along a new first dim; NaN where a NaN is present. As torch.quantile.
    """

def nanquantile(input: Tensor, q: float | Tensor, dim: int | None = None, keepdim: bool = False, *, interpolation: str = 'linear') -> Tensor:
    """
    As :func:`quantile` with NaNs ignored (NaN only where every element is NaN), as torch.nanquantile.
    """

def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None, aweights: Tensor | None = None) -> Tensor:
    """
    The covariance matrix of the rows of ``input`` (variables) over its columns (observations), with optional integer frequency weights and float observation weights, as torch.cov.
    """

def corrcoef(input: Tensor) -> Tensor:
    """
    Pearson correlation coefficients between the rows of ``input``, clipped to [-1, 1], as torch.corrcoef.
    """

def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """
    How often each value 0..max occurs in a 1-D non-negative integer tensor (summing ``weights`` instead of ones when given), at least ``minlength`` long, as torch.bincount.
    """

def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
    """
    Counts of the elements of ``input`` in ``bins`` equal-width bins over [min, max] (the data's range when min == max; elements outside are ignored), in the input's dtype, as torch.histc.
    """

def is_floating_point(input: Tensor) -> bool:
    """
    Whether the tensor's dtype is floating-point, as torch.is_floating_point.
    """

def nonzero(input: Tensor, *, as_tuple: bool = False) -> Tensor | tuple[Tensor, ...]:
    """
    Indices of the non-zero elements of ``input``, row-major: an (n, ndim) int64 tensor, or with as_tuple one 1-D index tensor per dimension, as torch.nonzero.
    """

def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: float = 1.0) -> Tensor:
    """
    ``input`` with ``alpha * source`` slices added at ``index`` along ``dim`` (repeats accumulate), as torch.index_add.
    """

def repeat_interleave(input: Tensor, repeats: int | Tensor, dim: int | None = None) -> Tensor:
    """
    Each element (each slice along ``dim``; of the flattened input when dim is None) repeated ``repeats`` times (an int, or one count per element), as torch.repeat_interleave.
    """

def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """
    A 1-D input becomes a square matrix with it on the ``diagonal``-th diagonal; a 2-D input gives that diagonal as 1-D, as torch.diag.
    """

def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None) -> Tensor | tuple[Tensor, ...]:
    """
    The distinct values of ``input`` in ascending order, with (optionally) each element's index into them and their counts, as torch.unique over the flattened input.
    """

def _cuda_is_built() -> bool:
    """Whether this build has the CUDA backend."""

def _cuda_is_available() -> bool:
    """
    Whether the CUDA backend is built and a driver with at least one device is present.
    """

def _cuda_unavailable_reason() -> str:
    """Why CUDA is unavailable ('' when it is available)."""

def _cuda_device_count() -> int:
    """The number of CUDA devices (0 when unavailable)."""

def _cuda_current_device() -> int:
    """This thread's current CUDA device."""

def _cuda_set_device(device: int) -> None:
    """Sets this thread's current CUDA device."""

def _cuda_synchronize(device: int = -1) -> None:
    """Waits for all work on `device` (-1: the current one)."""

def _cuda_properties(device: int) -> dict:
    """
    Name, memory, compute capability, SM count, L2 size and driver/runtime versions of `device`.
    """

def _cuda_mem_get_info(device: int) -> tuple[int, int]:
    """(free, total) bytes of device memory as the driver reports them."""

def _cuda_memory_allocated(device: int = -1) -> int:
    """
    Bytes the caching allocator has handed out to tensors on `device` (-1: current).
    """

def _cuda_max_memory_allocated(device: int = -1) -> int:
    """The peak of memory_allocated since start or the last reset."""

def _cuda_memory_reserved(device: int = -1) -> int:
    """Bytes held from cudaMalloc on `device` (in use plus cached)."""

def _cuda_reset_peak_memory_stats(device: int = -1) -> None:
    """Restarts the peak of max_memory_allocated from the current value."""

def _cuda_empty_cache() -> None:
    """Returns the caching allocator's unused blocks to the driver."""

def _cuda_allow_tf32() -> bool:
    """Whether float32 GEMMs may use TF32 tensor cores."""

def _cuda_set_allow_tf32(allow: bool) -> None:
    """Allows or forbids TF32 for float32 GEMMs."""

def _cuda_flash_sdp_enabled() -> bool:
    """Whether scaled_dot_product_attention may use the fused (flash) kernel."""

def _cuda_set_flash_sdp_enabled(enabled: bool) -> None:
    """Enables or disables the fused attention kernel."""

def _cuda_cudnn_sdp_enabled() -> bool:
    """Whether scaled_dot_product_attention may use cuDNN's fused attention."""

def _cuda_set_cudnn_sdp_enabled(enabled: bool) -> None:
    """Enables or disables cuDNN's fused attention."""

def _cuda_cudnn_attention_built() -> bool:
    """Whether this build has cuDNN's graph API for attention."""

def _cudnn_version() -> str:
    """The cuDNN version string ('' without cuDNN)."""

def _cudnn_enabled() -> bool:
    """Whether convolutions, RNNs and attention may use cuDNN."""

def _cudnn_set_enabled(enabled: bool) -> None:
    """Enables or disables cuDNN."""

def _cudnn_benchmark() -> bool:
    """Whether cuDNN autotunes algorithms per shape."""

def _cudnn_set_benchmark(on: bool) -> None:
    """Turns cuDNN autotuning on or off."""

def _cuda_gemm_tuning() -> bool:
    """Whether cuBLASLt GEMMs time their candidate algorithms per shape."""

def _cuda_set_gemm_tuning(on: bool) -> None:
    """Turns cuBLASLt GEMM tuning on or off."""

def _cudnn_allow_tf32() -> bool:
    """Whether cuDNN convolutions may use TF32."""

def _cudnn_set_allow_tf32(allow: bool) -> None:
    """Allows or forbids TF32 in cuDNN convolutions."""

def _cuda_current_stream(device: int) -> int:
    """
    The handle of the current stream of `device` (0: the legacy default stream).
    """

def _cuda_set_current_stream(device: int, stream: int) -> None:
    """Makes `stream` the current stream of `device`."""

def _cuda_stream_create(device: int, priority: int = 0) -> int:
    """A new non-blocking stream on `device`; returns its handle."""

def _cuda_stream_destroy(stream: int) -> None:
    """Destroys a stream made by _cuda_stream_create."""

def _cuda_stream_synchronize(stream: int) -> None:
    """Waits on the host until `stream` is idle."""

def _cuda_stream_query(stream: int) -> bool:
    """Whether all work queued on `stream` has finished."""

def _cuda_stream_wait_event(stream: int, event: int) -> None:
    """Makes `stream` wait for `event` (no host wait)."""

def _cuda_event_create(device: int, timing: bool) -> int:
    """A new event on `device` (timing=True to measure elapsed time)."""

def _cuda_event_destroy(event: int) -> None:
    """Destroys an event."""

def _cuda_event_record(event: int, stream: int) -> None:
    """Records `event` on `stream`."""

def _cuda_event_synchronize(event: int) -> None:
    """Waits on the host until `event` has completed."""

def _cuda_event_query(event: int) -> bool:
    """Whether the work before `event` has finished."""

def _cuda_event_elapsed_ms(start: int, end: int) -> float:
    """Milliseconds between two recorded timing events."""

def _cuda_is_current_stream_capturing(device: int = -1) -> bool:
    """Whether the current stream of `device` is capturing a CUDA graph."""

class _CUDAGraph:
    """A captured CUDA graph (spiraltorch.cuda.CUDAGraph wraps it)."""

    def __init__(self) -> None:
        """An empty graph."""

    def capture_begin(self, device: int = -1) -> None:
        """
        Starts capturing the current stream's work; memory allocated during the capture comes from a pool private to the graph.
        """

    def capture_end(self) -> None:
        """
        Ends the capture and instantiates the graph; raises (and keeps nothing) when an operation was not capturable.
        """

    def replay(self) -> None:
        """
        Launches the captured work after what is already queued on the current stream.
        """

    def reset(self) -> None:
        """Drops the graph and gives its private memory back to the allocator."""

    def is_captured(self) -> bool:
        """Whether a graph has been captured and instantiated."""

    def is_capturing(self) -> bool:
        """Whether a capture is in progress."""

    def num_nodes(self) -> int:
        """Kernel, copy and memset nodes in the captured graph."""

def to_device(input: Tensor, device: str) -> Tensor:
    """
    input copied to `device` ('cpu', 'cuda:<i>', 'wgpu'), input itself when already there; autograd flows through. DeviceUnavailableError for a device this build or machine lacks, ValueError for a bad name.
    """

def _wgpu_is_built() -> bool:
    """Whether this build has the wgpu (WebGPU) backend."""

def _wgpu_is_available() -> bool:
    """
    Whether a WebGPU adapter and device can be created (the first call creates them).
    """

def _wgpu_unavailable_reason() -> str:
    """Why wgpu is unavailable ('' when it is available)."""

def _wgpu_adapter_info() -> dict:
    """
    The adapter's name, vendor, architecture, driver, backend, ids, limits and features.
    """

def _wgpu_synchronize() -> None:
    """Waits until the wgpu queue has finished all submitted work."""

def _wgpu_memory_allocated() -> int:
    """Bytes of device buffers handed out to tensors."""

def _wgpu_max_memory_allocated() -> int:
    """The peak of memory_allocated since start or the last reset."""

def _wgpu_memory_reserved() -> int:
    """Bytes held in device buffers (in use plus cached)."""

def _wgpu_reset_peak_memory_stats() -> None:
    """Restarts the peak of max_memory_allocated from the current value."""

def _wgpu_empty_cache() -> None:
    """Destroys cached, unused device buffers."""

def _wgpu_pipelines_compiled() -> int:
    """Compute pipelines created so far (the pipeline cache size)."""

def _wgpu_dispatches() -> int:
    """Kernels dispatched so far."""

def _wgpu_host_reads() -> int:
    """Device-to-host reads so far that waited for the queue to drain."""

def _cpu_memory_allocated() -> int:
    """
    Bytes held by live CPU storages (memory wrapped from NumPy/DLPack excluded).
    """

def _cpu_max_memory_allocated() -> int:
    """The peak of _cpu_memory_allocated since start or the last reset."""

def _cpu_reset_peak_memory_stats() -> None:
    """Restarts the peak from the current value."""

def _cpu_memory_cached() -> int:
    """Bytes of freed large blocks kept for reuse."""

def _cpu_empty_cache() -> int:
    """Releases the cached blocks; returns how many bytes were released."""

def _autocast_get_state() -> tuple:
    """
    This thread's autocast state: (cpu_enabled, cpu_dtype, cuda_enabled, cuda_dtype).
    """

def _autocast_set_state(cpu_enabled: bool, cpu_dtype: dtype, cuda_enabled: bool, cuda_dtype: dtype) -> None:
    """
    Sets this thread's autocast state; ValueError unless both dtypes are float16 or bfloat16.
    """

def is_autocast_enabled(device_type: str = 'cuda') -> bool:
    """Whether an autocast region is active for device_type on this thread."""

def get_autocast_dtype(device_type: str = 'cuda') -> dtype:
    """The dtype autocast lowers to on device_type (float16 or bfloat16)."""

class _GradScaler:
    """The loss scaler behind spiraltorch.amp.GradScaler."""

    def __init__(self, init_scale: float = 65536.0, growth_factor: float = 2.0, backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        """
        A scaler starting at init_scale that multiplies the scale by growth_factor after growth_interval finite steps and by backoff_factor after a non-finite one.
        """

    def scale(self, loss: Tensor) -> Tensor:
        """loss * scale (the loss itself when disabled)."""

    def unscale_(self, optimizer: optim.Optimizer) -> None:
        """
        Divides the optimizer's gradients by the scale (once per step) and records whether any is non-finite; SpiralError when called twice before update().
        """

    def step(self, optimizer: optim.Optimizer) -> bool:
        """
        Unscales if not yet done and runs optimizer.step() unless a gradient was non-finite; returns whether it stepped.
        """

    def update(self, new_scale: float | None = None) -> None:
        """
        Adjusts the scale from this step's outcome (or sets new_scale) and starts the next step.
        """

    def get_scale(self) -> float:
        """The current scale (1.0 when disabled)."""

    def is_enabled(self) -> bool:
        """Whether scaling is on."""

    @property
    def found_inf(self) -> bool:
        """Whether a non-finite gradient was seen in this step so far."""

    @property
    def skipped_steps(self) -> int:
        """Optimizer steps skipped for non-finite gradients."""

    @property
    def growth_factor(self) -> float:
        """The factor applied to the scale after growth_interval finite steps."""

    @property
    def backoff_factor(self) -> float:
        """The factor applied to the scale after a non-finite step."""

    @property
    def growth_interval(self) -> int:
        """Finite steps between two growths of the scale."""

    def _state(self) -> tuple: ...

    def _load_state(self, arg0: float, arg1: int, arg2: int, /) -> None: ...

def _checkpoint(fn: Callable[[Sequence[Tensor]], Sequence[Tensor]], inputs: Sequence[Tensor], preserve_rng_state: bool = True) -> list[Tensor]:
    """
    Activation checkpointing: runs fn(inputs) -> list of tensors without keeping its intermediates and records one node for all of them, whose backward re-runs fn once (with the same random numbers when preserve_rng_state) and back-propagates every output's gradient.
    """

class _FunctionCtx:
    """
    The native state of an autograd.Function's ctx (spiraltorch.autograd.FunctionCtx derives from it).
    """

    def __init__(self, name: str = 'CustomFunctionBackward') -> None: ...

    @property
    def _st_name(self) -> str: ...

    def _save(self, tensors: Sequence) -> None:
        """Saves tensors (None allowed) and remembers their versions."""

    def _check_saved(self) -> None:
        """
        Raises SpiralError if a saved tensor was modified in place since it was saved.
        """

    def _mark_non_differentiable(self, outputs: Sequence[Tensor]) -> None: ...

    def set_materialize_grads(self, value: bool) -> None:
        """
        Whether backward gets zeros (True, the default) or None for the gradient of an output that received none (unused, or non-differentiable).
        """

def _apply_function(ctx: _FunctionCtx, inputs: Sequence[Tensor | None], forward: Callable[[], Sequence[Tensor | None]], backward: Callable[[list[Tensor | None]], Sequence[Tensor | None]], once_differentiable: bool) -> list[Tensor | None]:
    """
    Runs forward() with recording off and records one node for its differentiable outputs whose backward calls backward(grad_outputs) -> one gradient (or None) per input (st::autograd::apply_function). Returns, per output, the recorded alias, or None where the output is forward's own.
    """

class BarycenterIntermediate:
    """
    A point of the segment from the weighted mean (0) to the barycenter (1).
    """

    @property
    def interpolation(self) -> float:
        """alpha: 0 at the weighted arithmetic mean, 1 at the barycenter."""

    @property
    def density(self) -> Tensor:
        """The density at alpha (shape of the inputs)."""

    @property
    def kl_energy(self) -> float:
        """sum_u W_u KL(rho || rho_u) at this point."""

    @property
    def entropy(self) -> float:
        """Shannon entropy S(rho) at this point."""

    @property
    def objective(self) -> float:
        """F(rho) at this point."""

class ZSpaceBarycenter:
    """The result of z_space_barycenter."""

    @property
    def density(self) -> Tensor:
        """The barycenter rho*, same shape and dtype as the inputs."""

    @property
    def kl_energy(self) -> float:
        """sum_u W_u KL(rho* || rho_u)."""

    @property
    def entropy(self) -> float:
        """Shannon entropy S(rho*)."""

    @property
    def coupling_energy(self) -> float:
        """
        The constant chart-coupling term (beta_j / 2) sum_uv J_uv (KL(rho_u||rho_v) + KL(rho_v||rho_u)).
        """

    @property
    def objective(self) -> float:
        """F(rho*) = kl_energy - entropy_weight * entropy + coupling_energy."""

    @property
    def effective_weight(self) -> float:
        """E = sum W + entropy_weight."""

    def intermediates(self) -> list[BarycenterIntermediate]:
        """
        Points of the segment from the arithmetic mean to rho* at alpha = 0, .25, .5, .75, 1 (the objective is non-increasing along them).
        """

def z_space_barycenter(weights: Sequence[float], densities: Sequence[Tensor], entropy_weight: float = 0.0, beta_j: float = 0.0, coupling: Tensor | None = None) -> ZSpaceBarycenter:
    """
    The density minimising sum_u W_u KL(rho || rho_u) - entropy_weight * S(rho) (+ a constant coupling energy): exactly rho* ~ exp(sum_u W_u log rho_u / E), E = sum W + entropy_weight > 0. Each input tensor is one whole distribution; float64 inside. ValueError/ShapeError (naming the value) for negative weights, non-finite values, unequal shapes, beta_j < 0, a coupling that is not n x n and >= 0, or E <= 0.
    """

class OpenCartesianTopos:
    """
    Guard for Z-space structures: volume and depth limits, finite values, monotone saturation L tanh(v / L) (+ a porosity leak).
    """

    def __init__(self, curvature: float, tolerance: float, saturation: float, max_depth: int, max_volume: int, porosity: float = 0.2) -> None: ...

    @property
    def curvature(self) -> float:
        """The curvature of the guarded ball (< 0)."""

    @property
    def tolerance(self) -> float:
        """The numerical tolerance (> 0)."""

    @property
    def saturation(self) -> float:
        """L, the saturation level of the soft clip."""

    @property
    def max_depth(self) -> int:
        """The depth ensure_loop_free() allows."""

    @property
    def max_volume(self) -> int:
        """The most values a guarded tensor may hold."""

    @property
    def porosity(self) -> float:
        """The leak through the saturation, in [0, 1]."""

    def with_porosity(self, porosity: float) -> OpenCartesianTopos:
        """
        The same guard with another porosity (clip = L tanh(v / L) + porosity * tolerance * v / (1 + |v|)).
        """

    def guard_tensor(self, tensor: Tensor) -> Tensor:
        """
        Returns the tensor unchanged if it fits: ShapeError when it holds more than max_volume values, ValueError when one is not finite.
        """

    def ensure_loop_free(self, depth: int) -> None:
        """Raises ValueError when depth >= max_depth."""

    def saturate(self, value: Tensor | float) -> Tensor | float:
        """
        The monotone soft clip L tanh(v / L) (+ the porosity leak) of a number (non-finite gives 0) or, after guard_tensor, element-wise of a tensor (a new tensor, same dtype).
        """

def hypergrad_topos(curvature: float = -1.0, tolerance: float = 0.001, saturation: float = 1.0, max_depth: int = 64, max_volume: int = 512) -> OpenCartesianTopos:
    """The original's default topos for tapes and biomes."""

class TensorBiome:
    """Weighted shoots under a topos; canopy = saturated weighted mean."""

    def __init__(self, topos: OpenCartesianTopos) -> None: ...

    def absorb(self, shoot: Tensor, label: str = '') -> None:
        """
        Adds a shoot with weight 1, saturated by the topos. It must match the first shoot's shape, be finite and keep the stored volume within max_volume (ShapeError/ValueError otherwise; nothing changes).
        """

    def absorb_weighted(self, shoot: Tensor, weight: float, label: str = '') -> None:
        """absorb() with a weight > 0."""

    def canopy(self) -> Tensor:
        """
        sum_i w_i T_i / sum_i w_i, saturated by the topos (float64). ValueError when empty.
        """

    def harvest(self) -> Tensor:
        """The shoots stacked along a new first dimension."""

    def stack(self) -> Tensor:
        """The shoots stacked along a new first dimension (= harvest)."""

    def shoots(self) -> list[Tensor]:
        """The stored (saturated) shoots as a list of tensors."""

    def stored_volume(self) -> int:
        """The number of values stored over all shoots."""

    def remaining_volume(self) -> int:
        """max_volume - stored_volume()."""

    def to_ball(self) -> Tensor:
        """
        exp_0 of the canopy's rows into the Poincare ball of the topos' curvature.
        """

    def weights(self) -> list[float]:
        """The shoots' weights, in order."""

    def labels(self) -> list[str]:
        """The shoots' labels, in order."""

    def total_weight(self) -> float:
        """The sum of the weights."""

    def __len__(self) -> int: ...

    def is_empty(self) -> bool:
        """True when no shoot is stored."""

    def clear(self) -> None:
        """Drops every shoot."""

    def topos(self) -> OpenCartesianTopos:
        """The guarding OpenCartesianTopos."""

def _events_subscribe(event_type: str, callback: Callable) -> int:
    """
    Subscribes `callback(event_dict)` on the C++ event bus; returns the subscription id.
    """

def _events_unsubscribe(event_type: str, subscription_id: int) -> bool:
    """Removes a subscription; returns whether it existed."""

def _events_clear(event_type: str | None = None) -> int:
    """
    Removes every subscription of `event_type` (all types when None); returns how many went.
    """

def _events_has_listeners(event_type: str) -> bool:
    """
    Whether an event of `event_type` would reach a listener (specific or wildcard).
    """

def _events_listener_count() -> int:
    """The number of subscriptions over all event types."""

def _events_tensor_op_listened() -> bool:
    """
    Whether TensorOp events are listened to (the one atomic load ops pay when nobody listens).
    """

class _SilentOps:
    """
    Inside the with-block, built-in ops on this thread publish no TensorOp events.
    """

    def __init__(self) -> None: ...

    def __enter__(self) -> None: ...

    def __exit__(self, *args) -> bool: ...

def _events_publish(event_type: str, fields: dict) -> dict:
    """
    Publishes an event with `fields` (None, bool, int, float, str or int lists) and returns the report.
    """

class _RankPlan:
    """A rank-k launch plan (spiraltorch.plan wraps it)."""

    @property
    def kind(self) -> str:
        """'topk', 'midk', 'bottomk' or 'fft'."""

    @property
    def rows(self) -> int:
        """Rows of the planned problem."""

    @property
    def cols(self) -> int:
        """Columns of the planned problem."""

    @property
    def k(self) -> int:
        """Values kept per row."""

    @property
    def requested_backend(self) -> str:
        """The backend asked for ('auto' included)."""

    @property
    def effective_backend(self) -> str:
        """The backend planned for."""

    @property
    def caps(self) -> dict:
        """The device capabilities used."""

    @property
    def choice(self) -> dict:
        """The launch choice, keyed by the SpiralK hard fields."""

    @property
    def merge_strategy(self) -> str:
        """'bitonic', 'shared' or 'warp'."""

    @property
    def merge_detail(self) -> str:
        """'auto', 'heap', 'kway', 'bitonic', 'warp_heap' or 'warp_bitonic'."""

    @property
    def runtime_ready(self) -> bool:
        """Whether this process can execute on the effective backend."""

    def to_unison_script(self) -> str:
        """
        The plan as a SpiralK `unison <kind> { ... }` block (it parses back to the same choice).
        """

    def fft_spiralk_hint(self) -> str:
        """
        Three soft SpiralK rules steering a tuner towards this plan's FFT tiling.
        """

    def spiralk_variables(self) -> dict:
        """
        The variables a SpiralK program sees for this plan (r, c, k, sg, ..., and the current choice).
        """

    def rewrite_with_spiralk(self, script: str, variables: dict) -> tuple[_RankPlan, dict]:
        """
        (new plan, SpiralK result): the choice overridden by the program's hard assignments, then validated (ValueError naming the field); `variables` adds names the program may read.
        """

    def execute(self, x: Tensor) -> tuple:
        """
        Runs the planned rank-k on the CPU (rows, cols) tensor x: (values, indices, stats).
        """

def _rank_plan(kind: str, rows: int, cols: int, k: int, backend: str, lane_width: int | None, subgroup: bool | None, max_workgroup: int | None, shared_mem_per_workgroup: int | None) -> _RankPlan:
    """
    Plans `kind` over rows x cols keeping k per row for `backend` ('auto': CUDA when usable, else the CPU); ValueError on non-positive sizes or k > cols.
    """

def _rank_device_caps(backend: str, lane_width: int | None, subgroup: bool | None, max_workgroup: int | None, shared_mem_per_workgroup: int | None) -> dict:
    """
    The planner's device table entry for `backend` with the given overrides (validated).
    """

def _rank_align_workgroup(lane_width: int, max_workgroup: int, w: int) -> int:
    """
    w clamped to [lane_width, max_workgroup] and rounded to a multiple of the lane width.
    """

def _rank_resolve_backend(backend: str) -> str:
    """
    'auto' -> 'cuda' when usable else 'cpu'; aliases (webgpu, rocm) resolved; ValueError when unknown.
    """

def _rank_runtime_ready(backend: str) -> bool:
    """
    Whether this process can execute on `backend` (the CPU always; CUDA when built and present).
    """

def _spiralk_eval(source: str, variables: dict) -> dict:
    """
    Parses and runs a SpiralK program: {'hard': {field: value}, 'soft': [{field, value, weight}], 'unison_kind'}.
    """

def _spiralk_check(source: str) -> None:
    """
    Parses a SpiralK program; raises SpiralKError at the first syntax error.
    """

def _spiralk_hard_fields() -> list[str]:
    """
    The hard fields a SpiralK program may assign (canonical names, in documentation order).
    """

class Generator:
    """
    A counter-based Philox generator; pass it as generator= to the random factories.
    """

    def __init__(self, device: str | None = 'cpu') -> None:
        """
        A Philox generator with the default seed. The numbers are drawn on the host whatever the device, so `device` is only validated (ValueError for an unknown name), as PyTorch's constructor takes one.
        """

    def manual_seed(self, seed: int) -> Generator:
        """Restarts the stream at `seed`; returns the generator."""

    def initial_seed(self) -> int:
        """The seed the stream was last started at."""

    def get_state(self) -> tuple[int, int]:
        """(seed, offset): restoring it with set_state replays the same numbers."""

    def set_state(self, state: tuple[int, int]) -> None:
        """
        Restores a (seed, offset) pair from get_state: the stream continues from there.
        """

default_generator: Generator = ...

def zeros(*size: int | Sequence[int], dtype: dtype | str | None = None, device: str | None = None, requires_grad: bool = False) -> Tensor:
    """
    A tensor of zeros of shape `size` (zeros(2, 3), zeros((2, 3)) or zeros(size=(2, 3))); dtype defaults to float32. TypeError on an unknown keyword, ShapeError on a negative size.
    """

def ones(*size: int | Sequence[int], dtype: dtype | str | None = None, device: str | None = None, requires_grad: bool = False) -> Tensor:
    """
    A tensor of ones of shape `size` (ones(2, 3), ones((2, 3)) or ones(size=(2, 3))); dtype defaults to float32.
    """

def empty(*size: int | Sequence[int], dtype: dtype | str | None = None, device: str | None = None, requires_grad: bool = False) -> Tensor:
    """
    An uninitialised tensor of shape `size` (its values are whatever the memory held); dtype defaults to float32.
    """

def rand(*size: int | Sequence[int], dtype: dtype | str | None = None, device: str | None = None, requires_grad: bool = False, generator: Generator | None = None) -> Tensor:
    """
    Uniform samples in [0, 1) of shape `size`, drawn from `generator` (default: the global one, see manual_seed); float32 by default.
    """

def randn(*size: int | Sequence[int], dtype: dtype | str | None = None, device: str | None = None, requires_grad: bool = False, generator: Generator | None = None) -> Tensor:
    """
    Standard normal samples of shape `size`, drawn from `generator` (default: the global one); float32 by default.
    """

def full(size: Sequence[int], fill_value: float, *, dtype: dtype | str | None = None, device: str | None = None, requires_grad: bool = False) -> Tensor:
    """
    A tensor of shape `size` filled with `fill_value`; the dtype follows the value (bool, int64 or float32) unless given. DtypeError when fill_value is not a number.
    """

def randint(*args: int | Sequence[int], size: Sequence[int] | None = None, dtype: dtype | str | None = None, device: str | None = None, requires_grad: bool = False, generator: Generator | None = None) -> Tensor:
    """
    randint(high, size) or randint(low, high, size): integers uniform in [low, high) (low defaults to 0), int64 unless dtype is given. TypeError for another argument count or low=/high= keywords.
    """

def normal(mean: float, std: float, size: Sequence[int], *, dtype: dtype | str | None = None, device: str | None = None, requires_grad: bool = False, generator: Generator | None = None) -> Tensor:
    """
    Normal samples N(mean, std^2) of shape `size` from `generator` (default: the global one); float32 by default.
    """

def arange(start: float, end: float | None = None, step: float | None = None, *, dtype: dtype | str | None = None, device: str | None = None, requires_grad: bool = False) -> Tensor:
    """
    Values start, start+step, ... below end (arange(n) counts 0..n-1). int64 for integer bounds, float32 when any bound or the step is a Python float, unless dtype is given. Example: arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    """

def linspace(start: float, end: float, steps: int, *, dtype: dtype | str | None = None, device: str | None = None, requires_grad: bool = False) -> Tensor:
    """
    `steps` evenly spaced values from start to end inclusive; float32 by default.
    """

def eye(n: int, m: int | None = None, *, dtype: dtype | str | None = None, device: str | None = None, requires_grad: bool = False) -> Tensor:
    """The n x m identity matrix (m defaults to n); float32 by default."""

def logspace(start: float, end: float, steps: int, base: float = 10.0, *, dtype: dtype | str | None = None, device: str | None = None, requires_grad: bool = False) -> Tensor:
    """
    ``steps`` values ``base ** e`` for exponents evenly spaced from ``start`` to ``end`` (computed in float64), float32 by default, as torch.logspace.
    """

def tril_indices(row: int, col: int, offset: int = 0, *, dtype: dtype | str | None = None, device: str | None = None) -> Tensor:
    """
    The (2, N) row-major coordinates of the lower triangle (on and below diagonal ``offset``) of a row x col matrix, int64 unless dtype is given, as torch.tril_indices.
    """

def triu_indices(row: int, col: int, offset: int = 0, *, dtype: dtype | str | None = None, device: str | None = None) -> Tensor:
    """
    The (2, N) row-major coordinates of the upper triangle (on and above diagonal ``offset``) of a row x col matrix, int64 unless dtype is given, as torch.triu_indices.
    """

def zeros_like(input: Tensor, *, dtype: dtype | str | None = None, device: str | None = None, requires_grad: bool = False) -> Tensor:
    """Zeros with the shape of `input`; dtype and device default to its."""

def ones_like(input: Tensor, *, dtype: dtype | str | None = None, device: str | None = None, requires_grad: bool = False) -> Tensor:
    """Ones with the shape of `input`; dtype and device default to its."""

def empty_like(input: Tensor, *, dtype: dtype | str | None = None, device: str | None = None, requires_grad: bool = False) -> Tensor:
    """
    An uninitialised tensor with the shape of `input`; dtype and device default to its.
    """

def full_like(input: Tensor, fill_value: float, *, dtype: dtype | str | None = None, device: str | None = None, requires_grad: bool = False) -> Tensor:
    """
    A tensor with the shape of `input` filled with `fill_value`; dtype and device default to its.
    """

def rand_like(input: Tensor, *, dtype: dtype | str | None = None, device: str | None = None, requires_grad: bool = False, generator: Generator | None = None) -> Tensor:
    """Uniform samples in [0, 1) with the shape and dtype of `input`."""

def randn_like(input: Tensor, *, dtype: dtype | str | None = None, device: str | None = None, requires_grad: bool = False, generator: Generator | None = None) -> Tensor:
    """Standard normal samples with the shape and dtype of `input`."""

def tensor(data: Any, dtype: dtype | str | None = None, device: str | None = None, requires_grad: bool = False) -> Tensor:
    """
    A new tensor holding a copy of `data` (nested lists, numbers, NumPy arrays, tensors). The dtype is inferred (bool, int64, float32) unless given; a list is always data, never a shape. ShapeError on ragged lists. Example: tensor([[1, 2], [3, 4]], dtype='float64')
    """

def _rand_seeded(rows: int, cols: int, seed: int) -> Tensor:
    """
    Tensor.rand(rows, cols, seed=): uniform [0, 1) float32 samples from a fresh stream at `seed`.
    """

def manual_seed(seed: int) -> None:
    """
    Seeds the global Philox generator; same seed, same numbers, whatever the thread count.
    """

def initial_seed() -> int:
    """The seed the global generator was last seeded with."""

def _get_rng_state() -> tuple:
    """The global generator's (seed, offset)."""

def _set_rng_state(seed: int, offset: int) -> None:
    """Restores the global generator's (seed, offset)."""

def is_grad_enabled() -> bool:
    """True unless gradient recording is off on this thread (no_grad)."""

def set_grad_enabled(mode: bool) -> None:
    """
    Turns gradient recording on or off for this thread (what no_grad / enable_grad switch).
    """

def _autograd_grad(outputs: Sequence[Tensor], inputs: Sequence[Tensor], grad_outputs: Sequence[Tensor | None], retain_graph: bool, create_graph: bool, allow_unused: bool) -> list[Tensor | None]:
    """
    autograd.grad: the gradients of outputs with respect to inputs (None for an unused input when allow_unused).
    """

def _backward_many(outputs: Sequence[Tensor], grads: Sequence[Tensor | None], retain_graph: bool) -> None:
    """
    autograd.backward over several outputs in one pass (None: the output has one element, gradient 1).
    """

def get_num_threads() -> int:
    """The number of threads CPU kernels use."""

def set_num_threads(n: int) -> None:
    """
    Sets the number of threads CPU kernels use; ValueError (the setting unchanged) outside [1, 4 per processor].
    """

def _describe_cpu() -> dict:
    """
    describe_device('cpu'): model, cores, threads, SIMD, CPU capability, BLAS/oneDNN/MKL and GEMM dispatch.
    """

def _onednn_header_version() -> str | None:
    """The oneDNN headers' version (None without oneDNN)."""

def _conv_backend() -> str:
    """The conv2d path: 'auto', 'im2col' or 'onednn'."""

def _set_conv_backend(name: str) -> None:
    """Sets the conv2d path."""

def _rnn_backend() -> str:
    """The LSTM path: 'auto', 'loop' or 'onednn'."""

def _set_rnn_backend(name: str) -> None:
    """Sets the LSTM path."""
