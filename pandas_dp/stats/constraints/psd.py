"""Positive semi-definite repair of a noisy covariance matrix (REFERENCE.md §6)."""

from __future__ import annotations

import math
import warnings

import numpy as np
from numpy.typing import ArrayLike

from pandas_dp.stats.constraints._checks import (
    FloatArray,
    _count,
    _power_of_two_below,
    _square,
)

#: The ``method=`` values of :func:`nearest_psd_covariance`.
COVARIANCE_METHODS: tuple[str, ...] = ("clip", "higham")


# --------------------------------------------------------------------------- PSD repair


def _symmetric(arr: FloatArray) -> FloatArray:
    """The symmetric part ``(A + A^T) / 2``, without overflow."""
    return np.asarray(arr / 2.0 + arr.T / 2.0)


def _psd_part(sym: FloatArray) -> FloatArray:
    """Clip the eigenvalues of a symmetric matrix at 0 and reassemble it."""
    eigenvalues, vectors = np.linalg.eigh(sym)
    out = (vectors * np.maximum(eigenvalues, 0.0)) @ vectors.T
    return _symmetric(out)


def nearest_psd(a: ArrayLike) -> FloatArray:
    """The nearest positive semi-definite matrix in Frobenius norm (eigenvalue clipping).

    Symmetrise (``(A + A^T) / 2``), decompose with :func:`numpy.linalg.eigh`,
    set the negative eigenvalues to 0, reassemble and symmetrise again (Higham
    1988). The result's eigenvalues are ``>= 0`` up to rounding (about
    ``-1e-15 x`` the largest absolute entry). A PSD input comes back unchanged
    up to rounding. The diagonal can only grow: variances may rise slightly
    above their released values.

    Parameters
    ----------
    a : array_like of float, shape (m, m)
        A symmetric matrix (a noisy covariance, say); any other square matrix is
        symmetrised first.

    Returns
    -------
    numpy.ndarray of float64, shape (m, m)
        Symmetric, positive semi-definite up to rounding.

    Raises
    ------
    ValueError
        If ``a`` is not square or holds NaN or infinity.

    Examples
    --------
    >>> nearest_psd([[2.0, 0.0], [0.0, -1.0]])
    array([[2., 0.],
           [0., 0.]])
    """
    arr = _square(a, "a")
    unit = _power_of_two_below(float(np.abs(arr).max(initial=0.0)))
    return np.asarray(_psd_part(_symmetric(arr / unit)) * unit)


def nearest_correlation(
    a: ArrayLike,
    *,
    tol: float = 1e-10,
    max_iter: int = 1000,
    weights: ArrayLike | None = None,
) -> FloatArray:
    """The nearest correlation matrix (PSD, unit diagonal): Higham (2002).

    Alternating projections with Dykstra's correction (Higham 2002, Algorithm
    3.3) between the PSD cone and the matrices with unit diagonal, both in the
    weighted Frobenius norm ``||W^{1/2} (A - X) W^{1/2}||_F`` with
    ``W = diag(weights)``. Starting from ``Y = A`` and ``dS = 0``, repeat
    ``R = Y - dS``, ``X = P_psd(R)``, ``dS = X - R``, ``Y = X`` with unit
    diagonal, until the relative changes of ``X`` and ``Y`` and the relative
    gap between them are at most ``tol``. The last PSD iterate ``X`` is then
    scaled to an exact unit diagonal (``D^{-1/2} X D^{-1/2}``, which keeps it
    PSD), so the result is a valid correlation matrix even if the iteration
    stops early.

    The convergence is linear. With off-diagonal entries inside ``[-1, 1]`` it
    takes some 20 to 200 iterations (``m`` up to 60); the count grows roughly in
    proportion to how far entries lie outside ``[-1, 1]`` (thousands for
    entries around 30), so bound each noisy covariance to ``+-sqrt(v_i v_j)``
    before converting it, as the covariance release does.

    Parameters
    ----------
    a : array_like of float, shape (m, m)
        A noisy correlation matrix; it is symmetrised first, its diagonal is
        ignored.
    tol : float, default 1e-10
        Relative convergence tolerance.
    max_iter : int, default 1000
        On reaching it a :class:`RuntimeWarning` is issued and the current
        iterate (a valid correlation matrix, not quite the nearest) returned.
    weights : array_like of float, shape (m,), optional
        Positive weights: the error in entry ``(i, j)`` counts
        ``weights[i] * weights[j]`` times, so a variable with a larger weight
        keeps its correlations closer to ``a``. Default: all equal.

    Returns
    -------
    numpy.ndarray of float64, shape (m, m)
        Symmetric, PSD up to rounding, with diagonal exactly 1 and entries in
        ``[-1, 1]``.

    Raises
    ------
    ValueError
        If ``a`` is not square or not finite, or on invalid ``tol``,
        ``max_iter`` or ``weights``.

    Examples
    --------
    Higham (2002)'s example, section 4:

    >>> a = [[2, -1, 0, 0], [-1, 2, -1, 0], [0, -1, 2, -1], [0, 0, -1, 2]]
    >>> nearest_correlation(a).round(4)
    array([[ 1.    , -0.8084,  0.1916,  0.1068],
           [-0.8084,  1.    , -0.6562,  0.1916],
           [ 0.1916, -0.6562,  1.    , -0.8084],
           [ 0.1068,  0.1916, -0.8084,  1.    ]])
    """
    arr = _square(a, "a")
    if not (math.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive number (e.g. 1e-10); got {tol}")
    max_iter = _count(max_iter, "max_iter", 1)
    m = arr.shape[0]
    if weights is None:
        root_w = np.ones(m)
    else:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (m,) or not np.all(np.isfinite(w) & (w > 0)):
            raise ValueError(
                f"weights must be {m} positive finite numbers, one per variable; got {w!r}"
            )
        root_w = np.sqrt(w / w.max())
    outer_w = np.outer(root_w, root_w)

    # Work on A / unit with target diagonal 1 / unit: the same problem scaled by a
    # power of two (exact), so huge noisy entries cannot overflow a norm.
    unit = _power_of_two_below(max(1.0, float(np.abs(arr).max(initial=0.0))))
    target = 1.0 / unit
    y = _symmetric(arr / unit)
    correction = np.zeros_like(y)
    x_old = y_old = None
    x = y
    change = math.inf
    for _ in range(max_iter):
        r = y - correction
        x = _psd_part(r * outer_w) / outer_w
        correction = x - r
        y = x.copy()
        np.fill_diagonal(y, target)
        size = max(float(np.linalg.norm(y)), np.finfo(np.float64).tiny)
        change = float(np.linalg.norm(y - x)) / size
        if x_old is not None and y_old is not None:
            change = max(
                change,
                float(np.linalg.norm(x - x_old)) / size,
                float(np.linalg.norm(y - y_old)) / size,
            )
            if change <= tol:
                break
        x_old, y_old = x, y
    else:
        warnings.warn(
            f"nearest_correlation did not converge to tol={tol} in max_iter={max_iter} "
            f"iterations (relative change {change:.3g}); the result is a valid correlation "
            f"matrix but may not be the nearest. Raise max_iter or tol",
            RuntimeWarning,
            stacklevel=2,
        )
    return _unit_diagonal(x, floor=1e-8 * target)


def _unit_diagonal(x: FloatArray, *, floor: float) -> FloatArray:
    """``D^{-1/2} X D^{-1/2}`` with unit diagonal; variables with diagonal ``<= floor`` get 0."""
    d = np.diag(x)
    ok = d > floor
    s = np.where(ok, np.sqrt(np.where(ok, d, 1.0)), 1.0)
    with np.errstate(over="ignore"):  # a huge ratio is clipped to +-1 below
        out = x / s[:, None] / s[None, :]
    out[~ok, :] = 0.0
    out[:, ~ok] = 0.0
    out = np.clip(_symmetric(out), -1.0, 1.0)
    np.fill_diagonal(out, 1.0)
    return np.asarray(out)


def nearest_psd_covariance(
    cov: ArrayLike,
    method: str = "clip",
    *,
    tol: float = 1e-10,
    max_iter: int = 1000,
) -> FloatArray:
    """Repair a noisy covariance matrix to a positive semi-definite one.

    Parameters
    ----------
    cov : array_like of float, shape (m, m)
        Noisy covariance matrix (symmetrised first).
    method : {"clip", "higham"}, default "clip"
        ``"clip"``: :func:`nearest_psd`, the nearest PSD matrix in Frobenius
        norm; the variances may grow. ``"higham"``: keep the released variances
        exactly and repair only the covariances. The matrix is turned into a
        correlation matrix with its own diagonal (``C_ij / sqrt(v_i v_j)``, no
        clipping), :func:`nearest_correlation` finds the nearest correlation
        matrix ``R``, and the result is ``sqrt(v_i v_j) R_ij``. This is the
        nearest PSD matrix with the released diagonal in the norm
        ``||D^{-1/2} (C - X) D^{-1/2}||_F`` (errors in correlation units). A
        variable whose variance is 0 gets covariances 0 (the only PSD choice);
        a negative variance, impossible after bounding, is raised to 0 first.
    tol, max_iter : float, int
        Passed to :func:`nearest_correlation` (``"higham"`` only).

    Returns
    -------
    numpy.ndarray of float64, shape (m, m)
        Symmetric, positive semi-definite up to rounding; with ``"higham"`` its
        diagonal is the released variances (negative ones raised to 0).

    Raises
    ------
    ValueError
        If ``cov`` is not square or not finite, or ``method`` is unknown.

    Examples
    --------
    >>> noisy = [[1.0, 2.5], [2.5, 4.0]]
    >>> nearest_psd_covariance(noisy, "higham")
    array([[1., 2.],
           [2., 4.]])
    >>> nearest_psd_covariance([[1.0, 0.3], [0.3, 0.0]], "higham")
    array([[1., 0.],
           [0., 0.]])
    """
    arr = _square(cov, "cov")
    if method == "clip":
        return nearest_psd(arr)
    if method != "higham":
        raise ValueError(
            f"method={method!r} is not a PSD repair; use 'clip' (eigenvalue clipping) or "
            f"'higham' (nearest correlation matrix, keeps the variances)"
        )
    sym = _symmetric(arr)
    var = np.maximum(np.diag(sym), 0.0)
    keep = var > 0
    out = np.zeros_like(sym)
    if keep.any():
        s = np.sqrt(var[keep])
        block = np.ix_(keep, keep)
        corr = sym[block] / s[:, None] / s[None, :]
        near = nearest_correlation(corr, tol=tol, max_iter=max_iter)
        out[block] = near * np.outer(s, s)
    np.fill_diagonal(out, var)
    return out


def cov_to_corr(cov: ArrayLike) -> FloatArray:
    """Turn a covariance matrix into a correlation matrix.

    ``C_ij / sqrt(C_ii C_jj)``, clipped to ``[-1, 1]``, with a unit diagonal.
    A variable with variance ``<= 0`` (a constant, or a noisy variance bounded
    at 0) has no defined correlation: its correlations are set to 0 and its
    diagonal entry to 1. The input is symmetrised first. If ``cov`` is PSD
    (e.g. the output of :func:`nearest_psd_covariance`), so is the result.

    Parameters
    ----------
    cov : array_like of float, shape (m, m)
        A covariance matrix, noisy or repaired.

    Returns
    -------
    numpy.ndarray of float64, shape (m, m)
        Symmetric, with a unit diagonal and every entry in ``[-1, 1]``.

    Raises
    ------
    ValueError
        If ``cov`` is not square or holds NaN or infinity.

    Examples
    --------
    >>> cov_to_corr([[4.0, 2.0, 1.0], [2.0, 1.0, 3.0], [1.0, 3.0, 0.0]])
    array([[1., 1., 0.],
           [1., 1., 0.],
           [0., 0., 1.]])
    """
    arr = _square(cov, "cov")
    return _unit_diagonal(_symmetric(arr), floor=0.0)
