"""Grouped releases that are not moments: group sizes, value counts and proportions per group.

Moments per group (count, sum, mean, var, std, agg) go through
:func:`pandas_dp.stats.numeric.release_table` with a grouping; this module adds the
releases whose sufficient statistic is a count per group (``len``) or per
(group, category) cell (``value_counts``, ``proportions``). All of them are one
:class:`~pandas_dp.plan.plans.Plan` with a :class:`~pandas_dp.request.grouping.Grouping`: every
declared key is released (a key absent from the data gets its noise like any
other), or, with private keys, the keys that partition selection kept.

Proportions within a group are its noisy counts over their noisy total, projected
onto the simplex (post-processing), so they sum to one within each group.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from pandas_dp.noise.plans import NoisePlan
from pandas_dp.plan.plans import Plan, engine_input
from pandas_dp.plan.records import build_metadata
from pandas_dp.request.category_declarations import CategoricalDeclaration
from pandas_dp.request.grouping import Grouping
from pandas_dp.request.settings import Settings
from pandas_dp.result.labels import cells_index
from pandas_dp.result.values import attach
from pandas_dp.stats import constraints
from pandas_dp.stats.histogram_estimates import count_bounds, share_bounds
from pandas_dp.stats.histograms import (
    buckets,
    exact_buckets,
    public_dtype,
    reordered,
    typed_labels,
)
from pandas_dp.stats.numeric import validate

__all__ = ["release_contingency", "release_group_counts", "release_group_sizes"]


def release_group_sizes(settings: Settings, grouping: Grouping, frame: pd.DataFrame) -> pd.Series:
    """Noisy number of rows per group, like ``df.groupby(by).size()``."""
    return _group_sizes(settings, grouping, frame)[0]


def _group_sizes(
    settings: Settings, grouping: Grouping, frame: pd.DataFrame
) -> tuple[pd.Series, NoisePlan]:
    """The release and the noise plan of its whole vector."""
    plan = Plan(settings, grouping)
    key = plan.rows()
    plan.calibrate()
    noisy = plan.run(engine_input({}, {}, settings, grouping, frame), "len", grouping.by)
    values = noisy[key]
    m = plan.measurements[key]
    index = plan.released_index
    assert index is not None
    meta = build_metadata(
        "len",
        list(grouping.by),
        plan,
        values,
        input_bounds={},
        output_bounds=(m.lower, m.upper),
        interval=partial(count_bounds, values, plan.noise_for(key)),
        index=index,
        details=plan.group_details(),
    )
    out = pd.Series(values.astype(np.int64), index=index, dtype="int64")
    return attach(out, meta), plan.noise_for(key)


def release_contingency(
    settings: Settings,
    grouping: Grouping,
    frame: pd.DataFrame,
    *,
    normalize: bool,
    sort: bool,
    ascending: bool,
) -> pd.Series:
    """The contingency table of several columns, like ``df.value_counts(subset)``.

    The noisy number of rows of every combination of declared values (a group-by
    of the columns, counting rows); shares of the noisy total with ``normalize``.
    """
    sizes, noise = _group_sizes(settings, grouping, frame)
    meta = sizes.attrs["dp"]
    counts = sizes.to_numpy(dtype=np.float64)
    if normalize:
        clipped = np.clip(counts, 0.0, None)
        values = constraints.project_simplex(clipped / max(float(clipped.sum()), 1.0))
        meta = dataclasses.replace(
            meta,
            value=values,
            _interval=partial(share_bounds, noise, counts),
            output_bounds=(0.0, 1.0),
            statistic="proportions",
        )
        out = pd.Series(values, index=sizes.index, name="proportion", dtype="float64")
    else:
        meta = dataclasses.replace(meta, statistic="value_counts")
        out = pd.Series(sizes.to_numpy(), index=sizes.index, name="count", dtype="int64")
    if sort:
        order = np.argsort(out.to_numpy() if ascending else -out.to_numpy(), kind="stable")
        out = out.iloc[order]
        assert meta._interval is not None
        meta = dataclasses.replace(
            meta,
            _interval=partial(reordered, meta._interval, order),
            _index=list(out.index),
        )
    return attach(out, meta)


def release_group_counts(
    series: pd.Series,
    decl: CategoricalDeclaration,
    settings: Settings,
    grouping: Grouping,
    frame: pd.DataFrame,
    *,
    normalize: bool,
    dropna: bool = True,
    other: Any = None,
    sort: bool = False,
    ascending: bool = False,
) -> pd.Series:
    """Noisy counts (or shares within each group) of a column's declared categories.

    Like ``df.groupby(by)[column].value_counts(normalize=...)``: a Series indexed
    by (key, category), sorted by key, then within each key by the released values
    (``sort``; ties in declaration order, as pandas breaks them by appearance) or
    in declaration order of the categories.
    """
    labels, _ = buckets(series, decl, dropna=dropna, other=other)
    plan = Plan(settings, grouping)
    key = plan.categories(decl.column, len(labels))
    plan.calibrate()
    reader = partial(exact_buckets, series, decl, dropna=dropna, other=other)
    data = engine_input(
        {decl.column: series}, {}, settings, grouping, frame, {("categories", decl.column): reader}
    )

    check = (
        partial(validate, {decl.column: series}, {decl.column: decl})
        if settings.out_of_bounds == "raise"
        else None
    )
    statistic = "proportions" if normalize else "value_counts"
    noisy = plan.run(data, statistic, (*grouping.by, decl.column), check=check)
    keys = plan.released_index
    assert keys is not None
    k = len(labels)
    counts = noisy[key].reshape(len(keys), k)
    m = plan.measurements[key]
    if normalize:
        clipped = np.clip(counts, 0.0, None)
        totals = np.maximum(clipped.sum(axis=1, keepdims=True), 1.0)
        values = np.zeros((0, k))
        if len(keys):
            values = np.vstack([constraints.project_simplex(row) for row in clipped / totals])
        interval: Any = partial(_group_shares, m.calibrated, counts)
        out_bounds: tuple[float, float] = (0.0, 1.0)
    else:
        values = counts
        interval = partial(count_bounds, counts.reshape(-1), plan.noise_for(key))
        out_bounds = (m.lower, m.upper)
    index = _cells(keys, labels, grouping, decl.column, public_dtype(series.dtype, decl, other))
    order = np.arange(values.size)
    if sort:  # within each key, by the released values (post-processing)
        within = np.argsort(values if ascending else -values, axis=1, kind="stable")
        order = (within + (np.arange(values.shape[0]) * k)[:, None]).reshape(-1)
        index, interval = index[order], partial(reordered, interval, order)
    meta = build_metadata(
        statistic,
        [decl.column],
        plan,
        values.reshape(-1),
        input_bounds={},
        output_bounds=out_bounds,
        interval=interval,
        index=list(index),
        details={
            **plan.group_details(),
            "categories": list(decl.categories),
            "missing values": "dropped" if dropna else "counted",
            **({"denominator": "each group's noisy total"} if normalize else {}),
        },
    )
    flat = values.reshape(-1)[order]
    out = pd.Series(
        flat if normalize else flat.astype(np.int64),
        index=index,
        name="proportion" if normalize else "count",
        dtype="float64" if normalize else "int64",
    )
    return attach(out, meta)


def _cells(
    keys: pd.Index, labels: list[Any], grouping: Grouping, column: Hashable, public: Any
) -> pd.Index:
    """(key..., category) for every cell, key after key: the key levels in the released
    keys' dtypes, like pandas' group-by (:func:`~pandas_dp.result.labels.cells_index`);
    the categories' level typed as the column's where it holds them, categorical for a
    categorical column (:func:`~pandas_dp.stats.histograms.public_dtype`)."""
    return cells_index(keys, typed_labels(labels, public), [*grouping.by, column])


def _group_shares(noise: Any, counts: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Per group, the shares' interval from its noisy counts (union bound within a group)."""
    if counts.shape[0] == 0:
        return np.zeros(0), np.zeros(0)
    pairs = [share_bounds(noise.head(counts.shape[1]), row, alpha) for row in counts]
    return np.concatenate([p[0] for p in pairs]), np.concatenate([p[1] for p in pairs])
