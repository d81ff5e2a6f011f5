"""The grouping and privacy unit of a release, as fields of their own.

A release's metadata record (:class:`~pandas_dp.result.values.DPMetadata`) and its ledger
row in every budget charged name the key columns, whether the keys were declared or
chosen by partition selection, how many there are, and the privacy unit with its
contribution bounds. :func:`grouping_facts` builds them, from public facts only.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pandas_dp.request.grouping import Grouping
    from pandas_dp.request.settings import Contributions

__all__ = ["grouping_facts"]


def grouping_facts(
    contributions: Contributions, grouping: Grouping | None, released: int | None = None
) -> dict[str, Any]:
    """The ``groups``, ``keys``, ``n_keys``, ``privacy_unit`` and ``contribution_bounds``.

    Parameters
    ----------
    contributions : Contributions
        The privacy unit and its bounds, as the call declared them.
    grouping : Grouping or None
        The group-by of the release; ``None`` when not grouped.
    released : int, optional
        Private keys: how many keys partition selection released. ``None`` before
        the selection (at the charge, when it is not known yet).

    Returns
    -------
    dict
        ``groups``: the key columns (``()`` when not grouped); ``keys``:
        ``"public"``, ``"private"`` or ``None``; ``n_keys``: the number of declared
        keys (public; an ``other`` group aside), ``released`` (private) or ``None``;
        ``privacy_unit``: the unit's column as text or ``None``;
        ``contribution_bounds``: ``{"max_rows_per_unit", "max_groups_per_unit",
        "max_rows_per_group"}`` (the last two ``None`` when not grouped) when a unit
        is declared or the release is grouped, else ``None``.

    Examples
    --------
    >>> from pandas_dp.request.settings import Contributions
    >>> grouping_facts(Contributions("pid", rows=3), None)["contribution_bounds"]
    {'max_rows_per_unit': 3, 'max_groups_per_unit': None, 'max_rows_per_group': None}
    >>> grouping_facts(Contributions(), None)["keys"] is None
    True
    """
    c = contributions
    groups: tuple[Hashable, ...] = ()
    keys: str | None = None
    n_keys: int | None = None
    if grouping is not None:
        groups = tuple(grouping.by)
        if grouping.keys is None:
            keys, n_keys = "private", released
        else:
            keys, n_keys = "public", len(grouping.keys)
    bounds: dict[str, int | None] | None = None
    if c.unit is not None or grouping is not None:
        bounds = {
            "max_rows_per_unit": c.rows,
            "max_groups_per_unit": c.groups if grouping is not None else None,
            "max_rows_per_group": c.rows_per_group if grouping is not None else None,
        }
    return {
        "groups": groups,
        "keys": keys,
        "n_keys": n_keys,
        "privacy_unit": None if c.unit is None else str(c.unit),
        "contribution_bounds": bounds,
    }
