"""Input checks and the simplex core shared by the constraint modules."""

from __future__ import annotations

import math
import operator

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]


# --------------------------------------------------------------------------- validation


def _finite(x: ArrayLike, name: str) -> FloatArray:
    """``x`` as a float64 array of at least one dimension, all entries finite."""
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim == 0:
        raise ValueError(f"{name} must be an array (one entry per category); got a scalar")
    bad = ~np.isfinite(arr)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        where = first[0] if len(first) == 1 else first
        raise ValueError(
            f"{name} contains {int(bad.sum())} NaN or infinite value(s) (the first at index "
            f"{where}); a noisy release is always finite, so look at the step that produced "
            f"these values"
        )
    return arr


def _categories(arr: FloatArray, name: str) -> int:
    """The number of categories (length of the last axis); at least one."""
    k = arr.shape[-1]
    if k == 0:
        raise ValueError(f"{name} has no entries; a proportion vector needs at least one category")
    return int(k)


def _square(a: ArrayLike, name: str) -> FloatArray:
    """``a`` as a finite square float64 matrix."""
    arr = _finite(a, name)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise ValueError(f"{name} must be a square 2-D matrix; got shape {arr.shape}")
    return arr


def _count(value: int, name: str, smallest: int) -> int:
    """``value`` as an int no smaller than ``smallest`` (bools rejected)."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer; got {value!r}")
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer; got {value!r}") from None
    if v < smallest:
        raise ValueError(f"{name} must be at least {smallest}; got {v}")
    return v


def _power_of_two_below(m: float) -> float:
    """The largest power of two ``<= m`` (``m > 0`` finite); 1 for ``m <= 0``.

    Dividing by it is exact and brings ``m`` into ``[1, 2)``.
    """
    if not m > 0:
        return 1.0
    _, exponent = math.frexp(m)
    return math.ldexp(1.0, exponent - 1)


# --------------------------------------------------------------------------- simplex core


def _fix_sum(x: FloatArray) -> FloatArray:
    """Put the rounding residual ``1 - sum`` on the largest entry of each row.

    ``x`` is non-negative and sums to 1 up to rounding; the result is clipped to
    ``[0, 1]`` and sums to 1 within a few units in the last place.
    """
    out = np.array(x, dtype=np.float64)
    residual = 1.0 - out.sum(axis=-1, keepdims=True)
    top = np.argmax(out, axis=-1)[..., None]
    np.put_along_axis(out, top, np.take_along_axis(out, top, axis=-1) + residual, axis=-1)
    return np.clip(out, 0.0, 1.0)


def _project_shifted(q: FloatArray) -> FloatArray:
    """Project rows whose maximum is 0 onto the simplex (entries may be ``-inf``).

    The projection is ``max(q - tau, 0)`` with ``tau`` chosen so the row sums to
    1 (Held, Wolfe & Crowder 1974; Duchi et al. 2008). The largest entry keeps
    at most 1, so ``tau >= max(q) - 1`` and an entry ``<= max(q) - 1`` always
    ends at 0; clamping such entries at ``-1`` leaves ``tau`` unchanged and
    keeps every sum below finite.
    """
    q = np.maximum(q, -1.0)
    k = q.shape[-1]
    desc = -np.sort(-q, axis=-1)
    excess = np.cumsum(desc, axis=-1) - 1.0
    j = np.arange(1, k + 1, dtype=np.float64)
    # support size rho: the last j with desc_j > excess_j / j (true at j = 1)
    active = desc * j > excess
    rho = k - np.argmax(active[..., ::-1], axis=-1)
    tau = np.take_along_axis(excess, (rho - 1)[..., None], axis=-1) / rho[..., None]
    return _fix_sum(np.maximum(q - tau, 0.0))
