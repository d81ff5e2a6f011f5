"""``pandas-dp describe``: a private summary of a CSV or Parquet file, from the shell.

::

    pandas-dp describe data.csv --schema schema.yaml --epsilon 1
    pandas-dp describe data.parquet --schema schema.yaml --epsilon 1 --by region
    pandas-dp describe --example --epsilon 1 --html report.html
    pandas-dp describe data.csv --epsilon 1 --delta 1e-6 --auto --write-schema schema.yaml

The schema is a pandera ``DataFrameSchema`` in the YAML format that
``schema.to_yaml()`` writes: the bounds of every numeric column, the categories of
every categorical one (which are also the public keys of ``--by``), and optionally a
top-level ``metadata: {pandas_dp: {privacy_unit: ..., max_rows_per_unit: ...}}``
(:func:`schema_to_yaml` writes it; pandera's own ``to_yaml`` drops it).

The command runs ``df.dp.describe`` (or, with ``--by``, one
``df.dp.groupby(by).agg`` of count, mean and std over the numeric columns and one
``proportions`` per categorical column, ``epsilon`` split equally) under one
:class:`~pandas_dp.PrivacyBudget`, prints the table and the budget's ledger, and
with ``--html`` writes a self-contained report: every estimate with its 95 %
interval beside it, inline SVG charts of the intervals, the metadata of every
release and the ledger as tables.

The printed tables (:mod:`pandas_dp.cli.report_text`) keep the declared order of the
columns and categories, leave blank the cells a column does not have, mark with
``*`` an estimate whose 95 % interval is wider than ``--unreliable`` (default 0.25)
of its declared range, and with ``--intervals`` follow every estimate by its
interval. ``--quantile-method`` picks describe's percentile estimator;
``pandas-dp --version`` prints the version.

``--budget-store PATH --budget-name NAME`` also charges the whole report, as one
release of (``--epsilon``, ``--delta``), to a durable budget kept in a SQLite file,
so that runs on different days or in different processes share one cap (see
:mod:`pandas_dp.budget.store`). ``--budget-epsilon`` (and ``--budget-delta``) state
its cap: they create the budget on the first run and are checked against it later;
without them the budget must exist, and its recorded cap applies. The charge is
committed before the data file is read; a run the shared budget cannot admit exits
with status 2 having read and charged nothing.

Everything that can be wrong with the command -- the schema file, a column name,
a missing declaration, the budget -- is checked before the data file is read and
before anything is charged; such errors exit with status 2 and a one-line message
on stderr. Reading the data cannot fail on a data value: a numeric column's
unparsable entries are missing values, a boolean column's entries other than
true/false (or 1/0) too, and a byte that is not UTF-8 reads as a replacement
character. Nor can one record: a CSV file is read one physical line per record
(:mod:`pandas_dp.cli.csv_lines`), and a malformed record (a quote never closed, too
many fields) is a row of missing values, never an error or a message. Only a
problem of the whole file (empty, damaged) stops the command, with status 2, before
anything is charged.

The command is this module; it uses :mod:`pandas_dp.cli.arguments` (the parser and
the checks of the flags' values), :mod:`pandas_dp.cli.schemas` (reading and writing
the YAML schema, locating the bundled example), :mod:`pandas_dp.cli.reading` (the
data file's header and its columns) and :mod:`pandas_dp.cli.report` (printing, and
the HTML report), which never import it back. Their public names are importable
from here too.

Examples
--------
>>> from pandas_dp.cli import main
>>> main(["describe", "--example", "--epsilon", "1", "--columns", "age", "--seed", "0"])
... # doctest: +ELLIPSIS
pandas-dp describe: survey.csv, epsilon 1 (laplace)...
>>> main(["describe", "--example", "--epsilon", "1", "--columns", "nope"])
2
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import pandas_dp
from pandas_dp.accessor._groupby_base import contributions
from pandas_dp.accessor.frame import DPFrameAccessor
from pandas_dp.accessor.groupby import DPGroupBy
from pandas_dp.cli._errors import CLIError as CLIError
from pandas_dp.cli._errors import _one_line
from pandas_dp.cli.arguments import HISTOGRAM_BINS as HISTOGRAM_BINS
from pandas_dp.cli.arguments import QUANTILE_METHODS, check_flags, describe_keywords, parsers
from pandas_dp.cli.arguments import build_parser as build_parser
from pandas_dp.cli.auto import run_auto
from pandas_dp.cli.budgets import _charge_shared, _open_shared, _precheck_budget, _where
from pandas_dp.cli.reading import CHUNK_ROWS as CHUNK_ROWS
from pandas_dp.cli.reading import Progress as Progress
from pandas_dp.cli.reading import _dtype_kind
from pandas_dp.cli.reading import read_header as read_header
from pandas_dp.cli.reading import read_table as read_table
from pandas_dp.cli.report import Report, print_report, write_html
from pandas_dp.cli.schemas import example_paths as example_paths
from pandas_dp.cli.schemas import example_paths_context as example_paths_context
from pandas_dp.cli.schemas import load_schema as load_schema
from pandas_dp.cli.schemas import schema_to_yaml as schema_to_yaml
from pandas_dp.errors import MissingBoundsError, PandasDPError
from pandas_dp.request.declarations import split_declared
from pandas_dp.request.grouping import resolve_grouping

__all__ = [
    "CLIError",
    "Report",
    "example_paths",
    "load_schema",
    "main",
    "read_table",
    "schema_to_yaml",
]

#: Exit status of a usage, schema or declaration error.
EXIT_USAGE = 2

#: Names ``--sep`` takes for delimiters that are awkward to type in a shell.
SEPARATORS = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|"}
#: Delimiters that, inside one header name, suggest the file uses another one.
_OTHER_DELIMITERS = {";": "';'", "\t": "tab", "|": "'|'"}

# ----------------------------------------------------------------------------- the release


@dataclass
class _Plan:
    columns: list[str]
    numeric: list[str]
    categorical: list[str]
    undeclared: list[str]
    declarations: pd.DataFrame
    read: list[str]


def _empty_frame(schema: Any, names: Sequence[str]) -> pd.DataFrame:
    """A frame with no rows and the declared types: declarations are resolved on it."""
    dtypes = {"number": np.float64, "bool": np.bool_, "text": object, "other": object}
    return pd.DataFrame({c: pd.Series(dtype=dtypes[_dtype_kind(schema, c)]) for c in names})


def _plan(
    schema: Any, header: Sequence[str], columns: Sequence[str] | None, by: Sequence[str]
) -> _Plan:
    """Which columns to describe and how, from the schema and the header only."""
    declared = [str(c) for c in schema.columns]
    named = [*by, *(columns or [])]
    unknown = [c for c in named if c not in declared]
    if unknown:
        raise CLIError(
            f"column(s) {unknown} are not declared in the schema; it declares {declared}"
        )
    unit = contributions(_empty_frame(schema, declared), None, None, schema=schema).unit
    extra = [str(unit)] if unit is not None else []
    wanted = list(columns) if columns else [c for c in declared if c not in by and c not in extra]
    if len(set(wanted)) != len(wanted):
        raise CLIError(f"--columns names a column twice: {wanted}")
    overlap = [c for c in wanted if c in by]
    if overlap:
        raise CLIError(f"column(s) {overlap} are both described and grouped by (--by)")
    needed = list(dict.fromkeys([*by, *extra, *wanted]))
    absent = [c for c in needed if c not in header]
    if absent:
        raise CLIError(
            f"column(s) {absent} are declared but not in the data file; it has "
            f"{list(header)}{_delimiter_hint(header)}"
        )
    empty = _empty_frame(schema, needed)
    try:
        split = split_declared({c: empty[c] for c in wanted}, schema=schema)
    except MissingBoundsError:
        raise CLIError(
            "no column to describe: the schema declares no bounds (in_range, between, "
            "ge + le) or categories (isin, bool) for the columns asked"
        ) from None
    if columns and split.undeclared:
        raise CLIError(
            f"column(s) {[str(c) for c in split.undeclared]}: the schema declares neither "
            f"bounds (in_range, between, ge + le) nor categories (isin, bool) for them"
        )
    numeric = [str(c) for c in split.numeric]
    categorical = [str(c) for c in split.categorical]
    undeclared = [str(c) for c in split.undeclared]
    rows: list[dict[str, str]] = []
    for c in wanted:
        if c in split.numeric:
            d = split.numeric[c]
            rows.append({"column": c, "kind": "numeric", "public": f"[{d.lower:g}, {d.upper:g}]"})
        elif c in split.categorical:
            listed = ", ".join(str(v) for v in split.categorical[c].categories)
            rows.append({"column": c, "kind": "categorical", "public": f"{{{listed}}}"})
    if by:
        try:
            grouping = resolve_grouping(empty, list(by), keys=None, schema=schema)
        except MissingBoundsError as err:
            raise CLIError(_undeclared_keys(by, err.columns)) from None
        except (ValueError, TypeError, KeyError) as err:
            raise CLIError(f"--by {' '.join(by)}: {err}") from None
        rows.append(
            {
                "column": ", ".join(by),
                "kind": "group keys",
                "public": "declared keys: " + _keys_text(grouping.keys),
            }
        )
    if unit is not None:
        rows.append({"column": str(unit), "kind": "privacy unit", "public": "from the schema"})
    return _Plan(wanted, numeric, categorical, undeclared, pd.DataFrame(rows), needed)


def _keys_text(keys: Any) -> str:
    """Declared keys as text: ``E, N, S`` for one column; for several, each key's
    values joined by commas and the keys by semicolons (``N, day; N, night``)."""
    listed = list(keys) if keys is not None else []
    if any(isinstance(k, tuple) for k in listed):
        return "; ".join(", ".join(map(str, k)) for k in listed)
    return ", ".join(map(str, listed))


def _delimiter_hint(header: Sequence[str]) -> str:
    """A hint when a header name holds another delimiter (a ``;``-separated file)."""
    for name in header:
        for char, shown in _OTHER_DELIMITERS.items():
            if char in name:
                return (
                    f". The header name {name!r} holds {shown}: the file may use another "
                    f"delimiter than the one read with; pass --sep {shown}"
                )
    return ""


def _undeclared_keys(by: Sequence[str], columns: Sequence[str]) -> str:
    """The message for a ``--by`` column whose keys the schema does not declare."""
    first = columns[0] if columns else "col"
    return (
        f"--by {' '.join(by)}: the schema declares no group keys for column(s) "
        f"{list(columns)}; declare them in the YAML schema with an isin check under the "
        f"column listing every public key (columns: {first}: isin: [...]), or give the "
        f"column dtype: bool. Keys must be public knowledge, not read off the data (the "
        f"command has no option for them)"
    )


def _check_sep(sep: str | None) -> str | None:
    """``--sep`` as one character (``tab``, ``semicolon``, ... by name)."""
    if sep is None:
        return None
    char = SEPARATORS.get(sep, sep)
    if len(char) != 1:
        raise CLIError(
            f"--sep must be one character (e.g. --sep ';') or one of "
            f"{[name for name in SEPARATORS if name.isalpha()]}; got {sep!r}"
        )
    return char


def _release(
    frame: pd.DataFrame,
    plan: _Plan,
    schema: Any,
    by: list[str],
    budget: pandas_dp.PrivacyBudget,
    *,
    epsilon: float,
    delta: float,
    mechanism: str,
    seed: int | None,
    quantile_method: str | None = None,
    describe_options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Every release of the report, charged to ``budget`` (``describe_options``: more
    keywords of the ungrouped ``df.dp.describe``)."""
    rng = np.random.default_rng(seed) if seed is not None else None
    common: dict[str, Any] = {"schema": schema, "mechanism": mechanism, "random_state": rng}
    out: dict[str, Any] = {}
    with budget.context_only():
        if not by:
            method: dict[str, Any] = {} if quantile_method is None else {"method": quantile_method}
            described = DPFrameAccessor(frame).describe(
                [*plan.numeric, *plan.categorical],
                epsilon=epsilon,
                delta=delta,
                **method,
                **(describe_options or {}),
                **common,
            )
            out["describe"] = described
            return out
        parts = (1 if plan.numeric else 0) + len(plan.categorical)
        eps, dlt = epsilon / parts, delta / parts
        group = DPGroupBy(frame, by if len(by) > 1 else by[0])
        if plan.numeric:
            stats = ["count", "mean", "std"]
            out["agg"] = group.agg(
                {c: stats for c in plan.numeric}, epsilon=eps, delta=dlt, **common
            )
        for c in plan.categorical:
            out[f"proportions {c}"] = group.proportions(c, epsilon=eps, delta=dlt, **common)
    return out


# ----------------------------------------------------------------------------- main


def describe(
    data: str | os.PathLike[str],
    schema_path: str | os.PathLike[str] | None,
    *,
    epsilon: float,
    delta: float = 0.0,
    mechanism: str | None = None,
    by: Sequence[str] = (),
    columns: Sequence[str] | None = None,
    seed: int | None = None,
    progress: str = "auto",
    reader: Callable[..., pd.DataFrame] | None = None,
    sep: str | None = None,
    budget_store: str | os.PathLike[str] | None = None,
    budget_name: str | None = None,
    budget_epsilon: float | None = None,
    budget_delta: float | None = None,
    budget_label: str | None = None,
    quantile_method: str | None = None,
    auto: bool = False,
    write_schema: str | os.PathLike[str] | None = None,
    histogram: int | None = None,
    shares: str = "auto",
) -> Report:
    """Run ``pandas-dp describe`` without printing: check, read, release.

    Parameters
    ----------
    data : str or path-like
        The CSV or Parquet file.
    schema_path : str or path-like or None
        The YAML schema (``None`` only with ``auto``: nothing declared).
    epsilon : float
        Total epsilon of all releases (one :class:`~pandas_dp.PrivacyBudget`).
    delta : float, default 0.0
        Total delta (with ``mechanism="gaussian"``).
    mechanism : {"laplace", "gaussian"}, optional
        Default: ``"gaussian"`` if ``delta > 0`` else ``"laplace"``.
    by : sequence of str, default ()
        Grouping columns; their keys come from the schema.
    columns : sequence of str, optional
        Columns to describe; every declared one by default.
    seed : int, optional
        Reproducible, insecure noise (a non-negative int).
    progress : {"auto", "always", "never"}, default "auto"
        Progress on stderr while reading.
    reader : callable, optional
        Reads the data (``reader(path, columns, schema, progress=...)``, and
        ``sep=`` when ``sep`` is given); :func:`read_table` by default.
    sep : str, optional
        The delimiter of a CSV file: one character, or ``"tab"``, ``"semicolon"``,
        ``"comma"``, ``"pipe"``. By default a comma (a tab for ``.tsv`` files).
    budget_store : str or path-like, optional
        A SQLite file keeping a durable budget (created if new): the whole report is
        charged to it, as one release of (``epsilon``, ``delta``), before the data is
        read. Needs ``budget_name``.
    budget_name : str, optional
        The durable budget's name in ``budget_store``.
    budget_epsilon : float, optional
        The durable budget's total epsilon: creates the budget if the store lacks it,
        and must equal its cap if not. Without it the budget must exist.
    budget_delta : float, optional
        The durable budget's total delta (default 0; with ``budget_epsilon``).
    budget_label : str, optional
        The label of the durable budget's ledger row (e.g. ``"nightly 2026-12-07"``).
    quantile_method : {"exponential", "tree"}, optional
        How the percentiles are released: ``df.dp.describe``'s ``method``
        (its default when omitted). Not with ``by`` (no percentiles there).
    auto : bool, default False
        Release privately what the schema does not declare, or everything without a
        schema (``df.dp.describe(bounds="auto")``; :mod:`pandas_dp.cli.auto`). The
        mechanism defaults to Laplace, and ``delta`` goes to the category selections.
        Not with ``by``.
    write_schema : str or path-like, optional
        With ``auto``: write the schema used (declared and released bounds and
        categories) here, in the format ``schema_path`` reads.
    histogram : int, optional
        Also release each numeric column's histogram of this many bins
        (``df.dp.describe``'s ``histogram``; the HTML report draws them). Ignored
        with ``by`` (no describe there).
    shares : {"auto", "all", "none"}, default "auto"
        Which numeric columns declared with an ``isin`` set of numbers also get the
        share of each value (``df.dp.describe``'s ``shares``: ``"auto"``, ``True``,
        ``False``). Not with ``by``.

    Returns
    -------
    Report

    Raises
    ------
    CLIError
        For any problem found before the data is read (nothing read, nothing charged):
        the arguments, the schema file and its declarations, the data file's header,
        and a durable budget that refuses the report or cannot be used.

    Examples
    --------
    >>> from pandas_dp.cli import describe, example_paths
    >>> r = describe(*example_paths(), epsilon=1.0, columns=["age"], seed=0)
    >>> list(r.releases), r.budget.spent.epsilon
    (['describe'], 1.0)
    """
    chosen = mechanism or ("gaussian" if delta > 0 and not auto else "laplace")
    budget = _precheck_budget(epsilon, delta, chosen, selection=auto)
    if seed is not None and seed < 0:
        raise CLIError(
            f"--seed must be a non-negative integer (e.g. --seed 0); got {seed}. Omit "
            f"--seed for secure noise"
        )
    delimiter = _check_sep(sep)
    _check_quantile_method(quantile_method, by)
    keywords = describe_keywords(histogram, shares, by)
    if write_schema is not None and not auto:
        raise CLIError("--write-schema writes what --auto released: add --auto")
    if auto and by:
        raise CLIError(
            "--auto with --by is not offered yet: run --auto --write-schema without --by "
            "first, then --by with the schema it wrote"
        )
    _check_writable(write_schema, "--write-schema")
    shared = _open_shared(budget_store, budget_name, budget_epsilon, budget_delta, budget_label)
    if auto:
        return run_auto(
            data,
            schema_path,
            epsilon=epsilon,
            delta=delta,
            mechanism=chosen,
            budget=budget,
            columns=columns,
            seed=seed,
            progress=progress,
            header_reader=read_header,
            table_reader=reader or read_table,
            sep=delimiter,
            shared=shared,
            quantile_method=quantile_method,
            write_schema=write_schema,
            describe_options=keywords,
        )
    if schema_path is None:
        raise CLIError("give --schema SCHEMA.yaml, or --auto to release the declarations privately")
    schema = load_schema(schema_path)
    by = list(by)
    try:
        plan = _plan(schema, read_header(data, sep=delimiter), columns, by)
    except (PandasDPError, ValueError, TypeError, KeyError) as err:
        # a declaration of the schema that is unusable (an infinite bound, an empty isin)
        raise CLIError(f"schema file {str(schema_path)!r}: {err}") from None
    options: dict[str, Any] = {"sep": delimiter} if delimiter is not None else {}
    if shared is not None:  # committed before the data is read
        _charge_shared(
            shared,
            plan.columns,
            by,
            Path(data).name,
            epsilon=epsilon,
            delta=delta,
            mechanism=chosen,
        )
    frame = (reader or read_table)(data, plan.read, schema, progress=progress, **options)
    try:
        releases = _release(
            frame,
            plan,
            schema,
            by,
            budget,
            epsilon=epsilon,
            delta=delta,
            mechanism=chosen,
            seed=seed,
            quantile_method=quantile_method,
            describe_options=keywords,
        )
    except (ValueError, TypeError, KeyError, MissingBoundsError) as err:
        # raised by a check before the charge: nothing was spent
        raise CLIError(str(err)) from None
    return Report(
        source=Path(data).name,
        by=by,
        numeric=plan.numeric,
        categorical=plan.categorical,
        undeclared=plan.undeclared,
        releases=releases,
        budget=budget,
        declarations=plan.declarations,
        settings={
            "epsilon": epsilon,
            "delta": delta,
            "mechanism": chosen,
            "seed": seed,
            "shared budget": shared,
        },
        columns=[c for c in plan.columns if c in (*plan.numeric, *plan.categorical)],
    )


def _check_writable(path: str | os.PathLike[str] | None, flag: str) -> None:
    """A file to write must be in a folder that exists (checked before anything runs)."""
    if path is not None and not Path(path).resolve().parent.is_dir():
        raise CLIError(f"{flag} {str(path)!r}: the folder to write it in does not exist")


def _check_quantile_method(method: str | None, by: Sequence[str]) -> None:
    """``quantile_method`` is one of describe's, and only without ``by``."""
    if method is None:
        return
    if method not in QUANTILE_METHODS:
        raise CLIError(f"--quantile-method must be one of {list(QUANTILE_METHODS)}; got {method!r}")
    if by:
        raise CLIError(
            f"--quantile-method {method}: with --by the report releases count, mean, std "
            f"and shares per key, no percentiles; drop --quantile-method or --by"
        )


#: The flags passed to :func:`describe` as keyword arguments of the same name.
_DESCRIBE_FLAGS = (
    "epsilon",
    "delta",
    "mechanism",
    "by",
    "columns",
    "seed",
    "progress",
    "sep",
    "quantile_method",
    "budget_store",
    "budget_name",
    "budget_epsilon",
    "budget_delta",
    "budget_label",
    "auto",
    "write_schema",
    "shares",
)


def _describe_options(args: argparse.Namespace) -> dict[str, Any]:
    """The parsed flags as :func:`describe`'s keyword arguments."""
    out = {name: getattr(args, name) for name in _DESCRIBE_FLAGS}
    # the HTML report draws each numeric column's histogram unless --no-histogram
    drawn = args.html is not None and not args.no_histogram and not args.by
    out["histogram"] = args.histogram_bins if drawn else None
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """The ``pandas-dp`` command.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (``sys.argv[1:]`` by default).

    Returns
    -------
    int
        0 on success, 2 on a usage, schema or declaration error (message on stderr).
    """
    parser, describe_parser = parsers()
    try:
        args = parser.parse_args(None if argv is None else list(argv))
        check_flags(args, describe_parser)
    except SystemExit as exit_:  # argparse has printed the usage and the problem
        return int(exit_.code or 0)
    try:
        _check_writable(args.html, "--html")
        options = _describe_options(args)
        if args.example:
            if args.data is not None or args.schema is not None:
                raise CLIError("--example uses the bundled survey: give no DATA and no --schema")
            with example_paths_context() as (data, schema):
                report = describe(data, schema, **options)
        else:
            if args.data is None or (args.schema is None and not args.auto):
                raise CLIError(
                    "give a data file and --schema SCHEMA.yaml (or --example); or --auto to "
                    "release the bounds and categories privately, with or without a schema"
                )
            report = describe(args.data, args.schema, **options)
    except CLIError as err:
        sys.stderr.write(f"pandas-dp describe: error: {_one_line(str(err))}\n")
        return EXIT_USAGE
    print_report(report, sys.stdout, intervals=args.intervals, unreliable=args.unreliable)
    shared = report.settings.get("shared budget")
    if shared is not None:
        left = shared.remaining
        sys.stdout.write(
            f"\nShared budget {shared.name!r} in {_where(shared)}: "
            f"epsilon {left.epsilon:g}, delta {left.delta:g} remain of "
            f"epsilon {shared.epsilon:g}, delta {shared.delta:g}\n"
        )
    if args.html:
        write_html(report, args.html)
        sys.stdout.write(f"\nwrote {args.html}\n")
    if args.write_schema:
        sys.stdout.write(f"\nwrote {args.write_schema}\n")
    return 0
