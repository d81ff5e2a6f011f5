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

import dataclasses
import functools
import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from pandas_dp import mechanisms as mech
from pandas_dp.mechanisms import small
from pandas_dp.mechanisms.constants import SMALL_SIZE

__all__ = [
    "BOUNDING_MODES",
    "MECHANISMS",
    "NoisePlan",
    "apply_noise",
    "apply_noise_clamped",
    "apply_noise_exact",
    "halfwidth",
    "plan_noise",
    "plan_uniform_noise",
]

BOUNDING_MODES: tuple[str, ...] = ("bit", "truncated", "none")
MECHANISMS: tuple[str, ...] = ("laplace", "gaussian")

FloatArray = NDArray[np.float64]
_Ratio = tuple[int, int] | None


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

    def head(self, k: int) -> NoisePlan:
        """The plan of the first ``k`` entries (one group's, when groups are noised alike)."""
        return dataclasses.replace(
            self,
            scale=self.scale[:k],
            granularity=self.granularity[:k],
            lower=self.lower[:k],
            upper=self.upper[:k],
        )

    def tiled(self, times: int) -> NoisePlan:
        """The same entries repeated ``times`` times (one copy per group)."""
        return dataclasses.replace(
            self,
            scale=np.tile(self.scale, times),
            granularity=np.tile(self.granularity, times),
            lower=np.tile(self.lower, times),
            upper=np.tile(self.upper, times),
        )

    @functools.cached_property
    def units(self) -> list[float]:
        """Per entry: the noise scale in grid steps, ``scale / granularity``.

        Computed once per plan (plans are cached, so once per calibration).
        """
        units: list[float] = (self.scale / self.granularity).tolist()
        return units

    @functools.cached_property
    def laplace_split(self) -> list[tuple[int, int]]:
        """:attr:`units`, checked and split for the small-path discrete Laplace
        sampler (:func:`pandas_dp.mechanisms.small.laplace_split`); a refused scale
        raises on every read (nothing is kept)."""
        return small.laplace_split(self.units)

    @functools.cached_property
    def entries(self) -> list[tuple[float, float, float]]:
        """Per entry, ``(granularity, lower, upper)`` as Python floats (for the
        small-vector path of :func:`apply_noise`; computed once per cached plan)."""
        return list(
            zip(
                self.granularity.tolist(),
                self.lower.tolist(),
                self.upper.tolist(),
                strict=True,
            )
        )

    @functools.cached_property
    def exact_grid(self) -> list[tuple[int, int, int, int, float, float, _Ratio, _Ratio]]:
        """Per entry, the grid and the range as integers, for :func:`apply_noise_exact`.

        ``(cn, cd, gn, gd, lower, upper, lower_ratio, upper_ratio)``: the centre is
        ``cn / cd`` and the step ``gn / gd`` (dyadic rationals, exactly); the ends
        as doubles and as ``(numerator, denominator)`` (``None`` if infinite).
        """
        c, _ = _centre(self.lower, self.upper)
        out = []
        for ci, gi, lo, hi in zip(
            c.tolist(),
            self.granularity.tolist(),
            self.lower.tolist(),
            self.upper.tolist(),
            strict=True,
        ):
            cn, cd = ci.as_integer_ratio()
            gn, gd = gi.as_integer_ratio()
            lo_r = lo.as_integer_ratio() if math.isfinite(lo) else None
            hi_r = hi.as_integer_ratio() if math.isfinite(hi) else None
            out.append((cn, cd, gn, gd, lo, hi, lo_r, hi_r))
        return out

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


def plan_uniform_noise(
    size: int,
    sensitivity: float,
    lower: float,
    upper: float,
    *,
    epsilon: float,
    delta: float = 0.0,
    mechanism: str = "laplace",
    bounding: str = "bit",
    integer: bool = False,
    joint_l1: float | None = None,
    joint_l2: float | None = None,
) -> tuple[NoisePlan, bool]:
    """:func:`plan_noise` for ``size`` entries sharing one sensitivity and one range.

    Every argument is public, and the plan is a pure function of them: it is
    calibrated once per distinct set of arguments and cached, so a repeated
    release skips building and checking its arrays. The numbers are keyed by their
    bit patterns (``-0.0`` is not ``0.0``), so a cached plan is exactly the plan
    :func:`plan_noise` would return for ``np.full(size, ...)`` arrays.

    Returns
    -------
    tuple
        The plan and whether every noise scale is finite. Refused arguments raise
        on every call, as :func:`plan_noise` does (nothing is cached for them).

    Examples
    --------
    >>> plan, finite = plan_uniform_noise(1, 1.0, 0.0, 10.0, epsilon=1.0, integer=True)
    >>> plan.scale.shape, plan.integer, finite
    ((1,), True, True)
    >>> plan_uniform_noise(1, 1.0, 0.0, 10.0, epsilon=1.0, integer=True)[0] is plan
    True
    """
    numbers = struct.pack(
        "<5d", float(sensitivity), float(lower), float(upper), float(epsilon), float(delta)
    )
    return _uniform(numbers, int(size), mechanism, bounding, bool(integer), joint_l1, joint_l2)


@functools.lru_cache(maxsize=1024)
def _uniform(
    numbers: bytes,
    size: int,
    mechanism: str,
    bounding: str,
    integer: bool,
    joint_l1: float | None,
    joint_l2: float | None,
) -> tuple[NoisePlan, bool]:
    """The body of :func:`plan_uniform_noise` (which caches it)."""
    sensitivity, lower, upper, epsilon, delta = struct.unpack("<5d", numbers)
    plan = plan_noise(
        np.full(size, sensitivity),
        np.full(size, lower),
        np.full(size, upper),
        epsilon=epsilon,
        delta=delta,
        mechanism=mechanism,
        bounding=bounding,
        integer=integer,
        joint_l1=joint_l1,
        joint_l2=joint_l2,
    )
    return plan, bool(np.all(np.isfinite(plan.scale)))


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
    """:func:`plan_noise` proper; its arrays come back read-only, as it is cached.

    Overflows to inf are caught and reported by name inside (numpy's warnings off).
    """
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        return _calibrate(
            sens_bytes,
            lo_bytes,
            hi_bytes,
            epsilon,
            delta,
            mechanism,
            bounding,
            integer,
            joint_l1,
            joint_l2,
            max_changed,
        )


def _calibrate(
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
    """The body of :func:`_calibrated` (which caches it)."""
    sens = np.frombuffer(sens_bytes, dtype=np.float64)
    lo = np.frombuffer(lo_bytes, dtype=np.float64)
    hi = np.frombuffer(hi_bytes, dtype=np.float64)
    k = sens.size
    l1 = float(k) if joint_l1 is None else float(joint_l1)
    l2 = math.sqrt(k) if joint_l2 is None else float(joint_l2)
    for name, value in (("joint_l1", l1), ("joint_l2", l2)):
        if not (value > 0 and math.isfinite(value)):
            raise ValueError(f"{name} must be a positive finite number; got {value}")
    if np.isnan(lo).any() or np.isnan(hi).any() or not (lo <= hi).all():
        raise ValueError("every output range needs lower <= upper (and no NaN)")

    if integer:
        gamma = np.ones(k)
        paid = sens
    else:
        nominal = sens * l1 / epsilon if mechanism == "laplace" else sens * l2 / epsilon
        _require(nominal, "the nominal noise scale sensitivity / epsilon", epsilon)
        _, half = _centre(lo, hi)
        gamma = mech.grid_granularity(nominal, half) * np.ones(k)
        paid = sens + gamma  # rounding to the grid moves a value by up to one step more
    _require(gamma, "the grid step", epsilon)
    _require(paid, "the sensitivity paid for (with the grid rounding)", epsilon)

    if mechanism == "gaussian" and integer:
        # exact privacy curve of the discrete Gaussian: round(joint_l1) coordinates,
        # each moved by its full (integer) sensitivity; sigma proportional to it
        shifts = np.ceil(paid)
        coords = max(1, round(l1))
        ratio = max(
            mech.discrete_gaussian_sigma(int(dv), epsilon, delta, coords) / float(dv)
            for dv in np.unique(shifts)
        )
        scale = ratio * shifts
    elif mechanism == "gaussian":
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
    scale = np.asarray(scale, dtype=np.float64)
    _require(scale, "the noise scale", epsilon)
    units = scale / gamma
    _require(units, "the noise scale in grid steps (scale / grid step)", epsilon)
    if mechanism == "laplace":
        # the exact sampler draws with a rational scale a hair above: record that one
        scale = mech.representable_scale(units) * gamma
        _require(scale, "the noise scale", epsilon)
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


def _require(values: FloatArray, what: str, epsilon: float) -> None:
    """Raise unless every value is finite, positive and within the samplers' range."""
    v = np.asarray(values, dtype=np.float64)
    limit = mech.MAX_SCALE if "grid steps" in what else np.inf
    bad = ~(np.isfinite(v) & (v > 0) & (v <= limit))
    if bad.any():
        worst = float(v[bad][0])
        bound = " (at most 2**52)" if np.isfinite(limit) else ""
        raise ValueError(
            f"epsilon={epsilon!r} gives {what} of {worst!r}; it must be finite and "
            f"positive{bound}. Use a larger epsilon, a smaller sensitivity or narrower "
            f"bounds"
        )


def _centre(lo: FloatArray, hi: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Public centre and half-width of each range (``0`` and ``0`` if it is infinite).

    A real value is released as ``c + g (round((theta - c) / g) + K)``: around the
    midpoint ``c`` the grid only has to represent offsets up to the half-width, so
    its step follows the width of the range, not the magnitude of its ends.
    """
    finite = np.isfinite(lo) & np.isfinite(hi)
    lo_f, hi_f = np.where(finite, lo, 0.0), np.where(finite, hi, 0.0)  # no inf - inf
    c = lo_f * 0.5 + hi_f * 0.5
    half = hi_f * 0.5 - lo_f * 0.5
    return np.asarray(c, dtype=np.float64), np.asarray(half, dtype=np.float64)


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

    The same sampler on the same scales (:mod:`pandas_dp.mechanisms.small`), so
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
        c, _ = _centre(plan.lower, plan.upper)
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
    if (
        plan.bounding != "truncated"
        and len(values) <= SMALL_SIZE
        and len(values) == plan.scale.size
    ):
        return _apply_exact_small(values, plan, src)
    c_arr, _ = _centre(plan.lower, plan.upper)
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
        [float(c + g * (m0 + int(k))) for (c, g, m0, _, _), k in zip(units, draws, strict=True)],
        dtype=np.float64,
    )
    if plan.bounding != "none":
        np.minimum(np.maximum(out, plan.lower, out=out), plan.upper, out=out)
    return out


def _round_half_even(num: int, den: int) -> int:
    """``round(num / den)`` with ties to even (as ``round`` of a Fraction), ``den > 0``."""
    q, r = divmod(num, den)
    twice = 2 * r
    if twice < den:
        return q
    if twice > den:
        return q + 1
    return q + (q & 1)


def _apply_exact_small(
    values: Sequence[Fraction] | NDArray[np.object_], plan: NoisePlan, src: mech.RandomSource
) -> FloatArray:
    """:func:`apply_noise_exact` (``bit`` or ``none``) for a few entries, in integers.

    With ``x = p / q`` (the value, clamped into the range), the centre ``cn / cd``
    and the step ``gn / gd``: ``M = round((x - c) / g)`` is the half-even rounding
    of ``(p cd - cn q) gd / (q cd gn)``, and the release ``c + g (M + K)`` is
    ``(cn gd + (M + K) gn cd) / (cd gd)``, one correctly rounded int division.
    The same numbers as the Fraction arithmetic of the general path, which the
    tests check.
    """
    grid = plan.exact_grid
    draws = _draw_small(plan, src)
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
        release = (cn * gd + (m0 + k) * gn * cd) / (cd * gd)
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
    (:func:`~pandas_dp.mechanisms.laplace_halfwidth`), and half a grid step is
    added for the rounding of a real value to the grid, and half a unit in the
    last place for the rounding of the centred release ``c + g M`` to a double.
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
        # c + g M is rounded to a double: at most half a unit in the last place of
        # the largest value the release can take when the noise is within h
        c, half = _centre(plan.lower, plan.upper)
        reach = np.abs(c) + half + h + plan.granularity
        h = h + np.where(c != 0.0, np.spacing(reach) / 2.0, 0.0)
    return np.asarray(h, dtype=np.float64)
