"""Budget split of ``df.dp.cov``'s moments plan, chosen by measurement.

The plan measures one complete-row count, ``p`` centred sums, ``p`` centred
squares and ``p(p-1)/2`` cross-products; ``MOMENT_WEIGHTS["cov"]`` gives each
entry a budget weight. This study releases the 4 x 4 covariance of
``benchmarks/accuracy.py``'s two data shapes (correlated, and piled next to the
lower bound) on [-1, 1], n = 1000, epsilon = 1, add/remove, ``--reps`` times per
candidate weighting (seeds 5000, 5001, ...), and reports the Frobenius RMSE with
its Monte-Carlo standard error and each candidate's worst ratio to the best
candidate of a shape (minimax regret, the criterion of the other splits).

Run: ``python benchmarks/cov_weights.py [--reps 1000]`` (about 5 minutes).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import accuracy as acc  # the covariance data of the accuracy study

import pandas_dp.stats.numeric

CANDIDATES: dict[str, tuple[float, float, float, float]] = {
    "1:1:1:1 (equal)": (1, 1, 1, 1),
    "1:1:1:1.5": (1, 1, 1, 1.5),
    "1:1:1.2:1.5": (1, 1, 1.2, 1.5),
    "1:1.2:1.2:1.7": (1, 1.2, 1.2, 1.7),
    "1:1:1.5:1.5": (1, 1, 1.5, 1.5),
    "1:1:2:2": (1, 1, 2, 2),
    "1:1:3:3": (1, 1, 3, 3),
    "1:2:2:2": (1, 2, 2, 2),
}
STATS = ("count", "centred_sum", "centred_squares", "cross_products")


@contextmanager
def cov_weights(weights: Mapping[str, float]) -> Iterator[None]:
    """Use ``weights`` as ``MOMENT_WEIGHTS["cov"]`` inside the block."""
    table = pandas_dp.stats.numeric.MOMENT_WEIGHTS
    saved = table["cov"]
    table["cov"] = dict(weights)
    try:
        yield
    finally:
        table["cov"] = saved


def frobenius(shape: str, weights: Mapping[str, float], reps: int) -> tuple[float, float]:
    """Frobenius RMSE of ``reps`` releases and its standard error (delta method)."""
    frame = acc.cov_data(1000, shape)
    cols = list(acc.COV_COLUMNS)
    truth = frame[cols].cov().to_numpy()
    with cov_weights(weights):
        sq = np.array(
            [
                np.sum(
                    (
                        frame.dp.cov(
                            cols, epsilon=1.0, bounds=acc.COV_BOUNDS, random_state=5000 + r
                        ).to_numpy()
                        - truth
                    )
                    ** 2
                )
                for r in range(reps)
            ]
        )
    rmse = float(np.sqrt(sq.mean()))
    return rmse, float(sq.std(ddof=1) / np.sqrt(reps) / (2 * rmse))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--markdown", type=Path, default=acc.RESULTS / "cov_weights.md")
    args = ap.parse_args(argv)
    shapes = acc.COV_DATA
    got = {
        (name, shape): frobenius(shape, dict(zip(STATS, w, strict=True)), args.reps)
        for name, w in CANDIDATES.items()
        for shape in shapes
    }
    best = {shape: min(got[name, shape][0] for name in CANDIDATES) for shape in shapes}
    lines = [
        "# Budget split of the covariance's moments plan\n",
        f"`python benchmarks/cov_weights.py --reps {args.reps}`: 4 x 4 on [-1, 1], n = 1000, "
        "epsilon = 1, add/remove; Frobenius RMSE ± Monte-Carlo SE. Weights per entry: "
        "count : centred sum : centred square : cross-product.\n",
        "| weights | " + " | ".join(shapes) + " | worst ratio to the best |",
        "|---|" + "---|" * (len(shapes) + 1),
    ]
    for name in CANDIDATES:
        cells = [f"{got[name, s][0]:.4f} ± {got[name, s][1]:.4f}" for s in shapes]
        worst = max(got[name, s][0] / best[s] for s in shapes)
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {worst:.3f} |")
    current = tuple(pandas_dp.stats.numeric.MOMENT_WEIGHTS["cov"][k] for k in STATS)
    lines.append(f"\nThe library's weights: {':'.join(f'{v:g}' for v in current)}.")
    text = "\n".join(lines) + "\n"
    print(text)
    args.markdown.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
