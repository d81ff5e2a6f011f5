"""Quantiles on a public grid (REFERENCE.md §12): the releases and their shapes.

Two estimators share one sufficient statistic, the counts of a column's clamped
values in the bins of an equal-width grid over its declared bounds (one pass,
mergeable across chunks, partitions and groups), each read by its estimator
(:mod:`pandas_dp.stats.quantiles.estimators`):

* ``method="exponential"`` (the default; :mod:`pandas_dp.stats.quantiles.search`):
  exact permute-and-flip selections among the grid's edges, recursive over the
  requested quantiles; a small share of the budget
  (:data:`~pandas_dp.stats.quantiles.estimators.INTERVAL_SHARE`) buys the noisy counts
  the intervals read.
* ``method="tree"`` (:mod:`pandas_dp.stats.quantiles.tree`): one noisy hierarchical
  histogram per column, every quantile and interval read from it.

The default was chosen in ``benchmarks/quantiles.py`` (``results/quantiles.md``):
the selection's RMSE is lower than the tree's in every cell measured (median and
quartiles; uniform, normal, lognormal; n = 10**3, 10**5; epsilon = 1, 0.1).

Examples
--------
>>> check_q([0.25, 0.75])
((0.25, 0.75), False)
>>> default_bins("exponential", None)
128000
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from pandas_dp.engines.grid import check_grid
from pandas_dp.plan.plans import Plan, engine_input
from pandas_dp.plan.records import build_metadata
from pandas_dp.request.declared_columns import NumericDeclaration
from pandas_dp.request.grouping import Grouping
from pandas_dp.request.settings import Settings
from pandas_dp.result.labels import cells_index
from pandas_dp.result.values import DPFloat, attach
from pandas_dp.stats.numeric import FloatArray, IntervalFn, validate
from pandas_dp.stats.quantiles.estimators import Estimator, estimator_for
from pandas_dp.stats.quantiles.search import BASE_CELLS

__all__ = [
    "DEFAULT_BINS",
    "GROUPED_CELLS",
    "METHODS",
    "SELECT_BINS",
    "check_bins",
    "check_interval",
    "check_method",
    "check_q",
    "default_bins",
    "release_quantiles",
]

#: One statistic's values per group, interval functions per group, output range.
Estimates = tuple[FloatArray, list[IntervalFn], tuple[float, float]]

#: The tree's grid resolution, chosen by ``benchmarks/quantile_grid.py`` (quartile
#: RMSE on uniform, normal and lognormal data on [0, 100], n = 10**3 and 10**5,
#: epsilon = 0.1, 1, 10; ratio to the best of 12 (bins, branching) per setting):
#: 256 bins is up to 9x worse at epsilon = 10 (the bin width dominates), 4096 bins
#: up to 1.8x worse at n = 1000, epsilon = 0.1 (three levels of finer noise); 1024
#: is within 4.7x everywhere and best or near-best at epsilon <= 1.
DEFAULT_BINS = 1024
#: The selection's grid resolution (one group): 128 000 = 1 000 x 2**7 cells, so
#: that every thousandth of the bounds (OpenDP's 1 001 candidates) is an edge, and
#: the edges between them pay the public base penalty of
#: :func:`~pandas_dp.stats.quantiles.search.base_penalty`. Chosen by the exact
#: expected error of ``benchmarks/quantile_defaults.py`` (213 cells: n = 10**2 to
#: 10**6, epsilon 0.1 to 10, uniform, normal, lognormal, integer ages and Likert
#: answers, tight and loose bounds, q = 0.5, 0.25, 0.9): geometric mean of the RMSE
#: ratio to OpenDP 0.30 (the former 2**17 bins with no penalty: 0.58, up to 1.15x
#: OpenDP's on a 1 000-value median). A grid this fine only has to be finer than the
#: rank noise where the data are densest; the penalty keeps its runs of equal scores
#: from spreading the choice.
SELECT_BINS = 1000 << 7
#: Per group-by, at most this many grid cells (groups x bins) for the selection
#: (each counted in two halves: 64 MiB of int64 counts at most).
GROUPED_CELLS = 1 << 22
#: The estimators on offer.
METHODS: tuple[str, ...] = ("exponential", "tree")


# ----------------------------------------------------------------------------- checks


def check_q(q: Any) -> tuple[tuple[float, ...], bool]:
    """The requested quantiles as floats in ``[0, 1]``, and whether ``q`` was a scalar.

    Raises before the budget is charged (public arguments).

    Examples
    --------
    >>> check_q(0.5)
    ((0.5,), True)
    >>> check_q([0.25, 0.75])
    ((0.25, 0.75), False)
    """
    scalar = not isinstance(q, Sequence | np.ndarray | pd.Index | pd.Series)
    if isinstance(q, str):
        raise TypeError(f"q must be a number or a list of numbers in [0, 1]; got {q!r}")
    values = [q] if scalar else list(np.asarray(q, dtype=object).reshape(-1))
    if not values:
        raise ValueError("q is empty; ask for at least one quantile (e.g. q=[0.25, 0.5, 0.75])")
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int | float | np.integer | np.floating):
            raise TypeError(f"q must be a number or a list of numbers in [0, 1]; got {v!r}")
        f = float(v)
        if not (0.0 <= f <= 1.0):
            raise ValueError(f"quantiles must lie in [0, 1] (e.g. q=0.5 for the median); got {v}")
        out.append(f)
    return tuple(out), scalar


def check_method(method: Any) -> None:
    """``method`` is one of :data:`METHODS` (raises before anything is planned)."""
    if method not in METHODS:
        raise ValueError(f"method={method!r} is not supported for quantiles; use one of {METHODS}")


def check_interval(interval: Any) -> None:
    """``interval`` must be a bool (a public choice, checked before the charge)."""
    if not isinstance(interval, bool | np.bool_):
        raise TypeError(
            f"interval must be True (the result has intervals) or False (the whole "
            f"budget selects, no intervals); got {interval!r}"
        )


def check_bins(bins: Any, decls: Mapping[Hashable, NumericDeclaration]) -> int:
    """Validate the grid resolution against every column's bounds (public facts)."""
    for d in decls.values():
        check_grid(d.lower, d.upper, bins)
    if int(bins) < 2:
        raise ValueError(f"bins must be at least 2 (e.g. bins={DEFAULT_BINS}); got {bins}")
    if int(bins) > 1 << 20:
        raise ValueError(f"bins={bins} is larger than supported (at most 2**20 bins)")
    return int(bins)


# ----------------------------------------------------------------------------- releases


def default_bins(method: str, grouping: Grouping | None) -> int:
    """The grid's resolution when ``bins`` is not given (public facts only).

    The tree reads every quantile off one noisy histogram: :data:`DEFAULT_BINS`.
    The selection scores every edge of a fine grid: :data:`SELECT_BINS` for one
    group; per group the finest of ``1000 * 2**k`` cells (``k <= 7``) that keeps
    ``groups * bins`` within :data:`GROUPED_CELLS`, at least 1 000 (the coarse grid
    of :data:`~pandas_dp.stats.quantiles.search.BASE_CELLS`), and 1 000 for private
    keys, whose number is not public.

    Examples
    --------
    >>> default_bins("exponential", None), default_bins("tree", None)
    (128000, 1024)
    """
    if method == "tree":
        return DEFAULT_BINS
    if grouping is not None and grouping.private:
        return BASE_CELLS
    if grouping is None:
        return SELECT_BINS
    fit = GROUPED_CELLS // max(grouping.size, 1)
    bins = SELECT_BINS
    while bins > BASE_CELLS and bins > fit:
        bins //= 2
    return bins


def release_quantiles(
    columns: Mapping[Hashable, pd.Series],
    decls: Mapping[Hashable, NumericDeclaration],
    q: Any,
    settings: Settings,
    *,
    scalar: bool,
    bins: int | None = None,
    method: str = "exponential",
    grouping: Grouping | None = None,
    frame: pd.DataFrame | None = None,
    statistic: str = "quantile",
    interval: bool = True,
) -> DPFloat | pd.Series | pd.DataFrame:
    """Release quantiles of numeric columns, one estimator per column (and group).

    Parameters
    ----------
    columns : dict
        ``label -> Series`` (numeric).
    decls : dict
        ``label -> NumericDeclaration``: the public bounds.
    q : float or list of float
        Quantiles in ``[0, 1]``.
    settings : Settings
        The privacy settings of the call.
    scalar : bool
        One column named as a scalar (pandas' shapes: no column axis).
    bins : int, optional
        The grid's resolution (default: :func:`default_bins`).
    method : {"exponential", "tree"}
        ``"exponential"``: permute-and-flip selections on the grid's edges
        (:mod:`pandas_dp.stats.quantiles.search`), with
        :data:`~pandas_dp.stats.quantiles.estimators.INTERVAL_SHARE` of the budget on the
        counts its intervals read; ``"tree"``: one noisy hierarchical histogram
        (:mod:`pandas_dp.stats.quantiles.tree`).
    grouping : Grouping, optional
        Per group: one estimator per group and column.
    frame : DataFrame, optional
        Where the privacy unit and the group columns live.
    statistic : str
        The name in the ledger and the metadata.
    interval : bool
        Give the result intervals (``method="exponential"`` spends
        :data:`~pandas_dp.stats.quantiles.estimators.INTERVAL_SHARE` of the budget on
        them); ``False``: the whole budget selects and the metadata's
        ``interval`` raises.

    Returns
    -------
    DPFloat, Series or DataFrame
        Shaped like pandas' ``quantile`` (see the accessors).
    """
    qs, scalar_q = check_q(q)
    check_method(method)
    check_interval(interval)
    bins = check_bins(default_bins(method, grouping) if bins is None else bins, decls)
    labels = list(columns)
    plan = Plan(settings, grouping)
    estimator = estimator_for(method, bins, qs, decls, plan, interval=interval)
    readers = {("grid", c): estimator.add(c, columns[c]) for c in labels}
    plan.calibrate()
    estimator.check()  # public arguments only: may raise, before the charge
    check = (
        partial(validate, dict(columns), dict(decls)) if settings.out_of_bounds == "raise" else None
    )
    data = engine_input(dict(columns), dict(decls), settings, grouping, frame, readers)
    noisy = plan.run(data, statistic, (*(grouping.by if grouping else ()), *labels), check=check)
    groups = plan.released_groups
    values = np.zeros((groups, len(qs), len(labels)))
    for i, c in enumerate(labels):
        values[:, :, i] = estimator.values(c, noisy, groups)
    estimator.plan = None  # the metadata keeps the estimator: not the plan's random source
    return _shaped(
        values,
        partial(_intervals, estimator, labels, groups, len(qs)) if interval else _no_interval,
        plan,
        labels,
        decls,
        qs,
        scalar,
        scalar_q,
        grouping,
        statistic,
        estimator.details(),
    )


def _no_interval(alpha: float) -> tuple[FloatArray, FloatArray]:
    """The metadata's interval of a release made with ``interval=False``: none."""
    raise NotImplementedError(
        "no interval is available: this release was made with interval=False, which "
        "spends the whole budget on the quantiles. Release with interval=True (the "
        "default) to get one"
    )


def _intervals(
    estimator: Estimator,
    labels: Sequence[Hashable],
    groups: int,
    count: int,
    alpha: float,
) -> tuple[FloatArray, FloatArray]:
    """Every entry's interval, in the result's order: (group, q, column), flattened."""
    lo = np.zeros((groups, count, len(labels)))
    hi = np.zeros_like(lo)
    for i, c in enumerate(labels):
        for g in range(groups):
            lo[g, :, i], hi[g, :, i] = estimator.interval(c, g, alpha)
    return lo.reshape(-1), hi.reshape(-1)


def _shaped(
    values: FloatArray,
    interval: Any,
    plan: Plan,
    labels: list[Hashable],
    decls: Mapping[Hashable, NumericDeclaration],
    qs: tuple[float, ...],
    scalar: bool,
    scalar_q: bool,
    grouping: Grouping | None,
    statistic: str,
    details: dict[str, Any],
) -> DPFloat | pd.Series | pd.DataFrame:
    """pandas' shapes: scalar, Series by q / column / key, DataFrame otherwise."""
    input_bounds = {c: (decls[c].lower, decls[c].upper) for c in labels}
    output_bounds: Any = input_bounds[labels[0]] if scalar else input_bounds
    if grouping is not None:
        details.update(plan.group_details())
    index = plan.released_index
    rows: Any
    if grouping is None:
        rows = pd.Index(list(qs))
        flat = values[0]  # (Q, C)
    else:
        assert index is not None
        if scalar_q:
            rows = index
        else:
            # (key..., q), the keys' levels in the released keys' dtypes
            rows = cells_index(index, pd.Index(list(qs), dtype="float64"), [*index.names, None])
        flat = values.reshape(-1, len(labels))  # (G * Q, C)

    def meta(value: Any, entries: Any) -> Any:
        return build_metadata(
            statistic,
            labels,
            plan,
            value,
            input_bounds=input_bounds,
            output_bounds=output_bounds,
            interval=interval,
            index=entries,
            details=details,
        )

    if grouping is None and scalar and scalar_q:
        v = float(flat[0, 0])
        return DPFloat(v, {"dp": meta(v, None)})
    if scalar:  # one column: a Series by q, key or (key, q)
        out = pd.Series(flat[:, 0], index=rows, name=labels[0], dtype="float64")
        return attach(out, meta(flat[:, 0], list(rows)))
    if grouping is None and scalar_q:  # several columns, one q: a Series by column
        series = pd.Series(flat[0], index=pd.Index(labels), name=qs[0], dtype="float64")
        return attach(series, meta(flat[0], labels))
    frame = pd.DataFrame(flat, index=rows, columns=pd.Index(labels))
    return attach(frame, meta(flat, [(r, c) for r in rows for c in labels]))
