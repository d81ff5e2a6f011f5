"""``python -m pandas_dp``: release a few private statistics of the bundled survey.

Prints each release with its 95 % confidence interval next to the exact value
(which a real release would of course never print), then the budget's ledger.
"""

from __future__ import annotations

import argparse

import pandas as pd

import pandas_dp
from pandas_dp.accessor import DPFrameAccessor
from pandas_dp.datasets import load_survey, survey_schema


def main(argv: list[str] | None = None) -> int:
    """Run the demo; returns the process exit code."""
    parser = argparse.ArgumentParser(prog="python -m pandas_dp", description=__doc__)
    parser.add_argument("--epsilon", type=float, default=3.0, help="total budget (default 3)")
    parser.add_argument("--seed", type=int, default=None, help="reproducible, insecure noise")
    args = parser.parse_args(argv)

    df = load_survey()
    dp = DPFrameAccessor(df)  # the same object as df.dp, spelled so type checkers see it
    schema = survey_schema()
    budget = pandas_dp.PrivacyBudget(epsilon=args.epsilon)
    share = args.epsilon / 6
    rs = args.seed
    print(
        f"pandas-dp {pandas_dp.__version__} -- synthetic survey of {len(df)} people, "
        f"total epsilon {args.epsilon:g}, {share:.3g} per release\n"
    )
    rows = []
    with budget:
        releases = [
            ("rows", dp.len(epsilon=share, random_state=rs), len(df)),
            (
                "mean age",
                dp.mean("age", epsilon=share, schema=schema, random_state=rs),
                df["age"].mean(),
            ),
            (
                "std of age",
                dp.std("age", epsilon=share, schema=schema, random_state=rs),
                df["age"].std(),
            ),
            (
                "mean income (nulls skipped)",
                dp.mean("income", epsilon=share, schema=schema, random_state=rs),
                df["income"].mean(),
            ),
            (
                "total hours per week",
                dp.sum("hours_per_week", epsilon=share, schema=schema, random_state=rs),
                df["hours_per_week"].sum(),
            ),
            (
                "smokers",
                dp.sum("smoker", epsilon=share, bounds=(0, 1), random_state=rs),
                int(df["smoker"].sum()),
            ),
        ]
    for name, value, exact in releases:
        lo, hi = value.attrs["dp"].interval(0.05)
        rows.append(
            {
                "statistic": name,
                "private": value,
                "95% interval": f"[{lo:.4g}, {hi:.4g}]",
                "exact (never publish)": exact,
            }
        )
    with pd.option_context("display.width", 120, "display.float_format", "{:.4g}".format):
        print(pd.DataFrame(rows).to_string(index=False))
        print(f"\n{budget}")
        print(budget.ledger[["statistic", "columns", "epsilon", "mechanism"]].to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
