"""Privacy units and private keys on Dask: truncation per unit, observed keys, their counts.

Part of the Dask engine (:mod:`pandas_dp.engines.dask` re-exports these functions).
A privacy unit's rows are first shuffled into one partition
(:attr:`PartitionGroups.shuffle_on`), where the pandas path's keyed-hash truncation
keeps exactly the rows it keeps on the whole frame (:func:`truncated`). Private
keys are gathered from the partitions in order of first appearance
(:func:`observed_groups`) and counted per key (:func:`observed_counts`) for
partition selection; these keys and counts are private until the selection
releases some of them.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from pandas_dp.engines import codes as local_codes
from pandas_dp.engines.dask.partitions import (
    PartitionGroups,
    _Columns,
    _frame_of,
    _local,
    _run,
    _sum_arrays,
    _template,
)
from pandas_dp.engines.pandas import Groups

__all__ = ["observed_counts", "observed_groups", "truncated"]


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
    >>> from pandas_dp.engines.dask import row_counts
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
    >>> from pandas_dp.engines.dask import row_counts
    >>> s = dd.from_pandas(pd.Series(["b", "a", None, "b", "c"]), npartitions=3)
    >>> g, keys = observed_groups(s)
    >>> list(keys), row_counts(s.to_frame(), g).tolist()
    (['b', 'a', 'c'], [2, 1, 1])
    """
    cols, (markers, _) = _frame_of([column], None)
    marker = markers[0]

    def kernel(part: pd.DataFrame) -> pd.Index:
        return local_codes.observed_codes(_local(marker, part), sort=False)[1]

    uniques: pd.Index = _run(cols, kernel, _first_seen)
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
        The pandas path, :meth:`pandas_dp.engines.in_memory.PandasEngine.observed_counts`.

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

    result: NDArray[np.int64] = _run(cols, kernel, _sum_arrays)
    return result
