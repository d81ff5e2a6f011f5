"""The exact samplers for a few entries, in pure Python.

A release of one to a few numbers spends most of a vectorised sampler's time in
numpy's per-call overhead. The functions here are a line-by-line transcription of
:mod:`pandas_dp.noise.mechanisms.samplers` onto Python lists and integers: every round
asks the :class:`~pandas_dp.noise.mechanisms.source.RandomSource` for the same number of
words, in the same order, and turns them into draws by the same integer
arithmetic. So for any source the two paths return *the same draws* (a seeded
source gives bit-for-bit the same release on either path), and the exactness
argument of the vectorised samplers (Canonne, Kamath & Steinke 2020) carries
over unchanged. ``tests/test_samplers_exact.py`` checks both: equality of the
draws, and the pmf of each path.

Where the vectorised code evaluates the same block for every pending entry (e.g.
all four terms of an alternating series, even after the first failure), so does
this one, and where it would read words that turn out unused, so does this one.

Examples
--------
>>> from pandas_dp.noise.mechanisms.source import RandomSource
>>> from pandas_dp.noise.mechanisms import samplers
>>> import numpy as np
>>> a = discrete_laplace([2.5, 1e6], RandomSource(3))
>>> b = samplers._discrete_laplace_js(*samplers._split_scale(np.array([2.5, 1e6])),
...                                   RandomSource(3))
>>> a == b.tolist()
True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Final, Protocol

from pandas_dp.noise.mechanisms import _compiled
from pandas_dp.noise.mechanisms.constants import (
    EXP_ONE,
    FIRST_1_4,
    GEO_BLOCK,
    MAX_SCALE,
    MIN_SCALE,
    SCALE_BITS,
    T_BITS,
    TRIES,
)

__all__ = [
    "bernoulli_exp_one",
    "bernoulli_exp_pow2",
    "bernoulli_exp_rational",
    "check_scales",
    "discrete_gaussian",
    "discrete_laplace",
    "discrete_laplace_js",
    "discrete_laplace_split",
    "geometric_e1",
    "laplace_split",
    "split_scale",
    "uniform_below",
]


class Words(Protocol):
    """What the samplers need of a source: uniform 64-bit words as Python ints."""

    def words(self, size: int) -> list[int]:
        """``size`` independent uniform words in ``{0, ..., 2**64 - 1}``."""
        ...  # pragma: no cover


_TWO64: Final = 1 << 64
_BIG_V: Final = 1 << 20  # the vectorised path switches to Python ints for V >= 2**20
_CAP: Final = 1 << 62
#: A word at or above these is rejected by a uniform below 24 / below 720.
_LIMIT_24: Final = _TWO64 - _TWO64 % 24
_LIMIT_720: Final = _TWO64 - _TWO64 % 720


def check_scales(scales: Sequence[float], what: str) -> None:
    """Refuse non-finite, non-positive or too-large scales (in grid units)."""
    for x in scales:
        if not (0.0 < x <= MAX_SCALE):  # NaN fails too; inf is above MAX_SCALE
            raise ValueError(
                f"{what} must be finite, positive and at most 2**52 (in grid units); got "
                f"{x!r}. Use a larger epsilon, a smaller sensitivity or narrower bounds"
            )


def split_scale(scale: float) -> tuple[int, int]:
    """The rational ``2**j / s >= scale`` of the vectorised ``_split_scale``.

    Same float operations on one double, so the same ``(j, s)``.
    """
    x = max(scale, MIN_SCALE)
    e = math.frexp(x)[1]
    j = min(e + SCALE_BITS + 1, T_BITS)
    return j, int(math.floor(math.ldexp(1.0, j) / x) - 1.0)


def _uniform_const(n: int, size: int, src: Words, first: list[int] | None = None) -> list[int]:
    """:func:`uniform_below` with the same ``n`` for every entry (one pass when no
    word is rejected, the usual case); ``first``: its words, already read."""
    w = src.words(size) if first is None else first
    if w and max(w) >= _TWO64 - _TWO64 % n:
        return uniform_below([n] * size, src, w)
    return [x % n for x in w]


def uniform_below(n: Sequence[int], src: Words, first: list[int] | None = None) -> list[int]:
    """Exactly uniform integers in ``{0, ..., n_i - 1}``: keep a word below the
    largest multiple of ``n_i`` that fits in 64 bits, else read another.

    ``first``: the first words, already read.
    """
    w = src.words(len(n)) if first is None else first
    out = [x % m for x, m in zip(w, n, strict=True)]
    bad = [i for i, (x, m) in enumerate(zip(w, n, strict=True)) if x >= _TWO64 - _TWO64 % m]
    while bad:
        w = src.words(len(bad))
        again = []
        for i, x in zip(bad, w, strict=True):
            out[i] = x % n[i]
            if x >= _TWO64 - _TWO64 % n[i]:
                again.append(i)
        bad = again
    return out


#: ``coin(rows, m)``: for each of ``rows``, ``m`` Bernoulli(gamma) coins, row-major.
GammaCoin = Callable[[list[int], int], list[bool]]


def _alternating_tail(coin: GammaCoin | None, k0: int, size: int, src: Words) -> list[bool]:
    """Finish alternating series at term ``k0``; ``coin=None`` is ``gamma = 1``.

    Term ``k`` succeeds when its Bernoulli(gamma) coin and a Bernoulli(``1/k``)
    coin (``[uniform below k == 0]``) do; the result is whether the first failing
    term is odd. Four terms per pending series and round.
    """
    out = [False] * size
    pend = list(range(size))
    block = 4
    while pend:
        ks = list(range(k0, k0 + block))
        third = uniform_below(ks * len(pend), src)
        gamma = coin(pend, block) if coin is not None else None
        success = [t == 0 for t in third]
        if gamma is not None:
            success = [a and b for a, b in zip(success, gamma, strict=True)]
        pend = _settle(pend, success, block, k0, out)
        k0 += block
    return out


def _settle(
    pend: list[int], success: list[bool], block: int, k0: int, out: list[bool]
) -> list[int]:
    """One round of alternating series: each pending series ``pend[q]`` whose terms
    ``k0 .. k0 + block - 1`` (``success[q * block + c]``, row-major) hold a failure
    is settled, ``out[pend[q]]`` set to whether its first failing term is odd.
    Returns the series still pending (every term of the round succeeded)."""
    rest = []
    for q, p in enumerate(pend):
        for c in range(block):
            if not success[q * block + c]:
                out[p] = (c + k0) % 2 == 1
                break
        else:
            rest.append(p)
    return rest


def bernoulli_exp_pow2(
    num: list[int], j: list[int], src: Words, first: list[int] | None = None
) -> list[bool]:
    """Exact Bernoulli(``exp(-num_i / 2**j_i)``), ``0 <= num_i <= 2**j_i``.

    The alternating series (CKS 2020, Algorithm 1): term ``k`` is
    ``[top j bits of a word < num]`` and a Bernoulli(``1/k``) coin; the first four
    terms' ``1/k`` coins come from one uniform below 24. ``first``: the ``5 size``
    words the first block reads (four per entry, then one per entry for the
    coins), when the caller has read them already.
    """
    size = len(num)
    w = src.words(5 * size) if first is None else first
    y = w[: 4 * size]
    coins = _uniform_const(24, size, src, w[4 * size :])
    out = [True] * size
    rest: list[int] = []
    for i in range(size):
        shift, limit, fail = 64 - j[i], num[i], FIRST_1_4[coins[i]]
        stop = 4 if fail < 0 else fail  # the term whose 1/k coin fails first
        for c in range(stop):
            if y[4 * i + c] >> shift >= limit:
                stop = c
                break
        if stop == 4:
            rest.append(i)
        else:
            out[i] = stop % 2 == 0  # term stop + 1 failed: odd means accept
    if rest:

        def gamma_coin(rows: list[int], m: int) -> list[bool]:
            w = src.words(len(rows) * m)
            got: list[bool] = []
            for q, row in enumerate(rows):
                i = rest[row]
                shift, limit = 64 - j[i], num[i]
                got.extend(w[q * m + c] >> shift < limit for c in range(m))
            return got

        for i, b in zip(rest, _alternating_tail(gamma_coin, 5, len(rest), src), strict=True):
            out[i] = b
    return out


def bernoulli_exp_one(size: int, src: Words, first: list[int] | None = None) -> list[bool]:
    """Exact Bernoulli(``e^{-1}``) coins: terms 2..6 of the series from one uniform
    below 720 (term 1 always succeeds), the rest only if they all succeed.
    ``first``: the ``size`` words of the uniforms, when the caller has read them."""
    out = [EXP_ONE[r] for r in _uniform_const(720, size, src, first)]
    if None in out:
        rest = [i for i, b in enumerate(out) if b is None]
        for i, b in zip(rest, _alternating_tail(None, 7, len(rest), src), strict=True):
            out[i] = b
    return out  # type: ignore[return-value]


def geometric_e1(size: int, src: Words) -> list[int]:
    """Exact geometric draws, ``P(V >= v) = e^{-v}``: the Bernoulli(``e^{-1}``)
    successes before the first failure, three trials per pending draw and round."""
    v = [0] * size
    pend = list(range(size))
    while pend:
        w = src.words(len(pend) * GEO_BLOCK)
        trials: Sequence[bool | None] = [EXP_ONE[x % 720] for x in w]
        if None in trials or max(w) >= _LIMIT_720:  # a rejected uniform or a series tail
            trials = bernoulli_exp_one(len(w), src, w)
        rest = []
        for q, p in enumerate(pend):
            row = trials[GEO_BLOCK * q : GEO_BLOCK * q + GEO_BLOCK]
            if False in row:
                v[p] += row.index(False)
            else:
                v[p] += GEO_BLOCK
                rest.append(p)
        pend = rest
    return v


def discrete_laplace_js(j: list[int], s: list[int], src: Words) -> list[int]:
    """Exact discrete Laplace draws, ``P(k) ~ exp(-|k| s / 2**j)`` (CKS 2020, Alg. 2).

    Per proposal: ``U`` the top ``j`` bits of a word (its lowest bit the sign),
    kept with probability ``exp(-U / 2**j)``, ``V`` geometric; the magnitude is
    ``floor((U + 2**j V) / s)``; "negative zero" is rejected. Two proposals per
    pending entry and round; the first accepted one is kept.
    """
    out = [0] * len(j)
    pend = list(range(len(j)))
    while pend:
        jj = [j[p] for p in pend for _ in range(TRIES)]
        ss = [s[p] for p in pend for _ in range(TRIES)]
        m = len(jj)
        # the proposals' words, then the acceptance test's first block: one read
        word = src.words(6 * m)
        u = [w >> (64 - ji) for w, ji in zip(word[:m], jj, strict=True)]
        keep = bernoulli_exp_pow2(u, jj, src, word[m:])
        v = geometric_e1(len(jj), src)
        rest = []
        for q, p in enumerate(pend):
            for c in range(TRIES):
                i = q * TRIES + c
                y = (u[i] + (v[i] << jj[i])) // ss[i]
                if v[i] >= _BIG_V:
                    y = min(y, _CAP)
                negative = word[i] & 1
                if keep[i] and not (negative and y == 0):
                    out[p] = -y if negative else y
                    break
            else:
                rest.append(p)
        pend = rest
    return out


def _exp_pow2_one_j(u: list[int], j: int, src: Words, first: list[int]) -> list[bool]:
    """:func:`bernoulli_exp_pow2` of ``u`` with every ``j`` equal, from its first
    block ``first``, when that block decides every entry (the usual case); else
    the general function on the same words (nothing was read here, so it reads
    exactly what it would have read)."""
    size = len(u)
    coins = first[4 * size :]
    if max(coins) >= _LIMIT_24:  # a rejected uniform below 24
        return bernoulli_exp_pow2(u, [j] * size, src, first)
    shift = 64 - j
    out = []
    for i in range(size):
        limit, fail = u[i], FIRST_1_4[coins[i] % 24]
        stop = 4 if fail < 0 else fail
        for c in range(stop):
            if first[4 * i + c] >> shift >= limit:
                stop = c
                break
        if stop == 4:  # every term of the first block succeeded: the series goes on
            return bernoulli_exp_pow2(u, [j] * size, src, first)
        out.append(stop % 2 == 0)
    return out


def _laplace_one_python(j: int, s: int, src: Words) -> int:
    """``discrete_laplace_js([j], [s], src)[0]``: the same words read in the same
    order and the same arithmetic, without the bookkeeping of several entries."""
    shift = 64 - j
    while True:
        word = src.words(6 * TRIES)
        u = [w >> shift for w in word[:TRIES]]
        keep = _exp_pow2_one_j(u, j, src, word[TRIES:])
        v = geometric_e1(TRIES, src)
        for i in range(TRIES):
            y = (u[i] + (v[i] << j)) // s
            if v[i] >= _BIG_V:
                y = min(y, _CAP)
            negative = word[i] & 1
            if keep[i] and not (negative and y == 0):
                return -y if negative else y


def laplace_split(scales: Sequence[float]) -> tuple[tuple[int, int], ...]:
    """The checked scales as :func:`split_scale` pairs (what :func:`discrete_laplace`
    draws with; a caller with fixed public scales may keep them)."""
    check_scales(scales, "discrete Laplace scales")
    return tuple(split_scale(x) for x in scales)


def discrete_laplace_split(js: tuple[tuple[int, int], ...], src: Words) -> list[int]:
    """:func:`discrete_laplace` of the scales whose :func:`laplace_split` is ``js``.

    With numba, a secure source's draws are first tried compiled
    (:mod:`pandas_dp.noise.mechanisms._compiled`, once a process has made a few hundred
    small draws): the same draws from the same words, or, in the rare rounds it
    leaves to Python, nothing read.
    """
    run = getattr(src, "run_kernel", None)
    if run is not None and (compiled := _compiled.ready()) is not None:
        got = run(compiled, _compiled.params(js))
        if got is not None:
            return got.tolist()  # type: ignore[no-any-return]
    if len(js) == 1:
        return [_laplace_one_python(*js[0], src)]
    return discrete_laplace_js([p[0] for p in js], [p[1] for p in js], src)


def discrete_laplace(scales: Sequence[float], src: Words) -> list[int]:
    """:func:`pandas_dp.noise.mechanisms.discrete_laplace` for a short list of scales."""
    return discrete_laplace_split(laplace_split(scales), src)


def _uniform_below_int(n: int, src: Words) -> int:
    """An exactly uniform integer below ``n`` from whole 64-bit words (rejection)."""
    count = (n.bit_length() + 63) // 64
    span = 1 << (64 * count)
    limit = span - span % n
    while True:
        w = src.words(count)
        x = sum(word << (64 * i) for i, word in enumerate(w))
        if x < limit:
            return x % n


def bernoulli_exp_rational(num: list[int], den: list[int], src: Words) -> list[bool]:
    """Exact Bernoulli(``exp(-num_i / den_i)``) for non-negative integers.

    ``[V >= floor(gamma)]`` (``V`` geometric) times the alternating series of the
    fractional part, whose terms compare a uniform read 64 bits at a time with
    ``r / (den k)``; a tie of the first word is broken exactly.
    """
    n = len(num)
    whole = [float(a // b) for a, b in zip(num, den, strict=True)]
    rems = [a % b for a, b in zip(num, den, strict=True)]
    geo = geometric_e1(n, src)
    fixed = [(r << 64) // d for r, d in zip(rems, den, strict=True)]
    frac_ok = [False] * n
    pend = list(range(n))
    k0, block = 1, 4
    while pend:
        w = src.words(len(pend) * block)
        success = []
        for q, i in enumerate(pend):
            for c in range(block):
                p = fixed[i] // (k0 + c)
                x = w[q * block + c]
                success.append(x < p)
                if x == p:  # the rest of the uniform decides, exactly
                    dk = den[i] * (k0 + c)
                    tail = (rems[i] << 64) - p * dk
                    success[-1] = _uniform_below_int(dk, src) < tail
        pend = _settle(pend, success, block, k0, frac_ok)
        k0 += block
    return [float(g) >= h and f for g, h, f in zip(geo, whole, frac_ok, strict=True)]


def discrete_gaussian(sigmas: Sequence[float], src: Words) -> list[int]:
    """:func:`pandas_dp.noise.mechanisms.discrete_gaussian` for a short list of sigmas."""
    check_scales(sigmas, "discrete Gaussian sigmas")
    js = [split_scale(x) for x in sigmas]
    ratios = [float(x).as_integer_ratio() for x in sigmas]
    out = [0] * len(sigmas)
    pend = list(range(len(sigmas)))
    while pend:
        y = discrete_laplace_split(tuple(js[i] for i in pend), src)
        nums, dens = [], []
        for i, yi in zip(pend, y, strict=True):
            (p, q), (ji, si) = ratios[i], js[i]
            # (|y| - sigma^2/tau)^2 / (2 sigma^2) with sigma = p/q, tau = 2**j/s
            nums.append((((abs(yi) * q * q) << ji) - p * p * si) ** 2)
            dens.append((2 * p * p * q * q) << (2 * ji))
        ok = bernoulli_exp_rational(nums, dens, src)
        rest = []
        for i, yi, accepted in zip(pend, y, ok, strict=True):
            if accepted:
                out[i] = yi
            else:
                rest.append(i)
        pend = rest
    return out
