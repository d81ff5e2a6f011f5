"""The public bands of ``bounds="auto"`` and how a noisy band histogram is read
(REFERENCE.md §14); the release itself is :mod:`pandas_dp.stats.auto_bounds`.

Bands
    Every value is mapped to one of :data:`BANDS` public bands by a row-wise
    function of the value alone (:func:`band_index`): the *zero band*
    ``|x| < 2**-LOW_EXPONENT``, and for each sign and each integer ``j`` in
    ``[-LOW_EXPONENT, HIGH_EXPONENT)`` the band ``2**j <= |x| < 2**(j + 1)``; values
    at or beyond ``2**HIGH_EXPONENT``, and the infinities, go to the outermost band
    of their sign; a missing value (NaN, ``pd.NA``) to no band. The bands are
    numbered in value order, so band ``0`` holds the most negative values and band
    ``BANDS - 1`` the most positive ones. Which bands exist never depends on the data.

Reading (post-processing, :func:`read_bounds`)
    With the scale ``T`` the noise was drawn with, an empty band's noisy count is at
    least an integer ``m`` with probability ``exp(-m / T) / (1 + exp(-1 / T))``.
    :func:`threshold` is the smallest whole ``t`` such that a count above ``t`` has
    that probability at most ``beta / BANDS``; so with probability at least ``1 - beta``
    no empty band passes. ``t`` is within one of REFERENCE.md's
    ``T ln(B / (2 beta))`` (the continuous Laplace tail) and exact for the discrete
    noise. The lower bound is the lower edge of the first band whose noisy count
    exceeds ``t``, the upper bound the upper edge of the last one; by default
    (:data:`INCLUDE_ZERO`) they are then stretched to include zero, which stops the
    bands near zero -- narrow, each holding fewer than ``t`` values, together
    possibly many -- from clipping a positive column's lower tail (measured in
    ``benchmarks/auto_bounds.py``). When no band passes, the bounds fall back to
    :data:`FALLBACK` and the record says so; nothing raises after the charge.

Examples
--------
>>> import numpy as np
>>> band_edges(band_index(np.array([3.0, -0.75]))).tolist()
[[2.0, 4.0], [-1.0, -0.5]]
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "BANDS",
    "DEFAULT_BETA",
    "DEFAULT_SHARE",
    "FALLBACK",
    "HIGH_EXPONENT",
    "INCLUDE_ZERO",
    "LOW_EXPONENT",
    "ZERO_BAND",
    "band_edges",
    "band_index",
    "read_bounds",
    "threshold",
]

#: ``k``: the zero band holds ``|x| < 2**-LOW_EXPONENT`` (about 2.3e-10). Values
#: this small are zero for every bound a release needs: the bands above start at
#: the smallest magnitude a user would tell from zero.
LOW_EXPONENT: int = 32
#: ``K``: the outermost bands start at ``2**(HIGH_EXPONENT - 1)`` (about 9.2e18):
#: past the int64 range and any count or amount of money (values beyond fall in
#: the outermost band).
HIGH_EXPONENT: int = 64
#: ``B = 2 (k + K) + 1`` bands: 96 per sign and the zero band.
BANDS: int = 2 * (LOW_EXPONENT + HIGH_EXPONENT) + 1
#: The position of the zero band (the bands are numbered in value order).
ZERO_BAND: int = LOW_EXPONENT + HIGH_EXPONENT
#: The probability that some empty band passes the threshold, which would widen
#: the bounds to an arbitrary band, up to ``2**64``: a ruined release (its interval
#: shows it). One in a million costs a threshold of ``18.4 T`` against ``14.5 T`` at
#: ``1e-4`` and ``11.5 T`` at ``1e-3``; ``benchmarks/auto_bounds.py`` measured the
#: pooled median error ratio 2.01 / 1.82 / 1.71 for the three (share 0.3): a modest
#: gain for a thousand times more ruined releases.
DEFAULT_BETA: float = 1e-6
#: The share of a release's epsilon spent on its bounds (``bounds_epsilon_share``).
#: Chosen in ``benchmarks/auto_bounds.py`` (``results/auto_bounds.md``): 0.3 and 0.4
#: tie over the settings with ``n epsilon >= 1000`` (pooled median error ratio to
#: the true range declared 1.8-2.0; 0.2, and 0.5 in a first run, worse on the mean,
#: 0.2 falling back far more often at small ``n epsilon``); 0.3 costs less
#: where the data are plentiful (the release keeps 70 % of epsilon), 0.4 falls back
#: less where they are scarce (``n epsilon`` near 100).
DEFAULT_SHARE: float = 0.3
#: Whether the bounds are stretched to include zero (:func:`read_bounds`'s ``zero``),
#: chosen in ``benchmarks/auto_bounds.py``.
INCLUDE_ZERO: bool = True
#: The bounds used when no band passes the threshold: the bands of ``|x| < 1``.
FALLBACK: tuple[float, float] = (-1.0, 1.0)

_TINY = 2.0**-LOW_EXPONENT

IntArray = NDArray[np.intp]
FloatArray = NDArray[np.float64]


# ----------------------------------------------------------------------------- bands


def band_index(values: ArrayLike) -> IntArray:
    """The band of each value, in value order (``-1`` for a missing value).

    A pure, public, row-wise function: ``0`` is the outermost negative band
    (``x <= -2**(K-1)``, ``-inf`` included), :data:`ZERO_BAND` the zero band
    (``|x| < 2**-k``), ``BANDS - 1`` the outermost positive one. ``-0.0`` is in
    the zero band; subnormals too.

    Parameters
    ----------
    values : array_like of float
        Values (converted to float64; NaN is missing).

    Returns
    -------
    numpy.ndarray of intp
        One band per value, ``-1`` for NaN.

    Examples
    --------
    >>> band_index([0.0, 1.0, 1.5, 2.0, -1.0, float("inf"), float("nan")]).tolist()
    [96, 129, 129, 130, 63, 192, -1]
    """
    x = np.asarray(values, dtype=np.float64)
    _, exponent = np.frexp(x)  # |x| in [2**(e - 1), 2**e) for finite non-zero x
    band = np.clip(exponent.astype(np.intp) - 1, -LOW_EXPONENT, HIGH_EXPONENT - 1)
    magnitude = band + (LOW_EXPONENT + 1)  # 1 ... k + K
    with np.errstate(invalid="ignore"):
        magnitude = np.where(np.isinf(x), LOW_EXPONENT + HIGH_EXPONENT, magnitude)
        magnitude = np.where(np.abs(x) < _TINY, 0, magnitude)
    out = ZERO_BAND + np.where(np.signbit(x), -magnitude, magnitude)
    out = np.where(np.isnan(x), -1, out)
    return np.asarray(out, dtype=np.intp)


def band_edges(bands: ArrayLike) -> FloatArray:
    """The ``(lower, upper)`` edges of each band (public).

    The outermost bands' outer edges are ``-2**K`` and ``2**K`` (the values beyond,
    which the band also holds, are clipped by bounds read from it).

    Parameters
    ----------
    bands : array_like of int
        Band numbers in ``[0, BANDS)``.

    Returns
    -------
    numpy.ndarray of float64
        Shape ``(..., 2)``: lower and upper edge.

    Examples
    --------
    >>> band_edges([96, 129]).tolist()
    [[-2.3283064365386963e-10, 2.3283064365386963e-10], [1.0, 2.0]]
    """
    b = np.asarray(bands, dtype=np.int64)
    if np.any((b < 0) | (b >= BANDS)):
        raise ValueError(f"band numbers are in [0, {BANDS}); got {b.tolist()}")
    s = b - ZERO_BAND
    low = np.ldexp(1.0, np.abs(s) - LOW_EXPONENT - 1)  # the band's smaller magnitude
    high = np.ldexp(1.0, np.abs(s) - LOW_EXPONENT)
    lower = np.where(s > 0, low, np.where(s < 0, -high, -_TINY))
    upper = np.where(s > 0, high, np.where(s < 0, -low, _TINY))
    return np.stack([lower, upper], axis=-1).astype(np.float64)


# ----------------------------------------------------------------------------- reading


def threshold(scale: float, beta: float, bands: int = BANDS) -> float:
    """The count an empty band exceeds with probability at most ``beta / bands``.

    For discrete Laplace noise of scale ``T`` (``P(k) ~ exp(-|k| / T)``),
    ``P(noise >= m) = exp(-m / T) / (1 + exp(-1 / T))`` for integers ``m >= 1``.
    With ``m*`` where that equals ``beta / bands``, the threshold is
    ``ceil(m*) - 1``: a noisy count passes when it is *above* it (at least
    ``ceil(m*)``). ``m*`` is at most half a count above REFERENCE.md's
    ``T ln(B / (2 beta))``.

    Parameters
    ----------
    scale : float
        The scale ``T`` the noise was drawn with (positive, finite).
    beta : float
        The probability, over all bands, that some empty band passes (in (0, 1)).
    bands : int, default BANDS
        The number of bands.

    Returns
    -------
    float
        The threshold ``t`` (a whole number).

    Examples
    --------
    >>> threshold(1.0, 1e-3), round(math.log(BANDS / 2e-3), 2)
    (11.0, 11.48)
    """
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"the noise scale must be positive and finite; got {scale}")
    if not 0.0 < beta < 1.0:
        raise ValueError(f"beta must be in (0, 1), e.g. beta=1e-6; got {beta}")
    if bands < 1:
        raise ValueError(f"there must be at least one band; got {bands}")
    m_star = scale * (math.log(bands / beta) - math.log1p(math.exp(-1.0 / scale)))
    return float(max(math.ceil(m_star) - 1, 0))


def read_bounds(
    noisy: ArrayLike, scale: float, beta: float = DEFAULT_BETA, *, zero: bool = False
) -> tuple[float, float, bool]:
    """The bounds the noisy band counts show (post-processing; never raises on counts).

    Parameters
    ----------
    noisy : array_like of float
        The :data:`BANDS` noisy counts, in band order (any values: negative, zero,
        NaN -- which never passes).
    scale : float
        The scale the counts were noised with.
    beta : float, default DEFAULT_BETA
        The probability that an empty band passes (see :func:`threshold`).
    zero : bool, default False
        Stretch the bounds to include zero (a lower bound above zero becomes zero,
        an upper bound below zero becomes zero): a public rule, post-processing.

    Returns
    -------
    lower, upper : float
        The lower edge of the first band above the threshold and the upper edge of
        the last one; :data:`FALLBACK` if none is.
    fell_back : bool
        Whether no band passed.

    Examples
    --------
    >>> counts = np.zeros(BANDS); counts[[129, 131]] = 50
    >>> read_bounds(counts, 1.0, 1e-3)
    (1.0, 8.0, False)
    >>> read_bounds(np.zeros(BANDS), 1.0, 1e-3)
    (-1.0, 1.0, True)
    """
    counts = np.asarray(noisy, dtype=np.float64).reshape(-1)
    if counts.size != BANDS:
        raise ValueError(f"expected {BANDS} band counts; got {counts.size}")
    t = threshold(scale, beta)
    with np.errstate(invalid="ignore"):
        passing = np.flatnonzero(counts > t)
    if passing.size == 0:
        return FALLBACK[0], FALLBACK[1], True
    edges = band_edges([passing[0], passing[-1]])
    lower, upper = float(edges[0, 0]), float(edges[1, 1])
    if zero:
        lower, upper = min(lower, 0.0), max(upper, 0.0)
    return lower, upper, False
