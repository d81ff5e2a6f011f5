"""Noise plans: how a vector of exact values is noised, calibrated from public facts.

A :class:`NoisePlan` holds everything public about the noise of one release --
mechanism, bounding mode, per-entry scale, grid step and output range, and the
budget -- and no data. :func:`plan_noise` calibrates it (:func:`plan_uniform_noise`
for entries that share one sensitivity and one range); both are pure functions
of their arguments, cached, and raise before any data is read.

A release of ``k`` entries is calibrated once: each entry ``i`` is normalised by
its own sensitivity ``Delta_i``, and ``joint_l1`` / ``joint_l2`` give the
sensitivity of the normalised vector (``k`` and ``sqrt(k)`` when one record may
move every entry by its full sensitivity; smaller for histograms). A real value
is released on a power-of-two grid (REFERENCE.md §4) whose step is paid for in
the sensitivity. With ``bounding="truncated"`` the Laplace scale is
re-calibrated (:func:`~pandas_dp.noise.mechanisms.truncated_laplace_scale`) so that
the truncated release keeps its epsilon, and the discrete Gaussian is calibrated
on its exact privacy curve, both for the worst vector of shifts one record can
make: each entry by at most ``Delta_i``, ``joint_l1`` in all, ``max_changed``
entries at most (a privacy unit with ``k`` rows may move ``k`` counts by one
each, or three by ``(2, 2, 1)``).

The noise itself is drawn and bounded by :mod:`pandas_dp.noise.bounding`. This module
knows nothing of pandas.

Examples
--------
>>> import numpy as np
>>> plan = plan_noise(np.array([1.0]), np.array([0.0]), np.array([10.0]),
...                   epsilon=1.0, mechanism="laplace", bounding="bit")
>>> round(float(plan.scale[0]), 6)
1.0
"""

from __future__ import annotations

import dataclasses
import functools
import math
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from pandas_dp.noise import mechanisms as mech
from pandas_dp.noise.mechanisms import small
from pandas_dp.noise.mechanisms.shift_vectors import (
    discrete_gaussian_sigma_for,
    truncated_scale_for,
)

__all__ = [
    "BOUNDING_MODES",
    "MECHANISMS",
    "NoisePlan",
    "check_mode",
    "plan_noise",
    "plan_uniform_noise",
    "rounded_l2",
]

BOUNDING_MODES: tuple[str, ...] = ("bit", "truncated", "none")
MECHANISMS: tuple[str, ...] = ("laplace", "gaussian")

FloatArray = NDArray[np.float64]
_Ratio = tuple[int, int] | None


class _Options(NamedTuple):
    """The keyword arguments of :func:`plan_noise` other than the budget, as one key."""

    mechanism: str
    bounding: str
    integer: bool
    joint_l1: float | None
    joint_l2: float | None
    max_changed: float | None


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
    l2_paid : float or None
        Real-valued Gaussian noise: the L2 norm of a neighbour's moves, in units of
        ``sensitivity + granularity``, that ``sigma`` was calibrated for (the grid
        rounding included; :func:`rounded_l2`); ``None`` otherwise.
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
    l2_paid: float | None = None

    def head(self, k: int) -> NoisePlan:
        """The plan of the first ``k`` entries (one group's, when groups are noised alike)."""
        return self._per_entry(lambda a: a[:k])

    def tiled(self, times: int) -> NoisePlan:
        """The same entries repeated ``times`` times (one copy per group)."""
        return self._per_entry(lambda a: np.tile(a, times))

    def _per_entry(self, change: Callable[[FloatArray], FloatArray]) -> NoisePlan:
        """This plan with ``change`` applied to each per-entry array."""
        return dataclasses.replace(
            self,
            scale=change(self.scale),
            granularity=change(self.granularity),
            lower=change(self.lower),
            upper=change(self.upper),
        )

    @functools.cached_property
    def units(self) -> list[float]:
        """Per entry: the noise scale in grid steps, ``scale / granularity``.

        Computed once per plan (plans are cached, so once per calibration).
        """
        units: list[float] = (self.scale / self.granularity).tolist()
        return units

    @functools.cached_property
    def variance(self) -> float:
        """The first entry's noise variance: ``2 b²`` (Laplace, scale ``b``) or
        ``sigma²`` (Gaussian), the discreteness left out (an estimator's weight)."""
        scale = float(self.scale[0])
        return scale * scale * (1.0 if self.mechanism == "gaussian" else 2.0)

    @functools.cached_property
    def laplace_split(self) -> tuple[tuple[int, int], ...]:
        """:attr:`units`, checked and split for the small-path discrete Laplace
        sampler (:func:`pandas_dp.noise.mechanisms.small.laplace_split`); a refused scale
        raises on every read (nothing is kept)."""
        return small.laplace_split(self.units)

    @functools.cached_property
    def entries(self) -> list[tuple[float, float, float]]:
        """Per entry, ``(granularity, lower, upper)`` as Python floats (for the
        small-vector path of :func:`~pandas_dp.noise.bounding.apply_noise`; computed once
        per cached plan)."""
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
        """Per entry, the grid and the range as integers, for
        :func:`~pandas_dp.noise.bounding.apply_noise_exact`.

        ``(cn, cd, gn, gd, lower, upper, lower_ratio, upper_ratio)``: the centre is
        ``cn / cd`` and the step ``gn / gd`` (dyadic rationals, exactly); the ends
        as doubles and as ``(numerator, denominator)`` (``None`` if infinite).
        """
        c, _ = range_centre(self.lower, self.upper)
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
        The largest number of entries one record (one privacy unit) can move,
        each by at most ``Delta_i`` and, jointly, by at most ``joint_l1`` in units
        of the ``Delta_i``. Default ``k``, every entry: always sound, and what a
        caller must narrow from its contribution bounds (a unit with ``m`` rows
        moves at most ``m`` counts). It bounds the worst shift vector of
        ``truncated`` (whose renormalisation is paid once per moved entry), of the
        discrete Gaussian (``floor(joint_l1)`` entries moved fully and one by the
        remainder, at most ``max_changed`` in all) and the grid rounding of a real
        release (up to one grid step per moved entry).
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
    options = _Options(mechanism, bounding, bool(integer), joint_l1, joint_l2, max_changed)
    return _calibrated(
        sens.tobytes(), lo.tobytes(), hi.tobytes(), float(epsilon), float(delta), options
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
    max_changed: float | None = None,
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
    options = _Options(mechanism, bounding, bool(integer), joint_l1, joint_l2, max_changed)
    return _uniform(numbers, int(size), options)


@functools.lru_cache(maxsize=1024)
def _uniform(numbers: bytes, size: int, options: _Options) -> tuple[NoisePlan, bool]:
    """The body of :func:`plan_uniform_noise` (which caches it)."""
    sensitivity, lower, upper, epsilon, delta = struct.unpack("<5d", numbers)
    full = [np.full(size, v) for v in (sensitivity, lower, upper)]
    plan = plan_noise(*full, epsilon=epsilon, delta=delta, **options._asdict())
    return plan, bool(np.all(np.isfinite(plan.scale)))


@functools.lru_cache(maxsize=1024)
@np.errstate(over="ignore", divide="ignore", invalid="ignore")
def _calibrated(
    sens_bytes: bytes,
    lo_bytes: bytes,
    hi_bytes: bytes,
    epsilon: float,
    delta: float,
    options: _Options,
) -> NoisePlan:
    """:func:`plan_noise` proper; its arrays come back read-only, as it is cached.

    Overflows to inf are caught and reported by name inside (numpy's warnings off).
    """
    mechanism, bounding, integer, joint_l1, joint_l2, max_changed = options
    sens = np.frombuffer(sens_bytes, dtype=np.float64)
    lo = np.frombuffer(lo_bytes, dtype=np.float64)
    hi = np.frombuffer(hi_bytes, dtype=np.float64)
    k = sens.size
    l1 = float(k) if joint_l1 is None else float(joint_l1)
    l2 = math.sqrt(k) if joint_l2 is None else float(joint_l2)
    moved = float(k) if max_changed is None else float(max_changed)
    for name, value in (("joint_l1", l1), ("joint_l2", l2), ("max_changed", moved)):
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
        _, half = range_centre(lo, hi)
        gamma = mech.grid_granularity(nominal, half) * np.ones(k)
        paid = sens + gamma  # rounding to the grid moves a value by up to one step more
    _require(gamma, "the grid step", epsilon)
    _require(paid, "the sensitivity paid for (with the grid rounding)", epsilon)

    l2_paid: float | None = None
    if mechanism == "gaussian" and integer:
        # exact privacy curve of the discrete Gaussian for the worst shift vector:
        # floor(joint_l1) coordinates moved by their full (integer) sensitivity and
        # one by the remainder, at most max_changed in all; sigma proportional to it
        shifts = np.ceil(paid)
        ratio = max(
            discrete_gaussian_sigma_for(int(dv), l1, moved, epsilon, delta) / float(dv)
            for dv in np.unique(shifts)
        )
        scale = ratio * shifts
    elif mechanism == "gaussian":
        l2_paid = rounded_l2(l2, l1, moved, float(np.max(gamma / paid)))
        scale = mech.gaussian_sigma(l2_paid, epsilon, delta) * paid
    elif bounding == "truncated":
        # a one-point range needs no noise (its value is public); calibrate it as
        # one-sided only to keep the arithmetic finite -- apply_noise returns the point
        one_point = ~(hi > lo)
        if integer:
            width = np.where(one_point, np.inf, np.floor(hi) - np.ceil(lo))
        else:
            width = np.where(one_point, np.inf, hi - lo)
        scale = truncated_scale_for(sens, paid, width, integer, l1, moved, epsilon)
    else:
        # one record moves the entries' exact values by at most joint_l1 (in units of
        # Delta_i) and, rounded to the grid, each moved entry by one step more: with
        # rho = max gamma_i / (Delta_i + gamma_i), the rounded moves add up to at most
        # joint_l1 + max(0, max_changed - joint_l1) rho in units of Delta_i + gamma_i
        rho = 0.0 if integer else float(np.max(gamma / paid))
        scale = paid * (l1 + max(0.0, moved - l1) * rho) / epsilon
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
        l2_paid=l2_paid,
    )


def rounded_l2(l2: float, l1: float, moved: float, rho: float) -> float:
    """The L2 norm of a neighbour's moves once rounded to the noise grid, in units of
    ``Delta_i + gamma_i``.

    Entry ``i`` moves by a fraction ``f_i <= 1`` of its sensitivity ``Delta_i``
    (``sum f_i <= l1``, ``sum f_i**2 <= l2**2``, at most ``moved`` entries), and the
    rounding by up to one grid step ``gamma_i`` more: ``f_i (1 - rho) + rho`` in
    these units, ``rho = max gamma_i / (Delta_i + gamma_i)``. So the squared norm is
    at most ``(1 - rho)**2 l2**2 + 2 rho (1 - rho) l1 + moved rho**2`` (and never
    counted below ``l2``: a full move, ``f_i = 1``, is exactly one unit).

    Examples
    --------
    >>> rounded_l2(2.0, 4.0, 4.0, 0.0)
    2.0
    >>> rounded_l2(1.0, 1.0, 4.0, 0.01) > 1.0  # one unit's row spread over 4 entries
    True
    """
    squared = (1.0 - rho) ** 2 * l2 * l2 + 2.0 * rho * (1.0 - rho) * l1 + moved * rho * rho
    return max(l2, math.sqrt(squared))


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


def range_centre(lo: FloatArray, hi: FloatArray) -> tuple[FloatArray, FloatArray]:
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
