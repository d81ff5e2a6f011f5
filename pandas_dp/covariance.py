"""Covariance and correlation matrices of bounded numeric columns.

Two methods, both followed by a repair to the nearest positive semi-definite
matrix (:func:`pandas_dp.constraints.nearest_psd_covariance`):

``"moments"`` (the default)
    One release of the midpoint-centred sums ``S_i = sum(x_i - m_i)`` and
    sums of products ``P_ij = sum((x_i - m_i)(x_j - m_j))`` for ``i <= j``, then
    ``cov_ij = (P_ij - S_i S_j / n) / (n - 1)``. Each product lies in
    ``[-R_i R_j / 4, R_i R_j / 4]``, so its sensitivity is ``R_i R_j / 2``
    (substitute) or ``/ 4`` (add/remove): less noise than the direct method.
``"direct"`` (Liu 2019)
    The variances first, each with its share of epsilon and bounded to its range,
    then each covariance with its share, bounded by ``+-sqrt(v_i* v_j*)`` of the
    *released* variances (post-processing).

Every entry gets an equal share of epsilon (reported in the metadata).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from pandas_dp import backends, constraints
from pandas_dp.bounding import NoisePlan, apply_noise, halfwidth
from pandas_dp.declarations import NumericDeclaration
from pandas_dp.result import DPMetadata
from pandas_dp.sensitivity import output_range, pair_sensitivity, sensitivity
from pandas_dp.statistics import Settings, validate

__all__ = ["COV_METHODS", "DEFAULT_COV_METHOD", "release_cov", "resolve_method"]

COV_METHODS: tuple[str, ...] = ("moments", "direct")
_CHUNK_ROWS = 1 << 16
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


def _check(method: str, psd: str, decls: Mapping[Hashable, NumericDeclaration]) -> None:
    if method not in COV_METHODS:
        raise ValueError(f"method={method!r} is not supported; use 'moments' or 'direct'")
    if psd not in constraints.COVARIANCE_METHODS:
        raise ValueError(f"psd={psd!r} is not supported; use 'clip' or 'higham'")
    nullable = [str(c) for c, d in decls.items() if d.nullable]
    if nullable:
        raise ValueError(
            f"cov/corr do not support nullable columns ({', '.join(nullable)}): pairwise "
            f"deletion would make each pair's row count private. Declare them "
            f"nullable=False (a missing value is then clamped to the midpoint)"
        )


def _block(
    columns: Mapping[Hashable, pd.Series], decls: Mapping[Hashable, NumericDeclaration]
) -> tuple[np.ndarray, np.ndarray]:
    """One pass: centred sums ``S`` and the cross-product matrix ``P`` of the clamped block.

    The block is held transposed, one contiguous row per column, so that clamping
    writes contiguous memory and ``B @ B.T`` is one BLAS call per chunk of rows.
    """
    labels = list(columns)
    arrays = [backends.column_values(columns[c]) for c in labels]
    lower = np.array([decls[c].lower for c in labels])
    upper = np.array([decls[c].upper for c in labels])
    mid = 0.5 * (lower + upper)
    n, p = len(arrays[0]), len(labels)
    rows = _CHUNK_ROWS
    block = np.empty((p, min(rows, max(n, 1))))
    sums = np.zeros(p)
    products = np.zeros((p, p))
    for start in range(0, n, rows):
        m = min(rows, n - start)
        b = block[:, :m]
        for j, x in enumerate(arrays):
            np.subtract(x[start : start + m], mid[j], out=b[j], casting="unsafe")
            np.clip(b[j], lower[j] - mid[j], upper[j] - mid[j], out=b[j])
        part = b.sum(axis=1)
        if np.isnan(part).any():  # a missing value becomes the midpoint: 0 once centred
            np.nan_to_num(b, copy=False, nan=0.0)
            part = b.sum(axis=1)
        sums += part
        products += b @ b.T
    return sums, products


def _pairs(p: int) -> list[tuple[int, int]]:
    return [(i, j) for i in range(p) for j in range(i, p)]


def release_cov(
    columns: Mapping[Hashable, pd.Series],
    decls: Mapping[Hashable, NumericDeclaration],
    n: int,
    settings: Settings,
    *,
    method: str = DEFAULT_COV_METHOD,
    ddof: int = 1,
    psd: str = "clip",
    corr: bool = False,
) -> pd.DataFrame:
    """Release ``df[columns].cov(ddof)`` (or ``.corr()``) as a DataFrame."""
    _check(method, psd, decls)
    labels = list(columns)
    rel = settings.neighbouring
    widths = np.array([decls[c].width for c in labels])
    sensitivity("var", rel, 0.0, 1.0, n)  # the same minimum n as a variance (clear error)
    if not 0 <= ddof < n:
        raise ValueError(f"ddof must satisfy 0 <= ddof < n (n={n} rows); got ddof={ddof}")
    release: _Moments | _Direct
    if method == "moments":
        release = _Moments(labels, widths, n, settings)
    else:
        release = _Direct(labels, widths, n, settings)
    settings.charge("corr" if corr else "cov", tuple(labels))

    if settings.out_of_bounds == "raise":
        validate(columns, decls)
    sums, products = _block(columns, decls)
    cov, raw_interval = release.run(sums, products)
    factor = (n - 1.0) / (n - ddof)
    limits = np.array([output_range("var", 0.0, w, n)[1] for w in widths])
    if settings.bounding != "none":
        cov = _bound(cov, limits)
    repaired = constraints.nearest_psd_covariance(cov, method=psd) * factor
    value = constraints.cov_to_corr(repaired) if corr else repaired

    frame = pd.DataFrame(value, index=pd.Index(labels), columns=pd.Index(labels))
    frame.attrs["dp"] = DPMetadata(
        statistic="corr" if corr else "cov",
        columns=tuple(labels),
        mechanism=settings.mechanism,
        epsilon=settings.epsilon,
        delta=settings.delta,
        neighbouring=rel,
        n=n,
        sensitivity=release.sensitivity_report(),
        scale=release.scale_report(),
        input_bounds={c: (decls[c].lower, decls[c].upper) for c in labels},
        output_bounds=(-1.0, 1.0)
        if corr
        else {"variance upper bounds": dict(zip(labels, (limits * factor).tolist(), strict=True))},
        bounding=settings.bounding,
        secure=settings.source.secure,
        value=value,
        details={
            "method": method,
            "psd repair": psd,
            "ddof": ddof,
            "budget_split": release.split(),
            "interval": "for the exact covariance entries, row-major; none for corr"
            if not corr
            else "not available for corr",
        },
        _interval=None if corr else partial(_scaled_bounds, raw_interval, factor),
        _index=None if corr else [(a, b) for a in labels for b in labels],
    )
    return frame


def _bound(cov: np.ndarray, limits: np.ndarray) -> np.ndarray:
    """Variances to ``[0, limit]``; covariances to ``+-sqrt(v_i v_j)`` (post-processing)."""
    out = cov.copy()
    diag = np.clip(np.diag(out), 0.0, limits)
    np.fill_diagonal(out, diag)
    cap = np.sqrt(np.outer(diag, diag))
    off = ~np.eye(len(diag), dtype=bool)
    out[off] = np.clip(out[off], -cap[off], cap[off])
    return out


def _scaled_bounds(
    raw: Callable[[float], tuple[np.ndarray, np.ndarray]], factor: float, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """Matrix bounds times the ``ddof`` factor, flattened row-major."""
    lo, hi = raw(alpha)
    return (lo * factor).ravel(), (hi * factor).ravel()


def _moments_bounds(
    plan: NoisePlan, noisy: np.ndarray, pairs: list[tuple[int, int]], n: int, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """Bounds on ``(P_ij - S_i S_j / n) / (n - 1)`` from the noisy moments.

    Each entry uses ``S_i``, ``S_j`` and ``P_ij``: a union bound over those three.
    """
    p = len(noisy) - len(pairs)
    h = halfwidth(plan, alpha / 3.0)
    s = noisy[:p]
    s_lo, s_hi = s - h[:p], s + h[:p]
    lo, hi = np.zeros((p, p)), np.zeros((p, p))
    for k, (i, j) in enumerate(pairs):
        if i == j:
            low_sq = 0.0 if s_lo[i] <= 0 <= s_hi[i] else min(s_lo[i] ** 2, s_hi[i] ** 2)
            corners = np.array([low_sq, max(s_lo[i] ** 2, s_hi[i] ** 2)])
        else:
            corners = np.array([a * b for a in (s_lo[i], s_hi[i]) for b in (s_lo[j], s_hi[j])])
        pk, hk = noisy[p + k], h[p + k]
        lo[i, j] = lo[j, i] = (pk - hk - corners.max() / n) / (n - 1.0)
        hi[i, j] = hi[j, i] = (pk + hk - corners.min() / n) / (n - 1.0)
    return lo, hi


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
    np.fill_diagonal(lo, np.maximum(state.variances - hv, 0.0))
    np.fill_diagonal(hi, np.minimum(state.variances + hv, state.limits))
    if state.cov_plan is not None:
        hc = halfwidth(state.cov_plan, alpha / 3.0)
        v_hi = np.minimum(state.variances + halfwidth(state.var_plan, alpha / 3.0), state.limits)
        for k, (i, j) in enumerate(state.off):
            public = n * state.widths[i] * state.widths[j] / (4.0 * (n - 1))
            outer = min(math.sqrt(max(v_hi[i], 0.0) * max(v_hi[j], 0.0)), public)
            low, high = cov[i, j] - hc[k], cov[i, j] + hc[k]
            cap_k = state.cov_plan.upper[k]
            if high >= cap_k:
                high = max(high, outer)
            if low <= -cap_k:
                low = min(low, -outer)
            lo[i, j] = lo[j, i] = max(low, -public)
            hi[i, j] = hi[j, i] = min(high, public)
    return lo, hi


class _Moments:
    """Centred sums and sums of products, one release."""

    def __init__(self, labels: list[Hashable], widths: np.ndarray, n: int, settings: Settings):
        self.labels, self.n, self.settings = labels, n, settings
        p = len(labels)
        rel = settings.neighbouring
        self.pairs = _pairs(p)
        sens = [sensitivity("centred_sum", rel, 0.0, w, n) for w in widths]
        lows = [-n * w / 2 for w in widths]
        highs = [n * w / 2 for w in widths]
        for i, j in self.pairs:
            if i == j:
                sens.append(sensitivity("centred_sumsq", rel, 0.0, widths[i], n))
                lows.append(0.0)
                highs.append(n * widths[i] ** 2 / 4)
            else:
                sens.append(pair_sensitivity("centred_product", rel, widths[i], widths[j], n))
                lows.append(-n * widths[i] * widths[j] / 4)
                highs.append(n * widths[i] * widths[j] / 4)
        self.sens = np.array(sens)
        self.names = [f"sum({c})" for c in labels] + [
            f"sum({labels[i]}*{labels[j]})" for i, j in self.pairs
        ]
        self.plan = settings.plan(self.sens, lows, highs)

    def run(self, sums: np.ndarray, products: np.ndarray) -> tuple[np.ndarray, Any]:
        p, n = len(self.labels), self.n
        theta = np.concatenate([sums, [products[i, j] for i, j in self.pairs]])
        noisy = apply_noise(
            np.clip(theta, self.plan.lower, self.plan.upper), self.plan, self.settings.source
        )
        s = noisy[:p]
        prod = np.zeros((p, p))
        for k, (i, j) in enumerate(self.pairs):
            prod[i, j] = prod[j, i] = noisy[p + k]
        cov = (prod - np.outer(s, s) / n) / (n - 1.0)

        return cov, partial(_moments_bounds, self.plan, noisy, self.pairs, n)

    def sensitivity_report(self) -> pd.Series:
        return pd.Series(self.sens, index=self.names)

    def scale_report(self) -> pd.Series:
        return pd.Series(self.plan.scale, index=self.names)

    def split(self) -> dict[str, Any]:
        if self.settings.mechanism != "laplace":
            return {"joint gaussian over normalised entries": self.names}
        share = self.settings.epsilon / len(self.names)
        return dict.fromkeys(self.names, share)


class _Direct:
    """Liu (2019): variances first, then covariances bounded by the released variances."""

    def __init__(self, labels: list[Hashable], widths: np.ndarray, n: int, settings: Settings):
        self.labels, self.widths, self.n, self.settings = labels, widths, n, settings
        p = len(labels)
        rel = settings.neighbouring
        self.entries = p * (p + 1) // 2
        self.share = settings.epsilon / self.entries
        self.var_sens = np.array([sensitivity("var", rel, 0.0, w, n) for w in widths])
        self.limits = np.array([output_range("var", 0.0, w, n)[1] for w in widths])
        self.off = [(i, j) for i, j in _pairs(p) if i != j]
        self.cov_sens = np.array(
            [pair_sensitivity("cov", rel, widths[i], widths[j], n) for i, j in self.off]
        )
        self.var_plan = settings.plan(
            self.var_sens, np.zeros(p), self.limits, share=p / self.entries
        )
        self.cov_plan: NoisePlan | None = None

    def run(self, sums: np.ndarray, products: np.ndarray) -> tuple[np.ndarray, Any]:
        n, st = self.n, self.settings
        exact = (products - np.outer(sums, sums) / n) / (n - 1.0)
        variances = apply_noise(np.clip(np.diag(exact), 0.0, self.limits), self.var_plan, st.source)
        cov = np.diag(variances)
        if self.off:
            bounded = np.clip(variances, 0.0, self.limits)
            cap = np.array(
                [
                    min(
                        math.sqrt(bounded[i] * bounded[j]),
                        n * self.widths[i] * self.widths[j] / (4.0 * (n - 1)),
                    )
                    for i, j in self.off
                ]
            )
            m = len(self.off)
            self.cov_plan = st.plan(self.cov_sens, -cap, cap, share=m / self.entries)
            theta = np.array([exact[i, j] for i, j in self.off])
            noisy = apply_noise(np.clip(theta, -cap, cap), self.cov_plan, st.source)
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
