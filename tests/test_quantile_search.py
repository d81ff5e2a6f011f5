"""Quantiles by exact permute-and-flip on a grid (stats.quantiles.search, mechanisms.selection).

* the sampler draws exactly permute-and-flip's distribution (chi-square against the
  distribution computed in closed form);
* the ``quantile_score`` row of the sensitivity table, proven by brute force over
  neighbouring datasets (both relations, units with up to 3 rows) and attained;
* the empirical privacy loss of the median on worst-case neighbours;
* recursion: non-decreasing, inside the bounds, accurate at a large epsilon.
"""

from __future__ import annotations

import decimal
import itertools
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import pandas_dp  # noqa: F401  (registers the accessor)
from pandas_dp import PrivacyBudget
from pandas_dp.noise.mechanisms import RandomSource, selection
from pandas_dp.noise.mechanisms.selection import flip_coins, permute_and_flip, selection_rate
from pandas_dp.plan.sensitivity import sensitivity
from pandas_dp.stats.quantiles.releases import SELECT_BINS, default_bins
from pandas_dp.stats.quantiles.search import (
    PILE_TRIM,
    TRIM_CAP,
    half_cells,
    ladder_counts,
    ladder_edges,
    levels,
    quantile_scores,
    score_rational,
    select_quantiles,
)

# ----------------------------------------------------------------------------- the sampler


def pf_distribution(gaps: list[int], rate: float) -> np.ndarray:
    """Permute-and-flip's output distribution, exactly: a candidate wins when its coin
    lands heads and it comes first among the heads (uniform over the heads)."""
    p = np.exp(-rate * np.asarray(gaps, dtype=float))
    out = []
    for i in range(len(p)):
        others = np.array([1.0])
        for k in range(len(p)):
            if k != i:
                others = np.convolve(others, [1.0 - p[k], p[k]])
        out.append(p[i] * float(np.sum(others / np.arange(1, others.size + 1))))
    return np.array(out)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("gaps", "rate"), [([0, 1, 2, 3, 0, 5, 1, 7], 0.7), ([4, 0, 2, 9], 2.5), ([0, 1], 0.05)]
)
def test_sampler_draws_permute_and_flip_exactly(gaps: list[int], rate: float) -> None:
    """Chi-square goodness of fit, 60,000 draws: false-alarm rate 1e-4 per case."""
    r = selection_rate(rate)
    want = pf_distribution(gaps, float(r))
    src = RandomSource(11)
    draws = 60_000
    got = np.bincount([permute_and_flip(gaps, r, src) for _ in range(draws)], minlength=len(gaps))
    assert stats.chisquare(got, want * draws).pvalue > 1e-4


@pytest.mark.slow
@pytest.mark.parametrize(
    ("gaps", "rate"), [([0, 1, 2, 3, 0, 5, 1, 7], 0.7), ([0, 9, 9, 9, 9], 0.3)]
)
def test_a_first_block_keeps_the_distribution(
    monkeypatch: pytest.MonkeyPatch, gaps: list[int], rate: float
) -> None:
    """A list long enough for a first block (here 3 places, from 4 candidates): the
    block decides some draws and the rest the others, and the draws still follow
    permute-and-flip's distribution (chi-square, 60,000 draws, false-alarm rate
    1e-4 per case)."""
    monkeypatch.setattr(selection, "BLOCK", 3)
    monkeypatch.setattr(selection, "BLOCK_FROM", 4)
    r = selection_rate(rate)
    want = pf_distribution(gaps, float(r))
    src = RandomSource(13)
    draws = 60_000
    decided = 0
    real = selection.flip_coins

    def counted(g: np.ndarray, rate: selection.Rate, s: RandomSource) -> np.ndarray:
        nonlocal decided
        heads = real(g, rate, s)
        decided += g.size <= 3 and bool(heads.any())
        return heads

    monkeypatch.setattr(selection, "flip_coins", counted)
    got = np.bincount([permute_and_flip(gaps, r, src) for _ in range(draws)], minlength=len(gaps))
    assert 0.05 * draws < decided < 0.95 * draws  # both ways of deciding were taken
    assert stats.chisquare(got, want * draws).pvalue > 1e-4


@pytest.mark.slow
def test_first_places_are_a_uniform_ordered_sample() -> None:
    """The first two places of the random order: every ordered pair of distinct
    candidates equally likely (chi-square, 40,000 samples, false-alarm rate 1e-4)."""
    src = RandomSource(14)
    pairs = []
    for _ in range(40_000):
        v = selection._first_places(5, 12, src)
        assert v.size == np.unique(v).size
        pairs.append(5 * int(v[0]) + int(v[1]))
    got = np.bincount(pairs, minlength=25)
    assert got[[6 * i for i in range(5)]].sum() == 0  # never the same one twice
    off = np.delete(got, [6 * i for i in range(5)])
    assert stats.chisquare(off).pvalue > 1e-4


@pytest.mark.slow
def test_sampler_test_has_power() -> None:
    """The same test rejects the exponential mechanism's distribution (which differs)."""
    gaps, r = [0, 1, 2, 3, 0, 5, 1, 7], selection_rate(0.7)
    w = np.exp(-float(r) * np.asarray(gaps, dtype=float))
    em = w / w.sum()
    src = RandomSource(12)
    got = np.bincount([permute_and_flip(gaps, r, src) for _ in range(60_000)], minlength=8)
    assert stats.chisquare(got, em * 60_000).pvalue < 1e-4


@pytest.mark.parametrize("gap", [1, 3, 40, 700])
def test_coins_land_heads_with_their_probability(gap: int) -> None:
    """200,000 coins of one gap: heads within 5 standard errors of exp(-rate gap)
    (false-alarm rate below 1e-6 per case)."""
    r = selection_rate(0.01)
    p = math.exp(-float(r) * gap)
    heads = flip_coins(np.full(200_000, gap, dtype=np.uint64), r, RandomSource(21)).sum()
    assert abs(heads - 200_000 * p) <= 5 * math.sqrt(200_000 * p * (1 - p)) + 1


class _Leads(RandomSource):
    """A seeded source whose first word's four 16-bit quarters are all ``lead``."""

    def __init__(self, lead: int, seed: int) -> None:
        super().__init__(seed)
        self.first: int | None = lead * 0x0001_0001_0001_0001

    def bits(self, size: int) -> np.ndarray:
        out = super().bits(size).copy()
        if self.first is not None:
            out[0], self.first = np.uint64(self.first), None
        return out


@pytest.mark.parametrize(("gap", "rate"), [(5, 0.3), (1, 2.0**-20), (37, 0.125)])
def test_a_coin_its_first_bits_leave_open_is_finished_exactly(gap: int, rate: float) -> None:
    """With the first 16 bits equal to p's first 16 digits, the coin is heads
    exactly when the further bits are below p's further digits: checked against a
    60-digit decimal exponential for each of 300 uniforms, and in frequency."""
    r = selection_rate(rate)
    x = gap * r.s / 2**r.j
    ctx = decimal.Context(prec=60)
    p = ctx.exp(-ctx.divide(decimal.Decimal(gap * r.s), decimal.Decimal(2**r.j)))
    d = int(p * 2**16)
    rest = p * 2**16 - d  # P(heads | first bits = d)
    heads = []
    for seed in range(300):
        src = _Leads(d, seed)
        got = flip_coins(np.array([gap], dtype=np.uint64), r, src)[0]
        w = int(RandomSource(seed).bits(2)[1])  # the word the coin read next
        assert got == (decimal.Decimal(w) / 2**64 < rest), (seed, x)
        heads.append(got)
    assert abs(np.mean(heads) - float(rest)) <= 5 * math.sqrt(float(rest * (1 - rest)) / 300) + 0.01


@pytest.mark.slow
def test_coins_whose_digits_are_uncertain_are_finished_exactly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With every leading digit treated as uncertain, every coin goes the exact
    decimal way, and permute-and-flip's distribution is unchanged (chi-square,
    20,000 draws, false-alarm rate 1e-4)."""
    monkeypatch.setattr(selection, "_MARGIN", 0.5)
    gaps, r = [4, 0, 2, 9], selection_rate(0.4)
    want = pf_distribution(gaps, float(r))
    src = RandomSource(13)
    got = np.bincount([permute_and_flip(gaps, r, src) for _ in range(20_000)], minlength=4)
    assert stats.chisquare(got, want * 20_000).pvalue > 1e-4


def test_rate_is_never_above_the_request() -> None:
    for rate in (1e-9, 0.1, 1 / 3, 0.5, 1.0, 7.3, 1e5, 2.0**20, 1e9):
        r = selection_rate(rate)
        assert float(r) <= rate
        assert float(r) >= min(rate, 2.0**20) * (1 - 2.0**-23)
    for bad in (0.0, -1.0, math.inf, math.nan, 1e-13):
        with pytest.raises(ValueError, match="selection rate"):
            selection_rate(bad)


def test_huge_gaps_are_handled() -> None:
    """Gaps far beyond the float digits' range are still exact (and practically never win)."""
    gaps = np.array([0, 2**50, 2**62, 3], dtype=np.int64)
    src = RandomSource(3)
    wins = {permute_and_flip(gaps, selection_rate(1.0), src) for _ in range(200)}
    assert wins <= {0, 3} and 0 in wins


def test_sampler_refuses_bad_gaps() -> None:
    for gaps in ([], [1, 2], [0.0, 1.0], [-1, 0]):
        with pytest.raises(ValueError, match="gaps"):
            permute_and_flip(np.asarray(gaps), selection_rate(1.0), RandomSource(0))


# ----------------------------------------------------------------------------- the score row


def scores(values: list[int], bins: int, p: int, q: int) -> np.ndarray:
    """The selection's scores at every candidate ``0 .. bins - 1``, from the library
    (units of ``1 / (PILE_TRIM q)``); checked against the definition below, in exact
    fractions. A value is a bin ``k`` of the grid twice as fine (``0 .. 2 bins - 3``):
    just below candidate ``(k + 1) // 2`` if ``k`` is odd, at or just above it if even."""
    fine = np.bincount(np.asarray(values, dtype=int), minlength=2 * (bins - 1))
    got = quantile_scores(half_cells(fine, bins - 1), p, q)
    v = np.asarray(values, dtype=int)
    cell = (v + 1) // 2
    n = v.size
    want = []
    for j in range(bins):
        a, c = int((cell < j).sum()), int((cell == j).sum())
        cut = min(Fraction(c, PILE_TRIM), Fraction(TRIM_CAP))  # ranks off each end
        lo, hi = a + cut, a + c - cut  # the cell's ranks, trimmed
        rank = Fraction(p * n, q)
        dist = max(Fraction(0), lo - rank, rank - hi)  # in ranks
        opendp = abs((q - p) * a - p * (n - a - c))  # the cell's values on neither side
        want.append(min(dist * q * PILE_TRIM, opendp * PILE_TRIM))
    assert got.tolist() == want
    return got


@pytest.mark.parametrize("alpha", [0.5, 0.25, 0.1, 0.9, 1.0, 0.0, 2 / 3])
@pytest.mark.parametrize("k", [1, 2, pytest.param(3, marks=pytest.mark.slow)])
def test_quantile_score_row_by_enumeration(alpha: float, k: int) -> None:
    """Every dataset of up to 3 values on a 3-edge grid (4 half cells), every neighbour (one unit of
    up to ``k`` rows added/removed, or changed): the largest change of the score at
    any edge, in units of ``1/q`` (the scores' units are ``1 / (PILE_TRIM q)``), is the
    table's row times ``k`` -- and is attained (the bound is tight)."""
    p, q = score_rational(alpha)
    bins = 3
    worst = {"add_remove": 0.0, "substitute": 0.0}
    halves = range(2 * (bins - 1))
    datasets = [
        list(c) for n in range(4) for c in itertools.combinations_with_replacement(halves, n)
    ]
    units = [
        list(c) for m in range(1, k + 1) for c in itertools.combinations_with_replacement(halves, m)
    ]
    for base in datasets:
        s0 = scores(base, bins, p, q)
        for unit in units:
            s1 = scores(base + unit, bins, p, q)
            move = float(np.abs(s1 - s0).max()) / (q * PILE_TRIM)
            worst["add_remove"] = max(worst["add_remove"], move)
            for other in units:
                if len(other) == len(unit):
                    s2 = scores(base + other, bins, p, q)
                    move = float(np.abs(s2 - s1).max()) / (q * PILE_TRIM)
                    worst["substitute"] = max(worst["substitute"], move)
    for relation, seen in worst.items():
        bound = sensitivity("quantile_score", relation, p / q, k=k)
        assert seen <= bound + 1e-12, (relation, seen, bound)
        assert seen == pytest.approx(bound), (relation, seen, bound)


def test_score_rationals() -> None:
    assert score_rational(0.5) == (1, 2)
    assert score_rational(0.3) == (3, 10)
    p, q = score_rational(math.pi / 4)
    assert abs(p / q - math.pi / 4) < 2.0**-32 and q <= 2**16


# ----------------------------------------------------------------------------- privacy


def medians(values: list[float], draws: int, seed: int, eps: float, bins: int = 20) -> np.ndarray:
    """``draws`` selected median edges (``0 .. bins``) of ``values`` on ``bins`` bins of [0, 10]."""
    fine = np.bincount(
        np.minimum((np.asarray(values) / 10 * 2 * bins).astype(int), 2 * bins - 1),
        minlength=2 * bins,
    )
    counts = half_cells(fine, bins)
    src = RandomSource(seed)
    # the accessor's split: the selection gets 1 - INTERVAL_SHARE of epsilon; here all
    return np.array([select_quantiles(counts, (0.5,), eps, 1.0, src)[0] for _ in range(draws)])


def loss_pvalue(a: np.ndarray, b: np.ndarray, eps: float, bins: int) -> float:
    """Smallest exact binomial p-value of "log p_A / p_B <= eps" over outputs, both ways
    (Bonferroni over the outputs seen)."""
    ca = np.bincount(a, minlength=bins + 1)
    cb = np.bincount(b, minlength=bins + 1)
    used = (ca + cb) > 0
    pi0 = math.exp(eps) / (1 + math.exp(eps))
    p1 = stats.binom.sf(ca[used] - 1, ca[used] + cb[used], pi0)
    p2 = stats.binom.sf(cb[used] - 1, ca[used] + cb[used], pi0)
    return float(min(p1.min(), p2.min())) * 2 * int(used.sum())


@pytest.mark.slow
def test_privacy_worst_case_neighbours() -> None:
    """A row added where it moves the median: the output distributions of the
    selection satisfy epsilon-DP (exact conditional binomial tests on Poisson-many
    draws; false-alarm rate 1e-4). The test can fail: selections run at epsilon = 8
    are rejected as epsilon = 1."""
    a = [(i + 0.5) / 2 for i in range(20)]  # one value per bin: every row moves the median
    b = [*a, 9.9]
    eps = 1.0
    rng = np.random.default_rng(0)
    ra = medians(a, int(rng.poisson(30_000)), 1, eps)
    rb = medians(b, int(rng.poisson(30_000)), 2, eps)
    assert loss_pvalue(ra, rb, eps, 20) >= 1e-4
    loud_a = medians(a, 5_000, 3, 8.0)
    loud_b = medians(b, 5_000, 4, 8.0)
    assert loss_pvalue(loud_a, loud_b, eps, 20) < 1e-4


# ----------------------------------------------------------------------------- recursion


def test_recursion_levels_and_order() -> None:
    assert [levels(n) for n in (1, 2, 3, 7, 8)] == [1, 2, 2, 3, 4]
    rng = np.random.default_rng(5)
    counts = half_cells(np.bincount(rng.integers(0, 128, 200), minlength=128), 64)
    src = RandomSource(9)
    for _ in range(200):
        got = select_quantiles(counts, (0.1, 0.25, 0.5, 0.75, 0.9), 0.3, 1.0, src)
        assert (np.diff(got) >= 0).all() and got.min() >= 0 and got.max() <= 64


@pytest.mark.slow
def test_privacy_of_the_recursion_on_a_point_mass() -> None:
    """Quartiles of data piled on three points, and the same with one more row on one:
    the recursion's split of the pile (noisy counts set the coins' bias) keeps the
    joint output of the three selections epsilon-DP (exact conditional binomial
    tests over the outputs seen, Bonferroni; false-alarm rate 1e-4). Run at
    epsilon = 16 the same outputs are rejected as epsilon = 1 (the test's power: with
    the trimmed score, in units of 1/8, epsilon = 12 is not loud enough to be told
    apart in 4,000 draws; at 16 over 12,000 the p-value is about 1e-11 to 1e-15)."""
    cells = np.zeros((8, 2), dtype=np.int64)
    cells[:, 1] = [8, 0, 0, 8, 0, 0, 8, 0]  # (at the edges: in their cells' upper halves)
    other = cells.copy()
    other[0, 1] += 1

    def outputs(counts: np.ndarray, draws: int, seed: int, eps: float) -> np.ndarray:
        src = RandomSource(seed)
        got = [select_quantiles(counts, (0.25, 0.5, 0.75), eps, 1.0, src) for _ in range(draws)]
        return np.array([int(a) * 64 + int(b) * 8 + int(c) for a, b, c in got])

    rng = np.random.default_rng(1)
    ra = outputs(cells, int(rng.poisson(20_000)), 5, 1.0)
    rb = outputs(other, int(rng.poisson(20_000)), 6, 1.0)
    assert loss_pvalue(ra, rb, 1.0, 511) >= 1e-4
    loud = outputs(cells, 12_000, 7, 16.0), outputs(other, 12_000, 8, 16.0)
    assert loss_pvalue(*loud, 1.0, 511) < 1e-4


@pytest.mark.parametrize(
    ("count", "share"),
    [
        (1, 0.3),
        pytest.param(70, 0.5, marks=pytest.mark.slow),
        pytest.param(1000, 0.1, marks=pytest.mark.slow),
        pytest.param(200, 0.97, marks=pytest.mark.slow),
    ],
)
def test_biased_split_is_binomial(count: int, share: float) -> None:
    """The pile's split at probability ``share`` (a multiple of 2**-16): Binomial
    exactly (chi-square over 20,000 draws, false-alarm rate 1e-4); 0 and 1 exact."""
    from pandas_dp.stats.quantiles.search import SPLIT_BITS, _biased_split

    m = round(share * 2**SPLIT_BITS)
    src = RandomSource(count + m)
    got = np.array([_biased_split(count, m, src) for _ in range(20_000)])
    p = stats.binom.pmf(np.arange(count + 1), count, m / 2**SPLIT_BITS)
    keep = p * 20_000 >= 20
    observed = np.bincount(got, minlength=count + 1)
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(p[keep], p[~keep].sum()) * 20_000
    if exp[-1] < 1e-9:
        obs, exp = obs[:-1], exp[:-1]
    assert stats.chisquare(obs, exp).pvalue > 1e-4
    assert _biased_split(count, 0, src) == 0 and _biased_split(count, 2**SPLIT_BITS, src) == count


@pytest.mark.parametrize("count", [1, 63, 64, 65, 1000])
def test_fair_split_is_binomial(count: int) -> None:
    """The pile's split: Binomial(count, 1/2) exactly (chi-square over 20,000 draws,
    false-alarm rate 1e-4), only ``count`` of the random bits counted."""
    from pandas_dp.stats.quantiles.search import _fair_split

    src = RandomSource(count)
    got = np.array([_fair_split(count, src) for _ in range(20_000)])
    assert got.min() >= 0 and got.max() <= count
    support = np.arange(count + 1)
    p = stats.binom.pmf(support, count, 0.5)
    keep = p * 20_000 >= 20
    observed = np.bincount(got, minlength=count + 1)
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(p[keep], p[~keep].sum()) * 20_000
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    assert stats.chisquare(obs, exp).pvalue > 1e-4


@pytest.mark.parametrize(
    ("values", "want", "spread"),
    [
        (np.full(10_000, 3.0), [3.0, 3.0, 3.0], 0.0),
        (np.repeat(np.arange(11.0), 1000), [2.0, 5.0, 8.0], 0.0),
        (np.r_[np.zeros(9000), np.full(1000, 5.0)], [0.0, 0.0, 0.0], 0.0),
        (np.r_[np.zeros(3000), np.full(7000, 9.0)], [0.0, 9.0, 9.0], 0.0),
        # the 75 % quantile falls among 4000 spread values (0.002 apart): within its
        # rank noise, 0.25 (about 125 ranks; with fair coins it came out near 2.0)
        (np.r_[np.zeros(6000), np.linspace(1.0, 9.0, 4000)], [0.0, 0.0, 3.9988], 0.25),
    ],
)
def test_values_piled_on_points_give_those_points(
    values: np.ndarray, want: list[float], spread: float
) -> None:
    """Integer, constant and zero-inflated columns of 10**4 values: the quartiles are
    the points the values sit on (within half a grid step), every time, not anywhere
    in the gap around them (the audit's finding: medians of a constant 3.0 spread
    over [0.6, 6] at any n). (At n = 1000 a quartile may still land in a gap: its
    rank is then about 25 values from the pile's end, within the selection's noise.)

    The piles holding the median far from their middle (30 % zeros and 70 % nines;
    60 % zeros) are split between the recursion's sides in proportion, from noisy
    counts: with fair coins instead the 25 % quantile of the first came out 9."""
    x = pd.Series(values)
    step = 10 / SELECT_BINS
    for seed in range(5):
        got = x.dp.quantile([0.25, 0.5, 0.75], epsilon=1.0, bounds=(0, 10), random_state=seed)
        gap = np.abs(got.to_numpy() - np.asarray(want))
        assert gap.max() <= step / 2 + 1e-12 + spread, (seed, got.tolist())
        m = x.dp.median(epsilon=1.0, bounds=(0, 10), random_state=seed)
        assert abs(m - want[1]) <= step / 2 + 1e-12
        lo, hi = m.attrs["dp"].interval(0.05)
        assert lo <= np.median(values) <= hi


def test_ladder_partitions_the_grid() -> None:
    counts = np.arange(40)
    edges = ladder_edges(np.array([5, 30]), 40)
    assert edges[0] == 0 and edges[-1] == 40 and (np.diff(edges) > 0).all()
    assert {4, 5, 6, 29, 30, 31} <= set(edges.tolist())
    assert ladder_counts(counts, edges).sum() == counts.sum()


def test_accuracy_at_large_epsilon() -> None:
    x = pd.Series(np.random.default_rng(2).normal(50, 10, 50_000))
    qs = [0.05, 0.25, 0.5, 0.75, 0.95]
    got = x.dp.quantile(qs, epsilon=5.0, bounds=(0, 100), random_state=4)
    assert np.abs(got.to_numpy() - np.quantile(x, qs)).max() < 0.1
    assert got.is_monotonic_increasing


def test_release_charges_once_and_records_the_method() -> None:
    budget = PrivacyBudget(epsilon=1.0)
    x = pd.Series(np.random.default_rng(2).uniform(0, 10, 1000))
    out = x.dp.quantile([0.25, 0.5, 0.75], epsilon=0.6, bounds=(0, 10), budget=budget)
    assert budget.spent[0] == pytest.approx(0.6) and len(budget.ledger) == 1
    details = out.attrs["dp"].details
    assert details["method"] == "exponential" and details["bins"] == SELECT_BINS == 128_000
    iv = out.attrs["dp"].interval(0.05)
    assert (iv["lower"] <= out).all() and (out <= iv["upper"]).all()


@pytest.mark.parametrize("method", ["exponential", "tree"])
def test_interval_false_spends_the_whole_budget_on_the_quantiles(method: str) -> None:
    """``interval=False``: one charge of epsilon, all of it on the selection (no
    ladder counts), on a Series, a frame and a group-by; the metadata's interval
    raises and says why. A non-bool is refused before the charge."""
    budget = PrivacyBudget(epsilon=10.0)
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"g": rng.choice(["a", "b"], 500), "x": rng.uniform(0, 10, 500)})
    kw = {"epsilon": 1.0, "bounds": (0, 10), "budget": budget, "method": method}
    outs = [
        df["x"].dp.median(interval=False, **kw),
        df.dp.quantile(["x"], [0.25, 0.75], interval=False, **kw),
        df.dp.groupby("g", keys=["a", "b"]).median("x", interval=False, **kw),
    ]
    assert budget.spent[0] == pytest.approx(3.0) and len(budget.ledger) == 3
    for out in outs:
        meta = out.attrs["dp"]
        if method == "exponential":
            assert list(meta.details["budget_split"].values()) == [1.0]
        with pytest.raises(NotImplementedError, match="interval=False"):
            meta.interval(0.05)
    with_iv = df["x"].dp.median(**kw)
    assert with_iv.attrs["dp"].interval(0.05)[0] <= with_iv
    if method == "exponential":
        assert sorted(with_iv.attrs["dp"].details["budget_split"].values()) == [0.05, 0.95]
    spent = budget.spent[0]
    with pytest.raises(TypeError, match="interval must be True"):
        df["x"].dp.median(interval="no", **kw)
    assert budget.spent[0] == spent


def test_default_bins_depend_on_public_facts_only() -> None:
    from pandas_dp.request.grouping import resolve_grouping

    df = pd.DataFrame({"g": list("ab") * 5, "x": np.arange(10.0)})
    few = resolve_grouping(df, "g", keys=["a", "b"], schema=None)
    some = resolve_grouping(df, "g", keys=[str(k) for k in range(100)], schema=None)
    many = resolve_grouping(df, "g", keys=[str(k) for k in range(10_000)], schema=None)
    assert default_bins("exponential", few) == SELECT_BINS == 128_000
    # 1000 * 2**k cells per group, within GROUPED_CELLS = 2**22 over the groups
    assert default_bins("exponential", some) == 32_000
    assert default_bins("exponential", many) == 1000
    assert default_bins("tree", None) == 1024


def test_compiled_grid_counts_equal_the_numpy_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The numba tally gives the numpy path's integers (edges, clamps, NaN, groups)."""
    from pandas_dp.engines import grid
    from pandas_dp.engines.pandas import Groups

    if grid._compiled() is None:
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(8)
    x = np.concatenate([rng.uniform(-10, 110, 50_000), [np.nan, np.inf, -np.inf, 0.0, 100.0]])
    x[::7] = np.round(x[::7], 1)  # values on bin edges
    s = pd.Series(x)
    x[1::7] = np.round(x[1::7] * 20) / 20 + 0.025  # values on the half cells' edges
    groups = Groups(rng.integers(-1, 4, x.size), 4)
    cases = [(b, g) for b in (3, 2000) for g in (None, groups)]

    def counts() -> list[np.ndarray]:
        return [grid.grid_counts(s, 0.0, 100.0, b, groups=g) for b, g in cases]

    fast = counts()
    monkeypatch.setattr(grid, "_compiled", lambda: None)
    slow = counts()
    for (b, _), f, w in zip(cases, fast, slow, strict=True):
        assert f.shape == w.shape == (f.shape[0], b) and (f == w).all()


def test_half_cells_hold_the_values_just_below_and_at_each_edge() -> None:
    """Per edge j, the values nearest it, split at it: just below (``L_j``) and at
    or just above (``R_j``); the clamped values are in the halves inside the bounds;
    a missing or non-numeric value counts nowhere."""
    from pandas_dp.engines import grid

    x = pd.Series([-5.0, 0.0, 0.24, 0.26, 0.5, 0.74, 0.76, 1.0, 7.0, np.nan, "a"], dtype=object)
    got = half_cells(grid.grid_counts(x, 0.0, 1.0, 4), 2)
    assert got.tolist() == [[[0, 3], [1, 2], [3, 0]]]


def test_unrepresentable_rate_raises_before_the_charge() -> None:
    """A selection rate below what the exact sampler supports is refused before the
    budget is charged (the same release at a usable epsilon goes through)."""
    budget = PrivacyBudget(epsilon=1.0)
    x = pd.Series(np.random.default_rng(2).uniform(0, 10, 100))
    with pytest.raises(ValueError, match="selection rate"):
        x.dp.quantile([0.1, 0.5, 0.9], epsilon=1e-12, bounds=(0, 10), budget=budget)
    assert budget.spent[0] == 0 and len(budget.ledger) == 0
    x.dp.quantile([0.1, 0.5, 0.9], epsilon=0.5, bounds=(0, 10), budget=budget)
    assert len(budget.ledger) == 1


def test_the_trimmed_score_between_the_untrimmed_and_the_midpoint() -> None:
    """The score (units of ``1 / (PILE_TRIM q)``) is at least the untrimmed distance of
    the rank from the cell's ranks, at most that plus the trim ``min(C / PILE_TRIM,
    TRIM_CAP)`` ranks and at most OpenDP's score of the cell; it is 0 wherever the rank
    falls in the pile but for the trims; and for a pile wholly on one side of the rank
    it is the untrimmed distance plus the trim, or OpenDP's if smaller (at the median,
    never: a neighbouring pile is ranked further off)."""
    rng = np.random.default_rng(35)
    for _ in range(200):
        halves = rng.integers(0, 6, (int(rng.integers(2, 30)), 2)) * (rng.random((1, 1)) < 0.5)
        halves[rng.integers(0, halves.shape[0])] += rng.integers(0, 40)  # a pile
        p, q = score_rational(float(rng.choice([0.5, 0.25, 0.9, 0.1])))
        cells = halves.sum(axis=1)
        below = np.concatenate([[0], np.cumsum(cells)])
        n = int(below[-1])
        a = below[:-1]
        pile = np.maximum(np.maximum(q * a - p * n, p * n - q * (a + cells)), 0)
        opendp = PILE_TRIM * np.abs((q - p) * a - p * (n - a - cells))
        got = quantile_scores(halves, p, q)
        assert (got >= PILE_TRIM * pile).all()
        cut = np.minimum(cells, PILE_TRIM * TRIM_CAP)  # the trim, in 1 / PILE_TRIM ranks
        assert (got <= PILE_TRIM * pile + q * cut).all()
        assert (got <= opendp).all()
        middle = (PILE_TRIM * q * a + q * cut <= PILE_TRIM * p * n) & (
            PILE_TRIM * p * n <= PILE_TRIM * q * (a + cells) - q * cut
        )
        assert (got[middle] == 0).all()
        outside = pile > 0
        trimmed = PILE_TRIM * pile + q * cut
        assert (got[outside] == np.minimum(trimmed, opendp)[outside]).all()
        if 2 * p == q:
            assert (got[outside] == trimmed[outside]).all()
    # a pile of 3 values holding the median between piles of 12 and 14 (integer ages):
    # untrimmed, the piles of 12 and 14 are 2 and 1 ranks off; trimmed, 3 and 2
    halves = np.array([[0, 486], [0, 12], [0, 3], [0, 14], [0, 485]])
    assert quantile_scores(halves, 1, 2).tolist() == [240, 48, 0, 32, 256]
    # a large pile holding the 0.9-quantile 159 ranks from its end scores 0 (trimmed by
    # an eighth of it, 1111 ranks off: the empty edges below it, 159 ranks off, won)
    halves = np.array([[0, 89841], [0, 10159]])
    assert quantile_scores(halves, 9, 10).tolist() == [80 * 160, 0]


def test_base_penalty_levels_and_units() -> None:
    """The default grid is the 1,000-cell grid halved 7 times: an edge's level is 7
    less the trailing zero bits of its index (0 on the coarse grid), and a level-l edge
    costs 8 + (l - 1) nats in whole units of score, rounded up."""
    from pandas_dp.stats.quantiles.search import base_penalty, finer_levels, grid_halvings

    assert grid_halvings(SELECT_BINS) == 7 and grid_halvings(1000) == 0
    levels = finer_levels(SELECT_BINS)
    j = np.arange(SELECT_BINS + 1)
    zeros = np.array([(int(k) & -int(k)).bit_length() - 1 if k else 7 for k in j])
    assert levels.tolist() == np.maximum(7 - zeros, 0).tolist()
    assert int((levels == 0).sum()) == 1001  # OpenDP's candidates, every 128th edge
    rate = selection_rate(0.3)
    units = base_penalty(np.arange(8, dtype=np.int8), rate)
    for level, u in enumerate(units.tolist()):
        nats = 0 if level == 0 else 8 + (level - 1)
        assert u * float(rate) >= nats and (u - 1) * float(rate) < nats


def test_huge_epsilon_median_of_one_value_is_its_edge() -> None:
    """At a huge epsilon the base penalty rounds up to one unit of score (a sixteenth
    of a rank at the median), while a coarse edge half a rank from the value scores 8
    units: the value's own (finer) edge wins. (In units of half a rank, before the trim,
    both cost one unit, and the median of a one-value column was uniform over the 1,001
    coarse edges.)"""
    step = 100 / SELECT_BINS
    for values in ([56.3217], [56.3217, 56.3217, 56.3217], [3.0, 56.3217, 70.1]):
        s = pd.Series(values)
        got = {
            float(s.dp.median(epsilon=1e7, bounds=(0, 100), interval=False, random_state=i))
            for i in range(8)
        }
        assert len(got) == 1 and abs(got.pop() - 56.3217) <= step / 2, (values, got)
