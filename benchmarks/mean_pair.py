"""The add/remove mean's measurement, chosen by measurement: the two bound sums.

Under add/remove the mean needs the (private) number of rows. A mean from a noisy
count ``C`` and centred sum ``S`` splits epsilon between them, because one row
moves the count by 1 *and* the centred sum by up to ``(b - a) / 2``, and
independent Laplace noise pays for both (an L1 sensitivity of 2 in those units);
the two-stage mean adds the sum about the first stage's mean (2:1:13, the former
default, still the truncated mode's).

The two sums from the bounds, ``P = Σ (x - a)`` and ``Q = Σ (b - x)``, carry the
same information (``(P + Q) / (b - a)`` is the count, ``(P - Q) / 2`` the centred
sum), and one row adds ``(x - a) + (b - x) = b - a`` to them *in all*: the vector
``(P, Q)`` has L1 sensitivity ``b - a``, as either sum alone. One Laplace vector
with that sensitivity measures both at the whole epsilon; the mean is
``a + (b - a) P / (P + Q)``. (In the count and centred-sum coordinates this is the
L-infinity K-norm mechanism of the pair, the L1 ball turned by 45 degrees: noise
of variance ``4 / epsilon**2`` on each, uncorrelated, against ``2 / epsilon_i**2``
with ``epsilon_C + epsilon_S = epsilon``.)

This script releases the library's mean (the bound sums, the default since this
study), the two stages and the one-stage 1 : 2 (the weights overridden: a plan
measures what its weights name) and Liu's public-n mean (``method="direct"``,
``neighbouring="substitute"``) on the 27 settings of ``accuracy.py --only
splits`` with bounding ``bit`` (the same data, the seeds ``SEED + r``).

Run: ``python benchmarks/mean_pair.py [--reps 1000]`` (about a minute); writes
``results/mean_pair.md``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

import accuracy as acc  # the splits study's data, seeds and weights override

RESULTS = Path(__file__).resolve().parent / "results"


def release(
    s: pd.Series,
    epsilon: float,
    seed: int,
    weights: tuple[float, ...] | None = None,
    **public: Any,
) -> float:
    """One bit-bounded mean of ``s`` on the study's bounds: the library's add/remove
    mean; with ``weights`` (count : centred sum : recentred sum) for
    ``MOMENT_WEIGHTS["mean"]`` instead of the bound sums; ``public`` for Liu's."""
    override = acc.study_weights("mean", weights) if weights is not None else {}
    kw = {"neighbouring": "add_remove", **public}
    with acc.weights_override(override):
        mean = s.dp.mean(
            epsilon=epsilon, bounds=acc.SPLIT_BOUNDS, bounding="bit", random_state=seed, **kw
        )
    return float(mean)


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
    methods: dict[str, Callable[[pd.Series, float, int], float]] = {
        "bound sums (default)": release,
        f"two stages {acc.wtext(two_stage)}": partial(release, weights=two_stage),
        "one stage 1:2 (before)": partial(release, weights=(1.0, 2.0, 0.0)),
        "Liu, public n": partial(release, neighbouring="substitute", method="direct"),
    }
    rows = []
    ratios: dict[str, list[float]] = {k: [] for k in methods}
    for shape in acc.SPLIT_DATA["mean"]:
        for n in acc.SPLIT_N:
            x = acc.split_data(n, shape)
            truth = float(x.mean())
            for eps in acc.SPLIT_EPSILONS:
                got = {}
                for name, method in methods.items():
                    errors = [method(x, eps, acc.SEED + r) - truth for r in range(args.reps)]
                    got[name] = rmse(errors)
                pair = got["bound sums (default)"][0]
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
            "# The add/remove mean's measurement: the two bound sums\n",
            f"`python benchmarks/mean_pair.py --reps {args.reps}` "
            f"({time.perf_counter() - start:.0f} s). Bounds [0, 100], add/remove, bounding bit, "
            "the data and seeds of "
            "`accuracy.py --only splits`; RMSE ± Monte-Carlo SE. *Bound sums*: "
            "`(Σ (x - a), Σ (b - x))` noised as one Laplace vector of L1 sensitivity `b - a` "
            "at the whole epsilon, mean `a + (b - a) P / (P + Q)` (the library's default "
            "`s.dp.mean`). Ratios: RMSE over the bound sums' (above 1: the bound sums are "
            "more accurate).\n",
            acc.table(
                ["data", "n", "ε", *names, f"{names[1]} / bound sums", f"{names[2]} / bound sums"],
                rows,
            ),
            "",
            "RMSE over the bound sums', over the 27 settings:\n",
            acc.table(["release", "lowest", "geometric mean", "highest"], summary),
            "",
        ]
    )
    print(text)
    (RESULTS / "mean_pair.md").write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
