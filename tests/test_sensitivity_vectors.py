"""Brute-force proofs of the table rows for vectors and pairs of columns.

Every ordered dataset of ``n`` records drawn from a small grid of record values is
enumerated at once as an array of shape ``(V,) * n``; a substitution changes one
axis, so the largest change under substitution is the largest spread of the
statistic along any one axis. Removing a record from a dataset of ``n`` gives a
dataset of ``n - 1`` (the statistics are symmetric, so removing the last is
enough). The table value must bound every change, and be attained on the grid.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from pandas_dp.sensitivity import pair_sensitivity, sensitivity

REL = ("substitute", "add_remove")


def all_datasets(values: np.ndarray, n: int) -> np.ndarray:
    """Array of shape ``(V,) * n + values.shape[1:]`` ... as ``(V**n, n, d)``."""
    idx = np.array(list(itertools.product(range(len(values)), repeat=n)), dtype=np.intp)
    return values[idx]


def substitution_change(f: np.ndarray, v: int, n: int, norm: str) -> float:
    """Largest ``||f(X) - f(X')||`` over X, X' differing in one record."""
    shaped = f.reshape((v,) * n + f.shape[1:])
    worst = 0.0
    for axis in range(n):
        moved = np.moveaxis(shaped, axis, 0)
        for a in range(v):
            diff = moved - moved[a][None]
            worst = max(worst, _norm(diff, norm, f.ndim > 1))
    return worst


def removal_change(f_big: np.ndarray, f_small: np.ndarray, v: int, n: int, norm: str) -> float:
    """Largest ``||f(X) - f(X minus its last record)||`` over datasets X of size n."""
    big = f_big.reshape((v ** (n - 1), v, *f_big.shape[1:]))
    small = f_small.reshape((v ** (n - 1), 1, *f_small.shape[1:]))
    return _norm(big - small, norm, f_big.ndim > 1)


def _norm(diff: np.ndarray, norm: str, vector: bool) -> float:
    if not vector:
        return float(np.max(np.abs(diff)))
    axis = -1
    if norm == "l1":
        return float(np.max(np.abs(diff).sum(axis=axis)))
    return float(np.max(np.sqrt((diff**2).sum(axis=axis))))


# --------------------------------------------------------------------------- histograms

K = 3
# record values: category 0..K-1, K = undeclared ("other", dropped), K+1 = missing
CODES = np.arange(K + 2)


def histogram(datasets: np.ndarray) -> np.ndarray:
    return np.stack([(datasets[..., 0] == k).sum(axis=1) for k in range(K)], axis=1).astype(float)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_histogram_rows(n: int) -> None:
    values = CODES[:, None]
    f = histogram(all_datasets(values, n))
    v = len(values)
    sub_l1 = substitution_change(f, v, n, "l1")
    sub_l2 = substitution_change(f, v, n, "l2")
    assert sub_l1 == sensitivity("histogram", "substitute", 0, 1, n) == 2.0
    assert math.isclose(sub_l2, sensitivity("histogram_l2", "substitute", 0, 1, n))
    f_small = histogram(all_datasets(values, n - 1)) if n > 1 else np.zeros((1, K))
    ar_l1 = removal_change(f, f_small, v, n, "l1")
    assert ar_l1 == sensitivity("histogram", "add_remove", 0, 1, n) == 1.0
    assert removal_change(f, f_small, v, n, "l2") == sensitivity(
        "histogram_l2", "add_remove", 0, 1, n
    )
    # one bucket at a time moves by the per-count sensitivity
    assert substitution_change(f[:, :1], v, n, "max") == sensitivity("count", "substitute", 0, 1, n)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_proportion_rows(n: int) -> None:
    """Proportions count / n over all K buckets (every record in a bucket)."""
    values = np.arange(K)[:, None]
    v = len(values)
    f = histogram(all_datasets(values, n)) / n
    f_small = histogram(all_datasets(values, n - 1)) / (n - 1)
    for rel in REL:
        if rel == "substitute":
            l1 = substitution_change(f, v, n, "l1")
            l2 = substitution_change(f, v, n, "l2")
            one = substitution_change(f[:, :1], v, n, "max")
        else:
            l1 = removal_change(f, f_small, v, n, "l1")
            l2 = removal_change(f, f_small, v, n, "l2")
            one = removal_change(f[:, :1], f_small[:, :1], v, n, "max")
        assert l1 <= sensitivity("proportions", rel, 0, 1, n) + 1e-12
        assert l2 <= sensitivity("proportions_l2", rel, 0, 1, n) + 1e-12
        assert one <= sensitivity("proportion", rel, 0, 1, n) + 1e-12
        if rel == "substitute":  # attained: a record moves between two buckets
            assert math.isclose(l1, 2 / n) and math.isclose(one, 1 / n)
            assert math.isclose(l2, math.sqrt(2) / n)
        else:  # approached as n grows: (2 - 2 k/n ...) / n
            assert l1 >= sensitivity("proportions", rel, 0, 1, n) * (1 - 1 / n) - 1e-12


# --------------------------------------------------------------------------- pairs

BOUNDS = [((0.0, 1.0), (0.0, 1.0)), ((-1.0, 1.0), (2.0, 5.0)), ((-3.0, -1.0), (0.0, 0.5))]


def grid(lo: float, hi: float) -> np.ndarray:
    return np.array([lo, hi, (lo + hi) / 2, lo + 0.3 * (hi - lo)])


def pair_values(b1: tuple, b2: tuple) -> np.ndarray:
    return np.array(list(itertools.product(grid(*b1), grid(*b2))))


def sample_cov(d: np.ndarray) -> np.ndarray:
    x, y = d[..., 0], d[..., 1]
    n = d.shape[1]
    return ((x - x.mean(axis=1, keepdims=True)) * (y - y.mean(axis=1, keepdims=True))).sum(
        axis=1
    ) / (n - 1)


def centred_product(b1: tuple, b2: tuple):
    m1, m2 = sum(b1) / 2, sum(b2) / 2
    return lambda d: ((d[..., 0] - m1) * (d[..., 1] - m2)).sum(axis=1)


@pytest.mark.parametrize("b1, b2", BOUNDS)
@pytest.mark.parametrize("n", [2, 3])
def test_cov_row(b1: tuple, b2: tuple, n: int) -> None:
    values = pair_values(b1, b2)
    v = len(values)
    r1, r2 = b1[1] - b1[0], b2[1] - b2[0]
    f = sample_cov(all_datasets(values, n))
    sub = substitution_change(f, v, n, "max")
    table = pair_sensitivity("cov", "substitute", r1, r2, n)
    assert sub <= table + 1e-9
    if n == 2:  # (a, a) -> (b, b) against (a, a): R1 R2 / 2 = R1 R2 / n
        assert math.isclose(sub, table)
    if n >= 3:
        f_small = sample_cov(all_datasets(values, n - 1))
        ar = removal_change(f, f_small, v, n, "max")
        assert ar <= pair_sensitivity("cov", "add_remove", r1, r2, n) + 1e-9
    # same as the variance row on the diagonal
    assert pair_sensitivity("cov", "substitute", r1, r1, n) == sensitivity(
        "var", "substitute", 0, r1, n
    )


@pytest.mark.parametrize("b1, b2", BOUNDS)
@pytest.mark.parametrize("n", [1, 2, 3])
def test_centred_product_row(b1: tuple, b2: tuple, n: int) -> None:
    values = pair_values(b1, b2)
    v = len(values)
    r1, r2 = b1[1] - b1[0], b2[1] - b2[0]
    stat = centred_product(b1, b2)
    f = stat(all_datasets(values, n))
    sub = substitution_change(f, v, n, "max")
    assert math.isclose(sub, pair_sensitivity("centred_product", "substitute", r1, r2, n))
    f_small = stat(all_datasets(values, n - 1)) if n > 1 else np.zeros(1)
    ar = removal_change(f, f_small, v, n, "max")
    assert math.isclose(ar, pair_sensitivity("centred_product", "add_remove", r1, r2, n))


def test_pair_table_errors() -> None:
    with pytest.raises(ValueError, match="at least 3"):
        pair_sensitivity("cov", "add_remove", 1.0, 1.0, 2)
    with pytest.raises(ValueError, match="known"):
        pair_sensitivity("median", "substitute", 1.0, 1.0, 5)
    with pytest.raises(ValueError, match="substitute"):
        pair_sensitivity("cov", "swap", 1.0, 1.0, 5)


# --------------------------------------------------------------------------- workloads


@pytest.mark.parametrize("n", [1, 2, 3])
def test_workload_of_k_queries(n: int) -> None:
    """k counting queries: one record may satisfy all of them, so L1 = k (both relations).

    Records are ages 0..9 and a smoker flag; the predicates overlap on purpose.
    """
    ages, smokes = np.meshgrid(np.arange(10), [0, 1])
    values = np.stack([ages.ravel(), smokes.ravel()], axis=1).astype(float)
    predicates = [
        lambda d: d[..., 1] == 1,
        lambda d: (d[..., 1] == 1) & (d[..., 0] > 3),
        lambda d: d[..., 0] > 5,
        lambda d: d[..., 0] > 1,
    ]
    k = len(predicates)

    def workload(d: np.ndarray) -> np.ndarray:
        return np.stack([p(d).sum(axis=1) for p in predicates], axis=1).astype(float)

    v = len(values)
    f = workload(all_datasets(values, n))
    per_query = sensitivity("count", "substitute", 0, 1, n)
    assert substitution_change(f, v, n, "l1") == k * per_query
    f_small = workload(all_datasets(values, n - 1)) if n > 1 else np.zeros((1, k))
    assert removal_change(f, f_small, v, n, "l1") == k * sensitivity("count", "add_remove", 0, 1, n)
