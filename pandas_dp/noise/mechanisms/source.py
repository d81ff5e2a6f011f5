"""Where the noise's randomness comes from: :class:`RandomSource`.

By default the operating system's CSPRNG (``os.urandom``); with a seed or a
:class:`numpy.random.Generator`, reproducible and *not secure* words for tests and
teaching.

Examples
--------
>>> src = RandomSource(3)
>>> len(src.words(5)), src.secure
(5, False)
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

__all__ = ["RandomSource", "secure_source"]

FloatArray = NDArray[np.float64]

_TWO_M53: Final = 2.0**-53
#: A secure source reads the CSPRNG this many 64-bit words at a time for
#: :meth:`RandomSource.words` (one read covers a typical scalar release).
BLOCK_WORDS: Final = 128


class RandomSource:
    """Uniform random numbers for the samplers.

    Parameters
    ----------
    random_state : None, int or numpy.random.Generator
        ``None`` (the default) reads the operating system's CSPRNG. An int or a
        Generator gives reproducible, *not secure* noise for tests and teaching.

    Notes
    -----
    :meth:`bits` (numpy words, for the vectorised samplers) and :meth:`words`
    (Python ints, for the small-vector samplers) read one stream. A seeded source
    reads its generator exactly as far as asked, so the words a release gets do
    not depend on how its requests are split. A secure source serves
    :meth:`words` from a block of :data:`BLOCK_WORDS` CSPRNG words read at once;
    the block is handed out under a lock (threads sharing a source never get the
    same words) and is thrown away, unread, if the process has forked since it
    was read, so two processes never share noise. Releases with secure noise
    share one source per process (:func:`secure_source`), so the words one
    release leaves unread serve the next: none is read twice.

    Examples
    --------
    >>> RandomSource().secure
    True
    >>> u = RandomSource(1).uniform(4)
    >>> bool(((u > 0) & (u <= 1)).all())
    True
    """

    __slots__ = ("_array", "_block", "_lock", "_pid", "_pos", "_rng")

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
        self._array: NDArray[np.uint64] = np.zeros(0, dtype=np.uint64)
        self._block: list[int] | None = None  # the same words, as Python ints
        self._pos = 0
        self._pid = 0
        self._lock = threading.Lock()  # two threads never get the same words

    def __reduce__(self) -> tuple[type[RandomSource], tuple[np.random.Generator | None]]:
        # copies and pickles carry the generator, never a secure block of noise
        return (type(self), (self._rng,))

    @property
    def secure(self) -> bool:
        """Whether the bits come from the operating system's CSPRNG."""
        return self._rng is None

    def bits(self, size: int) -> NDArray[np.uint64]:
        """Return ``size`` independent uniform 64-bit words."""
        if self._rng is None:
            return np.frombuffer(os.urandom(8 * size), dtype=np.uint64)
        return np.frombuffer(self._rng.bytes(8 * size), dtype=np.uint64)

    def words(self, size: int) -> list[int]:
        """Return ``size`` independent uniform 64-bit words as Python ints.

        A seeded source (or a subclass that overrides :meth:`bits`) returns exactly
        ``bits(size).tolist()``; a secure one serves them from its CSPRNG block.

        Parameters
        ----------
        size : int
            How many words.

        Returns
        -------
        list of int
            Each uniform on ``{0, ..., 2**64 - 1}``.

        Examples
        --------
        >>> a, b = RandomSource(5), RandomSource(5)
        >>> a.words(3) == b.bits(3).tolist()
        True
        """
        if not self.reads_ahead():
            words: list[int] = self.bits(size).tolist()
            return words
        with self._lock:
            self._refill(size)
            if self._block is None:  # (the compiled sampler reads the array alone)
                self._block = self._array.tolist()
            pos = self._pos
            self._pos = pos + size
            return self._block[pos : pos + size]

    def _refill(self, size: int) -> None:
        """Make sure ``size`` unread words are in the block (lock held): the unread
        rest, then at least :data:`BLOCK_WORDS` fresh ones; nothing is kept across a
        fork. The list of the words is made when :meth:`words` first needs it."""
        pid = os.getpid()
        if self._pos + size <= self._array.size and pid == self._pid:
            return
        left = self._array[self._pos :] if pid == self._pid else self._array[:0]
        fresh = np.frombuffer(os.urandom(8 * max(size - left.size, BLOCK_WORDS)), np.uint64)
        self._array = np.concatenate([left, fresh]) if left.size else fresh
        self._block = None
        self._pid, self._pos = pid, 0

    def run_kernel(self, kernel: Callable[..., tuple[Any, int]], *args: Any) -> Any | None:
        """``kernel(words, pos, *args) -> (value, next_pos)`` on a secure source's block.

        For a compiled sampler (:mod:`pandas_dp.noise.mechanisms._compiled`) that reads
        the unread words ``words[pos:]`` in order and says where it stopped; it reads
        the very words :meth:`words` would have served next. ``next_pos = -1`` means
        it gave up: nothing is consumed and ``None`` is returned, and so it is for a
        seeded source (whose words are read from its generator exactly as far as
        asked, never a block ahead); the caller then draws in Python, from the same
        words. ``next_pos = -2`` asks for more words: the kernel runs again on the
        same unread words and fresh ones after them.
        """
        if not self.reads_ahead():
            return None
        need = BLOCK_WORDS // 2
        with self._lock:
            while True:
                self._refill(need)
                value, end = kernel(self._array, self._pos, *args)
                if end >= 0:
                    self._pos = int(end)
                    return value
                if end != -2:
                    return None
                need = self._array.size - self._pos + BLOCK_WORDS  # the same words, and more

    def reads_ahead(self) -> bool:
        """Whether words may be read ahead of their use and unused ones dropped: a
        secure source reading the CSPRNG (a seeded source, or a subclass serving
        its own words, is read exactly as far as asked)."""
        return self._rng is None and type(self).bits is RandomSource.bits

    def replay(self, words: NDArray[np.uint64]) -> RandomSource:
        """A source that serves ``words`` first, then this source's words.

        For a compiled sampler that gave up on words it read ahead: the Python
        sampler then draws from the very same words.

        Examples
        --------
        >>> src = RandomSource(2)
        >>> r = src.replay(np.array([5, 6], dtype=np.uint64))
        >>> r.bits(3)[:2].tolist(), r.bits(1).tolist() == RandomSource(2).bits(2)[1:].tolist()
        ([5, 6], True)
        """
        return _Replay(words, self)

    def uniform(self, size: int) -> FloatArray:
        """Return ``size`` uniforms on ``(0, 1]`` with 53 random bits each."""
        top = (self.bits(size) >> np.uint64(11)) + np.uint64(1)
        return np.asarray(top * _TWO_M53, dtype=np.float64)

    def exponential(self, size: int) -> FloatArray:
        """Return ``size`` standard exponential variates ``-log(U)``."""
        return -np.log(self.uniform(size))


class _Replay(RandomSource):
    """Given words first, then another source's (:meth:`RandomSource.replay`)."""

    __slots__ = ("_rest", "_then")

    def __init__(self, words: NDArray[np.uint64], then: RandomSource) -> None:
        super().__init__(None)
        self._rest, self._then = words, then

    def bits(self, size: int) -> NDArray[np.uint64]:
        head, self._rest = self._rest[:size], self._rest[size:]
        if head.size == size:
            return head
        return np.concatenate([head, self._then.bits(size - head.size)])


_SECURE: Final = RandomSource()


def _after_fork_in_child() -> None:
    """A forked child gets a fresh lock for the shared source: a lock another thread
    held at the fork would never be released there (the child's block is dropped
    on its first read, as for every source)."""
    _SECURE._lock = threading.Lock()


if hasattr(os, "register_at_fork"):  # (POSIX)
    os.register_at_fork(after_in_child=_after_fork_in_child)


def secure_source() -> RandomSource:
    """The process's secure source, shared by releases with ``random_state=None``.

    One source, so its read-ahead block of CSPRNG words serves release after
    release (a release reads about 40 words; a fresh source would read 128 and
    drop the rest). Every word is still handed out once, under its lock, and a
    forked child reads its own block.

    Returns
    -------
    RandomSource
        The same secure source on every call.

    Examples
    --------
    >>> secure_source() is secure_source(), secure_source().secure
    (True, True)
    """
    return _SECURE
