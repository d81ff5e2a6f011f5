"""What an engine is handed for one release: :class:`EngineInput`.

The plan (:func:`pandas_dp.plan.measure.engine_input`) builds it after the budget is
charged; an engine reads it and nothing else. Its fields are of two kinds:

* **facts about the request** -- the columns' declarations, the row count, the
  engine that was chosen;
* **the data's own objects** -- the columns, each row's group code, the readers of
  category and grid counts, predicate masks, the privacy unit's column, the frame --
  held in whatever type the engine works on (pandas Series in memory, Dask Series,
  lists for the reference engine). :meth:`EngineInput.map_data` rewrites exactly
  these, so an engine that runs the input elsewhere (the Dask engine, once per
  partition) never confuses the two.

Examples
--------
>>> import pandas as pd
>>> data = EngineInput(columns={"x": pd.Series([1.0, 2.0])}, rows=2)
>>> data.map_data(lambda v: v * 10 if isinstance(v, pd.Series) else v).columns["x"].tolist()
[10.0, 20.0]
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["EngineInput"]


@dataclass(frozen=True)
class EngineInput:
    """The engine's input for one release (built after the charge).

    Attributes
    ----------
    columns : mapping
        Each column the release reads, by label, as the engine holds it.
    declarations : mapping
        Each numeric column's declaration (its public bounds), by label.
    rows : int, optional
        The number of rows (the frame's length, where it is known without a pass);
        a release divides by it only where it is public (``"substitute"``).
    groups : Groups, optional
        Each row's group code: its released group's position, or ``-1`` for a row
        in no released group or above a privacy unit's contribution bounds.
    readers : mapping
        ``(kind, column) -> counts or reader`` for the ``"categories"`` and
        ``"grid"`` sources; a reader is called with the group codes (and the
        engine's kernels) only when the engine measures.
    masks : sequence or callable, optional
        The boolean masks of a predicate workload (or a function giving them).
    keys : optional
        Private keys: the observed keys, numbered by first appearance (they leave
        the engine only for partition selection's threshold).
    units : optional
        The privacy unit's column (partition selection counts distinct units).
    frame : optional
        The whole frame (an engine may read its row counts from it).
    engine : Engine, optional
        The engine chosen for the data; None lets the reader choose by the columns.
    """

    columns: Mapping[Hashable, Any] = field(default_factory=dict)
    declarations: Mapping[Hashable, Any] = field(default_factory=dict)
    rows: int | None = None
    groups: Any = None
    readers: Mapping[tuple[str, Hashable], Any] = field(default_factory=dict)
    masks: Any = None
    keys: Any = None
    units: Any = None
    frame: Any = None
    engine: Any = None

    def map_data(self, fn: Callable[[Any], Any]) -> EngineInput:
        """A copy with ``fn`` applied to each of the data's own objects (the columns,
        the group codes, the readers and the masks); public facts are kept."""
        return replace(
            self,
            columns={c: fn(v) for c, v in self.columns.items()},
            groups=None if self.groups is None else fn(self.groups),
            readers={k: fn(v) for k, v in self.readers.items()},
            masks=None if self.masks is None else fn(self.masks),
        )

    def declaration(self, column: Hashable) -> Any:
        """A column's declaration; a precise error if the plan did not give one."""
        try:
            return self.declarations[column]
        except KeyError:
            raise KeyError(
                f"the engine input has no declaration of column {column!r}; the plan must "
                f"pass the declared bounds of every column it sums (engine_input's decls)"
            ) from None
