"""A few discrete Laplace draws, compiled (optional: ``pip install "pandas-dp[fast]"``).

The kernel is :func:`pandas_dp.mechanisms.small.discrete_laplace_js` for the rounds
that its usual case decides: it reads the same words, in the same order, and
computes the same integers. Whenever the Python function would leave its usual
case -- a rejected uniform, an alternating series that goes on past its first
block, a geometric draw of ``2**10`` or more -- or the words at hand run out, the
kernel gives up and reports it (``next_pos = -1``; ``-2`` when it needs more
words) without the caller having consumed anything; the caller then runs the
Python function from the same position, on the same words (or the kernel again on
a longer block). So the draws are the Python function's draws for every
stream of words (``tests/test_samplers_exact.py`` checks this word for word), and
the exactness argument carries over unchanged.

The magnitude ``floor((U + 2**j V) / s)`` is computed as
``V Q + floor((U + V R) / s)`` with ``2**j = Q s + R``: every term stays below
``2**63`` for ``V < 2**10`` (``U < 2**62``, ``s < 2**43``, ``Q s <= 2**62``).

numba is imported, and the kernel compiled (or loaded from the disk cache), by
:func:`kernel` on first use, never by ``import pandas_dp``. The samplers ask
:func:`ready`, which loads it only after :data:`WARM_DRAWS` small draws: the
import and load take about 0.4 s, which a process that draws a few times would
never get back (a draw saves about 7 us, two about 13 us).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

__all__ = ["MAX_V", "WARM_DRAWS", "kernel", "params", "ready"]

#: A geometric draw this large (probability ``e**-1024``) is left to Python.
MAX_V: Final = 1 << 10

#: Small draws made in Python before :func:`ready` loads the kernel.
WARM_DRAWS: Final = 256

#: ``laplace_many(words, pos, params(js)) -> (draws, next_pos)``; ``next_pos = -1``
#: when the Python sampler must decide, ``-2`` when the words ran out.
Kernel = Callable[[Any, int, Any], tuple[Any, int]]


_asked = 0


def ready() -> Kernel | None:
    """:func:`kernel` once :data:`WARM_DRAWS` draws have asked for it, else ``None``.

    (The count is not locked: two threads may both count one draw, which only
    moves the moment the kernel is loaded.)
    """
    global _asked
    if _asked >= WARM_DRAWS:
        return kernel()
    _asked += 1
    return None


@functools.cache
def kernel() -> Kernel | None:
    """The compiled sampler of a few draws, or ``None`` without numba."""
    try:
        import numba
    except ImportError:
        return None
    from pandas_dp.mechanisms import constants, small

    first_1_4 = np.array(small._FIRST_1_4, dtype=np.int64)
    # Bernoulli(e^-1) from a uniform below 720: 1 success, 0 failure, -1 "goes on"
    exp_one = np.array([-1 if b is None else int(b) for b in small._EXP_ONE], dtype=np.int64)
    limit_24 = np.uint64(small._LIMIT_24)
    limit_720 = np.uint64(small._LIMIT_720)
    tries, geo = constants.TRIES, constants.GEO_BLOCK
    max_v = np.uint64(MAX_V)

    @numba.njit(cache=True, nogil=True)  # type: ignore[misc]
    def laplace_many(
        w: Any, pos: int, par: Any
    ) -> tuple[Any, int]:  # pragma: no cover (compiled; tested against small.py)
        n = w.shape[0]
        size = par.shape[0]
        out = np.zeros(size, dtype=np.int64)
        # scratch, one allocation: per proposal its shift, U, kept?, V, V pending?;
        # then the pending entries
        most = size * tries
        buf = np.empty(5 * most + size, dtype=np.uint64)
        shift, u, keep, v, going = 0, most, 2 * most, 3 * most, 4 * most
        pend = 5 * most
        for e in range(size):
            buf[pend + e] = e
        left = size
        while left > 0:
            m = left * tries  # proposals this round, entry pend[i // tries] for i
            if pos + 6 * m > n:
                return out, -2
            start = pos
            for i in range(m):
                buf[shift + i] = np.uint64(64 - par[np.int64(buf[pend + i // tries]), 0])
                buf[u + i] = w[pos + i] >> buf[shift + i]
            # bernoulli_exp_pow2's first block: 4 words per proposal, then a coin each
            first = pos + m
            coins = first + 4 * m
            for i in range(m):
                if w[coins + i] >= limit_24:
                    return out, -1
            for i in range(m):
                fail = first_1_4[np.int64(w[coins + i] % np.uint64(24))]
                stop = 4 if fail < 0 else fail
                for c in range(stop):
                    if (w[first + 4 * i + c] >> buf[shift + i]) >= buf[u + i]:
                        stop = c
                        break
                if stop == 4:  # the series goes on: Python's general path
                    return out, -1
                buf[keep + i] = stop % 2 == 0
            pos += 6 * m
            # geometric_e1 of the proposals: geo trials per pending draw and round
            for i in range(m):
                buf[v + i] = 0
                buf[going + i] = 1
            open_ = m
            while open_ > 0:
                k = open_ * geo
                if pos + k > n:
                    return out, -2
                for t in range(k):
                    x = w[pos + t]
                    if x >= limit_720 or exp_one[np.int64(x % np.uint64(720))] < 0:
                        return out, -1
                t = pos
                for i in range(m):
                    if buf[going + i] == 0:
                        continue
                    failed = -1
                    for c in range(geo):
                        if exp_one[np.int64(w[t + c] % np.uint64(720))] == 0:
                            failed = c
                            break
                    if failed >= 0:
                        buf[v + i] += np.uint64(failed)
                        buf[going + i] = 0
                        open_ -= 1
                    else:
                        buf[v + i] += np.uint64(geo)
                    t += geo
                pos += k
            # the first accepted proposal of each pending entry; the rest go again
            rest = 0
            for e in range(left):
                p = np.int64(buf[pend + e])
                done = False
                for c in range(tries):
                    i = e * tries + c
                    vi = buf[v + i]
                    if vi >= max_v:
                        return out, -1
                    y = vi * np.uint64(par[p, 2]) + (buf[u + i] + vi * np.uint64(par[p, 3])) // (
                        np.uint64(par[p, 1])
                    )
                    negative = (w[start + i] & np.uint64(1)) == np.uint64(1)
                    if buf[keep + i] != 0 and not (negative and y == np.uint64(0)):
                        out[p] = -np.int64(y) if negative else np.int64(y)
                        done = True
                        break
                if not done:
                    buf[pend + rest] = p
                    rest += 1
            left = rest
        return out, pos

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. a read-only cache directory
        try:
            words = np.zeros(16, dtype=np.uint64)
            laplace_many(words, 0, params(((10, 3),)))
            words.flags.writeable = False  # (a block straight from os.urandom)
            laplace_many(words, 0, params(((10, 3),)))
        except Exception:  # pragma: no cover (a broken numba: the Python path)
            return None
    return laplace_many  # type: ignore[no-any-return]


@functools.lru_cache(maxsize=1024)
def params(js: tuple[tuple[int, int], ...]) -> NDArray[np.int64]:
    """The kernel's per-entry row ``(j, s, q, r)``, ``2**j = q s + r``, of each
    ``(j, s)`` (read only; the scales of a plan are public and fixed)."""
    out = np.array([(j, s, *divmod(1 << j, s)) for j, s in js], dtype=np.int64).reshape(-1, 4)
    out.flags.writeable = False
    return out
