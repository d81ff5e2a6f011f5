"""Calibration for the worst vector of shifts one record (one privacy unit) can make.

A privacy unit keeps at most ``k`` rows, in at most ``g`` groups, ``c`` in each
(REFERENCE.md §9, §10), so it may move several entries of a noised vector
*partially*: three group counts by ``(2, 2, 1)`` when ``k = 5, c = 2``, or ``k``
counts by one each when its rows sit in ``k`` groups or categories. One entry
moved by its whole sensitivity is then not the worst case:

* the truncated Laplace (:func:`truncated_scale_for`) pays its renormalisation once
  per moved entry; its loss is concave in the shift, so the worst vector spreads
  the shift as evenly as it can over as many entries as it can
  (:func:`worst_shifts`);
* the discrete Gaussian (:func:`discrete_gaussian_sigma_for`) is calibrated on the
  exact privacy curve of ``floor(l1)`` entries moved fully and one by the remainder
  (:func:`discrete_gaussian_delta_parts`).

:mod:`pandas_dp.noise.plans` calls both with the bounds a plan derives from the
contribution bounds. Checked exactly, over every feasible shift vector, in
``tests/test_calibration_units.py``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from pandas_dp.noise.mechanisms.calibration import (
    _discrete_gaussian_pmf,
    bisect_decreasing,
    discrete_gaussian_delta,
    discrete_gaussian_sigma,
    gaussian_sigma,
    smallest_sigma,
    summed_pmf,
    truncated_discrete_laplace_scale,
    truncated_discrete_loss,
    truncated_laplace_scale,
)

__all__ = [
    "discrete_gaussian_delta_parts",
    "discrete_gaussian_sigma_for",
    "truncated_scale_for",
    "worst_shifts",
]

FloatArray = NDArray[np.float64]


def _whole(value: float) -> int:
    """``floor(value)``, forgiving the last bits of a product meant to be a whole number."""
    return math.floor(value + 1e-9 * max(1.0, abs(value)))


def _entries(value: float) -> int:
    """A number of entries given as a float: ``ceil(value)`` (at least 1), forgiving
    the last bits of a float meant to be a whole number."""
    return max(1, math.ceil(value - 1e-9 * max(1.0, abs(value))))


def worst_shifts(
    sensitivity: int, joint_l1: float, max_changed: float
) -> tuple[tuple[int, int], ...]:
    """The integer shift vector of largest privacy loss for a concave per-entry loss.

    One record moves each entry by at most ``sensitivity``, all of them by at most
    ``T = floor(joint_l1 * sensitivity)`` in all, and at most ``max_changed`` of
    them. When the loss of an entry is a concave, non-decreasing function ``f`` of
    its shift with ``f(0) = 0`` (truncated Laplace: REFERENCE.md §3),
    ``sum_i f(d_i)`` is largest when ``T`` is spread as evenly as it can be over as
    many entries as it can be: ``f`` is subadditive (splitting a shift never lowers
    the sum) and moving one unit of shift from a larger to a smaller one never
    lowers it either. So ``n = min(max_changed, T)`` entries move, ``T mod n`` of
    them by ``T // n + 1`` and the others by ``T // n``.

    Parameters
    ----------
    sensitivity : int
        Largest shift of one entry.
    joint_l1 : float
        Largest sum of the shifts, in units of ``sensitivity``.
    max_changed : float
        Largest number of entries moved.

    Returns
    -------
    tuple of (shift, count)
        The non-zero shifts of the worst vector and how many entries have each.

    Examples
    --------
    One unit with four rows in four groups, at most four rows in one group:

    >>> worst_shifts(4, 1.0, 4)
    ((1, 4),)
    >>> worst_shifts(2, 2.5, 3)
    ((2, 2), (1, 1))
    """
    most = _entries(max_changed)
    total = min(max(1, _whole(joint_l1 * sensitivity)), most * sensitivity)
    n = min(most, total)
    base, extra = divmod(total, n)
    return tuple((v, c) for v, c in ((base + 1, extra), (base, n - extra)) if c > 0 and v > 0)


def truncated_scale_for(
    sens: FloatArray,
    paid: FloatArray,
    width: FloatArray,
    integer: bool,
    joint_l1: float,
    max_changed: float,
    epsilon: float,
) -> FloatArray:
    """Truncated Laplace scales at which the worst shift vector loses ``epsilon``.

    Truncation renormalises each entry by a constant that depends on its true value,
    and that costs privacy once per moved entry: a unit moving ``m`` counts by one
    each pays it ``m`` times, so calibrating for one entry moved by the whole
    sensitivity is not enough. The loss of one entry is concave in its shift, so
    the worst vector is :func:`worst_shifts`'s; for entries that share their
    sensitivity and range the scale is the smallest at which its loss is
    ``epsilon`` (exactly the one-entry calibration of
    :func:`~pandas_dp.noise.mechanisms.truncated_laplace_scale` at ``epsilon / n`` when
    its ``n`` shifts are equal). Otherwise each entry is calibrated for its whole
    sensitivity at ``epsilon / max_changed``. Real releases pay the grid rounding:
    up to one step more per moved entry.
    """
    k = sens.size
    uniform = bool(
        k > 0
        and np.all(paid == paid[0])
        and np.all(width == width[0])
        and (integer or np.all(sens == sens[0]))
    )
    w = float(width[0]) if k else math.inf
    # (a range without room for one step is refused as before, by the calibration below)
    whole = float(paid[0]) == math.floor(float(paid[0])) and w >= 1.0 if integer else True
    if not (uniform and whole):
        eps_i = epsilon / max_changed
        if integer:
            return truncated_discrete_laplace_scale(paid, width, eps_i)
        return truncated_laplace_scale(paid, width, eps_i)
    parts: tuple[tuple[float, int], ...]
    if integer:
        parts = tuple((float(v), c) for v, c in worst_shifts(int(paid[0]), joint_l1, max_changed))
    else:
        # the exact values move by joint_l1 Delta in all; each moved entry's rounded
        # value by up to one grid step more
        step = float(paid[0] - sens[0])
        n = _entries(max_changed)
        total = joint_l1 * float(sens[0]) + n * step
        parts = ((min(total / n, float(paid[0])), n),)
    if len(parts) == 1:  # n equal shifts: each at epsilon / n
        shift, count = parts[0]
        if integer:
            scale = truncated_discrete_laplace_scale(shift, w, epsilon / count)
        else:
            scale = truncated_laplace_scale(shift, w, epsilon / count)
        return np.full(k, float(scale[0]))

    def loss(t: FloatArray) -> FloatArray:
        return np.asarray(sum(c * truncated_discrete_loss(d, w, t) for d, c in parts))

    # every entry's loss is at least shift / t: the scale is at least total / epsilon
    lo = sum(c * min(d, w) for d, c in parts) / epsilon
    scale = bisect_decreasing(loss, np.array([epsilon]), np.array([lo]))
    return np.full(k, float(scale[0]))


def discrete_gaussian_delta_parts(
    sigma: float, full: int, count: int, rest: int, epsilon: float
) -> float:
    """Exact delta of ``N_Z(0, sigma^2)`` noise on a vector moved by ``(full x count, rest)``.

    ``count`` coordinates shifted by ``full`` and one by ``rest`` (none if ``0``).
    The privacy loss is ``L = L_A + l_b`` with ``A`` the sum of the ``count`` noises
    and ``b`` the last one: ``L_A = (count full^2 - 2 full A) / (2 sigma^2)``,
    ``l_b = (rest^2 - 2 rest b) / (2 sigma^2)``. Given ``b``, ``L > epsilon`` when
    ``A < tau_b``, and ``E[(1 - e^{epsilon - L})_+ | b]`` is
    ``P(A < tau_b) - e^{epsilon - l_b} P(A < tau_b - count full)`` (the weights
    ``e^{-L_A}`` shift ``A``'s law by ``count full``). The mass outside the windows is
    counted as if it lost everything: an upper bound, tight as
    :func:`~pandas_dp.noise.mechanisms.discrete_gaussian_delta` (which it equals for
    ``rest = 0``).

    Parameters
    ----------
    sigma : float
        Positive noise parameter (in integer units).
    full, count : int
        Shift of the fully moved coordinates (``>= 1``) and how many there are (``>= 0``).
    rest : int
        Shift of one more coordinate (``0 <= rest``; ``0`` for none).
    epsilon : float
        Non-negative epsilon.

    Returns
    -------
    float

    Examples
    --------
    >>> from pandas_dp.noise.mechanisms import discrete_gaussian_delta
    >>> a = discrete_gaussian_delta_parts(3.0, 2, 2, 0, 1.0)
    >>> abs(a - discrete_gaussian_delta(3.0, 2, 1.0, 2)) < 1e-15
    True
    >>> discrete_gaussian_delta_parts(3.0, 2, 2, 1, 1.0) > a
    True
    """
    if rest == 0:
        return discrete_gaussian_delta(sigma, full, epsilon, count)
    if count == 0:
        return discrete_gaussian_delta(sigma, rest, epsilon, 1)
    s2 = sigma * sigma
    dist, h, lost = summed_pmf(sigma, count, math.ceil(14.0 * sigma) + full + 2)
    cdf = np.concatenate(([0.0], np.cumsum(dist)))  # cdf[j] = P(A < j - h)
    half_b = math.ceil(14.0 * sigma) + rest + 2
    p_b, lost_b = _discrete_gaussian_pmf(sigma, half_b)
    b = np.arange(-half_b, half_b + 1, dtype=np.float64)
    ell = (rest * rest - 2.0 * rest * b) / (2.0 * s2)
    tau = (count * full * full - 2.0 * s2 * (epsilon - ell)) / (2.0 * full)

    # the hit values are a <= ceil(tau) - 1, paired with a - count full in the second
    # term: one rounding of tau for both (a tie, L = epsilon, adds 0 either way)
    first = np.ceil(tau) + h
    j = np.clip(first, 0, 2 * h + 1).astype(np.int64)
    j_shifted = np.clip(first - count * full, 0, 2 * h + 1).astype(np.int64)
    # (an exponent above 700 only meets a vanishing probability: capping it errs safe)
    weight = np.exp(np.minimum(epsilon - ell, 700.0))
    given_b = np.maximum(cdf[j] - weight * cdf[j_shifted], 0.0)
    return min(float(np.dot(p_b, given_b)) + lost + lost_b, 1.0)


def discrete_gaussian_sigma_for(
    sensitivity: int, joint_l1: float, max_changed: float, epsilon: float, delta: float
) -> float:
    """Smallest discrete Gaussian ``sigma`` that is (epsilon, delta)-DP for every shift
    vector one record can make: entries moved by at most ``sensitivity``, by
    ``joint_l1 * sensitivity`` in all, at most ``max_changed`` of them.

    The worst is ``floor(joint_l1)`` entries moved fully and one by the remainder
    (at most ``max_changed`` in all): it has the largest L2 norm, and no other
    vector's exact delta exceeds its (brute-forced over every integer shift vector
    in ``tests/test_calibration_units.py``). Bisection on
    :func:`discrete_gaussian_delta_parts` to a relative ``1e-6``, from above.
    """
    d = int(sensitivity)
    most = _entries(max_changed)
    total = max(1, _whole(joint_l1 * d))
    count = min(most, total // d)
    rest = total - count * d if count < most else 0
    if rest == 0:
        return discrete_gaussian_sigma(d, epsilon, delta, count)
    if count == 0:
        return discrete_gaussian_sigma(rest, epsilon, delta, 1)

    def too_small(sig: float) -> bool:
        return discrete_gaussian_delta_parts(sig, d, count, rest, epsilon) > delta

    norm = math.sqrt(count * d * d + rest * rest)
    start = gaussian_sigma(norm, epsilon, delta)
    return smallest_sigma(too_small, start, f"epsilon={epsilon}, delta={delta}")
