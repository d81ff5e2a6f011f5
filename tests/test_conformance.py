"""Conformance with pandas on the frame and Series accessors, pandas as the oracle
(issue 32, item 4; the group-by is in ``tests/test_conformance_groupby.py``).

Each case makes the same call of ``df.dp`` / ``s.dp`` and of pandas on a generated frame
(every dtype, missing values, one-row and all-missing, integer and tuple labels,
MultiIndex columns, a non-default row index: ``tests/_conformance.py``) and compares the
result type, shape, index and columns (values, order, names, dtypes), the Series name,
the value dtypes and the values: moments within a relative 1e-3, counts exactly,
quantiles by rank. Documented differences are entries of ``DEVIATIONS`` (one table, in
``tests/_conformance.py``); differences nobody documented are ``FINDINGS`` below, each an
``xfail(strict=True)`` naming it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from _conformance import (
    DEVIATIONS,
    KINDS,
    Finding,
    Frame,
    Spec,
    check_dtype_like_pandas,
    dtype_params,
    make_frame,
    params,
    quantile_of,
    run_case,
)

Q = 0.3
QS = [0.25, 0.5, 0.9]


def _m(name: str, *args: Any, atol: float = 0.0, tag: str = "", **kw: Any) -> dict[str, Spec]:
    """A moment on the frame accessor (two columns, one column) and the Series one."""
    t = f"{name}{tag}"
    return {
        f"frame-{t}": Spec(
            name,
            lambda f: getattr(f.df.dp, name)(f.values, *args, **f.kw(**kw)),
            lambda f, how, dq: getattr(f.df[f.values], name)(*args, **kw),
            "moment",
            atol,
        ),
        f"frame1-{t}": Spec(
            name,
            lambda f: getattr(f.df.dp, name)(f.a, *args, **f.kw(**kw)),
            lambda f, how, dq: getattr(f.df[f.a], name)(*args, **kw),
            "moment",
            atol,
        ),
        f"series-{t}": Spec(
            name,
            lambda f: getattr(f.df[f.a].dp, name)(*args, **f.kw(**kw)),
            lambda f, how, dq: getattr(f.df[f.a], name)(*args, **kw),
            "moment",
            atol,
        ),
    }


def _quantile(obj: Any, q: Any, how: str, dq: float) -> Any:
    return quantile_of(obj, q, how)


def _median(obj: Any, how: str, dq: float) -> Any:
    """pandas' median, or the rank window around it."""
    return obj.median() if how == "linear" else quantile_of(obj, 0.5, how)


def _declared_order(f: Frame, shares: pd.Series) -> pd.Series:
    """pandas' shares in the declared order (DEVIATIONS['proportions-order'])."""
    return shares.reindex(pd.Index(f.keys[f.k1], dtype=shares.index.dtype, name=f.k1))


def _cats(f: Frame) -> dict[str, Any]:
    return dict(epsilon=1e7, categories=f.keys[f.k1], random_state=0)


SPECS: dict[str, Spec] = {
    "frame-count": Spec(
        "count",
        lambda f: f.df[f.values].dp.count(epsilon=1e7, random_state=0),
        lambda f, how, dq: f.df[f.values].count(),
        "exact",
    ),
    "series-count": Spec(
        "count",
        lambda f: f.df[f.a].dp.count(epsilon=1e7, random_state=0),
        lambda f, how, dq: f.df[f.a].count(),
        "exact",
    ),
    **_m("sum", atol=1e-3),
    **_m("mean", atol=1e-4),
    **_m("var", atol=1e-4),
    **_m("std", atol=1e-4),
    **_m("var", ddof=0, atol=1e-4, tag="-ddof0"),
    **_m("sem", atol=1e-4),
    **_m("skew", atol=1e-3),
    **_m("sum", axis=0, atol=1e-3, tag="-axis0"),  # pandas' keywords, pandas' meaning
    **_m("mean", axis="index", atol=1e-4, tag="-axis-index"),
    "frame-value_counts-subset": Spec(
        "value_counts",
        lambda f: f.df.dp.value_counts(
            subset=[f.k1], epsilon=1e7, categories={f.k1: f.keys[f.k1]}, random_state=0
        ),
        lambda f, how, dq: f.df.value_counts(subset=[f.k1]),
        "exact",
    ),
    "frame-count-axis0": Spec(
        "count",
        lambda f: f.df[f.values].dp.count(axis=0, epsilon=1e7, random_state=0),
        lambda f, how, dq: f.df[f.values].count(axis=0),
        "exact",
    ),
    "frame-median": Spec(
        "median",
        lambda f: f.df.dp.median(f.values, **f.kw()),
        lambda f, how, dq: _median(f.df[f.values], how, dq),
        "quantile",
    ),
    "series-median": Spec(
        "median",
        lambda f: f.df[f.a].dp.median(**f.kw()),
        lambda f, how, dq: _median(f.df[f.a], how, dq),
        "quantile",
    ),
    "frame-quantile": Spec(
        "quantile",
        lambda f: f.df.dp.quantile(f.values, Q, **f.kw()),
        lambda f, how, dq: _quantile(f.df[f.values], Q, how, dq),
        "quantile",
    ),
    "frame-quantile-list": Spec(
        "quantile",
        lambda f: f.df.dp.quantile(f.values, QS, **f.kw()),
        lambda f, how, dq: _quantile(f.df[f.values], QS, how, dq),
        "quantile",
    ),
    "frame1-quantile": Spec(
        "quantile",
        lambda f: f.df.dp.quantile(f.a, Q, **f.kw()),
        lambda f, how, dq: _quantile(f.df[f.a], Q, how, dq),
        "quantile",
    ),
    "series-quantile-list": Spec(
        "quantile",
        lambda f: f.df[f.a].dp.quantile(QS, **f.kw()),
        lambda f, how, dq: _quantile(f.df[f.a], QS, how, dq),
        "quantile",
    ),
    "frame-value_counts": Spec(
        "value_counts",
        lambda f: f.df.dp.value_counts(f.k1, **_cats(f)),
        lambda f, how, dq: f.df[f.k1].value_counts(),
        "exact",
    ),
    "frame-value_counts-two": Spec(
        "value_counts",
        lambda f: f.df.dp.value_counts(
            [f.k1, f.k2], epsilon=1e7, categories=f.keys, random_state=0
        ),
        lambda f, how, dq: f.df[[f.k1, f.k2]].value_counts(),
        "exact",
    ),
    "series-value_counts": Spec(
        "value_counts",
        lambda f: f.df[f.k1].dp.value_counts(**_cats(f)),
        lambda f, how, dq: f.df[f.k1].value_counts(),
        "exact",
    ),
    "series-value_counts-normalize": Spec(
        "value_counts-normalize",
        lambda f: f.df[f.k1].dp.value_counts(normalize=True, **_cats(f)),
        lambda f, how, dq: f.df[f.k1].value_counts(normalize=True),
        "shares",
    ),
    "frame-value_counts-normalize": Spec(
        "value_counts-normalize",
        lambda f: f.df.dp.value_counts(f.k1, normalize=True, **_cats(f)),
        lambda f, how, dq: f.df[f.k1].value_counts(normalize=True),
        "shares",
    ),
    "series-proportions": Spec(
        "proportions",
        lambda f: f.df[f.k1].dp.proportions(**_cats(f)),
        lambda f, how, dq: _declared_order(f, f.df[f.k1].value_counts(normalize=True)),
        "shares",
    ),
    "frame-proportions": Spec(
        "proportions",
        lambda f: f.df.dp.proportions(f.k1, **_cats(f)),
        lambda f, how, dq: _declared_order(f, f.df[f.k1].value_counts(normalize=True)),
        "shares",
    ),
    "frame-cov": Spec(
        "cov",
        lambda f: f.df.dp.cov(f.values, **f.kw()),
        lambda f, how, dq: f.df[f.values].dropna().cov(),  # DEVIATIONS['listwise-cov']
        "moment",
        1e-4,
    ),
    "frame-corr": Spec(
        "corr",
        lambda f: f.df.dp.corr(f.values, **f.kw()),
        lambda f, how, dq: f.df[f.values].dropna().corr(),  # DEVIATIONS['listwise-cov']
        "moment",
        1e-3,
    ),
    "frame-describe": Spec(
        "describe",
        lambda f: f.df.dp.describe(f.values, **f.kw()),
        lambda f, how, dq: f.df[f.values].describe(),
        "describe",
        pct=lambda f, how, share: quantile_of(f.df[f.values], share, how),
    ),
    "series-describe": Spec(
        "describe",
        lambda f: f.df[f.a].dp.describe(**f.kw()),
        lambda f, how, dq: f.df[f.a].describe(),
        "describe",
        pct=lambda f, how, share: quantile_of(f.df[f.a], share, how),
    ),
    "frame-agg-list": Spec(
        "agg",
        lambda f: f.df[f.values].dp.agg(["mean", "std", "sum"], **f.kw()),
        lambda f, how, dq: f.df[f.values].agg(["mean", "std", "sum"]),
        "moment",
        1e-3,
    ),
    "frame-agg-dict": Spec(
        "agg",
        lambda f: f.df.dp.agg({f.a: "mean", f.b: "var"}, **f.kw()),
        lambda f, how, dq: f.df.agg({f.a: "mean", f.b: "var"}),
        "moment",
        1e-4,
    ),
    "frame-agg-dict-lists": Spec(
        "agg",
        lambda f: f.df.dp.agg({f.a: ["mean", "std"], f.b: ["mean"]}, **f.kw()),
        lambda f, how, dq: f.df.agg({f.a: ["mean", "std"], f.b: ["mean"]}),
        "moment",
        1e-4,
        holes=True,
    ),
    "series-agg-list": Spec(
        "agg",
        lambda f: f.df[f.a].dp.agg(["mean", "var"], **f.kw()),
        lambda f, how, dq: f.df[f.a].agg(["mean", "var"]),
        "moment",
        1e-4,
    ),
}


# ----------------------------------------------------------------------------------------
# Findings: differences from pandas, each (a predicate on the case id "kind-spec") ->
# reason, a strict xfail. A reason that begins "documented" names its entry of
# docs/user_guide/differences.md (a value, not a dtype, that privacy makes differ); any
# other is a difference the page does not list yet.
# ----------------------------------------------------------------------------------------

QUANTILES = {
    "frame-median",
    "series-median",
    "frame-quantile",
    "frame-quantile-list",
    "frame1-quantile",
    "series-quantile-list",
}
NA_KINDS = {"Int64-NA", "Float64-NA", "boolean-NA", "missing", "all-missing"}
FINDINGS: dict[str, Finding] = {
    "documented (differences.md#quantiles, very few values): one value x: a list of "
    "quantiles or describe's percentiles selects the outer ones on one side of the "
    "median, which the value's coin may leave empty; a median or a single q gives x, as "
    "pandas does": lambda kind, name: (
        kind == "one-row"
        and (name in QUANTILES or name.endswith("describe"))
        and not name.endswith(("-quantile", "-median"))
    ),
}


# pandas itself raises on agg with lists over tuple labels ("Length of names must match
# number of levels in MultiIndex"): no oracle there
NO_ORACLE = {("tuple-labels", "frame-agg-dict-lists")}
CASES = [p for p in params(SPECS, KINDS, FINDINGS) if tuple(p.values) not in NO_ORACLE]


@pytest.mark.parametrize(("kind", "name"), CASES)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # pandas' cov of one row
def test_frame_and_series_conform(kind: str, name: str) -> None:
    run_case(SPECS[name], make_frame(kind))


@pytest.mark.parametrize(("kind", "name"), dtype_params(SPECS, KINDS, FINDINGS))
def test_value_dtypes_like_pandas(kind: str, name: str) -> None:
    check_dtype_like_pandas(SPECS[name], make_frame(kind))


def test_deviation_table_names_its_reasons() -> None:
    page = (Path(__file__).resolve().parents[1] / "docs/user_guide/differences.md").read_text()
    anchors = {line.lstrip("#").strip().lower().replace(" ", "-") for line in page.splitlines()}
    for key, deviation in DEVIATIONS.items():
        document, _, anchor = deviation.reason.partition(" ")[0].partition("#")
        assert document == "differences.md" and anchor in anchors, (key, deviation.reason)


# The permanent deviations (privacy requires them), asserted as documented.


def test_proportions_are_value_counts_normalized_in_declared_order() -> None:
    """DEVIATIONS['proportions-order']: the same shares, in declared order."""
    s: Any = pd.Series(["x"] * 5 + ["y"] * 9 + ["z"] * 2)
    cats = ["z", "x", "y"]
    got = s.dp.proportions(epsilon=1e7, categories=cats, random_state=0)
    want = s.value_counts(normalize=True)
    assert list(want.index) == ["y", "x", "z"] and list(got.index) == cats
    pd.testing.assert_series_equal(got, want.reindex(cats), atol=1e-6, check_index_type=False)
    normalized = s.dp.value_counts(normalize=True, epsilon=1e7, categories=cats, random_state=0)
    pd.testing.assert_series_equal(normalized, want, atol=1e-6)


def test_tied_counts_keep_the_declared_order() -> None:
    """DEVIATIONS['tie-order']: pandas breaks ties by appearance, we by declaration."""
    s: Any = pd.Series(["x", "y", "y", "x", "z"])
    want = s.value_counts()
    assert list(want.index) == ["x", "y", "z"]  # order of appearance
    for cats in (["y", "x", "z"], ["x", "y", "z"]):
        got = s.dp.value_counts(epsilon=1e7, categories=cats, random_state=0)
        assert list(got.index) == cats
        assert got.tolist() == [2, 2, 1]


def test_a_declared_key_nobody_has_is_released() -> None:
    """DEVIATIONS['declared-keys']: pandas lists the keys that occur; we the declared."""
    df: Any = pd.DataFrame({"g": ["a", "a", "b"], "x": [1.0, 2.0, 3.0]})
    keys = ["a", "b", "c"]
    got = df.dp.groupby("g", keys=keys).mean("x", epsilon=1e7, bounds=(0, 5), random_state=0)
    want = df.groupby("g")["x"].mean()
    assert list(want.index) == ["a", "b"] and list(got.index) == keys
    pd.testing.assert_series_equal(got.loc[["a", "b"]], want, rtol=1e-4)
    assert 0.0 <= got["c"] <= 5.0  # a number in the public range, not absent
    counts = df["g"].dp.value_counts(epsilon=1e7, categories=keys, random_state=0)
    assert set(counts.index) == set(keys) and counts["c"] == 0


def test_cov_and_corr_leave_out_incomplete_rows() -> None:
    """DEVIATIONS['listwise-cov']: pandas' pairwise-complete rows, ours listwise; one
    pair released on its own is pandas' pairwise entry."""
    df: Any = pd.DataFrame(
        {
            "a": [1.0, 2.0, 3.0, 4.0, None, 6.0, 7.0, 2.0],
            "b": [2.0, 1.0, None, 3.0, 5.0, 4.0, 6.0, 1.0],
            "c": [None, 3.0, 1.0, 2.0, 2.0, 5.0, 4.0, 6.0],
        }
    )
    kw: dict[str, Any] = dict(epsilon=1e8, bounds=(0, 8), random_state=0)
    cols = ["a", "b", "c"]
    listwise, pairwise = df[cols].dropna().cov(), df[cols].cov()
    assert not np.allclose(listwise.to_numpy(), pairwise.to_numpy(), atol=1e-2)
    got = df.dp.cov(cols, **kw)
    np.testing.assert_allclose(got.to_numpy(), listwise.to_numpy(), atol=1e-3)
    pair = df.dp.cov(["a", "b"], **kw)
    np.testing.assert_allclose(
        pair.loc["a", "b"], df[["a", "b"]].dropna().cov().loc["a", "b"], atol=1e-3
    )
    np.testing.assert_allclose(pair.loc["a", "b"], pairwise.loc["a", "b"], atol=1e-3)
    corr = df.dp.corr(cols, **kw)
    np.testing.assert_allclose(corr.to_numpy(), df[cols].dropna().corr().to_numpy(), atol=1e-3)


# Tuple data values (declared categories or keys that are tuples): a flat Index of
# tuples, as pandas gives, never a MultiIndex.
TUPLES: Any = pd.DataFrame(
    {
        "t": pd.Series([(1, 2)] * 5 + [(3, 4)] * 3 + [("a", 0)] * 2 + [None], dtype=object),
        "g": [*"ababababab", "a"],
        "x": np.arange(11.0) % 4,
    }
)
TUPLE_CATS = [(1, 2), (3, 4), ("a", 0)]
TUPLE_CASES: dict[str, tuple[Any, Any]] = {
    "value_counts": (
        lambda: TUPLES["t"].dp.value_counts(epsilon=1e7, categories=TUPLE_CATS, random_state=0),
        lambda: TUPLES["t"].value_counts(),
    ),
    "value_counts-normalize": (
        lambda: TUPLES["t"].dp.value_counts(
            normalize=True, epsilon=1e7, categories=TUPLE_CATS, random_state=0
        ),
        lambda: TUPLES["t"].value_counts(normalize=True),
    ),
    "frame-value_counts": (
        lambda: TUPLES.dp.value_counts("t", epsilon=1e7, categories=TUPLE_CATS, random_state=0),
        lambda: TUPLES["t"].value_counts(),
    ),
    "proportions": (
        lambda: TUPLES["t"].dp.proportions(epsilon=1e7, categories=TUPLE_CATS, random_state=0),
        lambda: TUPLES["t"].value_counts(normalize=True),  # (declared order: the same here)
    ),
    "groupby-keys-mean": (
        lambda: TUPLES.dp.groupby("t", keys=sorted(TUPLE_CATS, key=str)).mean(
            "x", epsilon=1e7, bounds=(0, 4), random_state=0
        ),
        lambda: TUPLES.groupby("t")["x"].mean().reindex(sorted(TUPLE_CATS, key=str)),
    ),
    "groupby-value_counts": (
        lambda: TUPLES.dp.groupby("g", keys=["a", "b"])["t"].value_counts(
            epsilon=1e7, categories=TUPLE_CATS, random_state=0
        ),
        lambda: TUPLES.groupby("g")["t"].value_counts(),
    ),
}


@pytest.mark.parametrize("name", list(TUPLE_CASES))
def test_tuple_values_are_flat_labels_like_pandas(name: str) -> None:
    ours, theirs = TUPLE_CASES[name]
    got, want = ours(), theirs()
    assert not isinstance(want.index, pd.MultiIndex) or want.index.nlevels == 2
    assert type(got.index) is type(want.index), (type(got.index), type(want.index))
    assert list(got.index) == list(want.index)
    assert got.index.names == want.index.names and got.name == want.name
    np.testing.assert_allclose(got.to_numpy(dtype=float), want.to_numpy(dtype=float), atol=1e-4)
    interval = got.attrs["dp"].interval(0.05)
    assert list(interval.index) == list(got.index)


def test_dropna_false_releases_the_missing_bucket_when_the_dtype_can_hold_one() -> None:
    """DEVIATIONS['missing-bucket']: pandas shows NaN only when a value is missing."""
    text: Any = pd.Series(["x", "y", "y"])
    want = text.value_counts(dropna=False)
    got = text.dp.value_counts(dropna=False, epsilon=1e7, categories=["x", "y"], random_state=0)
    assert len(want) == 2 and len(got) == 3 and pd.isna(got.index[-1])
    pd.testing.assert_series_equal(got.iloc[:2], want.sort_index(ascending=False))
    assert got.iloc[2] == 0
    ints: Any = pd.Series([3, 1, 1])
    pd.testing.assert_series_equal(
        ints.dp.value_counts(dropna=False, epsilon=1e7, categories=[1, 3], random_state=0),
        ints.value_counts(dropna=False),
    )
