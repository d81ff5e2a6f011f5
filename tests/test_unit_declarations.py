"""The privacy unit declared by arguments or in a pandera schema (resolve_unit)."""

from __future__ import annotations

from typing import ClassVar

import pandas as pd
import pandera.pandas as pa
import pytest

from pandas_dp.declarations import attached_schema
from pandas_dp.unit_declarations import UnitDeclaration, resolve_unit

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
