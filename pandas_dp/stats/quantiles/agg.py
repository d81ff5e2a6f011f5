"""``agg``'s quantiles: medians planned into the plan of ``agg``'s moments.

``df.dp.agg({"age": ["mean", "median"]})`` is one plan and one charge. Its medians
are the permute-and-flip selections of :mod:`pandas_dp.stats.quantiles.releases` on the default
grid, added to the moments' plan as a :class:`~pandas_dp.stats.numeric.TableExtra`
(:class:`AggQuantiles`), so ``quantile`` and ``agg`` make a median the same way.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from functools import partial
from typing import Any

import pandas as pd

from pandas_dp.plan.plans import Plan
from pandas_dp.request.declared_columns import NumericDeclaration
from pandas_dp.request.grouping import Grouping
from pandas_dp.stats.numeric import FloatArray, IntervalFn
from pandas_dp.stats.quantiles.estimators import Selection
from pandas_dp.stats.quantiles.releases import Estimates, check_bins, default_bins

__all__ = ["AGG_QUANTILES", "AggQuantiles", "agg_quantiles"]

#: ``agg``'s quantile statistics and their levels.
AGG_QUANTILES: dict[str, float] = {"median": 0.5}


class AggQuantiles:
    """``agg``'s medians, planned into the plan of its moments (a
    :class:`~pandas_dp.stats.numeric.TableExtra`): permute-and-flip selections on the
    default grid, as ``quantile`` makes them.

    Parameters
    ----------
    requests : dict
        ``column -> statistics`` of the ``agg`` call; the columns asking for one of
        :data:`AGG_QUANTILES` are planned here.
    columns : dict
        ``column -> Series``.
    decls : dict
        ``column -> NumericDeclaration`` (the public bounds).
    grouping : Grouping, optional
        The group-by, if any (it sets the default grid).
    """

    def __init__(
        self,
        requests: Mapping[Hashable, Sequence[str]],
        columns: Mapping[Hashable, pd.Series],
        decls: Mapping[Hashable, NumericDeclaration],
        grouping: Grouping | None,
    ) -> None:
        self.columns = {
            c: tuple(s for s in sts if s in AGG_QUANTILES)
            for c, sts in requests.items()
            if any(s in AGG_QUANTILES for s in sts)
        }
        self._series = {c: columns[c] for c in self.columns}
        self._decls = {c: decls[c] for c in self.columns}
        self._qs = tuple(sorted({AGG_QUANTILES[s] for sts in self.columns.values() for s in sts}))
        # public arguments only: may raise, before anything is planned or charged
        self._bins = check_bins(default_bins("exponential", grouping), self._decls)
        self._selection: Selection | None = None

    def plan(self, plan: Plan, weights: Mapping[Hashable, float]) -> dict[Any, Any]:
        """Add each column's selection and ladder at its weight; the engine readers."""
        self._selection = Selection(self._bins, self._qs, self._decls, plan)
        return {
            ("grid", c): self._selection.add(c, self._series[c], weights[c]) for c in self.columns
        }

    def check(self) -> None:
        """The selections' rates are representable (raises before the charge)."""
        assert self._selection is not None
        self._selection.check()

    def estimate(
        self, noisy: Mapping[str, FloatArray], groups: int
    ) -> dict[tuple[Hashable, str], Estimates]:
        """``(column, statistic) -> (values per group, interval functions, range)``."""
        selection = self._selection
        assert selection is not None
        out: dict[tuple[Hashable, str], Estimates] = {}
        for c, stats in self.columns.items():
            values = selection.values(c, noisy, groups)  # (groups, levels)
            for s in stats:
                j = self._qs.index(AGG_QUANTILES[s])
                fns: list[IntervalFn] = [
                    partial(_level_interval, selection, c, g, j) for g in range(groups)
                ]
                out[(c, s)] = (
                    values[:, j].copy(),
                    fns,
                    (self._decls[c].lower, self._decls[c].upper),
                )
        selection.plan = None  # the metadata keeps the estimator: not the plan's random source
        return out

    def details(self) -> dict[str, Any]:
        """How the quantiles were made (the metadata's ``details["quantiles"]``)."""
        assert self._selection is not None
        return self._selection.details()


def agg_quantiles(
    requests: Mapping[Hashable, Sequence[str]],
    columns: Mapping[Hashable, pd.Series],
    decls: Mapping[Hashable, NumericDeclaration],
    grouping: Grouping | None,
) -> AggQuantiles | None:
    """The :class:`AggQuantiles` of an ``agg`` call, or ``None`` if it asks for none.

    Examples
    --------
    >>> from pandas_dp.request.declared_columns import NumericDeclaration
    >>> x = pd.Series([1.0, 2.0, 3.0])
    >>> part = agg_quantiles({"x": ("mean", "median")}, {"x": x},
    ...                      {"x": NumericDeclaration("x", 0.0, 10.0)}, None)
    >>> part.columns
    {'x': ('median',)}
    >>> agg_quantiles({"x": ("mean",)}, {"x": x}, {}, None) is None
    True
    """
    if not any(s in AGG_QUANTILES for sts in requests.values() for s in sts):
        return None
    return AggQuantiles(requests, columns, decls, grouping)


def _level_interval(
    selection: Selection, c: Hashable, g: int, j: int, alpha: float
) -> tuple[float, float]:
    """The interval of level ``j`` of column ``c`` in group ``g``."""
    lo, hi = selection.interval(c, g, alpha)
    return float(lo[j]), float(hi[j])
