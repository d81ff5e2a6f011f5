"""Arrow-backed numeric columns (``pd.ArrowDtype``): read chunk by chunk, same releases.

A numeric Arrow column is read by the engine one chunk at a time, without copying a
chunk that has no nulls (:func:`pandas_dp.engines.columns.column_pieces`). Its nulls
and its ``NaN`` values are both missing, so every exact statistic, and every seeded
release, must equal the one of the numpy ``float64`` column with ``NaN`` in their
place, bit for bit, whatever the chunking, with and without the compiled kernels.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest

pa = pytest.importorskip("pyarrow")

import pandas_dp  # noqa: E402, F401
from pandas_dp import engines  # noqa: E402
from pandas_dp.engines import columns as columns_module  # noqa: E402
from pandas_dp.engines import pandas as engine  # noqa: E402
from pandas_dp.engines.grid import grid_counts  # noqa: E402

BOUNDS = {"x": (-2.0, 3.0), "y": (0.0, 50.0)}
KEYS = ["a", "b", "c"]


def _chunk_sizes(n: int) -> list[int]:
    """Chunks of assorted sizes: tiny ones (joined), an empty one, long ones."""
    sizes = [7, 0, 300, 5_000, 40_000, 1, 20_000, 90_000]
    out, used = [], 0
    for s in sizes:
        s = min(s, n - used)
        out.append(s)
        used += s
    out.append(n - used)
    return out


def _arrow(values: np.ndarray, nulls: np.ndarray, kind: Any, sizes: list[int]) -> pd.Series:
    """``values`` as a chunked Arrow column of type ``kind``, null where ``nulls``."""
    chunks, start = [], 0
    for s in sizes:
        part = slice(start, start + s)
        chunks.append(pa.array(values[part], type=kind, mask=nulls[part]))
        start += s
    return pd.Series(pd.arrays.ArrowExtensionArray(pa.chunked_array(chunks, type=kind)))


def _frames(n: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The same rows twice: numpy ``float64`` with ``NaN``, and Arrow with nulls (and
    some ``NaN`` values of its own in the double column)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0.5, 1.5, n)  # partly outside its bounds: clamped
    x_nan = rng.random(n) < 0.03  # NaN values, in both frames
    x_null = rng.random(n) < 0.05  # nulls in the Arrow frame, NaN in the numpy one
    x_null[: n // 3] = False  # the first third of the rows: chunks without nulls
    x[x_nan] = np.nan
    y = rng.integers(-5, 60, n)
    y_null = rng.random(n) < 0.04
    y_null[n // 2 :] = False
    g = rng.choice(KEYS, n)
    sizes = _chunk_sizes(n)
    plain = pd.DataFrame(
        {"x": np.where(x_null, np.nan, x), "y": np.where(y_null, np.nan, y), "g": g}
    )
    arrow = pd.DataFrame(
        {
            "x": _arrow(x, x_null, pa.float64(), sizes),
            "y": _arrow(y, y_null, pa.int64(), sizes),
            "g": g,
        }
    )
    return plain, arrow


@pytest.fixture(params=[True, False], ids=["compiled", "numpy"])
def use_numba(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[bool]:
    monkeypatch.setattr(engine, "USE_NUMBA", request.param)
    yield request.param


@pytest.fixture(scope="module", params=[3_000, 200_000], ids=["short", "long"])
def frames(request: pytest.FixtureRequest) -> tuple[pd.DataFrame, pd.DataFrame]:
    return _frames(request.param, seed=request.param)


def test_the_frames_differ_in_storage_only(frames: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    plain, arrow = frames
    assert isinstance(arrow["x"].dtype, pd.ArrowDtype)
    assert arrow["x"].array.__arrow_array__().num_chunks >= 3
    assert arrow["x"].isna().sum() > 0  # nulls ...
    assert np.isnan(arrow["x"].to_numpy(dtype=float, na_value=0.0)).sum() > 0  # ... and NaN
    for c in "xy":
        got = arrow[c].to_numpy(dtype=np.float64, na_value=np.nan)
        np.testing.assert_array_equal(got, plain[c].to_numpy())


@pytest.mark.parametrize("column", ["x", "y"])
@pytest.mark.parametrize("grouped", [False, True])
def test_exact_sums_and_counts_are_identical(
    frames: tuple[pd.DataFrame, pd.DataFrame], use_numba: bool, column: str, grouped: bool
) -> None:
    plain, arrow = frames
    lower, upper = BOUNDS[column]
    groups = engines.group_codes([plain["g"]], [KEYS[:2]]) if grouped else None
    a = engines.moments(plain[column], lower, upper, squares=True, groups=groups)
    b = engines.moments(arrow[column], lower, upper, squares=True, groups=groups)
    np.testing.assert_array_equal(a.count, b.count)
    assert a.total == b.total
    assert a.squares == b.squares
    np.testing.assert_array_equal(
        engines.present_counts(plain[column], groups),
        engines.present_counts(arrow[column], groups),
    )
    np.testing.assert_array_equal(
        grid_counts(plain[column], lower, upper, 1024, groups=groups),
        grid_counts(arrow[column], lower, upper, 1024, groups=groups),
    )
    p = engines.products([plain["x"], plain["y"]], [-2.0, 0.0], [3.0, 50.0])
    q = engines.products([arrow["x"], arrow["y"]], [-2.0, 0.0], [3.0, 50.0])
    assert (p.totals, p.products, list(p.count)) == (q.totals, q.products, list(q.count))


def test_the_comparison_can_fail(frames: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    """One changed value changes the exact sums (the equality above is not vacuous)."""
    plain, arrow = frames
    other = plain["x"].copy()
    other.iloc[-1] = 2.5 if other.iloc[-1] != 2.5 else -1.5
    a = engines.moments(other, -2.0, 3.0, squares=True)
    b = engines.moments(arrow["x"], -2.0, 3.0, squares=True)
    assert a.total != b.total


RELEASES: dict[str, Callable[[pd.DataFrame], Any]] = {
    "mean": lambda df: df.dp.mean(["x", "y"], epsilon=1.0, bounds=BOUNDS, random_state=1),
    "sum": lambda df: df.dp.sum(["x", "y"], epsilon=1.0, bounds=BOUNDS, random_state=2),
    "count": lambda df: df[["x", "y"]].dp.count(epsilon=1.0, random_state=3),
    "var": lambda df: df.dp.var(["x", "y"], epsilon=1.0, bounds=BOUNDS, random_state=4),
    "describe": lambda df: df.dp.describe(["x", "y"], epsilon=1.0, bounds=BOUNDS, random_state=5),
    "quantile": lambda df: df.dp.quantile(
        ["x", "y"], [0.1, 0.5, 0.9], epsilon=1.0, bounds=BOUNDS, random_state=6
    ),
    "groupby mean": lambda df: df.dp.groupby("g", keys=KEYS).mean(
        ["x", "y"], epsilon=1.0, bounds=BOUNDS, random_state=7
    ),
    "groupby describe": lambda df: df.dp.groupby("g", keys=KEYS).describe(
        "x", epsilon=1.0, bounds=BOUNDS, random_state=8
    ),
    "cov": lambda df: df.dp.cov(["x", "y"], epsilon=1.0, bounds=BOUNDS, random_state=9),
}


def _dtypes(result: pd.Series | pd.DataFrame) -> list[str]:
    return [str(result.dtype)] if isinstance(result, pd.Series) else list(map(str, result.dtypes))


def _same(a: Any, b: Any, kept: bool = True) -> None:
    """``b`` (of Arrow columns) is the release ``a`` (of numpy columns) bit for bit, in
    pandas' dtypes for Arrow columns: ``double[pyarrow]`` for ``float64`` (issue 32;
    ``kept=False``: pandas' answer is numpy ``float64`` too, as for ``cov``)."""
    if isinstance(a, pd.Series | pd.DataFrame):
        arrow = ["double[pyarrow]" if d == "float64" and kept else d for d in _dtypes(a)]
        assert _dtypes(b) == arrow
        numpy = b.copy()
        if isinstance(a, pd.Series):
            numpy = b.astype(a.dtype)
        else:
            for i, dtype in enumerate(a.dtypes):
                numpy.isetitem(i, b.iloc[:, i].astype(dtype).array)
        b = numpy
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    elif isinstance(a, pd.Series):
        pd.testing.assert_series_equal(a, b, check_exact=True)
    else:
        assert a == b


@pytest.mark.parametrize("name", list(RELEASES))
def test_seeded_release_is_the_numpy_release(
    frames: tuple[pd.DataFrame, pd.DataFrame], use_numba: bool, name: str
) -> None:
    plain, arrow = frames
    _same(RELEASES[name](plain), RELEASES[name](arrow), kept=name != "cov")


@pytest.mark.parametrize(
    ("kind", "values"),
    [
        (pa.float64(), [1.5, np.nan, -3.0, 7.25]),
        (pa.float32(), [1.1, np.nan, -3.3, 7.7]),
        (pa.int8(), [1, 2, -3, 100]),
        (pa.uint64(), [2**64 - 1, 2**53 + 1, 0, 5]),
        (pa.int64(), [2**53 + 1, -(2**62), 0, 5]),
        (pa.bool_(), [True, False, True, True]),
    ],
)
@pytest.mark.parametrize("with_nulls", [False, True])
def test_pieces_are_the_float64_conversion(kind: Any, values: list[Any], with_nulls: bool) -> None:
    """Every numeric type: the pieces hold the values of today's ``float64``
    conversion (integers as the kernels convert them), nulls as ``NaN``."""
    arr = np.array(values * 5000, dtype=kind.to_pandas_dtype())
    nulls = np.zeros(arr.shape[0], dtype=bool)
    if with_nulls:
        nulls[::7] = True
    series = _arrow(arr, nulls, kind, [3, 17_000, 100, arr.shape[0] - 17_103])
    expected = series.to_numpy(dtype=np.float64, na_value=np.nan)
    pieces = columns_module.column_pieces(series)
    assert sum(p.shape[0] for p in pieces) == arr.shape[0]
    got = np.concatenate([p.astype(np.float64) for p in pieces])
    np.testing.assert_array_equal(got, expected)
    m = engines.moments(series, -4.0, 8.0, squares=True)
    r = engines.moments(pd.Series(expected), -4.0, 8.0, squares=True)
    assert (list(m.count), m.total, m.squares) == (list(r.count), r.total, r.squares)


def test_chunks_without_nulls_are_not_copied() -> None:
    """A ``double`` or integer chunk without nulls is read in place (a view of the
    Arrow buffer); a chunk with nulls is copied alone; short chunks are joined."""
    rng = np.random.default_rng(3)
    long_a, long_b = rng.normal(size=50_000), rng.normal(size=30_000)
    with_null = pa.array(rng.normal(size=20_000), mask=np.arange(20_000) == 5)
    chunked = pa.chunked_array([pa.array(long_a), with_null, pa.array(long_b)])
    series = pd.Series(pd.arrays.ArrowExtensionArray(chunked))
    pieces = columns_module.column_pieces(series)
    assert len(pieces) == 3
    for piece, chunk in zip(pieces, chunked.chunks, strict=True):
        view = chunk.to_numpy(zero_copy_only=False)
        assert np.shares_memory(piece, view) == (chunk.null_count == 0)
    assert np.isnan(pieces[1][5])
    ints = pa.chunked_array([pa.array(np.arange(40_000))])
    (piece,) = columns_module.column_pieces(pd.Series(pd.arrays.ArrowExtensionArray(ints)))
    assert piece.dtype == np.int64
    assert np.shares_memory(piece, ints.chunks[0].to_numpy())
    tiny = pa.chunked_array([pa.array([float(i)] * 10) for i in range(100)])
    (joined,) = columns_module.column_pieces(pd.Series(pd.arrays.ArrowExtensionArray(tiny)))
    np.testing.assert_array_equal(joined, np.repeat(np.arange(100.0), 10))


def test_an_empty_arrow_column() -> None:
    series = pd.Series(pd.arrays.ArrowExtensionArray(pa.chunked_array([], type=pa.float64())))
    m = engines.moments(series, 0.0, 1.0, squares=True)
    assert (list(m.count), m.total, m.squares) == ([0], [0], [0])
    assert grid_counts(series, 0.0, 1.0, 4).tolist() == [[0, 0, 0, 0]]


def test_dask_partitions_of_arrow_columns() -> None:
    """Dask partitions whose columns are Arrow-backed: the pandas numpy release."""
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")
    plain, arrow = _frames(5_000, seed=8)
    with dask.config.set(scheduler="synchronous"):
        ddf = dd.from_pandas(arrow, npartitions=4)
        assert isinstance(ddf["x"].dtype, pd.ArrowDtype)
        for name in ("describe", "groupby mean", "quantile"):
            _same(RELEASES[name](plain), RELEASES[name](ddf))


def _with_nulls(n: int, seed: int) -> pd.Series:
    rng = np.random.default_rng(seed)
    values = rng.normal(size=n)
    nulls = rng.random(n) < 0.1
    return _arrow(values, nulls, pa.float64(), [n // 2, n - n // 2])


def test_a_release_converts_a_column_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """describe reads a column twice (moments, then the quantile grid): chunks with
    nulls are copied for the first read only."""
    monkeypatch.setattr(columns_module, "_KEPT", columns_module.OrderedDict())
    calls: list[int] = []
    convert = columns_module._chunk_values

    def counted(chunk: Any) -> Any:
        calls.append(len(chunk))
        return convert(chunk)

    monkeypatch.setattr(columns_module, "_chunk_values", counted)
    frame = pd.DataFrame({"x": _with_nulls(100_000, 4)})
    plain = pd.DataFrame({"x": frame["x"].to_numpy(dtype=np.float64, na_value=np.nan)})
    got = frame.dp.describe(epsilon=1.0, bounds={"x": BOUNDS["x"]}, random_state=3)
    assert calls == [50_000, 50_000]  # each chunk once
    _same(plain.dp.describe(epsilon=1.0, bounds={"x": BOUNDS["x"]}, random_state=3), got)
    assert columns_module.column_pieces(frame["x"]) is columns_module.column_pieces(frame["x"])


def test_kept_copies_go_with_their_column(monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    monkeypatch.setattr(columns_module, "_KEPT", columns_module.OrderedDict())
    series = _with_nulls(50_000, 5)
    columns_module.column_pieces(series)
    assert len(columns_module._KEPT) == 1
    del series
    gc.collect()
    assert len(columns_module._KEPT) == 0


def test_kept_copies_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(columns_module, "_KEPT", columns_module.OrderedDict())
    monkeypatch.setattr(columns_module, "_KEPT_BYTES", 3 * 50_000 * 8)
    columns = [_with_nulls(50_000, seed) for seed in range(5)]
    for column in columns:
        columns_module.column_pieces(column)
    assert sum(entry[2] for entry in columns_module._KEPT.values()) <= 3 * 50_000 * 8
    assert len(columns_module._KEPT) == 3  # the three most recent
    big = _with_nulls(200_000, 9)
    columns_module.column_pieces(big)  # larger than the bound: not kept
    assert len(columns_module._KEPT) == 3
    no_nulls = pd.Series(pd.arrays.ArrowExtensionArray(pa.chunked_array([np.arange(9.0)])))
    columns_module.column_pieces(no_nulls)  # nothing copied: nothing kept
    assert len(columns_module._KEPT) == 3
