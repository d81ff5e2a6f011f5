"""The privacy unit declared by arguments or in a pandera schema (resolve_unit)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pytest

import pandas_dp
from pandas_dp.request.declarations import attached_schema
from pandas_dp.request.unit_declarations import UnitDeclaration, resolve_unit

META = {"pandas_dp": {"privacy_unit": "pid", "max_rows_per_unit": 5, "max_groups_per_unit": 2}}
COLUMNS = ["pid", "x", "g"]


def schema(meta: dict[str, object] | None = META) -> pa.DataFrameSchema:
    return pa.DataFrameSchema({"pid": pa.Column(int), "x": pa.Column(float)}, metadata=meta)


def test_no_unit_is_none() -> None:
    assert resolve_unit(columns=COLUMNS) is None
    assert resolve_unit(schema=schema(None), columns=COLUMNS) is None
    assert resolve_unit(schema=schema({"other": 1}), columns=COLUMNS) is None


def test_arguments() -> None:
    got = resolve_unit("pid", 3, columns=COLUMNS, max_rows_per_group=2)
    assert got == UnitDeclaration("pid", 3, None, 2, "arguments")


def test_schema_metadata() -> None:
    got = resolve_unit(schema=schema(), columns=COLUMNS)
    assert got == UnitDeclaration("pid", 5, 2, None, "schema")


def test_dataframe_model_config_metadata() -> None:
    class Model(pa.DataFrameModel):
        pid: int

        class Config:
            metadata: ClassVar[dict[str, object]] = {
                "pandas_dp": {"privacy_unit": "pid", "max_rows_per_unit": 4}
            }

    assert resolve_unit(schema=Model, columns=COLUMNS) == UnitDeclaration("pid", 4, source="schema")


def test_attached_schema() -> None:
    df = schema().validate(pd.DataFrame({"pid": [1, 1], "x": [1.0, 2.0]}))
    got = resolve_unit(columns=df.columns, attached=attached_schema(df))
    assert got == UnitDeclaration("pid", 5, 2, None, "attached schema")


def test_arguments_override_the_schema() -> None:
    got = resolve_unit(None, 2, schema=schema(), columns=COLUMNS, max_groups_per_unit=1)
    assert got == UnitDeclaration("pid", 2, 1, None, "arguments+schema")
    got = resolve_unit("g", None, schema=schema(), columns=COLUMNS)
    assert got is not None and got.column == "g" and got.max_rows_per_unit == 5


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"privacy_unit": "pid"}, "needs max_rows_per_unit"),
        ({"max_rows_per_unit": 3}, "without privacy_unit"),
        ({"max_groups_per_unit": 3}, "without privacy_unit"),
        ({"privacy_unit": "pid", "max_rows_per_unit": 0}, "whole number"),
        ({"privacy_unit": "pid", "max_rows_per_unit": 2.5}, "whole number"),
        ({"privacy_unit": "pid", "max_rows_per_unit": True}, "whole number"),
        ({"privacy_unit": "pid", "max_rows_per_unit": "3"}, "whole number"),
        ({"privacy_unit": "pid", "max_rows_per_unit": 2, "max_rows_per_group": -1}, "whole"),
        ({"privacy_unit": "person", "max_rows_per_unit": 2}, "not a column"),
        ({"schema": schema({"pandas_dp": {"privacy_unit": "pid"}})}, "needs max_rows_per_unit"),
        ({"schema": schema({"pandas_dp": {"privacy_unit": "pid", "k": 2}})}, "unknown key"),
        ({"schema": schema({"pandas_dp": "pid"})}, "must be a dict"),
    ],
)
def test_errors(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        resolve_unit(columns=COLUMNS, **kwargs)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- every release


WEEKS = pd.DataFrame(
    {"pid": np.repeat(np.arange(300), 4), "hours": np.tile([10.0, 30.0, 50.0, 70.0], 300)}
)
DIARY = pa.DataFrameSchema(
    {"hours": pa.Column(float, pa.Check.in_range(0, 80))},
    metadata={"pandas_dp": {"privacy_unit": "pid", "max_rows_per_unit": 1}},
)
COUNTING = {
    "len": lambda dp, **kw: dp.len(**kw),
    "count": lambda dp, **kw: dp.count(**kw),
    "counts": lambda dp, **kw: dp.counts({"long weeks": "hours > 40"}, **kw),
}


@pytest.mark.parametrize("release", list(COUNTING))
@pytest.mark.parametrize("how", ["bound", "argument"])
def test_counting_releases_honour_the_schemas_unit(release: str, how: str) -> None:
    """A unit declared by the schema bounds len / count / counts too: one row per
    person kept (k = 1), not 1200 rows each its own unit."""
    if how == "bound":
        out = COUNTING[release](WEEKS.dp(schema=DIARY), epsilon=1e3, random_state=0)
    else:
        out = COUNTING[release](WEEKS.dp, epsilon=1e3, schema=DIARY, random_state=0)
    value = out if np.ndim(out) == 0 else out.iloc[-1]
    expected = {"len": 300, "count": 300, "counts": 150}[release]
    assert abs(int(value) - expected) <= 2, value
    assert out.attrs["dp"].details["privacy unit"] == "pid"


@pytest.mark.parametrize("how", ["bound", "schema"])
def test_a_series_refuses_a_unit_before_the_charge(how: str) -> None:
    """A Series holds no unit column: a bound or schema-declared unit is refused,
    not dropped (which would count each row as a person)."""
    s = WEEKS["hours"]
    budget = pandas_dp.PrivacyBudget(10.0)
    with pytest.raises(TypeError, match="unit"):
        if how == "bound":
            s.dp(privacy_unit="pid", max_rows_per_unit=2, bounds=(0, 80)).mean(
                epsilon=1.0, budget=budget
            )
        else:
            s.dp.mean(epsilon=1.0, schema=DIARY, budget=budget)
    with pytest.raises(TypeError, match="unit"):
        s.dp.len(epsilon=1.0, schema=DIARY, budget=budget)
    assert budget.spent == (0.0, 0.0)


def test_a_workloads_kept_rows_do_not_depend_on_row_order() -> None:
    """With a unit, counts keep each unit's rows by a keyed hash of the rows' answers:
    the same counts whatever the row order (they kept each unit's first rows, so a
    frame sorted within units counted 0 of the long weeks at k = 1 and 2)."""
    shuffled = WEEKS.sample(frac=1.0, random_state=3)
    for k in (1, 2, 3):
        counts = [
            frame.dp.counts(
                {"long": "hours > 40", "mask": frame["hours"] > 40},
                epsilon=1e4,
                privacy_unit="pid",
                max_rows_per_unit=k,
                random_state=0,
            ).tolist()
            for frame in (WEEKS, shuffled)
        ]
        assert counts[0] == counts[1]
        # each unit keeps k of its 4 rows, half of them long: about 150 k (binomial)
        assert abs(counts[0][0] - 150 * k) < 60, counts
