"""The engines' exact statistics equal the reference engine's, bit for bit.

:mod:`pandas_dp.engines.reference` computes every statistic row by row in pure
Python with exact arithmetic; here each kernel of the in-memory engine is run on
about a hundred random columns (NaN, None, ``±inf``, values at the bounds and at
the grid edges, rounding ties, huge and tiny magnitudes and bounds, nullable, Arrow
and boolean dtypes, groups with ``-1`` codes and empty groups) and its integers
must equal the reference's exactly. Each test runs on three code paths of the
engine: numpy with its default chunk (``numpy``), numpy with tiny chunks so that
the accumulators and the fused kernel's chunk loop run (``chunks``), and the
compiled kernels forced on for every length, with small thread spans and kernel
blocks and Arrow chunks as pieces of their own (``compiled``; skipped without
numba). The keyed-hash truncation of privacy units, the sums of a column cut into
partitions, and the Dask engine's kernels (1 and 7 partitions) are held to the
reference too.

Disagreements found (the engine differs from the specification) are the tests at
the end, marked ``xfail(strict=True)``: one minimal reproducer each.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from fractions import Fraction
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa  # type: ignore[import-untyped]
import pytest

from pandas_dp import engines
from pandas_dp.engines import columns as columns_module
from pandas_dp.engines import grid as grid_module
from pandas_dp.engines import pandas as engine_module
from pandas_dp.engines import reference as ref
from pandas_dp.engines import sums as sums_module
from pandas_dp.engines import units
from pandas_dp.engines.grid import grid_counts

CASES = 96
BOUNDS = [
    (0.0, 1.0),
    (-5.0, 10.0),
    (-1.0, 1.0),
    (0.1, 0.7),
    (-1e6, 3e6),
    (1e-300, 3e-300),
    (-2.5e150, 1e150),
    (1e15, 1e15 + 64.0),
    (-7.0, -3.0),
    (-8e307, 8e307),
    (-1.7e308, -1.6e308),
    (3.0, 3.0 + 2.0**-40),
]


@pytest.fixture(params=["numpy", "chunks", "compiled"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Force one code path of the in-memory engine."""
    if request.param == "compiled":
        pytest.importorskip("numba")
        from pandas_dp.engines import _numba

        if _numba.kernels() is None:
            pytest.skip("numba is not usable")
        monkeypatch.setattr(engine_module, "FAST_MIN_ROWS", 0)
        monkeypatch.setattr(_numba, "PARALLEL_ROWS", 37)
        monkeypatch.setattr(_numba, "BLOCK", 50)
    else:
        monkeypatch.setattr(engine_module, "FAST_MIN_ROWS", 1 << 62)
        monkeypatch.setattr(engine_module, "WARM_READS", 1 << 62)
        monkeypatch.setattr(engine_module, "USE_NUMBA", False)
        monkeypatch.setattr(grid_module, "_compiled", lambda: None)
    if request.param != "numpy":  # Arrow chunks as pieces of their own
        monkeypatch.setattr(columns_module, "MIN_PIECE_ROWS", 3)
    if request.param == "chunks":
        monkeypatch.setattr(engine_module, "CHUNK", 16)
        monkeypatch.setattr(sums_module, "FUSED_CHUNK", 8)
    return str(request.param)


# -- data -------------------------------------------------------------------------------


def _floats(rng: np.random.RandomState, n: int, lower: float, upper: float) -> list[float]:
    """Awkward float64 values for the bounds: inside, outside, at the bounds and the
    midpoint, rounding ties, NaN, ``±inf``, huge, tiny and ``-0.0``."""
    half = 0.5 * (upper - lower)
    mid = lower + half
    step = ref.accumulation_step(half)
    out = []
    for kind in rng.randint(0, 14, size=n):
        if kind <= 2:
            v = mid + half * rng.uniform(-1.0, 1.0)
        elif kind == 3:
            v = mid + half * rng.uniform(-2.0, 2.0)
        elif kind == 4:
            v = float(rng.choice([lower, upper, mid]))
        elif kind == 5:
            v = math.nan
        elif kind == 6:
            v = float(rng.choice([math.inf, -math.inf]))
        elif kind == 7:
            v = float(rng.choice([1e300, -1e300, 1.7e308, -1.7e308]))
        elif kind == 8:
            v = float(rng.choice([5e-324, -5e-324, 1e-300, 2.2e-308, -0.0]))
        elif kind == 9:  # halfway between two steps
            v = mid + (rng.randint(-1000, 1000) + 0.5) * step
        elif kind == 10:  # a random multiple of a step near the bounds
            v = float(rng.choice([lower, upper])) + rng.randint(-3, 4) * step
        elif kind == 11:
            v = float(np.round(mid + half * rng.uniform(-1.0, 1.0)))
        else:
            v = mid + rng.standard_normal() * half * 10.0 ** rng.randint(-12, 1)
        out.append(float(v))
    return out


def _series(rng: np.random.RandomState, values: list[float], kind: str) -> pd.Series:
    """``values`` in a column of dtype ``kind`` (NaN becomes the dtype's missing value)."""
    missing = [math.isnan(v) for v in values]
    if kind == "float64":
        return pd.Series(values, dtype="float64")
    if kind == "Float64":
        return pd.Series(
            [None if m else v for v, m in zip(values, missing, strict=True)], dtype="Float64"
        )
    if kind == "object":
        return pd.Series(
            [
                None if m and i % 2 else v
                for i, (v, m) in enumerate(zip(values, missing, strict=True))
            ],
            dtype=object,
        )
    if kind == "arrow32":  # float32 values (Arrow's are read in float64)
        arrow32 = pa.array(values, type=pa.float32(), from_pandas=True)
        return pd.Series(pd.arrays.ArrowExtensionArray(arrow32))
    if kind == "arrow":  # several chunks, NaN (not null) beside the nulls
        cut = sorted(rng.randint(0, len(values) + 1, size=2))
        pieces = [values[: cut[0]], values[cut[0] : cut[1]], values[cut[1] :]]
        chunks = [
            pa.array(
                [None if (math.isnan(v) and i % 2) else v for i, v in enumerate(p)],
                type=pa.float64(),
                from_pandas=False,
            )
            for p in pieces
        ]
        return pd.Series(pd.arrays.ArrowExtensionArray(pa.chunked_array(chunks, pa.float64())))
    raise AssertionError(kind)


def _ints(rng: np.random.RandomState, n: int, lower: float, upper: float) -> list[int]:
    """Integers around the bounds, and the extremes of int64."""
    lo, hi = (math.floor(lower), math.ceil(upper)) if abs(lower) < 2**40 else (-9, 9)
    span = max(hi - lo, 2)
    out = []
    for kind in rng.randint(0, 8, size=n):
        if kind == 0:
            out.append(int(rng.choice([-(2**63), 2**63 - 1, 2**53 + 1, -(2**53) - 3])))
        elif kind == 1:
            out.append(int(rng.choice([lo, hi])))
        else:
            out.append(int(lo + rng.randint(-span // 2, span + span // 2 + 1)))
    return out


def _int_series(rng: np.random.RandomState, values: list[int], kind: str) -> pd.Series:
    holes = rng.uniform(size=len(values)) < 0.15
    with_holes = [None if h else v for v, h in zip(values, holes, strict=True)]
    if kind == "int64":
        return pd.Series(values, dtype="int64")
    if kind == "int8":
        return pd.Series([max(-128, min(127, v)) for v in values], dtype="int8")
    if kind == "uint64":
        return pd.Series([abs(v) % 2**64 for v in values], dtype="uint64")
    if kind == "Int64":
        return pd.Series(with_holes, dtype="Int64")
    if kind == "arrow-int":
        return pd.Series(with_holes, dtype=pd.ArrowDtype(pa.int64()))
    if kind == "arrow-int-full":
        return pd.Series(values, dtype=pd.ArrowDtype(pa.int64()))
    if kind == "bool":
        return pd.Series([v % 2 == 1 for v in values], dtype=bool)
    if kind == "boolean":
        return pd.Series(
            [None if h else v % 2 == 1 for v, h in zip(values, holes, strict=True)],
            dtype="boolean",
        )
    if kind == "arrow-bool":
        return pd.Series(
            [None if h else v % 2 == 1 for v, h in zip(values, holes, strict=True)],
            dtype=pd.ArrowDtype(pa.bool_()),
        )
    raise AssertionError(kind)


FLOAT_KINDS = ["float64", "Float64", "object", "arrow", "arrow32"]
INT_KINDS = [
    "int64",
    "int8",
    "uint64",
    "Int64",
    "arrow-int",
    "arrow-int-full",
    "bool",
    "boolean",
    "arrow-bool",
]


def _groups(rng: np.random.RandomState, n: int) -> engines.Groups | None:
    """None, or codes in ``-1 .. size - 1`` (some groups empty, some rows in none)."""
    choice = rng.randint(0, 4)
    if choice == 0:
        return None
    size = int(rng.randint(0, 6))
    if size == 0:
        return engines.Groups(np.full(n, -1, dtype=np.intp), 0)
    used = max(1, size - int(rng.randint(0, 2)))  # the last group may stay empty
    return engines.Groups(rng.randint(-1, used, size=n).astype(np.intp), size)


def _columns(seed: int) -> Iterator[tuple[pd.Series, float, float, engines.Groups | None]]:
    """``CASES`` random columns with bounds and groups."""
    rng = np.random.RandomState(seed)
    for case in range(CASES):
        lower, upper = BOUNDS[case % len(BOUNDS)]
        n = int(rng.choice([0, 1, 2, 7, 40, 150]))
        if case % 3 == 2:
            kind = INT_KINDS[(case // 3) % len(INT_KINDS)]
            series = _int_series(rng, _ints(rng, n, lower, upper), kind)
            if kind in ("bool", "boolean", "arrow-bool") or abs(lower) > 1e12:
                lower, upper = (-1.0, 2.0) if case % 2 else (0.0, 1.0)
        else:
            kind = FLOAT_KINDS[case % len(FLOAT_KINDS)]
            series = _series(rng, _floats(rng, n, lower, upper), kind)
        yield series, lower, upper, _groups(rng, n)


def _same(a: Any, b: Any) -> None:
    assert np.asarray(a).dtype == np.int64
    assert np.asarray(a).tolist() == np.asarray(b).tolist()


# -- sums -----------------------------------------------------------------------------


def test_moments_equal_the_reference(path: str) -> None:
    """Counts, centred sums and centred squares, grouped or not, every dtype."""
    for series, lower, upper, groups in _columns(1):
        squares = 1e-150 < upper - lower < 1e150  # (else the squares' step is not a float)
        got = engines.moments(series, lower, upper, squares=squares, groups=groups)
        want = ref.moments(series, lower, upper, squares=squares, groups=groups)
        context = (series.dtype, lower, upper, series.tolist())
        _same(got.count, want.count)
        assert got.total == want.total, context
        assert got.squares == want.squares, context
        assert (got.step, got.square_step) == (want.step, want.square_step)
        assert got.total_exact == want.total_exact
        assert got.squares_exact == want.squares_exact


def test_power_sums_equal_the_reference(path: str) -> None:
    """Centred sums of powers 1 to 4, grouped or not, every dtype; powers 1 and 2 are
    the moments kernel's centred sum and squares."""
    for series, lower, upper, groups in _columns(5):
        for power in (1, 2, 3, 4):
            if not 1e-300 < math.prod([0.5 * (upper - lower)] * power) < 1e300:
                continue  # (no float step for that power on those bounds)
            got = engines.power_sums(series, lower, upper, power, groups=groups)
            want = ref.power_sums(series, lower, upper, power, groups=groups)
            context = (series.dtype, lower, upper, power, series.tolist())
            assert (got.sums, got.step) == (want.sums, want.step), context
            if power <= 2:
                m = ref.moments(series, lower, upper, squares=power == 2, groups=groups)
                assert got.sums == (m.total if power == 1 else m.squares), context


def test_moment_ties_round_to_even(path: str) -> None:
    """Every halfway point between two steps, both signs, on a long column."""
    step = ref.accumulation_step(1.0)
    k = np.arange(-300, 300, dtype=np.float64)
    series = pd.Series(np.concatenate([(k + 0.5) * step, k * step, [np.nan, np.inf, -np.inf]]))
    got = engines.moments(series, -1.0, 1.0, squares=True)
    want = ref.moments(series, -1.0, 1.0, squares=True)
    assert (got.count.tolist(), got.total, got.squares) == (
        want.count.tolist(),
        want.total,
        want.squares,
    )


def test_products_equal_the_reference(path: str) -> None:
    """Complete rows' count, centred sums and cross-products of 1 to 3 columns."""
    rng = np.random.RandomState(2)
    for case in range(CASES // 2):
        p = 1 + case % 3
        n = int(rng.choice([0, 1, 5, 60]))
        bounds = [BOUNDS[int(i)] for i in rng.randint(0, 5, size=p)]
        columns = []
        for j, (lo, up) in enumerate(bounds):
            kind = FLOAT_KINDS[(case + j) % len(FLOAT_KINDS)]
            if (case + j) % 5 == 4:
                columns.append(_int_series(rng, _ints(rng, n, lo, up), "Int64"))
            else:
                columns.append(_series(rng, _floats(rng, n, lo, up), kind))
        lowers, uppers = [b[0] for b in bounds], [b[1] for b in bounds]
        got = engines.products(columns, lowers, uppers)
        want = ref.products(columns, lowers, uppers)
        _same(got.count, want.count)
        assert got.totals == want.totals
        assert got.products == want.products, [c.tolist() for c in columns]
        assert got.exact() == want.exact()
        assert (got.steps, got.product_steps) == (want.steps, want.product_steps)


# -- counts ---------------------------------------------------------------------------


def test_row_and_present_counts_equal_the_reference(path: str) -> None:
    """Rows and non-missing values per group, numeric and object columns."""
    rng = np.random.RandomState(3)
    for series, _, _, groups in _columns(3):
        _same(engines.row_counts(groups, len(series)), ref.row_counts(groups, len(series)))
        _same(engines.present_counts(series, groups), ref.present_counts(series, groups))
    for _ in range(20):
        n = int(rng.randint(0, 30))
        text = pd.Series(rng.choice(np.array(["a", None, "b", math.nan], dtype=object), n))
        for column in (text, text.astype("str"), text.astype("category")):
            groups = _groups(rng, n)
            _same(engines.present_counts(column, groups), ref.present_counts(column, groups))


def _key_columns(rng: np.random.RandomState, n: int) -> Iterator[tuple[pd.Series, list[Any]]]:
    """Key columns of many dtypes, and declared keys (some absent from the data, some
    repeated)."""
    words = np.array(["a", "b", "c", "dd", None, math.nan], dtype=object)
    text = pd.Series(rng.choice(words, n), dtype=object)
    yield text, ["b", "a", "zz", "b"]
    yield text.astype("str"), ["a", "c", "q"]
    nulls = [None if ref.is_missing(v) else v for v in text.tolist()]
    yield pd.Series(nulls, dtype="string"), ["dd", "a"]
    yield pd.Series(nulls, dtype=pd.ArrowDtype(pa.string())), ["a", "b", "c"]
    yield text.astype("category"), ["c", "a", "nope"]
    small = rng.randint(-3, 6, size=n)
    yield pd.Series(small), [0, 1, 5, -3, 1]
    yield pd.Series(small), [0, 10**6, 2]  # a wide span: no lookup table
    yield pd.Series(small.astype(np.int8)), [1, 2, 3]
    yield pd.Series(small.astype(np.uint16) % 4), [0, 3]
    yield pd.Series([None if v == 0 else int(v) for v in small], dtype="Int64"), [1, 2, -3]
    floats = pd.Series(np.where(small == 0, np.nan, small / 2))
    yield floats, [0.5, 1.0, 2, -1.5]
    yield pd.Series(small % 2 == 0), [True, False]
    yield pd.Series([None if v == 0 else v % 2 == 0 for v in small], dtype="boolean"), [False]
    mixed = pd.Series([("t",), 1, "1", None, 2.0, [1]][int(v) % 6] for v in small)
    yield mixed, [1, "1", ("t",), 2]


def test_category_counts_equal_the_reference(path: str) -> None:
    """Declared categories, other and missing values, grouped or not."""
    rng = np.random.RandomState(4)
    for _ in range(25):
        n = int(rng.choice([0, 1, 9, 80]))
        for column, categories in _key_columns(rng, n):
            groups = _groups(rng, n)
            got = engines.category_counts(column, categories, groups=groups)
            want = ref.category_counts(column, categories, groups=groups)
            context = (column.dtype, categories, column.tolist())
            assert got.counts.shape == want.counts.shape, context
            _same(got.counts, want.counts)
            _same(got.missing, want.missing)
            _same(got.other, want.other)


def test_group_codes_equal_the_reference(path: str) -> None:
    """The mixed-radix code of one or two key columns, with and without ``other``."""
    rng = np.random.RandomState(5)
    for _ in range(12):
        n = int(rng.choice([0, 1, 9, 80]))
        pairs = list(_key_columns(rng, n))
        for i in range(len(pairs)):
            chosen = [pairs[i]] if i % 2 else [pairs[i], pairs[(i * 7 + 3) % len(pairs)]]
            columns = [c for c, _ in chosen]
            keys = [k for _, k in chosen]
            for other in (False, True):
                got = engines.group_codes(columns, keys, other=other)
                want = ref.group_codes(columns, keys, other=other)
                assert got.size == want.size
                assert got.codes.tolist() == want.codes.tolist(), [c.tolist() for c in columns]


def test_observed_codes_equal_the_reference(path: str) -> None:
    """Private keys: codes and uniques, sorted or in order of first appearance."""
    rng = np.random.RandomState(6)
    for _ in range(15):
        n = int(rng.choice([1, 9, 80]))
        small = rng.randint(-4, 9, size=n)
        columns = [
            pd.Series(small),
            pd.Series(small.astype(np.int16)),
            pd.Series(np.where(small == 0, np.nan, small * 0.25)),
            pd.Series(rng.choice(np.array(["x", "y", None, "w"], dtype=object), n)),
            pd.Series(rng.choice(np.array(["x", "y", None, "w"], dtype=object), n)).astype("str"),
            pd.Series(rng.choice(np.array(["x", "y", None, "w"], dtype=object), n)).astype(
                pd.CategoricalDtype(["y", "x", "w", "unused"])
            ),
            pd.Series(small % 2 == 0),
            pd.Series([None if v == 0 else int(v) for v in small], dtype="Int64"),
        ]
        for column in columns:
            for sort in (True, False):
                got_groups, got_keys = engines.observed_codes(column, sort=sort)
                want_groups, want_keys = ref.observed_codes(column, sort=sort)
                assert got_groups.size == want_groups.size
                assert got_groups.codes.tolist() == want_groups.codes.tolist()
                assert list(got_keys) == list(want_keys)


def test_mask_counts_equal_the_reference(path: str) -> None:
    rng = np.random.RandomState(7)
    for _ in range(30):
        n = int(rng.choice([0, 3, 50]))
        flags = rng.uniform(size=n) < 0.5
        holes = rng.uniform(size=n) < 0.2
        masks = [
            pd.Series(flags),
            pd.Series(
                [None if h else f for f, h in zip(flags, holes, strict=True)], dtype="boolean"
            ),
            pd.Series(
                [None if h else bool(f) for f, h in zip(flags, holes, strict=True)], dtype=object
            ),
        ]
        groups = _groups(rng, n)
        _same(engines.mask_counts(masks, groups), ref.mask_counts(masks, groups))


# -- the quantile grid ----------------------------------------------------------------


def _grid_values(
    rng: np.random.RandomState, n: int, lower: float, upper: float, bins: int
) -> list[float]:
    """Values on and beside the grid's edges (as ``float64``), and awkward ones."""
    width = (upper - lower) / bins
    out = _floats(rng, n, lower, upper)
    for i in range(0, n, 2):
        edge = lower + int(rng.randint(0, bins + 1)) * width
        out[i] = float(rng.choice([edge, np.nextafter(edge, -np.inf), np.nextafter(edge, np.inf)]))
    return out


def test_grid_counts_equal_the_reference(path: str) -> None:
    """Bin counts on and beside the edges, grouped or not, numeric and object columns."""
    rng = np.random.RandomState(8)
    for case in range(CASES):
        lower, upper = BOUNDS[case % len(BOUNDS)]
        if not math.isfinite(upper - lower):
            continue
        bins = int(rng.choice([1, 2, 3, 7, 10, 64, 1000]))
        n = int(rng.choice([0, 1, 7, 60]))
        if case % 4 == 3:
            series = _int_series(rng, _ints(rng, n, lower, upper), INT_KINDS[case % len(INT_KINDS)])
        else:
            values = _grid_values(rng, n, lower, upper, bins)
            series = _series(rng, values, FLOAT_KINDS[case % len(FLOAT_KINDS)])
        if case % 9 == 5 and n:  # numbers as text, and text that is no number
            series = pd.Series([str(v) if i % 3 else "x" for i, v in enumerate(series.tolist())])
        groups = _groups(rng, n)
        got = grid_counts(series, lower, upper, bins, groups=groups)
        want = ref.grid_counts(series, lower, upper, bins, groups=groups)
        assert got.shape == want.shape
        _same(got, want)


def _parts(
    rng: np.random.RandomState, series: pd.Series, groups: engines.Groups | None
) -> Iterator[tuple[pd.Series, engines.Groups | None]]:
    """The column cut into 1 to 7 partitions (some empty), as a Dask frame's."""
    n = len(series)
    cuts = [0, *sorted(rng.randint(0, n + 1, size=int(rng.randint(0, 7)))), n]
    for a, b in itertools.pairwise(cuts):
        part = None if groups is None else engines.Groups(groups.codes[a:b], groups.size)
        yield series.iloc[a:b], part


def test_partitions_add_up_to_the_reference(path: str) -> None:
    """The engine's integers of each partition add up to the reference's of the whole
    column, whatever the cuts (what the Dask engine relies on)."""
    rng = np.random.RandomState(9)
    for series, lower, upper, groups in _columns(9):
        if not math.isfinite(upper - lower):
            continue
        size = 1 if groups is None else groups.size
        want = ref.moments(series, lower, upper, squares=False, groups=groups)
        want_grid = ref.grid_counts(series, lower, upper, 5, groups=groups)
        count, total = np.zeros(size, dtype=np.int64), [0] * size
        grid = np.zeros((size, 5), dtype=np.int64)
        for part, part_groups in _parts(rng, series, groups):
            got = engines.moments(part, lower, upper, squares=False, groups=part_groups)
            count += got.count
            total = [a + b for a, b in zip(total, got.total, strict=True)]
            grid += grid_counts(part, lower, upper, 5, groups=part_groups)
        assert count.tolist() == want.count.tolist()
        assert total == want.total
        assert grid.tolist() == want_grid.tolist()


# -- privacy units -----------------------------------------------------------------


def _unit_frame(rng: np.random.RandomState, n: int, case: int) -> tuple[pd.DataFrame, pd.Series]:
    """Rows (a float, an int and a text column, with repeated contents) and a unit
    column of one of several dtypes, with missing units."""
    ids = rng.randint(0, max(1, n // 4), size=n)
    holes = rng.uniform(size=n) < 0.1
    kind = case % 5
    if kind == 0:
        unit = pd.Series(ids)
    elif kind == 1:
        unit = pd.Series(np.where(holes, np.nan, ids * 0.5))
    elif kind == 2:
        unit = pd.Series([None if h else f"u{i}" for i, h in zip(ids, holes, strict=True)])
    elif kind == 3:
        unit = pd.Series(
            [None if h else int(i) for i, h in zip(ids, holes, strict=True)], dtype="Int64"
        )
    else:
        unit = pd.Series(
            [None if h else (i if i % 2 else str(i)) for i, h in zip(ids, holes, strict=True)],
            dtype=object,
        )
    rows = pd.DataFrame(
        {
            "x": rng.choice([0.0, 1.5, -0.0, np.nan, 2.0], size=n),
            "k": rng.randint(-2, 3, size=n),
            "s": pd.Series(rng.choice(np.array(["a", "b", None], dtype=object), size=n)),
        }
    )
    return rows, unit


def test_contribution_mask_equals_the_reference() -> None:
    """Rows kept per unit, per unit and group, and groups kept per unit: the same
    rows as the reference's keyed-hash ranking."""
    rng = np.random.RandomState(10)
    for case in range(60):
        n = int(rng.choice([0, 1, 6, 40]))
        rows, unit = _unit_frame(rng, n, case)
        key = "".join(rng.choice(list("abcdefgh0123"), size=16))
        k = int(rng.randint(1, 4))
        options: dict[str, Any] = {"key": key, "max_rows_per_unit": k}
        mode = case % 3
        if mode == 1:  # public group codes
            options["groups"] = rng.randint(-1, 4, size=n).astype(np.intp)
        elif mode == 2:  # private keys, ranked by their contents
            options["groups"] = ref.observed_codes(rows["s"])[0].codes
            options["group_by"] = ["s"]
        if mode and rng.randint(0, 2):
            options["max_groups_per_unit"] = int(rng.randint(1, 3))
        if mode and rng.randint(0, 2):
            options["max_rows_per_group"] = int(rng.randint(1, 3))
        got = units.contribution_mask(rows, unit, **options)
        want = ref.contribution_mask(rows, unit, **options)
        assert got.tolist() == want.tolist(), (case, options, unit.tolist())
        size = 4
        codes = rng.randint(-1, size, size=n).astype(np.intp)
        _same(units.distinct_units(unit, codes, size), ref.distinct_units(unit, codes, size))


def _codes_of(size: int, frame: pd.DataFrame) -> engines.Groups:
    """A partition's group codes: its column ``g`` (for the Dask engine)."""
    return engines.Groups(frame["g"].to_numpy(dtype=np.intp), size)


@pytest.mark.parametrize("partitions", [1, 7])
def test_dask_engine_equals_the_reference(partitions: int) -> None:
    """The Dask engine's kernels, on 1 and 7 partitions, equal the reference's (a few
    cases: each kernel is one ``dask.compute``, about 50 ms)."""
    dd = pytest.importorskip("dask.dataframe")
    import dask

    from pandas_dp.engines import dask as dask_engine
    from pandas_dp.engines.dask.partitions import PartitionGroups

    rng = np.random.RandomState(11 + partitions)
    with dask.config.set(scheduler="synchronous"):
        for case in range(3):
            lower, upper = BOUNDS[(case * 5 + partitions) % len(BOUNDS)]
            n = int(rng.choice([1, 9, 50]))
            x = _series(rng, _floats(rng, n, lower, upper), "float64")
            y = _series(rng, _floats(rng, n, 0.0, 1.0), "float64")
            size = int(rng.randint(1, 5))
            codes = rng.randint(-1, size, size=n)
            text = rng.choice(np.array(["a", "b", None], dtype=object), n)
            frame = pd.DataFrame({"x": x, "y": y, "g": codes, "c": text})
            ddf = dd.from_pandas(frame, npartitions=min(partitions, n))
            groups = PartitionGroups([ddf["g"]], partial(_codes_of, size), size)
            local = engines.Groups(codes.astype(np.intp), size)
            squares = 1e-150 < upper - lower < 1e150
            got = dask_engine.moments(ddf["x"], lower, upper, squares=squares, groups=groups)
            want = ref.moments(x, lower, upper, squares=squares, groups=local)
            _same(got.count, want.count)
            assert (got.total, got.squares) == (want.total, want.squares)
            if squares:  # (else the cross-products' step is not a float)
                got_p = dask_engine.products([ddf["x"], ddf["y"]], [lower, 0.0], [upper, 1.0])
                want_p = ref.products([x, y], [lower, 0.0], [upper, 1.0])
                assert got_p.count.tolist() == want_p.count.tolist()
                assert got_p.exact() == want_p.exact()
            got_c = dask_engine.category_counts(ddf["c"], ["b", "a", "z"], groups=groups)
            want_c = ref.category_counts(frame["c"], ["b", "a", "z"], groups=local)
            _same(got_c.counts, want_c.counts)
            _same(got_c.missing, want_c.missing)
            _same(got_c.other, want_c.other)
            _same(dask_engine.present_counts(ddf["x"], groups), ref.present_counts(x, local))
            _same(dask_engine.row_counts(ddf, groups), ref.row_counts(local, n))


# -- the reference's own specification -------------------------------------------------


def test_reference_steps_and_rounding() -> None:
    """The reference's step is a power of two above the magnitude, and its rounding is
    the exact one (half to even), not a float's."""
    for magnitude in (1e-300, 0.3, 1.0, 50.0, 64.0, 2.0**100, 1e300):
        step = ref.accumulation_step(magnitude)
        assert step == engines.accumulation_step(magnitude)
        assert magnitude < 2**engines.STEP_BITS * step <= 2 * magnitude
        assert math.frexp(step)[0] == 0.5
    q = ref.accumulation_step(1.0)
    m = ref.moments(pd.Series([0.5 * q, 1.5 * q, -0.5 * q, 2.5 * q]), -1.0, 1.0, squares=False)
    assert m.total == [0 + 2 + 0 + 2]
    with pytest.raises(ValueError):
        ref.accumulation_step(0.0)


def test_centring_is_a_float64_subtraction() -> None:
    """The centred value is the float64 difference, then rounded to the step (part
    of the specification): ``x = 2**-38 + 2**-80`` over ``[0, 2]`` is
    ``-2**37 + 1/2 + 2**-43`` steps from the midpoint exactly, which rounds to
    ``-2**37 + 1``; its float64 difference is the tie ``-2**37 + 1/2``, which rounds
    to the even ``-2**37``."""
    x = 2.0**-38 + 2.0**-80
    q = ref.accumulation_step(1.0)
    assert round((Fraction(x) - 1) / Fraction(q)) == -(2**37) + 1  # exact single rounding
    series = pd.Series([x])
    assert ref.moments(series, 0.0, 2.0, squares=False).total == [-(2**37)]
    assert engines.moments(series, 0.0, 2.0, squares=False).total == [-(2**37)]


def test_grid_edges_follow_the_float64_scaling() -> None:
    """The bin of a value is computed in float64 (part of the specification): the
    float nearest 0.3 is below 3/10, yet falls in bin 3 of ten over [0, 1]."""
    assert Fraction(0.3) < Fraction(3, 10) and 0.3 * 10.0 == 3.0
    series = pd.Series([0.3, 1.0, 0.0])
    want = [[1, 0, 0, 1, 0, 0, 0, 0, 0, 1]]
    assert ref.grid_counts(series, 0.0, 1.0, 10).tolist() == want
    assert grid_counts(series, 0.0, 1.0, 10).tolist() == want


# -- disagreements found (reproducers) -------------------------------------------------

found = pytest.mark.xfail(strict=True, reason="engine differs from the specification")


@found
def test_float32_column_centred_in_float64() -> None:
    """A float32 column is centred in float32 by the numpy kernels (numpy picks the
    float32 loop for ``float32 - python float``), unlike the same values as float64
    or as Arrow float32: 3.0 over ``[0, 2e8]`` is centred as ``-1e8`` (the float32
    nearest ``-99999997``), so the column's exact sum is off by 3."""
    column = pd.Series([3.0], dtype="float32")
    want = ref.moments(column, 0.0, 2e8, squares=False)
    assert want.total_exact == [Fraction(-99999997)]
    arrow = pd.Series([3.0], dtype=pd.ArrowDtype(pa.float32()))
    assert engines.moments(arrow, 0.0, 2e8, squares=False).total == want.total
    assert engines.moments(column, 0.0, 2e8, squares=False).total == want.total


@found
def test_float32_columns_products_centred_in_float64() -> None:
    """:func:`products` likewise (its centring is the same numpy call)."""
    column = pd.Series([3.0], dtype="float32")
    got = engines.products([column, column], [0.0, 0.0], [2e8, 2e8])
    want = ref.products([column, column], [0.0, 0.0], [2e8, 2e8])
    assert got.exact() == want.exact()


def test_float16_present_counts_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled NaN count has no float16 version (numba): a long float16 column's
    count raises ``NotImplementedError`` (e.g. ``df.dp.count()`` of 2**16 rows)."""
    pytest.importorskip("numba")
    monkeypatch.setattr(engine_module, "FAST_MIN_ROWS", 0)
    column = pd.Series(np.array([0.5, np.nan, 2.0], dtype=np.float16))
    want = ref.present_counts(column, None)
    assert want.tolist() == [2]
    try:
        got = engines.present_counts(column, None)
    except NotImplementedError:
        pytest.xfail("finding: numba has no float16 (engine differs from the specification)")
    assert got.tolist() == want.tolist()


@found
def test_declared_nan_is_missing_in_a_float_column() -> None:
    """A NaN among the declared categories counts a float64 column's NaN in that
    category; an object column's NaN (and the specification) counts it as missing."""
    column = pd.Series([1.0, np.nan])
    got = engines.category_counts(column, [np.nan, 1.0])
    want = ref.category_counts(column, [np.nan, 1.0])
    assert (got.counts.tolist(), got.missing.tolist()) == (
        want.counts.tolist(),
        want.missing.tolist(),
    )


@found
def test_booleans_match_declared_integers_in_every_dtype() -> None:
    """``True == 1`` in Python, and in an object, nullable or Arrow column, but a numpy
    bool column declared ``[1, 0]`` counts every value as other (an int or float
    column declared ``[True, False]`` likewise, and a bool column declared
    ``[1, True]`` matches nothing: ``True`` is a repeat of ``1``)."""
    column = pd.Series([True, False, True])
    assert ref.category_counts(column, [1, 0]).counts.tolist() == [[2, 1]]
    same = pd.Series([True, False, True], dtype="boolean")
    assert engines.category_counts(same, [1, 0]).counts.tolist() == [[2, 1]]
    assert engines.category_counts(column, [1, 0]).counts.tolist() == [[2, 1]]


def test_a_grid_value_is_read_whatever_the_other_rows() -> None:
    """In an object column, a text such as ``"1_000"`` was a number (numpy's reading)
    while every value of the column was one, but not a number (pandas'
    ``to_numeric``) once any other row was not: one added row moved many counts.
    Every value is now read by itself, as ``float()`` reads it. (The public API
    accepts numeric dtypes only for a quantile.)"""
    column = pd.Series(["1_000"] * 50 + ["x"], dtype=object)
    assert grid_counts(column.iloc[:50], 0.0, 4.0, 4).tolist() == [[0, 0, 0, 50]]
    want = ref.grid_counts(column, 0.0, 4.0, 4)
    assert grid_counts(column, 0.0, 4.0, 4).tolist() == want.tolist() == [[0, 0, 0, 50]]


def test_the_reference_engine_replaces_every_kernel_of_the_in_memory_engine() -> None:
    from pandas_dp.engines import in_memory, reference

    kernels = [n for n, v in vars(in_memory.PandasEngine).items() if isinstance(v, staticmethod)]
    assert len(kernels) >= 10
    for name in kernels:
        assert getattr(reference.REFERENCE, name) is getattr(reference, name)
        assert getattr(reference.REFERENCE, name) is not getattr(in_memory.PANDAS, name)
    with pytest.raises(KeyError, match="row_counts"):
        in_memory.own_kernels({})(type("Empty", (in_memory.PandasEngine,), {}))
