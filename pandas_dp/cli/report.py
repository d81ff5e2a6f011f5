"""The report of ``pandas-dp describe``: what was released, printed and as HTML.

:class:`Report` holds the releases of one run, their budget and the public facts
used; :func:`print_report` prints the tables like pandas with the ledger, and
:func:`write_html` writes one self-contained page (every estimate with its 95 %
interval beside it, inline SVG charts of the intervals, the metadata and the ledger
as tables; the pieces are in :mod:`pandas_dp.cli.report_html`).
"""

from __future__ import annotations

import html
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

import pandas_dp
from pandas_dp.cli.report_html import (
    Intervals,
    Row,
    as_tuple,
    estimate_cell,
    forest_svg,
    format_number,
    heading,
    histogram_svg,
    index_header,
    interval_lookup,
    key_text,
    row_of,
    table_html,
)
from pandas_dp.cli.report_text import DEFAULT_UNRELIABLE, footnote, text_table

__all__ = ["Report", "print_report", "write_html"]


@dataclass
class Report:
    """What ``pandas-dp describe`` released, for printing and for the HTML report.

    Attributes
    ----------
    source : str
        The data file's name.
    by : list of str
        The grouping columns (empty: no group-by).
    numeric, categorical : list of str
        The described columns by kind.
    undeclared : list of str
        Columns of the schema that declare neither bounds nor categories (skipped).
    releases : dict
        ``name -> release`` (a DataFrame or Series with ``attrs["dp"]``), in order.
    budget : PrivacyBudget
        The budget every release was charged to.
    declarations : pandas.DataFrame
        The public facts used: bounds or categories per column.
    settings : dict
        epsilon, delta, mechanism, seed.
    columns : list of str
        The described columns in the declared order (the schema's, or
        ``--columns``'): the printed tables keep it. Empty: the releases' order.
    """

    source: str
    by: list[str]
    numeric: list[str]
    categorical: list[str]
    undeclared: list[str]
    releases: dict[str, Any]
    budget: pandas_dp.PrivacyBudget
    declarations: pd.DataFrame
    settings: dict[str, Any] = field(default_factory=dict)
    columns: list[str] = field(default_factory=list)


# ----------------------------------------------------------------------------- printing


def _kind(name: str) -> str:
    """A release's kind from its name in :attr:`Report.releases`."""
    return name if name in ("describe", "agg") else "proportions"


def _tables(report: Report) -> list[tuple[str, pd.DataFrame]]:
    """The released tables with a title each, as a reader sees them: the columns
    in the declared order, a grouped share's categories in the release's (declared)
    order, where ``unstack`` would sort them."""
    tables: list[tuple[str, pd.DataFrame]] = []
    for name, result in report.releases.items():
        if name == "describe":
            order = [c for c in report.columns if c in result.columns]
            rest = [c for c in result.columns if c not in order]
            tables.append(("describe", result.reindex(columns=[*order, *rest])))
        elif name == "agg":
            tables.append((f"count, mean and std by {', '.join(report.by)}", result))
        else:
            column = name.split(" ", 1)[1]
            categories = list(dict.fromkeys(result.index.get_level_values(-1)))
            table = result.unstack(level=-1).reindex(columns=categories)
            tables.append((f"shares of {column} within {', '.join(report.by)}", table))
    return tables


def _ledger(report: Report) -> pd.DataFrame:
    """The budget's ledger as printed: what each release read, how it was grouped and
    on which privacy unit, and what it spent."""
    wanted = ["statistic", "columns", "groups", "keys", "privacy_unit"]
    wanted += ["epsilon", "delta", "mechanism"]
    ledger = report.budget.ledger
    return ledger[[c for c in wanted if c in ledger.columns]]


def print_report(
    report: Report,
    out: IO[str],
    *,
    intervals: bool = False,
    unreliable: float | None = DEFAULT_UNRELIABLE,
) -> None:
    """Print the report as text: the settings, each released table, the ledger.

    Missing values are blank cells; an estimate whose 95 % interval is wider than
    ``unreliable`` of its declared range is marked (see
    :func:`pandas_dp.cli.report_text.text_table`), and a footnote says so.

    Parameters
    ----------
    report : Report
        What was released.
    out : text stream
        Where to print.
    intervals : bool, default False
        Follow every estimate by its 95 % interval.
    unreliable : float, optional
        The fraction of the declared range above which an interval is wide
        (default 0.25); ``None``: no mark.
    """
    s = report.settings
    delta = f", delta {s['delta']:g}" if s["delta"] else ""
    noise = "" if s["seed"] is None else f", seed {s['seed']} (reproducible, insecure noise)"
    out.write(
        f"pandas-dp describe: {report.source}, epsilon {s['epsilon']:g}{delta} "
        f"({s['mechanism']}){noise}\n"
    )
    out.write(f"{_provenance(report)}\n")
    if report.undeclared:
        out.write(f"Not described ({_why_undescribed(report)}): {report.undeclared}\n")
    marked = 0
    for (title, table), (name, result) in zip(
        _tables(report), report.releases.items(), strict=True
    ):
        text, count = text_table(
            _kind(name), table, result, intervals=intervals, unreliable=unreliable
        )
        marked += count
        out.write(f"\n{title}\n{text.to_string(na_rep='')}\n")
    out.write(f"\n{footnote(marked, unreliable, intervals=intervals)}\n\n")
    ledger = _ledger(report)
    ledger = ledger.astype(object).where(ledger.notna(), "")  # None prints as a blank too
    if "delta" in ledger.columns:  # (pandas would print 5e-07 as 0.0 in an object column)
        ledger["delta"] = [f"{v:g}" if isinstance(v, float) else v for v in ledger["delta"]]
    out.write(f"{report.budget}\n{ledger.to_string()}\n")


def _why_undescribed(report: Report) -> str:
    """Why the report's undescribed columns were left out."""
    if report.settings.get("auto"):
        return "no value passed the private selection of categories"
    return "no bounds or categories declared"


def _provenance(report: Report) -> str:
    """Where the bounds, categories and keys came from (one sentence or two)."""
    if not report.settings.get("auto"):
        return (
            "Bounds, categories and group keys come from the schema, never from the data; "
            "the number of rows is private."
        )
    types = report.settings.get("types", "schema")
    typed = (
        " Column types were read from the file and are treated as public."
        if types != "schema"
        else ""
    )
    return (
        "--auto: bounds and categories the schema does not declare were released "
        "privately first (marked below; their cost is in the ledger), the rest come "
        f"from the schema; the number of rows is private.{typed}"
    )


# ----------------------------------------------------------------------------- HTML


def _figure(caption: str, svg: str) -> str:
    return f"<figure>{svg}<figcaption>{html.escape(caption)}</figcaption></figure>"


def _bounds(result: Any, column: Any) -> tuple[float, float] | None:
    """A column's declared bounds from the release's record (``None`` if absent)."""
    bounds = result.attrs["dp"].input_bounds.get(column)
    return None if bounds is None else (float(bounds[0]), float(bounds[1]))


def _means_chart(report: Report, result: pd.DataFrame, found: Intervals) -> str:
    """The numeric columns' means side by side, each scaled to its declared range."""
    means: list[Row] = []
    for c in report.numeric:
        bounds = _bounds(result, c)
        if bounds is None or not bounds[1] > bounds[0]:
            continue
        lo, span = bounds[0], bounds[1] - bounds[0]
        one = row_of(str(c), result.loc["mean", c], found.get(("mean", c)))
        scaled = [(x - lo) / span for x in (one.value, one.lower, one.upper)]
        means.append(one._replace(value=scaled[0], lower=scaled[1], upper=scaled[2]))
    svg = forest_svg(
        "Means, each as a share of its declared range",
        means,
        axis_label="position in the declared range (0% = lower bound, 100% = upper)",
        limits=(0.0, 1.0),
        percent=True,
    )
    return _figure("means", svg)


def _histogram_figure(column: Any, record: dict[str, Any], percentiles: list[Row]) -> str:
    """A numeric column's noisy histogram with its percentiles and their intervals."""
    edges, counts = record["edges"], record["counts"]
    svg = histogram_svg(
        f"{column}: noisy histogram, percentiles with 95% intervals",
        edges,
        counts,
        percentiles,
        axis_label=f"{column} ({len(counts)} bins of the declared range; values outside "
        f"it counted at its ends)",
    )
    cost = record.get("epsilon", 0.0)
    how = (
        "read off the percentiles' noisy tree, no extra epsilon"
        if not cost
        else f"noisy counts, epsilon {format_number(cost)}"
    )
    return _figure(f"{column}: histogram ({how})", svg)


def _describe_html(report: Report, result: pd.DataFrame) -> list[str]:
    """The describe release: numeric table, categorical shares, their charts."""
    found = interval_lookup(result)
    parts: list[str] = []
    if report.numeric:
        stats = [r for r in result.index if not str(r).startswith("share ")]
        rows = [
            [str(r), *(estimate_cell(result.loc[r, c], found.get((r, c))) for c in report.numeric)]
            for r in stats
        ]
        header = [[("", 1), *((str(c), 1) for c in report.numeric)]]
        parts.append("<h3>Numeric columns</h3>")
        parts.append(table_html(header, rows))
        charts = [_means_chart(report, result, found)]
        histograms = result.attrs["dp"].details.get("histograms", {})
        for c in report.numeric:
            bounds = _bounds(result, c)
            wanted = [r for r in stats if r == "mean" or str(r).endswith("%")]
            lines = [row_of(str(r), result.loc[r, c], found.get((r, c))) for r in wanted]
            if c in histograms:
                marks = [line for line in lines if line.label.endswith("%")]
                charts.append(_histogram_figure(c, histograms[c], marks))
            title = f"{c}: mean and percentiles, 95% intervals"
            axis = str(c)
            if bounds is not None:
                axis += f" (declared range {format_number(bounds[0])} – {format_number(bounds[1])})"
            svg = forest_svg(title, lines, axis_label=axis, limits=bounds)
            charts.append(_figure(str(c), svg))
        parts.append(f'<div class="charts">{"".join(charts)}</div>')
    share_rows = [r for r in result.index if str(r).startswith("share ")]
    # numeric answer scales with shares (describe's shares="auto"), then categorical columns
    scales = [c for c in report.numeric if result.loc[share_rows, c].notna().any()]
    if report.categorical or scales:
        rows, charts = [], []
        for c in [*scales, *report.categorical]:
            shares = [r for r in share_rows if pd.notna(result.loc[r, c])]
            lines = []
            for r in shares:
                category = str(r)[len("share ") :]
                rows.append([str(c), category, estimate_cell(result.loc[r, c], found.get((r, c)))])
                lines.append(row_of(category, result.loc[r, c], found.get((r, c))))
            title = f"{c}: shares, 95% intervals"
            svg = forest_svg(title, lines, axis_label=f"share of {c}", limits=(0.0, 1.0))
            charts.append(_figure(str(c), svg))
        header = [[("column", 1), ("category", 1), ("share (95% interval)", 1)]]
        heading = "Categorical columns"
        if scales:
            heading = "Shares: answer scales" + (
                " and categorical columns" * bool(report.categorical)
            )
        parts.append(f"<h3>{heading}</h3>")
        parts.append(table_html(header, rows, row_heads=2))
        parts.append(f'<div class="charts">{"".join(charts)}</div>')
    return parts


def _agg_html(report: Report, result: pd.DataFrame) -> list[str]:
    """The grouped count, mean and std: one wide table, a chart of means per column."""
    found = interval_lookup(result)
    heads = index_header(result.index)
    pairs: list[tuple[Any, Any]] = [(c[0], c[1]) for c in result.columns.to_list()]
    columns = list(dict.fromkeys(c for c, _ in pairs))
    header = [
        [
            *((h, 1) for h in heads),
            *((str(c), int((result.columns.get_level_values(0) == c).sum())) for c in columns),
        ],
        [*(("", 1) for _ in heads), *((str(s), 1) for _, s in pairs)],
    ]
    rows = []
    for key, line in result.iterrows():
        k = as_tuple(key)
        cells = [estimate_cell(line[(c, s)], found.get((*k, c, s))) for c, s in pairs]
        rows.append([*map(str, k), *cells])
    charts = []
    by = ", ".join(map(str, report.by))
    for c in columns:
        if (c, "mean") not in result.columns:
            continue
        lines = [
            row_of(
                key_text(key), result.loc[key, (c, "mean")], found.get((*as_tuple(key), c, "mean"))
            )
            for key in result.index
        ]
        svg = forest_svg(
            f"{c}: mean by {by}, 95% intervals",
            lines,
            axis_label=f"mean of {c}",
            limits=_bounds(result, c),
        )
        charts.append(_figure(str(c), svg))
    return [
        table_html(header, rows, row_heads=len(heads)),
        f'<div class="charts">{"".join(charts)}</div>',
    ]


def _proportions_html(report: Report, name: str, result: pd.Series) -> list[str]:
    """The shares of one categorical column within each group: table and chart."""
    found = interval_lookup(result)
    column = name.split(" ", 1)[1]
    table = result.unstack(level=-1)
    heads = index_header(table.index)
    header = [[*((h, 1) for h in heads), *((str(c), 1) for c in table.columns)]]
    rows = [
        [
            *map(str, as_tuple(key)),
            *(estimate_cell(line[c], found.get((*as_tuple(key), c))) for c in table.columns),
        ]
        for key, line in table.iterrows()
    ]
    by = ", ".join(map(str, report.by))
    lines: list[Row] = []  # per group: a heading, then its categories
    group: str | None = None
    for key, value in result.items():
        k = as_tuple(key)
        if key_text(k[:-1]) != group:
            group = key_text(k[:-1])
            lines.append(heading(f"{by} = {group}"))
        lines.append(row_of(str(k[-1]), value, found.get(k)))
    svg = forest_svg(
        f"{column}: shares within {by}, 95% intervals",
        lines,
        axis_label=f"share of {column}",
        limits=(0.0, 1.0),
    )
    return [
        table_html(header, rows, row_heads=len(heads)),
        f'<div class="charts">{_figure(column, svg)}</div>',
    ]


def _text(value: Any) -> str:
    """A metadata value as readable text: rounded numbers, lists and mappings spelled out."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | float | np.integer | np.floating):
        return format_number(value)
    if isinstance(value, pd.Series):
        value = value.to_dict()
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_text(v)}" for k, v in value.items())
    if isinstance(value, list | tuple | np.ndarray):
        numbers = (int, float, np.integer, np.floating)
        pair = len(value) == 2 and not any(isinstance(v, bool) for v in value)
        if pair and all(isinstance(v, numbers) for v in value):
            return f"{format_number(value[0])} – {format_number(value[1])}"
        return ", ".join(_text(v) for v in value)
    return str(value)


def _cells(values: list[Any]) -> list[str]:
    return [f'<td class="text">{html.escape(_text(v))}</td>' for v in values]


def _metadata_html(report: Report) -> list[str]:
    """The releases' records as three tables: one row per release, per noised part,
    per method note."""
    header = [
        [(h, 1) for h in ("release", "statistic", "columns", "epsilon", "delta",
                           "mechanism", "neighbouring", "bounding", "randomness", "groups",
                           "privacy unit", "contribution bounds", "declared bounds")]
    ]  # fmt: skip
    summary, noise, notes = [], [], []
    for name, result in report.releases.items():
        m = result.attrs["dp"]
        groups = ""
        if m.groups:
            count = "" if m.n_keys is None else f", {m.n_keys}"
            groups = f"{', '.join(map(str, m.groups))} ({m.keys} keys{count})"
        secure = "OS CSPRNG" if m.secure else "seeded (insecure)"
        summary.append([name, *_cells([
            m.statistic, list(map(str, m.columns)), m.epsilon, m.delta, m.mechanism,
            m.neighbouring, m.bounding, secure, groups, m.privacy_unit or "each row",
            m.contribution_bounds, {str(k): v for k, v in m.input_bounds.items()},
        ])])  # fmt: skip
        split = dict(m.details.get("budget_split", {}))
        noised = dict(m.details.get("noised", {}))
        if isinstance(m.sensitivity, pd.Series):
            for part in m.sensitivity.index:
                scale = m.scale[part] if isinstance(m.scale, pd.Series) else m.scale
                noise.append([name, str(part), *_cells(
                    [noised.get(part), split.get(part), m.sensitivity[part], scale]
                )])  # fmt: skip
        else:
            noise.append(
                [name, "whole release", *_cells([None, m.epsilon, m.sensitivity, m.scale])]
            )
        skip = {"budget_split", "noised", "contribution bounds", "groups", "privacy unit"}
        for key, value in m.details.items():
            if key == "histograms":  # drawn above: how each was made, not its counts
                value = {c: h["source"] for c, h in value.items()}
            if key not in skip:
                notes.append([name, str(key), *_cells([value])])
    noise_header = [[(h, 1) for h in ("release", "measured part", "what was noised",
                                      "epsilon", "sensitivity", "noise scale")]]  # fmt: skip
    return [
        "<h3>Releases</h3>",
        table_html(header, summary, css="meta"),
        "<h3>Noise added</h3>",
        table_html(noise_header, noise, row_heads=2, css="meta"),
        "<h3>How each release was computed</h3>",
        table_html([[("release", 1), ("item", 1), ("", 1)]], notes, row_heads=2, css="meta"),
    ]


def _budget_text(budget: pandas_dp.PrivacyBudget) -> str:
    """The budget in a sentence: its cap and what the releases spent."""
    spent = budget.spent
    name = f" “{budget.name}”" if budget.name else ""
    count = len(budget.ledger)
    return (
        f"Budget{name}: epsilon {format_number(budget.epsilon)}, delta {budget.delta:g}; "
        f"spent epsilon {format_number(spent.epsilon)}, delta {spent.delta:g} "
        f"in {count} release{'s' if count != 1 else ''}."
    )


def _ledger_html(report: Report) -> str:
    ledger = _ledger(report)
    header = [[("", 1), *((str(c).replace("_", " "), 1) for c in ledger.columns)]]
    rows = [[str(i), *_cells(list(line))] for i, line in ledger.iterrows()]
    return table_html(header, rows, css="meta")


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em;
       padding: 0 1em; color: #222; overflow-wrap: anywhere; }
.scroll { overflow-x: auto; max-width: 100%; margin: 0.5em 0 1.5em; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f3f3f3; overflow-wrap: normal; }
th[colspan] { text-align: center; }
tbody th { white-space: nowrap; }
table.meta th { text-align: left; }
td.est { white-space: nowrap; font-variant-numeric: tabular-nums; }
td.est .ci { color: #666; font-size: 0.85em; }
td.text { text-align: left; min-width: 8em; max-width: 40em; overflow-wrap: normal; }
.charts { display: flex; flex-wrap: wrap; gap: 0.5em 1.5em; }
figure { margin: 0.5em 0; max-width: 100%; }
figcaption { color: #555; font-size: 0.85em; }
svg.forest { max-width: 100%; height: auto; font-size: 12px; font-family: inherit; }
svg.forest .title { font-weight: 600; font-size: 13px; }
svg.forest .axis { fill: #555; }
svg.forest .heading { font-weight: 600; fill: #333; }
svg.forest .grid { stroke: #e4e4e4; }
svg.forest .band { fill: #9ecae1; stroke: #3182bd; }
svg.forest .mark { stroke: #08306b; stroke-width: 2.5; }
svg.histogram { max-width: 100%; height: auto; font-size: 12px; font-family: inherit; }
svg.histogram .title { font-weight: 600; font-size: 13px; }
svg.histogram .axis { fill: #555; }
svg.histogram .grid { stroke: #e4e4e4; }
svg.histogram .baseline { stroke: #888; }
svg.histogram .bar { fill: #bdbdbd; }
svg.histogram .pband { stroke: #3182bd; stroke-width: 5; stroke-opacity: 0.55; }
svg.histogram .pcap { stroke: #3182bd; stroke-width: 1.5; }
svg.histogram .pmark { stroke: #08306b; stroke-width: 2; }
svg.histogram .plabel { fill: #08306b; font-weight: 600; }
.note { color: #555; }
"""


def write_html(report: Report, path: str | os.PathLike[str]) -> None:
    """Write a self-contained HTML report: no script, no external file.

    Each estimate appears with its 95 % interval beside it, rounded to the
    precision the interval supports; inline SVG charts draw every interval on an
    axis zoomed to it; the releases' records and the budget's ledger are tables.
    Wide tables scroll inside their own box.

    Parameters
    ----------
    report : Report
        What was released.
    path : str or path-like
        The file to write.
    """
    s = report.settings
    esc = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>pandas-dp describe: {esc(report.source)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>Private summary of {esc(report.source)}</h1>",
        f"<p>pandas-dp {esc(pandas_dp.__version__)}; total epsilon {format_number(s['epsilon'])}, "
        f"delta {s['delta']:g}, {esc(s['mechanism'])} mechanism; "
        + (
            "noise from the operating system's CSPRNG."
            if s["seed"] is None
            else f"seed {s['seed']}: reproducible, <strong>insecure</strong> noise."
        )
        + "</p>",
        '<p class="note">Every value below is a differentially private release, shown '
        f"with its 95% interval in brackets. {esc(_provenance(report))} Each interval "
        "covers the exact statistic of the data clamped to the declared bounds.</p>",
        "<h2>Public facts used</h2>"
        if report.settings.get("auto")
        else "<h2>Declared public facts</h2>",
        table_html(
            [[(str(c), 1) for c in report.declarations.columns]],
            [
                [str(line.iloc[0]), *_cells(list(line.iloc[1:]))]
                for _, line in report.declarations.iterrows()
            ],
            css="meta",
        ),
    ]
    if report.undeclared:
        parts.append(
            f"<p>Not described ({esc(_why_undescribed(report))}): "
            f"{esc(', '.join(map(str, report.undeclared)))}</p>"
        )
    parts.append("<h2>Estimates and 95% intervals</h2>")
    for (title, _), (name, result) in zip(_tables(report), report.releases.items(), strict=True):
        parts.append(f"<h3>{esc(title)}</h3>")
        if name == "describe":
            parts.extend(_describe_html(report, result))
        elif name == "agg":
            parts.extend(_agg_html(report, result))
        else:
            parts.extend(_proportions_html(report, name, result))
    parts.append("<h2>Metadata of each release</h2>")
    parts.extend(_metadata_html(report))
    parts.append("<h2>Budget ledger</h2>")
    parts.append(f"<p>{esc(_budget_text(report.budget))}</p>")
    parts.append(_ledger_html(report))
    parts.append("</body></html>")
    Path(path).write_text("\n".join(parts), encoding="utf-8")
