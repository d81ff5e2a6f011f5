"""A histogram of each numeric column in ``describe``: ``describe(histogram=k)``.

The report of ``pandas-dp describe --html`` draws each numeric column's
distribution with its percentiles; these are the counts it draws. The bins are
``k`` equal-width bins of the column's declared range (public), values clamped to
it, missing values in no bin. They are kept on the result's metadata,
``attrs["dp"].details["histograms"][column]`` (its ``edges``, ``counts``, how they
were made and what they cost), never as rows: describe's table keeps pandas' shape.

Where the counts come from
    * With ``method="tree"`` the percentiles' noisy tree already counts the values
      in every bin of a fine grid (:mod:`pandas_dp.stats.quantiles.tree`): its
      least-squares consistent leaves, summed into ``k`` blocks of adjacent leaves
      and clamped at 0, are the histogram -- post-processing, free (not integers).
      The blocks are equal when ``k`` divides the grid's bins (1 024 by default:
      ``k`` = 16 or 32), else they differ by one leaf; the edges recorded are the
      blocks' own.
    * With the selection (the default ``method``), which releases no counts, the
      histogram is its own measurement in describe's plan: ``k`` counts with
      discrete noise, a histogram's sensitivity (one row sits in one bin), paid by
      :data:`HISTOGRAM_SHARE` of each numeric column's part of epsilon (its moments
      and percentiles keep the rest, the other columns' parts are unchanged). It is
      in the plan's budget split, the metadata and describe's ledger row like every
      measurement. The counts are integers, clamped at 0 (a count's public range).

``histogram=None`` (the default) measures nothing and changes nothing: seeded
releases stay bit-identical.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from pandas_dp.plan.plans import Plan
from pandas_dp.request.declared_columns import NumericDeclaration
from pandas_dp.stats.quantiles.tree import consistent_leaves, exact_grid

__all__ = [
    "HISTOGRAM_SHARE",
    "MAX_HISTOGRAM_BINS",
    "Binned",
    "check_histogram",
    "histogram_weights",
    "measured_histograms",
    "plan_histograms",
    "tree_histograms",
]

#: The share of a numeric column's part of describe's epsilon that its histogram
#: spends when the percentiles are the selection's (``method="exponential"``):
#: measured in ``benchmarks/describe_histogram.py`` (``benchmarks/results/
#: describe_histogram.md``; the survey resampled, 20 bins, 50 runs): at n = 1000 and
#: epsilon 1 the histogram's total-variation distance to the truth is 0.30 at a share
#: of 0.1, 0.19 at 0.2 and 0.135 at 0.3. The column's other rows keep ``1 - 0.2`` of
#: their epsilon, so their noise scale grows by ``1 / 0.8 = 1.25x`` (1.43x at 0.3).
HISTOGRAM_SHARE = 0.2
#: The most bins a histogram may have (a picture, not a release of the grid).
MAX_HISTOGRAM_BINS = 1000


@dataclass(frozen=True)
class Binned:
    """The label of a column's histogram measurement (its key reads ``age (histogram)``),
    distinct from the column's own label so that its counts and a numeric column's
    shares of declared values are two measurements."""

    column: Hashable

    def __str__(self) -> str:
        return f"{self.column} (histogram)"


def check_histogram(histogram: Any) -> int | None:
    """``None`` or a whole number of bins in ``[2, MAX_HISTOGRAM_BINS]`` (before any charge).

    Examples
    --------
    >>> check_histogram(None), check_histogram(20)
    (None, 20)
    """
    if histogram is None:
        return None
    if (
        isinstance(histogram, bool)
        or not isinstance(histogram, int | np.integer)
        or not 2 <= int(histogram) <= MAX_HISTOGRAM_BINS
    ):
        raise ValueError(
            f"histogram must be None or a whole number of bins from 2 to "
            f"{MAX_HISTOGRAM_BINS} (e.g. histogram=20: 20 equal bins of each numeric "
            f"column's declared range); got {histogram!r}"
        )
    return int(histogram)


def histogram_weights(
    weights: Mapping[str, float], share: float | None = None
) -> tuple[dict[str, float], float]:
    """A numeric column's measurement weights with ``share`` of them moved to its histogram
    (default :data:`HISTOGRAM_SHARE`, read when called).

    Returns the scaled weights (their sum ``1 - share`` of the former) and the
    histogram's weight (``share`` of the former sum): the column's part of the plan
    is unchanged.

    Examples
    --------
    >>> histogram_weights({"moments": 3.0, "grid": 1.0}, 0.25)
    ({'moments': 2.25, 'grid': 0.75}, 1.0)
    """
    share = HISTOGRAM_SHARE if share is None else share
    total = sum(weights.values())
    return {k: v * (1.0 - share) for k, v in weights.items()}, total * share


def plan_histograms(
    plan: Plan,
    numeric: Mapping[Hashable, pd.Series],
    decls: Mapping[Hashable, NumericDeclaration],
    bins: int,
    weight: float,
) -> tuple[dict[Hashable, str], dict[Any, Any]]:
    """Add each numeric column's ``bins`` counts to ``plan`` at ``weight`` each.

    Returns
    -------
    (dict label -> key, dict)
        Each column's measurement key, and the engine readers (``("categories",
        Binned(c))`` -> reader of the exact counts, after the charge).
    """
    keys = {c: plan.categories(Binned(c), bins, weight=weight) for c in numeric}
    readers = {
        ("categories", Binned(c)): partial(
            _counts, numeric[c], decls[c].lower, decls[c].upper, bins
        )
        for c in numeric
    }
    return keys, readers


def _counts(
    series: pd.Series,
    lower: float,
    upper: float,
    bins: int,
    groups: Any = None,
    kernels: Any = None,
) -> np.ndarray:
    """The engine call (after the charge): the clamped values' counts per bin."""
    return np.asarray(exact_grid(series, lower, upper, bins, groups, kernels), dtype=np.float64)


def _edges(decl: NumericDeclaration, cuts: np.ndarray, cells: int) -> list[float]:
    """The bin edges at grid positions ``cuts`` of ``cells`` equal cells of the range."""
    lo, hi = float(decl.lower), float(decl.upper)
    edges = lo + cuts.astype(np.float64) * ((hi - lo) / cells)
    edges[-1] = hi
    return [float(e) for e in edges]


def _shaped(counts: np.ndarray, grouped: bool, integer: bool = False) -> list[Any]:
    """One row of counts (ungrouped) or one per released group (``integer``: counts
    with discrete noise, as Python ints)."""
    kind = int if integer else float
    rows = [[kind(v) for v in row] for row in counts]
    return rows if grouped else rows[0]


def measured_histograms(
    plan: Plan,
    noisy: Mapping[str, np.ndarray],
    keys: Mapping[Hashable, str],
    decls: Mapping[Hashable, NumericDeclaration],
    bins: int,
    groups: int,
    grouped: bool,
) -> dict[Hashable, dict[str, Any]]:
    """Each column's record of its own noisy histogram (after the run).

    Parameters
    ----------
    plan : Plan
        describe's plan, run.
    noisy : mapping key -> array
        Its noisy values.
    keys : mapping label -> str
        Each column's histogram key (:func:`plan_histograms`).
    decls : mapping label -> NumericDeclaration
        The columns' bounds.
    bins : int
        Bins per histogram.
    groups : int
        Released groups (1 ungrouped).
    grouped : bool
        Whether ``counts`` holds one list per group.

    Returns
    -------
    dict label -> dict
        ``edges``, ``counts``, ``source``, ``epsilon`` and ``noise scale``.
    """
    out: dict[Hashable, dict[str, Any]] = {}
    cuts = np.arange(bins + 1)
    for c, key in keys.items():
        m = plan.measurements[key]
        counts = np.asarray(noisy[key], dtype=np.float64).reshape(groups, bins)
        out[c] = {
            "bins": bins,
            "edges": _edges(decls[c], cuts, bins),
            "counts": _shaped(counts, grouped, integer=m.calibrated.integer),
            "source": f"own noisy counts of {bins} equal bins of the declared range "
            f"({HISTOGRAM_SHARE:g} of the column's part of epsilon)",
            "share": HISTOGRAM_SHARE,
            "epsilon": float(m.epsilon),
            "noise scale": float(np.asarray(m.calibrated.scale).reshape(-1)[0]),
        }
    return out


def tree_histograms(
    estimator: Any,
    decls: Mapping[Hashable, NumericDeclaration],
    bins: int,
    groups: int,
    grouped: bool,
) -> dict[Hashable, dict[str, Any]]:
    """Each column's histogram read off the percentiles' noisy tree (free).

    The tree's consistent leaves (after :meth:`values` was read), summed into
    ``bins`` blocks of adjacent leaves (``min(bins, leaves)`` blocks), clamped at 0.

    Parameters
    ----------
    estimator : TreeQuantiles
        describe's percentile estimator with ``method="tree"``, its values read.
    decls : mapping label -> NumericDeclaration
        The columns' bounds.
    bins : int
        The blocks wanted.
    groups : int
        Released groups.
    grouped : bool
        Whether ``counts`` holds one list per group.

    Returns
    -------
    dict label -> dict
        ``edges``, ``counts`` (floats: least-squares estimates, at least 0), ``source`` and
        ``epsilon`` (0: post-processing).
    """
    tree = estimator.tree
    k = min(bins, tree.bins)
    cuts = np.round(np.linspace(0, tree.bins, k + 1)).astype(np.int64)
    out: dict[Hashable, dict[str, Any]] = {}
    for c, raw in estimator.raws.items():
        leaves, _ = consistent_leaves(np.asarray(raw).reshape(groups, tree.nodes), tree)
        counts = np.clip(np.add.reduceat(leaves, cuts[:-1], axis=1), 0.0, None)
        out[c] = {
            "bins": k,
            "edges": _edges(decls[c], cuts, tree.bins),
            "counts": _shaped(counts, grouped),
            "source": f"the percentiles' noisy tree: its consistent leaves ({tree.bins} "
            f"bins) summed into {k} blocks (post-processing, no epsilon)",
            "epsilon": 0.0,
        }
    return out
