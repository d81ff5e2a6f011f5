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
['var', 'std']
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
    """

    name: str
    reads: str
    takes_ddof: bool = False
    integer: bool = False
    finish: Callable[[float], float] = _same


#: The moment statistics, in pandas' order.
MOMENTS: dict[str, MomentStatistic] = {
    s.name: s
    for s in (
        MomentStatistic("count", reads="count", integer=True),
        MomentStatistic("sum", reads="sum"),
        MomentStatistic("mean", reads="mean"),
        MomentStatistic("var", reads="var", takes_ddof=True),
        MomentStatistic("std", reads="var", takes_ddof=True, finish=_root),
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
