"""CSV records for ``pandas-dp``: one physical line each, parsed on its own.

A record can hold anything -- a quote never closed, too many fields, bytes that are
not UTF-8, a NUL byte -- and the command must behave the same whatever one record
holds: an error, a warning or a message that depended on a record (let alone one that
named its line) would tell whoever sees it something about the private data. So this
reader never fails on a record:

* the file is split into records at line feeds only (``\\n``; a ``\\r`` before it is
  dropped), so no record can run into the next one, nor be read as two: a quote is
  never continued on the following line, and a quoted field cannot hold a line
  break (a file whose lines end with ``\\r`` alone reads as no records);
* a record is split at the delimiter with the quoting rules of :mod:`csv` (``"``
  quotes, ``""`` inside quotes is one quote); a record that does not follow them (a
  quote never closed, text after a closing quote) or has more fields than the header
  is *malformed*: it becomes one row whose values are all missing. A record with
  fewer fields than the header gets missing values for the rest (as pandas does); an
  empty line is no record (as in pandas);
* bytes that are not UTF-8 are read as the replacement character ``U+FFFD``;
* pandas' default missing-value markers (``""``, ``NA``, ``NaN``, ``null``, ...) are
  missing values in every column.

Nothing about the data is ever reported -- not how many records were malformed,
nor where: that number is private too. Errors are raised only for the file as a
whole (no header line, a compressed stream that is damaged), before anything is
charged, and their messages hold no content of the file.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import lzma
import zipfile
import zlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from pandas_dp.cli._errors import CLIError

__all__ = [
    "NA_STRINGS",
    "READ_ERRORS",
    "header_names",
    "open_lines",
    "parse_records",
    "text_column",
]

QUOTE = '"'

#: The strings pandas' ``read_csv`` reads as missing by default (its ``na_values``).
NA_STRINGS: frozenset[str] = frozenset(
    {
        "",
        "#N/A",
        "#N/A N/A",
        "#NA",
        "-1.#IND",
        "-1.#QNAN",
        "-NaN",
        "-nan",
        "1.#IND",
        "1.#QNAN",
        "<NA>",
        "N/A",
        "NA",
        "NULL",
        "NaN",
        "None",
        "n/a",
        "nan",
        "null",
    }
)

#: What a damaged file raises while it is decompressed or read (never a record's doing).
READ_ERRORS: tuple[type[BaseException], ...] = (
    OSError,
    EOFError,
    zlib.error,
    lzma.LZMAError,
    zipfile.BadZipFile,
    RuntimeError,  # an encrypted zip member
)
#: The delimiters no CSV record can be split at.
_NOT_DELIMITERS = (QUOTE, "\n", "\r")


def check_delimiter(sep: str) -> None:
    """Refuse a delimiter that is the quote or a line break (before anything is read).

    Parameters
    ----------
    sep : str
        One character.

    Raises
    ------
    CLIError
        If ``sep`` is ``"``, ``\\n`` or ``\\r``.
    """
    if sep in _NOT_DELIMITERS:
        raise CLIError(
            f"--sep {sep!r} cannot be a CSV delimiter: it quotes or ends a record; "
            f"use e.g. --sep ';' or --sep tab"
        )


def _zstd_reader(raw: IO[bytes]) -> IO[bytes]:
    """A reader of a Zstandard stream (``compression.zstd`` or the zstandard package)."""
    try:
        from compression import zstd  # type: ignore[import-not-found]  # Python >= 3.14

        return zstd.ZstdFile(raw)  # type: ignore[no-any-return]
    except ImportError:
        pass
    try:
        import zstandard  # type: ignore[import-not-found]
    except ImportError:
        raise CLIError(
            "reading a .zst file needs the zstandard package, which is not installed; "
            "install it with pip install zstandard, or decompress the file first"
        ) from None
    return zstandard.ZstdDecompressor().stream_reader(raw)  # type: ignore[no-any-return]


def _decompressed(stack: ExitStack, raw: IO[bytes], compression: str | None, where: Path) -> Any:
    """The decompressed bytes of ``raw`` (registered on ``stack`` to be closed)."""
    if compression is None:
        return raw
    if compression == "gzip":
        return stack.enter_context(gzip.GzipFile(fileobj=raw, mode="rb"))
    if compression == "bz2":
        return stack.enter_context(bz2.BZ2File(raw))
    if compression == "xz":
        return stack.enter_context(lzma.LZMAFile(raw))
    if compression == "zstd":
        return stack.enter_context(_zstd_reader(raw))
    archive = stack.enter_context(zipfile.ZipFile(raw))
    members = [m for m in archive.infolist() if not m.is_dir()]
    if len(members) != 1:
        raise CLIError(
            f"data file {str(where)!r} is a zip archive of {len(members)} files; it must "
            f"hold exactly one CSV file"
        )
    return stack.enter_context(archive.open(members[0]))


@contextmanager
def open_lines(where: Path, compression: str | None) -> Iterator[tuple[IO[str], IO[bytes]]]:
    """The file's text, split at line feeds only, and its raw bytes (for progress).

    The text is UTF-8 (a leading byte-order mark dropped); a byte that is not UTF-8
    reads as ``U+FFFD``. Lines keep their ``\\n`` (and any ``\\r`` before it).

    Parameters
    ----------
    where : pathlib.Path
        The file.
    compression : {None, "gzip", "bz2", "xz", "zstd", "zip"}
        How the file is compressed.

    Yields
    ------
    tuple
        ``(text, raw)``: the decoded text stream and the file as opened (whose
        ``tell()`` says how far the reading went).
    """
    with ExitStack() as stack:
        raw = stack.enter_context(where.open("rb"))
        binary = _decompressed(stack, raw, compression, where)
        text = io.TextIOWrapper(binary, encoding="utf-8-sig", errors="replace", newline="\n")
        stack.callback(text.detach)  # the binary streams are closed by the stack
        yield text, raw


def _strip(line: str) -> str:
    """A line without its line feed and the carriage return before it."""
    if line.endswith("\n"):
        line = line[:-1]
    if line.endswith("\r"):
        line = line[:-1]
    return line


def header_names(line: str, sep: str) -> list[str]:
    """The column names of a header line, named and made unique as pandas does.

    An empty name is ``"Unnamed: i"`` (``i`` its position); a repeated name ``x`` is
    ``x.1``, ``x.2``, ... the second time and after. The header ends at its first
    carriage return: in a file whose lines end with ``\\r`` alone, the rest of that
    "line" (every record) is never read as names, nor quoted in an error.

    Parameters
    ----------
    line : str
        The first line of the file (``""`` for an empty file).
    sep : str
        The delimiter.

    Returns
    -------
    list of str

    Raises
    ------
    CLIError
        If the file has no header line (it is empty, or its first line is).

    Examples
    --------
    >>> header_names('a,"b,c",,a\\n', ",")
    ['a', 'b,c', 'Unnamed: 2', 'a.1']
    """
    text = _strip(line).split("\r", 1)[0]
    if not text.strip():
        raise CLIError(
            "the data file has no header line (it is empty, or its first line is); its "
            "first line must name the columns"
        )
    fields = next(csv.reader((text,), delimiter=sep, strict=False))
    names: list[str] = []
    seen: dict[str, int] = {}
    for i, field in enumerate(fields):
        name = field if field else f"Unnamed: {i}"
        if name in seen:
            seen[name] += 1
            name = f"{name}.{seen[name]}"
        seen.setdefault(name, 0)
        names.append(name)
    return names


def _fields(line: str, sep: str) -> list[str] | None:
    """The fields of one record, or ``None`` if it does not follow the quoting rules."""
    if QUOTE not in line:
        return line.split(sep)
    try:
        return next(csv.reader((line,), delimiter=sep, strict=True))
    except csv.Error:  # a quote never closed, text after a closing quote ...
        return None


def parse_records(
    lines: Iterable[str], sep: str, width: int, wanted: Sequence[int]
) -> list[list[str | None]]:
    """The ``wanted`` fields of each record, column by column (``None``: missing).

    Parameters
    ----------
    lines : iterable of str
        Physical lines, each one record (with or without its line ending).
    sep : str
        The delimiter.
    width : int
        The number of columns of the header.
    wanted : sequence of int
        The positions of the fields to keep.

    Returns
    -------
    list of list
        One list per wanted position, one entry per record (empty lines are no
        record). A malformed record (see the module's notes) gives ``None`` in
        every column; a short one ``None`` for the fields it lacks.

    Examples
    --------
    >>> parse_records(['1,"a,b"\\n', '2,"oops\\n', "\\n", "3\\n", "4,x,y\\n"], ",", 2, [0, 1])
    [['1', None, '3', None], ['a,b', None, None, None]]
    """
    columns: list[list[str | None]] = [[] for _ in wanted]
    appends = [c.append for c in columns]
    pairs = list(zip(appends, wanted, strict=True))
    for line in lines:
        text = _strip(line)
        if not text:
            continue  # an empty line holds no record
        fields = _fields(text, sep)
        if fields is None or len(fields) > width:
            for append in appends:
                append(None)
            continue
        n = len(fields)
        for append, i in pairs:
            append(fields[i] if i < n else None)
    return columns


def text_column(values: list[str | None]) -> pd.Series:
    """Text values as pandas' ``read_csv(dtype=str)`` holds them, markers missing.

    Parameters
    ----------
    values : list of str or None
        ``None`` is missing; so is every string of :data:`NA_STRINGS`.

    Returns
    -------
    pandas.Series
        Of pandas' default string dtype (``str`` in pandas 3, ``object`` before).
    """
    s = pd.Series(values, dtype=object)
    s = s.mask(s.isin(NA_STRINGS) | s.isna(), np.nan)
    return s.astype(_TEXT_DTYPE)


_TEXT_DTYPE = pd.Series(["x"], dtype=str).dtype
