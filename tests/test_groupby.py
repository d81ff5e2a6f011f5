"""``df.dp.groupby``: pandas' shapes, every declared key, private group sizes, one charge."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pytest

import pandas_dp
from pandas_dp import PrivacyBudget
from pandas_dp.errors import MissingBoundsError


def _frame(n: int = 4000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "sex": rng.choice(["f", "m"], n),
            "region": rng.choice(["N", "S", "E"], n),
            "smoker": rng.random(n) < 0.3,
            "age": rng.uniform(18, 90, n),
            "income": rng.uniform(0, 100, n),
        }
    )


DF = _frame()
BIG = dict(epsilon=50.0, random_state=0)


def test_mean_is_a_series_indexed_by_every_declared_key() -> None:
    out = DF.dp.groupby("region", keys=["S", "N", "E", "W"]).mean("age", bounds=(0, 100), **BIG)
    assert isinstance(out, pd.Series)
    assert list(out.index) == ["E", "N", "S", "W"]  # sorted, 'W' absent from the data
    assert out.index.name == "region" and out.name == "age"
    exact = DF.groupby("region")["age"].mean()
    for key in ("E", "N", "S"):
        assert abs(out[key] - exact[key]) < 1.0
    assert 0.0 <= out["W"] <= 100.0  # noise only, inside the bounds


def test_several_columns_give_a_frame() -> None:
    out = DF.dp.groupby("sex", keys=["f", "m"]).mean(
        ["age", "income"], bounds={"age": (0, 100), "income": (0, 100)}, **BIG
    )
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == ["age", "income"] and list(out.index) == ["f", "m"]
    exact = DF.groupby("sex")[["age", "income"]].mean()
    assert np.all(np.abs(out.to_numpy() - exact.to_numpy()) < 1.0)


def test_count_without_columns_counts_every_column_like_pandas() -> None:
    """``groupby(...).count()`` counts every non-key column, of any dtype."""
    frame = DF.assign(note=np.where(DF["age"] < 30, None, "x"))
    out = frame.dp.groupby("sex", keys=["f", "m"]).count(**BIG)
    exact = frame.groupby("sex").count()
    assert list(out.columns) == list(exact.columns)  # region, smoker, note included
    assert all(str(t) == "int64" for t in out.dtypes)
    assert np.all(np.abs(out.to_numpy() - exact.to_numpy()) < 10)


@pytest.mark.parametrize("statistic", ["sum", "var", "std", "count"])
def test_other_statistics_track_pandas(statistic: str) -> None:
    g = DF.dp.groupby("region", keys=["E", "N", "S"])
    kwargs = {} if statistic == "count" else {"bounds": (0, 100)}
    out = getattr(g, statistic)("income", **kwargs, **BIG)
    exact = getattr(DF.groupby("region")["income"], statistic)()
    rel = np.abs(out.to_numpy() - exact.to_numpy()) / np.abs(exact.to_numpy())
    assert np.all(rel < 0.05), (out, exact)
    if statistic == "count":
        assert str(out.dtype) == "int64"


def test_len_and_boolean_keys() -> None:
    out = DF.dp.groupby("smoker").len(**BIG)
    assert list(out.index) == [False, True] and str(out.dtype) == "int64"
    exact = DF.groupby("smoker").size()
    assert np.all(np.abs(out.to_numpy() - exact.to_numpy()) < 5)


def test_two_columns_give_a_multiindex_over_the_product() -> None:
    out = DF.dp.groupby(["sex", "smoker"], keys={"sex": ["f", "m"]}).mean(
        "age", bounds=(0, 100), **BIG
    )
    assert isinstance(out.index, pd.MultiIndex)
    assert list(out.index) == [("f", False), ("f", True), ("m", False), ("m", True)]


def test_keys_from_a_schema() -> None:
    schema = pa.DataFrameSchema(
        {
            "region": pa.Column(str, pa.Check.isin(["N", "S", "E"])),
            "age": pa.Column(float, pa.Check.in_range(0, 100)),
        }
    )
    out = DF.dp.groupby("region").mean("age", schema=schema, **BIG)
    assert list(out.index) == ["E", "N", "S"]


def test_undeclared_keys_are_dropped_or_counted_in_other() -> None:
    g = DF.dp.groupby("region", keys=["N"], other="rest")
    out = g.len(**BIG)
    assert list(out.index) == ["N", "rest"]
    exact_rest = int((DF.region != "N").sum())
    assert abs(int(out["rest"]) - exact_rest) < 5
    dropped = DF.dp.groupby("region", keys=["N"]).len(**BIG)
    assert list(dropped.index) == ["N"]


def test_agg_shares_measurements_and_has_pandas_columns() -> None:
    g = DF.dp.groupby("sex", keys=["f", "m"])
    out = g.agg({"age": ["mean", "std"], "income": "mean"}, bounds=(0, 100), **BIG)
    assert list(out.columns) == [("age", "mean"), ("age", "std"), ("income", "mean")]
    split = out.attrs["dp"].details["budget_split"]
    # the bound sums and centred squares for age (its mean reads the bound sums);
    # the bound sums for income (a mean alone)
    assert sorted(split) == sorted(
        ["age: bound_sums", "age: centred_squares", "income: bound_sums"]
    )
    flat = g.agg({"age": "mean", "income": "std"}, bounds=(0, 100), **BIG)
    assert list(flat.columns) == ["age", "income"]


def test_value_counts_and_proportions_per_group() -> None:
    g = DF.dp.groupby("sex", keys=["f", "m"])
    counts = g.value_counts("region", categories=["N", "S", "E", "W"], **BIG)
    assert list(counts.index.names) == ["sex", "region"]
    assert len(counts) == 8 and counts.name == "count"
    shares = g.proportions("region", categories=["N", "S", "E", "W"], **BIG)
    sums = shares.groupby(level="sex").sum()
    assert np.allclose(sums.to_numpy(), 1.0, atol=1e-12)
    exact = DF.groupby("sex")["region"].value_counts(normalize=True)
    assert abs(shares[("f", "N")] - exact[("f", "N")]) < 0.02


def test_contingency_table_over_declared_domains() -> None:
    out = DF.dp.value_counts(
        ["sex", "region"],
        categories={"sex": ["f", "m"], "region": ["N", "S", "E", "W"]},
        sort=False,
        **BIG,
    )
    assert len(out) == 8 and out.name == "count"
    exact = DF.value_counts(["sex", "region"])
    assert abs(int(out[("f", "N")]) - int(exact[("f", "N")])) < 5


def test_interval_is_a_frame_indexed_by_key() -> None:
    out = DF.dp.groupby("region", keys=["E", "N", "S"]).mean("age", bounds=(0, 100), **BIG)
    iv = out.attrs["dp"].interval(0.05)
    assert list(iv.index) == ["E", "N", "S"] and list(iv.columns) == ["lower", "upper"]
    assert np.all(iv["lower"] <= out) and np.all(out <= iv["upper"])


def test_groups_compose_in_parallel_with_one_row_per_unit() -> None:
    """Each group gets the whole epsilon: its scale equals the ungrouped one."""
    grouped = DF.dp.groupby("region", keys=["E", "N", "S"]).sum(
        "income", epsilon=1.0, bounds=(0, 100), random_state=0
    )
    whole = DF.dp.sum("income", epsilon=1.0, bounds=(0, 100), random_state=0)
    assert math.isclose(
        float(grouped.attrs["dp"].scale.max()), float(whole.attrs["dp"].scale.max())
    )


def test_one_charge_for_the_whole_grouped_release() -> None:
    budget = PrivacyBudget(epsilon=1.0)
    DF.dp.groupby("region", keys=["E", "N", "S"]).mean(
        "age", epsilon=0.6, bounds=(0, 100), budget=budget, random_state=0
    )
    assert budget.spent[0] == pytest.approx(0.6)
    assert len(budget.ledger) == 1


def test_errors_come_before_the_charge() -> None:
    budget = PrivacyBudget(epsilon=1.0)
    g = DF.dp.groupby("sex")  # no keys declared for a string column
    with pytest.raises(MissingBoundsError):
        g.mean("age", epsilon=0.5, bounds=(0, 100), budget=budget)
    with pytest.raises(KeyError):
        DF.dp.groupby("nope", keys=["a"]).len(epsilon=0.5, budget=budget)
    with pytest.raises(ValueError, match="group-by column"):
        DF.dp.groupby("sex", keys=["f", "m"]).value_counts(
            "sex", epsilon=0.5, categories=["f", "m"], budget=budget
        )
    assert budget.spent[0] == 0.0


def test_metadata_never_holds_group_sizes() -> None:
    """Frames whose group sizes differ give the same metadata (add/remove)."""
    small = pd.DataFrame({"k": ["a"] * 10 + ["b"] * 5, "x": np.linspace(0, 1, 15)})
    large = pd.DataFrame({"k": ["a"] * 11 + ["b"] * 5, "x": np.linspace(0, 1, 16)})
    metas = []
    for frame in (small, large):
        out = frame.dp.groupby("k", keys=["a", "b"]).mean(
            "x", epsilon=1.0, bounds=(0, 1), random_state=0
        )
        record = out.attrs["dp"].to_dict()
        record.pop("details")["budget_split"]
        metas.append(record)
    assert metas[0] == metas[1]


def test_bound_accessor_passes_defaults_to_the_groupby() -> None:
    dp = DF.dp(bounds=(0, 100), random_state=0)
    out = dp.groupby("region", keys=["E", "N", "S"]).mean("age", epsilon=5.0)
    assert list(out.index) == ["E", "N", "S"]


def test_junk_in_the_key_column_never_raises_after_the_charge() -> None:
    frame = pd.DataFrame(
        {"k": ["a", None, float("nan"), [1], "b", 3], "x": [1.0, 2.0, None, np.inf, 5.0, 6.0]}
    )
    out = frame.dp.groupby("k", keys=["a", "b"]).mean(
        "x", epsilon=1.0, bounds=(0, 10), random_state=0
    )
    assert list(out.index) == ["a", "b"]


@pytest.mark.parametrize("value", [0.0, 5e307, 1e308, -1.7e308, 1.7e308, np.inf, np.nan])
def test_values_at_huge_bounds_never_warn_after_the_charge(value: float) -> None:
    """A grouped sum over bounds at the float limit: no value warns (nor raises under
    ``-W error``) once the budget is charged."""
    frame = pd.DataFrame({"k": ["a"] * 5, "x": [value] * 5})
    budget = PrivacyBudget(epsilon=10.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = frame.dp.groupby("k", keys=["a"]).sum(
            "x", epsilon=1.0, bounds=(0, 1e308), budget=budget, random_state=1
        )
    assert list(out.index) == ["a"]
    assert budget.spent[0] == pytest.approx(1.0)


KEYED = pd.DataFrame(
    {
        "k": pd.Series(["a", "b", None] * 10, dtype=object),
        "zip": [2139, 2140, 2141] * 10,
        "s": pd.Series(["1", "2", "3"] * 10, dtype="string"),
        "flag": [True, False, True] * 10,
        "x": [1.0, 5.0, 9.0] * 10,
    }
)
IS_NULLABLE_A_B = pa.DataFrameSchema(
    {"k": pa.Column(str, pa.Check.isin(["a", "b", None]), nullable=True)}
)


@pytest.mark.parametrize(
    ("call", "fragments"),
    [
        (lambda b: KEYED.dp.groupby("k", keys=["a", "b", None]).len(**b), ["None"]),
        (
            lambda b: KEYED.dp.groupby("k", keys=["a", np.nan]).mean("x", bounds=(0, 10), **b),
            ["nan"],
        ),
        (lambda b: KEYED.dp.groupby("k", keys=pd.Index(["a", pd.NA])).len(**b), ["declare"]),
        (lambda b: KEYED.dp.groupby(["k", "flag"], keys={"k": ["a", None]}).len(**b), ["None"]),
        (
            lambda b: KEYED.dp.groupby(["k", "flag"], keys=[("a", True), (None, False)]).len(**b),
            ["None"],
        ),
        (lambda b: KEYED.dp.groupby("k").len(schema=IS_NULLABLE_A_B, **b), ["schema", "None"]),
    ],
)
def test_a_missing_declared_key_is_refused_before_the_charge(
    call: Any, fragments: list[str]
) -> None:
    """A declared None/NaN key would never match the missing keys (they are skipped,
    like pandas' dropna=True): its group would be released empty, noise only."""
    budget = PrivacyBudget(epsilon=10.0)
    with pytest.raises(ValueError) as err:
        call({"epsilon": 1.0, "budget": budget})
    message = str(err.value)
    for fragment in [*fragments, "'k'", "missing value", "dropna=False", "fillna"]:
        assert fragment in message, message
    assert budget.spent == (0.0, 0.0) and budget.ledger.empty


@pytest.mark.parametrize(
    ("column", "keys", "fragments"),
    [
        ("zip", ["02139", "02140"], ["'zip'", "int64", "['02139', '02140']", "[2139, 2140]"]),
        ("zip", [2139, "02140"], ["'zip'", "int64", "['02140']", "astype(str)"]),
        ("s", [1, 2], ["'s'", "string", "[1, 2]", "['1', '2']", "to_numeric"]),
        ("flag", [0, 1], ["'flag'", "bool", "[False, True]"]),
    ],
)
def test_keys_no_value_of_the_column_dtype_can_equal_are_refused(
    column: str, keys: list[Any], fragments: list[str]
) -> None:
    """The column's dtype is public: a key of another type would silently count 0."""
    budget = PrivacyBudget(epsilon=10.0)
    with pytest.raises(ValueError, match="no row can ever match") as err:
        KEYED.dp.groupby(column, keys=keys).len(epsilon=1.0, budget=budget)
    for fragment in fragments:
        assert fragment in str(err.value), str(err.value)
    assert budget.spent == (0.0, 0.0) and budget.ledger.empty


def test_keys_pandas_matches_across_number_types_are_kept() -> None:
    """1 == 1.0 == True: a float or boolean key on an integer column matches (as in
    pandas), and an object column may hold anything."""
    out = KEYED.dp.groupby("zip", keys=[2139.0, np.int8(100), 2140]).len(**BIG)
    assert out.loc[2139] == pytest.approx(10, abs=1) and out.loc[2140] == pytest.approx(10, abs=1)
    mixed = KEYED.dp.groupby("k", keys=["a", 1]).len(**BIG)
    assert list(mixed.index) == ["a", 1]


def test_private_keys_release_frequent_keys_only() -> None:
    rng = np.random.default_rng(1)
    keys = np.concatenate([np.repeat(["big1", "big2"], 500), [f"solo{i}" for i in range(50)]])
    frame = pd.DataFrame({"k": keys, "x": rng.uniform(0, 1, len(keys))})
    out = frame.dp.groupby("k", keys="private", delta=1e-6).len(epsilon=1.0, random_state=0)
    assert list(out.index) == ["big1", "big2"] and out.index.name == "k"
    assert np.all(np.abs(out.to_numpy() - 500) < 30)
    details = out.attrs["dp"].details
    assert details["keys"] == "private: partition selection"
    means = frame.dp.groupby("k", keys="private", delta=1e-6).mean(
        "x", epsilon=1.0, bounds=(0, 1), random_state=0
    )
    assert set(means.index) <= {"big1", "big2"}


def test_private_keys_need_add_remove() -> None:
    with pytest.raises(ValueError, match="add_remove"):
        DF.dp.groupby("sex", keys="private", delta=1e-6).len(epsilon=1.0, neighbouring="substitute")


def test_privacy_unit_truncates_and_scales_sensitivity() -> None:
    """One person with 200 rows counts at most k times, and the noise covers k rows."""
    frame = pd.DataFrame(
        {
            "pid": ["heavy"] * 200 + [f"p{i}" for i in range(100)],
            "x": np.ones(300),
        }
    )
    n = frame.dp.len(epsilon=100.0, privacy_unit="pid", max_rows_per_unit=2, random_state=0)
    assert abs(int(n) - 102) <= 3
    plain = frame.dp.len(epsilon=1.0, random_state=0)
    unit = frame.dp.len(epsilon=1.0, privacy_unit="pid", max_rows_per_unit=2, random_state=0)
    assert float(unit.attrs["dp"].scale.max()) == pytest.approx(
        2 * float(plain.attrs["dp"].scale.max()), rel=1e-6
    )


def test_privacy_unit_needs_a_bound_and_a_column() -> None:
    with pytest.raises(ValueError, match="max_rows_per_unit"):
        DF.dp.len(epsilon=1.0, privacy_unit="sex")
    with pytest.raises(ValueError, match="privacy_unit"):
        DF.dp.len(epsilon=1.0, privacy_unit="nope", max_rows_per_unit=2)
    with pytest.raises(ValueError, match="without privacy_unit"):
        DF.dp.len(epsilon=1.0, max_rows_per_unit=2)


def test_privacy_unit_declared_in_schema_metadata() -> None:
    frame = pd.DataFrame({"pid": ["a", "a", "a", "b"], "x": [1.0, 2.0, 3.0, 4.0]})
    schema = pa.DataFrameSchema(
        {"x": pa.Column(float, pa.Check.in_range(0, 10))},
        metadata={"pandas_dp": {"privacy_unit": "pid", "max_rows_per_unit": 2}},
    )
    out = frame.dp.mean("x", epsilon=1.0, schema=schema, random_state=0)
    plain = frame.dp.mean("x", epsilon=1.0, bounds=(0, 10), random_state=0)
    assert out.attrs["dp"].sensitivity.max() > 1.9 * plain.attrs["dp"].sensitivity.max()
    assert pandas_dp is not None


@pytest.mark.parametrize(
    "call",
    [
        lambda g: g.len(epsilon=1.0, random_state=0),
        lambda g: g.count("x", epsilon=1.0, random_state=0),
        lambda g: g.sum("x", epsilon=1.0, bounds=(0, 5), random_state=0),
        lambda g: g.mean("x", epsilon=1.0, bounds=(0, 5), random_state=0),
        lambda g: g.std("x", epsilon=1.0, bounds=(0, 5), random_state=0),
        lambda g: g.agg({"x": ["mean", "var"]}, epsilon=1.0, bounds=(0, 5), random_state=0),
        lambda g: g.value_counts("c", epsilon=1.0, categories=["u", "v"], random_state=0),
        lambda g: g.proportions("c", epsilon=1.0, categories=["u", "v"], random_state=0),
    ],
)
def test_private_keys_with_no_key_kept_release_an_empty_result(call: Any) -> None:
    """Nothing may raise after the charge: no key passing the threshold is a result."""
    frame = pd.DataFrame({"k": list("abc"), "x": [1.0, 2.0, 3.0], "c": ["u", "v", "u"]})
    budget = PrivacyBudget(epsilon=2.0, delta=1e-5)
    out = call(frame.dp(budget=budget).groupby("k", keys="private", delta=1e-6))
    assert len(out) == 0
    meta = out.attrs["dp"]
    assert meta.delta == pytest.approx(1e-6)  # the selection's delta is in the record
    assert meta.details["released groups"] == 0
    assert len(meta.interval(0.05)) == 0
    meta.to_dict()
    assert budget.spent[1] == pytest.approx(1e-6)


def test_ungrouped_release_records_its_privacy_unit() -> None:
    frame = pd.DataFrame({"pid": ["a", "a", "b"], "x": [1.0, 2.0, 3.0]})
    out = frame.dp.mean(
        "x", epsilon=1.0, bounds=(0, 5), privacy_unit="pid", max_rows_per_unit=2, random_state=0
    )
    assert out.attrs["dp"].details["privacy unit"] == "pid"
    assert out.attrs["dp"].details["contribution bounds"] == {"max_rows_per_unit": 2}


def test_interval_index_keeps_the_key_name() -> None:
    out = DF.dp.groupby("region", keys=["E", "N", "S"]).len(**BIG)
    assert out.attrs["dp"].interval(0.05).index.name == "region"


def test_private_keys_order_does_not_depend_on_row_order() -> None:
    """Keys that do not compare are released in an order set by the keys alone."""
    keys = ["b", (1, 2), "a", frozenset([3])] * 300
    frame = pd.DataFrame({"k": pd.Series(keys, dtype=object), "x": np.ones(len(keys))})
    shuffled = frame.sample(frac=1.0, random_state=3)
    released = [
        list(f.dp.groupby("k", keys="private", delta=1e-6).len(epsilon=1.0, random_state=0).index)
        for f in (frame, shuffled)
    ]
    assert released[0] == released[1]
    assert len(released[0]) == 4


@pytest.mark.parametrize(
    "first", [True, 1.0, np.int64(1), np.float64(1.0)], ids=lambda v: type(v).__name__
)
def test_a_private_key_label_does_not_tell_which_row_came_first(first: object) -> None:
    """``1``, ``1.0`` and ``True`` are one group, which pandas labels by its first row.
    One added person whose row comes first must not change the released label (a
    change with certainty would break the privacy guarantee), nor its sort order."""
    base = pd.DataFrame({"k": pd.Series([1] * 2000 + ["a"] * 2000, dtype=object)})
    grown = pd.concat([pd.DataFrame({"k": pd.Series([first], dtype=object)}), base])
    labels = []
    for frame in (base, grown):
        got = frame.dp.groupby("k", keys="private", delta=1e-6).len(epsilon=1.0, random_state=0)
        labels.append([(type(k), k) for k in got.index])
    assert labels[0] == labels[1] == [(int, 1), (str, "a")]


@pytest.mark.parametrize("release", ["cov", "describe", "value_counts", "count"])
def test_every_frame_method_scales_with_the_privacy_unit(release: str) -> None:
    """privacy_unit reaches each frame method's sensitivities (k = 3: three times)."""
    frame = pd.DataFrame(
        {"pid": [1, 1, 2, 3] * 50, "a": np.linspace(0, 1, 200), "r": ["x", "y"] * 100}
    )
    calls = {
        "cov": lambda **kw: frame.dp.cov(["a", "a2"], bounds=(0, 1), **kw),
        "describe": lambda **kw: frame.dp.describe(["a"], bounds=(0, 1), **kw),
        "value_counts": lambda **kw: frame.dp.value_counts("r", categories=["x", "y"], **kw),
        "count": lambda **kw: frame.dp.count(**kw),
    }
    frame["a2"] = 1 - frame["a"]
    plain = calls[release](epsilon=1.0, random_state=0).attrs["dp"].sensitivity
    unit = (
        calls[release](epsilon=1.0, random_state=0, privacy_unit="pid", max_rows_per_unit=3)
        .attrs["dp"]
        .sensitivity
    )
    assert np.allclose(np.asarray(unit) / np.asarray(plain), 3.0)


def test_undeclared_keys_message_names_groupby_options() -> None:
    """groupby takes keys= (not categories=): the message says so, and its suggestion
    for a categorical column works."""
    df = pd.DataFrame({"c": pd.Categorical(["a", "b"] * 50, categories=["a", "b", "z"])})
    budget = PrivacyBudget(epsilon=10.0)
    with budget, pytest.raises(MissingBoundsError) as err:
        df.dp.groupby("c").len(epsilon=1.0)
    message = str(err.value)
    assert "keys=[...]" in message and "keys='private'" in message
    assert "keys=list(df['c'].cat.categories)" in message
    assert "categories=" not in message
    assert budget.spent == (0.0, 0.0)
    out = df.dp.groupby("c", keys=list(df["c"].cat.categories)).len(epsilon=1e6, random_state=0)
    assert list(out.index) == ["a", "b", "z"]


@pytest.mark.parametrize("keys", [[["a"], "b"], {"g": [["a"], "b"]}])
def test_unhashable_keys_are_named_before_the_charge(keys: Any) -> None:
    """An unhashable key (a list) is named, not a raw ``unhashable type`` error."""
    df = pd.DataFrame({"g": ["a", "b"] * 5, "x": np.arange(10.0)})
    budget = pandas_dp.PrivacyBudget(epsilon=5.0)
    named = r"hashable scalars .*, but \[.a.\] \(of type list\)"
    with budget, pytest.raises(TypeError, match=named):
        df.dp.groupby("g", keys=keys).len(epsilon=1.0)
    assert budget.spent == (0.0, 0.0)


def test_column_selection_like_pandas() -> None:
    """``g[column]`` / ``g[[columns]]`` choose the released columns, as in pandas:
    a Series by key for one label, a frame for a list; ``agg`` takes a statistic or
    a list of them; a bound accessor keeps its defaults through the selection."""
    g = DF.dp.groupby("sex", keys=["f", "m"])
    kw: dict[str, Any] = {"bounds": (0, 100), **BIG}
    one = g["age"].mean(**kw)
    assert isinstance(one, pd.Series) and one.name == "age"
    assert one.equals(g.mean("age", **kw))
    both = g[["age", "income"]].mean(**kw)
    assert list(both.columns) == ["age", "income"]
    exact = DF.groupby("sex")["age"].agg(["mean", "std"])
    stats = g["age"].agg(["mean", "std"], **kw)
    assert list(stats.columns) == ["mean", "std"] and list(stats.index) == ["f", "m"]
    assert np.all(np.abs(stats.to_numpy() - exact.to_numpy()) < 1.0)
    assert g["age"].agg("mean", **kw).name == "age"
    assert list(g.agg("mean", **kw).columns) == ["smoker", "age", "income"]  # numeric, as pandas
    counts = g["region"].value_counts(categories=["N", "S", "E"], **BIG)
    assert list(counts.index.names) == ["sex", "region"]
    bound = DF.dp(bounds=(0, 100), random_state=0).groupby("sex", keys=["f", "m"])["age"]
    assert bound.mean(epsilon=50.0).name == "age"
    with pytest.raises(TypeError, match="select columns by label"):
        g[0:2]


def test_a_tuple_by_is_one_label_like_pandas() -> None:
    frame = pd.DataFrame({("k", "1"): ["u", "v"] * 50, "x": np.arange(100.0)})
    out = frame.dp.groupby(("k", "1"), keys=["u", "v"]).mean("x", bounds=(0, 100), **BIG)
    assert out.index.name == ("k", "1") and list(out.index) == ["u", "v"]
    assert np.allclose(out, frame.groupby([("k", "1")])["x"].mean(), atol=1.0)
