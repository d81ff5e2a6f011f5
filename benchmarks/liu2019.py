"""Reproduce the two simulation studies of Liu (2019) with pandas-dp.

F. Liu, "Statistical properties of sanitized results from differentially private
Laplace mechanism with univariate bounding constraints" (2019).

Usage::

    python benchmarks/liu2019.py --out DIR            # 500 repetitions: ~13 min on 2 busy cores
    python benchmarks/liu2019.py --quick --out DIR    # 60 repetitions, 3 sample sizes: ~1 min
    python benchmarks/liu2019.py --plots-only --out DIR   # redraw the figures from DIR's CSVs

Our copy of the paper lost its exact settings; the ones used here are chosen in its
spirit and printed at the top of the output (and written to ``DIR/settings.txt``).

**Simulation 1** releases the 2 x 2 variance-covariance matrix of two bounded
columns with Liu's direct procedure (variances first, then the covariance bounded
by ``+-sqrt(v1* v2*)``), epsilon split equally over the three entries.
**Simulation 2** releases a four-category proportion vector with four sum-to-one
procedures. Three bounding modes are compared:

``bit``
    Boundary-inflated truncation, the library's ``bounding="bit"`` (epsilon-DP).
``truncated``
    The library's ``bounding="truncated"``: the Laplace scale is re-calibrated so
    that the truncated release is epsilon-DP (REFERENCE.md section 3).
``naive``
    Liu's truncated Laplace at the scale ``Delta / epsilon`` of the untruncated
    mechanism. **Not epsilon-DP** (only ``epsilon + ln(2 - e^-epsilon)``-DP per entry);
    the public API refuses to make it, so it is built here from
    :func:`pandas_dp.noise.bounding.plan_noise` (the BIT plan, whose scale is
    ``Delta / epsilon``) with its bounding switched to ``"truncated"`` and applied
    by :func:`pandas_dp.noise.bounding.apply_noise`. A self-check at start-up verifies that
    this re-implementation reproduces the public API's ``bit`` and ``truncated``
    releases draw for draw, so the naive mode differs from them in the scale only.

The ``bit`` and ``truncated`` releases are made through the public accessors
(``df.dp.cov(method="direct")``, ``s.dp.proportions(method=...)``) with seeded
``random_state`` generators, so the run is reproducible.

Outputs in ``DIR``: ``settings.txt``, ``sim1_summary.csv``, ``sim1_scales.csv``,
``sim2_summary.csv``, ``sim2_original.csv``, ``report.txt`` (the printed tables),
``run.json`` (timings and versions) and the figures
``sim1_distribution.png``, ``sim1_bias_rmse.png``, ``sim2_bias.png``,
``sim2_rmse.png``, ``sim2_coverage.png``, ``sim2_naive.png``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import platform
import sys
import time
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from statistics import NormalDist
from typing import Any, TextIO

import numpy as np
import pandas as pd

import pandas_dp
from pandas_dp import engines
from pandas_dp.noise.bounding import apply_noise, apply_noise_exact, halfwidth, plan_noise
from pandas_dp.noise.mechanisms import RandomSource
from pandas_dp.noise.plans import NoisePlan
from pandas_dp.plan.plans import direct_allowance
from pandas_dp.plan.sensitivity import output_range, pair_sensitivity, sensitivity
from pandas_dp.stats import constraints
from pandas_dp.stats.covariance import cov_allowance
from pandas_dp.stats.histogram_estimates import sum_to_one

SEED = 2019
TOLERANCE = 1e-9  # self-check: largest allowed |re-implementation - public API|
BOUNDINGS: tuple[str, ...] = ("bit", "truncated", "naive")
LIBRARY_BOUNDINGS: tuple[str, ...] = ("bit", "truncated")
BOUNDING_LABELS = {
    "bit": "BIT (ε-DP)",
    "truncated": "truncated, calibrated (ε-DP)",
    "naive": "truncated at Δ/ε (naive, NOT ε-DP)",
}
BOUNDING_COLORS = {"bit": "tab:blue", "truncated": "tab:red", "naive": "tab:gray"}
BOUNDING_STYLES = {"bit": "-", "truncated": "--", "naive": ":"}
NEIGHBOURING = "substitute"  # the library's default (Def 1 of the paper)
ALPHA = 0.05
QUANTILES = (2.5, 25.0, 50.0, 75.0, 97.5)

# ---- simulation 1: a 2 x 2 variance-covariance matrix
S1_BOUNDS = (-1.0, 1.0)  # both columns
S1_SD = (1.0 / 3.0, 1.0 / 2.0)  # bounds at +-3 SD and +-2 SD
S1_RHOS: tuple[float, ...] = (-0.5, 0.0, 0.8)
S1_NS: tuple[int, ...] = (50, 100, 200, 400, 800)
S1_NS_QUICK: tuple[int, ...] = (50, 200, 800)
S1_EPSILON = 1.0
S1_STATS: tuple[str, ...] = ("var1", "var2", "cov12")
S1_STAT_LABELS = {"var1": "var(x1)", "var2": "var(x2)", "cov12": "cov(x1, x2)"}

# ---- simulation 2: a proportion vector
S2_LABELS: tuple[str, ...] = ("A", "B", "C", "D")
S2_P: tuple[float, ...] = (0.05, 0.15, 0.30, 0.50)
S2_NS: tuple[int, ...] = (50, 100, 200, 500, 1000, 2000, 5000)
S2_NS_QUICK: tuple[int, ...] = (50, 500, 5000)
S2_EPSILONS: tuple[float, ...] = (0.1, 0.5, 1.0)
S2_METHODS: tuple[str, ...] = ("rescale", "all_but_one", "hierarchical", "project")
METHOD_COLORS = {
    "rescale": "tab:blue",
    "all_but_one": "tab:orange",
    "hierarchical": "tab:green",
    "project": "tab:purple",
}
CATEGORY_COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red")

REPS = 500
REPS_QUICK = 60


@dataclasses.dataclass(frozen=True)
class Config:
    quick: bool
    reps: int
    s1_ns: tuple[int, ...]
    s2_ns: tuple[int, ...]
    seed: int


# ----------------------------------------------------------------------------- utilities


class Progress:
    """A minimal progress bar on stderr (a redrawn bar on a terminal, else lines)."""

    def __init__(self, total: int, label: str, stream: TextIO = sys.stderr) -> None:
        self.total, self.label, self.stream = max(total, 1), label, stream
        self.done = 0
        self.start = self.last = time.perf_counter()
        self.tty = stream.isatty()
        self.next_tenth = 1

    @staticmethod
    def _clock(seconds: float) -> str:
        m, s = divmod(round(seconds), 60)
        return f"{m}m{s:02d}s"

    def update(self, k: int = 1) -> None:
        self.done = min(self.done + k, self.total)
        now = time.perf_counter()
        frac = self.done / self.total
        elapsed = now - self.start
        eta = elapsed / frac - elapsed if frac > 0 else 0.0
        text = (
            f"{self.label} [{'#' * int(30 * frac):<30}] {frac:4.0%} "
            f"{self.done}/{self.total}  {self._clock(elapsed)} elapsed, ETA {self._clock(eta)}"
        )
        if self.tty:
            if now - self.last >= 0.2 or self.done == self.total:
                self.last = now
                self.stream.write("\r" + text)
                self.stream.flush()
        elif frac * 10 >= self.next_tenth:
            self.next_tenth = int(frac * 10) + 1
            self.stream.write(text + "\n")
            self.stream.flush()

    def close(self) -> float:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
        return time.perf_counter() - self.start


def generator(*key: int) -> np.random.Generator:
    """An independent, reproducible stream for one cell of the design."""
    return np.random.default_rng(np.random.SeedSequence([int(k) for k in key]))


def summarise(values: np.ndarray, reference: float | np.ndarray) -> dict[str, float]:
    """Mean, percentiles, bias, SD and RMSE of releases against a reference."""
    err = values - reference
    out = {"mean": float(values.mean())}
    for q, v in zip(QUANTILES, np.percentile(values, QUANTILES), strict=True):
        out[f"p{q:g}"] = float(v)
    out["bias"] = float(err.mean())
    out["sd"] = float(values.std(ddof=1))
    out["rmse"] = float(np.sqrt(np.mean(err**2)))
    return out


def bounded_laplace_error(
    theta: float, s: float, c0: float, c1: float, mode: str
) -> tuple[float, float]:
    """Bias and RMSE of ``theta + Lap(s)`` bounded to ``[c0, c1]`` (REFERENCE.md section 3).

    ``mode="bit"``: clamped (Liu's Eq. 7 for the bias); otherwise conditioned on the
    range (Liu's Eq. 6; the second moment by direct integration).
    """
    lo, up = theta - c0, c1 - theta
    e_lo, e_up = math.exp(-lo / s), math.exp(-up / s)
    if mode == "bit":
        bias = s / 2.0 * (e_lo - e_up)
        mse = 2 * s * s - s * (lo + s) * e_lo - s * (up + s) * e_up
    else:
        z = 2.0 - e_lo - e_up
        bias = ((lo + s) * e_lo - (up + s) * e_up) / z
        second = 2 * s * s - e_lo * (lo * lo / 2 + s * lo + s * s)
        second -= e_up * (up * up / 2 + s * up + s * s)
        mse = second / (z / 2.0)
    return bias, math.sqrt(max(mse, 0.0))


def naive_plan(plan: NoisePlan) -> NoisePlan:
    """The BIT plan (scale ``Delta / epsilon``) switched to truncation: Liu's, not ε-DP."""
    assert plan.bounding == "bit"
    return dataclasses.replace(plan, bounding="truncated")


# ----------------------------------------------------------------------------- simulation 1


def s1_frame(rho_index: int, rho: float, n: int, seed: int) -> pd.DataFrame:
    """One bivariate normal data set, mean 0, SDs ``S1_SD``, clipped to the bounds."""
    rng = generator(seed, 1, rho_index, n)
    sd1, sd2 = S1_SD
    cov = np.array([[sd1 * sd1, rho * sd1 * sd2], [rho * sd1 * sd2, sd2 * sd2]])
    x = np.clip(rng.multivariate_normal(np.zeros(2), cov, size=n), *S1_BOUNDS)
    return pd.DataFrame(x, columns=["x1", "x2"])


def s1_direct(
    frame: pd.DataFrame, reps: int, epsilon: float, mode: str, src: RandomSource
) -> tuple[np.ndarray, np.ndarray]:
    """Liu's direct procedure, ``reps`` times at once, from the library's building blocks.

    Mirrors ``df.dp.cov(method="direct")`` (same sensitivities, ranges, budget split
    and order of draws): with ``reps=1`` and ``mode`` in ("bit", "truncated") it
    reproduces the public API's release for the same seed (checked by
    :func:`self_check`). ``mode="naive"`` truncates at the BIT scale.
    Returns the releases ``(reps, 3)`` (var1, var2, cov12) and the scales
    ``(reps, 2)`` (variance, covariance).
    """
    n = len(frame)
    lower, upper = S1_BOUNDS
    width = upper - lower
    # the library's exact sums (centred at the midpoint, rounded to its power-of-two
    # step, added as rationals) and the variances and covariance from them, exactly
    sums = engines.products([frame[c] for c in frame.columns[:2]], [lower] * 2, [upper] * 2)
    s, prods = sums.exact()

    def exact(i: int, j: int) -> Fraction:
        return (prods[(i, j)] - s[i] * s[j] / n) / (n - 1)

    entries = 3  # var1, var2, cov12: an equal share each
    bounding = "bit" if mode == "naive" else mode

    limit = output_range("var_direct", 0.0, width, n)[1]
    var_plan = plan_noise(
        # the table's value plus the library's rounding allowance for its exact sums
        np.full(
            2 * reps,
            sensitivity("var_direct", NEIGHBOURING, lower, upper, n)
            + direct_allowance("var_direct", width, n),
        ),
        np.zeros(2 * reps),
        np.full(2 * reps, limit),
        epsilon=epsilon * 2 / entries,
        bounding=bounding,
        joint_l1=2.0,
    )
    if mode == "naive":
        var_plan = naive_plan(var_plan)
    theta_v = [exact(0, 0), exact(1, 1)] * reps
    variances = apply_noise_exact(theta_v, var_plan, src).reshape(reps, 2)

    bounded = np.clip(variances, 0.0, limit)
    # sqrt(v1) sqrt(v2), as the library computes it (the cap's last bit anchors the grid)
    cap = np.minimum(
        np.sqrt(bounded[:, 0]) * np.sqrt(bounded[:, 1]), n * width * width / (4.0 * (n - 1))
    )
    cov_plan = plan_noise(
        np.full(
            reps,
            pair_sensitivity("cov_direct", NEIGHBOURING, width, width, n)
            + cov_allowance(width, width, n),
        ),
        -cap,
        cap,
        epsilon=epsilon / entries,
        bounding=bounding,
        joint_l1=1.0,
    )
    if mode == "naive":
        cov_plan = naive_plan(cov_plan)
    cov = apply_noise_exact([exact(0, 1)] * reps, cov_plan, src)
    scales = np.column_stack([var_plan.scale.reshape(reps, 2)[:, 0], cov_plan.scale])
    return np.column_stack([variances, cov]), scales


def s1_library(
    frame: pd.DataFrame, reps: int, bounding: str, gen: np.random.Generator, progress: Progress
) -> tuple[np.ndarray, np.ndarray]:
    """``reps`` releases through the public API ``df.dp.cov(method="direct")``."""
    out = np.empty((reps, 3))
    scales = np.empty((reps, 2))
    for r in range(reps):
        c = frame.dp.cov(
            epsilon=S1_EPSILON,
            bounds=S1_BOUNDS,
            method="direct",
            bounding=bounding,
            neighbouring=NEIGHBOURING,
            random_state=gen,
        )
        m = c.to_numpy()
        out[r] = m[0, 0], m[1, 1], m[0, 1]
        sc = c.attrs["dp"].scale.to_numpy()
        scales[r] = sc[0, 0], sc[0, 1]
        progress.update()
    return out, scales


def run_sim1(cfg: Config, progress: Progress) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows: list[dict[str, Any]] = []
    scale_rows: list[dict[str, Any]] = []
    lower, upper = S1_BOUNDS
    for i_rho, rho in enumerate(S1_RHOS):
        for n in cfg.s1_ns:
            frame = s1_frame(i_rho, rho, n, cfg.seed)
            original = frame.cov().to_numpy()
            exact = {"var1": original[0, 0], "var2": original[1, 1], "cov12": original[0, 1]}
            limit = output_range("var_direct", 0.0, upper - lower, n)[1]
            releases: dict[str, tuple[np.ndarray, np.ndarray]] = {}
            for i_b, bounding in enumerate(LIBRARY_BOUNDINGS):
                gen = generator(cfg.seed, 1, i_rho, n, i_b)
                releases[bounding] = s1_library(frame, cfg.reps, bounding, gen, progress)
            src = RandomSource(generator(cfg.seed, 1, i_rho, n, 2))
            releases["naive"] = s1_direct(frame, cfg.reps, S1_EPSILON, "naive", src)
            progress.update(cfg.reps)

            for bounding in BOUNDINGS:
                values, scales = releases[bounding]
                v1, v2, c12 = values.T
                var_scale = float(scales[:, 0].mean())
                scale_rows.append(
                    {
                        "rho": rho,
                        "n": n,
                        "bounding": bounding,
                        "var_scale": var_scale,
                        "cov_scale_mean": float(scales[:, 1].mean()),
                    }
                )
                at_bound = {
                    "var1": np.mean((v1 <= 0.0) | (v1 >= limit)),
                    "var2": np.mean((v2 <= 0.0) | (v2 >= limit)),
                    "cov12": np.mean((v1 * v2 <= 0.0) | (np.abs(c12) >= np.sqrt(v1 * v2))),
                }
                for j, stat in enumerate(S1_STATS):
                    row: dict[str, Any] = {
                        "rho": rho,
                        "n": n,
                        "bounding": bounding,
                        "statistic": stat,
                        "original": float(exact[stat]),
                    }
                    row.update(summarise(values[:, j], exact[stat]))
                    row["share_at_bound"] = float(at_bound[stat])
                    if stat != "cov12":
                        mode = "bit" if bounding == "bit" else "truncated"
                        b, e = bounded_laplace_error(exact[stat], var_scale, 0.0, limit, mode)
                        row["bias_theory"], row["rmse_theory"] = b, e
                    else:
                        row["bias_theory"] = row["rmse_theory"] = np.nan
                    rows.append(row)
    return pd.DataFrame(rows), pd.DataFrame(scale_rows)


# ----------------------------------------------------------------------------- simulation 2


def s2_sizes(method: str, k: int) -> list[int]:
    if method == "hierarchical":
        return [int(np.max(level)) + 1 for level in constraints.tree_levels(k)]
    return [k - 1 if method == "all_but_one" else k]


def s2_bounds(
    plan: NoisePlan, raw: np.ndarray, method: str, k: int, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per-category intervals from the raw noisy entries (as the library computes them)."""
    shape = raw.shape
    if method == "all_but_one":
        h = halfwidth(plan, alpha / (k - 1)).reshape(shape)
        h_own = halfwidth(plan, alpha).reshape(shape)
        lo = np.clip(raw - h_own, 0.0, 1.0)
        hi = np.clip(raw + h_own, 0.0, 1.0)
        last_hi = np.clip(1.0 - np.clip(raw - h, 0.0, 1.0).sum(axis=-1), 0.0, 1.0)
        lo = np.concatenate([lo, np.zeros((*shape[:-1], 1))], axis=-1)
        hi = np.concatenate([hi, last_hi[..., None]], axis=-1)
        return lo, np.maximum(hi, lo)
    h = halfwidth(plan, alpha).reshape(shape)[..., -k:]
    leaves = raw[..., -k:]
    return np.clip(leaves - h, 0.0, 1.0), np.clip(leaves + h, 0.0, 1.0)


def s2_own(
    exact: np.ndarray, n: int, epsilon: float, method: str, mode: str, src: RandomSource
) -> dict[str, np.ndarray]:
    """The proportions release for every row of ``exact`` at once, from the building blocks.

    Mirrors ``s.dp.proportions(method=..., via="proportions")``; with one row and
    ``mode`` in ("bit", "truncated") it reproduces the public API's release.
    """
    reps, k = exact.shape
    sizes = s2_sizes(method, k)
    levels = len(sizes) if method == "hierarchical" else 1
    if method == "hierarchical":
        theta = np.concatenate(constraints.aggregate_levels(exact), axis=-1)
    elif method == "all_but_one":
        theta = exact[:, :-1]
    else:
        theta = exact
    m = theta.shape[1]
    unit = sensitivity("proportion_direct", NEIGHBOURING, 0.0, 1.0, n=n)
    per_level = sensitivity("proportions_direct", NEIGHBOURING, 0.0, 1.0, n=n) / unit
    plan = plan_noise(
        np.full(reps * m, unit),
        np.zeros(reps * m),
        np.ones(reps * m),
        epsilon=epsilon,
        bounding="bit" if mode == "naive" else mode,
        joint_l1=per_level * levels,
        max_changed=2.0 * levels,
    )
    if mode == "naive":
        plan = naive_plan(plan)
    raw = apply_noise(np.clip(theta, 0.0, 1.0).ravel(), plan, src).reshape(reps, m)
    lo, hi = s2_bounds(plan, raw, method, k, ALPHA)
    lo2, hi2 = s2_bounds(plan, raw, method, k, ALPHA / 2)
    return {
        "values": sum_to_one(method, raw, sizes),
        "lo": lo,
        "hi": hi,
        "lo2": lo2,
        "hi2": hi2,
        "scale": np.full(reps, float(plan.scale[0])),
    }


def s2_metrics(
    res: dict[str, np.ndarray], exact: np.ndarray, n: int, z_wald: float, z_half: float
) -> list[dict[str, float]]:
    """Per category: bias, RMSE and four coverages of the releases in ``res``."""
    p = np.asarray(S2_P)
    vals = res["values"]
    se_liu = np.sqrt(vals * (1.0 - vals) / n)
    q = np.clip(0.5, res["lo2"], res["hi2"])  # the largest p(1 - p) inside the interval
    se_max = np.sqrt(q * (1.0 - q) / n)
    combined_lo = np.clip(res["lo2"] - z_half * se_max, 0.0, 1.0)
    combined_hi = np.clip(res["hi2"] + z_half * se_max, 0.0, 1.0)

    def covers(lo: np.ndarray, hi: np.ndarray, target: np.ndarray) -> np.ndarray:
        return np.asarray(((lo <= target) & (target <= hi)).mean(axis=0))

    cov_sample = covers(res["lo"], res["hi"], exact)
    cov_true = covers(res["lo"], res["hi"], p)
    cov_combined = covers(combined_lo, combined_hi, p)
    cov_liu = covers(vals - z_wald * se_liu, vals + z_wald * se_liu, p)
    out = []
    for j in range(len(p)):
        err = vals[:, j] - p[j]
        out.append(
            {
                "category": S2_LABELS[j],
                "p_true": p[j],
                "mean": float(vals[:, j].mean()),
                "bias": float(err.mean()),
                "rmse": float(np.sqrt(np.mean(err**2))),
                "rmse_vs_sample": float(np.sqrt(np.mean((vals[:, j] - exact[:, j]) ** 2))),
                "cov_dp_sample": float(cov_sample[j]),
                "cov_dp_true": float(cov_true[j]),
                "cov_dp_plus_sampling": float(cov_combined[j]),
                "cov_wald_sanitized": float(cov_liu[j]),
                "mean_halfwidth": float(np.mean((res["hi"][:, j] - res["lo"][:, j]) / 2)),
                "scale": float(res["scale"].mean()),
            }
        )
    return out


def s2_data(n: int, reps: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``reps`` multinomial data sets of ``n`` records: category codes and proportions."""
    rng = generator(seed, 2, n)
    codes = rng.choice(len(S2_P), size=(reps, n), p=np.asarray(S2_P))
    counts = np.stack([(codes == j).sum(axis=1) for j in range(len(S2_P))], axis=1)
    return codes, counts / n


def run_sim2(cfg: Config, progress: Progress) -> tuple[pd.DataFrame, pd.DataFrame]:
    z_wald = NormalDist().inv_cdf(1 - ALPHA / 2)
    z_half = NormalDist().inv_cdf(1 - ALPHA / 4)  # the sampling half of a split alpha
    dtype = pd.CategoricalDtype(list(S2_LABELS))
    k = len(S2_P)
    rows: list[dict[str, Any]] = []
    original_rows: list[dict[str, Any]] = []
    p = np.asarray(S2_P)
    for n in cfg.s2_ns:
        codes, exact = s2_data(n, cfg.reps, cfg.seed)
        se = np.sqrt(exact * (1 - exact) / n)
        wald = ((exact - z_wald * se <= p) & (p <= exact + z_wald * se)).mean(axis=0)
        for j in range(k):
            err = exact[:, j] - p[j]
            original_rows.append(
                {
                    "n": n,
                    "category": S2_LABELS[j],
                    "p_true": p[j],
                    "bias": float(err.mean()),
                    "rmse": float(np.sqrt(np.mean(err**2))),
                    "cov_wald": float(wald[j]),
                }
            )

        keys = [(e, m, b) for e in S2_EPSILONS for m in S2_METHODS for b in LIBRARY_BOUNDINGS]
        gens = {
            (e, m, b): generator(
                cfg.seed,
                2,
                n,
                S2_EPSILONS.index(e),
                S2_METHODS.index(m),
                LIBRARY_BOUNDINGS.index(b),
            )
            for e, m, b in keys
        }
        store = {
            key: {name: np.empty((cfg.reps, k)) for name in ("values", "lo", "hi", "lo2", "hi2")}
            | {"scale": np.empty(cfg.reps)}
            for key in keys
        }
        for r in range(cfg.reps):
            series = pd.Series(pd.Categorical.from_codes(codes[r], dtype=dtype), name="group")
            for key in keys:
                e, m, b = key
                out = series.dp.proportions(
                    epsilon=e,
                    categories=list(S2_LABELS),
                    method=m,
                    via="proportions",
                    bounding=b,
                    neighbouring=NEIGHBOURING,
                    random_state=gens[key],
                )
                meta = out.attrs["dp"]
                ci = meta.interval(ALPHA)
                ci2 = meta.interval(ALPHA / 2)
                cell = store[key]
                cell["values"][r] = out.to_numpy()
                cell["lo"][r], cell["hi"][r] = ci["lower"].to_numpy(), ci["upper"].to_numpy()
                cell["lo2"][r], cell["hi2"][r] = ci2["lower"].to_numpy(), ci2["upper"].to_numpy()
                cell["scale"][r] = float(np.mean(meta.scale))
            progress.update()
        for i_e, e in enumerate(S2_EPSILONS):
            for i_m, m in enumerate(S2_METHODS):
                src = RandomSource(generator(cfg.seed, 2, n, i_e, i_m, 9))
                store[(e, m, "naive")] = s2_own(exact, n, e, m, "naive", src)
        for (e, m, b), res in store.items():
            for row in s2_metrics(res, exact, n, z_wald, z_half):
                rows.append({"n": n, "epsilon": e, "method": m, "bounding": b, **row})
    frame = pd.DataFrame(rows).sort_values(["epsilon", "method", "bounding", "category", "n"])
    return frame.reset_index(drop=True), pd.DataFrame(original_rows)


# ----------------------------------------------------------------------------- self-check


def self_check(seed: int) -> list[str]:
    """Check that the re-implementation behind ``naive`` matches the public API.

    For ``bit`` and ``truncated``, the building-block versions (:func:`s1_direct`,
    :func:`s2_own`) must reproduce the accessor's release and interval for the same
    seed; then ``naive`` differs from the library only in its (smaller) scale.
    """
    lines = []
    frame = s1_frame(2, S1_RHOS[2], 50, seed)
    for bounding in LIBRARY_BOUNDINGS:
        worst = 0.0
        for s in range(5):
            lib = frame.dp.cov(
                epsilon=S1_EPSILON,
                bounds=S1_BOUNDS,
                method="direct",
                bounding=bounding,
                neighbouring=NEIGHBOURING,
                random_state=seed + s,
            ).to_numpy()
            own, _ = s1_direct(frame, 1, S1_EPSILON, bounding, RandomSource(seed + s))
            worst = max(worst, float(np.max(np.abs(own[0] - lib[[0, 1, 0], [0, 1, 1]]))))
        flag = "" if worst <= TOLERANCE else "  <-- MISMATCH"
        lines.append(f"simulation 1, {bounding:9s}: max |own - df.dp.cov| = {worst:.1e}{flag}")
    codes, exact = s2_data(50, 3, seed)
    dtype = pd.CategoricalDtype(list(S2_LABELS))
    for bounding in LIBRARY_BOUNDINGS:
        worst = 0.0
        for m in S2_METHODS:
            for r in range(3):
                series = pd.Series(pd.Categorical.from_codes(codes[r], dtype=dtype), name="g")
                lib = series.dp.proportions(
                    epsilon=0.5,
                    categories=list(S2_LABELS),
                    method=m,
                    via="proportions",
                    bounding=bounding,
                    neighbouring=NEIGHBOURING,
                    random_state=seed + r,
                )
                ci = lib.attrs["dp"].interval(ALPHA)
                own = s2_own(exact[r : r + 1], 50, 0.5, m, bounding, RandomSource(seed + r))
                worst = max(
                    worst,
                    float(np.max(np.abs(own["values"][0] - lib.to_numpy()))),
                    float(np.max(np.abs(own["lo"][0] - ci["lower"].to_numpy()))),
                    float(np.max(np.abs(own["hi"][0] - ci["upper"].to_numpy()))),
                )
        flag = "" if worst <= TOLERANCE else "  <-- MISMATCH"
        lines.append(
            f"simulation 2, {bounding:9s}: max |own - s.dp.proportions| "
            f"(values and intervals, 4 methods) = {worst:.1e}{flag}"
        )
    return lines


# ----------------------------------------------------------------------------- figures


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _short(n: int) -> str:
    return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n)


def _n_axis(ax: Any, ns: Sequence[int], log_y: bool = False) -> None:
    """Log x axis labelled at the simulated n; optional log y axis with plain labels."""
    from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter, NullLocator

    ax.set_xscale("log")
    ax.set_xticks(list(ns), [_short(n) for n in ns])
    ax.xaxis.set_minor_locator(NullLocator())
    if log_y:
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(NullFormatter())


def _finish(fig: Any, handles: list[Any], title: str, path: Path, ncol: int, top: float) -> None:
    """Title on top, the legend under it, the panels below ``top``; save and close."""
    plt = _pyplot()
    fig.suptitle(title, y=0.995, fontsize=11)
    fig.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, 0.975),
        ncol=ncol,
        frameon=False,
        fontsize=8,
    )
    fig.tight_layout(rect=(0, 0, 1, top))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def fig_sim1_distribution(summary: pd.DataFrame, path: Path) -> None:
    """Error of the releases against the original, per n: mean, IQR and 95 % range."""
    plt = _pyplot()
    from matplotlib.lines import Line2D

    ns = sorted(summary["n"].unique())
    fig, axes = plt.subplots(
        len(S1_STATS), len(S1_RHOS), figsize=(4.2 * len(S1_RHOS), 3.0 * len(S1_STATS) + 0.8)
    )
    offsets = dict(zip(BOUNDINGS, (-0.25, 0.0, 0.25), strict=True))
    for i, stat in enumerate(S1_STATS):
        for j, rho in enumerate(S1_RHOS):
            ax = axes[i, j]
            ax.axhline(0.0, color="black", lw=0.8)
            for b in BOUNDINGS:
                sub = summary[
                    (summary.statistic == stat) & (summary.rho == rho) & (summary.bounding == b)
                ].sort_values("n")
                x = np.arange(len(sub)) + offsets[b]
                ref = sub["original"].to_numpy()
                c = BOUNDING_COLORS[b]
                ax.vlines(x, sub["p2.5"] - ref, sub["p97.5"] - ref, color=c, lw=1.0)
                ax.vlines(x, sub["p25"] - ref, sub["p75"] - ref, color=c, lw=4.5, alpha=0.55)
                ax.plot(x, sub["mean"] - ref, "o", color=c, ms=4.5)
                ax.plot(x, sub["p50"] - ref, "_", color="black", ms=8)
            ax.set_xticks(np.arange(len(ns)), [str(n) for n in ns])
            if i == 0:
                ax.set_title(f"ρ = {rho:g}")
            if i == len(S1_STATS) - 1:
                ax.set_xlabel("n")
            if j == 0:
                ax.set_ylabel(f"{S1_STAT_LABELS[stat]}\nrelease − original")
    handles = [
        Line2D(
            [], [], color=BOUNDING_COLORS[b], marker="o", lw=4, alpha=0.7, label=BOUNDING_LABELS[b]
        )
        for b in BOUNDINGS
    ]
    handles.append(Line2D([], [], color="black", marker="_", ls="", ms=8, label="median"))
    _finish(
        fig,
        handles,
        "Simulation 1: error of the released entries against the original "
        "(dot: mean; thick bar: 25–75 %; line: 2.5–97.5 %)",
        path,
        ncol=4,
        top=0.95,
    )


def fig_sim1_bias_rmse(summary: pd.DataFrame, path: Path) -> None:
    plt = _pyplot()
    from matplotlib.lines import Line2D

    ns = sorted(summary["n"].unique())
    fig, axes = plt.subplots(2, len(S1_STATS), figsize=(4.2 * len(S1_STATS), 7.0))
    markers = dict(zip(S1_RHOS, ("v", "o", "^"), strict=True))
    styles = dict(zip(S1_RHOS, (":", "-", "--"), strict=True))
    for j, stat in enumerate(S1_STATS):
        for b in BOUNDINGS:
            for rho in S1_RHOS:
                sub = summary[
                    (summary.statistic == stat) & (summary.rho == rho) & (summary.bounding == b)
                ].sort_values("n")
                kw = {
                    "color": BOUNDING_COLORS[b],
                    "ls": styles[rho],
                    "marker": markers[rho],
                    "ms": 4,
                }
                axes[0, j].plot(sub["n"], sub["bias"], **kw)
                axes[1, j].plot(sub["n"], sub["rmse"], **kw)
        axes[0, j].axhline(0.0, color="black", lw=0.8)
        axes[0, j].set_title(S1_STAT_LABELS[stat])
        _n_axis(axes[0, j], ns)
        _n_axis(axes[1, j], ns, log_y=True)
        axes[1, j].set_xlabel("n")
    axes[0, 0].set_ylabel("bias (release − original)")
    axes[1, 0].set_ylabel("RMSE against the original")
    handles = [
        Line2D([], [], color=BOUNDING_COLORS[b], label=BOUNDING_LABELS[b]) for b in BOUNDINGS
    ]
    handles += [
        Line2D([], [], color="black", ls=styles[r], marker=markers[r], label=f"ρ = {r:g}")
        for r in S1_RHOS
    ]
    _finish(fig, handles, "Simulation 1: bias and RMSE", path, ncol=3, top=0.9)


def _s2_grid(
    summary: pd.DataFrame,
    original: pd.DataFrame,
    metric: str,
    path: Path,
    title: str,
    boundings: Sequence[str] = LIBRARY_BOUNDINGS,
    log_y: bool = False,
    reference: str | None = None,
) -> None:
    """Rows: epsilon; columns: categories; colour: method; line style: bounding."""
    plt = _pyplot()
    from matplotlib.lines import Line2D

    ns = sorted(summary["n"].unique())
    fig, axes = plt.subplots(
        len(S2_EPSILONS),
        len(S2_LABELS),
        figsize=(3.6 * len(S2_LABELS), 2.8 * len(S2_EPSILONS) + 0.9),
    )
    for i, e in enumerate(S2_EPSILONS):
        for j, (cat, p) in enumerate(zip(S2_LABELS, S2_P, strict=True)):
            ax = axes[i, j]
            if reference is not None:
                sub = original[original.category == cat].sort_values("n")
                ax.plot(sub["n"], sub[reference], color="black", lw=2.5, alpha=0.35)
            for m in S2_METHODS:
                for b in boundings:
                    sub = summary[
                        (summary.epsilon == e)
                        & (summary.method == m)
                        & (summary.bounding == b)
                        & (summary.category == cat)
                    ].sort_values("n")
                    ax.plot(
                        sub["n"],
                        sub[metric],
                        color=METHOD_COLORS[m],
                        ls=BOUNDING_STYLES[b],
                        lw=1.2,
                    )
            if metric == "bias":
                ax.axhline(0.0, color="black", lw=0.8)
            _n_axis(ax, ns, log_y=log_y)
            if i == 0:
                ax.set_title(f"category {cat}: p = {p:g}")
            if i == len(S2_EPSILONS) - 1:
                ax.set_xlabel("n")
            if j == 0:
                ax.set_ylabel(f"ε = {e:g}")
    handles = [Line2D([], [], color=METHOD_COLORS[m], label=m) for m in S2_METHODS]
    handles += [
        Line2D([], [], color="black", ls=BOUNDING_STYLES[b], label=BOUNDING_LABELS[b])
        for b in boundings
    ]
    if reference is not None:
        handles.append(Line2D([], [], color="black", lw=2.5, alpha=0.35, label="original (no DP)"))
    _finish(fig, handles, title, path, ncol=4, top=0.93)


def fig_sim2_coverage(summary: pd.DataFrame, original: pd.DataFrame, path: Path) -> None:
    """Rescale method: four kinds of 95 % interval, against the true p (or p-hat)."""
    plt = _pyplot()
    from matplotlib.lines import Line2D

    kinds = [
        ("cov_wald_sanitized", "Liu's Wald interval on the\nrelease, true p", (-0.02, 1.02)),
        ("cov_dp_sample", 'attrs["dp"].interval(0.05),\nexact sample p̂', (0.85, 1.005)),
        ("cov_dp_true", 'attrs["dp"].interval(0.05),\ntrue p', (-0.02, 1.02)),
        ("cov_dp_plus_sampling", "DP interval (α/2) ⊕\nWald term (α/2), true p", (0.85, 1.005)),
    ]
    ns = sorted(summary["n"].unique())
    fig, axes = plt.subplots(
        len(kinds), len(S2_EPSILONS), figsize=(4.0 * len(S2_EPSILONS), 2.5 * len(kinds) + 0.9)
    )
    sub_all = summary[summary.method == "rescale"]
    for i, (metric, label, ylim) in enumerate(kinds):
        for j, e in enumerate(S2_EPSILONS):
            ax = axes[i, j]
            if metric == "cov_wald_sanitized":
                ref = original.groupby("n")["cov_wald"].mean()
                ax.plot(ref.index, ref.to_numpy(), color="black", lw=2.5, alpha=0.35)
            for c, cat in enumerate(S2_LABELS):
                for b in LIBRARY_BOUNDINGS:
                    sub = sub_all[
                        (sub_all.epsilon == e) & (sub_all.bounding == b) & (sub_all.category == cat)
                    ].sort_values("n")
                    ax.plot(sub["n"], sub[metric], color=CATEGORY_COLORS[c], ls=BOUNDING_STYLES[b])
            ax.axhline(1 - ALPHA, color="black", lw=0.8, ls=":")
            ax.set_ylim(*ylim)
            _n_axis(ax, ns)
            if i == 0:
                ax.set_title(f"ε = {e:g}")
            if j == 0:
                ax.set_ylabel(label, fontsize=9)
            if i == len(kinds) - 1:
                ax.set_xlabel("n")
    handles = [
        Line2D([], [], color=CATEGORY_COLORS[c], label=f"p = {p:g}") for c, p in enumerate(S2_P)
    ]
    handles += [
        Line2D([], [], color="black", ls=BOUNDING_STYLES[b], label=BOUNDING_LABELS[b])
        for b in LIBRARY_BOUNDINGS
    ]
    handles.append(
        Line2D([], [], color="black", lw=2.5, alpha=0.35, label="Wald on the original p̂ (no DP)")
    )
    _finish(
        fig,
        handles,
        "Simulation 2, rescale method: coverage of 95 % intervals (dotted line: 0.95)",
        path,
        ncol=4,
        top=0.92,
    )


def fig_sim2_naive(summary: pd.DataFrame, original: pd.DataFrame, path: Path) -> None:
    """Rescale method: the three bounding modes for the smallest and largest category."""
    plt = _pyplot()
    from matplotlib.lines import Line2D

    ns = sorted(summary["n"].unique())
    cats = [(0, S2_LABELS[0]), (len(S2_LABELS) - 1, S2_LABELS[-1])]
    fig, axes = plt.subplots(2, len(S2_EPSILONS), figsize=(4.0 * len(S2_EPSILONS), 6.4))
    sub_all = summary[summary.method == "rescale"]
    for j, e in enumerate(S2_EPSILONS):
        for c, cat in cats:
            ref = original[original.category == cat].sort_values("n")
            axes[1, j].plot(ref["n"], ref["rmse"], color=CATEGORY_COLORS[c], lw=3, alpha=0.3)
            for b in BOUNDINGS:
                sub = sub_all[
                    (sub_all.epsilon == e) & (sub_all.bounding == b) & (sub_all.category == cat)
                ].sort_values("n")
                kw = {"color": CATEGORY_COLORS[c], "ls": BOUNDING_STYLES[b], "marker": "o", "ms": 3}
                axes[0, j].plot(sub["n"], sub["bias"], **kw)
                axes[1, j].plot(sub["n"], sub["rmse"], **kw)
        axes[0, j].axhline(0.0, color="black", lw=0.8)
        axes[0, j].set_title(f"ε = {e:g}")
        _n_axis(axes[0, j], ns)
        _n_axis(axes[1, j], ns, log_y=True)
        axes[1, j].set_xlabel("n")
    axes[0, 0].set_ylabel("bias against the true p")
    axes[1, 0].set_ylabel("RMSE against the true p")
    handles = [Line2D([], [], color=CATEGORY_COLORS[c], label=f"p = {S2_P[c]:g}") for c, _ in cats]
    handles += [
        Line2D([], [], color="black", ls=BOUNDING_STYLES[b], label=BOUNDING_LABELS[b])
        for b in BOUNDINGS
    ]
    handles.append(Line2D([], [], color="gray", lw=3, alpha=0.3, label="original (no DP)"))
    _finish(
        fig,
        handles,
        "Simulation 2, rescale method: BIT, calibrated and naive truncation",
        path,
        ncol=3,
        top=0.88,
    )


# ----------------------------------------------------------------------------- reporting


def settings_text(cfg: Config) -> str:
    sd1, sd2 = S1_SD
    lines = [
        "Liu (2019) simulation studies, reproduced with pandas-dp "
        f"{pandas_dp.__version__}  ({'QUICK' if cfg.quick else 'FULL'} run, seed {cfg.seed})",
        "",
        "Common: Laplace mechanism, neighbouring = 'substitute' (one record replaced; "
        "Liu's Def 1).",
        "  bounding modes: bit = BIT (clamp), epsilon-DP; truncated = the library's "
        "re-calibrated truncation, epsilon-DP;",
        "  naive = truncated Laplace at the untruncated scale Delta/epsilon (Liu's "
        "Definition 2) -- NOT epsilon-DP, shown for comparison only.",
        "  bit and truncated go through the public API with random_state=<seeded "
        "Generator>; naive through pandas_dp.noise.bounding.plan_noise/apply_noise.",
        "",
        "Simulation 1 (variance-covariance matrix, df.dp.cov(method='direct')):",
        f"  x1, x2 ~ bivariate normal, mean 0, SD {sd1:.4g} and {sd2:.4g}, clipped to the "
        f"public bounds [{S1_BOUNDS[0]:g}, {S1_BOUNDS[1]:g}] (both columns)",
        f"  rho in {list(S1_RHOS)}; n in {list(cfg.s1_ns)}; epsilon = {S1_EPSILON:g} in "
        "total, epsilon/3 each for var1, var2, cov12",
        "  one data set per (rho, n); "
        f"{cfg.reps} independent releases of it per bounding mode; errors against the "
        "original (exact) entries",
        "  sensitivities: var R^2/n, cov R1 R2/n (R = 2); variance range "
        "[0, n R^2/(4(n-1))]; cov bounded by +-sqrt(v1* v2*)",
        "",
        "Simulation 2 (proportions, s.dp.proportions(method=..., via='proportions')):",
        f"  4 categories {list(S2_LABELS)} with true p = {list(S2_P)}; {cfg.reps} "
        "multinomial data sets per n (shared by all methods and epsilons)",
        f"  n in {list(cfg.s2_ns)}; epsilon in {list(S2_EPSILONS)}; methods {list(S2_METHODS)}",
        "  L1 sensitivity of the vector 2/n (each entry 1/n); hierarchical: binary tree "
        "(A+B, C+D) over the leaves, root fixed at 1, 2 noised levels",
        "  bias and RMSE against the true p; coverage of 95 % intervals: "
        'attrs["dp"].interval(0.05) against the true p and against the sample p-hat,',
        "  Liu's Wald interval p~ +- 1.96 sqrt(p~(1-p~)/n) on the release, and the DP "
        "interval at alpha/2 widened by a Wald term at alpha/2",
    ]
    return "\n".join(lines)


def report_sim1(summary: pd.DataFrame, scales: pd.DataFrame) -> str:
    out = ["", "Simulation 1: bias and RMSE against the original entries"]
    table = summary.pivot_table(
        index=["rho", "statistic", "n"], columns="bounding", values=["bias", "rmse"]
    )
    table = table.reindex(columns=pd.MultiIndex.from_product([["bias", "rmse"], BOUNDINGS]))
    out.append(table.to_string(float_format=lambda v: f"{v:+.4f}"))
    sc = scales[scales.rho == S1_RHOS[0]].pivot_table(
        index="n", columns="bounding", values="var_scale"
    )[list(BOUNDINGS)]
    sc["truncated/naive"] = sc["truncated"] / sc["naive"]
    out.append("")
    out.append("Laplace scale of each variance release (epsilon/3 each):")
    out.append(sc.to_string(float_format=lambda v: f"{v:.4f}"))
    return "\n".join(out)


def report_sim2(summary: pd.DataFrame, original: pd.DataFrame) -> str:
    out = ["", "Simulation 2: RMSE against the true p, averaged over the 4 categories"]
    rmse = summary.pivot_table(
        index=["epsilon", "n"], columns=["method", "bounding"], values="rmse", aggfunc="mean"
    )
    rmse = rmse.reindex(columns=pd.MultiIndex.from_product([S2_METHODS, BOUNDINGS]))
    rmse.columns = [f"{m[:5]}/{b[:5]}" for m, b in rmse.columns]
    orig = original.groupby("n")["rmse"].mean()
    rmse["original"] = [orig[n] for _, n in rmse.index]
    out.append(rmse.to_string(float_format=lambda v: f"{v:.4f}"))
    out.append("")
    out.append("Bias of the smallest (p = 0.05) and largest (p = 0.5) proportion, rescale:")
    sub = summary[(summary.method == "rescale") & summary.category.isin(["A", "D"])]
    bias = sub.pivot_table(index=["epsilon", "n"], columns=["category", "bounding"], values="bias")
    bias = bias.reindex(columns=pd.MultiIndex.from_product([["A", "D"], BOUNDINGS]))
    out.append(bias.to_string(float_format=lambda v: f"{v:+.4f}"))
    out.append("")
    out.append("Coverage of 95 % intervals, averaged over categories (bit / truncated):")
    cov_cols = ["cov_wald_sanitized", "cov_dp_sample", "cov_dp_true", "cov_dp_plus_sampling"]
    lib = summary[summary.bounding.isin(LIBRARY_BOUNDINGS)]
    cov = lib.groupby(["epsilon", "n", "bounding"])[cov_cols].mean().unstack("bounding")
    out.append(cov.to_string(float_format=lambda v: f"{v:.3f}"))
    out.append("")
    out.append("Minimum coverage over all cells (library modes):")
    for c in cov_cols:
        worst = lib.loc[lib[c].idxmin()]
        out.append(
            f"  {c:22s} {worst[c]:.3f}  (n={worst.n}, eps={worst.epsilon}, {worst.method}, "
            f"{worst.bounding}, p={worst.p_true})"
        )
    return "\n".join(out)


def plot_all(out: Path) -> None:
    """Draw every figure whose CSV files are in ``out``."""
    if (out / "sim1_summary.csv").exists():
        s1 = pd.read_csv(out / "sim1_summary.csv")
        fig_sim1_distribution(s1, out / "sim1_distribution.png")
        fig_sim1_bias_rmse(s1, out / "sim1_bias_rmse.png")
    if (out / "sim2_summary.csv").exists():
        s2 = pd.read_csv(out / "sim2_summary.csv")
        s2_orig = pd.read_csv(out / "sim2_original.csv")
        _s2_grid(
            s2,
            s2_orig,
            "bias",
            out / "sim2_bias.png",
            "Simulation 2: bias of the released proportions against the true p",
        )
        _s2_grid(
            s2,
            s2_orig,
            "rmse",
            out / "sim2_rmse.png",
            "Simulation 2: RMSE against the true p",
            log_y=True,
            reference="rmse",
        )
        fig_sim2_coverage(s2, s2_orig, out / "sim2_coverage.png")
        fig_sim2_naive(s2, s2_orig, out / "sim2_naive.png")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="60 repetitions, 3 values of n")
    parser.add_argument("--out", type=Path, required=True, help="directory for CSV and PNG")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--reps", type=int, default=None, help="override the repetitions")
    parser.add_argument("--only", choices=("1", "2"), help="run one simulation only")
    parser.add_argument(
        "--plots-only", action="store_true", help="redraw the figures from the CSV files in --out"
    )
    args = parser.parse_args(argv)
    if args.plots_only:
        plot_all(args.out)
        return 0
    cfg = Config(
        quick=args.quick,
        reps=args.reps or (REPS_QUICK if args.quick else REPS),
        s1_ns=S1_NS_QUICK if args.quick else S1_NS,
        s2_ns=S2_NS_QUICK if args.quick else S2_NS,
        seed=args.seed,
    )
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    text = settings_text(cfg)
    print(text, flush=True)
    print("\nSelf-check of the building-block re-implementation (should be ~0):")
    check = self_check(cfg.seed)
    for line in check:
        print("  " + line, flush=True)
    if any("MISMATCH" in line for line in check):
        print(
            "WARNING: the building-block re-implementation no longer matches the public API; "
            "the 'naive' results are not comparable with the others until it is updated.",
            flush=True,
        )
    (out / "settings.txt").write_text(text + "\n\nSelf-check:\n" + "\n".join(check) + "\n")
    timings: dict[str, float] = {}
    report = [text]

    if args.only in (None, "1"):
        total = len(S1_RHOS) * len(cfg.s1_ns) * cfg.reps * 3
        progress = Progress(total, "simulation 1")
        s1, s1_scales = run_sim1(cfg, progress)
        timings["simulation 1"] = progress.close()
        s1.to_csv(out / "sim1_summary.csv", index=False, float_format="%.6g")
        s1_scales.to_csv(out / "sim1_scales.csv", index=False, float_format="%.6g")
        text1 = report_sim1(s1, s1_scales)
        print(text1, flush=True)
        report.append(text1)

    if args.only in (None, "2"):
        progress = Progress(len(cfg.s2_ns) * cfg.reps, "simulation 2")
        s2, s2_orig = run_sim2(cfg, progress)
        timings["simulation 2"] = progress.close()
        s2.to_csv(out / "sim2_summary.csv", index=False, float_format="%.6g")
        s2_orig.to_csv(out / "sim2_original.csv", index=False, float_format="%.6g")
        text2 = report_sim2(s2, s2_orig)
        print(text2, flush=True)
        report.append(text2)

    plot_all(out)
    timings["total"] = time.perf_counter() - started
    summary = {
        "quick": cfg.quick,
        "reps": cfg.reps,
        "seed": cfg.seed,
        "timings_s": timings,
        "pandas_dp": pandas_dp.__version__,
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "python": platform.python_version(),
        "machine": platform.platform(),
        "self_check": check,
    }
    (out / "run.json").write_text(json.dumps(summary, indent=2) + "\n")
    (out / "report.txt").write_text("\n".join(report) + "\n")
    print(f"\nRun time: {', '.join(f'{k} {v:.0f} s' for k, v in timings.items())}")
    print(f"Wrote CSV, PNG and text files to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
