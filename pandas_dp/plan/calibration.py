"""Calibration of a plan: sensitivities, the budget split and the noise scales.

:class:`PlanCalibration` is the base of :class:`~pandas_dp.plan.plans.Plan` that turns
the measurements a plan lists into numbers: the sensitivity of each vector (one
row's, scaled by the contribution bounds, REFERENCE.md §9, §10), each
measurement's share of the budget and its :class:`~pandas_dp.noise.plans.NoisePlan`,
and, for a Gaussian plan, the zCDP ``rho`` of the whole. Everything here is a
function of public facts, so whatever it raises is raised before the budget is
charged. A calibrated plan may be frozen and reused by later calls with the same
public facts (:meth:`PlanCalibration.rebound`).

The pure per-row pieces (:func:`direct_allowance` and the cached rows of the
sensitivity table) are module functions, shared with the plan's construction.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

import numpy as np

from pandas_dp import engines
from pandas_dp.budget.accounting import rho_of_noise, rho_of_pure
from pandas_dp.noise.plans import NoisePlan, plan_noise
from pandas_dp.plan import sensitivity as sensitivity_table
from pandas_dp.plan.sensitivity import output_range, sensitivity
from pandas_dp.request.declared_columns import NumericDeclaration
from pandas_dp.request.grouping import Grouping
from pandas_dp.request.settings import Settings

if TYPE_CHECKING:
    from pandas_dp.plan.measurement import Measurement

__all__ = ["PlanCalibration", "direct_allowance", "integer_sum"]

#: An integer sum is released as a float64 of a whole number: clamped into
#: ``[-2**53, 2**53]``, where every whole number is a double (and clamping a
#: rounded value there gives what clamping the exact one does).
_WHOLE_DOUBLES = 2.0**53


def integer_sum(integer: bool, a: float, b: float) -> bool:
    """Whether a column's sum is an integer release (discrete noise, whole numbers).

    It is when the column's dtype holds whole numbers (``integer``, public), its
    bounds are whole numbers of at most ``2**53``, and the engine's exact sum is
    exact to the unit: its rounding step (:func:`~pandas_dp.engines.accumulation_step`
    of the half-width) is at most ``1/2``, so every clamped value, centred on the
    midpoint, lies on it. Then the sum is an integer, its sensitivity the table's
    (a whole number) with no rounding allowance.

    Examples
    --------
    >>> integer_sum(True, 0.0, 100.0), integer_sum(True, 0.0, 0.5), integer_sum(False, 0.0, 9.0)
    (True, False, False)
    """
    whole = all(v.is_integer() and abs(v) <= _WHOLE_DOUBLES for v in (a, b))
    return integer and whole and engines.accumulation_step(0.5 * (b - a)) <= 0.5


_T = TypeVar("_T")


class PlanCalibration:
    """The calibration of a :class:`~pandas_dp.plan.plans.Plan` (its base class).

    The attributes are set by :class:`~pandas_dp.plan.plans.Plan`'s constructor.
    """

    settings: Settings
    grouping: Grouping | None
    measurements: dict[str, Measurement]
    #: Private keys: a key is kept when its noisy count of units exceeds this.
    threshold: float | None
    selection: Any
    #: (split, rho, kept values) of a frozen plan (:meth:`freeze`), else ``None``.
    _frozen: tuple[dict[str, float], float | None, dict[str, Any]] | None

    def _spread(
        self, statistic: str, per_row: float, a: float, b: float
    ) -> tuple[float, float | None, float | None]:
        """Per-entry, L1 and L2 sensitivity of one statistic's vector (one entry per group).

        ``per_row`` is the table's sensitivity for one row (rounding allowance
        included); the contribution bounds scale it (REFERENCE.md §9, §10). The
        joint norms are ``None`` for a single entry.
        """
        s = self.settings
        c = s.contributions
        grouped = self.grouping is not None
        linf, l1, l2 = _spread_ratios(
            statistic,
            s.neighbouring,
            a,
            b,
            zero_signs(a, b),
            c.rows,
            c.groups if grouped else None,
            c.rows_per_group if grouped else None,
        )
        return (
            per_row * linf,
            None if l1 is None else per_row * l1,
            None if l2 is None else per_row * l2,
        )

    def histogram_l1(self) -> float:
        """Rows one unit may add or remove, counted over public buckets (all groups)."""
        return self._bucket_norms()[1]

    def _bucket_norms(self) -> tuple[float, float, float]:
        """Per-entry, L1 and L2 sensitivity of counts over public buckets (per group)."""
        s = self.settings
        c, rel = s.contributions, s.neighbouring
        if self.grouping is None:
            return (
                float(c.rows),  # all of a unit's rows may land in one bucket
                sensitivity("category_counts", rel, k=c.rows),
                sensitivity("category_counts_l2", rel, k=c.rows),
            )
        g = sensitivity_table.grouped_sensitivity(
            "category_counts", rel, 0.0, 1.0, k=c.rows, g=c.groups, c=c.rows_per_group
        )
        return g.linf, g.l1, g.l2

    def calibrate(self) -> None:
        """Split the budget by weight and calibrate every measurement (may raise)."""
        from pandas_dp.noise.plans import plan_uniform_noise

        s = self.settings
        self._frozen = None
        if not self.measurements:
            raise ValueError("the release measures nothing; name at least one column")
        total = sum(m.weight for m in self.measurements.values())
        for key, m in self.measurements.items():
            share = m.weight / total
            if m.statistic == "distinct_units":
                self._calibrate_selection(key, m, share)
                continue
            if m.select is not None:  # pure epsilon, spent by the selection itself
                self.measurements[key] = replace(m, noise=self._pure(m, share))
                continue
            ranged = math.isfinite(m.lower) or math.isfinite(m.upper)
            # what s.noise(np.full(m.size, ...), share=share, ...) returns, cached on
            # its public arguments (a repeated release skips the calibration)
            noise, finite = plan_uniform_noise(
                m.size,
                m.sensitivity,
                m.lower,
                m.upper,
                epsilon=s.epsilon * share,
                delta=s.delta * share,
                mechanism=s.mechanism,
                bounding=s.bounding if ranged else "none",
                integer=m.integer,
                joint_l1=m.joint_l1,
                joint_l2=m.joint_l2,
                max_changed=self.max_changed(m),
            )
            if not finite:
                raise ValueError(
                    f"epsilon={s.epsilon:g} gives {key} an infinite noise scale; use a larger "
                    f"epsilon or narrower bounds"
                )
            # replace(m, noise=noise) without its keyword round trip (Measurement is a
            # plain frozen dataclass: no __post_init__ to run)
            calibrated = object.__new__(type(m))
            calibrated.__dict__.update(m.__dict__, noise=noise)
            self.measurements[key] = calibrated

    def max_changed(self, m: Measurement) -> float:
        """How many entries of ``m``'s noised vector one privacy unit can move.

        The truncated calibration pays its renormalisation once per moved entry and
        the discrete Gaussian's worst shift vector is capped by it
        (:func:`~pandas_dp.noise.plans.plan_noise`), so it is counted from the
        contribution bounds (REFERENCE.md §9, §10), never from the joint L1 norm (a
        unit with ``k`` rows in ``k`` groups moves ``k`` counts by one each, while
        the L1 norm in units of the per-group sensitivity ``k`` is 1). A unit keeps
        at most ``k`` rows, in at most ``g`` groups (``K = min(k, g c)`` rows in
        all); under ``substitute`` its old and its new rows each move as many
        entries.

        * one entry per group (counts, sums, squares...): ``min(g, K)`` groups;
        * counts over categories (a (group, category) cell per row): ``K`` cells;
        * a group's two bound sums: the two of each group touched (their joint L1);
        * anything else: every entry of the groups it touches (always sound).

        Capped by the entries of the groups a unit can touch: ``min(g, K)`` groups
        of the vector's entries per group, and no more groups than are declared.
        With private keys the vector holds one group's entries (its plan is
        repeated for each kept key, :meth:`~pandas_dp.plan.running.PlanRun.noise_for`)
        while a unit moves up to ``min(g, K)`` kept keys: the count is the same as
        for those keys declared, never one group's. Counts laid out by a selection
        are not capped (their plan is repeated per bucket, so the vector noised is
        longer).

        Parameters
        ----------
        m : Measurement

        Returns
        -------
        float
            A whole number, at least 1.
        """
        s = self.settings
        c = s.contributions
        both = 2 if s.neighbouring == "substitute" else 1
        grouping = self.grouping
        rows = min(c.rows, c.groups * c.rows_per_group) if grouping is not None else c.rows
        kind = m.source.kind
        if kind == "derived":  # repeated per bucket: not capped by its size
            return float(both * rows)
        if grouping is None:
            cap = m.size
        else:
            # every key a unit can move, whether the keys are declared or private
            groups = grouping.size  # (1 for private keys: one group's entries)
            per_group = -(-m.size // groups)
            touched_groups = both * min(c.groups, rows)
            if not grouping.private:
                touched_groups = min(touched_groups, groups)
            cap = per_group * touched_groups
        if m.statistic == "bound_sums" and m.joint_l1 is not None:
            return float(max(1, min(cap, round(m.joint_l1))))
        if kind == "categories":
            touched = both * rows
        elif grouping is not None and kind in ("moments", "rows", "recentred", "products"):
            touched = both * min(c.groups, rows)
        else:
            touched = cap
        return float(max(1, min(cap, touched)))

    def _pure(self, m: Measurement, share: float) -> NoisePlan:
        """A discrete Laplace plan at the measurement's share: a pure epsilon."""
        return plan_noise(
            np.full(1, m.sensitivity),
            np.full(1, m.lower),
            np.full(1, m.upper),
            epsilon=self.settings.epsilon * share,
            mechanism="laplace",
            bounding="none",
            integer=True,
            joint_l1=m.joint_l1,
            joint_l2=m.joint_l2,
        )

    def _calibrate_selection(self, key: str, m: Measurement, share: float) -> None:
        """Partition selection: discrete Laplace counts of units, and their threshold."""
        from pandas_dp.noise import partition

        s = self.settings
        assert self.grouping is not None
        noise = self._pure(m, share)
        self.selection = partition.selection_threshold(
            s.epsilon * share, self.grouping.delta, s.contributions.groups
        )
        self.threshold = float(self.selection.threshold)
        self.measurements[key] = replace(m, noise=noise)

    def rebound(self, settings: Settings) -> Self:
        """This calibrated plan for another call with the same public facts.

        A plan is a function of public facts (:meth:`Settings.plan_key`), so a
        release may reuse a calibrated one: the copy shares the (frozen)
        measurements and takes the call's own settings -- its randomness and its
        budget, charged by :meth:`~pandas_dp.plan.running.PlanRun.run` as for any
        plan. The caller makes sure ``settings.plan_key()`` is this plan's.
        Ungrouped plans only (a grouped run records the keys it kept).
        """
        if self.grouping is not None:
            raise ValueError("a grouped plan is not rebound; build it for the call")
        plan = object.__new__(type(self))
        plan.__dict__.update(self.__dict__)
        plan.settings = settings
        plan.measurements = dict(self.measurements)
        return plan

    def freeze(self) -> None:
        """Keep the split and rho of this calibrated plan, which changes no more (a
        cached plan: its copies from :meth:`rebound` share them). Adding or
        calibrating again forgets them."""
        self._frozen = (self.split(), self.rho(), {})

    def kept(self, name: str, build: Callable[[], _T]) -> _T:
        """``build()``, a function of this plan's public facts (its measurements,
        split and scales), kept by a frozen plan under ``name`` and shared with its
        :meth:`rebound` copies (a cached plan builds it once); built afresh for a
        plan that is not frozen."""
        if self._frozen is None:
            return build()
        memo = self._frozen[2]
        if name not in memo:  # (two threads may both build it: the same value)
            memo[name] = build()
        return cast(_T, memo[name])

    def split(self) -> dict[str, float]:
        """``measurement -> epsilon`` (public)."""
        if self._frozen is not None:
            return dict(self._frozen[0])
        return {k: m.epsilon for k, m in self.measurements.items()}

    def rho(self) -> float | None:
        """The zCDP ``rho`` of a calibrated Gaussian plan: the sum over its measurements.

        Each measurement is a vector with per-entry sensitivity and joint L2 bound
        (default ``sqrt(size)``), noised with its calibrated scale
        (:func:`~pandas_dp.budget.accounting.rho_of_noise`). None for a Laplace plan, a plan
        without measurements or one not calibrated yet.
        """
        if self._frozen is not None:
            return self._frozen[1]
        ms = list(self.measurements.values())
        if self.settings.mechanism != "gaussian" or not ms or any(m.noise is None for m in ms):
            return None
        total = 0.0
        for m in ms:
            if m.select is not None:  # a pure selection
                total += rho_of_pure(m.epsilon)
                continue
            rho = rho_of_noise(m.calibrated, m.sensitivity, m.joint_l2)
            if rho is None:
                return None
            total += rho
        return total


def zero_signs(a: float, b: float) -> tuple[float, float]:
    """The signs of two bounds, for cache keys: ``-0.0 == 0.0``, but a range's ends
    (and so a release's metadata) keep the sign of a zero bound."""
    return math.copysign(1.0, a), math.copysign(1.0, b)


@functools.lru_cache(maxsize=1024, typed=True)
def moment_row(
    stat: str,
    rel: str,
    n: int | None,
    a: float,
    b: float,
    signs: tuple[float, float],
    integer: bool = False,
) -> tuple[float, float, float, bool]:
    """Per-row sensitivity (rounding step included), public range and integrality of
    one sufficient statistic of a column with bounds ``[a, b]`` (``integer``: of whole
    numbers, :func:`integer_sum`).

    A pure function of public arguments, cached (``signs`` tells ``-0.0`` from
    ``0.0``; ``typed`` tells ``1`` from ``1.0``): a repeated release skips the
    sensitivity table. Refused arguments raise on every call (nothing is cached).
    """
    half = 0.5 * (b - a)
    if stat == "count":
        lo, hi = output_range("count", a, b, n)
        return sensitivity("count", rel), lo, hi, True
    if stat == "centred_sum":
        step = engines.accumulation_step(half)
        sens = sensitivity("centred_sum", rel, a, b) + step
        return (
            (sens, -math.inf, math.inf, False) if n is None else (sens, -n * half, n * half, False)
        )
    if stat == "recentred_sum":
        # each row's centred value is rounded to the sum's step: |x - c| <= h(c) + step
        # (and the units in the last place of the midpoint, far below a step), and
        # h(c) >= R / 2: a row moves the sum over h(c) by at most 1 + 2 step / R,
        # allowed for twice over
        step = engines.accumulation_step(half)
        sens = sensitivity("recentred_sum", rel, a, b) + 2.0 * step / half
        return sens, -math.inf, math.inf, False
    if stat == "bound_sums":
        # composed from the count and the centred sum (rounded to its step): a row adds
        # at most R + 2 step to the pair (tests/test_sensitivity.py); a sum's range
        step = engines.accumulation_step(half)
        per_change = 1.0 if rel == "add_remove" else 2.0
        sens = sensitivity("bound_sums", rel, a, b) + 2.0 * step * per_change
        return sens, 0.0, math.inf if n is None else n * (b - a), False
    if stat == "centred_squares":
        step = engines.accumulation_step(half * half)
        sens = sensitivity("centred_squares", rel, a, b) + step
        return sens, 0.0, math.inf if n is None else n * half * half, False
    if stat == "centred_cubes":
        cube = half * half * half
        step = engines.accumulation_step(cube)
        sens = sensitivity("centred_cubes", rel, a, b) + step
        return (
            (sens, -math.inf, math.inf, False) if n is None else (sens, -n * cube, n * cube, False)
        )
    # sum
    if integer_sum(integer, a, b):
        lo, hi = output_range("sum", a, b, n)
        lo, hi = max(lo, -_WHOLE_DOUBLES), min(hi, _WHOLE_DOUBLES)
        return sensitivity("sum", rel, a, b), lo, hi, True
    step = engines.accumulation_step(half)
    sens = sensitivity("sum", rel, a, b) + step
    lo, hi = output_range("sum", a, b, n)
    return sens, lo, hi, False


@functools.lru_cache(maxsize=1024, typed=True)
def _spread_ratios(
    statistic: str,
    rel: str,
    a: float,
    b: float,
    signs: tuple[float, float],
    k: int,
    g: int | None,
    c: int | None,
) -> tuple[float, float | None, float | None]:
    """What :meth:`PlanCalibration._spread` multiplies one row's sensitivity by: per
    entry, L1 and L2 (``None`` ungrouped), for ``k`` rows per unit and, grouped
    (``g`` not ``None``), ``g`` groups per unit and ``c`` rows per group. Pure and
    public, cached as :func:`moment_row` (each bound a typed argument of its own).
    """
    one = sensitivity(statistic, rel, a, b)
    if g is None:
        return sensitivity(statistic, rel, a, b, k=k) / one, None, None
    assert c is not None
    spread = sensitivity_table.grouped_sensitivity(statistic, rel, a, b, k=k, g=g, c=c)
    return spread.linf / one, spread.l1 / one, spread.l2 / one


def direct_allowance(statistic: str, width: float, n: int | None) -> float:
    """How far the exact accumulation's rounding may move a direct release, per row.

    A rounded centred value lies within ``q/2`` of the true one (an interval of
    width ``R + q``), so the mean moves by at most ``q/n`` more; the rounded square
    is the square of the rounded value plus an error of at most
    ``q2/2 + (R/2) q + q²/4``, which adds ``(2 R q + q²)/n + (q2 + R q + q²/2)/(n - 1)``
    to the variance's sensitivity. Brute-force tested in ``tests/test_sensitivity.py``.
    """
    assert n is not None
    q = engines.accumulation_step(0.5 * width)
    if statistic == "mean_direct":
        return q / n
    q2 = engines.accumulation_step(0.25 * width * width)
    return (2 * width * q + q * q) / n + (q2 + width * q + q * q / 2) / (n - 1)


def positive_half(half: float, decl: NumericDeclaration) -> float:
    """Half the bounds' width, refused where it rounds to 0 (subnormal bounds): the
    sums are accumulated on a grid of its magnitude, which must be positive."""
    if not half > 0.0:
        from pandas_dp.errors import InvalidBoundsError

        raise InvalidBoundsError(
            f"the bounds of column {decl.column!r} ({decl.lower:g}, {decl.upper:g}) are too "
            f"narrow: half their width rounds to 0. Declare wider bounds or rescale the "
            f"column (multiply it by a power of 10)"
        )
    return half


def finite_square(half: float, decl: NumericDeclaration) -> float:
    """The squared half-width, refused where it overflows (:func:`finite_power`)."""
    return finite_power(half, decl, 2)


_POWERS = {2: ("variance", "squared"), 3: ("skewness", "cubed")}


def finite_power(half: float, decl: NumericDeclaration, power: int) -> float:
    """``half**power`` (multiplied out), refused where it overflows or underflows to 0:
    the power sums are accumulated on a grid of its magnitude (public; raises before
    anything is charged)."""
    value = 1.0
    for _ in range(power):
        value *= half
    if not (math.isfinite(value) and value > 0.0):
        from pandas_dp.errors import InvalidBoundsError

        what, word = _POWERS.get(power, (f"a moment of order {power}", f"{power}th-power"))
        how = "wide" if value > 1.0 else "narrow"
        fix = "narrower" if how == "wide" else "wider"
        raise InvalidBoundsError(
            f"the bounds of column {decl.column!r} ({decl.lower:g}, {decl.upper:g}) are too "
            f"{how} for a {what}: the {word} half-width "
            f"{'overflows' if how == 'wide' else 'underflows'}. Declare {fix} bounds "
            f"or rescale the column"
        )
    return value
