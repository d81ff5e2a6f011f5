"""The pieces of the HTML report: rounded numbers, estimate tables, SVG charts.

Every estimate is shown with its 95 % interval beside it, rounded to the precision
its interval supports (:func:`format_estimate`); the charts are inline SVG forest
plots (an interval bar and a tick at the estimate per row) whose axis is zoomed to
the intervals drawn, so an interval is never hidden behind its marker, and SVG
histograms of the noisy counts describe releases with its percentiles and their
intervals marked (:func:`histogram_svg`). No script,
no external file: the page :func:`pandas_dp.cli.report.write_html` assembles from
these pieces is self-contained.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from html import escape
from typing import Any, NamedTuple

import pandas as pd

from pandas_dp.errors import DerivedResultError

__all__ = [
    "Intervals",
    "Row",
    "estimate_cell",
    "forest_svg",
    "format_estimate",
    "format_number",
    "heading",
    "histogram_svg",
    "interval_lookup",
    "table_html",
]

Intervals = dict[tuple[Hashable, ...], tuple[float, float]]


# ----------------------------------------------------------------------------- numbers


def _finite(value: Any) -> bool:
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def _plain(text: str) -> str:
    """``text`` without a minus sign on a zero (``-0.0`` reads as ``0.0``)."""
    return text[1:] if text.startswith("-") and not text.strip("-0.,") else text


def format_number(value: Any, digits: int = 4) -> str:
    """A number to ``digits`` significant digits, with thousands separators.

    Parameters
    ----------
    value : Any
        A number (or ``None``/NaN, shown as an empty string).
    digits : int, default 4
        Significant digits kept.

    Returns
    -------
    str
        ``4`` for ``4.00000000029104``, ``49,487`` for ``49486.9``, ``3.281e+11``
        for very large or very small magnitudes.

    Examples
    --------
    >>> format_number(4.00000000029104), format_number(0.047619047619), format_number(1e-6)
    ('4', '0.04762', '1.000e-06')
    """
    try:
        v = float(value)
    except (TypeError, ValueError):
        return "" if value is None else str(value)
    if math.isnan(v):
        return ""
    if math.isinf(v):
        return "∞" if v > 0 else "−∞"
    if v == 0:
        return "0"
    size = abs(v)
    if size >= 1e9 or size < 1e-4:
        return f"{v:.{digits - 1}e}"
    if v.is_integer() or size >= 10 ** (digits - 1):
        return f"{v:,.0f}"
    decimals = digits - 1 - math.floor(math.log10(size))
    text = f"{v:,.{decimals}f}".rstrip("0").rstrip(".")
    return _plain(text)


def format_estimate(value: Any, lower: Any, upper: Any) -> tuple[str, str | None]:
    """An estimate and its interval, rounded to the precision the interval supports.

    The numbers are rounded where the margin of error (the interval's half-width)
    has its second significant digit: ``43.9`` and ``(42.5 – 45.3)`` for ``43.925``
    in ``[42.48, 45.28]``; ``49,500`` for ``49486.9`` in ``[43179, 55421]``. Whole
    numbers (noisy counts) keep no decimals.

    Parameters
    ----------
    value : Any
        The released estimate.
    lower, upper : Any
        Its interval; NaN, missing or of zero width (a declared bound): no interval.

    Returns
    -------
    tuple of (str, str or None)
        The estimate's text and the interval's text (``None`` when there is none).

    Examples
    --------
    >>> format_estimate(43.925, 42.48, 45.28)
    ('43.9', '(42.5 – 45.3)')
    >>> format_estimate(986, 957, 1016)
    ('986', '(957 – 1,016)')
    >>> format_estimate(90.0, 90.0, 90.0)
    ('90', None)
    """
    if not _finite(value):
        return "", None
    v = float(value)
    if not (_finite(lower) and _finite(upper)) or float(upper) - float(lower) <= 0:
        return format_number(v), None
    lo, hi = float(lower), float(upper)
    exponent = math.floor(math.log10((hi - lo) / 2)) - 1
    whole = all(float(x).is_integer() for x in (v, lo, hi))
    decimals = 0 if whole else min(max(0, -exponent), 12)

    def show(x: float) -> str:
        if exponent > 0:
            x = round(x / 10**exponent) * 10**exponent
        return _plain(f"{x:,.{decimals}f}")

    return show(v), f"({show(lo)} – {show(hi)})"


def interval_lookup(result: Any) -> Intervals:
    """``index entry (as a flat tuple) -> (lower, upper)`` of a release's 95 % intervals.

    Empty when the release has no interval (or its record is derived).
    """
    try:
        frame = result.attrs["dp"].interval(0.05)
    except (KeyError, NotImplementedError, DerivedResultError):  # no interval: none shown
        return {}
    if isinstance(frame, tuple):
        return {(): (float(frame[0]), float(frame[1]))}
    lows, highs = frame["lower"].to_numpy(), frame["upper"].to_numpy()
    return {
        _flat(k): (float(lo), float(hi)) for k, lo, hi in zip(frame.index, lows, highs, strict=True)
    }


def _flat(key: Any) -> tuple[Hashable, ...]:
    """An index entry as a flat tuple: ``(("E", False), "age", "mean")`` (several
    group keys nested in an entry) reads ``("E", False, "age", "mean")``."""
    if not isinstance(key, tuple):
        return (key,)
    return tuple(part for k in key for part in _flat(k))


def estimate_cell(value: Any, interval: tuple[float, float] | None) -> str:
    """A ``<td>`` holding the estimate and, beside it, its interval."""
    lo, hi = interval if interval is not None else (math.nan, math.nan)
    text, band = format_estimate(value, lo, hi)
    if not text:
        return '<td class="est"></td>'
    inner = f'<span class="value">{escape(text)}</span>'
    if band is not None:
        inner += f' <span class="ci">{escape(band)}</span>'
    return f'<td class="est">{inner}</td>'


# ----------------------------------------------------------------------------- tables


def table_html(
    header: Sequence[Sequence[tuple[str, int]]],
    rows: Sequence[Sequence[str]],
    *,
    row_heads: int = 1,
    caption: str | None = None,
    css: str = "estimates",
) -> str:
    """A table in its own horizontally scrolling container.

    Parameters
    ----------
    header : sequence of sequences of (str, int)
        Header rows: ``(text, colspan)`` per cell (text is escaped here).
    rows : sequence of sequences of str
        Body rows; the first ``row_heads`` entries are plain text (escaped, shown
        as ``<th>``), the rest ready-made ``<td>`` HTML (see :func:`estimate_cell`).
    row_heads : int, default 1
        How many leading entries of each row are row headers.
    caption : str, optional
        A caption (escaped).
    css : str, default "estimates"
        The table's class.

    Returns
    -------
    str
    """
    out = [f'<div class="scroll"><table class="{escape(css)}">']
    if caption:
        out.append(f"<caption>{escape(caption)}</caption>")
    out.append("<thead>")
    for line in header:
        cells = "".join(
            f'<th scope="col"{f" colspan={span}" if span > 1 else ""}>{escape(text)}</th>'
            for text, span in line
        )
        out.append(f"<tr>{cells}</tr>")
    out.append("</thead><tbody>")
    for row in rows:
        heads = "".join(f'<th scope="row">{escape(str(t))}</th>' for t in row[:row_heads])
        out.append(f"<tr>{heads}{''.join(row[row_heads:])}</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


# ----------------------------------------------------------------------------- charts


class Row(NamedTuple):
    """One line of a forest plot (a ``heading`` line only names the lines below it)."""

    label: str
    value: float
    lower: float
    upper: float
    text: str
    heading: bool = False


def heading(label: str) -> Row:
    """A line naming the group of lines below it (no estimate)."""
    return Row(label, math.nan, math.nan, math.nan, "", heading=True)


_WIDTH, _LEFT, _PLOT, _ROW, _TOP, _BOTTOM = 780, 170, 380, 24, 30, 40


def _nice_ticks(a: float, b: float) -> list[float]:
    raw = (b - a) / 5
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(a / step) * step
    return [first + k * step for k in range(int((b - first) / step + 1e-9) + 1)]


def _axis(rows: Sequence[Row], limits: tuple[float, float] | None) -> tuple[float, float]:
    """The axis range: every estimate and interval drawn, padded, within ``limits``."""
    seen = [x for r in rows for x in (r.value, r.lower, r.upper) if _finite(x)]
    a, b = (min(seen), max(seen)) if seen else (0.0, 1.0)
    pad = 0.06 * (b - a) if b > a else max(abs(a), 1.0) * 0.1
    a, b = a - pad, b + pad
    if limits is not None:
        a, b = max(a, limits[0]), min(b, limits[1])
    if not b > a:
        a, b = a - max(abs(a), 1.0) * 0.1, b + max(abs(b), 1.0) * 0.1
    return a, b


def _short(label: str, size: int = 24) -> str:
    return label if len(label) <= size else label[: size - 1] + "…"


def forest_svg(
    title: str,
    rows: Sequence[Row],
    *,
    axis_label: str,
    limits: tuple[float, float] | None = None,
    percent: bool = False,
    max_rows: int = 200,
) -> str:
    """An inline SVG forest plot: per row an interval bar and a tick at the estimate.

    The axis spans the estimates and intervals drawn (padded, and within
    ``limits``), not the whole declared range, so every interval is visible; an
    interval narrower than 2 px is drawn 2 px wide. The estimate and its interval
    are also written out at the right.

    Parameters
    ----------
    title : str
        Shown above the plot and as the SVG's accessible name.
    rows : sequence of Row
        One line each (label, estimate, interval, the text written at the right).
    axis_label : str
        Written under the axis.
    limits : tuple of float, optional
        The axis never leaves this range (the declared bounds, ``(0, 1)`` for shares).
    percent : bool, default False
        Tick labels as percentages (values in ``[0, 1]``).
    max_rows : int, default 200
        Draw at most this many lines (the title says so); the tables hold them all.

    Returns
    -------
    str
        A ``<svg>`` element (no namespace needed inside HTML).
    """
    if len(rows) > max_rows:
        title = f"{title} (the first {max_rows} lines of {len(rows)}; all are in the table)"
        rows = rows[:max_rows]
    a, b = _axis(rows, limits)
    height = _TOP + len(rows) * _ROW + _BOTTOM
    bottom = _TOP + len(rows) * _ROW

    def x(v: float) -> float:
        return _LEFT + (min(max(v, a), b) - a) / (b - a) * _PLOT

    parts = [
        f'<svg class="forest" viewBox="0 0 {_WIDTH} {height}" width="{_WIDTH}" '
        f'height="{height}" role="img"><title>{escape(title)}</title>',
        f'<text x="4" y="18" class="title">{escape(title)}</text>',
    ]
    for tick in _nice_ticks(a, b):
        label = f"{tick * 100:.0f}%" if percent else format_number(tick)
        parts.append(
            f'<line x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="{_TOP - 4}" y2="{bottom}" '
            f'class="grid"/><text x="{x(tick):.1f}" y="{bottom + 14}" '
            f'text-anchor="middle">{escape(label)}</text>'
        )
    parts.append(
        f'<text x="{_LEFT + _PLOT / 2}" y="{bottom + 32}" text-anchor="middle" '
        f'class="axis">{escape(axis_label)}</text>'
    )
    for i, row in enumerate(rows):
        y = _TOP + i * _ROW + _ROW / 2
        if row.heading:
            parts.append(
                f'<text x="4" y="{y + 4:.1f}" class="heading">'
                f"<title>{escape(row.label)}</title>{escape(_short(row.label, 60))}</text>"
            )
            continue
        parts.append(
            f'<text x="{_LEFT - 8}" y="{y + 4:.1f}" text-anchor="end">'
            f"<title>{escape(row.label)}</title>{escape(_short(row.label))}</text>"
        )
        if _finite(row.lower) and _finite(row.upper):
            x0, x1 = x(row.lower), x(row.upper)
            if x1 - x0 < 2.0:  # too narrow to see: 2 px around its centre
                x0, x1 = (x0 + x1) / 2 - 1.0, (x0 + x1) / 2 + 1.0
            parts.append(
                f'<rect x="{x0:.1f}" y="{y - 6:.1f}" width="{x1 - x0:.1f}" height="12" '
                f'class="band"/>'
            )
        if _finite(row.value):
            parts.append(
                f'<line x1="{x(row.value):.1f}" x2="{x(row.value):.1f}" y1="{y - 9:.1f}" '
                f'y2="{y + 9:.1f}" class="mark"/>'
            )
        parts.append(f'<text x="{_LEFT + _PLOT + 12}" y="{y + 4:.1f}">{escape(row.text)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def row_of(label: str, value: Any, interval: tuple[float, float] | None) -> Row:
    """A :class:`Row` with the estimate's rounded text (``44.1 (41.8 – 46.3)``)."""
    lo, hi = interval if interval is not None else (math.nan, math.nan)
    text, band = format_estimate(value, lo, hi)
    v = float(value) if _finite(value) else math.nan
    return Row(label, v, lo, hi, text if band is None else f"{text} {band}")


def key_text(key: Any) -> str:
    """A group key as text: ``"E"``, or ``"E, 2024"`` for several key columns."""
    return ", ".join(map(str, key)) if isinstance(key, tuple) else str(key)


def as_tuple(key: Any) -> tuple[Any, ...]:
    """A group key as a tuple (one key column: a 1-tuple)."""
    return key if isinstance(key, tuple) else (key,)


def index_header(index: pd.Index) -> list[str]:
    """The names of an index's levels, for the row-header columns."""
    return [str(n) if n is not None else "" for n in index.names]


# ----------------------------------------------------------------------------- histograms

_H_LEFT, _H_PLOT, _H_TITLE, _H_MARK, _H_BARS = 60, 640, 30, 13, 150


def histogram_svg(
    title: str,
    edges: Sequence[float],
    counts: Sequence[float],
    marks: Sequence[Row],
    *,
    axis_label: str,
) -> str:
    """An inline SVG histogram of noisy counts, with percentiles and their intervals.

    Each bin is a bar from its edges (the x axis is the bins' whole range, the
    declared one); the y axis counts from 0 to the largest count (a negative noisy
    count is drawn as 0). Each of ``marks`` (a percentile) has its own line above
    the bars: its 95 % interval as a bar with end caps, named at its left, and a
    line at its estimate down through the bars.

    Parameters
    ----------
    title : str
        Shown above the plot and as the SVG's accessible name.
    edges : sequence of float
        The bins' edges, increasing (``len(counts) + 1`` of them).
    counts : sequence of float
        The noisy count of each bin.
    marks : sequence of Row
        The percentiles: label (``25%``), estimate and interval.
    axis_label : str
        Written under the x axis.

    Returns
    -------
    str
        A ``<svg>`` element.
    """
    a, b = float(edges[0]), float(edges[-1])
    span = b - a if b > a else 1.0
    heights = [max(float(c), 0.0) if _finite(c) else 0.0 for c in counts]
    top = max(max(heights, default=0.0), 1.0)
    shown = [m for m in marks if _finite(m.value)]
    bars_top = _H_TITLE + _H_MARK * len(shown) + 8
    base = bars_top + _H_BARS
    width, height = _H_LEFT + _H_PLOT + 24, base + 44

    def x(v: float) -> float:
        return _H_LEFT + (min(max(v, a), b) - a) / span * _H_PLOT

    def y(count: float) -> float:
        return base - count / top * _H_BARS

    parts = [
        f'<svg class="histogram" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img"><title>{escape(title)}</title>',
        f'<text x="4" y="16" class="title">{escape(title)}</text>',
    ]
    for tick in _nice_ticks(0.0, top):
        parts.append(
            f'<line x1="{_H_LEFT}" x2="{_H_LEFT + _H_PLOT}" y1="{y(tick):.1f}" '
            f'y2="{y(tick):.1f}" class="grid"/><text x="{_H_LEFT - 6}" y="{y(tick) + 4:.1f}" '
            f'text-anchor="end">{escape(format_number(tick))}</text>'
        )
    for lo, hi, h in zip(edges[:-1], edges[1:], heights, strict=True):
        x0, x1 = x(float(lo)), x(float(hi))
        parts.append(
            f'<rect x="{x0:.1f}" y="{y(h):.1f}" width="{max(x1 - x0 - 1.0, 0.5):.1f}" '
            f'height="{base - y(h):.1f}" class="bar"/>'
        )
    for tick in _nice_ticks(a, b):
        parts.append(
            f'<text x="{x(tick):.1f}" y="{base + 16}" text-anchor="middle">'
            f"{escape(format_number(tick))}</text>"
        )
    parts.append(
        f'<text x="{_H_LEFT + _H_PLOT / 2}" y="{base + 36}" text-anchor="middle" '
        f'class="axis">{escape(axis_label)}</text>'
    )
    parts.append(
        f'<line x1="{_H_LEFT}" x2="{_H_LEFT + _H_PLOT}" y1="{base}" y2="{base}" class="baseline"/>'
    )
    for i, mark in enumerate(shown):
        row = _H_TITLE + _H_MARK * i + _H_MARK / 2
        xv = x(mark.value)
        x0, x1 = xv, xv
        if _finite(mark.lower) and _finite(mark.upper):
            x0, x1 = x(mark.lower), x(mark.upper)
        parts.append(
            f'<g class="percentile"><title>{escape(mark.label)}: {escape(mark.text)}</title>'
            f'<line x1="{x0:.1f}" x2="{x1:.1f}" y1="{row:.1f}" y2="{row:.1f}" class="pband"/>'
            f'<line x1="{x0:.1f}" x2="{x0:.1f}" y1="{row - 4:.1f}" y2="{row + 4:.1f}" '
            f'class="pcap"/><line x1="{x1:.1f}" x2="{x1:.1f}" y1="{row - 4:.1f}" '
            f'y2="{row + 4:.1f}" class="pcap"/>'
            f'<line x1="{xv:.1f}" x2="{xv:.1f}" y1="{row - 5:.1f}" y2="{base}" class="pmark"/>'
            f'<text x="{x0 - 6:.1f}" y="{row + 4:.1f}" text-anchor="end" class="plabel">'
            f"{escape(mark.label)}</text></g>"
        )
    parts.append("</svg>")
    return "".join(parts)
