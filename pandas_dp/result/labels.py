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

__all__ = ["cells_index", "labels_index", "safe_multiindex"]


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
