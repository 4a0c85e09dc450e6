"""
Dense linear algebra like torch.linalg: LAPACK (OpenBLAS) on the CPU, float32/float64, batched over
leading dims, differentiable. Tensors on other devices raise DeviceUnavailableError.
"""

import spiraltorch._core


def inv(A: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor:
    """
    inv(A) -> Tensor

    The inverse of each square matrix of A (..., n, n). Raises SpiralValueError (a ValueError)
    naming the batch element and the zero pivot when a matrix is singular.
    """

def solve(A: spiraltorch._core.Tensor, B: spiraltorch._core.Tensor, *, left: bool = True) -> spiraltorch._core.Tensor:
    """
    solve(A, B, *, left=True) -> Tensor

    X with A X = B (or X A = B when not left) for A (..., n, n). B is (..., n, k) ((..., k, n) when not left),
    or a batch of vectors (..., n) when it is 1-d or has A's shape without the last dim (PyTorch's rule);
    batch dims broadcast. Raises SpiralValueError for a singular A.
    """

def solve_triangular(A: spiraltorch._core.Tensor, B: spiraltorch._core.Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False) -> spiraltorch._core.Tensor:
    """
    solve_triangular(A, B, *, upper, left=True, unitriangular=False) -> Tensor

    X with A X = B (left) or X A = B for triangular A (..., n, n): only its upper (or lower)
    triangle is read, its diagonal taken as ones with unitriangular. No singularity check (inf/NaN), like PyTorch.
    """

def det(A: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor:
    """
    det(A) -> Tensor

    The determinant of each square matrix of A (..., n, n), shape (...); 0 for a singular matrix.
    """

def slogdet(A: spiraltorch._core.Tensor) -> tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor]:
    """
    slogdet(A) -> (sign, logabsdet)

    The sign (-1, 0 or 1) and log|det| of each square matrix; a singular matrix gives (0, -inf).
    Only logabsdet is differentiable.
    """

def cholesky(A: spiraltorch._core.Tensor, *, upper: bool = False) -> spiraltorch._core.Tensor:
    """
    cholesky(A, *, upper=False) -> Tensor

    L (lower) with A = L L^T, or U with A = U^T U when upper, for symmetric positive-definite A;
    only that triangle of A is read. Raises SpiralValueError naming the leading minor that is not
    positive-definite.
    """

def eigh(A: spiraltorch._core.Tensor, UPLO: str = 'L') -> tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor]:
    """
    eigh(A, UPLO='L') -> (eigenvalues, eigenvectors)

    Eigenvalues in ascending order (..., n) and orthonormal eigenvectors as the columns of (..., n, n)
    of symmetric A, reading only the UPLO triangle.
    """

def eigvalsh(A: spiraltorch._core.Tensor, UPLO: str = 'L') -> spiraltorch._core.Tensor:
    """
    eigvalsh(A, UPLO='L') -> Tensor

    The eigenvalues of symmetric A in ascending order (..., n).
    """

def qr(A: spiraltorch._core.Tensor, mode: str = 'reduced') -> tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor]:
    """
    qr(A, mode='reduced') -> (Q, R)

    A = Q R for A (..., m, n), k = min(m, n): 'reduced' gives Q (..., m, k) and R (..., k, n),
    'complete' Q (..., m, m) and R (..., m, n), 'r' an empty Q and the reduced R.
    """

def svd(A: spiraltorch._core.Tensor, full_matrices: bool = True) -> tuple[spiraltorch._core.Tensor, spiraltorch._core.Tensor, spiraltorch._core.Tensor]:
    """
    svd(A, full_matrices=True) -> (U, S, Vh)

    A = U diag(S) Vh for A (..., m, n), k = min(m, n), S descending (..., k). full_matrices: U (..., m, m)
    and Vh (..., n, n), else U (..., m, k) and Vh (..., k, n). Singular vectors are defined up to a sign per pair.
    """

def svdvals(A: spiraltorch._core.Tensor) -> spiraltorch._core.Tensor:
    """
    svdvals(A) -> Tensor

    The singular values of A (..., m, n) in descending order (..., min(m, n)).
    """
