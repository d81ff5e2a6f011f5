"""The quantile estimators of a release: one column's plan, selection and intervals.

A release (:func:`pandas_dp.stats.quantiles.releases.release_quantiles`) asks one estimator per
column, by ``method``:

* :class:`Selection` (``"exponential"``): the column's counts in the half cells of a
  fine grid, selected from by exact permute-and-flip after the charge
  (:mod:`pandas_dp.stats.quantiles.search`), and, unless ``interval=False``, a noisy
  ladder histogram around the selected edges for the intervals
  (:data:`INTERVAL_SHARE` of the column's budget);
* :class:`TreeQuantiles` (``"tree"``): one noisy hierarchical histogram per column,
  every quantile and interval read off it (:mod:`pandas_dp.stats.quantiles.tree`).

Both answer the same four calls: ``add`` plans a column at a budget weight and
returns its engine reader, ``check`` raises (before the charge) on what the plan's
calibration cannot represent, ``values`` reads the released quantiles per group
and ``interval`` one group's intervals.

Examples
--------
>>> from pandas_dp.request.settings import Settings
>>> plan = Plan(Settings(epsilon=1.0))
>>> decls = {"x": NumericDeclaration("x", 0.0, 1.0)}
>>> type(estimator_for("tree", 1024, (0.5,), decls, plan)).__name__
'TreeQuantiles'
>>> estimator_for("exponential", 1024, (0.5,), decls, plan, interval=False).share
0.0
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from pandas_dp.noise.bounding import apply_noise
from pandas_dp.noise.plans import NoisePlan
from pandas_dp.plan.plans import Plan
from pandas_dp.request.declared_columns import NumericDeclaration
from pandas_dp.stats.quantiles.search import (
    PILE_TRIM,
    SPLIT_SHARE,
    check_rates,
    grid_halvings,
    half_cells,
    ladder_counts,
    ladder_edges,
    ladder_interval,
    levels,
    select_quantiles,
)
from pandas_dp.stats.quantiles.tree import (
    Tree,
    consistent_leaves,
    exact_grid,
    exact_tree,
    quantile_interval,
    read_quantiles,
)

__all__ = [
    "BRANCHING",
    "INTERVAL_SHARE",
    "Estimator",
    "Selection",
    "TreeQuantiles",
    "estimator_for",
]

FloatArray = NDArray[np.float64]

#: Share of a column's budget spent on the ladder counts that the intervals of
#: ``method="exponential"`` read (the selections get the rest). Chosen in
#: ``benchmarks/quantile_intervals.py`` (``results/quantile_intervals.md``: the
#: median on uniform, normal and lognormal data, n = 10**3 and 10**5, epsilon 1 and
#: 0.1, shares 5 %, 10 % and 20 %): the smallest share whose 95 % intervals are no
#: wider, in any cell, than the former intervals (a count below each edge and the
#: total, bounded apart) were at 10 %; they are 1x to 8x narrower, and the
#: selection keeps 95 % of the budget instead of 90 %.
INTERVAL_SHARE = 0.05
#: Branching factor of the tree: 16 (3 levels over 1024 bins) had the lowest mean
#: ratio at 1024 bins (1.69, against 1.80 for 4, 1.75 for 8 and 1.82 for 32).
BRANCHING = 16


class _Columns:
    """What both estimators keep: the grid's bins, the levels ``qs``, the columns'
    declarations, the plan (dropped after the release: the metadata keeps the
    estimator, not the plan's random source), whether the result has intervals,
    and per column the noise its intervals read."""

    def __init__(
        self,
        bins: int,
        qs: tuple[float, ...],
        decls: Mapping[Hashable, NumericDeclaration],
        plan: Plan,
        interval: bool = True,
    ) -> None:
        self.bins, self.qs, self.decls = bins, qs, decls
        self.plan: Plan | None = plan
        self.with_interval = interval
        self.noises: dict[Hashable, NoisePlan] = {}
        self._start()

    def _start(self) -> None:
        """The estimator's own state (the subclasses')."""


class TreeQuantiles(_Columns):
    """One noisy tree per column: every quantile read off it (post-processing).

    Like :class:`Selection`: ``add`` plans a column (at a budget weight) and gives
    its engine reader, ``check`` runs before the charge, ``values`` and
    ``interval`` read the release per group.
    """

    def _start(self) -> None:
        self.tree = Tree(self.bins, BRANCHING)
        self.keys: dict[Hashable, str] = {}
        self.raws: dict[Hashable, FloatArray] = {}

    def add(self, c: Hashable, series: pd.Series, weight: float = 1.0) -> Any:
        """Plan column ``c`` at budget weight ``weight``; its engine reader."""
        assert self.plan is not None
        self.keys[c] = self.plan.grid(c, self.tree.nodes, self.tree.levels, weight=weight)
        return partial(exact_tree, series, self.decls[c], self.tree)

    def check(self) -> None:
        """Nothing beyond the plan's calibration to check."""

    def values(self, c: Hashable, noisy: Mapping[str, FloatArray], groups: int) -> FloatArray:
        assert self.plan is not None
        raw = noisy[self.keys[c]].reshape(groups, self.tree.nodes)
        self.raws[c] = raw
        self.noises[c] = self.plan.measurements[self.keys[c]].calibrated
        leaves, roots = consistent_leaves(raw, self.tree)
        d = self.decls[c]
        out = np.zeros((groups, len(self.qs)))
        for g in range(groups):
            out[g] = read_quantiles(leaves[g], float(roots[g]), self.qs, d.lower, d.upper)
        return out

    def interval(self, c: Hashable, g: int, alpha: float) -> tuple[FloatArray, FloatArray]:
        d = self.decls[c]
        return quantile_interval(
            self.raws[c][g], self.tree, self.noises[c], self.qs, d.lower, d.upper, alpha
        )

    def details(self) -> dict[str, Any]:
        return {
            "method": "tree",
            "q": list(self.qs),
            "bins": self.tree.bins,
            "branching": BRANCHING,
            "levels": self.tree.levels,
            "grid": "equal-width bins over the declared bounds; values clamped to them",
            "estimate": "consistent noisy tree (least squares), monotone CDF, "
            "interpolated in a bin",
            "interval": "for the quantile of the clamped values (rank band from the raw counts)"
            if self.with_interval
            else "not computed: released with interval=False",
        }


class Selection(_Columns):
    """Permute-and-flip selections per column (recursive over the quantiles), and
    a noisy ladder histogram around the selected edges for the intervals."""

    def _start(self) -> None:
        #: the budget's share on the intervals' ladder counts (0: no intervals)
        self.share = INTERVAL_SHARE if self.with_interval else 0.0
        self.levels = tuple(sorted(set(self.qs)))
        self.keys: dict[Hashable, tuple[str, str | None]] = {}
        #: per column and group: the selected edges (by distinct level) and the ladder
        self.chosen: dict[Hashable, NDArray[np.int64]] = {}
        self.ladders: dict[Hashable, list[tuple[NDArray[np.int64], FloatArray]]] = {}

    def add(self, c: Hashable, series: pd.Series, weight: float = 1.0) -> Any:
        """Plan column ``c`` at budget weight ``weight``; its engine reader."""
        assert self.plan is not None
        ladder = None
        if self.share > 0:
            ladder = self.plan.derived_counts(c, "interval_counts", weight=weight * self.share)
        key = self.plan.grid_selection(
            c, 2 * self.bins, partial(self._select, c), weight=weight * (1.0 - self.share)
        )
        self.keys[c] = (key, ladder)
        d = self.decls[c]
        # the grid twice as fine: the halves of the cells centred on the edges
        return partial(exact_grid, series, d.lower, d.upper, 2 * self.bins)

    def check(self) -> None:
        """Every selection's rate is representable (raises before the charge)."""
        assert self.plan is not None
        for key, _ in self.keys.values():
            m = self.plan.measurements[key]
            check_rates(self.levels, m.epsilon, self.plan.histogram_l1())

    def _select(self, c: Hashable, exact: NDArray[Any], plan: Plan) -> dict[str, FloatArray]:
        """After the charge: select, then noise the ladder's counts (never raises)."""
        key, ladder = self.keys[c]
        src = plan.settings.source
        epsilon = plan.measurements[key].epsilon
        l1 = plan.histogram_l1()
        halves = half_cells(np.asarray(exact).reshape(-1, 2 * self.bins), self.bins)
        chosen = np.zeros((halves.shape[0], len(self.levels)), dtype=np.int64)
        for g in range(halves.shape[0]):
            chosen[g] = select_quantiles(halves[g], self.levels, epsilon, l1, src)
        self.chosen[c] = chosen
        out = {key: chosen.reshape(-1).astype(np.float64)}
        if ladder is not None:
            one = plan.measurements[ladder].calibrated.head(1)
            self.noises[c] = one
            ladders = []
            for g in range(halves.shape[0]):
                edges = ladder_edges(chosen[g], self.bins + 1)  # (boundaries between cells)
                cells = halves[g, :, 0] + halves[g, :, 1]
                exact_l = ladder_counts(cells, edges).astype(np.float64)
                ladders.append((edges, apply_noise(exact_l, one.tiled(exact_l.size), src)))
            self.ladders[c] = ladders
            out[ladder] = np.zeros(0)
        return out

    def _edge_values(self, c: Hashable, j: NDArray[np.int64]) -> FloatArray:
        d = self.decls[c]
        step = (d.upper - d.lower) / self.bins
        return np.where(j >= self.bins, d.upper, d.lower + j * step)

    def _boundary_values(self, c: Hashable, k: NDArray[np.int64]) -> FloatArray:
        """Where cell ``k - 1`` ends and cell ``k`` begins (half a step below edge
        ``k``), within the bounds: the ladder's edges."""
        d = self.decls[c]
        step = (d.upper - d.lower) / self.bins
        inner = d.lower + (np.asarray(k, dtype=np.float64) - 0.5) * step
        return np.asarray(np.clip(inner, d.lower, d.upper), dtype=np.float64)

    def values(self, c: Hashable, noisy: Mapping[str, FloatArray], groups: int) -> FloatArray:
        chosen = self.chosen[c]
        position = [self.levels.index(q) for q in self.qs]
        return np.asarray(self._edge_values(c, chosen[:, position]), dtype=np.float64)

    def interval(self, c: Hashable, g: int, alpha: float) -> tuple[FloatArray, FloatArray]:
        edges, noisy = self.ladders[c][g]
        values = self._boundary_values(c, edges)
        return ladder_interval(values, noisy, self.noises[c], self.qs, alpha)

    def details(self) -> dict[str, Any]:
        return {
            "method": "exponential",
            "q": list(self.qs),
            "bins": self.bins,
            "grid": (
                "the edges of equal-width bins over the declared bounds; values clamped, "
                "each counted at its nearest edge, below or above it"
            ),
            "estimate": (
                "permute-and-flip on integer rank scores (the distance of the rank from "
                f"the ranks of the values in an edge's cell, trimmed by 1/{PILE_TRIM} of "
                "them at each end) plus a public base penalty for edges finer than the grid of "
                f"{self.bins >> grid_halvings(self.bins)} bins, exact; several quantiles "
                f"recursively ({levels(len(self.levels))} levels, each the selection's "
                "epsilon divided by the levels; a level with levels below it spends "
                f"{SPLIT_SHARE:.0%} of its epsilon on noisy counts around each chosen edge, "
                "which split the values on that edge between the two sides)"
            ),
            "interval": (
                f"rank band from a noisy histogram over a ladder of bins around the "
                f"selected edges ({self.share:.0%} of the budget)"
                if self.share > 0
                else "not computed: released with interval=False, the whole budget selected"
            ),
        }


#: A column's quantile estimator: :class:`Selection` or :class:`TreeQuantiles`.
Estimator = TreeQuantiles | Selection


def estimator_for(
    method: str,
    bins: int,
    qs: tuple[float, ...],
    decls: Mapping[Hashable, NumericDeclaration],
    plan: Plan,
    *,
    interval: bool = True,
) -> Estimator:
    """The estimator of ``method`` (one of :data:`METHODS`) for levels ``qs``
    (``interval=False``: no intervals; a selection then spends nothing on them)."""
    if method == "tree":
        return TreeQuantiles(bins, qs, decls, plan, interval)
    return Selection(bins, qs, decls, plan, interval)
