"""Releases of numeric columns: count, len, sum, mean, var, std and describe's moments.

Every release here follows one path (DESIGN.md): the statistics asked for become
a :class:`~pandas_dp.plan.plans.Plan` over sufficient statistics (shared between the
statistics that need them; what each measures, at which weight, and how it is
estimated: :mod:`pandas_dp.stats.moments`), the plan is calibrated from public facts,
charged, run by the engine, noised once, and the statistics are estimated from
the noisy sufficient statistics; the record says what was done
(:mod:`pandas_dp.plan.records`). A calibrated ungrouped plan is kept for the next call
with the same public facts.

Missing values are skipped, as pandas does; the number of non-missing values is
a noisy sufficient statistic of the same plan. Under ``add_remove`` (the default)
nothing depends on the exact number of rows. ``method="direct"`` (Liu 2019: the
mean with sensitivity ``R/n``, the variance with ``R²/n``) needs the frame's
length to be public and is offered under ``neighbouring="substitute"`` only; it
treats the frame as ``n`` values, a missing one counting as the midpoint.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

import numpy as np
import pandas as pd

from pandas_dp import errors
from pandas_dp.plan.calibration import integer_sum
from pandas_dp.plan.plans import Plan, engine_input
from pandas_dp.plan.records import build_metadata
from pandas_dp.request.declared_columns import NumericDeclaration
from pandas_dp.request.grouping import Grouping
from pandas_dp.request.settings import Settings, typed_key
from pandas_dp.result.values import DPFloat, DPInt, DPMetadata, attach
from pandas_dp.stats import estimators as est
from pandas_dp.stats.catalogue import moment
from pandas_dp.stats.moment_weights import (
    MOMENT_WEIGHTS,
    resolve_method,
    statistic_weights,
    weights_name,
)
from pandas_dp.stats.moments import (
    MOMENT_STATISTICS,
    Entry,
    check_ddof,
    entry_range,
    estimate,
    plan_entry,
    stacked,
)
from pandas_dp.stats.moments import FloatArray as FloatArray
from pandas_dp.stats.moments import IntervalFn as IntervalFn

__all__ = [
    "MOMENT_STATISTICS",
    "MOMENT_WEIGHTS",
    "Settings",
    "build_metadata",
    "release_count",
    "release_len",
    "release_moments",
    "resolve_method",
    "validate",
]


def validate(columns: Mapping[Hashable, pd.Series], decls: Mapping[Hashable, Any]) -> None:
    """``out_of_bounds="raise"``: validate with pandera (not DP-safe; the budget is spent).

    Raises ``pandas_dp.errors.OutOfBoundsError`` (a ``ValueError`` and pandera's
    ``SchemaError``, with pandera's failure cases); its message shows a few of them.
    """
    import pandera.pandas as pa  # only when asked for: pandera's import is slow
    from pandera.errors import SchemaError

    frame = pd.DataFrame(dict(columns))
    schema = pa.DataFrameSchema({c: decls[c].pandera_column for c in columns})
    try:
        schema.validate(frame)
    except SchemaError as err:
        cases = getattr(err, "failure_cases", None)
        if isinstance(cases, pd.DataFrame):
            shown, count = (
                f"; first failure cases:\n{cases.head(5)}",
                f" ({len(cases)} failure cases)",
            )
        else:
            shown, count = f": {str(err)[:300]}", ""
        raise errors.OutOfBoundsError(
            f"out_of_bounds='raise': the data violate the declaration{count}. The privacy "
            f"budget of this release was already charged. This check is not "
            f"differentially private; use out_of_bounds='clip' in production{shown}",
            schema,
            frame,
            cases if isinstance(cases, pd.DataFrame) else None,
        ) from None


# ----------------------------------------------------------------------------- releases


def release_moments(
    statistic: str,
    columns: Mapping[Hashable, pd.Series],
    decls: Mapping[Hashable, NumericDeclaration],
    settings: Settings,
    *,
    scalar: bool,
    ddof: int = 1,
    method: str = "auto",
    grouping: Grouping | None = None,
    frame: pd.DataFrame | None = None,
) -> DPFloat | DPInt | pd.Series | pd.DataFrame:
    """Release ``count``, ``sum``, ``mean``, ``var`` or ``std`` of numeric columns.

    With ``grouping``, one value per declared key: a Series indexed by key for one
    column (``scalar``), else a DataFrame with one column per column.
    """
    table = release_table(
        {c: (statistic,) for c in columns},
        columns,
        decls,
        settings,
        ddof=ddof,
        method=method,
        grouping=grouping,
        frame=frame,
    )
    labels = list(columns)
    whole = [_released_whole(statistic, decls.get(c)) for c in labels]
    integer = all(whole)
    ranges = {c: table.ranges[(c, statistic)] for c in labels}
    details = {"method": table.method, **({"ddof": ddof} if moment(statistic).takes_ddof else {})}
    if grouping is not None:
        details.update(table.plan.group_details())
    input_bounds = (
        {} if statistic == "count" else {c: (decls[c].lower, decls[c].upper) for c in labels}
    )
    fns = [table.fns[(c, statistic)] for c in labels]
    if grouping is not None:
        values = np.column_stack([table.values[(c, statistic)] for c in labels])
        index = table.index
        assert index is not None
        flat = [fn for g in range(len(index)) for fn in (f[g] for f in fns)]
        entries: Any = index if scalar else [(k, c) for k in index for c in labels]
        meta = table.metadata(
            statistic,
            labels,
            values[:, 0] if scalar else values,
            input_bounds=input_bounds,
            output_bounds=ranges[labels[0]] if scalar else ranges,
            interval=partial(stacked, flat),
            index=entries,
            details=details,
        )
        grouped: pd.Series | pd.DataFrame
        if scalar:
            first = values[:, 0].astype(np.int64) if integer else values[:, 0]
            grouped = pd.Series(first, index=index, name=labels[0])
        else:
            grouped = pd.DataFrame(
                {
                    i: values[:, i].astype(np.int64) if w else values[:, i]
                    for i, w in enumerate(whole)
                },
                index=index,
            ).set_axis(pd.Index(labels), axis=1)
        return attach(grouped, meta)
    if scalar:  # one float, without a numpy round trip
        value = float(table.values[(labels[0], statistic)][0])
        meta = table.metadata(
            statistic,
            labels,
            value,
            input_bounds=input_bounds,
            output_bounds=ranges[labels[0]],
            interval=partial(stacked, [fns[0][0]]),
            index=None,
            details=details,
        )
        return DPInt(int(value), {"dp": meta}) if integer else DPFloat(value, {"dp": meta})
    row = np.array([table.values[(c, statistic)][0] for c in labels], dtype=np.float64)
    meta = table.metadata(
        statistic,
        labels,
        row,
        input_bounds=input_bounds,
        output_bounds=ranges,
        interval=partial(stacked, [f[0] for f in fns]),
        index=labels,
        details=details,
    )
    out = pd.Series(
        row.astype(np.int64) if integer else row,
        index=pd.Index(labels),
        dtype="int64" if integer else "float64",
    )
    return attach(out, meta)


def _released_whole(statistic: str, decl: NumericDeclaration | None) -> bool:
    """Whether a column's ``statistic`` is released as an integer: a count, or the
    sum of a column of whole numbers within whole-number bounds
    (:func:`~pandas_dp.plan.calibration.integer_sum`, which the plan follows)."""
    if moment(statistic).integer:
        return True
    return (
        statistic == "sum"
        and decl is not None
        and integer_sum(decl.integer, decl.lower, decl.upper)
    )


class TableExtra(Protocol):
    """Statistics another module plans into a table's plan (``agg``'s medians).

    ``columns`` maps each column to the statistics it releases; :meth:`plan` adds
    its measurements to the plan at the given budget weight per column and returns
    the engine readers they need; :meth:`check` may raise (after the calibration,
    before the charge); :meth:`estimate` turns the noisy measurements into
    ``(column, statistic) -> (values per group, interval functions per group,
    public output range)``; :meth:`details` describes them for the metadata.
    """

    @property
    def columns(self) -> Mapping[Hashable, Sequence[str]]: ...

    def plan(self, plan: Plan, weights: Mapping[Hashable, float]) -> dict[Any, Any]: ...

    def check(self) -> None: ...

    def estimate(
        self, noisy: Mapping[str, FloatArray], groups: int
    ) -> dict[tuple[Hashable, str], tuple[FloatArray, list[IntervalFn], tuple[float, float]]]: ...

    def details(self) -> dict[str, Any]: ...


@dataclass
class Table:
    """Statistics of several columns from one plan: per ``(column, statistic)``, per group.

    Attributes
    ----------
    plan : Plan
        The plan that was run (its measurements, split and scales are public).
    values : dict
        ``(column, statistic) -> ndarray`` with one value per group.
    fns : dict
        ``(column, statistic) -> list`` of interval functions, one per group.
    ranges : dict
        ``(column, statistic) -> (lower, upper)``, the public output range.
    index : pandas.Index or None
        The released keys (grouped), else ``None``.
    method : str
        The method used (``"moments"`` or ``"direct"``).
    """

    plan: Plan
    values: dict[tuple[Hashable, str], FloatArray]
    fns: dict[tuple[Hashable, str], list[IntervalFn]]
    ranges: dict[tuple[Hashable, str], tuple[float, float]]
    index: pd.Index | None
    method: str

    def metadata(
        self, statistic: str, labels: Sequence[Hashable], value: Any, **kw: Any
    ) -> DPMetadata:
        """The release's metadata record (see :func:`build_metadata`)."""
        return build_metadata(statistic, labels, self.plan, value, **kw)


def release_table(
    requests: Mapping[Hashable, Sequence[str]],
    columns: Mapping[Hashable, pd.Series],
    decls: Mapping[Hashable, NumericDeclaration],
    settings: Settings,
    *,
    ddof: int = 1,
    method: str = "auto",
    grouping: Grouping | None = None,
    frame: pd.DataFrame | None = None,
    statistic: str | None = None,
    extra: TableExtra | None = None,
) -> Table:
    """Plan, charge, measure and estimate ``column -> statistics`` together.

    Statistics of one column share their measurements (one count and centred sum,
    or the two bound sums that give both, and one centred squares per column), so
    ``{"age": ["mean", "std"]}`` costs what a variance alone does. Every column
    gets an equal share of the budget (:func:`_column_factors`). ``extra`` plans
    further statistics (``agg``'s medians) into the same plan, one charge for all.
    """
    ddof = check_ddof(ddof)
    way = resolve_method(method, settings)
    n = settings.public_n
    wanted = {st for sts in requests.values() for st in sts}
    takes_ddof = any(moment(x).takes_ddof for x in wanted)
    if way == "direct" and takes_ddof and n is not None and n >= 2 and ddof >= n:
        # (n - 1) / (n - ddof) rescales Liu's ddof=1 variance: checked before the charge
        raise ValueError(
            f"ddof must be below n={n} (the public row count); got ddof={ddof}. Use a smaller ddof"
        )
    readers: dict[Any, Any] = {}
    if extra is None:
        plan, entries, ranges = _planned(requests, decls, settings, way, ddof, grouping)
    else:  # built for the call: the extra's estimator keeps this call's state
        moments = {
            c: tuple(x for x in sts if x in MOMENT_STATISTICS) for c, sts in requests.items()
        }
        plan, entries, ranges, weights = _build_plan(
            moments, decls, settings, way, ddof, grouping, extra.columns
        )
        readers = extra.plan(plan, weights)
        plan.calibrate()
        extra.check()
    check = partial(validate, columns, decls) if settings.out_of_bounds == "raise" else None
    name = statistic or (next(iter(wanted)) if len(wanted) == 1 else "agg")
    data = engine_input(columns, decls, settings, grouping, frame, readers or None)
    noisy = plan.run(data, name, tuple(columns), check=check)
    clamp = settings.bounding != "none"
    values: dict[tuple[Hashable, str], FloatArray] = {}
    fns: dict[tuple[Hashable, str], list[IntervalFn]] = {}
    groups = plan.released_groups
    for key, entry in entries.items():
        results = [estimate(entry, plan, noisy, ddof=ddof, clamp=clamp, g=g) for g in range(groups)]
        values[key] = np.array([r[0] for r in results], dtype=np.float64)
        fns[key] = [r[1] for r in results]
    ranges = dict(ranges)
    if extra is not None:
        for key, (v, f, r) in extra.estimate(noisy, groups).items():
            values[key], fns[key], ranges[key] = v, f, r
    return Table(plan, values, fns, ranges, plan.released_index, way)


Planned = tuple[
    Plan, dict[tuple[Hashable, str], Entry], dict[tuple[Hashable, str], tuple[float, float]]
]

#: Calibrated ungrouped plans by their public facts (:func:`_planned`), at most
#: :data:`_PLANS_KEPT` of them (the oldest is dropped first).
_PLANS: dict[Hashable, Planned] = {}
_PLANS_KEPT = 256
_PLANS_LOCK = threading.Lock()


def _planned(
    requests: Mapping[Hashable, Sequence[str]],
    decls: Mapping[Hashable, NumericDeclaration],
    settings: Settings,
    way: str,
    ddof: int,
    grouping: Grouping | None,
) -> Planned:
    """The calibrated plan of a release, its entries and their public output ranges.

    All of it follows from public facts: the requests, each column's label and
    bounds (:func:`~pandas_dp.request.settings.typed_key`: ``0.0`` is not ``-0.0``, ``1`` not
    ``1.0``), the method, ``ddof`` and :meth:`Settings.plan_key`. So an ungrouped
    plan is built once per distinct set of them -- from settings without a
    generator or a budget -- and rebound to each call's settings
    (:meth:`Plan.rebound`); the call's budget is still charged by its own run.
    Refused arguments raise on every call (nothing is kept for them). A grouped
    plan is built for its call.
    """
    if grouping is not None:
        return _build_plan(requests, decls, settings, way, ddof, grouping)[:3]
    key = (
        way,
        ddof,
        settings.plan_key(),
        tuple((typed_key(c), tuple(sts), _decl_key(decls[c])) for c, sts in requests.items()),
        _weights_key(requests, way, settings),
    )
    try:
        found = _PLANS.get(key)
    except TypeError:  # an unhashable part (a label): built for this call alone
        return _build_plan(requests, decls, settings, way, ddof, None)[:3]
    if found is None:
        found = _build_plan(requests, decls, settings.public(), way, ddof, None)[:3]
        found[0].freeze()
        with _PLANS_LOCK:  # (lookups never iterate: they need no lock)
            if len(_PLANS) >= _PLANS_KEPT:
                del _PLANS[next(iter(_PLANS))]
            _PLANS[key] = found
    plan, entries, ranges = found
    return plan.rebound(settings), entries, ranges


def _weights_key(
    requests: Mapping[Hashable, Sequence[str]], way: str, settings: Settings
) -> tuple[Hashable, ...]:
    """The :data:`MOMENT_WEIGHTS` entries the requests' entries read, by content (a
    study that swaps them, as ``benchmarks/accuracy.py`` does, never gets a plan
    split by other weights; a mean with a variance reads the two stages' entry)."""
    s = settings
    names = {
        weights_name(st, way, s.neighbouring, s.mechanism, s.bounding)
        for sts in requests.values()
        for st in sts
    }
    if "mean" in names:
        names.add("mean_two_stages")
    return tuple((name, *MOMENT_WEIGHTS[name].items()) for name in sorted(names))


def _decl_key(decl: NumericDeclaration) -> tuple[Hashable, ...]:
    """What a plan reads of a declaration -- its label and bounds -- typed (see
    :func:`_planned`)."""
    return (typed_key(decl.column), typed_key(decl.lower), typed_key(decl.upper))


def _build_plan(
    requests: Mapping[Hashable, Sequence[str]],
    decls: Mapping[Hashable, NumericDeclaration],
    settings: Settings,
    way: str,
    ddof: int,
    grouping: Grouping | None,
    others: Mapping[Hashable, Sequence[str]] | None = None,
) -> tuple[
    Plan,
    dict[tuple[Hashable, str], Entry],
    dict[tuple[Hashable, str], tuple[float, float]],
    dict[Hashable, float],
]:
    """Plan every ``(column, statistic)``; the output ranges (public).

    Without ``others`` (statistics a :class:`TableExtra` plans) the plan is
    calibrated; with them, the caller calibrates after the extra's measurements
    are in, and the last item gives each of their columns its budget weight.
    """
    plan = Plan(settings, grouping)
    rel = settings.neighbouring
    factors, other_weights = _column_factors(requests, way, settings, others or {})
    entries = {}
    for c, sts in requests.items():
        for st in sts:
            w = statistic_weights(st, sts, way, rel, settings.mechanism, settings.bounding)
            scaled = {k: v * factors[c] for k, v in w.items()}
            entries[(c, st)] = plan_entry(plan, st, decls[c], way, scaled)
    if others is None:
        plan.calibrate()
    # the public ranges, from public facts only (also when no group will be kept)
    ranges = {key: entry_range(entry, plan, ddof) for key, entry in entries.items()}
    return plan, entries, ranges, other_weights


def _column_factors(
    requests: Mapping[Hashable, Sequence[str]],
    way: str,
    settings: Settings,
    others: Mapping[Hashable, Sequence[str]],
) -> tuple[dict[Hashable, float], dict[Hashable, float]]:
    """Budget factors that give every column an equal share.

    A column's moments weigh what :data:`MOMENT_WEIGHTS` gives its statistics (the
    largest weight per measurement); the statistics ``others`` plans for it weigh
    as much as its moments together (or 1 without moments). Each column's weights
    are multiplied so that its total is the largest column's: 1 where every
    column asks for the same statistics. Returns the factor of each column's
    moment weights, and the weight of each column's ``others``.
    """
    totals: dict[Hashable, float] = {}
    for c, sts in requests.items():
        merged: dict[str, float] = {}
        for st in sts:
            s = settings
            for k, v in statistic_weights(
                st, sts, way, s.neighbouring, s.mechanism, s.bounding
            ).items():
                merged[k] = max(merged.get(k, 0.0), v)
        totals[c] = sum(merged.values())
    extra = {c: totals.get(c) or 1.0 for c, sts in others.items() if sts}
    column = {c: totals.get(c, 0.0) + extra.get(c, 0.0) for c in {**totals, **extra}}
    top = max(column.values(), default=1.0)
    factors = {c: top / column[c] for c in totals}
    return factors, {c: w * top / column[c] for c, w in extra.items()}


def release_agg(
    requests: Mapping[Hashable, Sequence[str]],
    columns: Mapping[Hashable, pd.Series],
    decls: Mapping[Hashable, NumericDeclaration],
    settings: Settings,
    *,
    ddof: int = 1,
    grouping: Grouping | None = None,
    frame: pd.DataFrame | None = None,
    extra: TableExtra | None = None,
) -> pd.DataFrame:
    """Several statistics of several columns, one plan: columns ``(column, statistic)``.

    Grouped, one row per key; else one row. ``extra``: the statistics (medians)
    another module plans into the same plan.
    """
    table = release_table(
        requests,
        columns,
        decls,
        settings,
        ddof=ddof,
        grouping=grouping,
        frame=frame,
        statistic="agg",
        extra=extra,
    )
    pairs = [(c, s) for c, sts in requests.items() for s in sts]
    index = table.index if table.index is not None else pd.RangeIndex(1)
    data = {pair: table.values[pair] for pair in pairs}
    out = pd.DataFrame(data, index=index, columns=pd.MultiIndex.from_tuples(pairs))
    for c, s in pairs:  # counts, and sums of whole numbers (discrete noise): integers
        if _released_whole(s, decls.get(c)):
            out[(c, s)] = out[(c, s)].astype(np.int64)
    groups = len(index)
    fns = [table.fns[pair][g] for g in range(groups) for pair in pairs]
    meta = table.metadata(
        "agg",
        list(columns),
        out.to_numpy(),
        input_bounds={
            c: (decls[c].lower, decls[c].upper)
            for c, sts in requests.items()
            if set(sts) - {"count"}
        },
        output_bounds={f"{c} {s}": table.ranges[(c, s)] for c, s in pairs},
        interval=partial(stacked, fns),
        index=[(k, c, s) for k in index for c, s in pairs] if grouping is not None else pairs,
        details={
            "method": table.method,
            "ddof": ddof,
            "derived": "statistics of one column share its measured count and centred sum "
            "(as its two bound sums under add/remove with Laplace noise) and centred "
            "squares; each column gets an equal share of the budget",
            **({"quantiles": extra.details()} if extra is not None else {}),
            **(table.plan.group_details() if grouping is not None else {}),
        },
    )
    return attach(out, meta)


def release_count(
    columns: Mapping[Hashable, pd.Series],
    settings: Settings,
    *,
    scalar: bool,
    frame: pd.DataFrame | None = None,
) -> DPInt | pd.Series:
    """Noisy number of non-missing values per column (any dtype), like ``df.count()``."""
    counting = {c: NumericDeclaration(c, 0.0, 1.0) for c in columns}  # bounds unused
    result = release_moments("count", columns, counting, settings, scalar=scalar, frame=frame)
    assert not isinstance(result, DPFloat | pd.DataFrame)
    return result


def release_len(settings: Settings, frame: pd.DataFrame | None = None) -> DPInt:
    """Noisy number of rows. The exact length is never reported."""
    plan = Plan(settings)
    key = plan.rows()
    plan.calibrate()
    noisy = plan.run(engine_input({}, {}, settings, None, frame), "len", ())
    value = float(noisy[key][0])
    noise = plan.measurements[key].noise
    assert noise is not None
    fn = partial(est.noisy_interval, noise, value)
    m = plan.measurements[key]
    meta = build_metadata(
        "len",
        [],
        plan,
        value,
        input_bounds={},
        output_bounds=(m.lower, m.upper),
        interval=partial(stacked, [fn]),
        index=None,
    )
    return DPInt(int(value), {"dp": meta})
