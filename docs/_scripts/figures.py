"""Figures of the pandas-dp docs that are not a single call to ``pandas_dp.plotting.plots``.

Each public function draws one figure with pyplot; the pages call them with
matplotlib's ``plot`` directive (``.. plot:: _scripts/figures.py bounding_bias``), at
build time, on the Agg backend. Everything is computed from closed forms or with
fixed ``random_state`` seeds, so the figures are the same on every build and take a
few seconds in all.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import pandas_dp  # noqa: F401  (registers .dp)
from pandas_dp.noise.mechanisms import gaussian_sigma, truncated_laplace_scale

# --------------------------------------------------------------------------- bounding


def _bounded_moments(theta: np.ndarray, s: float, c0: float, c1: float) -> dict[str, np.ndarray]:
    """Bias and RMSE of the three bounding modes for ``theta + Lap(s)`` on ``[c0, c1]``.

    BIT from its closed form (Liu 2019; REFERENCE.md §3); truncation by numerical
    integration of the renormalised density.
    """
    lo, up = theta - c0, c1 - theta
    bit_bias = (s / 2) * (np.exp(-lo / s) - np.exp(-up / s))
    bit_mse = 2 * s**2 - s * (lo + s) * np.exp(-lo / s) - s * (up + s) * np.exp(-up / s)
    x = np.linspace(c0, c1, 4001)
    dens = np.exp(-np.abs(x[None, :] - theta[:, None]) / s)
    mass = np.trapezoid(dens, x, axis=1)
    tr_mean = np.trapezoid(dens * x, x, axis=1) / mass
    tr_mse = np.trapezoid(dens * (x[None, :] - theta[:, None]) ** 2, x, axis=1) / mass
    return {
        "bit bias": bit_bias,
        "bit rmse": np.sqrt(bit_mse),
        "truncated bias": tr_mean - theta,
        "truncated rmse": np.sqrt(tr_mse),
    }


def bounding_bias() -> None:
    """Bias and RMSE of none / bit / truncated along the public range."""
    c0, c1, sens, eps = 0.0, 10.0, 0.5, 0.5
    s = sens / eps
    s_cal = float(truncated_laplace_scale(sens, c1 - c0, eps)[0])
    theta = np.linspace(c0, c1, 201)
    naive = _bounded_moments(theta, s, c0, c1)
    calibrated = _bounded_moments(theta, s_cal, c0, c1)
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.0, 3.4), sharex=True)
    left.axhline(0.0, color="C7", label="none (unbiased)")
    left.plot(theta, naive["bit bias"], color="C0", label="bit")
    left.plot(theta, calibrated["truncated bias"], color="C3", label="truncated (ε-DP scale)")
    left.plot(
        theta, naive["truncated bias"], color="C3", linestyle=":", label="truncated, naive scale"
    )
    left.set_ylabel("bias of the release")
    right.axhline(math.sqrt(2) * s, color="C7", label="none")
    right.plot(theta, naive["bit rmse"], color="C0", label="bit")
    right.plot(theta, calibrated["truncated rmse"], color="C3", label="truncated (ε-DP scale)")
    right.plot(
        theta, naive["truncated rmse"], color="C3", linestyle=":", label="truncated, naive scale"
    )
    right.set_ylabel("root mean squared error")
    right.set_ylim(bottom=0.0)
    for ax in (left, right):
        ax.set_xlabel("exact value θ")
    left.legend(fontsize="small")
    fig.suptitle(
        f"range [{c0:g}, {c1:g}], sensitivity {sens:g}, ε = {eps:g}: Laplace scale {s:g} "
        f"(truncated: {s_cal:.3g})",
        fontsize="medium",
    )


def _truncation_loss(scale: np.ndarray, sens: float, width: float) -> np.ndarray:
    """Privacy loss of Laplace noise of ``scale`` truncated to a range of ``width``."""
    if math.isinf(width):
        return sens / scale + np.log(2.0 - np.exp(-sens / scale))
    d = min(sens, width)
    num = 2.0 - np.exp(-d / scale) - np.exp(-(width - d) / scale)
    den = -np.expm1(-width / scale)
    return np.asarray(d / scale + np.log(num / den))


def naive_truncation_loss() -> None:
    """The real epsilon of truncation at scale Δ/ε, and the re-calibrated scale."""
    eps = np.linspace(0.05, 3.0, 120)
    sens = 1.0
    _, (left, right) = plt.subplots(1, 2, figsize=(9.0, 3.4))
    left.plot(eps, eps, color="k", linewidth=0.8, label="promised ε")
    for width, colour in ((2.0, "C1"), (10.0, "C2"), (math.inf, "C3")):
        label = "range = ∞ (one-sided)" if math.isinf(width) else f"range = {width:g} Δ"
        left.plot(eps, _truncation_loss(sens / eps, sens, width), color=colour, label=label)
        ratio = truncated_laplace_scale(sens, width, eps) / (sens / eps)
        right.plot(eps, ratio, color=colour, label=label)
    left.set_xlabel("ε used to set the scale Δ/ε")
    left.set_ylabel("actual privacy loss")
    left.set_title("truncation at the naive scale Δ/ε", fontsize="medium")
    left.legend(fontsize="small")
    right.set_xlabel("ε")
    right.set_ylabel("calibrated scale / (Δ/ε)")
    right.set_title("scale that keeps truncation ε-DP", fontsize="medium")
    right.set_ylim(bottom=1.0)
    right.legend(fontsize="small")


# --------------------------------------------------------------------------- mechanisms


def gaussian_calibration() -> None:
    """Classical vs analytic Gaussian noise for the same (ε, δ)."""
    delta = 1e-5
    eps = np.geomspace(0.05, 15.0, 120)
    analytic = np.array([gaussian_sigma(1.0, float(e), delta) for e in eps])
    classical = math.sqrt(2 * math.log(1.25 / delta)) / eps
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.0, 3.4))
    left.plot(eps, analytic, color="C0", label="analytic (Balle & Wang 2018)")
    left.plot(eps, classical, color="C3", linestyle="--", label="classical √(2 ln(1.25/δ)) / ε")
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_ylabel("σ / Δ₂")
    left.legend(fontsize="small")
    right.plot(eps, classical / analytic, color="C3")
    right.axhline(1.0, color="k", linewidth=0.8)
    right.fill_between(
        eps, 0.9, 1.0, color="C3", alpha=0.12, label="below 1: too little noise, not DP"
    )
    right.set_xscale("log")
    right.set_ylim(0.9, 1.6)
    right.set_ylabel("classical σ / analytic σ")
    right.legend(fontsize="small", loc="upper right")
    for ax in (left, right):
        ax.axvspan(1.0, eps.max(), color="0.5", alpha=0.08)
        ax.set_xlabel("ε")
    fig.suptitle(
        f"Gaussian noise for δ = {delta:g} (shaded: ε ≥ 1, where the classical formula "
        f"is not proven)",
        fontsize="medium",
    )


# --------------------------------------------------------------------------- proportions


def proportions_rmse() -> None:
    """RMSE of each sum-to-one procedure on a skewed distribution (small simulation)."""
    from pandas_dp.stats.histograms import METHODS

    categories = list("ABCDEFGH")
    sizes = [400, 250, 150, 90, 60, 30, 15, 5]
    s = pd.Series(np.repeat(categories, sizes), name="answer")
    exact = s.value_counts(normalize=True).reindex(categories).to_numpy()
    reps, eps = 40, 0.1
    rmse = {}
    for via in ("proportions", "counts"):
        for method in METHODS:
            err = np.zeros(len(categories))
            for r in range(reps):
                p = s.dp.proportions(
                    epsilon=eps,
                    categories=categories,
                    method=method,
                    via=via,
                    neighbouring="substitute",  # Liu's setting: a public n
                    random_state=1000 * r + 7,
                )
                err += (p.to_numpy() - exact) ** 2
            rmse[(method, via)] = np.sqrt(err / reps)
    fig, (left, right) = plt.subplots(
        1, 2, figsize=(9.5, 3.4), gridspec_kw={"width_ratios": [3, 2]}
    )
    x = np.arange(len(categories))
    for i, method in enumerate(METHODS):
        left.plot(x, rmse[(method, "proportions")], color=f"C{i}", marker="o", label=method)
    left.set_xticks(x)
    left.set_xticklabels([f"{c}\n{p:.1%}" for c, p in zip(categories, exact, strict=True)])
    left.set_xlabel("category (exact share)")
    left.set_ylabel("RMSE of the released share")
    left.set_ylim(bottom=0.0)
    left.set_title("per category, via='proportions'", fontsize="medium")
    left.legend(fontsize="small")
    width = 0.38
    for j, (via, hatch) in enumerate((("proportions", ""), ("counts", "//"))):
        totals = [float(np.sqrt(np.mean(rmse[(m, via)] ** 2))) for m in METHODS]
        right.bar(
            np.arange(len(METHODS)) + (j - 0.5) * width,
            totals,
            width,
            color=[f"C{i}" for i in range(len(METHODS))],
            hatch=hatch,
            edgecolor="white",
            label=f"via='{via}'",
        )
    right.set_xticks(np.arange(len(METHODS)))
    right.set_xticklabels(list(METHODS), rotation=20)
    right.set_ylabel("RMSE over all categories")
    right.set_title("all categories", fontsize="medium")
    right.legend(fontsize="small")
    fig.suptitle(f"n = {len(s)}, ε = {eps:g}, {reps} releases each", fontsize="medium")
