"""Noise samplers and their calibration.

This module knows nothing of pandas. It offers

* :class:`RandomSource` -- uniform bits from the operating system's CSPRNG
  (``os.urandom``), or from a seeded :class:`numpy.random.Generator` when a caller
  asks for reproducibility (then ``secure`` is ``False``);
* integer samplers, vectorised over per-entry scales: :func:`discrete_laplace`,
  the difference of two geometric variables, each the floor of a scaled
  exponential ``-t log U`` with ``U`` a 53-bit CSPRNG uniform (exact up to that
  resolution: the tail beyond about ``36.7 t``, probability ``~1e-16``, is cut
  off), and :func:`discrete_gaussian`, Canonne, Kamath & Steinke's (2020)
  rejection sampler on top of it;
* :func:`grid_granularity` -- the power-of-two grid on which real-valued releases
  are made, so that no output carries information in its low-order float bits
  (Mironov 2012). A real value ``theta`` is released as
  ``gamma * (round(theta / gamma) + K)`` with ``K`` an integer noise draw;
* calibration: :func:`gaussian_sigma` (analytic Gaussian, Balle & Wang 2018) and
  :func:`truncated_laplace_scale` (the scale at which Laplace noise truncated to a
  public range is still epsilon-DP; Holohan et al. 2020);
* tail bounds used by the confidence intervals: :func:`laplace_halfwidth`,
  :func:`gaussian_halfwidth`.

Examples
--------
>>> src = RandomSource(random_state=7)
>>> k = discrete_laplace(np.array([2.0, 2.0, 2.0]), src)
>>> k.dtype, k.shape
(dtype('int64'), (3,))
>>> round(gaussian_sigma(1.0, 1.0, 1e-5), 4)
3.7306
"""

from __future__ import annotations

import math
import os
from typing import Final

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "GRID_BITS",
    "RandomSource",
    "discrete_gaussian",
    "discrete_laplace",
    "gaussian_halfwidth",
    "gaussian_sigma",
    "grid_granularity",
    "laplace_halfwidth",
    "truncated_discrete_laplace_scale",
    "truncated_laplace_scale",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: The grid is ``2**GRID_BITS`` times finer than the noise scale.
GRID_BITS: Final = 40
_MANTISSA_BITS: Final = 52
_TWO_M53: Final = 2.0**-53
_TINY: Final = float(np.finfo(np.float64).tiny)


class RandomSource:
    """Uniform random numbers for the samplers.

    Parameters
    ----------
    random_state : None, int or numpy.random.Generator
        ``None`` (the default) reads the operating system's CSPRNG. An int or a
        Generator gives reproducible, *not secure* noise for tests and teaching.

    Examples
    --------
    >>> RandomSource().secure
    True
    >>> u = RandomSource(1).uniform(4)
    >>> bool(((u > 0) & (u <= 1)).all())
    True
    """

    __slots__ = ("_rng",)

    def __init__(self, random_state: int | np.random.Generator | None = None) -> None:
        if random_state is None:
            self._rng: np.random.Generator | None = None
        elif isinstance(random_state, np.random.Generator):
            self._rng = random_state
        elif isinstance(random_state, int | np.integer) and not isinstance(random_state, bool):
            self._rng = np.random.default_rng(int(random_state))
        else:
            raise TypeError(
                f"random_state must be None (secure noise), an int seed or a "
                f"numpy.random.Generator; got {type(random_state).__name__}"
            )

    @property
    def secure(self) -> bool:
        """Whether the bits come from the operating system's CSPRNG."""
        return self._rng is None

    def bits(self, size: int) -> NDArray[np.uint64]:
        """Return ``size`` independent uniform 64-bit words."""
        if self._rng is None:
            return np.frombuffer(os.urandom(8 * size), dtype=np.uint64)
        return np.frombuffer(self._rng.bytes(8 * size), dtype=np.uint64)

    def uniform(self, size: int) -> FloatArray:
        """Return ``size`` uniforms on ``(0, 1]`` with 53 random bits each."""
        top = (self.bits(size) >> np.uint64(11)) + np.uint64(1)
        return np.asarray(top * _TWO_M53, dtype=np.float64)

    def exponential(self, size: int) -> FloatArray:
        """Return ``size`` standard exponential variates ``-log(U)``."""
        return -np.log(self.uniform(size))


# --------------------------------------------------------------------------- integer noise


def discrete_laplace(scale: ArrayLike, src: RandomSource) -> IntArray:
    """Draw from the discrete Laplace distribution, one draw per entry of ``scale``.

    ``P(K = k)`` is proportional to ``exp(-|k| / scale)``. The draw is the
    difference of two independent geometric variables, each the floor of a scaled
    exponential, so a whole vector costs a few numpy passes.

    Parameters
    ----------
    scale : array_like of float
        Positive scales ``t`` (``epsilon / sensitivity`` is ``1 / t``).
    src : RandomSource

    Returns
    -------
    numpy.ndarray of int64
    """
    t = np.atleast_1d(np.asarray(scale, dtype=np.float64)).ravel()
    if not (t > 0).all():
        raise ValueError("discrete Laplace scales must be positive")
    # floor(t E) with E ~ Exp(1) is geometric: P(G >= k) = exp(-k / t), k = 0, 1, ...
    k = t.size
    g = np.floor(np.concatenate((t, t)) * src.exponential(2 * k))
    return (g[:k] - g[k:]).astype(np.int64)


def discrete_gaussian(sigma: ArrayLike, src: RandomSource) -> IntArray:
    """Draw from the discrete Gaussian ``N_Z(0, sigma^2)``, one draw per entry.

    Rejection sampling from a discrete Laplace proposal with scale
    ``floor(sigma) + 1`` (Canonne, Kamath & Steinke 2020, Algorithm 3); accepted
    draws are kept and only the rejected entries are drawn again.
    """
    s = np.atleast_1d(np.asarray(sigma, dtype=np.float64)).ravel()
    if not np.all(s > 0):
        raise ValueError("discrete Gaussian sigmas must be positive")
    out = np.empty(s.size, dtype=np.int64)
    pending = np.arange(s.size)
    while pending.size:
        sp = s[pending]
        t = np.floor(sp) + 1.0
        y = discrete_laplace(t, src)
        log_accept = -((np.abs(y) - sp * sp / t) ** 2) / (2.0 * sp * sp)
        ok = np.log(src.uniform(pending.size)) <= log_accept
        out[pending[ok]] = y[ok]
        pending = pending[~ok]
    return out


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


# --------------------------------------------------------------------------- truncation


def _bisect_decreasing(
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
    d = np.atleast_1d(np.asarray(sensitivity, dtype=np.float64))
    w = np.atleast_1d(np.asarray(width, dtype=np.float64))
    e = np.atleast_1d(np.asarray(epsilon, dtype=np.float64))
    d, w, e = np.broadcast_arrays(d, w, e)
    dp = np.minimum(d, w)

    def loss(s: FloatArray) -> FloatArray:
        num = 2.0 - np.exp(-dp / s) - np.exp(-(w - dp) / s)
        den = -np.expm1(-w / s)
        return np.asarray(dp / s + np.log(num / den), dtype=np.float64)

    return _bisect_decreasing(loss, e, dp / e)


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
    d = np.atleast_1d(np.asarray(sensitivity, dtype=np.float64))
    big_n = np.atleast_1d(np.asarray(points, dtype=np.float64))
    e = np.atleast_1d(np.asarray(epsilon, dtype=np.float64))
    d, big_n, e = np.broadcast_arrays(d, big_n, e)
    dp = np.minimum(d, big_n)

    def loss(t: FloatArray) -> FloatArray:
        q = np.exp(-1.0 / t)
        num = 1.0 + q - q ** (dp + 1.0) - q ** (big_n - dp + 1.0)
        den = 1.0 - q ** (big_n + 1.0)
        return np.asarray(dp / t + np.log(num / den), dtype=np.float64)

    return _bisect_decreasing(loss, e, dp / e)


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
