"""Constants shared by the exact samplers (vectorised and small-vector paths).

Examples
--------
>>> MAX_SCALE == 2.0**52, MIN_SCALE == 2.0**-20
(True, True)
"""

from __future__ import annotations

import math
from typing import Final

__all__ = [
    "EXP_ONE",
    "FIRST_1_4",
    "GRID_BITS",
    "MAX_SCALE",
    "MIN_SCALE",
    "SCALE_BITS",
    "TRUNCATED_FAILURE",
]

#: The grid is ``2**GRID_BITS`` times finer than the noise scale.
GRID_BITS: Final = 40
#: Largest noise scale (in grid units) the samplers accept: ``2**52``. Beyond it the
#: integer arithmetic of the samplers and the exactness of the released grid points
#: (``|k| < 2**53``) are no longer guaranteed.
MAX_SCALE: Final = 2.0**52
#: Smaller Laplace scales (in grid units) are rounded *up* to this one (more noise,
#: safe); at it a draw is nonzero with probability ``~2 e^{-2^20}``.
MIN_SCALE: Final = 2.0**-20
#: A Laplace scale ``T`` is rounded up to ``2**j / s`` with ``s`` an integer of at
#: least ``SCALE_BITS + 1`` bits (when ``T < 2**SCALE_BITS``): the relative increase
#: is below ``2**-SCALE_BITS``.
SCALE_BITS: Final = 40
#: The truncated sampler makes, per entry and round, as many attempts as bring the
#: probability that all fail (for the worst true value) below this.
TRUNCATED_FAILURE: Final = 1e-4

T_BITS: Final = 62  # the numerator t = 2**j of a scale t / s has j <= 62
TRIES: Final = 2  # proposals per entry and round of the discrete Laplace sampler
GEO_BLOCK: Final = 3  # Bernoulli(e^-1) trials per geometric draw and round
#: Vectors of at most this many entries are drawn by the pure-Python samplers of
#: :mod:`pandas_dp.noise.mechanisms.small` (same words, same draws, less overhead).
SMALL_SIZE: Final = 16


def first_failures(first: int, last: int) -> tuple[int, ...]:
    """Per uniform ``r < last!/(first-1)!``: the first ``k`` whose mixed-radix digit
    is nonzero (a failed Bernoulli(``1/k``) coin), as ``k - first``, or ``-1``.

    The digits of ``r`` in the radix ``(first, ..., last)`` are independent and
    uniform, so ``[d_k == 0]`` are independent Bernoulli(``1/k``) coins (the
    vectorised samplers' ``_digit_table``, reduced to what the loops use).
    """
    out = []
    for r in range(math.prod(range(first, last + 1))):
        fail = -1
        for i, k in enumerate(range(first, last + 1)):
            if r % k and fail < 0:
                fail = i
            r //= k
        out.append(fail)
    return tuple(out)


FIRST_1_4: Final = first_failures(1, 4)  # Bernoulli(1/k), k = 1..4, one uniform < 24
#: Bernoulli(e^-1) from one uniform ``r < 720`` (terms 2..6 of the series): the
#: outcome, or ``None`` when every term succeeds and the series goes on.
EXP_ONE: Final = tuple(None if f < 0 else f % 2 == 1 for f in first_failures(2, 6))
