"""The mean's second stage: its centre, from released values, and its exact sums.

Under ``add_remove`` a mean is measured twice: first the count ``C`` and centred
sum ``S``; then, about a centre ``c`` that only their *released* values decide
(:func:`recentre`), the recentred sum ``T = (S - (c - m) N) / h(c)`` (:func:`reach`
gives ``h``), whose every row adds a value in ``[-1, 1]`` whatever the data: the
measurement's sensitivity is fixed before the data are read. The estimator that
combines ``C``, ``S`` and ``T`` is
:func:`~pandas_dp.stats.estimators.recentred_mean_value`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from pandas_dp.engines.protocol import Source

__all__ = ["SHRINK", "reach", "recentre", "recentred_values"]


#: The second stage's centre moves from the midpoint towards the first stage's mean
#: by the distance between them less this many of its standard errors (soft
#: thresholding): where the first stage is too noisy to tell the mean from the
#: midpoint, the centre stays there and the count's noise cannot multiply a large
#: distance. Chosen with the weights (``benchmarks/accuracy.py``, splits).
SHRINK = 1.0


def recentre(
    c: float, s: float, variances: tuple[float, float], lower: float, upper: float
) -> float:
    """The mean's second-stage centre, from the first stage's released ``C`` and ``S``.

    The first stage's mean ``m + S / C'`` (``C' = max(C, 1)``) is ``delta`` away
    from the midpoint ``m``, with a standard error of about
    ``sqrt(v_S + delta² v_C) / C'`` (``variances``: of ``C`` and ``S``); the centre
    is ``m + sign(delta) max(|delta| - SHRINK se, 0)``, within the bounds. A
    function of released values and public facts only.

    Examples
    --------
    >>> round(recentre(1000.0, -40_000.0, (2.0, 2.0), 0.0, 100.0), 3)
    10.057
    >>> recentre(10.0, -400.0, (800.0, 2e6), 0.0, 100.0)
    50.0
    """
    mid = lower + 0.5 * (upper - lower)
    cc = max(c, 1.0)
    delta = min(max(mid + s / cc, lower), upper) - mid
    v_c, v_s = variances
    se = math.sqrt(v_s + delta * delta * v_c) / cc
    moved = max(abs(delta) - SHRINK * se, 0.0)
    return min(max(mid + math.copysign(moved, delta), lower), upper)


def reach(centre: float, lower: float, upper: float) -> float:
    """``h(c) = max(c - a, b - c)``: the largest distance from ``centre`` to a bound."""
    return max(centre - lower, upper - centre)


def recentred_values(
    source: Source,
    exact: Mapping[str, NDArray[Any]],
    released: Mapping[str, NDArray[Any]],
    variances: tuple[float, float],
) -> NDArray[Any]:
    """The exact recentred sums ``(S - (c - m) N) / h(c)``, one per group.

    ``source`` is the measurement's recentred source (its ``detail``: ``(count_key,
    sum_key, lower, upper)``); ``N`` and ``S`` are the exact count and centred sum, and the
    centre ``c`` is the one their released values give (:func:`recentre`;
    ``variances``: of the count's and the sum's noise, public).

    ``c`` is post-processing of released values, so whatever the data, every row
    adds to the sum a value of ``[-1, 1]`` (plus the rounding allowance): the
    measurement's sensitivity, fixed before the data were read.
    """
    count_key, sum_key, a, b = source.detail
    w_p, w_q = (b - a).as_integer_ratio()  # the engine's midpoint is a + (b - a) / 2
    a_p, a_q = a.as_integer_ratio()
    b_p, b_q = b.as_integer_ratio()
    base = math.lcm(a_q, b_q, 2 * w_q)  # binary fractions: the largest denominator
    out = np.empty(len(exact[sum_key]), dtype=object)
    for i, (n, total, c, s) in enumerate(
        zip(
            exact[count_key].tolist(),
            exact[sum_key],
            released[count_key].tolist(),
            released[sum_key].tolist(),
            strict=True,
        )
    ):
        c_p, c_q = recentre(c, s, variances, a, b).as_integer_ratio()
        t_p, t_q = total.as_integer_ratio()
        scale = math.lcm(base, c_q, t_q)
        # in integers over the common denominator, T = (S - (c - m) n) / h is one
        # quotient of integers (m = a + half)
        ia, ib, ic = a_p * (scale // a_q), b_p * (scale // b_q), c_p * (scale // c_q)
        ihalf = w_p * (scale // (2 * w_q))
        numerator = t_p * (scale // t_q) - (ic - ia - ihalf) * int(n)
        reach = max(ic - ia, ib - ic)  # 0 only for one-point bounds: every value is the point
        out[i] = Fraction(numerator, reach) if reach else Fraction(0)
    return out
