"""The text tables of ``pandas-dp describe``: numbers, 95 % intervals, reliability marks.

Each released table is printed as a table of text cells, built here from the
release and its record (the intervals are read off the release as the HTML report
reads them, :func:`pandas_dp.cli.report_html.interval_lookup`; nothing is
recomputed):

* a missing value (a statistic a column does not have, such as the mean of a
  categorical column) is a blank cell, not ``NaN``;
* with ``intervals=True`` every estimate is followed by its 95 % interval in
  brackets, both rounded to the precision the interval supports, as in the HTML
  report (``44.3 (42.9 – 45.6)``);
* an estimate whose interval is wider than a stated fraction of its *yardstick*
  gets :data:`MARK` after it. The yardstick is what the declarations say the value
  can span: the declared range's width (max - min declared) for a mean, a standard
  deviation or a percentile of a numeric column, 1 for a share. A count has no
  declared range and is never marked.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Hashable, Mapping
from typing import Any

import pandas as pd

from pandas_dp.cli.report_html import as_tuple, format_estimate, interval_lookup

__all__ = [
    "DEFAULT_UNRELIABLE",
    "MARK",
    "footnote",
    "plain_number",
    "text_table",
    "yardstick",
]

#: The mark after an estimate whose interval is wide (see :func:`text_table`).
MARK = "*"
#: The default fraction of the yardstick above which an interval is wide.
DEFAULT_UNRELIABLE = 0.25


def plain_number(value: Any) -> str:
    """A number as the text table shows it without its interval.

    Parameters
    ----------
    value : Any
        A released number; ``None`` or NaN are a blank cell.

    Returns
    -------
    str
        A whole number (a noisy count) without decimals, others with three
        decimals (one from 1,000 on), with thousands separators.

    Examples
    --------
    >>> plain_number(996.0), plain_number(44.30312), plain_number(42965.14), plain_number(None)
    ('996', '44.303', '42,965.1', '')
    """
    if value is None:
        return ""
    v = float(value)
    if math.isnan(v):
        return ""
    if v.is_integer():  # a noisy count (a whole number)
        return f"{v:,.0f}"
    return f"{v:,.1f}" if abs(v) >= 1_000 else f"{v:,.3f}"


def _width(bounds: Mapping[Hashable, Any], column: Hashable) -> float | None:
    """The declared range's width of ``column`` (``None`` if not declared)."""
    pair = bounds.get(column)
    if pair is None:
        return None
    width = float(pair[1]) - float(pair[0])
    return width if math.isfinite(width) and width > 0 else None


def yardstick(kind: str, row: Any, column: Any, bounds: Mapping[Hashable, Any]) -> float | None:
    """What the declarations say a cell's value can span.

    Parameters
    ----------
    kind : {"describe", "agg", "proportions"}
        The release the cell belongs to: ``describe`` (rows ``count``, ``mean``,
        ..., ``share <category>``; one column per described column), ``agg`` (one
        row per group key; columns ``(column, statistic)``) or ``proportions`` (one
        row per group key, one column per category).
    row, column : Any
        The cell's labels in the printed table.
    bounds : mapping
        ``column -> (lower, upper)``: the release's declared bounds
        (``attrs["dp"].input_bounds``).

    Returns
    -------
    float or None
        1 for a share; the declared range's width for a mean, a standard deviation
        or a percentile; ``None`` for a count (no declared range) or an undeclared
        column.

    Examples
    --------
    >>> b = {"age": (18.0, 90.0)}
    >>> yardstick("describe", "50%", "age", b), yardstick("describe", "share N", "region", b)
    (72.0, 1.0)
    >>> yardstick("describe", "count", "age", b) is None, yardstick("agg", "N", ("age", "std"), b)
    (True, 72.0)
    """
    if kind == "proportions":
        return 1.0
    if kind == "agg":
        name, statistic = column
        return None if statistic == "count" else _width(bounds, name)
    label = str(row)
    if label.startswith("share "):
        return 1.0
    if label == "count":
        return None
    return _width(bounds, column)


def _key(kind: str, row: Any, column: Any) -> tuple[Hashable, ...]:
    """A printed cell's entry in the release's intervals (:func:`interval_lookup`)."""
    if kind == "describe":
        return (row, column)
    if kind == "agg":
        return (*as_tuple(row), *column)
    return (*as_tuple(row), column)


def _cell(
    value: Any,
    interval: tuple[float, float] | None,
    width: float | None,
    *,
    intervals: bool,
    unreliable: float | None,
) -> tuple[str, bool]:
    """A cell's text and whether it is marked."""
    if value is None or pd.isna(value):
        return "", False
    if intervals:
        lo, hi = interval if interval is not None else (math.nan, math.nan)
        text, band = format_estimate(value, lo, hi)
        text = text if band is None else f"{text} {band}"
    else:
        text = plain_number(value)
    wide = (
        unreliable is not None
        and interval is not None
        and width is not None
        and interval[1] - interval[0] > unreliable * width
    )
    return text, wide


def text_table(
    kind: str,
    table: pd.DataFrame,
    release: Any,
    *,
    intervals: bool = False,
    unreliable: float | None = DEFAULT_UNRELIABLE,
) -> tuple[pd.DataFrame, int]:
    """A released table as text cells: blanks for missing values, intervals, marks.

    Parameters
    ----------
    kind : {"describe", "agg", "proportions"}
        The release's kind (see :func:`yardstick`).
    table : pandas.DataFrame
        The table as printed: the release itself, its columns reordered, or (for
        ``proportions``) the release unstacked; its labels are the release's.
    release : DataFrame or Series
        The release itself, unchanged: its intervals and declared bounds are read
        from its ``attrs["dp"]``.
    intervals : bool, default False
        Follow every estimate by its 95 % interval, ``44.3 (42.9 – 45.6)``.
    unreliable : float, optional
        Mark (:data:`MARK`) an estimate whose 95 % interval is wider than this
        fraction of its yardstick (:func:`yardstick`); ``None`` marks nothing.

    Returns
    -------
    tuple of (pandas.DataFrame, int)
        The text table (same labels as ``table``) and how many cells are marked.
        In a column with a mark, unmarked cells end with a space, so the numbers
        stay aligned.

    Examples
    --------
    >>> import pandas as pd, pandas_dp
    >>> from pandas_dp.datasets import load_survey, survey_schema
    >>> d = load_survey().dp.describe(["age", "region"], epsilon=1.0,
    ...                                schema=survey_schema(), random_state=0)
    >>> text, marked = text_table("describe", d, d)
    >>> text.loc["share N", "age"], text.loc["count", "region"]
    ('', '')
    """
    found = interval_lookup(release)
    try:
        bounds = dict(release.attrs["dp"].input_bounds)
    except (KeyError, AttributeError):
        bounds = {}
    cells: dict[int, list[str]] = {}
    marked = 0
    for j, column in enumerate(table.columns):
        texts, marks = [], []
        for i, row in enumerate(table.index):
            key = _key(kind, row, column)
            width = yardstick(kind, row, column, bounds)
            text, wide = _cell(
                table.iloc[i, j],
                found.get(key),
                width,
                intervals=intervals,
                unreliable=unreliable,
            )
            texts.append(text)
            marks.append(wide)
        if any(marks):
            texts = [
                f"{t}{MARK}" if m else (f"{t} " if t else t)
                for t, m in zip(texts, marks, strict=True)
            ]
            marked += sum(marks)
        cells[j] = texts
    out = pd.DataFrame(
        {j: cells[j] for j in range(len(table.columns))}, index=table.index, dtype=object
    )
    out.columns = table.columns
    return out, marked


def footnote(marked: int, unreliable: float | None, *, intervals: bool) -> str:
    """The lines under the tables: what the intervals and the mark mean.

    Parameters
    ----------
    marked : int
        How many cells are marked.
    unreliable : float, optional
        The fraction of the yardstick (``None``: no cell was checked).
    intervals : bool
        Whether the intervals were printed.

    Returns
    -------
    str
        A few lines of at most 88 characters, without a final newline.

    Examples
    --------
    >>> print(footnote(2, 0.25, intervals=False))  # doctest: +NORMALIZE_WHITESPACE
    Every value is noisy; --intervals prints each with its 95% interval (so does the
    --html report).
    * 2 values: the 95% interval is wider than 25% of the declared range (max - min
    declared; 0 to 1 for a share): take them as rough guesses. Counts are never marked.
    """
    if intervals:
        lines = ["Every value is noisy; in brackets after it, its 95% interval."]
    else:
        lines = [
            "Every value is noisy; --intervals prints each with its 95% interval "
            "(so does the --html report)."
        ]
    if unreliable is None:
        return textwrap.fill(lines[0], width=88, subsequent_indent="  ")
    share = f"{unreliable * 100:g}%"
    if marked:
        what = "1 value" if marked == 1 else f"{marked} values"
        them = "it as a rough guess" if marked == 1 else "them as rough guesses"
        lines.append(
            f"{MARK} {what}: the 95% interval is wider than {share} of the declared range "
            f"(max - min declared; 0 to 1 for a share): take {them}. Counts are never "
            f"marked."
        )
    else:
        lines.append(
            f"No value is marked {MARK}: every 95% interval is at most {share} of its "
            f"declared range (max - min declared; 0 to 1 for a share)."
        )
    return "\n".join(textwrap.fill(line, width=88, subsequent_indent="  ") for line in lines)
