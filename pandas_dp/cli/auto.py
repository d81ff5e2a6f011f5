"""``pandas-dp describe --auto``: describe a file with no schema, or a partial one.

With ``--auto`` what the schema does not declare is released privately first
(``df.dp.describe(bounds="auto")``, :mod:`pandas_dp.stats.describe_auto`): a
numeric column's bounds, a text column's categories (partition selection: a value
few people hold never appears). Without ``--schema`` nothing is declared, and each
column's *type* is read from the file (:func:`infer_kinds`): a column is a number
when every value present parses as a number, a boolean when every value is
true/false (or yes/no), text otherwise. Those types are treated as public, as
``df.dp`` treats a DataFrame's dtypes; a column whose type itself is private
(one stray word turns a number column into text) should be typed in a schema
(``--schema`` with types only: ``--auto`` fills in what the types do not declare).

``--write-schema`` writes the schema the report used (:func:`released_schema`): the
schema's own declarations, and the bounds and categories released under
differential privacy -- outputs of the release, public once released -- so the next
run can declare them and spend nothing on them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import pandas_dp
from pandas_dp.accessor._groupby_base import contributions
from pandas_dp.accessor.frame import DPFrameAccessor
from pandas_dp.cli._errors import CLIError
from pandas_dp.cli.budgets import _charge_shared
from pandas_dp.cli.reading import _dtype_kind, _normalise
from pandas_dp.cli.report import Report
from pandas_dp.cli.schemas import load_schema, schema_to_yaml
from pandas_dp.errors import MissingBoundsError

__all__ = ["auto_declarations", "infer_kinds", "released_schema", "run_auto", "typed_schema"]

#: Words a boolean column holds (lower case; anything else makes the column text).
_BOOLEAN_WORDS = frozenset({"true", "false", "yes", "no"})
#: The pandera dtype of each kind.
_DTYPES = {"number": "float64", "bool": "bool", "text": "str"}


def _infer(series: pd.Series) -> str:
    """``"number"``, ``"bool"`` or ``"text"``: one column's type, read from its values."""
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "bool"
    if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype):
        return "number"
    present = series.dropna()
    if present.empty:
        return "text"
    words = present.astype(str).str.strip()
    if bool(pd.to_numeric(words, errors="coerce").notna().all()):
        return "number"
    if bool(words.str.lower().isin(_BOOLEAN_WORDS).all()):
        return "bool"
    return "text"


def infer_kinds(frame: pd.DataFrame, columns: Sequence[Hashable]) -> dict[Hashable, str]:
    """Each column's type, read from its values (see the module: treated as public).

    Parameters
    ----------
    frame : DataFrame
        The columns as read (text, or typed by a Parquet file).
    columns : sequence of labels
        The columns to type.

    Returns
    -------
    dict
        ``column -> "number" | "bool" | "text"``.

    Examples
    --------
    >>> df = pd.DataFrame({"a": ["1", " 2.5", None], "b": ["yes", "No", None],
    ...                    "c": ["x", "1", None]})
    >>> infer_kinds(df, ["a", "b", "c"])
    {'a': 'number', 'b': 'bool', 'c': 'text'}
    """
    return {c: _infer(frame[c]) for c in columns}


def typed_schema(schema: Any, kinds: Mapping[Hashable, str]) -> Any:
    """A pandera schema: ``schema``'s columns as they are, and the others typed by ``kinds``.

    Parameters
    ----------
    schema : pandera.pandas.DataFrameSchema or None
        The user's schema (kept whole: columns, checks, metadata).
    kinds : mapping label -> str
        The types of the columns ``schema`` lacks or leaves untyped.

    Returns
    -------
    pandera.pandas.DataFrameSchema
    """
    import pandera.pandas as pa

    columns = dict(schema.columns) if schema is not None else {}
    for c, kind in kinds.items():
        column = columns.get(c)
        if column is None or _dtype_kind(schema, c) == "other":
            checks = [] if column is None else list(column.checks or [])
            columns[c] = pa.Column(_DTYPES[kind], checks=checks, nullable=True, name=str(c))
    metadata = getattr(schema, "metadata", None) if schema is not None else None
    return pa.DataFrameSchema(columns, metadata=metadata)


def released_schema(schema: Any, table: pd.DataFrame) -> Any:
    """The schema a ``--auto`` report used: declared, and released (for ``--write-schema``).

    Parameters
    ----------
    schema : pandera.pandas.DataFrameSchema
        The schema of the run (:func:`typed_schema`'s: every described column typed).
    table : DataFrame
        The describe release: ``attrs["dp"].details["auto"]["declared"]`` holds the
        released bounds and categories.

    Returns
    -------
    pandera.pandas.DataFrameSchema
        ``schema`` with an ``in_range`` check on each column whose bounds were
        released and an ``isin`` check on each column whose categories were.
    """
    import pandera.pandas as pa

    declared = table.attrs["dp"].details.get("auto", {}).get("declared", {})
    bounds = declared.get("bounds", {})
    categories = declared.get("categories", {})
    columns = dict(schema.columns)
    for c, column in list(columns.items()):
        if c in bounds:
            lo, hi = bounds[c]
            check = pa.Check.in_range(float(lo), float(hi))
        elif c in categories:
            check = pa.Check.isin(list(categories[c]))
        else:
            continue
        columns[c] = pa.Column(
            column.dtype, checks=[*(column.checks or []), check], nullable=True, name=c
        )
    return pa.DataFrameSchema(columns, metadata=getattr(schema, "metadata", None))


def auto_declarations(
    table: pd.DataFrame, numeric: Sequence[str], categorical: Sequence[str]
) -> pd.DataFrame:
    """The public facts a ``--auto`` report used, one row per described column.

    Parameters
    ----------
    table : DataFrame
        The describe release.
    numeric, categorical : sequence of str
        The described columns by kind.

    Returns
    -------
    DataFrame
        Columns ``column``, ``kind``, ``public``: bounds ``[lower, upper]`` or
        categories ``{a, b}``, marked ``(released privately)`` where they were.
    """
    meta = table.attrs["dp"]
    declared = meta.details.get("auto", {}).get("declared", {})
    released_bounds = declared.get("bounds", {})
    released_cats = declared.get("categories", {})
    rows: list[dict[str, str]] = []
    for c in numeric:
        lo, hi = meta.input_bounds[c]
        note = " (released privately)" if c in released_bounds else ""
        rows.append({"column": c, "kind": "numeric", "public": f"[{lo:g}, {hi:g}]{note}"})
    for c in categorical:
        shares = [str(r)[len("share ") :] for r in table.index if pd.notna(table.loc[r, c])]
        note = " (released privately)" if c in released_cats else ""
        rows.append(
            {"column": c, "kind": "categorical", "public": "{" + ", ".join(shares) + "}" + note}
        )
    return pd.DataFrame(rows, columns=["column", "kind", "public"])


def _wanted(
    schema: Any, header: Sequence[str], columns: Sequence[str] | None, unit: str | None
) -> list[str]:
    """The columns to describe: ``--columns``, else the schema's, else the file's."""
    if columns:
        wanted = list(columns)
    elif schema is not None:
        wanted = [str(c) for c in schema.columns if str(c) != unit]
    else:
        wanted = [c for c in header if c != unit]
    if len(set(wanted)) != len(wanted):
        raise CLIError(f"--columns names a column twice: {wanted}")
    needed = list(dict.fromkeys([*wanted, *([unit] if unit is not None else [])]))
    absent = [c for c in needed if c not in header]
    if absent:
        raise CLIError(f"column(s) {absent} are not in the data file; it has {list(header)}")
    return wanted


def run_auto(
    data: str | os.PathLike[str],
    schema_path: str | os.PathLike[str] | None,
    *,
    epsilon: float,
    delta: float,
    mechanism: str,
    budget: pandas_dp.PrivacyBudget,
    columns: Sequence[str] | None,
    seed: int | None,
    progress: str,
    header_reader: Callable[..., list[str]],
    table_reader: Callable[..., pd.DataFrame],
    sep: str | None,
    shared: pandas_dp.PrivacyBudget | None,
    quantile_method: str | None,
    write_schema: str | os.PathLike[str] | None,
    describe_options: Mapping[str, Any] | None = None,
) -> Report:
    """``pandas-dp describe --auto``: check, read, type, release, write the schema.

    Parameters
    ----------
    data : str or path-like
        The CSV or Parquet file.
    schema_path : str or path-like, optional
        A schema declaring some columns (types, bounds, categories, the privacy
        unit); ``None``: nothing is declared and the types are read from the file.
    epsilon, delta : float
        The report's total budget; with Laplace noise ``delta`` is the category
        selections'.
    mechanism : {"laplace", "gaussian"}
        The noise of the describe release.
    budget : PrivacyBudget
        The report's budget.
    columns : sequence of str, optional
        The columns to describe (default: the schema's, or every column of the file).
    seed : int, optional
        Reproducible, insecure noise.
    progress : str
        Progress while reading (see :func:`~pandas_dp.cli.reading.read_table`).
    header_reader, table_reader : callable
        ``read_header`` and ``read_table`` (or the caller's reader).
    sep : str, optional
        The CSV delimiter (one character).
    shared : PrivacyBudget, optional
        A durable budget the whole report is charged to before the data is read.
    quantile_method : str, optional
        describe's ``method`` (its default when ``None``).
    write_schema : str or path-like, optional
        Where to write the schema used (:func:`released_schema`).
    describe_options : mapping, optional
        More keywords of ``df.dp.describe`` (``histogram``, ``shares``).

    Returns
    -------
    Report

    Raises
    ------
    CLIError
        For anything found before the data is read or the budget charged.
    """
    schema = load_schema(schema_path) if schema_path is not None else None
    options: dict[str, Any] = {"sep": sep} if sep is not None else {}
    header = header_reader(data, **options)
    unit = None
    if schema is not None:
        found = contributions(pd.DataFrame(columns=list(schema.columns)), None, None, schema=schema)
        unit = None if found.unit is None else str(found.unit)
    wanted = _wanted(schema, header, columns, unit)
    needed = list(dict.fromkeys([*wanted, *([unit] if unit is not None else [])]))
    untyped = [c for c in needed if schema is None or _dtype_kind(schema, c) == "other"]
    if shared is not None:  # committed before the data is read
        _charge_shared(
            shared, wanted, [], Path(data).name, epsilon=epsilon, delta=delta, mechanism=mechanism
        )
    reading = typed_schema(schema, dict.fromkeys(untyped, "text"))
    frame = table_reader(data, needed, reading, progress=progress, **options)
    typed = typed_schema(schema, infer_kinds(frame, untyped))
    frame = _normalise(frame, typed)
    rng = np.random.default_rng(seed) if seed is not None else None
    method: dict[str, Any] = {} if quantile_method is None else {"method": quantile_method}
    try:
        with budget.context_only():
            table = DPFrameAccessor(frame).describe(
                wanted,
                epsilon=epsilon,
                delta=delta,
                bounds="auto",
                schema=typed,
                mechanism=mechanism,
                random_state=rng,
                **method,
                **(describe_options or {}),
            )
    except (ValueError, TypeError, KeyError, MissingBoundsError) as err:
        raise CLIError(str(err)) from None  # (a check before the first charge)
    meta = table.attrs["dp"]
    numeric = [str(c) for c in table.columns if c in meta.input_bounds]
    categorical = [str(c) for c in table.columns if c not in meta.input_bounds]
    if write_schema is not None:
        schema_to_yaml(released_schema(typed, table), write_schema)
    return Report(
        source=Path(data).name,
        by=[],
        numeric=numeric,
        categorical=categorical,
        undeclared=[c for c in wanted if c not in table.columns],
        releases={"describe": table},
        budget=budget,
        declarations=auto_declarations(table, numeric, categorical),
        settings={
            "epsilon": epsilon,
            "delta": delta,
            "mechanism": mechanism,
            "seed": seed,
            "shared budget": shared,
            "auto": True,
            "types": "schema" if schema is not None and not untyped else "read from the file",
        },
        columns=[c for c in wanted if c in table.columns],
    )
