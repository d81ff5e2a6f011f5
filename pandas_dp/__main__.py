"""``python -m pandas_dp``: release a few private statistics of the bundled survey.

Prints each release with its 95 % confidence interval next to the exact value
(which a real release would of course never print), then the budget's ledger.
"""

from __future__ import annotations

import argparse
from typing import Any

import pandas as pd

import pandas_dp
from pandas_dp.accessor import DPFrameAccessor
from pandas_dp.datasets import load_survey, survey_schema

#: What the demo treats as public and as private, printed above the table.
PREAMBLE = (
    "The number of people is not published exactly: it is released with noise like "
    "everything else.",
    "Bounds and categories come from the survey's schema, never from the data.",
    "The exact column is there to compare only: a real release would never print it.",
)

#: Printed under the table: what a 95 % interval promises.
COVERAGE = (
    "Each 95% interval covers its exact value with probability 0.95:\n"
    "about 1 in 20 exact values is expected to fall outside its interval."
)


def _fixed(value: float, decimals: int) -> str:
    """``value`` in fixed-point notation with thousands separators (never ``1e+04``)."""
    return f"{float(value):,.{decimals}f}"


def _row(name: str, value: Any, interval: tuple[float, float], exact: Any) -> dict[str, str]:
    """One table row, every number formatted: integers for counts, fixed point otherwise.

    Parameters
    ----------
    name : str
        What was released.
    value : int or float
        The release; an ``int`` (a noisy count) is printed without decimals.
    interval : tuple of float
        Its 95 % confidence interval.
    exact : int or float
        The exact value, for comparison.

    Returns
    -------
    dict
        The row's cells as strings.
    """
    if isinstance(value, int):
        decimals = 0
    else:
        decimals = 1 if max(abs(float(value)), abs(float(exact))) >= 1_000 else 2
    lo, hi = interval
    return {
        "statistic": name,
        "private": _fixed(value, decimals),
        "95% interval": f"[{_fixed(lo, decimals)}, {_fixed(hi, decimals)}]",
        "exact (never publish)": _fixed(exact, decimals),
    }


def main(argv: list[str] | None = None) -> int:
    """Run the demo.

    Parameters
    ----------
    argv : list of str, optional
        The command-line arguments (``sys.argv[1:]`` by default).

    Returns
    -------
    int
        The process exit code.
    """
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
        f"pandas-dp {pandas_dp.__version__} -- a synthetic survey, "
        f"total epsilon {args.epsilon:g}, {share:.3g} per release"
    )
    print("\n".join(PREAMBLE) + "\n")
    with budget:
        rows = dp.len(epsilon=share, random_state=rs)
        mean_age = dp.mean("age", epsilon=share, schema=schema, random_state=rs)
        std_age = dp.std("age", epsilon=share, schema=schema, random_state=rs)
        income = dp.mean("income", epsilon=share, schema=schema, random_state=rs)
        hours = dp.sum("hours_per_week", epsilon=share, schema=schema, random_state=rs)
        # a count, released as one: the public categories of a yes/no column
        smoking = dp.value_counts(
            "smoker", sort=False, epsilon=share, categories=[False, True], random_state=rs
        )
    smokers = smoking.attrs["dp"].interval(0.05).loc[True]
    table = [
        _row("people", int(rows), rows.attrs["dp"].interval(0.05), len(df)),
        _row("mean age", mean_age, mean_age.attrs["dp"].interval(0.05), df["age"].mean()),
        _row("std of age", std_age, std_age.attrs["dp"].interval(0.05), df["age"].std()),
        _row(
            "mean income (nulls skipped)",
            income,
            income.attrs["dp"].interval(0.05),
            df["income"].mean(),
        ),
        _row(
            "total hours per week",
            hours,
            hours.attrs["dp"].interval(0.05),
            df["hours_per_week"].sum(),
        ),
        _row(
            "smokers",
            int(smoking.loc[True]),
            (float(smokers["lower"]), float(smokers["upper"])),
            int(df["smoker"].sum()),
        ),
    ]
    print(pd.DataFrame(table).to_string(index=False))
    print(f"\n{COVERAGE}\n")
    print(budget)
    print(budget.ledger[["statistic", "columns", "epsilon", "mechanism"]].to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
