"""Add the noise a :class:`~pandas_dp.noise.plans.NoisePlan` calibrated, and bound the output.

Three output bounding modes (Liu 2019, Definition 2):

``"none"``
    The raw noisy value.
``"bit"``
    Boundary-inflated truncation: clamp to the statistic's public range. Pure
    post-processing, so the release keeps its epsilon exactly.
``"truncated"``
    A draw of the noisy value conditioned on lying inside the range. The
    renormalising constant depends on the true value, so the Laplace scale is
    *re-calibrated* (:func:`~pandas_dp.noise.mechanisms.truncated_laplace_scale`) to
    keep the release epsilon-DP; the naive scale ``Delta / epsilon`` would not.

The plan -- scales, grid steps, ranges -- is calibrated from public facts by
:mod:`pandas_dp.noise.plans` (:func:`plan_noise` is importable from here too).
This module draws the noise and applies the bounding mode, on numpy vectors; it
knows nothing of pandas. Real-valued releases are made on a power-of-two grid
(REFERENCE.md §4): the exact value is rounded to the grid, an integer noise draw
times the grid spacing is added, and the extra sensitivity of the rounding (one
grid step) is paid for by the plan. :func:`halfwidth` gives the intervals.

Examples
--------
>>> import numpy as np
>>> from pandas_dp.noise.mechanisms import RandomSource
>>> plan = plan_noise(np.array([1.0]), np.array([0.0]), np.array([10.0]),
...                   epsilon=1.0, mechanism="laplace", bounding="bit")
>>> round(float(plan.scale[0]), 6)
1.0
>>> x = apply_noise(np.array([5.0]), plan, RandomSource(0))
>>> bool(0.0 <= x[0] <= 10.0)
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from pandas_dp.noise import mechanisms as mech
from pandas_dp.noise.mechanisms import small
from pandas_dp.noise.mechanisms.constants import SMALL_SIZE
from pandas_dp.noise.plans import NoisePlan, plan_noise, range_centre

__all__ = [
    "apply_noise",
    "apply_noise_clamped",
    "apply_noise_exact",
    "halfwidth",
    "l1_radius",
    "plan_noise",
]

FloatArray = NDArray[np.float64]


def _grid_units(x: FloatArray, c: FloatArray, g: FloatArray, mode: str) -> FloatArray:
    """``round``, ``floor`` or ``ceil`` of ``(x - c) / g``, computed exactly.

    ``x - c`` is split exactly into ``d + err`` (Knuth's two-sum); ``g`` is a power of
    two, so ``d / g`` and ``err / g`` are exact, and the rounding of ``d / g`` is
    corrected by the sign of ``err`` where ``d / g`` sits exactly on a boundary.
    """
    d = x - c
    bb = d - x
    err = (x - (d - bb)) + (-c - bb)
    q = d / g
    e = err / g
    if mode == "round":
        n = np.rint(q)
        frac = q - n  # exact: |frac| <= 1/2
        n = n + ((frac == 0.5) & (e > 0)) - ((frac == -0.5) & (e < 0))
    elif mode == "floor":
        n = np.floor(q)
        n = n - ((q == n) & (e < 0))
    else:
        n = np.ceil(q)
        n = n + ((q == n) & (e > 0))
    return np.asarray(n, dtype=np.float64)


def _draw_small(plan: NoisePlan, src: mech.RandomSource) -> list[int]:
    """:func:`_draw` for a plan of at most ``SMALL_SIZE`` entries, as Python ints.

    The same sampler on the same scales (:mod:`pandas_dp.noise.mechanisms.small`), so
    the same draws as :func:`_draw`.
    """
    if plan.mechanism == "gaussian":
        return small.discrete_gaussian(plan.units, src)
    return small.discrete_laplace_split(plan.laplace_split, src)


def _draw(plan: NoisePlan, src: mech.RandomSource) -> FloatArray:
    """Integer noise draws (as floats), in grid units."""
    t = plan.scale / plan.granularity
    if plan.mechanism == "gaussian":
        return mech.discrete_gaussian(t, src).astype(np.float64)
    return mech.discrete_laplace(t, src).astype(np.float64)


def apply_noise(theta: FloatArray, plan: NoisePlan, src: mech.RandomSource) -> FloatArray:
    """Release ``theta`` (exact values, inside their ranges) under ``plan``.

    Integer plans add integer noise to ``theta``. Real-valued plans release
    ``c + g M`` with ``c`` the public midpoint of the range (0 for an infinite
    range), ``g`` the grid step and ``M = round((theta - c) / g) + K`` an integer
    (the rounding computed exactly); ``c + g M`` is a function of ``M`` and public
    values only (post-processing). Returns a float vector; for an integer plan its
    values are whole numbers.
    """
    theta = np.asarray(theta, dtype=np.float64)
    g = plan.granularity
    if _few_counts(plan, theta.size):
        return _noise_few_counts(theta.ravel().tolist(), plan, src).reshape(theta.shape)
    if plan.integer:
        c = np.zeros_like(theta)
        m0 = theta
    else:
        c, _ = range_centre(plan.lower, plan.upper)
        m0 = _grid_units(theta, c, g, "round")
    if plan.bounding != "truncated":
        out = c + g * (m0 + _draw(plan, src))
        if plan.bounding == "bit":
            np.minimum(np.maximum(out, plan.lower, out=out), plan.upper, out=out)
        return np.asarray(out, dtype=np.float64)

    # the integer range of M, and the centre kept inside it (a 1-Lipschitz map)
    if plan.integer:
        m_lo, m_hi = np.ceil(plan.lower), np.floor(plan.upper)
    else:
        # an infinite end stays infinite (and no inf - inf is computed)
        lo_ok, hi_ok = np.isfinite(plan.lower), np.isfinite(plan.upper)
        m_lo = np.where(lo_ok, _grid_units(np.where(lo_ok, plan.lower, c), c, g, "ceil"), -np.inf)
        m_hi = np.where(hi_ok, _grid_units(np.where(hi_ok, plan.upper, c), c, g, "floor"), np.inf)
    one_point = ~(plan.upper > plan.lower)
    m0 = np.clip(m0, m_lo, np.maximum(m_hi, m_lo))
    below = np.where(one_point, 0.0, m0 - m_lo)  # an infinite lower end: inf
    above = np.where(one_point, 0.0, m_hi - m0)
    k = mech.truncated_discrete_laplace(plan.scale / g, below, above, src).astype(np.float64)
    out = c + g * (m0 + k)
    out[one_point] = plan.lower[one_point]
    return np.asarray(np.clip(out, plan.lower, plan.upper), dtype=np.float64)


def _few_counts(plan: NoisePlan, size: int) -> bool:
    """Whether ``size`` values under ``plan`` take the small-vector count path."""
    return (
        plan.integer
        and plan.bounding != "truncated"
        and size <= SMALL_SIZE
        and size == plan.scale.size
    )


def _noise_few_counts(theta: list[float], plan: NoisePlan, src: mech.RandomSource) -> FloatArray:
    """:func:`apply_noise` of a few counts (inside their ranges): the same float
    operations as the vector path on Python floats, no numpy round trips (c = 0)."""
    draws = _draw_small(plan, src)
    released = [
        0.0 + gi * (t + float(d))
        for t, (gi, _, _), d in zip(theta, plan.entries, draws, strict=True)
    ]
    if plan.bounding == "bit":
        released = [
            min(max(o, lo), hi) for o, (_, lo, hi) in zip(released, plan.entries, strict=True)
        ]
    return np.array(released, dtype=np.float64)


def apply_noise_clamped(counts: FloatArray, plan: NoisePlan, src: mech.RandomSource) -> FloatArray:
    """:func:`apply_noise` of exact counts clamped into the plan's range first.

    A few counts are clamped as Python floats: ``min(max(t, lo), hi)`` is
    ``np.minimum(np.maximum(t, lo), hi)`` for whole numbers (never NaN, never
    ``-0.0``), which is what counts are.
    """
    if _few_counts(plan, counts.size):
        theta = [
            min(max(t, lo), hi)
            for t, (_, lo, hi) in zip(counts.ravel().tolist(), plan.entries, strict=True)
        ]
        return _noise_few_counts(theta, plan, src).reshape(counts.shape)
    # np.clip's two ufuncs, without its Python wrapper
    return apply_noise(np.minimum(np.maximum(counts, plan.lower), plan.upper), plan, src)


def apply_noise_exact(
    values: Sequence[Fraction] | NDArray[np.object_], plan: NoisePlan, src: mech.RandomSource
) -> FloatArray:
    """:func:`apply_noise` for exact rational values (a real-valued plan).

    The engine's sums are exact rationals (integers times power-of-two steps); here
    ``M = round((theta - c) / g)`` and ``M + K`` are Python integers, so nothing is
    lost to floating point however large ``theta / g`` is, and the release
    ``c + g (M + K)`` -- rounded once to a double -- is a function of ``M + K`` and
    public values only. Values are clamped into the plan's range first.
    """
    if plan.integer:
        raise ValueError("apply_noise_exact is for real-valued plans; counts use apply_noise")
    if plan.bounding != "truncated" and len(values) == plan.scale.size:
        if len(values) <= SMALL_SIZE:
            return _apply_exact_integers(values, plan, _draw_small(plan, src))
        return _apply_exact_integers(values, plan, _draw(plan, src).tolist())
    c_arr, _ = range_centre(plan.lower, plan.upper)
    units = []
    for i, v in enumerate(values):
        lo, hi = float(plan.lower[i]), float(plan.upper[i])
        x = Fraction(v)
        if math.isfinite(lo):
            x = max(x, Fraction(lo))
        if math.isfinite(hi):
            x = min(x, Fraction(hi))
        c, g = Fraction(float(c_arr[i])), Fraction(float(plan.granularity[i]))
        m0 = round((x - c) / g)
        if plan.bounding == "truncated":
            m_lo = math.ceil((Fraction(lo) - c) / g) if math.isfinite(lo) else None
            m_hi = math.floor((Fraction(hi) - c) / g) if math.isfinite(hi) else None
            if m_lo is not None and m_hi is not None:
                m_hi = max(m_hi, m_lo)  # a range narrower than a step: its one grid point
            # keep the centre inside the integer range (a 1-Lipschitz map)
            m0 = m0 if m_lo is None else max(m0, m_lo)
            m0 = m0 if m_hi is None else min(m0, m_hi)
            units.append((c, g, m0, m_lo, m_hi))
        else:
            units.append((c, g, m0, None, None))
    if plan.bounding == "truncated":
        # lengths beyond 2**53 grid steps (thousands of scales) round to a double:
        # the boundary moves where the distribution has mass below e**-8000
        below = np.array([math.inf if u[3] is None else float(u[2] - u[3]) for u in units])
        above = np.array([math.inf if u[4] is None else float(u[4] - u[2]) for u in units])
        draws: NDArray[Any] = mech.truncated_discrete_laplace(
            plan.scale / plan.granularity, below, above, src
        )
    else:
        draws = _draw(plan, src)
    out = np.array(
        [
            _ratio(*(c + g * (m0 + int(k))).as_integer_ratio())
            for (c, g, m0, _, _), k in zip(units, draws, strict=True)
        ],
        dtype=np.float64,
    )
    if plan.bounding != "none":
        np.minimum(np.maximum(out, plan.lower, out=out), plan.upper, out=out)
    return out


def _ratio(num: int, den: int) -> float:
    """``num / den`` (``den > 0``) correctly rounded, or an infinity beyond the float
    range (a sum of values near the largest double may exceed it)."""
    try:
        return num / den
    except OverflowError:
        return math.inf if num > 0 else -math.inf


def _round_half_even(num: int, den: int) -> int:
    """``round(num / den)`` with ties to even (as ``round`` of a Fraction), ``den > 0``."""
    q, r = divmod(num, den)
    twice = 2 * r
    if twice < den:
        return q
    if twice > den:
        return q + 1
    return q + (q & 1)


def _apply_exact_integers(
    values: Sequence[Fraction] | NDArray[np.object_],
    plan: NoisePlan,
    draws: Sequence[int] | Sequence[float],
) -> FloatArray:
    """:func:`apply_noise_exact` (``bit`` or ``none``) in integers, given the draws.

    With ``x = p / q`` (the value, clamped into the range), the centre ``cn / cd``
    and the step ``gn / gd``: ``M = round((x - c) / g)`` is the half-even rounding
    of ``(p cd - cn q) gd / (q cd gn)``, and the release ``c + g (M + K)`` is
    ``(cn gd + (M + K) gn cd) / (cd gd)``, one correctly rounded int division.
    The same numbers as the Fraction arithmetic of the truncated path, which the
    tests check; several times faster (a grouped release noises thousands).
    ``draws`` are whole numbers (Python ints, or the vector sampler's floats).
    """
    grid = plan.exact_grid
    out = []
    for v, (cn, cd, gn, gd, lo, hi, lo_r, hi_r), k in zip(values, grid, draws, strict=True):
        if isinstance(v, Fraction | int):
            p, q = v.numerator, v.denominator
        else:
            p, q = Fraction(v).as_integer_ratio()
        # clamp p / q into the range, exactly (q and the ends' denominators are > 0)
        if lo_r is not None and p * lo_r[1] < lo_r[0] * q:
            p, q = lo_r
        if hi_r is not None and p * hi_r[1] > hi_r[0] * q:
            p, q = hi_r
        m0 = _round_half_even((p * cd - cn * q) * gd, q * cd * gn)
        release = _ratio(cn * gd + (m0 + int(k)) * gn * cd, cd * gd)
        if plan.bounding != "none":
            release = min(max(release, lo), hi)
        out.append(release)
    return np.array(out, dtype=np.float64)


def halfwidth(plan: NoisePlan, alpha: float) -> FloatArray:
    """Per-entry half-width ``h`` with ``P(|release - exact| > h) <= alpha``.

    REFERENCE.md §7: ``s ln(1/alpha)`` for Laplace with ``none`` or ``bit`` (a
    clamp never moves a release away from a value inside the range);
    ``s ln(1/(alpha C_min))`` for ``truncated``, with ``C_min`` the smallest
    probability of the range; the sub-Gaussian tail for the Gaussian. The Laplace
    half-widths are widened for the discreteness of the noise
    (:func:`~pandas_dp.noise.mechanisms.laplace_halfwidth`), and half a grid step is
    added for the rounding of a real value to the grid, and half a unit in the
    last place for the rounding of the centred release ``c + g M`` to a double.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1); got {alpha}")
    with np.errstate(over="ignore", invalid="ignore"):  # scales near the float range
        return _halfwidth(plan, alpha)


def _halfwidth(plan: NoisePlan, alpha: float) -> FloatArray:
    """:func:`halfwidth` once ``alpha`` is checked (an overflow gives an infinite one)."""
    if plan.mechanism == "gaussian":
        h = mech.gaussian_halfwidth(plan.scale, alpha)
    elif plan.bounding == "truncated":
        # P(|noise| > h | in range) <= P(|noise| > h) / C_min
        h = mech.laplace_halfwidth(plan.scale, alpha * plan.min_mass, plan.granularity)
    else:
        h = mech.laplace_halfwidth(plan.scale, alpha, plan.granularity)
    if not plan.integer:
        h = h + plan.granularity / 2.0
        # c + g M is rounded to a double: at most half a unit in the last place of
        # the largest value the release can take when the noise is within h
        c, half = range_centre(plan.lower, plan.upper)
        reach = np.abs(c) + half + h + plan.granularity
        ulp = np.where(np.isfinite(reach), np.spacing(reach) / 2.0, np.inf)
        h = h + np.where(c != 0.0, ulp, 0.0)
    return np.asarray(h, dtype=np.float64)


def l1_radius(plan: NoisePlan, alpha: float) -> float:
    """Radius ``t`` with ``P(|r_1 - v_1| + |r_2 - v_2| > t) <= alpha`` for the two
    entries of a Laplace plan (``bit`` or ``none``; the bound sums), ``r`` the
    releases and ``v`` the exact values.

    A grid noise ``g K`` (``K`` discrete Laplace, ``q = e^{-g/s}``) has
    ``P(|g K| > h) = 2 q^{floor(h/g)+1} / (1 + q) <= e^{-(h - g)/s}``: it is
    stochastically below ``|L| + g``, ``L`` Laplace of scale ``s``. So the sum of
    two is below a Gamma(2, ``s``) plus ``2 g``, whose tail is
    ``e^{-x} (1 + x)`` at ``s x``. Each entry adds its rounding to the grid
    (``g / 2``) and to a double (as in :func:`halfwidth`); a clamp into the range
    moves no release away from a value inside it. Against the box of the two
    entries' intervals (``alpha / 2`` each), whose L1 corner is ``2 s ln(2 /
    alpha)``, this is ``s x``: at ``alpha = 0.05``, 4.74 s against 7.38 s.

    Examples
    --------
    >>> p = plan_noise(np.full(2, 0.5), np.zeros(2), np.full(2, np.inf), epsilon=1.0)
    >>> round(l1_radius(p, 0.05), 2)
    4.74
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1); got {alpha}")
    s, g = float(plan.scale[0]), float(plan.granularity[0])
    target = math.log(1.0 / alpha)
    x = target + math.log1p(target)  # x - ln(1 + x) = ln(1 / alpha), by Newton
    for _ in range(50):
        step = (x - math.log1p(x) - target) * (1.0 + x) / x
        x -= step
        if abs(step) <= 1e-15 * x:
            break
    x *= 1.0 + 1e-12  # (the root from above)
    t = s * x + 2.0 * g
    if not plan.integer:
        t += g  # each entry's rounding to the grid, g / 2
        with np.errstate(over="ignore", invalid="ignore"):
            c, half = range_centre(plan.lower, plan.upper)
            reach = abs(float(c[0])) + float(half[0]) + t + g
        if float(c[0]) != 0.0:
            t += float(np.spacing(reach)) if math.isfinite(reach) else math.inf
    return t
