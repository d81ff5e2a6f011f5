"""describe's budget: every column its fair share, each column's split measured (issue 33).

The split and the percentiles' method were chosen in ``benchmarks/accuracy.py``
(``--only describe_split``, ``results/accuracy.md`` section 5); these tests pin
what the release does with them, from its metadata.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
import pandas as pd
import pytest

import pandas_dp  # noqa: F401  (registers .dp)
from pandas_dp.datasets import load_survey, survey_schema
from pandas_dp.stats.describe import CATEGORICAL_WEIGHT, DESCRIBE_METHOD
from pandas_dp.stats.moment_weights import MOMENT_WEIGHTS


def _dp(frame: pd.DataFrame) -> Any:
    """The frame's ``.dp`` accessor (typed loosely: pandas' stubs do not know it)."""
    return frame.dp


def _spent_per_column(result: Any) -> dict[str, float]:
    """The epsilon each column's measurements spent (``budget_split`` of the metadata)."""
    spent: dict[str, float] = defaultdict(float)
    for key, value in result.attrs["dp"].details["budget_split"].items():
        spent[key.split(": ")[0]] += value
    return dict(spent)


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 30.0])
def test_a_categorical_column_gets_a_numeric_columns_share(epsilon: float) -> None:
    # the survey: 3 numeric and 2 categorical columns; formerly a categorical
    # column got a quarter of a numeric one's share (1/14 of epsilon each)
    d = _dp(load_survey()).describe(epsilon=epsilon, schema=survey_schema(), random_state=0)
    spent = _spent_per_column(d)
    assert set(spent) == {"age", "income", "hours_per_week", "region", "smoker"}
    assert sum(spent.values()) == pytest.approx(epsilon)
    for column, value in spent.items():
        assert value == pytest.approx(epsilon / 5), column
    assert CATEGORICAL_WEIGHT == 1.0


def test_a_categorical_columns_shares_are_proportions_at_its_share() -> None:
    # at equal epsilon describe's shares of a categorical column are the standalone
    # proportions release: one histogram, shares of its noisy total
    df, schema = load_survey(), survey_schema()
    d = _dp(df[["region"]]).describe(epsilon=0.2, schema=schema, random_state=5)
    p = _dp(df).proportions("region", epsilon=0.2, schema=schema, random_state=5)
    for label, value in p.items():
        assert d.loc[f"share {label}", "region"] == value


@pytest.mark.parametrize("epsilon", [1.0, 30.0])
def test_a_numeric_columns_split_is_the_measured_entry(epsilon: float) -> None:
    frame = pd.DataFrame({"x": np.linspace(0.0, 10.0, 50)})
    d = _dp(frame).describe(epsilon=epsilon, bounds={"x": (0, 10)}, random_state=0)
    split = d.attrs["dp"].details["budget_split"]
    measured = {k.removeprefix("x: "): v / epsilon for k, v in split.items()}
    name = "describe" if "bound_sums" in measured else "describe_separate"
    weights = MOMENT_WEIGHTS[name]
    total = sum(weights.values())
    # the selection's measurements: its choices and the counts its intervals read
    grid = measured.pop("grid_selection") + measured.pop("interval_counts")
    assert grid == pytest.approx(weights["grid"] / total)
    assert measured == pytest.approx({k: v / total for k, v in weights.items() if k != "grid"})
    # both entries weigh the same in all: a column's share does not depend on which
    other = MOMENT_WEIGHTS["describe_separate" if name == "describe" else "describe"]
    assert sum(other.values()) == pytest.approx(total)


def test_describe_percentiles_use_the_selection_by_default() -> None:
    frame = pd.DataFrame({"x": np.linspace(0.0, 10.0, 50)})
    d = _dp(frame).describe(epsilon=1.0, bounds={"x": (0, 10)}, random_state=0)
    assert DESCRIBE_METHOD == "exponential"
    assert d.attrs["dp"].details["percentile estimator"]["method"] == "exponential"
