"""Estimators: statistics and honest intervals from noisy sufficient statistics.

Everything here is post-processing of released values and public facts, so it
costs no budget and may not touch the data. With ``C`` the noisy non-missing
count, ``S`` the noisy centred sum and ``Q`` the noisy centred squares of a
column on ``[a, b]`` with midpoint ``m`` (REFERENCE.md §9):

* mean ``= m + S / max(C, 1)``, clamped to ``[a, b]``; under ``add_remove`` a
  second stage measures the sum about that first mean, ``T = (S - d N) / h``
  (:func:`recentre`, :func:`reach`), and the mean combines ``C``, ``S`` and ``T``
  (:func:`recentred_mean_value`);
* variance ``= (Q - S²/C') / (C' - ddof)`` with ``C' = max(C, ddof + 1)``, clamped
  to the ddof's own public range ``[0, (ddof + 1) R²/4]`` and, below that, to the
  largest variance any data on ``[a, b]`` with ``C'`` values and mean ``m + d``,
  ``d = S / C'``, can have: ``(R²/4 - d²) C' / (C' - ddof)`` (the Bhatia-Davis
  inequality, :func:`variance_cap`);
* where the column's two bound sums ``p ≈ Σ (x - a)`` and ``q ≈ Σ (b - x)`` are
  measured instead of ``C`` and ``S`` (add/remove, Laplace noise), the mean is
  ``a + R p / (p + q)`` and the count and centred sum are ``C = (p + q) / R``
  and ``S = (p - q) / 2`` (:func:`bound_sums_count`, :func:`bound_sums_centred`),
  whose noises are uncorrelated;
* standard deviation: the square root of the variance; where the variance's noise
  is large against that range, the variance is the square of the posterior mean
  of the standard deviation over it (:mod:`pandas_dp.stats.shrinkage`).

An interval for a statistic made of several noisy statistics is the range of the
statistic over the box of their intervals, each at ``alpha / (number of them)``
(a union bound): if every noisy statistic is within its half-width of the exact
one, the exact statistic lies in the box's image.

Examples
--------
>>> mean_value(c=10.0, s=5.0, lower=0.0, upper=10.0, clamp=True)
5.5
>>> round(var_value(c=10.0, s=0.0, q=90.0, ddof=1, half_width=5.0, upper_range=50.0, clamp=True), 6)
10.0
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from pandas_dp.noise.bounding import halfwidth, l1_radius
from pandas_dp.noise.plans import NoisePlan
from pandas_dp.plan.recentring import SHRINK, reach, recentre
from pandas_dp.stats.shrinkage import shrunk_variance

__all__ = [
    "SHRINK",
    "bound_sums_box",
    "bound_sums_centred",
    "bound_sums_count",
    "bound_sums_count_interval",
    "bound_sums_count_mse",
    "bound_sums_count_value",
    "bound_sums_mean_interval",
    "bound_sums_mean_value",
    "independent_box",
    "integer_count_mse",
    "mean_interval",
    "mean_value",
    "noisy_interval",
    "reach",
    "recentre",
    "recentred_mean_interval",
    "recentred_mean_value",
    "var_interval_of",
    "var_value",
    "variance_cap",
]

FloatArray = NDArray[np.float64]


def mean_value(c: float, s: float, lower: float, upper: float, *, clamp: bool) -> float:
    """``m + S / max(C, 1)``, clamped to the bounds unless ``clamp`` is false."""
    value = lower + 0.5 * (upper - lower) + s / max(c, 1.0)
    return min(max(value, lower), upper) if clamp else value


def bound_sums_mean_value(p: float, q: float, lower: float, upper: float, *, clamp: bool) -> float:
    """The mean from the noisy bound sums ``P ≈ Σ (x - a)`` and ``Q ≈ Σ (b - x)``.

    ``a + (b - a) P / (P + Q)``, computed as ``(1 - r) a + r b`` with
    ``r = P / (P + Q)`` (no overflow for bounds anywhere in the float range). With
    ``clamp``, ``P`` and ``Q`` are first raised to 0 (each is a sum of non-negative
    terms), so the mean lies in the bounds; a release with ``P + Q <= 0`` (noise
    only) gives the midpoint. Without it the raw ratio is used (it may leave the
    bounds) while ``P + Q > 0``.

    Examples
    --------
    >>> bound_sums_mean_value(1000.0, 9000.0, 0.0, 100.0, clamp=True)
    10.0
    >>> bound_sums_mean_value(-3.0, 2.0, 0.0, 100.0, clamp=True)
    0.0
    """
    if clamp or not p + q > 0:
        p, q = max(p, 0.0), max(q, 0.0)
    r = _share(p, q)
    value = (1.0 - r) * lower + r * upper
    # (the products of subnormal bounds may round below them)
    return min(max(value, lower), upper) if clamp else value


def _share(p: float, q: float) -> float:
    """``p / (p + q)``: 1/2 when both are 0, the limits where one is infinite."""
    if math.isinf(p) or math.isinf(q):
        return 0.5 if math.isinf(p) and math.isinf(q) else (1.0 if math.isinf(p) else 0.0)
    total = p + q
    if total == 0.0:
        return 0.5
    if math.isinf(total):  # two sums near the float range
        return 1.0 / (1.0 + q / p) if p > 0 else 0.0
    return p / total


def bound_sums_mean_interval(
    noise: NoisePlan, p: float, q: float, lower: float, upper: float, alpha: float
) -> tuple[float, float]:
    """Range of the mean over the pair's confidence region: the exact sums lie in
    the L1 ball of radius :func:`~pandas_dp.noise.bounding.l1_radius` about the released
    ones (and are non-negative) with probability at least ``1 - alpha``. The share
    ``P / (P + Q)`` is monotone along every edge of that region, so its ends are at
    the vertices: ``(p - t, q)`` or ``(p, q + t)`` for the lower, ``(p + t, q)`` or
    ``(p, q - t)`` for the upper, and 0 (or 1) where the region reaches ``P = 0``
    (``Q = 0``)."""
    t = l1_radius(noise, alpha)
    if not t < math.inf:  # (a scale near the float range)
        return lower, upper
    low = 0.0 if p <= t else min(_share(p - t, q), _share(p, q + t))
    high = 1.0 if q <= t else max(_share(p + t, q), _share(p, q - t))
    ends = ((1.0 - r) * lower + r * upper for r in (low, high))
    lo, hi = (min(max(x, lower), upper) for x in ends)
    return min(lo, hi), hi  # (an ulp of rounding never inverts it)


def bound_sums_count(p: float, q: float, lower: float, upper: float) -> float:
    """The count the bound sums give: ``(P + Q) / (b - a)``, as ``P/R + Q/R`` (no
    overflow where the sums are near the float range)."""
    width = upper - lower
    return p / width + q / width


def bound_sums_centred(p: float, q: float) -> float:
    """The centred sum the bound sums give: ``(P - Q) / 2``, as ``P/2 - Q/2``."""
    return 0.5 * p - 0.5 * q


def bound_sums_count_value(p: float, q: float, lower: float, upper: float) -> float:
    """The count from the bound sums as a whole number, at least 0 (``0`` where the
    noisy sums give no number, the largest double where they overflow).

    Examples
    --------
    >>> bound_sums_count_value(2_500.4, 7_499.9, 0.0, 100.0)
    100.0
    >>> bound_sums_count_value(-30.0, 10.0, 0.0, 100.0)
    0.0
    """
    c = bound_sums_count(p, q, lower, upper)
    if not c > 0.0:  # (NaN too)
        return 0.0
    return float(round(c)) if math.isfinite(c) else sys.float_info.max


def bound_sums_box(
    noise: NoisePlan, p: float, q: float, lower: float, upper: float, alpha: float
) -> tuple[float, float, float, float]:
    """``(c_lo, c_hi, s_lo, s_hi)``: the count's and the centred sum's ranges over
    the pair's confidence region, the L1 ball of radius ``t``
    (:func:`~pandas_dp.noise.bounding.l1_radius`) about ``(p, q)``. Since
    ``|dP| + |dQ| = max(|dP + dQ|, |dP - dQ|)``, that ball is exactly the box
    ``C ± t / R``, ``S ± t / 2`` (``C`` at least 0)."""
    t = l1_radius(noise, alpha)
    width = upper - lower
    c = bound_sums_count(p, q, lower, upper)
    s = bound_sums_centred(p, q)
    c_lo = max(c - t / width, 0.0) if t < math.inf else 0.0
    return c_lo, c + t / width, s - 0.5 * t, s + 0.5 * t


def bound_sums_count_interval(
    noise: NoisePlan, p: float, q: float, lower: float, upper: float, alpha: float
) -> tuple[float, float]:
    """The count's range over the box of ``P``'s and ``Q``'s intervals, in whole
    numbers at least 0 (:func:`bound_sums_box`)."""
    c_lo, c_hi, _, _ = bound_sums_box(noise, p, q, lower, upper, alpha)
    lo = math.ceil(c_lo) if math.isfinite(c_lo) else c_lo
    hi = math.floor(c_hi) if math.isfinite(c_hi) else c_hi
    if not lo <= hi:  # no whole number inside (or a NaN): the real range, outward
        lo = math.floor(c_lo) if math.isfinite(c_lo) else c_lo
        hi = math.ceil(c_hi) if math.isfinite(c_hi) else c_hi
    lo, hi = max(float(lo), 0.0), max(float(hi), 0.0)
    return (lo, hi) if lo <= hi else (0.0, math.inf)


def integer_count_mse(noise: NoisePlan) -> float:
    """Mean squared error of a count released with discrete Laplace noise of the
    plan's (first) scale ``s``: ``2 e^{-1/s} / (1 - e^{-1/s})²``, exactly."""
    r = math.exp(-1.0 / float(noise.scale[0]))
    return 2.0 * r / ((1.0 - r) * (1.0 - r))


def bound_sums_count_mse(noise: NoisePlan, width: float) -> float:
    """Mean squared error of :func:`bound_sums_count_value` (no clamp reached): the
    rounding of ``(e1 + e2) / R``, ``e1, e2`` Laplace of the pair's (first) scale.

    ``X = (e1 + e2) / R`` is a sum of two Laplace of scale ``beta = b / R``, with
    ``P(X > x) = e^{-x/beta} (2 + x/beta) / 4``; the error is ``round(X)``. For
    ``beta`` above 50 the sum of the series is ``4 beta² + 1/12`` to better than
    one part in a million. (The pair's noise is on a grid ``2**-40`` of its scale:
    continuous here.)

    Examples
    --------
    >>> from pandas_dp.noise.plans import plan_noise
    >>> import numpy as np
    >>> pair = plan_noise(np.full(2, 0.5), np.zeros(2), np.full(2, np.inf), epsilon=0.01)
    >>> round(bound_sums_count_mse(pair, 1.0) / 40_000, 4)
    1.0
    """
    beta = float(noise.scale[0]) / width
    if not beta < 50.0:  # (and an infinite or NaN one)
        return 4.0 * beta * beta + 1.0 / 12.0

    def tail(x: float) -> float:
        return math.exp(-x / beta) * (2.0 + x / beta) / 4.0

    total, k = 0.0, 1
    while True:
        p = tail(k - 0.5) - tail(k + 0.5)
        total += k * k * p
        if k > 1 and k * k * tail(k + 0.5) < 1e-18 * max(total, 1e-300):
            break
        k += 1
    return 2.0 * total


def recentred_mean_value(
    c: float,
    s: float,
    t: float,
    variances: tuple[float, float, float],
    lower: float,
    upper: float,
    *,
    clamp: bool,
) -> float:
    """The mean from the noisy count ``C``, centred sum ``S`` and recentred sum ``T``.

    ``T`` measures ``(S - d N) / h`` (``d = c - m``, ``c`` = :func:`recentre` of ``C``
    and ``S``, ``h`` = :func:`reach` of ``c``): three noisy linear measurements of
    the exact ``(S, N)``, combined by generalised least squares with their noise
    variances (``variances``: of ``C``, ``S`` and ``T``), then ``m + S / max(N, 1)``.

    Examples
    --------
    >>> v = recentred_mean_value(1000.0, -40_000.0, 0.0, (2.0, 2.0, 2.0), 0.0, 100.0, clamp=True)
    >>> round(v, 3)
    10.009
    """
    mid = lower + 0.5 * (upper - lower)
    v_c, v_s, v_t = variances
    centre = recentre(c, s, (v_c, v_s), lower, upper)
    value = math.nan
    try:  # in units of the half-width (bounds near the float range stay in range)
        half = 0.5 * (upper - lower)
        h, d = reach(centre, lower, upper) / half, (centre - mid) / half
        s_u, v_su = s / half, v_s / (half * half)
        y = h * t  # the sum about the centre, S - d N, with noise variance h² v_t
        w_y = 1.0 / (h * h * v_t)
        # normal equations of (S, N): rows (0, 1) for C, (1, 0) for S, (1, -d) for y
        a11 = 1.0 / v_su + w_y
        a12 = -d * w_y
        a22 = 1.0 / v_c + d * d * w_y
        r1 = s_u / v_su + y * w_y
        r2 = c / v_c - d * y * w_y
        det = a11 * a22 - a12 * a12
        sum_hat = (a22 * r1 - a12 * r2) / det
        count_hat = (a11 * r2 - a12 * r1) / det
        value = mid + half * (sum_hat / max(count_hat, 1.0))
    except (ZeroDivisionError, OverflowError):
        pass
    if not math.isfinite(value):  # then the first stage's mean, which is finite
        value = mean_value(c, s, lower, upper, clamp=False)
    return min(max(value, lower), upper) if clamp else value


def variance_cap(c: float, s: float, *, ddof: int, half_width: float) -> float:
    """The largest variance (``ddof``) of ``C' = max(C, ddof + 1)`` values in a range
    of half-width ``h`` whose sum about the range's midpoint is ``S``.

    With mean ``m + d``, ``d = S / C'`` (taken into ``[-h, h]``), values on
    ``[m - h, m + h]`` have population variance at most ``(h - d)(h + d)``
    (Bhatia and Davis 2000; equality with every value at an end), so the variance
    with ``ddof`` is at most ``(h² - d²) C' / (C' - ddof)``. A function of noisy
    statistics and the declared bounds only: clamping a noisy variance to it is
    post-processing, and it keeps the released mean and variance a pair some data
    in the bounds could have. It cuts the noise where the noisy variance lands
    beyond it (few rows or a small epsilon; data piled near one bound).

    Examples
    --------
    >>> variance_cap(100.0, 0.0, ddof=0, half_width=50.0)
    2500.0
    >>> variance_cap(100.0, -4000.0, ddof=0, half_width=50.0)  # mean 10 on [0, 100]
    900.0
    >>> variance_cap(2.0, 0.0, ddof=1, half_width=50.0)
    5000.0
    """
    cc = c if c > ddof + 1.0 else ddof + 1.0  # (a NaN count too)
    d = s / cc
    if math.isnan(d):
        d = 0.0
    d = min(max(d, -half_width), half_width)
    return (half_width - d) * (half_width + d) * (1.0 + ddof / (cc - ddof))


def var_value(
    c: float,
    s: float,
    q: float,
    *,
    ddof: int,
    half_width: float,
    upper_range: float,
    clamp: bool,
    noise_sd: float = math.nan,
) -> float:
    """``(Q - S²/C') / (C' - ddof)``, ``C' = max(C, ddof + 1)``, clamped unless told not to.

    The clamp is to ``[0, min(upper_range, variance_cap(C, S))]``: the public range
    of the statistic and the largest variance the noisy count and mean allow
    (:func:`variance_cap`; ``half_width`` is half the declared range). Where the
    noise's standard deviation ``noise_sd``
    (:func:`~pandas_dp.stats.shrinkage.variance_noise_sd`) is large against that range,
    the clamped value gives way to a posterior mean over it
    (:func:`~pandas_dp.stats.shrinkage.shrunk_variance`).
    ``S²/C'`` is computed as ``(S/C') S`` (no overflow of ``S²`` where ``C'`` is
    large). Noisy statistics beyond the float range that leave the expression
    undefined (``inf - inf``, ``inf / inf``) give the middle of the public range
    (0 where the range is unbounded): they carry no usable information.

    Examples
    --------
    >>> var_value(1e300, 1e200, 1e300, ddof=1, half_width=5.0, upper_range=50.0, clamp=True)
    1.0
    >>> var_value(math.inf, 1e200, math.inf, ddof=1, half_width=5.0, upper_range=50.0, clamp=True)
    25.0
    >>> var_value(10.0, -40.0, 900.0, ddof=0, half_width=5.0, upper_range=50.0, clamp=True)
    9.0
    """
    cc = max(c, ddof + 1.0)
    value = (q - s / cc * s) / (cc - ddof)
    if math.isnan(value):
        value = upper_range / 2.0 if math.isfinite(upper_range) else 0.0
    if not clamp:
        return value
    top = min(upper_range, variance_cap(c, s, ddof=ddof, half_width=half_width))
    return shrunk_variance(value, noise_sd, top)


def noisy_interval(noise: NoisePlan, value: float, alpha: float) -> tuple[float, float]:
    """``value ± halfwidth`` intersected with the noise plan's public range.

    Both ends are clipped into the range, so a release outside it (possible with
    ``bounding="none"``) gives an interval at the range's end, never one with
    ``lower > upper``.
    """
    h = float(halfwidth(noise, alpha)[0])
    bottom, top = float(noise.lower[0]), float(noise.upper[0])
    lo, hi = value - h, value + h
    # an infinite release (a sum beyond the float range) and half-width: the range's end
    lo = bottom if math.isnan(lo) else min(max(lo, bottom), top)
    hi = top if math.isnan(hi) else min(max(hi, bottom), top)
    if noise.integer:
        lo = math.ceil(lo) if math.isfinite(lo) else lo
        hi = math.floor(hi) if math.isfinite(hi) else hi
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
    return _ratio_box(lower + 0.5 * (upper - lower), c_lo, c_hi, s_lo, s_hi, lower, upper)


def recentred_mean_interval(
    c_noise: NoisePlan,
    s_noise: NoisePlan,
    t_noise: NoisePlan,
    c: float,
    s: float,
    t: float,
    lower: float,
    upper: float,
    alpha: float,
) -> tuple[float, float]:
    """Range of ``c + h T / N`` over the box of the count's and ``T``'s intervals.

    ``c`` and ``h`` are the second stage's centre and reach (from the released
    ``C`` and ``S``); the exact mean is ``c + (S - d N) / N``, and ``h T`` measures
    ``S - d N``.
    """
    centre = recentre(c, s, (c_noise.variance, s_noise.variance), lower, upper)
    h = reach(centre, lower, upper)
    c_lo, c_hi = noisy_interval(c_noise, c, alpha / 2.0)
    t_lo, t_hi = noisy_interval(t_noise, t, alpha / 2.0)
    return _ratio_box(centre, c_lo, c_hi, h * t_lo, h * t_hi, lower, upper)


def _ratio_box(
    centre: float, c_lo: float, c_hi: float, s_lo: float, s_hi: float, lower: float, upper: float
) -> tuple[float, float]:
    """Range of ``centre + S / C`` for ``S`` in ``[s_lo, s_hi]``, ``C`` in ``[c_lo, c_hi]``
    (at least 1), clamped to the bounds."""
    c_lo, c_hi = max(c_lo, 1.0), max(c_hi, 1.0)
    corners = [s_lo / c_lo, s_lo / c_hi, s_hi / c_lo, s_hi / c_hi]
    lo = min(max(centre + min(corners), lower), upper)
    hi = min(max(centre + max(corners), lower), upper)
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


def independent_box(
    c_noise: NoisePlan, c: float, s_noise: NoisePlan, s: float, alpha: float
) -> tuple[float, float, float, float]:
    """``(c_lo, c_hi, s_lo, s_hi)``: a noisy count's and centred sum's intervals, each
    at ``alpha / 2``, so that the box holds both exact values with probability at
    least ``1 - alpha`` (the ``box`` of :func:`var_interval_of` for independent
    noises; :func:`bound_sums_box` is the other)."""
    c_lo, c_hi = noisy_interval(c_noise, c, alpha / 2.0)
    s_lo, s_hi = noisy_interval(s_noise, s, alpha / 2.0)
    return c_lo, c_hi, s_lo, s_hi


def var_interval_of(
    box: Callable[[float], tuple[float, float, float, float]],
    q_noise: NoisePlan,
    q: float,
    ddof: int,
    upper_range: float,
    alpha: float,
    *,
    half_width: float = math.inf,
) -> tuple[float, float]:
    """Range of ``(Q - S²/C)/(C - ddof)`` over the box of count, sum and squares.

    ``box(alpha')`` gives ``(c_lo, c_hi, s_lo, s_hi)``, a box that holds the exact
    count and centred sum with probability at least ``1 - alpha'``
    (:func:`independent_box`, :func:`bound_sums_box`); it gets two thirds of
    ``alpha``, the squares' interval one. The expression grows with ``Q`` and
    shrinks with ``S²``; in ``C`` its derivative has the sign of
    ``-Q C² + 2 S² C - ddof S²``, so its extremes lie at the ends of the count's
    interval or at the roots ``C = (S² ± sqrt(S⁴ - ddof Q S²)) / Q`` (minimum and
    maximum alike). The upper end is at most the largest :func:`variance_cap` over
    the box (``half_width`` half the declared range), which the exact variance
    respects: ``(h² - d²) C/(C - ddof)`` is at most its value at the box's smallest
    ``C`` and smallest ``|d| = |S|/C`` (each factor at its largest). Where a side
    of the box is undefined (sums near the float range) the range is the whole
    public one, ``[0, upper_range]``.
    """
    c_lo, c_hi, s_lo, s_hi = box(2.0 * alpha / 3.0)
    q_lo, q_hi = noisy_interval(q_noise, q, alpha / 3.0)
    if any(math.isnan(x) for x in (c_lo, c_hi, s_lo, s_hi, q_lo, q_hi)):
        return 0.0, upper_range
    c_lo, c_hi = max(c_lo, ddof + 1.0), max(c_hi, ddof + 1.0)
    s_near = 0.0 if s_lo <= 0.0 <= s_hi else min(abs(s_lo), abs(s_hi))
    upper_range = min(
        upper_range, variance_cap(c_lo, s_near * c_lo / c_hi, ddof=ddof, half_width=half_width)
    )
    s2_min = 0.0 if s_lo <= 0.0 <= s_hi else min(s_lo * s_lo, s_hi * s_hi)
    s2_max = max(s_lo * s_lo, s_hi * s_hi)
    lows = _candidates(q_lo, s2_max, c_lo, c_hi, ddof)
    highs = _candidates(q_hi, s2_min, c_lo, c_hi, ddof)
    # (an undefined corner, inf - inf or inf / inf, bounds nothing on its side)
    low = 0.0 if any(math.isnan(x) for x in lows) else min(lows)
    high = upper_range if any(math.isnan(x) for x in highs) else max(highs)
    lo = min(max(low, 0.0), upper_range)
    hi = min(max(high, 0.0), upper_range)
    return lo, hi
