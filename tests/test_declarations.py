"""Declared bounds: from bounds=, pandera schemas, models, attached and YAML schemas."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pytest

import pandas_dp
from pandas_dp.request.declarations import resolve_bounds, resolve_categories, split_declared


@pytest.fixture
def df() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "age": rng.uniform(0, 100, 200),
            "income": rng.uniform(0, 1000, 200),
            "score": rng.uniform(-1, 1, 200),
            "region": rng.choice(["N", "S"], 200),
        }
    )


def bounds_of(result: object) -> dict:
    return result.attrs["dp"].input_bounds  # type: ignore[attr-defined]


def test_explicit_pair_applies_to_every_column(df: pd.DataFrame) -> None:
    r = df.dp.mean(["age", "income"], epsilon=1.0, bounds=(0, 1000), random_state=0)
    assert bounds_of(r) == {"age": (0.0, 1000.0), "income": (0.0, 1000.0)}


def test_explicit_dict_per_column(df: pd.DataFrame) -> None:
    r = df.dp.mean(
        ["age", "income"],
        epsilon=1.0,
        bounds={"age": (0, 100), "income": [0, 1e3]},
        random_state=0,
    )
    assert bounds_of(r) == {"age": (0.0, 100.0), "income": (0.0, 1000.0)}


@pytest.mark.parametrize(
    "checks, expected",
    [
        (pa.Check.in_range(0, 100), (0.0, 100.0)),
        (pa.Check.between(-5, 5), (-5.0, 5.0)),
        ([pa.Check.ge(0), pa.Check.le(10)], (0.0, 10.0)),
        ([pa.Check.gt(1), pa.Check.lt(9)], (1.0, 9.0)),
        ([pa.Check.greater_than_or_equal_to(2), pa.Check.less_than(3)], (2.0, 3.0)),
        # several checks on one column intersect
        ([pa.Check.in_range(0, 100), pa.Check.le(50), pa.Check.ge(10)], (10.0, 50.0)),
        # a renamed check is recognised by its statistics
        ([pa.Check.in_range(0, 7, name="plausible")], (0.0, 7.0)),
        ([pa.Check.ge(1, name="lo"), pa.Check.le(4, name="hi")], (1.0, 4.0)),
        # a check that declares no bound is ignored
        ([pa.Check.in_range(0, 1), pa.Check(lambda s: s > -1)], (0.0, 1.0)),
    ],
)
def test_schema_checks(df: pd.DataFrame, checks: object, expected: tuple) -> None:
    schema = pa.DataFrameSchema({"score": pa.Column(float, checks)})
    decl = resolve_bounds(["score"], bounds=None, schema=schema, attached=None)["score"]
    assert (decl.lower, decl.upper) == expected
    r = df.dp.mean("score", epsilon=1.0, schema=schema, random_state=0)
    assert bounds_of(r) == {"score": expected}


def test_model_class_with_field(df: pd.DataFrame) -> None:
    class Model(pa.DataFrameModel):
        age: float = pa.Field(ge=0, le=100)
        income: float = pa.Field(in_range={"min_value": 0, "max_value": 1000}, nullable=True)

    r = df.dp.mean(["age", "income"], epsilon=1.0, schema=Model, random_state=0)
    assert bounds_of(r) == {"age": (0.0, 100.0), "income": (0.0, 1000.0)}
    # v2: missing values are skipped in every column, whatever ``nullable`` says
    assert "skipped" in r.attrs["dp"].details["missing values"]


def test_attached_schema_is_used(df: pd.DataFrame) -> None:
    schema = pa.DataFrameSchema({"age": pa.Column(float, pa.Check.in_range(0, 100))})
    validated = schema.validate(df)
    r = validated.dp.var("age", epsilon=1.0, random_state=0)
    assert bounds_of(r) == {"age": (0.0, 100.0)}


def test_yaml_round_trip_schema(df: pd.DataFrame) -> None:
    pytest.importorskip("yaml")
    schema = pa.DataFrameSchema(
        {"age": pa.Column(float, [pa.Check.ge(0), pa.Check.le(100)], nullable=True)}
    )
    loaded = pa.DataFrameSchema.from_yaml(schema.to_yaml())
    r = df.dp.mean("age", epsilon=1.0, schema=loaded, random_state=0)
    assert bounds_of(r) == {"age": (0.0, 100.0)}
    assert "skipped" in r.attrs["dp"].details["missing values"]


def test_explicit_bounds_win_over_schema(df: pd.DataFrame) -> None:
    schema = pa.DataFrameSchema({"age": pa.Column(float, pa.Check.in_range(0, 100))})
    r = df.dp.mean("age", epsilon=1.0, bounds=(10, 20), schema=schema, random_state=0)
    assert bounds_of(r) == {"age": (10.0, 20.0)}
    assert 10 <= r <= 20


def test_schema_wins_over_attached(df: pd.DataFrame) -> None:
    attached = pa.DataFrameSchema({"age": pa.Column(float, pa.Check.in_range(0, 100))})
    other = pa.DataFrameSchema({"age": pa.Column(float, pa.Check.in_range(0, 50))})
    r = attached.validate(df).dp.mean("age", epsilon=1.0, schema=other, random_state=0)
    assert bounds_of(r) == {"age": (0.0, 50.0)}


def test_per_column_fallback_from_dict_to_schema(df: pd.DataFrame) -> None:
    schema = pa.DataFrameSchema({"income": pa.Column(float, pa.Check.in_range(0, 1000))})
    r = df.dp.mean(
        ["age", "income"], epsilon=1.0, bounds={"age": (0, 100)}, schema=schema, random_state=0
    )
    assert bounds_of(r) == {"age": (0.0, 100.0), "income": (0.0, 1000.0)}


def test_series_accessor_with_schema_column_and_frame_schema(df: pd.DataFrame) -> None:
    schema = pa.DataFrameSchema({"age": pa.Column(float, pa.Check.in_range(0, 100))})
    assert bounds_of(df["age"].dp.mean(epsilon=1.0, schema=schema)) == {"age": (0.0, 100.0)}
    col = pa.Column(float, pa.Check.in_range(0, 90))
    assert bounds_of(df["age"].dp.mean(epsilon=1.0, schema=col)) == {"age": (0.0, 90.0)}
    sschema = pa.SeriesSchema(float, pa.Check.in_range(0, 80))
    assert bounds_of(df["age"].dp.mean(epsilon=1.0, schema=sschema)) == {"age": (0.0, 80.0)}


# --------------------------------------------------------------------------- errors


def test_missing_bounds_lists_every_column(df: pd.DataFrame) -> None:
    with pytest.raises(pandas_dp.MissingBoundsError) as info:
        df.dp.mean(["age", "income", "score"], epsilon=1.0, bounds={"income": (0, 1)})
    err = info.value
    assert err.columns == ["age", "score"]
    text = str(err)
    assert "'age'" in text and "'score'" in text and "bounds=" in text and "in_range" in text
    assert isinstance(err, KeyError) and isinstance(err, pandas_dp.PandasDPError)


def test_one_sided_schema_bound_is_missing(df: pd.DataFrame) -> None:
    schema = pa.DataFrameSchema({"age": pa.Column(float, pa.Check.ge(0))})
    with pytest.raises(pandas_dp.MissingBoundsError, match="'age'"):
        df.dp.mean("age", epsilon=1.0, schema=schema)


@pytest.mark.parametrize(
    "bounds, fragment",
    [
        ((10, 0), "lower < upper"),
        ((5, 5), "lower < upper"),
        ((0, math.inf), "finite"),
        ((-math.inf, 0), "finite"),
        ((math.nan, 1), "finite"),
        (("a", 1), "not a number"),
    ],
)
def test_invalid_bounds(df: pd.DataFrame, bounds: tuple, fragment: str) -> None:
    with pytest.raises(pandas_dp.InvalidBoundsError, match=fragment):
        df.dp.mean("age", epsilon=1.0, bounds=bounds)


def test_invalid_bounds_in_schema(df: pd.DataFrameSchema) -> None:
    schema = pa.DataFrameSchema({"age": pa.Column(float, [pa.Check.ge(50), pa.Check.le(10)])})
    with pytest.raises(pandas_dp.InvalidBoundsError):
        df.dp.mean("age", epsilon=1.0, schema=schema)


@pytest.mark.parametrize("bounds", [(1,), (1, 2, 3), "ab", 5])
def test_bounds_must_be_a_pair(df: pd.DataFrame, bounds: object) -> None:
    with pytest.raises(ValueError, match="pair"):
        df.dp.mean("age", epsilon=1.0, bounds=bounds)


def test_schema_of_wrong_type(df: pd.DataFrame) -> None:
    with pytest.raises(TypeError, match="DataFrameSchema"):
        df.dp.mean("age", epsilon=1.0, schema=42)


def test_raise_mode_lets_schema_error_through(df: pd.DataFrame) -> None:
    bad = df.assign(age=df["age"] + 1000)
    budget = pandas_dp.PrivacyBudget(epsilon=5.0)
    with pytest.raises(ValueError, match="already charged") as err:
        bad.dp.mean("age", epsilon=1.0, bounds=(0, 100), out_of_bounds="raise", budget=budget)
    assert budget.spent[0] == 1.0  # the message says so, and it is true
    assert len(str(err.value)) < 2000  # the failure report is cut short
    ok = df.dp.mean("age", epsilon=1.0, bounds=(0, 100), out_of_bounds="raise", random_state=0)
    assert 0 <= ok <= 100


def test_raise_mode_uses_the_schemas_own_column(df: pd.DataFrame) -> None:
    schema = pa.DataFrameSchema({"age": pa.Column(int, pa.Check.in_range(0, 100))})
    with pytest.raises(ValueError, match="violate the declaration"):  # float is not int
        df.dp.mean("age", epsilon=1.0, schema=schema, out_of_bounds="raise")


def test_clip_mode_never_validates(df: pd.DataFrame) -> None:
    bad = df.assign(age=df["age"] + 1000)
    r = bad.dp.mean("age", epsilon=1.0, bounds=(0, 100), random_state=0)
    assert 0 <= r <= 100


# ------------------------------------------------------ categories are declared, not read

CATS = ["N", "S", "E", "W"]


@pytest.fixture
def region() -> pd.Series:
    rng = np.random.default_rng(1)
    return pd.Series(rng.choice(["N", "S", "E"], 300), name="region")


def test_data_categorical_dtype_is_not_a_declaration(region: pd.Series) -> None:
    # astype("category") reads the categories off the data: never used on its own
    for typed in (region.astype("category"), region.astype(pd.CategoricalDtype(CATS))):
        with pytest.raises(pandas_dp.MissingBoundsError, match="categories='dtype'"):
            typed.dp.value_counts(epsilon=1.0)
        with pytest.raises(pandas_dp.MissingBoundsError):
            resolve_categories({"region": typed}, categories=None, schema=None, attached=None)


def test_categories_dtype_publishes_the_dtype_categories(region: pd.Series) -> None:
    typed = region.astype(pd.CategoricalDtype(CATS))
    decl = resolve_categories({"region": typed}, categories="dtype", schema=None, attached=None)
    assert decl["region"].categories == tuple(CATS) and decl["region"].source == "dtype"
    per_column = resolve_categories(
        {"region": typed}, categories={"region": "dtype"}, schema=None, attached=None
    )
    assert per_column["region"].categories == tuple(CATS)
    vc = typed.dp.value_counts(epsilon=1.0, categories="dtype", sort=False, random_state=0)
    assert list(vc.index) == CATS


def test_categories_dtype_needs_a_categorical_column(region: pd.Series) -> None:
    with pytest.raises(ValueError, match="CategoricalDtype") as info:
        resolve_categories({"region": region}, categories="dtype", schema=None, attached=None)
    assert not isinstance(info.value, pandas_dp.MissingBoundsError)
    assert "'region'" in str(info.value) and "categories=[...]" in str(info.value)


def test_categorical_dtype_declared_in_schema(region: pd.Series) -> None:
    schema = pa.DataFrameSchema({"region": pa.Column(pd.CategoricalDtype(CATS))})
    frame = region.to_frame()  # plain strings: the schema declares, the data does not
    decl = resolve_categories(dict(frame.items()), categories=None, schema=schema, attached=None)
    assert decl["region"].categories == tuple(CATS) and decl["region"].source == "schema"
    vc = frame.dp.value_counts("region", epsilon=1.0, schema=schema, sort=False)
    assert list(vc.index) == CATS
    # the same schema attached by validate(), on a frame typed with it
    validated = schema.validate(frame.astype({"region": pd.CategoricalDtype(CATS)}))
    attached = validated.dp.value_counts("region", epsilon=1.0, sort=False)
    assert list(attached.index) == CATS

    # a model class declaring the dtype with its categories
    class Model(pa.DataFrameModel):
        region: pd.CategoricalDtype = pa.Field(dtype_kwargs={"categories": CATS})

    decl = resolve_categories(dict(frame.items()), categories=None, schema=Model, attached=None)
    assert decl["region"].categories == tuple(CATS)


def test_schema_category_without_categories_declares_nothing(region: pd.Series) -> None:
    schema = pa.DataFrameSchema({"region": pa.Column("category")})
    typed = region.astype("category")
    with pytest.raises(pandas_dp.MissingBoundsError, match="'region'"):
        resolve_categories({"region": typed}, categories=None, schema=schema, attached=None)


def test_schema_isin_wins_over_schema_dtype(region: pd.Series) -> None:
    schema = pa.DataFrameSchema(
        {"region": pa.Column(pd.CategoricalDtype(CATS), pa.Check.isin(["N", "S"]))}
    )
    decl = resolve_categories({"region": region}, categories=None, schema=schema, attached=None)
    assert decl["region"].categories == ("N", "S")


@pytest.mark.parametrize("dtype", [bool, "boolean"])
def test_boolean_columns_have_the_public_domain(dtype: object) -> None:
    s = pd.Series(np.arange(200) % 3 == 0, name="smoker").astype(dtype)
    decl = resolve_categories({"smoker": s}, categories=None, schema=None, attached=None)
    assert decl["smoker"].categories == (False, True) and decl["smoker"].source == "dtype"
    vc = s.dp.value_counts(epsilon=1e4, sort=False, random_state=0)
    assert list(vc.index) == [False, True]
    # discrete Laplace of scale 2e-4: P(noise != 0) ~ 2 exp(-5000), so the count is exact
    assert int(vc[True]) == int(s.sum()) == 67


def test_boolean_dtype_declared_in_schema() -> None:
    s = pd.Series([True, False, None], dtype=object, name="smoker")  # object, not bool
    schema = pa.DataFrameSchema({"smoker": pa.Column(bool, nullable=True)})
    decl = resolve_categories({"smoker": s}, categories=None, schema=schema, attached=None)
    assert decl["smoker"].categories == (False, True) and decl["smoker"].nullable
    with pytest.raises(pandas_dp.MissingBoundsError):  # without the schema: undeclared
        resolve_categories({"smoker": s}, categories=None, schema=None, attached=None)


# ------------------------------------------------------------------- bounds given badly


def test_bounds_key_that_is_no_column_raises() -> None:
    with pytest.raises(pandas_dp.InvalidBoundsError, match="'agee'") as info:
        resolve_bounds(
            ["age"],
            bounds={"agee": (0, 100)},
            schema=None,
            attached=None,
            known=["age", "income"],
        )
    assert "['age']" in str(info.value) and "spelling" in str(info.value)
    # a key naming another column of the frame is fine: one dict serves several calls
    decls = resolve_bounds(
        ["age"],
        bounds={"age": (0, 100), "income": (0, 1)},
        schema=None,
        attached=None,
        known=["age", "income"],
    )
    assert list(decls) == ["age"]


def test_categories_key_that_is_no_column_raises(region: pd.Series) -> None:
    with pytest.raises(ValueError, match="'regoin'"):
        resolve_categories(
            {"region": region},
            categories={"region": CATS, "regoin": CATS},
            schema=None,
            attached=None,
            known=["region"],
        )


@pytest.mark.parametrize(
    "bounds, bad",
    [
        (("0", "100"), "'0'"),
        ((0, "100"), "'100'"),
        ((False, True), "False"),
        ((0, True), "True"),
        ((None, 1), "None"),
        ((np.bool_(False), 1), "False"),
    ],
)
def test_bounds_must_be_numbers(df: pd.DataFrame, bounds: tuple, bad: str) -> None:
    with pytest.raises(pandas_dp.InvalidBoundsError, match="not a number") as info:
        df.dp.mean("age", epsilon=1.0, bounds=bounds)
    assert "'age'" in str(info.value) and bad in str(info.value)


def test_schema_bounds_must_be_numbers() -> None:
    schema = pa.DataFrameSchema({"age": pa.Column(str, pa.Check.in_range("0", "9"))})
    with pytest.raises(pandas_dp.InvalidBoundsError, match="not a number"):
        resolve_bounds(["age"], bounds=None, schema=schema, attached=None)


def test_numeric_types_are_accepted() -> None:
    from decimal import Decimal
    from fractions import Fraction

    for lo, hi in [(np.int64(0), np.float32(2)), (Decimal("0"), Fraction(5, 2)), (0, 2.5)]:
        decl = resolve_bounds(["x"], bounds=(lo, hi), schema=None, attached=None)["x"]
        assert (decl.lower, decl.upper) == (0.0, float(hi))
        assert type(decl.lower) is float and type(decl.upper) is float


@pytest.mark.parametrize("bounds", [(-1e308, 1e308), (-1.7e308, 1.7e308), (-1e308, 0.9e308)])
def test_bounds_width_must_be_finite(df: pd.DataFrame, bounds: tuple) -> None:
    with pytest.raises(pandas_dp.InvalidBoundsError, match="width") as info:
        df.dp.mean("age", epsilon=1.0, bounds=bounds)
    assert "finite" in str(info.value)


def test_midpoint_of_huge_bounds_is_finite() -> None:
    decl = resolve_bounds(["x"], bounds=(1e308, 1.7e308), schema=None, attached=None)["x"]
    assert decl.midpoint == pytest.approx(1.35e308) and math.isfinite(decl.midpoint)
    assert decl.width == pytest.approx(0.7e308)


# ------------------------------------------------------------------ isin of numbers


@pytest.mark.parametrize(
    "checks, expected",
    [
        (pa.Check.isin([1, 2, 3, 4, 5]), (1.0, 5.0)),
        (pa.Check.isin([3, 1.5, 2]), (1.5, 3.0)),
        ([pa.Check.isin([1, 2, 3, 4, 5]), pa.Check.le(4)], (1.0, 4.0)),
        ([pa.Check.in_range(0, 3), pa.Check.isin([1, 2, 3, 4, 5])], (1.0, 3.0)),
        (pa.Check.isin([10, 20], name="allowed"), (10.0, 20.0)),
    ],
)
def test_isin_of_numbers_declares_bounds(checks: object, expected: tuple) -> None:
    schema = pa.DataFrameSchema({"rating": pa.Column(int, checks)})
    decl = resolve_bounds(["rating"], bounds=None, schema=schema, attached=None)["rating"]
    assert (decl.lower, decl.upper) == expected
    frame = pd.DataFrame({"rating": np.arange(50) % 5 + 1})
    r = frame.dp.mean("rating", epsilon=1.0, schema=schema, random_state=0)
    assert bounds_of(r) == {"rating": expected}


@pytest.mark.parametrize("values", [["a", "b"], [1, "b"], [True, False]])
def test_isin_of_non_numbers_declares_no_bounds(values: list) -> None:
    schema = pa.DataFrameSchema({"x": pa.Column(checks=pa.Check.isin(values))})
    with pytest.raises(pandas_dp.MissingBoundsError, match="'x'"):
        resolve_bounds(["x"], bounds=None, schema=schema, attached=None)


# -------------------------------------------------------- describe: what is declared


@pytest.fixture
def mixed() -> pd.DataFrame:
    rng = np.random.default_rng(2)
    return pd.DataFrame(
        {
            "age": rng.uniform(18, 90, 100),
            "income": rng.uniform(0, 1e5, 100),
            "region": rng.choice(CATS, 100),
            "comment": rng.choice(["x", "y"], 100),
            "smoker": rng.random(100) < 0.3,
            "band": pd.Categorical(rng.choice(["lo", "hi"], 100), categories=["lo", "hi"]),
        }
    )


def test_split_declared_lists_the_undeclared(mixed: pd.DataFrame) -> None:
    schema = pa.DataFrameSchema(
        {
            "age": pa.Column(float, pa.Check.in_range(18, 90)),
            "region": pa.Column(str, pa.Check.isin(CATS)),
        }
    )
    split = split_declared(dict(mixed.items()), schema=schema)
    assert list(split.numeric) == ["age"] and split.numeric["age"].upper == 90.0
    assert list(split.categorical) == ["region", "smoker"]  # a boolean needs no declaration
    assert split.categorical["smoker"].categories == (False, True)
    assert split.undeclared == ["income", "comment", "band"]  # band's dtype is not public


def test_split_declared_with_explicit_declarations(mixed: pd.DataFrame) -> None:
    split = split_declared(
        dict(mixed.items()),
        bounds={"income": (0, 1e5)},
        categories={"comment": ["x", "y", "z"], "band": "dtype"},
    )
    assert list(split.numeric) == ["income"]
    assert list(split.categorical) == ["comment", "smoker", "band"]
    assert split.categorical["band"].categories == ("lo", "hi")
    assert split.undeclared == ["age", "region"]
    # one pair for every numeric column; "dtype" only where there is a categorical dtype
    split = split_declared(dict(mixed.items()), bounds=(0, 1e5), categories="dtype")
    assert list(split.numeric) == ["age", "income"]
    assert list(split.categorical) == ["smoker", "band"]
    assert split.undeclared == ["region", "comment"]


def test_split_declared_numeric_column_with_declared_categories() -> None:
    frame = pd.DataFrame({"stars": np.arange(20) % 3 + 1, "x": np.ones(20)})
    schema = pa.DataFrameSchema({"stars": pa.Column(pd.CategoricalDtype([1, 2, 3]))})
    split = split_declared(dict(frame.items()), schema=schema)
    assert split.categorical["stars"].categories == (1, 2, 3) and not split.numeric
    assert split.undeclared == ["x"]


def test_split_declared_raises_only_when_nothing_is_declared(mixed: pd.DataFrame) -> None:
    frame = mixed.drop(columns=["smoker"])
    with pytest.raises(pandas_dp.MissingBoundsError, match="bounds or categories") as info:
        split_declared(dict(frame.items()))
    assert info.value.columns == ["age", "income", "region", "comment", "band"]
    assert "in_range" in str(info.value) and "isin" in str(info.value)
    with pytest.raises(pandas_dp.InvalidBoundsError, match="'agee'"):
        split_declared(dict(frame.items()), bounds={"agee": (0, 1)})
    with pytest.raises(pandas_dp.InvalidBoundsError, match="finite"):  # invalid: still raises
        split_declared(dict(frame.items()), bounds={"age": (0, math.inf)})


# ---------------------------------------------------------- category labels keep their type


@pytest.mark.parametrize("route", ["categories", "isin", "schema dtype", "dtype"])
def test_float_category_labels_stay_floats(route: str) -> None:
    cats = [1.0, 2.5, 3.0]
    s = pd.Series(np.array([1.0, 2.5, 3.0, 3.0] * 10), name="x")
    kwargs: dict = {
        "categories": {"categories": cats},
        "isin": {"schema": pa.DataFrameSchema({"x": pa.Column(float, pa.Check.isin(cats))})},
        "schema dtype": {"schema": pa.DataFrameSchema({"x": pa.Column(pd.CategoricalDtype(cats))})},
        "dtype": {"categories": "dtype"},
    }[route]
    data = s.astype(pd.CategoricalDtype(cats)) if route == "dtype" else s
    decl = resolve_categories(
        {"x": data}, attached=None, **{"categories": None, "schema": None, **kwargs}
    )
    assert all(isinstance(c, float) for c in decl["x"].categories)  # np.float64 is a float
    vc = data.to_frame().dp.value_counts("x", epsilon=1.0, sort=False, random_state=0, **kwargs)
    index = vc.index  # a categorical column: a CategoricalIndex, as pandas gives
    held = index.categories.dtype if isinstance(index, pd.CategoricalIndex) else index.dtype
    assert list(index) == cats and held == np.float64
    assert [str(c) for c in vc.index] == ["1.0", "2.5", "3.0"]
    assert [str(c) for c in vc.attrs["dp"].interval(0.05).index] == ["1.0", "2.5", "3.0"]


@pytest.mark.parametrize("value", [10**400, -(10**400)])
def test_bounds_too_large_for_a_float_raise(value: int) -> None:
    with pytest.raises(pandas_dp.InvalidBoundsError, match="finite"):
        resolve_bounds(["x"], bounds=sorted([0, value]), schema=None, attached=None)


def test_nan_in_isin_is_no_bound_and_inf_raises() -> None:
    nan_ok = pa.DataFrameSchema({"x": pa.Column(float, pa.Check.isin([math.nan, 2, 7]))})
    decl = resolve_bounds(["x"], bounds=None, schema=nan_ok, attached=None)["x"]
    assert (decl.lower, decl.upper) == (2.0, 7.0)
    infinite = pa.DataFrameSchema({"x": pa.Column(float, pa.Check.isin([1, math.inf]))})
    with pytest.raises(pandas_dp.InvalidBoundsError, match="finite"):
        resolve_bounds(["x"], bounds=None, schema=infinite, attached=None)


def test_accessor_refuses_a_misspelled_bounds_key_before_the_charge(df: pd.DataFrame) -> None:
    """A typo in a ``bounds`` dict is an error (not silently ignored), raised before the
    budget is charged; a key naming another column of the frame is allowed."""
    budget = pandas_dp.PrivacyBudget(epsilon=5.0)
    good = {"age": (0, 100), **{c: (0, 1) for c in df.columns if c != "age"}}
    with budget:
        for call in (
            lambda: df.dp.mean("age", epsilon=1.0, bounds={"age": (0, 100), "agee": (0, 1)}),
            lambda: df.dp.describe(epsilon=1.0, bounds={"agee": (0, 100)}),
            lambda: df.dp.cov(["age"], epsilon=1.0, bounds={"age": (0, 100), "agee": (0, 1)}),
        ):
            with pytest.raises(ValueError, match="agee"):
                call()
        assert budget.spent == (0.0, 0.0)
        df.dp.mean("age", epsilon=1.0, bounds=good, random_state=0)  # other columns: fine
    assert budget.spent[0] == 1.0


def test_empty_isin_is_refused_before_the_charge(df: pd.DataFrame) -> None:
    """An empty ``Check.isin([])`` declares no category: refused like ``categories=[]``,
    before the budget is charged (it used to fail after it, inside numpy)."""
    schema = pa.DataFrameSchema({"region": pa.Column(str, pa.Check.isin([]))})
    budget = pandas_dp.PrivacyBudget(epsilon=10.0)
    with budget:
        for call in (
            lambda: df["region"].dp.value_counts(epsilon=1.0, schema=schema),
            lambda: df.dp.proportions("region", epsilon=1.0, schema=schema),
            lambda: df.dp.describe(["region"], epsilon=1.0, schema=schema),
            lambda: df.dp.groupby("region").len(epsilon=1.0, schema=schema),
        ):
            with pytest.raises(ValueError, match=r"Check\.isin declares no categories") as err:
                call()
            assert "'region'" in str(err.value) and "at least one" in str(err.value)
    assert budget.spent == (0.0, 0.0) and budget.ledger.empty


def test_unhashable_categories_are_named_before_the_charge(df: pd.DataFrame) -> None:
    budget = pandas_dp.PrivacyBudget(epsilon=10.0)
    with budget:
        with pytest.raises(TypeError, match="hashable scalars") as err:
            df["region"].dp.value_counts(epsilon=1.0, categories=[["N", "S"]])
        assert "['N', 'S']" in str(err.value) and "categories=" in str(err.value)
        with pytest.raises(TypeError, match="hashable scalars"):
            df.dp.describe(["region"], epsilon=1.0, categories={"region": ["N", {"S"}]})
    assert budget.spent == (0.0, 0.0) and budget.ledger.empty


def test_a_dict_of_bounds_as_schema_points_to_bounds(df: pd.DataFrame) -> None:
    budget = pandas_dp.PrivacyBudget(epsilon=10.0)
    with budget, pytest.raises(TypeError, match="DataFrameSchema or DataFrameModel") as err:
        df.dp.mean("age", epsilon=1.0, schema={"age": (0, 100)})
    assert "bounds={'age': (lower, upper)}" in str(err.value)
    assert budget.spent == (0.0, 0.0)
    with pytest.raises(TypeError, match=r"Model, not Model\(\)"):
        df.dp.mean("age", epsilon=1.0, schema="age: 0..100")


def test_dataframe_model_instance_declares_its_class(df: pd.DataFrame) -> None:
    class Model(pa.DataFrameModel):
        age: float = pa.Field(ge=0, le=100)

    instance = object.__new__(Model)  # Model() itself is pandera's Model.validate()
    by_class = resolve_bounds(["age"], bounds=None, schema=Model, attached=None)
    by_instance = resolve_bounds(["age"], bounds=None, schema=instance, attached=None)
    assert (by_instance["age"].lower, by_instance["age"].upper) == (0.0, 100.0)
    assert by_instance["age"].upper == by_class["age"].upper


@pytest.mark.parametrize(
    ("check", "has", "lacks", "fix"),
    [
        (pa.Check.ge(0), "a lower bound (0)", "no upper bound", "pa.Check.le(upper)"),
        (pa.Check.lt(100), "an upper bound (100)", "no lower bound", "pa.Check.ge(lower)"),
    ],
)
def test_a_schema_with_one_bound_names_the_missing_one(
    df: pd.DataFrame, check: pa.Check, has: str, lacks: str, fix: str
) -> None:
    schema = pa.DataFrameSchema({"age": pa.Column(float, check)})
    budget = pandas_dp.PrivacyBudget(epsilon=10.0)
    with budget, pytest.raises(pandas_dp.MissingBoundsError) as err:
        df.dp.mean("age", epsilon=1.0, schema=schema)
    message = str(err.value)
    assert has in message and lacks in message and fix in message and "in_range" in message
    assert budget.spent == (0.0, 0.0)
