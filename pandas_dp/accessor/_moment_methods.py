"""The moment methods of every accessor, made from the catalogue.

``sum``, ``mean``, ``var``, ``std`` and ``sem`` take the same keywords on a frame, a
Series and a group-by (each accessor has its own set, written once below), and
differ only in the statistic they release and whether they take ``ddof``. So they
are not written out per accessor: :func:`moment_methods` makes each as a real
Python function -- its own signature, so Python's messages and ``help()`` read as
for a written method -- from the catalogue entry
(:data:`pandas_dp.stats.catalogue.MOMENTS`), and the class decorator installs every
entry its accessor offers. A method calls the accessor's ``_release_moment`` with
its arguments; the shared parameter text is stamped in afterwards
(:func:`~pandas_dp.accessor._docs.stamp_docs`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

from pandas_dp.stats.catalogue import MOMENTS, MomentStatistic

__all__ = ["KEYWORDS", "moment_methods"]

T = TypeVar("T", bound=type)

_PRIVACY = ("mechanism", "bounding", "neighbouring", "out_of_bounds", "random_state", "budget")
_UNIT = ("privacy_unit", "max_rows_per_unit")
_GROUPS = ("max_groups_per_unit", "max_rows_per_group")
_ALL_PRIVACY = (*_PRIVACY, *_UNIT, *_GROUPS)
#: pandas' own keywords, where a statistic takes them (its catalogue entry says).
_PANDAS = ("numeric_only", "min_count")

#: Per accessor: the positional parameters, then the keyword-only ones (``ddof`` and
#: ``method`` are placed where the accessor takes them, for statistics that have them).
KEYWORDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "frame": (
        ("columns", "ddof"),
        ("epsilon", "skipna", *_PANDAS, "delta", "bounds", "schema", "method", *_PRIVACY, *_UNIT),
    ),
    "series": (
        ("ddof",),
        ("epsilon", "skipna", *_PANDAS, "delta", "bounds", "schema", "method", *_PRIVACY),
    ),
    "groupby": (
        ("columns",),
        ("epsilon", "skipna", "ddof", *_PANDAS, "delta", "bounds", "schema", *_ALL_PRIVACY),
    ),
}

#: Each parameter's default (``epsilon`` has none) and annotation.
_DEFAULTS: dict[str, tuple[Any, str]] = {
    "columns": (None, "Columns"),
    "ddof": (1, "int"),
    "numeric_only": (False, "bool"),
    "min_count": (0, "int"),
    "skipna": (True, "bool"),
    "delta": (0.0, "float"),
    "bounds": (None, "Any"),
    "schema": (None, "Any"),
    "method": ("auto", "str"),
    "mechanism": ("laplace", "str"),
    "bounding": ("bit", "str"),
    "neighbouring": ("add_remove", "str"),
    "out_of_bounds": ("clip", "str"),
    "random_state": (None, "int | np.random.Generator | None"),
    "budget": (None, "PrivacyBudget | None"),
    "privacy_unit": (None, "Hashable | None"),
    "max_rows_per_unit": (None, "int | None"),
    "max_groups_per_unit": (None, "int | None"),
    "max_rows_per_group": (None, "int | None"),
}

_RETURNS = {
    "frame": "DPFloat | DPInt | pd.Series",
    "series": "DPFloat",
    "groupby": "pd.Series | pd.DataFrame",
}

#: How each accessor's call reads in pandas, and the example data and call.
_CALL = {"frame": "df[columns]", "series": "s", "groupby": "df.groupby(by)[columns]"}
_EXAMPLE = {
    "frame": ('df.dp.{name}("x", ', "lo <= r <= hi"),
    "series": ('df["x"].dp.{name}(', "lo <= r <= hi"),
    "groupby": (
        'df.dp.groupby("g", keys=["a", "b"]).{name}("x", ',
        "bool(((lo <= r) & (r <= hi)).all())",
    ),
}


#: What every moment release does, per accessor.
_NOTES = {
    "frame": "Values outside the declared bounds are clamped to them (``out_of_bounds``).\n"
    "Several columns share the budget equally; each column's share is in\n"
    '``attrs["dp"].details``.',
    "series": "Values outside the declared bounds are clamped to them (``out_of_bounds``).",
    "groupby": "One value per declared key (a key absent from the data gets its noise\n"
    "like any other); values outside the declared bounds are clamped to them.",
}


def _wanted(kind: str, entry: MomentStatistic) -> tuple[list[str], list[str]]:
    positional, keywords = KEYWORDS[kind]
    drop = {k for k in ("min_count",) if k not in entry.keywords}
    if not entry.takes_ddof:
        drop.add("ddof")
    if not entry.has_method:
        drop.add("method")
    return [p for p in positional if p not in drop], [k for k in keywords if k not in drop]


def _doc(kind: str, entry: MomentStatistic) -> str:
    call, check = _EXAMPLE[kind]
    summary = entry.summary.format(call=_CALL[kind])
    return f"""{summary}

{_NOTES[kind]}

Examples
--------
>>> import pandas as pd, pandas_dp
>>> df = pd.DataFrame({{"x": [0.1, 0.4, 0.5, 0.9, 0.3, 0.7], "g": ["a", "b"] * 3}})
>>> r = {call.format(name=entry.name)}epsilon=1.0, bounds=(0, 1), random_state=0)
>>> lo, hi = r.attrs["dp"].output_bounds
>>> {check}
True
"""


def _method(kind: str, entry: MomentStatistic, module: str) -> Callable[..., Any]:
    """The method releasing ``entry`` on accessor ``kind``, compiled from source in the
    globals of the accessor's ``module`` (so doctest finds its examples there)."""
    positional, keywords = _wanted(kind, entry)

    def param(p: str) -> str:
        return p if p == "epsilon" else f"{p}={_DEFAULTS[p][0]!r}"

    head = ", ".join(["self", *map(param, positional), "*", *map(param, keywords)])
    source = (
        f"def {entry.name}({head}):\n    return self._release_moment({entry.name!r}, locals())\n"
    )
    namespace: dict[str, Any] = {}
    code = compile(source, f"<pandas_dp {kind}.{entry.name}>", "exec")
    exec(code, vars(sys.modules[module]), namespace)
    fn: Callable[..., Any] = namespace[entry.name]
    fn.__annotations__ = {
        **{p: _DEFAULTS[p][1] for p in positional},
        "epsilon": "float",
        **{k: _DEFAULTS[k][1] for k in keywords if k != "epsilon"},
        "return": _RETURNS[kind],
    }
    fn.__doc__ = _doc(kind, entry)
    return fn


def moment_methods(kind: str) -> Callable[[T], T]:
    """Class decorator: install every catalogue moment statistic accessor ``kind``
    offers (``"frame"``, ``"series"`` or ``"groupby"``) as a method.

    Parameters
    ----------
    kind : str
        The accessor.

    Returns
    -------
    callable
        The decorator; the class must define ``_release_moment(name, arguments)``.
    """

    def install(cls: T) -> T:
        for entry in MOMENTS.values():
            if kind in entry.accessors:
                fn = _method(kind, entry, cls.__module__)
                fn.__qualname__ = f"{cls.__name__}.{entry.name}"
                setattr(cls, entry.name, fn)
        return cls

    return install
