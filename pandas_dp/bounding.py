"""Calibrate noise for a vector of exact values, add it, and bound the output.

Three output bounding modes (Liu 2019, Definition 2):

``"none"``
    The raw noisy value.
``"bit"``
    Boundary-inflated truncation: clamp to the statistic's public range. Pure
    post-processing, so the release keeps its epsilon exactly.
``"truncated"``
    A draw of the noisy value conditioned on lying inside the range. The
    renormalising constant depends on the true value, so the Laplace scale is
    *re-calibrated* (:func:`~pandas_dp.mechanisms.truncated_laplace_scale`) to
    keep the release epsilon-DP; the naive scale ``Delta / epsilon`` would not.

This module knows nothing of pandas: it works on numpy vectors. A release of ``k``
entries is calibrated once: each entry ``i`` is normalised by its own sensitivity
``Delta_i``, and ``joint_l1`` / ``joint_l2`` give the sensitivity of the
normalised vector (``k`` and ``sqrt(k)`` when one record may move every entry by
its full sensitivity; smaller for histograms).

Real-valued releases are made on a power-of-two grid (REFERENCE.md §4): the exact
value is rounded to the grid, an integer noise draw times the grid spacing is
added, and the extra sensitivity of the rounding (one grid step) is paid for.

Examples
--------
>>> import numpy as np
>>> from pandas_dp.mechanisms import RandomSource
>>> plan = plan_noise(np.array([1.0]), np.array([0.0]), np.array([10.0]),
...                   epsilon=1.0, mechanism="laplace", bounding="bit")
>>> round(float(plan.scale[0]), 6)
1.0
>>> x = apply_noise(np.array([5.0]), plan, RandomSource(0))
>>> bool(0.0 <= x[0] <= 10.0)
True
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pandas_dp import mechanisms as mech

__all__ = ["BOUNDING_MODES", "MECHANISMS", "NoisePlan", "apply_noise", "halfwidth", "plan_noise"]

BOUNDING_MODES: tuple[str, ...] = ("bit", "truncated", "none")
MECHANISMS: tuple[str, ...] = ("laplace", "gaussian")

FloatArray = NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class NoisePlan:
    """Everything public about how a vector is noised; no data in it.

    Attributes
    ----------
    mechanism, bounding : str
    integer : bool
        Integer-valued release (counts): discrete noise with unit grid.
    scale : ndarray
        Per entry: the effective Laplace scale ``b`` or Gaussian ``sigma``.
    granularity : ndarray
        Per entry: the grid spacing (``1`` for integers).
    lower, upper : ndarray
        Per entry: the public output range the bounding mode uses.
    epsilon, delta : float
        The budget of the whole vector.
    """

    mechanism: str
    bounding: str
    integer: bool
    scale: FloatArray
    granularity: FloatArray
    lower: FloatArray
    upper: FloatArray
    epsilon: float
    delta: float

    @property
    def min_mass(self) -> FloatArray:
        """The smallest probability the untruncated noise puts on the range.

        For a true value at an end of the range; ``C_min`` of REFERENCE.md §7.
        """
        t = self.scale / self.granularity
        points = (self.upper - self.lower) / self.granularity
        q = np.exp(-1.0 / t)
        return np.asarray(-np.expm1(-(points + 1.0) / t) / (1.0 + q), dtype=np.float64)


def check_mode(mechanism: str, bounding: str, delta: float) -> None:
    """Validate the mechanism / bounding / delta combination (public arguments only)."""
    if mechanism not in MECHANISMS:
        raise ValueError(
            f"mechanism={mechanism!r} is not supported; use 'laplace' (pure epsilon-DP) "
            f"or 'gaussian' (needs delta > 0)"
        )
    if bounding not in BOUNDING_MODES:
        raise ValueError(
            f"bounding={bounding!r} is not a bounding mode; use 'bit' (clamp to the "
            f"public range), 'truncated' (resample inside it, re-calibrated) or 'none'"
        )
    if mechanism == "gaussian" and not (0.0 < delta < 1.0):
        raise ValueError(
            f"mechanism='gaussian' needs 0 < delta < 1 (e.g. delta=1e-6); got delta={delta}"
        )
    if mechanism == "laplace" and delta != 0.0:
        raise ValueError(
            f"mechanism='laplace' is pure epsilon-DP and spends no delta; got delta={delta}. "
            f"Drop delta, or use mechanism='gaussian'"
        )
    if mechanism == "gaussian" and bounding == "truncated":
        raise ValueError(
            "bounding='truncated' is calibrated for the Laplace mechanism only; with "
            "mechanism='gaussian' use bounding='bit' (exact post-processing) or 'none'"
        )


def plan_noise(
    sensitivity: FloatArray,
    lower: FloatArray,
    upper: FloatArray,
    *,
    epsilon: float,
    delta: float = 0.0,
    mechanism: str = "laplace",
    bounding: str = "bit",
    integer: bool = False,
    joint_l1: float | None = None,
    joint_l2: float | None = None,
    max_changed: float | None = None,
) -> NoisePlan:
    """Calibrate the noise for a vector release (public inputs only).

    Parameters
    ----------
    sensitivity : ndarray
        Per-entry global sensitivity ``Delta_i`` (positive).
    lower, upper : ndarray
        Per-entry public output range (``upper`` may be ``inf``).
    epsilon, delta : float
        The budget of the whole vector.
    mechanism : {"laplace", "gaussian"}
    bounding : {"bit", "truncated", "none"}
    integer : bool
        Integer-valued entries (and integer sensitivities): discrete noise, no grid.
    joint_l1, joint_l2 : float, optional
        Sensitivity of the vector after dividing entry ``i`` by ``Delta_i``.
        Default ``k`` and ``sqrt(k)`` (one record may move every entry fully).
    max_changed : float, optional
        For ``truncated``: the largest number of entries one record can move
        (each by at most ``Delta_i``); each entry is calibrated to
        ``epsilon / max_changed``. Default ``joint_l1``, right when entries move
        by all or nothing (counts); give ``k`` when they move partially.
    """
    check_mode(mechanism, bounding, delta)
    sens = np.ascontiguousarray(sensitivity, dtype=np.float64)
    lo = np.ascontiguousarray(lower, dtype=np.float64)
    hi = np.ascontiguousarray(upper, dtype=np.float64)
    if not (epsilon > 0 and math.isfinite(epsilon)):
        raise ValueError(f"epsilon must be a positive finite number; got {epsilon}")
    if not (sens > 0).all():
        raise ValueError("every sensitivity must be positive")
    # the plan is a pure function of public arguments: calibrate each one once
    return _calibrated(
        sens.tobytes(),
        lo.tobytes(),
        hi.tobytes(),
        float(epsilon),
        float(delta),
        mechanism,
        bounding,
        bool(integer),
        joint_l1,
        joint_l2,
        max_changed,
    )


@functools.lru_cache(maxsize=1024)
def _calibrated(
    sens_bytes: bytes,
    lo_bytes: bytes,
    hi_bytes: bytes,
    epsilon: float,
    delta: float,
    mechanism: str,
    bounding: str,
    integer: bool,
    joint_l1: float | None,
    joint_l2: float | None,
    max_changed: float | None,
) -> NoisePlan:
    """:func:`plan_noise` proper; its arrays come back read-only, as it is cached."""
    sens = np.frombuffer(sens_bytes, dtype=np.float64)
    lo = np.frombuffer(lo_bytes, dtype=np.float64)
    hi = np.frombuffer(hi_bytes, dtype=np.float64)
    k = sens.size
    l1 = float(k) if joint_l1 is None else float(joint_l1)
    l2 = math.sqrt(k) if joint_l2 is None else float(joint_l2)

    if integer:
        gamma = np.ones(k)
        paid = sens
    else:
        magnitude = np.maximum(np.abs(lo), np.abs(hi))
        nominal = sens * l1 / epsilon if mechanism == "laplace" else sens * l2 / epsilon
        gamma = mech.grid_granularity(nominal, magnitude) * np.ones(k)
        paid = sens + gamma  # rounding to the grid moves a value by up to one step more

    if mechanism == "gaussian":
        scale = mech.gaussian_sigma(l2, epsilon, delta) * paid
    elif bounding == "truncated":
        eps_i = epsilon / (l1 if max_changed is None else float(max_changed))
        # a one-point range needs no noise (its value is public); calibrate it as
        # one-sided only to keep the arithmetic finite -- apply_noise returns the point
        one_point = ~(hi > lo)
        if integer:
            points = np.where(one_point, np.inf, np.floor(hi) - np.ceil(lo))
            scale = mech.truncated_discrete_laplace_scale(paid, points, eps_i)
        else:
            scale = mech.truncated_laplace_scale(paid, np.where(one_point, np.inf, hi - lo), eps_i)
    else:
        scale = paid * l1 / epsilon
    scale = np.array(scale, dtype=np.float64)
    gamma = np.array(gamma, dtype=np.float64)
    scale.flags.writeable = False
    gamma.flags.writeable = False
    return NoisePlan(
        mechanism=mechanism,
        bounding=bounding,
        integer=integer,
        scale=scale,
        granularity=gamma,
        lower=lo,
        upper=hi,
        epsilon=epsilon,
        delta=delta,
    )


def _draw(plan: NoisePlan, src: mech.RandomSource) -> FloatArray:
    """Integer noise draws (as floats), in grid units."""
    t = plan.scale / plan.granularity
    if plan.mechanism == "gaussian":
        return mech.discrete_gaussian(t, src).astype(np.float64)
    return mech.discrete_laplace(t, src).astype(np.float64)


def apply_noise(theta: FloatArray, plan: NoisePlan, src: mech.RandomSource) -> FloatArray:
    """Release ``theta`` (exact values, inside their ranges) under ``plan``.

    Returns a float vector; for an integer plan its values are whole numbers.
    """
    theta = np.asarray(theta, dtype=np.float64)
    g = plan.granularity
    base = theta if plan.integer else np.rint(theta / g) * g
    if plan.bounding != "truncated":
        out = base + g * _draw(plan, src)
        if plan.bounding == "bit":
            np.minimum(np.maximum(out, plan.lower, out=out), plan.upper, out=out)
        return out

    t = plan.scale / g
    k_lo = np.ceil((plan.lower - base) / g)
    k_hi = np.floor((plan.upper - base) / g)
    out = base + g * _truncated_offsets(t, -k_lo, k_hi, src)
    one_point = ~(plan.upper > plan.lower)
    out[one_point] = plan.lower[one_point]
    return np.asarray(np.clip(out, plan.lower, plan.upper), dtype=np.float64)


def _side_mass(t: FloatArray, m: FloatArray) -> FloatArray:
    """``sum_{j=1..m} q^j`` with ``q = e^{-1/t}`` (``m`` may be infinite)."""
    q = np.exp(-1.0 / t)
    return np.asarray(q * np.expm1(-m / t) / np.expm1(-1.0 / t), dtype=np.float64)


def _truncated_offsets(
    t: FloatArray, below: FloatArray, above: FloatArray, src: mech.RandomSource
) -> FloatArray:
    """Draw ``K`` with ``P(K = k)`` proportional to ``e^{-|k|/t}`` on ``[-below, above]``.

    Inverse-CDF sampling, a fixed amount of work per entry whatever the true value
    (rejection sampling would take longer near a boundary, a timing channel): pick
    the negative side, zero or the positive side by their masses, then a geometric
    variable truncated to that side's length.
    """
    below = np.maximum(below, 0.0)
    above = np.maximum(above, 0.0)
    w_neg = _side_mass(t, below)
    w_pos = _side_mass(t, above)
    pick = src.uniform(t.size) * (w_neg + 1.0 + w_pos)
    negative = pick < w_neg
    positive = pick > w_neg + 1.0
    length = np.where(negative, below, above)
    u = src.uniform(t.size)
    # G on {0, .., length - 1} with P(G = g) proportional to q^g
    geo = np.floor(-t * np.log1p(u * np.expm1(-length / t)))
    geo = np.clip(geo, 0.0, np.maximum(length - 1.0, 0.0))
    step = geo + 1.0
    return np.where(negative, -step, np.where(positive, step, 0.0))


def halfwidth(plan: NoisePlan, alpha: float) -> FloatArray:
    """Per-entry half-width ``h`` with ``P(|release - exact| > h) <= alpha``.

    REFERENCE.md §7: ``s ln(1/alpha)`` for Laplace with ``none`` or ``bit`` (a
    clamp never moves a release away from a value inside the range);
    ``s ln(1/(alpha C_min))`` for ``truncated``, with ``C_min`` the smallest
    probability of the range; the sub-Gaussian tail for the Gaussian. The Laplace
    half-widths are widened for the discreteness of the noise
    (:func:`~pandas_dp.mechanisms.laplace_halfwidth`), and half a grid step is
    added for the rounding of a real value to the grid.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1); got {alpha}")
    if plan.mechanism == "gaussian":
        h = mech.gaussian_halfwidth(plan.scale, alpha)
    elif plan.bounding == "truncated":
        # P(|noise| > h | in range) <= P(|noise| > h) / C_min
        h = mech.laplace_halfwidth(plan.scale, alpha * plan.min_mass, plan.granularity)
    else:
        h = mech.laplace_halfwidth(plan.scale, alpha, plan.granularity)
    if not plan.integer:
        h = h + plan.granularity / 2.0
    return np.asarray(h, dtype=np.float64)
