"""Tests of :mod:`pandas_dp.stats.constraints`: sum-to-one procedures and PSD repair.

Property tests (hypothesis) check the guarantees on any finite input; exact
checks compare against brute-force solutions of the same optimisation problems;
one statistical test (fixed seed, stated false-alarm rate) checks that the
hierarchical method reduces the error of the leaves.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numpy.typing import NDArray
from scipy import optimize

from pandas_dp.stats import constraints as c

FloatArray = NDArray[np.float64]

# --------------------------------------------------------------------------- strategies

any_float = st.floats(allow_nan=False, allow_infinity=False)
noise_like = st.floats(min_value=-3.0, max_value=3.0, allow_nan=False)
moderate = st.floats(min_value=-10.0, max_value=10.0, allow_nan=False)
huge = st.sampled_from([1e308, -1e308, 1.7e308, -1.7e308, 1e200, 5e-324, -5e-324, 0.0])
elements = st.one_of(noise_like, any_float, huge)


def vectors(
    min_k: int = 1, max_k: int = 12, elems: st.SearchStrategy[float] = elements
) -> st.SearchStrategy[FloatArray]:
    return arrays(np.float64, st.integers(min_k, max_k), elements=elems)


EDGE_CASES = {
    "K=1": [0.3],
    "K=1 negative": [-5.0],
    "K=1 huge": [1e308],
    "K=2": [0.7, 0.6],
    "one huge entry": [1e308, 0.1, -3.0, 0.2],
    "all negative": [-0.1, -2.0, -1e-9],
    "all zero": [0.0, 0.0, 0.0, 0.0],
    "huge magnitude both signs": [1.7e308, -1.7e308, 1.7e308],
    "huge negative": [-1e308, -1e308],
    "subnormal": [5e-324, 5e-324, 0.0],
    "large noise": [312.5, -877.1, 45.0, 1e6],
}


def assert_on_simplex(x: FloatArray, total: float = 1.0) -> None:
    """Float64, every entry in [0, total], each row summing to total within 1e-12."""
    assert x.dtype == np.float64
    assert np.all(x >= 0.0)
    assert np.all(x <= total)
    rows = x.reshape(-1, x.shape[-1])
    for row in rows:
        assert abs(float(np.sum(row)) - total) <= 1e-12 * total
        assert abs(math.fsum(row) - total) <= 1e-12 * total


def simplex_points(max_k: int = 10) -> st.SearchStrategy[FloatArray]:
    """Points on the probability simplex (some entries exactly 0)."""
    weights = arrays(
        np.float64,
        st.integers(1, max_k),
        elements=st.one_of(st.just(0.0), st.floats(min_value=1e-6, max_value=1.0)),
    )
    return weights.filter(lambda w: w.sum() > 0).map(lambda w: w / w.sum())


def hierarchical_from_leaves(noisy_leaves: FloatArray) -> FloatArray:
    """Hierarchical method on any finite leaves; the upper levels are sums of scaled-down
    leaves (so they stay finite) and thus carry noise correlated with the leaves."""
    if noisy_leaves.shape[-1] == 1:  # nothing is noised for one category
        return np.broadcast_to(c.hierarchical_consistency([]), noisy_leaves.shape).copy()
    upper = c.aggregate_levels(noisy_leaves * 2.0**-10)[:-1]
    return c.hierarchical_consistency([*upper, noisy_leaves])


# the four procedures, each as "noisy K-vector -> repaired K-vector"
PROCEDURES: dict[str, Callable[[FloatArray], FloatArray]] = {
    "rescale": c.rescale,
    "project": c.project_simplex,
    "all_but_one": lambda p: c.complete_all_but_one(p[..., :-1]),
    "hierarchical": hierarchical_from_leaves,
}


# --------------------------------------------------------------------------- sum to one


@pytest.mark.parametrize("name", list(PROCEDURES))
@given(p=vectors())
def test_every_procedure_returns_a_probability_vector(name: str, p: FloatArray) -> None:
    out = PROCEDURES[name](p)
    assert out.shape == p.shape
    assert_on_simplex(out)


@pytest.mark.parametrize("name", list(PROCEDURES))
@pytest.mark.parametrize("case", list(EDGE_CASES))
def test_edge_cases(name: str, case: str) -> None:
    p = np.array(EDGE_CASES[case])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow or invalid-value warnings either
        out = PROCEDURES[name](p)
    assert out.shape == p.shape
    assert_on_simplex(out)


@pytest.mark.parametrize("name", list(PROCEDURES))
@given(
    p=st.integers(1, 6).flatmap(
        lambda k: arrays(np.float64, (5, k), elements=st.one_of(noise_like, huge))
    )
)
def test_batches_equal_row_by_row(name: str, p: FloatArray) -> None:
    fn = PROCEDURES[name]
    batch = fn(p)
    assert batch.shape == p.shape
    for row_in, row_out in zip(p, batch, strict=True):
        np.testing.assert_array_equal(fn(row_in), row_out)


@pytest.mark.parametrize("value", [0.3, -2.0, 0.0, 1e308])
@pytest.mark.parametrize("name", ["rescale", "project", "hierarchical"])
def test_single_category_is_one(name: str, value: float) -> None:
    np.testing.assert_array_equal(PROCEDURES[name](np.array([value])), [1.0])


def test_single_category_all_but_one_and_hierarchical() -> None:
    np.testing.assert_array_equal(c.complete_all_but_one([]), [1.0])
    np.testing.assert_array_equal(c.complete_all_but_one(np.empty((3, 0))), np.ones((3, 1)))
    np.testing.assert_array_equal(c.hierarchical_consistency([]), [1.0])


def test_rescale_known_values() -> None:
    np.testing.assert_allclose(c.rescale([0.2, 0.6, -0.4]), [0.25, 0.75, 0.0])
    np.testing.assert_allclose(c.rescale([3.0, 1.0]), [0.5, 0.5])  # clipped to 1 first
    np.testing.assert_array_equal(c.rescale([-1.0, -2.0, 0.0, -3.0]), [0.25] * 4)


@given(p=vectors(elems=st.one_of(noise_like, huge)))
def test_rescale_is_clip_then_divide(p: FloatArray) -> None:
    clipped = np.clip(p, 0.0, 1.0)
    total = clipped.sum()
    expected = clipped / total if total > 0 else np.full(p.size, 1.0 / p.size)
    np.testing.assert_allclose(c.rescale(p), expected, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(
    "fn", [c.rescale, c.project_simplex, c.complete_all_but_one, c.aggregate_levels]
)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_input_raises(fn: Callable[[FloatArray], object], bad: float) -> None:
    with pytest.raises(ValueError, match="NaN or infinite"):
        fn(np.array([0.2, bad, 0.5]))


@pytest.mark.parametrize("fn", [c.rescale, c.project_simplex])
def test_empty_and_scalar_input_raise(fn: Callable[[object], object]) -> None:
    with pytest.raises(ValueError, match="at least one category"):
        fn(np.array([]))
    with pytest.raises(ValueError, match="scalar"):
        fn(0.5)


# --------------------------------------------------------------------------- projection


def brute_force_projection(p: FloatArray) -> FloatArray:
    """Exact QP by enumerating the supports: on support S, x = p - tau, tau fixed by sum 1."""
    best, best_dist = None, math.inf
    for size in range(1, p.size + 1):
        for support in itertools.combinations(range(p.size), size):
            idx = list(support)
            tau = (p[idx].sum() - 1.0) / size
            x = np.zeros_like(p)
            x[idx] = p[idx] - tau
            if np.all(x >= 0.0):
                dist = float(np.sum((x - p) ** 2))
                if dist < best_dist:
                    best, best_dist = x, dist
    assert best is not None
    return best


@given(p=vectors(max_k=7, elems=moderate))
def test_projection_matches_brute_force_qp(p: FloatArray) -> None:
    np.testing.assert_allclose(c.project_simplex(p), brute_force_projection(p), atol=1e-9)


@given(p=vectors(max_k=40, elems=st.one_of(moderate, noise_like)))
def test_projection_kkt_conditions(p: FloatArray) -> None:
    """x = max(p - tau, 0): one tau with p_i - x_i = tau on the support, p_i <= tau off it."""
    x = c.project_simplex(p)
    support = x > 0
    assert support.any()
    tau = float(np.mean(p[support] - x[support]))
    scale = max(1.0, float(np.abs(p).max()))
    np.testing.assert_allclose(p[support] - x[support], tau, atol=1e-12 * scale * p.size)
    assert np.all(p[~support] <= tau + 1e-12 * scale * p.size)


def test_projection_matches_scipy_slsqp() -> None:
    rng = np.random.default_rng(2024)
    for k in (2, 3, 5, 8):
        for _ in range(5):
            p = rng.normal(1.0 / k, 0.5, size=k)
            fit = optimize.minimize(
                lambda x, p=p: float(np.sum((x - p) ** 2)),
                np.full(k, 1.0 / k),
                jac=lambda x, p=p: 2.0 * (x - p),
                method="SLSQP",
                bounds=[(0.0, 1.0)] * k,
                constraints=[{"type": "eq", "fun": lambda x: float(np.sum(x) - 1.0)}],
                options={"ftol": 1e-14, "maxiter": 500},
            )
            assert fit.success
            np.testing.assert_allclose(c.project_simplex(p), fit.x, atol=1e-6)


@given(x=simplex_points())
def test_projection_leaves_a_simplex_point_unchanged(x: FloatArray) -> None:
    np.testing.assert_allclose(c.project_simplex(x), x, atol=1e-12)
    np.testing.assert_allclose(c.rescale(x), x, atol=1e-12)
    np.testing.assert_allclose(c.complete_all_but_one(x[:-1]), x, atol=1e-12)


@given(p=vectors(max_k=10, elems=st.one_of(moderate, noise_like)), data=st.data())
def test_projection_never_moves_away_from_the_simplex(p: FloatArray, data: st.DataObject) -> None:
    """Projection onto a convex set is non-expansive towards its points (the truth)."""
    weights = data.draw(arrays(np.float64, p.size, elements=st.floats(0.0, 1.0)))
    truth = weights / weights.sum() if weights.sum() > 0 else np.full(p.size, 1.0 / p.size)
    x = c.project_simplex(p)
    assert np.linalg.norm(x - truth) <= np.linalg.norm(p - truth) + 1e-12


def test_projection_known_values() -> None:
    np.testing.assert_allclose(c.project_simplex([0.5, 0.5, 0.5]), [1 / 3] * 3)
    np.testing.assert_array_equal(c.project_simplex([1e308, 0.1, -3.0]), [1.0, 0.0, 0.0])
    np.testing.assert_allclose(c.project_simplex([1e300, 1e300]), [0.5, 0.5])
    np.testing.assert_allclose(c.project_simplex([-1e300, -1e300 + 2e284]), [0.0, 1.0])
    np.testing.assert_allclose(
        c.project_simplex([[2.0, 0.0], [0.3, 0.3]]), [[1.0, 0.0], [0.5, 0.5]]
    )


# --------------------------------------------------------------------------- all but one


@given(head=vectors(min_k=1, max_k=10, elems=st.one_of(moderate, noise_like, huge)))
def test_all_but_one_is_the_documented_repair(head: FloatArray) -> None:
    out = c.complete_all_but_one(head)
    clipped = np.clip(head, 0.0, 1.0)
    if clipped.sum() <= 1.0:
        np.testing.assert_allclose(out[:-1], clipped, atol=1e-12)
        np.testing.assert_allclose(out[-1], 1.0 - clipped.sum(), atol=1e-12)
    else:
        np.testing.assert_allclose(out[:-1], c.project_simplex(head), atol=1e-12)
        assert out[-1] <= 1e-12


@given(head=vectors(min_k=1, max_k=8, elems=moderate), data=st.data())
def test_all_but_one_is_least_squares_on_the_observed_entries(
    head: FloatArray, data: st.DataObject
) -> None:
    """q = out[:-1] is the projection of head onto {q >= 0, sum q <= 1}:
    <q - head, z - q> >= 0 for every z in that set."""
    q = c.complete_all_but_one(head)[:-1]
    w = data.draw(arrays(np.float64, (20, head.size + 1), elements=st.floats(0.0, 1.0)))
    w = np.vstack([w, np.eye(head.size + 1)])  # the vertices of the set, too
    z = (w / np.maximum(w.sum(axis=1, keepdims=True), 1e-300))[:, :-1]
    assert np.all((z - q) @ (q - head) >= -1e-9)


def test_all_but_one_known_values() -> None:
    np.testing.assert_allclose(c.complete_all_but_one([0.2, 0.3]), [0.2, 0.3, 0.5])
    np.testing.assert_allclose(c.complete_all_but_one([0.2, -0.3]), [0.2, 0.0, 0.8])
    np.testing.assert_allclose(c.complete_all_but_one([0.8, 0.6]), [0.6, 0.4, 0.0])
    np.testing.assert_allclose(c.complete_all_but_one([1.7, 0.0]), [1.0, 0.0, 0.0])


# --------------------------------------------------------------------------- the tree


@pytest.mark.parametrize(
    ("k", "b", "h"),
    [
        (1, 2, 0),
        (2, 2, 1),
        (3, 2, 2),
        (4, 2, 2),
        (5, 2, 3),
        (8, 2, 3),
        (9, 2, 4),
        (9, 3, 2),
        (10, 3, 3),
        (1000, 10, 3),
        (1001, 10, 4),
    ],
)
def test_noised_levels(k: int, b: int, h: int) -> None:
    assert c.noised_levels(k, b) == h


@given(k=st.integers(1, 3000), b=st.integers(2, 9))
def test_noised_levels_is_the_ceiling_log(k: int, b: int) -> None:
    h = c.noised_levels(k, b)
    assert b**h >= k
    assert h == 0 or b ** (h - 1) < k


@pytest.mark.parametrize(("k", "b"), [(0, 2), (3, 1), (True, 2), (2.5, 2)])
def test_tree_arguments_are_checked(k: object, b: object) -> None:
    with pytest.raises((ValueError, TypeError)):
        c.noised_levels(k, b)  # type: ignore[arg-type]


@given(k=st.integers(1, 70), b=st.integers(2, 5), data=st.data())
def test_tree_levels_describe_aggregate_levels(k: int, b: int, data: st.DataObject) -> None:
    leaves = data.draw(arrays(np.float64, k, elements=st.floats(0.0, 1.0)))
    maps = c.tree_levels(k, b)
    levels = c.aggregate_levels(leaves, b)
    assert len(maps) == len(levels) == c.noised_levels(k, b)
    for d, (node_of, values) in enumerate(zip(maps, levels, strict=True)):
        assert node_of.shape == (k,)
        assert np.all(np.diff(node_of) >= 0)  # contiguous blocks
        np.testing.assert_allclose(np.bincount(node_of, weights=leaves), values, atol=1e-12)
        if d > 0:  # parent of node j is node j // b one level up, for every leaf
            np.testing.assert_array_equal(maps[d - 1], node_of // b)
    if maps:
        np.testing.assert_array_equal(maps[-1], np.arange(k))
        assert np.unique(maps[0]).size <= b  # the root's children


@st.composite
def noisy_trees(
    draw: st.DrawFn, elems: st.SearchStrategy[float] = noise_like
) -> tuple[list[FloatArray], int]:
    k = draw(st.integers(2, 30))
    b = draw(st.integers(2, 4))
    sizes = [int(x.max()) + 1 for x in c.tree_levels(k, b)]
    return [draw(arrays(np.float64, n, elements=elems)) for n in sizes], b


@given(tree=noisy_trees(elems=st.one_of(noise_like, any_float, huge)))
def test_hierarchical_output_is_a_probability_vector(tree: tuple[list[FloatArray], int]) -> None:
    levels, b = tree
    out = c.hierarchical_consistency(levels, b)
    assert out.shape == levels[-1].shape
    assert_on_simplex(out)


@given(tree=noisy_trees(), root=st.floats(0.5, 1e4))
def test_consistent_children_sum_to_parents(
    tree: tuple[list[FloatArray], int], root: float
) -> None:
    levels, b = tree
    est = c.consistent_levels(levels, b, root=root)
    assert [x.shape for x in est] == [x.shape for x in levels]
    tol = 1e-10 * (root + max(float(np.abs(x).sum()) for x in levels))
    assert abs(float(est[0].sum()) - root) <= tol
    for parent, children in itertools.pairwise(est):
        idx = np.arange(children.size) // b
        np.testing.assert_allclose(np.bincount(idx, weights=children), parent, atol=tol)
    out = c.hierarchical_consistency(levels, b, root=root)
    assert np.all((out >= 0) & (out <= root))
    assert abs(float(out.sum()) - root) <= 1e-12 * root


@given(
    k=st.integers(1, 40),
    b=st.integers(2, 4),
    data=st.data(),
)
def test_hierarchical_with_zero_noise_returns_the_exact_leaves(
    k: int, b: int, data: st.DataObject
) -> None:
    w = data.draw(arrays(np.float64, k, elements=st.one_of(st.just(0.0), st.floats(1e-3, 1.0))))
    exact = w / w.sum() if w.sum() > 0 else np.full(k, 1.0 / k)
    levels = c.aggregate_levels(exact, b)
    np.testing.assert_allclose(c.hierarchical_consistency(levels, b), exact, atol=1e-12)
    for got, want in zip(c.consistent_levels(levels, b), levels, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-12)


def generalised_least_squares(
    levels: list[FloatArray], b: int, root: float, variances: FloatArray
) -> list[FloatArray]:
    """The constrained GLS estimate, by brute-force linear algebra.

    Minimise sum_d ||A_d t - x_d||^2 / var_d over the leaves t subject to sum(t) = root,
    via the KKT system; A_d aggregates the leaves into the nodes of level d.
    """
    k = levels[-1].size
    maps = c.tree_levels(k, b)
    mats = [np.eye(int(m.max()) + 1)[:, m] for m in maps]
    gram = sum(a.T @ a / v for a, v in zip(mats, variances, strict=True))
    rhs = sum(a.T @ x / v for a, x, v in zip(mats, levels, variances, strict=True))
    kkt = np.block([[gram, np.ones((k, 1))], [np.ones((1, k)), np.zeros((1, 1))]])
    solution = np.linalg.solve(kkt, np.append(rhs, root))
    return [a @ solution[:k] for a in mats]


@given(
    tree=noisy_trees(),
    root=st.floats(0.5, 2.0),
    unequal=st.booleans(),
    data=st.data(),
)
def test_consistent_levels_is_the_constrained_least_squares_estimate(
    tree: tuple[list[FloatArray], int], root: float, unequal: bool, data: st.DataObject
) -> None:
    levels, b = tree
    h = len(levels)
    variances = (
        np.array(data.draw(st.lists(st.floats(0.1, 10.0), min_size=h, max_size=h)))
        if unequal
        else np.ones(h)
    )
    got = c.consistent_levels(levels, b, root=root, variances=list(variances) if unequal else None)
    want = generalised_least_squares(levels, b, root, variances)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, atol=1e-9)


def test_hay_weights_on_a_full_binary_tree() -> None:
    """By hand, Hay et al.'s formulas for 4 leaves (b = 2, root fixed at 1)."""
    x1 = np.array([0.2, 0.7])
    x2 = np.array([0.25, -0.2, 0.3, 0.45])
    # bottom-up, height 2: z = (4 - 2)/(4 - 1) x + (2 - 1)/(4 - 1) (sum of children)
    z1 = 2 / 3 * x1 + 1 / 3 * np.array([x2[0] + x2[1], x2[2] + x2[3]])
    # top-down: the root's gap split evenly, then each node's gap split evenly
    u1 = z1 + (1.0 - z1.sum()) / 2
    u2 = x2 + np.repeat((u1 - np.array([x2[0] + x2[1], x2[2] + x2[3]])) / 2, 2)
    got = c.consistent_levels([x1, x2])
    np.testing.assert_allclose(got[0], u1, atol=1e-15)
    np.testing.assert_allclose(got[1], u2, atol=1e-15)


def test_hierarchical_batches() -> None:
    rng = np.random.default_rng(5)
    exact = rng.dirichlet(np.ones(11))
    levels = [x + rng.normal(0, 0.05, (7, 3, x.size)) for x in c.aggregate_levels(exact, 3)]
    batch = c.hierarchical_consistency(levels, 3)
    assert batch.shape == (7, 3, 11)
    assert_on_simplex(batch)
    one = c.hierarchical_consistency([x[4, 1] for x in levels], 3)
    np.testing.assert_allclose(batch[4, 1], one, atol=1e-15)


def test_hierarchical_argument_errors() -> None:
    good = c.aggregate_levels(np.full(5, 0.2))
    with pytest.raises(ValueError, match=r"\[2, 3, 5\] nodes"):
        c.hierarchical_consistency(good[1:])
    with pytest.raises(ValueError, match="branching=3"):
        c.hierarchical_consistency(good, branching=3)
    with pytest.raises(ValueError, match="leading shape"):
        c.hierarchical_consistency([good[0], good[1], np.tile(good[2], (2, 1))])
    with pytest.raises(ValueError, match="variances"):
        c.hierarchical_consistency(good, variances=[1.0, 1.0])
    with pytest.raises(ValueError, match="variances"):
        c.hierarchical_consistency(good, variances=[1.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="root"):
        c.hierarchical_consistency(good, root=0.0)
    with pytest.raises(ValueError, match="NaN or infinite"):
        c.hierarchical_consistency([good[0], np.array([0.1, np.nan, 0.3]), good[2]])


@pytest.mark.slow
def test_hierarchical_averaging_reduces_the_error_of_the_leaves() -> None:
    """Statistical test, fixed seed.

    16 categories, binary tree (4 noised levels), Laplace noise of scale 0.01 on
    every node, R = 4000 independent trees.

    1. The linear consistent leaves have covariance sigma^2 M M^T with M the (exact)
       linear map of the estimator; their empirical mean squared error must match
       that within 4.9 standard errors (two-sided normal approximation: false-alarm
       rate about 1e-6) and lie below the leaf level's own variance sigma^2.
    2. After the final repair, the hierarchical leaves beat the leaf level alone
       (projected onto the simplex): a one-sided z-test of "no improvement" at level
       1e-6 (z > 4.75) on the per-tree difference of squared errors. The expected z
       is about 60, so a correct implementation fails it with probability < 1e-100.
    """
    rng = np.random.default_rng(20240611)
    k, b, scale, reps = 16, 2, 0.01, 4000
    truth = rng.dirichlet(np.ones(k))
    exact = c.aggregate_levels(truth, b)
    sizes = [x.size for x in exact]
    noisy = [x + rng.laplace(0.0, scale, (reps, x.size)) for x in exact]
    sigma2 = 2.0 * scale**2

    # 1. linear estimator: exact variance from its matrix (columns: unit impulses)
    offset = np.concatenate(c.consistent_levels([np.zeros(n) for n in sizes], b))
    basis = np.eye(sum(sizes))
    cuts = np.cumsum(sizes)[:-1]
    cols = [np.concatenate(c.consistent_levels(np.split(e, cuts), b)) - offset for e in basis]
    leaf_map = np.array(cols).T[-k:]
    theory = sigma2 * float(np.mean(np.sum(leaf_map**2, axis=1)))
    assert theory < 0.7 * sigma2  # the averaging helps, without any sampling

    linear = c.consistent_levels(noisy, b)[-1]
    per_tree = np.mean((linear - truth) ** 2, axis=1)
    se = float(per_tree.std(ddof=1)) / math.sqrt(reps)
    assert abs(float(per_tree.mean()) - theory) <= 4.9 * se
    raw = np.mean((noisy[-1] - truth) ** 2, axis=1)
    assert float(per_tree.mean()) < float(raw.mean())

    # 2. repaired: hierarchical vs the leaf level alone, both on the simplex
    hier = np.sum((c.hierarchical_consistency(noisy, b) - truth) ** 2, axis=1)
    leaf_only = np.sum((c.project_simplex(noisy[-1]) - truth) ** 2, axis=1)
    diff = leaf_only - hier
    z = float(diff.mean()) / (float(diff.std(ddof=1)) / math.sqrt(reps))
    assert z > 4.75
    # and the repair itself never moves the estimate away from the truth
    assert np.all(hier <= np.sum((linear - truth) ** 2, axis=1) + 1e-15)


# --------------------------------------------------------------------------- PSD repair


def symmetric_matrices(
    elems: st.SearchStrategy[float] = moderate, max_m: int = 6
) -> st.SearchStrategy[FloatArray]:
    return st.integers(1, max_m).flatmap(
        lambda m: arrays(np.float64, (m, m), elements=elems).map(lambda a: a / 2 + a.T / 2)
    )


def random_psd(rng: np.random.Generator, m: int, rank: int | None = None) -> FloatArray:
    g = rng.normal(size=(m, rank or m))
    return np.asarray(g @ g.T)


def random_correlation(rng: np.random.Generator, m: int) -> FloatArray:
    return c.cov_to_corr(random_psd(rng, m, rank=int(rng.integers(1, m + 1))))


def min_eigenvalue(a: FloatArray) -> float:
    return float(np.linalg.eigvalsh(a).min()) if a.size else 0.0


def noisy_correlation(rng: np.random.Generator, m: int, noise: float) -> FloatArray:
    a = random_correlation(rng, m) + rng.laplace(0.0, noise, (m, m))
    a = (a + a.T) / 2
    np.fill_diagonal(a, 1.0)
    return a


@settings(deadline=None)
@given(a=symmetric_matrices(st.one_of(moderate, noise_like)))
def test_nearest_psd_is_psd(a: FloatArray) -> None:
    x = c.nearest_psd(a)
    np.testing.assert_array_equal(x, x.T)
    assert min_eigenvalue(x) >= -1e-10


@settings(deadline=None)
@given(a=symmetric_matrices(st.one_of(any_float, huge)))
def test_nearest_psd_with_any_finite_input(a: FloatArray) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the result itself may overflow
        x = c.nearest_psd(a)
    if np.all(np.isfinite(x)):
        scale = max(1.0, float(np.abs(a).max()))
        assert min_eigenvalue(x / scale) >= -1e-10


def test_nearest_psd_is_idempotent_and_keeps_psd_input() -> None:
    rng = np.random.default_rng(1)
    for m, rank in [(1, 1), (3, 3), (5, 2), (8, 8)]:
        a = random_psd(rng, m, rank)
        x = c.nearest_psd(a)
        np.testing.assert_allclose(x, a, atol=1e-12 * np.abs(a).max())
        np.testing.assert_allclose(c.nearest_psd(x), x, atol=1e-12 * np.abs(a).max())
        noisy = a + rng.normal(0, 1, (m, m))
        y = c.nearest_psd(noisy)
        np.testing.assert_allclose(c.nearest_psd(y), y, atol=1e-12 * np.abs(y).max())


def test_nearest_psd_is_the_nearest() -> None:
    """Variational inequality <X - A, Z - X> >= 0 for every PSD Z (sampled), and the
    distance equals the norm of the negative eigenvalues."""
    rng = np.random.default_rng(7)
    for m in (2, 4, 6):
        a = rng.normal(size=(m, m))
        a = (a + a.T) / 2
        x = c.nearest_psd(a)
        neg = np.linalg.eigvalsh(a)
        assert np.linalg.norm(x - a) == pytest.approx(np.linalg.norm(neg[neg < 0]), rel=1e-10)
        for _ in range(200):
            z = random_psd(rng, m, rank=int(rng.integers(1, m + 1)))
            assert float(np.sum((x - a) * (z - x))) >= -1e-10


def test_nearest_psd_symmetrises() -> None:
    a = np.array([[1.0, 0.4], [0.0, 1.0]])
    np.testing.assert_allclose(c.nearest_psd(a), [[1.0, 0.2], [0.2, 1.0]])


def test_higham_example() -> None:
    a = np.array([[2, -1, 0, 0], [-1, 2, -1, 0], [0, -1, 2, -1], [0, 0, -1, 2]], dtype=float)
    want = [
        [1.0000, -0.8084, 0.1916, 0.1068],
        [-0.8084, 1.0000, -0.6562, 0.1916],
        [0.1916, -0.6562, 1.0000, -0.8084],
        [0.1068, 0.1916, -0.8084, 1.0000],
    ]
    np.testing.assert_allclose(c.nearest_correlation(a), want, atol=5e-5)


def assert_correlation_matrix(x: FloatArray) -> None:
    np.testing.assert_array_equal(np.diag(x), 1.0)
    np.testing.assert_array_equal(x, x.T)
    assert np.all(np.abs(x) <= 1.0)
    assert min_eigenvalue(x) >= -1e-10


@settings(deadline=None, max_examples=60)
@given(a=symmetric_matrices(st.one_of(moderate, noise_like)))
def test_nearest_correlation_is_a_correlation_matrix(a: FloatArray) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        x = c.nearest_correlation(a)
    assert_correlation_matrix(x)


def test_nearest_correlation_is_nearer_than_clipping_then_rescaling() -> None:
    rng = np.random.default_rng(11)
    for m in (3, 5, 8):
        a = noisy_correlation(rng, m, 0.4)
        assert min_eigenvalue(a) < 0  # a genuinely broken input
        x = c.nearest_correlation(a)
        clipped = c.cov_to_corr(c.nearest_psd(a))
        assert_correlation_matrix(x)
        assert np.linalg.norm(x - a) < np.linalg.norm(clipped - a)


def test_nearest_correlation_optimality() -> None:
    """<X - A, Z - X> >= 0 for sampled correlation matrices Z (X is the minimiser)."""
    rng = np.random.default_rng(3)
    for m in (3, 6):
        a = noisy_correlation(rng, m, 0.5)
        x = c.nearest_correlation(a, tol=1e-12, max_iter=20000)
        for _ in range(300):
            z = random_correlation(rng, m)
            assert float(np.sum((x - a) * (z - x))) >= -1e-7


def test_nearest_correlation_keeps_a_correlation_matrix() -> None:
    rng = np.random.default_rng(4)
    r = random_correlation(rng, 5)
    np.testing.assert_allclose(c.nearest_correlation(r), r, atol=1e-10)


def test_nearest_correlation_weights() -> None:
    rng = np.random.default_rng(8)
    a = noisy_correlation(rng, 4, 0.5)
    plain = c.nearest_correlation(a)
    heavy = c.nearest_correlation(a, weights=[10.0, 1.0, 1.0, 1.0])
    assert_correlation_matrix(heavy)
    # the heavily weighted variable's correlations move less
    assert np.abs(heavy[0] - a[0]).sum() < np.abs(plain[0] - a[0]).sum()
    np.testing.assert_allclose(c.nearest_correlation(a, weights=[3.0] * 4), plain, atol=1e-12)


def test_nearest_correlation_large_entries() -> None:
    """Entries far outside [-1, 1] converge slowly (iterations grow with the magnitude)."""
    a = np.array([[1.0, 1e3, -3.0], [1e3, 1.0, 0.5], [-3.0, 0.5, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = c.nearest_correlation(a, max_iter=50_000)
    assert_correlation_matrix(x)
    np.testing.assert_allclose(x, [[1, 1, -1], [1, 1, -1], [-1, -1, 1]], atol=1e-6)


def test_nearest_correlation_absurd_entries_still_give_a_correlation_matrix() -> None:
    """Far outside [-1, 1] the iteration cannot converge in time; no overflow though."""
    a = np.array([[1.0, 1e250, -3.0], [1e250, 1.0, 0.5], [-3.0, 0.5, 1.0]])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x = c.nearest_correlation(a, max_iter=50)
    assert [str(w.message)[:36] for w in caught] == ["nearest_correlation did not converge"]
    assert_correlation_matrix(x)


def test_nearest_correlation_warns_when_not_converged() -> None:
    rng = np.random.default_rng(9)
    a = noisy_correlation(rng, 6, 0.8)
    with pytest.warns(RuntimeWarning, match="did not converge"):
        x = c.nearest_correlation(a, max_iter=2)
    assert_correlation_matrix(x)  # still a valid correlation matrix


def test_nearest_correlation_argument_errors() -> None:
    a = np.eye(3)
    with pytest.raises(ValueError, match="tol"):
        c.nearest_correlation(a, tol=0.0)
    with pytest.raises(ValueError, match="max_iter"):
        c.nearest_correlation(a, max_iter=0)
    with pytest.raises(ValueError, match="weights"):
        c.nearest_correlation(a, weights=[1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match="weights"):
        c.nearest_correlation(a, weights=[1.0, 1.0])
    with pytest.raises(ValueError, match="square"):
        c.nearest_correlation(np.ones((2, 3)))
    with pytest.raises(ValueError, match="NaN or infinite"):
        c.nearest_psd([[1.0, np.nan], [np.nan, 1.0]])


def test_empty_matrix() -> None:
    for fn in (c.nearest_psd, c.nearest_correlation, c.cov_to_corr, c.nearest_psd_covariance):
        assert fn(np.zeros((0, 0))).shape == (0, 0)


# --------------------------------------------------------------------------- covariance


def noisy_covariance(rng: np.random.Generator, m: int) -> FloatArray:
    sd = rng.uniform(0.5, 3.0, m)
    cov = random_correlation(rng, m) * np.outer(sd, sd)
    noise = rng.laplace(0.0, 0.8, (m, m))
    noisy = cov + (noise + noise.T) / 2
    np.fill_diagonal(noisy, np.maximum(np.diag(cov) + rng.laplace(0.0, 0.1, m), 0.0))
    return noisy


@pytest.mark.parametrize("method", ["clip", "higham"])
def test_nearest_psd_covariance_is_psd(method: str) -> None:
    rng = np.random.default_rng(12)
    for m in (2, 4, 7):
        noisy = noisy_covariance(rng, m)
        x = c.nearest_psd_covariance(noisy, method)
        np.testing.assert_array_equal(x, x.T)
        assert min_eigenvalue(x) >= -1e-10 * np.abs(x).max()
        if method == "higham":
            np.testing.assert_array_equal(np.diag(x), np.diag(noisy))
        else:
            np.testing.assert_array_equal(x, c.nearest_psd(noisy))
            assert np.all(np.diag(x) >= np.diag(noisy) - 1e-12)


def test_nearest_psd_covariance_keeps_a_valid_covariance() -> None:
    rng = np.random.default_rng(13)
    cov = random_psd(rng, 5)
    for method in ("clip", "higham"):
        np.testing.assert_allclose(c.nearest_psd_covariance(cov, method), cov, atol=1e-9)


def test_higham_covariance_zero_and_negative_variances() -> None:
    cov = np.array(
        [
            [4.0, 5.0, 1.0, 0.3],
            [5.0, 1.0, 0.2, -0.1],
            [1.0, 0.2, 0.0, 0.5],
            [0.3, -0.1, 0.5, -0.2],
        ]
    )
    x = c.nearest_psd_covariance(cov, "higham")
    np.testing.assert_array_equal(np.diag(x), [4.0, 1.0, 0.0, 0.0])
    np.testing.assert_array_equal(x[2:, :], 0.0 * x[2:, :])
    np.testing.assert_array_equal(x[:, 2:], 0.0 * x[:, 2:])
    assert x[0, 1] == pytest.approx(2.0)  # correlation 2.5 repaired to 1
    assert min_eigenvalue(x) >= -1e-10


def test_nearest_psd_covariance_bad_method() -> None:
    with pytest.raises(ValueError, match=r"'clip'.*'higham'"):
        c.nearest_psd_covariance(np.eye(2), "eigen")


@given(a=st.integers(1, 6).flatmap(lambda m: arrays(np.float64, (m, m), elements=elements)))
def test_cov_to_corr_bounds(a: FloatArray) -> None:
    x = c.cov_to_corr(a)
    np.testing.assert_array_equal(np.diag(x), 1.0)
    np.testing.assert_array_equal(x, x.T)
    assert np.all(np.abs(x) <= 1.0)
    dead = np.diag(a) <= 0
    off = ~np.eye(a.shape[0], dtype=bool)
    assert np.all(x[dead][:, :][off[dead]] == 0.0)


def test_cov_to_corr_of_psd_is_psd_correlation() -> None:
    rng = np.random.default_rng(14)
    for m in (2, 5, 9):
        cov = random_psd(rng, m, rank=int(rng.integers(1, m + 1)))
        cov[0, :] = cov[:, 0] = 0.0  # a constant variable
        x = c.cov_to_corr(cov)
        assert_correlation_matrix(x)
        np.testing.assert_array_equal(x[0, 1:], 0.0)
        sd = np.sqrt(np.diag(cov)[1:])
        np.testing.assert_allclose(x[1:, 1:], cov[1:, 1:] / np.outer(sd, sd), atol=1e-12)


# ----------------------------------------------------------------------------- isotonic


@settings(max_examples=200, deadline=None)
@given(arrays(np.float64, st.integers(1, 60), elements=st.floats(-1e6, 1e6)))
def test_isotonic_is_the_least_squares_non_decreasing_fit(y: FloatArray) -> None:
    """Against scipy's isotonic regression (an independent implementation)."""
    fit = c.isotonic(y)
    assert np.all(np.diff(fit) >= 0)
    want = optimize.isotonic_regression(y).x
    np.testing.assert_allclose(fit, want, rtol=1e-9, atol=1e-6)


def test_isotonic_compiled_and_python_scans_agree_to_the_bit() -> None:
    """Noisy cumulative counts, as a tree's quantiles fit them (4095 entries)."""
    pytest.importorskip("numba")
    from pandas_dp.stats.constraints import monotone

    kernel = monotone._compiled()
    assert kernel is not None
    rng = np.random.default_rng(5)
    for _ in range(20):
        y = np.cumsum(rng.poisson(2.0, 4095) + rng.laplace(0.0, 3.0, 4095))
        means, weights, blocks = kernel(y)
        compiled = np.repeat(means[:blocks], weights[:blocks])
        python = monotone._isotonic_python(y)
        assert np.array_equal(compiled, python)
        assert blocks < y.size  # the noise made it pool
