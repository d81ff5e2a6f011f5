"""Keyed-hash truncation: a value hashes in a canonical form fixed by its dtype alone.

pandas hashes an Arrow integer or boolean column holding a null anywhere through
float64 or object: ``2**53`` and ``2**53 + 1`` then hash alike, and every other
value hashes differently. Which rows a unit keeps, and which rows are one unit,
must be a function of the unit's own rows (and of the key and the public dtypes)
only, never of whether some other row is missing (pandas_dp.engines.units).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("pyarrow")

from pandas_dp.engines.units import (
    _content_hash,
    contribution_mask,
    distinct_units,
    unit_codes,
)

KEY = "0123456789abcdef"
A, B = 2**53, 2**53 + 1  # one float64: alike once converted through float64
TOP = 2**64 - 1  # 2**64 - 1 and 2**64 - 2: one float64 too

#: distinct values of each nullable dtype (the first two equal as float64)
SAMPLES: dict[str, list[object]] = {
    "int64[pyarrow]": [A, B, -3, 0],
    "uint64[pyarrow]": [TOP, TOP - 1, 0, 7],
    "int8[pyarrow]": [-128, -1, 0, 127],
    "bool[pyarrow]": [True, False],
    "Int64": [A, B, -3, 0],
    "UInt64": [TOP, TOP - 1, 0, 7],
    "boolean": [True, False],
}
#: unit ids of each integer dtype: consecutive, from a value where float64 is coarse
FIRST_ID = {
    "int64[pyarrow]": A,
    "uint64[pyarrow]": TOP - 999,
    "int8[pyarrow]": -100,
    "Int64": A,
    "UInt64": TOP - 999,
}
UNITS = 200


def _frame(dtype: str, where: str, seed: int = 0) -> pd.DataFrame:
    """``UNITS`` units of 1 to 6 rows; ``x`` and ``g`` of ``dtype``, and ``pid`` too
    when the null under test is a unit's (``where == "pid"``)."""
    rng = np.random.default_rng(seed)
    values = SAMPLES[dtype]
    sizes = rng.integers(1, 7, UNITS)
    ids = np.repeat(np.arange(UNITS), sizes)
    n = len(ids)
    pid = (
        pd.Series([FIRST_ID[dtype] + int(i) for i in ids], dtype=dtype)
        if where == "pid"
        else pd.Series(ids)
    )
    pick = rng.integers(0, len(values), (2, n))
    return pd.DataFrame(
        {
            "pid": pid,
            "x": pd.Series([values[i] for i in pick[0]], dtype=dtype),
            "g": pd.Series([values[i] for i in pick[1]], dtype=dtype),
        }
    )


def _with_null(df: pd.DataFrame, where: str) -> pd.DataFrame:
    """``df`` and one more row, of a new unit (or of none), missing in column ``where``."""
    row = {c: df[c].iloc[:1].to_numpy() for c in df.columns}
    row["pid"] = np.array([UNITS + 10**6]) if where != "pid" else df["pid"].iloc[:1].to_numpy()
    extra = pd.DataFrame(row).astype(df.dtypes.to_dict())
    extra[where] = pd.Series([None], dtype=df[where].dtype)
    grown = pd.concat([df, extra], ignore_index=True)
    assert (grown.dtypes == df.dtypes).all()
    return grown


def _masks(df: pd.DataFrame) -> dict[str, np.ndarray]:
    """The kept rows under a row bound, and under group bounds (groups ranked by value)."""
    codes = np.asarray(pd.factorize(df["g"], sort=False)[0], dtype=np.intp)  # missing: -1
    rows = df[["x", "g"]]
    return {
        "rows": contribution_mask(rows, df["pid"], key=KEY, max_rows_per_unit=1),
        "groups": contribution_mask(
            rows,
            df["pid"],
            key=KEY,
            max_rows_per_unit=3,
            groups=codes,
            group_by=("g",),
            max_groups_per_unit=1,
            max_rows_per_group=2,
        ),
    }


CASES = [(dtype, where) for dtype in SAMPLES for where in ("x", "g", "pid") if where != "pid"] + [
    (dtype, "pid") for dtype in FIRST_ID
]


@pytest.mark.parametrize(("dtype", "where"), CASES, ids=lambda v: str(v))
def test_a_null_elsewhere_changes_no_units_rows(dtype: str, where: str) -> None:
    """One added row with a missing value (content, group key or unit) changes no
    other row's fate, with the key fixed; and the units are the same units."""
    df = _frame(dtype, where)
    grown = _with_null(df, where)
    n = len(df)
    before, after = _masks(df), _masks(grown)
    for bound in before:
        changed = np.flatnonzero(before[bound] != after[bound][:n])
        assert len(changed) == 0, (bound, len(changed))
        assert before[bound].sum() > UNITS / 2  # the bounds keep rows: a real test
    codes, count = unit_codes(df["pid"])
    grown_codes, grown_count = unit_codes(grown["pid"])
    assert grown_count == count + (where != "pid")
    assert np.array_equal(grown_codes[:n], codes)
    if where == "pid":
        assert count == UNITS and grown_codes[n] == -1
        assert not after["rows"][n] and not after["groups"][n]


@pytest.mark.parametrize("dtype", ["int64[pyarrow]", "uint64[pyarrow]", "Int64", "UInt64"])
def test_integers_alike_as_floats_are_ranked_by_the_key(dtype: str) -> None:
    """Every unit holds two rows, ``a`` then ``b`` (equal as float64), and one other
    unit a row whose value is missing. With one row per unit, which of ``a`` and
    ``b`` a unit keeps is chosen by the keyed hash, never by the rows' order (a tie
    broken by position made it all ``a``, or all ``b`` in the other order)."""
    a, b = SAMPLES[dtype][:2]
    units = 400
    kept = []
    for first, second in ((a, b), (b, a)):
        x = [first, second] * units + [None]
        pid = np.r_[np.repeat(np.arange(units), 2), units]
        df = pd.DataFrame({"pid": pid, "x": pd.Series(x, dtype=dtype)})
        mask = contribution_mask(df[["x"]], df["pid"], key=KEY, max_rows_per_unit=1)
        kept.append(Counter(df["x"][mask].tolist()))
    assert kept[0] == kept[1]
    # about half of each: Binomial(400, 1/2) is 200 +- 10; the bounds are 10 sd away
    assert 100 < kept[0][a] < 300 and kept[0][a] + kept[0][b] == units


@pytest.mark.parametrize("dtype", ["int64[pyarrow]", "uint64[pyarrow]", "Int64", "UInt64"])
def test_units_alike_as_floats_stay_apart_beside_a_missing_unit(dtype: str) -> None:
    """Ids ``a`` and ``b`` (equal as float64) are two people, also when a row with a
    missing id (dropped, whoever it is) is added."""
    a, b = SAMPLES[dtype][:2]
    for ids in ([a, b] * 5, [a, b] * 5 + [None]):
        unit = pd.Series(ids, dtype=dtype)
        codes, count = unit_codes(unit)
        assert count == 2 and codes[:10].tolist() == [0, 1] * 5
        rows = pd.DataFrame({"x": np.arange(len(ids), dtype=float)})
        mask = contribution_mask(rows, unit, key=KEY, max_rows_per_unit=1)
        assert mask.sum() == 2 and set(unit[mask].tolist()) == {a, b}
        assert distinct_units(unit, np.zeros(len(ids), dtype=np.intp), 1).tolist() == [2]


#: columns of every kind of dtype, without a missing value
PLAIN = [
    *(pd.Series(values, dtype=dtype) for dtype, values in SAMPLES.items()),
    pd.Series([1.5, -0.0, 0.0, 2.0**60], dtype="double[pyarrow]"),
    pd.Series([1.5, -0.0, 0.0, 3.0], dtype="Float32"),
    pd.Series(["a", "", "b"], dtype="string[pyarrow]"),
    pd.Series(["a", "", "b"], dtype="str"),
    pd.Series(["a", 1, 2.5, True], dtype=object),
    pd.Series(pd.to_datetime(["2020-01-01", "2021-06-30"])).astype("timestamp[ns][pyarrow]"),
    pd.Series(pd.Categorical(["a", "b", "a"], categories=["a", "b", "c"])),
]


@pytest.mark.parametrize("plain", PLAIN, ids=lambda s: str(s.dtype))
def test_a_value_hashes_alike_beside_missing_values(plain: pd.Series) -> None:
    """A value's hash is the same alone, among other values, and beside a missing
    value (which hashes alike in every dtype); hashing leaves the column intact."""
    with_missing = pd.concat(
        [plain, pd.Series([None], dtype=plain.dtype), plain], ignore_index=True
    )
    copy = with_missing.copy()
    n = len(plain)
    alone = np.array([_content_hash(plain.iloc[i : i + 1], KEY)[0] for i in range(n)])
    got = _content_hash(with_missing, KEY)
    assert got[:n].tolist() == alone.tolist() == got[n + 1 :].tolist()
    assert got[n] == _content_hash(pd.Series([None], dtype=object), KEY)[0]
    assert with_missing.equals(copy)


def test_numbers_hash_by_value_across_their_dtypes() -> None:
    """Integers of every integer dtype hash as their value (booleans as 0 and 1),
    floats of every float dtype as their float64 value, ``-0.0`` as ``0.0``."""
    signed = ["int8", "int32", "int64", "Int8", "Int64", "int8[pyarrow]", "int64[pyarrow]"]
    hashes = {d: _content_hash(pd.Series([-1, 0, 5], dtype=d), KEY) for d in signed}
    unsigned = ["uint8", "uint64", "UInt16", "UInt64", "uint8[pyarrow]", "uint64[pyarrow]"]
    hashes |= {d: _content_hash(pd.Series([0, 5], dtype=d), KEY) for d in unsigned}
    want = _content_hash(pd.Series([-1, 0, 5]), KEY)
    for dtype, got in hashes.items():
        assert got.tolist() == want[-len(got) :].tolist(), dtype
    for dtype in ("bool", "boolean", "bool[pyarrow]"):
        got = _content_hash(pd.Series([False, True], dtype=dtype), KEY)
        assert got.tolist() == _content_hash(pd.Series([0, 1]), KEY).tolist(), dtype
    floats = ["float16", "float32", "float64", "Float32", "float[pyarrow]", "double[pyarrow]"]
    want = _content_hash(pd.Series([1.5, 0.0, 0.0, -2.0]), KEY)
    for dtype in floats:
        got = _content_hash(pd.Series([1.5, -0.0, 0.0, -2.0], dtype=dtype), KEY)
        assert got.tolist() == want.tolist(), dtype
    one = [_content_hash(pd.Series([1], dtype=d), KEY)[0] for d in ("int64", "float64")]
    assert one[0] != one[1]  # an integer and a float hash apart (a column has one dtype)


def _exotic() -> list[pd.Series]:
    import decimal

    import pyarrow as pa

    return [
        pd.Series([1, 0, 0, 3, 1, 0], dtype="Sparse[int64]"),
        pd.Series([1.0, np.nan, 0.0, 3.0, 1.0, np.nan], dtype="Sparse[float64]"),
        pd.Series([1 + 2j, np.nan, 0j, 1 + 2j, -0.0 + 0j, 3j]),
        pd.Series(np.array([1.5, np.nan, -0.0, 0.0, 1.5, 2.0], dtype=np.float16)),
        pd.Series(pd.period_range("2020-01", periods=6, freq="M")).where(lambda s: s.index != 1),
        pd.Series(pd.interval_range(0, 6)).where(lambda s: s.index != 2),
        pd.Series(pd.to_timedelta([1, None, 3, 1, 2, None], unit="s")),
        pd.Series(pd.date_range("2020", periods=6, tz="Europe/Paris")).where(
            lambda s: s.index != 3
        ),
        pd.Series(
            [decimal.Decimal("1.5"), None, decimal.Decimal("2"), decimal.Decimal("1.5"), None, 0],
            dtype=pd.ArrowDtype(pa.decimal128(10, 2)),
        ),
        pd.Series([[1], None, [2, 3], [1], [], None], dtype=pd.ArrowDtype(pa.list_(pa.int64()))),
        pd.Series(["a", None, "b", "a", "", None], dtype="large_string[pyarrow]"),
        pd.Series(pa.array(["a", None, "b", "a", "c", "b"]).dictionary_encode(), dtype=None),
        pd.Series([1.0, float("nan"), None, -0.0, 0.0, 1.0], dtype="double[pyarrow]"),
    ]


def test_never_raises_on_other_dtypes() -> None:
    """Every dtype is hashed (by pandas, else by text): a mask, never an error."""
    groups = np.array([0, 1, -1, 0, 1, 2], dtype=np.intp)
    for column in _exotic():
        rows = pd.DataFrame({"a": column, "b": column.iloc[::-1].to_numpy()})
        mask = contribution_mask(
            rows,
            column,
            key=KEY,
            max_rows_per_unit=1,
            groups=groups,
            group_by=("a",),
            max_groups_per_unit=1,
            max_rows_per_group=1,
        )
        assert mask.dtype == bool and mask.shape == (6,), column.dtype
        assert not mask[np.asarray(column.isna(), dtype=bool)].any(), column.dtype
        assert distinct_units(column, groups, 3).shape == (3,)
