"""Zero-concentrated DP (zCDP) accounting: rho of a release, rho -> (epsilon, delta).

A release that adds Gaussian noise ``N(0, sigma^2)`` to a query of L2 sensitivity
``Delta`` is ``rho = Delta^2 / (2 sigma^2)``-zCDP, and so is the discrete Gaussian
``N_Z(0, sigma^2)`` with an integer ``Delta`` (Canonne, Kamath & Steinke 2020); a pure
epsilon-DP release is ``epsilon^2 / 2``-zCDP; rho adds up over releases (Bun & Steinke
2016). Many Gaussian releases therefore cost far less, converted to (epsilon, delta) at
the end, than the sum of their epsilons (REFERENCE.md §11).

Two conversions of rho-zCDP to (epsilon, delta)-DP are implemented:

* the simple one, ``epsilon = rho + 2 sqrt(rho ln(1/delta))`` (Bun & Steinke 2016,
  Prop. 1.3): :func:`epsilon_simple`;
* the tight one of Canonne, Kamath & Steinke 2020, Prop. 12: for *every* order
  ``alpha > 1``, rho-zCDP implies (epsilon, delta)-DP with
  ``delta = exp((alpha - 1)(alpha rho - epsilon)) / (alpha - 1) * (1 - 1/alpha)^alpha``;
  :func:`epsilon_for` and :func:`delta_for` minimise over ``alpha``.

Because the bound holds at every ``alpha``, a minimiser that misses the optimum only
gives a slightly larger (still valid) epsilon: the search cannot err on the unsafe
side. Results are further rounded in the safe direction (epsilon and delta up, rho
down), so that ``epsilon_for(rho_for(eps, delta), delta) <= eps`` holds in floating
point.

The budgets (:mod:`pandas_dp.budget.budgets`) use these functions for their ``"zcdp"``
accounting: a budget of (epsilon, delta) admits releases while their total rho stays
within ``rho_for(epsilon, delta)``, a privacy filter that stays valid when the analyst
chooses each release after seeing the earlier ones (see that module's notes).

Examples
--------
>>> round(epsilon_simple(0.5, 1e-6), 3)
5.757
>>> round(epsilon_for(0.5, 1e-6), 2)
5.22
>>> rho = rho_for(1.0, 1e-6)
>>> epsilon_for(rho, 1e-6) <= 1.0
True
>>> round(rho_of_gaussian(1.0, 5.0), 6)
0.02
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

__all__ = [
    "delta_for",
    "epsilon_for",
    "epsilon_simple",
    "rho_for",
    "rho_of_gaussian",
    "rho_of_noise",
    "rho_of_pure",
    "rho_of_vector",
]

#: The orders ``alpha`` searched: ``x = ln(alpha - 1)`` on this coarse grid first
#: (alpha from ``1 + e^-20`` to ``1 + e^50``), then refined by golden section.
_GRID = np.arange(-20.0, 50.0 + 1e-9, 0.25)
_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


def rho_of_gaussian(l2_sensitivity: float, sigma: float) -> float:
    """The zCDP parameter ``rho = Delta^2 / (2 sigma^2)`` of Gaussian noise.

    Valid for the continuous Gaussian and for the discrete Gaussian with an integer
    sensitivity (CKS 2020).

    Parameters
    ----------
    l2_sensitivity : float
        The L2 sensitivity ``Delta`` of the noised vector (positive, finite).
    sigma : float
        The standard deviation (continuous) or scale parameter (discrete) of the
        noise on every entry (positive).

    Returns
    -------
    float
        ``rho`` (``inf`` for ``sigma`` too small to represent the ratio).

    Raises
    ------
    ValueError
        If either argument is not positive, or the sensitivity is not finite.

    Examples
    --------
    >>> round(rho_of_gaussian(2.0, 4.0), 12)
    0.125
    """
    if not (l2_sensitivity > 0 and math.isfinite(l2_sensitivity) and sigma > 0):
        raise ValueError(
            f"rho_of_gaussian needs a positive finite sensitivity and a positive sigma; "
            f"got l2_sensitivity={l2_sensitivity}, sigma={sigma}"
        )
    ratio = l2_sensitivity / sigma
    return _up(0.5 * ratio * ratio)


def rho_of_vector(
    sensitivity: Sequence[float] | np.ndarray,
    scale: Sequence[float] | np.ndarray,
    joint_l2: float | None = None,
) -> float:
    """``rho`` of a vector noised entry by entry with Gaussian noise of its own scale.

    Entry ``i`` moves by at most ``sensitivity[i]`` and, jointly, the moves divided
    by the sensitivities have L2 norm at most ``joint_l2``; entry ``i`` gets noise of
    scale ``scale[i]``. Then ``sum_i d_i^2 / scale_i^2 <= joint_l2^2 / r^2`` with
    ``r = min_i scale_i / sensitivity_i``, so the vector is
    ``joint_l2^2 / (2 r^2)``-zCDP (exact when the scales are proportional to the
    sensitivities, as :func:`~pandas_dp.noise.plans.plan_noise` makes them).

    Parameters
    ----------
    sensitivity : array_like
        Per-entry sensitivity of what was noised (positive), e.g. including the
        rounding to the noise grid.
    scale : array_like
        Per-entry Gaussian ``sigma`` (same length).
    joint_l2 : float, optional
        The L2 norm bound of the moves in units of the sensitivities; default
        ``sqrt(len(sensitivity))`` (one record may move every entry fully).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If the arrays are empty, of different lengths or not positive.

    Examples
    --------
    >>> round(rho_of_vector([1.0, 2.0], [4.0, 8.0]), 12)
    0.0625
    >>> round(rho_of_vector([1.0, 1.0, 1.0], [2.0, 2.0, 2.0], joint_l2=1.0), 12)
    0.125
    """
    sens = np.asarray(sensitivity, dtype=np.float64).ravel()
    sig = np.asarray(scale, dtype=np.float64).ravel()
    if sens.size == 0 or sens.shape != sig.shape:
        raise ValueError(
            f"rho_of_vector needs non-empty sensitivity and scale of one length; got "
            f"{sens.size} and {sig.size} entries"
        )
    if not (np.all(sens > 0) and np.all(np.isfinite(sens)) and np.all(sig > 0)):
        raise ValueError("every sensitivity must be positive and finite, every scale positive")
    l2 = math.sqrt(sens.size) if joint_l2 is None else float(joint_l2)
    if not (l2 > 0 and math.isfinite(l2)):
        raise ValueError(f"joint_l2 must be a positive finite number; got {joint_l2}")
    ratio = float(np.min(sig / sens))
    # scale_i / sens_i is rounded to nearest: shrink it by an ulp or two to stay safe
    return rho_of_gaussian(l2, ratio * (1.0 - 4.0 * _EPS))


class _Noise(Protocol):
    """What :func:`rho_of_noise` reads of a :class:`~pandas_dp.noise.plans.NoisePlan`."""

    @property
    def mechanism(self) -> str: ...
    @property
    def integer(self) -> bool: ...
    @property
    def scale(self) -> Any: ...
    @property
    def granularity(self) -> Any: ...


def rho_of_noise(noise: _Noise, sensitivity: Any, joint_l2: float | None = None) -> float | None:
    """``rho`` of a vector noised by a :class:`~pandas_dp.noise.plans.NoisePlan`, or None.

    For Gaussian noise: the vector's entries are first rounded to the noise grid
    (``noise.granularity``; counts need none), which moves each by up to one grid
    step more than its sensitivity, so entry ``i`` is charged
    ``sensitivity[i] + granularity[i]`` (``sensitivity[i]`` for integer releases),
    as :func:`~pandas_dp.noise.plans.plan_noise` calibrates it; then
    :func:`rho_of_vector`. Laplace noise gives None (a pure release, accounted by
    its epsilon).

    Parameters
    ----------
    noise : NoisePlan
        The calibrated noise of the vector.
    sensitivity : float or array_like
        Per-entry sensitivity of the exact values (before the grid rounding).
    joint_l2 : float, optional
        L2 norm bound of a neighbour's moves in units of the sensitivities;
        default ``sqrt(k)`` for ``k`` entries.

    Returns
    -------
    float or None

    Examples
    --------
    >>> import numpy as np
    >>> from pandas_dp.noise.plans import plan_noise
    >>> one = np.ones(1)
    >>> noise = plan_noise(one, 0 * one, 10 * one, epsilon=1.0, delta=1e-6,
    ...                    mechanism="gaussian", integer=True)
    >>> rho = rho_of_noise(noise, 1.0)
    >>> round(rho, 4), round(rho_of_gaussian(1.0, float(noise.scale[0])), 4)
    (0.0279, 0.0279)
    """
    if noise.mechanism != "gaussian":
        return None
    scale = np.asarray(noise.scale, dtype=np.float64).ravel()
    sens = np.broadcast_to(np.asarray(sensitivity, dtype=np.float64), scale.shape)
    if not noise.integer:
        sens = sens + np.broadcast_to(np.asarray(noise.granularity, dtype=np.float64), scale.shape)
    paid = getattr(noise, "l2_paid", None)  # the rounded moves' norm sigma was made for
    if paid is not None:
        joint_l2 = max(paid, math.sqrt(scale.size) if joint_l2 is None else joint_l2)
    return rho_of_vector(sens, scale, joint_l2)


def rho_of_pure(epsilon: float) -> float:
    """``epsilon^2 / 2``: the zCDP parameter every pure epsilon-DP release satisfies.

    Parameters
    ----------
    epsilon : float
        Non-negative, finite.

    Returns
    -------
    float

    Examples
    --------
    >>> round(rho_of_pure(1.0), 12)
    0.5
    """
    _check("epsilon", epsilon)
    return _up(0.5 * epsilon * epsilon)


def epsilon_simple(rho: float, delta: float) -> float:
    """The simple conversion ``rho + 2 sqrt(rho ln(1/delta))`` (Bun & Steinke 2016).

    Parameters
    ----------
    rho : float
        The zCDP parameter (non-negative).
    delta : float
        In ``[0, 1]``; ``delta = 0`` gives ``inf`` unless ``rho = 0``.

    Returns
    -------
    float
        An epsilon at which rho-zCDP is (epsilon, delta)-DP, rounded up.

    Examples
    --------
    >>> round(epsilon_simple(0.5, 1e-6), 4)
    5.7565
    """
    _check("rho", rho, infinite=True)
    _check_delta(delta)
    if rho == 0 or delta >= 1:
        return 0.0
    if delta == 0 or math.isinf(rho):
        return math.inf
    value = rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))
    return _up(value)


def epsilon_for(rho: float, delta: float) -> float:
    """The smallest epsilon at which rho-zCDP is (epsilon, delta)-DP (CKS 2020, Prop. 12).

    Minimises ``epsilon(alpha) = alpha rho + (ln(1/delta) + alpha ln(1 - 1/alpha)
    - ln(alpha - 1)) / (alpha - 1)`` over ``alpha > 1`` -- on a grid of
    ``ln(alpha - 1)`` from -20 to 50, then by golden section -- and never returns more
    than :func:`epsilon_simple`. Every ``alpha`` gives a valid epsilon, so the result
    is valid even where the search is not exactly at the minimum; it is rounded up.

    Parameters
    ----------
    rho : float
        The zCDP parameter (non-negative; ``inf`` gives ``inf``).
    delta : float
        In ``[0, 1]``; ``delta = 0`` gives ``inf`` unless ``rho = 0``.

    Returns
    -------
    float
        Non-negative, non-decreasing in ``rho`` and non-increasing in ``delta``.

    Examples
    --------
    >>> round(epsilon_for(0.5, 1e-6), 2)
    5.22
    >>> epsilon_for(0.0, 1e-6), epsilon_for(0.5, 0.0)
    (0.0, inf)
    """
    simple = epsilon_simple(rho, delta)
    if simple == 0.0 or math.isinf(simple):
        return simple
    log_inv = -math.log(delta)
    best = _minimise(lambda x: _epsilon_at(x, rho, log_inv))
    return min(simple, _up(max(best, 0.0), slack=1e-12 * (1.0 + log_inv)))


def delta_for(rho: float, epsilon: float) -> float:
    """The smallest delta at which rho-zCDP is (epsilon, delta)-DP (CKS 2020, Prop. 12).

    ``min over alpha > 1 of exp((alpha - 1)(alpha rho - epsilon)) / (alpha - 1)
    * (1 - 1/alpha)^alpha``, capped at 1, rounded up.

    Parameters
    ----------
    rho : float
        The zCDP parameter (non-negative).
    epsilon : float
        Non-negative.

    Returns
    -------
    float
        In ``[0, 1]``.

    Examples
    --------
    >>> delta_for(0.5, 5.23) <= 1e-6 < delta_for(0.5, 5.21)
    True
    """
    _check("rho", rho, infinite=True)
    _check("epsilon", epsilon, infinite=True)
    if rho == 0 or math.isinf(epsilon):
        return 0.0
    if math.isinf(rho):
        return 1.0

    def log_delta_at(x: float) -> float:
        am1 = math.exp(x)
        a = 1.0 + am1
        return am1 * (a * rho - epsilon) - x + a * (x - math.log1p(am1))

    best = _minimise(log_delta_at)
    slack = 1e-12 * (1.0 + abs(best) + epsilon)
    return min(1.0, _up(math.exp(min(best + slack, 0.0))))


def rho_for(epsilon: float, delta: float) -> float:
    """The largest rho whose conversion (:func:`epsilon_for`) is within (epsilon, delta).

    Parameters
    ----------
    epsilon : float
        Non-negative.
    delta : float
        In ``[0, 1)``; ``delta = 0`` gives 0.

    Returns
    -------
    float
        ``rho`` with ``epsilon_for(rho, delta) <= epsilon`` (verified), within a
        relative ``1e-9`` of the largest such value; non-decreasing in both
        arguments.

    Examples
    --------
    >>> round(rho_for(5.2215, 1e-6), 2)
    0.5
    """
    _check("epsilon", epsilon, infinite=True)
    _check_delta(delta)
    if epsilon == 0 or delta == 0:
        return 0.0
    if math.isinf(epsilon) or delta >= 1:
        return math.inf
    log_inv = -math.log(delta)
    # the simple conversion inverted in closed form: feasible for the tighter one too
    lo = (math.sqrt(log_inv + epsilon) - math.sqrt(log_inv)) ** 2 * (1.0 - 1e-9)
    while lo > 0 and epsilon_for(lo, delta) > epsilon:
        lo *= 0.5
    hi = max(2.0 * lo, 1e-300)
    while epsilon_for(hi, delta) <= epsilon:
        lo, hi = hi, 2.0 * hi
    while hi - lo > 1e-10 * hi:
        mid = 0.5 * (lo + hi)
        if epsilon_for(mid, delta) <= epsilon:
            lo = mid
        else:
            hi = mid
    return lo


# --------------------------------------------------------------------------- helpers

_EPS = 2.0**-52


def _up(value: float, slack: float = 0.0) -> float:
    """``value`` rounded up by a few ulps (and ``slack``): safe against rounding."""
    if not math.isfinite(value):
        return value
    return value + 8.0 * _EPS * abs(value) + slack


def _epsilon_at(x: float, rho: float, log_inv_delta: float) -> float:
    """CKS Prop. 12 solved for epsilon at ``alpha = 1 + e^x`` (numerically stable)."""
    am1 = math.exp(x)
    a = 1.0 + am1
    # alpha ln(1 - 1/alpha) = alpha (x - ln alpha); ln alpha = log1p(e^x)
    return a * rho + log_inv_delta / am1 + x - a * math.log1p(am1) / am1


def _minimise(f: Callable[[float], float]) -> float:
    """Minimum of ``f(x)`` over the grid of ``ln(alpha - 1)``, refined by golden section."""
    values = [f(float(x)) for x in _GRID]
    i = min(range(len(values)), key=values.__getitem__)
    best = values[i]
    a = float(_GRID[max(i - 1, 0)])
    b = float(_GRID[min(i + 1, len(_GRID) - 1)])
    c, d = b - _GOLDEN * (b - a), a + _GOLDEN * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(80):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - _GOLDEN * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + _GOLDEN * (b - a)
            fd = f(d)
    return float(min(best, fc, fd))


def _check(name: str, value: float, *, infinite: bool = False) -> None:
    number = float(value)
    if not (number >= 0 and (infinite or math.isfinite(number))):
        raise ValueError(
            f"{name} must be a {'' if infinite else 'finite '}number >= 0; got {value}"
        )


def _check_delta(delta: float) -> None:
    if not (0.0 <= float(delta) <= 1.0):
        raise ValueError(f"delta must be in [0, 1]; got {delta}")
