"""The exact integer samplers, vectorised over per-entry scales.

* :func:`discrete_laplace` -- Canonne, Kamath & Steinke's (2020) exact sampler: a
  geometric built from exact Bernoulli(``exp(-gamma)``) coins, a fair sign;
* :func:`truncated_discrete_laplace` -- the same restricted to a public range, by
  rejection;
* :func:`discrete_gaussian` -- CKS 2020, Algorithm 3, on top of the discrete Laplace;
* :func:`representable_scale` -- the rational scale the Laplace samplers really use.

Vectors of at most :data:`~pandas_dp.noise.mechanisms.constants.SMALL_SIZE` entries are
handed to :mod:`pandas_dp.noise.mechanisms.small`, a pure-Python transcription of the same
loops that reads the same words in the same order and so returns the same draws
(bit for bit, for a given seed) without numpy's per-call overhead.

Examples
--------
>>> from pandas_dp.noise.mechanisms.source import RandomSource
>>> k = discrete_laplace(np.array([2.0, 2.0, 2.0]), RandomSource(7))
>>> k.dtype, k.shape
(dtype('int64'), (3,))
"""

from __future__ import annotations

import functools
import math
from typing import Final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pandas_dp.noise.mechanisms import _compiled, small
from pandas_dp.noise.mechanisms.constants import (
    GEO_BLOCK,
    MAX_SCALE,
    MIN_SCALE,
    SCALE_BITS,
    SMALL_SIZE,
    T_BITS,
    TRIES,
    TRUNCATED_FAILURE,
)
from pandas_dp.noise.mechanisms.source import RandomSource

__all__ = [
    "discrete_gaussian",
    "discrete_laplace",
    "representable_scale",
    "truncated_discrete_laplace",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

# --------------------------------------------------------------------------- integer noise
#
# Every sampler below is exact: it turns uniform random 64-bit words into draws whose
# distribution is exactly the stated pmf, using integer arithmetic only (Canonne,
# Kamath & Steinke 2020). No floating-point number and no exponential is ever computed
# on the way from the words to a draw. Scales are rationals ``t / s`` with ``t`` a power
# of two (:func:`representable_scale`); a Gaussian ``sigma`` is any double, itself a
# dyadic rational.
#
# The loops are vectorised: each round works on the entries still pending, and draws a
# small fixed block of attempts per entry at once, so that a round almost always
# finishes every entry; the number of rounds depends only on public scales and on the
# random words, never on a true value.

_U64_MAX: Final = np.uint64(2**64 - 1)


def _digit_table(first: int, last: int) -> NDArray[np.bool_]:
    """``table[r, k - first]`` is whether mixed-radix digit ``k`` of ``r`` is zero.

    A uniform ``r`` in ``{0, ..., last!/(first-1)! - 1}`` written in the mixed radix
    ``(first, first + 1, ..., last)`` has independent digits ``d_k`` uniform in
    ``{0, ..., k - 1}``, so ``[d_k == 0]`` are independent Bernoulli(``1/k``) coins:
    one uniform integer gives a whole block of alternating-series coins.
    """
    size = math.prod(range(first, last + 1))
    r = np.arange(size)
    cols = []
    for k in range(first, last + 1):
        cols.append(r % k == 0)
        r = r // k
    return np.stack(cols, axis=1)


_COINS_1_4: Final = _digit_table(1, 4)  # Bernoulli(1/k), k = 1..4, from one uniform < 24
_COINS_2_6: Final = _digit_table(2, 6)  # Bernoulli(1/k), k = 2..6, from one uniform < 720


def _check_scales(scale: FloatArray, what: str) -> None:
    """Refuse non-finite, non-positive or too-large scales (in grid units)."""
    bad = ~(np.isfinite(scale) & (scale > 0) & (scale <= MAX_SCALE))
    if bad.any():
        worst = scale[bad][0]
        raise ValueError(
            f"{what} must be finite, positive and at most 2**52 (in grid units); got "
            f"{worst!r}. Use a larger epsilon, a smaller sensitivity or narrower bounds"
        )


def _split_scale(scale: FloatArray) -> tuple[NDArray[np.int64], NDArray[np.uint64]]:
    """The rational ``2**j / s >= scale`` the Laplace samplers use.

    With ``scale = f 2**e`` (``f`` in ``[0.5, 1)``, ``scale`` first raised to
    :data:`MIN_SCALE`), ``j = min(e + 41, 62)`` and
    ``s = floor(fl(2**j / scale)) - 1``: the float quotient errs by less than one
    unit, so ``s <= 2**j / scale`` always, and ``s >= 2**40`` for scales up to
    ``2**21``, ``s >= 2**10`` up to :data:`MAX_SCALE`. The relative increase of the
    scale, ``2**j / (s scale) - 1``, is below ``2 / s``.
    """
    x = np.maximum(scale, MIN_SCALE)
    _, e = np.frexp(x)
    j = np.minimum(e + SCALE_BITS + 1, T_BITS)
    s = np.floor(np.ldexp(1.0, j) / x) - 1.0
    return j.astype(np.int64), s.astype(np.uint64)


def representable_scale(scale: ArrayLike) -> FloatArray:
    """An upper bound on the scale the Laplace samplers actually draw with.

    :func:`discrete_laplace` with scale ``T`` draws exactly with the rational scale
    ``2**j / s`` of :func:`_split_scale`, at least ``T`` and less than
    ``T (1 + 2 / s)`` (relative increase below ``2**-39`` for the scales of
    real-valued releases and of counts up to ``2**21``, below ``2**-9`` at
    :data:`MAX_SCALE`). This returns that rational rounded up to a double, so
    intervals computed from it describe the noise actually added.

    Parameters
    ----------
    scale : array_like of float
        Positive finite scales, at most :data:`MAX_SCALE`.

    Returns
    -------
    numpy.ndarray of float64
        Per entry, a double ``>=`` the scale the sampler uses.

    Examples
    --------
    >>> bool(representable_scale(1 / 3)[0] >= 1 / 3)
    True
    >>> float(representable_scale(1.0)[0] / 1.0 - 1.0) < 2.0**-39
    True
    """
    x = np.atleast_1d(np.asarray(scale, dtype=np.float64)).ravel()
    _check_scales(x, "discrete Laplace scales")
    j, s = _split_scale(x)
    # the quotient of two doubles is correctly rounded; step one ulp up to be safe
    real = np.ldexp(1.0, j) / s.astype(np.float64)
    return np.asarray(np.nextafter(real, np.inf), dtype=np.float64)


def uniform_below(n: NDArray[np.uint64], src: RandomSource) -> NDArray[np.uint64]:
    """Exactly uniform integers in ``{0, ..., n - 1}`` for every entry of ``n >= 1``.

    A 64-bit word ``w`` is kept when ``w < 2**64 - (2**64 mod n)`` (a multiple of
    ``n`` many words) and mapped to ``w mod n``; rejected words (probability below
    ``n / 2**64``) are drawn again.
    """
    rem = (_U64_MAX % n + np.uint64(1)) % n  # 2**64 mod n
    limit = _U64_MAX - rem
    w = src.bits(n.size)
    out = w % n
    bad = np.flatnonzero(w > limit)
    while bad.size:
        w = src.bits(bad.size)
        out[bad] = w % n[bad]
        bad = bad[w > limit[bad]]
    return out


def _first_failure(success: NDArray[np.bool_]) -> tuple[NDArray[np.bool_], NDArray[np.intp]]:
    """Per row: whether some trial failed, and the index of the first failure."""
    fail = ~success
    return np.asarray(fail.any(axis=1), dtype=np.bool_), np.asarray(fail.argmax(axis=1))


def _alternating_tail(
    gamma_coin: object, k0: int, size: int, src: RandomSource
) -> NDArray[np.bool_]:
    """Finish alternating series that reached term ``k0`` with every coin a success.

    ``gamma_coin(rows, m)`` returns an ``(len(rows), m)`` array of independent
    Bernoulli(``gamma_i``) coins for the given rows; term ``k`` is that coin and a
    Bernoulli(``1/k``) one. Returns whether the first failing term is odd. Reached
    with probability at most ``1 / (k0 - 1)!``.
    """
    coin = gamma_coin  # type: ignore[assignment]
    out = np.empty(size, dtype=np.bool_)
    pend = np.arange(size)
    block = 4
    while pend.size:
        ks = np.arange(k0, k0 + block, dtype=np.uint64)
        third = uniform_below(np.tile(ks, pend.size), src).reshape(-1, block) == 0
        success = coin(pend, block) & third  # type: ignore[operator]
        stopped, first = _first_failure(success)
        out[pend[stopped]] = (first[stopped] + k0) % 2 == 1
        pend = pend[~stopped]
        k0 += block
    return out


def _bernoulli_exp_pow2(
    num: NDArray[np.uint64], j: NDArray[np.int64], src: RandomSource
) -> NDArray[np.bool_]:
    """Exact Bernoulli(``exp(-num / 2**j)``) per entry, for ``0 <= num <= 2**j``.

    The alternating-series trick (Canonne, Kamath & Steinke 2020, Algorithm 1): with
    ``gamma = num / 2**j``, draw term ``k`` = Bernoulli(``gamma / k``) for
    ``k = 1, 2, ...`` until the first failure; the result is whether it is odd,
    probability ``exp(-gamma)``. Term ``k`` is ``[Y_k < num]`` (``Y_k`` the top ``j``
    bits of a word: Bernoulli(``gamma``)) and Bernoulli(``1/k``); the first four
    terms' ``1/k`` coins come from one uniform integer below 24.
    """
    size = num.size
    shift = (64 - j).astype(np.uint64)
    y = src.bits(4 * size).reshape(size, 4) >> shift[:, None]
    coins = _COINS_1_4[uniform_below(np.full(size, 24, dtype=np.uint64), src)]
    stopped, first = _first_failure((y < num[:, None]) & coins)
    out = (first + 1) % 2 == 1
    rest = np.flatnonzero(~stopped)
    if rest.size:

        def gamma_coin(rows: NDArray[np.intp], m: int) -> NDArray[np.bool_]:
            r = rest[rows]
            bits = src.bits(rows.size * m).reshape(-1, m) >> shift[r][:, None]
            return np.asarray(bits < num[r][:, None], dtype=np.bool_)

        out[rest] = _alternating_tail(gamma_coin, 5, rest.size, src)
    return np.asarray(out, dtype=np.bool_)


def _bernoulli_exp_one(size: int, src: RandomSource) -> NDArray[np.bool_]:
    """Exact Bernoulli(``e^{-1}``) coins: the alternating series with ``gamma = 1``.

    Term 1 always succeeds; terms 2..6 are the Bernoulli(``1/k``) coins of one
    uniform integer below 720; the series goes on (probability ``1/720``) only when
    they all succeed.
    """
    coins = _COINS_2_6[uniform_below(np.full(size, 720, dtype=np.uint64), src)]
    stopped, first = _first_failure(coins)
    out = (first + 2) % 2 == 1
    rest = np.flatnonzero(~stopped)
    if rest.size:

        def always(rows: NDArray[np.intp], m: int) -> NDArray[np.bool_]:
            return np.ones((rows.size, m), dtype=np.bool_)

        out[rest] = _alternating_tail(always, 7, rest.size, src)
    return np.asarray(out, dtype=np.bool_)


def _geometric_e1(size: int, src: RandomSource) -> NDArray[np.uint64]:
    """Exact geometric draws with ``P(V >= v) = e^{-v}``, ``v = 0, 1, ...``.

    ``V`` counts the successes of Bernoulli(``e^{-1}``) trials before the first
    failure; the trials are drawn a few at a time per entry.
    """
    v = np.zeros(size, dtype=np.uint64)
    pend = np.arange(size)
    while pend.size:
        trials = _bernoulli_exp_one(pend.size * GEO_BLOCK, src).reshape(-1, GEO_BLOCK)
        stopped, first = _first_failure(trials)
        v[pend] += np.where(stopped, first, GEO_BLOCK).astype(np.uint64)
        pend = pend[~stopped]
    return v


def _discrete_laplace_js(
    j: NDArray[np.int64], s: NDArray[np.uint64], src: RandomSource
) -> IntArray:
    """Exact discrete Laplace draws, ``P(k)`` proportional to ``exp(-|k| s / 2**j)``.

    CKS 2020, Algorithm 2 with ``t = 2**j``: ``U`` uniform in ``{0..t-1}`` (the top
    ``j`` bits of a word) kept with probability ``exp(-U / t)``, ``V`` geometric with
    ``P(V >= v) = e^{-v}``; then ``X = U + t V`` is geometric with ratio
    ``e^{-1/t}`` and ``Y = floor(X / s)`` geometric with ratio ``e^{-s/t}``; a fair
    sign, rejecting "negative zero". ``Y`` is computed without overflow as
    ``a V + floor((U + b V) / s)`` with ``t = a s + b``. Each round makes
    ``TRIES`` proposals per pending entry and keeps the first accepted one.
    """
    out = np.empty(j.size, dtype=np.int64)
    pend = np.arange(j.size)
    while pend.size:
        jj = np.repeat(j[pend], TRIES)
        ss = np.repeat(s[pend], TRIES)
        shift = (64 - jj).astype(np.uint64)
        word = src.bits(jj.size)
        u = word >> shift  # the top j bits; the lowest bit (j <= 62) is the sign
        negative = (word & np.uint64(1)).astype(np.bool_)
        keep = _bernoulli_exp_pow2(u, jj, src)
        v = _geometric_e1(jj.size, src)
        t = np.left_shift(np.uint64(1), jj.astype(np.uint64))
        a, b = t // ss, t % ss
        big = v >= np.uint64(2**20)  # probability e^(-2**20): exact in Python ints
        v_small = np.where(big, np.uint64(0), v)
        y = (a * v_small + (u + b * v_small) // ss).astype(np.int64)
        for i in np.flatnonzero(big):
            x = int(u[i]) + (int(v[i]) << int(jj[i]))
            y[i] = min(x // int(ss[i]), 2**62)
        ok = (keep & ~(negative & (y == 0))).reshape(-1, TRIES)
        z = np.where(negative, -y, y).reshape(-1, TRIES)
        done = ok.any(axis=1)
        rows = np.flatnonzero(done)
        out[pend[rows]] = z[rows, ok.argmax(axis=1)[rows]]
        pend = pend[~done]
    return out


def discrete_laplace(scale: ArrayLike, src: RandomSource) -> IntArray:
    """Draw from the discrete Laplace distribution, one draw per entry of ``scale``.

    ``P(K = k)`` is proportional to ``exp(-|k| / T)`` with ``T`` the scale rounded
    up by :func:`representable_scale` (relative change below ``2**-40``). The draw is
    exact (Canonne, Kamath & Steinke 2020): integer arithmetic on uniform random
    words, no floating point, no cut-off tail.

    Parameters
    ----------
    scale : array_like of float
        Positive finite scales ``T``, at most :data:`MAX_SCALE`
        (``epsilon / sensitivity`` is ``1 / T``).
    src : RandomSource
        Where the random words come from.

    Returns
    -------
    numpy.ndarray of int64
        One draw per entry of ``scale`` (flattened).

    Raises
    ------
    ValueError
        If a scale is not finite, not positive or above :data:`MAX_SCALE`.
    """
    x = np.asarray(scale, dtype=np.float64).ravel()
    if x.size <= SMALL_SIZE:  # same words, same draws, without numpy's overhead
        return np.array(small.discrete_laplace(x.tolist(), src), dtype=np.int64)
    _check_scales(x, "discrete Laplace scales")
    j, s = _split_scale(x)
    got = _compiled.draw_vector(j, s, src, functools.partial(_discrete_laplace_js, j, s))
    return got if got is not None else _discrete_laplace_js(j, s, src)


def truncated_discrete_laplace(
    scale: ArrayLike, below: ArrayLike, above: ArrayLike, src: RandomSource
) -> IntArray:
    """Exact draws of the discrete Laplace restricted to ``[-below, above]``.

    ``P(K = k)`` is proportional to ``exp(-|k| / T)`` for integers
    ``-below <= k <= above`` and zero elsewhere (``T`` rounded up as in
    :func:`discrete_laplace`). Rejection sampling, so every point of the range has
    its exact probability, however far in the tail: with ``N = below + above``,
    when ``N <= 2 T`` the proposal is uniform on the ``N + 1`` points, accepted with
    probability ``exp(-|k| / T)`` (exact Bernoulli); otherwise the proposal is the
    exact two-sided sampler, accepted when it falls in the range. Either way a
    proposal is accepted with probability at least ``(1 - e^{-2}) / 2 = 0.43``
    whatever the true value; each round makes, per entry, enough proposals (a
    number computed from public values only: 9 to 17) that all fail with
    probability below :data:`TRUNCATED_FAILURE` for the worst true value, and keeps
    the first accepted one, so a second round (the only value-dependent part of the
    running time) is that rare.

    Parameters
    ----------
    scale : array_like of float
        Positive finite scales ``T`` (at most :data:`MAX_SCALE`).
    below, above : array_like of float
        Non-negative whole lengths of the range on each side of zero; either may
        be ``inf`` (a one-sided range).
    src : RandomSource
        Where the random words come from.

    Returns
    -------
    numpy.ndarray of int64
        One draw per entry.

    Raises
    ------
    ValueError
        For a bad scale, or a negative or fractional range.
    """
    x = np.atleast_1d(np.asarray(scale, dtype=np.float64)).ravel()
    _check_scales(x, "truncated discrete Laplace scales")
    lo = np.broadcast_to(np.asarray(below, dtype=np.float64), x.shape)
    hi = np.broadcast_to(np.asarray(above, dtype=np.float64), x.shape)
    whole = (lo >= 0) & (hi >= 0) & (lo == np.floor(lo)) & (hi == np.floor(hi))
    if not np.all(whole):
        raise ValueError(
            "the truncation range [-below, above] needs whole numbers below, above >= 0 "
            "(or infinite)"
        )
    if x.size == 0:  # nothing to draw (e.g. private keys of which none was kept)
        return np.empty(0, dtype=np.int64)
    j, s = _split_scale(x)
    cap = 2.0**62  # further than any draw can reach: an infinite side
    b = np.minimum(lo, cap).astype(np.int64)
    a = np.minimum(hi, cap).astype(np.int64)
    width = np.minimum(lo + hi, cap).astype(np.uint64)
    # the public choice of proposal: uniform when N <= 2 T, i.e. N s <= 2**(j + 1)
    uniform = (lo + hi) * s.astype(np.float64) <= np.ldexp(1.0, j + 1)
    # worst-case acceptance of one attempt (a public bound, whatever the true value):
    # uniform proposal (1 - q^(N+1)) / ((N+1)(1-q)), two-sided (1 - q^(N+1)) / (1+q)
    q = np.exp(-1.0 / x)
    mass = -np.expm1(-(lo + hi + 1.0) / x)
    accept = np.where(uniform, mass / ((lo + hi + 1.0) * -np.expm1(-1.0 / x)), mass / (1 + q))
    accept = np.clip(accept * 0.99, 0.4, 0.99)
    tries = int(np.ceil(math.log(TRUNCATED_FAILURE) / np.log1p(-accept.min())))
    out = np.empty(x.size, dtype=np.int64)
    pend = np.arange(x.size)
    while pend.size:
        m = pend.size
        jj, ss = np.repeat(j[pend], tries), np.repeat(s[pend], tries)
        bb, aa = np.repeat(b[pend], tries), np.repeat(a[pend], tries)
        uni = np.repeat(uniform[pend], tries)
        k = np.empty(m * tries, dtype=np.int64)
        ok = np.empty(m * tries, dtype=np.bool_)
        iu = np.flatnonzero(uni)
        if iu.size:
            draw = uniform_below(np.repeat(width[pend], tries)[iu] + np.uint64(1), src)
            ku = draw.astype(np.int64) - bb[iu]
            t = np.left_shift(np.uint64(1), jj[iu].astype(np.uint64))
            gamma = np.abs(ku).astype(np.uint64) * ss[iu]  # over t: at most 2
            over = gamma > t
            first = _bernoulli_exp_pow2(np.where(over, gamma - t, gamma), jj[iu], src)
            second = _bernoulli_exp_one(iu.size, src) | ~over  # a factor e^-1 if gamma > 1
            k[iu] = ku
            ok[iu] = first & second
        il = np.flatnonzero(~uni)
        if il.size:
            kl = _discrete_laplace_js(jj[il], ss[il], src)
            k[il] = kl
            ok[il] = (kl >= -bb[il]) & (kl <= aa[il])
        ok2 = ok.reshape(m, tries)
        done = ok2.any(axis=1)
        rows = np.flatnonzero(done)
        out[pend[rows]] = k.reshape(m, tries)[rows, ok2.argmax(axis=1)[rows]]
        pend = pend[~done]
    return out


# --------------------------------------------------------------------- exact Gaussian test


def _uniform_below_int(n: int, src: RandomSource) -> int:
    """An exactly uniform Python integer in ``{0, ..., n - 1}`` (rejection)."""
    words = (n.bit_length() + 63) // 64
    span = 1 << (64 * words)
    limit = span - span % n
    while True:
        w = int.from_bytes(src.bits(words).tobytes(), "little")
        if w < limit:
            return w % n


def _bernoulli_exp_rational(num: list[int], den: list[int], src: RandomSource) -> NDArray[np.bool_]:
    """Exact Bernoulli(``exp(-num / den)``) for arbitrary non-negative integers.

    ``exp(-gamma) = exp(-1)**floor(gamma) * exp(-frac(gamma))``: the first factor is
    ``[V >= floor(gamma)]`` with ``V`` from :func:`_geometric_e1`; the second is the
    alternating series with ``A_k`` ~ Bernoulli(``r / (den k)``), ``r = num mod den``.
    A uniform ``U`` in ``[0, 1)`` is read 64 bits at a time: its first word ``W`` is
    compared with ``P = floor(2**64 r / (den k))`` -- ``W < P`` succeeds, ``W > P``
    fails, and on a tie (probability ``2**-64``) the rest of ``U`` is compared exactly
    with the remaining fraction, in Python integers.
    """
    n = len(num)
    whole = np.array([a // b for a, b in zip(num, den, strict=True)], dtype=np.float64)
    rems = [a % b for a, b in zip(num, den, strict=True)]
    # floor(gamma) beyond 2**62 would need V >= 2**62: probability exp(-2**62), i.e. 0
    geo = _geometric_e1(n, src).astype(np.float64)
    out = geo >= whole
    fixed = np.array([(r << 64) // d for r, d in zip(rems, den, strict=True)], dtype=np.uint64)
    frac_ok = np.empty(n, dtype=np.bool_)
    pend = np.arange(n)
    k0 = 1
    block = 4
    while pend.size:
        ks = np.arange(k0, k0 + block, dtype=np.uint64)
        p = fixed[pend][:, None] // ks
        w = src.bits(pend.size * block).reshape(-1, block)
        success = w < p
        for row, col in zip(*np.nonzero(w == p), strict=True):
            i = int(pend[row])
            dk = den[i] * (k0 + int(col))
            tail = (rems[i] << 64) - int(p[row, col]) * dk  # 2**64 r - P den k, in [0, dk)
            success[row, col] = _uniform_below_int(dk, src) < tail
        stopped, first = _first_failure(success)
        frac_ok[pend[stopped]] = (first[stopped] + k0) % 2 == 1
        pend = pend[~stopped]
        k0 += block
    return np.asarray(out & frac_ok, dtype=np.bool_)


def discrete_gaussian(sigma: ArrayLike, src: RandomSource) -> IntArray:
    """Draw from the discrete Gaussian ``N_Z(0, sigma^2)``, one draw per entry.

    Canonne, Kamath & Steinke (2020), Algorithm 3, exactly: a discrete Laplace
    proposal ``Y`` of scale ``tau`` (the sampler's rational ``2**j / s`` just above
    ``sigma``; CKS take ``floor(sigma) + 1``, any scale is valid), kept with
    probability ``exp(-(|Y| - sigma^2/tau)^2 / (2 sigma^2))``, which is
    proportional to ``N_Z(Y) / DLap(Y)`` and at most 1. ``sigma`` is a double, i.e. a
    dyadic rational ``p / q``, so the exponent is the rational
    ``(|Y| q^2 2^j - p^2 s)^2 / (2 p^2 q^2 2^{2j})`` and the acceptance is an exact
    Bernoulli in integer arithmetic. Rejected entries are proposed again.

    Parameters
    ----------
    sigma : array_like of float
        Positive finite standard deviations (in grid units), at most
        :data:`MAX_SCALE`.
    src : RandomSource
        Where the random words come from.

    Returns
    -------
    numpy.ndarray of int64
        One draw per entry (flattened).

    Raises
    ------
    ValueError
        If a sigma is not finite, not positive or above :data:`MAX_SCALE`.
    """
    sig = np.asarray(sigma, dtype=np.float64).ravel()
    if sig.size <= SMALL_SIZE:  # same words, same draws, without numpy's overhead
        return np.array(small.discrete_gaussian(sig.tolist(), src), dtype=np.int64)
    _check_scales(sig, "discrete Gaussian sigmas")
    j, s = _split_scale(sig)  # the proposal's scale tau = 2**j / s >= sigma
    ratios = [float(x).as_integer_ratio() for x in sig]
    out = np.empty(sig.size, dtype=np.int64)
    pend = np.arange(sig.size)
    while pend.size:
        y = _discrete_laplace_js(j[pend], s[pend], src)
        nums: list[int] = []
        dens: list[int] = []
        for i, yi in zip(pend.tolist(), np.abs(y).tolist(), strict=True):
            p, q = ratios[i]
            ji, si = int(j[i]), int(s[i])
            # (|y| - sigma^2/tau)^2 / (2 sigma^2) with sigma = p/q, tau = 2**j/s
            nums.append((((yi * q * q) << ji) - p * p * si) ** 2)
            dens.append((2 * p * p * q * q) << (2 * ji))
        ok = _bernoulli_exp_rational(nums, dens, src)
        out[pend[ok]] = y[ok]
        pend = pend[~ok]
    return out
