"""The catalogue: every statistic the accessors offer, one entry each.

:data:`MOMENTS` holds the statistics of a numeric column released from its moments
(count, sum, mean, var, std, sem, skew): the statistic whose sufficient statistics and estimator it
*reads* (``std`` reads the variance's), whether it takes ``ddof``, whether it is
released as an integer, and the post-processing that *finishes* it (``std`` is the
square root of the variance, its interval and range the roots of the variance's).
The plan (:mod:`pandas_dp.stats.moments`), the budget weights
(:mod:`pandas_dp.stats.moment_weights`) and the releases
(:mod:`pandas_dp.stats.numeric`) look a statistic up here instead of comparing its
name; a variant of a statistic is one entry (pandas' ``groupby/ops.py`` makes
``std`` a variant of ``var`` the same way).

:data:`METHODS` holds the other accessor methods (count, len, size, counts,
value_counts, proportions, quantile, median, cov, corr, agg, describe): each one's
release family and its own parameters in pandas' order. The accessors' methods are
made from both tables (:mod:`pandas_dp.accessor._methods`): a statistic offered on a
frame, a Series and a group-by is written once.

Examples
--------
>>> MOMENTS["std"].reads, MOMENTS["std"].finish(4.0)
('var', 2.0)
>>> [s.name for s in MOMENTS.values() if s.takes_ddof]
['var', 'std', 'sem']
>>> METHODS["median"].family
'quantile'
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["METHODS", "MOMENTS", "MOMENT_STATISTICS", "AccessorMethod", "MomentStatistic", "moment"]


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
        # (its methods are METHODS["count"]: the count of any dtype, not only numeric)
        MomentStatistic("count", reads="count", integer=True),
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


# ---------------------------------------------------------------------------------
# The other accessor methods: one entry each, read by pandas_dp.accessor._methods.


@dataclass(frozen=True)
class AccessorMethod:
    """An accessor method of the catalogue that is not a moment: its parameters.

    The accessors make the method from this entry (:mod:`pandas_dp.accessor._methods`):
    its own parameters, in pandas' order, then the privacy keywords every accessor
    adds; its call goes to the accessor's ``_release_<family>(name, arguments)``.

    Attributes
    ----------
    name : str
        The method, as pandas names it.
    family : str
        The releases it belongs to (``"categories"``, ``"quantile"``, ``"matrix"``
        ...): the accessor's ``_release_<family>`` makes it.
    positional : tuple of str
        Its parameters before ``*``, as pandas orders them. ``column`` and
        ``columns`` are left out on a Series, which has no columns.
    keywords : tuple of str
        Its own keyword-only parameters, ``epsilon`` first; the privacy keywords
        follow them.
    accessors : frozenset of str
        The accessors that offer it (``"frame"``, ``"series"``, ``"groupby"``;
        Dask's inherit them).
    clamps : bool
        Whether values are clamped to declared bounds or categories, so that the
        method takes ``out_of_bounds`` (a count has nothing to clamp).
    numeric : bool
        Whether the columns it names must be numeric (checked from their public
        dtypes before any charge).
    absent : tuple of (str, tuple of str)
        ``(accessor, parameters)``: parameters one accessor does not take.
    named : frozenset of str
        The accessors on which it also takes pandas' named aggregations,
        ``**named`` (``agg(m=("x", "mean"))``).
    """

    name: str
    family: str
    positional: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    accessors: frozenset[str] = _ALL
    clamps: bool = True
    numeric: bool = False
    absent: tuple[tuple[str, tuple[str, ...]], ...] = ()
    named: frozenset[str] = frozenset()

    def takes(self, accessor: str) -> tuple[list[str], list[str]]:
        """Its own positional and keyword-only parameters on ``accessor``.

        Parameters
        ----------
        accessor : str
            ``"frame"``, ``"series"`` or ``"groupby"``.

        Returns
        -------
        (list of str, list of str)
        """
        drop = {p for kind, params in self.absent if kind == accessor for p in params}
        if accessor == "series":
            drop |= {"column", "columns"}
        return (
            [p for p in self.positional if p not in drop],
            [k for k in self.keywords if k not in drop],
        )


_FRAME = frozenset({"frame"})
_DECLARED = ("epsilon", "delta", "bounds", "schema")
#: The keywords of a release that takes ``bounds="auto"``: ``_DECLARED`` with the
#: share of epsilon the estimated bounds spend.
_AUTO = ("epsilon", "delta", "bounds", "bounds_epsilon_share", "schema")
_GRID = (*_AUTO, "bins", "method", "interval")

#: The accessor methods beyond the moments, in the order of pandas' documentation.
METHODS: dict[str, AccessorMethod] = {
    m.name: m
    for m in (
        AccessorMethod(
            "count",
            "count",
            positional=("columns",),
            keywords=("epsilon", "numeric_only", "delta", "schema"),
            clamps=False,
            absent=(
                ("frame", ("columns",)),
                ("series", ("numeric_only",)),
                ("groupby", ("numeric_only",)),
            ),
        ),
        AccessorMethod("len", "len", keywords=("epsilon", "delta", "schema"), clamps=False),
        AccessorMethod(
            "size",
            "len",
            keywords=("epsilon", "delta", "schema"),
            accessors=frozenset({"groupby"}),
            clamps=False,
        ),
        AccessorMethod(
            "counts",
            "counts",
            positional=("queries",),
            keywords=("epsilon", "normalize", "delta", "schema"),
            accessors=_FRAME,
            clamps=False,
        ),
        AccessorMethod(
            "value_counts",
            "categories",
            positional=("column", "normalize", "sort", "ascending", "dropna"),
            keywords=("epsilon", "delta", "categories", "schema", "other", "method", "via"),
            absent=(("groupby", ("method", "via")),),
        ),
        AccessorMethod(
            "proportions",
            "categories",
            positional=("column",),
            keywords=(
                *("epsilon", "delta", "categories", "schema", "method", "via"),
                *("dropna", "other", "sort", "ascending"),
            ),
            absent=(("groupby", ("method", "via", "sort", "ascending")),),
        ),
        AccessorMethod(
            "quantile", "quantile", positional=("columns", "q"), keywords=_GRID, numeric=True
        ),
        AccessorMethod(
            "median",
            "quantile",
            positional=("columns",),
            keywords=("epsilon", "skipna", *_GRID[1:]),
            numeric=True,
        ),
        AccessorMethod(
            "cov",
            "matrix",
            positional=("columns", "ddof"),
            keywords=(*_DECLARED, "method", "psd"),
            accessors=_FRAME,
            numeric=True,
        ),
        AccessorMethod(
            "corr",
            "matrix",
            positional=("columns",),
            keywords=(*_DECLARED, "method", "psd"),
            accessors=_FRAME,
            numeric=True,
        ),
        AccessorMethod(
            "agg",
            "agg",
            positional=("func",),
            keywords=("epsilon", "ddof", *_AUTO[1:]),
            named=frozenset({"frame", "groupby"}),
        ),
        AccessorMethod(
            "describe",
            "describe",
            positional=("columns", "percentiles"),
            keywords=(
                *("epsilon", "bins", "method", "shares", "histogram", "delta", "bounds"),
                *("bounds_epsilon_share", "categories", "schema"),
            ),
        ),
    )
}
