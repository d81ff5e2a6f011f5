"""Exact permute-and-flip: private selection of a candidate by integer scores.

Permute-and-flip (McKenna & Sheldon 2020) visits the candidates in a random
order and stops at the first one whose coin, Bernoulli(``exp(-rate * gap)``),
lands heads; ``gap`` is how far the candidate's score is below the best score.
With ``rate = epsilon / (2 Δ)`` for scores of sensitivity ``Δ`` it is
``epsilon``-DP, and its expected error is never worse than the exponential
mechanism's.

Since the coins do not depend on the order, the first head in a uniformly random
order is a uniformly random member of the set of heads: this module flips every
candidate's coin once, vectorised, and picks one head uniformly. Each coin is
exact (Canonne, Kamath & Steinke 2020): with ``rate = s / 2**j`` a rational,
``rate * gap = n + f / 2**j`` splits into a whole part ``n`` -- ``n``
independent Bernoulli(``e^-1``) coins must all land heads -- and a fraction, one
Bernoulli(``exp(-f / 2**j)``) coin from the alternating series. A candidate far
from the best fails its first ``e^-1`` coin with probability ``1 - 1/e``, so the
work per candidate is a couple of random words whatever its gap. No exponential
is ever evaluated in floating point.

The rate actually used is a rational at most the requested one
(:func:`selection_rate`; relative loss below ``2**-23``): slightly more private,
never less.

Examples
--------
>>> from pandas_dp.mechanisms.source import RandomSource
>>> gaps = np.array([3, 0, 40, 1])
>>> permute_and_flip(gaps, selection_rate(1.0), RandomSource(0)) in (0, 1, 2, 3)
True
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pandas_dp.mechanisms.samplers import (
    _bernoulli_exp_one,
    _bernoulli_exp_pow2,
    _uniform_below,
)
from pandas_dp.mechanisms.source import RandomSource

__all__ = ["Rate", "permute_and_flip", "selection_rate"]

#: Bits of the rate's numerator ``s`` (``2**(RATE_BITS - 1) <= s < 2**RATE_BITS``).
RATE_BITS: Final = 24
#: Gaps at or above this are handled with Python integers (products stay in uint64).
_BIG_GAP: Final = 1 << (64 - RATE_BITS)
#: Largest rate (per unit of score): sharper selections are rounded down to it.
MAX_RATE: Final = float(1 << 20)
#: Smallest rate accepted.
MIN_RATE: Final = 2.0**-38


class Rate(tuple[int, int]):
    """A rational rate ``s / 2**j`` (``s`` and ``j`` non-negative integers)."""

    @property
    def s(self) -> int:
        """The numerator."""
        return int(self[0])

    @property
    def j(self) -> int:
        """The exponent of the denominator."""
        return int(self[1])

    def __float__(self) -> float:
        return math.ldexp(float(self.s), -self.j)


def selection_rate(rate: float) -> Rate:
    """The rational ``s / 2**j <= rate`` permute-and-flip uses (``s`` has 24 bits).

    Parameters
    ----------
    rate : float
        ``epsilon / (2 Δ)``: positive and finite, at least ``2**-38``; rates above
        ``2**20`` are lowered to it (a selection that sharp is already certain).

    Examples
    --------
    >>> r = selection_rate(0.5)
    >>> float(r) <= 0.5, float(r) > 0.5 * (1 - 2**-23)
    (True, True)
    """
    if not (math.isfinite(rate) and rate >= MIN_RATE):
        raise ValueError(
            f"the selection rate epsilon / (2 sensitivity) must be finite and at least "
            f"2**-38; got {rate!r}. Use a larger epsilon"
        )
    r = min(float(rate), MAX_RATE)
    _, e = math.frexp(r)  # r = f 2**e, f in [0.5, 1)
    j = RATE_BITS - e
    s = math.floor(math.ldexp(r, j))  # in [2**23, 2**24]; floor keeps s / 2**j <= r
    if s >= 1 << RATE_BITS:
        s, j = s >> 1, j - 1
    return Rate((s, j))


def _split(gaps: NDArray[np.uint64], rate: Rate) -> tuple[NDArray[np.uint64], NDArray[np.uint64]]:
    """``rate * gap = whole + frac / 2**j`` per small gap (``gap < 2**40``), in uint64."""
    num = gaps * np.uint64(rate.s)  # < 2**64
    return num >> np.uint64(rate.j), num & np.uint64((1 << rate.j) - 1)


def _whole_coins(whole: NDArray[np.uint64], src: RandomSource) -> NDArray[np.bool_]:
    """Per entry: whether ``whole`` Bernoulli(``e^-1``) coins all land heads."""
    ok = np.ones(whole.size, dtype=np.bool_)
    pend = np.flatnonzero(whole > 0)
    left = whole[pend]
    while pend.size:
        heads = _bernoulli_exp_one(pend.size, src)
        ok[pend[~heads]] = False
        left = left[heads] - np.uint64(1)
        pend = pend[heads]
        more = left > 0
        pend, left = pend[more], left[more]
    return ok


def _big_coin(gap: int, rate: Rate, src: RandomSource) -> bool:
    """One candidate's coin for a gap beyond uint64 products (Python integers)."""
    whole, frac = divmod(gap * rate.s, 1 << rate.j)
    while whole > 0:  # each coin fails with probability 1 - 1/e
        if not bool(_bernoulli_exp_one(1, src)[0]):
            return False
        whole -= 1
    if frac == 0:
        return True
    j = np.array([rate.j], dtype=np.int64)
    return bool(_bernoulli_exp_pow2(np.array([frac], dtype=np.uint64), j, src)[0])


def permute_and_flip(gaps: ArrayLike, rate: Rate, src: RandomSource) -> int:
    """Select a candidate: index ``i`` wins with permute-and-flip's probability.

    Parameters
    ----------
    gaps : array_like of int
        Per candidate, best score minus its score: non-negative integers, at least
        one zero (the best candidate).
    rate : Rate
        ``epsilon / (2 Δ)`` as a rational (:func:`selection_rate`), per unit of gap.
    src : RandomSource
        Where the random words come from.

    Returns
    -------
    int
        The selected candidate's index.

    Examples
    --------
    >>> from pandas_dp.mechanisms.source import RandomSource
    >>> permute_and_flip([0], selection_rate(1.0), RandomSource(1))
    0
    """
    g = np.asarray(gaps).reshape(-1)
    if g.size == 0 or g.dtype.kind not in "iu" or int(g.min()) != 0:
        raise ValueError("gaps must be non-negative integers with at least one zero")
    g = g.astype(np.uint64)
    big = g >= np.uint64(_BIG_GAP)
    whole, frac = _split(np.where(big, np.uint64(0), g), rate)
    heads = _whole_coins(whole, src)
    fractional = np.flatnonzero(heads & (frac > 0) & ~big)
    if fractional.size:
        j = np.full(fractional.size, rate.j, dtype=np.int64)
        heads[fractional] = _bernoulli_exp_pow2(frac[fractional], j, src)
    for i in np.flatnonzero(big):  # probability e^(-rate 2**40): essentially never long
        heads[i] = _big_coin(int(g[i]), rate, src)
    winners = np.flatnonzero(heads)
    pick = _uniform_below(np.array([winners.size], dtype=np.uint64), src)[0]
    return int(winners[int(pick)])
