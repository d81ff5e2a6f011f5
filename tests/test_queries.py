"""String queries of counting workloads: per-record by construction, never raising.

A count has sensitivity one per query only if each row's answer depends on that row
alone and no value can make the evaluation fail for the whole frame (which once
turned the whole count into 0: one added row moved it by ``n``), nor switch how the
other rows are evaluated (which once made one added row ``b = -1`` turn every
``a ** b`` of an int64 column from numpy's wrapped ``0`` to Python's ``2 ** 64``).
"""

from __future__ import annotations

import decimal
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import pandas_dp
from pandas_dp.request.queries import Query, _Evaluator

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
        (pd.Series([1, 2]), "c ** 2"),  # computed value by value: refused from the tree
        (pd.Series([1, 2]), "-c"),
        (pd.Series([1, 2]), "c + 'a' > 1"),
        (pd.Series(pd.to_datetime(["2021-01-01"])), "c + 1 > 0"),
        (pd.Series(pd.to_datetime(["2021-01-01"])), "c - c > 'no date'"),
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


# ------------------------------------------------- typed columns: one rule per dtype

N = 1000
I64 = np.iinfo(np.int64)


def _int_powers(b: int) -> pd.DataFrame:
    return pd.DataFrame({"a": np.full(N, 2, dtype="int64"), "b": np.full(N, b, dtype="int64")})


def test_one_negative_power_in_an_int_column_changes_only_its_own_row():
    """The audit: int64 ``2 ** 64`` wraps to 0 on the whole column, but one added row
    with ``b = -1`` made the whole column fail and every row go to Python's ints,
    where ``2 ** 64 > 100``: the count moved by 1000 against a sensitivity of one."""
    d = _int_powers(64)
    grown = pd.concat([d, pd.DataFrame({"a": [2], "b": [-1]})], ignore_index=True)
    query = Query.parse("a ** b > 100", d.columns)
    small, big = query.evaluate(d), query.evaluate(grown)
    assert small.tolist() == big.iloc[:-1].tolist() == [True] * N  # integers are exact
    assert not big.iloc[-1]  # 2 ** -1 = 0.5
    counts = [
        int(f.dp.counts({"q": "a ** b > 100"}, epsilon=1e6, random_state=0)["q"])
        for f in (d, grown)
    ]
    assert counts == [N, N]


def test_one_datetime_overflow_changes_only_its_own_row():
    """The audit: one row whose ``d + t`` overflows datetime64[ns] sent every row to
    Timestamps, where ``Timestamp > '2020-01-01'`` failed: 999 rows stopped counting."""
    d = pd.DataFrame(
        {
            "d": pd.Series(pd.to_datetime(["2021-01-01"] * N)).astype("datetime64[ns]"),
            "t": pd.Series(pd.to_timedelta([1] * N, unit="D")).astype("timedelta64[ns]"),
        }
    )
    add = pd.DataFrame(
        {
            "d": pd.Series(pd.to_datetime(["2250-01-01"])).astype("datetime64[ns]"),
            "t": pd.Series(pd.to_timedelta([36500], unit="D")).astype("timedelta64[ns]"),
        }
    )
    grown = pd.concat([d, add], ignore_index=True)
    query = Query.parse("d + t > '2020-01-01'", d.columns)
    query.check(d)
    small, big = query.evaluate(d), query.evaluate(grown)
    assert small.tolist() == big.iloc[:-1].tolist() == [True] * N
    assert not big.iloc[-1]  # out of range: missing, not counted
    assert not Query.parse("not (d + t > '2020-01-01')", d.columns).evaluate(grown).iloc[-1]
    counts = [
        int(f.dp.counts({"q": "d + t > '2020-01-01'"}, epsilon=1e6, random_state=0)["q"])
        for f in (d, grown)
    ]
    assert counts == [N, N]


def test_an_integer_division_by_zero_does_not_turn_the_other_rows_to_float():
    """pandas makes ``a // b`` float for every row when one ``b`` is 0, so ``* a``
    stopped wrapping in int64 for all of them."""
    big = 2**40
    d = pd.DataFrame({"a": np.full(N, big, dtype="int64"), "b": np.ones(N, dtype="int64")})
    grown = pd.concat([d, pd.DataFrame({"a": [1], "b": [0]})], ignore_index=True)
    query = Query.parse("a // b * a > 0", d.columns)
    small, big_ = query.evaluate(d), query.evaluate(grown)
    assert small.tolist() == big_.iloc[:-1].tolist() == [True] * N  # 2**80 > 0
    assert not big_.iloc[-1]


def test_an_exact_power_too_large_is_missing_and_takes_no_time():
    """Python's exact integers are guarded: a power of more than 65,536 bits (or a
    sequence repeated into more than 65,536 items) is missing instead of taking
    unbounded time and memory."""
    df = pd.DataFrame(
        {
            "o": pd.Series([2, 2, 10, "ab", "%0999999d"], dtype=object),
            "b": np.array([10, 2**20, 10**5, 10**5, 2], dtype="int64"),
        }
    )
    answers = Query.parse("o ** b > 1", df.columns).evaluate(df)
    assert answers.tolist() == [True, False, False, False, False]
    assert Query.parse("o * b == 'x'", df.columns).evaluate(df).tolist() == [False] * 5
    assert Query.parse("o % b == 'x'", df.columns).evaluate(df).tolist() == [False] * 5


def test_a_whole_column_operation_that_fails_on_one_row_is_redone_row_by_row():
    """The safety net of the whole-column operations (chosen from the dtypes not to
    fail): were one to fail on some row, each row is redone alone, the failing one
    is missing, and a float result stays float -- the other rows' answers do not
    change, and neither does how what comes next is evaluated."""

    def picky(x: pd.Series) -> pd.Series:  # fails on the whole column if any x == 0
        if (x == 0).any():
            raise ArithmeticError("a zero")
        return 1.0 / x

    df = pd.DataFrame({"x": [1.0, 2.0, 4.0]})
    grown = pd.concat([df, pd.DataFrame({"x": [0.0]})], ignore_index=True)
    query = Query.parse("x > 0", df.columns)
    small = _Evaluator(query, df, strict=False)._whole(picky, df.x)
    big = _Evaluator(query, grown, strict=False)._whole(picky, grown.x)
    assert small.dtype == big.dtype == np.float64
    assert big.iloc[:-1].tolist() == small.tolist() == [1.0, 0.5, 0.25]
    assert np.isnan(big.iloc[-1])
    with pytest.raises(ArithmeticError):  # check() sees the failure, before the charge
        _Evaluator(query, grown, strict=True)._whole(picky, grown.x)


DATES = np.array(["1677-09-22", "1970-01-01", "2021-01-01", "2250-01-01", "2262-04-11"])
EXTREME_INTS = st.one_of(
    st.sampled_from([0, 1, -1, 2, -2, 3, 63, 64, -64, 2**31, 2**62, I64.max, I64.min]),
    st.integers(I64.min, I64.max),
)
ROWS = st.tuples(
    EXTREME_INTS,  # a
    EXTREME_INTS,  # b
    st.one_of(st.none(), EXTREME_INTS),  # n: Int64 (None is missing)
    st.floats(allow_nan=True, allow_infinity=True),  # x
    st.one_of(  # d: datetime64[ns] as nanoseconds (I64.min is NaT)
        st.sampled_from([I64.min, I64.max, *DATES.astype("datetime64[ns]").view("int64")]),
        st.integers(I64.min, I64.max),
    ),
    st.one_of(  # t: timedelta64[ns] as nanoseconds (I64.min is NaT)
        st.sampled_from([I64.min, I64.max, 0, 86_400 * 10**9, 36_500 * 86_400 * 10**9]),
        st.integers(I64.min, I64.max),
    ),
    st.booleans(),  # flag
)
TYPED_QUERIES = [
    "a ** b > 100",
    "a ** b == 0",
    "a * b > 0",
    "a + b < a",
    "-a > 0",
    "a // b * a > 0",
    "a % b == 1",
    "a / b > 1",
    "n ** b > 1",
    "not (n * a < 0)",
    "x * a > 1",
    "x ** b > 1",
    "x / a < 0",
    "x * 2 > 1e308",
    "(a * b > 0) ^ flag",
    "a + 1 in [0, 9223372036854775808]",
    "d + t > '2020-01-01'",
    "not (d - t < '1990-01-01')",
    "d + t in ['', 0]",
    "t * b > t",
    "d - d > t",
]


def _typed_frame(rows: list[tuple[Any, ...]], start: int = 0) -> pd.DataFrame:
    a, b, n, x, d, t, flag = zip(*rows, strict=True) if rows else ([],) * 7
    return pd.DataFrame(
        {
            "a": np.array(a, dtype="int64"),
            "b": np.array(b, dtype="int64"),
            "n": pd.array(list(n), dtype="Int64"),
            "x": np.array(x, dtype="float64"),
            "d": np.array(d, dtype="int64").view("datetime64[ns]"),
            "t": np.array(t, dtype="int64").view("timedelta64[ns]"),
            "flag": np.array(flag, dtype=bool),
        },
        index=pd.RangeIndex(start, start + len(rows)),
    )


DAY = 86_400 * 10**9  # nanoseconds
NS_2021, NS_2250 = DATES[2:4].astype("datetime64[ns]").view("int64").tolist()
#: A row (a, b, n, x, d, t, flag) with 2 ** 64 (which numpy wraps to 0) and 2021 + 1 day.
PLAIN = (2, 64, 2, 1.5, NS_2021, DAY, True)


@settings(max_examples=100, deadline=None)
@example(rows=[PLAIN] * 3, extra=(2, -1, None, 0.0, 0, 0, False), text="a ** b > 100")
@example(rows=[PLAIN] * 3, extra=(2, -1, -1, 0.0, 0, 0, False), text="n ** b > 1")
@example(rows=[PLAIN] * 3, extra=(1, 0, 1, 0.0, 0, 0, False), text="a // b * a > 0")
@example(
    rows=[PLAIN] * 3,
    extra=(0, 0, 0, 0.0, NS_2250, 36_500 * DAY, False),
    text="d + t > '2020-01-01'",
)
@given(st.lists(ROWS, min_size=1, max_size=6), ROWS, st.sampled_from(TYPED_QUERIES))
def test_typed_columns_one_added_row_changes_only_its_own_answer(
    rows: list[tuple[Any, ...]], extra: tuple[Any, ...], text: str
):
    """int64, Int64, float64, datetime64 and timedelta64 columns with extreme values
    (overflow, division by zero, negative powers, NaT, NA, inf, nan): the answers of
    the rows of D are the same in D + one row, each row's answer is its own (the
    same on the row alone), and nothing raises or warns."""
    base = _typed_frame(rows)
    grown = pd.concat([base, _typed_frame([extra], start=len(rows))])
    query = Query.parse(text, base.columns)
    query.check(base)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        small, big = query.evaluate(base), query.evaluate(grown)
        alone = [bool(query.evaluate(grown.iloc[[i]]).iloc[0]) for i in range(len(grown))]
    assert small.dtype == bool and big.dtype == bool
    assert small.index.equals(base.index) and big.index.equals(grown.index)
    assert small.tolist() == big.iloc[:-1].tolist()
    assert big.tolist() == alone
