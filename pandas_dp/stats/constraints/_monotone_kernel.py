"""The compiled isotonic scan (numba; imported by :mod:`pandas_dp.stats.constraints.monotone`
only when numba is installed).

The very operations of the Python scan, in the same order: a block's mean is
``(m_prev * w_prev + m * w) / (w_prev + w)`` with integer weights, so the fit is
the same to the last bit.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

__all__ = ["pool_adjacent"]


def _pool(x: Any) -> Any:  # pragma: no cover (compiled)
    n = x.shape[0]
    means = np.empty(n, dtype=np.float64)
    weights = np.empty(n, dtype=np.int64)
    top = 0
    for i in range(n):
        m = x[i]
        w = 1
        while top > 0 and means[top - 1] > m:
            m = (means[top - 1] * weights[top - 1] + m * w) / (weights[top - 1] + w)
            w += weights[top - 1]
            top -= 1
        means[top] = m
        weights[top] = w
        top += 1
    return means, weights, top


try:
    pool_adjacent = numba.njit(cache=True, nogil=True, error_model="numpy")(_pool)
except Exception:  # no usable cache location: compile in memory
    pool_adjacent = numba.njit(nogil=True, error_model="numpy")(_pool)
