"""describe's shares of a numeric answer scale (``shares=``; issue 33 item 1).

A numeric column declared with ``pa.Check.isin([1, 2, 3, 4, 5])`` is described
with its numeric rows and the share of each declared value. pandas is the oracle
for the shapes (``df.describe()``'s rows, ``value_counts(normalize=True)``'s
values at a large epsilon); every refusal happens before the charge.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pytest

import pandas_dp  # noqa: F401  (registers .dp)
from pandas_dp import PrivacyBudget
from pandas_dp.stats.describe_shares import SHARES_AUTO_MAX, share_declarations

RNG = np.random.default_rng(7)
N = 2000
DF = pd.DataFrame(
    {
        "q": RNG.choice([1, 2, 3, 4, 5], N, p=[0.1, 0.15, 0.2, 0.25, 0.3]),
        "age": RNG.uniform(18, 90, N),
        "r": RNG.choice(["N", "S"], N),
        "g": RNG.choice(["a", "b"], N),
    }
)
SCHEMA = pa.DataFrameSchema(
    {
        "q": pa.Column(int, pa.Check.isin([1, 2, 3, 4, 5])),
        "age": pa.Column(float, pa.Check.in_range(18, 90)),
        "r": pa.Column(str, pa.Check.isin(["N", "S"])),
        "g": pa.Column(str, pa.Check.isin(["a", "b"])),
    }
)
SHARE_ROWS = [f"share {v}" for v in (1, 2, 3, 4, 5)]


def _dp(frame: Any) -> Any:
    """The ``.dp`` accessor (typed loosely: pandas' stubs do not know it)."""
    return frame.dp


def _spent(result: Any) -> dict[str, float]:
    """Epsilon per measurement key of the release (``budget_split``)."""
    return dict(result.attrs["dp"].details["budget_split"])


def test_numeric_rows_then_shares_like_pandas() -> None:
    d = _dp(DF[["q", "age"]]).describe(epsilon=1e6, schema=SCHEMA, random_state=0)
    exact = DF[["q", "age"]].describe()
    numeric = [r for r in d.index if not r.startswith("share ")]
    # pandas' rows, min and max labelled as declared
    assert [r.removesuffix(" (declared)") for r in numeric] == list(exact.index)
    assert list(d.index) == [*numeric, *SHARE_ROWS]
    truth = DF["q"].value_counts(normalize=True).sort_index()
    np.testing.assert_allclose(d.loc[SHARE_ROWS, "q"].to_numpy(), truth.to_numpy(), atol=1e-3)
    assert d.loc["mean", "q"] == pytest.approx(DF["q"].mean(), abs=1e-3)
    assert d.loc[SHARE_ROWS, "age"].isna().all()  # a bounded column has no shares
    assert d.attrs["dp"].details["shares of declared values"] == {"q": [1, 2, 3, 4, 5]}


def test_shares_false_is_the_numeric_describe() -> None:
    on = _dp(DF[["q"]]).describe(epsilon=1.0, schema=SCHEMA, random_state=3)
    off = _dp(DF[["q"]]).describe(epsilon=1.0, schema=SCHEMA, random_state=3, shares=False)
    assert list(off.index) == [r for r in on.index if not r.startswith("share ")]
    assert "shares of declared values" not in off.attrs["dp"].details


def test_a_frame_without_declared_values_is_unchanged_by_auto() -> None:
    # no isin of numbers: "auto" is no change at all, seeded bit for bit
    bounded = pa.DataFrameSchema({"age": pa.Column(float, pa.Check.in_range(18, 90))})
    kw: dict[str, Any] = {"epsilon": 1.0, "schema": bounded, "random_state": 4}
    auto = _dp(DF[["age"]]).describe(**kw)
    off = _dp(DF[["age"]]).describe(shares=False, **kw)
    pd.testing.assert_frame_equal(auto, off)


def test_shares_weigh_a_categorical_columns_histogram() -> None:
    # the documented split: the shares' histogram gets what the categorical column's
    # histogram gets, and the numeric rows what a numeric column gets
    d = _dp(DF[["q", "age", "r"]]).describe(epsilon=1.0, schema=SCHEMA, random_state=0)
    split = _spent(d)
    per_column: dict[str, float] = defaultdict(float)
    for key, value in split.items():
        if key != "q: category_counts":
            per_column[key.split(": ")[0]] += value
    assert split["q: category_counts"] == pytest.approx(split["r: category_counts"])
    assert per_column["q"] == pytest.approx(per_column["age"])
    assert per_column["r"] == pytest.approx(per_column["age"])
    assert sum(split.values()) == pytest.approx(1.0)


def test_auto_stops_at_the_documented_size() -> None:
    values = list(range(SHARES_AUTO_MAX + 1))
    df = pd.DataFrame({"k": RNG.choice(values, 500)})
    schema = pa.DataFrameSchema({"k": pa.Column(int, pa.Check.isin(values))})
    auto = _dp(df).describe(epsilon=1.0, schema=schema, random_state=0)
    assert not any(str(r).startswith("share ") for r in auto.index)
    forced = _dp(df).describe(epsilon=1.0, schema=schema, random_state=0, shares=True)
    assert [r for r in forced.index if r.startswith("share ")] == [f"share {v}" for v in values]
    small = pa.DataFrameSchema({"k": pa.Column(int, pa.Check.isin(values[:-1]))})
    assert len(share_declarations({}, "auto")) == 0
    kept = _dp(df).describe(epsilon=1.0, schema=small, random_state=0)
    assert sum(str(r).startswith("share ") for r in kept.index) == SHARES_AUTO_MAX


@pytest.mark.parametrize(
    ("shares", "frame", "match"),
    [
        ("yes", DF[["q"]], "shares must be"),
        (1, DF[["q"]], "shares must be"),
        (None, DF[["q"]], "shares must be"),
        (True, DF[["age"]], "shares=True needs"),
    ],
)
def test_refusals_spend_nothing(shares: Any, frame: pd.DataFrame, match: str) -> None:
    budget = PrivacyBudget(epsilon=1.0)
    with pytest.raises(ValueError, match=match):
        _dp(frame).describe(epsilon=1.0, schema=SCHEMA, budget=budget, shares=shares)
    assert budget.spent[0] == 0.0 and len(budget.ledger) == 0


def test_values_outside_the_set_and_missing_values_are_in_no_share() -> None:
    df = pd.DataFrame({"q": [1.0, 2.0, 2.0, np.nan, 7.0] * 400})
    schema = pa.DataFrameSchema(
        {"q": pa.Column(float, pa.Check.isin([1, 2, 3, float("nan")]), nullable=True)}
    )
    d = _dp(df).describe(epsilon=1e6, schema=schema, random_state=0)
    shares = d.loc[["share 1", "share 2", "share 3"], "q"].to_numpy()
    np.testing.assert_allclose(shares, [1 / 3, 2 / 3, 0.0], atol=1e-3)


def test_grouped_and_series_describe_have_the_shares() -> None:
    g = _dp(DF).groupby("g").describe(["q"], epsilon=1e6, schema=SCHEMA, random_state=0)
    exact = DF.groupby("g")["q"].value_counts(normalize=True).unstack()
    for v in (1, 2, 3, 4, 5):
        np.testing.assert_allclose(g[("q", f"share {v}")], exact[v], atol=1e-3)
    s = _dp(DF["q"]).describe(epsilon=1.0, schema=SCHEMA, random_state=0)
    assert list(s.index[-5:]) == SHARE_ROWS and s.name == "q"


def test_the_bundled_survey_has_no_numeric_answer_scale() -> None:
    # the goldens' frame: "auto" leaves its describe as it was
    from pandas_dp.datasets import load_survey, survey_schema

    d = _dp(load_survey()).describe(epsilon=1.0, schema=survey_schema(), random_state=0)
    assert "shares of declared values" not in d.attrs["dp"].details


def test_auto_bounds_describe_keeps_a_declared_scales_shares() -> None:
    # bounds="auto": the declared scale keeps its values (and shares); the estimated
    # column declares none
    df = DF[["q", "age"]]
    scale = pa.DataFrameSchema({"q": pa.Column(int, pa.Check.isin([1, 2, 3, 4, 5]))})
    d = _dp(df).describe(epsilon=1.0, delta=1e-6, schema=scale, bounds="auto", random_state=0)
    assert list(d.index[-5:]) == SHARE_ROWS
    assert d.loc[SHARE_ROWS, "q"].notna().all() and d.loc[SHARE_ROWS, "age"].isna().all()
    off = _dp(df).describe(
        epsilon=1.0, delta=1e-6, schema=scale, bounds="auto", random_state=0, shares=False
    )
    assert not any(str(r).startswith("share ") for r in off.index)
