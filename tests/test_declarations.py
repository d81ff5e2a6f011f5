"""Declared bounds: from bounds=, pandera schemas, models, attached and YAML schemas."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pytest

import pandas_dp
from pandas_dp.declarations import resolve_bounds


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
    details = r.attrs["dp"].details["missing values"]
    assert "skipped" in details["income"] and "midpoint" in details["age"]


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
    assert "skipped" in r.attrs["dp"].details["missing values"]["age"]


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
    with pytest.raises(pa.errors.SchemaError):
        bad.dp.mean("age", epsilon=1.0, bounds=(0, 100), out_of_bounds="raise")
    ok = df.dp.mean("age", epsilon=1.0, bounds=(0, 100), out_of_bounds="raise", random_state=0)
    assert 0 <= ok <= 100


def test_raise_mode_uses_the_schemas_own_column(df: pd.DataFrame) -> None:
    schema = pa.DataFrameSchema({"age": pa.Column(int, pa.Check.in_range(0, 100))})
    with pytest.raises(pa.errors.SchemaError):  # dtype float is not int
        df.dp.mean("age", epsilon=1.0, schema=schema, out_of_bounds="raise")


def test_clip_mode_never_validates(df: pd.DataFrame) -> None:
    bad = df.assign(age=df["age"] + 1000)
    r = bad.dp.mean("age", epsilon=1.0, bounds=(0, 100), random_state=0)
    assert 0 <= r <= 100
