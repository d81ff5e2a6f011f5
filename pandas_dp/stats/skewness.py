"""The skewness from noisy centred power sums: pandas' estimate and an honest interval.

pandas' ``Series.skew()`` is the adjusted Fisher--Pearson coefficient

    G = N sqrt(N - 1) / (N - 2) * D3 / D2**1.5,

with ``D2 = Σ (x - x̄)²`` and ``D3 = Σ (x - x̄)³`` over the ``N`` present values
(undefined below three values; for a constant column, where ``D2 = 0``, pandas 2
gave 0 and pandas 3 gives ``NaN``). From the sums about the
declared bounds' midpoint -- the count ``C``, ``S1 = Σ y``, ``S2 = Σ y²`` and
``S3 = Σ y³`` with ``y = x - m`` -- the moments about the mean are

    D2 = S2 - S1² / C,    D3 = S3 - 3 S1 S2 / C + 2 S1³ / C²,

so the release measures those four (:mod:`pandas_dp.stats.moments`) and this module
post-processes their noisy values. Whatever the data, ``|G| <= sqrt(N)`` (one value
apart from ``N - 1`` equal ones attains it), which bounds both the estimate and its
interval.

The interval covers the exact ``G`` with probability at least ``1 - alpha``: each of
the four measurements' intervals at ``alpha / 4`` (a union bound) holds its exact
value, and ``G`` is bounded over that box by interval arithmetic (every operation
widened to the range of its operands' intervals). It is wide where ``N`` is small
or the noise large, which is what it should say there.

Examples
--------
>>> round(skew_value(5.0, 0.0, 10.0, 12.0), 4)
1.2649
>>> skew_value(2.0, 0.0, 1.0, 1.0)  # fewer than three values: no skew to speak of
0.0
"""

from __future__ import annotations

import itertools
import math

__all__ = ["skew_interval", "skew_value"]

#: Where ``N sqrt(N - 1) / (N - 2)`` is least on ``N > 2`` (a root of N² - 6N + 4).
_LEAST_FACTOR_AT = 3.0 + math.sqrt(5.0)


def _factor(c: float) -> float:
    return c * math.sqrt(c - 1.0) / (c - 2.0)


def _moments(c: float, s1: float, s2: float, s3: float) -> tuple[float, float]:
    mean = s1 / c
    return s2 - s1 * mean, s3 - 3.0 * mean * s2 + 2.0 * s1 * mean * mean


#: ``D2`` must exceed this many standard deviations of its noise for the skewness to
#: be estimated at all: below, the spread is indistinguishable from none (whose
#: skewness is taken as 0), and ``D3 / D2^1.5`` would divide noise by noise.
SPREAD_SDS = 2.0


def skew_value(
    c: float,
    s1: float,
    s2: float,
    s3: float,
    *,
    variances: tuple[float, ...] | None = None,
) -> float:
    """pandas' skewness from the (noisy) count and centred power sums.

    Parameters
    ----------
    c : float
        The count.
    s1, s2, s3 : float
        ``Σ y``, ``Σ y²``, ``Σ y³`` about the midpoint.
    variances : tuple of float, optional
        The noise variances of ``c``, ``s1``, ``s2`` (and ``s3``), public: where
        ``D2`` is within :data:`SPREAD_SDS` standard deviations of its noise (to
        first order) the estimate is 0.

    Returns
    -------
    float
        ``0.0`` below three values or where ``D2`` is not above its noise (no
        spread, no asymmetry: a number, where pandas 3 gives ``NaN``); else the
        estimate, clamped to
        ``[-sqrt(C), sqrt(C)]``.

    Examples
    --------
    >>> skew_value(100.0, 0.0, 1e-9, 1e-9)  # exact sums: a spread however small
    10.0
    >>> skew_value(100.0, 0.0, 1e-9, 1e-9, variances=(1.0, 1.0, 1.0, 1.0))
    0.0
    """
    if not c >= 3.0:
        return 0.0
    d2, d3 = _moments(c, s1, s2, s3)
    if not d2 > 0.0:
        return 0.0
    if variances is not None:
        mean = s1 / c
        # D2 = S2 - S1²/C: its noise to first order, the three independent noises
        square = mean * mean
        sd = math.sqrt(variances[2] + 4.0 * square * variances[1] + square * square * variances[0])
        if not d2 > SPREAD_SDS * sd:
            return 0.0
    cap = math.sqrt(c)
    value = _factor(c) * d3 / _power_1_5(d2)
    return min(max(value, -cap), cap) if math.isfinite(value) else math.copysign(cap, value)


def _power_1_5(x: float) -> float:
    """``x ** 1.5`` for ``x >= 0``, ``inf`` where it overflows (``**`` would raise)."""
    return x * math.sqrt(x)


def _span(*values: float) -> tuple[float, float]:
    return min(values), max(values)


def _times(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    return _span(a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])


def _over(a: tuple[float, float], c: tuple[float, float]) -> tuple[float, float]:
    """``a / C`` for a positive ``C``."""
    return _span(a[0] / c[0], a[0] / c[1], a[1] / c[0], a[1] / c[1])


#: Pieces each of the count's, S1's and S2's intervals is cut into (S3 enters once,
#: linearly): interval arithmetic overstates a range by about its pieces' width, so
#: the union over the sub-boxes comes close to the box's true range.
PIECES = 4


def skew_interval(
    count: tuple[float, float],
    s1: tuple[float, float],
    s2: tuple[float, float],
    s3: tuple[float, float],
    half: float,
) -> tuple[float, float]:
    """The range of pandas' skewness over a box of the four sums' intervals.

    Parameters
    ----------
    count, s1, s2, s3 : tuple of float
        Each sum's interval (at ``alpha / 4`` for a ``1 - alpha`` interval).
    half : float
        Half the declared bounds' width: ``|y| <= half`` bounds each sum by the count.

    Returns
    -------
    tuple of float
        ``(lower, upper)``, within ``[-sqrt(N), sqrt(N)]`` for the largest count: the
        union of the ranges over :data:`PIECES` ³ sub-boxes, each by interval
        arithmetic.

    Examples
    --------
    >>> lo, hi = skew_interval((99, 101), (-5, 5), (790, 810), (-300, 300), 10.0)
    >>> -0.2 < lo < 0 < hi < 0.2
    True
    """
    c_lo, c_hi = max(count[0], 3.0), max(count[1], 3.0)
    cap = math.sqrt(c_hi)
    # each sum within what c_hi values of |y| <= half can add up to
    s1 = (max(s1[0], -c_hi * half), min(s1[1], c_hi * half))
    s2 = (max(s2[0], 0.0), min(s2[1], c_hi * half * half))
    cube = half * half * half
    s3 = (max(s3[0], -c_hi * cube), min(s3[1], c_hi * cube))
    if s1[0] > s1[1] or s2[0] > s2[1] or s3[0] > s3[1]:
        return -cap, cap
    lo, hi = math.inf, -math.inf
    for c in _pieces((c_lo, c_hi)):
        for a in _pieces(s1):
            for b in _pieces(s2):
                piece = _box_range(c, a, b, s3)
                lo, hi = min(lo, piece[0]), max(hi, piece[1])
    return max(lo, -cap), min(hi, cap)


def _pieces(span: tuple[float, float]) -> list[tuple[float, float]]:
    cuts = [span[0] + (span[1] - span[0]) * i / PIECES for i in range(PIECES + 1)]
    cuts[-1] = span[1]
    return list(itertools.pairwise(cuts))


def _box_range(
    c: tuple[float, float],
    s1: tuple[float, float],
    s2: tuple[float, float],
    s3: tuple[float, float],
) -> tuple[float, float]:
    """G's range over one box (``C >= 3``), by interval arithmetic."""
    cap = math.sqrt(c[1])
    mean = _over(s1, c)
    low_square = 0.0 if s1[0] <= 0.0 <= s1[1] else min(s1[0] * s1[0], s1[1] * s1[1])
    d2_off = _over((low_square, max(s1[0] * s1[0], s1[1] * s1[1])), c)
    d2 = (max(s2[0] - d2_off[1], 0.0), s2[1] - d2_off[0])
    if not d2[0] > 0.0:  # the spread may be 0: any skewness the count allows
        return -cap, cap
    three = _times(mean, s2)
    two = _times(_times(s1, mean), mean)
    d3 = (s3[0] - 3.0 * three[1] + 2.0 * two[0], s3[1] - 3.0 * three[0] + 2.0 * two[1])
    # D3 / D2^1.5 is largest in size where D2 is least
    ratio = (
        d3[0] / _power_1_5(d2[0] if d3[0] < 0 else d2[1]),
        d3[1] / _power_1_5(d2[0] if d3[1] > 0 else d2[1]),
    )
    ends = [_factor(c[0]), _factor(c[1])]
    if c[0] < _LEAST_FACTOR_AT < c[1]:
        ends.append(_factor(_LEAST_FACTOR_AT))
    f_lo, f_hi = min(ends), max(ends)
    return (
        ratio[0] * (f_hi if ratio[0] < 0 else f_lo),
        ratio[1] * (f_hi if ratio[1] > 0 else f_lo),
    )
