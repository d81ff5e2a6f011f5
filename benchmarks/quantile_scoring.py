"""How the median's selection scores a grid edge: the expected error, computed exactly.

Usage::

    python benchmarks/quantile_scoring.py               # 200 data draws per cell
    python benchmarks/quantile_scoring.py --draws 10    # a quick look
    python benchmarks/quantile_scoring.py --issue35     # why the default grid loses (issue 35)

Writes ``benchmarks/results/quantile_scoring.md`` (``--issue35`` puts its own section in
place at the end of that file and leaves the rest). The selection is permute-and-flip
on integer scores over the 131 073 edges of the default grid; permute-and-flip is
report-noisy-max with exponential noise (Ding et al. 2021), so the probability of
every edge is one integral, ``a_i * int_0^1 prod_{k != i} (1 - a_k y) dy`` with
``a_k = exp(-rate * gap_k)``, computed here by quadrature (the probabilities sum to
1 within 1e-4). The expected squared error of one release on one data set is then
exact; the table averages it over fresh data draws, so its only sampling noise is the
data's, the same for every rule (the ratios are paired).

The rules, all at the same rate (the whole epsilon on the selection):

* ``pile`` -- the distance of the rank from the ranks of the values nearest the edge
  (the former rule: a value counted at its nearest edge);
* ``point`` -- the distance of the rank from the edge's own rank (values below it
  against values above it; OpenDP's rule: its ``make_private_quantile`` draws
  report-noisy-max with exponential noise at ``epsilon / 2`` per unit of
  ``|#below - #above|``, checked against its output frequencies when OpenDP is
  installed);
* ``margin m`` -- the point's, but at most the pile's plus ``m`` ranks (the library's
  rule when this table was made; :func:`quantile_scores` here).

The data: uniform, normal and lognormal (``benchmarks/quantiles.py``) and the four
kinds of values that repeat (``benchmarks/quantile_ties.py``), n = 1000 and 100 000,
epsilon 1 and 0.1, on the bounds (0, 100).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

import quantile_ties as qt  # the data that repeat
import quantiles as qb  # the continuous data, the bounds
import run as base  # machine table

from pandas_dp.engines import grid_counts
from pandas_dp.stats.quantiles.releases import SELECT_BINS
from pandas_dp.stats.quantiles.search import half_cells

#: The library's pile margin when this table was made (the score has since become the
#: trimmed pile distance alone: ``quantile_defaults.py --variants``).
PILE_MARGIN = 2


def quantile_scores(halves: np.ndarray, p: int, q: int, margin: float) -> np.ndarray:
    """The former score, in units of ``1 / q``: the point's ``|q (A + L) - p N|``, at
    most the pile's ``max(0, q A - p N, p N - q (A + C))`` plus ``margin`` ranks
    (``inf``: the point alone)."""
    h = np.asarray(halves, dtype=np.int64).reshape(-1, 2)
    below = np.concatenate([[0], np.cumsum(h.sum(axis=1))])
    n = int(below[-1])
    point = np.abs(q * (below[:-1] + h[:, 0]) - p * n)
    if math.isinf(margin):
        return point
    pile = np.maximum(np.maximum(q * below[:-1] - p * n, p * n - q * below[1:]), 0)
    return np.minimum(point, pile + int(margin) * q)


RULES: dict[str, float] = {
    "pile": 0,
    "margin 1": 1,
    "margin 2": 2,
    "margin 4": 4,
    "margin 8": 8,
    "point": math.inf,
}
SIZES = (1_000, 100_000)
EPSILONS = (1.0, 0.1)
#: (kind, draw function)
DATA = [(k, qb.draw) for k in qb.DISTRIBUTIONS] + [(k, qt.draw) for k in qt.KINDS]
EDGES = qb.CANDIDATES  # the edges' values
#: quadrature nodes on [0, 1] for the permute-and-flip integral (dense near 0)
_Y = np.concatenate([[0.0], np.logspace(-14, 0, 6000)])


def pf_probabilities(gaps: np.ndarray, rate: float) -> tuple[np.ndarray, float]:
    """Permute-and-flip's output distribution over candidates with integer ``gaps``
    (score minus the best), and the quadrature's total before normalising."""
    u = rate * (gaps - gaps.min()).astype(float)
    keep = u < 60.0  # exp(-60): never drawn at these candidate counts
    a = np.exp(-u[keep])
    values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True)
    # log(1 - a y), finite at a = y = 1 (a factor 1e-300 there: its own exclusion
    # below cancels it exactly, and any other factor with it is 0 to the last digit)
    logs = np.log(np.clip(1.0 - np.outer(values, _Y), 1e-300, None))  # (unique, nodes)
    total_log = counts @ logs
    per = np.empty(values.size)
    for i, av in enumerate(values):
        per[i] = av * np.trapezoid(np.exp(total_log - logs[i]), _Y)
    out = np.zeros(gaps.size)
    out[np.flatnonzero(keep)] = per[inverse]
    total = float(out.sum())
    return out / total, total


def expected_sq_error(x: np.ndarray, eps: float, rules: dict[str, float]) -> dict[str, float]:
    """Per rule: the expected squared error of one median release on ``x`` (exact)."""
    counts = grid_counts(pd.Series(x), qb.LOWER, qb.UPPER, 2 * SELECT_BINS)[0]
    halves = half_cells(counts, SELECT_BINS)
    err2 = (EDGES - float(np.median(x))) ** 2
    out = {}
    for name, m in rules.items():
        probs, total = pf_probabilities(quantile_scores(halves, 1, 2, m), eps / 2.0)
        assert abs(total - 1.0) < 1e-4, total
        out[name] = float(probs @ err2)
    return out


def _ratio_se(sums: dict[str, list[float]]) -> dict[str, float]:
    """Per rule, the standard error of its RMSE ratio to the point rule's (paired
    draws, delta method)."""
    ref = np.asarray(sums["point"])
    out = {}
    for name, v in sums.items():
        x = np.asarray(v)
        if ref.mean() <= 0 or x.mean() <= 0 or len(x) < 2:
            out[name] = 0.0
            continue
        r = x.mean() / ref.mean()
        se_r = np.std(x - r * ref, ddof=1) / math.sqrt(len(x)) / ref.mean()
        out[name] = float(se_r / (2.0 * math.sqrt(r)))
    return out


def bench(draws: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(17)
    cells = []
    for kind, draw in DATA:
        for n in SIZES:
            for eps in EPSILONS:
                sums: dict[str, list[float]] = {name: [] for name in RULES}
                for _ in range(draws):
                    for name, v in expected_sq_error(draw(kind, n, rng), eps, RULES).items():
                        sums[name].append(v)
                mse = {name: float(np.mean(v)) for name, v in sums.items()}
                cells.append(
                    {"data": kind, "n": n, "epsilon": eps, "mse": mse, "se": _ratio_se(sums)}
                )
                print(kind, n, eps, {k: f"{math.sqrt(v):.3g}" for k, v in mse.items()}, flush=True)
    return cells


def check_opendp(reps: int = 20_000) -> str:
    """OpenDP's median on a small candidate set against permute-and-flip at epsilon / 2."""
    try:
        import opendp.prelude as dp
    except ImportError:
        return "OpenDP is not installed: its rule was not checked."
    dp.enable_features("contrib")
    data = [float(i) for i in range(100)]
    cands = [40.5, 44.5, 47.5, 49.5, 52.5, 60.5]
    meas = qb.opendp_quantile(dp, 0.5, 1.0, cands)
    picks = np.array([meas(data) for _ in range(reps)])
    seen = np.array([np.mean(picks == c) for c in cands])
    x = np.array(data)
    gaps = np.array([abs(int((x < c).sum()) - int((x > c).sum())) for c in cands])
    want, _ = pf_probabilities(gaps, 0.5)
    worst = float(np.abs(seen - want).max())
    return (
        f"OpenDP's `make_private_quantile` (epsilon = 1, data 0..99, candidates {cands}): "
        f"output frequencies over {reps} releases {np.round(seen, 4).tolist()}; permute-and-flip "
        f"at rate 1/2 on `|#below - #above|` gives {np.round(want, 4).tolist()} (largest "
        f"difference {worst:.4f}; three standard errors of a frequency: at most "
        f"{3 * math.sqrt(0.25 / reps):.4f})."
    )


def _ratio(r: float, se: float) -> str:
    """A ratio and its SE: three decimals, or three digits where it is below 0.01."""
    return f"{r:.3f} ± {se:.3f}" if r >= 0.01 else f"{r:.3g} ± {se:.2g}"


def report(cells: list[dict[str, Any]], draws: int, seconds: float, opendp: str) -> str:
    lines = [
        "# The median's scoring rule: expected RMSE, exact over the mechanism",
        "",
        f"`python benchmarks/quantile_scoring.py --draws {draws}` -- {seconds:.0f} s.",
        "",
        "| machine | |\n|:--|--:|",
        *(f"| {k} | {v} |" for k, v in base.machine_info().items()),
        "",
        opendp,
        "",
        f"RMSE of the median (the square root of the expected squared error, averaged over "
        f"{draws} data draws per cell), each rule at the whole epsilon; the ratio columns "
        f"divide by the `point` rule's (OpenDP's). The library's rule: margin {PILE_MARGIN}.",
        "",
        "| data | n | ε | point (OpenDP) | "
        + " | ".join(f"{k} / point" for k in RULES if k != "point")
        + " |",
        "|---|---|---|---:|" + "---:|" * (len(RULES) - 1),
    ]
    for c in cells:
        ref = math.sqrt(c["mse"]["point"])
        ratios = []
        for k in RULES:
            if k == "point":
                continue
            r = math.sqrt(c["mse"][k])
            ratios.append(
                "0 / 0"
                if ref == 0 and r == 0
                else ("inf" if ref == 0 else _ratio(r / ref, c["se"][k]))
            )
        lines.append(
            f"| {c['data']} | {c['n']:,} | {c['epsilon']:g} | {ref:.3g} | "
            + " | ".join(ratios)
            + " |"
        )
    worst = {}
    for k in RULES:
        if k == "point":
            continue
        worst[k] = max(
            (
                math.sqrt(c["mse"][k]) / math.sqrt(c["mse"]["point"])
                for c in cells
                if c["mse"]["point"] > 0
            ),
            default=float("nan"),
        )
    lines += [
        "",
        "Largest ratio to the point rule over the cells: "
        + ", ".join(f"{k} {v:.3f}" for k, v in worst.items())
        + ".",
        "",
    ]
    return "\n".join(lines)


#: The cells of issue 35: (name, data kind of ``quantile_defaults.DATA``).
ISSUE_CELLS = (("normal(50, 12)", "normal"), ("lognormal(2.5, 0.7)", "lognormal"))
ISSUE_HEADING = "## Issue 35: why the default grid loses to OpenDP's 1 001 candidates"


def issue35_rules() -> dict[str, Any]:
    """One factor at a time, from today's default to OpenDP's rule (see :func:`issue35`)."""
    import quantile_defaults as qd

    r, inf = qd.Rule, math.inf
    return {
        "OpenDP": qd.RULES["OpenDP"],
        "today: 2**17 bins, margin 2, permute-and-flip": r("today"),
        "2**17, point score (no pile)": r("a", margin=inf),
        "2**17, pile score (margin 0)": r("b", margin=0),
        "2**17, exponential mechanism": r("c", mechanism="em"),
        "2**17, runs of equal score as one candidate (not private)": r("d", collapse=True),
        "bins=1024, margin 2": r("e", bins=1024),
        "bins=1024, point score": r("f", bins=1024, margin=inf),
        "bins=1000, margin 2": r("g", bins=1000),
        "bins=1000, point score": r("h", bins=1000, margin=inf),
        "bins=1000, exponential mechanism": r("i", bins=1000, margin=inf, mechanism="em"),
        "OpenDP's candidates shifted half a step": r("j", kind="opendp", bins=1000, offset=0.5),
        "bins=256, point": r("k", bins=256, margin=inf),
        "bins=512, point": r("l", bins=512, margin=inf),
        "bins=2048, point": r("m", bins=2048, margin=inf),
        "bins=4096, point": r("n", bins=4096, margin=inf),
        "bins=16384, point": r("o", bins=16384, margin=inf),
        "proposed (quantile_defaults.PROPOSED)": qd.PROPOSED,
        "proposed without its base penalty": replace(qd.PROPOSED, theta=0.0, theta0=None),
        "proposed, margin 2 and no OpenDP score": replace(qd.PROPOSED, margin=2, neutral=False),
        "proposed, margin 1": replace(qd.PROPOSED, margin=1),
    }


def issue35(draws: int) -> str:
    """The issue's two cells (n = 1000, epsilon = 0.5, bounds (0, 100), the median),
    every rule of :func:`issue35_rules` exact on the same ``draws`` data sets."""
    import quantile_defaults as qd

    rules = issue35_rules()
    names = list(rules)
    start = time.perf_counter()
    lines = [
        ISSUE_HEADING,
        "",
        f"`python benchmarks/quantile_scoring.py --issue35 --draws {draws}`: the median of "
        f"n = 1000 values, ε = 0.5, bounds (0, 100), add/remove, `interval=False` (the whole "
        f"ε selects). Exact expected squared error per data set, averaged over {draws} fresh "
        "data sets (the same for every rule); ratio = RMSE / OpenDP's RMSE (OpenDP 0.16 "
        "`make_private_quantile`, 1 001 candidates 0, 0.1, ..., 100), with a 95 % bootstrap "
        "interval over the data sets.",
        "",
        "| rule | " + " | ".join(f"{c} RMSE | ratio [95 %]" for c, _ in ISSUE_CELLS) + " |",
        "|---|" + "---:|---:|" * len(ISSUE_CELLS),
    ]
    cols: dict[str, list[str]] = {k: [] for k in names}
    rng = np.random.default_rng(3535)
    for _, kind in ISSUE_CELLS:
        draw = qd.DATA[kind][0]
        errs = np.array(
            [
                qd.expected_sq_errors(list(rules.values()), draw(1000, rng), 0.0, 100.0, 0.5, 0.5)
                for _ in range(draws)
            ]
        )
        ref = errs[:, 0]
        for i, k in enumerate(names):
            r, lo, hi = qd.bootstrap_ratio(errs[:, i], ref, rng)
            cols[k] += [f"{math.sqrt(errs[:, i].mean()):.4f}", f"{r:.3f} [{lo:.3f}, {hi:.3f}]"]
        print(kind, "done", flush=True)
    for k in names:
        lines.append(f"| {k} | " + " | ".join(cols[k]) + " |")
    load = " ".join(f"{v:.2f}" for v in __import__("os").getloadavg())
    lines += ["", f"{time.perf_counter() - start:.0f} s; load average at the end {load}.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--issue35", action="store_true", help="the issue-35 cells alone")
    args = parser.parse_args(argv)
    if args.issue35:
        section = issue35(args.draws)
        out = Path(__file__).resolve().parent / "results" / "quantile_scoring.md"
        old = out.read_text() if out.exists() else ""
        keep = old.split(ISSUE_HEADING)[0].rstrip("\n")
        out.write_text((keep + "\n\n" if keep else "") + section)
        print(section)
        return 0
    start = time.perf_counter()
    opendp = check_opendp()
    cells = bench(args.draws)
    text = report(cells, args.draws, time.perf_counter() - start, opendp)
    out = Path(__file__).resolve().parent / "results" / "quantile_scoring.md"
    old = out.read_text() if out.exists() else ""
    kept = old[old.index(ISSUE_HEADING) :] if ISSUE_HEADING in old else ""  # --issue35's
    out.write_text(text + ("\n" + kept if kept else ""))
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
