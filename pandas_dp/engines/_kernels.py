# mypy: disallow-untyped-decorators=False
"""The compiled kernels of the pandas engine (numba; imported only by ``_numba.kernels``).

This module imports numba at its top: :mod:`pandas_dp.engines._numba` imports it on
the first call that needs a kernel, never ``import pandas_dp``. Every kernel is
compiled once and cached on disk when the package directory allows it.

Rounding without a rounding instruction. For a float ``t`` with ``|t| < 2**51``,
``t + R`` (``R = 1.5 * 2**52``) lies in ``[2**52, 2**53)``, where the float64 spacing is
1, so the addition rounds ``t`` to an integer, half to even, exactly as ``rint``
does, and the bit pattern of ``t + R`` read as an ``int64`` is ``bits(R) + rint(t)``.
The kernels add those bit patterns minus ``bits(R)``: two vector instructions (an
addition and an integer addition) instead of a rounding, a conversion and an
addition. Every rounded quantity here is at most ``2**38`` in size
(:data:`pandas_dp.engines.pandas.STEP_BITS`).

The moment kernels let the compiler fuse ``t * scale + R`` into one multiply-add
(fast-math flag ``contract``, nothing else): ``scale`` is a power of two, so the
product is exact (or, below the normal range, far below 1/2 and rounded to ``R``
either way), and the fused and the unfused forms round the same exact sum once.
No float reduction is reassociated; every other float operation is the IEEE one
that numpy performs.

A missing value (NaN) falls through the clamp ``max(min(v, h), -h)`` as ``-h`` (an
ordered comparison with NaN is false); the kernels count the NaNs and subtract
their contribution, a known integer, at the end, so the loop has no branch.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]
from numba import types
from numba.extending import intrinsic

#: Adding this rounds a float of size below ``2**51`` to an integer (see the module).
ROUNDER = 1.5 * 2.0**52
#: The bit pattern of :data:`ROUNDER` as an ``int64``.
ROUNDER_BITS = int(np.array(ROUNDER).view(np.int64))


def _jit(fn: Any, fastmath: set[str] | bool = False) -> Any:
    options: dict[str, Any] = {"nogil": True, "error_model": "numpy", "fastmath": fastmath}
    try:
        return numba.njit(cache=True, **options)(fn)
    except Exception:  # no usable cache location: compile in memory
        return numba.njit(**options)(fn)


def _jit_fused(fn: Any) -> Any:
    """:func:`_jit` allowing ``a * b + c`` as one fused multiply-add (see the module)."""
    return _jit(fn, {"contract"})


@intrinsic
def _bit_pattern(typingctx: Any, value: Any) -> Any:  # pragma: no cover (compiled)
    """The bit pattern of a float64 as an int64 (no conversion)."""
    if value != types.float64:
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


_bits: Any = _bit_pattern  # (typed as what the compiled kernels call it with)


@_jit
def rounded(t: float) -> Any:  # pragma: no cover (compiled)
    """``rint(t)`` as an int64, for ``|t| < 2**51``."""
    return _bits(t + ROUNDER) - ROUNDER_BITS


@_jit_fused
def sums(x: Any, mid: float, half: float, scale: float) -> Any:  # pragma: no cover
    """``(missing, Σ round(clamp(x - mid) * scale))`` over the non-missing values."""
    missing = np.int64(0)
    total = np.int64(0)
    for i in range(x.shape[0]):
        v = x[i] - mid
        missing += v != v
        y = v if v > -half else -half
        y = y if y < half else half
        total += _bits(y * scale + ROUNDER) - ROUNDER_BITS
    return missing, total - missing * rounded(-half * scale)


@_jit_fused
def sums_squares(
    x: Any, mid: float, half: float, scale: float, sq_scale: float
) -> Any:  # pragma: no cover
    """:func:`sums` and ``Σ round(clamp(x - mid)² * sq_scale)``."""
    missing = np.int64(0)
    total = np.int64(0)
    squares = np.int64(0)
    for i in range(x.shape[0]):
        v = x[i] - mid
        missing += v != v
        y = v if v > -half else -half
        y = y if y < half else half
        total += _bits(y * scale + ROUNDER) - ROUNDER_BITS
        squares += _bits(y * y * sq_scale + ROUNDER) - ROUNDER_BITS
    low = -half
    return (
        missing,
        total - missing * rounded(low * scale),
        squares - missing * rounded(low * low * sq_scale),
    )


@_jit_fused
def grouped(
    x: Any,
    codes: Any,
    mid: float,
    half: float,
    scale: float,
    sq_scale: float,
    squares: bool,
    count: Any,
    total: Any,
    sq: Any,
) -> Any:  # pragma: no cover
    """Per group (``codes[i] >= 0``) non-missing count, sums and squares, added in place.

    Returns the number of codes at or above ``len(count)`` (skipped; a caller's bug).
    """
    size = np.uint64(count.shape[0])
    stray = np.int64(0)
    for i in range(x.shape[0]):
        g = codes[i]
        if np.uint64(g) >= size:  # -1 (no group), or out of range
            stray += g >= 0
            continue
        v = x[i] - mid
        if v != v:
            continue
        y = v if v > -half else -half
        y = y if y < half else half
        count[g] += 1
        total[g] += _bits(y * scale + ROUNDER) - ROUNDER_BITS
        if squares:
            sq[g] += _bits(y * y * sq_scale + ROUNDER) - ROUNDER_BITS
    return stray


@_jit
def nan_count(x: Any) -> Any:  # pragma: no cover
    """The number of NaN values of a float array."""
    missing = np.int64(0)
    for i in range(x.shape[0]):
        missing += x[i] != x[i]
    return missing


@_jit
def grouped_present(x: Any, codes: Any, count: Any) -> Any:  # pragma: no cover
    """Per group (``codes[i] >= 0``), the non-NaN values, added into ``count``.

    Returns the number of codes at or above ``len(count)`` (skipped).
    """
    size = np.uint64(count.shape[0])
    stray = np.int64(0)
    for i in range(x.shape[0]):
        g = codes[i]
        if np.uint64(g) >= size:
            stray += g >= 0
        elif x[i] == x[i]:
            count[g] += 1
    return stray


@_jit
def code_counts(codes: Any, low: int, size: int) -> Any:  # pragma: no cover
    """Counts of the integer codes ``low .. low + size - 1``: every code MUST be in
    that range (e.g. a categorical's codes, ``-1 .. K - 1``); nothing is checked.

    Four interleaved tallies: consecutive equal codes do not wait on each other's
    increment.
    """
    tally = np.zeros((4, size), dtype=np.int64)
    n = codes.shape[0]
    whole = n - n % 4
    for i in range(0, whole, 4):
        tally[0, np.int64(codes[i]) - low] += 1
        tally[1, np.int64(codes[i + 1]) - low] += 1
        tally[2, np.int64(codes[i + 2]) - low] += 1
        tally[3, np.int64(codes[i + 3]) - low] += 1
    for i in range(whole, n):
        tally[0, np.int64(codes[i]) - low] += 1
    out = np.zeros(size, dtype=np.int64)
    for j in range(4):
        for c in range(size):
            out[c] += tally[j, c]
    return out


@_jit
def checked_code_counts(codes: Any, low: int, size: int) -> Any:  # pragma: no cover
    """:func:`code_counts` for codes of any value: ``(counts, stray)``, ``stray`` the
    number of codes outside the range (not counted)."""
    tally = np.zeros((4, size + 1), dtype=np.int64)  # last column: stray codes
    n = codes.shape[0]
    whole = n - n % 4
    for i in range(0, whole, 4):
        for j in range(4):
            c = np.int64(codes[i + j]) - low
            if 0 <= c < size:
                tally[j, c] += 1
            else:
                tally[j, size] += 1
    for i in range(whole, n):
        c = np.int64(codes[i]) - low
        if 0 <= c < size:
            tally[0, c] += 1
        else:
            tally[0, size] += 1
    out = np.zeros(size + 1, dtype=np.int64)
    for j in range(4):
        for b in range(size + 1):
            out[b] += tally[j, b]
    return out[:size], out[size]


@_jit
def key_codes(
    values: Any, low: int, table: Any, radix: int, code: Any, first: bool, undeclared: int
) -> None:  # pragma: no cover
    """Fold one key column into the mixed-radix group codes, in place.

    ``table[v - low]`` is the slot of the value ``v`` (its position among the
    declared keys, ``radix`` for an undeclared value, ``radix + 1`` for a missing
    one); a value outside the table takes its last entry. ``code`` holds, per row,
    the code so far, ``-1`` once a key was missing, ``-2`` once a key was undeclared
    (a missing key wins). ``first``: ``code`` is not read, only written.
    ``undeclared``: the code written for an undeclared key (``-2``, or for the last
    column the final code of such rows).
    """
    last = np.uint64(table.shape[0] - 1)
    shift = np.uint64(low)
    for i in range(values.shape[0]):
        offset = np.uint64(values[i]) - shift
        slot = table[offset if offset < last else last]
        previous = 0 if first else code[i]
        if slot > radix or previous == -1:
            code[i] = -1
        elif slot == radix or previous == -2:
            code[i] = undeclared
        else:
            code[i] = previous * radix + slot


@_jit
def table_codes(values: Any, low: int, table: Any, code: Any) -> None:  # pragma: no cover
    """``code[i] = table[values[i] - low]``, or the table's last entry off the table."""
    last = np.uint64(table.shape[0] - 1)
    shift = np.uint64(low)
    for i in range(values.shape[0]):
        offset = np.uint64(values[i]) - shift
        code[i] = table[offset if offset < last else last]
