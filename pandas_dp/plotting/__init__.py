"""Plots of releases and of the output bounding modes (drawing needs matplotlib).

The functions live in :mod:`~pandas_dp.plotting.plots`; the simulation of the
bounding modes in :mod:`~pandas_dp.plotting.bounding`.
"""

from pandas_dp.plotting.plots import (
    plot_bounding_modes,
    plot_groups,
    plot_release,
    simulate_bounding_modes,
)

__all__ = ["plot_bounding_modes", "plot_groups", "plot_release", "simulate_bounding_modes"]
