"""Discrete Laplace draws, compiled (numba: a dependency wherever it has wheels).

The kernel (:func:`pandas_dp.noise.mechanisms._laplace_kernel.laplace_many`) reads a
block of words in the order of the Python samplers, computes the same integers, and
gives up (having consumed nothing) in the cases it leaves to them: a rejected
uniform (probability below ``2**-54`` per word) or a geometric draw of ``2**10`` or
more; or it asks for more words. The caller then runs the Python sampler on the same
words (or the kernel again on a longer block). So the draws are the Python
samplers' draws for every stream of words (``tests/test_samplers_exact.py`` checks
this word for word), and the exactness argument carries over unchanged.

Two callers, both for a secure source only (a seeded source is read exactly as far
as asked, never a block ahead, so its draws always come from Python):

* a few draws (:func:`ready`, used by :mod:`pandas_dp.noise.mechanisms.small`) run on the
  source's read-ahead block (:meth:`RandomSource.run_kernel`);
* a vector of draws (:func:`draw_vector`, used by
  :func:`pandas_dp.noise.mechanisms.samplers.discrete_laplace`) runs on fresh words of its
  own, about 21 per draw: at ``10**5`` draws about 67 ms against 125 ms for the
  numpy sampler, most of it reading the CSPRNG.

numba is imported, and the kernel compiled (or loaded from the disk cache), by
:func:`kernel` on first use, never by ``import pandas_dp``: the import and load take
about 0.4 s, which a process that draws a few times would never get back (a draw
saves about 7 us, two about 13 us, a vector about 1 us per entry). So :func:`ready`
loads it after :data:`WARM_DRAWS` small draws, and :func:`draw_vector` when numba is
already imported (by the engine's kernels, say) or the vector has at least
:data:`COMPILED_FROM` entries.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from numpy.typing import NDArray

from pandas_dp._optional import compiled

if TYPE_CHECKING:
    from pandas_dp.noise.mechanisms.source import RandomSource

__all__ = ["COMPILED_FROM", "WARM_DRAWS", "draw_vector", "kernel", "params", "ready"]

#: Small draws made in Python before :func:`ready` loads the kernel.
WARM_DRAWS: Final = 256
#: A vector this long loads the kernel even when numba is not imported yet.
COMPILED_FROM: Final = 1 << 18
#: Words per round of two proposals (the model of :func:`_expected_words`).
_WORDS_PER_ROUND: Final = 18.7

#: ``laplace_many(words, pos, params) -> (draws, next_pos)``; ``next_pos = -1``
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
    """The compiled sampler, or ``None`` without numba (or with a broken one)."""
    kernel: Kernel | None = compiled(
        "pandas_dp.noise.mechanisms._laplace_kernel", "laplace_many", check=_compile
    )
    return kernel


def _compile(laplace_many: Kernel) -> None:
    """Compile (or load) the sampler for writable and read-only word blocks."""
    words = np.zeros(64, dtype=np.uint64)
    laplace_many(words, 0, params(((10, 3),)))
    words.flags.writeable = False  # (a block straight from os.urandom)
    laplace_many(words, 0, params(((10, 3),)))


@functools.lru_cache(maxsize=1024)
def params(js: tuple[tuple[int, int], ...]) -> NDArray[np.int64]:
    """The kernel's per-entry row ``(j, s, q, r)``, ``2**j = q s + r``, of each
    ``(j, s)`` (read only; the scales of a plan are public and fixed)."""
    out = np.array([(j, s, *divmod(1 << j, s)) for j, s in js], dtype=np.int64).reshape(-1, 4)
    out.flags.writeable = False
    return out


def _expected_words(scale: NDArray[np.float64]) -> int:
    """Words enough, but for a chance of about ``e**-18``, for draws of these scales.

    Each round makes two proposals of about 9.35 words (a word for ``U`` and the
    sign, five for the acceptance test, about 3.16 for the geometric, a few more in
    rare tails); a proposal is kept with probability
    ``(1 - e**-1) (1 - (1 - e**(-1/T)) / 2)`` (the acceptance test, then "negative
    zero"). The mean over the draws, then six standard deviations (at most about 8
    words per draw) and 512 words. Measured: 21.4 words per draw at large scales,
    27.3 at ``T = 1``, 34.8 at tiny ones, within 1 % of the model.
    """
    keep = (1 - np.exp(-1.0)) * (1 + 0.5 * np.expm1(-1.0 / scale))
    mean = float(np.sum(_WORDS_PER_ROUND / (1 - (1 - keep) ** 2)))
    return int(mean + 48 * np.sqrt(scale.size)) + 512


def draw_vector(
    j: NDArray[np.int64],
    s: NDArray[np.uint64],
    src: RandomSource,
    python: Callable[[RandomSource], NDArray[np.int64]],
) -> NDArray[np.int64] | None:
    """The discrete Laplace draws of the scales ``2**j / s``, compiled; ``None`` when
    the kernel is not to be used (a seeded source, no numba, a short vector in a
    process that has not imported numba).

    The kernel runs on fresh words from ``src``, read ahead and never used again
    (those it leaves unread are dropped): more when it asks for them, the kernel
    then running again from the first; when it gives up, ``python`` (the numpy
    sampler) draws from the same words, then fresh ones. Either way the draws are
    a fixed function of one stream of uniform words: exact.
    """
    if not src.secure or not src.reads_ahead():
        return None
    if "numba" not in sys.modules and j.size < COMPILED_FROM:
        return None
    run = kernel()
    if run is None:
        return None
    t = np.left_shift(np.uint64(1), j.astype(np.uint64))
    par = np.stack([j, s.astype(np.int64), (t // s).astype(np.int64), (t % s).astype(np.int64)], 1)
    par.flags.writeable = False  # (read-only arrays throughout: one compiled signature)
    words = src.bits(_expected_words(np.ldexp(1.0, j) / s.astype(np.float64)))
    while True:
        draws, end = run(words, 0, par)
        if end >= 0:
            return np.asarray(draws, dtype=np.int64)
        if end != -2:
            return python(src.replay(words))
        words = np.concatenate([words, src.bits(words.size // 8 + 512)])
        words.flags.writeable = False
