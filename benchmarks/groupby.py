"""Speed and accuracy of ``df.dp.groupby`` against pandas and OpenDP's Polars group-by.

Usage::

    python benchmarks/groupby.py            # 10^6 and 10^7 rows, 300 releases per accuracy cell
    python benchmarks/groupby.py --quick    # 10^6 rows, 50 releases per cell

Writes ``benchmarks/results/groupby.json`` and the printed tables to
``benchmarks/results/groupby.md`` (``--json`` / ``--markdown`` to change).

Sections (issue 9, "Speed and accuracy"):

1. Grouped mean over 1000 declared keys (int, categorical and string keys), bounds
   (0, 100), epsilon 1: ``df.dp.groupby("k", keys=range(1000)).mean("x", ...)``
   against pandas' ``df.groupby("k")["x"].mean()`` and OpenDP's Polars
   ``group_by("k").agg(pl.col("x").dp.mean(bounds)).with_keys(keys)`` (measurement
   resolved once, invoked on a LazyFrame built beforehand; the conversion from
   pandas is timed apart).
2. Private-key count over 10^5 distinct keys: ``df.dp.groupby("k", keys="private",
   delta=1e-6).len(epsilon=1)`` against pandas' ``df["k"].value_counts()`` and
   OpenDP's ``group_by("k").agg(dp.len())`` without keys (thresholded, same delta).
3. Accuracy: per-group RMSE of the grouped mean and count (20 keys, add/remove,
   epsilon 1) against OpenDP's Polars group-by with the same public keys, with
   Monte-Carlo standard errors.
4. A privacy unit: 10^6 rows, 10^5 units, ``max_rows_per_unit=5``, grouped mean
   against the same mean without a unit (the cost of the keyed-hash truncation).

Timings use ``run.time_interleaved``: one warm-up call, then interleaved rounds of
single calls with the garbage collector paused; medians and minimums are reported
with the number of repetitions, and the load average before and after each
section (the project's machine has 2 cores shared with other jobs).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as base  # benchmarks/run.py: timing, machine table, formatting

import pandas_dp  # noqa: F401  (registers the accessor)

Timing = base.Timing

EPSILON = 1.0
BOUNDS = (0.0, 100.0)
MID = 0.5 * (BOUNDS[0] + BOUNDS[1])
KEYS = 1000
PRIVATE_KEYS = 10**5
PRIVATE_DELTA = 1e-6
ACC_KEYS = 20
ACC_SIZES = (10**4, 10**5)
UNIT_ROWS = 10**6
UNITS = 10**5
MAX_ROWS_PER_UNIT = 5
RESULTS = base.RESULTS
#: Timed calls of even the slowest contender (OpenDP at 10^7 rows takes seconds a call).
MIN_REPS = 5
#: The counts of both libraries carry the same noise (see LEN_RMSE): more releases
#: for them, so that a tie is told from a difference (a count release is cheap).
LEN_REPS_FACTOR = 4
#: RMSE of a count with discrete Laplace noise of scale 1 (add/remove, epsilon 1):
#: sqrt(2 e^-1 / (1 - e^-1)^2).
LEN_RMSE = math.sqrt(2 * math.exp(-1) / (1 - math.exp(-1)) ** 2)

PANDAS = "pandas df.groupby('k')['x'].mean()"
PANDAS_DP = "pandas-dp df.dp.groupby('k', keys=...).mean('x')"
OPENDP = "OpenDP Polars group_by.agg(dp.mean).with_keys, invoke"
TO_POLARS = "  conversion pandas -> polars LazyFrame"
VC = "pandas df['k'].value_counts()"
DP_PRIVATE = "pandas-dp groupby('k', keys='private').len()"
OPENDP_PRIVATE = "OpenDP Polars group_by.agg(dp.len()), no keys, invoke"
DP_PLAIN = "pandas-dp grouped mean, no unit"
DP_UNIT = f"pandas-dp grouped mean, privacy_unit, max_rows_per_unit={MAX_ROWS_PER_UNIT}"


# ----------------------------------------------------------------------------- OpenDP


def _opendp() -> tuple[Any, str]:
    return base._import_opendp()


def _context(dp: Any, lazy: Any, n: int, *, delta: float = 0.0) -> Any:
    """An OpenDP compositor over ``lazy`` under add/remove of one row, one query.

    ``max_length=n`` is the public bound on a partition's length OpenDP's float
    sum needs (the number of rows, public here; pandas-dp needs none).
    """
    import polars as pl  # noqa: F401

    loss = dp.loss_of(epsilon=EPSILON, delta=delta) if delta else dp.loss_of(epsilon=EPSILON)
    return dp.Context.compositor(
        data=lazy,
        privacy_unit=dp.unit_of(contributions=1),
        privacy_loss=loss,
        split_evenly_over=1,
        margins=[dp.polars.Margin(by=["k"], max_length=n)],
    )


def opendp_grouped(dp: Any, lazy: Any, n: int, keys: Any, statistic: str) -> Any:
    """The measurement of a grouped mean or len with public keys (resolved once)."""
    import polars as pl

    if statistic == "mean":
        agg = pl.col("x").fill_nan(MID).fill_null(MID).dp.mean(BOUNDS)
    else:
        agg = dp.len()
    query = _context(dp, lazy, n).query().group_by("k").agg(agg).with_keys(keys)
    return query.resolve()


def opendp_private_len(dp: Any, lazy: Any, n: int) -> Any:
    """The measurement of a count per key with the keys released by thresholding."""
    query = _context(dp, lazy, n, delta=PRIVATE_DELTA).query().group_by("k").agg(dp.len())
    return query.resolve()


def _quiet() -> None:
    import warnings

    # OpenDP 0.16 warns that dp.len's default (signed=False) will change.
    warnings.filterwarnings("ignore", category=FutureWarning, module="opendp")
    warnings.filterwarnings("ignore", message=".*signed.*", category=FutureWarning)


# ----------------------------------------------------------------------------- speed


def bench_grouped_mean(
    n: int, *, max_reps: int, budget_s: float, with_opendp: bool
) -> dict[str, dict[str, Timing]]:
    """Section 1 at ``n`` rows: int keys, categorical keys, then string keys (pandas'
    ``str`` dtype, Arrow-backed where pyarrow is installed)."""
    rng = np.random.default_rng(1)
    k = rng.integers(0, KEYS, n)
    x = rng.uniform(*BOUNDS, n)
    names = [f"k{i}" for i in range(KEYS)]
    frames = {
        "int keys": (pd.DataFrame({"k": k, "x": x}), range(KEYS)),
        "categorical keys": (
            pd.DataFrame(
                {"k": pd.Categorical.from_codes(k.astype(np.int16), categories=range(KEYS)), "x": x}
            ),
            range(KEYS),
        ),
        "string keys": (
            pd.DataFrame({"k": pd.Series(np.array(names, dtype=object)[k], dtype="str"), "x": x}),
            names,
        ),
    }
    dp, why = _opendp() if with_opendp else (None, "not run (--no-opendp)")
    out: dict[str, dict[str, Timing]] = {}
    for label, (df, keys) in frames.items():
        c: dict[str, Callable[[], Any] | Timing] = {
            PANDAS: lambda df=df: df.groupby("k", observed=False)["x"].mean(),
            PANDAS_DP: lambda df=df, keys=keys: df.dp.groupby("k", keys=keys).mean(
                "x", epsilon=EPSILON, bounds=BOUNDS
            ),
        }
        if dp is None:
            c[OPENDP] = c[TO_POLARS] = base._na(why)
        elif label == "int keys":
            try:
                import polars as pl

                lazy = pl.LazyFrame({"k": k, "x": x})
                pkeys = pl.LazyFrame({"k": np.arange(KEYS, dtype=k.dtype)})
                meas = opendp_grouped(dp, lazy, n, pkeys, "mean")
                c[OPENDP] = lambda meas=meas, lazy=lazy: meas(lazy).collect()
                c[TO_POLARS] = lambda df=df: pl.LazyFrame(
                    {"k": df["k"].to_numpy(), "x": df["x"].to_numpy()}
                )
            except Exception as exc:
                c[OPENDP] = c[TO_POLARS] = base._na(base._reason(exc))
        else:
            c[OPENDP] = c[TO_POLARS] = base._na("timed on int keys only")
        out[label] = base.time_interleaved(
            c, max_reps=max_reps, budget_s=budget_s, min_reps=MIN_REPS
        )
    return out


def bench_private_count(
    n: int, *, max_reps: int, budget_s: float, with_opendp: bool
) -> dict[str, Timing]:
    """Section 2: 10^5 distinct int keys, about n / 10^5 rows each."""
    rng = np.random.default_rng(2)
    k = rng.integers(0, PRIVATE_KEYS, n)
    df = pd.DataFrame({"k": k})
    c: dict[str, Callable[[], Any] | Timing] = {
        VC: lambda: df["k"].value_counts(),
        DP_PRIVATE: lambda: df.dp.groupby("k", keys="private", delta=PRIVATE_DELTA).len(
            epsilon=EPSILON
        ),
    }
    dp, why = _opendp() if with_opendp else (None, "not run (--no-opendp)")
    if dp is None:
        c[OPENDP_PRIVATE] = base._na(why)
    else:
        try:
            import polars as pl

            lazy = pl.LazyFrame({"k": k})
            meas = opendp_private_len(dp, lazy, n)
            c[OPENDP_PRIVATE] = lambda: meas(lazy).collect()
        except Exception as exc:
            c[OPENDP_PRIVATE] = base._na(base._reason(exc))
    return base.time_interleaved(c, max_reps=max_reps, budget_s=budget_s, min_reps=MIN_REPS)


def bench_unit(*, max_reps: int, budget_s: float) -> dict[str, Timing]:
    """Section 4: the cost of a privacy unit (keyed-hash truncation, k x sensitivity)."""
    rng = np.random.default_rng(4)
    n = UNIT_ROWS
    df = pd.DataFrame(
        {
            "k": rng.integers(0, KEYS, n),
            "x": rng.uniform(*BOUNDS, n),
            "pid": rng.integers(0, UNITS, n),
        }
    )
    keys = range(KEYS)
    c: dict[str, Callable[[], Any] | Timing] = {
        PANDAS: lambda: df.groupby("k")["x"].mean(),
        DP_PLAIN: lambda: df.dp.groupby("k", keys=keys).mean("x", epsilon=EPSILON, bounds=BOUNDS),
        DP_UNIT: lambda: df.dp.groupby("k", keys=keys).mean(
            "x",
            epsilon=EPSILON,
            bounds=BOUNDS,
            privacy_unit="pid",
            max_rows_per_unit=MAX_ROWS_PER_UNIT,
        ),
    }
    return base.time_interleaved(c, max_reps=max_reps, budget_s=budget_s)


# ----------------------------------------------------------------------------- accuracy


def _rmse(errors: np.ndarray) -> dict[str, float]:
    """RMSE over (repetition, group) and its Monte-Carlo standard error.

    The standard error is that of the mean over repetitions of each release's
    mean squared error (groups of one release need not be independent), carried
    to the root by the delta method: se(RMSE) = se(MSE) / (2 RMSE).
    """
    per_release = np.mean(errors**2, axis=1)
    mse = float(per_release.mean())
    se_mse = float(per_release.std(ddof=1) / math.sqrt(len(per_release)))
    rmse = math.sqrt(mse)
    return {
        "rmse": rmse,
        "se": se_mse / (2 * rmse) if rmse > 0 else 0.0,
        "bias": float(errors.mean()),
        "releases": len(per_release),
    }


def bench_accuracy(reps: int, *, with_opendp: bool) -> dict[str, Any]:
    """Section 3: per-group RMSE of the grouped mean and count, 20 keys, add/remove."""
    out: dict[str, Any] = {}
    dp, why = _opendp() if with_opendp else (None, "not run (--no-opendp)")
    for n in ACC_SIZES:
        rng = np.random.default_rng(3 + n)
        k = rng.integers(0, ACC_KEYS, n)
        x = rng.uniform(*BOUNDS, n)
        df = pd.DataFrame({"k": k, "x": x})
        true_mean = df.groupby("k")["x"].mean().reindex(range(ACC_KEYS)).to_numpy()
        true_len = df.groupby("k").size().reindex(range(ACC_KEYS), fill_value=0).to_numpy()
        g = df.dp.groupby("k", keys=range(ACC_KEYS))
        releases: dict[str, Callable[[], np.ndarray]] = {
            "pandas-dp mean": lambda g=g: g.mean(
                "x", epsilon=EPSILON, bounds=BOUNDS, neighbouring="add_remove"
            ).to_numpy(),
            "pandas-dp len": lambda g=g: g.len(
                epsilon=EPSILON, neighbouring="add_remove"
            ).to_numpy(),
        }
        notes: dict[str, str] = {}
        if dp is None:
            notes["OpenDP"] = why
        else:
            import polars as pl

            lazy = pl.LazyFrame({"k": k, "x": x})
            pkeys = pl.LazyFrame({"k": np.arange(ACC_KEYS, dtype=k.dtype)})
            for stat in ("mean", "len"):
                try:
                    meas = opendp_grouped(dp, lazy, n, pkeys, stat)
                    column = "x" if stat == "mean" else "len"

                    def draw(meas: Any = meas, lazy: Any = lazy, column: str = column) -> Any:
                        frame = meas(lazy).collect().sort("k")
                        return frame[column].to_numpy().astype(float)

                    releases[f"OpenDP {stat}"] = draw
                    summary = dp.summarize_polars_measurement(meas)
                    notes[f"OpenDP {stat}"] = "; ".join(
                        f"{r['aggregate']} {r['distribution']} scale {r['scale']:.4g}"
                        for r in summary.iter_rows(named=True)
                    )
                except Exception as exc:
                    notes[f"OpenDP {stat}"] = base._reason(exc)
        cell: dict[str, Any] = {"notes": notes}
        for name, fn in releases.items():
            mean = name.endswith("mean")
            truth = true_mean if mean else true_len
            count = reps if mean else LEN_REPS_FACTOR * reps
            errors = np.array([fn() - truth for _ in range(count)], dtype=float)
            cell[name] = _rmse(errors)
        for stat in ("mean", "len"):
            ours = cell.get(f"pandas-dp {stat}")
            theirs = cell.get(f"OpenDP {stat}")
            if ours and theirs:
                r = ours["rmse"] / theirs["rmse"]
                rel = math.hypot(ours["se"] / ours["rmse"], theirs["se"] / theirs["rmse"])
                cell[f"ratio {stat}"] = {"ratio": r, "se": r * rel}
        out[str(n)] = cell
        print(f"... accuracy n={n} done", file=sys.stderr, flush=True)
    return out


# ----------------------------------------------------------------------------- report


def _ms(t: Timing) -> str:
    if t.median is None:
        return f"n/a ({t.note})" if t.note else "n/a"
    return f"{t.median * 1e3:.4g} / {min(t.samples) * 1e3:.4g} ({t.reps})"


def _best_ratio(top: Timing, bottom: Timing) -> float | None:
    if not top.samples or not bottom.samples:
        return None
    return min(top.samples) / min(bottom.samples)


def _ratios(top: Timing, bottom: Timing) -> str:
    median = base._fmt_ratio(base._ratio(top, bottom))
    return f"{median} / {base._fmt_ratio(_best_ratio(top, bottom))}"


def report_speed(
    grouped: dict[int, dict[str, dict[str, Timing]]],
    private: dict[int, dict[str, Timing]],
    unit: dict[str, Timing],
    loads: dict[str, str],
) -> tuple[str, list[dict[str, Any]]]:
    lines = ["## 1. Grouped mean, 1000 declared keys (bounds (0, 100), epsilon 1)\n"]
    lines.append(
        "Milliseconds per release, median / minimum (repetitions); ratios median / minimum. "
        f"Load average before -> after: {loads.get('grouped', '?')}.\n"
    )
    goals: list[dict[str, Any]] = []
    rows = []
    for n, by_label in grouped.items():
        for label, t in by_label.items():
            rows.append(
                [
                    base._rows_label(n),
                    label,
                    _ms(t[PANDAS]),
                    _ms(t[PANDAS_DP]),
                    _ms(t[OPENDP]),
                    _ms(t[TO_POLARS]),
                    _ratios(t[PANDAS_DP], t[PANDAS]),
                    _ratios(t[OPENDP], t[PANDAS_DP]),
                ]
            )
    lines.append(
        base._table(
            [
                "rows",
                "keys",
                "pandas",
                "pandas-dp",
                "OpenDP Polars",
                "pandas -> Polars",
                "pandas-dp / pandas",
                "OpenDP / pandas-dp",
            ],
            rows,
            left=2,
        )
    )
    top = max(grouped)
    for label, t in grouped[top].items():
        r = base._ratio(t[PANDAS_DP], t[PANDAS])
        goals.append(
            {
                "goal": f"grouped mean, {base._rows_label(top)}, {label}: <= 1.0x pandas",
                "value": r,
                "best": _best_ratio(t[PANDAS_DP], t[PANDAS]),
                "met": r is not None and r <= 1.0,
            }
        )
        if t[OPENDP].median is not None:
            r = base._ratio(t[OPENDP], t[PANDAS_DP])
            goals.append(
                {
                    "goal": f"grouped mean, {base._rows_label(top)}, {label}: "
                    ">= 10x faster than OpenDP Polars",
                    "value": r,
                    "best": _best_ratio(t[OPENDP], t[PANDAS_DP]),
                    "met": r is not None and r >= 10.0,
                }
            )

    lines.append(
        f"\n## 2. Private-key count, {PRIVATE_KEYS} distinct keys "
        f"(delta {PRIVATE_DELTA:g}, epsilon 1)\n"
    )
    lines.append(f"Load average before -> after: {loads.get('private', '?')}.\n")
    rows = []
    for n, t in private.items():
        rows.append(
            [
                base._rows_label(n),
                _ms(t[VC]),
                _ms(t[DP_PRIVATE]),
                _ms(t[OPENDP_PRIVATE]),
                _ratios(t[DP_PRIVATE], t[VC]),
                _ratios(t[OPENDP_PRIVATE], t[DP_PRIVATE]),
            ]
        )
    lines.append(
        base._table(
            [
                "rows",
                "pandas value_counts",
                "pandas-dp",
                "OpenDP Polars",
                "pandas-dp / value_counts",
                "OpenDP / pandas-dp",
            ],
            rows,
        )
    )
    top = max(private)
    r = base._ratio(private[top][DP_PRIVATE], private[top][VC])
    goals.append(
        {
            "goal": f"private-key count, {base._rows_label(top)}: <= 1.5x value_counts",
            "value": r,
            "best": _best_ratio(private[top][DP_PRIVATE], private[top][VC]),
            "met": r is not None and r <= 1.5,
        }
    )

    lines.append(
        f"\n## 4. Privacy unit: {base._rows_label(UNIT_ROWS)}, {UNITS} units, "
        f"max_rows_per_unit={MAX_ROWS_PER_UNIT}, grouped mean over {KEYS} keys\n"
    )
    lines.append(f"Load average before -> after: {loads.get('unit', '?')}.\n")
    rows = [[name, _ms(t)] for name, t in unit.items()]
    rows.append(["ratio unit / no unit (median / min)", _ratios(unit[DP_UNIT], unit[DP_PLAIN])])
    lines.append(base._table(["release", "ms, median / min (reps)"], rows))
    return "\n".join(lines), goals


def report_accuracy(acc: dict[str, Any], reps: int) -> tuple[str, list[dict[str, Any]]]:
    lines = [
        f"\n## 3. Accuracy: per-group RMSE, {ACC_KEYS} public keys, add/remove, epsilon 1\n",
        f"{reps} releases per cell for the mean, {LEN_REPS_FACTOR * reps} for the count "
        "(len); x uniform on the bounds (0, 100), 20 keys uniformly drawn; RMSE over all "
        "(release, key) pairs +- its Monte-Carlo standard error (over releases); the "
        "ratio's error by the delta method. For reference, a count with discrete "
        f"Laplace noise of scale 1 has RMSE {LEN_RMSE:.4f}.\n",
    ]
    rows = []
    goals: list[dict[str, Any]] = []
    for n, cell in acc.items():
        for stat in ("mean", "len"):
            ours = cell.get(f"pandas-dp {stat}")
            theirs = cell.get(f"OpenDP {stat}")
            ratio = cell.get(f"ratio {stat}")

            def fmt(c: dict[str, Any] | None) -> str:
                return "n/a" if c is None else f"{c['rmse']:.4g} +- {c['se']:.2g}"

            rows.append(
                [
                    f"{int(n):,}",
                    stat,
                    fmt(ours),
                    fmt(theirs),
                    "n/a" if ratio is None else f"{ratio['ratio']:.3f} +- {ratio['se']:.3f}",
                ]
            )
            if ratio is not None:
                # met: below 1, or above it by less than two Monte-Carlo standard errors
                # (a tie: e.g. both libraries add the same discrete Laplace to a count)
                tied = 1.0 < ratio["ratio"] <= 1.0 + 2 * ratio["se"]
                goals.append(
                    {
                        "goal": f"RMSE grouped {stat}, n={int(n):,}: <= OpenDP Polars",
                        "value": ratio["ratio"],
                        "best": None,
                        "se": ratio["se"],
                        "met": ratio["ratio"] <= 1.0 or tied,
                        "tied": tied,
                    }
                )
    lines.append(
        base._table(
            ["n", "statistic", "pandas-dp RMSE", "OpenDP RMSE", "pandas-dp / OpenDP"], rows, left=2
        )
    )
    notes = {f"n={int(n):,} {k}": v for n, cell in acc.items() for k, v in cell["notes"].items()}
    if notes:
        lines.append("\nOpenDP's noise (from `dp.summarize_polars_measurement`):\n")
        lines.extend(f"* {k}: {v}" for k, v in notes.items())
    return "\n".join(lines), goals


def report_goals(goals: list[dict[str, Any]]) -> str:
    rows = []
    for g in goals:
        value = base._fmt_ratio(g["value"])
        if g.get("best") is not None:
            value += f" (best {base._fmt_ratio(g['best'])})"
        if g.get("se") is not None:
            value += f" +- {g['se']:.3f}"
        verdict = "met" if g["met"] else "NOT met"
        if g.get("tied"):
            verdict = "tied (within 2 s.e.)"
        rows.append([g["goal"], value, verdict])
    return "\n## Targets of issue 9\n\n" + base._table(["target", "measured (median)", ""], rows)


# ----------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10^6 rows, 50 releases per cell")
    parser.add_argument("--rows", type=int, nargs="+", metavar="N", help="sizes of 1. and 2.")
    parser.add_argument("--accuracy-reps", type=int, metavar="R", help="releases per cell")
    parser.add_argument("--no-opendp", action="store_true", help="skip OpenDP")
    parser.add_argument("--json", type=Path, default=RESULTS / "groupby.json")
    parser.add_argument("--markdown", type=Path, help="default: the JSON path with .md")
    args = parser.parse_args(argv)
    sizes = sorted(set(args.rows or ([10**6] if args.quick else [10**6, 10**7])))
    reps = args.accuracy_reps or (50 if args.quick else 300)
    with_opendp = not args.no_opendp
    budget_s = 3.0 if args.quick else 20.0
    _quiet()
    base._import_opendp()
    printed: list[str] = []

    def emit(text: str = "") -> None:
        print(text, flush=True)
        printed.append(text)

    def max_reps(n: int) -> int:
        return 7 if args.quick else (25 if n <= 10**6 else 11)

    started = time.perf_counter()
    info = base.machine_info()
    emit("# pandas-dp group-by benchmark\n")
    emit(base._table(["machine", ""], [[k, str(v)] for k, v in info.items()], left=2))
    emit(
        f"\nrows {', '.join(map(str, sizes))}; up to "
        f"{', '.join(str(max_reps(n)) for n in sizes)} timed calls per contender after one "
        f"warm-up (fewer, at least 3, for a contender slower than {budget_s:g} s / calls), "
        f"interleaved; accuracy: {reps} releases per cell\n"
    )
    loads: dict[str, str] = {}
    grouped: dict[int, dict[str, dict[str, Timing]]] = {}
    private: dict[int, dict[str, Timing]] = {}
    before = base._load()
    for n in sizes:
        print(f"... grouped mean, {base._rows_label(n)}", file=sys.stderr, flush=True)
        grouped[n] = bench_grouped_mean(
            n, max_reps=max_reps(n), budget_s=budget_s, with_opendp=with_opendp
        )
    loads["grouped"] = f"{before} -> {base._load()}"
    before = base._load()
    for n in sizes:
        print(f"... private-key count, {base._rows_label(n)}", file=sys.stderr, flush=True)
        private[n] = bench_private_count(
            n, max_reps=max_reps(n), budget_s=budget_s, with_opendp=with_opendp
        )
    loads["private"] = f"{before} -> {base._load()}"
    before = base._load()
    print("... privacy unit", file=sys.stderr, flush=True)
    unit = bench_unit(max_reps=max_reps(UNIT_ROWS), budget_s=budget_s)
    loads["unit"] = f"{before} -> {base._load()}"
    text, goals = report_speed(grouped, private, unit, loads)
    emit(text)

    before = base._load()
    print("... accuracy", file=sys.stderr, flush=True)
    acc = bench_accuracy(reps, with_opendp=with_opendp)
    text, acc_goals = report_accuracy(acc, reps)
    emit(text)
    emit(f"\nLoad average before -> after the accuracy section: {before} -> {base._load()}.")
    goals += acc_goals
    emit(report_goals(goals))
    elapsed = time.perf_counter() - started
    emit(f"\nTotal time {elapsed:.0f} s; load average at the end {base._load()}.")

    def timings(d: dict[str, Timing]) -> dict[str, Any]:
        return {name: t.to_json() for name, t in d.items()}

    result = {
        "machine": info,
        "sizes": sizes,
        "accuracy_reps": reps,
        "load_average": loads,
        "grouped_mean": {
            str(n): {label: timings(t) for label, t in by.items()} for n, by in grouped.items()
        },
        "private_count": {str(n): timings(t) for n, t in private.items()},
        "privacy_unit": timings(unit),
        "accuracy": acc,
        "goals": goals,
        "elapsed_s": elapsed,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2, default=str) + "\n")
    md = args.markdown or args.json.with_suffix(".md")
    md.write_text("\n".join(printed) + "\n")
    print(f"wrote {args.json} and {md}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
