# mypy: disallow-untyped-decorators=False
"""The compiled discrete Laplace sampler (numba; imported only by ``_compiled.kernel``).

:func:`laplace_many` computes, from a block of uniform 64-bit words, the draws that
:func:`pandas_dp.noise.mechanisms.samplers._discrete_laplace_js` computes from the same
words read in order: the same rounds over the entries still pending, the same
batches of words in each (proposals, first blocks of the alternating series, their
coins, the series' tails, the geometric trials and their tails), the same integer
arithmetic. ``tests/test_samplers_exact.py`` checks this word for word, on ordinary
streams and on streams rigged to make the rare branches common.

Two cases are left to the Python samplers, which run on the same words (nothing is
consumed here when the kernel gives up): a rejected uniform (a word within ``k`` of
``2**64`` for a uniform below ``k``, probability below ``2**-54`` per word) and a
geometric draw of ``2**10`` or more (probability ``e**-1024``). So the draws are the
Python samplers' draws for every stream of words, and the exactness argument of
Canonne, Kamath & Steinke (2020) carries over unchanged.

Return codes: ``(draws, next_pos)`` with ``next_pos`` the first unread word;
``next_pos = GAVE_UP`` when the Python samplers must decide, ``NEED_WORDS`` when the
words ran out (the caller runs the kernel again on the same words and more after
them). The magnitude ``floor((U + 2**j V) / s)`` is computed as
``V q + floor((U + V r) / s)`` with ``2**j = q s + r``: every term stays below
``2**63`` for ``V < 2**10`` (``U < 2**62``, ``s < 2**43``, ``q s <= 2**62``).
"""

from __future__ import annotations

from typing import Any, Final

import numba
import numpy as np

from pandas_dp.noise.mechanisms import constants

__all__ = ["GAVE_UP", "MAX_V", "NEED_WORDS", "laplace_many"]

#: ``next_pos`` when a rare case is left to the Python samplers.
GAVE_UP: Final = -1
#: ``next_pos`` when the words at hand ran out.
NEED_WORDS: Final = -2
#: A geometric draw this large (probability ``e**-1024``) is left to Python.
MAX_V: Final = 1 << 10

_TRIES: Final = constants.TRIES
_GEO: Final = constants.GEO_BLOCK
_U64_MAX: Final = np.uint64(2**64 - 1)
_MAX_V: Final = np.uint64(MAX_V)
#: Per uniform ``r < 24``: the first failing Bernoulli(1/k) coin, ``k = 1..4``, as
#: ``k - 1``, or ``-1``.
_FIRST_1_4: Final = np.array(constants.FIRST_1_4, dtype=np.int64)
#: Bernoulli(e^-1) from a uniform ``r < 720``: 1 success, 0 failure, -1 "goes on".
_EXP_ONE: Final = np.array([-1 if b is None else int(b) for b in constants.EXP_ONE], dtype=np.int64)


def _jit(fn: Any) -> Any:
    try:
        return numba.njit(cache=True, nogil=True)(fn)
    except Exception:  # pragma: no cover (no usable cache location: compile in memory)
        return numba.njit(nogil=True)(fn)


@_jit
def _rejected(word: Any, k: Any) -> bool:  # pragma: no cover (compiled)
    """Whether ``uniform_below`` rejects ``word`` for a uniform below ``k``: above
    the last multiple of ``k`` that fits in 64 bits."""
    rem = (_U64_MAX % k + np.uint64(1)) % k  # 2**64 mod k
    return bool(word > _U64_MAX - rem)


@_jit
def _tail(
    w: Any, pos: int, rows: Any, count: int, k0: int, shift: Any, num: Any, out: Any
) -> int:  # pragma: no cover (compiled)
    """``_alternating_tail`` of the series ``rows[:count]`` from term ``k0``.

    Per round and pending series: four uniforms below ``k0 .. k0 + 3`` (a term's
    Bernoulli(1/k) coin is ``[uniform == 0]``), then, when ``shift`` is not empty,
    four Bernoulli(``num / 2**j``) coins ``[word >> shift < num]``; ``out[row]`` is
    whether the first failing term is odd. ``rows`` is overwritten.
    """
    coin = shift.shape[0] > 0
    per = 8 if coin else 4
    left = count
    while left > 0:
        if pos + per * left > w.shape[0]:
            return NEED_WORDS
        for i in range(4 * left):
            if _rejected(w[pos + i], np.uint64(k0 + i % 4)):
                return GAVE_UP
        gamma = pos + 4 * left
        rest = 0
        for q in range(left):
            r = rows[q]
            going = True
            for c in range(4):
                ok = w[pos + 4 * q + c] % np.uint64(k0 + c) == np.uint64(0)
                if coin and ok:
                    ok = (w[gamma + 4 * q + c] >> shift[r]) < num[r]
                if not ok:
                    out[r] = (c + k0) % 2 == 1
                    going = False
                    break
            if going:
                rows[rest] = r
                rest += 1
        pos += per * left
        left = rest
        k0 += 4
    return pos


@_jit
def _geometric(w: Any, pos: int, m: int, v: Any, scratch: Any) -> int:  # pragma: no cover
    """``_geometric_e1(m)`` into ``v[:m]``: per round, ``_GEO`` Bernoulli(e^-1)
    trials per pending draw (uniforms below 720, tails from term 7)."""
    pend, rows = scratch[0], scratch[1]
    trial = np.empty(m * _GEO, dtype=np.bool_)
    none = np.empty(0, dtype=np.uint64)
    for i in range(m):
        v[i] = 0
        pend[i] = i
    left = m
    while left > 0:
        k = left * _GEO
        if pos + k > w.shape[0]:
            return NEED_WORDS
        count = 0
        for t in range(k):
            x = w[pos + t]
            if _rejected(x, np.uint64(720)):
                return GAVE_UP
            e = _EXP_ONE[np.int64(x % np.uint64(720))]
            if e < 0:
                rows[count] = t
                count += 1
            else:
                trial[t] = e == 1
        pos += k
        if count:
            pos = _tail(w, pos, rows, count, 7, none, none, trial)
            if pos < 0:
                return pos
        rest = 0
        for q in range(left):
            i = pend[q]
            failed = _GEO
            for c in range(_GEO):
                if not trial[q * _GEO + c]:
                    failed = c
                    break
            v[i] += np.uint64(failed)
            if failed == _GEO:
                pend[rest] = i
                rest += 1
        left = rest
    return pos


@_jit
def laplace_many(w: Any, pos: int, par: Any) -> tuple[Any, int]:  # pragma: no cover
    """Discrete Laplace draws of the rows ``(j, s, q, r)`` of ``par`` from the words
    ``w[pos:]`` (see the module): ``(draws, next_pos)``."""
    size = par.shape[0]
    out = np.zeros(size, dtype=np.int64)
    most = size * _TRIES
    shift = np.empty(most, dtype=np.uint64)
    u = np.empty(most, dtype=np.uint64)
    v = np.empty(most, dtype=np.uint64)
    keep = np.empty(most, dtype=np.bool_)
    scratch = np.empty((2, most * _GEO), dtype=np.int64)
    pend = np.arange(size)
    left = size
    while left > 0:
        m = left * _TRIES  # proposals this round: entry pend[i // _TRIES] for i
        if pos + 6 * m > w.shape[0]:
            return out, NEED_WORDS
        start = pos
        for i in range(m):
            shift[i] = np.uint64(64 - par[pend[i // _TRIES], 0])
            u[i] = w[pos + i] >> shift[i]
        # the acceptance test exp(-U / 2**j): its first block (four words per
        # proposal, then one uniform below 24 each for the 1/k coins), then tails
        first, coins = pos + m, pos + 5 * m
        for i in range(m):
            if _rejected(w[coins + i], np.uint64(24)):
                return out, GAVE_UP
        rows = scratch[0]
        count = 0
        for i in range(m):
            fail = _FIRST_1_4[np.int64(w[coins + i] % np.uint64(24))]
            stop = 4 if fail < 0 else fail
            for c in range(stop):
                if (w[first + 4 * i + c] >> shift[i]) >= u[i]:
                    stop = c
                    break
            if stop == 4:
                rows[count] = i
                count += 1
            else:
                keep[i] = stop % 2 == 0
        pos += 6 * m
        if count:
            pos = _tail(w, pos, rows, count, 5, shift, u, keep)
            if pos < 0:
                return out, pos
        pos = _geometric(w, pos, m, v, scratch)
        if pos < 0:
            return out, pos
        # the first accepted proposal of each pending entry; the rest go again
        rest = 0
        for e in range(left):
            p = pend[e]
            done = False
            for c in range(_TRIES):
                i = e * _TRIES + c
                vi = v[i]
                if vi >= _MAX_V:
                    return out, GAVE_UP
                y = vi * np.uint64(par[p, 2]) + (u[i] + vi * np.uint64(par[p, 3])) // np.uint64(
                    par[p, 1]
                )
                negative = (w[start + i] & np.uint64(1)) == np.uint64(1)
                if keep[i] and not (negative and y == np.uint64(0)):
                    out[p] = -np.int64(y) if negative else np.int64(y)
                    done = True
                    break
            if not done:
                pend[rest] = p
                rest += 1
        left = rest
    return out, pos
