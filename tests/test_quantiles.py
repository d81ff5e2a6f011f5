"""Quantiles on a public grid (pandas_dp.stats.quantiles.releases, engines.grid_counts, Plan.grid).

Statistical tests state their false-alarm rate; every random draw is seeded, so a
test gives the same answer on every run.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import pandas_dp  # noqa: F401  (registers the accessor)
from pandas_dp import PrivacyBudget, engines
from pandas_dp.errors import MissingBoundsError
from pandas_dp.noise.bounding import apply_noise
from pandas_dp.noise.mechanisms import RandomSource
from pandas_dp.noise.plans import NoisePlan
from pandas_dp.plan.plans import Plan
from pandas_dp.request.settings import Settings
from pandas_dp.stats.quantiles.estimators import INTERVAL_SHARE
from pandas_dp.stats.quantiles.search import ladder_counts, ladder_edges, ladder_interval
from pandas_dp.stats.quantiles.tree import (
    Tree,
    consistent_leaves,
    quantile_interval,
    read_quantiles,
    tail_width,
    tree_counts,
    weighted_tail_width,
)

RNG = np.random.default_rng(12345)
UNIFORM = pd.Series(RNG.uniform(0, 100, 20_000), name="x")
NORMAL = pd.Series(np.clip(RNG.normal(50, 12, 20_000), 0, 100), name="x")


# ----------------------------------------------------------------------------- accuracy


@pytest.mark.parametrize("data", [UNIFORM, NORMAL], ids=["uniform", "normal"])
def test_accuracy_at_large_epsilon(data: pd.Series) -> None:
    qs = [0.05, 0.25, 0.5, 0.75, 0.95]
    got = data.dp.quantile(qs, epsilon=10.0, bounds=(0, 100), random_state=1)
    want = np.quantile(data, qs)
    # bin width 100/1024 ~ 0.1; the noise at epsilon = 10 moves a rank by a few
    np.testing.assert_allclose(got.to_numpy(), want, atol=0.3)


def test_tree_reads_exact_quantiles_without_noise() -> None:
    """With the exact counts, the read-off is within one bin of np.quantile."""
    tree = Tree(1024, 16)
    leaves = engines.grid_counts(UNIFORM, 0.0, 100.0, 1024)
    exact = tree_counts(leaves, tree).astype(float)
    lv, root = consistent_leaves(exact, tree)
    np.testing.assert_allclose(lv, leaves, atol=1e-6)
    assert root[0] == pytest.approx(len(UNIFORM))
    qs = np.linspace(0, 1, 21)
    got = read_quantiles(lv[0], float(root[0]), qs, 0.0, 100.0)
    np.testing.assert_allclose(got, np.quantile(UNIFORM, qs), atol=100 / 1024)


def test_quantile_list_is_monotone_and_in_given_order() -> None:
    qs = [0.9, 0.1, 0.5, 0.25, 0.75, 0.3]
    for seed in range(20):
        got = NORMAL.head(200).dp.quantile(qs, epsilon=0.1, bounds=(0, 100), random_state=seed)
        assert list(got.index) == qs
        ordered = got.loc[sorted(qs)].to_numpy()
        assert np.all(np.diff(ordered) >= 0)


def test_bounds_are_respected() -> None:
    s = pd.Series([-50.0, 500.0, np.inf, -np.inf] * 10)
    for seed in range(10):
        got = s.dp.quantile([0.0, 0.5, 1.0], epsilon=0.05, bounds=(3, 7), random_state=seed)
        assert ((got >= 3) & (got <= 7)).all()


# ----------------------------------------------------------------------------- shapes


DF = pd.DataFrame(
    {
        "k": ["a", "b"] * 500,
        "x": RNG.uniform(0, 10, 1000),
        "y": RNG.uniform(0, 10, 1000),
    }
)


def test_shapes_like_pandas() -> None:
    kw = {"epsilon": 1.0, "bounds": (0, 10), "random_state": 0}
    one = DF.dp.quantile("x", 0.5, **kw)
    assert isinstance(one, float)
    by_q = DF.dp.quantile("x", [0.25, 0.5], **kw)
    assert list(by_q.index) == [0.25, 0.5] and by_q.name == "x"
    by_col = DF.dp.quantile(["x", "y"], 0.5, **kw)
    assert list(by_col.index) == ["x", "y"] and by_col.name == 0.5
    both = DF.dp.quantile(["x", "y"], [0.25, 0.5], **kw)
    ref = DF[["x", "y"]].quantile([0.25, 0.5])
    assert both.shape == ref.shape and list(both.index) == list(ref.index)
    assert list(both.columns) == list(ref.columns)
    iv = both.attrs["dp"].interval(0.1)
    assert list(iv.index) == [(0.25, "x"), (0.25, "y"), (0.5, "x"), (0.5, "y")]
    assert isinstance(DF["x"].dp.median(**kw), float)
    med = DF.dp.median(["x", "y"], **kw)
    assert med.name is None and list(med.index) == ["x", "y"]


def test_groupby_shapes_like_pandas() -> None:
    g = DF.dp.groupby("k", keys=["a", "b", "c"])
    kw = {"epsilon": 1.0, "bounds": (0, 10), "random_state": 0}
    s = g.quantile("x", 0.5, **kw)
    assert list(s.index) == ["a", "b", "c"] and s.name == "x"
    s2 = g.quantile("x", [0.25, 0.75], **kw)
    ref = DF.groupby("k")["x"].quantile([0.25, 0.75])
    assert list(s2.index)[:4] == list(ref.index)
    assert len(s2) == 6
    f = g.quantile(["x", "y"], [0.25, 0.75], **kw)
    assert f.shape == (6, 2) and list(f.columns) == ["x", "y"]
    assert g.median(["x", "y"], **kw).shape == (3, 2)
    iv = s2.attrs["dp"].interval(0.1)
    assert (iv["lower"] <= iv["upper"]).all() and len(iv) == 6


# ----------------------------------------------------------------------------- robustness


def test_missing_inf_and_junk_never_raise() -> None:
    s = pd.Series([np.nan, np.inf, -np.inf, 1.0, None] * 20, dtype="float64")
    assert 0 <= s.dp.median(epsilon=1.0, bounds=(0, 10), random_state=0) <= 10
    na = pd.Series([1, None, 3] * 20, dtype="Int64")
    assert 0 <= na.dp.median(epsilon=1.0, bounds=(0, 10), random_state=0) <= 10
    empty = pd.Series([], dtype="float64")
    assert 0 <= empty.dp.median(epsilon=1.0, bounds=(0, 10), random_state=0) <= 10
    allnan = pd.Series([np.nan] * 5)
    got = allnan.dp.quantile([0.1, 0.9], epsilon=1.0, bounds=(0, 10), random_state=0)
    assert got.between(0, 10).all()
    junk = pd.Series(["a", 3.0, None, object(), [1], "7", pd.NA, np.inf], dtype=object)
    counts = engines.grid_counts(junk, 0.0, 10.0, 4)
    assert counts.tolist() == [[0, 1, 1, 1]]  # 3.0, "7", inf (clamped to 10)


def test_grid_counts_grouped_equals_per_group() -> None:
    codes = RNG.integers(-1, 3, 1000)
    x = pd.Series(RNG.normal(5, 4, 1000))
    got = engines.grid_counts(x, 0.0, 10.0, 32, groups=engines.Groups(codes, 3))
    for g in range(3):
        one = engines.grid_counts(x[codes == g], 0.0, 10.0, 32)
        assert got[g].tolist() == one[0].tolist()


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("q", "error"),
    [
        (1.5, ValueError),
        (-0.1, ValueError),
        ([], ValueError),
        ("a", TypeError),
        ([0.5, None], TypeError),
    ],
)
def test_bad_q_raises_before_the_charge(q: object, error: type) -> None:
    budget = PrivacyBudget(epsilon=1.0)
    with pytest.raises(error):
        DF.dp.quantile("x", q, epsilon=0.5, bounds=(0, 10), budget=budget)
    with pytest.raises(error):
        DF.dp.groupby("k", keys=["a"]).quantile("x", q, epsilon=0.5, bounds=(0, 10), budget=budget)
    assert budget.spent[0] == 0.0


def test_missing_bounds_and_bad_bins_raise_before_the_charge() -> None:
    budget = PrivacyBudget(epsilon=1.0)
    with pytest.raises(MissingBoundsError):
        DF.dp.quantile("x", 0.5, epsilon=0.5, budget=budget)
    with pytest.raises(MissingBoundsError):
        DF["x"].dp.median(epsilon=0.5, budget=budget)
    for bins in (0, 1, 2.5, True):
        with pytest.raises(ValueError):
            DF.dp.quantile("x", 0.5, epsilon=0.5, bounds=(0, 10), bins=bins, budget=budget)
    with pytest.raises(TypeError):
        DF.dp.quantile("k", 0.5, epsilon=0.5, bounds=(0, 10), budget=budget)
    assert budget.spent[0] == 0.0


def test_one_charge_per_release() -> None:
    budget = PrivacyBudget(epsilon=2.0)
    out = DF.dp.quantile(["x", "y"], [0.1, 0.5, 0.9], epsilon=0.8, bounds=(0, 10), budget=budget)
    assert budget.spent[0] == pytest.approx(0.8)
    assert len(budget.ledger) == 1
    split = out.attrs["dp"].details["budget_split"]
    share = INTERVAL_SHARE
    assert split == {
        "x: grid_selection": pytest.approx(0.4 * (1 - share)),
        "x: interval_counts": pytest.approx(0.4 * share),
        "y: grid_selection": pytest.approx(0.4 * (1 - share)),
        "y: interval_counts": pytest.approx(0.4 * share),
    }
    DF.dp.groupby("k", keys=["a", "b"]).median("x", epsilon=0.5, bounds=(0, 10), budget=budget)
    assert budget.spent[0] == pytest.approx(1.3)
    assert len(budget.ledger) == 2


# ----------------------------------------------------------------------------- sensitivity


def tree_of(values: list[object], tree: Tree, lo: float = 0.0, hi: float = 8.0) -> np.ndarray:
    leaves = engines.grid_counts(pd.Series(values, dtype=object), lo, hi, tree.bins)
    return tree_counts(leaves, tree)[0]


@pytest.mark.parametrize(("bins", "branching"), [(8, 2), (10, 3), (16, 16), (27, 3)])
def test_tree_sensitivity_by_enumeration(bins: int, branching: int) -> None:
    """Neighbours differ by one row: the tree moves by ``levels`` in L1 (add/remove),
    ``2 levels`` (substitute), never more than one per node; checked against the plan."""
    tree = Tree(bins, branching)
    rows: list[object] = [-1.0, 0.0, 0.5, 1.0, 3.999, 4.0, 7.99, 8.0, 9.0, np.inf, np.nan, "z"]
    base_sets = [[], [1.0, 1.0, 6.0], [0.0, 8.0, np.nan, 3.3, 3.3]]
    worst_add = worst_sub = 0.0
    for base, r in itertools.product(base_sets, rows):
        a = tree_of(base, tree)
        d = np.abs(tree_of([*base, r], tree) - a)
        assert d.max() <= 1
        worst_add = max(worst_add, float(d.sum()))
        for i, r2 in itertools.product(range(len(base)), rows):
            changed = list(base)
            changed[i] = r2
            worst_sub = max(worst_sub, float(np.abs(tree_of(changed, tree) - a).sum()))
    assert worst_add == tree.levels
    assert worst_sub == 2 * tree.levels
    for rel, bound in (("add_remove", worst_add), ("substitute", worst_sub)):
        plan = Plan(Settings(1.0, neighbouring=rel))
        m = plan.measurements[plan.grid("x", tree.nodes, tree.levels)]
        assert m.sensitivity * m.joint_l1 >= bound
        assert m.size == tree.nodes


# ----------------------------------------------------------------------------- intervals


def _count_noise(half: int) -> tuple[NoisePlan, np.ndarray]:
    """A calibrated count noise (epsilon 0.7, 3 levels) and its exact pmf on
    ``-half .. half`` (the mass beyond is below 1e-100)."""
    plan = Plan(Settings(0.7))
    key = plan.grid("x", 10, 3)
    plan.calibrate()
    noise = plan.measurements[key].calibrated
    pmf = np.exp(-np.abs(np.arange(-half, half + 1)) / float(noise.scale[0]))
    return noise, pmf / pmf.sum()


def test_tail_width_is_a_valid_bound() -> None:
    """The Chernoff widths bound the upper tail of a sum of k discrete Laplace draws
    (checked against the exact pmf, by convolution)."""
    half = 400
    noise, pmf = _count_noise(half)
    conv = pmf
    for k in range(1, 7):
        if k > 1:
            conv = np.convolve(conv, pmf)
        support = np.arange(-half * k, half * k + 1)
        for alpha in (0.2, 0.05, 0.001):
            w = tail_width(noise, np.array([k]), alpha)[0]
            assert conv[support >= w].sum() <= alpha


@pytest.mark.parametrize("q", [0.5, 0.25, 0.1])
def test_weighted_tail_width_is_a_valid_bound(q: float) -> None:
    """The Chernoff widths bound the upper tail of ``(1 - q) S_L - q S_R``, S_L and S_R
    sums of independent discrete Laplace draws (checked against the exact pmf), and
    are narrower than bounding the two sums apart at half the probability each."""
    half = 300
    noise, pmf = _count_noise(half)
    sums = {1: pmf}
    for k in range(2, 6):
        sums[k] = np.convolve(sums[k - 1], pmf)
    for kl, kr in [(1, 1), (1, 5), (5, 1), (3, 4), (5, 5)]:
        a = np.arange(-half * kl, half * kl + 1)
        b = np.arange(-half * kr, half * kr + 1)
        value = (1 - q) * a[:, None] - q * b[None, :]
        joint = sums[kl][:, None] * sums[kr][None, :]
        for alpha in (0.2, 0.05, 0.001):
            w = weighted_tail_width(noise, (1 - q, q), np.array([[kl], [kr]]), alpha)[0]
            assert joint[value >= w].sum() <= alpha
            apart = (1 - q) * tail_width(noise, np.array([kl]), alpha / 2)[0] + q * tail_width(
                noise, np.array([kr]), alpha / 2
            )[0]
            assert w < apart


def test_ladder_interval_detects_a_too_narrow_band() -> None:
    """The coverage test below has power for the selection's intervals too: the same
    noisy ladders with the noise bound set to zero fail it."""
    x = pd.Series(np.random.default_rng(4).uniform(0, 20, 400))
    truth = float(np.quantile(x, 0.5))
    plan = Plan(Settings(0.05))
    key = plan.derived_counts("x", "interval_counts")
    plan.calibrate()
    noise = plan.measurements[key].calibrated.head(1)
    counts = engines.grid_counts(x, 0.0, 20.0, 256).reshape(-1)
    edges = ladder_edges(np.array([128]), 256)
    exact = ladder_counts(counts, edges).astype(float)
    values = edges * (20.0 / 256)
    src = RandomSource(6)
    hits = narrow = 0
    from pandas_dp.stats.quantiles import search as quantile_search

    real = quantile_search.weighted_tail_width
    for _ in range(300):
        noisy = apply_noise(exact, noise.tiled(exact.size), src)
        lo, hi = ladder_interval(values, noisy, noise, [0.5], 0.1)
        hits += int(lo[0] <= truth <= hi[0])
        quantile_search.weighted_tail_width = lambda n, w, k, a: np.zeros(k.shape[1])  # type: ignore[assignment]
        try:
            lo, hi = ladder_interval(values, noisy, noise, [0.5], 0.1)
        finally:
            quantile_search.weighted_tail_width = real
        narrow += int(lo[0] <= truth <= hi[0])
    assert hits >= coverage_floor(300, 0.9, 1e-4)
    assert narrow < coverage_floor(300, 0.9, 1e-4)


def coverage_floor(releases: int, nominal: float, alpha: float) -> int:
    """The fewest hits a one-sided binomial test of "coverage >= nominal" accepts."""
    return int(stats.binom.ppf(alpha, releases, nominal))


@pytest.mark.parametrize("method", ["exponential", "tree"])
@pytest.mark.parametrize(
    ("mechanism", "neighbouring"),
    [
        ("laplace", "add_remove"),
        pytest.param("gaussian", "add_remove", marks=pytest.mark.slow),
        pytest.param("laplace", "substitute", marks=pytest.mark.slow),
    ],
)
def test_interval_coverage(mechanism: str, neighbouring: str, method: str) -> None:
    """Each 90 % interval covers np.quantile's (linear) quantile in at least 90 % of
    releases: a one-sided exact binomial test, false-alarm rate 1e-4 per test."""
    x = pd.Series(np.clip(np.random.default_rng(3).lognormal(1.5, 0.6, 400), 0, 20))
    qs = [0.1, 0.5, 0.9]
    truth = np.quantile(x, qs)
    hits = np.zeros(len(qs), dtype=int)
    releases = 300
    delta = 1e-6 if mechanism == "gaussian" else 0.0
    for seed in range(releases):
        out = x.dp.quantile(
            qs,
            epsilon=0.5,
            delta=delta,
            mechanism=mechanism,
            neighbouring=neighbouring,
            bounds=(0, 20),
            bins=256,
            method=method,
            random_state=seed,
        )
        iv = out.attrs["dp"].interval(0.1)
        hits += ((iv["lower"] <= truth) & (truth <= iv["upper"])).to_numpy()
    assert (hits >= coverage_floor(releases, 0.9, 1e-4)).all(), hits


def test_interval_detects_a_too_narrow_band() -> None:
    """The coverage test has power: a rank band with a tenth of the widths fails it."""
    x = pd.Series(np.random.default_rng(3).uniform(0, 20, 400))
    tree = Tree(256, 16)
    exact = tree_counts(engines.grid_counts(x, 0.0, 20.0, 256), tree)[0].astype(float)
    plan = Plan(Settings(0.2))
    key = plan.grid("x", tree.nodes, tree.levels)
    plan.calibrate()
    noise = plan.measurements[key].calibrated
    truth = float(np.quantile(x, 0.5))
    hits = narrow = 0
    src = RandomSource(5)
    from pandas_dp.stats.quantiles import tree as quantile_tree

    real = quantile_tree.weighted_tail_width
    for _ in range(300):
        noisy = apply_noise(exact, noise, src)
        lo, hi = quantile_interval(noisy, tree, noise, [0.5], 0.0, 20.0, 0.1)
        hits += int(lo[0] <= truth <= hi[0])
        quantile_tree.weighted_tail_width = lambda n, w, k, a: np.zeros(k.shape[1])  # type: ignore[assignment]
        try:
            lo, hi = quantile_interval(noisy, tree, noise, [0.5], 0.0, 20.0, 0.1)
        finally:
            quantile_tree.weighted_tail_width = real
        narrow += int(lo[0] <= truth <= hi[0])
    assert hits >= coverage_floor(300, 0.9, 1e-4)
    assert narrow < coverage_floor(300, 0.9, 1e-4)


# ----------------------------------------------------------------------------- privacy


def median_releases(values: list[float], draws: int, seed: int, eps: float) -> np.ndarray:
    """``draws`` medians of ``values`` through the plan's tree, noise and read-off."""
    bins, tree = 32, Tree(32, 16)
    plan = Plan(Settings(eps))
    key = plan.grid("x", tree.nodes, tree.levels)
    plan.calibrate()
    noise = plan.measurements[key].calibrated
    exact = tree_counts(engines.grid_counts(pd.Series(values), 0.0, 10.0, bins), tree)[0]
    theta = np.tile(exact.astype(float), draws)
    many = dataclasses_replace_tiled(noise, draws)
    noisy = apply_noise(theta, many, RandomSource(seed)).reshape(draws, tree.nodes)
    leaves, roots = consistent_leaves(noisy, tree)
    return np.array(
        [read_quantiles(leaves[i], float(roots[i]), [0.5], 0.0, 10.0)[0] for i in range(draws)]
    )


def dataclasses_replace_tiled(noise: NoisePlan, times: int) -> NoisePlan:
    """The same per-entry noise for ``times`` independent copies of the vector."""
    return dataclasses.replace(
        noise,
        scale=np.tile(noise.scale, times),
        granularity=np.tile(noise.granularity, times),
        lower=np.tile(noise.lower, times),
        upper=np.tile(noise.upper, times),
    )


def loss_pvalue(a: np.ndarray, b: np.ndarray, eps: float, bins: int = 20) -> float:
    """Smallest exact binomial p-value of "log p_A / p_B <= eps" over bins, both ways."""
    ca = np.bincount(np.minimum((a / 10.0 * bins).astype(int), bins - 1), minlength=bins)
    cb = np.bincount(np.minimum((b / 10.0 * bins).astype(int), bins - 1), minlength=bins)
    used = (ca + cb) > 0
    pi0 = math.exp(eps) / (1 + math.exp(eps))
    p1 = stats.binom.sf(ca[used] - 1, ca[used] + cb[used], pi0)
    p2 = stats.binom.sf(cb[used] - 1, ca[used] + cb[used], pi0)
    return float(min(p1.min(), p2.min())) * 2 * int(used.sum())  # Bonferroni


def test_fast_path_is_the_accessor() -> None:
    values = [2.0] * 5 + [8.0] * 5
    got = pd.Series(values).dp.median(
        epsilon=1.0, bounds=(0, 10), bins=32, method="tree", random_state=7
    )
    assert float(got) == pytest.approx(median_releases(values, 1, 7, 1.0)[0])


@pytest.mark.slow
def test_privacy_worst_case_neighbours() -> None:
    """Median on neighbours differing by one added row that moves it most: the binned
    output distributions satisfy epsilon-DP (exact conditional binomial tests on
    Poisson-many draws, Bonferroni over bins: false-alarm rate 1e-4). The test can
    fail: releases noised for epsilon = 20 are rejected as epsilon = 1."""
    a = [2.0] * 5 + [8.0] * 5
    b = [*a, 8.0]
    eps = 1.0
    draws = int(np.random.default_rng(0).poisson(40_000))
    ra = median_releases(a, draws, 1, eps)
    rb = median_releases(b, int(np.random.default_rng(1).poisson(40_000)), 2, eps)
    assert loss_pvalue(ra, rb, eps) >= 1e-4
    loud_a = median_releases(a, 5_000, 3, 20.0)
    loud_b = median_releases(b, 5_000, 4, 20.0)
    assert loss_pvalue(loud_a, loud_b, eps) < 1e-4


def test_selection_metadata_lists_no_noise_scale() -> None:
    """The selection spends its epsilon choosing an edge; no noise is added to its
    counts, so the metadata gives it no scale (the interval counts keep theirs)."""
    s = pd.Series(np.random.default_rng(0).uniform(0, 100, 500))
    meta = s.dp.median(epsilon=1.0, bounds=(0, 100), random_state=0).attrs["dp"]
    scale = meta.scale
    selection = [k for k in scale.index if k.endswith("grid_selection")]
    counts = [k for k in scale.index if k.endswith("interval_counts")]
    assert len(selection) == len(counts) == 1
    assert np.isnan(scale[selection[0]]) and scale[counts[0]] > 0
    assert "permute-and-flip" in meta.details["noised"][selection[0]]
    assert meta.to_dict()["scale"][selection[0]] is None
