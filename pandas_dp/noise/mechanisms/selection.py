"""Exact permute-and-flip: private selection of a candidate by integer scores.

Permute-and-flip (McKenna & Sheldon 2020) visits the candidates in a random
order and stops at the first one whose coin, Bernoulli(``exp(-rate * gap)``),
lands heads; ``gap`` is how far the candidate's score is below the best score.
With ``rate = epsilon / (2 Δ)`` for scores of sensitivity ``Δ`` it is
``epsilon``-DP, and its expected error is never worse than the exponential
mechanism's.

Since the coins do not depend on the order, the first head in a uniformly random
order is a uniformly random member of the set of heads, so the coins can be flipped
in blocks, vectorised. A long list first gets one block: the first :data:`BLOCK`
places of the random order (a uniform sample without replacement, in order) are
visited and the first head among them wins. Only if all of them land tails does
the walk go on, over the rest in a uniformly random order: every other
candidate's coin is flipped once and one head picked uniformly. Where many
candidates lie near the best (few rows on a fine grid) the block nearly always
decides, at a small fraction of the cost of flipping every coin. Each coin is
exact: with ``rate = s / 2**j`` a rational, the coin is heads when a uniform
``U`` on ``[0, 1)`` is below ``p = exp(-rate * gap)``. ``U``'s first 16 bits are
compared with the first 16 binary digits of ``p`` (known from a double, where a
wide margin shows they are certain): that decides the coin unless the two are
equal (probability ``2**-16``), and then ``U``'s further bits, 64 at a time, are
compared with ``p`` bounded by a correctly rounded decimal exponential
(:mod:`decimal`), as precisely as it takes. So a candidate costs 16 random bits
and a few vectorised operations, and no probability is ever rounded.

The rate actually used is a rational at most the requested one
(:func:`selection_rate`; relative loss below ``2**-23``): slightly more private,
never less.

Examples
--------
>>> from pandas_dp.noise.mechanisms.source import RandomSource
>>> gaps = np.array([3, 0, 40, 1])
>>> permute_and_flip(gaps, selection_rate(1.0), RandomSource(0)) in (0, 1, 2, 3)
True
"""

from __future__ import annotations

import decimal
import math
from fractions import Fraction
from typing import Any, Final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pandas_dp.noise.mechanisms.samplers import uniform_below
from pandas_dp.noise.mechanisms.source import RandomSource

__all__ = ["Rate", "flip_coins", "permute_and_flip", "selection_rate"]

IntArray = NDArray[np.int64]

#: Bits of the rate's numerator ``s`` (``2**(RATE_BITS - 1) <= s < 2**RATE_BITS``).
RATE_BITS: Final = 24
#: Leading bits of a coin's uniform compared at once with its probability's digits.
LEAD_BITS: Final = 16
_LEAD: Final = float(1 << LEAD_BITS)
#: Relative distance from a whole number within which a digit from doubles is not
#: trusted (their errors are below ``1e-12`` relative, for ``rate * gap < _FAR``).
_MARGIN: Final = 1e-9
#: ``rate * gap`` at or beyond which ``2**16 exp(-rate * gap)`` is below one.
_FAR: Final = 1000.0
_LOG2_E: Final = 1.4426950408889634
#: Places of the random order visited first, as one vectorised block (a list of
#: at least :data:`BLOCK_FROM` candidates): the block decides the selection of the
#: median of 1 000 values at epsilon 1 on a grid of 2**17 bins 995 times in 1 000
#: (100 values: always; 10**4: 4 in 10; 10**5: 1 in 50), and where it does not,
#: it cost 0.3 ms against flipping every coin's 4-6 ms (measured).
BLOCK: Final = 2048
#: Lists at least this long visit a block first; shorter ones flip every coin.
BLOCK_FROM: Final = 8 * BLOCK
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


def _lead_digits(
    gaps: NDArray[np.uint64], rate: Rate
) -> tuple[NDArray[np.signedinteger[Any]], NDArray[np.bool_]]:
    """Per candidate, ``floor(2**16 exp(-rate * gap))`` and whether it is certain.

    Many candidates share a gap (a fine grid's edges share scores): where the gaps
    below :data:`_FAR` are fewer than a quarter of the candidates, each is computed
    once, by :func:`_digits_of` itself, and looked up -- the same digits, at a
    fraction of the ``exp`` calls.
    """
    top = _far_gap(float(rate))
    if top is None or top >= gaps.size // 4 or int(gaps.max(initial=0)) >= 1 << 63:
        return _digits_of(gaps, rate)
    digit, certain = _digits_of(np.arange(top, dtype=np.uint64), rate)
    at = gaps.view(np.int64)  # (below 2**63) clipped to ``top``, at or beyond _FAR:
    return np.take(np.append(digit, 0).astype(np.int32), at, mode="clip"), np.take(
        np.append(certain, True), at, mode="clip"
    )


def _far_gap(r: float) -> int | None:
    """The smallest whole gap ``g`` with ``g * r >= _FAR`` in floating point (so every
    larger gap too: the product is monotone), or None beyond ``2**40``."""
    if not r > 0:
        return None
    g = math.ceil(_FAR / r)
    if g > 1 << 40:
        return None
    while g > 0 and float(g - 1) * r >= _FAR:
        g -= 1
    while float(g) * r < _FAR:
        g += 1
    return g


def _digits_of(gaps: NDArray[np.uint64], rate: Rate) -> tuple[IntArray, NDArray[np.bool_]]:
    """:func:`_lead_digits` computed for every candidate.

    From doubles: ``rate * gap`` is within a relative ``2**-52`` of the exact
    product and ``exp`` within a few units in the last place, so a digit whose
    value lies farther than the relative :data:`_MARGIN` from a whole number is
    the exact one; beyond ``_FAR``, ``2**16 p`` is below one and the digit is 0.
    """
    x = gaps.astype(np.float64) * float(rate)
    v = np.exp(-np.minimum(x, _FAR)) * _LEAD
    lo = np.floor(v * (1.0 - _MARGIN))
    certain = (lo == np.floor(v * (1.0 + _MARGIN))) | (x >= _FAR)
    return np.where(x >= _FAR, 0, lo).astype(np.int64), certain


def _leads(size: int, src: RandomSource) -> NDArray[np.uint16]:
    """``size`` uniform 16-bit integers: the four quarters of each word, low first."""
    words = np.asarray(src.bits((size + 3) // 4), dtype="<u8")  # little-endian words:
    return words.view("<u2")[:size]  # their 16-bit quarters, low first


def _exp_bounds(x: Fraction, digits: int, bits: int) -> tuple[Fraction, Fraction]:
    """``lo <= exp(-x) <= hi`` (``x >= 0``), about ``digits`` significant digits apart.

    ``exp`` of :mod:`decimal` is correctly rounded, so the result is within one unit
    of its last digit. Beyond ``_FAR`` only an upper bound ``2**-m`` matters, ``m``
    no more than ``bits + 128`` (what a prefix of ``bits`` bits can tell apart).
    """
    if x >= _FAR:
        m = min(math.floor(float(x) * _LOG2_E * (1.0 - _MARGIN)), bits + 128)
        return Fraction(0), Fraction(1, 1 << m)
    k = x.denominator.bit_length() - 1  # x = num / 2**k = num 5**k / 10**k exactly
    arg = decimal.Decimal(f"-{x.numerator * 5**k}E-{k}")
    ctx = decimal.Context(prec=digits, rounding=decimal.ROUND_HALF_EVEN)
    e = ctx.exp(arg)
    ulp = Fraction(10) ** (e.adjusted() - digits + 1)
    return max(Fraction(e) - ulp, Fraction(0)), Fraction(e) + ulp


def _finish(lead: int, gap: int, rate: Rate, src: RandomSource) -> bool:
    """One coin whose first 16 bits ``lead`` did not decide it: ``U < exp(-x)``,
    ``U``'s further bits read a word at a time and compared exactly."""
    x = Fraction(gap * rate.s, 1 << rate.j)
    num, bits, digits = lead, LEAD_BITS, 40  # U lies in [num, num + 1) / 2**bits
    lo, hi = _exp_bounds(x, digits, bits)
    while True:
        if Fraction(num + 1, 1 << bits) <= lo:
            return True
        if Fraction(num, 1 << bits) >= hi:
            return False
        if hi - lo > Fraction(1, 1 << (bits + 2)):  # the bounds first
            digits *= 2
            lo, hi = _exp_bounds(x, digits, bits)
            continue
        num, bits = (num << 64) | int(src.bits(1)[0]), bits + 64
        if x >= _FAR:
            lo, hi = _exp_bounds(x, digits, bits)


def flip_coins(gaps: NDArray[np.uint64], rate: Rate, src: RandomSource) -> NDArray[np.bool_]:
    """Per candidate, an exact Bernoulli(``exp(-rate * gap)``) coin.

    Parameters
    ----------
    gaps : ndarray of uint64
        Non-negative integer gaps.
    rate : Rate
        The rational rate per unit of gap.
    src : RandomSource
        The random words: one per four candidates, and a few more in the rare
        rounds the first 16 bits leave open (candidate by candidate, in order).

    Returns
    -------
    ndarray of bool

    Examples
    --------
    >>> from pandas_dp.noise.mechanisms.source import RandomSource
    >>> flip_coins(np.array([0, 10**6], dtype=np.uint64), selection_rate(1.0), RandomSource(0))
    array([ True, False])
    """
    gaps = np.asarray(gaps, dtype=np.uint64)
    digit, certain = _lead_digits(gaps, rate)
    lead = _leads(gaps.size, src)
    zero = gaps == 0  # probability one
    heads: NDArray[np.bool_] = (lead < digit) | zero
    for i in np.flatnonzero(~zero & (~certain | (lead == digit))):
        heads[i] = _finish(int(lead[i]), int(gaps[i]), rate, src)
    return heads


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
    >>> from pandas_dp.noise.mechanisms.source import RandomSource
    >>> permute_and_flip([0], selection_rate(1.0), RandomSource(1))
    0
    """
    g = np.asarray(gaps).reshape(-1)
    if g.size == 0 or g.dtype.kind not in "iu" or int(g.min()) != 0:
        raise ValueError("gaps must be non-negative integers with at least one zero")
    visited = None
    if g.size >= BLOCK_FROM:  # (only the block's gaps converted: it usually decides)
        visited = _first_places(g.size, BLOCK, src)
        hits = np.flatnonzero(flip_coins(g[visited].astype(np.uint64), rate, src))
        if hits.size:
            return int(visited[hits[0]])
    # the rest of the order, uniformly random: a uniform head among the unvisited
    # (the visited, all tails, are out; every best candidate is among the rest)
    heads = flip_coins(g.view(np.uint64) if g.dtype == np.int64 else g, rate, src)
    if visited is not None:
        heads[visited] = False
    winners = np.flatnonzero(heads)
    pick = uniform_below(np.array([winners.size], dtype=np.uint64), src)[0]
    return int(winners[int(pick)])


def _first_places(size: int, draws: int, src: RandomSource) -> NDArray[np.intp]:
    """The first places of a uniformly random order of ``range(size)``: ``draws``
    exactly uniform indices, each kept at its first appearance (the distinct values
    of an i.i.d. uniform sequence, in order of appearance, are a uniform sample
    without replacement, in a uniform order)."""
    idx = uniform_below(np.full(draws, size, dtype=np.uint64), src).astype(np.intp)
    _, first = np.unique(idx, return_index=True)
    return idx[np.sort(first)]
