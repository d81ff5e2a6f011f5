"""The Dask engine: the pandas engine's exact sums, partition by partition, added exactly.

A Dask DataFrame is a sequence of pandas frames (its partitions). Every sum the
pandas engine (:mod:`pandas_dp.engines.pandas`) computes is an exact integer
(REFERENCE.md §13): each row is clamped, centred and rounded to a power-of-two
step fixed by public bounds alone, so a partition's sums plus another's are the
sums of their union, whatever the partitioning. This engine therefore

1. runs the pandas engine's kernel on each partition, where the partition lives
   (a worker, or the client with the synchronous scheduler);
2. sends back only the partial sums -- per group: counts, and integers times
   public steps -- never a row, a key or a group code;
3. adds the partials exactly (Python integers and :class:`~fractions.Fraction`
   values), so a release is identical for 1, 7 or 64 partitions and equal to
   the pandas engine's on the same rows.

Noise is never drawn here: the plan (:mod:`pandas_dp.plan.plans`) adds it once, on the
client, to the combined exact values. Group codes are computed inside each
partition from the public declared keys (the codes never leave the partition).

With a privacy unit the rows are first shuffled by unit (every unit's rows in one
partition: :class:`PartitionGroups` ``shuffle_on``), and each partition runs the
pandas path's keyed-hash truncation (:func:`truncated`, the key drawn on the
client), which keeps exactly the rows the pandas engine keeps. Private keys
(partition selection) are gathered from the partitions (:func:`observed_groups`)
and counted per key (:func:`observed_counts`) before the plan measures the kept
keys; these two passes send the data's distinct keys and their exact counts to the
client, which releases only what the selection keeps.

:func:`exact_values` measures a whole plan with one ``dask.compute``: all its
sources (every column's moments, a block's products, histograms, row counts) are
computed in the same pass over each partition. The single-kernel functions
(:func:`moments`, :func:`products`, :func:`category_counts`,
:func:`present_counts`, :func:`row_counts`) mirror the pandas engine's, for
direct use and tests; each is one ``dask.compute``.

This module holds the entry points; the partition machinery (markers, the
combining tree, :class:`PartitionGroups`) is in ``engines.dask.partitions``, the
privacy units and private keys in ``engines.dask.units``.

Not on Dask yet: predicate counts (``df.dp.counts``); the accessor refuses them
before the budget is charged.

Examples
--------
>>> import pandas as pd, dask.dataframe as dd
>>> s = dd.from_pandas(pd.Series([1.0, 5.0, None, 50.0]), npartitions=2)
>>> m = moments(s, 0.0, 10.0, squares=True)
>>> m.count, m.total_value, m.squares_value
(array([3]), array([1.]), array([41.]))
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from fractions import Fraction
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from pandas_dp.engines import codes as local_codes
from pandas_dp.engines import in_memory
from pandas_dp.engines import pandas as local_engine
from pandas_dp.engines import sums as local_sums
from pandas_dp.engines.codes import CategoryCounts
from pandas_dp.engines.dask.partitions import (
    PartitionGroups,
    _add,
    _Columns,
    _frame_of,
    _local,
    _partition_values,
    _run,
    _sum_arrays,
    _template,
    compute_error,
    is_dask,
)
from pandas_dp.engines.dask.units import observed_counts, observed_groups, truncated
from pandas_dp.engines.inputs import EngineInput
from pandas_dp.engines.registry import register_engine
from pandas_dp.engines.sums import MomentSums, ProductSums

__all__ = [
    "DASK",
    "DaskEngine",
    "PartitionGroups",
    "category_counts",
    "compute_error",
    "exact_values",
    "is_dask",
    "moments",
    "observed_counts",
    "observed_groups",
    "present_counts",
    "products",
    "register",
    "row_counts",
    "truncated",
]


# ----------------------------------------------------------------------------- plans


def exact_values(
    measurements: Iterable[Any],
    data: EngineInput,
    *,
    local: Callable[[Any, EngineInput], dict[str, NDArray[Any]]],
) -> dict[str, NDArray[Any]]:
    """Every measurement's exact vector, from one ``dask.compute`` over all partitions.

    Parameters
    ----------
    measurements : iterable of Measurement
        The plan's measurements (public).
    data : EngineInput
        The engine input of :func:`pandas_dp.plan.measure.engine_input` with Dask Series
        for columns (also inside the histograms' readers) and
        :class:`PartitionGroups` for the groups.
    local : callable
        The in-memory engine's :func:`~pandas_dp.engines.in_memory.exact_values`:
        run on each partition's pandas objects.

    Returns
    -------
    dict
        ``key -> vector`` as the pandas path returns it (counts as float vectors of
        whole numbers, sums as object vectors of exact ``Fraction`` values), equal
        to it on the same rows.
    """
    ms = list(measurements)
    if not ms:  # e.g. private keys' len: the selection's counts are the release
        return {}
    if any(m.source.kind in ("masks", "selection") for m in ms):
        raise NotImplementedError("predicate counts are not available on Dask yet")
    additive, finish = _additive(ms, data)
    # the partitions need what to measure, never how it is noised or selected: a
    # selection's callback holds the plan, its settings and budget (a lock, which
    # neither Dask's tokenizer nor a worker's pickle can take)
    additive = [replace(m, noise=None, select=None) for m in additive]
    cols = _Columns()
    frame = data.frame
    # the units and observed keys served partition selection (already done)
    done = replace(data, frame=None, units=None, keys=None, engine=None)
    template = done.map_data(partial(_template, cols=cols))
    if not cols.series:  # nothing but rows to count: read the frame's first column
        if frame is None:
            raise ValueError("the Dask engine was given no column to read")
        cols.marker(frame[frame.columns[0]] if hasattr(frame, "columns") else frame)
    exact = _run(cols, partial(_partition_values, additive, template, local), _add)
    return finish(exact)


def _additive(
    ms: list[Any], data: EngineInput
) -> tuple[list[Any], Callable[[dict[str, NDArray[Any]]], dict[str, NDArray[Any]]]]:
    """Rewrite the direct releases (not sums over rows) into sums, and their finisher.

    ``mean_direct = mid + Σy / n`` and ``var_direct = (Σy² - (Σy)² / n) / (n - 1)``
    (``n`` public) come from the column's exact centred sum and squares.
    """
    direct = {m.key: m for m in ms if m.statistic in ("mean_direct", "var_direct")}
    if not direct:
        return ms, _as_released
    out = [m for m in ms if m.key not in direct]
    for key, m in direct.items():
        out.append(replace(m, key=f"{key} \x00sum", statistic="centred_sum"))
        if m.statistic == "var_direct":
            out.append(replace(m, key=f"{key} \x00squares", statistic="centred_squares"))

    def finish(exact: dict[str, NDArray[Any]]) -> dict[str, NDArray[Any]]:
        n = data.rows
        assert n is not None, "a direct release is made only where the row count is public"
        values = _as_released({k: v for k, v in exact.items() if "\x00" not in k})
        for key, m in direct.items():
            total = exact[f"{key} \x00sum"][0]
            if m.statistic == "mean_direct":
                decl = data.declaration(m.source.column)
                mid = Fraction(decl.lower) + Fraction(decl.width) / 2
                value = mid + total / n
            else:
                value = (exact[f"{key} \x00squares"][0] - total * total / n) / (n - 1)
            arr = np.empty(1, dtype=object)
            arr[0] = value
            values[key] = arr
        return values

    return out, finish


def _as_released(exact: dict[str, NDArray[Any]]) -> dict[str, NDArray[Any]]:
    """Counts back to float vectors (whole numbers), sums stay exact rationals."""
    out: dict[str, NDArray[Any]] = {}
    for k, v in exact.items():
        if all(isinstance(x, int) for x in v):
            out[k] = np.array([float(x) for x in v], dtype=np.float64)
        else:
            out[k] = v
    return out


# ----------------------------------------------------------------------------- kernels


def moments(
    series: Any,
    lower: float,
    upper: float,
    *,
    squares: bool,
    groups: PartitionGroups | None = None,
) -> MomentSums:
    """:func:`pandas_dp.engines.sums.moments` of a Dask Series (exact, any partitioning).

    Parameters
    ----------
    series : dask Series
        A numeric or boolean column.
    lower, upper : float
        Declared bounds.
    squares : bool
        Whether to accumulate the squares.
    groups : PartitionGroups, optional
        Group codes computed per partition; ``None``: one group of all rows.

    Returns
    -------
    MomentSums

    Examples
    --------
    >>> import pandas as pd, dask.dataframe as dd
    >>> s = dd.from_pandas(pd.Series([1.0, 3.5, 3.0]), npartitions=3)
    >>> moments(s, 0.0, 4.0, squares=False).total_value
    array([1.5])
    """
    cols, (markers, g) = _frame_of([series], groups)

    def kernel(part: pd.DataFrame) -> MomentSums:
        codes = None if g is None else _local(g, part)
        return local_sums.moments(
            _local(markers[0], part), lower, upper, squares=squares, groups=codes
        )

    def add(*parts: MomentSums) -> MomentSums:
        return MomentSums(
            sum((p.count for p in parts[1:]), parts[0].count),
            [sum(t) for t in zip(*(p.total for p in parts), strict=True)],
            [sum(t) for t in zip(*(p.squares for p in parts), strict=True)],
            parts[0].step,
            parts[0].square_step,
        )

    result: MomentSums = _run(cols, kernel, add)
    return result


def products(
    columns: Sequence[Any], lowers: Sequence[float], uppers: Sequence[float]
) -> ProductSums:
    """:func:`pandas_dp.engines.sums.products` of Dask Series (exact, any partitioning).

    Parameters
    ----------
    columns : sequence of dask Series
        Numeric columns of one frame.
    lowers, uppers : sequence of float
        Declared bounds per column.

    Returns
    -------
    ProductSums

    Examples
    --------
    >>> import pandas as pd, dask.dataframe as dd
    >>> df = dd.from_pandas(pd.DataFrame({"a": [0.0, 2.0], "b": [1.0, None]}), npartitions=2)
    >>> products([df["a"], df["b"]], [0, 0], [2, 2]).count
    array([1])
    """
    cols, (markers, _) = _frame_of(list(columns), None)

    def kernel(part: pd.DataFrame) -> ProductSums:
        return local_sums.products([_local(m, part) for m in markers], lowers, uppers)

    def add(*parts: ProductSums) -> ProductSums:
        first = parts[0]
        return ProductSums(
            sum((p.count for p in parts[1:]), first.count),
            [sum(t) for t in zip(*(p.totals for p in parts), strict=True)],
            {ij: sum(p.products[ij] for p in parts) for ij in first.products},
            first.steps,
            first.product_steps,
        )

    result: ProductSums = _run(cols, kernel, add)
    return result


def category_counts(
    series: Any, categories: Sequence[object], *, groups: PartitionGroups | None = None
) -> CategoryCounts:
    """:func:`pandas_dp.engines.codes.category_counts` of a Dask Series.

    Parameters
    ----------
    series : dask Series
        Any column.
    categories : sequence
        The declared categories (public).
    groups : PartitionGroups, optional
        Group codes computed per partition.

    Returns
    -------
    CategoryCounts

    Examples
    --------
    >>> import pandas as pd, dask.dataframe as dd
    >>> s = dd.from_pandas(pd.Series(["a", "b", None, "a", "q"]), npartitions=2)
    >>> c = category_counts(s, ["a", "b"])
    >>> c.counts, c.missing, c.other
    (array([[2, 1]]), array([1]), array([1]))
    """
    cols, (markers, g) = _frame_of([series], groups)

    def kernel(part: pd.DataFrame) -> CategoryCounts:
        codes = None if g is None else _local(g, part)
        return local_codes.category_counts(_local(markers[0], part), categories, groups=codes)

    def add(*parts: CategoryCounts) -> CategoryCounts:
        return CategoryCounts(
            sum((p.counts for p in parts[1:]), parts[0].counts),
            sum((p.missing for p in parts[1:]), parts[0].missing),
            sum((p.other for p in parts[1:]), parts[0].other),
        )

    result: CategoryCounts = _run(cols, kernel, add)
    return result


def present_counts(series: Any, groups: PartitionGroups | None = None) -> NDArray[np.int64]:
    """Non-missing values per group of a Dask Series (private).

    Examples
    --------
    >>> import pandas as pd, dask.dataframe as dd
    >>> present_counts(dd.from_pandas(pd.Series(["a", None, "b"]), npartitions=2))
    array([2])
    """
    cols, (markers, g) = _frame_of([series], groups)

    def kernel(part: pd.DataFrame) -> NDArray[np.int64]:
        codes = None if g is None else _local(g, part)
        return local_engine.present_counts(_local(markers[0], part), codes)

    result: NDArray[np.int64] = _run(cols, kernel, _sum_arrays)
    return result


def row_counts(frame: Any, groups: PartitionGroups | None = None) -> NDArray[np.int64]:
    """Rows per group of a Dask DataFrame or Series (private).

    Examples
    --------
    >>> import pandas as pd, dask.dataframe as dd
    >>> row_counts(dd.from_pandas(pd.DataFrame({"a": range(5)}), npartitions=2))
    array([5])
    """
    first = frame[frame.columns[0]] if hasattr(frame, "columns") else frame
    cols, (_, g) = _frame_of([first], groups)

    def kernel(part: pd.DataFrame) -> NDArray[np.int64]:
        codes = None if g is None else _local(g, part)
        return local_engine.row_counts(codes, len(part))

    result: NDArray[np.int64] = _run(cols, kernel, _sum_arrays)
    return result


# ----------------------------------------------------------------------------- engine


class DaskEngine:
    """The Dask engine (:class:`~pandas_dp.engines.protocol.Engine`): the in-memory
    engine's kernels on each partition, their exact values added on the client."""

    name = "dask"

    def exact_values(
        self, measurements: Iterable[Any], data: EngineInput
    ) -> dict[str, NDArray[Any]]:
        """See :meth:`pandas_dp.engines.protocol.Engine.exact_values`."""
        return exact_values(measurements, data, local=in_memory.exact_values)

    def groups(
        self,
        frame: Any,
        by: Sequence[Any],
        codes: Callable[[pd.DataFrame], local_engine.Groups],
        size: int,
    ) -> Any:
        """See :meth:`pandas_dp.engines.protocol.Engine.groups` (codes stay in the
        partitions: :class:`PartitionGroups`)."""
        return PartitionGroups([frame[c] for c in by], codes, size)

    def observed_groups(self, column: Any) -> tuple[Any, pd.Index]:
        """See :meth:`pandas_dp.engines.protocol.Engine.observed_groups`."""
        return observed_groups(column, sort=False)

    def observed_counts(self, groups: Any, units: Any | None) -> NDArray[np.int64]:
        """See :meth:`pandas_dp.engines.protocol.Engine.observed_counts`."""
        return observed_counts(groups, units, local=in_memory.PANDAS.observed_counts)

    def kept_groups(self, groups: Any, position: NDArray[np.intp], size: int) -> Any:
        """See :meth:`pandas_dp.engines.protocol.Engine.kept_groups`."""
        return groups.renumbered(position, size)

    def truncated(
        self,
        frame: Any,
        read: list[Any],
        unit: Any,
        groups: Any,
        truncate: Callable[[pd.DataFrame, Any], local_engine.Groups],
    ) -> Any:
        """See :meth:`pandas_dp.engines.protocol.Engine.truncated`."""
        return truncated(frame, read, unit, groups, truncate)

    def category_counts(
        self, series: Any, categories: Sequence[Any], *, groups: Any = None
    ) -> CategoryCounts:
        """See :meth:`pandas_dp.engines.protocol.Engine.category_counts`."""
        return category_counts(series, categories, groups=groups)


#: The Dask engine, registered for Dask's DataFrame and Series.
DASK = DaskEngine()


def register() -> None:
    """Register the Dask engine for Dask's DataFrame and Series (and the group codes
    it leaves in the partitions); :func:`~pandas_dp.engines.registry.engine_for`
    calls it the first time Dask data arrives (importing this module imports no
    Dask collection)."""
    import dask.dataframe as dd

    for data_type in (dd.DataFrame, dd.Series, PartitionGroups):
        register_engine(data_type, DASK)
