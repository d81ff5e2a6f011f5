"""``describe``: a private counterpart of ``df.describe()``, as one plan.

For each declared numeric column one (count, centred sum, centred squares)
triple is measured, and the count, mean and standard deviation are all derived
from it; one noisy tree over a public grid gives every percentile
(:mod:`pandas_dp.quantiles`); where pandas prints the minimum and the maximum,
the declared bounds are shown, labelled as declared. For each declared
categorical column one histogram of its categories is measured, and the shares
are its noisy counts over their noisy total. The whole
plan is charged once, so a ``describe`` that would overspend spends nothing; the
split is in the metadata and in the ledger row.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from pandas_dp import constraints
from pandas_dp import statistics as st
from pandas_dp.declarations import CategoricalDeclaration, NumericDeclaration
from pandas_dp.histograms import _exact_buckets, _share_bounds
from pandas_dp.plan import Settings, engine_input
from pandas_dp.quantiles import (
    BRANCHING,
    DEFAULT_BINS,
    Tree,
    _exact_tree,
    check_bins,
    consistent_leaves,
    quantile_interval,
    read_quantiles,
)

__all__ = ["check_percentiles", "release_describe"]

_ROWS = ("count", "mean", "std")
#: Budget weight of a column's percentile tree, next to its count, sum and squares
#: (``MOMENT_WEIGHTS["describe"]``, 1:1:1): a quarter of the column's share.
GRID_WEIGHT = 1.0


def check_percentiles(percentiles: Any) -> tuple[float, ...]:
    """pandas' rule: the given percentiles, sorted, with the median always in."""
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
    return tuple(sorted({float(p) for p in listed} | {0.5}))


def _label(p: float) -> str:
    """pandas' row label of a percentile: 25%, 2.5%."""
    text = f"{100 * p:.10g}"
    return f"{text}%"


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
    bins: int = DEFAULT_BINS,
) -> pd.DataFrame:
    """Release count, mean, std and percentiles of numeric columns, shares of categorical ones."""
    if not numeric and not categorical:
        raise ValueError(
            "describe needs at least one declared column: declare bounds (numeric) or "
            "categories (categorical) with bounds=, categories= or a schema"
        )
    plan, entries = st.plan_moments(
        _ROWS, numeric_decls, settings, "moments", weights=st.MOMENT_WEIGHTS["describe"]
    )
    cat_keys = {c: plan.categories(c, len(d.categories)) for c, d in categorical_decls.items()}
    tree = Tree(check_bins(bins, numeric_decls), BRANCHING) if numeric_decls else None
    grid_keys = {
        c: plan.grid(c, tree.nodes, tree.levels, weight=GRID_WEIGHT)
        for c in numeric_decls
        if tree is not None
    }
    plan.calibrate()
    read = engine_input({**numeric, **categorical}, numeric_decls, settings, None, frame)

    def data() -> dict[Any, Any]:
        made = read()
        for c, d in categorical_decls.items():
            made[("categories", c)] = partial(
                _exact_buckets, categorical[c], d, dropna=True, other=None
            )
        for c in grid_keys:
            assert tree is not None
            made[("grid", c)] = partial(_exact_tree, numeric[c], numeric_decls[c], tree)
        return made

    columns = (*numeric, *categorical)
    noisy = plan.run(data, "describe", columns)

    clamp = settings.bounding != "none"
    rows: dict[Hashable, dict[str, float]] = {}
    fns: dict[tuple[str, Hashable], Callable[[float], tuple[float, float]]] = {}
    for c in numeric:
        rows[c] = {}
        for stat in _ROWS:
            value, fn, _ = st._estimate(entries[(c, stat)], plan, noisy, ddof=1, clamp=clamp)
            rows[c][stat] = value
            fns[(stat, c)] = fn
        bounds = numeric_decls[c]
        assert tree is not None
        raw = noisy[grid_keys[c]].reshape(1, tree.nodes)
        leaves, roots = consistent_leaves(raw, tree)
        lo, hi = bounds.lower, bounds.upper
        found = read_quantiles(leaves[0], float(roots[0]), percentiles, lo, hi)
        grid_noise = plan.measurements[grid_keys[c]].calibrated
        rows[c]["min (declared)"] = lo
        fns[("min (declared)", c)] = partial(_public, lo)
        for j, p in enumerate(percentiles):
            rows[c][_label(p)] = float(found[j])
            fns[(_label(p), c)] = partial(_percentile_entry, raw[0], tree, grid_noise, p, lo, hi)
        rows[c]["max (declared)"] = hi
        fns[("max (declared)", c)] = partial(_public, hi)
    for c, d in categorical_decls.items():
        rows[c] = {}
        key = cat_keys[c]
        counts = noisy[key]
        total = max(float(np.clip(counts, 0.0, None).sum()), 1.0)
        shares = constraints.project_simplex(np.clip(counts, 0.0, None) / total)
        noise = plan.measurements[key].noise
        assert noise is not None
        for i, label in enumerate(d.categories):
            name = f"share {label}"
            rows[c][name] = float(shares[i])
            fns[(name, c)] = partial(_share_entry, noise, counts, i)

    order: list[str] = (
        [*_ROWS, "min (declared)", *map(_label, percentiles), "max (declared)"] if numeric else []
    )
    for c in categorical:
        order += [k for k in rows[c] if k not in order]
    frame = pd.DataFrame(rows).reindex(order)
    index = [(r, c) for r, c in fns]
    frame.attrs["dp"] = st.build_metadata(
        "describe",
        list(columns),
        plan,
        frame.to_numpy(),
        input_bounds={c: (d.lower, d.upper) for c, d in numeric_decls.items()},
        output_bounds={c: (d.lower, d.upper) for c, d in numeric_decls.items()},
        interval=partial(st._stacked, list(fns.values())),
        index=index,
        details={
            "derived": "count, mean and std of a column come from one measured "
            "(count, centred sum, centred squares), its percentiles from one noisy tree "
            "over a public grid; shares from one histogram",
            "min/max": "the declared bounds (public), not the data's extremes",
            "percentiles": list(percentiles),
            "grid bins": bins,
            "undeclared columns (not described)": [str(c) for c in undeclared],
        },
    )
    return frame


def _public(value: float, alpha: float) -> tuple[float, float]:
    """A declared value: exact, its interval is the point itself."""
    del alpha
    return value, value


def _percentile_entry(
    raw: np.ndarray,
    tree: Tree,
    noise: Any,
    p: float,
    lower: float,
    upper: float,
    alpha: float,
) -> tuple[float, float]:
    lo, hi = quantile_interval(raw, tree, noise, [p], lower, upper, alpha)
    return float(lo[0]), float(hi[0])


def _share_entry(noise: Any, counts: np.ndarray, i: int, alpha: float) -> tuple[float, float]:
    lo, hi = _share_bounds(noise, counts, alpha)
    return float(lo[i]), float(hi[i])
