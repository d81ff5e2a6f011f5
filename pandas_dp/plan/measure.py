"""Measuring a plan: the engine's input, and the exact value of every measurement.

A :class:`~pandas_dp.plan.plans.Plan` knows *what* to measure; this module asks the
engine of the data (:func:`~pandas_dp.engines.registry.engine_for`) for it.
:func:`engine_input` gathers what a release reads -- its columns and declarations,
the public row count, the engine (``"engine"``) and each row's group code (``-1``
for a row in no released group, or above a privacy unit's contribution bounds
after keyed-hash truncation) -- only when called, after the budget is charged.
:func:`exact_values` returns each measurement's exact vector from that engine,
group after group: counts as whole numbers, sums as exact
:class:`~fractions.Fraction` values.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from pandas_dp import engines
from pandas_dp.engines.inputs import EngineInput
from pandas_dp.engines.protocol import Engine, MeasurementLike
from pandas_dp.engines.registry import engine_of
from pandas_dp.request.grouping import Grouping
from pandas_dp.request.grouping_options import code_inputs

if TYPE_CHECKING:
    from pandas_dp.request.settings import Settings

__all__ = [
    "engine_input",
    "exact_values",
    "kept_groups",
    "observed_counts",
    "series_data",
]


def exact_values(
    measurements: Iterable[MeasurementLike], data: EngineInput
) -> dict[str, NDArray[Any]]:
    """Each measurement's exact vector, group after group, from the data's engine."""
    return _engine(data).exact_values(measurements, data)


def _engine(data: EngineInput) -> Engine:
    """The engine :func:`engine_input` chose, or the engine of the data's columns."""
    engine: Engine | None = data.engine
    return engine if engine is not None else engine_of(data.columns.values())


def engine_input(
    columns: Mapping[Hashable, pd.Series],
    decls: Mapping[Hashable, Any],
    settings: Settings,
    grouping: Grouping | None = None,
    frame: pd.DataFrame | None = None,
    sources: Mapping[tuple[str, Hashable], Any] | None = None,
) -> Callable[[], EngineInput]:
    """The engine's input, built only when called (after the charge).

    It holds each column and its declaration, the public row count, and the rows'
    group codes (``"groups"``): the declared key of each row's group (``-1`` for a
    row in no released group), with the rows above a privacy unit's contribution
    bounds also set to ``-1`` by keyed-hash truncation (REFERENCE.md §9).
    ``sources`` adds the readers of other measurement sources, e.g.
    ``{("categories", column): reader}`` (a reader is called with the group codes).
    """

    def build() -> EngineInput:
        engine = engine_of([frame, *columns.values()])
        groups, keys, units = None, None, None
        if grouping is not None and grouping.private:
            assert frame is not None
            # unsorted: the plan sorts the keys it keeps (and only those)
            groups, keys = engine.observed_groups(frame[grouping.by[0]])
        elif grouping is not None:
            assert frame is not None
            groups = engine.groups(
                frame, grouping.by, partial(_group_codes, grouping), grouping.size
            )
        unit = settings.contributions.unit
        if unit is not None:
            assert frame is not None
            groups = _truncated(engine, columns, settings, grouping, frame, groups)
            units = frame[unit]
        return EngineInput(
            columns=dict(columns),
            declarations=dict(decls),
            rows=settings.rows,
            groups=groups,
            readers=dict(sources or {}),
            keys=keys,
            units=units,
            frame=frame,
            engine=engine,
        )

    return build


def _group_codes(grouping: Grouping, frame: pd.DataFrame) -> engines.Groups:
    """Each row's position among the declared keys (``other`` last; ``-1``: dropped);
    run by the engine where the rows are (in each partition of a partitioned frame)."""
    columns, levels = code_inputs(frame, grouping.by, grouping.levels, grouping.missing)
    product = engines.group_codes(columns, levels, other=grouping.other is not None)
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


def observed_counts(data: EngineInput) -> NDArray[np.int64]:
    """Partition selection's exact counts: rows, or distinct units, per observed key."""
    return _engine(data).observed_counts(data.groups, data.units)


def kept_groups(data: EngineInput, position: NDArray[np.intp], size: int) -> engines.Groups:
    """The data's group codes renumbered by ``position`` (its last entry, for -1, is -1)."""
    return _engine(data).kept_groups(data.groups, position, size)


def _truncated(
    engine: Engine,
    columns: Mapping[Hashable, pd.Series],
    settings: Settings,
    grouping: Grouping | None,
    frame: pd.DataFrame | None,
    groups: engines.Groups | None,
) -> engines.Groups:
    """Group codes with the rows above the contribution bounds set to ``-1``.

    The hash key is drawn here, once. An engine that partitions the rows shuffles
    them by unit, then has each partition truncate its own rows with that key.
    """
    from pandas_dp.engines import units

    assert frame is not None
    c = settings.contributions
    read = list(dict.fromkeys([*columns, *(grouping.by if grouping else ()), c.unit]))
    # private keys are numbered by first appearance: rank their groups by value
    by = list(grouping.by) if grouping is not None and grouping.private else []
    truncate = partial(_truncate, read, by, c, units.hash_key(settings.source))
    return engine.truncated(frame, read, c.unit, groups, truncate)


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
) -> EngineInput:
    """The engine's input for numeric columns: each Series and its declaration."""
    return EngineInput(columns=dict(columns), declarations=dict(decls))
