"""Measuring a plan: the engine's input, and the exact value of every measurement.

A :class:`~pandas_dp.plan.Plan` knows *what* to measure; this module asks the
engine (:mod:`pandas_dp.engines`) for it. :func:`engine_input` gathers what a
release reads -- its columns and declarations, the public row count, and each
row's group code (``-1`` for a row in no released group, or above a privacy
unit's contribution bounds after keyed-hash truncation) -- only when called,
after the budget is charged. :func:`exact_values` makes one engine call per
source (a column's moments, a block's products, a histogram, predicate counts,
row counts) and returns each measurement's exact vector, group after group:
counts as whole numbers, sums as exact :class:`~fractions.Fraction` values.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable, Hashable, Mapping, Sequence
from fractions import Fraction
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from pandas_dp import engines
from pandas_dp import estimators as est
from pandas_dp.grouping import Grouping

if TYPE_CHECKING:
    from pandas_dp.plan import Measurement
    from pandas_dp.settings import Settings

__all__ = [
    "engine_input",
    "exact_values",
    "kept_groups",
    "observed_counts",
    "recentred_values",
    "series_data",
]


def exact_values(measurements: Any, data: Mapping[Any, Any]) -> dict[str, NDArray[Any]]:
    """One engine call per source; each measurement's exact vector (group after group).

    Counts come as float vectors of whole numbers; real-valued sums as object
    vectors of exact :class:`~fractions.Fraction` values. Dask data (its columns
    Dask Series) goes to :mod:`pandas_dp.engines.dask`, which runs this very
    function on each partition and adds the partitions' exact values.
    """
    if "dask" in sys.modules and any(_is_dask(v) for v in data.values()):
        from pandas_dp.engines import dask as dask_engine

        return dask_engine.exact_values(measurements, data, local=exact_values)
    by_source: dict[tuple[Any, ...], list[Measurement]] = {}
    for m in measurements:
        by_source.setdefault(m.source, []).append(m)
    groups: engines.Groups | None = data.get("groups")
    out: dict[str, NDArray[Any]] = {}
    for source, group in by_source.items():
        kind = source[0]
        if kind == "moments":
            _moment_values(source[1], group, data, groups, out)
        elif kind == "products":
            _product_values(source[1], group, data, groups, out)
        elif kind in ("categories", "grid"):  # counts over public buckets or grid nodes
            made = data[(kind, source[1])]
            counts = made(groups) if callable(made) else made
            for m in group:
                out[m.key] = np.asarray(counts, dtype=np.float64).reshape(-1)
        elif kind == "masks":
            masks = _get(data, "masks")
            if groups is not None:  # truncated rows: no longer there
                keep = groups.codes >= 0
                masks = [mask[keep] for mask in masks]
            counts = engines.mask_counts(masks).astype(np.float64).reshape(-1)
            for m in group:
                out[m.key] = counts
        else:  # rows
            rows = engines.row_counts(groups, int(data["rows"])).astype(np.float64)
            for m in group:
                out[m.key] = rows.reshape(-1)
    return out


def _midpoint(decl: Any) -> Fraction:
    """The declared bounds' midpoint, exactly."""
    return _mid(decl.lower, decl.upper)


@functools.lru_cache(maxsize=256)
def _mid(lower: float, upper: float) -> Fraction:
    """``a + (b - a) / 2`` exactly, ``b - a`` the double the engine centres with."""
    return Fraction(lower) + Fraction(upper - lower) / 2


#: Where Dask collections (and this package's Dask wrappers) are defined.
_DASK_MODULES = ("pandas_dp.engines.dask", "pandas_dp.engines._dask_", "dask.")


def _is_dask(obj: object) -> bool:
    """A Dask collection (checked without importing Dask; none exists before Dask
    has been imported, which ``"dask" in sys.modules`` tells at once)."""
    return type(obj).__module__.startswith(_DASK_MODULES)


def _get(data: Mapping[Any, Any], key: Any) -> Any:
    """An engine input; a callable is read only now, after the charge."""
    value = data[key]
    return value() if callable(value) else value


def _moment_values(
    column: Hashable,
    group: list[Measurement],
    data: Mapping[Any, Any],
    groups: engines.Groups | None,
    out: dict[str, NDArray[Any]],
) -> None:
    series = data[column]
    wanted = {m.statistic for m in group}
    if wanted == {"count"}:  # any dtype: the non-missing count alone
        counts = engines.present_counts(series, groups).astype(np.float64)
        for m in group:
            out[m.key] = counts
        return
    decl = data[("decl", column)]
    sums = engines.moments(
        series,
        decl.lower,
        decl.upper,
        squares=bool(wanted & {"centred_squares", "var_direct"}),
        groups=groups,
    )
    count = np.asarray(sums.count)
    total = list(sums.total_exact)
    squares = list(sums.squares_exact) if wanted & {"centred_squares", "var_direct"} else []
    for m in group:
        if m.statistic == "count":
            out[m.key] = count.astype(np.float64)
            continue
        values: list[Fraction]
        if m.statistic == "centred_sum":
            values = total
        elif m.statistic == "centred_squares":
            values = squares
        elif m.statistic == "sum":
            mid = _midpoint(decl)
            values = [t + mid * int(c) for t, c in zip(total, count, strict=True)]
        elif m.statistic == "bound_sums":  # (Σ (x - a), Σ (b - x)), group after group
            values = _bound_sums(total, count, decl.lower, decl.upper)
        elif m.statistic == "mean_direct":  # n public: a missing value counts as the midpoint
            n = int(data["rows"])
            values = [_midpoint(decl) + total[0] / n]
        else:  # var_direct, ddof = 1, missing values at the midpoint
            n = int(data["rows"])
            values = [(squares[0] - total[0] * total[0] / n) / (n - 1)]
        out[m.key] = _objects(values)


def _bound_sums(
    total: Sequence[Fraction], count: NDArray[Any], lower: float, upper: float
) -> list[Fraction]:
    """``(S + N (m - a), N (b - m) - S)`` per group, ``S`` the exact centred sum and
    ``N`` the count (``m`` the engine's midpoint), in integers over one denominator."""
    (b_p, b_q), (a_p, a_q) = _offsets(lower, upper)
    out = []
    for t, c in zip(total, count.tolist(), strict=True):
        t_p, t_q = t.numerator, t.denominator
        n = int(c)
        out.append(Fraction(t_p * b_q + n * b_p * t_q, t_q * b_q))
        out.append(Fraction(n * a_p * t_q - t_p * a_q, t_q * a_q))
    return out


@functools.lru_cache(maxsize=256)
def _offsets(lower: float, upper: float) -> tuple[tuple[int, int], tuple[int, int]]:
    """``m - a`` and ``b - m`` (``m`` the engine's midpoint) as integer ratios."""
    mid = _mid(lower, upper)
    return (mid - Fraction(lower)).as_integer_ratio(), (Fraction(upper) - mid).as_integer_ratio()


def recentred_values(
    m: Measurement,
    exact: Mapping[str, NDArray[Any]],
    released: Mapping[str, NDArray[Any]],
    variances: tuple[float, float],
) -> NDArray[Any]:
    """The exact recentred sums ``(S - (c - m) N) / h(c)`` of a ``("recentred", ...)``
    measurement, one per group, from the exact count ``N`` and centred sum ``S`` and
    the centre ``c`` their released values give (:func:`~pandas_dp.estimators.recentre`;
    ``variances``: of the count's and the sum's noise, public).

    ``c`` is post-processing of released values, so whatever the data, every row
    adds to the sum a value of ``[-1, 1]`` (plus the rounding allowance): the
    measurement's sensitivity, fixed before the data were read.
    """
    _, _, count_key, sum_key, a, b = m.source
    w_p, w_q = (b - a).as_integer_ratio()  # the engine's midpoint is a + (b - a) / 2
    a_p, a_q = a.as_integer_ratio()
    b_p, b_q = b.as_integer_ratio()
    base = math.lcm(a_q, b_q, 2 * w_q)  # binary fractions: the largest denominator
    out = np.empty(len(exact[sum_key]), dtype=object)
    for i, (n, total, c, s) in enumerate(
        zip(
            exact[count_key].tolist(),
            exact[sum_key],
            released[count_key].tolist(),
            released[sum_key].tolist(),
            strict=True,
        )
    ):
        c_p, c_q = est.recentre(c, s, variances, a, b).as_integer_ratio()
        t_p, t_q = total.as_integer_ratio()
        scale = math.lcm(base, c_q, t_q)
        # in integers over the common denominator, T = (S - (c - m) n) / h is one
        # quotient of integers (m = a + half)
        ia, ib, ic = a_p * (scale // a_q), b_p * (scale // b_q), c_p * (scale // c_q)
        ihalf = w_p * (scale // (2 * w_q))
        numerator = t_p * (scale // t_q) - (ic - ia - ihalf) * int(n)
        reach = max(ic - ia, ib - ic)  # 0 only for one-point bounds: every value is the point
        out[i] = Fraction(numerator, reach) if reach else Fraction(0)
    return out


def _objects(values: Sequence[Fraction]) -> NDArray[Any]:
    arr = np.empty(len(values), dtype=object)
    arr[:] = list(values)
    return arr


def _product_values(
    columns: tuple[Hashable, ...],
    group: list[Measurement],
    data: Mapping[Any, Any],
    groups: engines.Groups | None,
    out: dict[str, NDArray[Any]],
) -> None:
    decls = [data[("decl", c)] for c in columns]
    series = [data[c] for c in columns]
    if groups is not None:  # truncated rows: no longer there
        keep = groups.codes >= 0
        series = [x[keep] for x in series]
    sums = engines.products(series, [d.lower for d in decls], [d.upper for d in decls])
    s, prods = sums.exact()
    p = len(columns)
    count = float(np.asarray(sums.count).reshape(-1)[0])
    for m in group:
        if m.statistic == "count":
            out[m.key] = np.array([count])
        elif m.statistic == "centred_sum":
            out[m.key] = _objects([s[m.index]])
        else:
            i, j = divmod(m.index, p)
            out[m.key] = _objects([prods[(min(i, j), max(i, j))]])


def engine_input(
    columns: Mapping[Hashable, pd.Series],
    decls: Mapping[Hashable, Any],
    settings: Settings,
    grouping: Grouping | None = None,
    frame: pd.DataFrame | None = None,
    sources: Mapping[Any, Any] | None = None,
) -> Callable[[], dict[Any, Any]]:
    """The engine's input, built only when called (after the charge).

    It holds each column and its declaration, the public row count, and the rows'
    group codes (``"groups"``): the declared key of each row's group (``-1`` for a
    row in no released group), with the rows above a privacy unit's contribution
    bounds also set to ``-1`` by keyed-hash truncation (REFERENCE.md §9).
    ``sources`` adds the readers of other measurement sources, e.g.
    ``{("categories", column): reader}`` (a reader is called with the group codes).
    """

    def build() -> dict[Any, Any]:
        data = series_data(columns, decls)
        data["rows"] = settings.rows
        groups = None
        if grouping is not None and grouping.private:
            assert frame is not None
            # unsorted: the plan sorts the keys it keeps (and only those)
            groups, data["keys"] = _observed_codes(frame[grouping.by[0]])
        elif grouping is not None:
            groups = _group_codes(grouping, frame)
        unit = settings.contributions.unit
        if unit is not None:
            assert frame is not None
            groups = _truncated(columns, settings, grouping, frame, groups)
            data["units"] = frame[unit]
        data["groups"] = groups
        if _is_dask(frame):  # the Dask engine reads the row counts from its partitions
            data["frame"] = frame
        data.update(sources or {})
        return data

    return build


def _group_codes(grouping: Grouping, frame: pd.DataFrame | None) -> engines.Groups:
    """Each row's position among the declared keys (``other`` last; ``-1``: dropped).

    On a Dask frame the codes are computed inside each partition, by this function.
    """
    assert frame is not None
    if _is_dask(frame):
        from pandas_dp.engines import dask as dask_engine

        return dask_engine.PartitionGroups(  # type: ignore[return-value]
            [frame[c] for c in grouping.by], partial(_group_codes, grouping), grouping.size
        )
    product = engines.group_codes(
        [frame[c] for c in grouping.by], grouping.levels, other=grouping.other is not None
    )
    if grouping.positions is None:
        return engines.Groups(product.codes, grouping.size)
    codes = product.codes
    top = len(grouping.positions)
    declared = (codes >= 0) & (codes < top)
    mapped = np.full(codes.shape, -1, dtype=np.intp)
    mapped[declared] = grouping.positions[codes[declared]]
    if grouping.other is not None:
        assert grouping.keys is not None
        mapped[(codes == top) | (declared & (mapped < 0))] = len(grouping.keys)
    return engines.Groups(mapped, grouping.size)


def _observed_codes(column: pd.Series) -> tuple[engines.Groups, pd.Index]:
    """Private keys: each row's observed key, numbered in order of first appearance.

    On Dask the keys are gathered from the partitions (one ``compute``) and every
    partition numbers its rows by them, so a key has one code everywhere.
    """
    if _is_dask(column):
        from pandas_dp.engines import dask as dask_engine

        return dask_engine.observed_groups(column, sort=False)  # type: ignore[return-value]
    return engines.observed_codes(column, sort=False)


def observed_counts(groups: engines.Groups, units: pd.Series | None) -> NDArray[np.int64]:
    """Partition selection's exact counts: rows, or distinct units, per observed key.

    Dask input goes to :mod:`pandas_dp.engines.dask`, which runs this function on
    each partition (each unit's rows in one partition) and adds the counts.
    """
    if not isinstance(groups, engines.Groups):
        from pandas_dp.engines import dask as dask_engine

        return dask_engine.observed_counts(groups, units, local=observed_counts)
    if units is None:
        return engines.row_counts(groups, int(groups.codes.shape[0]))
    from pandas_dp.engines import units as unit_engine

    return unit_engine.distinct_units(units, groups.codes, groups.size)


def kept_groups(groups: engines.Groups, position: NDArray[np.intp], size: int) -> engines.Groups:
    """Group codes renumbered by ``position`` (whose last entry, for code -1, is -1)."""
    if not isinstance(groups, engines.Groups):  # Dask: each partition renumbers its rows
        return groups.renumbered(position, size)  # type: ignore[no-any-return]
    return engines.Groups(position[groups.codes], size)


def _truncated(
    columns: Mapping[Hashable, pd.Series],
    settings: Settings,
    grouping: Grouping | None,
    frame: pd.DataFrame | None,
    groups: engines.Groups | None,
) -> engines.Groups:
    """Group codes with the rows above the contribution bounds set to ``-1``.

    The hash key is drawn here, once. On Dask each partition truncates its own rows
    with that key, after the engine has shuffled the rows by unit.
    """
    from pandas_dp.engines import units

    assert frame is not None
    c = settings.contributions
    read = list(dict.fromkeys([*columns, *(grouping.by if grouping else ()), c.unit]))
    # private keys are numbered by first appearance: rank their groups by value
    by = list(grouping.by) if grouping is not None and grouping.private else []
    truncate = partial(_truncate, read, by, c, units.hash_key(settings.source))
    if _is_dask(frame):
        from pandas_dp.engines import dask as dask_engine

        return dask_engine.truncated(frame, read, c.unit, groups, truncate)  # type: ignore[arg-type,return-value]
    return truncate(frame, groups)


def _truncate(
    read: list[Hashable],
    by: list[Hashable],
    c: Any,
    key: str,
    frame: pd.DataFrame,
    groups: engines.Groups | None,
) -> engines.Groups:
    from pandas_dp.engines import units

    mask = units.contribution_mask(
        frame[read],
        frame[c.unit],
        key=key,
        max_rows_per_unit=c.rows,
        groups=None if groups is None else groups.codes,
        group_by=by,
        # a bound of k or more is implied by max_rows_per_unit: no ranking for it
        max_groups_per_unit=c.groups if groups is not None and c.groups < c.rows else None,
        max_rows_per_group=(
            c.rows_per_group if groups is not None and c.rows_per_group < c.rows else None
        ),
    )
    if groups is None:
        return engines.Groups(np.where(mask, 0, -1).astype(np.intp), 1)
    return engines.Groups(np.where(mask, groups.codes, -1).astype(np.intp), groups.size)


def series_data(
    columns: Mapping[Hashable, pd.Series], decls: Mapping[Hashable, Any]
) -> dict[Any, Any]:
    """The engine's input for numeric columns: each Series and its declaration."""
    data: dict[Any, Any] = dict(columns)
    data.update({("decl", c): d for c, d in decls.items()})
    return data
