"""value_counts, proportions, counting-query workloads and describe."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pandas_dp
from pandas_dp.stats.histograms import METHODS

CATS = ["N", "S", "E", "W"]
#: (method, via) pairs offered under the default add_remove relation: shares of the
#: noisy total. Every other pair divides by the frame's length, so it needs
#: neighbouring="substitute" (the length declared public).
ADD_REMOVE = {("project", "counts"), ("rescale", "counts")}


def _no_data_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any read of the data by the histogram engine fail the test."""

    def boom(*args: object, **kwargs: object) -> None:
        raise AssertionError("the data was read")

    monkeypatch.setattr(pandas_dp.engines, "category_counts", boom)
    monkeypatch.setattr(
        pandas_dp.engines.in_memory.PandasEngine, "category_counts", staticmethod(boom)
    )


@pytest.fixture
def s() -> pd.Series:
    rng = np.random.default_rng(3)
    return pd.Series(rng.choice(["N", "S", "E"], 400, p=[0.5, 0.3, 0.2]), name="region")


# --------------------------------------------------------------------------- value_counts


def test_value_counts_declared_categories_only(s: pd.Series) -> None:
    data = pd.concat([s, pd.Series(["X"] * 30, name="region")], ignore_index=True)
    vc = data.dp.value_counts(epsilon=1.0, categories=CATS, random_state=0)
    assert set(vc.index) == set(CATS)  # W (absent) is there, X (undeclared) is not
    assert vc.dtype == np.int64 and vc.name == "count" and vc.index.name == "region"
    assert (vc >= 0).all()
    other = data.dp.value_counts(epsilon=1e4, categories=CATS, other="other", random_state=0)
    assert other["other"] == 30 and other["W"] == 0
    exact = data.value_counts()
    for c in ["N", "S", "E"]:
        assert other[c] == exact[c]


def test_value_counts_sensitivity_does_not_depend_on_other(s: pd.Series) -> None:
    # substitute (length public): one record moves between two buckets, L1 = 2
    a = s.dp.value_counts(
        epsilon=1.0, categories=CATS, neighbouring="substitute", random_state=0
    ).attrs["dp"]
    b = s.dp.value_counts(
        epsilon=1.0, categories=CATS, other="?", neighbouring="substitute", random_state=0
    ).attrs["dp"]
    assert a.details["l1 sensitivity"] == b.details["l1 sensitivity"] == 2.0
    assert a.scale.iloc[0] == b.scale.iloc[0] == pytest.approx(2.0)
    assert a.n == b.n == len(s) and a.neighbouring == "substitute"
    # add_remove (the default, length private): one record in one bucket, L1 = 1
    ar = s.dp.value_counts(epsilon=1.0, categories=CATS, random_state=0).attrs["dp"]
    ar_other = s.dp.value_counts(epsilon=1.0, categories=CATS, other="?", random_state=0).attrs[
        "dp"
    ]
    assert ar.neighbouring == "add_remove" and ar.n is None and ar_other.n is None
    assert ar.details["l1 sensitivity"] == ar_other.details["l1 sensitivity"] == 1.0
    # the scale the exact sampler uses: 1 / epsilon rounded up by < 2**-38 (relative)
    for scale in (ar.scale, ar_other.scale):
        assert ((scale >= 1.0) & (scale <= 1.0 + 2.0**-38)).all()
    assert (ar.sensitivity == 1.0).all() and list(ar.sensitivity.index) == CATS
    # no upper clamp at the (private) length under add_remove
    assert ar.output_bounds == (0.0, math.inf)


def test_value_counts_sort_and_dropna(s: pd.Series) -> None:
    data = s.where(s.index % 10 != 0)
    vc = data.dp.value_counts(epsilon=1e4, categories=CATS, dropna=False, random_state=0)
    assert vc.index.isna().sum() == 1 and vc[vc.index.isna()].iloc[0] == 40
    assert list(vc.to_numpy()) == sorted(vc.to_numpy(), reverse=True)
    unsorted = data.dp.value_counts(epsilon=1.0, categories=CATS, sort=False, random_state=0)
    assert list(unsorted.index) == CATS
    asc = data.dp.value_counts(epsilon=1.0, categories=CATS, ascending=True, random_state=0)
    assert list(asc.to_numpy()) == sorted(asc.to_numpy())
    iv = asc.attrs["dp"].interval()
    assert list(iv.index) == list(asc.index)
    assert ((iv["lower"] <= asc) & (asc <= iv["upper"])).all()


def test_categories_from_schema_dtype_and_attached(s: pd.Series) -> None:
    schema = pa.DataFrameSchema({"region": pa.Column(str, pa.Check.isin(CATS))})
    frame = s.to_frame()
    assert (
        list(frame.dp.value_counts("region", epsilon=1.0, schema=schema, sort=False).index) == CATS
    )
    assert (
        list(schema.validate(frame).dp.value_counts("region", epsilon=1.0, sort=False).index)
        == CATS
    )
    typed = s.astype(pd.CategoricalDtype(CATS))
    # the data's own dtype is not a declaration; categories="dtype" publishes it on purpose
    with pytest.raises(pandas_dp.MissingBoundsError):
        typed.dp.value_counts(epsilon=1.0, sort=False)
    assert list(typed.dp.value_counts(epsilon=1.0, categories="dtype", sort=False).index) == CATS
    # renamed isin check
    renamed = pa.DataFrameSchema({"region": pa.Column(str, pa.Check.isin(CATS, name="ok"))})
    assert len(frame.dp.value_counts("region", epsilon=1.0, schema=renamed)) == 4


def test_missing_categories_error(s: pd.Series) -> None:
    with pytest.raises(pandas_dp.MissingBoundsError, match="categories=") as info:
        s.dp.value_counts(epsilon=1.0)
    assert "region" in str(info.value)


@pytest.mark.parametrize("cats", [[], "NS", ["N", "N"]])
def test_bad_categories(s: pd.Series, cats: object) -> None:
    with pytest.raises(ValueError):
        s.dp.value_counts(epsilon=1.0, categories=cats)


def test_other_label_must_be_new(s: pd.Series) -> None:
    with pytest.raises(ValueError, match="other"):
        s.dp.value_counts(epsilon=1.0, categories=CATS, other="N")


@pytest.mark.parametrize("proportions", [False, True])
def test_raise_mode_validates_categories(s: pd.Series, proportions: bool) -> None:
    """out_of_bounds="raise" checks the declaration after the charge (not DP-safe)."""
    bad = pd.concat([s, pd.Series(["X"], name="region")], ignore_index=True)
    release = bad.dp.proportions if proportions else bad.dp.value_counts
    budget = pandas_dp.PrivacyBudget(5.0)
    with pytest.raises(ValueError, match=r"out_of_bounds='raise'.*already charged"):
        release(epsilon=1.0, categories=CATS, out_of_bounds="raise", budget=budget)
    assert budget.spent[0] == pytest.approx(1.0)
    good = s.dp.proportions if proportions else s.dp.value_counts
    ok = good(epsilon=1.0, categories=CATS, out_of_bounds="raise", random_state=0)
    assert len(ok) == 4


@pytest.mark.parametrize("bad", [[1, 2], Decimal("sNaN")], ids=["list", "sNaN"])
@pytest.mark.parametrize("other", [None, "other"])
@pytest.mark.parametrize("dropna", [True, False])
def test_unhashable_value_goes_to_other_or_is_dropped(
    bad: object, other: str | None, dropna: bool
) -> None:
    """A value that cannot be hashed or compared raises nothing after the charge.

    It lands in ``other`` if asked for, else it is dropped; the result (index,
    dtype, metadata) is that of the frame without it, and with the same
    random_state the same noise is drawn, so only the ``other`` bucket moves, by 1.
    """
    clean = ["a"] * 40 + ["b"] * 25 + ["zz"] * 20 + [None] * 5
    base = pd.Series(clean, dtype=object, name="g")
    with_bad = pd.Series([*clean[:30], bad, *clean[30:]], dtype=object, name="g")
    cats = ["a", "b", "c"]
    kw = {"categories": cats, "other": other, "dropna": dropna, "sort": False}

    def release(data: pd.Series, proportions: bool) -> tuple[pd.Series, pandas_dp.PrivacyBudget]:
        budget = pandas_dp.PrivacyBudget(2.0)
        fn = data.dp.proportions if proportions else data.dp.value_counts
        return fn(epsilon=1.0, budget=budget, random_state=5, **kw), budget

    for proportions in (False, True):
        got, spent = release(with_bad, proportions)
        want, _ = release(base, proportions)
        assert spent.spent[0] == 1.0 and len(spent.ledger) == 1
        pd.testing.assert_index_equal(got.index, want.index)
        assert got.dtype == want.dtype and got.name == want.name
        g, w = got.attrs["dp"], want.attrs["dp"]
        pd.testing.assert_series_equal(g.scale, w.scale)
        pd.testing.assert_series_equal(g.sensitivity, w.sensitivity)
        assert g.details == w.details and g.output_bounds == w.output_bounds
        if other is None:  # dropped: the very same release
            pd.testing.assert_series_equal(got, want)
            pd.testing.assert_frame_equal(g.interval(0.1), w.interval(0.1))
        elif not proportions:  # counted in "other", nothing else moves
            assert got["other"] == want["other"] + 1
            pd.testing.assert_series_equal(got.drop("other"), want.drop("other"))
        else:
            assert got["other"] > want["other"] and math.isclose(got.sum(), 1.0)


# --------------------------------------------------------------------------- proportions


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("via", ["proportions", "counts"])
@pytest.mark.parametrize("bounding", ["bit", "truncated", "none"])
def test_proportions_sum_to_one(
    s: pd.Series, method: str, via: str, bounding: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    kwargs = {"categories": CATS, "method": method, "via": via, "bounding": bounding}
    if (method, via) in ADD_REMOVE:
        p = s.dp.proportions(epsilon=0.5, random_state=1, **kwargs)
        meta = p.attrs["dp"]
        assert meta.neighbouring == "add_remove" and meta.n is None
        assert meta.details["denominator"] == "the noisy total of the buckets"
    else:
        # dividing by the frame's length needs it public: refused before the charge
        # and before the data is read under the default add_remove
        budget = pandas_dp.PrivacyBudget(1.0)
        with monkeypatch.context() as m:
            _no_data_read(m)
            with pytest.raises(ValueError, match="neighbouring='substitute'"):
                s.dp.proportions(epsilon=0.5, budget=budget, **kwargs)
        assert budget.spent[0] == 0.0 and len(budget.ledger) == 0
        p = s.dp.proportions(epsilon=0.5, neighbouring="substitute", random_state=1, **kwargs)
        meta = p.attrs["dp"]
        assert meta.neighbouring == "substitute" and meta.n == len(s)
        assert meta.details["denominator"] == f"n = {len(s)} (public)"
    assert list(p.index) == CATS and p.name == "proportion"
    assert ((p >= 0) & (p <= 1)).all() and math.isclose(p.sum(), 1.0, abs_tol=1e-12)
    assert meta.details["method"] == method and meta.details["via"] == via
    iv = meta.interval(0.05)
    assert ((iv["lower"] >= 0) & (iv["upper"] <= 1) & (iv["lower"] <= iv["upper"])).all()
    json.dumps(meta.to_dict())


@pytest.mark.parametrize("method", METHODS)
def test_proportions_accurate_with_large_epsilon(s: pd.Series, method: str) -> None:
    rel = "add_remove" if (method, "counts") in ADD_REMOVE else "substitute"
    p = s.dp.proportions(
        epsilon=1e5, categories=CATS, method=method, neighbouring=rel, random_state=0
    )
    exact = s.value_counts(normalize=True).reindex(CATS, fill_value=0.0)
    np.testing.assert_allclose(p.to_numpy(), exact.to_numpy(), atol=1e-3)


def test_proportions_add_remove_are_shares_of_the_declared_buckets(s: pd.Series) -> None:
    """Under add_remove the denominator is the (noisy) total of the buckets, not len(df).

    Rows outside the declared buckets (undeclared values, missing values) do not
    dilute the shares, unlike the old division by the public ``n``.
    """
    extra = pd.Series(["X"] * 100 + [None] * 50, name="region", dtype=object)
    data = pd.concat([s.astype(object), extra], ignore_index=True)
    exact = s.value_counts(normalize=True).reindex(CATS, fill_value=0.0)
    for method in ("project", "rescale"):
        p = data.dp.proportions(epsilon=1e5, categories=CATS, method=method, random_state=0)
        np.testing.assert_allclose(p.to_numpy(), exact.to_numpy(), atol=1e-3)


def test_proportions_via_counts_report_count_units(s: pd.Series) -> None:
    """via="counts": sensitivity and scale are those of the noised counts, and say so.

    With the same random_state the shares are exactly the bounded value_counts over
    their total: the noise was drawn on counts, at the scale the metadata states.
    """
    for rel, l1 in (("add_remove", 1.0), ("substitute", 2.0)):
        methods = ("project", "rescale") if rel == "add_remove" else ("rescale",)
        vc = s.dp.value_counts(
            epsilon=0.5, categories=CATS, sort=False, neighbouring=rel, random_state=11
        )
        for method in methods:
            p = s.dp.proportions(
                epsilon=0.5, categories=CATS, method=method, neighbouring=rel, random_state=11
            )
            meta = p.attrs["dp"]
            assert meta.details["via"] == "counts"
            assert meta.details["noised"] == "rows per bucket (integer, discrete noise)"
            assert meta.details["noised"] == vc.attrs["dp"].details["noised"]
            assert list(meta.sensitivity.index) == CATS and (meta.sensitivity == 1.0).all()
            assert meta.details["l1 sensitivity"] == l1
            np.testing.assert_allclose(meta.scale.to_numpy(), l1 / 0.5)
            np.testing.assert_allclose(meta.scale.to_numpy(), vc.attrs["dp"].scale.to_numpy())
            np.testing.assert_allclose(p.to_numpy(), vc.to_numpy() / vc.sum(), rtol=1e-12)
    # via="proportions" (substitute only): Liu's count / n entries, in proportion units
    n = len(s)
    liu = s.dp.proportions(
        epsilon=0.5, categories=CATS, via="proportions", neighbouring="substitute"
    ).attrs["dp"]
    assert liu.details["noised"] == "proportions count / n (Liu's direct entries)"
    np.testing.assert_allclose(liu.sensitivity.to_numpy(), 1.0 / n)
    assert liu.details["l1 sensitivity"] == pytest.approx(2.0 / n)
    # 2/n/epsilon, rounded up by the exact sampler by less than 2**-20 (relative)
    nominal = 2.0 / n / 0.5
    assert ((liu.scale >= nominal) & (liu.scale <= nominal * (1 + 2.0**-20))).all()


def test_histogram_split_matches_the_ledger(s: pd.Series) -> None:
    budget = pandas_dp.PrivacyBudget(10.0)
    releases = [
        s.dp.value_counts(epsilon=1.0, categories=CATS, budget=budget),
        s.dp.proportions(epsilon=1.0, categories=CATS, budget=budget),
        s.dp.proportions(
            epsilon=1.0,
            categories=CATS,
            via="proportions",
            neighbouring="substitute",
            budget=budget,
        ),
    ]
    for i, r in enumerate(releases):
        assert budget.ledger.loc[i, "split"] == r.attrs["dp"].details["budget_split"]
    assert releases[0].attrs["dp"].details["budget_split"] == {"region: category_counts": 1.0}
    assert releases[1].attrs["dp"].details["budget_split"] == {"region: category_counts": 1.0}
    assert releases[2].attrs["dp"].details["budget_split"] == {"region: proportions_direct": 1.0}


def test_hierarchical_charges_per_level(s: pd.Series) -> None:
    kw = {"epsilon": 1.0, "categories": CATS, "neighbouring": "substitute", "random_state": 0}
    flat = s.dp.proportions(method="project", **kw)
    tree = s.dp.proportions(method="hierarchical", **kw)
    assert tree.attrs["dp"].details["noised levels"] == 2
    assert tree.attrs["dp"].scale.iloc[0] == pytest.approx(2 * flat.attrs["dp"].scale.iloc[0])


def test_value_counts_normalize_gives_proportions(s: pd.Series) -> None:
    p = s.dp.value_counts(normalize=True, epsilon=1.0, categories=CATS, random_state=0)
    assert math.isclose(p.sum(), 1.0) and p.attrs["dp"].statistic == "proportions"


def test_one_category_needs_no_noise(s: pd.Series) -> None:
    budget = pandas_dp.PrivacyBudget(1.0)
    p = pd.Series(["a"] * 10).dp.proportions(epsilon=1.0, categories=["a"], budget=budget)
    assert p.tolist() == [1.0] and budget.spent[0] == 0.0


def test_proportions_bad_method(s: pd.Series) -> None:
    with pytest.raises(ValueError, match="method"):
        s.dp.proportions(epsilon=1.0, categories=CATS, method="softmax")
    with pytest.raises(ValueError, match="via"):
        s.dp.proportions(epsilon=1.0, categories=CATS, via="bits")


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    values=st.lists(st.sampled_from(["a", "b", "c", None, "zz"]), min_size=1, max_size=30),
    k=st.integers(1, 6),
    method=st.sampled_from(METHODS),
    via=st.sampled_from(["proportions", "counts"]),
    bounding=st.sampled_from(["bit", "truncated", "none"]),
    epsilon=st.floats(1e-3, 1e3),
    neighbouring=st.sampled_from(["substitute", "add_remove"]),
    seed=st.integers(0, 2**31),
)
def test_proportions_properties(
    values: list,
    k: int,
    method: str,
    via: str,
    bounding: str,
    epsilon: float,
    neighbouring: str,
    seed: int,
) -> None:
    cats = ["a", "b", "c", "d", "e", "f"][:k]

    def release() -> pd.Series:
        return pd.Series(values, dtype=object).dp.proportions(
            epsilon=epsilon,
            categories=cats,
            method=method,
            via=via,
            bounding=bounding,
            neighbouring=neighbouring,
            random_state=seed,
        )

    if neighbouring == "add_remove" and (method, via) not in ADD_REMOVE:
        with pytest.raises(ValueError, match="private under neighbouring='add_remove'"):
            release()
        return
    p = release()
    assert len(p) == k
    assert ((p >= 0) & (p <= 1)).all() and math.isclose(p.sum(), 1.0, abs_tol=1e-9)


# --------------------------------------------------------------------------- workloads


def test_counts_workload() -> None:
    df = pd.DataFrame({"age": np.arange(100) % 60, "smoker": np.arange(100) % 3 == 0})
    queries = {
        "smokers": df.smoker,
        "old smokers": "smoker and age > 30",
        "everyone": np.ones(100, dtype=bool),
    }
    exact = pd.Series(
        {"smokers": 34, "old smokers": int((df.smoker & (df.age > 30)).sum()), "everyone": 100}
    )
    c = df.dp.counts(queries, epsilon=1e4, random_state=0)
    pd.testing.assert_series_equal(c, exact, check_names=False)
    noisy = df.dp.counts(queries, epsilon=1.0, random_state=0)
    meta = noisy.attrs["dp"]
    assert meta.scale.iloc[0] == pytest.approx(3.0)  # L1 sensitivity k = 3
    assert meta.details["l1 sensitivity"] == 3.0
    per, sim = meta.interval(0.05), meta.interval(0.05, simultaneous=True)
    assert (sim["upper"] - sim["lower"] > per["upper"] - per["lower"]).all()
    frac = df.dp.counts(queries, epsilon=1e4, normalize=True, random_state=0)
    assert frac["everyone"] == pytest.approx(1.0) and frac.dtype == np.float64


def test_counts_errors() -> None:
    df = pd.DataFrame({"age": [1, 2, 3]})
    with pytest.raises(ValueError, match="aligned"):
        df.dp.counts({"q": pd.Series([True, False, True], index=[5, 6, 7])}, epsilon=1.0)
    with pytest.raises(ValueError, match="length"):
        df.dp.counts({"q": [True, False]}, epsilon=1.0)
    with pytest.raises(TypeError, match="boolean"):
        df.dp.counts({"q": df.age}, epsilon=1.0)
    with pytest.raises(ValueError, match="empty"):
        df.dp.counts({}, epsilon=1.0)


@pytest.mark.slow
def test_workload_simultaneous_coverage() -> None:
    """All k counts inside the simultaneous 90 % band at least 90 % of the time.

    2,000 releases; a one-sided binomial test at false-alarm rate 1e-4 allows down to
    about 87.2 %.
    """
    df = pd.DataFrame({"x": np.arange(200)})
    queries = {f"x<{t}": df.x < t for t in (10, 50, 100, 150, 199)}
    exact = np.array([10, 50, 100, 150, 199])
    hits = 0
    for seed in range(2000):
        r = df.dp.counts(queries, epsilon=0.5, random_state=seed)
        iv = r.attrs["dp"].interval(0.1, simultaneous=True)
        hits += bool(((iv["lower"] <= exact) & (exact <= iv["upper"])).all())
    assert hits / 2000 >= 0.872


# --------------------------------------------------------------------------- describe


def test_describe_splits_the_budget() -> None:
    from pandas_dp.datasets import load_survey, survey_schema

    df = load_survey()
    budget = pandas_dp.PrivacyBudget(epsilon=3.0)
    d = df.dp.describe(
        ["age", "income", "region"],
        epsilon=3.0,
        schema=survey_schema(),
        budget=budget,
        random_state=0,
    )
    assert list(d.columns) == ["age", "income", "region"]
    assert d.loc["share N":, "region"].sum() == pytest.approx(1.0)
    split = d.attrs["dp"].details["budget_split"]
    # per numeric column: bound sums (count and centred sum), centred squares, the
    # percentiles' selection and its interval counts; one histogram for the
    # categorical column
    assert len(split) == 9 and sum(split.values()) == pytest.approx(3.0)
    assert {"age: grid_selection", "income: grid_selection", "region: category_counts"} <= set(
        split
    )
    assert budget.spent[0] == pytest.approx(3.0) and len(budget.ledger) == 1
    assert budget.ledger.loc[0, "split"] == split
    with pytest.raises(pandas_dp.BudgetExceededError):
        df.dp.describe(["age"], epsilon=0.1, schema=survey_schema(), budget=budget)
    json.dumps(d.attrs["dp"].to_dict())


def test_describe_default_columns_skips_undeclared() -> None:
    """columns=None describes the declared columns and lists the others in details."""
    from pandas_dp.datasets import load_survey, survey_schema

    df = load_survey()
    df["note"] = "free text"  # no declaration anywhere: skipped, never read
    d = df.dp.describe(epsilon=5.0, schema=survey_schema(), random_state=1)
    assert list(d.columns)[:3] == ["age", "income", "hours_per_week"]
    assert "region" in d.columns and "note" not in d.columns
    assert "note" in d.attrs["dp"].details["undeclared columns (not described)"]
    with pytest.raises(pandas_dp.MissingBoundsError, match="note"):
        df.dp.describe(["age", "note"], epsilon=5.0, schema=survey_schema())


def test_describe_default_columns_include_booleans() -> None:
    from pandas_dp.datasets import load_survey, survey_schema

    d = load_survey().dp.describe(epsilon=5.0, schema=survey_schema(), random_state=1)
    assert list(d.columns) == ["age", "income", "hours_per_week", "region", "smoker"]


@pytest.mark.parametrize(
    ("queries", "fix"),
    [
        (["age > 1"], "{q: q for q in queries}"),
        ("age > 1", "{'age > 1': 'age > 1'}"),
        (pd.Series([True, False, True]), "{'over 30': 'age > 30'"),
    ],
)
def test_counts_needs_a_dict_of_labelled_queries(queries: object, fix: str) -> None:
    df = pd.DataFrame({"age": [1, 2, 3]})
    budget = pandas_dp.PrivacyBudget(epsilon=10.0)
    with budget, pytest.raises(TypeError, match=r"counts takes a dict \{label: query\}") as err:
        df.dp.counts(queries, epsilon=1.0)  # type: ignore[arg-type]
    assert fix in str(err.value) and "boolean mask" in str(err.value)
    assert budget.spent == (0.0, 0.0) and budget.ledger.empty


MIXED = pd.DataFrame(
    {
        "k": pd.Series(["a", "b", None] * 20, dtype=object),
        "f": [1.0, np.nan, 2.0] * 20,
        "zip": [2139, 2140, 2141] * 20,
    }
)


@pytest.mark.parametrize(
    "call",
    [
        lambda b: MIXED["k"].dp.value_counts(categories=["a", "b", None], **b),
        lambda b: MIXED["k"].dp.value_counts(categories=["a", pd.NA], dropna=False, **b),
        lambda b: MIXED["f"].dp.proportions(categories=[1.0, np.nan], **b),
        lambda b: MIXED.dp.value_counts("k", categories=["a", None], **b),
        lambda b: MIXED.dp.value_counts(
            ["k", "zip"], categories={"k": ["a", None], "zip": [2139]}, **b
        ),
        lambda b: MIXED["k"].dp.value_counts(
            schema=pa.DataFrameSchema(
                {"k": pa.Column(str, pa.Check.isin(["a", "b", None]), nullable=True)}
            ),
            **b,
        ),
        lambda b: MIXED[["k", "f"]].dp.describe(
            bounds={"f": (0, 3)}, categories={"k": ["a", None]}, **b
        ),
    ],
)
def test_a_missing_declared_category_is_refused_before_the_charge(call: object) -> None:
    """A declared None/NaN category never matches the missing values (they are
    counted only by dropna=False): it would be released as an empty bucket."""
    budget = pandas_dp.PrivacyBudget(epsilon=10.0)
    with pytest.raises(ValueError) as err:
        call({"epsilon": 1.0, "budget": budget})  # type: ignore[operator]
    message = str(err.value)
    for fragment in ("missing value", "skipped", "dropna=False", "fillna"):
        assert fragment in message, message
    assert budget.spent == (0.0, 0.0) and budget.ledger.empty


def test_missing_values_are_counted_by_dropna_false() -> None:
    """The way the refusal points to: missing values in their own bucket."""
    out = MIXED["k"].dp.value_counts(
        epsilon=50.0, categories=["a", "b"], dropna=False, random_state=0
    )
    assert len(out) == 3 and out.iloc[2] == pytest.approx(20, abs=2)


@pytest.mark.parametrize("method", ["value_counts", "proportions"])
def test_categories_of_another_type_than_the_column_are_refused(method: str) -> None:
    budget = pandas_dp.PrivacyBudget(epsilon=10.0)
    with pytest.raises(ValueError, match="no row can ever match") as err:
        getattr(MIXED["zip"].dp, method)(epsilon=1.0, categories=["02139", "02140"], budget=budget)
    for fragment in ("'zip'", "int64", "['02139', '02140']", "[2139, 2140]", "astype(str)"):
        assert fragment in str(err.value), str(err.value)
    assert budget.spent == (0.0, 0.0) and budget.ledger.empty
    same = getattr(MIXED["zip"].dp, method)(epsilon=50.0, categories=[2139.0, 2140], random_state=0)
    assert len(same) == 2


@pytest.mark.parametrize(
    "kw",
    [{}, {"normalize": True}, {"dropna": False}, {"sort": False}],
    ids=["counts", "normalize", "dropna", "unsorted"],
)
def test_a_categorical_column_is_indexed_by_its_dtype_like_pandas(kw: dict[str, Any]) -> None:
    """pandas indexes a categorical's value_counts by a CategoricalIndex of its dtype."""
    dtype = pd.CategoricalDtype(["lo", "mid", "hi"], ordered=True)
    s = pd.Series(["lo", "hi", None, "lo"] * 50, dtype=dtype, name="level")
    out = s.dp.value_counts(epsilon=50.0, categories="dtype", random_state=0, **kw)
    exact = s.value_counts(**kw)
    assert isinstance(out.index, pd.CategoricalIndex) and out.index.dtype == dtype
    assert set(out.index.astype(object)) == set(exact.index.astype(object))
    frame = pd.DataFrame({"g": ["x", "y"] * 100, "level": s})
    cells = frame.dp.groupby("g", keys=["x", "y"]).value_counts(
        "level", epsilon=50.0, categories="dtype", random_state=0
    )
    assert cells.index.levels[1].dtype == dtype
    other = s.dp.value_counts(epsilon=50.0, categories=["lo"], other="rest", random_state=0)
    assert not isinstance(other.index, pd.CategoricalIndex)  # 'rest' is not of the dtype


@pytest.mark.parametrize("release", ["value_counts", "proportions", "grouped"])
def test_the_index_never_carries_the_columns_own_category_list(release: str) -> None:
    """``astype("category")`` reads the categories off the data: a value held by one
    person must not reach the result through the index's dtype (only the declared
    categories do), so the two neighbours' indexes are equal."""

    def released(with_person: bool) -> pd.Index:
        values = ["N"] * 300 + ["S"] * 200 + (["secret"] if with_person else [])
        frame = pd.DataFrame({"k": pd.Series(values).astype("category"), "g": "a"})
        kw: dict[str, Any] = {"epsilon": 1.0, "categories": ["N", "S"], "random_state": 0}
        if release == "grouped":
            out = frame.dp.groupby("g", keys=["a"]).value_counts("k", **kw)
            return out.index.levels[1]
        return getattr(frame["k"].dp, release)(**kw).index

    without, with_person = released(False), released(True)
    assert list(with_person.categories) == ["N", "S"]
    assert without.dtype == with_person.dtype


def test_a_mask_of_the_wrong_length_does_not_print_the_private_row_count() -> None:
    frame = pd.DataFrame({"x": np.arange(1234.0)})
    with pytest.raises(ValueError, match="one value per row") as caught:
        frame.dp.counts({"q": np.ones(10, dtype=bool)}, epsilon=1.0)
    assert "1234" not in str(caught.value)


@pytest.mark.parametrize(
    ("values", "dtype", "cats"),
    [
        ([1, 2, 3, None], "Int64", [1, 2, 3]),
        ([1.0, 2.0, 3.0, None], "float64", [1, 2, 3]),
        ([True, False, None, True], "boolean", [True, False]),
    ],
)
@pytest.mark.parametrize("dropna", [True, False])
def test_value_counts_index_has_the_columns_dtype_like_pandas(
    values: list[Any], dtype: str, cats: list[Any], dropna: bool
) -> None:
    s = pd.Series(values * 25, dtype=dtype, name="v")
    out = s.dp.value_counts(epsilon=50.0, categories=cats, dropna=dropna, random_state=0)
    exact = s.value_counts(dropna=dropna)
    assert out.index.dtype == exact.index.dtype
    assert set(out.index.dropna()) == set(exact.index.dropna())
