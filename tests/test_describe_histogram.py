"""describe's histograms of numeric columns (``histogram=``; issue 33 item 5).

``np.histogram`` on the declared range is the oracle at a large epsilon; the
table keeps pandas' shape; the budget is the column's part, split as documented;
the default measures nothing (seeded releases unchanged); refusals before the charge.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pandas_dp  # noqa: F401  (registers .dp)
from pandas_dp import PrivacyBudget
from pandas_dp.stats.describe_histogram import HISTOGRAM_SHARE, check_histogram

RNG = np.random.default_rng(11)
N = 3000
DF = pd.DataFrame(
    {
        "age": RNG.uniform(18, 90, N).round(3) + 0.0004,  # no value on a bin edge
        "income": RNG.lognormal(10.5, 0.6, N),
        "r": RNG.choice(["N", "S", "E"], N),
        "g": RNG.choice(["a", "b"], N),
    }
)
DF.loc[::97, "age"] = np.nan  # missing values are in no bin
BOUNDS = {"age": (18.0, 90.0), "income": (0.0, 100_000.0)}
CATS = {"r": ["N", "S", "E"]}


def _exact(column: str, edges: list[float]) -> np.ndarray:
    lo, hi = BOUNDS[column]
    values = DF[column].dropna().clip(lo, hi)
    return np.histogram(values, bins=np.linspace(lo, hi, len(edges)))[0]


def _describe(**kw: object) -> pd.DataFrame:
    return DF.dp.describe(["age", "income", "r"], bounds=BOUNDS, categories=CATS, **kw)


def test_counts_are_the_noisy_counts_of_the_declared_bins() -> None:
    budget = PrivacyBudget(epsilon=3000.0)
    d = _describe(epsilon=3000.0, histogram=12, random_state=3, budget=budget)
    found = d.attrs["dp"].details["histograms"]
    assert set(found) == {"age", "income"}  # numeric columns only
    for c in ("age", "income"):
        h = found[c]
        lo, hi = BOUNDS[c]
        assert h["bins"] == 12 and len(h["counts"]) == 12
        np.testing.assert_allclose(h["edges"], np.linspace(lo, hi, 13))
        exact = _exact(c, h["edges"])
        counts = np.asarray(h["counts"])
        assert np.all(counts == np.round(counts)) and np.all(counts >= 0)  # noisy integers
        # noise scale 1 / (0.2 * 3000 / 3) = 0.005: within a count of the truth
        assert np.abs(counts - exact).max() <= 1, (counts, exact)
        assert h["epsilon"] == pytest.approx(HISTOGRAM_SHARE * 3000.0 / 3)
    exported = d.attrs["dp"].to_dict()["details"]["histograms"]  # JSON-ready
    assert exported["age"]["counts"] == found["age"]["counts"]
    # income's clamped tail: the values above 100 000 are counted in the last bin
    assert _exact("income", found["income"]["edges"])[-1] > 0
    # the ledger: one describe row, all of epsilon; the split sums to it
    assert budget.ledger["epsilon"].sum() == pytest.approx(3000.0)
    split = d.attrs["dp"].details["budget_split"]
    assert sum(split.values()) == pytest.approx(3000.0)
    for c in ("age", "income"):
        own = sum(v for k, v in split.items() if k.startswith(f"{c}: "))
        assert split[f"{c} (histogram): category_counts"] == pytest.approx(
            HISTOGRAM_SHARE * (own + split[f"{c} (histogram): category_counts"])
        )
    # each column's part of epsilon is unchanged: a third each, the categorical one too
    assert split["r: category_counts"] == pytest.approx(1000.0)


def test_shape_and_rows_unchanged_and_default_measures_nothing() -> None:
    plain = _describe(epsilon=1.0, random_state=5)
    again = _describe(epsilon=1.0, random_state=5, histogram=None)
    pd.testing.assert_frame_equal(plain, again)  # the default: bit-identical
    assert "histograms" not in plain.attrs["dp"].details
    with_hist = _describe(epsilon=1.0, random_state=5, histogram=20)
    assert with_hist.shape == plain.shape
    assert list(with_hist.index) == list(plain.index)
    assert list(with_hist.columns) == list(plain.columns)
    # the categorical column's part is unchanged, so are its shares (same seed, same
    # order of draws is not promised: compare the noise scale, not the values)
    scale = plain.attrs["dp"].details["budget_split"]["r: category_counts"]
    assert with_hist.attrs["dp"].details["budget_split"]["r: category_counts"] == scale


def test_tree_histogram_is_free_and_changes_no_release() -> None:
    kw = {"epsilon": 2000.0, "method": "tree", "random_state": 8}
    plain = _describe(**kw)
    with_hist = _describe(histogram=16, **kw)
    pd.testing.assert_frame_equal(plain, with_hist)  # nothing more measured
    assert (
        plain.attrs["dp"].details["budget_split"] == with_hist.attrs["dp"].details["budget_split"]
    )
    h = with_hist.attrs["dp"].details["histograms"]["age"]
    assert h["epsilon"] == 0.0 and h["bins"] == 16  # 1024 leaves: 16 blocks of 64
    np.testing.assert_allclose(h["edges"], np.linspace(18.0, 90.0, 17))
    exact = _exact("age", h["edges"])
    assert np.abs(np.asarray(h["counts"]) - exact).max() <= 2, (h["counts"], exact)
    # 20 blocks of 1024 leaves: 51 or 52 leaves each, the edges say where
    twenty = _describe(histogram=20, **kw).attrs["dp"].details["histograms"]["age"]
    widths = np.diff(twenty["edges"]) / (72.0 / 1024)
    assert set(np.round(widths).astype(int)) <= {51, 52} and len(widths) == 20


def test_grouped_histograms_per_key() -> None:
    out = DF.dp.groupby("g", keys=["a", "b"]).describe(
        ["age"], epsilon=3000.0, bounds=BOUNDS, histogram=6, random_state=1
    )
    h = out.attrs["dp"].details["histograms"]["age"]
    assert len(h["counts"]) == 2 and all(len(row) == 6 for row in h["counts"])
    for key, row in zip(["a", "b"], h["counts"], strict=True):
        lo, hi = BOUNDS["age"]
        part = DF.loc[DF["g"] == key, "age"].dropna()
        exact = np.histogram(part, bins=np.linspace(lo, hi, 7))[0]
        assert np.abs(np.asarray(row) - exact).max() <= 1


@pytest.mark.parametrize("bad", [True, 1, 0, 1001, 2.5, "20"])
def test_bad_histogram_refused_before_the_charge(bad: object) -> None:
    budget = PrivacyBudget(epsilon=1.0)
    with pytest.raises(ValueError, match="histogram must be None or a whole number"):
        _describe(epsilon=1.0, histogram=bad, budget=budget)
    assert budget.spent.epsilon == 0.0 and len(budget.ledger) == 0


def test_check_histogram() -> None:
    assert check_histogram(None) is None
    assert check_histogram(np.int64(32)) == 32


def test_series_and_auto_describe_take_it() -> None:
    s = DF["age"].dp.describe(epsilon=1000.0, bounds=(18.0, 90.0), histogram=8, random_state=0)
    assert len(s.attrs["dp"].details["histograms"]["age"]["counts"]) == 8
    frame = DF[["age", "income"]].fillna(50.0)
    auto = frame.dp.describe(epsilon=50.0, bounds="auto", histogram=10, random_state=0)
    meta = auto.attrs["dp"]
    found = meta.details["histograms"]
    declared = meta.details["auto"]["declared"]["bounds"]
    for c in ("age", "income"):  # the bins of the released bounds
        np.testing.assert_allclose(found[c]["edges"], np.linspace(*declared[c], 11))


def test_dask_same_release() -> None:
    dd = pytest.importorskip("dask.dataframe")
    kw = {"epsilon": 2.0, "histogram": 10, "random_state": 4}
    on_pandas = _describe(**kw)
    got = dd.from_pandas(DF, npartitions=4).dp.describe(
        ["age", "income", "r"], bounds=BOUNDS, categories=CATS, **kw
    )
    pd.testing.assert_frame_equal(got, on_pandas)
    assert got.attrs["dp"].details["histograms"] == on_pandas.attrs["dp"].details["histograms"]
