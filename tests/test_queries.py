"""String queries of counting workloads: per-record by construction, never raising.

A count has sensitivity one per query only if each row's answer depends on that row
alone and no value can make the evaluation fail for the whole frame (which once
turned the whole count into 0: one added row moved it by ``n``).
"""

from __future__ import annotations

import decimal
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pandas_dp
from pandas_dp.queries import Query

JUNK = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**20), 10**20),
    st.text(max_size=3),
    st.sampled_from([None, np.nan, pd.NA, pd.NaT, True, False, [1], {"a": 1}, (1, 2)]),
    st.sampled_from([decimal.Decimal("sNaN"), decimal.Decimal(3), b"x", object()]),
)

QUERIES = [
    "o > 1",
    "o == 'n/a' or x < 0",
    "not (o >= 2) and x > -1",
    "o in [1, 'a', None]",
    "o not in [2, 3.5]",
    "(o * 2 > 3) ^ flag",
    "-o < -1 | ~flag",
    "1 < o <= 10",
    "o / x > 0.5",
    "o % 3 == 1",
    "o ** 2 > 4",
]


def _frame(values: list[Any]) -> pd.DataFrame:
    n = len(values)
    return pd.DataFrame(
        {
            "o": pd.Series(values, dtype=object),
            "x": np.linspace(-1.0, 1.0, n) if n else np.zeros(0),
            "flag": np.arange(n) % 2 == 0,
        }
    )


@settings(max_examples=150, deadline=None)
@given(st.lists(JUNK, min_size=1, max_size=12), JUNK, st.sampled_from(QUERIES))
def test_one_added_row_changes_only_its_own_answer(values: list[Any], extra: Any, text: str):
    """The answer of every row of D is the same in D + one row, whatever the added
    row holds: the count moves by at most one. No value raises or warns."""
    base = _frame(values)
    grown = pd.concat([base, _frame([extra]).set_axis([len(values)])])
    query = Query.parse(text, base.columns)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        small, big = query.evaluate(base), query.evaluate(grown)
    assert small.dtype == bool and big.dtype == bool
    assert small.index.equals(base.index) and big.index.equals(grown.index)
    assert small.tolist() == big.iloc[:-1].tolist()
    alone = query.evaluate(_frame([extra]))
    assert bool(big.iloc[-1]) == bool(alone.iloc[0])  # each row's answer is its own


def test_the_audit_frame_counts_the_same_with_a_junk_row():
    """1000 numbers in an object column; one added "n/a" once made the count 0."""
    d = pd.DataFrame({"x": pd.Series([5.0] * 1000, dtype=object)})
    d2 = pd.concat([d, pd.DataFrame({"x": pd.Series(["n/a"], dtype=object)})], ignore_index=True)
    q = Query.parse("x > 1", d.columns)
    assert int(q.evaluate(d).sum()) == int(q.evaluate(d2).sum()) == 1000


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("x > x.mean()", "method call (.mean())"),
        ("x.rank() > 1", "method call (.rank())"),
        ("x > x.shift(1)", "method call (.shift())"),
        ("abs(x) > 1", "function call"),
        ("x > o[0]", "subscript"),
        ("x > @limit", "not a valid expression"),
        ("x if flag else o", "ifexp"),
        ("[1, 2] == x", "list outside 'in'"),
        ("x in o", "list or tuple of constants"),
        ("x is None", "'is'"),
        ("x << 2 > 1", "bit shift"),
        ("age > 1", "not a column"),
        ("x >", "not a valid expression"),
    ],
)
def test_queries_outside_the_grammar_are_refused_before_the_charge(text: str, words: str):
    df = _frame([1, 2, 3])
    budget = pandas_dp.PrivacyBudget(epsilon=5.0)
    with budget, pytest.raises(ValueError, match="query") as info:
        df.dp.counts({"q": text}, epsilon=1.0)
    assert words in str(info.value)
    assert budget.spent == (0.0, 0.0)


@pytest.mark.parametrize(
    ("column", "text"),
    [
        (pd.Series(["a", "b"], dtype="str"), "c > 1"),
        (pd.Series(["a", "b"], dtype="category"), "c > 'a'"),
        (pd.Series([1.0, 2.0]), "c + 1"),
        (pd.Series([1, 2]), "c"),
    ],
)
def test_queries_that_fail_on_the_dtypes_are_refused_before_the_charge(
    column: pd.Series, text: str
):
    """A comparison the column's dtype cannot make, or an answer that is not a truth
    value, is refused from public facts (dtypes, stand-in values), not after the
    charge as an all-false count."""
    df = pd.DataFrame({"c": column})
    budget = pandas_dp.PrivacyBudget(epsilon=5.0)
    with budget, pytest.raises(TypeError, match="query"):
        df.dp.counts({"q": text}, epsilon=1.0)
    assert budget.spent == (0.0, 0.0)


def test_well_typed_queries_agree_with_pandas_eval():
    rng = np.random.default_rng(4)
    n = 200
    df = pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "smoker": rng.random(n) < 0.3,
            "region": rng.choice(["N", "S", "E"], n),
            "income": np.where(rng.random(n) < 0.1, np.nan, rng.normal(50, 20, n)),
        }
    )
    for text in [
        "smoker and age > 60",
        "smoker & (age > 60)",
        "not smoker or region == 'N'",
        "~smoker | (income < 40)",
        "region in ['N', 'S']",
        "region not in ['N']",
        "18 <= age < 30",
        "income * 2 > 100",
        "age % 2 == 0",
        "-income < -60",
        "income != 50",
    ]:
        ours = Query.parse(text, df.columns).evaluate(df)
        theirs = df.eval(text)
        assert ours.tolist() == theirs.tolist(), text


def test_backticked_column_names_and_nullable_booleans():
    df = pd.DataFrame(
        {
            "my col": [1, 5, 9],
            "ok": pd.array([True, None, False], dtype="boolean"),
        }
    )
    assert Query.parse("`my col` > 2", df.columns).evaluate(df).tolist() == [False, True, True]
    # a missing truth value is not counted
    assert Query.parse("ok or `my col` > 8", df.columns).evaluate(df).tolist() == [
        True,
        False,
        True,
    ]


def test_a_workload_with_string_queries_releases_per_record_counts():
    df = pd.DataFrame({"x": pd.Series([1, "n/a", 3, None] * 50, dtype=object)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c = df.dp.counts({"big": "x > 2", "text": "x == 'n/a'"}, epsilon=1e6, random_state=1)
    assert c.tolist() == [50, 50]
