"""Each statistic: sufficient statistics -> exact value -> noisy release.

Every release follows the same steps (DESIGN.md):

1. the caller has resolved the public declarations (bounds, nullability, ``n``);
2. the sensitivity of every entry is looked up in :mod:`pandas_dp.sensitivity`
   and the noise is calibrated (:func:`pandas_dp.bounding.plan_noise`) -- all
   from public facts, so any error so far is data-independent;
3. the budget is charged, atomically, *before* the data is read;
4. the data is read once (:mod:`pandas_dp.backends`), optionally validated with
   pandera (``out_of_bounds="raise"``), noised and bounded;
5. the result is wrapped with its metadata (:mod:`pandas_dp.result`).

Missing values follow the column's declared ``nullable``. In a non-nullable
column (the default for explicit ``bounds=``) a missing value violates the
declaration and is clamped like any out-of-range value: it becomes the midpoint
of the bounds, and the denominator stays the public ``n``. In a nullable column
missing values are skipped, as pandas does; the number of non-missing values is
then private, so ``mean`` and ``var`` release it (and the centred sums) with noise
and divide afterwards -- a budget split reported in the metadata.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
import pandera.pandas as pa
from numpy.typing import NDArray

from pandas_dp import backends
from pandas_dp.bounding import NoisePlan, apply_noise, check_mode, halfwidth, plan_noise
from pandas_dp.budget import PrivacyBudget, active_budget
from pandas_dp.declarations import NumericDeclaration, check_out_of_bounds
from pandas_dp.mechanisms import RandomSource
from pandas_dp.result import DPFloat, DPInt, DPMetadata
from pandas_dp.sensitivity import check_neighbouring, output_range, sensitivity

__all__ = [
    "Settings",
    "build_metadata",
    "direct_interval",
    "release_count",
    "release_len",
    "release_moment",
    "resolve_method",
    "validate",
]

FloatArray = NDArray[np.float64]

#: How a variance is made: noised directly, or from noisy centred moments.
VAR_METHODS: tuple[str, ...] = ("moments", "direct")


def resolve_method(method: str, settings: Settings) -> str:
    """``"auto"`` -> the method the accuracy study favours for the relation.

    Under add/remove the centred moments are as accurate or better in every
    setting measured (``benchmarks/accuracy.py``). Under substitution they are
    1.7-1.9x more accurate for data centred in its bounds but 1.5-1.7x less
    accurate for data piled at one bound, so the direct release -- whose error
    does not depend on where the data sit -- is the default there.
    """
    if method == "auto":
        return "moments" if settings.neighbouring == "add_remove" else "direct"
    if method not in VAR_METHODS:
        raise ValueError(f"method={method!r} is not supported; use 'auto', 'moments' or 'direct'")
    return method


@dataclass(frozen=True)
class Settings:
    """The DP keyword arguments of a call, validated once."""

    epsilon: float
    delta: float = 0.0
    mechanism: str = "laplace"
    bounding: str = "bit"
    neighbouring: str = "substitute"
    out_of_bounds: str = "clip"
    random_state: Any = None
    budget: PrivacyBudget | None = None
    source: RandomSource = field(init=False, repr=False)

    def __post_init__(self) -> None:
        eps = self.epsilon
        if isinstance(eps, bool) or not isinstance(eps, int | float | np.number):
            raise TypeError(f"epsilon must be a number; got {type(eps).__name__}")
        if not (math.isfinite(eps) and eps > 0):
            raise ValueError(
                f"epsilon must be a positive finite number (e.g. epsilon=1.0); got {eps}"
            )
        delta = float(self.delta)
        object.__setattr__(self, "epsilon", float(eps))
        object.__setattr__(self, "delta", delta)
        check_mode(self.mechanism, self.bounding, delta)
        check_neighbouring(self.neighbouring)
        check_out_of_bounds(self.out_of_bounds)
        object.__setattr__(self, "source", RandomSource(self.random_state))

    def plan(
        self, sensitivity: Any, lower: Any, upper: Any, *, share: float = 1.0, **options: Any
    ) -> NoisePlan:
        """Calibrate noise with these settings (``share`` of epsilon and delta)."""
        return plan_noise(
            np.asarray(sensitivity, dtype=np.float64),
            np.asarray(lower, dtype=np.float64),
            np.asarray(upper, dtype=np.float64),
            epsilon=self.epsilon * share,
            delta=self.delta * share,
            mechanism=self.mechanism,
            bounding=self.bounding,
            **options,
        )

    def charge(self, statistic: str, columns: tuple[Hashable, ...]) -> None:
        """Charge the explicit or active budget (if any); raise before any data is read."""
        budget = self.budget if self.budget is not None else active_budget()
        if budget is not None:
            budget.charge(
                self.epsilon,
                self.delta,
                statistic=statistic,
                columns=columns,
                mechanism=self.mechanism,
                bounding=self.bounding,
                neighbouring=self.neighbouring,
            )


# ----------------------------------------------------------------------------- helpers


def _mechanism_name(settings: Settings, integer: bool) -> str:
    return f"discrete {settings.mechanism}" if integer else settings.mechanism


def _per_entry(values: FloatArray, labels: list[Any]) -> Any:
    if len(labels) == 1:
        return float(values[0])
    return pd.Series(values, index=pd.Index(labels, dtype=object))


def _budget_split(settings: Settings, labels: list[Any]) -> dict[str, Any]:
    if settings.mechanism == "laplace":
        share = settings.epsilon / len(labels)
        return {str(label): share for label in labels}
    return {"joint gaussian over normalised entries": [str(label) for label in labels]}


def validate(columns: Mapping[Hashable, pd.Series], decls: Mapping[Hashable, Any]) -> None:
    """``out_of_bounds="raise"``: let pandera's SchemaError through (not DP-safe)."""
    frame = pd.DataFrame(dict(columns))
    schema = pa.DataFrameSchema({c: decls[c].pandera_column for c in columns})
    schema.validate(frame)


def _wrap_series(values: Any, index: list[Hashable], meta: DPMetadata, dtype: str) -> pd.Series:
    out = pd.Series(values, index=pd.Index(index), dtype=dtype)
    out.attrs["dp"] = meta
    return out


def _check_n(statistic: str, n: int) -> None:
    if n < 1:
        raise ValueError(
            f"{statistic} of an empty frame: there is nothing to release. The row count "
            f"is public, so this error reveals nothing about the data"
        )


# ----------------------------------------------------------------------------- counts


def release_count(
    columns: Mapping[Hashable, pd.Series], n: int, settings: Settings, *, scalar: bool
) -> DPInt | pd.Series:
    """Noisy number of non-missing values per column, like ``df.count()``."""
    labels = list(columns)
    k = len(labels)
    lo, hi = output_range("count", 0.0, 1.0, n, settings.neighbouring)
    sens = np.full(k, sensitivity("count", settings.neighbouring, 0.0, 1.0, n))
    plan = settings.plan(
        sens,
        np.full(k, lo),
        np.full(k, hi),
        integer=True,
    )
    settings.charge("count", tuple(labels))
    exact = np.array([backends.non_null_count(columns[c]) for c in labels], dtype=np.float64)
    released = apply_noise(exact, plan, settings.source)
    meta = build_metadata(
        "count",
        labels,
        settings,
        n,
        sens,
        plan,
        released,
        {},
        (lo, hi),
        scalar,
        direct_interval(released, plan),
    )
    if scalar:
        return DPInt(int(released[0]), {"dp": meta})
    return _wrap_series(released.astype(np.int64), labels, meta, "int64")


def release_len(n: int, settings: Settings) -> DPInt:
    """Noisy number of rows. The exact length is never reported."""
    lo, hi = output_range("len", 0.0, 1.0, n, settings.neighbouring)
    sens = np.array([sensitivity("len", settings.neighbouring, 0.0, 1.0, n)])
    plan = settings.plan(
        sens,
        np.array([lo]),
        np.array([hi]),
        integer=True,
    )
    settings.charge("len", ())
    released = apply_noise(np.array([float(n)]), plan, settings.source)
    meta = build_metadata(
        "len",
        [],
        settings,
        None,
        sens,
        plan,
        released,
        {},
        (lo, hi),
        True,
        direct_interval(released, plan),
    )
    return DPInt(int(released[0]), {"dp": meta})


def direct_interval(released: FloatArray, plan: NoisePlan) -> Any:
    """The interval function of a release whose entries are the noisy values."""
    return partial(_direct_bounds, released, plan)


def _direct_bounds(
    released: FloatArray, plan: NoisePlan, alpha: float
) -> tuple[FloatArray, FloatArray]:
    h = halfwidth(plan, alpha)
    lo = np.clip(released - h, plan.lower, plan.upper)
    hi = np.clip(released + h, plan.lower, plan.upper)
    if plan.integer:
        lo, hi = np.ceil(lo), np.floor(hi)
    return lo, hi


def build_metadata(
    statistic: str,
    labels: list[Hashable],
    settings: Settings,
    n: int | None,
    sens: FloatArray,
    plan: NoisePlan,
    released: FloatArray,
    input_bounds: dict[Hashable, tuple[float, float]],
    output_bounds: Any,
    scalar: bool,
    interval: Any,
    entry_labels: list[Any] | None = None,
    details: dict[str, Any] | None = None,
    budget_split: dict[str, Any] | None = None,
    index: list[Any] | None = None,
) -> DPMetadata:
    entries = entry_labels if entry_labels is not None else (labels or [statistic])
    split = budget_split if budget_split is not None else _budget_split(settings, entries)
    info: dict[str, Any] = {"budget_split": split}
    if not plan.integer:
        info["granularity"] = _per_entry(plan.granularity, entries)
    info.update(details or {})
    return DPMetadata(
        statistic=statistic,
        columns=tuple(labels),
        mechanism=_mechanism_name(settings, plan.integer),
        epsilon=settings.epsilon,
        delta=settings.delta,
        neighbouring=settings.neighbouring,
        n=n,
        sensitivity=_per_entry(sens, entries),
        scale=_per_entry(plan.scale, entries),
        input_bounds=input_bounds,
        output_bounds=output_bounds,
        bounding=settings.bounding,
        secure=settings.source.secure,
        value=released if not scalar else float(released[0]),
        details=info,
        _interval=interval,
        _index=None if scalar else list(index if index is not None else labels),
    )


# ----------------------------------------------------------------------------- moments


@dataclass
class _Column:
    """How one column's statistic is built from noisy entries."""

    decl: NumericDeclaration
    kind: str  # "direct", "nullable mean", "nullable var", "moments var"
    first: int  # index of its first entry in the release vector
    size: int
    out_range: tuple[float, float]


def _entries(
    statistic: str, decl: NumericDeclaration, n: int, neighbouring: str, method: str = "direct"
) -> tuple[str, list[tuple[str, float, float, float]]]:
    """The noisy entries a column needs: ``(part, sensitivity, lower, upper)``."""
    a, b, r = decl.lower, decl.upper, decl.width
    if statistic == "var" and method == "moments" and not decl.nullable:
        sensitivity("var", neighbouring, a, b, n)  # the same minimum n as the direct way
        return "moments var", [
            (
                "centred sum",
                sensitivity("centred_sum", neighbouring, a, b, n),
                -n * r / 2,
                n * r / 2,
            ),
            (
                "centred squares",
                sensitivity("centred_sumsq", neighbouring, a, b, n),
                0.0,
                n * r * r / 4,
            ),
        ]
    if statistic == "sum":
        stat = "sum_nullable" if decl.nullable else "sum"
        lo, hi = output_range(stat, a, b, n)
        return "direct", [("sum", sensitivity(stat, neighbouring, a, b, n), lo, hi)]
    if not decl.nullable:
        lo, hi = output_range(statistic, a, b, n)
        return "direct", [(statistic, sensitivity(statistic, neighbouring, a, b, n), lo, hi)]
    c_lo, c_hi = output_range("count", a, b, n, neighbouring)
    parts = [
        ("count", sensitivity("count", neighbouring, a, b, n), c_lo, c_hi),
        ("centred sum", sensitivity("centred_sum", neighbouring, a, b, n), -n * r / 2, n * r / 2),
    ]
    if statistic == "var":
        if n < 2:
            sensitivity("var", neighbouring, a, b, n)  # raises the same clear error
        top = n * r * r / 4
        parts.append(
            ("centred squares", sensitivity("centred_sumsq", neighbouring, a, b, n), 0.0, top)
        )
        return "nullable var", parts
    return "nullable mean", parts


def _exact(statistic: str, decl: NumericDeclaration, m: backends.Moments, kind: str) -> list[float]:
    n, mid = m.rows, decl.midpoint
    if kind == "nullable mean":
        return [float(m.count), m.total]
    if kind == "nullable var":
        return [float(m.count), m.total, m.squares]
    if kind == "moments var":
        return [m.total, m.squares]
    if statistic == "sum":
        return [(m.count if decl.nullable else n) * mid + m.total]
    if statistic == "mean":
        return [mid + m.total / n]
    return [(m.squares - m.total * m.total / n) / (n - 1)]


def _ratio_box(
    s_lo: FloatArray, s_hi: FloatArray, c_lo: FloatArray, c_hi: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Range of ``S / C`` over a box with ``C > 0`` (extremes sit at the corners)."""
    corners = np.stack([s_lo / c_lo, s_lo / c_hi, s_hi / c_lo, s_hi / c_hi])
    return corners.min(axis=0), corners.max(axis=0)


def _var_of(q: FloatArray, s2: FloatArray, c: FloatArray) -> FloatArray:
    return np.asarray((q - s2 / c) / (c - 1.0), dtype=np.float64)


def _var_box(
    q: tuple[FloatArray, FloatArray],
    s: tuple[FloatArray, FloatArray],
    c: tuple[FloatArray, FloatArray],
) -> tuple[FloatArray, FloatArray]:
    """Range of ``(Q - S^2/C) / (C - 1)`` over a box with ``C >= 2``.

    The expression grows with ``Q``, shrinks with ``S^2``, and in ``C`` rises then
    falls (its derivative has the sign of ``S^2 (2C - 1)/C^2 - Q``, decreasing in
    ``C``): the minimum is at an end of the ``C`` range, the maximum at an end or
    at the root of ``Q C^2 - 2 S^2 C + S^2``.
    """
    s2_min = np.where((s[0] <= 0) & (s[1] >= 0), 0.0, np.minimum(s[0] ** 2, s[1] ** 2))
    s2_max = np.maximum(s[0] ** 2, s[1] ** 2)
    low = np.minimum(_var_of(q[0], s2_max, c[0]), _var_of(q[0], s2_max, c[1]))
    candidates = [_var_of(q[1], s2_min, c[0]), _var_of(q[1], s2_min, c[1])]
    qq = np.maximum(q[1], 1e-300)
    disc = np.maximum(s2_min * s2_min - qq * s2_min, 0.0)
    for sign in (1.0, -1.0):
        root = (s2_min + sign * np.sqrt(disc)) / qq
        inside = (root > c[0]) & (root < c[1])
        value = _var_of(q[1], s2_min, np.where(inside, root, c[0]))
        candidates.append(np.where(inside, value, -np.inf))
    return low, np.max(np.stack(candidates), axis=0)


def release_moment(
    statistic: str,
    columns: Mapping[Hashable, pd.Series],
    decls: Mapping[Hashable, NumericDeclaration],
    n: int,
    settings: Settings,
    *,
    scalar: bool,
    ddof: int = 1,
    root: bool = False,
    method: str = "direct",
) -> DPFloat | pd.Series:
    """Release ``sum``, ``mean`` or ``var`` (``std`` with ``root=True``) of numeric columns.

    ``method`` matters for ``var`` only: ``"direct"`` noises the sample variance
    (sensitivity ``R^2/n``); ``"moments"`` noises the centred sum and sum of
    squares and combines them (sensitivities ``R`` or ``R/2``, and ``R^2/4``).
    """
    if method not in VAR_METHODS:
        raise ValueError(f"method={method!r} is not supported; use 'moments' or 'direct'")
    labels = list(columns)
    name = "std" if root else statistic
    _check_n(name, n)

    # steps 1-3: public facts only, then the budget
    layout: list[_Column] = []
    sens: list[float] = []
    lows: list[float] = []
    highs: list[float] = []
    entry_labels: list[Any] = []
    for c in labels:
        decl = decls[c]
        kind, parts = _entries(statistic, decl, n, settings.neighbouring, method)
        if kind == "direct":
            out_range = (parts[0][2], parts[0][3])
        elif kind == "nullable mean":
            out_range = (decl.lower, decl.upper)
        elif kind == "moments var":
            out_range = output_range("var", decl.lower, decl.upper, n)
        else:
            out_range = output_range("var_nullable", decl.lower, decl.upper, n)
        layout.append(_Column(decl, kind, len(sens), len(parts), out_range))
        for part, s, lo, hi in parts:
            sens.append(s)
            lows.append(lo)
            highs.append(hi)
            entry_labels.append(c if kind == "direct" else f"{c}: {part}")
    if statistic == "var" and not 0 <= ddof < n:
        raise ValueError(f"ddof must satisfy 0 <= ddof < n (n={n} rows); got ddof={ddof}")
    sens_a = np.asarray(sens)
    plan = settings.plan(
        sens_a,
        np.asarray(lows),
        np.asarray(highs),
    )
    settings.charge(name, tuple(labels))

    # step 4: read the data once per column, noise, bound
    if settings.out_of_bounds == "raise":
        validate(columns, decls)
    exact: list[float] = []
    for col in layout:
        m = backends.moments(
            columns[col.decl.column],
            col.decl.lower,
            col.decl.upper,
            squares=statistic == "var",
        )
        exact.extend(_exact(statistic, col.decl, m, col.kind))
    theta = np.clip(np.asarray(exact), plan.lower, plan.upper)
    noisy = apply_noise(theta, plan, settings.source)

    values, finish = _finish(statistic, layout, noisy, plan, settings, n, ddof, root)
    out_bounds = {c.decl.column: finish.bounds(c) for c in layout}
    meta = build_metadata(
        name,
        labels,
        settings,
        n,
        sens_a,
        plan,
        values,
        {c: (decls[c].lower, decls[c].upper) for c in labels},
        out_bounds[labels[0]] if scalar else out_bounds,
        scalar,
        finish.interval,
        entry_labels,
        {
            "missing values": {str(c.decl.column): _null_policy(c) for c in layout},
            **({"ddof": ddof, "method": method} if statistic == "var" else {}),
        },
    )
    if scalar:
        return DPFloat(float(values[0]), {"dp": meta})
    return _wrap_series(values, labels, meta, "float64")


def _null_policy(col: _Column) -> str:
    if col.decl.nullable:
        return "skipped; the non-missing count is released with noise"
    return "not allowed by the declaration; a missing value is clamped to the midpoint"


#: Column kinds whose variance divides by the public ``n``, not a noisy count.
_FIXED_N = ("direct", "moments var")


@dataclass
class _Finish:
    """Post-processing of the noisy entries into the statistic, and its intervals."""

    statistic: str
    layout: list[_Column]
    noisy: FloatArray
    plan: NoisePlan
    clamp: bool
    n: int
    ddof: int
    root: bool

    def factor(self, count: FloatArray | float) -> Any:
        """``ddof=1`` -> requested ``ddof``: ``(C - 1) / (C - ddof)``."""
        return (np.asarray(count) - 1.0) / (np.asarray(count) - self.ddof)

    def bounds(self, col: _Column) -> tuple[float, float]:
        lo, hi = col.out_range
        if self.statistic == "var":
            f = float(self.factor(self.n if col.kind in _FIXED_N else 2.0))
            lo, hi = lo * f, hi * f
            if self.root:
                lo, hi = math.sqrt(lo), math.sqrt(hi)
        return (lo, hi)

    def point(self, col: _Column, x: FloatArray) -> float:
        decl = col.decl
        if col.kind == "direct":
            value = float(x[0])
        elif col.kind == "nullable mean":
            value = decl.midpoint + float(x[1]) / max(float(x[0]), 1.0)
        else:
            c, total, squares = self._var_parts(col, x)
            value = float(_var_of(np.asarray(squares), np.asarray(total) ** 2, np.asarray(c)))
        if self.clamp:
            value = min(max(value, col.out_range[0]), col.out_range[1])
        return float(self._post(col, value, float(x[0])))

    def _var_parts(self, col: _Column, x: FloatArray) -> tuple[float, float, float]:
        """``(count, centred sum, centred squares)`` of a variance made from moments."""
        if col.kind == "moments var":
            return float(self.n), float(x[0]), float(x[1])
        return max(float(x[0]), 2.0), float(x[1]), float(x[2])

    def _post(self, col: _Column, value: Any, count: Any) -> Any:
        if self.statistic != "var":
            return value
        c = self.n if col.kind in _FIXED_N else np.maximum(count, 2.0)
        value = value * self.factor(c)
        return np.sqrt(np.maximum(value, 0.0)) if self.root else value

    def values(self) -> FloatArray:
        return np.array(
            [self.point(c, self.noisy[c.first : c.first + c.size]) for c in self.layout]
        )

    def interval(self, alpha: float) -> tuple[FloatArray, FloatArray]:
        lows, highs = [], []
        for col in self.layout:
            sl = slice(col.first, col.first + col.size)
            h = halfwidth(self.plan, alpha / col.size)[sl]
            x = self.noisy[sl]
            lo_e = np.clip(x - h, self.plan.lower[sl], self.plan.upper[sl])
            hi_e = np.clip(x + h, self.plan.lower[sl], self.plan.upper[sl])
            if col.kind == "direct":
                lo, hi = float(lo_e[0]), float(hi_e[0])
            elif col.kind == "nullable mean":
                c_lo, c_hi = max(lo_e[0], 1.0), max(hi_e[0], 1.0)
                r_lo, r_hi = _ratio_box(lo_e[1:2], hi_e[1:2], np.array([c_lo]), np.array([c_hi]))
                lo, hi = col.decl.midpoint + float(r_lo[0]), col.decl.midpoint + float(r_hi[0])
            else:
                if col.kind == "moments var":
                    c_lo = c_hi = float(self.n)
                    s_at, q_at = slice(0, 1), slice(1, 2)
                else:
                    c_lo, c_hi = max(lo_e[0], 2.0), max(hi_e[0], 2.0)
                    s_at, q_at = slice(1, 2), slice(2, 3)
                v_lo, v_hi = _var_box(
                    (lo_e[q_at], hi_e[q_at]),
                    (lo_e[s_at], hi_e[s_at]),
                    (np.array([c_lo]), np.array([c_hi])),
                )
                lo, hi = float(v_lo[0]), float(v_hi[0])
            lo = min(max(lo, col.out_range[0]), col.out_range[1])
            hi = min(max(hi, col.out_range[0]), col.out_range[1])
            if self.statistic == "var":
                # the ddof factor is largest at the smallest count; widen accordingly
                fixed = col.kind in _FIXED_N
                c_small = self.n if fixed else max(lo_e[0], 2.0)
                c_big = self.n if fixed else max(hi_e[0], 2.0)
                f_lo, f_hi = sorted((float(self.factor(c_small)), float(self.factor(c_big))))
                lo, hi = lo * f_lo, hi * f_hi
                if self.root:
                    lo, hi = math.sqrt(max(lo, 0.0)), math.sqrt(max(hi, 0.0))
            lows.append(lo)
            highs.append(hi)
        return np.array(lows), np.array(highs)


def _finish(
    statistic: str,
    layout: list[_Column],
    noisy: FloatArray,
    plan: NoisePlan,
    settings: Settings,
    n: int,
    ddof: int,
    root: bool,
) -> tuple[FloatArray, _Finish]:
    finish = _Finish(statistic, layout, noisy, plan, settings.bounding != "none", n, ddof, root)
    return finish.values(), finish
