"""``describe``: a private counterpart of ``df.describe()``, as one plan.

For each declared numeric column one (count, centred sum, centred squares)
triple is measured, and the count, mean and standard deviation are all derived
from it; ``quantile``'s estimator on a public grid gives every percentile
(:mod:`pandas_dp.stats.quantiles.releases`); where pandas prints the minimum and the maximum,
the declared bounds are shown, labelled as declared. For each declared
categorical column one histogram of its categories is measured, and the shares
are its noisy counts over their noisy total; a numeric column declared with a
small ``isin`` set gets the shares of its values too
(:mod:`pandas_dp.stats.describe_shares`). The whole
plan is charged once, so a ``describe`` that would overspend spends nothing; the
split is in the metadata and in the ledger row.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from pandas_dp.plan.plans import Plan, engine_input
from pandas_dp.request.category_declarations import CategoricalDeclaration
from pandas_dp.request.declared_columns import NumericDeclaration
from pandas_dp.request.grouping import Grouping
from pandas_dp.request.settings import Settings
from pandas_dp.result.values import attach
from pandas_dp.stats import constraints, moments
from pandas_dp.stats import numeric as st
from pandas_dp.stats.describe_histogram import (
    check_histogram,
    histogram_weights,
    measured_histograms,
    plan_histograms,
    tree_histograms,
)
from pandas_dp.stats.describe_shares import SHARES_DEFAULT, SHARES_WEIGHT, share_declarations
from pandas_dp.stats.histogram_estimates import share_bounds
from pandas_dp.stats.histograms import exact_buckets
from pandas_dp.stats.moment_weights import pair_count_is_better, weights_name
from pandas_dp.stats.quantiles.estimators import Estimator, estimator_for
from pandas_dp.stats.quantiles.releases import check_bins, check_method, default_bins

__all__ = [
    "DESCRIBE_METHOD",
    "DESCRIBE_METHOD_NOTE",
    "check_describe",
    "check_percentiles",
    "release_describe",
]

#: The percentiles' estimator of ``describe``: the selection, ``quantile``'s default
#: (see :data:`pandas_dp.stats.quantiles.releases.METHODS`), on ``quantile``'s grid
#: (:func:`~pandas_dp.stats.quantiles.releases.default_bins`), so that describe's
#: percentiles are the standalone ``quantile`` at describe's share of the column.
#: Measured in ``benchmarks/accuracy.py --only describe_split`` (``results/
#: accuracy.md`` section 5; ages, Likert 1..5, log-normal incomes and piled counts,
#: n = 300 to 30 000, epsilon 0.3 to 3, 200 releases): against a standalone
#: ``quantile`` at a quarter of the column's budget the former tree (at 5/18 of the
#: column) erred 0.02x to 541x, above 1.5x in 14 of 28 settings: 1.25x to 2.2x on
#: incomes (1024 bins of 244 over [0, 250 000]), up to 2x on ages, and 93x to 541x
#: on integer data at n epsilon >= 9000 (it interpolates inside the bin of a tied
#: value, the selection lands on it); it is far better on Likert answers at
#: n = 3000 (0.02x at epsilon 1), where the selection falls between two answers.
#: The selection is the standalone release: 1.00x by construction. Neither is good
#: at a small ``n * epsilon``: on the bundled survey at epsilon = 1 (n = 1000, 0.05
#: per column's percentiles) the quartiles err 5x to 14x a standalone ``quantile`` at
#: the column's whole share, epsilon/5, and the tree 8x to 11x (section 5c).
DESCRIBE_METHOD = "exponential"
#: The docstrings' note on the choice.
DESCRIBE_METHOD_NOTE = (
    "\n    For ``describe`` the selection is the default too: its percentiles are then\n"
    "    ``quantile``'s at describe's share of a column. The tree is more accurate on\n"
    "    some tied data (answers on a 1..5 scale at moderate ``n * epsilon``)."
)
#: A categorical column's share of describe's budget, in numeric columns: its one
#: histogram weighs this many times a numeric column's measurements together. Every
#: column gets an equal share (1): at equal epsilon a categorical column's shares
#: are the ``proportions`` release (one histogram, shares of its noisy total), so
#: equal shares give each column what a standalone release at its fair share gives.
#: The former 1/4 gave the bundled survey's two categorical columns 1/14 of epsilon
#: each, and shares 2.7x to 3.0x the RMSE of ``proportions`` at epsilon/5
#: (``benchmarks/accuracy.py --only describe_split``, section 5a).
CATEGORICAL_WEIGHT = 1.0

_ROWS = ("count", "mean", "std")
IntervalFn = Callable[[float], tuple[float, float]]
#: A calibrated plan, its moments' entries, its histograms' keys (categorical
#: columns', then numeric columns' shares), its percentiles' estimator, the engine
#: readers (the estimator's and the numeric histograms'), and the keys of the
#: numeric columns' own histograms (``histogram=``; empty when the tree's are read).
_Built = tuple[
    Plan,
    dict[tuple[Hashable, str], moments.Entry],
    dict[Hashable, str],
    dict[Hashable, str],
    Estimator | None,
    dict[Any, Any],
    dict[Hashable, str],
]


#: pandas before 3 adds the median to the percentiles given to ``describe``.
ADDS_MEDIAN = int(pd.__version__.split(".")[0]) < 3


def check_percentiles(percentiles: Any) -> tuple[float, ...]:
    """pandas' rule: the given percentiles, sorted (with the median added where
    the installed pandas adds it: :data:`ADDS_MEDIAN`)."""
    if percentiles is None:
        return (0.25, 0.5, 0.75)
    listed = [percentiles] if isinstance(percentiles, int | float) else list(percentiles)
    for p in listed:
        if isinstance(p, bool) or not isinstance(p, int | float | np.number) or not 0 <= p <= 1:
            raise ValueError(
                f"percentiles should all be numbers in [0, 1] (e.g. [0.25, 0.5, 0.75]); got {p!r}"
            )
    if len(set(listed)) != len(listed):
        raise ValueError(f"percentiles must be unique; got {listed}")
    return tuple(sorted({float(p) for p in listed} | ({0.5} if ADDS_MEDIAN else set())))


def _label(p: float) -> str:
    """pandas' row label of a percentile: 25%, 2.5%."""
    text = f"{100 * p:.10g}"
    return f"{text}%"


def _planned(
    numeric: Mapping[Hashable, pd.Series],
    numeric_decls: Mapping[Hashable, NumericDeclaration],
    categorical_decls: Mapping[Hashable, CategoricalDeclaration],
    share_decls: Mapping[Hashable, CategoricalDeclaration],
    settings: Settings,
    grouping: Grouping | None,
    grid: tuple[str, int, tuple[float, ...]],
    histogram: int | None,
    name: str,
) -> _Built:
    """describe's calibrated plan with the ``MOMENT_WEIGHTS`` entry ``name``: its
    moments' entries, the keys of each categorical histogram and of each numeric
    column's shares (``share_decls``), the percentiles' estimator (``grid``: its
    method, bins and levels) with its engine readers, and each numeric column's own
    histogram of ``histogram`` bins where the percentiles' tree gives none
    (:mod:`pandas_dp.stats.describe_histogram`)."""
    # one column's moments and percentiles: the ``grid`` weight
    weights = st.MOMENT_WEIGHTS[name]
    column_weights: dict[str, float] = dict(weights)
    from_tree = grid[0] == "tree" and bool(grid[2])
    own_histogram = histogram is not None and bool(numeric_decls) and not from_tree
    own_weight = 0.0
    if own_histogram:  # HISTOGRAM_SHARE of each numeric column's part moves to its histogram
        column_weights, own_weight = histogram_weights(weights)
    plan, entries = moments.plan_moments(
        _ROWS, numeric_decls, settings, "moments", Plan(settings, grouping), column_weights
    )
    # a categorical column's one histogram weighs CATEGORICAL_WEIGHT numeric columns
    histogram_weight = sum(weights.values()) * CATEGORICAL_WEIGHT
    cat_keys = {
        c: plan.categories(c, len(d.categories), weight=histogram_weight)
        for c, d in categorical_decls.items()
    }
    # a numeric column's shares weigh SHARES_WEIGHT numeric columns (describe_shares)
    share_weight = sum(weights.values()) * SHARES_WEIGHT
    share_keys = {
        c: plan.categories(c, len(d.categories), weight=share_weight)
        for c, d in share_decls.items()
    }
    estimator, readers = None, {}
    if numeric_decls and grid[2]:  # (no percentiles asked for: no grid)
        estimator = estimator_for(*grid, numeric_decls, plan)
        readers = {
            ("grid", c): estimator.add(c, numeric[c], column_weights["grid"]) for c in numeric
        }
    own_keys: dict[Hashable, str] = {}
    if own_histogram:
        assert histogram is not None
        own_keys, own_readers = plan_histograms(plan, numeric, numeric_decls, histogram, own_weight)
        readers.update(own_readers)
    plan.calibrate()
    return plan, entries, cat_keys, share_keys, estimator, readers, own_keys


def _prepare(
    numeric: Mapping[Hashable, pd.Series],
    numeric_decls: Mapping[Hashable, NumericDeclaration],
    categorical_decls: Mapping[Hashable, CategoricalDeclaration],
    settings: Settings,
    percentiles: Sequence[float],
    bins: int | None,
    method: str,
    grouping: Grouping | None,
    share_decls: Mapping[Hashable, CategoricalDeclaration],
    histogram: int | None = None,
) -> _Built:
    """describe's calibrated plan, every check on public facts done (before any charge)."""
    if not numeric_decls and not categorical_decls:
        raise ValueError(
            "describe needs at least one declared column: declare bounds (numeric) or "
            "categories (categorical) with bounds=, categories= or a schema"
        )
    check_method(method)
    bins = default_bins(method, grouping) if bins is None else bins
    grid = (method, check_bins(bins, numeric_decls) if numeric_decls else bins, tuple(percentiles))
    build = partial(
        _planned,
        numeric,
        numeric_decls,
        categorical_decls,
        share_decls,
        settings,
        grouping,
        grid,
        check_histogram(histogram),
    )
    s = settings
    name = weights_name("describe", "moments", s.neighbouring, s.mechanism, s.bounding)
    built = build(name)
    plan, entries = built[0], built[1]
    if "bound_sums" in st.MOMENT_WEIGHTS[name] and numeric_decls:
        # the bound sums, unless a count of its own is more accurate: a choice by the
        # public noise scales alone (a large epsilon; pair_count_is_better)
        separate = build("describe_separate")
        first = next(iter(numeric_decls))
        pair = plan.measurements[entries[(first, "count")].keys["bound_sums"]].calibrated
        count = separate[0].measurements[separate[1][(first, "count")].keys["count"]].calibrated
        width = numeric_decls[first].upper - numeric_decls[first].lower
        if not pair_count_is_better(pair, count, width):
            built = separate
    estimator = built[4]
    if estimator is not None:
        estimator.check()  # public arguments only: may raise, before the charge
    return built


def check_describe(
    numeric: Mapping[Hashable, pd.Series],
    numeric_decls: Mapping[Hashable, NumericDeclaration],
    categorical_decls: Mapping[Hashable, CategoricalDeclaration],
    settings: Settings,
    *,
    percentiles: Sequence[float] = (0.25, 0.5, 0.75),
    bins: int | None = None,
    method: str = DESCRIBE_METHOD,
    grouping: Grouping | None = None,
    shares: bool | str = SHARES_DEFAULT,
    histogram: int | None = None,
) -> None:
    """Run every check of :func:`release_describe` that needs no data, charging nothing.

    For a caller that decides declarations privately first (``bounds="auto"``): it
    checks the describe it will run with placeholder declarations of the same
    columns, before its first charge.

    Parameters
    ----------
    numeric : mapping label -> Series
        The numeric columns (not read).
    numeric_decls : mapping label -> NumericDeclaration
        Their bounds (placeholders are fine: no check depends on their values).
    categorical_decls : mapping label -> CategoricalDeclaration
        The categorical columns' categories.
    settings : Settings
        The describe release's own settings.
    percentiles, bins, method, grouping, shares, histogram
        As in :func:`release_describe`.

    Raises
    ------
    ValueError
        What :func:`release_describe` would raise before its charge.
    """
    share_decls = share_declarations(numeric_decls, shares)
    _prepare(
        numeric,
        numeric_decls,
        categorical_decls,
        settings,
        percentiles,
        bins,
        method,
        grouping,
        share_decls,
        histogram,
    )


def release_describe(
    numeric: Mapping[Hashable, pd.Series],
    numeric_decls: Mapping[Hashable, NumericDeclaration],
    categorical: Mapping[Hashable, pd.Series],
    categorical_decls: Mapping[Hashable, CategoricalDeclaration],
    settings: Settings,
    *,
    undeclared: Sequence[Hashable] = (),
    frame: pd.DataFrame | None = None,
    percentiles: Sequence[float] = (0.25, 0.5, 0.75),
    bins: int | None = None,
    method: str = DESCRIBE_METHOD,
    grouping: Grouping | None = None,
    shares: bool | str = SHARES_DEFAULT,
    histogram: int | None = None,
) -> pd.DataFrame:
    """Release count, mean, std and percentiles of numeric columns, shares of categorical ones.

    Ungrouped: one row per statistic, one column per column (``df.describe()``).
    With ``grouping``: one row per key, columns ``(column, statistic)``
    (``df.groupby(by).describe()``). The percentiles are ``quantile``'s with
    ``method`` on a grid of ``bins``
    (default: :func:`~pandas_dp.stats.quantiles.releases.default_bins`).
    ``shares`` (``"auto"``, ``True`` or ``False``): which numeric columns also get
    the share of each declared value, rows ``share <value>`` after their numeric
    rows (:mod:`pandas_dp.stats.describe_shares`). ``histogram`` (bins, or ``None``):
    each numeric column's noisy histogram over its declared range, in
    ``attrs["dp"].details["histograms"]`` (:mod:`pandas_dp.stats.describe_histogram`).
    """
    share_decls = share_declarations(numeric_decls, shares)
    histogram = check_histogram(histogram)
    prepared = _prepare(
        numeric,
        numeric_decls,
        categorical_decls,
        settings,
        percentiles,
        bins,
        method,
        grouping,
        share_decls,
        histogram,
    )
    plan, entries, cat_keys, share_keys, estimator, readers, own_keys = prepared
    sources: dict[Any, Any] = {
        ("categories", c): partial(exact_buckets, categorical[c], d, dropna=True, other=None)
        for c, d in categorical_decls.items()
    }
    sources.update(
        {
            ("categories", c): partial(exact_buckets, numeric[c], d, dropna=True, other=None)
            for c, d in share_decls.items()
        }
    )
    sources.update(readers)
    data = engine_input(
        {**numeric, **categorical}, numeric_decls, settings, grouping, frame, sources
    )

    columns = (*numeric, *categorical)
    by = grouping.by if grouping is not None else ()
    noisy = plan.run(data, "describe", (*by, *columns))

    clamp = settings.bounding != "none"
    groups = plan.released_groups
    # per group: (column, row label) -> value and interval function
    cells: list[dict[tuple[Hashable, str], float]] = [{} for _ in range(groups)]
    fns: list[dict[tuple[Hashable, str], IntervalFn]] = [{} for _ in range(groups)]
    for c in numeric:
        lo, hi = numeric_decls[c].lower, numeric_decls[c].upper
        found = np.zeros((groups, 0)) if estimator is None else estimator.values(c, noisy, groups)
        for g in range(groups):
            for stat in _ROWS:
                value, fn = moments.estimate(
                    entries[(c, stat)], plan, noisy, ddof=1, clamp=clamp, g=g
                )
                cells[g][(c, stat)], fns[g][(c, stat)] = value, fn
            cells[g][(c, "min (declared)")] = lo
            fns[g][(c, "min (declared)")] = partial(_public, lo)
            for j, p in enumerate(percentiles):
                assert estimator is not None
                cells[g][(c, _label(p))] = float(found[g, j])
                fns[g][(c, _label(p))] = partial(_percentile_entry, estimator, c, g, j)
            cells[g][(c, "max (declared)")] = hi
            fns[g][(c, "max (declared)")] = partial(_public, hi)
    histograms: dict[Hashable, dict[str, Any]] = {}
    if histogram is not None and numeric_decls:
        grouped = grouping is not None
        if own_keys:
            histograms = measured_histograms(
                plan, noisy, own_keys, numeric_decls, histogram, groups, grouped
            )
        else:  # the percentiles' tree, read above
            histograms = tree_histograms(estimator, numeric_decls, histogram, groups, grouped)
    percentile_details = {} if estimator is None else estimator.details()
    if estimator is not None:
        estimator.plan = None  # the intervals keep the estimator: not the plan's random source
    shared = [(c, d, cat_keys[c]) for c, d in categorical_decls.items()]
    shared += [(c, d, share_keys[c]) for c, d in share_decls.items()]
    for c, d, key in shared:
        k = len(d.categories)
        counts = noisy[key].reshape(groups, k)
        noise = plan.measurements[key].calibrated
        for g in range(groups):
            clipped = np.clip(counts[g], 0.0, None)
            fractions = constraints.project_simplex(clipped / max(float(clipped.sum()), 1.0))
            for i, label in enumerate(d.categories):
                name = f"share {label}"
                cells[g][(c, name)] = float(fractions[i])
                fns[g][(c, name)] = partial(_share_entry, noise.head(k), counts[g], i)

    numeric_rows = [*_ROWS, "min (declared)", *map(_label, percentiles), "max (declared)"]

    def rows_of(c: Hashable) -> list[str]:
        shared = share_decls.get(c) or categorical_decls.get(c)
        share_rows = [] if shared is None else [f"share {v}" for v in shared.categories]
        return [*numeric_rows, *share_rows] if c in numeric_decls else share_rows

    pairs = [(c, r) for c in columns for r in rows_of(c)]
    if grouping is None:
        order = list(dict.fromkeys(r for _, r in pairs))
        table = pd.DataFrame(
            {c: {r: cells[0].get((c, r), np.nan) for r in order} for c in columns}
        ).reindex(order)
        entry_fns = [fns[0][pair] for pair in pairs]
        index: Any = [(r, c) for c, r in pairs]
        released: Any = table.to_numpy()
    else:
        keys = plan.released_index
        assert keys is not None
        table = pd.DataFrame(
            [[cells[g][pair] for pair in pairs] for g in range(groups)],
            index=keys,
            columns=pd.MultiIndex.from_tuples(pairs),
            dtype=np.float64,  # (also when no private key is kept: no rows to infer it from)
        )
        entry_fns = [fns[g][pair] for g in range(groups) for pair in pairs]
        index = [(key, *pair) for key in keys for pair in pairs]
        released = table.to_numpy()
    meta = st.build_metadata(
        "describe",
        list(columns),
        plan,
        released,
        input_bounds={c: (d.lower, d.upper) for c, d in numeric_decls.items()},
        output_bounds={c: (d.lower, d.upper) for c, d in numeric_decls.items()},
        interval=partial(moments.stacked, entry_fns),
        index=index,
        details={
            "derived": "count, mean and std of a column come from one measured "
            "(count, centred sum, centred squares), its percentiles from the grid's "
            "quantile estimator (below); shares from one histogram",
            "min/max": "the declared bounds (public), not the data's extremes",
            "percentiles": list(percentiles),
            "percentile estimator": percentile_details,
            "undeclared columns (not described)": [str(c) for c in undeclared],
            **(
                {
                    "shares of declared values": {
                        str(c): list(d.categories) for c, d in share_decls.items()
                    }
                }
                if share_decls
                else {}
            ),
            **({"histograms": histograms} if histograms else {}),
            **plan.group_details(),
        },
    )
    return attach(table, meta)


def _public(value: float, alpha: float) -> tuple[float, float]:
    """A declared value: exact, its interval is the point itself."""
    del alpha
    return value, value


def _percentile_entry(
    estimator: Estimator, c: Hashable, g: int, j: int, alpha: float
) -> tuple[float, float]:
    """Percentile ``j`` of column ``c`` in group ``g``: its interval."""
    lo, hi = estimator.interval(c, g, alpha)
    return float(lo[j]), float(hi[j])


def _share_entry(noise: Any, counts: np.ndarray, i: int, alpha: float) -> tuple[float, float]:
    lo, hi = share_bounds(noise, counts, alpha)
    return float(lo[i]), float(hi[i])
