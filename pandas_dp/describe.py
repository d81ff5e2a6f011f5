"""``describe``: a private counterpart of ``df.describe()``, as one plan.

For each declared numeric column one (count, centred sum, centred squares)
triple is measured, and the count, mean and standard deviation are all derived
from it; for each declared categorical column one histogram of its categories is
measured, and the shares are its noisy counts over their noisy total. The whole
plan is charged once, so a ``describe`` that would overspend spends nothing; the
split is in the metadata and in the ledger row.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from pandas_dp import constraints
from pandas_dp import statistics as st
from pandas_dp.declarations import CategoricalDeclaration, NumericDeclaration
from pandas_dp.histograms import _exact_buckets, _share_bounds
from pandas_dp.plan import Settings, engine_input

__all__ = ["release_describe"]

_ROWS = ("count", "mean", "std")


def release_describe(
    numeric: Mapping[Hashable, pd.Series],
    numeric_decls: Mapping[Hashable, NumericDeclaration],
    categorical: Mapping[Hashable, pd.Series],
    categorical_decls: Mapping[Hashable, CategoricalDeclaration],
    settings: Settings,
    *,
    undeclared: Sequence[Hashable] = (),
    frame: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Release count, mean and std of numeric columns and shares of categorical ones."""
    if not numeric and not categorical:
        raise ValueError(
            "describe needs at least one declared column: declare bounds (numeric) or "
            "categories (categorical) with bounds=, categories= or a schema"
        )
    plan, entries = st.plan_moments(
        _ROWS, numeric_decls, settings, "moments", weights=st.MOMENT_WEIGHTS["describe"]
    )
    cat_keys = {c: plan.categories(c, len(d.categories)) for c, d in categorical_decls.items()}
    plan.calibrate()
    read = engine_input({**numeric, **categorical}, numeric_decls, settings, None, frame)

    def data() -> dict[Any, Any]:
        made = read()
        for c, d in categorical_decls.items():
            made[("categories", c)] = partial(
                _exact_buckets, categorical[c], d, dropna=True, other=None
            )
        return made

    columns = (*numeric, *categorical)
    noisy = plan.run(data, "describe", columns)

    clamp = settings.bounding != "none"
    rows: dict[Hashable, dict[str, float]] = {}
    fns: dict[tuple[str, Hashable], Callable[[float], tuple[float, float]]] = {}
    for c in numeric:
        rows[c] = {}
        for stat in _ROWS:
            value, fn, _ = st._estimate(entries[(c, stat)], plan, noisy, ddof=1, clamp=clamp)
            rows[c][stat] = value
            fns[(stat, c)] = fn
    for c, d in categorical_decls.items():
        rows[c] = {}
        key = cat_keys[c]
        counts = noisy[key]
        total = max(float(np.clip(counts, 0.0, None).sum()), 1.0)
        shares = constraints.project_simplex(np.clip(counts, 0.0, None) / total)
        noise = plan.measurements[key].noise
        assert noise is not None
        for i, label in enumerate(d.categories):
            name = f"share {label}"
            rows[c][name] = float(shares[i])
            fns[(name, c)] = partial(_share_entry, noise, counts, i)

    order: list[str] = list(_ROWS) if numeric else []
    for c in categorical:
        order += [k for k in rows[c] if k not in order]
    frame = pd.DataFrame(rows).reindex(order)
    index = [(r, c) for r, c in fns]
    frame.attrs["dp"] = st.build_metadata(
        "describe",
        list(columns),
        plan,
        frame.to_numpy(),
        input_bounds={c: (d.lower, d.upper) for c, d in numeric_decls.items()},
        output_bounds={c: (d.lower, d.upper) for c, d in numeric_decls.items()},
        interval=partial(st._stacked, list(fns.values())),
        index=index,
        details={
            "derived": "count, mean and std of a column come from one measured "
            "(count, centred sum, centred squares); shares from one histogram",
            "undeclared columns (not described)": [str(c) for c in undeclared],
        },
    )
    return frame


def _share_entry(noise: Any, counts: np.ndarray, i: int, alpha: float) -> tuple[float, float]:
    lo, hi = _share_bounds(noise, counts, alpha)
    return float(lo[i]), float(hi[i])
