"""Index labels of a release, built whatever the labels' objects do.

The labels of a release with private keys are the data's own objects; pandas
compares and hashes them when it builds an index, and a comparison may raise
anything. These builders fall back to an unsorted, unchecked index instead, so a
release never raises after the charge because of a key's type.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["VALUE_ROWS", "cells_index", "labels_index", "like_frame_columns", "safe_multiindex"]

#: The frame methods whose row index holds a column's values, not column labels.
VALUE_ROWS = frozenset({"value_counts", "proportions", "counts", "len"})


def safe_multiindex(arrays: Sequence[Any], names: list[Hashable] | None = None) -> pd.Index:
    """``pd.MultiIndex.from_arrays(arrays, names=names)``, whatever the labels do.

    The labels of a release with private keys are the data's own objects, and
    pandas sorts each level by comparing them: a comparison that raises anything
    but ``TypeError`` escapes it. Then each level is factorized here without
    sorting (in order of first appearance, which for released keys is their
    release order) and the index is built from the codes, unchecked.

    Examples
    --------
    >>> safe_multiindex([["b", "a"], [1, 2]], names=["k", "c"]).tolist()
    [('b', 1), ('a', 2)]
    """
    try:
        built: pd.Index = pd.MultiIndex.from_arrays(list(arrays), names=names)
        return built
    except Exception:
        from pandas_dp.engines.codes import factorize_safely

        levels: list[Any] = []
        codes: list[Any] = []
        for values in arrays:
            try:
                code, uniques = pd.factorize(values, sort=False)
                level = pd.Index(uniques)
            except Exception:
                code, found = factorize_safely(list(values))
                level = pd.Index(found, dtype=object, tupleize_cols=False)
            levels.append(level)
            codes.append(code)
        return pd.MultiIndex(levels=levels, codes=codes, names=names, verify_integrity=False)


def labels_index(labels: Sequence[Any] | pd.Index) -> pd.Index:
    """``pd.Index(labels)`` (tuples: a MultiIndex), whatever the labels do
    (:func:`safe_multiindex`).

    Examples
    --------
    >>> labels_index([("a", 1), ("b", 2)]).nlevels
    2
    """
    try:
        index: pd.Index = pd.Index(labels)
        return index
    except Exception:
        listed = list(labels)
        width = {len(t) if isinstance(t, tuple) else -1 for t in listed}
        if len(width) == 1 and min(width) > 0:
            return safe_multiindex([[t[i] for t in listed] for i in range(min(width))])
        return pd.Index(listed, dtype=object, tupleize_cols=False)


def cells_index(
    keys: pd.Index, inner: Sequence[Any] | pd.Index, names: Sequence[Hashable]
) -> pd.Index:
    """(key..., label) for every key and every inner label, key after key.

    The index of a grouped release with several entries per key (a grouped
    ``value_counts``, a grouped quantile of several ``q``): its key levels keep the
    released keys' dtypes (``Int64``, categorical ...) as pandas' group-by keeps
    them, and its last level is ``inner`` as given (a typed array or Index keeps its
    dtype). Labels whose comparison raises give an unsorted index
    (:func:`safe_multiindex`).

    Parameters
    ----------
    keys : pandas.Index
        The released keys (a MultiIndex for several key columns).
    inner : sequence or pandas.Index
        The labels within each key (categories, quantiles).
    names : sequence of hashable
        The levels' names: the keys', then the inner level's.

    Returns
    -------
    pandas.MultiIndex

    Examples
    --------
    >>> keys = pd.Index([3, 1], dtype="Int64", name="k")
    >>> cells = cells_index(keys, [0.25, 0.75], ["k", None])
    >>> cells.tolist(), str(cells.levels[0].dtype)
    ([(3, 0.25), (3, 0.75), (1, 0.25), (1, 0.75)], 'Int64')
    """
    k = len(inner)
    repeated = keys.repeat(k)
    levels = [repeated.get_level_values(i) for i in range(keys.nlevels)]
    try:
        labels: Any = pd.Index(inner, tupleize_cols=False)
    except Exception:  # labels pandas cannot hold in one typed Index: as objects
        labels = pd.Index(list(inner), dtype=object, tupleize_cols=False)
    tiled = labels.take(np.tile(np.arange(k), len(keys)))
    try:
        built: pd.Index = pd.MultiIndex.from_arrays([*levels, tiled], names=list(names))
        return built
    except Exception:  # private keys whose comparison raises: levels left unsorted
        return safe_multiindex([*levels, tiled], names=list(names))


def _labelled(axis: pd.Index, columns: pd.Index, along: str) -> pd.Index | None:
    """``axis`` with the frame's column structure, or ``None`` to keep it.

    An axis whose entries are all column labels of the frame takes the frame's
    structure: a flat Index of tuples where the frame's columns are one, the
    frame's level names where they are a MultiIndex. An axis of (column label,
    statistic) pairs over MultiIndex columns (grouped ``agg`` and ``describe``)
    becomes one level per column level and the statistic's, as pandas gives it.
    """
    known = set(columns)
    entries = list(axis)
    if columns.nlevels == 1:
        if axis.nlevels > 1 and all(label in known for label in entries):
            return pd.Index(entries, dtype=object, tupleize_cols=False)
        return None
    names = list(columns.names)
    if all(label in known for label in entries):
        if axis.nlevels == columns.nlevels and all(n is None for n in axis.names):
            return axis.set_names(names)
        if axis.nlevels == 1 and along == "columns":  # (a Series of labels stays flat)
            return pd.MultiIndex.from_tuples(entries, names=names)
        return None
    if axis.nlevels == 2 and all(
        isinstance(outer, tuple) and outer in known for outer, _ in entries
    ):
        return pd.MultiIndex.from_tuples(
            [(*outer, inner) for outer, inner in entries], names=[*names, axis.names[1]]
        )
    return None


def like_frame_columns(release: Any, columns: pd.Index, *, rows: bool = True) -> Any:
    """``release`` with its column-label axes shaped like the frame's columns.

    pandas keeps a frame's column structure on the axes of a reduction that carry
    column labels: an Index of tuples stays flat and the level names of MultiIndex
    columns are kept. Releases build their label axes from the labels alone, so a
    tuple becomes a MultiIndex and the level names are lost; this puts the frame's
    structure back (in place, keeping the release's record). Only the column
    labels are read (public); a row index of keys or of a column's values (a
    group-by, ``value_counts``) is left alone. An axis that is not made of column
    labels, or whose labels do not compare, is kept as it is.

    Parameters
    ----------
    release : object
        A release; anything but a Series or DataFrame is returned as it is.
    columns : pandas.Index
        The columns of the frame the release read.
    rows : bool, default True
        The release's row index may hold column labels (``False`` for a group-by's
        keys or a column's values).

    Returns
    -------
    object
        ``release``, its axes relabelled where the frame's structure differs.

    Examples
    --------
    >>> columns = pd.Index([("v", "a"), ("v", "b")], tupleize_cols=False)
    >>> out = pd.Series([1.0, 2.0], index=pd.Index([("v", "a"), ("v", "b")]))
    >>> like_frame_columns(out, columns).index.nlevels
    1
    """
    if columns.nlevels == 1 and not any(isinstance(c, tuple) for c in columns):
        return release  # plain labels: every builder keeps them as they are
    axes = ["index", "columns"] if rows else ["columns"]
    for name in axes:
        axis = getattr(release, name, None)
        if not isinstance(axis, pd.Index) or len(axis) == 0:
            continue
        try:
            shaped = _labelled(axis, columns, name)
        except Exception:  # labels that do not hash or compare: kept as released
            shaped = None
        if shaped is not None:
            setattr(release, name, shaped)
    return release
