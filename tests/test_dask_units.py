"""Privacy units and private group-by keys on Dask: the pandas engine's rows, exactly.

A unit's rows may be spread over many partitions. The Dask engine shuffles the rows
by unit, so each unit's rows share one partition, and there runs the pandas path's
keyed-hash truncation with the key drawn once on the client: it keeps exactly the
rows the pandas engine keeps. Private keys are gathered from the partitions in
order of first appearance, and every partition numbers its rows by them. So every
release below must equal the pandas release bit for bit, for any partitioning.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")

import pandas_dp  # noqa: E402
from pandas_dp import engines  # noqa: E402
from pandas_dp.engines import dask as dask_engine  # noqa: E402
from pandas_dp.engines.dask import partitions as _dask_partitions  # noqa: E402
from pandas_dp.errors import BudgetExceededError  # noqa: E402
from pandas_dp.plan import measure  # noqa: E402
from pandas_dp.request.declared_columns import NumericDeclaration  # noqa: E402
from pandas_dp.request.settings import Contributions, Settings  # noqa: E402

PARTITIONS = (1, 7, 64)
KEYS = list("abcdefgh")
CATS = {"c": ["u", "v", "w"]}
BOUNDS = {"x": (0, 10), "y": (-5, 5)}
UNIT = {"privacy_unit": "pid", "max_rows_per_unit": 3}


@pytest.fixture(autouse=True)
def _synchronous() -> Iterator[None]:
    """The synchronous scheduler; pandas' dtypes kept (Dask would turn ``str`` columns
    into ``string[pyarrow]``, and private keys would come back with that dtype: see
    :func:`test_pyarrow_strings_keep_the_same_rows`)."""
    with dask.config.set({"scheduler": "synchronous", "dataframe.convert-string": False}):
        yield


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    """Units of 1 to ~20 rows spread over the whole frame (so over many partitions);
    keys 'e'..'h' only in the second half and 'z' only in the last rows (so in some
    partitions only); missing units and keys."""
    rng = np.random.default_rng(5)
    n = 3_000
    half = n // 2
    keys = np.concatenate([rng.choice(KEYS[:4], half), rng.choice(KEYS, n - half)])
    keys[-90:] = "z"  # ~80 units: well above the selection threshold
    out = pd.DataFrame(
        {
            "pid": rng.integers(0, 400, n).astype(float),
            "k": keys,
            "x": rng.uniform(-1, 11, n),  # partly outside the bounds: clamped
            "y": rng.normal(0, 2, n),
            "c": rng.choice(["u", "v", "w", "q"], n),
        }
    )
    out.loc[rng.random(n) < 0.05, "pid"] = np.nan
    out.loc[rng.random(n) < 0.03, "k"] = None
    return out


def _schema() -> Any:
    pa = pytest.importorskip("pandera.pandas")
    meta = {"pandas_dp": {"privacy_unit": "pid", "max_rows_per_unit": 2}}
    return pa.DataFrameSchema(
        {"x": pa.Column(float, pa.Check.in_range(0, 10), nullable=True)}, metadata=meta
    )


# name -> release of an accessor (pandas' df.dp or Dask's ddf.dp); same random_state
RELEASES: dict[str, Callable[[Any], Any]] = {
    "mean": lambda dp: dp.mean("x", epsilon=1.0, bounds=BOUNDS, random_state=1, **UNIT),
    "count": lambda dp: dp.count(epsilon=1.0, random_state=2, **UNIT),
    "len": lambda dp: dp.len(epsilon=1.0, random_state=3, **UNIT),
    "var": lambda dp: dp.var(["x", "y"], epsilon=1.0, bounds=BOUNDS, random_state=4, **UNIT),
    "value_counts": lambda dp: dp.value_counts(
        "c", epsilon=1.0, categories=CATS, other="?", random_state=5, **UNIT
    ),
    "proportions": lambda dp: dp.proportions(
        "c", epsilon=1.0, categories=CATS, random_state=6, **UNIT
    ),
    "describe": lambda dp: dp.describe(
        ["x", "c"], epsilon=1.0, bounds=BOUNDS, categories=CATS, random_state=7, **UNIT
    ),
    "quantile": lambda dp: dp.quantile(
        "x", [0.25, 0.5], epsilon=1.0, bounds=BOUNDS, random_state=8, **UNIT
    ),
    "cov": lambda dp: dp.cov(["x", "y"], epsilon=1.0, bounds=BOUNDS, random_state=9, **UNIT),
    "schema unit": lambda dp: dp.mean("x", epsilon=1.0, schema=_schema(), random_state=10),
    "bound unit": lambda dp: dp(privacy_unit="pid", max_rows_per_unit=2, random_state=11).sum(
        "y", epsilon=1.0, bounds=BOUNDS
    ),
    "groupby mean max_groups": lambda dp: dp.groupby("k", keys=KEYS).mean(
        "x", epsilon=1.0, bounds=BOUNDS, random_state=12, max_groups_per_unit=2, **UNIT
    ),
    "groupby agg max_rows_per_group": lambda dp: dp.groupby("k", keys=KEYS, other="rest").agg(
        {"x": ["count", "mean"], "y": "std"},
        epsilon=1.0,
        bounds=BOUNDS,
        random_state=13,
        max_groups_per_unit=3,
        max_rows_per_group=1,
        **UNIT,
    ),
    "groupby value_counts": lambda dp: dp.groupby("k", keys=KEYS).value_counts(
        "c", epsilon=1.0, categories=CATS, random_state=14, max_groups_per_unit=2, **UNIT
    ),
    "private len": lambda dp: dp.groupby("k", keys="private", delta=1e-3).len(
        epsilon=1.0, random_state=15
    ),
    "private mean": lambda dp: dp.groupby("k", keys="private", delta=1e-3).mean(
        "x", epsilon=1.0, bounds=BOUNDS, random_state=16
    ),
    "private len unit": lambda dp: dp.groupby("k", keys="private", delta=1e-3).len(
        epsilon=2.0, random_state=17, max_groups_per_unit=2, **UNIT
    ),
    "private mean unit": lambda dp: dp.groupby("k", keys="private", delta=1e-3).mean(
        "x", epsilon=2.0, bounds=BOUNDS, random_state=18, max_groups_per_unit=1, **UNIT
    ),
    "private describe unit": lambda dp: dp.groupby("k", keys="private", delta=1e-3).describe(
        ["x", "c"],
        epsilon=3.0,
        bounds=BOUNDS,
        categories=CATS,
        random_state=19,
        max_groups_per_unit=2,
        **UNIT,
    ),
}


def _same(a: Any, b: Any) -> None:
    """Equal values, index and dtype, and equal public metadata."""
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    elif isinstance(a, pd.Series):
        pd.testing.assert_series_equal(a, b, check_exact=True)
    else:
        assert type(a) is type(b)
        assert a == b or (np.isnan(a) and np.isnan(b))
    ma, mb = a.attrs["dp"], b.attrs["dp"]
    assert (ma.epsilon, ma.delta, ma.n) == (mb.epsilon, mb.delta, mb.n)
    ia, ib = ma.interval(0.05), mb.interval(0.05)
    assert np.array_equal(np.asarray(ia, dtype=float), np.asarray(ib, dtype=float), equal_nan=True)


# Each case runs its release on 1, 7 and 64 partitions (5-30 s); the quick ones stay
# in the default run and the others run with `pytest -m slow`.
QUICK = {"mean", "private len", "private mean"}


@pytest.mark.parametrize(
    "name", [n if n in QUICK else pytest.param(n, marks=pytest.mark.slow) for n in RELEASES]
)
def test_release_is_the_pandas_release_for_any_partitioning(df: pd.DataFrame, name: str) -> None:
    release = RELEASES[name]
    expected = release(df.dp)
    for parts in PARTITIONS:
        _same(expected, release(dd.from_pandas(df, npartitions=parts).dp))


def test_private_keys_released_somewhere(df: pd.DataFrame) -> None:
    """The private-key cases above release keys (they are not all empty), 'z' too."""
    got = RELEASES["private len unit"](dd.from_pandas(df, npartitions=7).dp)
    assert "z" in got.index and len(got) >= 6


@pytest.mark.parametrize("name", ["mean", "groupby mean max_groups", "private mean unit"])
def test_without_the_shuffle_the_releases_differ(
    df: pd.DataFrame, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The equality above needs the shuffle by unit: truncating each partition's rows
    alone keeps up to k rows of a unit per partition, and the release changes."""
    expected = RELEASES[name](df.dp)
    monkeypatch.setattr(_dask_partitions._Columns, "shuffle_by", lambda self, series: None)
    with pytest.raises(AssertionError):
        _same(expected, RELEASES[name](dd.from_pandas(df, npartitions=7).dp))


def _kept_rows(frame: Any, settings: Settings, keys: list[str] | None = None) -> np.ndarray:
    """Exact rows kept per group after truncation (engine input built as a release does)."""
    from pandas_dp.request.grouping import resolve_grouping

    grouping = None if keys is None else resolve_grouping(frame, "k", keys=keys, schema=None)
    decl = NumericDeclaration("x", 0.0, 10.0)
    data = measure.engine_input({"x": frame["x"]}, {"x": decl}, settings, grouping, frame)()
    groups = data.groups
    if dask_engine.is_dask(frame):
        return dask_engine.row_counts(frame, groups)
    return engines.row_counts(groups, len(frame))


@pytest.mark.slow
def test_a_heavy_unit_over_every_partition_adds_at_most_its_bounds(df: pd.DataFrame) -> None:
    """The contribution bound holds on Dask: a unit with 256 rows, 4 in each of 64
    partitions, adds exactly k = 3 rows in all, and with g = 2, c = 1 one row to each
    of 2 groups; per-partition truncation would keep up to 3 rows per partition."""
    heavy = pd.DataFrame(
        {
            "pid": -1.0,
            "k": np.tile(KEYS, 32),
            "x": np.linspace(0, 10, 256),
            "y": 0.0,
            "c": "u",
        }
    )
    base = df.iloc[:2560].reset_index(drop=True)
    position = np.r_[np.arange(2560) * 10.0, np.arange(256) * 100.0 + 5]  # interleaved
    mixed = pd.concat([base, heavy], ignore_index=True)
    mixed = mixed.iloc[np.argsort(position, kind="stable")].reset_index(drop=True)

    def ungrouped() -> Settings:  # a fresh source each time: the same hash key
        return Settings(epsilon=1.0, random_state=0, contributions=Contributions("pid", rows=3))

    def grouped() -> Settings:
        bounds = Contributions("pid", rows=3, groups=2, rows_per_group=1)
        return Settings(epsilon=1.0, random_state=0, contributions=bounds)

    for frame in (mixed, dd.from_pandas(mixed, npartitions=64)):
        bare = base if isinstance(frame, pd.DataFrame) else dd.from_pandas(base, npartitions=64)
        assert int(_kept_rows(frame, ungrouped())[0]) - int(_kept_rows(bare, ungrouped())[0]) == 3
        diff = _kept_rows(frame, grouped(), KEYS) - _kept_rows(bare, grouped(), KEYS)
        assert diff.min() == 0 and diff.max() == 1 and diff.sum() == 2
    assert dask_engine.is_dask(dd.from_pandas(mixed, npartitions=64))


@pytest.mark.parametrize("parts", PARTITIONS)
def test_observed_keys_are_the_pandas_keys(df: pd.DataFrame, parts: int) -> None:
    """Same keys in the same order (first appearance), hence the same codes, and the
    same rows per code, whatever the partitioning; 'z' sits in the last partition only."""
    want_groups, want_keys = engines.observed_codes(df["k"], sort=False)
    ddf = dd.from_pandas(df, npartitions=parts)
    groups, keys = dask_engine.observed_groups(ddf["k"], sort=False)
    pd.testing.assert_index_equal(keys, want_keys)
    assert groups.size == want_groups.size
    want = engines.row_counts(want_groups, len(df))
    assert np.array_equal(dask_engine.row_counts(ddf, groups), want)
    _, sorted_keys = dask_engine.observed_groups(ddf["k"], sort=True)
    pd.testing.assert_index_equal(sorted_keys, engines.observed_codes(df["k"], sort=True)[1])


def test_observed_keys_of_empty_partitions() -> None:
    """Partitions a filter emptied contribute no key and no row."""
    frame = pd.DataFrame({"k": [3, 1, 3, 2, 1, 5] * 10, "v": range(60)})
    ddf = dd.from_pandas(frame, npartitions=8)
    kept = ddf[ddf["v"] >= 50]
    groups, keys = dask_engine.observed_groups(kept["k"])
    want_groups, want_keys = engines.observed_codes(frame[frame["v"] >= 50]["k"], sort=False)
    pd.testing.assert_index_equal(keys, want_keys)
    assert np.array_equal(dask_engine.row_counts(kept, groups), engines.row_counts(want_groups, 10))


class _Computes(dask.callbacks.Callback):  # type: ignore[misc]
    """Counts the graphs run (one per ``dask.compute``)."""

    def __init__(self) -> None:
        super().__init__()
        self.runs = 0

    def _start(self, dsk: Any) -> None:
        self.runs += 1


@pytest.mark.parametrize(
    ("name", "runs"),
    [
        ("mean", 1),  # shuffle, truncation and moments in one graph
        ("groupby agg max_rows_per_group", 1),
        ("private len", 2),  # the observed keys, then their counts
        ("private mean unit", 3),  # keys, counts of units, then the kept keys' moments
    ],
)
def test_computes_per_release(df: pd.DataFrame, name: str, runs: int) -> None:
    ddf = dd.from_pandas(df, npartitions=7)
    with _Computes() as seen:
        RELEASES[name](ddf.dp)
    assert seen.runs == runs


def test_charged_before_any_compute(df: pd.DataFrame) -> None:
    """A refused charge reads nothing: no graph runs (the keys are gathered after it)."""
    ddf = dd.from_pandas(df, npartitions=7)
    budget = pandas_dp.PrivacyBudget(epsilon=0.5)
    with budget, _Computes() as seen, pytest.raises(BudgetExceededError):
        RELEASES["private mean unit"](ddf.dp)
    assert seen.runs == 0
    assert budget.remaining == (0.5, 0.0)


@pytest.mark.parametrize("name", ["count", "groupby value_counts", "private len unit"])
def test_pyarrow_strings_keep_the_same_rows(df: pd.DataFrame, name: str) -> None:
    """Dask's default turns ``str`` columns into ``string[pyarrow]`` (``NA`` for
    ``NaN``): the kept rows, hence the values, are the same (missing contents hash
    alike); only private keys' index dtype follows the Dask column's."""
    expected = RELEASES[name](df.dp)
    with dask.config.set({"dataframe.convert-string": True}):
        ddf = dd.from_pandas(df, npartitions=7)
        assert str(ddf["k"].dtype) == "string"
        got = RELEASES[name](ddf.dp)
    assert np.array_equal(np.asarray(expected), np.asarray(got))
    assert list(expected.index) == list(got.index)


def test_many_columns_with_a_unit() -> None:
    """Nine columns read with a privacy unit (the hash needs more than 8 key words)."""
    frame = pd.DataFrame({f"c{i}": np.arange(40.0) % (i + 2) for i in range(8)})
    frame["pid"] = np.arange(40) % 5
    want = frame.dp.count(epsilon=1.0, random_state=0, **UNIT)
    got = dd.from_pandas(frame, npartitions=3).dp.count(epsilon=1.0, random_state=0, **UNIT)
    pd.testing.assert_series_equal(want, got, check_exact=True)


@pytest.mark.slow
def test_mixed_object_columns_keep_the_same_rows() -> None:
    """An object key column mixing numbers, strings, bytes, missing and unhashable
    values: each value's rank hash is a function of the value alone (pandas hashes
    such a column wholly by ``str`` only when some value needs it, which differs
    between partitions), so the release is still the pandas release."""
    values = [1, "1", 1.0, None, [1], np.nan, True, "a", pd.NaT, frozenset([1]), b"x", 2.5]
    rng = np.random.default_rng(1)
    n = 1200
    frame = pd.DataFrame(
        {
            "k": pd.Series([values[i] for i in rng.integers(0, len(values), n)], dtype=object),
            "pid": rng.integers(0, 100, n),
            "x": rng.uniform(0, 1, n),
        }
    )

    def release(dp: Any) -> Any:
        return dp.groupby("k", keys="private", delta=0.1).mean(
            "x", epsilon=3.0, bounds=(0, 1), random_state=3, max_groups_per_unit=2, **UNIT
        )

    want = release(frame.dp)
    assert len(want) >= 4
    for parts in PARTITIONS:
        pd.testing.assert_series_equal(
            want, release(dd.from_pandas(frame, npartitions=parts).dp), check_exact=True
        )


@pytest.mark.slow
def test_object_unit_ids_converted_to_strings_keep_the_same_rows() -> None:
    """Dask's default turns an object column of integer ids into strings; the rows
    kept (hence the release) are the same, as values hash by their text."""
    rng = np.random.default_rng(11)
    n = 1500
    frame = pd.DataFrame(
        {
            "pid": pd.Series([int(v) for v in rng.integers(0, 200, n)], dtype=object),
            "x": rng.uniform(0, 1, n),
        }
    )
    unit = {"privacy_unit": "pid", "max_rows_per_unit": 2}
    want = frame.dp.mean("x", epsilon=2.0, bounds=(0, 1), random_state=4, **unit)
    with dask.config.set({"dataframe.convert-string": True}):
        for parts in PARTITIONS:
            ddf = dd.from_pandas(frame, npartitions=parts)
            got = ddf.dp.mean("x", epsilon=2.0, bounds=(0, 1), random_state=4, **unit)
            assert float(got) == float(want), parts
