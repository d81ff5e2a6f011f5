"""Releases of several counts at once: value_counts, proportions, query workloads.

All of them count records into buckets that are public: the declared categories
of a column (plus, on request, an ``other`` bucket for undeclared values and a
bucket for missing values), or the named predicates of a workload. One record
sits in one bucket, so a histogram's L1 sensitivity is 2 under substitution and 1
under add/remove (REFERENCE.md §1); a workload of ``k`` predicates has L1
sensitivity ``k``, since one record may satisfy all of them.

Proportions sum to exactly one by one of four procedures
(:mod:`pandas_dp.stats.constraints`, REFERENCE.md §5), applied to noisy counts
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
import warnings
from collections.abc import Callable, Hashable
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from pandas_dp import engines
from pandas_dp.budget.accounting import rho_of_noise
from pandas_dp.engines.protocol import Kernels
from pandas_dp.engines.registry import engine_for
from pandas_dp.noise.bounding import apply_noise
from pandas_dp.noise.plans import NoisePlan
from pandas_dp.plan.plans import Plan, engine_input
from pandas_dp.plan.records import settings_fields
from pandas_dp.plan.sensitivity import output_range, sensitivity
from pandas_dp.request.category_declarations import CategoricalDeclaration
from pandas_dp.request.settings import Settings
from pandas_dp.result.values import DPMetadata, attach, deferred
from pandas_dp.stats import constraints
from pandas_dp.stats.histogram_estimates import (
    direct_interval,
    divided_bounds,
    entry_labels,
    fixed_bounds,
    proportion_bounds,
    share_bounds,
    sum_to_one,
    tree_shapes,
)

__all__ = [
    "DEFAULT_METHOD",
    "METHODS",
    "VIA",
    "buckets",
    "exact_buckets",
    "public_dtype",
    "release_counts",
    "release_proportions",
    "release_value_counts",
    "reordered",
    "typed_labels",
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


def buckets(
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


def exact_buckets(
    series: pd.Series,
    decl: CategoricalDeclaration,
    groups: engines.Groups | None = None,
    *,
    dropna: bool,
    other: Any,
    kernels: Kernels | None = None,
) -> np.ndarray:
    """The exact bucket counts, one row per group (engine call, after the charge;
    ``kernels``: the engine measuring the plan's, else the series' engine's)."""
    counter = engine_for(series) if kernels is None else kernels
    found = counter.category_counts(series, decl.categories, groups=groups)
    parts = [np.asarray(found.counts, dtype=np.float64).reshape(-1, len(decl.categories))]
    if other is not None:
        parts.append(np.asarray(found.other, dtype=np.float64).reshape(-1, 1))
    if not dropna:
        parts.append(np.asarray(found.missing, dtype=np.float64).reshape(-1, 1))
    return np.concatenate(parts, axis=1)


def _histogram_l1(settings: Settings) -> float:
    return sensitivity("category_counts", settings.neighbouring)


def _histogram_l2(settings: Settings) -> float:
    return sensitivity("category_counts_l2", settings.neighbouring)


def _split_key(decl: CategoricalDeclaration, measured: str = "category_counts") -> str:
    """The measurement key of a histogram, as in a plan's split and the ledger."""
    return f"{decl.column}: {measured}"


def _charge(
    settings: Settings,
    statistic: str,
    columns: tuple[Hashable, ...],
    key: str,
    rho: float | None = None,
) -> None:
    """Charge the whole budget to the one measurement ``key`` (recorded in the ledger).

    ``rho`` is the zCDP parameter of a Gaussian vector calibrated outside a plan
    (:func:`~pandas_dp.budget.accounting.rho_of_noise`), which ``accounting="zcdp"``
    budgets charge; ``None`` for Laplace noise.
    """
    Plan(settings).charge(statistic, columns, split={key: settings.epsilon}, rho=rho)


def _validation(
    series: pd.Series, decl: CategoricalDeclaration, settings: Settings
) -> Callable[[], None] | None:
    """``out_of_bounds="raise"``: the pandera check run after the charge, else ``None``."""
    if settings.out_of_bounds != "raise":
        return None
    from pandas_dp.stats.numeric import validate

    return partial(validate, {decl.column: series}, {decl.column: decl})


def public_dtype(dtype: Any, decl: CategoricalDeclaration, other: Any) -> Any:
    """The dtype of a column's released labels, as pandas' ``value_counts`` gives
    them (``Int64`` labels for an ``Int64`` column ...), or ``None`` for a plain
    index (with an ``other`` bucket, whose label the dtype need not hold).

    A categorical column's labels get a categorical dtype whose categories are the
    *declared* ones, in declaration order, with the dtype's order flag -- never the
    column's own category list, which ``astype("category")`` reads off the data (it
    could name a value held by one person, or one the declaration left out).
    """
    if other is not None:
        return None
    if isinstance(dtype, pd.CategoricalDtype):
        return pd.CategoricalDtype(list(decl.categories), ordered=bool(dtype.ordered))
    return dtype


def typed_labels(labels: list[Any], public: Any) -> Any:
    """``labels`` as an array of :func:`public_dtype`'s dtype where it holds them
    exactly (missing as missing), for numbers and booleans; else the list as it is,
    which pandas types itself (text and objects, the same whether the column is
    held as ``str`` or, on Dask, ``string[pyarrow]``). A function of the declared
    labels and the dtype only."""
    if public is None:
        return labels
    if isinstance(public, pd.CategoricalDtype):
        return pd.Categorical(labels, dtype=public)
    if not pd.api.types.is_numeric_dtype(public):  # (text: as pandas infers it, Dask alike)
        return labels
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            typed = pd.array(labels, dtype=public)
    except (TypeError, ValueError, OverflowError):
        return labels
    held = all(_same(a, b) for a, b in zip(labels, typed, strict=True))
    return typed if held else labels


def _same(label: Any, held: Any) -> bool:
    """``held`` is ``label`` as the dtype holds it: missing for missing, else equal
    and of the same kind (a bool is not the number 1)."""
    if _missing(label) or _missing(held):
        return _missing(label) and _missing(held)
    boolean = (bool, np.bool_)
    return isinstance(label, boolean) == isinstance(held, boolean) and bool(label == held)


def _missing(x: Any) -> bool:
    return x is None or x is pd.NA or x is pd.NaT or (isinstance(x, float) and math.isnan(x))


def _index(labels: list[Any], name: Hashable, public: Any = None) -> pd.Index:
    index: pd.Index = pd.Index(typed_labels(labels, public), name=name, tupleize_cols=False)
    return index


# ----------------------------------------------------------------------------- value_counts


def release_value_counts(
    series: pd.Series,
    decl: CategoricalDeclaration,
    settings: Settings,
    *,
    sort: bool = True,
    ascending: bool = False,
    dropna: bool = True,
    other: Any = None,
    frame: pd.DataFrame | None = None,
) -> pd.Series:
    """Noisy integer counts of the declared categories, like ``s.value_counts()``."""
    labels, _ = buckets(series, decl, dropna=dropna, other=other)
    plan = Plan(settings)
    key = plan.categories(decl.column, len(labels))
    plan.calibrate()
    reader = partial(exact_buckets, series, decl, dropna=dropna, other=other)
    data = engine_input(
        {decl.column: series}, {}, settings, None, frame, {("categories", decl.column): reader}
    )

    noisy = plan.run(
        data,
        "value_counts",
        (decl.column,),
        check=_validation(series, decl, settings),
    )
    released = noisy[key]
    noise = plan.measurements[key].noise
    assert noise is not None
    meta = _histogram_meta(
        "value_counts",
        decl,
        settings,
        noise,
        released,
        labels,
        direct_interval(released, noise),
        (float(noise.lower[0]), float(noise.upper[0])),
        other,
        dropna,
        sens=plan.measurements[key].sensitivity,  # per bucket: k rows of one unit
    )
    public = public_dtype(series.dtype, decl, other)
    return _ordered(
        released.astype(np.int64), labels, decl.column, "count", meta, sort, ascending, public
    )


def _ordered(
    values: np.ndarray,
    labels: list[Any],
    column: Hashable,
    name: str,
    meta: DPMetadata,
    sort: bool,
    ascending: bool,
    public: Any,
) -> pd.Series:
    """The result Series, sorted by the released values like pandas if asked."""
    if not sort:
        out = pd.Series(values, index=_index(labels, column, public), name=name)
        return attach(out, meta)
    assert meta._interval is not None
    order = np.argsort(values if ascending else -values, kind="stable")
    ranked = [labels[i] for i in order]
    out = pd.Series(values[order], index=_index(ranked, column, public), name=name)
    return attach(
        out,
        dataclasses.replace(
            meta, _interval=partial(reordered, meta._interval, order), _index=ranked
        ),
    )


def reordered(
    fn: Callable[[float], tuple[np.ndarray, np.ndarray]], order: np.ndarray, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = fn(alpha)
    return lo[order], hi[order]


def _histogram_meta(
    statistic: str,
    decl: CategoricalDeclaration,
    settings: Settings,
    plan: NoisePlan,
    released: np.ndarray,
    labels: list[Any],
    interval: Any,
    output_bounds: Any,
    other: Any,
    dropna: bool,
    extra: dict[str, Any] | None = None,
    entry_labels: list[Any] | None = None,
    sens: float = 1.0,
    units: str = "rows per bucket (integer, discrete noise)",
    split_key: str = "",
) -> DPMetadata:
    entries = [str(e) for e in (entry_labels if entry_labels is not None else labels)]
    split_key = split_key or _split_key(decl)
    details = {
        "categories": list(decl.categories),
        "undeclared values": f"counted in {other!r}" if other is not None else "dropped",
        "missing values": "dropped" if dropna else "counted",
        "l1 sensitivity": _histogram_l1(settings) * sens,
        "noised": units,
        "budget_split": {split_key: settings.epsilon},
        **(extra or {}),
    }
    return DPMetadata(
        **settings_fields(settings),
        statistic=statistic,
        columns=(decl.column,),
        sensitivity=deferred(partial(pd.Series, np.full(len(entries), sens), index=entries)),
        scale=deferred(partial(pd.Series, np.asarray(plan.scale, dtype=float), index=entries)),
        input_bounds={},
        output_bounds=output_bounds,
        value=released,
        details=details,
        _interval=interval,
        _index=labels,
    )


# ----------------------------------------------------------------------------- proportions


def release_proportions(
    series: pd.Series,
    decl: CategoricalDeclaration,
    settings: Settings,
    *,
    method: str = DEFAULT_METHOD,
    via: str = "counts",
    dropna: bool = True,
    other: Any = None,
    sort: bool = False,
    ascending: bool = False,
    frame: pd.DataFrame | None = None,
) -> pd.Series:
    """Noisy category proportions, each in ``[0, 1]``, summing to exactly one.

    Under ``add_remove`` the shares are the noisy counts over their noisy total
    (``method`` ``"project"`` or ``"rescale"``). Under ``substitute`` the frame's
    length ``n`` is public and the shares are of its ``n`` rows; there every
    method and ``via="proportions"`` (Liu's ``count / n`` entries) are offered.
    """
    check_method(method, via)
    n = settings.public_n
    if n is None and (via != "counts" or method not in ("project", "rescale")):
        raise ValueError(
            f"method={method!r}, via={via!r} divide by the frame's length, which is private "
            f"under neighbouring='add_remove'. Use method='project' or 'rescale' with "
            f"via='counts' (shares of the noisy total), or declare neighbouring='substitute' "
            f"for a frame whose length is public"
        )
    if n is not None and n < 1:
        raise ValueError(
            "proportions of an empty frame: there is nothing to release. Under "
            "neighbouring='substitute' the row count is public, so this reveals nothing"
        )
    labels, covered = buckets(series, decl, dropna=dropna, other=other)
    k = len(labels)
    if k == 1:  # one bucket: its proportion is 1, a public fact
        public = public_dtype(series.dtype, decl, other)
        return _single_bucket(decl, labels, settings, method, via, public)
    counts = via == "counts"
    if not counts and settings.contributions.rows > 1:
        raise ValueError(
            "via='proportions' (Liu's count / n entries) assumes one row per unit; with a "
            "privacy unit use via='counts'"
        )
    rel = settings.neighbouring
    levels = constraints.noised_levels(k) if method == "hierarchical" else 1
    sizes = (
        [len(level) for level in tree_shapes(k)]
        if method == "hierarchical"
        else [k - 1 if method == "all_but_one" else k]
    )
    m = int(sum(sizes))
    if counts:
        unit = sensitivity("count", rel, k=settings.contributions.rows)
        per_level_l1, per_level_l2 = _histogram_l1(settings), _histogram_l2(settings)
        lo, hi = output_range("category_counts", 0.0, 1.0, n)
    else:
        assert n is not None
        unit = sensitivity("proportion_direct", rel, n=n)
        per_level_l1 = sensitivity("proportions_direct", rel, n=n) / unit
        per_level_l2 = sensitivity("proportions_direct_l2", rel, n=n) / unit
        lo, hi = 0.0, 1.0
    # a unit's rows sit in at most `rows` buckets of each level (its old and its new
    # rows under substitute): the entries it moves, each partially
    per_level = (2 if rel == "substitute" else 1) * settings.contributions.rows
    moved = float(sum(min(per_level, size) for size in sizes))
    joint_l2 = per_level_l2 * math.sqrt(levels)
    plan = settings.noise(
        np.full(m, unit),
        np.full(m, lo),
        np.full(m, hi),
        integer=counts,
        joint_l1=per_level_l1 * levels,
        joint_l2=joint_l2,
        max_changed=moved,
    )
    key = _split_key(decl, "category_counts" if counts else "proportions_direct")
    # one noised vector: a Gaussian one is charged its rho, as a plan's measurement is
    rho = rho_of_noise(plan, unit, joint_l2)
    _charge(settings, "proportions", (decl.column,), key, rho=rho)
    check = _validation(series, decl, settings)
    if check is not None:
        check()
    groups = engine_input({decl.column: series}, {}, settings, None, frame)().groups
    exact_counts = exact_buckets(series, decl, groups, dropna=dropna, other=other)[0]
    exact = exact_counts if counts else exact_counts / float(n or 1)
    if method == "hierarchical":
        theta = np.concatenate(constraints.aggregate_levels(exact))
    elif method == "all_but_one":
        theta = exact[:-1]
    else:
        theta = exact
    noisy = apply_noise(np.clip(theta, plan.lower, plan.upper), plan, settings.source)
    if n is None:  # shares of the noisy total
        total = max(float(np.clip(noisy, 0.0, None).sum()), 1.0)
        raw = np.clip(noisy, 0.0, None) / total
        interval = partial(share_bounds, plan, noisy)
    else:
        raw = noisy / n if counts else noisy
        leaf = slice(m - k, m) if method == "hierarchical" else slice(0, m)
        interval = partial(
            proportion_bounds,
            plan,
            raw,
            leaf,
            float(n) if counts else 1.0,
            method == "all_but_one",
            covered,
        )
    values = sum_to_one(method, raw, sizes)
    meta = _histogram_meta(
        "proportions",
        decl,
        settings,
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
            "denominator": "the noisy total of the buckets" if n is None else f"n = {n} (public)",
        },
        entry_labels=entry_labels(method, labels, sizes),
        sens=unit,
        units="rows per bucket (integer, discrete noise)"
        if counts
        else "proportions count / n (Liu's direct entries)",
        split_key=key,
    )
    public = public_dtype(series.dtype, decl, other)
    return _ordered(values, labels, decl.column, "proportion", meta, sort, ascending, public)


def _single_bucket(
    decl: CategoricalDeclaration,
    labels: list[Any],
    settings: Settings,
    method: str,
    via: str,
    public: Any,
) -> pd.Series:
    """One bucket: the proportion is 1 whatever the data; nothing is noised or spent."""
    meta = DPMetadata(
        **settings_fields(settings, epsilon=0.0, delta=0.0),
        statistic="proportions",
        columns=(decl.column,),
        sensitivity=0.0,
        scale=0.0,
        input_bounds={},
        output_bounds=(0.0, 1.0),
        value=np.array([1.0]),
        details={"method": method, "via": via, "note": "a single bucket needs no noise"},
        _interval=partial(fixed_bounds, np.array([1.0])),
        _index=pd.Index(labels, tupleize_cols=False),
    )
    out = pd.Series([1.0], index=_index(labels, decl.column, public), name="proportion")
    return attach(out, meta)


# ----------------------------------------------------------------------------- workloads


def _counts_input(
    masks: Callable[[], list[pd.Series]], settings: Settings, frame: pd.DataFrame | None
) -> engines.EngineInput:
    """The engine input of a workload (after the charge): the masks, and with a
    privacy unit the rows each unit keeps, chosen by a keyed hash of the unit and
    of the row's answers to the queries -- rows with the same answers are
    interchangeable, so the counts do not depend on the order of the rows."""
    answers = masks()
    unit = settings.contributions.unit
    if unit is None or frame is None:
        return dataclasses.replace(engine_input({}, {}, settings, None, frame)(), masks=answers)
    labels = [f"\x00answer {i}" for i in range(len(answers))]  # never a column's label
    table = pd.DataFrame(dict(zip(labels, answers, strict=True)), index=frame.index)
    table[unit] = frame[unit]
    columns: dict[Hashable, pd.Series] = {label: table[label] for label in labels}
    return dataclasses.replace(engine_input(columns, {}, settings, None, table)(), masks=answers)


def release_counts(
    masks: Callable[[], list[pd.Series]],
    names: list[Hashable],
    settings: Settings,
    *,
    normalize: bool = False,
    frame: pd.DataFrame | None = None,
) -> pd.Series:
    """A workload of ``k`` counting queries, released together (L1 sensitivity ``k``).

    ``masks`` is called only after the budget is charged (it reads the data).
    With ``normalize=True`` the counts are divided by the number of rows: the
    public ``n`` under ``substitute``, a noisy row count of the same plan under
    ``add_remove``.
    """
    k = len(names)
    if k == 0:
        raise ValueError("the workload is empty; pass at least one query")
    n = settings.public_n
    if normalize and n is not None and n < 1:
        raise ValueError(
            "normalize=True of an empty frame: there are no rows to divide by (under "
            "neighbouring='substitute' the row count is public, so this reveals nothing)"
        )
    plan = Plan(settings)
    key = plan.masks(names)
    rows_key = plan.rows(weight=0.25) if normalize and n is None else None
    plan.calibrate()
    noisy = plan.run(partial(_counts_input, masks, settings, frame), "counts", tuple(names))
    released = noisy[key]
    noise = plan.measurements[key].noise
    assert noise is not None
    if rows_key is not None:
        scale_to = max(float(noisy[rows_key][0]), 1.0)
    else:
        scale_to = float(n) if normalize and n is not None else 1.0
    interval = partial(divided_bounds, direct_interval(released, noise), scale_to)
    m = plan.measurements[key]
    per_query = float(np.max(np.asarray(m.sensitivity, dtype=float)))  # k rows of one unit
    details = {
        "l1 sensitivity": float(k) * per_query,
        "noised": "rows satisfying each query (integer, discrete noise)",
        "budget_split": plan.split(),
        "normalize": normalize,
        "denominator": (
            "the noisy number of rows" if rows_key else (f"n = {n} (public)" if normalize else None)
        ),
    }
    if rows_key is not None:
        details["interval"] = "for the exact counts divided by the released number of rows"
    c = settings.contributions
    if c.unit is not None:
        details["privacy unit"] = str(c.unit)
        details["contribution bounds"] = {"max_rows_per_unit": c.rows}
    meta = DPMetadata(
        **settings_fields(settings, n=n),
        statistic="counts",
        columns=tuple(names),
        sensitivity=pd.Series(np.full(k, per_query), index=[str(q) for q in names]),
        scale=pd.Series(np.asarray(noise.scale, dtype=float), index=[str(q) for q in names]),
        input_bounds={},
        output_bounds=(float(noise.lower[0]), float(noise.upper[0])),
        value=released / scale_to,
        details=details,
        _interval=interval,
        _index=list(names),
    )
    if normalize:
        out = pd.Series(released / scale_to, index=pd.Index(names), dtype="float64")
    else:
        out = pd.Series(released.astype(np.int64), index=pd.Index(names), dtype="int64")
    return attach(out, meta)
