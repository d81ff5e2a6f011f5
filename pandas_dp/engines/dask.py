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

Noise is never drawn here: the plan (:mod:`pandas_dp.plan`) adds it once, on the
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

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from pandas_dp.engines import codes as local_codes
from pandas_dp.engines import pandas as local_engine
from pandas_dp.engines import sums as local_sums
from pandas_dp.engines.codes import CategoryCounts
from pandas_dp.engines.pandas import Groups
from pandas_dp.engines.sums import MomentSums, ProductSums

if TYPE_CHECKING:
    from pandas_dp.plan import Measurement

__all__ = [
    "PartitionGroups",
    "category_counts",
    "exact_values",
    "is_dask",
    "moments",
    "observed_counts",
    "observed_groups",
    "present_counts",
    "products",
    "row_counts",
    "truncated",
]

#: Partials added per task of the combining tree.
_FAN_IN = 16


def is_dask(obj: object) -> bool:
    """Whether ``obj`` is a Dask collection (without importing Dask).

    Examples
    --------
    >>> import pandas as pd
    >>> is_dask(pd.Series([1.0]))
    False
    """
    return isinstance(obj, PartitionGroups) or type(obj).__module__.startswith("dask.")


@dataclass(frozen=True)
class PartitionGroups:
    """Group codes of a Dask frame, computed inside each partition.

    Parameters
    ----------
    columns : sequence of dask Series
        The key columns (from the same frame as the released columns).
    make : callable
        ``make(frame) -> Groups``: the codes of one partition, given a pandas
        DataFrame holding the key columns under their labels. Picklable (it runs
        on the workers); it reads only the public declared keys.
    size : int
        The number of groups (public).
    shuffle_on : dask Series, optional
        A privacy unit's column: the engine first shuffles the rows so that all of
        a unit's rows share one partition (``make`` then bounds each unit's
        contributions, as the pandas engine does on the whole frame).
    """

    columns: Sequence[Any]
    make: Callable[[pd.DataFrame], Groups]
    size: int
    shuffle_on: Any = None

    def renumbered(self, position: NDArray[np.intp], size: int) -> PartitionGroups:
        """These codes mapped through ``position`` (``position[-1]``: code ``-1``'s).

        Examples
        --------
        >>> import pandas as pd, dask.dataframe as dd
        >>> ddf = dd.from_pandas(pd.DataFrame({"k": [0, 1, 2, 1]}), npartitions=2)
        >>> g = PartitionGroups([ddf["k"]], lambda p: Groups(p["k"].to_numpy(), 3), 3)
        >>> kept = g.renumbered(np.array([-1, 0, 1, -1]), 2)
        >>> row_counts(ddf, kept).tolist()
        [2, 1]
        """
        return replace(self, make=partial(_renumber, self.make, position, size), size=size)


def _renumber(
    make: Callable[[pd.DataFrame], Groups],
    position: NDArray[np.intp],
    size: int,
    part: pd.DataFrame,
) -> Groups:
    return Groups(position[make(part).codes], size)


# ----------------------------------------------------------------------------- plumbing


@dataclass(frozen=True)
class _Column:
    """Stands for a Dask Series in the per-partition template: column ``name`` of the
    partition's frame, renamed to ``label``."""

    name: str
    label: Hashable


@dataclass(frozen=True)
class _LocalGroups:
    """Stands for :class:`PartitionGroups` in the per-partition template."""

    names: tuple[str, ...]
    labels: tuple[Hashable, ...]
    make: Callable[[pd.DataFrame], Groups]


class _Columns:
    """The distinct Dask Series a computation reads, each under a positional name."""

    def __init__(self) -> None:
        self.series: list[Any] = []
        self.names: dict[str, str] = {}
        #: the column (positional name) to shuffle the rows by: a privacy unit
        self.shuffle: str | None = None

    def shuffle_by(self, series: Any) -> None:
        name = self.marker(series).name
        if self.shuffle not in (None, name):
            raise ValueError("one computation cannot bound two privacy units")
        self.shuffle = name

    def marker(self, series: Any) -> _Column:
        token = str(series._name)
        name = self.names.get(token)
        if name is None:
            name = f"c{len(self.series)}"
            self.names[token] = name
            self.series.append(series.rename(name))
        return _Column(name, series.name)

    def frame(self) -> Any:
        """One Dask DataFrame of every column read (partitions stay where they are)."""
        if not self.series:
            raise ValueError("the Dask engine was given no column to read")
        import dask.dataframe as dd

        if len(self.series) == 1:
            frame = self.series[0].to_frame()
        else:
            frame = dd.concat(self.series, axis=1)
        if self.shuffle is not None:  # every unit's rows in one partition
            frame = frame.shuffle(on=self.shuffle)
        return frame


def _template(value: Any, cols: _Columns) -> Any:
    """``value`` with every Dask Series replaced by a marker (recursively in partials)."""
    if isinstance(value, PartitionGroups):
        markers = [cols.marker(s) for s in value.columns]
        if value.shuffle_on is not None:
            cols.shuffle_by(value.shuffle_on)
        return _LocalGroups(
            tuple(m.name for m in markers), tuple(m.label for m in markers), value.make
        )
    if is_dask(value):
        return cols.marker(value)
    if isinstance(value, partial):
        return partial(
            value.func,
            *(_template(a, cols) for a in value.args),
            **{k: _template(v, cols) for k, v in value.keywords.items()},
        )
    return value


def _local(value: Any, part: pd.DataFrame) -> Any:
    """The partition's pandas object for a marker (recursively in partials)."""
    if isinstance(value, _Column):
        return part[value.name].rename(value.label)  # type: ignore[call-overload]
    if isinstance(value, _LocalGroups):
        keys = part[list(value.names)].set_axis(list(value.labels), axis=1)
        return value.make(keys)
    if isinstance(value, partial):
        return partial(
            value.func,
            *(_local(a, part) for a in value.args),
            **{k: _local(v, part) for k, v in value.keywords.items()},
        )
    return value


def _reduce(frame: Any, kernel: Callable[[pd.DataFrame], Any], add: Callable[..., Any]) -> Any:
    """A delayed value: ``kernel`` on every partition, partials added in a tree.

    The kernel runs inside each partition's own task (a ``map_partitions`` that Dask
    fuses with the reads, column selections and concatenation before it): a
    worker reads a partition, measures it and drops it in one task, so only the
    small partial ever leaves the task, and there is one task per partition
    instead of two.
    """
    import dask

    if frame.npartitions == 0:  # no partition: the kernel on an empty frame
        level = [dask.delayed(kernel)(frame._meta)]
    else:
        boxed = frame.map_partitions(
            _boxed,
            kernel,
            meta=pd.Series(np.empty(0, dtype=object)),
            enforce_metadata=False,
            clear_divisions=True,
            align_dataframes=False,
        )
        boxes = boxed.to_delayed()
        if len(boxes) == 1:
            return dask.delayed(_unbox)(boxes[0])
        # the first level of the tree takes the boxes themselves (no task per box)
        first = dask.delayed(partial(_add_boxed, add))
        level = [first(*boxes[i : i + _FAN_IN]) for i in range(0, len(boxes), _FAN_IN)]
    combine = dask.delayed(add)
    while len(level) > 1:
        level = [combine(*level[i : i + _FAN_IN]) for i in range(0, len(level), _FAN_IN)]
    return level[0]


def _boxed(part: pd.DataFrame, kernel: Callable[[pd.DataFrame], Any]) -> pd.Series:
    """``kernel(part)`` as the one element of an object Series (a partition's output).

    The compiled kernels run in the task's own thread (:func:`_numba.serial`): Dask
    already runs one task per worker thread (its workers start with
    ``OMP_NUM_THREADS=1`` for the same reason).
    """
    from pandas_dp.engines import _numba

    box = np.empty(1, dtype=object)
    with _numba.serial():
        box[0] = kernel(part)
    return pd.Series(box, copy=False)


def _unbox(box: pd.Series) -> Any:
    """The partial held by :func:`_boxed`'s Series."""
    return box.iloc[0]


def _add_boxed(add: Callable[..., Any], *boxes: pd.Series) -> Any:
    """``add`` of the partials held by :func:`_boxed`'s Series."""
    partials = [_unbox(b) for b in boxes]
    return add(*partials) if len(partials) > 1 else partials[0]


# ----------------------------------------------------------------------------- plans


def exact_values(
    measurements: Iterable[Measurement],
    data: Mapping[Any, Any],
    *,
    local: Callable[[Any, Mapping[Any, Any]], dict[str, NDArray[Any]]],
) -> dict[str, NDArray[Any]]:
    """Every measurement's exact vector, from one ``dask.compute`` over all partitions.

    Parameters
    ----------
    measurements : iterable of Measurement
        The plan's measurements (public).
    data : mapping
        The engine input of :func:`pandas_dp.measure.engine_input` with Dask Series
        for columns (also inside the histograms' callables) and
        :class:`PartitionGroups` for ``"groups"``.
    local : callable
        The pandas path, :func:`pandas_dp.measure.exact_values`: run on each
        partition's pandas objects.

    Returns
    -------
    dict
        ``key -> vector`` as the pandas path returns it (counts as float vectors of
        whole numbers, sums as object vectors of exact ``Fraction`` values), equal
        to it on the same rows.
    """
    import dask

    ms = list(measurements)
    if not ms:  # e.g. private keys' len: the selection's counts are the release
        return {}
    if any(m.source[0] in ("masks", "selection") for m in ms):
        raise NotImplementedError("predicate counts are not available on Dask yet")
    additive, finish = _additive(ms, data)
    cols = _Columns()
    frame = data.get("frame")
    # the units and observed keys served partition selection (already done)
    skip = ("frame", "units", "keys")
    template = {k: _template(v, cols) for k, v in data.items() if k not in skip}
    if not cols.series:  # nothing but rows to count: read the frame's first column
        if frame is None:
            raise ValueError("the Dask engine was given no column to read")
        cols.marker(frame[frame.columns[0]] if hasattr(frame, "columns") else frame)
    total = _reduce(cols.frame(), partial(_partition_values, additive, template, local), _add)
    (exact,) = dask.compute(total)
    return finish(exact)


def _partition_values(
    measurements: list[Measurement],
    template: Mapping[Any, Any],
    local: Callable[[Any, Mapping[Any, Any]], dict[str, NDArray[Any]]],
    part: pd.DataFrame,
) -> dict[str, NDArray[Any]]:
    """The pandas path on one partition; counts as exact Python integers."""
    data = {k: _local(v, part) for k, v in template.items()}
    data["rows"] = len(part)  # this partition's rows (the plan's own n stays on the client)
    out = local(measurements, data)
    return {k: (v if v.dtype == object else _integers(v)) for k, v in out.items()}


def _integers(counts: NDArray[Any]) -> NDArray[Any]:
    arr = np.empty(counts.shape, dtype=object)
    arr[:] = [int(v) for v in counts.reshape(-1)]
    return arr


def _add(*partials: dict[str, NDArray[Any]]) -> dict[str, NDArray[Any]]:
    """Exact sum of per-partition values (object vectors of ints and Fractions)."""
    first, *rest = partials
    out = {k: v.copy() for k, v in first.items()}
    for p in rest:
        for k, v in p.items():
            out[k] = out[k] + v
    return out


def _additive(
    ms: list[Measurement], data: Mapping[Any, Any]
) -> tuple[list[Measurement], Callable[[dict[str, NDArray[Any]]], dict[str, NDArray[Any]]]]:
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
        n = int(data["rows"])
        values = _as_released({k: v for k, v in exact.items() if "\x00" not in k})
        for key, m in direct.items():
            total = exact[f"{key} \x00sum"][0]
            if m.statistic == "mean_direct":
                decl = data[("decl", m.source[1])]
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


def _compute(value: Any) -> Any:
    import dask

    (out,) = dask.compute(value)
    return out


def _frame_of(series: Sequence[Any], groups: PartitionGroups | None) -> tuple[Any, list[Any]]:
    cols = _Columns()
    markers = [cols.marker(s) for s in series]
    g = None if groups is None else _template(groups, cols)
    return cols.frame(), [markers, g]


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
    frame, (markers, g) = _frame_of([series], groups)

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

    result: MomentSums = _compute(_reduce(frame, kernel, add))
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
    frame, (markers, _) = _frame_of(list(columns), None)

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

    result: ProductSums = _compute(_reduce(frame, kernel, add))
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
    frame, (markers, g) = _frame_of([series], groups)

    def kernel(part: pd.DataFrame) -> CategoryCounts:
        codes = None if g is None else _local(g, part)
        return local_codes.category_counts(_local(markers[0], part), categories, groups=codes)

    def add(*parts: CategoryCounts) -> CategoryCounts:
        return CategoryCounts(
            sum((p.counts for p in parts[1:]), parts[0].counts),
            sum((p.missing for p in parts[1:]), parts[0].missing),
            sum((p.other for p in parts[1:]), parts[0].other),
        )

    result: CategoryCounts = _compute(_reduce(frame, kernel, add))
    return result


def present_counts(series: Any, groups: PartitionGroups | None = None) -> NDArray[np.int64]:
    """Non-missing values per group of a Dask Series (private).

    Examples
    --------
    >>> import pandas as pd, dask.dataframe as dd
    >>> present_counts(dd.from_pandas(pd.Series(["a", None, "b"]), npartitions=2))
    array([2])
    """
    frame, (markers, g) = _frame_of([series], groups)

    def kernel(part: pd.DataFrame) -> NDArray[np.int64]:
        codes = None if g is None else _local(g, part)
        return local_engine.present_counts(_local(markers[0], part), codes)

    result: NDArray[np.int64] = _compute(_reduce(frame, kernel, _sum_arrays))
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
    data, (_, g) = _frame_of([first], groups)

    def kernel(part: pd.DataFrame) -> NDArray[np.int64]:
        codes = None if g is None else _local(g, part)
        return local_engine.row_counts(codes, len(part))

    result: NDArray[np.int64] = _compute(_reduce(data, kernel, _sum_arrays))
    return result


def _sum_arrays(*parts: NDArray[np.int64]) -> NDArray[np.int64]:
    return sum(parts[1:], parts[0])


# ----------------------------------------------------------------------------- units, keys


def truncated(
    frame: Any,
    read: Sequence[Hashable],
    unit: Hashable,
    groups: PartitionGroups | None,
    truncate: Callable[[pd.DataFrame, Groups | None], Groups],
) -> PartitionGroups:
    """Group codes with each unit's rows above its bounds set to ``-1``, per partition.

    The engine shuffles the rows by ``unit`` first, so every unit's rows share one
    partition; there ``truncate`` (the pandas path's truncation with the key drawn
    on the client) keeps exactly the rows it keeps on the whole frame: the choice
    is a function of each unit's own rows.

    Parameters
    ----------
    frame : dask DataFrame
        The frame holding the released, group-by and unit columns.
    read : sequence of labels
        The columns the truncation reads (the group-by and unit columns included).
    unit : label
        The privacy unit's column.
    groups : PartitionGroups, optional
        The group codes before truncation (``None``: one group of all rows).
    truncate : callable
        ``truncate(part, codes) -> Groups`` on one partition's pandas frame (its
        columns ``read``) and its group codes. Picklable.

    Returns
    -------
    PartitionGroups

    Examples
    --------
    >>> import pandas as pd, dask.dataframe as dd
    >>> ddf = dd.from_pandas(pd.DataFrame({"pid": [1, 2, 1, 1]}), npartitions=2)
    >>> first = lambda part, codes: Groups((~part["pid"].duplicated()).to_numpy() - 1, 1)
    >>> row_counts(ddf, truncated(ddf, ["pid"], "pid", None, first)).tolist()
    [2]
    """
    read = list(read)
    if groups is not None:
        labels = [s.name for s in groups.columns]
        missing = [c for c in labels if c not in read]
        if missing:
            raise ValueError(f"the truncation must read the group-by columns {missing}")
    return PartitionGroups(
        [frame[c] for c in read],
        partial(_truncate_part, None if groups is None else groups.make, truncate),
        1 if groups is None else groups.size,
        shuffle_on=frame[unit],
    )


def _truncate_part(
    make: Callable[[pd.DataFrame], Groups] | None,
    truncate: Callable[[pd.DataFrame, Groups | None], Groups],
    part: pd.DataFrame,
) -> Groups:
    return truncate(part, None if make is None else make(part))


def observed_groups(column: Any, *, sort: bool = False) -> tuple[PartitionGroups, pd.Index]:
    """Private keys of a Dask column: the observed keys, and per-partition codes.

    One ``dask.compute`` gathers each partition's distinct keys in order of first
    appearance and merges them in partition order: the result is
    :func:`pandas_dp.engines.codes.observed_codes` of the whole column (same
    keys, same order, hence the same codes), whatever the partitioning. Each
    partition then numbers its own rows by these keys, so a key seen in only some
    partitions has one code everywhere.

    The keys are PRIVATE (see :func:`~pandas_dp.engines.codes.observed_codes`):
    only a differentially private selection may release any of them.

    Parameters
    ----------
    column : dask Series
        The key column.
    sort : bool, default False
        Sort the keys (when comparable), as ``observed_codes(sort=True)``.

    Returns
    -------
    groups : PartitionGroups
    uniques : pandas.Index

    Examples
    --------
    >>> import pandas as pd, dask.dataframe as dd
    >>> s = dd.from_pandas(pd.Series(["b", "a", None, "b", "c"]), npartitions=3)
    >>> g, keys = observed_groups(s)
    >>> list(keys), row_counts(s.to_frame(), g).tolist()
    (['b', 'a', 'c'], [2, 1, 1])
    """
    frame, (markers, _) = _frame_of([column], None)
    marker = markers[0]

    def kernel(part: pd.DataFrame) -> pd.Index:
        return local_codes.observed_codes(_local(marker, part), sort=False)[1]

    uniques: pd.Index = _compute(_reduce(frame, kernel, _first_seen))
    if sort:
        uniques = local_codes.observed_codes(pd.Series(uniques), sort=True)[1]
    label = column.name
    return PartitionGroups([column], partial(_observed_part, uniques, label), len(uniques)), uniques


def _first_seen(*parts: pd.Index) -> pd.Index:
    """Distinct keys of consecutive partitions, in order of first appearance."""
    found = [p for p in parts if len(p)] or [parts[0]]
    if len(found) == 1:
        return found[0]
    return local_codes.observed_codes(pd.Series(found[0].append(found[1:])), sort=False)[1]


def _observed_part(uniques: pd.Index, label: Hashable, part: pd.DataFrame) -> Groups:
    """One partition's rows numbered by the global keys (``-1``: missing key)."""
    local, found = local_codes.observed_codes(part[label], sort=False)
    if len(found) == 0:
        return Groups(np.full(len(part), -1, dtype=np.intp), len(uniques))
    if isinstance(found, pd.MultiIndex) or isinstance(uniques, pd.MultiIndex):
        # keys that are all tuples make a MultiIndex: look up tuples in tuples
        found, uniques = found.to_flat_index(), uniques.to_flat_index()
    position = np.append(np.asarray(uniques.get_indexer(found), dtype=np.intp), -1)
    return Groups(position[local.codes], len(uniques))


def observed_counts(
    groups: PartitionGroups,
    units: Any | None,
    *,
    local: Callable[[Groups, pd.Series | None], NDArray[np.int64]],
) -> NDArray[np.int64]:
    """Partition selection's exact counts per observed key, from every partition.

    Parameters
    ----------
    groups : PartitionGroups
        The observed keys' codes (truncated when there is a privacy unit; the rows
        are then shuffled by unit, so distinct units per partition add up).
    units : dask Series, optional
        The privacy unit's column (``None``: count rows).
    local : callable
        The pandas path, :func:`pandas_dp.measure.observed_counts`.

    Returns
    -------
    numpy.ndarray of int64
        One exact count per observed key.
    """
    cols = _Columns()
    g = _template(groups, cols)
    u = None if units is None else cols.marker(units)

    def kernel(part: pd.DataFrame) -> NDArray[np.int64]:
        codes = _local(g, part)
        return np.asarray(local(codes, None if u is None else _local(u, part)), dtype=np.int64)

    result: NDArray[np.int64] = _compute(_reduce(cols.frame(), kernel, _sum_arrays))
    return result
