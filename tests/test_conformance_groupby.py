"""Conformance with pandas on the group-by accessor, pandas as the oracle (issue 32,
item 4): one key, two keys and a selected column ``g[col]``, on the generated frames of
``tests/_conformance.py``, compared like ``tests/test_conformance.py`` compares the frame
and Series accessors. The declared keys are the data's own, so every declared key
occurs (DEVIATIONS['declared-keys'] is held apart, in ``test_conformance.py``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from _conformance import (
    KINDS,
    Finding,
    Frame,
    Spec,
    check_dtype_like_pandas,
    dtype_params,
    grouped_quantile_of,
    make_frame,
    params,
    run_case,
)

Q = 0.3
QS = [0.25, 0.75]
MOMENTS = {"sum": 1e-3, "mean": 1e-4, "var": 1e-4, "std": 1e-4, "sem": 1e-4, "skew": 1e-3}


def _quantile(grouped: Any, q: Any, how: str, dq: float) -> Any:
    return grouped_quantile_of(grouped, q, how)


def _median(grouped: Any, how: str, dq: float) -> Any:
    return grouped.median() if how == "linear" else grouped_quantile_of(grouped, 0.5, how)


def _kw(f: Frame) -> dict[str, Any]:
    return f.kw()


def _only_values(f: Frame, two: bool) -> Any:
    """The group-by of the keys and value columns alone (agg over every column)."""
    keys = [f.k1, f.k2] if two else [f.k1]
    frame = f.df[[*keys, f.a, f.b]]
    g = frame.dp.groupby(keys if two else f.k1, keys={k: f.keys[k] for k in keys})
    return g, frame.groupby(keys if two else f.k1)


def _grouped(name: str, atol: float, by: str) -> Spec:
    """A moment through the group-by: ``by`` is "g1" or "g2" (two value columns over
    one or two keys), "g1-one" (one column) or "gcol" (``g[col]``)."""
    two = by == "g2"

    def ours(f: Frame) -> Any:
        g = f.group(two)
        if by == "gcol":
            return getattr(g[f.a], name)(**f.kw())
        return getattr(g, name)(f.a if by == "g1-one" else f.values, **f.kw())

    def theirs(f: Frame, how: str, dq: float) -> Any:
        selected = f.a if by in {"g1-one", "gcol"} else f.values
        return getattr(f.pgroup(two)[selected], name)()

    return Spec(name, ours, theirs, "moment", atol, groups=2 if two else 1)


def _grouped_quantile(method: str, q: Any, by: str) -> Spec:
    """A median or quantile through the group-by (``by`` as for :func:`_grouped`)."""
    two = by == "g2"

    def ours(f: Frame) -> Any:
        g = f.group(two)
        target = g[f.a] if by == "gcol" else g
        columns = () if by == "gcol" else (f.values,)
        if method == "median":
            return target.median(*columns, **f.kw())
        return target.quantile(*columns, q, **f.kw())

    def theirs(f: Frame, how: str, dq: float) -> Any:
        grouped = f.pgroup(two)[f.a if by == "gcol" else f.values]
        if method == "median":
            return _median(grouped, how, dq)
        return _quantile(grouped, q, how, dq)

    return Spec(method, ours, theirs, "quantile", groups=2 if two else 1)


def _moment_specs() -> dict[str, Spec]:
    return {
        f"{by}-{name}": _grouped(name, atol, by)
        for name, atol in MOMENTS.items()
        for by in ("g1", "g2", "g1-one", "gcol")
    }


def _quantile_specs() -> dict[str, Spec]:
    return {
        "g1-median": _grouped_quantile("median", None, "g1"),
        "g2-median": _grouped_quantile("median", None, "g2"),
        "g1-quantile": _grouped_quantile("quantile", Q, "g1"),
        "g1-quantile-list": _grouped_quantile("quantile", QS, "g1"),
        "g2-quantile-list": _grouped_quantile("quantile", QS, "g2"),
        "gcol-quantile": _grouped_quantile("quantile", Q, "gcol"),
        "gcol-quantile-list": _grouped_quantile("quantile", QS, "gcol"),
        "gcol-median": _grouped_quantile("median", None, "gcol"),
    }


def _k2(f: Frame, **extra: Any) -> dict[str, Any]:
    return dict(epsilon=1e7, categories=f.keys[f.k2], random_state=0, **extra)


SPECS: dict[str, Spec] = {
    "g1-count": Spec(
        "count",
        lambda f: f.group().count(epsilon=1e7, random_state=0),
        lambda f, how, dq: f.pgroup().count(),
        "exact",
    ),
    "g2-count": Spec(
        "count",
        lambda f: f.group(True).count(epsilon=1e7, random_state=0),
        lambda f, how, dq: f.pgroup(True).count(),
        "exact",
    ),
    "g1-size": Spec(
        "size",
        lambda f: f.group().size(epsilon=1e7, random_state=0),
        lambda f, how, dq: f.pgroup().size(),
        "exact",
    ),
    "g2-size": Spec(
        "size",
        lambda f: f.group(True).size(epsilon=1e7, random_state=0),
        lambda f, how, dq: f.pgroup(True).size(),
        "exact",
    ),
    **_moment_specs(),
    **_quantile_specs(),
    "g1-value_counts": Spec(
        "value_counts",
        lambda f: f.group().value_counts(f.k2, **_k2(f)),
        lambda f, how, dq: f.pgroup()[f.k2].value_counts(),
        "exact",
    ),
    "gcol-value_counts": Spec(
        "value_counts",
        lambda f: f.group()[f.k2].value_counts(**_k2(f)),
        lambda f, how, dq: f.pgroup()[f.k2].value_counts(),
        "exact",
    ),
    "gcol-value_counts-normalize": Spec(
        "value_counts-normalize",
        lambda f: f.group()[f.k2].value_counts(**_k2(f, normalize=True)),
        lambda f, how, dq: f.pgroup()[f.k2].value_counts(normalize=True),
        "shares",
    ),
    "g1-describe": Spec(
        "describe",
        lambda f: f.group().describe(f.values, **f.kw()),
        lambda f, how, dq: f.pgroup()[f.values].describe(),
        "describe",
        groups=1,
        pct=lambda f, how, share: grouped_quantile_of(f.pgroup()[f.values], share, how),
    ),
    "gcol-describe": Spec(
        "describe",
        lambda f: f.group()[f.a].describe(**f.kw()),
        lambda f, how, dq: f.pgroup()[f.a].describe(),
        "describe",
        groups=1,
        pct=lambda f, how, share: grouped_quantile_of(f.pgroup()[f.a], share, how),
    ),
    "g1-agg-list": Spec(
        "agg",
        lambda f: _only_values(f, False)[0].agg(["mean", "std"], **f.kw()),
        lambda f, how, dq: _only_values(f, False)[1].agg(["mean", "std"]),
        "moment",
        1e-4,
    ),
    "g2-agg-list": Spec(
        "agg+sum",
        lambda f: _only_values(f, True)[0].agg(["mean", "sum"], **f.kw()),
        lambda f, how, dq: _only_values(f, True)[1].agg(["mean", "sum"]),
        "moment",
        1e-3,
    ),
    "g1-agg-dict": Spec(
        "agg",
        lambda f: f.group().agg({f.a: "mean", f.b: "var"}, **f.kw()),
        lambda f, how, dq: f.pgroup().agg({f.a: "mean", f.b: "var"}),
        "moment",
        1e-4,
    ),
    "g1-agg-dict-lists": Spec(
        "agg+sum",
        lambda f: f.group().agg({f.a: ["mean", "std"], f.b: ["sum"]}, **f.kw()),
        lambda f, how, dq: f.pgroup().agg({f.a: ["mean", "std"], f.b: ["sum"]}),
        "moment",
        1e-3,
    ),
    "gcol-agg-list": Spec(
        "agg",
        lambda f: f.group()[f.a].agg(["mean", "var"], **f.kw()),
        lambda f, how, dq: f.pgroup()[f.a].agg(["mean", "var"]),
        "moment",
        1e-4,
    ),
}

SPECS = {
    name: dataclasses.replace(spec, groups=2 if name.startswith("g2") else 1)
    for name, spec in SPECS.items()
}

QUANTILES = {
    "g1-median",
    "g2-median",
    "g1-quantile",
    "g1-quantile-list",
    "g2-quantile-list",
    "gcol-quantile",
    "gcol-quantile-list",
    "gcol-median",
}
# pandas refuses g[("v", "a")] ("Cannot subset columns with a tuple"), and agg over
# tuple labels ("Length of names must match number of levels"): no oracle there
NO_ORACLE = {
    (kind, name)
    for kind in ("tuple-labels", "multiindex")
    for name in SPECS
    if name.startswith(("gcol-", "g1-one-")) or name == "g1-value_counts"
} | {("tuple-labels", name) for name in SPECS if "agg" in name}
FINDINGS: dict[str, Finding] = {
    "a categorical key's dtype is lost in grouped value_counts: str where pandas keeps "
    "its CategoricalDtype (stats/grouped.py _cells)": lambda kind, name: (
        kind == "category-keys" and "value_counts" in name
    ),
    "key dtype lost: a string[pyarrow] key becomes str in every grouped release (text "
    "is typed as pandas infers it, equal on Dask), an Int64 key int64 in grouped "
    "value_counts, list quantiles and count (stats/grouped.py _cells, the quantile "
    "table's index)": lambda kind, name: (
        kind == "string[pyarrow]-keys"
        or (
            kind == "Int64-keys"
            and ("value_counts" in name or name.endswith("quantile-list") or name == "g1-count")
        )
    ),
    "categorical key becomes str in a grouped quantile with a list of q (the other "
    "grouped releases keep the CategoricalIndex) "
    "(accessor/_groupby_quantiles.py)": lambda kind, name: (
        kind == "category-keys" and name.endswith("quantile-list")
    ),
    "tuple column labels: grouped results get 2-level columns, pandas a flat Index of "
    "tuples (result/ shaping)": lambda kind, name: (
        kind == "tuple-labels"
        and ("agg" not in name and "value_counts" not in name)
        and name not in {"g1-size", "g2-size", "g1-describe"}
    ),
    "MultiIndex columns: grouped results lose the column level names, and describe/agg "
    "flatten the label levels (2 levels where pandas has 3) "
    "(result/ shaping)": lambda kind, name: (
        kind == "multiindex"
        and name not in {"g1-size", "g2-size", "g1-value_counts"}
        and not name.startswith(("gcol-", "g1-one-"))
    ),
    "quantile of a boolean column through the group-by: pandas raises TypeError, "
    "pandas-dp releases a number (no dtype check)": lambda kind, name: (
        kind == "bool" and name in QUANTILES and "median" not in name
    ),
    "describe of a boolean column through the group-by: pandas gives count/unique/top/"
    "freq, pandas-dp other columns (stats/describe.py)": lambda kind, name: (
        kind in {"bool", "boolean-NA"} and name.endswith("describe")
    ),
    "one value x: a median, a list of quantiles or describe's percentiles is released "
    "anywhere in [lower bound, x) (x's own edge pays the base penalty and ties with the "
    "coarse edges below it); a single q = 0.3 gives x; pandas gives x "
    "(stats/quantiles rank convention)": lambda kind, name: (
        kind == "one-row"
        and (name in QUANTILES or name in {"g1-describe", "gcol-describe"})
        and not name.endswith("-quantile")
    ),
}


CASES = [p for p in params(SPECS, KINDS, FINDINGS) if tuple(p.values) not in NO_ORACLE]


@pytest.mark.parametrize(("kind", "name"), CASES)
def test_groupby_conforms(kind: str, name: str) -> None:
    run_case(SPECS[name], make_frame(kind))


@pytest.mark.parametrize(("kind", "name"), dtype_params(SPECS, KINDS, FINDINGS))
def test_groupby_value_dtypes_like_pandas(kind: str, name: str) -> None:
    check_dtype_like_pandas(SPECS[name], make_frame(kind))
