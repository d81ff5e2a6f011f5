"""Speed benchmark of pandas-dp against numpy, pandas, diffprivlib and OpenDP.

Usage::

    python benchmarks/run.py                  # 10^5, 10^6 and 10^7 rows
    python benchmarks/run.py --quick          # 10^5 and 10^6 rows, fewer repetitions
    python benchmarks/run.py --rows 1000000 --json /tmp/bench.json

Prints Markdown tables and writes JSON (default ``benchmarks/results/latest.json``).
Every timing is the median of repeated calls in this process, after one warm-up
call, with ``time.perf_counter`` and the garbage collector paused (as ``timeit``
does); the number of repetitions is printed next to each median. Contenders are
timed in interleaved rounds, so that a change of machine load hits all of them.

The peers (diffprivlib, OpenDP, Polars) are benchmark-only dependencies (the
``bench`` extra); a peer that is missing or fails is reported as ``n/a`` with
the reason.
"""

from __future__ import annotations

import argparse
import contextvars
import gc
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
import tracemalloc
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import pandas_dp

EPSILON = 1.0
LOWER, UPPER = 0.0, 100.0
BOUNDS = (LOWER, UPPER)
COLUMN = "x"
SMALL_ROWS = 100
RESULTS = Path(__file__).resolve().parent / "results"

#: Contenders of the large-column section, in print order.
NUMPY = "numpy floor"
PANDAS = "pandas"
PANDAS_DP = "pandas-dp"
DIFFPRIVLIB = "diffprivlib"
OPENDP_ARRAY = "OpenDP framework, invoke on ndarray"
OPENDP_TO_ARRAY = "  conversion pandas -> writable ndarray (copy)"
OPENDP_LIST = "OpenDP framework, invoke on list"
OPENDP_TO_LIST = "  conversion pandas -> list"
OPENDP_POLARS = "OpenDP Polars, invoke measurement"
OPENDP_TO_POLARS = "  conversion pandas -> LazyFrame"


# ----------------------------------------------------------------------------- timing


@dataclass
class Timing:
    """Median seconds of ``reps`` calls (``None`` when not available)."""

    median: float | None = None
    reps: int = 0
    value: float | None = None
    note: str = ""
    samples: list[float] = field(default_factory=list, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "median_s": self.median,
            "reps": self.reps,
            "min_s": min(self.samples) if self.samples else None,
            "value": self.value,
            "note": self.note or None,
        }


def _na(reason: str) -> Timing:
    return Timing(note=reason)


def _as_float(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def time_interleaved(
    contenders: dict[str, Callable[[], Any] | Timing],
    *,
    max_reps: int,
    budget_s: float,
    min_reps: int = 3,
) -> dict[str, Timing]:
    """Time each callable: one warm-up call, then interleaved rounds of single calls.

    A contender whose warm-up call took ``w`` seconds is repeated
    ``clamp(budget_s / w, min_reps, max_reps)`` times, so slow peers do not make
    the run last for ever. A ``Timing`` passed instead of a callable is kept as is
    (an ``n/a``); a callable that raises becomes ``n/a`` with the error.
    """
    out: dict[str, Timing] = {}
    live: dict[str, Callable[[], Any]] = {}
    reps: dict[str, int] = {}
    for name, fn in contenders.items():
        if isinstance(fn, Timing):
            out[name] = fn
            continue
        gc.collect()
        try:
            start = time.perf_counter()
            value = fn()
            warm = time.perf_counter() - start
        except Exception as exc:
            out[name] = _na(f"{type(exc).__name__}: {exc}".splitlines()[0][:160])
            continue
        out[name] = Timing(value=_as_float(value))
        live[name] = fn
        reps[name] = int(min(max_reps, max(min_reps, budget_s // max(warm, 1e-9))))
    names = list(live)
    gc.collect()
    gc.disable()
    try:
        for r in range(max(reps.values(), default=0)):
            shift = r % max(len(names), 1)
            for name in names[shift:] + names[:shift]:
                if r >= reps[name]:
                    continue
                fn = live[name]
                start = time.perf_counter()
                fn()
                out[name].samples.append(time.perf_counter() - start)
    finally:
        gc.enable()
    for name in names:
        t = out[name]
        t.reps = len(t.samples)
        t.median = statistics.median(t.samples)
    return out


def time_latency(
    contenders: dict[str, Callable[[], Any] | Timing], *, calls: int, block: int = 20
) -> dict[str, Timing]:
    """Per-call latency: ``calls`` single calls each, in rotating blocks of ``block``."""
    out: dict[str, Timing] = {}
    live: dict[str, Callable[[], Any]] = {}
    for name, fn in contenders.items():
        if isinstance(fn, Timing):
            out[name] = fn
            continue
        try:
            value = fn()
            for _ in range(min(block, calls)):  # warm-up
                fn()
        except Exception as exc:
            out[name] = _na(f"{type(exc).__name__}: {exc}".splitlines()[0][:160])
            continue
        out[name] = Timing(value=_as_float(value))
        live[name] = fn
    names = list(live)
    perf = time.perf_counter
    gc.collect()
    gc.disable()
    try:
        for r in range(math.ceil(calls / block)):
            shift = r % max(len(names), 1)
            for name in names[shift:] + names[:shift]:
                fn = live[name]
                samples = out[name].samples
                for _ in range(min(block, calls - r * block)):
                    start = perf()
                    fn()
                    samples.append(perf() - start)
    finally:
        gc.enable()
    for name in names:
        t = out[name]
        t.reps = len(t.samples)
        t.median = statistics.median(t.samples)
    return out


def peak_memory(fn: Callable[[], Any]) -> float:
    """Peak bytes newly allocated (as seen by tracemalloc) during one call of ``fn``."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return float(peak)


# ----------------------------------------------------------------------------- machine


def machine_info() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    memory = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                memory = f"{int(line.split()[1]) / 2**20:.1f} GiB"
    except (OSError, ValueError):
        pass
    info: dict[str, Any] = {
        "cpu": cpu,
        "logical cores": os.cpu_count(),
        "usable cores": usable,
        "memory": memory,
        "os": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "pandas-dp": f"{pandas_dp.__version__} ({_source_state()})",
    }
    for module in ("diffprivlib", "opendp", "polars", "scikit-learn"):
        try:
            info[module] = metadata.version(module)
        except metadata.PackageNotFoundError:
            info[module] = "not installed"
    try:
        from threadpoolctl import threadpool_info

        pools = [f"{p['internal_api']} {p['num_threads']} threads" for p in threadpool_info()]
        info["native thread pools"] = ", ".join(pools) or "none"
    except Exception:
        info["native thread pools"] = "unknown (threadpoolctl not installed)"
    info["load average (start)"] = _load()
    return info


def _source_state() -> str:
    """The git commit of the pandas-dp sources benchmarked, and whether they differ from it."""
    root = Path(pandas_dp.__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--", "pandas_dp"],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "not a git checkout"
    return f"git {head}" + (" + uncommitted changes in pandas_dp/" if dirty else "")


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


# ----------------------------------------------------------------------------- peers


def _import_diffprivlib() -> tuple[Any, str]:
    try:
        import diffprivlib
        from diffprivlib import tools
    except Exception as exc:
        return None, f"diffprivlib unavailable ({type(exc).__name__}: {exc})"[:200]
    warnings.filterwarnings("ignore", category=diffprivlib.utils.PrivacyLeakWarning)
    warnings.filterwarnings("ignore", category=diffprivlib.utils.DiffprivlibCompatibilityWarning)
    return (diffprivlib, tools), ""


def _import_opendp() -> tuple[Any, str]:
    try:
        import opendp.prelude as dp
    except Exception as exc:
        return None, f"opendp unavailable ({type(exc).__name__}: {exc})"[:200]
    dp.enable_features("contrib")
    return dp, ""


def _opendp_measurement(dp: Any, statistic: str, n: int) -> Any:
    """clamp >> resize to the public n >> mean/variance >> Laplace, calibrated to epsilon.

    ``d_in=2`` under the symmetric distance is one substituted record, the
    neighbouring relation pandas-dp uses by default.
    """
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    pre = (
        space
        >> dp.t.then_clamp(BOUNDS)
        >> dp.t.then_resize(size=n, constant=0.5 * (LOWER + UPPER))
        >> (dp.t.then_mean() if statistic == "mean" else dp.t.then_variance(ddof=1))
    )
    return dp.binary_search_chain(lambda s: pre >> dp.m.then_laplace(s), d_in=2, d_out=EPSILON)


def _opendp_polars_measurement(dp: Any, lazy: Any, n: int) -> Any:
    """The measurement behind ``context.query().select(col.dp.mean(bounds)).release()``."""
    import polars as pl

    context = dp.Context.compositor(
        data=lazy,
        privacy_unit=dp.unit_of(changes=1),
        privacy_loss=dp.loss_of(epsilon=EPSILON),
        split_evenly_over=1,
        margins=[dp.polars.Margin(max_length=n, invariant="lengths")],
    )
    mid = 0.5 * (LOWER + UPPER)
    query = context.query().select(pl.col(COLUMN).fill_nan(mid).fill_null(mid).dp.mean(BOUNDS))
    return query.resolve()


# ----------------------------------------------------------------------------- sections


def bench_large(
    n: int, *, max_reps: int, budget_s: float, setup: dict[str, Any]
) -> dict[str, dict[str, Timing]]:
    """Section 1: mean and variance of one float column of ``n`` rows."""
    rng = np.random.default_rng(20240601)
    df = pd.DataFrame({COLUMN: rng.uniform(LOWER - 10, UPPER + 10, n)})
    x = df[COLUMN].to_numpy()
    a, b = BOUNDS
    peers, why_dpl = _import_diffprivlib()
    dp, why_odp = _import_opendp()
    one_off: dict[str, float | str] = {}
    setup[str(n)] = one_off

    results: dict[str, dict[str, Timing]] = {}
    lst: list[float] | None = None
    lazy: Any = None
    for statistic in ("mean", "var"):
        c: dict[str, Callable[[], Any] | Timing] = {}
        if statistic == "mean":
            c[NUMPY] = lambda: np.clip(x, a, b).mean()
            c[PANDAS] = lambda: df[COLUMN].clip(a, b).mean()
            c[PANDAS_DP] = lambda: df.dp.mean(COLUMN, epsilon=EPSILON, bounds=BOUNDS)
        else:
            c[NUMPY] = lambda: np.clip(x, a, b).var(ddof=1)
            c[PANDAS] = lambda: df[COLUMN].clip(a, b).var()
            c[PANDAS_DP] = lambda: df.dp.var(COLUMN, epsilon=EPSILON, bounds=BOUNDS)
        if peers is None:
            c[DIFFPRIVLIB] = _na(why_dpl)
        else:
            f = getattr(peers[1], statistic)
            c[DIFFPRIVLIB] = lambda f=f: f(x, epsilon=EPSILON, bounds=BOUNDS)

        if dp is None:
            for key in (OPENDP_ARRAY, OPENDP_TO_ARRAY, OPENDP_LIST, OPENDP_TO_LIST):
                c[key] = _na(why_odp)
        else:
            try:
                start = time.perf_counter()
                meas = _opendp_measurement(dp, statistic, n)
                one_off[f"OpenDP framework {statistic}: build + calibrate"] = (
                    time.perf_counter() - start
                )
                # OpenDP refuses read-only arrays, and pandas' copy-on-write hands
                # out read-only views: the conversion is a copy
                writable = df[COLUMN].to_numpy(copy=True)
                c[OPENDP_ARRAY] = lambda meas=meas, writable=writable: meas(writable)
                c[OPENDP_TO_ARRAY] = lambda: df[COLUMN].to_numpy(copy=True)
                if lst is None:
                    lst = df[COLUMN].tolist()
                c[OPENDP_LIST] = lambda meas=meas, lst=lst: meas(lst)
                c[OPENDP_TO_LIST] = lambda: df[COLUMN].tolist()
            except Exception as exc:
                reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:160]
                for key in (OPENDP_ARRAY, OPENDP_TO_ARRAY, OPENDP_LIST, OPENDP_TO_LIST):
                    c[key] = _na(reason)

        if statistic == "var":
            reason = (
                "OpenDP's Polars plugin has no variance (its aggregates: sum, mean, len, "
                "count, quantile, median, n_unique)"
            )
            c[OPENDP_POLARS] = _na(reason)
            c[OPENDP_TO_POLARS] = _na(reason)
        elif dp is None:
            c[OPENDP_POLARS] = c[OPENDP_TO_POLARS] = _na(why_odp)
        else:
            try:
                import polars as pl

                lazy = pl.LazyFrame({COLUMN: x})
                start = time.perf_counter()
                pmeas = _opendp_polars_measurement(dp, lazy, n)
                one_off["OpenDP Polars mean: context + query + resolve (calibrate)"] = (
                    time.perf_counter() - start
                )
                c[OPENDP_POLARS] = lambda pmeas=pmeas, lazy=lazy: pmeas(lazy).collect().item()
                c[OPENDP_TO_POLARS] = lambda: pl.LazyFrame({COLUMN: df[COLUMN].to_numpy()})
            except Exception as exc:
                reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:160]
                c[OPENDP_POLARS] = c[OPENDP_TO_POLARS] = _na(reason)

        results[statistic] = time_interleaved(c, max_reps=max_reps, budget_s=budget_s)
        for key in (OPENDP_TO_LIST, OPENDP_TO_POLARS):
            results[statistic][key].value = None  # a conversion has no statistic
        gc.collect()
    del lst, lazy
    return results


def bench_small(calls: int) -> dict[str, Timing]:
    """Section 2: per-release latency on a 100-row Series."""
    s = pd.Series(np.random.default_rng(7).uniform(LOWER, UPPER, SMALL_ROWS), name=COLUMN)
    x = s.to_numpy()
    a, b = BOUNDS
    budget = pandas_dp.PrivacyBudget(epsilon=1e12)

    # a context in which `with budget:` was entered once, so that its calls can be
    # interleaved with the others (which run outside any budget)
    inside = contextvars.copy_context()
    inside.run(budget.__enter__)

    def in_budget() -> Any:
        return inside.run(s.dp.mean, epsilon=EPSILON, bounds=BOUNDS)

    def enter_each_call() -> Any:
        with budget:
            return s.dp.mean(epsilon=EPSILON, bounds=BOUNDS)

    def budget_argument() -> Any:
        return s.dp.mean(epsilon=EPSILON, bounds=BOUNDS, budget=budget)

    c: dict[str, Callable[[], Any] | Timing] = {
        "numpy floor: np.clip(x, a, b).mean()": lambda: np.clip(x, a, b).mean(),
        "pandas: s.clip(a, b).mean()": lambda: s.clip(a, b).mean(),
        "pandas-dp: s.dp.mean (secure noise)": lambda: s.dp.mean(epsilon=EPSILON, bounds=BOUNDS),
        "pandas-dp: s.dp.mean(random_state=0)": lambda: s.dp.mean(
            epsilon=EPSILON, bounds=BOUNDS, random_state=0
        ),
        "pandas-dp: s.dp.var (secure noise)": lambda: s.dp.var(epsilon=EPSILON, bounds=BOUNDS),
        "pandas-dp: s.dp.mean(budget=b)": budget_argument,
        "pandas-dp: s.dp.mean inside `with budget:`": in_budget,
        "pandas-dp: `with budget:` entered per call": enter_each_call,
    }
    peers, why = _import_diffprivlib()
    if peers is None:
        c["diffprivlib: tools.mean"] = _na(why)
    else:
        diffprivlib, tools = peers
        accountant = diffprivlib.BudgetAccountant()
        c["diffprivlib: tools.mean"] = lambda: tools.mean(x, epsilon=EPSILON, bounds=BOUNDS)
        c["diffprivlib: tools.mean(random_state=0)"] = lambda: tools.mean(
            x, epsilon=EPSILON, bounds=BOUNDS, random_state=0
        )
        c["diffprivlib: tools.var"] = lambda: tools.var(x, epsilon=EPSILON, bounds=BOUNDS)
        c["diffprivlib: tools.mean(accountant=acc)"] = lambda: tools.mean(
            x, epsilon=EPSILON, bounds=BOUNDS, accountant=accountant
        )
    dp, why = _import_opendp()
    if dp is None:
        c["OpenDP framework: meas(ndarray)"] = _na(why)
    else:
        try:
            meas = _opendp_measurement(dp, "mean", SMALL_ROWS)
            writable = s.to_numpy(copy=True)  # OpenDP refuses read-only arrays
            c["OpenDP framework: meas(ndarray)"] = lambda: meas(writable)
        except Exception as exc:
            c["OpenDP framework: meas(ndarray)"] = _na(f"{type(exc).__name__}: {exc}"[:160])
    out = time_latency(c, calls=calls)
    charged = len(budget.ledger)
    # three contenders charge it: one call, a warm-up block, then `calls` timed calls
    expected = 3 * (1 + min(calls, 20) + calls)
    if charged != expected:
        raise RuntimeError(f"the budget saw {charged} releases, expected {expected}")
    return out


def bench_memory(n: int) -> dict[str, dict[str, float | str]]:
    """Section 3: peak memory of one call on a column of ``n`` rows."""
    df = pd.DataFrame({COLUMN: np.random.default_rng(3).uniform(LOWER - 10, UPPER + 10, n)})
    x = df[COLUMN].to_numpy()
    a, b = BOUNDS
    peers, why = _import_diffprivlib()
    out: dict[str, dict[str, float | str]] = {}
    for statistic in ("mean", "var"):
        c: dict[str, Callable[[], Any] | str] = {}
        if statistic == "mean":
            c[PANDAS_DP] = lambda: df.dp.mean(COLUMN, epsilon=EPSILON, bounds=BOUNDS)
            c[NUMPY] = lambda: np.clip(x, a, b).mean()
            c[PANDAS] = lambda: df[COLUMN].clip(a, b).mean()
        else:
            c[PANDAS_DP] = lambda: df.dp.var(COLUMN, epsilon=EPSILON, bounds=BOUNDS)
            c[NUMPY] = lambda: np.clip(x, a, b).var(ddof=1)
            c[PANDAS] = lambda: df[COLUMN].clip(a, b).var()
        if peers is None:
            c[DIFFPRIVLIB] = why
        else:
            f = getattr(peers[1], statistic)
            c[DIFFPRIVLIB] = lambda f=f: f(x, epsilon=EPSILON, bounds=BOUNDS)
        row: dict[str, float | str] = {}
        for name, fn in c.items():
            if isinstance(fn, str):
                row[name] = fn
                continue
            fn()  # warm-up: imports and caches are not the call's memory
            row[name] = peak_memory(fn)
        row["OpenDP"] = "not measured: its Rust allocations are invisible to tracemalloc"
        out[statistic] = row
    return out


# ----------------------------------------------------------------------------- output


def _table(headers: list[str], rows: list[list[str]], *, left: int = 1) -> str:
    """A Markdown table; the first ``left`` columns are left-aligned, the rest right."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        parts = [
            c.ljust(w) if i < left else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "| " + " | ".join(parts) + " |"

    sep = "|" + "|".join(
        ":" + "-" * (w + 1) if i < left else "-" * (w + 1) + ":" for i, w in enumerate(widths)
    )
    return "\n".join([line(headers), sep + "|", *(line(r) for r in rows)])


def _fmt_ms(t: Timing) -> str:
    if t.median is None:
        return "n/a"
    ms = t.median * 1e3
    text = f"{ms:.3g}" if ms < 100 else f"{ms:.0f}"
    return f"{text} ({t.reps})"


def _fmt_us(t: Timing) -> str:
    return "n/a" if t.median is None else f"{t.median * 1e6:.1f}"


def _rows_label(n: int) -> str:
    exp = math.log10(n)
    return f"10^{int(exp)} rows" if exp.is_integer() else f"{n:,} rows"


def _ratio(top: Timing, bottom: Timing) -> float | None:
    if top.median is None or bottom.median is None or bottom.median <= 0:
        return None
    return top.median / bottom.median


def _fmt_ratio(r: float | None) -> str:
    if r is None:
        return "n/a"
    return f"{r:.2f}x" if r >= 0.1 else f"{r:.2g}x"


RATIOS = [
    (NUMPY, "pandas-dp / numpy floor"),
    (PANDAS, "pandas-dp / pandas"),
    (DIFFPRIVLIB, "pandas-dp / diffprivlib"),
    (OPENDP_ARRAY, "pandas-dp / OpenDP (ndarray)"),
    (OPENDP_LIST, "pandas-dp / OpenDP (list, conversion excluded)"),
    (OPENDP_POLARS, "pandas-dp / OpenDP Polars"),
]


def report_large(
    large: dict[int, dict[str, dict[str, Timing]]], setup: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    sizes = sorted(large)
    lines: list[str] = []
    ratios: dict[str, Any] = {}
    notes: dict[str, str] = {}
    lines.append(
        f"## 1. One float column, bounds {BOUNDS}, epsilon={EPSILON}\n\n"
        "Median milliseconds per call (repetitions in brackets).\n"
    )
    for statistic in ("mean", "var"):
        names = list(large[sizes[0]][statistic])
        headers = [f"{statistic}", *(_rows_label(n) for n in sizes)]
        rows = []
        for name in names:
            rows.append([name, *(_fmt_ms(large[n][statistic][name]) for n in sizes)])
            for n in sizes:
                note = large[n][statistic][name].note
                if note and large[n][statistic][name].median is None:
                    notes[name] = note
        lines.append(f"### {statistic}\n\n" + _table(headers, rows) + "\n")
        ratio_rows = []
        ratios[statistic] = {}
        for peer, label in RATIOS:
            values = [
                _ratio(large[n][statistic][PANDAS_DP], large[n][statistic][peer]) for n in sizes
            ]
            ratios[statistic][label] = dict(zip(map(str, sizes), values, strict=True))
            ratio_rows.append([label, *(_fmt_ratio(v) for v in values)])
        header = [f"{statistic}: ratio (lower is faster)", *(_rows_label(n) for n in sizes)]
        lines.append(_table(header, ratio_rows) + "\n")
    if notes:
        lines.append("n/a reasons:\n")
        lines.extend(f"- {name.strip()}: {note}" for name, note in notes.items())
        lines.append("")
    one_off_rows = []
    keys = sorted({k for n in sizes for k in setup.get(str(n), {})})
    for key in keys:
        cells = []
        for n in sizes:
            v = setup.get(str(n), {}).get(key)
            cells.append("n/a" if not isinstance(v, float) else f"{v * 1e3:.0f}")
        one_off_rows.append([key, *cells])
    if one_off_rows:
        lines.append(
            "One-off OpenDP costs, not in the timings above (milliseconds, one run):\n\n"
            + _table(["OpenDP setup", *(_rows_label(n) for n in sizes)], one_off_rows)
            + "\n"
        )
    return "\n".join(lines), ratios


def report_small(small: dict[str, Timing], calls: int) -> str:
    rows = [
        [name, _fmt_us(t), str(t.reps) if t.reps else t.note or "n/a"] for name, t in small.items()
    ]
    return (
        f"## 2. Per-release latency on a {SMALL_ROWS}-row Series\n\n"
        f"Median microseconds per call over {calls} calls each (gc paused, rotating "
        f"blocks of 20 calls).\n\n" + _table(["call", "median us", "calls"], rows) + "\n"
    )


def report_memory(memory: dict[str, dict[str, float | str]], n: int) -> str:
    names = list(memory["mean"])
    rows = []
    for name in names:
        cells = []
        for statistic in ("mean", "var"):
            v = memory[statistic][name]
            cells.append(f"{v / 2**20:.3f}" if isinstance(v, float) else "n/a")
        rows.append([name, *cells])
    notes = [f"- {name}: {v}" for name, v in memory["mean"].items() if isinstance(v, str)]
    return (
        f"## 3. Peak memory of one call, {_rows_label(n)} (MB = 2^20 bytes, tracemalloc)\n\n"
        f"The input column itself is {n * 8 / 2**20:.1f} MB and is not counted.\n\n"
        + _table(["call", "mean: peak MB", "var: peak MB"], rows)
        + "\n\n"
        + "\n".join(notes)
        + "\n"
    )


def goals(
    large: dict[int, dict[str, dict[str, Timing]]], small: dict[str, Timing]
) -> list[dict[str, Any]]:
    n = max(large)
    where = _rows_label(n) + ("" if n == 10**7 else " (the goal is stated at 10^7 rows)")
    out: list[dict[str, Any]] = []
    for statistic in ("mean", "var"):
        res = large[n][statistic]
        for peer, limit, text in (
            (DIFFPRIVLIB, 1.0, "at least as fast as diffprivlib"),
            (NUMPY, 1.5, "within 1.5x of the numpy floor"),
        ):
            r = _ratio(res[PANDAS_DP], res[peer])
            out.append(
                {
                    "goal": f"df.dp.{statistic} {text}, {where}",
                    "ratio": r,
                    "limit": limit,
                    "met": None if r is None else r <= limit,
                }
            )
    ours = small.get("pandas-dp: s.dp.mean (secure noise)", Timing())
    theirs = small.get("diffprivlib: tools.mean", Timing())
    r = _ratio(ours, theirs)
    out.append(
        {
            "goal": f"one s.dp.mean release on a {SMALL_ROWS}-row Series costs no more than "
            f"diffprivlib's tools.mean",
            "ratio": r,
            "limit": 1.0,
            "met": None if r is None else r <= 1.0,
        }
    )
    return out


def report_goals(items: list[dict[str, Any]]) -> str:
    rows = []
    for g in items:
        verdict = "n/a" if g["met"] is None else ("met" if g["met"] else "NOT met")
        rows.append([g["goal"], _fmt_ratio(g["ratio"]), f"<= {g['limit']:g}x", verdict])
    header = ["goal", "pandas-dp / peer", "target", "verdict"]
    return "## Goals\n\n" + _table(header, rows) + "\n"


# ----------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="10^5 and 10^6 rows only, fewer repetitions"
    )
    parser.add_argument(
        "--rows", type=int, nargs="+", metavar="N", help="column lengths for section 1"
    )
    parser.add_argument(
        "--json",
        type=Path,
        default=RESULTS / "latest.json",
        help="where to write the JSON results (default: benchmarks/results/latest.json)",
    )
    args = parser.parse_args(argv)
    sizes = sorted(set(args.rows or ([10**5, 10**6] if args.quick else [10**5, 10**6, 10**7])))
    if any(n < 2 for n in sizes):
        parser.error("--rows needs at least 2 rows (a variance needs two)")
    calls = 1000 if args.quick else 2000

    def reps_for(n: int) -> int:
        if args.quick:
            return 20 if n <= 10**5 else 7
        return 50 if n <= 10**5 else (20 if n <= 10**6 else 9)

    budget_s = 3.0 if args.quick else 20.0
    started = time.perf_counter()
    _import_diffprivlib()  # load the peers' native thread pools before describing them
    _import_opendp()
    info = machine_info()
    print("# pandas-dp speed benchmark\n")
    print(_table(["machine", ""], [[k, str(v)] for k, v in info.items()], left=2))
    print(
        f"\nmode: {'quick' if args.quick else 'full'}; rows {', '.join(map(str, sizes))}; "
        f"up to {', '.join(str(reps_for(n)) for n in sizes)} repetitions per size "
        f"(fewer for a contender slower than {budget_s:g} s / repetitions, at least 3)\n",
        flush=True,
    )

    large: dict[int, dict[str, dict[str, Timing]]] = {}
    setup: dict[str, Any] = {}
    for n in sizes:
        print(f"... timing {_rows_label(n)}", file=sys.stderr, flush=True)
        large[n] = bench_large(n, max_reps=reps_for(n), budget_s=budget_s, setup=setup)
    text, ratios = report_large(large, setup)
    print(text, flush=True)

    print("... timing the small Series", file=sys.stderr, flush=True)
    small = bench_small(calls)
    print(report_small(small, calls), flush=True)

    mem_n = max(sizes)
    print("... measuring memory", file=sys.stderr, flush=True)
    memory = bench_memory(mem_n)
    print(report_memory(memory, mem_n), flush=True)

    goal_items = goals(large, small)
    print(report_goals(goal_items))
    info["load average (end)"] = _load()
    elapsed = time.perf_counter() - started
    print(
        f"load average at start {info['load average (start)']}, at end "
        f"{info['load average (end)']} ({info['usable cores']} usable cores); "
        f"total run time {elapsed:.0f} s"
    )

    payload = {
        "machine": info,
        "config": {
            "mode": "quick" if args.quick else "full",
            "rows": sizes,
            "epsilon": EPSILON,
            "bounds": list(BOUNDS),
            "small_rows": SMALL_ROWS,
            "small_calls": calls,
            "timer": "time.perf_counter, median after one warm-up call, gc paused",
            "run_time_s": elapsed,
        },
        "large": {
            str(n): {st: {k: t.to_json() for k, t in res.items()} for st, res in large[n].items()}
            for n in sizes
        },
        "opendp_one_off_s": setup,
        "ratios": ratios,
        "small": {k: t.to_json() for k, t in small.items()},
        "memory": {"rows": mem_n, "peak_bytes": memory},
        "goals": goal_items,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"\nJSON written to {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
