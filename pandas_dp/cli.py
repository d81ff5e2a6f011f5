"""``pandas-dp describe``: a private summary of a CSV or Parquet file, from the shell.

::

    pandas-dp describe data.csv --schema schema.yaml --epsilon 1
    pandas-dp describe data.parquet --schema schema.yaml --epsilon 1 --by region
    pandas-dp describe --example --epsilon 1 --html report.html

The schema is a pandera ``DataFrameSchema`` in the YAML format that
``schema.to_yaml()`` writes: the bounds of every numeric column, the categories of
every categorical one (which are also the public keys of ``--by``), and optionally a
top-level ``metadata: {pandas_dp: {privacy_unit: ..., max_rows_per_unit: ...}}``
(:func:`schema_to_yaml` writes it; pandera's own ``to_yaml`` drops it).

The command runs ``df.dp.describe`` (or, with ``--by``, one
``df.dp.groupby(by).agg`` of count, mean and std over the numeric columns and one
``proportions`` per categorical column, ``epsilon`` split equally) under one
:class:`~pandas_dp.PrivacyBudget`, prints the table and the budget's ledger, and
with ``--html`` writes a self-contained report: the table, the intervals, one plot
per column (if matplotlib is installed), the metadata of every release and the
ledger.

Everything that can be wrong with the command -- the schema file, a column name,
a missing declaration, the budget -- is checked before the data file is read and
before anything is charged; such errors exit with status 2 and a one-line message
on stderr. Reading the data cannot fail on a data value: a numeric column's
unparsable entries are missing values, a boolean column's entries other than
true/false (or 1/0) too.

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
import math
import os
import sys
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

import pandas_dp
from pandas_dp.accessor.frame import DPFrameAccessor
from pandas_dp.accessor.groupby import DPGroupBy, contributions
from pandas_dp.declarations import split_declared
from pandas_dp.errors import MissingBoundsError
from pandas_dp.grouping import resolve_grouping
from pandas_dp.report import Report, print_report, write_html

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

#: Rows per chunk when reading a CSV file (and per batch of a Parquet file).
CHUNK_ROWS = 250_000

_COMPRESSION: dict[str, Any] = {
    ".gz": "gzip",
    ".bz2": "bz2",
    ".xz": "xz",
    ".zst": "zstd",
    ".zip": "zip",
}
_PARQUET = (".parquet", ".pq")
_PARQUET_HINT = (
    "reading Parquet files needs pyarrow, which is not installed; install it with "
    'pip install "pandas-dp[parquet]" (or pip install pyarrow)'
)
_TRUE = ("true", "t", "yes", "y", "1", "1.0")
_FALSE = ("false", "f", "no", "n", "0", "0.0")


class CLIError(Exception):
    """A usage, schema or declaration error: printed on stderr, exit status 2."""


# ----------------------------------------------------------------------------- schema


def _one_line(text: str) -> str:
    """``text`` with its line breaks and runs of spaces folded into single spaces."""
    return " ".join(text.split())


def load_schema(path: str | os.PathLike[str]) -> Any:
    """Read a pandera ``DataFrameSchema`` from a YAML file, or explain what is wrong.

    Parameters
    ----------
    path : str or path-like
        A file in the format of ``schema.to_yaml()`` (or :func:`schema_to_yaml`).

    Returns
    -------
    pandera.pandas.DataFrameSchema

    Raises
    ------
    CLIError
        If the file is missing or unreadable, is not YAML, is not a mapping with a
        ``columns`` entry, or pandera cannot build a schema from it (the message
        names the problem).

    Examples
    --------
    >>> from pandas_dp.cli import example_paths, load_schema
    >>> sorted(load_schema(example_paths()[1]).columns)
    ['age', 'hours_per_week', 'income', 'region', 'smoker']
    """
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError as err:  # pragma: no cover - pyyaml is a dependency
        raise CLIError("reading a YAML schema needs pyyaml: pip install pyyaml") from err
    import pandera.pandas as pa

    where = Path(path)
    try:
        text = where.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CLIError(f"schema file {str(where)!r} does not exist") from None
    except (OSError, UnicodeDecodeError) as err:
        raise CLIError(f"cannot read the schema file {str(where)!r}: {err}") from None
    try:
        parsed = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        problem = getattr(err, "problem", None) or _one_line(str(err))
        at = "" if mark is None else f" at line {mark.line + 1}, column {mark.column + 1}"
        raise CLIError(f"schema file {str(where)!r} is not valid YAML: {problem}{at}") from None
    if not isinstance(parsed, dict) or not isinstance(parsed.get("columns"), dict | list):
        raise CLIError(
            f"schema file {str(where)!r} is not a pandera DataFrameSchema: expected a "
            f"mapping with a 'columns' entry, as schema.to_yaml() writes"
        )
    try:
        schema = pa.DataFrameSchema.from_yaml(text)
    except Exception as err:  # pandera raises many kinds; all mean a bad file
        raise CLIError(
            f"schema file {str(where)!r} is not a valid pandera schema: "
            f"{type(err).__name__}: {_one_line(str(err))}"
        ) from None
    try:  # malformed pandas-dp metadata (privacy unit) is a schema error too
        contributions(pd.DataFrame(columns=list(schema.columns)), None, None, schema=schema)
    except (ValueError, TypeError) as err:
        raise CLIError(f"schema file {str(where)!r}: {err}") from None
    return schema


def schema_to_yaml(schema: Any, stream: str | os.PathLike[str] | None = None) -> str | None:
    """``schema.to_yaml()``, keeping the schema's ``metadata`` (the privacy unit).

    pandera's ``to_yaml`` drops a ``DataFrameSchema``'s ``metadata``, where pandas-dp
    reads the privacy unit and its contribution bounds; its ``from_yaml`` reads a
    top-level ``metadata`` entry back. This writes that entry.

    Parameters
    ----------
    schema : pandera.pandas.DataFrameSchema
        The schema to write.
    stream : str or path-like, optional
        A file to write; the YAML text is returned when omitted.

    Returns
    -------
    str or None
        The YAML text, or ``None`` when written to ``stream``.

    Examples
    --------
    >>> import pandera.pandas as pa
    >>> from pandas_dp.cli import schema_to_yaml
    >>> s = pa.DataFrameSchema({"pid": pa.Column(int), "x": pa.Column(float)},
    ...                        metadata={"pandas_dp": {"privacy_unit": "pid",
    ...                                                "max_rows_per_unit": 3}})
    >>> pa.DataFrameSchema.from_yaml(schema_to_yaml(s)).metadata
    {'pandas_dp': {'privacy_unit': 'pid', 'max_rows_per_unit': 3}}
    """
    import yaml  # type: ignore[import-untyped]

    text = str(schema.to_yaml())
    metadata = getattr(schema, "metadata", None)
    if metadata:
        text += yaml.safe_dump({"metadata": dict(metadata)}, sort_keys=False)
    if stream is None:
        return text
    Path(stream).write_text(text, encoding="utf-8")
    return None


@contextmanager
def example_paths_context() -> Iterator[tuple[Path, Path]]:
    """The bundled survey and its YAML schema as real files (see :func:`example_paths`)."""
    root = resources.files("pandas_dp.data")
    with (
        resources.as_file(root.joinpath("survey.csv")) as data,
        resources.as_file(root.joinpath("survey_schema.yaml")) as schema,
    ):
        yield Path(data), Path(schema)


def example_paths() -> tuple[Path, Path]:
    """The paths of the bundled survey (``survey.csv``) and its schema (``survey_schema.yaml``).

    Returns
    -------
    tuple of pathlib.Path
        ``(data, schema)``; the files of the installed package.

    Examples
    --------
    >>> from pandas_dp.cli import example_paths
    >>> [p.name for p in example_paths()]
    ['survey.csv', 'survey_schema.yaml']
    """
    root = resources.files("pandas_dp.data")
    return Path(str(root.joinpath("survey.csv"))), Path(str(root.joinpath("survey_schema.yaml")))


# ----------------------------------------------------------------------------- progress


class Progress:
    """A percentage on stderr for reads that take more than ``after`` seconds.

    Parameters
    ----------
    label : str
        What is being done (the file name).
    mode : {"auto", "always", "never"}, default "auto"
        ``"auto"``: show it once ``after`` seconds have passed; ``"always"``: from the
        start; ``"never"``: not at all.
    after : float, default 2.0
        Seconds before ``"auto"`` shows anything.
    stream : file, optional
        Where to write (``sys.stderr`` by default). On a terminal the line is
        rewritten in place; otherwise a line is written every 10 %.
    """

    def __init__(
        self,
        label: str,
        mode: str = "auto",
        after: float = 2.0,
        stream: IO[str] | None = None,
    ) -> None:
        self.label = label
        self.mode = mode
        self.after = after
        self.stream = stream if stream is not None else sys.stderr
        self.start = time.monotonic()
        self.shown = False
        self._last = -1
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def update(self, fraction: float) -> None:
        """Report that ``fraction`` (0 to 1) of the work is done."""
        if self.mode == "never":
            return
        if self.mode == "auto" and time.monotonic() - self.start < self.after:
            return
        percent = int(100 * min(max(fraction, 0.0), 1.0))
        step = percent if self._tty else percent // 10 * 10
        if step == self._last:
            return
        self._last = step
        self.shown = True
        end = "" if self._tty else "\n"
        prefix = "\r" if self._tty else ""
        self.stream.write(f"{prefix}reading {self.label}: {step:3d}%{end}")
        self.stream.flush()

    def close(self) -> None:
        """Finish the line (if anything was shown)."""
        if self.shown and self._tty:
            self.stream.write("\n")
            self.stream.flush()


# ----------------------------------------------------------------------------- reading


def _kind(path: Path) -> tuple[str, Any]:
    """``("csv", compression)`` or ``("parquet", None)`` from the file name."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in _PARQUET:
        return "parquet", None
    compression = None
    if suffixes and suffixes[-1] in _COMPRESSION:
        compression = _COMPRESSION[suffixes.pop()]
    if suffixes and suffixes[-1] in (".csv", ".txt", ".tsv"):
        return "csv", compression
    raise CLIError(
        f"{str(path)!r}: unknown file type; use a .csv file (optionally compressed: "
        f".csv.gz, .csv.bz2, ...) or a .parquet file"
    )


def _check_parquet_engine() -> None:
    try:
        import pyarrow.parquet  # type: ignore[import-untyped]  # noqa: F401
    except ImportError:
        raise CLIError(_PARQUET_HINT) from None


def read_header(path: str | os.PathLike[str]) -> list[str]:
    """The column names of a CSV or Parquet file (its first line or its footer only).

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    list of str

    Raises
    ------
    CLIError
        A missing file, an unknown extension, Parquet without pyarrow, or an
        unreadable header.
    """
    where = Path(path)
    kind, compression = _kind(where)
    if not where.is_file():
        raise CLIError(f"data file {str(where)!r} does not exist")
    try:
        if kind == "parquet":
            _check_parquet_engine()
            import pyarrow.parquet as pq  # type: ignore[import-untyped]

            return [str(c) for c in pq.read_schema(where).names]
        sep = "\t" if ".tsv" in [s.lower() for s in where.suffixes] else ","
        head = pd.read_csv(where, nrows=0, sep=sep, compression=compression)
        return [str(c) for c in head.columns]
    except CLIError:
        raise
    except Exception as err:
        raise CLIError(f"cannot read the header of {str(where)!r}: {err}") from None


def _dtype_kind(schema: Any, column: Hashable) -> str:
    """``"number"``, ``"bool"``, ``"text"`` or ``"other"``: the declared type of a column."""
    declared = getattr(schema.columns.get(column), "dtype", None)
    if declared is None:
        return "other"
    name = str(declared).lower()
    if name in ("bool", "boolean"):
        return "bool"
    if name.startswith(("str", "object")):
        return "text"
    if name.startswith(("float", "int", "uint")):
        return "number"
    return "other"


def _normalise(frame: pd.DataFrame, schema: Any) -> pd.DataFrame:
    """Give every column its declared type; no data value can make this fail.

    Numbers: float64, an unparsable entry missing. Booleans: pandas' nullable
    ``boolean``, anything but true/false (1/0, yes/no) missing. Text: as read.
    """
    out = {}
    for c in frame.columns:
        s = frame[c]
        kind = _dtype_kind(schema, c)
        if kind == "number":
            if pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype):
                s = s.astype(np.float64)
            else:
                s = pd.to_numeric(s, errors="coerce").astype(np.float64)
        elif kind == "bool" and s.dtype != np.bool_:
            words = s.astype("string").str.strip().str.lower()
            s = pd.Series(pd.NA, index=s.index, dtype="boolean")
            s[words.isin(_TRUE).fillna(False).to_numpy(dtype=bool)] = True
            s[words.isin(_FALSE).fillna(False).to_numpy(dtype=bool)] = False
        out[c] = s
    return pd.DataFrame(out, index=frame.index)


def read_table(
    path: str | os.PathLike[str],
    columns: Sequence[str],
    schema: Any,
    *,
    progress: str = "auto",
    stream: IO[str] | None = None,
) -> pd.DataFrame:
    """Read ``columns`` of a CSV or Parquet file, in chunks, typed as the schema declares.

    Parameters
    ----------
    path : str or path-like
        A ``.csv`` file (optionally ``.gz``, ``.bz2``, ``.xz``, ``.zst``, ``.zip``)
        or a ``.parquet`` file (needs pyarrow).
    columns : sequence of str
        The columns to read (others are never parsed).
    schema : pandera.pandas.DataFrameSchema
        Gives each column its type: numbers become float64 (an unparsable entry
        is missing), booleans pandas' ``boolean`` (anything but true/false or 1/0
        is missing), text stays text.
    progress : {"auto", "always", "never"}, default "auto"
        A percentage on ``stream`` (see :class:`Progress`).
    stream : file, optional
        Where the progress goes; ``sys.stderr`` by default.

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> from pandas_dp.cli import example_paths, load_schema, read_table
    >>> data, schema = example_paths()
    >>> df = read_table(data, ["age", "smoker"], load_schema(schema))
    >>> df.dtypes.astype(str).tolist()
    ['float64', 'boolean']
    """
    where = Path(path)
    kind, compression = _kind(where)
    meter = Progress(where.name, progress, stream=stream)
    text = [c for c in columns if _dtype_kind(schema, c) in ("text", "bool")]
    chunks: list[pd.DataFrame] = []
    try:
        if kind == "parquet":
            _check_parquet_engine()
            import pyarrow.parquet as pq  # type: ignore[import-untyped]

            parquet = pq.ParquetFile(where)
            total = max(parquet.metadata.num_rows, 1)
            done = 0
            for batch in parquet.iter_batches(batch_size=CHUNK_ROWS, columns=list(columns)):
                chunks.append(batch.to_pandas())
                done += batch.num_rows
                meter.update(done / total)
        else:
            sep = "\t" if ".tsv" in [s.lower() for s in where.suffixes] else ","
            size = max(where.stat().st_size, 1)
            with where.open("rb") as raw:
                reader = pd.read_csv(
                    raw,
                    sep=sep,
                    usecols=list(columns),
                    dtype={c: str for c in text},
                    compression=compression,
                    chunksize=CHUNK_ROWS,
                )
                with reader:
                    for chunk in reader:
                        chunks.append(chunk)
                        meter.update(raw.tell() / size)
    finally:
        meter.close()
    if not chunks:
        frame = pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    else:
        frame = pd.concat(chunks, ignore_index=True) if len(chunks) > 1 else chunks[0]
    return _normalise(frame[list(columns)], schema)


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
            f"column(s) {absent} are declared but not in the data file; it has {list(header)}"
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
        except (ValueError, TypeError, KeyError, MissingBoundsError) as err:
            raise CLIError(f"--by {' '.join(by)}: {err}") from None
        rows.append(
            {
                "column": ", ".join(by),
                "kind": "group keys",
                "public": "declared keys: "
                + ", ".join(str(k) for k in (grouping.keys if grouping.keys is not None else [])),
            }
        )
    if unit is not None:
        rows.append({"column": str(unit), "kind": "privacy unit", "public": "from the schema"})
    return _Plan(wanted, numeric, categorical, undeclared, pd.DataFrame(rows), needed)


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
) -> dict[str, Any]:
    """Every release of the report, charged to ``budget``."""
    rng = np.random.default_rng(seed) if seed is not None else None
    common: dict[str, Any] = {"schema": schema, "mechanism": mechanism, "random_state": rng}
    out: dict[str, Any] = {}
    with budget.context_only():
        if not by:
            described = DPFrameAccessor(frame).describe(
                [*plan.numeric, *plan.categorical], epsilon=epsilon, delta=delta, **common
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


def _precheck_budget(epsilon: float, delta: float, mechanism: str) -> pandas_dp.PrivacyBudget:
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise CLIError(f"--epsilon must be a positive number; got {epsilon:g}")
    if not 0 <= delta < 1:
        raise CLIError(f"--delta must be in [0, 1); got {delta:g}")
    if mechanism == "gaussian" and delta == 0:
        raise CLIError("--mechanism gaussian needs a positive --delta")
    if mechanism == "laplace" and delta > 0:
        raise CLIError("--delta is spent by the Gaussian mechanism only: add --mechanism gaussian")
    try:
        return pandas_dp.PrivacyBudget(epsilon=epsilon, delta=delta, name="pandas-dp describe")
    except ValueError as err:
        raise CLIError(str(err)) from None


# ----------------------------------------------------------------------------- main


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``pandas-dp``.

    Returns
    -------
    argparse.ArgumentParser
    """
    parser = argparse.ArgumentParser(
        prog="pandas-dp",
        description="Differentially private summaries of tables.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    d = commands.add_parser(
        "describe",
        help="a private describe() of a CSV or Parquet file",
        description=(
            "A private describe() of a CSV or Parquet file: count, mean and std of "
            "every declared numeric column, shares of every declared categorical one."
        ),
    )
    d.add_argument("data", nargs="?", help="a .csv (optionally compressed) or .parquet file")
    d.add_argument("--schema", help="pandera schema in YAML (the format schema.to_yaml() writes)")
    d.add_argument(
        "--example",
        action="store_true",
        help="use the bundled synthetic survey and its schema (instead of DATA and --schema)",
    )
    d.add_argument("--epsilon", type=float, required=True, help="total epsilon of the report")
    d.add_argument("--delta", type=float, default=0.0, help="total delta (Gaussian mechanism)")
    d.add_argument(
        "--mechanism",
        choices=("laplace", "gaussian"),
        default=None,
        help="noise mechanism (default: gaussian if --delta > 0, else laplace)",
    )
    d.add_argument("--by", nargs="+", default=[], metavar="COL", help="group by these columns")
    d.add_argument("--columns", nargs="+", default=None, metavar="COL", help="columns to describe")
    d.add_argument("--html", metavar="PATH", help="also write a self-contained HTML report")
    d.add_argument("--seed", type=int, default=None, help="reproducible, INSECURE noise")
    d.add_argument(
        "--progress",
        choices=("auto", "always", "never"),
        default="auto",
        help="progress on stderr while reading (auto: after 2 seconds)",
    )
    return parser


def describe(
    data: str | os.PathLike[str],
    schema_path: str | os.PathLike[str],
    *,
    epsilon: float,
    delta: float = 0.0,
    mechanism: str | None = None,
    by: Sequence[str] = (),
    columns: Sequence[str] | None = None,
    seed: int | None = None,
    progress: str = "auto",
    reader: Callable[..., pd.DataFrame] | None = None,
) -> Report:
    """Run ``pandas-dp describe`` without printing: check, read, release.

    Parameters
    ----------
    data : str or path-like
        The CSV or Parquet file.
    schema_path : str or path-like
        The YAML schema.
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
        Reproducible, insecure noise.
    progress : {"auto", "always", "never"}, default "auto"
        Progress on stderr while reading.
    reader : callable, optional
        Reads the data (``reader(path, columns, schema, progress=...)``);
        :func:`read_table` by default.

    Returns
    -------
    Report

    Raises
    ------
    CLIError
        For any problem found before the data is read (nothing read, nothing charged).

    Examples
    --------
    >>> from pandas_dp.cli import describe, example_paths
    >>> r = describe(*example_paths(), epsilon=1.0, columns=["age"], seed=0)
    >>> list(r.releases), r.budget.spent.epsilon
    (['describe'], 1.0)
    """
    chosen = mechanism or ("gaussian" if delta > 0 else "laplace")
    budget = _precheck_budget(epsilon, delta, chosen)
    schema = load_schema(schema_path)
    by = list(by)
    plan = _plan(schema, read_header(data), columns, by)
    frame = (reader or read_table)(data, plan.read, schema, progress=progress)
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
        settings={"epsilon": epsilon, "delta": delta, "mechanism": chosen, "seed": seed},
    )


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
    parser = build_parser()
    try:
        args = parser.parse_args(None if argv is None else list(argv))
    except SystemExit as exit_:  # argparse has printed the usage and the problem
        return int(exit_.code or 0)
    try:
        if args.html and not Path(args.html).resolve().parent.is_dir():
            raise CLIError(f"--html {args.html!r}: the folder to write it in does not exist")
        if args.example:
            if args.data is not None or args.schema is not None:
                raise CLIError("--example uses the bundled survey: give no DATA and no --schema")
            with example_paths_context() as (data, schema):
                report = describe(
                    data,
                    schema,
                    epsilon=args.epsilon,
                    delta=args.delta,
                    mechanism=args.mechanism,
                    by=args.by,
                    columns=args.columns,
                    seed=args.seed,
                    progress=args.progress,
                )
        else:
            if args.data is None or args.schema is None:
                raise CLIError("give a data file and --schema SCHEMA.yaml (or --example)")
            report = describe(
                args.data,
                args.schema,
                epsilon=args.epsilon,
                delta=args.delta,
                mechanism=args.mechanism,
                by=args.by,
                columns=args.columns,
                seed=args.seed,
                progress=args.progress,
            )
    except CLIError as err:
        sys.stderr.write(f"pandas-dp describe: error: {_one_line(str(err))}\n")
        return EXIT_USAGE
    print_report(report, sys.stdout)
    if args.html:
        write_html(report, args.html)
        sys.stdout.write(f"\nwrote {args.html}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
