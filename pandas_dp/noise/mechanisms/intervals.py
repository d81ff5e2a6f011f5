"""Tail bounds of the noise, used by the confidence intervals.

Examples
--------
>>> round(float(laplace_halfwidth(1.0, 0.05)), 3)
2.996
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["gaussian_halfwidth", "laplace_halfwidth"]

FloatArray = NDArray[np.float64]


# --------------------------------------------------------------------------- tails


def laplace_halfwidth(
    scale: ArrayLike, alpha: ArrayLike, granularity: ArrayLike = 0.0
) -> FloatArray:
    """Half-width ``h`` with ``P(|noise| > h) <= alpha`` for Laplace noise of ``scale``.

    For the continuous Laplace (``granularity=0``) it is ``s ln(1/alpha)``. For
    noise ``g K`` on a grid of spacing ``g``, ``K`` discrete Laplace with
    ``q = e^{-g/s}``, the tail is ``P(|K| > h/g) = 2 q^{floor(h/g)+1} / (1 + q)``,
    which can exceed ``e^{-h/s}`` by up to ``2 / (1 + q)``; the half-width
    ``s ln(2 / ((1 + q) alpha))`` bounds it for every ``h``. Integer releases
    (counts) have ``g = 1``.

    Examples
    --------
    >>> round(float(laplace_halfwidth(1.0, 0.05)), 3)
    2.996
    >>> round(float(laplace_halfwidth(1.0, 0.05, granularity=1.0)), 3)
    3.376
    """
    s = np.asarray(scale, dtype=np.float64)
    q = np.exp(-np.asarray(granularity, dtype=np.float64) / s)
    a = np.asarray(alpha, dtype=np.float64)
    return np.asarray(s * np.log(2.0 / ((1.0 + q) * a)), dtype=np.float64)


def gaussian_halfwidth(sigma: ArrayLike, alpha: float) -> FloatArray:
    """Half-width with ``P(|noise| > h) <= alpha`` for (discrete) Gaussian noise.

    Uses the sub-Gaussian tail ``2 exp(-h^2 / (2 sigma^2))``, which holds for the
    discrete Gaussian as well as the continuous one (Canonne et al. 2020).
    """
    return np.asarray(sigma, dtype=np.float64) * math.sqrt(2.0 * math.log(2.0 / alpha))
