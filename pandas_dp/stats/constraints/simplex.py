"""Sum-to-one procedures for a noisy proportion vector (REFERENCE.md §5).

:func:`rescale`, :func:`project_simplex` and :func:`complete_all_but_one`;
post-processing only.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from pandas_dp.stats.constraints._checks import (
    FloatArray,
    _categories,
    _finite,
    _fix_sum,
    _project_shifted,
)

# --------------------------------------------------------------------------- sum to one


def rescale(p: ArrayLike) -> FloatArray:
    """Clip each noisy proportion to ``[0, 1]`` and divide by the sum.

    Liu (2019)'s normalisation. When every entry clips to 0 the sum is 0 and
    the uniform vector ``1/K`` is returned.

    Parameters
    ----------
    p : array_like of float, shape (..., K)
        Noisy proportions, one vector per row of the last axis.

    Returns
    -------
    numpy.ndarray of float64, shape (..., K)
        Entries in ``[0, 1]``, each row summing to 1.

    Raises
    ------
    ValueError
        If ``p`` is a scalar, has no categories, or holds NaN or infinity.

    Examples
    --------
    >>> rescale([0.5, 0.7, -0.2])
    array([0.41666667, 0.58333333, 0.        ])
    >>> rescale([-0.3, -0.1])
    array([0.5, 0.5])
    >>> rescale([[2.0, 1.0], [0.2, 0.2]])
    array([[0.5, 0.5],
           [0.5, 0.5]])
    """
    arr = _finite(p, "p")
    k = _categories(arr, "p")
    clipped = np.clip(arr, 0.0, 1.0)
    total = clipped.sum(axis=-1, keepdims=True)
    positive = total > 0
    out = np.where(positive, clipped / np.where(positive, total, 1.0), 1.0 / k)
    return _fix_sum(out)


def project_simplex(p: ArrayLike) -> FloatArray:
    """Euclidean projection of each noisy vector onto the probability simplex.

    Returns the ``x`` with ``x >= 0`` and ``sum(x) = 1`` nearest to ``p`` in
    Euclidean distance: the least-squares estimate under both constraints. It
    is ``x = max(p - tau, 0)`` for the unique ``tau`` that makes ``x`` sum to 1,
    found exactly by sorting (``O(K log K)`` per row; Held, Wolfe & Crowder
    1974; Duchi et al. 2008). A point already on the simplex is returned
    unchanged (up to rounding), and the projection never moves a vector further
    from any point of the simplex (the true proportions in particular).

    Parameters
    ----------
    p : array_like of float, shape (K,) or (..., K)
        Noisy proportions. A 2-D array is projected row by row (any leading axes
        are allowed), e.g. the ``R`` repetitions of a benchmark at once.

    Returns
    -------
    numpy.ndarray of float64, same shape as ``p``
        Entries at least 0, each row summing to 1.

    Raises
    ------
    ValueError
        If ``p`` is a scalar, has no categories, or holds NaN or infinity.

    Examples
    --------
    >>> project_simplex([0.5, 0.7, -0.2])
    array([0.4, 0.6, 0. ])
    >>> project_simplex([[0.2, 0.3, 0.5], [3.0, 0.0, 0.0]])
    array([[0.2, 0.3, 0.5],
           [1. , 0. , 0. ]])
    """
    arr = _finite(p, "p")
    _categories(arr, "p")
    with np.errstate(over="ignore"):  # a gap beyond the float range becomes -inf: fine
        shifted = arr - arr.max(axis=-1, keepdims=True)
    return _project_shifted(shifted)


def complete_all_but_one(p_head: ArrayLike) -> FloatArray:
    """Complete ``K - 1`` noisy proportions with ``p_K = 1 - sum`` and repair.

    Only ``p_1 .. p_{K-1}`` were noised (REFERENCE.md §5, "all_but_one"). The
    repair is the least-squares estimate from the noised entries: the
    Euclidean projection of ``p_head`` onto ``{q >= 0, sum(q) <= 1}``, with
    ``p_K = 1 - sum(q)``. In practice:

    * if the negative entries set to 0 leave a sum ``<= 1``, those clipped
      entries are kept and ``p_K = 1 - sum >= 0``;
    * otherwise ``p_head`` is projected onto the simplex
      (:func:`project_simplex`) and ``p_K = 0``.

    Either way every entry, ``p_K`` included, lies in ``[0, 1]``. This equals
    "clip the head to ``[0, 1]``; if its sum exceeds 1, project the head onto the
    simplex".

    Parameters
    ----------
    p_head : array_like of float, shape (..., K - 1)
        The noisy proportions of the first ``K - 1`` categories (may be empty:
        then ``K = 1`` and the result is ``[1.0]``).

    Returns
    -------
    numpy.ndarray of float64, shape (..., K)
        The repaired head and ``p_K``: entries in ``[0, 1]``, each row summing to 1.

    Raises
    ------
    ValueError
        If ``p_head`` is a scalar or holds NaN or infinity.

    Examples
    --------
    >>> complete_all_but_one([0.2, -0.1, 0.3])
    array([0.2, 0. , 0.3, 0.5])
    >>> complete_all_but_one([0.9, 0.5])
    array([0.7, 0.3, 0. ])
    >>> complete_all_but_one([])
    array([1.])
    """
    head = _finite(p_head, "p_head")
    if head.shape[-1] == 0:
        return np.ones((*head.shape[:-1], 1), dtype=np.float64)
    kept = np.clip(head, 0.0, 2.0)  # an entry above 1 already makes the sum exceed 1
    total = kept.sum(axis=-1, keepdims=True)
    fits = total <= 1.0
    completed = np.concatenate([kept, 1.0 - np.minimum(total, 1.0)], axis=-1)
    if fits.all():
        return _fix_sum(completed)
    projected = np.concatenate([project_simplex(head), np.zeros_like(total)], axis=-1)
    return _fix_sum(np.where(fits, completed, projected))
