"""Estimators: statistics and honest intervals from noisy sufficient statistics.

Everything here is post-processing of released values and public facts, so it
costs no budget and may not touch the data. With ``C`` the noisy non-missing
count, ``S`` the noisy centred sum and ``Q`` the noisy centred squares of a
column on ``[a, b]`` with midpoint ``m`` (REFERENCE.md §9):

* mean ``= m + S / max(C, 1)``, clamped to ``[a, b]``;
* variance ``= (Q - S²/C') / (C' - ddof)`` with ``C' = max(C, ddof + 1)``, clamped
  to the ddof's own public range ``[0, (ddof + 1) R²/4]``;
* standard deviation: the square root of the variance.

An interval for a statistic made of several noisy statistics is the range of the
statistic over the box of their intervals, each at ``alpha / (number of them)``
(a union bound): if every noisy statistic is within its half-width of the exact
one, the exact statistic lies in the box's image.

Examples
--------
>>> mean_value(c=10.0, s=5.0, lower=0.0, upper=10.0, clamp=True)
5.5
>>> round(var_value(c=10.0, s=0.0, q=90.0, ddof=1, upper_range=50.0, clamp=True), 6)
10.0
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from pandas_dp.bounding import halfwidth
from pandas_dp.noise_plans import NoisePlan

__all__ = [
    "mean_interval",
    "mean_value",
    "noisy_interval",
    "var_interval",
    "var_value",
]

FloatArray = NDArray[np.float64]


def mean_value(c: float, s: float, lower: float, upper: float, *, clamp: bool) -> float:
    """``m + S / max(C, 1)``, clamped to the bounds unless ``clamp`` is false."""
    value = lower + 0.5 * (upper - lower) + s / max(c, 1.0)
    return min(max(value, lower), upper) if clamp else value


def var_value(c: float, s: float, q: float, *, ddof: int, upper_range: float, clamp: bool) -> float:
    """``(Q - S²/C') / (C' - ddof)``, ``C' = max(C, ddof + 1)``, clamped unless told not to."""
    cc = max(c, ddof + 1.0)
    value = (q - s * s / cc) / (cc - ddof)
    return min(max(value, 0.0), upper_range) if clamp else value


def noisy_interval(noise: NoisePlan, value: float, alpha: float) -> tuple[float, float]:
    """``value ± halfwidth`` intersected with the noise plan's public range.

    Both ends are clipped into the range, so a release outside it (possible with
    ``bounding="none"``) gives an interval at the range's end, never one with
    ``lower > upper``.
    """
    h = float(halfwidth(noise, alpha)[0])
    bottom, top = float(noise.lower[0]), float(noise.upper[0])
    lo = min(max(value - h, bottom), top)
    hi = min(max(value + h, bottom), top)
    if noise.integer:
        lo, hi = math.ceil(lo), math.floor(hi)
    return lo, hi


def mean_interval(
    c_noise: NoisePlan,
    s_noise: NoisePlan,
    c: float,
    s: float,
    lower: float,
    upper: float,
    alpha: float,
) -> tuple[float, float]:
    """Range of ``m + S/C`` over the box of the count's and the sum's intervals."""
    c_lo, c_hi = noisy_interval(c_noise, c, alpha / 2.0)
    s_lo, s_hi = noisy_interval(s_noise, s, alpha / 2.0)
    c_lo, c_hi = max(c_lo, 1.0), max(c_hi, 1.0)
    corners = [s_lo / c_lo, s_lo / c_hi, s_hi / c_lo, s_hi / c_hi]
    mid = lower + 0.5 * (upper - lower)
    lo = min(max(mid + min(corners), lower), upper)
    hi = min(max(mid + max(corners), lower), upper)
    return lo, hi


def _var_at(q: float, s2: float, c: float, ddof: int) -> float:
    return (q - s2 / c) / (c - ddof)


def _candidates(q: float, s2: float, c_lo: float, c_hi: float, ddof: int) -> list[float]:
    """Values of the variance at the ends of ``[c_lo, c_hi]`` and at interior critical points."""
    out = [_var_at(q, s2, c_lo, ddof), _var_at(q, s2, c_hi, ddof)]
    if q != 0.0:
        disc = s2 * s2 - ddof * q * s2
        if disc >= 0.0:
            for sign in (1.0, -1.0):
                root = (s2 + sign * math.sqrt(disc)) / q
                if c_lo < root < c_hi:
                    out.append(_var_at(q, s2, root, ddof))
    return out


def var_interval(
    c_noise: NoisePlan,
    s_noise: NoisePlan,
    q_noise: NoisePlan,
    c: float,
    s: float,
    q: float,
    ddof: int,
    upper_range: float,
    alpha: float,
) -> tuple[float, float]:
    """Range of ``(Q - S²/C)/(C - ddof)`` over the box of three intervals.

    The expression grows with ``Q`` and shrinks with ``S²``; in ``C`` its
    derivative has the sign of ``-Q C² + 2 S² C - ddof S²``, so its extremes lie
    at the ends of the count's interval or at the roots
    ``C = (S² ± sqrt(S⁴ - ddof Q S²)) / Q`` (minimum and maximum alike).
    """
    third = alpha / 3.0
    c_lo, c_hi = noisy_interval(c_noise, c, third)
    s_lo, s_hi = noisy_interval(s_noise, s, third)
    q_lo, q_hi = noisy_interval(q_noise, q, third)
    c_lo, c_hi = max(c_lo, ddof + 1.0), max(c_hi, ddof + 1.0)
    s2_min = 0.0 if s_lo <= 0.0 <= s_hi else min(s_lo * s_lo, s_hi * s_hi)
    s2_max = max(s_lo * s_lo, s_hi * s_hi)
    low = min(_candidates(q_lo, s2_max, c_lo, c_hi, ddof))
    high = max(_candidates(q_hi, s2_min, c_lo, c_hi, ddof))
    lo = min(max(low, 0.0), upper_range)
    hi = min(max(high, 0.0), upper_range)
    return lo, hi
