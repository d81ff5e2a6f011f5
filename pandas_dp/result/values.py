"""Return values: pandas-native results carrying their noise metadata.

Every release returns what pandas itself would -- a scalar for one column, a
:class:`pandas.Series` indexed by column for several -- with
``result.attrs["dp"]``, a frozen :class:`DPMetadata` record of how it was made.
Scalars are :class:`DPFloat` / :class:`DPInt`, subclasses of ``float`` / ``int``,
so arithmetic and formatting work unchanged (and return plain numbers).

pandas copies ``attrs`` onto the results of most operations (``result * 2``,
``result.loc[...]``). A record read from such an object knows it: an object that
still holds exactly the released numbers under the released labels (a copy, a
renamed Series) is the release and keeps a working record; any other is *derived*
(:attr:`DPMetadata.derived`), and its ``interval()`` raises
:class:`~pandas_dp.errors.DerivedResultError`. Scalar releases give plain numbers
under arithmetic, without ``attrs``.

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
import sys
import weakref
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field, fields
from types import FrameType
from typing import Any, TypeVar, cast

import numpy as np
import pandas as pd

from pandas_dp.errors import DerivedResultError
from pandas_dp.result.labels import labels_index

__all__ = ["DPFloat", "DPInt", "DPMetadata", "attach", "deferred"]

IntervalFn = Callable[[float], tuple[np.ndarray, np.ndarray]]
PandasT = TypeVar("PandasT", bound=pd.Series | pd.DataFrame)


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
#: Where a record attached to a pandas object keeps ``(holder, snapshot)``: a callable
#: giving the object it is read from (``None`` once unknown, e.g. after pickling) and a
#: shallow copy of the release as returned (copy-on-write keeps it unchanged).
_BOUND = "_DPMetadata__bound"
#: Set on a record pandas copied onto an object that does not hold the release.
_DERIVED = "_DPMetadata__derived"

#: What a derived record says instead of an interval (no value of the data in it).
DERIVED_MESSAGE = (
    "this object was computed from a release (pandas copied the release's attrs onto "
    "it) and does not hold the released numbers under the released labels: its "
    "interval no longer applies. Read the interval from the release itself (the "
    "object the .dp call returned, or an unchanged copy of it) and carry it through "
    "your computation yourself (for p * 100, multiply both ends by 100); the "
    "record's other fields still describe the release it came from"
)


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
    groups : tuple
        The key columns of a grouped release; ``()`` when not grouped.
    keys : str or None
        ``"public"`` (declared keys) or ``"private"`` (chosen by partition
        selection); ``None`` when not grouped.
    n_keys : int or None
        The number of declared keys (public keys; an ``other`` group is not counted)
        or of keys released (private keys); ``None`` when not grouped.
    privacy_unit : str or None
        The column naming the privacy unit; ``None`` when every row is its own unit.
    contribution_bounds : dict or None
        ``{"max_rows_per_unit": k, "max_groups_per_unit": g, "max_rows_per_group":
        c}`` when a privacy unit is declared or the release is grouped (``g`` and
        ``c`` are ``None`` when not grouped); ``None`` otherwise.

    A record read from an object pandas derived from the release (``p * 100``,
    ``p.loc[...]``) is :attr:`derived`: its fields still describe the release, but
    :meth:`interval` raises :class:`~pandas_dp.errors.DerivedResultError`.
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
    groups: tuple[Hashable, ...] = ()
    keys: str | None = None
    n_keys: int | None = None
    privacy_unit: str | None = None
    contribution_bounds: dict[str, int | None] | None = None

    def __getattribute__(self, name: str) -> Any:
        own = object.__getattribute__(self, "__dict__")
        if _LATER in own and not name.startswith("__"):  # a record made by later():
            # fill it on the first read of a field or method (not on pandas' or copy's
            # look-ups of __deepcopy__ and the like, which propagate it unread)
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
        ...     details={}, _interval=None, _index=None, rho=None, groups=(), keys=None,
        ...     n_keys=None, privacy_unit=None, contribution_bounds=None))
        >>> meta.statistic, meta.value
        ('count', 3)
        """
        obj = object.__new__(cls)
        object.__getattribute__(obj, "__dict__")[_LATER] = build
        return obj

    @classmethod
    def record(cls, **fields: Any) -> DPMetadata:
        """``DPMetadata(**fields)`` with every field given by name, built directly.

        The frozen dataclass's ``__init__`` sets its twenty-three fields one
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
        ...     _index=None, rho=None, groups=(), keys=None, n_keys=None,
        ...     privacy_unit=None, contribution_bounds=None)
        >>> meta.epsilon, meta.value
        (1.0, 3)
        """
        _check_fields(fields)
        obj = object.__new__(cls)
        object.__getattribute__(obj, "__dict__").update(fields)
        return obj

    # -------------------------------------------------------------- derived objects
    @property
    def derived(self) -> bool:
        """Whether this record was read from an object that is not the release.

        ``True`` when pandas copied it onto an object computed from the release whose
        type, shape, labels, dtypes or numbers differ from the release's (arithmetic,
        selection, reordering, a new index ...), or when the release itself was
        changed in place. Its fields still describe the release, but
        :meth:`interval` raises :class:`~pandas_dp.errors.DerivedResultError`.
        ``False`` for the release and for copies that hold exactly its numbers under
        its labels (``p.copy()``, ``p.rename("name")``).
        """
        return _is_derived(object.__getattribute__(self, "__dict__"))

    def _check_live(self) -> None:
        if self.derived:
            raise DerivedResultError(DERIVED_MESSAGE)

    def __deepcopy__(self, memo: dict[int, Any]) -> DPMetadata:
        """The record pandas copies onto an object derived from its release.

        pandas deep-copies ``attrs`` (``__finalize__``) onto the object an operation
        returns, once that object is built. The copy is bound to that object and
        judged: if its source is no longer the release, or its type or shape differ
        from the release's, it is derived for good (``(p * 2) / 2`` too); otherwise
        it holds on to the object and compares it with the release at every read
        (``copy()`` and ``rename`` stay the release; ``set_axis`` and changes made
        later do not). Outside pandas' propagation (``copy.deepcopy`` of a record or
        of a scalar release) the copy is the same record.
        """
        own = object.__getattribute__(self, "__dict__")
        copied = object.__new__(type(self))
        new = object.__getattribute__(copied, "__dict__")
        new.update(own)
        target = _propagation_target(self, own, memo)
        if target is _UNCHANGED:
            return copied
        new.pop(_BOUND, None)
        bound = own.get(_BOUND)
        if (
            bound is None
            or _is_derived(own)  # derived from a derived object: derived for good
            or not isinstance(target, pd.Series | pd.DataFrame)
            or type(target) is not type(bound[1])
            or target.shape != bound[1].shape
        ):
            new[_DERIVED] = True
        else:
            new[_BOUND] = (_Held(target), bound[1])
        return copied

    def __getstate__(self) -> dict[str, Any]:
        """The fields for pickling: built, without the object it was read from."""
        own = object.__getattribute__(self, "__dict__")
        if _LATER in own:
            self.statistic  # noqa: B018 -- any read fills a later() record
        state = dict(own)
        bound = state.get(_BOUND)
        if bound is not None:  # the snapshot travels; the holder is gone once unpickled
            state[_BOUND] = (None, bound[1])
        return state

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

        Raises
        ------
        DerivedResultError
            If the record was read from an object computed from the release
            (:attr:`derived`): its interval does not describe that object.
        """
        self._check_live()
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"alpha must lie in (0, 1); got {alpha}")
        if self._interval is None:
            raise NotImplementedError(f"no interval is available for {self.statistic}")
        k = 1 if self._index is None else len(self._index)
        per_entry = alpha / k if simultaneous else alpha
        lo, hi = self._interval(per_entry)
        if self._index is None:
            return (float(lo[0]), float(hi[0]))
        return pd.DataFrame({"lower": lo, "upper": hi}, index=labels_index(self._index))

    # -------------------------------------------------------------- exports
    def to_dict(self) -> dict[str, Any]:
        """The record as plain, JSON-ready Python objects (non-finite numbers -> None).

        ``"derived"`` is ``True`` for a record read from an object computed from the
        release (:attr:`derived`); its other entries describe the release.
        """
        # every public field but the value, in their order, then derived and details
        out = {name: getattr(self, name) for name in _EXPORTED}
        out.update(
            columns=[str(c) for c in self.columns],
            groups=[str(g) for g in self.groups],
            derived=self.derived,
            details=self.details,
        )
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
            *self._grouping_rows(),
        ]
        if self.derived:
            return [("derived object", DERIVED_MESSAGE), *rows]
        if self._interval is not None and self._index is None:
            lo, hi = self.interval(0.05)
            rows.append(("95% interval", f"[{lo:.6g}, {hi:.6g}]"))
        return rows

    def _grouping_rows(self) -> list[tuple[str, str]]:
        """The grouping and the privacy unit, a row each."""
        if self.groups:
            count = "" if self.n_keys is None else f" ({self.n_keys} keys)"
            grouping = [
                ("groups", ", ".join(str(g) for g in self.groups)),
                ("keys", f"{self.keys}{count}"),
            ]
        else:
            grouping = [("groups", "none (not grouped)")]
        unit = [("privacy unit", "each row" if self.privacy_unit is None else self.privacy_unit)]
        if self.contribution_bounds is not None:
            bounds = ", ".join(
                f"{k}={v}" for k, v in self.contribution_bounds.items() if v is not None
            )
            unit.append(("contribution bounds", bounds))
        return grouping + unit

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
        caption = "DP release" + (" (derived object: no interval)" if self.derived else "")
        return f"<table class='pandas-dp-metadata'><caption>{caption}</caption>{body}</table>"


#: The names of :class:`DPMetadata`'s fields (:meth:`DPMetadata.record` needs them all).
_FIELDS: frozenset[str] = frozenset(f.name for f in fields(DPMetadata))
#: The fields :meth:`DPMetadata.to_dict` exports as they are (before its own entries).
_EXPORTED: tuple[str, ...] = tuple(
    f.name for f in fields(DPMetadata) if f.name not in ("value", "details") and f.name[0] != "_"
)


def _check_fields(given: dict[str, Any]) -> None:
    """Raise ``TypeError`` unless ``given`` names every field of a record exactly once."""
    if given.keys() != _FIELDS:
        missing, extra = sorted(_FIELDS - given.keys()), sorted(given.keys() - _FIELDS)
        raise TypeError(
            f"a DPMetadata record needs every field: missing {missing}, unknown {extra}"
        )


class _Held:
    """A strong reference to the object a propagated record was copied onto."""

    __slots__ = ("obj",)

    def __init__(self, obj: pd.Series | pd.DataFrame) -> None:
        self.obj = obj

    def __call__(self) -> pd.Series | pd.DataFrame:
        return self.obj


#: :func:`_propagation_target`'s answer for a copy that is not pandas' propagation.
_UNCHANGED: Any = object()


def _holds(holder: Any, snapshot: pd.Series | pd.DataFrame) -> bool:
    """Whether ``holder`` holds the release: same type, shape, labels, dtypes, numbers
    (names of the Series and of the axes aside; missing values equal)."""
    return (
        type(holder) is type(snapshot)
        and holder.shape == snapshot.shape
        and bool(snapshot.equals(cast(Any, holder)))
    )


def _is_derived(own: dict[str, Any]) -> bool:
    """Whether the record whose ``__dict__`` is ``own`` is read from a derived object."""
    if own.get(_DERIVED, False):
        return True
    bound = own.get(_BOUND)
    if bound is None:  # a scalar release, or a record never attached: nothing to compare
        return False
    holder = None if bound[0] is None else bound[0]()
    # a record outliving its release still describes it
    return holder is not None and not _holds(holder, bound[1])


def _propagation_target(record: DPMetadata, own: dict[str, Any], memo: dict[int, Any]) -> Any:
    """The pandas object a record is being copied onto, if pandas is propagating it.

    pandas' ``NDFrame.__finalize__`` deep-copies the source's ``attrs`` (or, in
    ``concat``, the inputs' common ``attrs``) onto the new object ``self``; this walks
    up the few frames of ``copy.deepcopy`` to it. Returns that object when the record
    is one of the ``attrs`` being copied, :data:`_UNCHANGED` when this is not pandas'
    propagation (``copy.deepcopy`` of a record or of a scalar release), and ``None``
    when the ``attrs`` of the record's own object are being copied by something not
    recognised (the copy is then derived: safe whatever pandas' internals become).
    """
    frame: FrameType | None = sys._getframe(2)  # skip this function and __deepcopy__
    for _ in range(8):
        if frame is None:
            break
        if frame.f_code.co_name == "__finalize__":
            local = frame.f_locals
            target, other = local.get("self"), local.get("other")
            source = other.attrs if isinstance(other, pd.Series | pd.DataFrame) else None
            if source is None:  # concat and merge: the inputs' common attrs
                source = local.get("attrs")
            if isinstance(source, dict) and any(v is record for v in source.values()):
                return target
            break
        frame = frame.f_back
    bound = own.get(_BOUND)
    holder = None if bound is None or bound[0] is None else bound[0]()
    if holder is not None and id(holder.attrs) in memo:
        return None
    return _UNCHANGED


def attach(obj: PandasT, meta: DPMetadata) -> PandasT:
    """Set ``obj.attrs["dp"] = meta``, binding the record to the release ``obj``.

    The record keeps a shallow copy of ``obj`` as released (copy-on-write keeps its
    numbers when ``obj`` is later changed in place) and a weak reference to ``obj``;
    it is :attr:`~DPMetadata.derived` when read after ``obj`` changed, and pandas'
    copies of it are judged against the release (:meth:`DPMetadata.__deepcopy__`).
    A record already attached elsewhere is attached as a copy of its own.

    Parameters
    ----------
    obj : pandas.Series or pandas.DataFrame
        The release, as returned to the caller.
    meta : DPMetadata
        Its metadata record.

    Returns
    -------
    pandas.Series or pandas.DataFrame
        ``obj`` itself.

    Examples
    --------
    >>> meta = DPMetadata("count", ("x",), "laplace", 1.0, 0.0, "add_remove", None,
    ...                   1.0, 1.0, {}, (0, 1), "bit", True, [3.0])
    >>> s = attach(pd.Series([3.0]), meta)
    >>> s.attrs["dp"].derived, (s * 2).attrs["dp"].derived, s.copy().attrs["dp"].derived
    (False, True, False)
    """
    own = object.__getattribute__(meta, "__dict__")
    if _BOUND in own or _DERIVED in own:  # someone else's record: a copy for obj
        fresh = object.__new__(DPMetadata)
        object.__getattribute__(fresh, "__dict__").update(
            {k: v for k, v in own.items() if k not in (_BOUND, _DERIVED)}
        )
        meta, own = fresh, object.__getattribute__(fresh, "__dict__")
    rest = {k: v for k, v in obj.attrs.items() if k != "dp"}
    obj.attrs = {}  # no attrs to propagate onto the snapshot
    own[_BOUND] = (weakref.ref(obj), obj.copy(deep=False))
    obj.attrs = {**rest, "dp": meta}
    return obj
