"""Quantiles: speed and accuracy of pandas-dp against numpy, diffprivlib and OpenDP.

Usage::

    python benchmarks/quantiles.py               # speed: 10^6, 10^7 rows; accuracy: 200 releases
    python benchmarks/quantiles.py --quick       # speed: 10^6 rows; accuracy: 50 releases
    python benchmarks/quantiles.py --reps 400 --json /tmp/q.json
    python benchmarks/quantiles.py --accuracy-only --reps 600   # section 2 alone, merged
    python benchmarks/quantiles.py --speed-only                 # section 1 alone, merged
    python benchmarks/quantiles.py --report benchmarks/results/quantiles.json   # no runs

``--accuracy-only`` runs section 2 alone and puts it in place in the existing
results files: the saved speed section (its numbers and markdown) is kept, the
accuracy section and the Targets table are rewritten (the speed targets from the
saved timings).

Writes ``benchmarks/results/quantiles.json`` and the printed tables to
``benchmarks/results/quantiles.md`` (``--json``/``--markdown`` say otherwise).
All contenders run side by side in this one process.

1. **Speed**: the median of a uniform float column on the declared bounds
   (0, 100): ``s.dp.median(epsilon=1, bounds=(0, 100))`` against ``np.median`` on
   the same array, pandas' ``s.median()``, ``diffprivlib.tools.median`` and an
   OpenDP ``make_private_quantile`` measurement (candidates: the ``SELECT_BINS + 1``
   edges of pandas-dp's default grid, 128 001 since issue 35; built and calibrated
   once, invoked on a writable ndarray). Timing conventions of ``benchmarks/run.py``
   (its helpers are imported): one warm-up call, interleaved rounds, the median (and minimum) of
   the repetitions, the garbage collector paused; the load average is printed
   before and after.
2. **Accuracy**: the RMSE over ``--reps`` releases of the median and of the
   three quartiles (pooled: the square root of the mean over releases of the mean
   squared error of the three) against the data's exact quantiles (pandas' linear
   interpolation), at equal epsilon (1 and 0.1), on uniform, normal and lognormal
   data on (0, 100), n = 1000 and 100 000. Each release is on a fresh draw of the
   data, the same for every contender, and is compared with that draw's quantiles:
   the RMSE averages over the data as well as the mechanisms. (With one draw per
   cell, as before, a fine grid's error at n = 100 000 is mostly the distance from
   that one draw's median to the nearest candidate, the same every release: a
   property of the draw, not of the estimator.) Each RMSE has its Monte-Carlo standard error
   (delta method: ``sd(e^2) / (2 RMSE sqrt(reps))``, ``e^2`` the squared error
   of one release). The quartiles cost the whole epsilon: pandas-dp selects the
   three recursively (the median at half of it, then each quartile among the rows
   on its side at the other half); diffprivlib's ``tools.quantile`` splits epsilon
   evenly over them (its own rule); OpenDP gets three measurements at epsilon / 3
   (basic composition).

Neighbouring relations: pandas-dp (``neighbouring="add_remove"``, its default)
and OpenDP (symmetric distance, ``d_in=1``) protect the addition or removal of
one record. diffprivlib states no relation for ``tools.quantile``: it is Smith's
(2011) exponential mechanism over the intervals between the sorted data with a
utility of sensitivity 1, the analysis for a fixed ``n`` (changing one record).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as base  # benchmarks/run.py: timing, machine table, formatting

import pandas_dp  # noqa: F401  (registers the accessor)
from pandas_dp.stats.quantiles.releases import SELECT_BINS

LOWER, UPPER = 0.0, 100.0
BOUNDS = (LOWER, UPPER)
QUARTILES = (0.25, 0.5, 0.75)
SPEED_SIZES = {"quick": (10**6,), "full": (10**6, 10**7)}
ACC_SIZES = (1_000, 100_000)
ACC_EPSILONS = (1.0, 0.1)
DISTRIBUTIONS = ("uniform", "normal", "lognormal")
#: pandas-dp as a user calls it (the interval's counts take 5 % of epsilon), and with
#: ``interval=False`` (the whole epsilon selects: the peers' output, a number alone)
OURS = ("pandas-dp", "pandas-dp, interval=False")
PEERS = ("diffprivlib", "OpenDP")
CONTENDERS = (*OURS, *PEERS)
#: OpenDP's candidates: the edges of pandas-dp's grid.
CANDIDATES = np.linspace(LOWER, UPPER, SELECT_BINS + 1)


def draw(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` values on the bounds: uniform, normal(50, 10) or lognormal(2, 1), clipped."""
    if kind == "uniform":
        return rng.uniform(LOWER, UPPER, n)
    if kind == "normal":
        return np.clip(rng.normal(50.0, 10.0, n), LOWER, UPPER)
    return np.clip(rng.lognormal(2.0, 1.0, n), LOWER, UPPER)


def opendp_quantile(dp: Any, q: float, epsilon: float, candidates: Any = None) -> Any:
    """OpenDP's candidate-scoring quantile, calibrated to ``epsilon`` at ``d_in=1``
    (candidates: the edges of pandas-dp's grid unless given)."""
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    cands = list(CANDIDATES if candidates is None else candidates)

    def make(scale: float) -> Any:
        return dp.m.make_private_quantile(
            domain,
            dp.symmetric_distance(),
            dp.max_divergence(),
            candidates=cands,
            alpha=q,
            scale=scale,
        )

    return dp.binary_search_chain(make, d_in=1, d_out=epsilon)


# ----------------------------------------------------------------------------- speed


def bench_speed(n: int, *, max_reps: int, budget_s: float) -> dict[str, base.Timing]:
    """The median of ``n`` uniform values, every contender."""
    rng = np.random.default_rng(20240610)
    x = rng.uniform(LOWER, UPPER, n)
    s = pd.Series(x, name="x")
    c: dict[str, Callable[[], Any] | base.Timing] = {
        "np.median": lambda: np.median(x),
        "pandas s.median()": lambda: s.median(),
        "pandas-dp s.dp.median": lambda: cast(Any, s).dp.median(epsilon=1.0, bounds=BOUNDS),
    }
    peers, why = base._import_diffprivlib()
    if peers is None:
        c["diffprivlib tools.median"] = base._na(why)
    else:
        tools = peers[1]
        c["diffprivlib tools.median"] = lambda: tools.median(x, epsilon=1.0, bounds=BOUNDS)
    dp, why = base._import_opendp()
    if dp is None:
        c["OpenDP make_private_quantile (ndarray)"] = base._na(why)
    else:
        meas = opendp_quantile(dp, 0.5, 1.0)
        writable = x.copy()
        c["OpenDP make_private_quantile (ndarray)"] = lambda: meas(writable)
    return base.time_interleaved(c, max_reps=max_reps, budget_s=budget_s)


def report_speed(speed: dict[int, dict[str, base.Timing]]) -> str:
    sizes = sorted(speed)
    names = list(speed[sizes[0]])
    rows = []
    for name in names:
        row = [name]
        for n in sizes:
            t = speed[n][name]
            row.append(base._fmt_ms(t))
            row.append("n/a" if not t.samples else f"{min(t.samples) * 1e3:.3g}")
        rows.append(row)
    headers = ["median of n values"]
    for n in sizes:
        headers += [f"{base._rows_label(n)}: ms (reps)", "min ms"]
    out = [base._table(headers, rows)]
    ratio_rows = []
    pdp = "pandas-dp s.dp.median"
    for peer in names:
        if peer == pdp:
            continue
        row = [f"pandas-dp / {peer}"]
        for n in sizes:
            row.append(base._fmt_ratio(base._ratio(speed[n][pdp], speed[n][peer])))
        ratio_rows.append(row)
    out.append("")
    out.append(base._table(["ratio (medians)", *(base._rows_label(n) for n in sizes)], ratio_rows))
    return "\n".join(out)


# ----------------------------------------------------------------------------- accuracy


def _release_all(
    eps: float, tools: Any, dp: Any
) -> dict[str, Callable[[np.ndarray], tuple[float, np.ndarray]]]:
    """Per contender: one (median, quartiles) release on ``x``, each at the whole ``eps``."""
    out: dict[str, Callable[[np.ndarray], tuple[float, np.ndarray]]] = {}

    def pdp(x: np.ndarray, interval: bool) -> tuple[float, np.ndarray]:
        s = pd.Series(x, name="x")
        kw = {"epsilon": eps, "bounds": BOUNDS, "interval": interval}
        m = float(s.dp.median(**kw))
        qs = s.dp.quantile(list(QUARTILES), **kw).to_numpy()
        return m, qs

    out["pandas-dp"] = partial(pdp, interval=True)
    out["pandas-dp, interval=False"] = partial(pdp, interval=False)
    if tools is not None:

        def dpl(x: np.ndarray) -> tuple[float, np.ndarray]:
            m = float(tools.median(x, epsilon=eps, bounds=BOUNDS))
            qs = np.asarray(tools.quantile(x, list(QUARTILES), epsilon=eps, bounds=BOUNDS))
            return m, qs

        out["diffprivlib"] = dpl
    if dp is not None:
        med = opendp_quantile(dp, 0.5, eps)
        thirds = [opendp_quantile(dp, q, eps / len(QUARTILES)) for q in QUARTILES]

        def odp(x: np.ndarray) -> tuple[float, np.ndarray]:
            return float(med(x)), np.array([float(m(x)) for m in thirds])

        out["OpenDP"] = odp
    return out


def _rmse(sq: np.ndarray) -> tuple[float, float]:
    """RMSE of squared errors ``sq`` (one per release) and its Monte-Carlo SE."""
    mse = float(np.mean(sq))
    r = math.sqrt(mse)
    se = float(np.std(sq, ddof=1) / math.sqrt(len(sq)) / (2.0 * r)) if r > 0 else 0.0
    return r, se


def rmse_cell(
    sample: Callable[[], np.ndarray], eps: float, reps: int, tools: Any, dp: Any
) -> dict[str, dict[str, Any]]:
    """Per contender, the RMSE of the median and of the quartiles over ``reps``
    releases, each on the data ``sample()`` returns for it (the same for every
    contender; the error of a release is against those data's exact quantiles); a
    contender that fails on these data is reported (``error``)."""
    contenders = _release_all(eps, tools, dp)
    em = {k: np.empty(reps) for k in contenders}
    eq = {k: np.empty(reps) for k in contenders}
    errors: dict[str, str] = {}
    for r in range(reps):
        x = np.sort(sample())  # (the peers sort; sorted, every call of theirs is fast)
        truth_m = float(np.median(x))
        truth_q = np.quantile(x, QUARTILES)
        for name, fn in contenders.items():
            if name in errors:
                continue
            try:
                m, qs = fn(x.copy())  # (OpenDP reads a writable array)
            except Exception as exc:  # a peer that fails on these data
                errors[name] = f"{type(exc).__name__}: {exc}"[:80]
                continue
            em[name][r] = (m - truth_m) ** 2
            eq[name][r] = np.mean((qs - truth_q) ** 2)
    out: dict[str, dict[str, Any]] = {name: {"error": e} for name, e in errors.items()}
    for name in contenders:
        if name not in errors:
            out[name] = {"median": _rmse(em[name]), "quartiles": _rmse(eq[name])}
    return out


def peers() -> tuple[Any, Any]:
    """diffprivlib's ``tools`` and OpenDP, each ``None`` when not installed."""
    found, _ = base._import_diffprivlib()
    dp, _ = base._import_opendp()
    return (None if found is None else found[1]), dp


def bench_accuracy(reps: int) -> list[dict[str, Any]]:
    tools, dp = peers()
    rng = np.random.default_rng(7)
    cells = []
    for kind in DISTRIBUTIONS:
        for n in ACC_SIZES:
            for eps in ACC_EPSILONS:
                start = time.perf_counter()
                cell: dict[str, Any] = {"data": kind, "n": n, "epsilon": eps, "reps": reps}
                measured = rmse_cell(partial(draw, kind, n, rng), eps, reps, tools, dp)
                failed = {k: v["error"] for k, v in measured.items() if "error" in v}
                if failed:  # (on these continuous data every contender should run)
                    raise RuntimeError(f"{kind}, n={n}, eps={eps}: {failed}")
                cell.update(measured)
                cell["seconds"] = time.perf_counter() - start
                print(
                    f"  {kind:9s} n={n:<6d} eps={eps:<4} "
                    + "  ".join(
                        f"{k}: {cell[k]['median'][0]:.3g}/{cell[k]['quartiles'][0]:.3g}"
                        for k in CONTENDERS
                        if k in cell
                    ),
                    file=sys.stderr,
                    flush=True,
                )
                cells.append(cell)
    return cells


def _verdict(cell: dict[str, Any], stat: str) -> str:
    """Who has the lowest RMSE, and whether pandas-dp's gap is beyond 2 SE."""
    present = [k for k in CONTENDERS if k in cell]
    best = min(present, key=lambda k: cell[k][stat][0])
    if best in OURS:
        return best
    a, sa = min((cell[k][stat] for k in OURS), key=lambda v: v[0])
    b, sb = cell[best][stat]
    clear = (a - b) > 2.0 * math.hypot(sa, sb)
    return best if clear else f"{best} (within 2 SE)"


def report_accuracy(cells: list[dict[str, Any]]) -> str:
    out = []
    for stat in ("median", "quartiles"):
        rows = []
        for cell in cells:
            row = [cell["data"], f"{cell['n']:,}", f"{cell['epsilon']:g}"]
            for k in CONTENDERS:
                if k not in cell:
                    row.append("n/a")
                    continue
                r, se = cell[k][stat]
                # OpenDP at n = 10^5 returns one candidate every time: SE 0
                row.append(f"{r:.3g} ± {se:.2g}" if se > 1e-9 * r else f"{r:.3g} ± 0")
            peers = [cell[k][stat][0] for k in PEERS if k in cell]
            for ours in OURS:
                row.append(base._fmt_ratio(cell[ours][stat][0] / min(peers)) if peers else "n/a")
            row.append(_verdict(cell, stat))
            rows.append(row)
        ratios = ["pandas-dp / best peer", "interval=False / best peer"]
        headers = ["data", "n", "ε", *CONTENDERS, *ratios, "lowest"]
        out.append(f"RMSE of the {stat} (± Monte-Carlo SE)\n")
        out.append(base._table(headers, rows, left=3))
        out.append("")
    return "\n".join(out)


# ----------------------------------------------------------------------------- main


ACCURACY_HEADING = "## Accuracy ("
SPEED_HEADING = "## Speed: the median ("


def accuracy_section(cells: list[dict[str, Any]], reps: int, note: str = "") -> str:
    """The markdown of section 2: heading, conventions, the two RMSE tables."""
    return "\n".join(
        [
            f"{ACCURACY_HEADING}{reps} releases per cell; fresh data on (0, 100) for each release)",
            "",
            "pandas-dp and OpenDP: add/remove one record; diffprivlib: its own (Smith's"
            " exponential mechanism, sensitivity-1 utility, fixed n). OpenDP's candidates:"
            f" the {SELECT_BINS + 1} edges of pandas-dp's grid; quartiles at epsilon / 3 each."
            + note,
            "",
            report_accuracy(cells),
        ]
    )


def speed_from_json(saved: dict[str, Any]) -> dict[int, dict[str, base.Timing]]:
    """The speed section of a saved JSON as timings (the minimum kept as the one sample)."""
    return {
        int(n): {
            k: base.Timing(
                median=v["median_s"],
                reps=v["reps"],
                samples=[] if v["min_s"] is None else [v["min_s"]],
                note=v["note"] or "",
            )
            for k, v in r.items()
        }
        for n, r in saved["speed"].items()
    }


def _targets(speed: dict[int, dict[str, base.Timing]], cells: list[dict[str, Any]]) -> str:
    n = max(speed)
    pdp = speed[n]["pandas-dp s.dp.median"]
    r_np = base._ratio(pdp, speed[n]["np.median"])
    r_dpl = base._ratio(speed[n]["diffprivlib tools.median"], pdp)
    rows = [
        [
            f"median, {base._rows_label(n)}: <= 1.0x np.median",
            base._fmt_ratio(r_np),
            "n/a" if r_np is None else ("met" if r_np <= 1.0 else "**not met**"),
        ],
        [
            f"median, {base._rows_label(n)}: >= 5x faster than diffprivlib",
            "n/a" if r_dpl is None else f"{r_dpl:.0f}x faster",
            "n/a" if r_dpl is None else ("met" if r_dpl >= 5.0 else "**not met**"),
        ],
    ]
    for peer, stat, ours in itertools.product(PEERS, ("median", "quartiles"), OURS):
        have = [c for c in cells if peer in c and ours in c]
        le = sum(c[ours][stat][0] <= c[peer][stat][0] for c in have)
        worse = sum(
            c[ours][stat][0] - c[peer][stat][0]
            > 2.0 * math.hypot(c[ours][stat][1], c[peer][stat][1])
            for c in have
        )
        rows.append(
            [
                f"RMSE of the {stat} <= {peer}" + (", interval=False" if ours != OURS[0] else ""),
                f"{le} of {len(have)} cells (worse beyond 2 SE: {worse})",
                "met"
                if le == len(have)
                else "met within noise"
                if not worse
                else "**not met**"
                if not le
                else "partly",
            ]
        )
    return base._table(["target (issue 10)", "measured", ""], rows)


def run_speed(mode: str) -> dict[int, dict[str, base.Timing]]:
    """Section 1 at the sizes of ``mode`` ("quick" or "full")."""
    quick = mode == "quick"
    return {
        n: bench_speed(n, max_reps=15 if quick else 25, budget_s=2.0 if quick else 6.0)
        for n in SPEED_SIZES[mode]
    }


def speed_section(speed: dict[int, dict[str, base.Timing]], load: str) -> str:
    """The markdown of section 1: heading and tables."""
    return "\n".join(
        [
            f"{SPEED_HEADING}epsilon = 1, bounds (0, 100); load after: {load})",
            "",
            report_speed(speed),
            "",
        ]
    )


def speed_only(args: argparse.Namespace, mode: str) -> int:
    """Run section 1 alone and put it in place in existing results files (the saved
    accuracy section is kept; the Targets table is recomputed)."""
    if not args.json.exists():
        raise SystemExit(f"--speed-only merges into {args.json}, which does not exist")
    saved = json.loads(args.json.read_text(encoding="utf-8"))
    machine = base.machine_info()
    started = time.perf_counter()
    speed = run_speed(mode)
    load = base._load()
    seconds = time.perf_counter() - started
    note = (
        f"Section re-run alone (`--speed-only`, pandas-dp {machine.get('pandas-dp', '?')})"
        f" in {seconds:.0f} s; load average at start {machine.get('load average (start)')}."
        " The machine table and the accuracy section below are the earlier run's.\n"
    )
    saved["speed"] = {str(n): {k: t.to_json() for k, t in r.items()} for n, r in speed.items()}
    saved["speed_run"] = {"pandas-dp": machine.get("pandas-dp"), "seconds": seconds}
    args.json.write_text(json.dumps(saved, indent=1, default=str), encoding="utf-8")
    markdown = args.markdown or args.json.with_suffix(".md")
    old = markdown.read_text(encoding="utf-8")
    head, rest = old.split(SPEED_HEADING, 1)
    accuracy = ACCURACY_HEADING + rest.split(ACCURACY_HEADING, 1)[1].split("## Targets")[0]
    text = "\n".join(
        [
            head.rstrip("\n") + "\n",
            speed_section(speed, load) + "\n" + note,
            accuracy.rstrip("\n") + "\n",
            "## Targets",
            "",
            _targets(speed, saved["accuracy"]),
            "",
        ]
    )
    markdown.write_text(text, encoding="utf-8")
    print(text)
    return 0


def accuracy_only(args: argparse.Namespace, reps: int) -> int:
    """Run section 2 alone and put it in place in existing results files.

    The saved JSON must hold a speed section (the Targets table reads it); the
    markdown keeps everything before its accuracy heading (title, machine table,
    speed) and gets the new accuracy section and Targets table after it.
    """
    if not args.json.exists():
        raise SystemExit(f"--accuracy-only merges into {args.json}, which does not exist")
    saved = json.loads(args.json.read_text(encoding="utf-8"))
    speed = speed_from_json(saved)
    machine = base.machine_info()
    load_start = machine.get("load average (start)", base._load())
    started = time.perf_counter()
    cells = bench_accuracy(reps)
    seconds = time.perf_counter() - started
    load_end = base._load()
    note = (
        f"\n\nSection re-run alone (`--accuracy-only --reps {reps}`, pandas-dp"
        f" {machine.get('pandas-dp', '?')}) in {seconds:.0f} s; load average at start"
        f" {load_start}, at end {load_end} (2 usable cores). The speed section above and"
        " the machine table are the full run's; the speed targets below are recomputed"
        " from its saved timings."
    )
    text = "\n".join(
        [accuracy_section(cells, reps, note), "## Targets", "", _targets(speed, cells), ""]
    )
    print(text)
    saved["accuracy"] = cells
    saved["reps"] = reps
    saved["accuracy_run"] = {
        "pandas-dp": machine.get("pandas-dp"),
        "seconds": seconds,
        "load average (start)": load_start,
        "load average (end)": load_end,
    }
    args.json.write_text(json.dumps(saved, indent=1, default=str), encoding="utf-8")
    markdown = args.markdown or args.json.with_suffix(".md")
    old = markdown.read_text(encoding="utf-8") if markdown.exists() else ""
    head = old.split(ACCURACY_HEADING)[0].rstrip("\n")
    markdown.write_text((head + "\n\n" if head else "") + text, encoding="utf-8")
    print(f"\naccuracy section merged into {args.json} and {markdown}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10^6 rows only, 50 reps")
    ap.add_argument("--reps", type=int, default=None, help="releases per accuracy cell (200)")
    ap.add_argument("--json", type=Path, default=base.RESULTS / "quantiles.json")
    ap.add_argument("--markdown", type=Path, default=None)
    ap.add_argument(
        "--accuracy-only",
        action="store_true",
        help="run only the accuracy section and merge it (and the Targets table) into the "
        "existing JSON and markdown files, keeping their speed section",
    )
    ap.add_argument(
        "--speed-only",
        action="store_true",
        help="run only the speed section and merge it (and the Targets table) into the "
        "existing JSON and markdown files, keeping their accuracy section",
    )
    ap.add_argument(
        "--report", type=Path, default=None, help="re-print the tables of a saved JSON, no runs"
    )
    args = ap.parse_args(argv)
    if args.report is not None:
        saved = json.loads(args.report.read_text(encoding="utf-8"))
        speed_saved = speed_from_json(saved)
        print(report_speed(speed_saved))
        print()
        print(report_accuracy(saved["accuracy"]))
        print(_targets(speed_saved, saved["accuracy"]))
        return 0
    mode = "quick" if args.quick else "full"
    reps = args.reps or (50 if args.quick else 200)
    if args.accuracy_only:
        return accuracy_only(args, reps)
    if args.speed_only:
        return speed_only(args, "quick" if args.quick else "full")
    machine = base.machine_info()
    started = time.perf_counter()

    speed = run_speed(mode)
    load_speed = base._load()
    print("speed done", file=sys.stderr, flush=True)
    cells = bench_accuracy(reps)
    machine["load average (end)"] = base._load()

    md = [
        "# Quantiles: pandas-dp, numpy, diffprivlib, OpenDP",
        "",
        f"`python benchmarks/quantiles.py{' --quick' if args.quick else ''}`"
        f" -- {time.perf_counter() - started:.0f} s.",
        "",
        base._table(["machine", ""], [[k, str(v)] for k, v in machine.items()]),
        "",
        speed_section(speed, load_speed),
        accuracy_section(cells, reps),
        "## Targets",
        "",
        _targets(speed, cells),
        "",
    ]
    text = "\n".join(md)
    print(text)
    payload = {
        "machine": machine,
        "speed": {str(n): {k: t.to_json() for k, t in r.items()} for n, r in speed.items()},
        "accuracy": cells,
        "reps": reps,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(payload, indent=1, default=str), encoding="utf-8")
    (args.markdown or args.json.with_suffix(".md")).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
