"""``describe(bounds="auto")``: a describe of a frame with nothing declared.

What a column does not declare is released privately first, then used as if it
had been declared (sequential composition: after its release it is public):

* a numeric column without bounds gets bounds from the auto-bounds release
  (:func:`pandas_dp.stats.auto_bounds.private_bounds`, REFERENCE.md §14), all such
  columns in one release (the zero band's edge ``-2**-32`` is read as 0 when the
  upper bound lies above it: ``[0, 8]`` rather than ``[-2.3e-10, 8]``);
* a text, object or categorical column without declared categories gets
  categories by partition selection (REFERENCE.md §10): each observed value's
  number of distinct units is noised and kept only above a threshold, so a value
  held by few people never appears (one person's value with probability at most
  the column's share of ``delta``). The kept values, sorted, are its categories;
  rows holding another value are not in its shares;
* a boolean column's categories are ``False`` and ``True`` by its type, and a
  declared column keeps its declarations.

Group-by (``df.dp.groupby(by, keys=[...]).describe(bounds="auto")``)
    The bounds and the categories are released once, over the whole frame (every
    group's rows, as ``bounds="auto"`` does for a group-by's moments), with the
    contribution bounds of a whole-frame release (``max_rows_per_unit``); the
    grouped describe then runs on them, per declared key. The keys must be declared:
    with private keys (``keys="private"``) their own partition selection and delta
    would come on top, and the call is refused before any charge.

Budget
    Every described column has an equal share ``epsilon / k`` of the call's epsilon
    (``k`` columns), as in a declared describe. A column whose bounds or categories
    are estimated spends :data:`AUTO_SHARE` of its share on them (the share
    ``bounds="auto"`` spends elsewhere); the describe release then spends the rest of
    epsilon on every column equally. Partition selection needs ``delta > 0``: with
    Laplace noise the selections spend all of ``delta``, split equally between the
    columns; with Gaussian noise half of it, the release the other half.
    Each step is its own release in the ledger (``"bounds"``, ``"categories"``,
    ``"describe"``); their epsilons and deltas add up to the call's.

Refusals
    Every check that can fail runs before the first charge: private group keys,
    ``delta = 0`` with a column to select categories for,
    ``neighbouring="substitute"`` (partition selection needs add/remove),
    ``out_of_bounds="raise"``, a zCDP budget (partition selection's delta is outside
    zCDP), a budget that cannot pay the whole call, and every check of the describe
    that follows (with placeholder declarations, the group-by's keys included).
    After the first charge nothing raises on a data value: a column whose bounds no
    band supports gets the stated fallback bounds, and a text column none of whose
    values passes the threshold is left out of the table and listed in the metadata.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from pandas_dp.plan.plans import Plan, engine_input
from pandas_dp.plan.running import SELECTION
from pandas_dp.request.category_declarations import CategoricalDeclaration
from pandas_dp.request.declared_columns import NumericDeclaration
from pandas_dp.request.grouping import Grouping
from pandas_dp.request.settings import Settings
from pandas_dp.result.values import DPMetadata, attach
from pandas_dp.stats import auto_bounds
from pandas_dp.stats.describe import check_describe, release_describe
from pandas_dp.stats.describe_auto_checks import (
    AutoColumns,
    auto_columns,
    check_auto,
    check_budgets,
    check_selection_delta,
    refuse_grouped_auto,
)
from pandas_dp.stats.describe_shares import SHARES_DEFAULT

__all__ = [
    "AUTO_SHARE",
    "AutoColumns",
    "auto_columns",
    "check_selection_delta",
    "refuse_grouped_auto",
    "release_describe_auto",
]

#: The share of an estimated column's epsilon spent on its bounds or categories:
#: ``bounds="auto"``'s measured share (:data:`pandas_dp.stats.auto_bounds.DEFAULT_SHARE`),
#: used for the categories too (not measured for them separately).
AUTO_SHARE: float = auto_bounds.DEFAULT_SHARE
#: The statistic of a category selection's ledger row.
SELECTION_STATISTIC = "categories"


def _snapped(lower: float, upper: float) -> tuple[float, float]:
    """Released bounds with the zero band's edge ``-2**-32`` (or ``2**-32``) read as 0
    when the other bound lies beyond it: a public rule (post-processing) that shows a
    column of non-negative values as ``[0, upper]``, clipping nothing but values
    within ``2**-32`` of zero.

    Examples
    --------
    >>> _snapped(-(2.0**-32), 8.0), _snapped(-(2.0**-32), 2.0**-32)
    ((0.0, 8.0), (-2.3283064365386963e-10, 2.3283064365386963e-10))
    """
    tiny = 2.0**-auto_bounds.LOW_EXPONENT
    if lower == -tiny and upper > tiny:
        lower = 0.0
    if upper == tiny and lower < -tiny:
        upper = 0.0
    return lower, upper


def _selection_settings(settings: Settings, epsilon: float) -> Settings:
    """One selection's settings: pure Laplace noise, and with a privacy unit of ``k``
    rows, up to ``k`` values per unit (each its own key)."""
    own = auto_bounds.bounds_settings(settings, epsilon)
    c = own.contributions
    if c.unit is not None:
        own = dataclasses.replace(
            own, contributions=dataclasses.replace(c, groups=c.rows, rows_per_group=c.rows)
        )
    return own


def _select(
    frame: pd.DataFrame, column: Hashable, settings: Settings, delta: float
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Partition selection of one column's values: the kept values (sorted) and a record."""
    grouping = Grouping((column,), None, delta=delta)
    plan = Plan(settings, grouping)  # the selection alone: all of epsilon is its
    key = SELECTION
    plan.calibrate()
    noisy = plan.run(
        engine_input({}, {}, settings, grouping, frame), SELECTION_STATISTIC, (column,)
    )
    index = plan.released_index
    kept = () if index is None else tuple(index)
    record = {
        "epsilon": settings.epsilon,
        "delta": delta,
        "threshold": plan.threshold,
        "kept": len(kept),
        "noisy counts": dict(zip(map(str, kept), np.asarray(noisy[key]).tolist(), strict=False)),
    }
    return kept, record


def release_describe_auto(
    frame: pd.DataFrame,
    numeric_decls: Mapping[Hashable, NumericDeclaration],
    categorical_decls: Mapping[Hashable, CategoricalDeclaration],
    undeclared: Sequence[Hashable],
    settings: Settings,
    *,
    percentiles: Sequence[float] = (0.25, 0.5, 0.75),
    bins: int | None = None,
    method: str | None = None,
    grouping: Grouping | None = None,
    selection_delta: float | None = None,
    shares: bool | str = SHARES_DEFAULT,
    histogram: int | None = None,
    bounds_epsilon_share: float = AUTO_SHARE,
) -> pd.DataFrame:
    """``describe`` with what is not declared estimated privately first (see the module).

    Parameters
    ----------
    frame : DataFrame
        The data (and the privacy unit's column).
    numeric_decls : mapping label -> NumericDeclaration
        The declared numeric columns (kept as declared).
    categorical_decls : mapping label -> CategoricalDeclaration
        The declared categorical columns, booleans included (kept as declared).
    undeclared : sequence of labels
        The columns without declarations, in the frame's order: numeric ones get
        estimated bounds, text and categorical ones selected categories.
    settings : Settings
        The call's settings: its whole epsilon and delta.
    percentiles, bins, method, grouping, shares, histogram
        As in :func:`~pandas_dp.stats.describe.release_describe`; a ``grouping``
        must have declared keys (see the module). Only declared numeric columns can
        get shares (an estimated range declares no values).
    bounds_epsilon_share : float, default AUTO_SHARE
        The share of an estimated column's part of epsilon spent on its bounds or
        its categories, in (0, 1).
    selection_delta : float, optional
        With Laplace noise (whose ``settings.delta`` is 0): the call's delta, all of
        it for the category selections. ``None``: ``settings.delta`` is the call's
        delta (Gaussian noise: half of it for the selections).

    Returns
    -------
    DataFrame
        The describe table; ``attrs["dp"].details["auto"]`` records the bounds and
        categories released and what they cost (``declared`` holds them as
        declarations: ``bounds`` and ``categories`` by column).

    Raises
    ------
    ValueError
        Before any charge: see the module's refusals.
    BudgetExceededError
        Before any charge, if a budget cannot pay the whole call.
    """
    share = auto_bounds.check_share(bounds_epsilon_share)
    auto = auto_columns(dict(frame.items()), undeclared)
    total_delta = settings.delta if selection_delta is None else selection_delta
    check_auto(auto, settings, grouping, total_delta)
    k = len(numeric_decls) + len(categorical_decls) + len(auto.numeric) + len(auto.text)
    if k == 0:
        raise ValueError(
            f"describe(bounds='auto') found no column it can describe: columns "
            f"{[str(c) for c in undeclared]} are neither numeric, boolean, text nor "
            f"categorical"
        )
    per_column = settings.epsilon / k
    eps_bounds = share * per_column * len(auto.numeric)
    eps_select = share * per_column
    spent = eps_bounds + eps_select * len(auto.text)
    delta_select = 0.0
    if auto.text:
        delta_select = total_delta / 2 if selection_delta is None else total_delta
    rest_delta = settings.delta - delta_select if selection_delta is None else 0.0
    rest = dataclasses.replace(settings, epsilon=settings.epsilon - spent, delta=rest_delta)
    method = method or "exponential"
    # the describe that follows, checked now on placeholders of the same columns (its
    # checks read the columns and the budget split, never the bounds' values)
    placeholder_num = {
        **numeric_decls,
        **{c: NumericDeclaration(c, 0.0, 1.0) for c in auto.numeric},
    }
    placeholder_cat = {
        **categorical_decls,
        **{c: CategoricalDeclaration(c, ("?",), True, "auto") for c in auto.text},
    }
    numeric_series = {c: frame[c] for c in placeholder_num}
    check_describe(
        numeric_series,
        placeholder_num,
        placeholder_cat,
        rest,
        percentiles=percentiles,
        bins=bins,
        method=method,
        grouping=grouping,
        shares=shares,
        histogram=histogram,
    )
    fewer = {c: d for c, d in placeholder_cat.items() if c not in auto.text}
    if auto.text and (placeholder_num or fewer):  # no category of a column may pass
        check_describe(
            numeric_series,
            placeholder_num,
            fewer,
            rest,
            percentiles=percentiles,
            bins=bins,
            method=method,
            grouping=grouping,
            shares=shares,
            histogram=histogram,
        )
    check_budgets(settings, spent, delta_select + rest_delta)  # the whole call, first

    rs = auto_bounds.shared_randomness(settings)
    first = dataclasses.replace(settings, random_state=rs)
    details: dict[str, Any] = {"bounds": "auto (estimated privately, REFERENCE.md §14, §10)"}
    estimated: dict[Hashable, NumericDeclaration] = {}
    if auto.numeric:
        found, record = auto_bounds.private_bounds(
            {c: frame[c] for c in auto.numeric},
            auto_bounds.bounds_settings(first, eps_bounds),
            frame=frame,
            zero=auto_bounds.INCLUDE_ZERO,
        )
        for c, (lo, hi) in found.items():
            estimated[c] = NumericDeclaration(c, *_snapped(lo, hi), True, "auto")
        details["bounds_release"] = {
            "epsilon": record.epsilon,
            "columns": record.details["columns"],
            "fallback": auto_bounds.FALLBACK,
        }
    selected: dict[Hashable, CategoricalDeclaration] = {}
    empty: list[Hashable] = []
    selections: dict[str, Any] = {}
    for c in auto.text:
        own = _selection_settings(first, eps_select)
        kept, record_c = _select(frame, c, own, delta_select / len(auto.text))
        selections[str(c)] = record_c
        if kept:
            selected[c] = CategoricalDeclaration(c, kept, True, "auto")
        else:
            empty.append(c)
    if selections:
        details["categories_release"] = selections
    order = list(frame.columns)
    every_num: dict[Hashable, NumericDeclaration] = {**numeric_decls, **estimated}
    every_cat: dict[Hashable, CategoricalDeclaration] = {**categorical_decls, **selected}
    all_num: dict[Hashable, NumericDeclaration] = {c: every_num[c] for c in order if c in every_num}
    all_cat: dict[Hashable, CategoricalDeclaration] = {
        c: every_cat[c] for c in order if c in every_cat
    }
    details.update(
        {
            "auto_share": share,
            "epsilon_total": settings.epsilon,
            "delta_total": delta_select + rest_delta,
            "declared": {
                "bounds": {c: (d.lower, d.upper) for c, d in estimated.items()},
                "categories": {c: list(d.categories) for c, d in selected.items()},
            },
            "no category passed the selection": [str(c) for c in empty],
            "not described (neither numeric, boolean nor text)": [str(c) for c in auto.other],
        }
    )
    describe_settings = dataclasses.replace(rest, random_state=rs)
    if not all_num and not all_cat:  # every column was text and nothing passed
        return _nothing(frame, empty, describe_settings, details)
    table = release_describe(
        {c: frame[c] for c in all_num},
        all_num,
        {c: frame[c] for c in all_cat},
        all_cat,
        describe_settings,
        undeclared=[*auto.other, *empty],
        frame=frame,
        percentiles=percentiles,
        bins=bins,
        method=method,
        grouping=grouping,
        shares=shares,
        histogram=histogram,
    )
    meta = table.attrs["dp"]
    return attach(table, dataclasses.replace(meta, details={**meta.details, "auto": details}))


def _nothing(
    frame: pd.DataFrame, empty: list[Hashable], settings: Settings, details: dict[str, Any]
) -> pd.DataFrame:
    """The table when no column is left to describe: no rows, the columns named; the
    describe's own epsilon is not spent."""
    del frame
    table = pd.DataFrame({c: pd.Series(dtype=np.float64) for c in empty})
    meta = DPMetadata(
        statistic="describe",
        columns=tuple(empty),
        mechanism=settings.mechanism,
        epsilon=0.0,
        delta=0.0,
        neighbouring=settings.neighbouring,
        n=None,
        sensitivity=pd.Series(dtype=np.float64),
        scale=pd.Series(dtype=np.float64),
        input_bounds={},
        output_bounds={},
        bounding=settings.bounding,
        secure=settings.source.secure,
        value=np.zeros((0, len(empty))),
        details={"auto": details, "unspent epsilon": settings.epsilon},
        _interval=_no_entries,
        _index=[],
    )
    return attach(table, meta)


def _no_entries(alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The intervals of a release with no entries: none."""
    del alpha
    return np.zeros(0), np.zeros(0)
