"""Reading a table for ``pandas-dp``: a CSV or Parquet file, typed as its schema says.

:func:`read_header` reads only the column names (so the command can check its plan
before any data is parsed); :func:`read_table` reads the chosen columns in chunks,
reporting a :class:`Progress` percentage, and gives each column its declared type in
a way no data value can make fail. A CSV file is read one physical line per record
by :mod:`pandas_dp.cli.csv_lines`: whatever one record holds, the reading neither
fails nor warns (a malformed record is a row of missing values).
"""

from __future__ import annotations

import itertools
import os
import sys
import time
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from pandas_dp.cli._errors import CLIError
from pandas_dp.cli.csv_lines import (
    READ_ERRORS,
    check_delimiter,
    header_names,
    open_lines,
    parse_records,
    text_column,
)

__all__ = ["CHUNK_ROWS", "Progress", "read_header", "read_table"]

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


def _separator(where: Path, sep: str | None) -> str:
    """The CSV delimiter: ``sep``, else a tab for ``.tsv`` files and a comma otherwise."""
    if sep is not None:
        check_delimiter(sep)
        return sep
    return "\t" if ".tsv" in [s.lower() for s in where.suffixes] else ","


def _damaged(where: Path, err: BaseException, what: str) -> CLIError:
    """The error of a file that cannot be read to its end: its kind, never its text."""
    return CLIError(
        f"cannot read {what} of {str(where)!r} ({type(err).__name__}): the file is "
        f"damaged, cut short or not what its name says; nothing was charged. Check "
        f"the file (e.g. decompress it by hand)"
    )


def read_header(path: str | os.PathLike[str], *, sep: str | None = None) -> list[str]:
    """The column names of a CSV or Parquet file (its first line or its footer only).

    Parameters
    ----------
    path : str or path-like
    sep : str, optional
        The delimiter of a CSV file; by default a tab for ``.tsv`` files, a comma
        otherwise. Parquet files ignore it.

    Returns
    -------
    list of str

    Raises
    ------
    CLIError
        A missing file, an unknown extension, Parquet without pyarrow, an empty
        file or an unreadable header.
    """
    where = Path(path)
    kind, compression = _kind(where)
    if not where.is_file():
        raise CLIError(f"data file {str(where)!r} does not exist")
    if kind == "parquet":
        _check_parquet_engine()
        import pyarrow.parquet as pq  # type: ignore[import-untyped]

        try:
            return [str(c) for c in pq.read_schema(where).names]
        except Exception as err:  # pyarrow raises several kinds; all mean a bad file
            raise _damaged(where, err, "the Parquet schema") from None
    delimiter = _separator(where, sep)
    try:
        with open_lines(where, compression) as (text, _):
            first = text.readline()
    except READ_ERRORS as err:
        raise _damaged(where, err, "the header") from None
    try:
        return header_names(first, delimiter)
    except CLIError as err:
        raise CLIError(f"data file {str(where)!r}: {err}") from None


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
                s = _numbers(s)
        elif kind == "bool" and s.dtype != np.bool_:
            words = s.astype("string").str.strip().str.lower()
            s = pd.Series(pd.NA, index=s.index, dtype="boolean")
            s[words.isin(_TRUE).fillna(False).to_numpy(dtype=bool)] = True
            s[words.isin(_FALSE).fillna(False).to_numpy(dtype=bool)] = False
        out[c] = s
    return pd.DataFrame(out, index=frame.index)


def _number(value: Any) -> float:
    """One value as a float, or NaN (never an error)."""
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return float("nan")


def _numbers(s: pd.Series) -> pd.Series:
    """``s`` as float64, an entry that is not a number missing; never raises, whatever
    the entries (text, or objects of any kind from a Parquet file)."""
    try:
        return pd.to_numeric(s, errors="coerce").astype(np.float64)
    except (TypeError, ValueError, OverflowError):  # objects to_numeric refuses
        values = [_number(v) if isinstance(v, str | int | float) else np.nan for v in s]
        return pd.Series(values, index=s.index, dtype=np.float64)


def read_table(
    path: str | os.PathLike[str],
    columns: Sequence[str],
    schema: Any,
    *,
    progress: str = "auto",
    stream: IO[str] | None = None,
    sep: str | None = None,
) -> pd.DataFrame:
    """Read ``columns`` of a CSV or Parquet file, in chunks, typed as the schema declares.

    Parameters
    ----------
    path : str or path-like
        A ``.csv`` file (optionally ``.gz``, ``.bz2``, ``.xz``, ``.zst``, ``.zip``)
        or a ``.parquet`` file (needs pyarrow).
    columns : sequence of str
        The columns to read (others are never typed).
    schema : pandera.pandas.DataFrameSchema
        Gives each column its type: numbers become float64 (an unparsable entry
        is missing), booleans pandas' ``boolean`` (anything but true/false or 1/0
        is missing), text stays text. A CSV file is read one physical line per
        record; a malformed record (a quote never closed, more fields than the
        header) is a row of missing values (:mod:`pandas_dp.cli.csv_lines`).
    progress : {"auto", "always", "never"}, default "auto"
        A percentage on ``stream`` (see :class:`Progress`).
    stream : file, optional
        Where the progress goes; ``sys.stderr`` by default.
    sep : str, optional
        The delimiter of a CSV file (see :func:`read_header`).

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    CLIError
        Only for the file as a whole, never for a record: no header line, a column
        the header lacks, a damaged or truncated (compressed or Parquet) file. The
        message quotes nothing of the file's content.

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
    try:
        if kind == "parquet":
            chunks = _read_parquet(where, columns, schema, meter)
        else:
            chunks = _read_csv(where, columns, schema, meter, _separator(where, sep), compression)
    finally:
        meter.close()
    if not chunks:
        frame = pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
        return _normalise(frame, schema)
    return pd.concat(chunks, ignore_index=True) if len(chunks) > 1 else chunks[0]


def _read_parquet(
    where: Path, columns: Sequence[str], schema: Any, meter: Progress
) -> list[pd.DataFrame]:
    """The typed chunks of a Parquet file (a damaged file: a content-free error)."""
    _check_parquet_engine()
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    chunks: list[pd.DataFrame] = []
    try:
        parquet = pq.ParquetFile(where)
        total = max(parquet.metadata.num_rows, 1)
        done = 0
        for batch in parquet.iter_batches(batch_size=CHUNK_ROWS, columns=list(columns)):
            chunks.append(_normalise(batch.to_pandas()[list(columns)], schema))
            done += batch.num_rows
            meter.update(done / total)
    except Exception as err:  # pyarrow raises several kinds; all mean a bad file
        raise _damaged(where, err, "the data") from None
    return chunks


def _read_csv(
    where: Path,
    columns: Sequence[str],
    schema: Any,
    meter: Progress,
    sep: str,
    compression: str | None,
) -> list[pd.DataFrame]:
    """The typed chunks of a CSV file, one physical line per record.

    Only the file as a whole can make this fail (no header, a column the header
    lacks, a damaged compressed stream); no record can (see
    :mod:`pandas_dp.cli.csv_lines`).
    """
    text_like = {c for c in columns if _dtype_kind(schema, c) != "number"}
    chunks: list[pd.DataFrame] = []
    size = max(where.stat().st_size, 1)
    try:
        with open_lines(where, compression) as (text, raw):
            try:
                names = header_names(text.readline(), sep)
            except CLIError as err:
                raise CLIError(f"data file {str(where)!r}: {err}") from None
            absent = [c for c in columns if c not in names]
            if absent:
                raise CLIError(
                    f"column(s) {absent} are not in the header of {str(where)!r}; it has {names}"
                )
            wanted = [names.index(c) for c in columns]
            while lines := list(itertools.islice(text, CHUNK_ROWS)):
                values = parse_records(lines, sep, len(names), wanted)
                frame = pd.DataFrame(
                    {
                        c: text_column(v) if c in text_like else pd.Series(v, dtype=object)
                        for c, v in zip(columns, values, strict=True)
                    }
                )
                chunks.append(_normalise(frame, schema))
                meter.update(raw.tell() / size)
    except READ_ERRORS as err:
        raise _damaged(where, err, "the data") from None
    return chunks
