"""Index labels of a release, built whatever the labels' objects do.

The labels of a release with private keys are the data's own objects; pandas
compares and hashes them when it builds an index, and a comparison may raise
anything. These builders fall back to an unsorted, unchecked index instead, so a
release never raises after the charge because of a key's type.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import pandas as pd

__all__ = ["labels_index", "safe_multiindex"]


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
