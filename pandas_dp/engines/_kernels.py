# mypy: disallow-untyped-decorators=False
"""The compiled kernels of the pandas engine (numba; imported only by ``_numba.kernels``).

This module imports numba at its top: :mod:`pandas_dp.engines._numba` imports it on
the first call that needs a kernel, never ``import pandas_dp``. Every kernel is
compiled once and cached on disk when the package directory allows it.

Rounding without a rounding instruction. For a float ``t`` with ``|t| < 2**51``,
``t + R`` (``R = 1.5 * 2**52``) lies in ``[2**52, 2**53)``, where the float64 spacing is
1, so the addition rounds ``t`` to an integer, half to even, exactly as ``rint``
does, and the bit pattern of ``t + R`` read as an ``int64`` is ``bits(R) + rint(t)``.
The ungrouped kernels add those bit patterns as ``uint64`` (modulo ``2**64``) and
subtract ``n * bits(R)`` once at the end: one multiply-add and one integer addition
per value instead of a rounding, a conversion and an addition. Every rounded
quantity here is at most ``2**38`` in size
(:data:`pandas_dp.engines.pandas.STEP_BITS`) and a call covers at most ``2**24``
rows, so the true sum is below ``2**62`` in size and the modular sum read as an
``int64`` is that sum exactly (two's complement).

Memory. The ungrouped moment kernels walk the column in blocks of
:data:`BLOCK_ROWS` rows and ask for the cache lines :data:`AHEAD_ROWS` rows ahead
(``llvm.prefetch``, a hint that reads nothing into the program). Measured at 10**7
float64 rows on one thread (benchmarks/run.py machine), this took the fused
count/sum/squares pass from about 1.9x to 0.8x one ``x.sum()``: without it the
loop's arithmetic and the memory stream did not overlap.

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
from numba.core import cgutils
from numba.extending import intrinsic

#: Adding this rounds a float of size below ``2**51`` to an integer (see the module).
ROUNDER = 1.5 * 2.0**52
#: The bit pattern of :data:`ROUNDER` as an ``int64``.
ROUNDER_BITS = int(np.array(ROUNDER).view(np.int64))
#: Rows per block of the ungrouped moment kernels; each block asks for the cache
#: lines of the block :data:`AHEAD_ROWS` rows further on (software prefetch).
BLOCK_ROWS = 64
#: How far ahead (in rows) the moment kernels prefetch.
AHEAD_ROWS = 1024
#: Bytes per cache line (one prefetch per line).
LINE_BYTES = 64


def _jit(fn: Any, fastmath: set[str] | bool = False) -> Any:
    options: dict[str, Any] = {"nogil": True, "error_model": "numpy", "fastmath": fastmath}
    try:
        return numba.njit(cache=True, **options)(fn)
    except Exception:  # no usable cache location: compile in memory
        return numba.njit(**options)(fn)


def _jit_fused(fn: Any) -> Any:
    """:func:`_jit` allowing ``a * b + c`` as one fused multiply-add (see the module)."""
    return _jit(fn, {"contract"})


def _jit_inline(fn: Any) -> Any:
    """A helper of the fused kernels, inlined into them (numba IR inlining): its
    operations are compiled with the calling kernel's flags."""
    options: dict[str, Any] = {"nogil": True, "error_model": "numpy", "inline": "always"}
    try:
        return numba.njit(cache=True, **options)(fn)
    except Exception:  # no usable cache location: compile in memory
        return numba.njit(**options)(fn)


@intrinsic
def _bit_pattern(typingctx: Any, value: Any) -> Any:  # pragma: no cover (compiled)
    """The bit pattern of a float64 as an int64 (no conversion)."""
    if value != types.float64:
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


_bits: Any = _bit_pattern  # (typed as what the compiled kernels call it with)


@intrinsic
def _prefetch_row(typingctx: Any, array: Any, row: Any) -> Any:  # pragma: no cover (compiled)
    """Ask the processor to load the cache line of ``array[row]`` (a hint: it never
    faults, reads nothing into the program and changes no value)."""
    if not (isinstance(array, types.Array) and array.ndim == 1 and isinstance(row, types.Integer)):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        aryty, rowty = signature.args
        ary = context.make_array(aryty)(context, builder, args[0])
        index = context.cast(builder, args[1], rowty, types.intp)
        pointer = cgutils.get_item_pointer(  # type: ignore[no-untyped-call]
            context, builder, aryty, ary, [index]
        )
        byte = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [byte, i32, i32, i32])
        module = builder.module
        name = "llvm.prefetch.p0i8"  # (LLVM's typed-pointer name; newer LLVM renames it)
        try:
            fn = module.get_global(name)
        except KeyError:
            fn = ir.Function(module, fnty, name)
        # read (0), keep in every cache level (3), data (1)
        builder.call(fn, [builder.bitcast(pointer, byte), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.none(array, row), codegen


_prefetch: Any = _prefetch_row


@_jit
def rounded(t: float) -> Any:  # pragma: no cover (compiled)
    """``rint(t)`` as an int64, for ``|t| < 2**51``."""
    return _bits(t + ROUNDER) - ROUNDER_BITS


@_jit_inline
def _term(value: Any, mid: float, half: float, scale: float) -> Any:  # pragma: no cover
    """One row of :func:`sums`: ``(is NaN, bits(round(clamp(value - mid) * scale) + R))``
    as ``uint64`` (a NaN falls through the clamp as ``-half``)."""
    v = value - mid
    y = v if v > -half else -half
    y = y if y < half else half
    return np.uint64(v != v), np.uint64(_bits(y * scale + ROUNDER))


@_jit_inline
def _terms(
    value: Any, mid: float, half: float, scale: float, sq_scale: float
) -> Any:  # pragma: no cover
    """:func:`_term` and the bits of ``round(y² * sq_scale) + R``."""
    v = value - mid
    y = v if v > -half else -half
    y = y if y < half else half
    return (
        np.uint64(v != v),
        np.uint64(_bits(y * scale + ROUNDER)),
        np.uint64(_bits(y * y * sq_scale + ROUNDER)),
    )


@_jit_inline
def _unwrapped(missing: Any, wrapped: Any, n: int, low: float) -> Any:  # pragma: no cover
    """``(missing, Σ round(...))`` over the non-missing rows from ``wrapped``, the
    ``uint64`` sum modulo ``2**64`` of the bit patterns of all ``n`` rows (each
    ``bits(R) + its rounded value``; a missing row's value is ``round(low)``).

    Subtracting ``n * bits(R)`` modulo ``2**64`` leaves the sum of the rounded values
    of all rows, at most ``n * 2**STEP_BITS <= 2**62`` in size: read as an ``int64``
    it is that sum exactly. The missing rows' known share is then removed in int64.
    """
    every = np.int64(wrapped - np.uint64(n) * np.uint64(ROUNDER_BITS))
    m = np.int64(missing)
    return m, every - m * rounded(low)


@_jit_fused
def sums(x: Any, mid: float, half: float, scale: float) -> Any:  # pragma: no cover
    """``(missing, Σ round(clamp(x - mid) * scale))`` over the non-missing values."""
    n = x.shape[0]
    whole = n - n % BLOCK_ROWS
    line = max(1, LINE_BYTES // x.itemsize)
    missing = np.uint64(0)
    total = np.uint64(0)
    for start in range(0, whole, BLOCK_ROWS):
        if start + AHEAD_ROWS + BLOCK_ROWS <= n:
            for r in range(0, BLOCK_ROWS, line):
                _prefetch(x, start + AHEAD_ROWS + r)
        for i in range(start, start + BLOCK_ROWS):
            m, t = _term(x[i], mid, half, scale)
            missing += m
            total += t
    for i in range(whole, n):
        m, t = _term(x[i], mid, half, scale)
        missing += m
        total += t
    return _unwrapped(missing, total, n, -half * scale)


@_jit_fused
def sums_squares(
    x: Any, mid: float, half: float, scale: float, sq_scale: float
) -> Any:  # pragma: no cover
    """:func:`sums` and ``Σ round(clamp(x - mid)² * sq_scale)``: one pass."""
    n = x.shape[0]
    whole = n - n % BLOCK_ROWS
    line = max(1, LINE_BYTES // x.itemsize)
    missing = np.uint64(0)
    total = np.uint64(0)
    squares = np.uint64(0)
    for start in range(0, whole, BLOCK_ROWS):
        if start + AHEAD_ROWS + BLOCK_ROWS <= n:
            for r in range(0, BLOCK_ROWS, line):
                _prefetch(x, start + AHEAD_ROWS + r)
        for i in range(start, start + BLOCK_ROWS):
            m, t, s = _terms(x[i], mid, half, scale, sq_scale)
            missing += m
            total += t
            squares += s
    for i in range(whole, n):
        m, t, s = _terms(x[i], mid, half, scale, sq_scale)
        missing += m
        total += t
        squares += s
    low = -half
    m, total_sum = _unwrapped(missing, total, n, low * scale)
    _, squares_sum = _unwrapped(missing, squares, n, low * low * sq_scale)
    return m, total_sum, squares_sum


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


#: Most codes tallied in :data:`TALLY_WAYS` interleaved tallies (a table of
#: 8 x 4096 int64 = 256 KiB); more are tallied in one table.
INTERLEAVED_CODES = 4096
#: Interleaved tallies of :func:`code_counts` (a constant: the loop is unrolled).
TALLY_WAYS = 8


@_jit
def code_counts(codes: Any, low: int, size: int) -> Any:  # pragma: no cover
    """Counts of the integer codes ``low .. low + size - 1``: every code MUST be in
    that range (e.g. a categorical's codes, ``-1 .. K - 1``); nothing is checked.

    Up to :data:`INTERLEAVED_CODES` codes, :data:`TALLY_WAYS` interleaved tallies
    in one flat table (the tally of code ``c`` in way ``j`` at ``c * ways + j``):
    consecutive equal codes do not wait on each other's increment. The index is
    unsigned, so the compiled loop has no negative-index wrap-around to test.
    Measured on 10**7 int8 codes of 5 values, one thread: 3.5 ms against 5.1 ms
    for four ways in a 2-d table (``codes.sum()``: 3.1 ms). A longer table leaves the
    cache: above the limit, one tally (10**7 codes of 10**5 values: 11 ms against 26 ms).
    """
    n = codes.shape[0]
    lo = np.int64(low)
    out = np.zeros(size, dtype=np.int64)
    if size > INTERLEAVED_CODES:
        for i in range(n):
            out[np.uint64(np.int64(codes[i]) - lo)] += 1
        return out
    ways = TALLY_WAYS
    tally = np.zeros(ways * size, dtype=np.int64)
    whole = n - n % ways
    for i in range(0, whole, ways):
        for j in range(ways):
            tally[np.uint64((np.int64(codes[i + j]) - lo) * ways + j)] += 1
    for i in range(whole, n):
        tally[np.uint64((np.int64(codes[i]) - lo) * ways)] += 1
    for c in range(size):
        for j in range(ways):
            out[c] += tally[c * ways + j]
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


@_jit
def first_rows(values: Any, low: int, size: int, offset: int) -> Any:  # pragma: no cover
    """Per value ``low .. low + size - 1``: ``offset`` plus the first row holding it
    (read backwards, so the last write is the first row), or ``2**63 - 1`` where
    none does. Every value MUST be in that range; nothing is checked."""
    out = np.full(size, np.iinfo(np.int64).max, dtype=np.int64)
    shift = np.uint64(low)
    for i in range(values.shape[0] - 1, -1, -1):
        out[np.uint64(values[i]) - shift] = offset + i
    return out
