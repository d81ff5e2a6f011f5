"""Where a plot draws: the Axes it is given, or a new figure (matplotlib loaded then).

The plots of :mod:`pandas_dp.plotting.plots` and :mod:`pandas_dp.plotting.bounding` take
an optional ``ax=``; without one, :func:`new_axes` imports matplotlib -- only now,
so ``import pandas_dp`` works without it -- and opens a figure with constrained
layout.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["new_axes"]

_INSTALL_HINT = (
    "pandas_dp.plotting.plots needs matplotlib, which is not installed. Install it with "
    'pip install "pandas-dp[plot]" (or pip install matplotlib)'
)


def new_axes(ax: Axes | None, figsize: tuple[float, float]) -> Axes:
    """``ax``, or the Axes of a new figure (importing matplotlib only now).

    Parameters
    ----------
    ax : matplotlib.axes.Axes or None
        The Axes the caller was given, returned as it is; ``None`` for a new figure.
    figsize : (float, float)
        The size of a new figure, in inches.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ImportError
        If a new figure is needed and matplotlib is not installed (saying how to
        install it).
    """
    if ax is not None:
        return ax
    try:
        import matplotlib.pyplot as plt
    except ImportError as err:  # pragma: no cover - exercised without matplotlib
        raise ImportError(_INSTALL_HINT) from err
    # constrained layout keeps everything drawn outside the axes (the legend of
    # plot_bounding_modes below them, tick labels, a colorbar) on the canvas, so
    # a plain ``fig.savefig(path)`` cuts nothing off
    _, new = plt.subplots(figsize=figsize, layout="constrained")
    return new
