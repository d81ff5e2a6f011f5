"""``describe``: a private counterpart of ``df.describe()``.

For each numeric column: a noisy non-missing count, mean and standard deviation;
for each categorical column: its category proportions. The total epsilon is
split equally across these releases (sequential composition), charged to the
budget at once -- so a ``describe`` that would overspend spends nothing -- and
the split is reported in the metadata and in the ledger row.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from pandas_dp import histograms as hist
from pandas_dp import statistics as st
from pandas_dp.budget import PrivacyBudget, active_budget
from pandas_dp.declarations import CategoricalDeclaration, NumericDeclaration
from pandas_dp.result import DPMetadata

__all__ = ["release_describe"]


class _Prepaid(PrivacyBudget):
    """The budget of a part of a release whose total was charged already."""

    def __init__(self) -> None:
        super().__init__(epsilon=1.0)

    def charge(self, epsilon: float, delta: float = 0.0, **details: Any) -> None:
        """Nothing to charge: the whole release was paid for up front."""


def release_describe(
    numeric: Mapping[Hashable, pd.Series],
    numeric_decls: Mapping[Hashable, NumericDeclaration],
    categorical: Mapping[Hashable, pd.Series],
    categorical_decls: Mapping[Hashable, CategoricalDeclaration],
    n: int,
    settings: st.Settings,
) -> pd.DataFrame:
    """Release count, mean and std of numeric columns and proportions of categorical ones."""
    parts = [(c, s) for c in numeric for s in ("count", "mean", "std")]
    parts += [(c, "proportions") for c in categorical]
    if not parts:
        raise ValueError("describe needs at least one declared column")
    share = settings.epsilon / len(parts)
    delta_share = settings.delta / len(parts)
    split = {f"{c}: {s}": share for c, s in parts}
    budget = settings.budget if settings.budget is not None else active_budget()
    if budget is not None:
        budget.charge(
            settings.epsilon,
            settings.delta,
            statistic="describe",
            columns=(*numeric, *categorical),
            mechanism=settings.mechanism,
            split=split,
        )
    part = st.Settings(
        share,
        delta_share,
        settings.mechanism,
        settings.bounding,
        settings.neighbouring,
        settings.out_of_bounds,
        settings.random_state,
        _Prepaid(),
    )
    if settings.random_state is not None:  # keep one stream for the whole call
        object.__setattr__(part, "source", settings.source)

    rows: dict[Hashable, dict[str, float]] = {}
    releases: dict[str, DPMetadata] = {}
    for c in numeric:
        one = {c: numeric[c]}
        count = st.release_count(one, n, part, scalar=True)
        mean = st.release_moment("mean", one, numeric_decls, n, part, scalar=True)
        std = (
            st.release_moment(
                "var",
                one,
                numeric_decls,
                n,
                part,
                scalar=True,
                root=True,
                method=st.resolve_method("auto", part),
            )
            if n >= (3 if settings.neighbouring == "add_remove" else 2)
            else None
        )
        assert isinstance(count, int) and isinstance(mean, float)
        assert std is None or isinstance(std, float)
        rows[c] = {
            "count": float(count),
            "mean": float(mean),
            "std": float(std) if std is not None else np.nan,
        }
        releases[f"{c}: count"] = count.attrs["dp"]
        releases[f"{c}: mean"] = mean.attrs["dp"]
        if std is not None:
            releases[f"{c}: std"] = std.attrs["dp"]
    for c in categorical:
        props = hist.release_proportions(categorical[c], categorical_decls[c], n, part)
        rows[c] = {f"share {k}": float(v) for k, v in props.items()}
        releases[f"{c}: proportions"] = props.attrs["dp"]

    order = ["count", "mean", "std"] if numeric else []
    for c in categorical:
        order += [k for k in rows[c] if k not in order]
    frame = pd.DataFrame(rows).reindex(order)
    frame.attrs["dp"] = DPMetadata(
        statistic="describe",
        columns=(*numeric, *categorical),
        mechanism=settings.mechanism,
        epsilon=settings.epsilon,
        delta=settings.delta,
        neighbouring=settings.neighbouring,
        n=n,
        sensitivity="per release, see details['releases']",
        scale="per release, see details['releases']",
        input_bounds={c: (d.lower, d.upper) for c, d in numeric_decls.items()},
        output_bounds="per release",
        bounding=settings.bounding,
        secure=settings.source.secure,
        value=frame.to_numpy(),
        details={"budget_split": split, "releases": releases},
    )
    return frame
