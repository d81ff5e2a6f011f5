"""The catalogue of moment statistics: what each reads and how it is finished.

One entry per statistic of a numeric column released from its moments (count, sum,
mean, var, std): the statistic whose sufficient statistics and estimator it
*reads* (``std`` reads the variance's), whether it takes ``ddof``, whether it is
released as an integer, and the post-processing that *finishes* it (``std`` is the
square root of the variance, its interval and range the roots of the variance's).
The plan (:mod:`pandas_dp.stats.moments`), the budget weights
(:mod:`pandas_dp.stats.moment_weights`) and the releases
(:mod:`pandas_dp.stats.numeric`) look a statistic up here instead of comparing its
name; a variant of a statistic is one entry (pandas' ``groupby/ops.py`` makes
``std`` a variant of ``var`` the same way).

Examples
--------
>>> MOMENTS["std"].reads, MOMENTS["std"].finish(4.0)
('var', 2.0)
>>> [s.name for s in MOMENTS.values() if s.takes_ddof]
['var', 'std', 'sem']
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["MOMENTS", "MOMENT_STATISTICS", "MomentStatistic", "moment"]


def _same(x: float) -> float:
    return x


def _root(x: float) -> float:
    return math.sqrt(max(x, 0.0))


@dataclass(frozen=True)
class MomentStatistic:
    """One moment statistic of the catalogue.

    Attributes
    ----------
    name : str
        The statistic, as the pandas method that computes it.
    reads : str
        The statistic whose sufficient statistics, budget weights and estimator it
        uses: itself, or the one it is a variant of.
    takes_ddof : bool
        Whether it takes pandas' ``ddof`` (recorded in the metadata's details).
    integer : bool
        Released as an integer (a count).
    finish : callable
        A nondecreasing function applied to the read statistic's value, to the ends
        of its interval and of its public output range (post-processing).
    per_count : bool
        Divided by the column's count before it is finished (``sem``): the count
        is one the read statistic's measurements already release.
    has_method : bool
        Whether it takes ``method`` (``"moments"`` or Liu's ``"direct"``).
    accessors : frozenset of str
        The accessors whose method is made from this entry (``"frame"``,
        ``"series"``, ``"groupby"``; Dask's inherit them).
    summary : str
        The method's first docstring line; ``{call}`` is the accessor's pandas call.
    keywords : tuple of str
        pandas keywords of this statistic's method beyond every moment's
        (``sum``'s ``min_count``).
    """

    name: str
    reads: str
    takes_ddof: bool = False
    integer: bool = False
    finish: Callable[[float], float] = _same
    per_count: bool = False
    has_method: bool = False
    accessors: frozenset[str] = frozenset()
    summary: str = ""
    keywords: tuple[str, ...] = ()


_ALL = frozenset({"frame", "series", "groupby"})

#: The moment statistics, in pandas' order.
MOMENTS: dict[str, MomentStatistic] = {
    s.name: s
    for s in (
        MomentStatistic("count", reads="count", integer=True),  # (written per accessor)
        MomentStatistic(
            "sum",
            reads="sum",
            accessors=_ALL,
            keywords=("min_count",),
            summary="Noisy sum of the bounded values, like ``{call}.sum()``.",
        ),
        MomentStatistic(
            "mean",
            reads="mean",
            has_method=True,
            accessors=_ALL,
            summary="Noisy mean of the bounded values, like ``{call}.mean()``.",
        ),
        MomentStatistic(
            "var",
            reads="var",
            takes_ddof=True,
            has_method=True,
            accessors=_ALL,
            summary="Noisy sample variance of the bounded values, like ``{call}.var(ddof)``.",
        ),
        MomentStatistic(
            "std",
            reads="var",
            takes_ddof=True,
            finish=_root,
            has_method=True,
            accessors=_ALL,
            summary="Noisy standard deviation, like ``{call}.std(ddof)``: the square "
            "root of the variance (post-processing).",
        ),
        MomentStatistic(
            "sem",
            reads="var",
            takes_ddof=True,
            finish=_root,
            per_count=True,
            has_method=True,
            accessors=_ALL,
            summary="Noisy standard error of the mean, like ``{call}.sem(ddof)``: "
            "``sqrt(var / count)`` from the variance's own measurements (post-processing).",
        ),
        MomentStatistic(
            "skew",
            reads="skew",
            accessors=_ALL,
            summary="Noisy skewness, like ``{call}.skew()``: pandas' adjusted "
            "Fisher-Pearson coefficient from the noisy count and centred sums of the "
            "values, squares and cubes.",
        ),
    )
}

#: Their names (``agg`` accepts these and the quantiles).
MOMENT_STATISTICS: tuple[str, ...] = tuple(MOMENTS)


def moment(name: str) -> MomentStatistic:
    """The catalogue entry of ``name``; ``describe`` reads as itself.

    Parameters
    ----------
    name : str
        A moment statistic, or ``"describe"`` (whose weights are its own).

    Returns
    -------
    MomentStatistic
    """
    found = MOMENTS.get(name)
    return found if found is not None else MomentStatistic(name, reads=name)
