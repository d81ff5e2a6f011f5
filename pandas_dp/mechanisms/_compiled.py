"""One discrete Laplace draw, compiled (optional: ``pip install "pandas-dp[fast]"``).

:func:`laplace_one` is :func:`pandas_dp.mechanisms.small._discrete_laplace_one` for
the rounds that its usual case decides: it reads the same words, in the same order,
and computes the same integers. Whenever the Python function would leave its usual
case -- a rejected uniform, an alternating series that goes on past its first
block, a geometric draw of ``2**10`` or more -- or the words at hand run out, the
kernel gives up and reports it (``next_pos = -1``; ``-2`` when it needs more
words) without the caller having consumed anything; the caller then runs the
Python function from the same position, on the same words (or the kernel again on
a longer block). So the draw is the Python function's draw for every
stream of words (``tests/test_samplers_exact.py`` checks this word for word), and
the exactness argument carries over unchanged.

The magnitude ``floor((U + 2**j V) / s)`` is computed as
``V Q + floor((U + V R) / s)`` with ``2**j = Q s + R``: every term stays below
``2**63`` for ``V < 2**10`` (``U < 2**62``, ``s < 2**43``, ``Q s <= 2**62``).

numba is imported, and the kernel compiled (or loaded from the disk cache), by
:func:`kernel` on first use, never by ``import pandas_dp``. The samplers ask
:func:`ready`, which loads it only after :data:`WARM_DRAWS` one-entry draws: the
import and load take about 0.4 s, which a process that draws a few times would
never get back (a draw saves about 7 us).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, Final

import numpy as np

__all__ = ["MAX_V", "WARM_DRAWS", "kernel", "ready"]

#: A geometric draw this large (probability ``e**-1024``) is left to Python.
MAX_V: Final = 1 << 10

#: One-entry draws made in Python before :func:`ready` loads the kernel.
WARM_DRAWS: Final = 256

#: ``laplace_one(words, pos, j, s, q, r) -> (draw, next_pos)``; ``next_pos = -1``
#: when the Python sampler must decide, ``-2`` when the words ran out.
Kernel = Callable[[Any, int, int, int, int, int], tuple[int, int]]


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
    """The compiled one-draw sampler, or ``None`` without numba."""
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
    if tries != 2:  # the kernel unrolls two proposals per round
        return None
    max_v = MAX_V

    @numba.njit(cache=True, nogil=True)  # type: ignore[misc]
    def laplace_one(
        w: Any, pos: int, j: int, s: int, q: int, r: int
    ) -> tuple[Any, int]:  # pragma: no cover (compiled; tested against small.py)
        n = w.shape[0]
        shift = np.uint64(64 - j)
        su, qu, ru = np.uint64(s), np.uint64(q), np.uint64(r)
        u = np.zeros(2, dtype=np.uint64)
        keep = np.zeros(2, dtype=np.bool_)
        v = np.zeros(2, dtype=np.int64)
        pend = np.zeros(2, dtype=np.bool_)
        while True:
            if pos + 6 * tries > n:
                return 0, -2
            start = pos
            u[0] = w[pos] >> shift
            u[1] = w[pos + 1] >> shift
            # bernoulli_exp_pow2's first block: 4 words per entry, then a coin each
            first = pos + tries
            for i in range(2):
                if w[first + 8 + i] >= limit_24:
                    return 0, -1
            for i in range(2):
                fail = first_1_4[np.int64(w[first + 8 + i] % np.uint64(24))]
                stop = 4 if fail < 0 else fail
                for c in range(stop):
                    if (w[first + 4 * i + c] >> shift) >= u[i]:
                        stop = c
                        break
                if stop == 4:  # the series goes on: Python's general path
                    return 0, -1
                keep[i] = stop % 2 == 0
            pos += 6 * tries
            # geometric_e1 of the two proposals: geo trials per pending draw and round
            v[0] = 0
            v[1] = 0
            pend[0] = True
            pend[1] = True
            left = 2
            while left > 0:
                m = left * geo
                if pos + m > n:
                    return 0, -2
                for t in range(m):
                    x = w[pos + t]
                    if x >= limit_720 or exp_one[np.int64(x % np.uint64(720))] < 0:
                        return 0, -1
                t = pos
                for i in range(2):
                    if not pend[i]:
                        continue
                    failed = -1
                    for c in range(geo):
                        if exp_one[np.int64(w[t + c] % np.uint64(720))] == 0:
                            failed = c
                            break
                    if failed >= 0:
                        v[i] += failed
                        pend[i] = False
                        left -= 1
                    else:
                        v[i] += geo
                    t += geo
                pos += m
            for i in range(2):
                if v[i] >= max_v:
                    return 0, -1
                vi = np.uint64(v[i])
                y = vi * qu + (u[i] + vi * ru) // su
                negative = (w[start + i] & np.uint64(1)) == np.uint64(1)
                if keep[i] and not (negative and y == np.uint64(0)):
                    return (-np.int64(y) if negative else np.int64(y)), pos

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. a read-only cache directory
        try:
            words = np.zeros(16, dtype=np.uint64)
            laplace_one(words, 0, 10, 3, 341, 1)
            words.flags.writeable = False  # (a block straight from os.urandom)
            laplace_one(words, 0, 10, 3, 341, 1)
        except Exception:  # pragma: no cover (a broken numba: the Python path)
            return None
    return laplace_one  # type: ignore[no-any-return]
