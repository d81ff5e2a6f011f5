"""Covariance and correlation matrices of bounded numeric columns.

Two methods, both followed by a repair to the nearest positive semi-definite
matrix (:func:`pandas_dp.stats.constraints.nearest_psd_covariance`):

``"moments"`` (the default)
    A plan over the noisy count ``C`` of complete rows, the midpoint-centred sums
    ``S_i = sum(x_i - m_i)`` and the sums of products
    ``P_ij = sum((x_i - m_i)(x_j - m_j))`` for ``i <= j``, then
    ``cov_ij = (P_ij - S_i S_j / C) / (C - ddof)``, each variance clamped to the
    largest one the noisy ``C`` and ``S_i`` allow (:func:`~pandas_dp.stats.estimators.variance_cap`)
    and each covariance to ``+-sqrt(v_i v_j)``. Each product lies in
    ``[-R_i R_j / 4, R_i R_j / 4]``, so its sensitivity is ``R_i R_j / 2``
    (substitute) or ``/ 4`` (add/remove). Nothing depends on the exact ``n``.
``"direct"`` (Liu 2019; needs ``neighbouring="substitute"``: ``n`` public)
    The variances first, each with its share of epsilon and bounded to its range,
    then each covariance with its share, bounded by ``+-sqrt(v_i* v_j*)`` of the
    *released* variances (post-processing).

Every measurement gets an equal share of epsilon (reported in the metadata).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from pandas_dp import engines
from pandas_dp.budget.accounting import rho_of_noise
from pandas_dp.errors import InvalidBoundsError
from pandas_dp.noise.bounding import apply_noise_exact, halfwidth
from pandas_dp.noise.plans import NoisePlan
from pandas_dp.plan.plans import Measurement, Plan, direct_allowance, engine_input
from pandas_dp.plan.records import settings_fields
from pandas_dp.plan.sensitivity import output_range, pair_sensitivity, sensitivity
from pandas_dp.request.declared_columns import NumericDeclaration
from pandas_dp.request.settings import Settings
from pandas_dp.result.values import DPMetadata, attach
from pandas_dp.stats import constraints
from pandas_dp.stats import estimators as est
from pandas_dp.stats.moment_weights import MOMENT_WEIGHTS
from pandas_dp.stats.numeric import validate

__all__ = ["COV_METHODS", "DEFAULT_COV_METHOD", "release_cov", "resolve_method"]

COV_METHODS: tuple[str, ...] = ("moments", "direct")
#: Chosen by the accuracy study (``benchmarks/accuracy.py``): best or tied in 14 of
#: 16 settings and in all under add/remove (Frobenius RMSE 0.075 against OpenDP's
#: 0.084 for 4x4 on [-1, 1], n = 1000, epsilon = 1); the direct method won by
#: 10-16 % only on data piled at one bound, under substitution, n >= 1000.
DEFAULT_COV_METHOD = "moments"


def resolve_method(method: str) -> str:
    """``"auto"`` -> :data:`DEFAULT_COV_METHOD`; otherwise check the name."""
    if method == "auto":
        return DEFAULT_COV_METHOD
    if method not in COV_METHODS:
        raise ValueError(f"method={method!r} is not supported; use 'auto', 'moments' or 'direct'")
    return method


def _check(method: str, psd: str) -> None:
    if method not in COV_METHODS:
        raise ValueError(f"method={method!r} is not supported; use 'moments' or 'direct'")
    if psd not in constraints.COVARIANCE_METHODS:
        raise ValueError(f"psd={psd!r} is not supported; use 'clip' or 'higham'")


#: Factor of headroom the widths must leave below the largest float: the
#: estimates are computed in units of ``unit²`` (see :func:`_unit`), where every
#: intermediate is of the order of the row count plus the noise over the width.
_HEADROOM = 2.0**64
_FLOAT_MAX = float(np.finfo(np.float64).max)


def _check_widths(labels: list[Hashable], widths: np.ndarray, ddof: int) -> None:
    """Raise :class:`InvalidBoundsError` when the declared widths leave no room for a
    covariance in floating point (public facts only: runs before the charge)."""
    for i, j in _pairs(len(labels)):
        size = float(widths[i]) * float(widths[j]) * (ddof + 1.0) * _HEADROOM
        if not math.isfinite(size):
            which = (
                f"column {labels[i]!r} (width {widths[i]:g}) is"
                if i == j
                else f"columns {labels[i]!r} and {labels[j]!r} (widths {widths[i]:g} and "
                f"{widths[j]:g}) are"
            )
            raise InvalidBoundsError(
                f"the bounds of {which} too wide for a covariance: the product of two "
                f"widths must stay below about 1e289 (ddof={ddof}). Declare narrower "
                f"bounds, or rescale the columns (e.g. to thousands)"
            )


def _unit(widths: np.ndarray) -> float:
    """A power of two at least the largest half-width: the unit of the computation."""
    return math.ldexp(1.0, math.frexp(float(np.max(widths)) / 2.0)[1])


def _pairs(p: int) -> list[tuple[int, int]]:
    return [(i, j) for i in range(p) for j in range(i, p)]


def release_cov(
    columns: Mapping[Hashable, pd.Series],
    decls: Mapping[Hashable, NumericDeclaration],
    settings: Settings,
    *,
    method: str = DEFAULT_COV_METHOD,
    ddof: int = 1,
    psd: str = "clip",
    corr: bool = False,
    frame: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Release ``df[columns].cov(ddof)`` (or ``.corr()``) as a DataFrame.

    Rows with a missing value in any selected column are left out (listwise
    deletion), so one noisy count of complete rows serves the whole matrix.
    """
    _check(method, psd)
    if isinstance(ddof, bool) or not isinstance(ddof, int) or ddof < 0:
        raise ValueError(f"ddof must be a whole number >= 0; got {ddof!r}")
    labels = list(columns)
    widths = np.array([decls[c].width for c in labels])
    _check_widths(labels, widths, ddof)
    # every estimate is computed in units of unit² (a power of two, so exactly),
    # where nothing overflows; only the final matrix is scaled back
    unit2 = _unit(widths) ** 2
    name = "corr" if corr else "cov"
    data = engine_input(columns, decls, settings, None, frame)
    release: _Moments | _Direct
    if method == "direct":
        n = settings.public_n
        if n is None:
            raise ValueError(
                "method='direct' (Liu's covariance) needs the frame's length to be public; "
                "declare neighbouring='substitute' for a frame whose length is public, or "
                "use method='moments'"
            )
        if settings.contributions.unit is not None:  # its sums read every row
            raise ValueError(
                f"method='direct' (Liu's covariance, sensitivity per row) cannot bound a "
                f"unit's rows; with privacy_unit={settings.contributions.unit!r} use "
                f"method='moments', which keeps at most max_rows_per_unit rows of a unit"
            )
        sensitivity("var_direct", settings.neighbouring, 0.0, 1.0, n)  # n >= 2, clear error
        if not ddof < n:
            raise ValueError(f"ddof must be below n={n} (the public row count); got {ddof}")
        release = _Direct(labels, widths, n, settings)
        # calibrated outside a plan: a Gaussian release passes the rho of its two vectors
        Plan(settings).charge(name, tuple(labels), rho=release.rho())
        if settings.out_of_bounds == "raise":
            validate(columns, decls)
        sums = engines.products(
            list(columns.values()),
            [decls[c].lower for c in labels],
            [decls[c].upper for c in labels],
        )
        s, prods = sums.exact()
        cov, raw_interval = release.run(s, prods)
        cov = cov / unit2
        limits = np.array([output_range("var_direct", 0.0, w, n)[1] for w in widths])
        factor = (n - 1.0) / (n - ddof)
        caps = np.full(len(labels), np.inf)
    else:
        release = _Moments([decls[c] for c in labels], settings, ddof, unit2)
        check = partial(validate, columns, decls) if settings.out_of_bounds == "raise" else None
        noisy = release.plan.run(data, name, tuple(labels), check=check)
        cov, raw_interval, caps = release.run(noisy)
        limits = np.array([output_range("var", 0.0, w, ddof=ddof)[1] for w in widths])
        factor = 1.0
    if settings.bounding != "none":  # (the interval keeps the public range)
        cov = _bound(cov, np.minimum(limits / factor / unit2, caps))
    repaired = constraints.nearest_psd_covariance(cov, method=psd) * factor
    if corr:
        value = constraints.cov_to_corr(repaired)
    else:
        # finite whatever the noise: only bounding="none" with a tiny epsilon could
        # reach the end of the float range here
        value = np.clip(repaired * unit2, -_FLOAT_MAX, _FLOAT_MAX)

    frame = pd.DataFrame(value, index=pd.Index(labels), columns=pd.Index(labels))
    interval = (
        partial(_corr_bounds, partial(_scaled_bounds, raw_interval, factor), limits)
        if corr
        else partial(_scaled_bounds, raw_interval, factor)
    )
    meta = DPMetadata(
        **settings_fields(settings),
        statistic=name,
        columns=tuple(labels),
        sensitivity=release.sensitivity_report(),
        scale=release.scale_report(),
        input_bounds={c: (decls[c].lower, decls[c].upper) for c in labels},
        output_bounds=(-1.0, 1.0)
        if corr
        else {"variance upper bounds": dict(zip(labels, limits.tolist(), strict=True))},
        value=value,
        details={
            "method": method,
            "psd repair": psd,
            "ddof": ddof,
            "missing values": "rows with a missing value in any selected column are left out",
            "budget_split": release.split(),
            "interval": "for the exact entries, row-major",
        },
        _interval=interval,
        _index=[(a, b) for a in labels for b in labels],
    )
    return attach(frame, meta)


def _corr_bounds(
    raw: Callable[[float], tuple[np.ndarray, np.ndarray]], limits: np.ndarray, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """Bounds on the exact correlations from bounds on the exact covariance entries.

    ``r_ij = c_ij / sqrt(v_i v_j)``; over the box of the entries' intervals its
    range is bounded by the extreme numerators over the extreme denominators.
    """
    lo, hi = raw(alpha)
    p = len(limits)
    lo_m, hi_m = lo.reshape(p, p), hi.reshape(p, p)
    v_lo = np.maximum(np.diag(lo_m), 0.0)
    v_hi = np.maximum(np.diag(hi_m), 0.0)
    d_lo = np.outer(np.sqrt(v_lo), np.sqrt(v_lo))  # no v_i v_j: it may overflow
    d_hi = np.outer(np.sqrt(v_hi), np.sqrt(v_hi))
    with np.errstate(divide="ignore", invalid="ignore"):
        cands = np.stack([lo_m / d_lo, lo_m / d_hi, hi_m / d_lo, hi_m / d_hi])
    cands = np.where(np.isnan(cands), 0.0, cands)
    r_lo = np.where(d_lo > 0, np.clip(cands.min(axis=0), -1.0, 1.0), -1.0)
    r_hi = np.where(d_lo > 0, np.clip(cands.max(axis=0), -1.0, 1.0), 1.0)
    np.fill_diagonal(r_lo, 1.0)
    np.fill_diagonal(r_hi, 1.0)
    return r_lo.ravel(), r_hi.ravel()


def _bound(cov: np.ndarray, limits: np.ndarray) -> np.ndarray:
    """Variances to ``[0, limit]``; covariances to ``+-sqrt(v_i v_j)`` (post-processing)."""
    out = cov.copy()
    diag = np.clip(np.diag(out), 0.0, limits)
    np.fill_diagonal(out, diag)
    cap = np.outer(np.sqrt(diag), np.sqrt(diag))
    off = ~np.eye(len(diag), dtype=bool)
    out[off] = np.clip(out[off], -cap[off], cap[off])
    return out


def _scaled_bounds(
    raw: Callable[[float], tuple[np.ndarray, np.ndarray]], factor: float, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """Matrix bounds times the ``ddof`` factor, flattened row-major."""
    lo, hi = raw(alpha)
    return (lo * factor).ravel(), (hi * factor).ravel()


@dataclass(frozen=True)
class _DirectState:
    """What the intervals of a direct release need (all public after the release)."""

    var_plan: NoisePlan
    cov_plan: NoisePlan | None
    variances: np.ndarray
    cov: np.ndarray
    limits: np.ndarray
    widths: np.ndarray
    off: list[tuple[int, int]]
    n: int


def _direct_bounds(state: _DirectState, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Bounds for the direct method's entries.

    An off-diagonal entry was clamped to a cap made of noisy variances; the exact
    value obeys ``|cov| <= sqrt(v_i v_j)`` for the exact variances, which their
    intervals cover: a union bound over three events.
    """
    p, n, cov = len(state.variances), state.n, state.cov
    hv = halfwidth(state.var_plan, alpha)
    lo = np.full((p, p), -np.inf)
    hi = np.full((p, p), np.inf)
    # clip both ends into the public range: a release outside it (bounding="none")
    # gives an interval at the range's end, never one with lower > upper
    np.fill_diagonal(lo, np.clip(state.variances - hv, 0.0, state.limits))
    np.fill_diagonal(hi, np.clip(state.variances + hv, 0.0, state.limits))
    if state.cov_plan is not None:
        hc = halfwidth(state.cov_plan, alpha / 3.0)
        v_hi = np.minimum(state.variances + halfwidth(state.var_plan, alpha / 3.0), state.limits)
        for k, (i, j) in enumerate(state.off):
            public = n * state.widths[i] * state.widths[j] / (4.0 * (n - 1))
            outer = min(math.sqrt(max(v_hi[i], 0.0)) * math.sqrt(max(v_hi[j], 0.0)), public)
            low, high = cov[i, j] - hc[k], cov[i, j] + hc[k]
            cap_k = state.cov_plan.upper[k]
            if high >= cap_k:
                high = max(high, outer)
            if low <= -cap_k:
                low = min(low, -outer)
            lo[i, j] = lo[j, i] = min(max(low, -public), public)
            hi[i, j] = hi[j, i] = min(max(high, -public), public)
    return lo, hi


class _Moments:
    """A plan over the complete-row count, centred sums and cross-products."""

    def __init__(
        self, decls: list[NumericDeclaration], settings: Settings, ddof: int, unit2: float
    ):
        self.decls, self.ddof, self.unit2 = decls, ddof, unit2
        self.plan = Plan(settings)
        self.keys = self.plan.products(decls, MOMENT_WEIGHTS["cov"])
        self.plan.calibrate()

    def run(self, noisy: Mapping[str, np.ndarray]) -> tuple[np.ndarray, Any, np.ndarray]:
        """The covariance in units of ``unit2``, the interval function (exact units) and,
        per column, the largest variance the noisy count and mean allow (units of
        ``unit2``; :func:`~pandas_dp.stats.estimators.variance_cap`), the diagonal's clamp."""
        p, k, u2 = len(self.decls), self.keys, self.unit2
        u = math.sqrt(u2)  # a power of two: the scaling is exact
        c = float(noisy[k["count"]][0])
        s = np.array([float(noisy[k[f"sum {i}"]][0]) for i in range(p)]) / u
        prod = np.zeros((p, p))
        for i, j in _pairs(p):
            prod[i, j] = prod[j, i] = float(noisy[k[f"product {i} {j}"]][0]) / u2
        cc = max(c, self.ddof + 1.0)
        cov = (prod - np.outer(s, s) / cc) / (cc - self.ddof)
        caps = np.array(
            [
                est.variance_cap(c, s[i], ddof=self.ddof, half_width=(d.upper - d.lower) / 2 / u)
                for i, d in enumerate(self.decls)
            ]
        )
        limits = np.array(
            [output_range("var", d.lower, d.upper, ddof=self.ddof)[1] for d in self.decls]
        )
        # the measurements alone (their noise plans), never the plan: a result's
        # metadata must not hold the call's settings (its budget has a lock, which
        # no copy or pickle of the result could take)
        bounds = partial(
            _moments_bounds,
            dict(self.plan.measurements),
            dict(noisy),
            self.keys,
            p,
            self.ddof,
            u2,
            limits,
        )
        return cov, bounds, caps

    def sensitivity_report(self) -> pd.Series:
        ms = self.plan.measurements.values()
        return pd.Series([m.sensitivity for m in ms], index=[m.key for m in ms])

    def scale_report(self) -> pd.Series:
        ms = self.plan.measurements.values()
        return pd.Series(
            [float(m.noise.scale[0]) for m in ms if m.noise], index=[m.key for m in ms]
        )

    def split(self) -> dict[str, Any]:
        return self.plan.split()


def _moments_bounds(
    ms: Mapping[str, Measurement],
    noisy: dict[str, np.ndarray],
    keys: dict[str, str],
    p: int,
    ddof: int,
    unit2: float,
    limits: np.ndarray,
    alpha: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Bounds on ``(P_ij - S_i S_j / C) / (C - ddof)`` from the noisy statistics.

    A union bound over every measurement of the plan (each at ``alpha / count``),
    then, per entry, the range over the box: the numerator's extremes over the
    ``S`` and ``P`` corners, divided by the count's extremes. Computed in units of
    ``unit2`` (no overflow), then intersected with the public ranges of the exact
    entries: a variance lies in ``[0, limit]``, a covariance within
    ``+-sqrt(limit_i limit_j)``.
    """
    a = alpha / len(ms)
    u = math.sqrt(unit2)

    def box(key: str, scale: float) -> tuple[float, float]:
        noise = ms[key].noise
        assert noise is not None
        lo, hi = est.noisy_interval(noise, float(noisy[key][0]), a)
        return lo / scale, hi / scale

    c_lo, c_hi = box(keys["count"], 1.0)
    c_lo, c_hi = max(c_lo, ddof + 1.0), max(c_hi, ddof + 1.0)
    s_box = [box(keys[f"sum {i}"], u) for i in range(p)]
    lo, hi = np.zeros((p, p)), np.zeros((p, p))
    for i, j in _pairs(p):
        p_lo, p_hi = box(keys[f"product {i} {j}"], unit2)
        if i == j:
            s_lo, s_hi = s_box[i]
            ss = [0.0 if s_lo <= 0 <= s_hi else min(s_lo**2, s_hi**2), max(s_lo**2, s_hi**2)]
        else:
            ss = [x * y for x in s_box[i] for y in s_box[j]]
        # N(C) = P - s/C is monotone in C, and C - ddof > 0: the entry lies between
        # the extreme numerators over the extreme denominators
        num = [
            pp - sv / cv for pp in (p_lo, p_hi) for sv in (min(ss), max(ss)) for cv in (c_lo, c_hi)
        ]
        values = [x / (cv - ddof) for x in num for cv in (c_lo, c_hi)]
        lo[i, j] = lo[j, i] = min(values)
        hi[i, j] = hi[j, i] = max(values)
    root = np.sqrt(limits / unit2)
    cap = np.outer(root, root)
    np.fill_diagonal(cap, limits / unit2)
    floor = -cap
    np.fill_diagonal(floor, 0.0)
    lo = np.minimum(np.maximum(lo, floor), cap) * unit2
    hi = np.minimum(np.maximum(hi, floor), cap) * unit2
    return lo, hi


def cov_allowance(r1: float, r2: float, n: int) -> float:
    """How far the exact accumulation's rounding may move a direct covariance, per row.

    Rounded centred values lie in a box of widths ``R + q``; a rounded product is the
    product of the rounded values plus at most ``pq/2 + h1 q2/2 + h2 q1/2 + q1 q2/4``
    (brute-force tested in ``tests/test_sensitivity_vectors.py``).
    """
    q1 = engines.accumulation_step(0.5 * r1)
    q2 = engines.accumulation_step(0.5 * r2)
    pq = engines.accumulation_step(0.25 * r1 * r2)
    spread = ((r1 + q1) * (r2 + q2) - r1 * r2) / n
    return spread + (pq + r1 * q2 / 2 + r2 * q1 / 2 + q1 * q2 / 2) / (n - 1)


class _Direct:
    """Liu (2019): variances first, then covariances bounded by the released variances."""

    def __init__(self, labels: list[Hashable], widths: np.ndarray, n: int, settings: Settings):
        self.labels, self.widths, self.n, self.settings = labels, widths, n, settings
        p = len(labels)
        rel = settings.neighbouring
        self.entries = p * (p + 1) // 2
        self.share = settings.epsilon / self.entries
        # the table's value plus the rounding allowance of the exact accumulation
        self.var_sens = np.array(
            [
                sensitivity("var_direct", rel, 0.0, w, n) + direct_allowance("var_direct", w, n)
                for w in widths
            ]
        )
        self.limits = np.array([output_range("var_direct", 0.0, w, n)[1] for w in widths])
        self.off = [(i, j) for i, j in _pairs(p) if i != j]
        self.cov_sens = np.array(
            [
                pair_sensitivity("cov_direct", rel, widths[i], widths[j], n)
                + cov_allowance(widths[i], widths[j], n)
                for i, j in self.off
            ]
        )
        self.var_plan = settings.noise(
            self.var_sens, np.zeros(p), self.limits, share=p / self.entries
        )
        # the widest caps the covariances can get, ``n w_i w_j / (4 (n - 1))``: public
        self.public_caps = np.array(
            [n * widths[i] * widths[j] / (4.0 * (n - 1)) for i, j in self.off]
        )
        # Gaussian noise is calibrated now, on the grid of the widest caps, so that its
        # scale -- and the rho charged before the release -- does not depend on the
        # released variances; only the range it is clamped to does (see :meth:`run`)
        self.cov_noise: NoisePlan | None = None
        if self.off and settings.mechanism == "gaussian":
            self.cov_noise = settings.noise(
                self.cov_sens,
                -self.public_caps,
                self.public_caps,
                share=len(self.off) / self.entries,
            )
        self.cov_plan: NoisePlan | None = None

    def rho(self) -> float | None:
        """The zCDP ``rho`` of the release: its variances' vector plus its covariances'.

        One row moves every entry of each vector by up to its sensitivity (the
        default joint L2 norm, ``sqrt(size)`` in units of the sensitivities). None
        for Laplace noise (a pure release, charged by its epsilon).
        """
        rho = rho_of_noise(self.var_plan, self.var_sens)
        if rho is None:
            return None
        if self.cov_noise is not None:
            cov_rho = rho_of_noise(self.cov_noise, self.cov_sens)
            assert cov_rho is not None  # a Gaussian plan has a rho
            rho += cov_rho
        return rho

    def run(
        self, sums: list[Fraction], products: dict[tuple[int, int], Fraction]
    ) -> tuple[np.ndarray, Any]:
        n, st = self.n, self.settings
        p = len(sums)

        def exact(i: int, j: int) -> Fraction:  # exact rationals: no float composition
            return (products[(i, j)] - sums[i] * sums[j] / n) / (n - 1)

        diag = [exact(i, i) for i in range(p)]
        variances = apply_noise_exact(diag, self.var_plan, st.source)
        cov = np.diag(variances)
        if self.off:
            bounded = np.clip(variances, 0.0, self.limits)
            cap = np.array(
                [
                    min(
                        math.sqrt(bounded[i]) * math.sqrt(bounded[j]),
                        n * self.widths[i] * self.widths[j] / (4.0 * (n - 1)),
                    )
                    for i, j in self.off
                ]
            )
            m = len(self.off)
            if self.cov_noise is not None:  # Gaussian: the scale charged, the caps' range
                self.cov_plan = dataclasses.replace(self.cov_noise, lower=-cap, upper=cap)
            else:
                self.cov_plan = st.noise(self.cov_sens, -cap, cap, share=m / self.entries)
            theta = [exact(i, j) for i, j in self.off]
            noisy = apply_noise_exact(theta, self.cov_plan, st.source)
            for k, (i, j) in enumerate(self.off):
                cov[i, j] = cov[j, i] = noisy[k]

        state = _DirectState(
            self.var_plan, self.cov_plan, variances, cov, self.limits, self.widths, self.off, n
        )
        return cov, partial(_direct_bounds, state)

    def _names(self) -> list[str]:
        return [f"var({c})" for c in self.labels] + [
            f"cov({self.labels[i]},{self.labels[j]})" for i, j in self.off
        ]

    def _matrix(self, diag: np.ndarray, off: np.ndarray) -> pd.DataFrame:
        out = np.diag(diag)
        for k, (i, j) in enumerate(self.off):
            out[i, j] = out[j, i] = off[k]
        return pd.DataFrame(out, index=pd.Index(self.labels), columns=pd.Index(self.labels))

    def sensitivity_report(self) -> pd.DataFrame:
        return self._matrix(self.var_sens, self.cov_sens)

    def scale_report(self) -> pd.DataFrame:
        off = self.cov_plan.scale if self.cov_plan is not None else np.zeros(len(self.off))
        return self._matrix(self.var_plan.scale, off)

    def split(self) -> dict[str, Any]:
        if self.settings.mechanism != "laplace":
            return {"gaussian, delta split like epsilon": self._names()}
        return dict.fromkeys(self._names(), self.share)
