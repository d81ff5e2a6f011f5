"""The output bounding modes, simulated and drawn (drawing needs matplotlib).

:func:`simulate_bounding_modes`
    Many releases of one exact value under each output bounding mode (``"none"``,
    ``"bit"``, ``"truncated"``), each calibrated and drawn as the library draws one
    release (:mod:`pandas_dp.noise.plans`, :mod:`pandas_dp.noise.bounding`).
:func:`plot_bounding_modes`
    Their distributions, with the bias of each mode.

Both are exported by :mod:`pandas_dp.plotting.plots`, where the documentation lists them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from pandas_dp.noise import bounding
from pandas_dp.noise import plans as noise_plans
from pandas_dp.noise.mechanisms import RandomSource
from pandas_dp.plotting.axes import new_axes

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_bounding_modes", "simulate_bounding_modes"]

#: Colours of the bounding modes (matplotlib's default cycle, fixed per mode).
_MODE_COLOURS = {"none": "C7", "bit": "C0", "truncated": "C3"}
_MODE_NAMES = {
    "none": "none",
    "bit": "bit (clamped)",
    "truncated": "truncated (re-calibrated)",
}


def simulate_bounding_modes(
    exact: float,
    lower: float,
    upper: float,
    *,
    sensitivity: float,
    epsilon: float,
    modes: Sequence[str] = ("none", "bit", "truncated"),
    mechanism: str = "laplace",
    delta: float = 0.0,
    draws: int = 20_000,
    random_state: int | np.random.Generator | None = None,
) -> pd.DataFrame:
    """Many independent releases of one exact value under each bounding mode.

    Each column holds ``draws`` releases of ``exact`` (a statistic whose public
    range is ``[lower, upper]`` and whose global sensitivity is ``sensitivity``),
    each made exactly as the library makes one release with budget ``epsilon``:
    same calibration (``"truncated"`` re-calibrated to stay epsilon-DP), same
    power-of-two grid, same samplers. Useful to see the bias and spread of the
    modes; does not need matplotlib.

    Parameters
    ----------
    exact : float
        The true value, inside ``[lower, upper]``.
    lower, upper : float
        The public range of the statistic (``lower < upper``, both finite).
    sensitivity : float
        Its global sensitivity.
    epsilon : float
        The budget of *one* release.
    modes : sequence of {"none", "bit", "truncated"}
        The bounding modes to simulate.
    mechanism : {"laplace", "gaussian"}, default "laplace"
        ``"gaussian"`` needs ``delta`` and cannot be ``"truncated"``.
    delta : float, default 0.0
    draws : int, default 20000
        Releases per mode.
    random_state : int or numpy.random.Generator, optional
        Seed for reproducible draws; the OS CSPRNG otherwise.

    Returns
    -------
    pandas.DataFrame
        One column per mode, ``draws`` rows. ``attrs["scale"]`` holds the noise
        scale of each mode (the re-calibrated one for ``"truncated"``).

    Examples
    --------
    >>> from pandas_dp.plotting.plots import simulate_bounding_modes
    >>> sims = simulate_bounding_modes(1.0, 0.0, 10.0, sensitivity=1.0, epsilon=1.0,
    ...                                draws=5000, random_state=0)
    >>> list(sims.columns)
    ['none', 'bit', 'truncated']
    >>> bool(sims["bit"].min() >= 0.0), bool(sims["none"].min() < 0.0)
    (True, True)
    >>> round(sims.attrs["scale"]["truncated"], 4)  # re-calibrated, wider than 1
    1.6116
    """
    lo, hi = float(lower), float(upper)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"need finite lower < upper; got ({lower}, {upper})")
    if not lo <= exact <= hi:
        raise ValueError(f"exact={exact} lies outside the public range [{lower}, {upper}]")
    if not sensitivity > 0:
        raise ValueError(f"sensitivity must be positive; got {sensitivity}")
    if draws < 1:
        raise ValueError(f"draws must be at least 1; got {draws}")
    source = RandomSource(random_state)
    columns: dict[str, np.ndarray] = {}
    scales: dict[str, float] = {}
    for mode in modes:
        # ``draws`` independent one-entry releases, planned as one vector whose
        # joint sensitivity is that of a single entry: every entry gets the
        # calibration of a lone release with budget ``epsilon``.
        plan = noise_plans.plan_noise(
            np.full(draws, float(sensitivity)),
            np.full(draws, lo),
            np.full(draws, hi),
            epsilon=epsilon,
            delta=delta,
            mechanism=mechanism,
            bounding=mode,
            joint_l1=1.0,
            joint_l2=1.0,
            max_changed=1.0,
        )
        columns[mode] = bounding.apply_noise(np.full(draws, float(exact)), plan, source)
        scales[mode] = float(plan.scale[0])
    frame = pd.DataFrame(columns)
    frame.attrs["scale"] = scales
    frame.attrs["exact"] = float(exact)
    frame.attrs["range"] = (lo, hi)
    return frame


def plot_bounding_modes(
    exact: float,
    lower: float,
    upper: float,
    *,
    sensitivity: float,
    epsilon: float,
    modes: Sequence[str] = ("none", "bit", "truncated"),
    draws: int = 20_000,
    bins: int = 80,
    random_state: int | np.random.Generator | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Histograms of many releases of one value under each output bounding mode.

    Draws the samples of :func:`simulate_bounding_modes` (Laplace mechanism):
    the density of the releases that fall strictly inside the public range (and,
    for ``"none"``, outside it), the point masses that ``"bit"`` puts on the ends
    of the range (their size is in the legend), the exact value (dashed) and the
    mean release of each mode (a triangle on the axis; its distance to the exact
    value is the bias, in the legend).

    Parameters
    ----------
    exact, lower, upper, sensitivity, epsilon, modes, draws, random_state
        As in :func:`simulate_bounding_modes`.
    bins : int, default 80
        Histogram bins across the plotted range.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure by default.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from pandas_dp.plotting.plots import plot_bounding_modes
    >>> ax = plot_bounding_modes(1.0, 0.0, 10.0, sensitivity=1.0, epsilon=1.0,
    ...                          draws=5000, random_state=0)
    >>> len(ax.patches) > 0, len(ax.get_legend().get_texts())
    (True, 4)
    """
    sims = simulate_bounding_modes(
        exact,
        lower,
        upper,
        sensitivity=sensitivity,
        epsilon=epsilon,
        modes=modes,
        draws=draws,
        random_state=random_state,
    )
    lo, hi = float(lower), float(upper)
    axes = new_axes(ax, (7.0, 4.2))
    width = hi - lo
    left = min(lo - 0.05 * width, float(sims.min().min()))
    right = max(hi + 0.05 * width, float(sims.max().max()))
    edges = np.linspace(left, right, bins + 1)
    for mode in sims.columns:
        x = sims[mode].to_numpy()
        colour = _MODE_COLOURS.get(str(mode))
        mean = float(x.mean())
        label = f"{_MODE_NAMES.get(str(mode), mode)}: bias {mean - exact:+.2g}"
        if mode == "bit":
            at_lo, at_hi = float(np.mean(x <= lo)), float(np.mean(x >= hi))
            label += f"; {at_lo:.0%} at {lo:g}, {at_hi:.0%} at {hi:g}"
            inside = x[(x > lo) & (x < hi)]
        else:
            inside = x
        weights = np.full(inside.size, 1.0 / (x.size * (edges[1] - edges[0])))
        axes.hist(
            inside,
            bins=edges.tolist(),
            weights=weights,
            histtype="step",
            linewidth=1.6,
            color=colour,
            label=label,
        )
        axes.plot([mean], [0.0], "^", color=colour, markersize=9, clip_on=False)
    axes.axvline(exact, color="k", linestyle="--", linewidth=1.0, label=f"exact value {exact:g}")
    for end in (lo, hi):
        axes.axvline(end, color="0.5", linestyle=":", linewidth=1.0)
    axes.set_xlim(left, right)
    axes.set_ylim(bottom=0.0)
    axes.set_xlabel("release")
    axes.set_ylabel("density")
    axes.set_title(
        f"{draws} releases, sensitivity {sensitivity:g}, ε={epsilon:g}, "
        f"public range [{lo:g}, {hi:g}]",
        fontsize="medium",
    )
    # below the axes: the histograms fill the plot
    axes.legend(
        fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False
    )
    return axes
