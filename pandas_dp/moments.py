"""Moment statistics as plans: what count, sum, mean, var and std measure, and how.

A moment statistic of a numeric column is estimated from noisy sufficient
statistics -- its non-missing count, its centred sum, its centred squares (or,
with ``method="direct"`` and a public length, Liu's direct releases). This module
holds what the releases of :mod:`pandas_dp.statistics` (and ``describe``) share:
the budget weights of those measurements (:data:`MOMENT_WEIGHTS`, each chosen by
measurement), the plan entry of each ``(column, statistic)``, its public output
range, and its estimate and interval from the noisy measurements
(:mod:`pandas_dp.estimators`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
from numpy.typing import NDArray

from pandas_dp import estimators as est
from pandas_dp.declared_columns import NumericDeclaration
from pandas_dp.noise_plans import NoisePlan
from pandas_dp.plan import Plan
from pandas_dp.sensitivity import output_range
from pandas_dp.settings import Settings

__all__ = [
    "METHODS",
    "MOMENT_STATISTICS",
    "MOMENT_WEIGHTS",
    "Entry",
    "check_ddof",
    "entry_range",
    "estimate",
    "pair_allowed",
    "pair_count_is_better",
    "plan_entry",
    "plan_moments",
    "resolve_method",
    "stacked",
    "statistic_weights",
    "weights_name",
]

FloatArray = NDArray[np.float64]
IntervalFn = Callable[[float], tuple[float, float]]

#: Budget weights of the sufficient statistics behind each statistic (add/remove).
#: Measured in ``benchmarks/accuracy.py`` (section "splits", results in
#: ``benchmarks/results/accuracy.md``): RMSE over 500 seeded releases of every
#: candidate weighting, bounds [0, 100], n in {100, 1000, 10000}, epsilon in
#: {0.1, 1, 10}, data uniform / normal centred / piled near a bound (and two-point
#: for the variance), bounding bit and truncated. The defaults minimise the worst
#: ratio to the best weighting of each setting (minimax regret). A one-stage mean
#: ``m + S/C`` errs by the sum's noise plus the count's noise times the distance of
#: the mean from the midpoint ``m``, so its best split depends on the (private)
#: data (1:9 on centred data, 1:1 on piled data; 1:2 was the minimax). Under
#: add/remove with Laplace noise (bounding ``bit`` or ``none``) the mean measures
#: no split at all: the two sums from the bounds, ``(Σ (x - a), Σ (b - x))``, to
#: which one row adds ``b - a`` in all, noised as one vector at the whole epsilon
#: (``bound_sums``; ``benchmarks/mean_pair.py``: more accurate than Liu's
#: public-n mean in every setting, up to 2x more than the two stages below, at
#: most 10 % less on centred data with n epsilon >= 1000). With the truncated
#: mode or the Gaussian mechanism (whose calibrations read a per-entry
#: sensitivity) the mean keeps two stages (``mean_two_stages``): the sum about
#: the first stage's mean (``recentred_sum``,
#: :func:`~pandas_dp.estimators.recentre`), whose noise the count no longer
#: multiplies by a large distance; count : centred_sum : recentred_sum = 2:1:13
#: minimises the worst ratio over the informative settings (the best candidate's
#: RMSE at most 1 % of the bounds' width: 36 of 54): 1.05x, against 2.18x for the
#: one-stage 1:2. Under substitute (where a sum about any centre is as noisy as
#: about the midpoint) the mean keeps 1:2 (``mean_substitute``). Variance and std:
#: under add/remove with Laplace noise (bit or none) the count and the centred sum
#: come from the bound sums too (``(P + Q)/R`` and ``(P - Q)/2``, uncorrelated
#: noise, variances ``4/e²`` and ``R²/e²`` at a share ``e``); bound_sums :
#: centred_squares = 2:3 (worst 1.34x over 36 settings; 1:1 1.41x), against the
#: separate 5:4:9 at equal epsilon: 0.77-0.91x RMSE in 25 of 36 settings,
#: 1.00-1.02x on two-point data at epsilon <= 1, up to 1.35x where the estimate is
#: mostly noise (n = 100, epsilon = 0.1) and 1.26x on two-point data at epsilon =
#: 10 (the variance at the top of its public range). With the
#: truncated mode, the Gaussian or substitute, count : centred_sum :
#: centred_squares = 5:4:9 (``var_separate``; worst 1.40x, former 1:1:2 1.54x).
#: ``describe`` measures, per column, its count and centred sum (as the bound
#: sums), its centred squares, and one percentile tree (``grid``):
#: bound_sums : centred_squares : grid = 10:3:5. The former describe (three
#: releases at epsilon/3: a count; a one-stage mean at 1:2, whose sum had 2/9; a
#: std at 5:4:9, whose squares had 1/6) gave a count at most 1/3 of epsilon, a
#: centred sum 2/9, squares 1/6; 10/18 on the pair gives the count and the sum the
#: noise variance of separate ones at (10/18)/sqrt(2) = 0.39 each, squares get
#: 1/6 and the percentiles 5/18. Measured in ``benchmarks/accuracy.py --only
#: describe`` (``results/accuracy.md``, section 4; 36 settings, 500 releases):
#: against the former describe at equal total epsilon the count is 0.85-1.00x, the
#: mean 0.40-1.00x, the std 0.28-1.28x (above 1 beyond two standard errors only at
#: n = 100, epsilon = 0.1, where the estimate is mostly the clamp); the geometric
#: mean of the ratios 0.72, against 0.84 for the separate 6:4:3:5 and 0.72 for
#: 9:4:5 (whose count is 1.01x). Where a count of its own is more accurate
#: (:func:`pair_count_is_better`: a large epsilon, above about 4.8 per column,
#: where integer noise is mostly exactly 0 while a count read off two real-valued
#: sums is not) describe measures count : centred_sum : centred_squares : grid =
#: 6:4:3:5 (``describe_separate``, also the truncated mode's, the Gaussian's and
#: substitute's), which gives each of them exactly the former share.
#: ``cov`` and ``corr`` (a weight per entry: 1 count, p sums, p squares and
#: p(p-1)/2 cross-products): 4 x 4 on [-1, 1], n = 1000, epsilon = 1, 1000
#: releases, Frobenius RMSE on correlated data / data piled at -1: equal weights
#: 0.0831 / 0.0910, 1:1:1.2:1.5 0.0754 / 0.1048 (the most off-diagonal weight
#: correlated data rewards, 1:1:3:3, costs piled data 1.9x; the sums and count
#: carry the piled data's large means). Chosen: 1:1:1.2:1.5, worst ratio to the
#: best candidate of either shape 1.15x (equal weights: 1.19x).
MOMENT_WEIGHTS: dict[str, dict[str, float]] = {
    "count": {"count": 1.0},
    "sum": {"sum": 1.0},
    # the whole budget; 3, the one-stage total (a partition selection, weight 1,
    # keeps its quarter of a grouped mean's budget)
    "mean": {"bound_sums": 3.0},
    # 2:1:13, scaled to the same total
    "mean_two_stages": {"count": 0.375, "centred_sum": 0.1875, "recentred_sum": 2.4375},
    "mean_substitute": {"count": 1.0, "centred_sum": 2.0},
    # 2:3, scaled to the separate split's total
    "var": {"bound_sums": 7.2, "centred_squares": 10.8},
    "var_separate": {"count": 5.0, "centred_sum": 4.0, "centred_squares": 9.0},
    "describe": {"bound_sums": 10.0, "centred_squares": 3.0, "grid": 5.0},
    "describe_separate": {"count": 6.0, "centred_sum": 4.0, "centred_squares": 3.0, "grid": 5.0},
    "cov": {"count": 1.0, "centred_sum": 1.0, "centred_squares": 1.2, "cross_products": 1.5},
    "mean_direct": {"mean_direct": 1.0},
    "var_direct": {"var_direct": 1.0},
}
#: What each statistic reads from the plan, by method.
_NEEDS = {
    ("count", "moments"): ("count",),
    ("sum", "moments"): ("sum",),
    ("mean", "moments"): ("count", "centred_sum"),
    ("var", "moments"): ("count", "centred_sum", "centred_squares"),
    ("mean", "direct"): ("mean_direct",),
    ("var", "direct"): ("var_direct",),
}
METHODS: tuple[str, ...] = ("auto", "moments", "direct")
#: The statistics a plan of moments releases (``agg`` adds medians through a
#: :class:`TableExtra`).
MOMENT_STATISTICS: tuple[str, ...] = ("count", "sum", "mean", "var", "std")


def resolve_method(method: str, settings: Settings) -> str:
    """The method a release uses: ``"auto"`` is ``"moments"``; ``"direct"`` is checked.

    Parameters
    ----------
    method : {"auto", "moments", "direct"}
        As passed by the caller.
    settings : Settings
        The call's settings; ``"direct"`` needs a public ``n``, which only
        ``neighbouring="substitute"`` declares.

    Returns
    -------
    str
        ``"moments"`` (noisy sufficient statistics) or ``"direct"`` (Liu's releases).

    Raises
    ------
    ValueError
        For an unknown method, or ``"direct"`` without a public length.

    Examples
    --------
    >>> resolve_method("auto", Settings(1.0))
    'moments'
    """
    if method not in METHODS:
        raise ValueError(f"method={method!r} is not supported; use 'auto', 'moments' or 'direct'")
    if method == "direct" and settings.neighbouring != "substitute":
        raise ValueError(
            "method='direct' (Liu's R/n releases) needs the frame's length to be public; "
            "declare neighbouring='substitute' for a frame whose length really is public, "
            "or use the default method"
        )
    return "moments" if method == "auto" else method


def weights_name(
    statistic: str,
    method: str,
    neighbouring: str = "add_remove",
    mechanism: str = "laplace",
    bounding: str = "bit",
) -> str:
    """The :data:`MOMENT_WEIGHTS` entry that splits ``statistic``'s budget.

    Parameters
    ----------
    statistic : str
        ``"count"``, ``"sum"``, ``"mean"``, ``"var"`` or ``"std"`` (which reads the
        variance's measurements), or ``"describe"``.
    method : str
        ``"moments"`` or ``"direct"`` (the mean and the variance only; the other
        statistics have one way).
    neighbouring : str, default "add_remove"
        The relation: under ``"substitute"`` the mean measures a count and a
        centred sum (``"mean_substitute"``).
    mechanism, bounding : str, default "laplace", "bit"
        Under add/remove with Laplace noise and bounding ``"bit"`` or ``"none"``
        (:func:`pair_allowed`) the mean, the variance and describe measure a
        column's two bound sums (``"mean"``, ``"var"``, ``"describe"``; describe
        only where :func:`pair_count_is_better`); otherwise the mean measures two
        stages (``"mean_two_stages"``) and the others a count and a centred sum
        (``"var_separate"``, ``"describe_separate"``).

    Returns
    -------
    str

    Examples
    --------
    >>> weights_name("std", "moments"), weights_name("mean", "direct")
    ('var', 'mean_direct')
    >>> weights_name("mean", "moments", "substitute")
    'mean_substitute'
    >>> weights_name("mean", "moments", "add_remove", "gaussian")
    'mean_two_stages'
    >>> weights_name("var", "moments", "add_remove", "laplace", "truncated")
    'var_separate'
    """
    base = "var" if statistic == "std" else statistic
    way = method if base in ("mean", "var") else "moments"
    if way == "direct":
        return f"{base}_direct"
    if base not in ("mean", "var", "describe"):
        return base
    pair = pair_allowed(neighbouring, mechanism, bounding)
    if base != "mean":
        return base if pair else f"{base}_separate"
    if neighbouring == "substitute":
        return "mean_substitute"
    return "mean" if pair else "mean_two_stages"


def pair_allowed(neighbouring: str, mechanism: str, bounding: str) -> bool:
    """Whether a column's count and centred sum are measured as its two bound sums.

    Under add/remove with Laplace noise and bounding ``"bit"`` or ``"none"``: the
    pair's calibration (one vector, a per-entry sensitivity and a joint L1 norm)
    is the Laplace one, and its saving is the private count's (under substitute
    the count costs nothing extra to a sum's neighbours, and the mean keeps 1:2).

    Examples
    --------
    >>> pair_allowed("add_remove", "laplace", "bit"), pair_allowed("substitute", "laplace", "bit")
    (True, False)
    """
    return neighbouring == "add_remove" and mechanism == "laplace" and bounding != "truncated"


def statistic_weights(
    statistic: str,
    together: Sequence[str],
    method: str,
    neighbouring: str,
    mechanism: str = "laplace",
    bounding: str = "bit",
) -> dict[str, float]:
    """The budget weights of ``statistic``'s measurements, requested with ``together``.

    :data:`MOMENT_WEIGHTS`'s entry (:func:`weights_name`), except that a mean or a
    count asked for with a variance or std of the same column reads the
    variance's measurements of them (its bound sums, or its count and centred
    sum), and a count asked for with a mean measured as bound sums reads those:
    what is measured once is paid for once, at the variance's (or the mean's)
    weights.

    Examples
    --------
    >>> statistic_weights("mean", ("mean",), "moments", "add_remove")
    {'bound_sums': 3.0}
    >>> statistic_weights("mean", ("mean", "std"), "moments", "add_remove")
    {'bound_sums': 7.2}
    >>> statistic_weights("count", ("count", "mean"), "moments", "add_remove")
    {'bound_sums': 3.0}
    >>> statistic_weights("mean", ("mean", "var"), "moments", "add_remove", "gaussian")
    {'count': 5.0, 'centred_sum': 4.0}
    """
    name = weights_name(statistic, method, neighbouring, mechanism, bounding)
    wanted = set(together)
    reader = None  # the statistic whose measurements this one reads
    if name in ("mean", "mean_two_stages", "count") and wanted & {"var", "std"}:
        reader = weights_name("var", method, neighbouring, mechanism, bounding)
    elif name == "count" and "mean" in wanted:
        reader = weights_name("mean", method, neighbouring, mechanism, bounding)
    if reader is not None and not reader.endswith("_direct"):
        read = MOMENT_WEIGHTS[reader]
        shared = ("bound_sums", "count") if statistic == "count" else _FIRST_STAGE
        if "bound_sums" in read or reader.startswith("var"):
            return {k: v for k, v in read.items() if k in shared}
    return dict(MOMENT_WEIGHTS[name])


#: What a column's bound sums measure in place of two measurements.
_PAIRED = ("count", "centred_sum")
#: What a mean reads of a variance's measurements.
_FIRST_STAGE = ("bound_sums", "count", "centred_sum")


def pair_count_is_better(pair: NoisePlan, count: NoisePlan, width: float) -> bool:
    """Whether a count read off the bound sums (noise plan ``pair``, bounds of width
    ``width``) has at most the mean squared error of a count of its own (``count``).

    A choice between two plans by their public noise scales alone. At a large
    epsilon a count's integer noise is mostly exactly 0, which a count rounded
    from two real-valued sums does not match (:func:`~pandas_dp.estimators.integer_count_mse`,
    :func:`~pandas_dp.estimators.bound_sums_count_mse`); describe then measures a
    count of its own.

    Examples
    --------
    >>> import numpy as np
    >>> from pandas_dp.noise_plans import plan_noise
    >>> def pair(e): return plan_noise(np.full(2, 0.5), np.zeros(2), np.full(2, np.inf), epsilon=e)
    >>> def count(e): return plan_noise(np.ones(1), np.zeros(1), np.full(1, np.inf), epsilon=e,
    ...                                 integer=True)
    >>> pair_count_is_better(pair(0.5), count(1 / 3), 1.0)
    True
    >>> pair_count_is_better(pair(5.0), count(10 / 3), 1.0)
    False
    """
    return est.bound_sums_count_mse(pair, width) <= est.integer_count_mse(count)


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
        ``"moments"`` or ``"direct"`` (:func:`resolve_method`'s).
    weights : mapping, optional
        Sufficient statistic -> budget weight; by default the statistic's entry of
        :data:`MOMENT_WEIGHTS` (:func:`weights_name`).

    Returns
    -------
    Entry
    """
    base = "var" if statistic == "std" else statistic
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
        Overrides each statistic's :data:`MOMENT_WEIGHTS` (``describe`` passes its own).

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
    lo, hi = _var_range(entry, ddof, plan.settings.public_n)
    return (0.0, math.sqrt(hi)) if st == "std" else (lo, hi)


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
    if entry.method == "direct":
        noise = m[k["var_direct"]].calibrated
        assert noise is not None and n is not None
        factor = (n - 1.0) / (n - ddof)
        raw = float(noisy[k["var_direct"]][g])
        value = raw * factor
        fn: IntervalFn = partial(_scaled_interval, partial(est.noisy_interval, noise, raw), factor)
    elif "bound_sums" in k:
        w = float(noisy[k["centred_squares"]][g])
        c, s = est.bound_sums_count(p, q, d.lower, d.upper), est.bound_sums_centred(p, q)
        value = est.var_value(c, s, w, ddof=ddof, upper_range=hi, clamp=clamp)
        squares = m[k["centred_squares"]].calibrated
        box = partial(est.bound_sums_box, pair, p, q, d.lower, d.upper)
        fn = partial(est.var_interval_of, box, squares, w, ddof, hi)
    else:
        c = float(noisy[k["count"]][g])
        s = float(noisy[k["centred_sum"]][g])
        w = float(noisy[k["centred_squares"]][g])
        value = est.var_value(c, s, w, ddof=ddof, upper_range=hi, clamp=clamp)
        fn = partial(
            est.var_interval,
            m[k["count"]].calibrated,
            m[k["centred_sum"]].calibrated,
            m[k["centred_squares"]].calibrated,
            c,
            s,
            w,
            ddof,
            hi,
        )
    if st == "std":
        return math.sqrt(max(value, 0.0)), partial(_root_interval, fn)
    return value, fn


def _scaled_interval(fn: IntervalFn, factor: float, alpha: float) -> tuple[float, float]:
    lo, hi = fn(alpha)
    return lo * factor, hi * factor


def _root_interval(fn: IntervalFn, alpha: float) -> tuple[float, float]:
    lo, hi = fn(alpha)
    return math.sqrt(max(lo, 0.0)), math.sqrt(max(hi, 0.0))


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
