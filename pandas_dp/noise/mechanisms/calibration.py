"""Calibration: noise scales from (epsilon, delta, sensitivity), and the release grid.

* :func:`grid_granularity` -- the power-of-two grid on which real-valued releases
  are made, so that no output carries information in its low-order float bits
  (Mironov 2012). A real value ``theta`` is released as
  ``gamma * (round(theta / gamma) + K)`` with ``K`` an integer noise draw;
* :func:`gaussian_sigma` (analytic Gaussian, Balle & Wang 2018),
  :func:`discrete_gaussian_delta` / :func:`discrete_gaussian_sigma` (the discrete
  Gaussian's exact privacy curve, Canonne, Kamath & Steinke 2020);
* :func:`truncated_laplace_scale` / :func:`truncated_discrete_laplace_scale` (the
  scale at which Laplace noise truncated to a public range is still epsilon-DP;
  Holohan et al. 2020).

All of it is a function of public values only.

Examples
--------
>>> round(gaussian_sigma(1.0, 1.0, 1e-5), 4)
3.7306
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pandas_dp.noise.mechanisms.constants import GRID_BITS, MAX_SCALE

__all__ = [
    "bisect_decreasing",
    "discrete_gaussian_delta",
    "discrete_gaussian_sigma",
    "gaussian_sigma",
    "grid_granularity",
    "smallest_sigma",
    "summed_pmf",
    "truncated_discrete_laplace_scale",
    "truncated_discrete_loss",
    "truncated_laplace_scale",
]

FloatArray = NDArray[np.float64]

_MANTISSA_BITS: Final = 52
_TINY: Final = float(np.finfo(np.float64).tiny)


# --------------------------------------------------------------------------- the grid


def grid_granularity(scale: ArrayLike, magnitude: ArrayLike) -> FloatArray:
    """Power-of-two grid spacing for real-valued releases.

    The spacing is ``2**GRID_BITS`` times finer than the noise ``scale`` (so the
    grid is invisible next to the noise), and coarse enough that every grid point
    of absolute value up to ``magnitude`` (the largest public value the release
    can take, e.g. ``max(|lower|, |upper|)``) is an exact double.

    Examples
    --------
    >>> float(grid_granularity(1.0, 100.0)[0]) == 2.0**-40
    True
    """
    s = np.atleast_1d(np.asarray(scale, dtype=np.float64))
    m = np.atleast_1d(np.asarray(magnitude, dtype=np.float64))
    m = np.where(np.isfinite(m), m, 0.0)
    finest = np.maximum(np.maximum(s * 2.0**-GRID_BITS, m * 2.0**-_MANTISSA_BITS), _TINY)
    # the smallest power of two >= finest: finest = f 2^e with f in [0.5, 1)
    f, e = np.frexp(finest)
    return np.asarray(np.ldexp(1.0, e - (f == 0.5)), dtype=np.float64)


# --------------------------------------------------------------------------- Gaussian


def _log_ndtr(x: float) -> float:
    """``log Phi(x)`` accurate far into the lower tail."""
    if x > -20.0:
        return math.log(0.5 * math.erfc(-x / math.sqrt(2.0)))
    x2 = x * x
    series = 1.0 - 1.0 / x2 + 3.0 / x2**2 - 15.0 / x2**3
    return -0.5 * x2 - math.log(-x) - 0.5 * math.log(2.0 * math.pi) + math.log(series)


def _gaussian_delta(sigma: float, sensitivity: float, epsilon: float) -> float:
    """The smallest delta at which ``N(0, sigma^2)`` noise is (epsilon, delta)-DP."""
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    first = math.exp(_log_ndtr(a - b))
    second = math.exp(min(epsilon + _log_ndtr(-a - b), 700.0))
    return first - second


def gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """Smallest Gaussian ``sigma`` that is (epsilon, delta)-DP, analytic calibration.

    Balle & Wang (2018), Theorem 8: ``N(0, sigma^2)`` noise on a query of L2
    sensitivity ``Delta`` is (epsilon, delta)-DP iff
    ``Phi(Delta/(2 sigma) - epsilon sigma/Delta)
    - e^epsilon Phi(-Delta/(2 sigma) - epsilon sigma/Delta) <= delta``.
    Valid for every ``epsilon > 0``. Solved by bisection; the returned ``sigma``
    always satisfies the inequality (it errs on the safe side).

    Examples
    --------
    >>> round(gaussian_sigma(1.0, 1.0, 1e-5), 4)
    3.7306
    """
    if not (sensitivity > 0 and epsilon > 0 and 0 < delta < 1):
        raise ValueError(
            f"the Gaussian mechanism needs sensitivity > 0, epsilon > 0 and 0 < delta < 1; "
            f"got sensitivity={sensitivity}, epsilon={epsilon}, delta={delta}"
        )
    lo, hi = 0.0, sensitivity
    while _gaussian_delta(hi, sensitivity, epsilon) > delta:
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if _gaussian_delta(mid, sensitivity, epsilon) > delta:
            lo = mid
        else:
            hi = mid
    return hi


# --------------------------------------------------------------------------- discrete Gaussian


def _discrete_gaussian_pmf(sigma: float, half: int) -> tuple[FloatArray, float]:
    """``N_Z(0, sigma^2)`` on ``{-half..half}`` and an upper bound on the mass outside.

    The normaliser is the sum over the window (the excluded mass only makes the
    window's probabilities slightly too large: safe for a delta). The mass beyond
    ``half`` is at most ``2 e^{-h^2/(2 sigma^2)} / (1 - e^{-h/sigma^2}) / Z``
    with ``h = half + 1``.
    """
    x = np.arange(-half, half + 1, dtype=np.float64)
    w = np.exp(-(x * x) / (2.0 * sigma * sigma))
    z = float(w.sum())
    h = half + 1.0
    ratio = -math.expm1(-h / (sigma * sigma))
    tail = 2.0 * math.exp(-h * h / (2.0 * sigma * sigma)) / max(ratio, 1e-300) / z
    return np.asarray(w / z, dtype=np.float64), min(tail, 1.0)


def _convolve(a: FloatArray, b: FloatArray) -> FloatArray:
    """Convolution of two non-negative vectors (FFT for long ones, clipped at 0)."""
    if a.size * b.size <= 4_000_000:
        return np.asarray(np.convolve(a, b), dtype=np.float64)
    size = a.size + b.size - 1
    n = 1 << (size - 1).bit_length()
    full = np.fft.irfft(np.fft.rfft(a, n) * np.fft.rfft(b, n), n)[:size]
    return np.asarray(np.maximum(full, 0.0), dtype=np.float64)


def discrete_gaussian_delta(
    sigma: float, sensitivity: int, epsilon: float, coordinates: int = 1
) -> float:
    """Exact delta of the discrete Gaussian mechanism at ``epsilon``.

    ``coordinates`` independent ``N_Z(0, sigma^2)`` noises, one record moving each
    of them by the integer ``sensitivity`` ``D``. The privacy loss of an output
    ``x`` is ``L = k D^2 / (2 sigma^2) - D S / sigma^2`` with ``S = sum(x_i)``, so
    ``delta(eps) = E[(1 - e^{eps - L})_+]`` over ``S``, the ``k``-fold convolution of
    the discrete Gaussian pmf (CKS 2020, Theorem 7, for ``k = 1``). The pmf is summed
    over a window of ``+-(14 sigma + D + 2)`` integers per coordinate, and the mass
    outside it (bounded above) is counted as if it lost everything, so the result
    is an upper bound, tight to ``~1e-40`` plus the rounding of the sums.

    Parameters
    ----------
    sigma : float
        Positive noise parameter (in integer units).
    sensitivity : int
        Positive integer shift ``D`` of each coordinate.
    epsilon : float
        Non-negative epsilon.
    coordinates : int, default 1
        How many coordinates one record moves (each by ``D``).

    Returns
    -------
    float
        The smallest delta at which the release is (epsilon, delta)-DP.

    Examples
    --------
    The continuous Gaussian's sigma for a count at epsilon=8, delta=1e-2 is not
    enough for the discrete Gaussian (REFERENCE.md §11):

    >>> sigma = gaussian_sigma(1.0, 8.0, 1e-2)
    >>> round(discrete_gaussian_delta(sigma, 1, 8.0), 4)
    0.0286
    """
    d = int(sensitivity)
    k = int(coordinates)
    if not (sigma > 0 and math.isfinite(sigma) and d >= 1 and d == sensitivity and k >= 1):
        raise ValueError(
            f"discrete_gaussian_delta needs a positive finite sigma, an integer "
            f"sensitivity >= 1 and coordinates >= 1; got sigma={sigma}, "
            f"sensitivity={sensitivity}, coordinates={coordinates}"
        )
    if not (epsilon >= 0 and math.isfinite(epsilon)):
        raise ValueError(f"epsilon must be finite and >= 0; got {epsilon}")
    dist, dist_half, lost_total = summed_pmf(sigma, k, math.ceil(14.0 * sigma) + d + 2)
    s = np.arange(-dist_half, dist_half + 1, dtype=np.float64)
    loss = k * d * d / (2.0 * sigma * sigma) - d * s / (sigma * sigma)
    hit = loss > epsilon
    delta = float(np.sum(dist[hit] * -np.expm1(epsilon - loss[hit])))
    return min(delta + lost_total, 1.0)


def summed_pmf(sigma: float, count: int, half: int) -> tuple[FloatArray, int, float]:
    """The pmf of the sum of ``count`` independent ``N_Z(0, sigma^2)`` noises.

    Each noise is summed over ``-half..half``; the ``count``-fold convolution runs by
    repeated squaring, each partial sum of ``m`` noises cut to
    ``+-(14 sigma sqrt(m) + half)``. Returns the pmf on ``-h..h``, ``h``, and an
    upper bound on the mass left out (every cut counted).

    Examples
    --------
    >>> pmf, h, lost = summed_pmf(1.0, 2, 16)
    >>> round(float(pmf.sum()) + lost, 12), h >= 16
    (1.0, True)
    """
    p, lost = _discrete_gaussian_pmf(sigma, half)
    lost_total = count * lost

    def trim(a: FloatArray, a_half: int, m: int) -> tuple[FloatArray, int, float]:
        keep = min(a_half, math.ceil(14.0 * sigma * math.sqrt(m)) + half)
        cut = a_half - keep
        if cut <= 0:
            return a, a_half, 0.0
        return a[cut:-cut], keep, float(a[:cut].sum() + a[-cut:].sum())

    dist: FloatArray | None = None
    power, base, base_half, base_m = count, p, half, 1
    dist_half = dist_m = 0
    while power:
        if power & 1:
            dist = base if dist is None else _convolve(dist, base)
            dist_m += base_m
            dist, dist_half, cut_mass = trim(dist, dist_half + base_half, dist_m)
            lost_total += cut_mass
        power >>= 1
        if power:
            base_m *= 2
            base, base_half, cut_mass = trim(_convolve(base, base), 2 * base_half, base_m)
            lost_total += cut_mass
    assert dist is not None
    return dist, dist_half, lost_total


def discrete_gaussian_sigma(
    sensitivity: int, epsilon: float, delta: float, coordinates: int = 1
) -> float:
    """Smallest ``sigma`` at which discrete Gaussian noise is (epsilon, delta)-DP.

    Calibrated on the exact privacy curve (:func:`discrete_gaussian_delta`), not on
    the continuous Gaussian's (whose ``sigma`` can under-state the discrete delta
    2-3x). Bisection to a relative precision of ``1e-6``; the returned ``sigma``
    always satisfies ``discrete_gaussian_delta(sigma, ...) <= delta``.

    Parameters
    ----------
    sensitivity : int
        Positive integer shift ``D`` of each coordinate.
    epsilon : float
        Positive epsilon.
    delta : float
        Target delta in ``(0, 1)``.
    coordinates : int, default 1
        How many coordinates one record moves, each by ``D``.

    Returns
    -------
    float

    Examples
    --------
    >>> s = discrete_gaussian_sigma(1, 1.0, 1e-5)
    >>> discrete_gaussian_delta(s, 1, 1.0) <= 1e-5
    True
    """
    if not (epsilon > 0 and math.isfinite(epsilon) and 0 < delta < 1):
        raise ValueError(
            f"the discrete Gaussian needs epsilon > 0 and 0 < delta < 1; got "
            f"epsilon={epsilon}, delta={delta}"
        )
    d, k = int(sensitivity), int(coordinates)

    def too_small(sig: float) -> bool:
        return discrete_gaussian_delta(sig, d, epsilon, k) > delta

    # the continuous Balle-Wang sigma is close: bracket around it
    start = gaussian_sigma(d * math.sqrt(k), epsilon, delta)
    return smallest_sigma(too_small, start, f"epsilon={epsilon}, delta={delta}")


def smallest_sigma(
    too_small: Callable[[float], bool], start: float, target: str = "the target"
) -> float:
    """The smallest sigma at which ``too_small`` is false, to ``1e-6`` relative, from
    above: bracketed from ``start`` in steps of 2 %, then bisected.

    ``too_small(sigma)`` must be monotone (true below some sigma, false above):
    e.g. "the exact delta at this sigma exceeds the target". ``target`` names the
    target in the error raised when no sigma up to ``2**52`` reaches it.

    Examples
    --------
    >>> round(smallest_sigma(lambda s: s < 3.0, 2.0), 4)
    3.0
    """
    lo, hi = start, start
    if too_small(start):
        while too_small(hi):
            lo, hi = hi, hi * 1.02
            if hi > MAX_SCALE:
                raise ValueError(
                    f"{target} need a discrete Gaussian sigma above 2**52; use a "
                    f"larger epsilon or delta"
                )
    else:
        while not too_small(lo) and lo > 1e-3:
            lo, hi = lo / 1.02, lo
    while hi - lo > 1e-6 * hi:
        mid = 0.5 * (lo + hi)
        if too_small(mid):
            lo = mid
        else:
            hi = mid
    return hi


# --------------------------------------------------------------------------- truncation


def bisect_decreasing(
    loss: object, target: FloatArray, lo: FloatArray, iterations: int = 200
) -> FloatArray:
    """Vectorised bisection: the smallest ``s >= lo`` with ``loss(s) <= target``.

    ``loss`` must be decreasing in ``s``; the returned scales satisfy
    ``loss(s) <= target`` (the safe side).
    """
    f = loss  # type: ignore[assignment]
    hi = lo.copy()
    bad = f(hi) > target  # type: ignore[operator]
    while bad.any():
        hi = np.where(bad, hi * 2.0, hi)
        bad = f(hi) > target  # type: ignore[operator]
    low = lo.copy()
    for _ in range(iterations):
        mid = 0.5 * (low + hi)
        over = f(mid) > target  # type: ignore[operator]
        low = np.where(over, mid, low)
        hi = np.where(over, hi, mid)
        if np.all(hi - low <= 1e-15 * hi):
            break
    return hi


def _truncation_inputs(
    sensitivity: ArrayLike, width: ArrayLike, epsilon: ArrayLike
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The truncated scales' inputs as broadcast float arrays (at least 1-d):
    ``(min(sensitivity, width), width, epsilon)`` -- a shift beyond the range's
    width moves no more mass than one across it."""
    d, w, e = np.broadcast_arrays(
        *(np.atleast_1d(np.asarray(a, dtype=np.float64)) for a in (sensitivity, width, epsilon))
    )
    return np.minimum(d, w), w, e


def truncated_laplace_scale(
    sensitivity: ArrayLike, width: ArrayLike, epsilon: ArrayLike
) -> FloatArray:
    """Laplace scale at which noise truncated to a public range is epsilon-DP.

    Truncating ``theta + Lap(s)`` to ``[c0, c1]`` renormalises by a constant that
    depends on ``theta``, which costs privacy on top of ``Delta / s``. With
    ``D = c1 - c0`` and ``Delta' = min(Delta, D)`` the privacy loss is
    ``Delta'/s + ln[(2 - e^{-Delta'/s} - e^{-(D - Delta')/s}) / (1 - e^{-D/s})]``
    (Holohan et al. 2020); this returns the smallest ``s`` that brings it down
    to ``epsilon``. ``width`` may be infinite (a one-sided range).

    Examples
    --------
    >>> round(float(truncated_laplace_scale(1.0, 10.0, 1.0)[0]), 4)
    1.6116
    >>> round(float(truncated_laplace_scale(0.1, 1.0, 0.5)[0]), 4)
    0.3528
    """
    dp, w, e = _truncation_inputs(sensitivity, width, epsilon)

    def loss(s: FloatArray) -> FloatArray:
        num = 2.0 - np.exp(-dp / s) - np.exp(-(w - dp) / s)
        den = -np.expm1(-w / s)
        return np.asarray(dp / s + np.log(num / den), dtype=np.float64)

    return bisect_decreasing(loss, e, dp / e)


def truncated_discrete_laplace_scale(
    sensitivity: ArrayLike, points: ArrayLike, epsilon: ArrayLike
) -> FloatArray:
    """Discrete Laplace scale at which truncation to ``points + 1`` integers is epsilon-DP.

    The integer counterpart of :func:`truncated_laplace_scale`. With
    ``q = e^{-1/t}``, ``N = points`` (the range holds ``N + 1`` integers, ``N`` may
    be infinite) and integer sensitivity ``Delta' = min(Delta, N)``, the loss is
    ``Delta'/t + ln[(1 + q - q^{Delta'+1} - q^{N-Delta'+1}) / (1 - q^{N+1})]``.

    Examples
    --------
    >>> t = float(truncated_discrete_laplace_scale(1, np.inf, 1.0)[0])
    >>> round(t, 4)
    1.285
    """
    dp, big_n, e = _truncation_inputs(sensitivity, points, epsilon)
    return bisect_decreasing(partial(truncated_discrete_loss, dp, big_n), e, dp / e)


def truncated_discrete_loss(shift: ArrayLike, points: ArrayLike, t: ArrayLike) -> FloatArray:
    """Worst privacy loss of discrete Laplace noise of scale ``t`` truncated to
    ``points + 1`` integers, the true value moved by ``shift``: with ``q = e^{-1/t}``
    and ``d = min(shift, points)``,
    ``d/t + ln[(1 + q - q^{d+1} - q^{N-d+1}) / (1 - q^{N+1})]``.

    Examples
    --------
    >>> t = float(truncated_discrete_laplace_scale(1, np.inf, 1.0)[0])
    >>> round(float(truncated_discrete_loss(1.0, np.inf, t)[0]), 6)
    1.0
    """
    big_n = np.asarray(points, dtype=np.float64)
    dp = np.minimum(np.asarray(shift, dtype=np.float64), big_n)
    tt = np.asarray(t, dtype=np.float64)
    q = np.exp(-1.0 / tt)
    num = 1.0 + q - q ** (dp + 1.0) - q ** (big_n - dp + 1.0)
    den = 1.0 - q ** (big_n + 1.0)
    return np.atleast_1d(np.asarray(dp / tt + np.log(num / den), dtype=np.float64))
