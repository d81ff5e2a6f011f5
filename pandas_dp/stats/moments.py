"""Moment statistics as plans: what count, sum, mean, var and std measure, and how.

A moment statistic of a numeric column is estimated from noisy sufficient
statistics -- its non-missing count, its centred sum, its centred squares (or,
with ``method="direct"`` and a public length, Liu's direct releases). This module
holds what the releases of :mod:`pandas_dp.stats.numeric` (and ``describe``) share:
the plan entry of each ``(column, statistic)``, measured at the budget weights of
:mod:`pandas_dp.stats.moment_weights`, its public output range, and its estimate and
interval from the noisy measurements (:mod:`pandas_dp.stats.estimators`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
from numpy.typing import NDArray

from pandas_dp.noise.plans import NoisePlan
from pandas_dp.plan.plans import Plan
from pandas_dp.plan.sensitivity import output_range
from pandas_dp.request.declared_columns import NumericDeclaration
from pandas_dp.request.settings import Settings
from pandas_dp.stats import estimators as est
from pandas_dp.stats.catalogue import MOMENT_STATISTICS, moment
from pandas_dp.stats.moment_weights import MOMENT_WEIGHTS, weights_name
from pandas_dp.stats.shrinkage import variance_noise_sd
from pandas_dp.stats.skewness import skew_interval, skew_value

__all__ = [
    "MOMENT_STATISTICS",
    "Entry",
    "check_ddof",
    "entry_range",
    "estimate",
    "plan_entry",
    "plan_moments",
    "stacked",
]

FloatArray = NDArray[np.float64]
IntervalFn = Callable[[float], tuple[float, float]]

#: What each statistic reads from the plan, by method.
_NEEDS = {
    ("count", "moments"): ("count",),
    ("sum", "moments"): ("sum",),
    ("mean", "moments"): ("count", "centred_sum"),
    ("var", "moments"): ("count", "centred_sum", "centred_squares"),
    ("skew", "moments"): ("count", "centred_sum", "centred_squares", "centred_cubes"),
    ("mean", "direct"): ("mean_direct",),
    ("var", "direct"): ("var_direct",),
}

#: What a column's bound sums measure in place of two measurements.
_PAIRED = ("count", "centred_sum")


@dataclass(frozen=True)
class Entry:
    """One released statistic of one column: how it was planned, how to estimate it.

    Attributes
    ----------
    statistic : str
        ``"count"``, ``"sum"``, ``"mean"``, ``"var"`` or ``"std"``.
    decl : NumericDeclaration
        The column's public bounds.
    method : str
        ``"moments"`` or ``"direct"``.
    keys : dict
        Sufficient statistic -> the key of its measurement in the plan.
    """

    statistic: str
    decl: NumericDeclaration
    method: str
    keys: dict[str, str]


def plan_entry(
    plan: Plan,
    statistic: str,
    decl: NumericDeclaration,
    method: str,
    weights: Mapping[str, float] | None = None,
) -> Entry:
    """Add what ``statistic`` of one column measures to ``plan`` (shared, by key).

    Parameters
    ----------
    plan : Plan
        The release's plan, not calibrated yet.
    statistic : str
        ``"count"``, ``"sum"``, ``"mean"``, ``"var"`` or ``"std"``.
    decl : NumericDeclaration
        The column's public bounds.
    method : str
        ``"moments"`` or ``"direct"`` (:func:`~pandas_dp.stats.moment_weights.resolve_method`'s).
    weights : mapping, optional
        Sufficient statistic -> budget weight; by default the statistic's entry of
        :data:`~pandas_dp.stats.moment_weights.MOMENT_WEIGHTS`
        (:func:`~pandas_dp.stats.moment_weights.weights_name`).

    Returns
    -------
    Entry
    """
    base = moment(statistic).reads
    way = method if base in ("mean", "var") else "moments"
    needs = _NEEDS[(base, way)]
    if weights is None:
        s = plan.settings
        name = weights_name(statistic, method, s.neighbouring, s.mechanism, s.bounding)
        weights = MOMENT_WEIGHTS[name]
    if "bound_sums" in weights and "count" not in weights:  # add_remove, Laplace
        needs = tuple(dict.fromkeys("bound_sums" if x in _PAIRED else x for x in needs))
    elif base == "mean" and "recentred_sum" in weights:  # the second stage (add_remove)
        needs = (*needs, "recentred_sum")
    keys = plan.moments(decl, needs, weights)
    return Entry(statistic, decl, way, keys)


def plan_moments(
    statistics: Sequence[str],
    decls: Mapping[Hashable, NumericDeclaration],
    settings: Settings,
    method: str,
    plan: Plan | None = None,
    weights: Mapping[str, float] | None = None,
) -> tuple[Plan, dict[tuple[Hashable, str], Entry]]:
    """Plan every ``(column, statistic)``; statistics of a column share measurements.

    Parameters
    ----------
    statistics : sequence of str
        The statistics of every column.
    decls : mapping
        Column -> its public bounds.
    settings : Settings
        The call's settings (a new plan is made from them).
    method : str
        ``"moments"`` or ``"direct"``.
    plan : Plan, optional
        A plan to add to (``describe`` adds its percentile tree to the same one).
    weights : mapping, optional
        Overrides each statistic's :data:`~pandas_dp.stats.moment_weights.MOMENT_WEIGHTS`
        (``describe`` passes its own).

    Returns
    -------
    plan : Plan
        Not calibrated yet.
    entries : dict
        ``(column, statistic) -> Entry``.
    """
    plan = plan if plan is not None else Plan(settings)
    entries = {
        (c, st): plan_entry(plan, st, decl, method, weights)
        for c, decl in decls.items()
        for st in statistics
    }
    return plan, entries


def _var_range(entry: Entry, ddof: int, n: int | None) -> tuple[float, float]:
    d = entry.decl
    if entry.method == "direct":
        return output_range("var_direct", d.lower, d.upper, n, ddof=ddof)
    return output_range("var", d.lower, d.upper, ddof=ddof)


def entry_range(entry: Entry, plan: Plan, ddof: int) -> tuple[float, float]:
    """The statistic's public output range, from the plan and the declaration alone.

    Parameters
    ----------
    entry : Entry
    plan : Plan
        The calibrated plan (a count's or sum's range is its measurement's).
    ddof : int
        Delta degrees of freedom of a variance or std.

    Returns
    -------
    tuple of float
        ``(lower, upper)``.
    """
    d, k, st = entry.decl, entry.keys, entry.statistic
    if st == "count" and "bound_sums" in k:
        return output_range("count", d.lower, d.upper, plan.settings.public_n)
    if st in ("count", "sum") or (entry.method == "direct" and st == "mean"):
        m = plan.measurements[next(iter(k.values()))]
        return m.lower, m.upper
    if st == "mean":
        return d.lower, d.upper
    if st == "skew":
        return output_range("skew", d.lower, d.upper, plan.settings.public_n)
    lo, hi = _var_range(entry, ddof, plan.settings.public_n)
    finish = moment(st).finish
    return finish(lo), finish(hi)


def estimate(
    entry: Entry,
    plan: Plan,
    noisy: Mapping[str, FloatArray],
    *,
    ddof: int,
    clamp: bool,
    g: int = 0,
) -> tuple[float, IntervalFn]:
    """The statistic of group ``g`` from the noisy measurements, and its interval.

    Every group's entries share one noise plan per measurement, so the interval
    of any group uses the same public scale; the public output range is
    :func:`entry_range`'s, the same for every group.

    Parameters
    ----------
    entry : Entry
    plan : Plan
        The plan that was run.
    noisy : mapping
        Measurement key -> its noisy values, one per group.
    ddof : int
        Delta degrees of freedom of a variance or std.
    clamp : bool
        Whether to clamp the estimate into its public range (the bounding modes
        other than ``"none"``).
    g : int, default 0
        The group.

    Returns
    -------
    value : float
    interval : callable
        ``alpha -> (lower, upper)``, a ``1 - alpha`` interval for the exact statistic.
    """
    d, k, st = entry.decl, entry.keys, entry.statistic
    m = plan.measurements
    n = plan.settings.public_n
    if st == "skew":
        return _skew(entry, plan, noisy, g)
    if "bound_sums" in k:
        pair = m[k["bound_sums"]].calibrated
        p, q = (float(x) for x in noisy[k["bound_sums"]][2 * g : 2 * g + 2])
    if st == "count" and "bound_sums" in k:
        count = est.bound_sums_count_value(p, q, d.lower, d.upper)
        return count, partial(est.bound_sums_count_interval, pair, p, q, d.lower, d.upper)
    if st in ("count", "sum") or (entry.method == "direct" and st == "mean"):
        key = next(iter(k.values()))
        value = float(noisy[key][g])
        noise = m[key].noise
        assert noise is not None
        return value, partial(est.noisy_interval, noise, value)
    if st == "mean" and "bound_sums" in k:
        value = est.bound_sums_mean_value(p, q, d.lower, d.upper, clamp=clamp)
        pair_fn: IntervalFn = partial(est.bound_sums_mean_interval, pair, p, q, d.lower, d.upper)
        return value, pair_fn
    if st == "mean" and "recentred_sum" in k:
        c, s = float(noisy[k["count"]][g]), float(noisy[k["centred_sum"]][g])
        t = float(noisy[k["recentred_sum"]][g])
        c_plan, s_plan, t_plan = (
            m[k[x]].calibrated for x in ("count", "centred_sum", "recentred_sum")
        )
        variances = (c_plan.variance, s_plan.variance, t_plan.variance)
        value = est.recentred_mean_value(c, s, t, variances, d.lower, d.upper, clamp=clamp)
        recentred_fn: IntervalFn = partial(
            est.recentred_mean_interval, c_plan, s_plan, t_plan, c, s, t, d.lower, d.upper
        )
        return value, recentred_fn
    if st == "mean":
        c, s = float(noisy[k["count"]][g]), float(noisy[k["centred_sum"]][g])
        value = est.mean_value(c, s, d.lower, d.upper, clamp=clamp)
        mean_fn: IntervalFn = partial(
            est.mean_interval,
            m[k["count"]].calibrated,
            m[k["centred_sum"]].calibrated,
            c,
            s,
            d.lower,
            d.upper,
        )
        return value, mean_fn
    hi = _var_range(entry, ddof, n)[1]
    half = (d.upper - d.lower) / 2.0
    if entry.method == "direct":
        noise = m[k["var_direct"]].calibrated
        assert noise is not None and n is not None
        factor = (n - 1.0) / (n - ddof)
        raw = float(noisy[k["var_direct"]][g])
        value = raw * factor
        fn: IntervalFn = partial(_scaled_interval, partial(est.noisy_interval, noise, raw), factor)
        c, count_fn = float(n), partial(_public, float(n))  # n public
    else:
        w = float(noisy[k["centred_squares"]][g])
        squares = m[k["centred_squares"]].calibrated
        if "bound_sums" in k:
            c, s = est.bound_sums_count(p, q, d.lower, d.upper), est.bound_sums_centred(p, q)
            # (the pair's noises are independent, of variance pv each: C's is
            # 2 pv / R², S's pv / 2, uncorrelated)
            pv = pair.variance
            width = 2.0 * half
            variances = (2.0 * pv / width / width, pv / 2.0, squares.variance)
            box = partial(est.bound_sums_box, pair, p, q, d.lower, d.upper)
            count_fn = partial(est.bound_sums_count_interval, pair, p, q, d.lower, d.upper)
        else:
            c, s = float(noisy[k["count"]][g]), float(noisy[k["centred_sum"]][g])
            c_plan, s_plan = m[k["count"]].calibrated, m[k["centred_sum"]].calibrated
            variances = (c_plan.variance, s_plan.variance, squares.variance)
            box = partial(est.independent_box, c_plan, c, s_plan, s)
            count_fn = partial(est.noisy_interval, c_plan, c)
        fn = partial(est.var_interval_of, box, squares, w, ddof, hi, half_width=half)
        sd = variance_noise_sd(c, s, w, variances, ddof)
        value = est.var_value(
            c, s, w, ddof=ddof, half_width=half, upper_range=hi, clamp=clamp, noise_sd=sd
        )
    statistic = moment(st)
    if statistic.per_count:  # e.g. sem: the variance over the count, both released
        value, fn = value / max(c, 1.0), partial(_per_count, fn, count_fn)
    return statistic.finish(value), partial(_finished_interval, fn, statistic.finish)


_SKEW_SUMS = ("count", "centred_sum", "centred_squares", "centred_cubes")


def _skew(
    entry: Entry, plan: Plan, noisy: Mapping[str, FloatArray], g: int
) -> tuple[float, IntervalFn]:
    """pandas' skewness of group ``g`` and its interval (:mod:`pandas_dp.stats.skewness`)."""
    keys = [entry.keys[x] for x in _SKEW_SUMS]
    values = [float(noisy[key][g]) for key in keys]
    plans = [plan.measurements[key].calibrated for key in keys]
    half = 0.5 * (entry.decl.upper - entry.decl.lower)
    variances = tuple(p.variance for p in plans)
    return skew_value(*values, variances=variances), partial(_skew_box, plans, values, half)


def _skew_box(
    plans: Sequence[NoisePlan], values: Sequence[float], half: float, alpha: float
) -> tuple[float, float]:
    """The skewness' range over the box of the four sums' intervals at ``alpha / 4``."""
    c, s1, s2, s3 = (
        est.noisy_interval(p, v, alpha / 4.0) for p, v in zip(plans, values, strict=True)
    )
    return skew_interval(c, s1, s2, s3, half)


def _public(n: float, alpha: float) -> tuple[float, float]:
    """A public count's interval: the count itself."""
    return n, n


def _per_count(fn: IntervalFn, count_fn: IntervalFn, alpha: float) -> tuple[float, float]:
    """An interval for ``var / N`` (``N >= 1``): the variance's and the count's at
    ``alpha / 2`` each (a union bound), the quotient's range over their box."""
    lo, hi = fn(alpha / 2.0)
    c_lo, c_hi = count_fn(alpha / 2.0)
    return max(lo, 0.0) / max(c_hi, 1.0), max(hi, 0.0) / max(c_lo, 1.0)


def _scaled_interval(fn: IntervalFn, factor: float, alpha: float) -> tuple[float, float]:
    lo, hi = fn(alpha)
    return lo * factor, hi * factor


def _finished_interval(
    fn: IntervalFn, finish: Callable[[float], float], alpha: float
) -> tuple[float, float]:
    lo, hi = fn(alpha)
    return finish(lo), finish(hi)


def stacked(fns: Sequence[IntervalFn], alpha: float) -> tuple[FloatArray, FloatArray]:
    """The intervals of several entries at ``alpha``, as ``(lowers, uppers)`` arrays.

    Parameters
    ----------
    fns : sequence of callables
        Interval functions (:func:`estimate`'s), one per entry.
    alpha : float
        One minus the coverage of each interval.

    Returns
    -------
    tuple of ndarray
    """
    pairs = [fn(alpha) for fn in fns]
    return np.array([p[0] for p in pairs], dtype=np.float64), np.array(
        [p[1] for p in pairs], dtype=np.float64
    )


def check_ddof(ddof: int) -> int:
    """``ddof`` as an int, checked before anything is charged.

    Parameters
    ----------
    ddof : int
        Delta degrees of freedom: a whole number, at least 0 (``bool`` refused).

    Returns
    -------
    int

    Raises
    ------
    ValueError
        Otherwise.

    Examples
    --------
    >>> check_ddof(1)
    1
    """
    if type(ddof) is int and ddof >= 0:  # the usual case, without the ABCs
        return ddof
    if isinstance(ddof, bool) or not isinstance(ddof, int | np.integer) or ddof < 0:
        raise ValueError(f"ddof must be a whole number >= 0 (pandas' default is 1); got {ddof!r}")
    return int(ddof)
