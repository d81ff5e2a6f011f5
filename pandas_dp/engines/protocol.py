"""The engine protocol: what an engine does for a plan, and nothing else.

An engine computes *exact* sufficient statistics of the data it is given and never
draws noise, never charges a budget, never estimates (DESIGN.md, "Architecture").
The plan (:mod:`pandas_dp.plan`) asks :func:`~pandas_dp.engines.registry.engine_for`
for the engine of its data and calls the methods below; the in-memory engine
(:class:`~pandas_dp.engines.in_memory.PandasEngine`) runs the kernels on pandas
objects at once, the Dask engine (:class:`~pandas_dp.engines.dask.DaskEngine`) runs
the same kernels on each partition and adds their exact integers, so both give the
same values whatever the partitioning.

The functions an engine is handed (``codes``, ``truncate``) are the plan's
*row-local* rules -- which declared key a row belongs to, which rows a privacy unit
keeps -- written for one pandas frame; an engine decides where they run.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from pandas_dp.engines.codes import CategoryCounts
from pandas_dp.engines.inputs import EngineInput
from pandas_dp.engines.pandas import Groups

__all__ = ["SOURCE_KINDS", "Engine", "Kernels", "MeasurementLike", "Source"]

#: Where a measurement's exact value comes from. An engine reads the first six from
#: the data; the plan computes the rest from other measurements: ``"derived"`` by a
#: selection, ``"recentred"`` after the noise of the two it is centred by, and
#: ``"selection"`` is partition selection's own measurement.
SOURCE_KINDS = (
    "moments",
    "products",
    "categories",
    "grid",
    "masks",
    "rows",
    "derived",
    "recentred",
    "selection",
)


class Source(NamedTuple):
    """What an engine reads for a measurement (public, hashable: measurements with
    one source are read in one pass).

    Attributes
    ----------
    kind : str
        One of :data:`SOURCE_KINDS`.
    column : hashable or tuple, optional
        The column (``"moments"``, ``"categories"``, ``"grid"``, ``"derived"``,
        ``"recentred"``) or the columns (``"products"``); ``None`` for the rows and
        the masks.
    detail : tuple
        ``"recentred"``: ``(count_key, sum_key, lower, upper)``, the measurements it
        is centred by and the declared bounds; else empty.

    Examples
    --------
    >>> Source("moments", "age")
    Source(kind='moments', column='age', detail=())
    >>> Source("moments", "age").kind
    'moments'
    """

    kind: str
    column: Any = None
    detail: tuple[Any, ...] = ()


class MeasurementLike(Protocol):
    """What an engine reads of a plan's measurement (:class:`pandas_dp.plan.Measurement`):
    its key, the sufficient statistic, its :class:`Source` and, for products, its
    entry."""

    @property
    def key(self) -> str: ...

    @property
    def statistic(self) -> str: ...

    @property
    def source(self) -> Source: ...

    @property
    def index(self) -> int: ...


class Kernels(Protocol):
    """The exact sufficient statistics of in-memory columns, group after group.

    :func:`pandas_dp.engines.in_memory.exact_values` measures a plan with any set
    of kernels of these signatures: the in-memory engine's (numpy and compiled)
    and the reference engine's (pure Python, exact). Every result has a leading
    axis of one entry per group (one group when ``groups`` is ``None``); a row of
    group -1 counts nowhere.
    """

    def row_counts(self, groups: Groups | None, rows: int) -> NDArray[np.int64]:
        """Rows per group."""
        ...

    def present_counts(self, series: pd.Series, groups: Groups | None) -> NDArray[np.int64]:
        """Non-missing values per group, of a column of any dtype."""
        ...

    def mask_counts(self, masks: Sequence[Any], groups: Groups | None = None) -> NDArray[np.int64]:
        """Rows where each boolean mask is true."""
        ...

    def moments(
        self,
        series: pd.Series,
        lower: float,
        upper: float,
        *,
        squares: bool,
        groups: Groups | None = None,
    ) -> Any:
        """Count, exact clamped centred sum (and centred squares) per group
        (a :class:`~pandas_dp.engines.sums.MomentSums`)."""
        ...

    def power_sums(
        self,
        series: pd.Series,
        lower: float,
        upper: float,
        power: int,
        *,
        groups: Groups | None = None,
    ) -> Any:
        """Exact clamped centred sum of ``power``-th powers per group, any power
        (a :class:`~pandas_dp.engines.powers.PowerSums`)."""
        ...

    def products(
        self, series: Sequence[pd.Series], lowers: Sequence[float], uppers: Sequence[float]
    ) -> Any:
        """Exact centred sums and cross-products of several columns' complete rows
        (a :class:`~pandas_dp.engines.sums.ProductSums`)."""
        ...

    def category_counts(
        self, series: pd.Series, categories: Sequence[Any], *, groups: Groups | None = None
    ) -> CategoryCounts:
        """Counts of the declared categories, of the rest and of the missing."""
        ...

    def grid_counts(
        self,
        series: pd.Series,
        lower: float,
        upper: float,
        bins: int,
        *,
        groups: Groups | None = None,
    ) -> NDArray[np.int64]:
        """Counts of the clamped values in ``bins`` equal cells of ``[lower, upper]``."""
        ...


@runtime_checkable
class Engine(Protocol):
    """An engine: exact sufficient statistics of one kind of data.

    Register one with :func:`~pandas_dp.engines.registry.register_engine`; the
    tests hold every engine to the reference engine
    (:mod:`pandas_dp.engines.reference`), statistic by statistic.
    """

    #: A short name, recorded nowhere private (e.g. ``"pandas"``, ``"dask"``).
    name: str

    def exact_values(
        self, measurements: Iterable[MeasurementLike], data: EngineInput
    ) -> dict[str, NDArray[Any]]:
        """Each measurement's exact vector, group after group, read from ``data``.

        Counts come back as float vectors of whole numbers, sums as object vectors
        of exact ``Fraction`` values.
        """
        ...

    def groups(
        self, frame: Any, by: Sequence[Hashable], codes: Callable[[pd.DataFrame], Groups], size: int
    ) -> Groups:
        """Each row's group: ``codes`` applied to the frame's ``by`` columns."""
        ...

    def observed_groups(self, column: Any) -> tuple[Groups, pd.Index]:
        """Private keys: each row's observed key, numbered by first appearance, and the
        keys (they leave the engine only for partition selection's threshold)."""
        ...

    def observed_counts(self, groups: Groups, units: Any | None) -> NDArray[np.int64]:
        """Rows, or distinct units, per observed key (exact; partition selection)."""
        ...

    def kept_groups(self, groups: Groups, position: NDArray[np.intp], size: int) -> Groups:
        """Group codes renumbered by ``position`` (its last entry, for code -1, is -1)."""
        ...

    def truncated(
        self,
        frame: Any,
        read: list[Hashable],
        unit: Hashable,
        groups: Groups | None,
        truncate: Callable[[pd.DataFrame, Groups | None], Groups],
    ) -> Groups:
        """Group codes with the rows above the contribution bounds set to -1:
        ``truncate`` applied to every unit's rows together."""
        ...

    def category_counts(
        self, series: Any, categories: Sequence[Any], *, groups: Groups | None = None
    ) -> CategoryCounts:
        """Counts of the declared categories (and of the rest, and of the missing)."""
        ...
