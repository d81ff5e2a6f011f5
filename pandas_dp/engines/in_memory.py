"""The in-memory engine: a plan's exact values from pandas objects, with numpy.

:class:`PandasEngine` implements :class:`~pandas_dp.engines.protocol.Engine` for
pandas (and anything not registered for another engine). :func:`exact_values`
makes one kernel call per source -- a column's moments
(:mod:`~pandas_dp.engines.sums`), a block's cross-products, category or grid
counts, predicate counts, row counts -- and returns each measurement's exact
vector, group after group: counts as whole numbers, sums as exact
:class:`~fractions.Fraction` values. The Dask engine runs this same function on
each partition.

Examples
--------
>>> import pandas as pd
>>> from types import SimpleNamespace as NS
>>> m = NS(key="x: count", statistic="count", source=Source("moments", "x"), index=0)
>>> PANDAS.exact_values([m], EngineInput(columns={"x": pd.Series([1.0, None, 3.0])}))
{'x: count': array([2.])}
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any, TypeVar

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from pandas_dp.engines import units as unit_engine
from pandas_dp.engines.codes import category_counts, mask_counts, observed_codes
from pandas_dp.engines.grid import grid_counts
from pandas_dp.engines.inputs import EngineInput
from pandas_dp.engines.pandas import Groups, present_counts, row_counts
from pandas_dp.engines.powers import power_sums
from pandas_dp.engines.protocol import Kernels, MeasurementLike, Source
from pandas_dp.engines.sums import moments, products

__all__ = ["PANDAS", "PandasEngine", "exact_values", "own_kernels"]


def exact_values(
    measurements: Iterable[MeasurementLike],
    data: EngineInput,
    kernels: Kernels | None = None,
) -> dict[str, NDArray[Any]]:
    """One kernel call per source; each measurement's exact vector (group after group).

    Counts come as float vectors of whole numbers; real-valued sums as object
    vectors of exact :class:`~fractions.Fraction` values. ``kernels``: the
    in-memory engine's (default) or another set with the same signatures (the
    reference engine's). The Dask engine runs this very function on each
    partition and adds the partitions' values.
    """
    k: Kernels = PANDAS if kernels is None else kernels
    by_source: dict[Source, list[MeasurementLike]] = {}
    for m in measurements:
        by_source.setdefault(m.source, []).append(m)
    groups: Groups | None = data.groups
    out: dict[str, NDArray[Any]] = {}
    for source, group in by_source.items():
        kind = source.kind
        if kind == "moments":
            _moment_values(source.column, group, data, out, k)
        elif kind == "products":
            _product_values(source.column, group, data, out, k)
        elif kind in ("categories", "grid"):  # counts over public buckets or grid nodes
            made = data.readers[(kind, source.column)]
            counts = made(groups, kernels=k) if callable(made) else made
            for m in group:
                out[m.key] = np.asarray(counts, dtype=np.float64).reshape(-1)
        elif kind == "masks":
            masks = data.masks() if callable(data.masks) else data.masks
            if groups is not None:  # truncated rows: no longer there
                keep = groups.codes >= 0
                masks = [mask[keep] for mask in masks]
            counts = k.mask_counts(masks).astype(np.float64).reshape(-1)
            for m in group:
                out[m.key] = counts
        else:  # rows
            rows = k.row_counts(groups, _rows(data)).astype(np.float64)
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


def _rows(data: EngineInput) -> int:
    """The declared row count (a release that reads it must be given one)."""
    if data.rows is None:
        raise ValueError(
            "this measurement reads the row count, and the engine input has none: "
            "build it with engine_input(), which records the frame's length"
        )
    return int(data.rows)


def _moment_values(
    column: Hashable,
    group: list[MeasurementLike],
    data: EngineInput,
    out: dict[str, NDArray[Any]],
    k: Kernels,
) -> None:
    """Measure ``group``, the measurements of one column's moments, into ``out``."""
    series, groups = data.columns[column], data.groups
    wanted = {m.statistic for m in group}
    if wanted == {"count"}:  # any dtype: the non-missing count alone
        counts = k.present_counts(series, groups).astype(np.float64)
        for m in group:
            out[m.key] = counts
        return
    decl = data.declaration(column)
    sums = k.moments(
        series,
        decl.lower,
        decl.upper,
        squares=bool(wanted & {"centred_squares", "var_direct"}),
        groups=groups,
    )
    count = np.asarray(sums.count)
    total = list(sums.total_exact)
    squares = list(sums.squares_exact) if wanted & {"centred_squares", "var_direct"} else []
    if "centred_cubes" in wanted:
        cubes = k.power_sums(series, decl.lower, decl.upper, 3, groups=groups).exact
    for m in group:
        if m.statistic == "count":
            out[m.key] = count.astype(np.float64)
            continue
        values: list[Fraction]
        if m.statistic == "centred_sum":
            values = total
        elif m.statistic == "centred_squares":
            values = squares
        elif m.statistic == "centred_cubes":
            values = cubes
        elif m.statistic == "sum":
            mid = _midpoint(decl)
            values = [t + mid * int(c) for t, c in zip(total, count, strict=True)]
        elif m.statistic == "bound_sums":  # (Σ (x - a), Σ (b - x)), group after group
            values = _bound_sums(total, count, decl.lower, decl.upper)
        elif m.statistic == "mean_direct":  # n public: a missing value counts as the midpoint
            n = _rows(data)
            values = [_midpoint(decl) + total[0] / n]
        else:  # var_direct, ddof = 1, missing values at the midpoint
            n = _rows(data)
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


def _objects(values: Sequence[Fraction]) -> NDArray[Any]:
    arr = np.empty(len(values), dtype=object)
    arr[:] = list(values)
    return arr


def _product_values(
    columns: tuple[Hashable, ...],
    group: list[MeasurementLike],
    data: EngineInput,
    out: dict[str, NDArray[Any]],
    k: Kernels,
) -> None:
    """Measure ``group``, the measurements of the products of ``columns``, into ``out``."""
    decls = [data.declaration(c) for c in columns]
    series = [data.columns[c] for c in columns]
    groups = data.groups
    if groups is not None:  # truncated rows: no longer there
        keep = groups.codes >= 0
        series = [x[keep] for x in series]
    sums = k.products(series, [d.lower for d in decls], [d.upper for d in decls])
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


class PandasEngine:
    """The in-memory engine: the kernels run at once on the whole pandas object.

    Its kernels (:class:`~pandas_dp.engines.protocol.Kernels`, and the counting of
    private keys) are those of :mod:`~pandas_dp.engines.sums`,
    :mod:`~pandas_dp.engines.codes`, :mod:`~pandas_dp.engines.grid`,
    :mod:`~pandas_dp.engines.units` and :mod:`~pandas_dp.engines.pandas`; another
    engine over in-memory columns replaces them (the reference engine does).
    """

    name = "pandas"
    row_counts = staticmethod(row_counts)
    present_counts = staticmethod(present_counts)
    mask_counts = staticmethod(mask_counts)
    moments = staticmethod(moments)
    power_sums = staticmethod(power_sums)
    products = staticmethod(products)
    grid_counts = staticmethod(grid_counts)
    category_counts = staticmethod(category_counts)
    observed_codes = staticmethod(observed_codes)
    distinct_units = staticmethod(unit_engine.distinct_units)

    def exact_values(
        self, measurements: Iterable[MeasurementLike], data: EngineInput
    ) -> dict[str, NDArray[Any]]:
        """See :meth:`pandas_dp.engines.protocol.Engine.exact_values`."""
        return exact_values(measurements, data, self)

    def groups(
        self,
        frame: Any,
        by: Sequence[Hashable],
        codes: Callable[[pd.DataFrame], Groups],
        size: int,
    ) -> Groups:
        """See :meth:`pandas_dp.engines.protocol.Engine.groups`."""
        return codes(frame)

    def observed_groups(self, column: Any) -> tuple[Groups, pd.Index]:
        """See :meth:`pandas_dp.engines.protocol.Engine.observed_groups`."""
        return self.observed_codes(column, sort=False)

    def observed_counts(self, groups: Groups, units: Any | None) -> NDArray[np.int64]:
        """See :meth:`pandas_dp.engines.protocol.Engine.observed_counts`."""
        if units is None:
            return self.row_counts(groups, int(groups.codes.shape[0]))
        return self.distinct_units(units, groups.codes, groups.size)

    def kept_groups(self, groups: Groups, position: NDArray[np.intp], size: int) -> Groups:
        """See :meth:`pandas_dp.engines.protocol.Engine.kept_groups`."""
        return Groups(position[groups.codes], size)

    def truncated(
        self,
        frame: Any,
        read: list[Hashable],
        unit: Hashable,
        groups: Groups | None,
        truncate: Callable[[pd.DataFrame, Groups | None], Groups],
    ) -> Groups:
        """See :meth:`pandas_dp.engines.protocol.Engine.truncated`."""
        return truncate(frame, groups)


#: The in-memory engine (stateless: one is enough).
PANDAS = PandasEngine()

_E = TypeVar("_E", bound=type[PandasEngine])


def own_kernels(namespace: Mapping[str, Any]) -> Callable[[_E], _E]:
    """A class decorator for a subclass of :class:`PandasEngine` that brings its own
    kernels: every kernel of :class:`PandasEngine` (its static methods) replaced by
    the function of the same name in ``namespace`` (the kernels' module's
    ``globals()``).

    Parameters
    ----------
    namespace : mapping str -> callable
        Where to find the kernels; each of :class:`PandasEngine`'s must be there.

    Returns
    -------
    callable
        The decorator; it raises ``KeyError`` naming a kernel ``namespace`` lacks.
    """

    def stamp(cls: _E) -> _E:
        for name, value in vars(PandasEngine).items():
            if isinstance(value, staticmethod):
                setattr(cls, name, staticmethod(namespace[name]))
        return cls

    return stamp
