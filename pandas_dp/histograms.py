"""Releases of several counts at once: value_counts, proportions, query workloads.

All of them count records into buckets that are public: the declared categories
of a column (plus, on request, an ``other`` bucket for undeclared values and a
bucket for missing values), or the named predicates of a workload. One record
sits in one bucket, so a histogram's L1 sensitivity is 2 under substitution and 1
under add/remove (REFERENCE.md §1); a workload of ``k`` predicates has L1
sensitivity ``k``, since one record may satisfy all of them.

Proportions sum to exactly one by one of four procedures
(:mod:`pandas_dp.constraints`, REFERENCE.md §5), applied to noisy counts
(``via="counts"``, the default: integers, divided by the public ``n`` after) or
noisy proportions (``via="proportions"``, entries ``count / n`` with sensitivity
``1 / n``).
``n`` is the frame's length; proportions are of its ``n`` rows, so give every
row a bucket (``other=...``, ``dropna=False``) when rows may fall outside the
declared categories.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Hashable, Mapping
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from pandas_dp import backends, constraints
from pandas_dp.bounding import NoisePlan, apply_noise, halfwidth
from pandas_dp.declarations import CategoricalDeclaration
from pandas_dp.result import DPMetadata
from pandas_dp.sensitivity import output_range, sensitivity
from pandas_dp.statistics import Settings, build_metadata, direct_interval

__all__ = [
    "DEFAULT_METHOD",
    "METHODS",
    "VIA",
    "release_counts",
    "release_proportions",
    "release_value_counts",
]

METHODS: tuple[str, ...] = ("project", "rescale", "all_but_one", "hierarchical")
VIA: tuple[str, ...] = ("proportions", "counts")
#: Chosen by the accuracy study in ``benchmarks/accuracy.py``: best or tied in all
#: 48 settings with ``bounding="bit"`` and in 88 of 96 overall (see the docs).
DEFAULT_METHOD = "project"

FloatArray = np.ndarray


def check_method(method: str, via: str) -> None:
    """Validate ``method`` and ``via`` (public arguments)."""
    if method not in METHODS:
        raise ValueError(
            f"method={method!r} is not a sum-to-one procedure; use one of {list(METHODS)}"
        )
    if via not in VIA:
        raise ValueError(f"via={via!r} is not supported; use 'proportions' or 'counts'")


# ----------------------------------------------------------------------------- buckets


def _buckets(
    series: pd.Series, decl: CategoricalDeclaration, *, dropna: bool, other: Any
) -> tuple[list[Any], bool]:
    """Public bucket labels, and whether every row is sure to land in a bucket."""
    labels = list(decl.categories)
    if other is not None:
        if other in labels:
            raise ValueError(
                f"other={other!r} is also a declared category of {decl.column!r}; "
                f"pick a label that is not"
            )
        labels.append(other)
    if not dropna:
        labels.append(np.nan)
    return labels, other is not None and not dropna


def _exact_buckets(
    series: pd.Series, decl: CategoricalDeclaration, *, dropna: bool, other: Any
) -> np.ndarray:
    found = backends.category_counts(series, decl.categories)
    parts = [found.counts.astype(np.float64)]
    if other is not None:
        parts.append(np.array([found.other], dtype=np.float64))
    if not dropna:
        parts.append(np.array([found.missing], dtype=np.float64))
    return np.concatenate(parts)


def _histogram_l1(settings: Settings) -> float:
    return sensitivity("histogram", settings.neighbouring, 0.0, 1.0, 0)


def _histogram_l2(settings: Settings) -> float:
    return sensitivity("histogram_l2", settings.neighbouring, 0.0, 1.0, 0)


def _index(labels: list[Any], name: Hashable) -> pd.Index:
    index: pd.Index = pd.Index(labels, name=name)
    return index


# ----------------------------------------------------------------------------- value_counts


def release_value_counts(
    series: pd.Series,
    decl: CategoricalDeclaration,
    n: int,
    settings: Settings,
    *,
    sort: bool = True,
    ascending: bool = False,
    dropna: bool = True,
    other: Any = None,
) -> pd.Series:
    """Noisy integer counts of the declared categories, like ``s.value_counts()``."""
    labels, _ = _buckets(series, decl, dropna=dropna, other=other)
    k = len(labels)
    lo, hi = output_range("count", 0.0, 1.0, n, settings.neighbouring)
    l1 = _histogram_l1(settings)
    per_bucket = sensitivity("count", settings.neighbouring, 0.0, 1.0, n)
    plan = settings.plan(
        np.full(k, per_bucket),
        np.full(k, lo),
        np.full(k, hi),
        integer=True,
        joint_l1=l1,
        joint_l2=_histogram_l2(settings),
    )
    settings.charge("value_counts", (decl.column,))
    exact = _exact_buckets(series, decl, dropna=dropna, other=other)
    released = apply_noise(exact, plan, settings.source)
    meta = _histogram_meta(
        "value_counts",
        decl,
        settings,
        n,
        plan,
        released,
        labels,
        direct_interval(released, plan),
        (lo, hi),
        other,
        dropna,
    )
    return _ordered(released.astype(np.int64), labels, decl.column, "count", meta, sort, ascending)


def _ordered(
    values: np.ndarray,
    labels: list[Any],
    column: Hashable,
    name: str,
    meta: DPMetadata,
    sort: bool,
    ascending: bool,
) -> pd.Series:
    """The result Series, sorted by the released values like pandas if asked."""
    if not sort:
        out = pd.Series(values, index=_index(labels, column), name=name)
        out.attrs["dp"] = meta
        return out
    assert meta._interval is not None
    order = np.argsort(values if ascending else -values, kind="stable")
    ranked = [labels[i] for i in order]
    out = pd.Series(values[order], index=_index(ranked, column), name=name)
    out.attrs["dp"] = dataclasses.replace(
        meta, _interval=partial(_reordered, meta._interval, order), _index=ranked
    )
    return out


def _reordered(
    fn: Callable[[float], tuple[np.ndarray, np.ndarray]], order: np.ndarray, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = fn(alpha)
    return lo[order], hi[order]


def _histogram_meta(
    statistic: str,
    decl: CategoricalDeclaration,
    settings: Settings,
    n: int,
    plan: NoisePlan,
    released: np.ndarray,
    labels: list[Any],
    interval: Any,
    output_bounds: Any,
    other: Any,
    dropna: bool,
    extra: dict[str, Any] | None = None,
    entry_labels: list[Any] | None = None,
    sens: np.ndarray | None = None,
) -> DPMetadata:
    entries = entry_labels if entry_labels is not None else labels
    unit = np.ones(len(entries)) if sens is None else sens
    details = {
        "categories": list(decl.categories),
        "undeclared values": f"counted in {other!r}" if other is not None else "dropped",
        "missing values": "dropped" if dropna else "counted",
        "l1 sensitivity": _histogram_l1(settings),
        **(extra or {}),
    }
    return build_metadata(
        statistic,
        [decl.column],
        settings,
        n,
        unit,
        plan,
        released,
        {},
        output_bounds,
        False,
        interval,
        entry_labels=[str(e) for e in entries],
        details=details,
        budget_split={"one histogram release": settings.epsilon},
        index=labels,
    )


# ----------------------------------------------------------------------------- proportions


def release_proportions(
    series: pd.Series,
    decl: CategoricalDeclaration,
    n: int,
    settings: Settings,
    *,
    method: str = DEFAULT_METHOD,
    via: str = "counts",
    dropna: bool = True,
    other: Any = None,
    sort: bool = False,
    ascending: bool = False,
) -> pd.Series:
    """Noisy category proportions, each in ``[0, 1]``, summing to exactly one."""
    check_method(method, via)
    if n < 1:
        raise ValueError(
            "proportions of an empty frame: there is nothing to release. The row count "
            "is public, so this error reveals nothing about the data"
        )
    labels, covered = _buckets(series, decl, dropna=dropna, other=other)
    k = len(labels)
    counts = via == "counts"
    rel = settings.neighbouring
    unit = sensitivity("count" if counts else "proportion", rel, 0.0, 1.0, n)
    levels = constraints.noised_levels(k) if method == "hierarchical" else 1
    sizes = (
        [len(level) for level in _tree_shapes(k)]
        if method == "hierarchical"
        else [k - 1 if method == "all_but_one" else k]
    )
    m = int(sum(sizes))
    if k == 1:  # one bucket: its proportion is 1, a public fact
        return _single_bucket(decl, labels, settings, n, method, via)

    substitute = rel == "substitute"
    # one level of the tree is one histogram; in units of the per-entry sensitivity:
    if counts:
        per_level_l1 = _histogram_l1(settings)
        per_level_l2 = _histogram_l2(settings)
    else:
        per_level_l1 = sensitivity("proportions", rel, 0.0, 1.0, n) / unit
        per_level_l2 = sensitivity("proportions_l2", rel, 0.0, 1.0, n) / unit
    if counts:
        lo, hi = output_range("count", 0.0, 1.0, n, settings.neighbouring)
    else:
        lo, hi = 0.0, 1.0
    moved = 2.0 * levels if substitute else (float(levels) if counts else float(m))
    plan = settings.plan(
        np.full(m, unit),
        np.full(m, lo),
        np.full(m, hi),
        integer=counts,
        joint_l1=per_level_l1 * levels,
        joint_l2=per_level_l2 * math.sqrt(levels),
        max_changed=moved,
    )
    settings.charge("proportions", (decl.column,))
    exact_counts = _exact_buckets(series, decl, dropna=dropna, other=other)
    exact = exact_counts if counts else exact_counts / n
    if method == "hierarchical":
        theta = np.concatenate(constraints.aggregate_levels(exact))
    elif method == "all_but_one":
        theta = exact[:-1]
    else:
        theta = exact
    noisy = apply_noise(np.clip(theta, plan.lower, plan.upper), plan, settings.source)
    raw = noisy / n if counts else noisy
    values = _sum_to_one(method, raw, sizes)

    leaf = slice(m - k, m) if method == "hierarchical" else slice(0, m)

    interval = partial(
        _proportion_bounds,
        plan,
        raw,
        leaf,
        float(n) if counts else 1.0,
        method == "all_but_one",
        covered,
    )

    entry_labels = _entry_labels(method, labels, sizes)
    meta = _histogram_meta(
        "proportions",
        decl,
        settings,
        n,
        plan,
        values,
        labels,
        interval,
        (0.0, 1.0),
        other,
        dropna,
        extra={
            "method": method,
            "via": via,
            "noised levels": levels,
            "l1 sensitivity": per_level_l1 * levels * unit,
        },
        entry_labels=entry_labels,
        sens=np.full(m, unit),
    )
    return _ordered(values, labels, decl.column, "proportion", meta, sort, ascending)


def _proportion_bounds(
    plan: NoisePlan,
    raw: np.ndarray,
    leaf: slice,
    unit: float,
    all_but_one: bool,
    covered: bool,
    alpha: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Per-bucket bounds on ``count / n`` from the raw noisy entries (before repair).

    For ``all_but_one`` the last bucket's bound comes from the others' bounds at
    ``alpha / (K - 1)`` each; its lower end is 0 unless every row has a bucket.
    """
    if all_but_one:
        k = raw.size + 1
        h = halfwidth(plan, alpha / max(k - 1, 1)) / unit
        h_own = halfwidth(plan, alpha) / unit
        lo_e = np.clip(raw - h_own, 0.0, 1.0)
        hi_e = np.clip(raw + h_own, 0.0, 1.0)
        last_hi = 1.0 - float(np.clip(raw - h, 0.0, 1.0).sum())
        last_lo = 1.0 - float(np.clip(raw + h, 0.0, 1.0).sum()) if covered else 0.0
        lo_all = np.append(lo_e, min(max(last_lo, 0.0), 1.0))
        hi_all = np.append(hi_e, min(max(last_hi, 0.0), 1.0))
        return lo_all, np.maximum(hi_all, lo_all)
    h = halfwidth(plan, alpha)[leaf] / unit
    return np.clip(raw[leaf] - h, 0.0, 1.0), np.clip(raw[leaf] + h, 0.0, 1.0)


def _fixed_bounds(value: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    return value, value


def _divided_bounds(
    fn: Callable[[float], tuple[np.ndarray, np.ndarray]], by: float, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = fn(alpha)
    return lo / by, hi / by


def _tree_shapes(k: int) -> list[np.ndarray]:
    return [np.unique(level) for level in constraints.tree_levels(k)]


def _entry_labels(method: str, labels: list[Any], sizes: list[int]) -> list[Any]:
    if method == "hierarchical":
        return [f"level {d + 1} node {j}" for d, size in enumerate(sizes) for j in range(size)]
    if method == "all_but_one":
        return labels[:-1]
    return labels


def _sum_to_one(method: str, raw: np.ndarray, sizes: list[int]) -> np.ndarray:
    if method == "rescale":
        return constraints.rescale(raw)
    if method == "project":
        return constraints.project_simplex(raw)
    if method == "all_but_one":
        return constraints.complete_all_but_one(raw)
    cuts = np.cumsum(sizes)[:-1]
    return constraints.hierarchical_consistency(np.split(raw, cuts))


def _single_bucket(
    decl: CategoricalDeclaration,
    labels: list[Any],
    settings: Settings,
    n: int,
    method: str,
    via: str,
) -> pd.Series:
    """One bucket: the proportion is 1 whatever the data; nothing is noised or spent."""
    meta = DPMetadata(
        statistic="proportions",
        columns=(decl.column,),
        mechanism=settings.mechanism,
        epsilon=0.0,
        delta=0.0,
        neighbouring=settings.neighbouring,
        n=n,
        sensitivity=0.0,
        scale=0.0,
        input_bounds={},
        output_bounds=(0.0, 1.0),
        bounding=settings.bounding,
        secure=settings.source.secure,
        value=np.array([1.0]),
        details={"method": method, "via": via, "note": "a single bucket needs no noise"},
        _interval=partial(_fixed_bounds, np.array([1.0])),
        _index=pd.Index(labels),
    )
    out = pd.Series([1.0], index=_index(labels, decl.column), name="proportion")
    out.attrs["dp"] = meta
    return out


# ----------------------------------------------------------------------------- workloads


def release_counts(
    masks: Mapping[Hashable, pd.Series], n: int, settings: Settings, *, normalize: bool = False
) -> pd.Series:
    """A workload of ``k`` counting queries, released together (L1 sensitivity ``k``)."""
    names = list(masks)
    k = len(names)
    if k == 0:
        raise ValueError("the workload is empty; pass at least one query")
    # one record may satisfy every query: each count moves by its own sensitivity,
    # all at once (plan_noise's default joint sensitivity, k of them)
    per_query = sensitivity("count", settings.neighbouring, 0.0, 1.0, n)
    lo, hi = output_range("count", 0.0, 1.0, n, settings.neighbouring)
    plan = settings.plan(
        np.full(k, per_query),
        np.full(k, lo),
        np.full(k, hi),
        integer=True,
    )
    settings.charge("counts", tuple(names))
    exact = backends.mask_counts([masks[q] for q in names]).astype(np.float64)
    released = apply_noise(exact, plan, settings.source)
    scale_to = float(n) if normalize else 1.0
    if normalize and n < 1:
        raise ValueError("normalize=True needs a non-empty frame (n is public)")
    interval = partial(_divided_bounds, direct_interval(released, plan), scale_to)

    details = {
        "l1 sensitivity": float(k) / scale_to,
        "simultaneous error bound": "P(max error >= t) <= k exp(-t epsilon / k)"
        if settings.mechanism == "laplace"
        else "union bound over the queries",
        "normalize": normalize,
    }
    meta = build_metadata(
        "counts",
        names,
        settings,
        n,
        np.ones(k) / scale_to,
        _scaled(plan, scale_to),
        released / scale_to,
        {},
        (lo / scale_to, hi / scale_to),
        False,
        interval,
        entry_labels=[str(q) for q in names],
        details=details,
        budget_split={"one workload release": settings.epsilon},
    )
    if normalize:
        out = pd.Series(released / scale_to, index=pd.Index(names), dtype="float64")
    else:
        out = pd.Series(released.astype(np.int64), index=pd.Index(names), dtype="int64")
    out.attrs["dp"] = meta
    return out


def _scaled(plan: NoisePlan, by: float) -> NoisePlan:
    """``plan`` with its scales divided by ``by`` (for reporting normalised counts)."""
    import dataclasses

    if by == 1.0:
        return plan
    return dataclasses.replace(plan, scale=plan.scale / by)
