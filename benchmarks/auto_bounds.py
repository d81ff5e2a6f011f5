"""bounds="auto" against the true range declared: is the bounds' share worth it?

For each data set (normal ages, log-normal incomes, piled integers, years of birth),
size ``n`` and total epsilon, the mean, the standard deviation and the median are
released

* on the *true range* declared: the data's exact minimum and maximum (an oracle no
  private release has; the best a declaration can do without clipping), with the
  whole epsilon;
* on a *generous* range a user might declare without looking at the data;
* on bounds estimated privately (:func:`pandas_dp.stats.auto_bounds.resolve_auto`,
  what ``bounds="auto"`` runs): a share of epsilon on the band histogram, the rest
  on the release through the public ``s.dp.mean(..., bounds=(lo, hi))`` etc.

The error is the RMSE against pandas' exact statistic of the same data over
``--reps`` noise draws (the data fixed per setting). Each auto rep draws one bounds
release per (share, beta) and uses it for the three statistics and for every reading
of it (each statistic's error has the distribution it would have with a bounds
release of its own; the readings are compared on the same noisy counts). The
variants are listed in :data:`READINGS` and :data:`SHARES`.

Run: ``nice -n 10 python benchmarks/auto_bounds.py [--reps 20] [--study shares]``
(about five minutes each); writes ``results/auto_bounds.md`` (``--study shares``) or
``results/auto_bounds_readings.md`` (``--study readings``).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import pandas_dp  # noqa: F401  (registers s.dp)
from pandas_dp.request.settings import Settings
from pandas_dp.stats import auto_bounds as ab

RESULTS = Path(__file__).resolve().parent / "results"
SEED = 20261207
SIZES = (100, 1_000, 10_000, 100_000)
EPSILONS = (0.1, 1.0, 10.0)
STATS = ("mean", "std", "median")
#: (label, share, beta, reading) of the auto variants. Variants with the same share
#: and beta read one bounds release (paired): ``edges`` is REFERENCE.md §14's reading
#: (the outer edges of the bands above the threshold), ``zero`` stretches it to
#: include zero (``read_bounds(..., zero=True)``), ``halve`` moves the bound nearer
#: zero one band outwards (a positive lower bound halved, a negative upper bound
#: halved).
READINGS: tuple[tuple[str, float, float, str], ...] = (
    ("edges 0.2", 0.2, 1e-6, "edges"),
    ("halve 0.2", 0.2, 1e-6, "halve"),
    ("zero 0.2", 0.2, 1e-6, "zero"),
    ("zero 0.3", 0.3, 1e-6, "zero"),
    ("zero 0.2, β 1e-3", 0.2, 1e-3, "zero"),
)
SHARES: tuple[tuple[str, float, float, str], ...] = (
    ("zero 0.2", 0.2, 1e-6, "zero"),
    ("edges 0.3", 0.3, 1e-6, "edges"),
    ("zero 0.3", 0.3, 1e-6, "zero"),
    ("zero 0.4", 0.4, 1e-6, "zero"),
    ("zero 0.3, β 1e-4", 0.3, 1e-4, "zero"),
    ("zero 0.4, β 1e-4", 0.4, 1e-4, "zero"),
    ("zero 0.3, β 1e-3", 0.3, 1e-3, "zero"),
)
#: The two studies (``--study``): readings of one release, and shares.
STUDIES = {"readings": READINGS, "shares": SHARES}
Variants = tuple[tuple[str, float, float, str], ...]
KINDS = ("normal", "income", "piled", "years")


def data(kind: str, n: int) -> pd.Series:
    """One fixed data set: ``normal`` ages, ``income`` (log-normal), ``piled`` integers."""
    rng = np.random.default_rng([SEED, n, len(kind)])
    if kind == "normal":
        x = rng.normal(45.0, 15.0, n)
    elif kind == "income":
        x = rng.lognormal(10.0, 1.0, n)
    elif kind == "piled":  # counts piled on a few small values (visits, children ...)
        x = np.minimum(rng.negative_binomial(1, 0.35, n), 40).astype(np.float64)
    else:  # far from zero: years of birth
        x = np.round(rng.normal(1975.0, 15.0, n))
    return pd.Series(x, name=kind)


#: What a user might declare without looking at the data (public, generous).
GENEROUS: dict[str, tuple[float, float]] = {
    "normal": (0.0, 120.0),
    "income": (0.0, 1e6),
    "piled": (0.0, 100.0),
    "years": (1900.0, 2030.0),
}


def exact(s: pd.Series, stat: str) -> float:
    return float(getattr(s, stat)())


def release(s: pd.Series, stat: str, eps: float, bounds: tuple[float, float], rng: Any) -> float:
    return float(getattr(s.dp, stat)(epsilon=eps, bounds=bounds, random_state=rng))


def one_setting(kind: str, n: int, eps: float, reps: int, variants: Variants) -> dict[str, Any]:
    s = data(kind, n)
    truth = {st: exact(s, st) for st in STATS}
    true_range = (float(s.min()), float(s.max()))
    rng = np.random.default_rng([SEED, n, int(eps * 10), len(kind), 1])
    errors: dict[str, dict[str, list[float]]] = {
        "declared": {st: [] for st in STATS},
        "generous": {st: [] for st in STATS},
    }
    fell: dict[str, int] = {}
    widths: dict[str, list[float]] = {}
    for label, *_ in variants:
        errors[label] = {st: [] for st in STATS}
        fell[label] = 0
        widths[label] = []
    releases = sorted({(share, beta) for _, share, beta, _ in variants})
    for _ in range(reps):
        for st in STATS:
            errors["declared"][st].append(release(s, st, eps, true_range, rng) - truth[st])
            generous = release(s, st, eps, GENEROUS[kind], rng)
            errors["generous"][st].append(generous - truth[st])
        for share, beta in releases:
            auto = ab.resolve_auto(
                s, Settings(epsilon=eps, random_state=rng), bounds_epsilon_share=share, beta=beta
            )
            counts = auto.record.details["band counts"][s.name]
            scale = auto.record.details["columns"][s.name]["scale"]
            for label, v_share, v_beta, reading in variants:
                if (v_share, v_beta) != (share, beta):
                    continue
                lo, hi, fell_back = ab.read_bounds(counts, scale, beta, zero=reading == "zero")
                if reading == "halve":
                    lo, hi = (lo / 2 if lo > 0 else lo), (hi / 2 if hi < 0 else hi)
                fell[label] += fell_back
                widths[label].append(hi - lo)
                for st in STATS:
                    got = release(s, st, auto.settings.epsilon, (lo, hi), rng)
                    errors[label][st].append(got - truth[st])
    rmse = {
        label: {st: math.sqrt(float(np.mean(np.square(v)))) for st, v in per.items()}
        for label, per in errors.items()
    }
    return {
        "kind": kind,
        "n": n,
        "eps": eps,
        "true_range": true_range,
        "rmse": rmse,
        "fell": fell,
        "width": {k: float(np.median(v)) for k, v in widths.items()},
    }


def _ratio(auto: float, declared: float) -> float:
    """``auto / declared``, 1 where both are (numerically) exact."""
    tiny = 1e-9
    return (auto + tiny) / (declared + tiny)


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def report(
    rows: list[dict[str, Any]], reps: int, seconds: float, load: str, variants: Variants
) -> str:
    labels = [v[0] for v in variants]
    out = [
        '# bounds="auto": private range estimation against the true range declared',
        "",
        f"`nice -n 10 python benchmarks/auto_bounds.py --reps {reps}` ({seconds:.0f} s; "
        f"load average before/after: {load}). RMSE against pandas' exact statistic over "
        f"{reps} noise draws per setting (data fixed per setting). *declared*: the data's "
        f"exact [min, max] declared, whole epsilon (an oracle). *generous*: a range a "
        f"user might declare unseen (normal [0, 120], income [0, 1e6], piled [0, 100]). "
        f"*auto s*: `resolve_auto` (what "
        f'`bounds="auto"` runs) with share s of epsilon on the band histogram '
        f"(β = 1e-6 unless stated), the rest on the release. Ratio: auto RMSE over "
        f"declared RMSE (below 1: auto is better, which happens where the true range "
        f"is far wider than the bulk of the data and auto's clipping pays).",
        "",
        "Data: *normal* N(45, 15²); *income* log-normal(10, 1); *piled* "
        "min(NegBin(1, 0.35), 40) integers; *years* round(N(1975, 15)) (far from zero). "
        "Readings of one bounds release: *edges* (REFERENCE.md §14: the outer edges of "
        "the bands above the threshold), *zero* (the same stretched to include zero), "
        "*halve* (a positive lower bound halved: one band further toward zero).",
        "",
    ]
    for st in STATS:
        out += [f"## {st}", ""]
        head = "| data | n | ε | declared | generous (ratio) | " + " | ".join(
            f"{lab} (ratio)" for lab in labels
        )
        out += [head + " |", "|---|---|---|---|---|" + "---|" * len(labels)]
        for r in rows:
            d = r["rmse"]["declared"][st]
            cells = [
                f"{_fmt(r['rmse'][lab][st])} ({_ratio(r['rmse'][lab][st], d):.2f})"
                for lab in labels
            ]
            g = r["rmse"]["generous"][st]
            gen = f"{_fmt(g)} ({_ratio(g, d):.2f})"
            out.append(
                f"| {r['kind']} | {r['n']} | {r['eps']:g} | {_fmt(d)} | {gen} | "
                + " | ".join(cells)
                + " |"
            )
        out.append("")
    out += [
        "## Bounds: median width and fallbacks",
        "",
        "| data | n | ε | true range | "
        + " | ".join(f"{lab} width (fell back)" for lab in labels)
        + " |",
        "|---|---|---|---|" + "---|" * len(labels),
    ]
    for r in rows:
        lo, hi = r["true_range"]
        cells = [f"{_fmt(r['width'][lab])} ({r['fell'][lab]}/{reps})" for lab in labels]
        out.append(
            f"| {r['kind']} | {r['n']} | {r['eps']:g} | [{_fmt(lo)}, {_fmt(hi)}] | "
            + " | ".join(cells)
            + " |"
        )
    out.append("")
    out += [
        "## Summary: median ratio, and settings within 1.5x of declared",
        "",
        "Over all settings, then over those with n ε >= 1000 (where the bounds are "
        "expected to be worth their share: n ε_b >> c ln(B / β)).",
        "",
        "| variant | "
        + " | ".join(f"{st} median" for st in STATS)
        + " | all ≤ 1.5x | n ε ≥ 1000: "
        + " | ".join(f"{st} median" for st in STATS)
        + " | n ε ≥ 1000: ≤ 1.5x |",
        "|---|" + "---|" * (2 * len(STATS) + 2),
    ]
    big = [r for r in rows if r["n"] * r["eps"] >= 1000]
    for lab in ["generous", *labels]:
        cells = []
        for subset in (rows, big):
            ratios = {
                st: [_ratio(r["rmse"][lab][st], r["rmse"]["declared"][st]) for r in subset]
                for st in STATS
            }
            every = [x for v in ratios.values() for x in v]
            cells += [f"{float(np.median(v)):.2f}" if v else "-" for v in ratios.values()]
            within = sum(x <= 1.5 for x in every)
            cells.append(f"{within}/{len(every)}")
        out.append(f"| {lab} | " + " | ".join(cells) + " |")
    out += [
        "",
        "Pooled over the three statistics and the settings with n ε ≥ 1000: the median "
        "ratio, the geometric mean of the ratios (each clipped to [0.1, 100]: exact "
        "medians of integer data give ratios near 0), and the shares of ratios within "
        "1.5x and 3x.",
        "",
        "| variant | median | geometric mean | ≤ 1.5x | ≤ 3x |",
        "|---|---|---|---|---|",
    ]
    for lab in ["generous", *labels]:
        pooled = np.array(
            [_ratio(r["rmse"][lab][st], r["rmse"]["declared"][st]) for r in big for st in STATS]
        )
        if not pooled.size:
            continue
        geo = math.exp(float(np.mean(np.log(np.clip(pooled, 0.1, 100.0)))))
        out.append(
            f"| {lab} | {float(np.median(pooled)):.2f} | {geo:.2f} | "
            f"{float(np.mean(pooled <= 1.5)):.2f} | {float(np.mean(pooled <= 3.0)):.2f} |"
        )
    out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    parser.add_argument("--study", choices=sorted(STUDIES), default="shares")
    args = parser.parse_args(argv)
    variants = STUDIES[args.study]
    before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    start = time.perf_counter()
    rows = []
    for kind in KINDS:
        for n in args.sizes:
            for eps in EPSILONS:
                rows.append(one_setting(kind, n, eps, args.reps, variants))
                print(kind, n, eps, f"{time.perf_counter() - start:.0f}s", file=sys.stderr)
    seconds = time.perf_counter() - start
    after = " ".join(f"{x:.2f}" for x in os.getloadavg())
    text = report(rows, args.reps, seconds, f"{before} / {after}", variants)
    RESULTS.mkdir(exist_ok=True)
    name = "auto_bounds.md" if args.study == "shares" else f"auto_bounds_{args.study}.md"
    (RESULTS / name).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
