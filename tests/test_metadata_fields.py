"""The grouping and the privacy unit are fields of their own (issue 30).

The metadata record, its tables and every budget's ledger name the key columns,
whether the keys were declared or chosen from the data, how many there are, and the
privacy unit with its contribution bounds -- not only inside ``details``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

from pandas_dp import PrivacyBudget

FRAME = pd.DataFrame(
    {
        "pid": np.repeat(np.arange(100), 3),
        "g": np.tile(list("abc"), 100),
        "h": np.tile(["u", "v"], 150),
        "x": np.linspace(0.0, 5.0, 300),
        "c": np.tile(["p", "q", "r"], 100),
    }
)
KW: dict[str, Any] = {"epsilon": 1.0, "random_state": 0}
UNIT: dict[str, Any] = {"privacy_unit": "pid", "max_rows_per_unit": 3}

FIELDS = ("groups", "keys", "n_keys", "privacy_unit", "contribution_bounds")


def _release(call: Callable[[Any], Any]) -> tuple[Any, pd.Series]:
    """The release and its ledger row in a budget of its own."""
    budget = PrivacyBudget(epsilon=10.0, delta=1e-3)
    out = call(FRAME.dp(budget=budget))
    ledger = budget.ledger
    assert len(ledger) == 1
    return out, ledger.iloc[0]


def _check(meta: Any, row: pd.Series, expected: dict[str, Any], n_keys_ledger: Any) -> None:
    for name in FIELDS:
        assert name in row.index, name
        want = n_keys_ledger if name == "n_keys" else expected[name]
        got = row[name]
        if want is None:
            assert got is None or (isinstance(got, float) and np.isnan(got)), (name, got)
        else:
            assert got == want, (name, got, want)
    for name, want in expected.items():
        assert getattr(meta, name) == want, (name, getattr(meta, name), want)
    record = meta.to_dict()
    assert record["groups"] == [str(g) for g in expected["groups"]]
    for name in ("keys", "n_keys", "privacy_unit", "contribution_bounds"):
        assert record[name] == expected[name], name
    rows = dict(meta._rows())
    assert "groups" in rows and "privacy unit" in rows
    html = meta._repr_html_()
    assert "privacy unit" in html and "groups" in html


def test_grouped_public_keys() -> None:
    out, row = _release(
        lambda dp: dp.groupby("g", keys=["a", "b", "c", "z"]).mean(
            "x", bounds=(0, 5), max_groups_per_unit=3, max_rows_per_group=1, **UNIT, **KW
        )
    )
    expected = {
        "groups": ("g",),
        "keys": "public",
        "n_keys": 4,
        "privacy_unit": "pid",
        "contribution_bounds": {
            "max_rows_per_unit": 3,
            "max_groups_per_unit": 3,
            "max_rows_per_group": 1,
        },
    }
    _check(out.attrs["dp"], row, expected, 4)
    rows = dict(out.attrs["dp"]._rows())
    assert rows["groups"] == "g" and rows["keys"] == "public (4 keys)"
    assert rows["privacy unit"] == "pid"
    assert "max_groups_per_unit=3" in rows["contribution bounds"]


def test_grouped_public_keys_of_two_columns_with_other() -> None:
    out, row = _release(
        lambda dp: dp.groupby(["g", "h"], keys={"g": ["a", "b"], "h": ["u", "v"]}, other="?").len(
            **KW
        )
    )
    expected = {
        "groups": ("g", "h"),
        "keys": "public",
        "n_keys": 4,  # declared keys; the 'other' group is not one
        "privacy_unit": None,
        "contribution_bounds": {
            "max_rows_per_unit": 1,
            "max_groups_per_unit": 1,
            "max_rows_per_group": 1,
        },
    }
    _check(out.attrs["dp"], row, expected, 4)
    assert row["groups"] == ("g", "h")


def test_grouped_private_keys() -> None:
    out, row = _release(
        lambda dp: dp.groupby("g", keys="private", delta=1e-6).len(epsilon=5.0, random_state=0)
    )
    assert len(out) == 3  # a hundred rows per key: every key is kept at epsilon 5
    expected = {
        "groups": ("g",),
        "keys": "private",
        "n_keys": 3,  # the record knows how many keys were released
        "privacy_unit": None,
        "contribution_bounds": {
            "max_rows_per_unit": 1,
            "max_groups_per_unit": 1,
            "max_rows_per_group": 1,
        },
    }
    # the ledger is written at the charge, before the selection: no count there
    _check(out.attrs["dp"], row, expected, None)
    assert row["keys"] == "private"


def test_ungrouped_with_a_privacy_unit() -> None:
    out, row = _release(lambda dp: dp.mean("x", bounds=(0, 5), **UNIT, **KW))
    expected = {
        "groups": (),
        "keys": None,
        "n_keys": None,
        "privacy_unit": "pid",
        "contribution_bounds": {
            "max_rows_per_unit": 3,
            "max_groups_per_unit": None,
            "max_rows_per_group": None,
        },
    }
    _check(out.attrs["dp"], row, expected, None)
    assert row["groups"] == ()
    assert dict(out.attrs["dp"]._rows())["groups"] == "none (not grouped)"


def test_ungrouped_plain() -> None:
    out, row = _release(lambda dp: dp.mean("x", bounds=(0, 5), **KW))
    expected = {
        "groups": (),
        "keys": None,
        "n_keys": None,
        "privacy_unit": None,
        "contribution_bounds": None,
    }
    _check(out.attrs["dp"], row, expected, None)
    rows = dict(out.attrs["dp"]._rows())
    assert rows["privacy unit"] == "each row" and "contribution bounds" not in rows


UNIT_RELEASES: dict[str, Callable[[Any], Any]] = {
    "value_counts": lambda dp: dp.value_counts("c", categories=["p", "q", "r"], **UNIT, **KW),
    "proportions": lambda dp: dp.proportions("c", categories=["p", "q", "r"], **UNIT, **KW),
    "counts": lambda dp: dp.counts({"big": FRAME["x"] > 2}, **UNIT, **KW),
    "cov": lambda dp: dp.cov(["x", "x2"], bounds=(0, 5), **UNIT, **KW),
    "quantile": lambda dp: dp.quantile("x", [0.25, 0.5], bounds=(0, 5), **UNIT, **KW),
    "describe": lambda dp: dp.describe(["x"], bounds=(0, 5), **UNIT, **KW),
    "agg": lambda dp: dp.agg({"x": ["mean", "count"]}, bounds=(0, 5), **UNIT, **KW),
    "len": lambda dp: dp.len(**UNIT, **KW),
}


@pytest.mark.parametrize("name", list(UNIT_RELEASES))
def test_every_release_path_records_the_unit(name: str) -> None:
    """Records built outside the plan's record builder have the fields too."""
    global FRAME
    saved = FRAME
    FRAME = FRAME.assign(x2=5.0 - FRAME["x"])
    try:
        out, row = _release(UNIT_RELEASES[name])
    finally:
        FRAME = saved
    meta = out.attrs["dp"]
    assert meta.privacy_unit == "pid" and row["privacy_unit"] == "pid"
    assert meta.contribution_bounds == {
        "max_rows_per_unit": 3,
        "max_groups_per_unit": None,
        "max_rows_per_group": None,
    }
    assert meta.groups == () and meta.keys is None and meta.n_keys is None
    assert meta.to_dict()["privacy_unit"] == "pid"


def test_grouped_value_counts_and_describe_record_their_grouping() -> None:
    grouped = FRAME.dp.groupby("g", keys=["a", "b", "c"])
    for out in (
        grouped.value_counts("c", categories=["p", "q", "r"], **KW),
        grouped.describe(["x"], bounds=(0, 5), **KW),
        grouped.median("x", bounds=(0, 5), **KW),
        grouped.agg({"x": ["mean"]}, bounds=(0, 5), **KW),
    ):
        meta = out.attrs["dp"]
        assert meta.groups == ("g",) and meta.keys == "public" and meta.n_keys == 3
