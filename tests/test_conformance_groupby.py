"""Conformance with pandas on the group-by accessor, pandas as the oracle (issue 32,
item 4): one key, two keys and a selected column ``g[col]``, on the generated frames of
``tests/_conformance.py``, compared like ``tests/test_conformance.py`` compares the frame
and Series accessors. The declared keys are the data's own, so every declared key
occurs (DEVIATIONS['declared-keys'] is held apart, in ``test_conformance.py``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pandas as pd
import pytest
from _conformance import (
    KINDS,
    Finding,
    Frame,
    Spec,
    check_dtype_like_pandas,
    check_structure,
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
    "g1-value_counts-subset": Spec(
        "value_counts",
        lambda f: f.group().value_counts(subset=[f.k2], **_k2(f)),
        lambda f, how, dq: f.pgroup().value_counts(subset=[f.k2]),
        "exact",
    ),
    "g1-median-numeric_only": Spec(
        "median",
        lambda f: _only_values(f, False)[0].median(numeric_only=True, **f.kw()),
        lambda f, how, dq: _median(_only_values(f, False)[1], how, dq),
        "quantile",
    ),
    "g1-sum-numeric_only": Spec(
        "sum",
        lambda f: _only_values(f, False)[0].sum(numeric_only=True, **f.kw()),
        lambda f, how, dq: _only_values(f, False)[1].sum(numeric_only=True),
        "moment",
        1e-3,
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
    "g1-median-numeric_only",
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
    "documented (differences.md#quantiles, very few values): one value x: a list of "
    "quantiles or describe's percentiles selects the outer ones on one side of the "
    "median, which the value's coin may leave empty; a median or a single q gives x, as "
    "pandas does": lambda kind, name: (
        kind == "one-row"
        and (name in QUANTILES or name in {"g1-describe", "gcol-describe"})
        and not name.endswith(("-quantile", "-median", "-median-numeric_only"))
    ),
}


CASES = [p for p in params(SPECS, KINDS, FINDINGS) if tuple(p.values) not in NO_ORACLE]


@pytest.mark.parametrize(("kind", "name"), CASES)
def test_groupby_conforms(kind: str, name: str) -> None:
    run_case(SPECS[name], make_frame(kind))


@pytest.mark.parametrize(("kind", "name"), dtype_params(SPECS, KINDS, FINDINGS))
def test_groupby_value_dtypes_like_pandas(kind: str, name: str) -> None:
    check_dtype_like_pandas(SPECS[name], make_frame(kind))


# ------------------------------------------------------------ pandas' group-by options
def _options(f: Frame, two: bool = False, **options: Any) -> tuple[Any, Any]:
    """Our group-by and pandas' with the same options, over the data's own keys."""
    by = [f.k1, f.k2] if two else f.k1
    keys = {k: f.keys[k] for k in by} if two else f.keys[f.k1]
    return f.df.dp.groupby(by, keys=keys, **options), f.df.groupby(by, **options)


def _appearance(f: Frame) -> Any:
    """sort=False: keys declared in pandas' order (first appearance), a public list here."""
    keys = list(dict.fromkeys(f.df[f.k1].dropna().tolist()))
    return f.df.dp.groupby(f.k1, keys=keys, sort=False), f.df.groupby(f.k1, sort=False)


#: option case -> (the SPECS case it varies, so its findings apply, and the case)
OPTION_SPECS: dict[str, tuple[str, Spec]] = {
    "g1-mean-as_index": (
        "g1-mean",
        Spec(
            "mean",
            lambda f: _options(f, as_index=False)[0].mean(f.values, **f.kw()),
            lambda f, how, dq: _options(f, as_index=False)[1][f.values].mean(),
            "moment",
            1e-4,
            groups=1,
        ),
    ),
    "g2-size-as_index": (
        "g2-size",
        Spec(
            "size",
            lambda f: _options(f, True, as_index=False)[0].size(epsilon=1e7, random_state=0),
            lambda f, how, dq: _options(f, True, as_index=False)[1].size(),
            "exact",
            groups=2,
        ),
    ),
    "gcol-sum-as_index": (
        "gcol-sum",
        Spec(
            "sum",
            lambda f: _options(f, as_index=False)[0][f.a].sum(**f.kw()),
            lambda f, how, dq: _options(f, as_index=False)[1][f.a].sum(),
            "moment",
            1e-3,
            groups=1,
        ),
    ),
    "g1-count-sort": (
        "g1-count",
        Spec(
            "count",
            lambda f: _appearance(f)[0].count(epsilon=1e7, random_state=0),
            lambda f, how, dq: _appearance(f)[1].count(),
            "exact",
            groups=1,
        ),
    ),
    "g1-agg-named": (
        "g1-agg-dict",
        Spec(
            "agg",
            lambda f: f.group().agg(m=(f.a, "mean"), v=(f.b, "var"), **f.kw()),
            lambda f, how, dq: f.pgroup().agg(m=(f.a, "mean"), v=(f.b, "var")),
            "moment",
            1e-4,
            groups=1,
        ),
    ),
    "gcol-agg-named": (
        "gcol-agg-list",
        Spec(
            "agg",
            lambda f: f.group()[f.a].agg(m="mean", v="var", **f.kw()),
            lambda f, how, dq: f.pgroup()[f.a].agg(m="mean", v="var"),
            "moment",
            1e-4,
            groups=1,
        ),
    ),
}
#: Where a finding of the varied case does not reach the option case: named columns
#: are the names given (no column levels to lose)
UNAFFECTED = {("multiindex", "g1-agg-named")}


def _varied(applies: Finding) -> Finding:
    """A finding of a SPECS case, read for the option case that varies it."""
    return lambda kind, name: (
        (kind, name) not in UNAFFECTED and applies(kind, OPTION_SPECS[name][0])
    )


OPTION_FINDINGS = {reason: _varied(applies) for reason, applies in FINDINGS.items()}
OPTION_CASES = [
    p
    for p in params({n: s for n, (_, s) in OPTION_SPECS.items()}, KINDS, OPTION_FINDINGS)
    if (p.values[0], OPTION_SPECS[p.values[1]][0]) not in NO_ORACLE
]


def _key_columns(got: Any, want: Any, two: bool) -> list[Any]:
    """The leading key columns of an ``as_index=False`` answer."""
    assert list(got.columns[: 1 + two]) == list(want.columns[: 1 + two])
    return list(want.columns[: 1 + two])


@pytest.mark.parametrize(("kind", "name"), OPTION_CASES)
def test_groupby_options_conform(kind: str, name: str) -> None:
    """as_index=False, sort=False and named aggregation like pandas: with as_index=False
    the whole frame's structure (keys as columns, a default row index), then the values
    by key."""
    spec = OPTION_SPECS[name][1]
    f = make_frame(kind)
    if not name.endswith("as_index"):
        run_case(spec, f)
        return
    got, want = spec.ours(f), spec.theirs(f, "linear", 0.0)
    check_structure(got, want)
    assert isinstance(got.index, pd.RangeIndex)
    keys = _key_columns(got, want, name.startswith("g2"))
    for key in keys:  # the key columns' dtypes too
        assert got[key].dtype == want[key].dtype, (key, got[key].dtype, want[key].dtype)
    by_key = dataclasses.replace(
        spec,
        ours=lambda f: spec.ours(f).set_index(keys),
        theirs=lambda f, how, dq: spec.theirs(f, how, dq).set_index(keys),
    )
    run_case(by_key, f)
