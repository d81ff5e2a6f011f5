"""Every accessor method, made from its catalogue entry.

A method of ``df.dp``, ``s.dp`` or ``df.dp.groupby(...)`` is a catalogue entry -- a
moment statistic (:data:`~pandas_dp.stats.catalogue.MOMENTS`) or another method
(:data:`~pandas_dp.stats.catalogue.METHODS`) -- read on one accessor: the entry's
own parameters, then the privacy keywords every release of that accessor takes.
Those keyword lists and every parameter's default are written once, below.
:func:`catalogue_methods` makes each method as a real Python function, compiled
from source with its own signature -- so Python's messages, ``help()``, doctest
and :func:`inspect.signature` read as for a written method -- whose body hands its
arguments to the accessor: ``return self._like_pandas(name, self._release_<family>,
locals())``, which releases and gives the result pandas' value dtypes
(:func:`~pandas_dp.result.dtypes.like_pandas`).

Its docstring is the accessor's own text for it (``_method_docs``, a class attribute of
the accessor or of the mixin whose ``_release_<family>`` releases it) or, for a
moment statistic, is made from the entry's summary; the shared parameter text is
stamped in afterwards (:func:`~pandas_dp.accessor._docs.stamp_docs`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pandas_dp.stats.auto_bands import DEFAULT_SHARE
from pandas_dp.stats.catalogue import METHODS, MOMENTS, AccessorMethod, MomentStatistic
from pandas_dp.stats.describe import DESCRIBE_METHOD
from pandas_dp.stats.describe_shares import SHARES_DEFAULT
from pandas_dp.stats.histograms import DEFAULT_METHOD

__all__ = ["KEYWORDS", "TAIL", "catalogue_methods"]

T = TypeVar("T", bound=type)

_PRIVACY = ("mechanism", "bounding", "neighbouring", "out_of_bounds", "random_state", "budget")
_UNIT = ("privacy_unit", "max_rows_per_unit")
_AXIS = ("agg", "count", "mean", "median", "quantile", "sem", "skew", "std", "sum", "var")
_GROUPS = ("max_groups_per_unit", "max_rows_per_group")

#: The privacy keywords each accessor adds after a method's own (a Series holds no
#: unit column; a group-by also bounds a unit's groups).
TAIL: dict[str, tuple[str, ...]] = {
    "frame": (*_PRIVACY, *_UNIT),
    "series": _PRIVACY,
    "groupby": (*_PRIVACY, *_UNIT, *_GROUPS),
}

#: pandas' own keywords, where a moment statistic takes them (its entry says).
_PANDAS = ("numeric_only", "min_count")
_MOMENT = ("epsilon", "skipna", *_PANDAS, "delta", "bounds", "bounds_epsilon_share", "schema")

#: The moments per accessor: the positional parameters, then the keyword-only ones
#: (``ddof`` and ``method`` where the accessor takes them, for the statistics that
#: have them).
KEYWORDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "frame": (("columns", "ddof"), (*_MOMENT, "method", *TAIL["frame"])),
    "series": (("ddof",), (*_MOMENT, "method", *TAIL["series"])),
    "groupby": (("columns",), ("epsilon", "skipna", "ddof", *_MOMENT[2:], *TAIL["groupby"])),
}

_REQUIRED = object()

#: pandas keywords read with pandas' meaning or refused with the reason
#: (:mod:`~pandas_dp.accessor._pandas_keywords`), ``accessor.name`` -> keywords: in the
#: signature with the default ``None`` (pandas' default meaning), read only when given.
PANDAS_KEYWORDS: dict[str, tuple[str, ...]] = {
    **{f"frame.{m}": ("axis",) for m in _AXIS},
    **{f"series.{m}": ("axis",) for m in _AXIS if m not in ("count", "quantile")},
    "frame.median": ("axis", "numeric_only"),
    "frame.quantile": ("axis", "numeric_only"),
    "series.median": ("axis", "numeric_only"),
    "frame.cov": ("min_periods", "numeric_only"),
    "frame.corr": ("min_periods", "numeric_only"),
    **{f"{kind}.describe": ("include", "exclude") for kind in ("frame", "series", "groupby")},
    "frame.value_counts": ("subset",),
    "series.value_counts": ("bins",),
    "groupby.median": ("numeric_only",),
    "groupby.quantile": ("numeric_only",),
    "groupby.value_counts": ("subset", "bins"),
}
#: Further conditions on which a call reads its pandas keywords: a frame's
#: ``value_counts()`` with no column counts every column, like pandas'.
TRIGGERS: dict[str, tuple[str, ...]] = {"frame.value_counts": ("column is None",)}

#: pandas keywords with no private meaning (``accessor.name`` or ``name``): in the
#: signature with the default ``None``, so that pandas' call reads; any other value
#: is refused first thing, before the charge (:mod:`~pandas_dp.accessor._refused`).
REFUSED: dict[str, tuple[str, ...]] = {
    "quantile": ("interpolation",),
    **{f"groupby.{m}": ("engine", "engine_kwargs") for m in ("sum", "mean", "var", "std", "agg")},
}

#: The defaults of the parameters that take a name (``name.parameter``: one method's).
_STRINGS = {
    "via": "counts",
    "psd": "clip",
    "method": "auto",
    "value_counts.method": DEFAULT_METHOD,
    "proportions.method": DEFAULT_METHOD,
    "quantile.method": "exponential",
    "median.method": "exponential",
    "describe.method": DESCRIBE_METHOD,
    "mechanism": "laplace",
    "bounding": "bit",
    "neighbouring": "add_remove",
    "out_of_bounds": "clip",
}

#: Each parameter's default and annotation; ``accessor.parameter``,
#: ``name.parameter`` or ``accessor.name.parameter`` where one accessor's or one
#: method's differs.
_PARAMETERS: dict[str, tuple[Any, str]] = {
    "epsilon": (_REQUIRED, "float"),
    "columns": (None, "Columns"),
    "column": (_REQUIRED, "Hashable"),
    "groupby.column": (None, "Hashable"),
    "frame.value_counts.column": (None, "Hashable | Sequence[Hashable] | None"),
    "axis": (None, "int | str | None"),
    "min_periods": (None, "int | None"),
    **dict.fromkeys(("include", "exclude", "subset"), (None, "Any")),
    **{f"{k}.numeric_only": (None, "bool | None") for k in ("median", "quantile", "cov", "corr")},
    "queries": (_REQUIRED, "Mapping[Hashable, Any]"),
    "func": (_REQUIRED, "Any"),
    "groupby.agg.func": (None, "Mapping[Hashable, str | Sequence[str]] | None"),
    "frame.agg.func": (None, "Any"),
    "named": (_REQUIRED, "Any"),  # pandas' named aggregations, **named
    **dict.fromkeys(("interpolation", "engine"), (None, "str | None")),
    "engine_kwargs": (None, "dict[str, Any] | None"),
    "q": (0.5, "float | Sequence[float]"),
    "ddof": (1, "int"),
    "min_count": (0, "int"),
    "delta": (0.0, "float"),
    **dict.fromkeys(("percentiles", "other", "bounds", "categories", "schema"), (None, "Any")),
    **dict.fromkeys(("bins", *_UNIT[1:], *_GROUPS), (None, "int | None")),
    **dict.fromkeys(("numeric_only", "normalize", "ascending"), (False, "bool")),
    **dict.fromkeys(("skipna", "sort", "dropna", "interval"), (True, "bool")),
    "proportions.sort": (False, "bool"),
    **{name: (value, "str") for name, value in _STRINGS.items()},
    "random_state": (None, "int | np.random.Generator | None"),
    "budget": (None, "PrivacyBudget | None"),
    "privacy_unit": (None, "Hashable | None"),
    "shares": (SHARES_DEFAULT, "bool | str"),
    "histogram": (None, "int | None"),
    "bounds_epsilon_share": (DEFAULT_SHARE, "float"),
}

#: What a method returns: ``accessor.name``, else ``accessor.family``, else ``accessor``.
_RETURNS = {
    "frame": "DPFloat | DPInt | pd.Series",
    "frame.count": "pd.Series",
    "frame.len": "DPInt",
    "frame.quantile": "DPFloat | pd.Series | pd.DataFrame",
    "frame.median": "DPFloat | pd.Series",
    "frame.matrix": "pd.DataFrame",
    "frame.describe": "pd.DataFrame",
    "frame.agg": "pd.Series | pd.DataFrame",
    "series": "DPFloat",
    "series.count": "DPInt",
    "series.len": "DPInt",
    "series.quantile": "DPFloat | pd.Series",
    "series.median": "DPFloat",
    "series.describe": "pd.Series",
    "series.agg": "DPFloat | DPInt | pd.Series",
    "groupby": "pd.Series | pd.DataFrame",
    "groupby.len": "pd.Series",
    "groupby.describe": "pd.DataFrame",
    "groupby.agg": "pd.DataFrame | pd.Series",
    **{f"{kind}.{family}": "pd.Series" for kind in TAIL for family in ("categories", "counts")},
}


def _lookup(table: Mapping[str, Any], *keys: str) -> Any:
    """The first of ``keys`` in ``table`` (the most specific comes first)."""
    return next(table[key] for key in keys if key in table)


def _parameter(kind: str, name: str, param: str) -> tuple[Any, str]:
    return _lookup(  # type: ignore[no-any-return]
        _PARAMETERS, f"{kind}.{name}.{param}", f"{kind}.{param}", f"{name}.{param}", param
    )


Entry = MomentStatistic | AccessorMethod


def _layout(kind: str, entry: Entry) -> tuple[list[str], list[str]]:
    """The method's positional and keyword-only parameters on accessor ``kind``."""
    if isinstance(entry, AccessorMethod):
        own, keywords = entry.takes(kind)
        tail = [k for k in TAIL[kind] if entry.clamps or k != "out_of_bounds"]
        return own, [*keywords, *tail]
    positional, moment_keywords = KEYWORDS[kind]
    drop = {k for k in ("min_count",) if k not in entry.keywords}
    if not entry.takes_ddof:
        drop.add("ddof")
    if not entry.has_method:
        drop.add("method")
    return [p for p in positional if p not in drop], [k for k in moment_keywords if k not in drop]


#: How each accessor's call reads in pandas, and a moment's example call and check.
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


def _moment_doc(kind: str, entry: MomentStatistic) -> str:
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


def _method(kind: str, entry: Entry, module: str, doc: str) -> Callable[..., Any]:
    """The method releasing ``entry`` on accessor ``kind``, compiled from source in
    the globals of the accessor's ``module`` (so doctest finds its examples there)."""
    positional, keywords = _layout(kind, entry)
    refused = REFUSED.get(f"{kind}.{entry.name}", REFUSED.get(entry.name, ()))
    pandas_kw = [k for k in PANDAS_KEYWORDS.get(f"{kind}.{entry.name}", ()) if k not in keywords]
    keywords = [*keywords, *refused, *pandas_kw]
    defaults = {p: _parameter(kind, entry.name, p) for p in (*positional, *keywords)}

    def param(p: str) -> str:
        default = defaults[p][0]
        return p if default is _REQUIRED else f"{p}={default!r}"

    family = entry.family if isinstance(entry, AccessorMethod) else "moment"
    head = ", ".join(["self", *map(param, positional), "*", *map(param, keywords)])
    if isinstance(entry, AccessorMethod) and kind in entry.named:  # agg(m=("x", "mean"))
        head += ", **named"
        defaults["named"] = _PARAMETERS["named"]
    # the release, then its value dtypes like pandas' (the accessor's ``_like_pandas``)
    call = f"self._like_pandas({entry.name!r}, self._release_{family}, locals())"
    check = ""
    if refused:  # (imported only to raise: a call that passes none pays nothing)
        given = ", ".join(f"{p!r}: {p}" for p in refused)
        check = (
            f"    if {' or '.join(f'{p} is not None' for p in refused)}:\n"
            f"        from pandas_dp.accessor._refused import refuse\n"
            f"        refuse({entry.name!r}, {{{given}}})\n"
        )
    triggers = [f"{p} is not None" for p in pandas_kw]
    triggers += TRIGGERS.get(f"{kind}.{entry.name}", ())
    if triggers:  # pandas' keywords read, or refused, first (imported only then)
        pandas_call = call.replace(
            "locals())", f"translate(self, {kind!r}, {entry.name!r}, locals()))"
        )
        check += (
            f"    if {' or '.join(triggers)}:\n"
            f"        from pandas_dp.accessor._pandas_keywords import translate\n"
            f"        return {pandas_call}\n"
        )
    source = f"def {entry.name}({head}):\n{check}    return {call}\n"
    namespace: dict[str, Any] = {}
    code = compile(source, f"<pandas_dp {kind}.{entry.name}>", "exec")
    exec(code, vars(sys.modules[module]), namespace)
    fn: Callable[..., Any] = namespace[entry.name]
    returns = _lookup(_RETURNS, f"{kind}.{entry.name}", f"{kind}.{family}", kind)
    fn.__annotations__ = {**{p: d[1] for p, d in defaults.items()}, "return": returns}
    fn.__doc__ = doc
    return fn


def catalogue_methods(kind: str) -> Callable[[T], T]:
    """Class decorator: install every catalogue entry accessor ``kind`` offers
    (``"frame"``, ``"series"`` or ``"groupby"``) as a method.

    Parameters
    ----------
    kind : str
        The accessor.

    Returns
    -------
    callable
        The decorator. The class (or a mixin of it) defines ``_release_<family>(name,
        arguments)`` for each family it offers, and ``_method_docs``, each method's
        docstring (a moment's is made from its entry when the class gives none).
    """

    def install(cls: T) -> T:
        docs: dict[str, str] = {}
        for base in reversed(cls.__mro__):
            docs.update(vars(base).get("_method_docs", {}))
        entries: list[Entry] = [*MOMENTS.values(), *METHODS.values()]
        for entry in entries:
            if kind not in entry.accessors:
                continue
            doc = docs.get(entry.name)
            if doc is None:
                if not isinstance(entry, MomentStatistic):
                    raise TypeError(f"{cls.__name__} has no _method_docs[{entry.name!r}]")
                doc = _moment_doc(kind, entry)
            fn = _method(kind, entry, cls.__module__, doc)
            fn.__qualname__ = f"{cls.__name__}.{entry.name}"
            setattr(cls, entry.name, fn)
        return cls

    return install
