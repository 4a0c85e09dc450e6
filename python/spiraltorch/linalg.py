"""``spiraltorch.linalg``: dense linear algebra with ``torch.linalg``'s names and semantics.

The decompositions and solvers (``inv``, ``solve``, ``solve_triangular``, ``det``, ``slogdet``,
``cholesky``, ``eigh``, ``eigvalsh``, ``qr``, ``svd``, ``svdvals``) are C++ (``include/spiraltorch/linalg.h``,
bound as ``spiraltorch._core.linalg``): LAPACK through OpenBLAS on the CPU, float32 and float64,
batched over any leading dims, differentiable (first and higher order). Tensors on another device
raise ``DeviceUnavailableError``: move them to the CPU first, nothing is copied behind your back.
Integer, bool and half tensors raise ``DtypeError``; shapes that are not (batches of) square
matrices ``ShapeError``; a singular matrix in ``inv``/``solve`` or a matrix that is not
positive-definite in ``cholesky`` raises ``SpiralValueError`` (a ``ValueError``) naming the batch element.

The factorisations return named tuples like PyTorch's (``slogdet(A).logabsdet``, ``eigh(A).eigenvectors``,
``qr(A).R``, ``svd(A).Vh``). ``norm``, ``vector_norm``, ``matrix_norm``, ``matmul`` and ``matrix_power``
are composed here from native ops, so they are differentiable and, except where a norm needs
singular values or a negative power needs ``inv``, run on every device.
"""

from __future__ import annotations

import collections
import math
import operator
from typing import Any, Optional, Sequence, Tuple, Union

from . import _core

__all__ = [
    "cholesky",
    "det",
    "eigh",
    "eigvalsh",
    "inv",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "norm",
    "qr",
    "slogdet",
    "solve",
    "solve_triangular",
    "svd",
    "svdvals",
    "vector_norm",
]

_native = _core.linalg
Tensor = _core.Tensor
_Dim = Union[int, Sequence[int], None]

# Named results, like torch.return_types.linalg_*.
_SlogdetResult = collections.namedtuple("linalg_slogdet", ["sign", "logabsdet"])
_EighResult = collections.namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
_QrResult = collections.namedtuple("linalg_qr", ["Q", "R"])
_SvdResult = collections.namedtuple("linalg_svd", ["U", "S", "Vh"])

inv = _native.inv
solve = _native.solve
solve_triangular = _native.solve_triangular
det = _native.det
cholesky = _native.cholesky
eigvalsh = _native.eigvalsh
svdvals = _native.svdvals


def slogdet(A: Tensor) -> _SlogdetResult:
    """(sign, logabsdet) of each square matrix of A (..., n, n): sign is -1, 0 or 1 and
    logabsdet = log|det A|; a singular matrix gives (0, -inf). Only logabsdet is differentiable
    (its gradient is g A^-T)."""
    return _SlogdetResult(*_native.slogdet(A))


def eigh(A: Tensor, UPLO: str = "L") -> _EighResult:
    """(eigenvalues, eigenvectors) of symmetric A (..., n, n), reading only the UPLO ('L' or 'U')
    triangle: eigenvalues in ascending order (..., n), orthonormal eigenvectors as the columns of
    (..., n, n). Eigenvectors are defined up to sign; gradients through them are infinite at
    repeated eigenvalues, as in PyTorch."""
    return _EighResult(*_native.eigh(A, UPLO))


def qr(A: Tensor, mode: str = "reduced") -> _QrResult:
    """(Q, R) with A = Q R for A (..., m, n), k = min(m, n). mode='reduced': Q (..., m, k) with
    orthonormal columns and upper-triangular R (..., k, n); 'complete': Q (..., m, m) and
    R (..., m, n); 'r': an empty Q and the reduced R. Differentiable, except through the Q of
    'complete' when m > n (its extra columns are not unique): that backward raises."""
    return _QrResult(*_native.qr(A, mode))


def svd(A: Tensor, full_matrices: bool = True) -> _SvdResult:
    """(U, S, Vh) with A = U diag(S) Vh for A (..., m, n), k = min(m, n), S descending (..., k).
    full_matrices=True: U (..., m, m) and Vh (..., n, n); False: U (..., m, k) and Vh (..., k, n).
    Singular vectors are defined up to a sign per pair; gradients through U or Vh are infinite
    at repeated singular values, as in PyTorch."""
    return _SvdResult(*_native.svd(A, full_matrices))


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """The matrix product with NumPy/PyTorch broadcasting (``st.matmul``): 1-d operands are
    vectors, leading dims are batches."""
    return _core.matmul(input, other)


def _check_tensor(x: Any, op: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    return x


def _is_float(t: Tensor) -> bool:
    return t.dtype in (_core.dtype.float32, _core.dtype.float64, _core.dtype.float16, _core.dtype.bfloat16)


def _dims(dim: _Dim) -> Optional[Tuple[int, ...]]:
    if dim is None:
        return None
    if isinstance(dim, int):
        return (dim,)
    return tuple(operator.index(d) for d in dim)


def _wrap(d: int, ndim: int, op: str) -> int:
    if not -ndim <= d < ndim:
        raise _core.SpiralIndexError(f"{op}: dim {d} is out of range for a tensor of {ndim} dims")
    return d % ndim


def _order(ord: Any, op: str) -> float:
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise _core.SpiralValueError(f"{op}: ord must be a number, got {ord!r}")
    return float(ord)


def vector_norm(x: Tensor, ord: Union[int, float] = 2, dim: _Dim = None, keepdim: bool = False, *,
                dtype: Any = None) -> Tensor:
    """The vector ord-norm of x over ``dim`` (all elements when None): (sum |x|^ord)^(1/ord); ord=inf
    is max |x|, -inf min |x|, 0 the count of nonzeros. ``dtype`` casts x first. Floating inputs only."""
    x = _check_tensor(x, "linalg.vector_norm")
    if dtype is not None:
        x = x.to(dtype)
    if not _is_float(x):
        raise _core.DtypeError(f"linalg.vector_norm: expected a floating point tensor, got {x.dtype}")
    p = _order(ord, "linalg.vector_norm")
    dims = _dims(dim)
    if dims is not None:
        dims = tuple(_wrap(d, max(x.dim(), 1), "linalg.vector_norm") for d in dims)
    return _core.norm(x, p, dims, keepdim)


def _squeeze_dims(t: Tensor, dims: Sequence[int]) -> Tensor:
    for d in sorted(dims, reverse=True):
        t = _core.squeeze(t, d)
    return t


def matrix_norm(A: Tensor, ord: Union[str, int, float] = "fro", dim: Tuple[int, int] = (-2, -1),
                keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """The matrix norm of A over the two dims ``dim``: 'fro' (Frobenius), 'nuc' (sum of singular
    values), 2 / -2 (largest / smallest singular value), 1 / -1 (max / min column sum of |A|),
    inf / -inf (max / min row sum of |A|). The singular-value orders run on the CPU."""
    A = _check_tensor(A, "linalg.matrix_norm")
    if dtype is not None:
        A = A.to(dtype)
    if not _is_float(A):
        raise _core.DtypeError(f"linalg.matrix_norm: expected a floating point tensor, got {A.dtype}")
    if A.dim() < 2:
        raise _core.ShapeError(
            f"linalg.matrix_norm: expected A to have at least 2 dimensions, got shape {tuple(A.shape)}")
    dims = _dims(dim)
    if dims is None or len(dims) != 2:
        raise _core.SpiralValueError(f"linalg.matrix_norm: dim must be a 2-tuple of ints, got {dim!r}")
    d0, d1 = (_wrap(d, A.dim(), "linalg.matrix_norm") for d in dims)
    if d0 == d1:
        raise _core.SpiralValueError(f"linalg.matrix_norm: dims must be different, got {dim!r}")
    if isinstance(ord, str):
        if ord == "fro":
            return _core.norm(A, 2.0, (d0, d1), keepdim)
        if ord != "nuc":
            raise _core.SpiralValueError(f"linalg.matrix_norm: order {ord!r} is not supported "
                                         "(expected 'fro', 'nuc', 2, -2, 1, -1, inf or -inf)")
    else:
        ord = _order(ord, "linalg.matrix_norm")
    if ord in ("nuc", 2.0, -2.0):
        # Singular values of the matrices laid out last.
        rest = [d for d in range(A.dim()) if d not in (d0, d1)]
        s = svdvals(_core.permute(A, rest + [d0, d1]))
        r = _core.sum(s, -1) if ord == "nuc" else (_core.amax(s, -1) if ord == 2.0 else _core.amin(s, -1))
        if keepdim:
            for d in sorted((d0, d1)):
                r = _core.unsqueeze(r, d)
        return r
    if ord in (1.0, -1.0):
        sums, over = _core.sum(_core.abs(A), d0, True), d1  # column sums, then over the columns
    elif ord in (math.inf, -math.inf):
        sums, over = _core.sum(_core.abs(A), d1, True), d0  # row sums, then over the rows
    else:
        raise _core.SpiralValueError(f"linalg.matrix_norm: order {ord} is not supported "
                                     "(expected 'fro', 'nuc', 2, -2, 1, -1, inf or -inf)")
    r = _core.amax(sums, over, True) if ord > 0 else _core.amin(sums, over, True)
    return r if keepdim else _squeeze_dims(r, (d0, d1))


def norm(A: Tensor, ord: Union[str, int, float, None] = None, dim: _Dim = None, keepdim: bool = False, *,
         dtype: Any = None) -> Tensor:
    """torch.linalg.norm: a vector norm over one dim (or all of them), or a matrix norm over two.
    With ord=None: the 2-norm of the flattened input when dim is None, else the vector 2-norm
    (one dim) or the Frobenius norm (two dims). With ord given and dim None, A must be 1-d
    (vector norm) or 2-d (matrix norm); a string ord ('fro', 'nuc') is always a matrix norm."""
    A = _check_tensor(A, "linalg.norm")
    dims = _dims(dim)
    if dims is not None and len(dims) not in (1, 2):
        raise _core.SpiralValueError(f"linalg.norm: dim must be an int or a tuple of 1 or 2 ints, got {dim!r}")
    if ord is None:
        if dims is not None and len(dims) == 2:
            return matrix_norm(A, "fro", dims, keepdim, dtype=dtype)
        return vector_norm(A, 2, dims, keepdim, dtype=dtype)
    if isinstance(ord, str) or (dims is not None and len(dims) == 2) or (dims is None and A.dim() == 2):
        if dims is None and A.dim() != 2:
            raise _core.ShapeError(f"linalg.norm: ord={ord!r} is a matrix norm and needs a 2-d input or a dim "
                                   f"of two ints, got shape {tuple(A.shape)}")
        return matrix_norm(A, ord, dims if dims is not None else (-2, -1), keepdim, dtype=dtype)
    if dims is None and A.dim() != 1:
        raise _core.ShapeError(f"linalg.norm: with ord given and dim=None the input must be 1-d or 2-d, got "
                               f"shape {tuple(A.shape)}")
    return vector_norm(A, ord, dims, keepdim, dtype=dtype)


def matrix_power(A: Tensor, n: int) -> Tensor:
    """A multiplied by itself n times for square A (..., m, m) by repeated squaring: n = 0 gives the
    identity (batched like A), n < 0 powers of inv(A) (CPU, float dtypes)."""
    A = _check_tensor(A, "linalg.matrix_power")
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"linalg.matrix_power: n must be an int, got {type(n).__name__}")
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise _core.ShapeError("linalg.matrix_power: expected a square matrix or a batch of square matrices "
                               f"(..., m, m), got shape {tuple(A.shape)}")
    if n == 0:
        m = A.shape[-1]
        return _core.eye(m, dtype=A.dtype, device=A.device).expand(*A.shape).clone()
    if n < 0:
        A, n = inv(A), -n
    elif n == 1:
        return A.clone()
    result, base = None, A
    while True:
        if n & 1:
            result = base if result is None else _core.matmul(result, base)
        n >>= 1
        if not n:
            return result
        base = _core.matmul(base, base)
