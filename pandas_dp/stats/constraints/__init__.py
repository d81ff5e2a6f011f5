"""Repair noisy releases so that they obey known constraints.

Everything here is *post-processing*: it takes numbers that have already been
noised and returns repaired ones, reading no data, so it costs no privacy. The
module knows nothing of pandas and draws no random numbers.

Sum-to-one procedures for a noisy vector of ``K`` proportions (REFERENCE.md §5):

:func:`rescale`
    Clip every entry to ``[0, 1]`` and divide by the sum.
:func:`complete_all_but_one`
    Only ``p_1 .. p_{K-1}`` were noised; ``p_K = 1 - sum``, then repaired.
:func:`project_simplex`
    Euclidean projection onto the probability simplex (least squares).
:func:`hierarchical_consistency`
    Hay et al. (2010) universal histogram: every level of a tree over the
    categories is noised; the levels are combined into consistent leaves.
    :func:`tree_levels`, :func:`noised_levels`, :func:`aggregate_levels` describe
    the tree and :func:`consistent_levels` exposes every level of the estimate.

Each of them returns a float64 vector with every entry in ``[0, 1]`` and a sum
equal to 1 within ``1e-12`` (a last rounding correction is put on the largest
entry). They work along the last axis, so an ``(R, K)`` array of ``R`` noisy
vectors is repaired in one call. ``K = 1`` always gives ``[1.0]``. A NaN or an
infinite input raises :class:`ValueError`: a noisy release is always finite.

Order (:mod:`pandas_dp.stats.constraints.monotone`):

:func:`isotonic`
    The non-decreasing least-squares fit of a sequence (pool adjacent
    violators), e.g. of a noisy cumulative count.

Positive semi-definite repair of a noisy covariance matrix (REFERENCE.md §6):

:func:`nearest_psd`
    Clip the eigenvalues at 0: the nearest PSD matrix in Frobenius norm.
:func:`nearest_correlation`
    Higham (2002): the nearest correlation matrix (PSD, unit diagonal).
:func:`nearest_psd_covariance`
    Either of the two for a covariance matrix; ``"higham"`` keeps the variances.
:func:`cov_to_corr`
    A covariance matrix to a correlation matrix.

Examples
--------
>>> noisy = np.array([0.7, -0.1, 0.5])
>>> rescale(noisy)
array([0.58333333, 0.        , 0.41666667])
>>> project_simplex(noisy)
array([0.6, 0. , 0.4])
>>> complete_all_but_one(noisy[:2])
array([0.7, 0. , 0.3])
>>> nearest_psd(np.array([[1.0, 2.0], [2.0, 1.0]]))
array([[1.5, 1.5],
       [1.5, 1.5]])
"""

from __future__ import annotations

import numpy as np  # noqa: F401  (the examples above use it)

from pandas_dp.stats.constraints.hierarchy import (
    aggregate_levels,
    consistent_levels,
    hierarchical_consistency,
    noised_levels,
    tree_levels,
)
from pandas_dp.stats.constraints.monotone import isotonic
from pandas_dp.stats.constraints.psd import (
    COVARIANCE_METHODS,
    cov_to_corr,
    nearest_correlation,
    nearest_psd,
    nearest_psd_covariance,
)
from pandas_dp.stats.constraints.simplex import (
    complete_all_but_one,
    project_simplex,
    rescale,
)

__all__ = [
    "COVARIANCE_METHODS",
    "aggregate_levels",
    "complete_all_but_one",
    "consistent_levels",
    "cov_to_corr",
    "hierarchical_consistency",
    "isotonic",
    "nearest_correlation",
    "nearest_psd",
    "nearest_psd_covariance",
    "noised_levels",
    "project_simplex",
    "rescale",
    "tree_levels",
]
