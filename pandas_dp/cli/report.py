"""The report of ``pandas-dp describe``: what was released, printed and as HTML.

:class:`Report` holds the releases of one run, their budget and the public facts
used; :func:`print_report` prints the tables like pandas with the ledger, and
:func:`write_html` writes one self-contained page (inline PNG plots of every
estimate with its interval, the metadata, the ledger).
"""

from __future__ import annotations

import base64
import html
import io
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

import pandas_dp

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


# ----------------------------------------------------------------------------- printing


def _number(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    v = float(value)
    if v.is_integer():  # a noisy count (a whole number)
        return f"{v:,.0f}"
    return f"{v:,.1f}" if abs(v) >= 1_000 else f"{v:,.3f}"


def _tables(report: Report) -> list[tuple[str, pd.DataFrame]]:
    """The released tables with a title each, as a reader sees them."""
    tables: list[tuple[str, pd.DataFrame]] = []
    for name, result in report.releases.items():
        if name == "describe":
            tables.append(("describe", result))
        elif name == "agg":
            tables.append((f"count, mean and std by {', '.join(report.by)}", result))
        else:
            column = name.split(" ", 1)[1]
            table = result.unstack(level=-1)
            tables.append((f"shares of {column} within {', '.join(report.by)}", table))
    return tables


def _ledger(report: Report) -> pd.DataFrame:
    """The budget's ledger as printed: what each release read, how it was grouped and
    on which privacy unit, and what it spent."""
    wanted = ["statistic", "columns", "groups", "keys", "privacy_unit"]
    wanted += ["epsilon", "delta", "mechanism"]
    ledger = report.budget.ledger
    return ledger[[c for c in wanted if c in ledger.columns]]


def print_report(report: Report, out: IO[str]) -> None:
    s = report.settings
    delta = f", delta {s['delta']:g}" if s["delta"] else ""
    noise = "" if s["seed"] is None else f", seed {s['seed']} (reproducible, insecure noise)"
    out.write(
        f"pandas-dp describe: {report.source}, epsilon {s['epsilon']:g}{delta} "
        f"({s['mechanism']}){noise}\n"
    )
    out.write(
        "Bounds, categories and group keys come from the schema, never from the data; "
        "the number of rows is private.\n"
    )
    if report.undeclared:
        out.write(f"Not described (no bounds or categories declared): {report.undeclared}\n")
    for title, table in _tables(report):
        out.write(f"\n{title}\n{table.to_string(float_format=_number)}\n")
    out.write(
        "\nEvery value is noisy; its 95% interval is in the release's metadata "
        "(and in the --html report).\n\n"
    )
    out.write(f"{report.budget}\n{_ledger(report).to_string()}\n")


# ----------------------------------------------------------------------------- HTML


def _interval_table(result: Any) -> pd.DataFrame:
    """The release's 95 % intervals as a table of "[lower, upper]" strings."""
    frame = result.attrs["dp"].interval(0.05)
    text = frame.apply(lambda r: f"[{_number(r['lower'])}, {_number(r['upper'])}]", axis=1)
    return pd.DataFrame({"95% interval": text})


def _figures(report: Report) -> list[tuple[str, str]]:
    """``(column, base64 PNG)`` per described column; empty without matplotlib."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        return []

    from pandas_dp.plotting.plots import plot_groups

    pictures: list[tuple[str, str]] = []

    def save(figure: Any) -> str:
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=90)
        return base64.b64encode(buffer.getvalue()).decode("ascii")

    def errorbars(
        ax: Any, labels: list[str], values: np.ndarray, lo: np.ndarray, hi: np.ndarray
    ) -> None:
        x = np.arange(len(labels), dtype=np.float64)
        yerr = np.vstack([np.maximum(values - lo, 0.0), np.maximum(hi - values, 0.0)])
        ax.errorbar(x, values, yerr=yerr, fmt="o", capsize=5, label="release, 95% interval")
        ax.set_xticks(x)
        ax.set_xticklabels(labels, rotation=0 if len(labels) <= 8 else 45)
        ax.set_xlim(-0.6, len(labels) - 0.4)
        ax.legend(fontsize="small")

    for name, result in report.releases.items():
        meta = result.attrs["dp"]
        frame = meta.interval(0.05)
        if name == "describe":
            for c in report.numeric:
                figure = Figure(figsize=(3.6, 3.6), layout="constrained")
                ax = figure.subplots()
                row = frame.loc[("mean", c)]
                value = float(result.loc["mean", c])
                errorbars(
                    ax,
                    [c],
                    np.array([value]),
                    np.array([float(row["lower"])]),
                    np.array([float(row["upper"])]),
                )
                lo, hi = meta.input_bounds[c]
                ax.set_ylim(lo, hi)
                ax.set_ylabel(f"mean of {c} (declared bounds)")
                ax.set_title(f"{c}: mean, ε={meta.epsilon:g} for the table", fontsize="medium")
                pictures.append((c, save(figure)))
            for c in report.categorical:
                rows = [r for r in result.index if str(r).startswith("share ")]
                rows = [r for r in rows if pd.notna(result.loc[r, c])]
                figure = Figure(figsize=(max(3.6, 0.7 * len(rows) + 2), 3.6), layout="constrained")
                ax = figure.subplots()
                values = np.array([float(result.loc[r, c]) for r in rows])
                lo = np.array([float(frame.loc[(r, c), "lower"]) for r in rows])
                hi = np.array([float(frame.loc[(r, c), "upper"]) for r in rows])
                errorbars(ax, [str(r)[len("share ") :] for r in rows], values, lo, hi)
                ax.set_ylim(0.0, 1.0)
                ax.set_ylabel(f"share of {c}")
                ax.set_title(f"{c}: shares", fontsize="medium")
                pictures.append((c, save(figure)))
        elif name == "agg":
            keys = list(result.index)
            labels = [", ".join(map(str, k)) if isinstance(k, tuple) else str(k) for k in keys]
            for c in report.numeric:
                figure = Figure(figsize=(max(3.6, 0.7 * len(keys) + 2), 3.6), layout="constrained")
                ax = figure.subplots()
                values = result[(c, "mean")].to_numpy(dtype=np.float64)
                lo = np.array([float(frame.loc[(*_key(k), c, "mean"), "lower"]) for k in keys])
                hi = np.array([float(frame.loc[(*_key(k), c, "mean"), "upper"]) for k in keys])
                errorbars(ax, labels, values, lo, hi)
                bounds = meta.input_bounds.get(c)
                if bounds:
                    ax.set_ylim(*bounds)
                ax.set_xlabel(", ".join(report.by))
                ax.set_ylabel(f"mean of {c}")
                ax.set_title(f"{c}: mean by {', '.join(report.by)}", fontsize="medium")
                pictures.append((c, save(figure)))
        else:
            c = name.split(" ", 1)[1]
            if result.index.nlevels == 2:
                figure = Figure(
                    figsize=(max(3.6, 0.8 * len(result) + 2), 3.6), layout="constrained"
                )
                plot_groups(result, ax=figure.subplots())
            else:  # several grouping columns: one error bar per (keys, category)
                figure = Figure(
                    figsize=(max(3.6, 0.5 * len(result) + 2), 3.6), layout="constrained"
                )
                ax = figure.subplots()
                labels = [", ".join(map(str, k)) for k in result.index]
                errorbars(
                    ax,
                    labels,
                    result.to_numpy(dtype=np.float64),
                    frame["lower"].to_numpy(dtype=np.float64),
                    frame["upper"].to_numpy(dtype=np.float64),
                )
                ax.set_title(f"{c}: shares within groups", fontsize="medium")
            pictures.append((c, save(figure)))
    return pictures


def _key(key: Any) -> tuple[Any, ...]:
    return key if isinstance(key, tuple) else (key,)


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 70em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f3f3f3; }
figure { display: inline-block; margin: 0.5em; }
.note { color: #555; }
"""


def write_html(report: Report, path: str | os.PathLike[str]) -> None:
    """Write a self-contained HTML report (PNG plots inlined as base64).

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
        f"<title>pandas-dp describe: {esc(report.source)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>Private summary of {esc(report.source)}</h1>",
        f"<p>pandas-dp {esc(pandas_dp.__version__)}; total epsilon {s['epsilon']:g}, "
        f"delta {s['delta']:g}, {esc(s['mechanism'])} mechanism; "
        + (
            "noise from the operating system's CSPRNG."
            if s["seed"] is None
            else f"seed {s['seed']}: reproducible, <strong>insecure</strong> noise."
        )
        + "</p>",
        '<p class="note">Every value below is a differentially private release. Bounds, '
        "categories and group keys are the schema's public declarations, never read "
        "from the data; the number of rows is private. Each 95% interval covers the "
        "exact statistic of the data clamped to the declared bounds.</p>",
        "<h2>Declared public facts</h2>",
        report.declarations.to_html(index=False),
    ]
    if report.undeclared:
        parts.append(
            f"<p>Not described (no bounds or categories declared): "
            f"{esc(', '.join(report.undeclared))}</p>"
        )
    parts.append("<h2>Releases</h2>")
    for (title, table), result in zip(_tables(report), report.releases.values(), strict=True):
        parts.append(f"<h3>{esc(title)}</h3>")
        parts.append(table.to_html(float_format=_number, na_rep=""))
        parts.append("<details><summary>95% intervals</summary>")
        parts.append(_interval_table(result).to_html())
        parts.append("</details>")
    parts.append("<h2>Plots</h2>")
    pictures = _figures(report)
    if not pictures:
        parts.append(
            '<p class="note">No plots: matplotlib is not installed '
            '(pip install "pandas-dp[plot]").</p>'
        )
    for column, png in pictures:
        parts.append(
            f'<figure><img alt="{esc(column)}: estimate and 95% interval" '
            f'src="data:image/png;base64,{png}"><figcaption>{esc(column)}</figcaption></figure>'
        )
    parts.append("<h2>Metadata of each release</h2>")
    for name, result in report.releases.items():
        record = result.attrs["dp"].to_dict()
        cells = "".join(
            f"<tr><th>{esc(str(k))}</th><td style='text-align:left'>{esc(str(v))}</td></tr>"
            for k, v in record.items()
        )
        parts.append(f"<h3>{esc(name)}</h3><table>{cells}</table>")
    parts.append("<h2>Budget ledger</h2>")
    parts.append(f"<p>{esc(str(report.budget))}</p>")
    parts.append(_ledger(report).to_html())
    parts.append("</body></html>")
    Path(path).write_text("\n".join(parts), encoding="utf-8")
