"""Keyed-hash truncation of privacy units (pandas_dp.engines.units)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest

from pandas_dp.engines.units import (
    KEY_ALPHABET,
    contribution_mask,
    distinct_units,
    hash_key,
    unit_codes,
)
from pandas_dp.noise.mechanisms import RandomSource

KEY = "0123456789abcdef"


def frame(seed: int = 0, n: int = 3000, units: int = 300, groups: int = 12) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "pid": rng.integers(0, units, n),
            "x": rng.integers(0, 6, n).astype(float),  # few values: many duplicate rows
            "g": rng.integers(0, groups, n),
        }
    )


def kept(df: pd.DataFrame, mask: np.ndarray) -> Counter[tuple[object, ...]]:
    return Counter(map(tuple, df[mask].itertuples(index=False)))


def mask_of(df: pd.DataFrame, key: str = KEY, **bounds: int) -> np.ndarray:
    kw: dict[str, object] = {"max_rows_per_unit": bounds.pop("k")}
    if bounds:
        kw["groups"] = df["g"].to_numpy()
        kw["max_groups_per_unit"] = bounds.get("g")
        kw["max_rows_per_group"] = bounds.get("c")
    return contribution_mask(df[["x", "g"]], df["pid"], key=key, **kw)  # type: ignore[arg-type]


BOUNDS = [{"k": 1}, {"k": 3}, {"k": 4, "g": 2}, {"k": 5, "c": 2}, {"k": 3, "g": 2, "c": 1}]


def per_unit(df: pd.DataFrame, mask: np.ndarray) -> pd.DataFrame:
    sub = df[mask]
    return pd.DataFrame(
        {
            "rows": sub.groupby("pid").size(),
            "groups": sub.groupby("pid")["g"].nunique(),
            "per_group": sub.groupby(["pid", "g"]).size().groupby(level=0).max(),
        }
    )


@pytest.mark.parametrize("bounds", BOUNDS, ids=str)
def test_caps_are_respected_exactly(bounds: dict[str, int]) -> None:
    """No unit over any cap, and a unit keeps as many rows as the caps allow."""
    df = frame()
    mask = mask_of(df, **bounds)
    got = per_unit(df, mask)
    assert (got["rows"] <= bounds["k"]).all()
    assert (got["groups"] <= bounds.get("g", 10**9)).all()
    assert (got["per_group"] <= bounds.get("c", 10**9)).all()
    # greedy optimum: each unit keeps min(k, sum over its best g groups of min(c, rows))
    for pid, rows in df.groupby("pid"):
        sizes = sorted(rows.groupby("g").size().clip(upper=bounds.get("c", 10**9)))
        best = sum(sizes[-bounds["g"] :]) if "g" in bounds else sum(sizes)
        have = got["rows"].get(pid, 0)
        if "g" in bounds:  # groups are chosen by hash, not by size: at least g groups kept
            assert got["groups"].get(pid, 0) == min(bounds["g"], len(sizes))
            assert have <= min(bounds["k"], best)
        else:
            assert have == min(bounds["k"], best), pid


@pytest.mark.parametrize("bounds", BOUNDS, ids=str)
def test_order_and_index_invariance(bounds: dict[str, int]) -> None:
    """Shuffling rows and relabelling the index keeps the same multiset of kept rows."""
    df = frame(1)
    base = kept(df, mask_of(df, **bounds))
    for seed in range(3):
        shuffled = df.sample(frac=1.0, random_state=seed)
        shuffled.index = np.random.default_rng(seed).permutation(len(df)) * 7 + 3
        assert kept(shuffled, mask_of(shuffled, **bounds)) == base


def test_chunking_invariance() -> None:
    """Truncating each unit's rows in a separate chunk keeps the same rows."""
    df = frame(2)
    base = kept(df, mask_of(df, k=2, g=2, c=1))
    parts = [df[df["pid"] % 4 == r] for r in range(4)]
    chunked: Counter[tuple[object, ...]] = Counter()
    for part in parts:
        chunked += kept(part, mask_of(part, k=2, g=2, c=1))
    assert chunked == base


def test_unit_local() -> None:
    """Removing a unit changes no other unit's kept rows (what the sensitivities need)."""
    df = frame(3)
    base = df[mask_of(df, k=2, g=2, c=1)]
    for pid in (0, 5, 17):
        rest = df[df["pid"] != pid]
        got = rest[mask_of(rest, k=2, g=2, c=1)]
        assert got.sort_index().equals(base[base["pid"] != pid].sort_index())


def _first_appearance_mask(df: pd.DataFrame, group_by: tuple[str, ...]) -> np.ndarray:
    """Truncation with the group numbered by first appearance, as private keys are."""
    codes = pd.factorize(df["g"], sort=False)[0]
    return contribution_mask(
        df[["x", "g"]],
        df["pid"],
        key=KEY,
        max_rows_per_unit=3,
        groups=codes,
        group_by=group_by,
        max_groups_per_unit=2,
        max_rows_per_group=1,
    )


def test_unit_local_when_codes_follow_row_order() -> None:
    """Private keys are coded by first appearance, so one added unit whose rows come
    first renumbers the keys. Ranked by the keys' values (``group_by``), no other
    unit's kept rows change; ranked by the codes, some do."""
    df = frame(4)
    newcomer = pd.DataFrame({"pid": [-1] * 6, "x": 1.0, "g": [11, 10, 9, 8, 7, 6]})
    grown = pd.concat([newcomer, df], ignore_index=True)
    for group_by, unchanged in ((("g",), True), ((), False)):
        base = kept(df, _first_appearance_mask(df, group_by))
        mask = _first_appearance_mask(grown, group_by)
        others = kept(grown.iloc[6:], mask[6:])
        assert (others == base) is unchanged, group_by


def test_equal_keys_of_different_types_rank_alike() -> None:
    """``1``, ``1.0`` and ``True`` are one group key: the unit's groups are ranked by
    the smallest hash over its rows, so the kept rows do not depend on row order."""
    rng = np.random.default_rng(5)
    n = 600
    df = pd.DataFrame(
        {
            "pid": rng.integers(0, 40, n),
            "x": rng.integers(0, 3, n).astype(float),
            "g": pd.Series([[1, 1.0, True, "a", "b", 2][i] for i in rng.integers(0, 6, n)]),
        }
    )
    base = kept(df, _first_appearance_mask(df, ("g",)))
    for seed in range(4):
        shuffled = df.sample(frac=1.0, random_state=seed)
        assert kept(shuffled, _first_appearance_mask(shuffled, ("g",))) == base


def test_hash_key_reproducible_and_secure() -> None:
    a, b = hash_key(RandomSource(5)), hash_key(RandomSource(5))
    assert a == b and len(a) == 16 and len(a.encode()) == 16
    assert set(a) <= set(KEY_ALPHABET)
    assert hash_key(RandomSource(6)) != a
    assert len({hash_key(RandomSource()) for _ in range(20)}) == 20
    pd.util.hash_pandas_object(pd.Series(["a"]), hash_key=a)  # pandas accepts it


def test_seeded_source_reproduces_the_choice() -> None:
    df = frame(4)
    one = mask_of(df, key=hash_key(RandomSource(11)), k=1)
    two = mask_of(df, key=hash_key(RandomSource(11)), k=1)
    assert np.array_equal(one, two)


def test_different_keys_choose_differently() -> None:
    df = frame(4)
    masks = [mask_of(df, key=hash_key(RandomSource(s)), k=1) for s in range(4)]
    for i in range(4):
        for j in range(i + 1, 4):
            assert not np.array_equal(masks[i], masks[j])
    # each key keeps one row per unit, and over keys the choice spreads: a unit with
    # several distinct rows does not always keep the same one
    counts = np.sum(masks, axis=0)
    assert (counts > 0).sum() > df["pid"].nunique() * 1.5


def test_each_row_is_chosen_about_uniformly() -> None:
    """Over many keys, each of a unit's 4 distinct rows is kept about 1/4 of the time.

    400 keys: the count of one row is Binomial(400, 1/4), mean 100, sd 8.7; the
    bounds 60..140 are 4.6 sd away, false alarm about 4 * 4e-6.
    """
    df = pd.DataFrame({"pid": [1, 1, 1, 1], "x": [1.0, 2.0, 3.0, 4.0]})
    total = np.zeros(4)
    for seed in range(400):
        key = hash_key(RandomSource(seed))
        total += contribution_mask(df[["x"]], df["pid"], key=key, max_rows_per_unit=1)
    assert total.sum() == 400
    assert ((total > 60) & (total < 140)).all(), total


def test_missing_units_are_dropped() -> None:
    df = pd.DataFrame(
        {"pid": pd.Series([1, None, np.nan, 2, pd.NA], dtype=object), "x": [1.0, 2, 3, 4, 5]}
    )
    mask = contribution_mask(df[["x"]], df["pid"], key=KEY, max_rows_per_unit=3)
    assert mask.tolist() == [True, False, False, True, False]
    assert distinct_units(df["pid"], np.zeros(5, dtype=np.intp), 1).tolist() == [2]


JUNK = [
    pd.Series([1, "1", None, np.nan, [1, 2], {"a": 1}, 2.5, float("inf")], dtype=object),
    pd.Series([1.0, np.nan, -0.0, 0.0, np.inf, -np.inf, 1e300, 1.0]),
    pd.Series([1, None, 3, 1, None, 2, 2, 1], dtype="Int64"),
    pd.Series(["a", None, "b", "a", "", "c", "c", "a"], dtype="string"),
    pd.Series(pd.Categorical(["a", None, "b", "a", "b", "a", None, "a"])),
    pd.Series(pd.to_datetime(["2020-01-01", None] * 4)),
    pd.Series([True, False] * 4),
]


@pytest.mark.parametrize("junk", JUNK, ids=lambda s: str(s.dtype))
def test_never_raises_on_junk(junk: pd.Series) -> None:
    rows = pd.DataFrame({"a": junk.to_numpy(), "b": junk.iloc[::-1].to_numpy()})
    groups = np.array([0, 1, -1, 0, 1, 2, 0, 1], dtype=np.intp)
    mask = contribution_mask(
        rows,
        junk,
        key=KEY,
        max_rows_per_unit=2,
        groups=groups,
        max_groups_per_unit=1,
        max_rows_per_group=1,
    )
    assert mask.dtype == bool and mask.shape == (8,)
    counts = distinct_units(junk, groups, 3)
    assert counts.dtype == np.int64 and counts.shape == (3,)


def test_zero_rows() -> None:
    empty = pd.DataFrame({"x": pd.Series([], dtype=float)})
    unit = pd.Series([], dtype=object)
    assert contribution_mask(empty, unit, key=KEY, max_rows_per_unit=1).shape == (0,)
    groups = np.array([], dtype=np.intp)
    mask = contribution_mask(
        empty, unit, key=KEY, max_rows_per_unit=1, groups=groups, max_groups_per_unit=1
    )
    assert mask.shape == (0,)
    assert distinct_units(unit, groups, 2).tolist() == [0, 0]


def test_distinct_units_counts() -> None:
    df = frame(5, n=500, units=40, groups=5)
    got = distinct_units(df["pid"], df["g"].to_numpy(), 7)
    want = df.groupby("g")["pid"].nunique().reindex(range(7), fill_value=0)
    assert got.tolist() == want.tolist()


def test_unit_codes_dense() -> None:
    codes, count = unit_codes(pd.Series([3.0, np.nan, 3.0, -0.0, 0.0]))
    assert codes.tolist() == [0, -1, 0, 1, 1] and count == 2


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_rows_per_unit": 0}, "max_rows_per_unit"),
        ({"max_rows_per_unit": 1.5}, "max_rows_per_unit"),
        ({"max_rows_per_unit": True}, "max_rows_per_unit"),
        ({"max_rows_per_unit": 1, "max_groups_per_unit": 1}, "need groups"),
        ({"max_rows_per_unit": 1, "key": "short"}, "16 bytes"),
        ({"max_rows_per_unit": 1, "groups": np.zeros(2, dtype=np.intp)}, "aligned"),
    ],
)
def test_argument_errors(kwargs: dict[str, object], match: str) -> None:
    df = pd.DataFrame({"x": [1.0, 2.0, 3.0]})
    kwargs = {"key": KEY, **kwargs}
    with pytest.raises(ValueError, match=match):
        contribution_mask(df, pd.Series([1, 1, 2]), **kwargs)  # type: ignore[arg-type]


def test_ties_in_the_packed_key_are_ranked_by_the_full_hash() -> None:
    """Hashes equal in their top bits (the packed sort key) but not in full: exact rank."""
    from pandas_dp.engines.units import _keep_lowest

    h = np.array([3, 2, 10, 2, 7], dtype=np.uint64)  # 3 >> 1 == 2 >> 1: a packed tie
    codes = np.zeros(5, dtype=np.intp)
    active = np.ones(5, dtype=bool)
    for perm in ([0, 1, 2, 3, 4], [4, 3, 2, 1, 0], [2, 0, 4, 1, 3]):
        p = np.array(perm)
        keep = _keep_lowest(codes, 1, h[p], 2, active)
        assert sorted(h[p][keep].tolist()) == [2, 2]
        keep = _keep_lowest(codes, 1, h[p], 3, active)
        assert sorted(h[p][keep].tolist()) == [2, 2, 3]


def test_private_key_releases_rank_groups_by_value(monkeypatch: pytest.MonkeyPatch) -> None:
    """A private-key group-by with a privacy unit truncates with ``group_by`` set (its
    codes follow row order); a declared-key one ranks by the public codes."""
    import pandas_dp  # noqa: F401
    from pandas_dp.engines import units

    seen: list[object] = []
    original = units.contribution_mask

    def spy(*args: object, **kwargs: object) -> np.ndarray:
        seen.append(kwargs.get("group_by"))
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(units, "contribution_mask", spy)
    df = frame(6)
    unit = {"privacy_unit": "pid", "max_rows_per_unit": 3, "max_groups_per_unit": 2}
    df.dp.groupby("g", keys="private", delta=1e-3).count(epsilon=1.0, **unit)
    df.dp.groupby("g", keys=list(range(12))).count(epsilon=1.0, **unit)
    assert [list(g) for g in seen] == [["g"], []]  # type: ignore[call-overload]


def test_different_keys_with_the_same_text_hash_apart() -> None:
    """``1`` and ``"1"`` are different group keys: their group hashes differ, so two
    groups of one unit do not tie (a tie would be broken by row position). Row
    contents hash by text, as after Dask's conversion of object columns to strings."""
    from pandas_dp.engines.units import _content_hash, _group_hash

    values = pd.Series([1, "1", 1.0, True, b"1", "a"], dtype=object)
    rows = values.to_frame("g")
    grouped = _group_hash(rows, ["g"], np.zeros(len(values), dtype=np.intp), KEY)
    assert len(set(grouped.tolist())) == len(values)
    text = _content_hash(values, KEY)
    as_strings = _content_hash(values.map(str).astype(object), KEY)
    assert text.tolist() == as_strings.tolist()
    # a string hashes as in a column of strings only (Dask partitions may hold either)
    assert text[5] == _content_hash(pd.Series(["a"], dtype=object), KEY)[0]
