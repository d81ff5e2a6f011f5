"""Return values: pandas-native results carrying their noise metadata.

Every release returns what pandas itself would -- a scalar for one column, a
:class:`pandas.Series` indexed by column for several -- with
``result.attrs["dp"]``, a frozen :class:`DPMetadata` record of how it was made.
Scalars are :class:`DPFloat` / :class:`DPInt`, subclasses of ``float`` / ``int``,
so arithmetic and formatting work unchanged (and return plain numbers).

Note that pandas copies ``attrs`` onto the results of most operations
(``result * 2`` keeps them), so the metadata describes the release as returned,
not what was computed from it afterwards.

Examples
--------
>>> x = DPFloat(3.5)
>>> x + 1
4.5
>>> f"{x:.1f}"
'3.5'
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["DPFloat", "DPInt", "DPMetadata", "deferred"]

IntervalFn = Callable[[float], tuple[np.ndarray, np.ndarray]]


class DPFloat(float):
    """A released real number: a ``float`` with an ``attrs`` dict like pandas objects."""

    __slots__ = ("attrs",)
    attrs: dict[str, Any]

    def __new__(cls, value: float, attrs: dict[str, Any] | None = None) -> DPFloat:
        obj = float.__new__(cls, value)
        obj.attrs = {} if attrs is None else attrs
        return obj

    def __repr__(self) -> str:
        return float.__repr__(self)


class DPInt(int):
    """A released integer (a noisy count): an ``int`` with an ``attrs`` dict."""

    attrs: dict[str, Any]

    def __new__(cls, value: int, attrs: dict[str, Any] | None = None) -> DPInt:
        obj = int.__new__(cls, value)
        obj.attrs = {} if attrs is None else attrs
        return obj

    def __repr__(self) -> str:
        return int.__repr__(self)


#: Where a record made by :meth:`DPMetadata.later` keeps its builder until first read.
_LATER = "_DPMetadata__later"


class _Deferred:
    """A metadata field not built yet: ``build()`` makes it on first access."""

    __slots__ = ("build",)

    def __init__(self, build: Callable[[], Any]) -> None:
        self.build = build

    def __repr__(self) -> str:
        return f"deferred({self.build!r})"


def deferred(build: Callable[[], Any]) -> Any:
    """A :class:`DPMetadata` field built only when it is first read.

    Building pandas objects costs tens of microseconds each, more than the rest of
    a small release; most metadata is never looked at. Give a field
    ``deferred(builder)`` and the record calls ``builder()`` once, on the first
    access to that field (``meta.sensitivity``, ``str(meta)``, ``to_dict`` ...),
    and keeps the result: readers see exactly what an eager record would hold.

    Parameters
    ----------
    build : callable
        No arguments; returns the field's value. It must only use public values
        (it runs at an arbitrary later time).

    Returns
    -------
    object
        A placeholder to pass as the field's value.

    Examples
    --------
    >>> from functools import partial
    >>> sens = deferred(partial(pd.Series, [1.0, 2.5], index=["a", "b"]))
    >>> meta = DPMetadata("mean", ("x",), "laplace", 1.0, 0.0, "add_remove", None,
    ...                   sens, 1.0, {}, (0, 1), "bit", True, 0.5)
    >>> meta.sensitivity["b"]
    np.float64(2.5)
    >>> meta.sensitivity is meta.sensitivity
    True
    """
    return _Deferred(build)


def _jsonable(value: Any) -> Any:
    if isinstance(value, DPMetadata):
        return value.to_dict()
    if isinstance(value, pd.Series):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, pd.DataFrame):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, tuple | list | np.ndarray):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        number = float(value)
        return number if math.isfinite(number) else None
    return value


@dataclass(frozen=True, eq=False)
class DPMetadata:
    """How a release was made: everything in it is public or chosen by the caller.

    Attributes
    ----------
    statistic : str
        ``"mean"``, ``"var"``, ``"count"`` ...
    columns : tuple
        The columns the release read.
    mechanism : str
        ``"laplace"`` or ``"gaussian"`` (discrete versions for integer releases).
    epsilon, delta : float
        The budget the release spent.
    neighbouring : str
        ``"substitute"`` or ``"add_remove"``.
    n : int or None
        The public row count used by the sensitivity (``None`` where no row count
        was treated as public, e.g. ``len``).
    sensitivity, scale : float or pandas.Series
        One number for the whole release, or one per entry (each entry released
        with its own share of the budget). ``scale`` is the Laplace ``b`` or the
        Gaussian ``sigma`` actually used (after re-calibration for ``truncated``).
        Any field may be given as :func:`deferred`: it is built on first read.
    input_bounds : dict
        ``column -> (lower, upper)`` as declared.
    output_bounds : tuple or dict
        The public range of the statistic the bounding mode used.
    bounding : str
        ``"bit"``, ``"truncated"`` or ``"none"``.
    secure : bool
        ``True`` when the noise came from the OS CSPRNG, ``False`` with ``random_state``.
    rho : float or None
        A Gaussian release's zCDP ``rho`` (``Δ₂² / (2 σ²)`` summed over what was
        noised), which ``PrivacyBudget(accounting="zcdp")`` charges; ``None`` for
        pure epsilon-DP releases.
    details : dict
        Anything else worth knowing (budget split, null handling, grid spacing).
    """

    statistic: str
    columns: tuple[Hashable, ...]
    mechanism: str
    epsilon: float
    delta: float
    neighbouring: str
    n: int | None
    sensitivity: Any
    scale: Any
    input_bounds: dict[Hashable, tuple[float, float]]
    output_bounds: Any
    bounding: str
    secure: bool
    value: Any = field(repr=False)
    details: dict[str, Any] = field(default_factory=dict)
    _interval: IntervalFn | None = field(default=None, repr=False)
    _index: pd.Index | list[Any] | None = field(default=None, repr=False)
    rho: float | None = None

    def __getattribute__(self, name: str) -> Any:
        own = object.__getattribute__(self, "__dict__")
        if _LATER in own:  # a record made by later(): fill it on the first read
            fields = own[_LATER]()
            _check_fields(fields)
            own.update(fields)  # (then pop: a concurrent reader builds the same)
            own.pop(_LATER, None)
        value = object.__getattribute__(self, name)
        if type(value) is _Deferred:  # build a deferred field once, on first read
            value = value.build()
            object.__setattr__(self, name, value)
        return value

    @classmethod
    def later(cls, build: Callable[[], dict[str, Any]]) -> DPMetadata:
        """A record whose fields ``build()`` gives, called on the first read of any.

        Most records are never read, and filling one costs more than the rest of a
        small release's bookkeeping. ``build`` must be a pure function of public
        values (it runs at an arbitrary later time, possibly twice if two threads
        read at once); the record then holds what :meth:`record` would have, and
        readers cannot tell the two apart.

        Parameters
        ----------
        build : callable
            No arguments; returns every field by name, as :meth:`record` takes them.

        Returns
        -------
        DPMetadata

        Examples
        --------
        >>> meta = DPMetadata.later(lambda: dict(statistic="count", columns=("x",),
        ...     mechanism="laplace", epsilon=1.0, delta=0.0, neighbouring="add_remove",
        ...     n=None, sensitivity=1.0, scale=1.0, input_bounds={},
        ...     output_bounds=(0.0, float("inf")), bounding="bit", secure=True, value=3,
        ...     details={}, _interval=None, _index=None, rho=None))
        >>> meta.statistic, meta.value
        ('count', 3)
        """
        obj = object.__new__(cls)
        object.__getattribute__(obj, "__dict__")[_LATER] = build
        return obj

    @classmethod
    def record(cls, **fields: Any) -> DPMetadata:
        """``DPMetadata(**fields)`` with every field given by name, built directly.

        The frozen dataclass's ``__init__`` sets its eighteen fields one
        ``object.__setattr__`` at a time, a few microseconds of a small release;
        this fills the record's ``__dict__`` at once. There is no ``__post_init__``
        to run, so the record is the one the constructor would build (the
        releases pass the fields in their declared order).

        Raises
        ------
        TypeError
            Unless ``fields`` names every field exactly once.

        Examples
        --------
        >>> meta = DPMetadata.record(statistic="count", columns=("x",), mechanism="laplace",
        ...     epsilon=1.0, delta=0.0, neighbouring="add_remove", n=None, sensitivity=1.0,
        ...     scale=1.0, input_bounds={}, output_bounds=(0.0, float("inf")),
        ...     bounding="bit", secure=True, value=3, details={}, _interval=None,
        ...     _index=None, rho=None)
        >>> meta.epsilon, meta.value
        (1.0, 3)
        """
        _check_fields(fields)
        obj = object.__new__(cls)
        object.__getattribute__(obj, "__dict__").update(fields)
        return obj

    # -------------------------------------------------------------- intervals
    def interval(self, alpha: float = 0.05, *, simultaneous: bool = False) -> Any:
        """A ``1 - alpha`` confidence interval for the exact statistic.

        It is honest for the mechanism and bounding mode used (REFERENCE.md §7).

        Parameters
        ----------
        alpha : float, default 0.05
        simultaneous : bool, default False
            For a vector release, intervals that hold for *all* entries at once
            with probability ``1 - alpha`` (a union bound over the entries).

        Returns
        -------
        tuple of float or pandas.DataFrame
            ``(lower, upper)`` for a scalar release; for a vector, a DataFrame with
            columns ``lower`` and ``upper`` indexed like the result.
        """
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"alpha must lie in (0, 1); got {alpha}")
        if self._interval is None:
            raise NotImplementedError(f"no interval is available for {self.statistic}")
        k = 1 if self._index is None else len(self._index)
        per_entry = alpha / k if simultaneous else alpha
        lo, hi = self._interval(per_entry)
        if self._index is None:
            return (float(lo[0]), float(hi[0]))
        return pd.DataFrame({"lower": lo, "upper": hi}, index=pd.Index(self._index))

    # -------------------------------------------------------------- exports
    def to_dict(self) -> dict[str, Any]:
        """The record as plain, JSON-ready Python objects (non-finite numbers -> None)."""
        out = {
            "statistic": self.statistic,
            "columns": [str(c) for c in self.columns],
            "mechanism": self.mechanism,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "neighbouring": self.neighbouring,
            "n": self.n,
            "sensitivity": self.sensitivity,
            "scale": self.scale,
            "input_bounds": self.input_bounds,
            "output_bounds": self.output_bounds,
            "bounding": self.bounding,
            "secure": self.secure,
            "rho": self.rho,
            "details": self.details,
        }
        result: dict[str, Any] = _jsonable(out)
        json.dumps(result)  # fail here, not in the caller's serialiser
        return result

    def _rows(self) -> list[tuple[str, str]]:
        def fmt(v: Any) -> str:
            if isinstance(v, pd.Series):
                return ", ".join(f"{k}: {x:.4g}" for k, x in v.items())
            if isinstance(v, float):
                return f"{v:.6g}"
            return str(v)

        rows = [
            ("statistic", self.statistic),
            ("columns", ", ".join(str(c) for c in self.columns)),
            ("mechanism", self.mechanism),
            ("epsilon", fmt(self.epsilon)),
            ("delta", fmt(self.delta)),
            ("neighbouring", self.neighbouring),
            ("n", str(self.n)),
            ("sensitivity", fmt(self.sensitivity)),
            ("scale", fmt(self.scale)),
            ("input bounds", fmt(self.input_bounds)),
            ("output bounds", fmt(self.output_bounds)),
            ("bounding", self.bounding),
            ("secure", str(self.secure)),
            *([("rho (zCDP)", f"{self.rho:.6g}")] if self.rho is not None else []),
        ]
        if self._interval is not None and self._index is None:
            lo, hi = self.interval(0.05)
            rows.append(("95% interval", f"[{lo:.6g}, {hi:.6g}]"))
        return rows

    def __str__(self) -> str:
        rows = self._rows()
        width = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)

    def _repr_html_(self) -> str:
        body = "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
            f"<td style='text-align:left'>{html.escape(v)}</td></tr>"
            for k, v in self._rows()
        )
        return f"<table class='pandas-dp-metadata'><caption>DP release</caption>{body}</table>"


#: The names of :class:`DPMetadata`'s fields (:meth:`DPMetadata.record` needs them all).
_FIELDS: frozenset[str] = frozenset(f.name for f in fields(DPMetadata))


def _check_fields(given: dict[str, Any]) -> None:
    """Raise ``TypeError`` unless ``given`` names every field of a record exactly once."""
    if given.keys() != _FIELDS:
        missing, extra = sorted(_FIELDS - given.keys()), sorted(given.keys() - _FIELDS)
        raise TypeError(
            f"a DPMetadata record needs every field: missing {missing}, unknown {extra}"
        )
