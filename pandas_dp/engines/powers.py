"""Exact centred power sums of a column: ``Σ (x - m)**p`` per group, for any power.

The moments kernel (:mod:`pandas_dp.engines.sums`) reads the count, the centred sum
and the centred squares in one fast pass, for the statistics every release needs.
A higher moment (``skew`` reads the cubes) takes this kernel: one pass per power,
the same rounding and the same exactness argument.

Rounding. A value becomes ``y = clamp(x - m, -h, h)`` (``m`` the midpoint, ``h``
the half-width of the declared bounds), ``y**p`` is computed in float64 by repeated
multiplication (``fl(fl(y * y) * y)`` for the cubes, ``fl(y * y)`` the squares of the
moments kernel) and rounded to a multiple of the power-of-two step
``q = accumulation_step(h**p)``: an integer of size at most ``2**STEP_BITS``. A chunk
of :data:`~pandas_dp.engines.pandas.CHUNK` rows sums such integers exactly in a
float64, and the chunk sums are added in Python integers (REFERENCE.md §13), so the
result is the same for every row order, chunking and partition of the rows.

Missing values (``NaN``, ``None``, ``pd.NA``) add nothing; ``±inf`` are clamped.

Examples
--------
>>> import numpy as np, pandas as pd
>>> s = pd.Series([1.0, 4.0, None, 50.0])
>>> power_sums(s, 0.0, 10.0, 3).exact
[Fraction(60, 1)]
>>> g = Groups(np.array([0, 1, 0, -1]), 2)
>>> power_sums(s, 0.0, 10.0, 3, groups=g).exact
[Fraction(-64, 1), Fraction(-1, 1)]
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd

from pandas_dp.engines import pandas as core
from pandas_dp.engines.columns import column_values
from pandas_dp.engines.pandas import Groups, _bincount, _check_groups, accumulation_step
from pandas_dp.engines.sums import _Accumulator, _centre, _scaler

__all__ = ["PowerSums", "check_power", "power_sums"]


@dataclass(frozen=True)
class PowerSums:
    """Per group, ``Σ round(y**p / step)`` over the present values (all private).

    Attributes
    ----------
    sums : list of int
        One integer per group (one without groups).
    step : float
        The public rounding step, a power of two.
    """

    sums: list[int]
    step: float

    @property
    def exact(self) -> list[Fraction]:
        """Per group, ``Σ y**p`` (rounded as the module says) as exact rationals."""
        q = Fraction(self.step)
        return [s * q for s in self.sums]


def check_power(power: int) -> int:
    """A power of the kernel: a whole number >= 1 (public; raises before any read).

    Examples
    --------
    >>> check_power(3)
    3
    """
    if isinstance(power, bool) or not isinstance(power, int | np.integer) or power < 1:
        raise ValueError(f"a centred power sum needs a whole power >= 1; got {power!r}")
    return int(power)


def power_step(lower: float, upper: float, power: int) -> float:
    """The rounding step of ``y**power`` on bounds ``[lower, upper]`` (public).

    Examples
    --------
    >>> power_step(0.0, 2.0, 3) == 2.0**-37
    True
    """
    half, magnitude = 0.5 * (upper - lower), 1.0
    for _ in range(check_power(power)):  # (inf, not OverflowError, on huge bounds)
        magnitude *= half
    return accumulation_step(magnitude)


def power_sums(
    series: pd.Series,
    lower: float,
    upper: float,
    power: int,
    *,
    groups: Groups | None = None,
) -> PowerSums:
    """One pass over a numeric column: per group ``Σ round(y**power / step)``.

    Parameters
    ----------
    series : pandas.Series
        A numeric or boolean column.
    lower, upper : float
        Declared bounds (finite, ``lower < upper``, ``h**power`` finite).
    power : int
        The power, at least 1.
    groups : Groups, optional
        The group of each row; ``None``: one group of all rows.

    Returns
    -------
    PowerSums
        Exact sums, one per group, on :func:`power_step`'s step.
    """
    x = column_values(series)
    n = x.shape[0]
    _check_groups(groups, n)
    half = 0.5 * (upper - lower)
    mid = lower + half
    step = power_step(lower, upper, power)
    scale = _scaler(step)
    size = 1 if groups is None else groups.size
    acc = _Accumulator(size)
    chunk = min(core.CHUNK, max(n, 1))
    y, p = np.empty(chunk, dtype=np.float64), np.empty(chunk, dtype=np.float64)
    for start in range(0, n, core.CHUNK):
        m = min(core.CHUNK, n - start)
        b, c = y[:m], p[:m]
        _centre(x[start : start + m], mid, b)
        np.clip(b, -half, half, out=b)
        np.nan_to_num(b, copy=False, nan=0.0)  # (missing: adds 0 to every power)
        np.copyto(c, b)
        for _ in range(power - 1):
            np.multiply(c, b, out=c)
        scale(c)
        np.rint(c, out=c)
        if groups is None:
            acc.add_one(float(np.add.reduce(c)))
        else:
            acc.add(_bincount(groups.codes[start : start + m], size, c))
    return PowerSums(acc.result(), step)
