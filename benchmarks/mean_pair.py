"""Design study: a mean from the two bound sums, measured together.

Under add/remove the mean needs the (private) number of rows. Today's release
measures a noisy count ``C``, a centred sum ``S`` and, in a second stage, the sum
about their mean (``MOMENT_WEIGHTS["mean"]``): the three split epsilon, because
one row moves the count by 1 *and* the centred sum by up to ``(b - a) / 2``, and
independent Laplace noise pays for both (an L1 sensitivity of 2 in those units).

The two sums from the bounds, ``P = Σ (x - a)`` and ``Q = Σ (b - x)``, carry the
same information (``(P + Q) / (b - a)`` is the count, ``(P - Q) / 2`` the centred
sum), and one row adds ``(x - a) + (b - x) = b - a`` to them *in all*: the vector
``(P, Q)`` has L1 sensitivity ``b - a``, as either sum alone. One Laplace vector
with that sensitivity measures both at the whole epsilon, no split; the mean is
``a + (b - a) P / (P + Q)``. (In the count and centred-sum coordinates this is the
L-infinity K-norm mechanism of the pair, a 45-degree turn of the L1 ball: noise of
variance ``4 / epsilon**2`` on each, uncorrelated, against ``2 / epsilon_i**2``
with ``epsilon_C + epsilon_S = epsilon``.)

This script releases that prototype with the library's own exact noise
(:func:`pandas_dp.noise_plans.plan_noise` and
:func:`pandas_dp.bounding.apply_noise_exact`, ``bit``, both entries clamped at 0)
on the exact sums, and compares its RMSE with the library's mean (two stages),
the former one-stage mean (1 : 2) and Liu's public-n mean (``method="direct"``,
``neighbouring="substitute"``) on the 27 settings of ``accuracy.py --only
splits`` with bounding ``bit`` (the same data, the seeds ``SEED + r`` of each
setting). It measures values only (no intervals, no grouping): a study for the
design, not a release path.

Run: ``python benchmarks/mean_pair.py [--reps 1000]`` (a few minutes); writes
``results/mean_pair.md``.
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import accuracy as acc  # the splits study's data, seeds and weights override

from pandas_dp.bounding import apply_noise_exact
from pandas_dp.mechanisms import RandomSource
from pandas_dp.noise_plans import plan_noise

RESULTS = Path(__file__).resolve().parent / "results"


@functools.cache
def bound_sums(n: int, shape: str) -> tuple[Fraction, Fraction]:
    """``Σ (x - a)`` and ``Σ (b - x)`` of a data set of the study, exactly."""
    a, b = acc.SPLIT_BOUNDS
    clipped = np.clip(acc.split_data(n, shape).to_numpy(), a, b)
    total = sum((Fraction(float(v)) for v in clipped), Fraction(0))
    return total - n * Fraction(a), n * Fraction(b) - total


def pair_release(x: np.ndarray, epsilon: float, seed: int) -> float:
    """The prototype: ``(P, Q)`` noised as one vector of L1 sensitivity ``b - a``."""
    a, b = acc.SPLIT_BOUNDS
    width = b - a
    p, q = bound_sums(len(x), DATA[id(x)])
    plan = plan_noise(
        np.full(2, width),
        np.zeros(2),
        np.full(2, math.inf),
        epsilon=epsilon,
        bounding="bit",
        joint_l1=1.0,  # one row moves P and Q by b - a in all
    )
    noisy_p, noisy_q = apply_noise_exact([p, q], plan, RandomSource(seed))
    total = noisy_p + noisy_q
    return a + 0.5 * width if total <= 0 else a + width * noisy_p / total


def library_release(x: np.ndarray, epsilon: float, seed: int, weights: tuple[float, ...]) -> float:
    """The library's add/remove mean, with ``weights`` for ``MOMENT_WEIGHTS["mean"]``."""
    s = acc.split_data(len(x), DATA[id(x)])
    with acc.weights_override(acc.study_weights("mean", weights)):
        return float(
            s.dp.mean(
                epsilon=epsilon,
                bounds=acc.SPLIT_BOUNDS,
                bounding="bit",
                neighbouring="add_remove",
                random_state=seed,
            )
        )


def liu_release(x: np.ndarray, epsilon: float, seed: int) -> float:
    """Liu's public-n mean (the frame's length declared public)."""
    s = acc.split_data(len(x), DATA[id(x)])
    return float(
        s.dp.mean(
            epsilon=epsilon,
            bounds=acc.SPLIT_BOUNDS,
            bounding="bit",
            neighbouring="substitute",
            method="direct",
            random_state=seed,
        )
    )


DATA: dict[int, str] = {}  # id of a data array -> its shape (to fetch the Series)


def rmse(errors: list[float]) -> tuple[float, float]:
    """RMSE and its Monte-Carlo standard error (delta method)."""
    sq = np.square(np.asarray(errors))
    r = math.sqrt(sq.mean())
    return r, float(sq.std(ddof=1) / math.sqrt(sq.size) / (2 * r)) if r > 0 else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=1000)
    args = parser.parse_args()
    start = time.perf_counter()
    two_stage = acc.current_weights("mean")
    methods = {
        "pair (prototype)": pair_release,
        f"two stages {acc.wtext(two_stage)} (today)": lambda x, e, s: library_release(
            x, e, s, two_stage
        ),
        "one stage 1:2 (before)": lambda x, e, s: library_release(x, e, s, (1.0, 2.0, 0.0)),
        "Liu, public n": liu_release,
    }
    rows = []
    ratios: dict[str, list[float]] = {k: [] for k in methods}
    for shape in acc.SPLIT_DATA["mean"]:
        for n in acc.SPLIT_N:
            x = acc.split_data(n, shape).to_numpy()
            DATA[id(x)] = shape
            truth = float(x.mean())
            for eps in acc.SPLIT_EPSILONS:
                got = {}
                for name, release in methods.items():
                    errors = [release(x, eps, acc.SEED + r) - truth for r in range(args.reps)]
                    got[name] = rmse(errors)
                pair = got["pair (prototype)"][0]
                for name in methods:
                    ratios[name].append(got[name][0] / pair)
                rows.append(
                    [shape, n, f"{eps:g}"]
                    + [f"{acc.fmt(r)} ± {acc.fmt(se, 2)}" for r, se in got.values()]
                    + [f"{got[name][0] / pair:.3f}" for name in list(methods)[1:3]]
                )
                print(shape, n, eps, {k: round(v[0], 5) for k, v in got.items()}, file=sys.stderr)
    names = list(methods)
    summary = [
        [name, f"{min(r):.3f}", f"{float(np.exp(np.mean(np.log(r)))):.3f}", f"{max(r):.3f}"]
        for name, r in ratios.items()
        if name != names[0]
    ]
    text = "\n".join(
        [
            "# Design study: the mean from the two bound sums\n",
            f"`python benchmarks/mean_pair.py --reps {args.reps}` "
            f"({time.perf_counter() - start:.0f} s). Bounds [0, 100], add/remove, bounding bit, "
            "the data and seeds of "
            "`accuracy.py --only splits`; RMSE ± Monte-Carlo SE. *Pair*: `(Σ (x - a), Σ (b - x))`"
            " noised as one Laplace vector of L1 sensitivity `b - a` at the whole epsilon, "
            "mean `a + (b - a) P / (P + Q)` (a prototype with the library's exact noise, "
            "not a release path). Ratios: RMSE over the pair's (above 1: the pair is more "
            "accurate).\n",
            acc.table(["data", "n", "ε", *names, f"{names[1]} / pair", f"{names[2]} / pair"], rows),
            "",
            "RMSE over the pair's, over the 27 settings:\n",
            acc.table(["release", "lowest", "geometric mean", "highest"], summary),
            "",
        ]
    )
    print(text)
    (RESULTS / "mean_pair.md").write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
