"""Noise samplers and their calibration.

This module knows nothing of pandas. It offers

* :class:`RandomSource` -- uniform bits from the operating system's CSPRNG
  (``os.urandom``), or from a seeded :class:`numpy.random.Generator` when a caller
  asks for reproducibility (then ``secure`` is ``False``);
* integer samplers, vectorised over per-entry scales: :func:`discrete_laplace`,
  the difference of two geometric variables, each the floor of a scaled
  exponential ``-t log U`` with ``U`` a 53-bit CSPRNG uniform (exact up to that
  resolution: the tail beyond about ``36.7 t``, probability ``~1e-16``, is cut
  off), and :func:`discrete_gaussian`, Canonne, Kamath & Steinke's (2020)
  rejection sampler on top of it;
* :func:`grid_granularity` -- the power-of-two grid on which real-valued releases
  are made, so that no output carries information in its low-order float bits
  (Mironov 2012). A real value ``theta`` is released as
  ``gamma * (round(theta / gamma) + K)`` with ``K`` an integer noise draw;
* calibration: :func:`gaussian_sigma` (analytic Gaussian, Balle & Wang 2018) and
  :func:`truncated_laplace_scale` (the scale at which Laplace noise truncated to a
  public range is still epsilon-DP; Holohan et al. 2020);
* tail bounds used by the confidence intervals: :func:`laplace_halfwidth`,
  :func:`gaussian_halfwidth`.

Examples
--------
>>> src = RandomSource(random_state=7)
>>> k = discrete_laplace(np.array([2.0, 2.0, 2.0]), src)
>>> k.dtype, k.shape
(dtype('int64'), (3,))
>>> round(gaussian_sigma(1.0, 1.0, 1e-5), 4)
3.7306
"""

from __future__ import annotations

import math
import os
from typing import Final

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "GRID_BITS",
    "MAX_SCALE",
    "RandomSource",
    "discrete_gaussian",
    "discrete_gaussian_delta",
    "discrete_gaussian_sigma",
    "discrete_laplace",
    "gaussian_halfwidth",
    "gaussian_sigma",
    "grid_granularity",
    "laplace_halfwidth",
    "representable_scale",
    "truncated_discrete_laplace",
    "truncated_discrete_laplace_scale",
    "truncated_laplace_scale",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: The grid is ``2**GRID_BITS`` times finer than the noise scale.
GRID_BITS: Final = 40
_MANTISSA_BITS: Final = 52
_TWO_M53: Final = 2.0**-53
_TINY: Final = float(np.finfo(np.float64).tiny)


class RandomSource:
    """Uniform random numbers for the samplers.

    Parameters
    ----------
    random_state : None, int or numpy.random.Generator
        ``None`` (the default) reads the operating system's CSPRNG. An int or a
        Generator gives reproducible, *not secure* noise for tests and teaching.

    Examples
    --------
    >>> RandomSource().secure
    True
    >>> u = RandomSource(1).uniform(4)
    >>> bool(((u > 0) & (u <= 1)).all())
    True
    """

    __slots__ = ("_rng",)

    def __init__(self, random_state: int | np.random.Generator | None = None) -> None:
        if random_state is None:
            self._rng: np.random.Generator | None = None
        elif isinstance(random_state, np.random.Generator):
            self._rng = random_state
        elif isinstance(random_state, int | np.integer) and not isinstance(random_state, bool):
            self._rng = np.random.default_rng(int(random_state))
        else:
            raise TypeError(
                f"random_state must be None (secure noise), an int seed or a "
                f"numpy.random.Generator; got {type(random_state).__name__}"
            )

    @property
    def secure(self) -> bool:
        """Whether the bits come from the operating system's CSPRNG."""
        return self._rng is None

    def bits(self, size: int) -> NDArray[np.uint64]:
        """Return ``size`` independent uniform 64-bit words."""
        if self._rng is None:
            return np.frombuffer(os.urandom(8 * size), dtype=np.uint64)
        return np.frombuffer(self._rng.bytes(8 * size), dtype=np.uint64)

    def uniform(self, size: int) -> FloatArray:
        """Return ``size`` uniforms on ``(0, 1]`` with 53 random bits each."""
        top = (self.bits(size) >> np.uint64(11)) + np.uint64(1)
        return np.asarray(top * _TWO_M53, dtype=np.float64)

    def exponential(self, size: int) -> FloatArray:
        """Return ``size`` standard exponential variates ``-log(U)``."""
        return -np.log(self.uniform(size))


# --------------------------------------------------------------------------- integer noise
#
# Every sampler below is exact: it turns uniform random 64-bit words into draws whose
# distribution is exactly the stated pmf, using integer arithmetic only (Canonne,
# Kamath & Steinke 2020). No floating-point number and no exponential is ever computed
# on the way from the words to a draw. Scales are rationals ``t / s`` with ``s`` a power
# of two (:func:`representable_scale`); a Gaussian ``sigma`` is any double, itself a
# dyadic rational.
#
# The loops are vectorised: each round works on the entries still pending, and draws a
# small fixed block of attempts per entry at once, so that a round almost always
# finishes every entry; the number of rounds depends only on public scales and on the
# random words, never on a true value.

#: Largest noise scale (in grid units) the samplers accept: ``2**52``. Beyond it the
#: integer arithmetic of the samplers and the exactness of the released grid points
#: (``|k| < 2**53``) are no longer guaranteed.
MAX_SCALE: Final = 2.0**52
#: Smaller Laplace scales (in grid units) are rounded *up* to this one (more noise,
#: safe); at it a draw is nonzero with probability ``~2 e^{-2^20}``.
MIN_SCALE: Final = 2.0**-20
#: A Laplace scale ``T`` is rounded up to ``t / s`` with ``s`` a power of two and
#: ``t`` an integer of ``SCALE_BITS + 1`` bits (when ``T < 2**SCALE_BITS``): the
#: relative increase is below ``2**-SCALE_BITS``.
SCALE_BITS: Final = 40
#: The truncated sampler makes, per entry and round, as many attempts as bring the
#: probability that all fail (for the worst true value) below this.
TRUNCATED_FAILURE: Final = 1e-4

_U64_MAX: Final = np.uint64(2**64 - 1)
_T_BITS: Final = 62  # the numerator t = 2**j of a scale t / s has j <= 62
_TRIES: Final = 2  # proposals per entry and round of the discrete Laplace sampler
_GEO_BLOCK: Final = 3  # Bernoulli(e^-1) trials per geometric draw and round


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
    j = np.minimum(e + SCALE_BITS + 1, _T_BITS)
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


def _uniform_below(n: NDArray[np.uint64], src: RandomSource) -> NDArray[np.uint64]:
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
        third = _uniform_below(np.tile(ks, pend.size), src).reshape(-1, block) == 0
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
    coins = _COINS_1_4[_uniform_below(np.full(size, 24, dtype=np.uint64), src)]
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
    coins = _COINS_2_6[_uniform_below(np.full(size, 720, dtype=np.uint64), src)]
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
        trials = _bernoulli_exp_one(pend.size * _GEO_BLOCK, src).reshape(-1, _GEO_BLOCK)
        stopped, first = _first_failure(trials)
        v[pend] += np.where(stopped, first, _GEO_BLOCK).astype(np.uint64)
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
    ``_TRIES`` proposals per pending entry and keeps the first accepted one.
    """
    out = np.empty(j.size, dtype=np.int64)
    pend = np.arange(j.size)
    while pend.size:
        jj = np.repeat(j[pend], _TRIES)
        ss = np.repeat(s[pend], _TRIES)
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
        ok = (keep & ~(negative & (y == 0))).reshape(-1, _TRIES)
        z = np.where(negative, -y, y).reshape(-1, _TRIES)
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
    x = np.atleast_1d(np.asarray(scale, dtype=np.float64)).ravel()
    _check_scales(x, "discrete Laplace scales")
    j, s = _split_scale(x)
    return _discrete_laplace_js(j, s, src)


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
            draw = _uniform_below(np.repeat(width[pend], tries)[iu] + np.uint64(1), src)
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
    sig = np.atleast_1d(np.asarray(sigma, dtype=np.float64)).ravel()
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


# --------------------------------------------------------------------------- the grid


def grid_granularity(scale: ArrayLike, magnitude: ArrayLike) -> FloatArray:
    """Power-of-two grid spacing for real-valued releases.

    The spacing is ``2**GRID_BITS`` times finer than the noise ``scale`` (so the
    grid is invisible next to the noise), and coarse enough that every grid point
    of absolute value up to ``magnitude`` (the largest public value the release
    can take, e.g. ``max(|lower|, |upper|)``) is an exact double.

    Examples
    --------
    >>> float(grid_granularity(1.0, 100.0)[0]) == 2.0**-40
    True
    """
    s = np.atleast_1d(np.asarray(scale, dtype=np.float64))
    m = np.atleast_1d(np.asarray(magnitude, dtype=np.float64))
    m = np.where(np.isfinite(m), m, 0.0)
    finest = np.maximum(np.maximum(s * 2.0**-GRID_BITS, m * 2.0**-_MANTISSA_BITS), _TINY)
    # the smallest power of two >= finest: finest = f 2^e with f in [0.5, 1)
    f, e = np.frexp(finest)
    return np.asarray(np.ldexp(1.0, e - (f == 0.5)), dtype=np.float64)


# --------------------------------------------------------------------------- Gaussian


def _log_ndtr(x: float) -> float:
    """``log Phi(x)`` accurate far into the lower tail."""
    if x > -20.0:
        return math.log(0.5 * math.erfc(-x / math.sqrt(2.0)))
    x2 = x * x
    series = 1.0 - 1.0 / x2 + 3.0 / x2**2 - 15.0 / x2**3
    return -0.5 * x2 - math.log(-x) - 0.5 * math.log(2.0 * math.pi) + math.log(series)


def _gaussian_delta(sigma: float, sensitivity: float, epsilon: float) -> float:
    """The smallest delta at which ``N(0, sigma^2)`` noise is (epsilon, delta)-DP."""
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    first = math.exp(_log_ndtr(a - b))
    second = math.exp(min(epsilon + _log_ndtr(-a - b), 700.0))
    return first - second


def gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """Smallest Gaussian ``sigma`` that is (epsilon, delta)-DP, analytic calibration.

    Balle & Wang (2018), Theorem 8: ``N(0, sigma^2)`` noise on a query of L2
    sensitivity ``Delta`` is (epsilon, delta)-DP iff
    ``Phi(Delta/(2 sigma) - epsilon sigma/Delta)
    - e^epsilon Phi(-Delta/(2 sigma) - epsilon sigma/Delta) <= delta``.
    Valid for every ``epsilon > 0``. Solved by bisection; the returned ``sigma``
    always satisfies the inequality (it errs on the safe side).

    Examples
    --------
    >>> round(gaussian_sigma(1.0, 1.0, 1e-5), 4)
    3.7306
    """
    if not (sensitivity > 0 and epsilon > 0 and 0 < delta < 1):
        raise ValueError(
            f"the Gaussian mechanism needs sensitivity > 0, epsilon > 0 and 0 < delta < 1; "
            f"got sensitivity={sensitivity}, epsilon={epsilon}, delta={delta}"
        )
    lo, hi = 0.0, sensitivity
    while _gaussian_delta(hi, sensitivity, epsilon) > delta:
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if _gaussian_delta(mid, sensitivity, epsilon) > delta:
            lo = mid
        else:
            hi = mid
    return hi


# --------------------------------------------------------------------------- discrete Gaussian


def _discrete_gaussian_pmf(sigma: float, half: int) -> tuple[FloatArray, float]:
    """``N_Z(0, sigma^2)`` on ``{-half..half}`` and an upper bound on the mass outside.

    The normaliser is the sum over the window (the excluded mass only makes the
    window's probabilities slightly too large: safe for a delta). The mass beyond
    ``half`` is at most ``2 e^{-h^2/(2 sigma^2)} / (1 - e^{-h/sigma^2}) / Z``
    with ``h = half + 1``.
    """
    x = np.arange(-half, half + 1, dtype=np.float64)
    w = np.exp(-(x * x) / (2.0 * sigma * sigma))
    z = float(w.sum())
    h = half + 1.0
    ratio = -math.expm1(-h / (sigma * sigma))
    tail = 2.0 * math.exp(-h * h / (2.0 * sigma * sigma)) / max(ratio, 1e-300) / z
    return np.asarray(w / z, dtype=np.float64), min(tail, 1.0)


def _convolve(a: FloatArray, b: FloatArray) -> FloatArray:
    """Convolution of two non-negative vectors (FFT for long ones, clipped at 0)."""
    if a.size * b.size <= 4_000_000:
        return np.asarray(np.convolve(a, b), dtype=np.float64)
    size = a.size + b.size - 1
    n = 1 << (size - 1).bit_length()
    full = np.fft.irfft(np.fft.rfft(a, n) * np.fft.rfft(b, n), n)[:size]
    return np.asarray(np.maximum(full, 0.0), dtype=np.float64)


def discrete_gaussian_delta(
    sigma: float, sensitivity: int, epsilon: float, coordinates: int = 1
) -> float:
    """Exact delta of the discrete Gaussian mechanism at ``epsilon``.

    ``coordinates`` independent ``N_Z(0, sigma^2)`` noises, one record moving each
    of them by the integer ``sensitivity`` ``D``. The privacy loss of an output
    ``x`` is ``L = k D^2 / (2 sigma^2) - D S / sigma^2`` with ``S = sum(x_i)``, so
    ``delta(eps) = E[(1 - e^{eps - L})_+]`` over ``S``, the ``k``-fold convolution of
    the discrete Gaussian pmf (CKS 2020, Theorem 7, for ``k = 1``). The pmf is summed
    over a window of ``+-(14 sigma + D + 2)`` integers per coordinate, and the mass
    outside it (bounded above) is counted as if it lost everything, so the result
    is an upper bound, tight to ``~1e-40`` plus the rounding of the sums.

    Parameters
    ----------
    sigma : float
        Positive noise parameter (in integer units).
    sensitivity : int
        Positive integer shift ``D`` of each coordinate.
    epsilon : float
        Non-negative epsilon.
    coordinates : int, default 1
        How many coordinates one record moves (each by ``D``).

    Returns
    -------
    float
        The smallest delta at which the release is (epsilon, delta)-DP.

    Examples
    --------
    The continuous Gaussian's sigma for a count at epsilon=8, delta=1e-2 is not
    enough for the discrete Gaussian (REFERENCE.md §11):

    >>> sigma = gaussian_sigma(1.0, 8.0, 1e-2)
    >>> round(discrete_gaussian_delta(sigma, 1, 8.0), 4)
    0.0286
    """
    d = int(sensitivity)
    k = int(coordinates)
    if not (sigma > 0 and math.isfinite(sigma) and d >= 1 and d == sensitivity and k >= 1):
        raise ValueError(
            f"discrete_gaussian_delta needs a positive finite sigma, an integer "
            f"sensitivity >= 1 and coordinates >= 1; got sigma={sigma}, "
            f"sensitivity={sensitivity}, coordinates={coordinates}"
        )
    if not (epsilon >= 0 and math.isfinite(epsilon)):
        raise ValueError(f"epsilon must be finite and >= 0; got {epsilon}")
    half = math.ceil(14.0 * sigma) + d + 2
    p, lost = _discrete_gaussian_pmf(sigma, half)
    lost_total = k * lost

    # k-fold convolution by repeated squaring; each partial sum of m coordinates is
    # cut to +-(14 sigma sqrt(m) + half) and the mass cut off is counted as lost
    def trim(a: FloatArray, a_half: int, m: int) -> tuple[FloatArray, int]:
        keep = min(a_half, math.ceil(14.0 * sigma * math.sqrt(m)) + half)
        cut = a_half - keep
        if cut <= 0:
            return a, a_half
        nonlocal lost_total
        lost_total += float(a[:cut].sum() + a[-cut:].sum())
        return a[cut:-cut], keep

    dist: FloatArray | None = None
    power, base, base_half, base_m = k, p, half, 1
    dist_half = dist_m = 0
    while power:
        if power & 1:
            dist = base if dist is None else _convolve(dist, base)
            dist_m += base_m
            dist, dist_half = trim(dist, dist_half + base_half, dist_m)
        power >>= 1
        if power:
            base_m *= 2
            base, base_half = trim(_convolve(base, base), 2 * base_half, base_m)
    assert dist is not None
    s = np.arange(-dist_half, dist_half + 1, dtype=np.float64)
    loss = k * d * d / (2.0 * sigma * sigma) - d * s / (sigma * sigma)
    hit = loss > epsilon
    delta = float(np.sum(dist[hit] * -np.expm1(epsilon - loss[hit])))
    return min(delta + lost_total, 1.0)


def discrete_gaussian_sigma(
    sensitivity: int, epsilon: float, delta: float, coordinates: int = 1
) -> float:
    """Smallest ``sigma`` at which discrete Gaussian noise is (epsilon, delta)-DP.

    Calibrated on the exact privacy curve (:func:`discrete_gaussian_delta`), not on
    the continuous Gaussian's (whose ``sigma`` can under-state the discrete delta
    2-3x). Bisection to a relative precision of ``1e-6``; the returned ``sigma``
    always satisfies ``discrete_gaussian_delta(sigma, ...) <= delta``.

    Parameters
    ----------
    sensitivity : int
        Positive integer shift ``D`` of each coordinate.
    epsilon : float
        Positive epsilon.
    delta : float
        Target delta in ``(0, 1)``.
    coordinates : int, default 1
        How many coordinates one record moves, each by ``D``.

    Returns
    -------
    float

    Examples
    --------
    >>> s = discrete_gaussian_sigma(1, 1.0, 1e-5)
    >>> discrete_gaussian_delta(s, 1, 1.0) <= 1e-5
    True
    """
    if not (epsilon > 0 and math.isfinite(epsilon) and 0 < delta < 1):
        raise ValueError(
            f"the discrete Gaussian needs epsilon > 0 and 0 < delta < 1; got "
            f"epsilon={epsilon}, delta={delta}"
        )
    d, k = int(sensitivity), int(coordinates)

    def too_small(sig: float) -> bool:
        return discrete_gaussian_delta(sig, d, epsilon, k) > delta

    # the continuous Balle-Wang sigma is close: bracket around it in 2% steps
    start = gaussian_sigma(d * math.sqrt(k), epsilon, delta)
    lo, hi = start, start
    if too_small(start):
        while too_small(hi):
            lo, hi = hi, hi * 1.02
            if hi > MAX_SCALE:
                raise ValueError(
                    f"epsilon={epsilon}, delta={delta} need a discrete Gaussian sigma "
                    f"above 2**52; use a larger epsilon or delta"
                )
    else:
        while not too_small(lo) and lo > 1e-3:
            lo, hi = lo / 1.02, lo
    while hi - lo > 1e-6 * hi:
        mid = 0.5 * (lo + hi)
        if too_small(mid):
            lo = mid
        else:
            hi = mid
    return hi


# --------------------------------------------------------------------------- truncation


def _bisect_decreasing(
    loss: object, target: FloatArray, lo: FloatArray, iterations: int = 200
) -> FloatArray:
    """Vectorised bisection: the smallest ``s >= lo`` with ``loss(s) <= target``.

    ``loss`` must be decreasing in ``s``; the returned scales satisfy
    ``loss(s) <= target`` (the safe side).
    """
    f = loss  # type: ignore[assignment]
    hi = lo.copy()
    bad = f(hi) > target  # type: ignore[operator]
    while bad.any():
        hi = np.where(bad, hi * 2.0, hi)
        bad = f(hi) > target  # type: ignore[operator]
    low = lo.copy()
    for _ in range(iterations):
        mid = 0.5 * (low + hi)
        over = f(mid) > target  # type: ignore[operator]
        low = np.where(over, mid, low)
        hi = np.where(over, hi, mid)
        if np.all(hi - low <= 1e-15 * hi):
            break
    return hi


def truncated_laplace_scale(
    sensitivity: ArrayLike, width: ArrayLike, epsilon: ArrayLike
) -> FloatArray:
    """Laplace scale at which noise truncated to a public range is epsilon-DP.

    Truncating ``theta + Lap(s)`` to ``[c0, c1]`` renormalises by a constant that
    depends on ``theta``, which costs privacy on top of ``Delta / s``. With
    ``D = c1 - c0`` and ``Delta' = min(Delta, D)`` the privacy loss is
    ``Delta'/s + ln[(2 - e^{-Delta'/s} - e^{-(D - Delta')/s}) / (1 - e^{-D/s})]``
    (Holohan et al. 2020); this returns the smallest ``s`` that brings it down
    to ``epsilon``. ``width`` may be infinite (a one-sided range).

    Examples
    --------
    >>> round(float(truncated_laplace_scale(1.0, 10.0, 1.0)[0]), 4)
    1.6116
    >>> round(float(truncated_laplace_scale(0.1, 1.0, 0.5)[0]), 4)
    0.3528
    """
    d = np.atleast_1d(np.asarray(sensitivity, dtype=np.float64))
    w = np.atleast_1d(np.asarray(width, dtype=np.float64))
    e = np.atleast_1d(np.asarray(epsilon, dtype=np.float64))
    d, w, e = np.broadcast_arrays(d, w, e)
    dp = np.minimum(d, w)

    def loss(s: FloatArray) -> FloatArray:
        num = 2.0 - np.exp(-dp / s) - np.exp(-(w - dp) / s)
        den = -np.expm1(-w / s)
        return np.asarray(dp / s + np.log(num / den), dtype=np.float64)

    return _bisect_decreasing(loss, e, dp / e)


def truncated_discrete_laplace_scale(
    sensitivity: ArrayLike, points: ArrayLike, epsilon: ArrayLike
) -> FloatArray:
    """Discrete Laplace scale at which truncation to ``points + 1`` integers is epsilon-DP.

    The integer counterpart of :func:`truncated_laplace_scale`. With
    ``q = e^{-1/t}``, ``N = points`` (the range holds ``N + 1`` integers, ``N`` may
    be infinite) and integer sensitivity ``Delta' = min(Delta, N)``, the loss is
    ``Delta'/t + ln[(1 + q - q^{Delta'+1} - q^{N-Delta'+1}) / (1 - q^{N+1})]``.

    Examples
    --------
    >>> t = float(truncated_discrete_laplace_scale(1, np.inf, 1.0)[0])
    >>> round(t, 4)
    1.285
    """
    d = np.atleast_1d(np.asarray(sensitivity, dtype=np.float64))
    big_n = np.atleast_1d(np.asarray(points, dtype=np.float64))
    e = np.atleast_1d(np.asarray(epsilon, dtype=np.float64))
    d, big_n, e = np.broadcast_arrays(d, big_n, e)
    dp = np.minimum(d, big_n)

    def loss(t: FloatArray) -> FloatArray:
        q = np.exp(-1.0 / t)
        num = 1.0 + q - q ** (dp + 1.0) - q ** (big_n - dp + 1.0)
        den = 1.0 - q ** (big_n + 1.0)
        return np.asarray(dp / t + np.log(num / den), dtype=np.float64)

    return _bisect_decreasing(loss, e, dp / e)


# --------------------------------------------------------------------------- tails


def laplace_halfwidth(
    scale: ArrayLike, alpha: ArrayLike, granularity: ArrayLike = 0.0
) -> FloatArray:
    """Half-width ``h`` with ``P(|noise| > h) <= alpha`` for Laplace noise of ``scale``.

    For the continuous Laplace (``granularity=0``) it is ``s ln(1/alpha)``. For
    noise ``g K`` on a grid of spacing ``g``, ``K`` discrete Laplace with
    ``q = e^{-g/s}``, the tail is ``P(|K| > h/g) = 2 q^{floor(h/g)+1} / (1 + q)``,
    which can exceed ``e^{-h/s}`` by up to ``2 / (1 + q)``; the half-width
    ``s ln(2 / ((1 + q) alpha))`` bounds it for every ``h``. Integer releases
    (counts) have ``g = 1``.

    Examples
    --------
    >>> round(float(laplace_halfwidth(1.0, 0.05)), 3)
    2.996
    >>> round(float(laplace_halfwidth(1.0, 0.05, granularity=1.0)), 3)
    3.376
    """
    s = np.asarray(scale, dtype=np.float64)
    q = np.exp(-np.asarray(granularity, dtype=np.float64) / s)
    a = np.asarray(alpha, dtype=np.float64)
    return np.asarray(s * np.log(2.0 / ((1.0 + q) * a)), dtype=np.float64)


def gaussian_halfwidth(sigma: ArrayLike, alpha: float) -> FloatArray:
    """Half-width with ``P(|noise| > h) <= alpha`` for (discrete) Gaussian noise.

    Uses the sub-Gaussian tail ``2 exp(-h^2 / (2 sigma^2))``, which holds for the
    discrete Gaussian as well as the continuous one (Canonne et al. 2020).
    """
    return np.asarray(sigma, dtype=np.float64) * math.sqrt(2.0 * math.log(2.0 / alpha))
