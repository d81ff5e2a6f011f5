"""The privacy unit and its contribution bounds, declared by arguments or a schema.

A release may bound what one *unit* (a person, identified by a column) contributes:
``max_rows_per_unit`` rows, and in a group-by ``max_groups_per_unit`` groups and
``max_rows_per_group`` rows per group. They are public facts: given as arguments or
in a pandera schema's ``metadata`` under :data:`METADATA_KEY`, never read from the
data. :func:`resolve_unit` combines the two (arguments win, field by field).

Examples
--------
>>> resolve_unit("pid", 3, columns=["pid", "x"]).max_rows_per_unit
3
"""

from __future__ import annotations

import numbers
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["METADATA_KEY", "UnitDeclaration", "resolve_unit"]

#: The key of a pandera schema's ``metadata`` under which pandas-dp reads the unit.
METADATA_KEY = "pandas_dp"
_UNIT_KEYS = ("privacy_unit", "max_rows_per_unit", "max_groups_per_unit", "max_rows_per_group")


@dataclass(frozen=True)
class UnitDeclaration:
    """The declared privacy unit and contribution bounds.

    Attributes
    ----------
    column : hashable
        The column identifying a unit (a person).
    max_rows_per_unit : int
        ``k``: rows of one unit a release keeps.
    max_groups_per_unit, max_rows_per_group : int or None
        ``g`` and ``c`` of a group-by (``None``: not bounded beyond ``k``).
    source : str
        ``"arguments"``, ``"schema"``, ``"attached schema"``, or a mix of them
        (``"arguments+schema"``) when explicit arguments override some fields.
    """

    column: Hashable
    max_rows_per_unit: int
    max_groups_per_unit: int | None = None
    max_rows_per_group: int | None = None
    source: str = "arguments"


def _schema_metadata(schema: Any) -> dict[str, Any]:
    """The ``pandas_dp`` entry of a schema's dataframe-level metadata, or ``{}``."""
    if schema is None or isinstance(schema, Mapping):
        return {}
    if isinstance(schema, type):  # a DataFrameModel class: its Config.metadata
        config = getattr(schema, "__config__", None)
        meta = getattr(config, "metadata", None)
    else:
        meta = getattr(schema, "metadata", None)
    if not isinstance(meta, Mapping):
        return {}
    entry = meta.get(METADATA_KEY)
    if entry is None:
        return {}
    if not isinstance(entry, Mapping):
        raise ValueError(
            f"the schema's metadata[{METADATA_KEY!r}] must be a dict such as "
            f"{{'privacy_unit': 'person_id', 'max_rows_per_unit': 5}}; got {entry!r}"
        )
    unknown = [key for key in entry if key not in _UNIT_KEYS]
    if unknown:
        raise ValueError(
            f"the schema's metadata[{METADATA_KEY!r}] has unknown key(s) {unknown!r}; "
            f"known: {list(_UNIT_KEYS)}"
        )
    return dict(entry)


def _bound(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(
            f"{name} must be a whole number >= 1 (a public bound on what one unit "
            f"contributes); got {value!r}"
        )
    return int(value)


def resolve_unit(
    privacy_unit: Hashable | None = None,
    max_rows_per_unit: int | None = None,
    schema: Any = None,
    columns: Iterable[Hashable] | None = None,
    *,
    max_groups_per_unit: int | None = None,
    max_rows_per_group: int | None = None,
    attached: Any = None,
) -> UnitDeclaration | None:
    """Resolve the privacy unit and its contribution bounds, before any data is read.

    Each field comes from the explicit argument if given, else from ``schema``'s
    metadata, else from the ``attached`` schema's, where pandas-dp reads
    ``metadata={"pandas_dp": {"privacy_unit": "pid", "max_rows_per_unit": 5,
    "max_groups_per_unit": 2, "max_rows_per_group": 3}}`` (a ``DataFrameSchema``'s
    ``metadata=``, or a ``DataFrameModel``'s ``Config.metadata``).

    Parameters
    ----------
    privacy_unit : hashable, optional
        The column identifying a unit. ``None`` (and nothing in a schema): every
        row is its own unit and the result is ``None``.
    max_rows_per_unit : int, optional
        ``k``; required with a unit.
    schema : pandera schema-like, optional
        A ``DataFrameSchema`` or ``DataFrameModel`` class.
    columns : iterable of hashable, optional
        The frame's column labels; the unit column must be one of them.
    max_groups_per_unit, max_rows_per_group : int, optional
        ``g`` and ``c`` for a group-by.
    attached : pandera schema, optional
        The schema attached to the frame (:func:`attached_schema`).

    Returns
    -------
    UnitDeclaration or None
        ``None`` when no unit is declared (the unit is the row).

    Raises
    ------
    ValueError
        A unit without ``max_rows_per_unit`` (or a bound without a unit), a bound
        that is not a whole number >= 1, a unit column missing from ``columns``, or
        malformed schema metadata. Only declarations are looked at, never data.

    Examples
    --------
    >>> unit = resolve_unit("pid", 3, columns=["pid", "x"])
    >>> unit.column, unit.max_rows_per_unit, unit.source
    ('pid', 3, 'arguments')
    >>> resolve_unit() is None
    True
    """
    given = {
        "privacy_unit": privacy_unit,
        "max_rows_per_unit": max_rows_per_unit,
        "max_groups_per_unit": max_groups_per_unit,
        "max_rows_per_group": max_rows_per_group,
    }
    layers = [(given, "arguments"), (_schema_metadata(schema), "schema")]
    layers.append((_schema_metadata(attached), "attached schema"))
    chosen: dict[str, Any] = {}
    sources: list[str] = []
    for key in _UNIT_KEYS:
        for values, source in layers:
            if values.get(key) is not None:
                chosen[key] = values[key]
                if source not in sources:
                    sources.append(source)
                break
    unit = chosen.get("privacy_unit")
    k = _bound(chosen.get("max_rows_per_unit"), "max_rows_per_unit")
    g = _bound(chosen.get("max_groups_per_unit"), "max_groups_per_unit")
    c = _bound(chosen.get("max_rows_per_group"), "max_rows_per_group")
    if unit is None:
        if k is not None or g is not None or c is not None:
            named = [key for key in _UNIT_KEYS[1:] if chosen.get(key) is not None]
            raise ValueError(
                f"{', '.join(named)} given without privacy_unit: a contribution bound "
                f"needs the column that identifies a unit, e.g. privacy_unit='person_id' "
                f"(without one, every row is its own unit and the bound is 1)"
            )
        return None
    if k is None:
        raise ValueError(
            f"privacy_unit={unit!r} needs max_rows_per_unit=k, the most rows of one "
            f"unit a release keeps (the others are dropped by a keyed hash; noise grows "
            f"with k). Choose it from public knowledge of the data's design (e.g. visits "
            f"per patient per year), not from the data: a k below most units' row counts "
            f"drops rows (bias), a larger k adds noise"
        )
    if columns is not None:
        labels = list(columns)
        if unit not in labels:
            raise ValueError(
                f"privacy_unit={unit!r} is not a column of the data (columns: {labels!r})"
            )
    order = [source for _, source in layers if source in sources]
    return UnitDeclaration(unit, k, g, c, "+".join(order))
