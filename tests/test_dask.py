"""The Dask engine and ``ddf.dp``: partition invariance, one compute, refusals before the charge.

Every release on a Dask frame must equal, bit for bit, the pandas release on the
same rows with the same ``random_state``, for any number of partitions: the engine
adds exact integer partial sums, and the noise is drawn once on the client.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")

import pandas_dp  # noqa: E402
from pandas_dp import engines  # noqa: E402
from pandas_dp.engines import dask as dask_engine  # noqa: E402

PARTITIONS = (1, 7, 64)


@pytest.fixture(autouse=True)
def _synchronous() -> Iterator[None]:
    with dask.config.set(scheduler="synchronous"):
        yield


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    n = 3_000
    out = pd.DataFrame(
        {
            "age": rng.uniform(15, 95, n),  # partly outside the bounds below: clamped
            "income": rng.lognormal(10, 1, n),
            "kids": rng.integers(0, 6, n),
            "sex": rng.choice(["f", "m", "x"], n),
            "region": rng.choice(["n", "s", "e", "w"], n),
            "smoker": rng.random(n) < 0.3,
        }
    )
    out.loc[rng.random(n) < 0.1, "age"] = np.nan
    out.loc[rng.random(n) < 0.05, "sex"] = None
    return out


BOUNDS = {"age": (18, 90), "income": (0, 200_000), "kids": (0, 5)}
CATS = {"sex": ["f", "m"], "region": ["n", "s", "e", "w"], "smoker": [False, True]}

# name -> release of an accessor (pandas' df.dp or Dask's ddf.dp); same random_state
RELEASES: dict[str, Callable[[Any], Any]] = {
    "quantiles": lambda dp: dp.quantile(
        ["age", "income"], [0.25, 0.5], epsilon=1.0, bounds=BOUNDS, random_state=11
    ),
    "grouped median": lambda dp: dp.groupby("region", keys=CATS["region"]).median(
        "age", epsilon=1.0, bounds=BOUNDS, random_state=12
    ),
    "grouped describe": lambda dp: dp.groupby("region", keys=CATS["region"]).describe(
        ["age", "sex"], epsilon=1.0, bounds=BOUNDS, categories=CATS, random_state=13
    ),
    "count": lambda dp: dp.count(epsilon=1.0, random_state=1),
    "len": lambda dp: dp.len(epsilon=1.0, random_state=2),
    "sum": lambda dp: dp.sum(["age", "income"], epsilon=1.0, bounds=BOUNDS, random_state=3),
    "mean": lambda dp: dp.mean(["age", "kids"], epsilon=1.0, bounds=BOUNDS, random_state=4),
    "var": lambda dp: dp.var("income", epsilon=1.0, bounds=BOUNDS, random_state=5),
    "std": lambda dp: dp.std(epsilon=1.0, bounds=BOUNDS, random_state=6),
    "mean substitute": lambda dp: dp.mean(
        "age", epsilon=1.0, bounds=BOUNDS, neighbouring="substitute", random_state=7
    ),
    "mean direct": lambda dp: dp.mean(
        "age",
        epsilon=1.0,
        bounds=BOUNDS,
        neighbouring="substitute",
        method="direct",
        random_state=8,
    ),
    "var direct": lambda dp: dp.var(
        "kids",
        epsilon=1.0,
        bounds=BOUNDS,
        neighbouring="substitute",
        method="direct",
        random_state=9,
    ),
    "gaussian": lambda dp: dp.mean(
        "income", epsilon=1.0, delta=1e-6, mechanism="gaussian", bounds=BOUNDS, random_state=10
    ),
    "describe": lambda dp: dp.describe(
        epsilon=1.0, bounds=BOUNDS, categories=CATS, random_state=11
    ),
    "agg": lambda dp: dp.agg(
        {"age": ["count", "mean", "std"], "income": "sum"},
        epsilon=1.0,
        bounds=BOUNDS,
        random_state=18,
    ),
    "agg with a median": lambda dp: dp.agg(
        {"age": ["mean", "median"], "income": "median"},
        epsilon=1.0,
        bounds=BOUNDS,
        random_state=25,
    ),
    "agg of every column": lambda dp: dp.agg(
        ["mean", "std"], epsilon=1.0, bounds=BOUNDS, random_state=19
    ),
    "value_counts": lambda dp: dp.value_counts(
        "region", epsilon=1.0, categories=CATS, random_state=12
    ),
    "value_counts other": lambda dp: dp.value_counts(
        "sex", epsilon=1.0, categories=CATS, other="?", dropna=False, random_state=13
    ),
    "proportions": lambda dp: dp.proportions("sex", epsilon=1.0, categories=CATS, random_state=14),
    "cov": lambda dp: dp.cov(["age", "kids"], epsilon=1.0, bounds=BOUNDS, random_state=15),
    "corr": lambda dp: dp.corr(["age", "income"], epsilon=1.0, bounds=BOUNDS, random_state=16),
    "groupby len": lambda dp: dp.groupby("region", keys=CATS["region"]).len(
        epsilon=1.0, random_state=17
    ),
    "groupby count": lambda dp: dp.groupby("region", keys=CATS["region"]).count(
        "age", epsilon=1.0, random_state=18
    ),
    "groupby sum": lambda dp: dp.groupby("sex", keys=CATS["sex"], other="other").sum(
        "income", epsilon=1.0, bounds=BOUNDS, random_state=19
    ),
    "groupby mean": lambda dp: dp.groupby(
        ["sex", "smoker"], keys={"sex": CATS["sex"], "smoker": CATS["smoker"]}
    ).mean(["age", "kids"], epsilon=1.0, bounds=BOUNDS, random_state=20),
    "groupby var": lambda dp: dp.groupby("region", keys=CATS["region"]).var(
        "age", epsilon=1.0, bounds=BOUNDS, random_state=21
    ),
    "groupby std": lambda dp: dp.groupby("region", keys=["n", "s", "nowhere"]).std(
        "kids", epsilon=1.0, bounds=BOUNDS, random_state=22
    ),
    "groupby agg": lambda dp: dp.groupby("region", keys=CATS["region"]).agg(
        {"age": ["count", "mean", "std"], "income": "sum"},
        epsilon=1.0,
        bounds=BOUNDS,
        random_state=23,
    ),
    "groupby agg with a median": lambda dp: dp.groupby("region", keys=CATS["region"]).agg(
        {"age": "mean", "income": "median"},
        epsilon=1.0,
        bounds=BOUNDS,
        random_state=26,
    ),
    "groupby value_counts": lambda dp: dp.groupby("region", keys=CATS["region"]).value_counts(
        "sex", epsilon=1.0, categories=CATS, random_state=24
    ),
    "groupby proportions": lambda dp: dp.groupby("smoker", keys=CATS["smoker"]).proportions(
        "region", epsilon=1.0, categories=CATS, random_state=25
    ),
    # pandas' group-by options (issue 32): the same release on Dask
    "groupby as_index=False": lambda dp: dp.groupby(
        ["region", "sex"], keys={"region": CATS["region"], "sex": CATS["sex"]}, as_index=False
    ).mean(["age", "income"], epsilon=1.0, bounds=BOUNDS, random_state=27),
    "groupby sort=False": lambda dp: dp.groupby(
        "region", keys=["w", "n", "s", "e"], sort=False
    ).sum("kids", epsilon=1.0, bounds=BOUNDS, random_state=28),
    "groupby dropna=False": lambda dp: dp.groupby("sex", keys=CATS["sex"], dropna=False).mean(
        "age", epsilon=1.0, bounds=BOUNDS, random_state=29
    ),
    "groupby dropna=False value_counts": lambda dp: dp.groupby(
        ["sex", "smoker"], keys={"sex": CATS["sex"], "smoker": CATS["smoker"]}, dropna=False
    ).value_counts("region", epsilon=1.0, categories=CATS, random_state=30),
    "groupby named agg": lambda dp: dp.groupby("region", keys=CATS["region"]).agg(
        m=("age", "mean"),
        s=pd.NamedAgg("kids", "sum"),
        epsilon=1.0,
        bounds=BOUNDS,
        random_state=31,
    ),
    "series mean": lambda dp: dp.mean(epsilon=1.0, bounds=(18, 90), random_state=26),
}

SERIES = {"series mean"}


def _same(a: Any, b: Any) -> None:
    """Equal values, index and dtype; ``attrs["dp"]`` public metadata equal too."""
    if isinstance(a, pd.DataFrame | pd.Series):
        if isinstance(a, pd.DataFrame):
            pd.testing.assert_frame_equal(a, b, check_exact=True)
        else:
            pd.testing.assert_series_equal(a, b, check_exact=True)
    else:
        assert type(a) is type(b)
        assert a == b or (np.isnan(a) and np.isnan(b))
    meta_a, meta_b = a.attrs["dp"], b.attrs["dp"]
    assert meta_a.epsilon == meta_b.epsilon
    assert meta_a.n == meta_b.n
    alpha = 0.05
    ia, ib = meta_a.interval(alpha), meta_b.interval(alpha)
    assert np.array_equal(np.asarray(ia, dtype=float), np.asarray(ib, dtype=float), equal_nan=True)


def _accessor(frame: Any, name: str) -> Any:
    return frame["age"].dp if name in SERIES else frame.dp


# The quantile cases search on every partitioning (10-30 s each): `pytest -m slow`.
LONG = {"quantiles", "grouped median", "agg with a median", "groupby agg with a median"}


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in LONG else n for n in RELEASES]
)
def test_release_is_the_pandas_release_for_any_partitioning(df: pd.DataFrame, name: str) -> None:
    release = RELEASES[name]
    expected = release(_accessor(df, name))
    for parts in PARTITIONS:
        got = release(_accessor(dd.from_pandas(df, npartitions=parts), name))
        _same(expected, got)


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in LONG else n for n in RELEASES]
)
def test_an_explicit_budget_reaches_no_partition(df: pd.DataFrame, name: str) -> None:
    """With ``budget=`` (a lock inside: neither Dask's tokenizer nor a pickle takes
    it), every release still runs, equals the pandas release and is charged once.
    A selection's callback holds the plan, and so the budget; before the
    partitions were given the measurements without it, a median was charged and
    then raised ``TokenizationError``."""
    release = RELEASES[name]
    on_pandas = pandas_dp.PrivacyBudget(epsilon=10.0, delta=1e-3)
    on_dask = pandas_dp.PrivacyBudget(epsilon=10.0, delta=1e-3)
    expected = release(_accessor(df, name)(budget=on_pandas))
    got = release(_accessor(dd.from_pandas(df, npartitions=7), name)(budget=on_dask))
    _same(expected, got)
    assert len(on_dask.ledger) == len(on_pandas.ledger) == 1
    assert on_dask.spent == on_pandas.spent


def test_partition_invariance_can_fail(df: pd.DataFrame) -> None:
    """The comparison above sees a different seed (it is not vacuous)."""
    a = df.dp.mean("age", epsilon=1.0, bounds=BOUNDS, random_state=1)
    b = dd.from_pandas(df, npartitions=7).dp.mean("age", epsilon=1.0, bounds=BOUNDS, random_state=2)
    with pytest.raises(AssertionError):
        _same(a, b)


def test_kernels_equal_the_pandas_engine(df: pd.DataFrame) -> None:
    ddf = dd.from_pandas(df, npartitions=7)
    codes = engines.group_codes([df["region"]], [CATS["region"]])
    groups = dask_engine.PartitionGroups(
        [ddf["region"]],
        lambda part: engines.group_codes([part["region"]], [CATS["region"]]),
        codes.size,
    )
    want = engines.moments(df["age"], 18, 90, squares=True, groups=codes)
    got = dask_engine.moments(ddf["age"], 18, 90, squares=True, groups=groups)
    assert np.array_equal(want.count, got.count)
    assert want.total == got.total and want.squares == got.squares
    p_want = engines.products([df["age"], df["income"]], [18, 0], [90, 2e5])
    p_got = dask_engine.products([ddf["age"], ddf["income"]], [18, 0], [90, 2e5])
    assert p_want == p_got
    c_want = engines.category_counts(df["sex"], CATS["sex"], groups=codes)
    c_got = dask_engine.category_counts(ddf["sex"], CATS["sex"], groups=groups)
    for field in ("counts", "missing", "other"):
        assert np.array_equal(getattr(c_want, field), getattr(c_got, field))
    assert np.array_equal(
        engines.present_counts(df["sex"], codes), dask_engine.present_counts(ddf["sex"], groups)
    )
    assert np.array_equal(engines.row_counts(codes, len(df)), dask_engine.row_counts(ddf, groups))
    assert np.array_equal(dask_engine.row_counts(ddf), [len(df)])


def test_empty_partitions(df: pd.DataFrame) -> None:
    """Partitions a filter emptied add nothing (and break nothing)."""
    ddf = dd.from_pandas(df, npartitions=8)
    kept = ddf[ddf["kids"] > 10]  # no row survives
    m = kept.dp.sum("age", epsilon=1.0, bounds=BOUNDS, random_state=0)
    assert m == df[df["kids"] > 10].dp.sum("age", epsilon=1.0, bounds=BOUNDS, random_state=0)


class _Computes(dask.callbacks.Callback):  # type: ignore[misc]
    """Counts the graphs run (one per ``dask.compute``/``len``)."""

    def __init__(self) -> None:
        super().__init__()
        self.runs = 0

    def _start(self, dsk: Any) -> None:
        self.runs += 1


@pytest.mark.parametrize(
    ("release", "runs"),
    [
        (lambda dp: dp.describe(epsilon=1.0, bounds=BOUNDS, categories=CATS), 1),
        (lambda dp: dp.mean(["age", "income", "kids"], epsilon=1.0, bounds=BOUNDS), 1),
        (lambda dp: dp.len(epsilon=1.0), 1),
        (
            lambda dp: dp.groupby("region", keys=CATS["region"]).agg(
                {"age": ["mean", "std"], "kids": "sum"}, epsilon=1.0, bounds=BOUNDS
            ),
            1,
        ),
        # substitute declares len(ddf) public: it is computed, once, before the charge
        (lambda dp: dp.mean("age", epsilon=1.0, bounds=BOUNDS, neighbouring="substitute"), 2),
    ],
)
def test_one_compute_per_plan(df: pd.DataFrame, release: Callable[[Any], Any], runs: int) -> None:
    ddf = dd.from_pandas(df, npartitions=7)
    with _Computes() as seen:
        release(ddf.dp)
    assert seen.runs == runs


class _Tasks(dask.callbacks.Callback):  # type: ignore[misc]
    """The number of tasks of each graph run."""

    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []

    def _start(self, dsk: Any) -> None:
        self.sizes.append(len(dsk))


@pytest.mark.parametrize("n", PARTITIONS)
def test_kernel_runs_in_the_partition_task(df: pd.DataFrame, n: int) -> None:
    """One task per partition reads it and measures it (plus the data's own tasks
    and the adding tree): no separate kernel task per partition."""
    ddf = dd.from_pandas(df, npartitions=n)
    with _Tasks() as seen:
        ddf.dp.describe(epsilon=1.0, bounds=BOUNDS)
    tree = -(-n // 16) + (n > 16)  # the adds: fan-in 16, two levels at 64 partitions
    assert seen.sizes == [2 * n + max(tree, 1)]  # from_pandas data + fused task per partition


def test_kernels_run_serially_in_dask_tasks(
    df: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inside a Dask task the compiled kernels use no threads of their own (Dask's
    threads already run one task per core); the sums are unchanged."""
    pytest.importorskip("numba")
    from pandas_dp.engines import _numba

    monkeypatch.setattr(_numba, "PARALLEL_ROWS", 100)
    monkeypatch.setattr(_numba, "THREADS", 2)
    monkeypatch.setattr(engines.pandas, "FAST_MIN_ROWS", 0)
    modes: list[bool] = []
    real = _numba.run_parts

    def spy(fn: Callable[[int, int], Any], rows: int) -> list[Any]:
        modes.append(bool(getattr(_numba._SERIAL, "on", False)))
        return real(fn, rows)

    monkeypatch.setattr(_numba, "run_parts", spy)
    ddf = dd.from_pandas(df, npartitions=3)
    with dask.config.set(scheduler="threads"):
        got = dask_engine.moments(ddf["age"], 18, 90, squares=True)
    assert modes and all(modes)
    modes.clear()
    want = engines.moments(df["age"], 18, 90, squares=True)
    assert modes and not any(modes)  # the pandas engine keeps its threads
    assert np.array_equal(want.count, got.count)
    assert want.total == got.total and want.squares == got.squares


REFUSED: dict[str, Callable[[Any], Any]] = {
    "counts": lambda dp: dp.counts({"old": "age > 60"}, epsilon=1.0),
    "out_of_bounds raise": lambda dp: dp.mean(
        "age", epsilon=1.0, bounds=BOUNDS, out_of_bounds="raise"
    ),
    "cov direct": lambda dp: dp.cov(
        ["age", "kids"], epsilon=1.0, bounds=BOUNDS, method="direct", neighbouring="substitute"
    ),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_refused_before_the_charge_and_before_reading(df: pd.DataFrame, name: str) -> None:
    ddf = dd.from_pandas(df, npartitions=7)
    budget = pandas_dp.PrivacyBudget(epsilon=10.0)
    with budget, _Computes() as seen, pytest.raises(NotImplementedError):
        REFUSED[name](ddf.dp)
    assert budget.remaining == (10.0, 0.0)
    assert seen.runs == 0


def test_budget_charged_once_per_release(df: pd.DataFrame) -> None:
    ddf = dd.from_pandas(df, npartitions=7)
    budget = pandas_dp.PrivacyBudget(epsilon=3.0)
    with budget:
        ddf.dp.describe(epsilon=1.0, bounds=BOUNDS, categories=CATS, random_state=0)
        ddf.dp.groupby("region", keys=CATS["region"]).agg(
            {"age": ["mean", "std"]}, epsilon=1.5, bounds=BOUNDS, random_state=0
        )
    assert budget.remaining[0] == pytest.approx(0.5)
    assert len(budget.ledger) == 2


def test_schema_bounds_work_unchanged(df: pd.DataFrame) -> None:
    pa = pytest.importorskip("pandera.pandas")
    schema = pa.DataFrameSchema({"age": pa.Column(float, pa.Check.in_range(18, 90), nullable=True)})
    want = df.dp.mean("age", epsilon=1.0, schema=schema, random_state=0)
    got = dd.from_pandas(df, npartitions=7).dp.mean(
        "age", epsilon=1.0, schema=schema, random_state=0
    )
    assert want == got


def test_bound_defaults(df: pd.DataFrame) -> None:
    ddf = dd.from_pandas(df, npartitions=7)
    dp = ddf.dp(bounds=BOUNDS, random_state=3)
    a, b = dp.mean("age", epsilon=1.0), dp.mean("age", epsilon=1.0)
    pdp = df.dp(bounds=BOUNDS, random_state=3)
    assert (a, b) == (pdp.mean("age", epsilon=1.0), pdp.mean("age", epsilon=1.0))


def test_import_registers_lazily() -> None:
    """``import pandas_dp`` does not import Dask; importing Dask later registers ``.dp``."""
    code = (
        "import sys, pandas_dp\n"
        "print('dask' in sys.modules)\n"
        "import pandas as pd, dask.dataframe as dd\n"
        "d = dd.from_pandas(pd.DataFrame({'a': [1.0, 2.0]}), npartitions=1)\n"
        "print(type(d.dp).__name__, type(d['a'].dp).__name__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.split() == ["False", "DaskFrameAccessor", "DaskSeriesAccessor"]


@pytest.mark.slow
def test_local_cluster_on_parquet(df: pd.DataFrame, tmp_path: Path) -> None:
    """Two worker processes reading a Parquet dataset: the same releases as pandas."""
    pytest.importorskip("pyarrow")
    distributed = pytest.importorskip("distributed")
    path = tmp_path / "survey"
    dd.from_pandas(df, npartitions=6).to_parquet(path, write_index=False)
    local = pd.read_parquet(path)
    want_describe = local.dp.describe(epsilon=1.0, bounds=BOUNDS, random_state=4)
    want_groups = local.dp.groupby("region", keys=CATS["region"]).mean(
        "age", epsilon=1.0, bounds=BOUNDS, random_state=5
    )
    # a privacy unit (the rows shuffled by unit) and private keys (gathered keys)
    want_units = _unit_release(local.dp)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
    ):
        ddf = dd.read_parquet(path)
        got_describe = ddf.dp.describe(epsilon=1.0, bounds=BOUNDS, random_state=4)
        got_groups = ddf.dp.groupby("region", keys=CATS["region"]).mean(
            "age", epsilon=1.0, bounds=BOUNDS, random_state=5
        )
        got_units = _unit_release(ddf.dp)
    pd.testing.assert_frame_equal(want_describe, got_describe, check_exact=True)
    # the frame pandas reads from Parquet holds text as ``string`` and its declared key
    # index keeps it, like pandas; Dask labels declared text keys ``str`` (differences
    # page, "Text keys on Dask are str"): the same keys and numbers
    assert str(want_groups.index.dtype) == str(local["region"].dtype)
    assert str(got_groups.index.dtype) == "str"
    same = want_groups.set_axis(want_groups.index.astype("str"))
    pd.testing.assert_series_equal(same, got_groups, check_exact=True)
    pd.testing.assert_series_equal(want_units, got_units, check_exact=True)


def _unit_release(dp: Any) -> Any:
    return dp.groupby("sex", keys="private", delta=1e-3).mean(
        "age", epsilon=2.0, bounds=BOUNDS, privacy_unit="kids", max_rows_per_unit=50, random_state=6
    )
