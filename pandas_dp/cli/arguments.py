"""The arguments of ``pandas-dp``: its parser, the ``describe`` help, flag checks.

Every flag's value is checked here, by argparse (a ``type=`` or ``choices=``) or by
:func:`check_flags` right after parsing: a bad value is an argparse error (the usage
and a message on stderr, exit status 2) before any file is read or any budget
charged. The checks that need the schema or the data file's header are
:func:`pandas_dp.cli.describe`'s.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from typing import Any

import pandas_dp
from pandas_dp.cli._errors import CLIError
from pandas_dp.cli.report_text import DEFAULT_UNRELIABLE, MARK
from pandas_dp.stats.describe import DESCRIBE_METHOD
from pandas_dp.stats.describe_histogram import HISTOGRAM_SHARE, check_histogram
from pandas_dp.stats.describe_shares import SHARES_AUTO_MAX
from pandas_dp.stats.quantiles.releases import METHODS as QUANTILE_METHODS

__all__ = [
    "DESCRIBE_HELP",
    "HISTOGRAM_BINS",
    "QUANTILE_METHODS",
    "SHARES",
    "build_parser",
    "check_flags",
    "describe_keywords",
    "parsers",
    "unreliable_fraction",
]


#: The bins of each numeric column's histogram in the HTML report (``--histogram-bins``).
HISTOGRAM_BINS = 20
#: ``--shares`` and the value of ``df.dp.describe``'s ``shares`` each stands for.
SHARES = {"auto": "auto", "all": True, "none": False}

#: What ``pandas-dp describe`` prints, for its ``--help`` (``tests/test_cli_output.py``
#: checks it names every row the command prints).
DESCRIBE_HELP = f"""\
A private describe() of a CSV or Parquet file, printed as pandas prints
df.describe(), then the budget's ledger. Rows, for each described column:

  numeric column       count, mean, std, min (declared), 25%, 50%, 75%,
                       max (declared): min and max are the schema's bounds,
                       not the data's extremes
  categorical column   share <category> for each declared category, in the
                       declared order (a boolean column: share False, share True)

Columns come in the schema's order (or --columns'). A cell a column does not
have (the mean of a categorical column) is blank.

With --by: for each declared key, the count, mean and std of every numeric
column, and the shares of every categorical one (no percentiles, no min or max).

With --html, the page also draws each numeric column's histogram with its
percentiles and their 95% intervals: {HISTOGRAM_BINS} noisy counts of equal bins of
the declared range (--histogram-bins), which cost {HISTOGRAM_SHARE:.0%} of each numeric
column's part of epsilon unless --quantile-method tree (read off its noisy tree,
free); --no-histogram spends nothing on them.

With --auto, what is not declared is released first (bounds, categories),
each its own ledger row, and the min/max rows show the released bounds.

Every value is noisy. --intervals prints each with its 95% interval in
brackets. A '{MARK}' after a value marks a 95% interval wider than
--unreliable (default {DEFAULT_UNRELIABLE:g}) of the declared range: max - min declared
for a mean, std or percentile, 0 to 1 for a share; counts are never marked.
"""


def unreliable_fraction(text: str) -> float | None:
    """``--unreliable``'s value: a positive fraction, or ``off`` (no mark).

    Parameters
    ----------
    text : str
        The value as typed.

    Returns
    -------
    float or None
        The fraction; ``None`` for ``off`` (or ``none``).

    Raises
    ------
    argparse.ArgumentTypeError
        Not a positive finite number nor ``off``: argparse reports it, naming the flag.

    Examples
    --------
    >>> unreliable_fraction("0.25"), unreliable_fraction("off")
    (0.25, None)
    """
    if text.strip().lower() in ("off", "none"):
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(
            f"expected a positive fraction of the declared range, such as 0.25 (a "
            f"quarter of it), or 'off' to mark nothing; got {text!r}"
        )
    return value


def parsers() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """The ``pandas-dp`` parser and its ``describe`` subcommand's.

    Returns
    -------
    tuple of (argparse.ArgumentParser, argparse.ArgumentParser)
        The command's parser (``--version``, the subcommands) and ``describe``'s,
        whose :meth:`~argparse.ArgumentParser.error` :func:`check_flags` uses.

    Examples
    --------
    >>> top, describe = parsers()
    >>> describe.parse_args(["--example", "--epsilon", "1"]).unreliable
    0.25
    """
    parser = argparse.ArgumentParser(
        prog="pandas-dp",
        description="Differentially private summaries of tables.",
    )
    parser.add_argument("--version", action="version", version=f"pandas-dp {pandas_dp.__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    d = commands.add_parser(
        "describe",
        help="a private describe() of a CSV or Parquet file",
        description=DESCRIBE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    d.add_argument("data", nargs="?", help="a .csv (optionally compressed) or .parquet file")
    d.add_argument("--schema", help="pandera schema in YAML (the format schema.to_yaml() writes)")
    d.add_argument(
        "--example",
        action="store_true",
        help="use the bundled synthetic survey and its schema (instead of DATA and --schema)",
    )
    d.add_argument("--epsilon", type=float, required=True, help="total epsilon of the report")
    d.add_argument("--delta", type=float, default=0.0, help="total delta (Gaussian mechanism)")
    d.add_argument(
        "--mechanism",
        choices=("laplace", "gaussian"),
        default=None,
        help="noise mechanism (default: gaussian if --delta > 0, else laplace)",
    )
    d.add_argument(
        "--by",
        nargs="+",
        default=[],
        metavar="COL",
        help="group by these columns, over the keys the schema declares",
    )
    d.add_argument(
        "--columns",
        nargs="+",
        default=None,
        metavar="COL",
        help="columns to describe, in this order (default: every declared one, in the "
        "schema's order)",
    )
    d.add_argument("--html", metavar="PATH", help="also write a self-contained HTML report")
    d.add_argument(
        "--histogram-bins",
        type=int,
        default=HISTOGRAM_BINS,
        metavar="BINS",
        help=(
            f"with --html: bins of each numeric column's histogram (default "
            f"{HISTOGRAM_BINS}; {HISTOGRAM_SHARE:.0%}% of the column's epsilon, free with "
            f"--quantile-method tree)"
        ),
    )
    d.add_argument(
        "--no-histogram",
        action="store_true",
        help="with --html: draw no histograms and spend nothing on them",
    )
    d.add_argument(
        "--shares",
        choices=tuple(SHARES),
        default="auto",
        help=(
            "share of each value for numeric columns the schema declares with an isin "
            "set of numbers (an answer scale): auto (sets of at most "
            f"{SHARES_AUTO_MAX}), all, none. "
            "Not with --by"
        ),
    )
    d.add_argument(
        "--seed", type=int, default=None, help="reproducible, INSECURE noise (an int >= 0)"
    )
    d.add_argument(
        "--sep",
        default=None,
        metavar="CHAR",
        help=(
            "the delimiter of a CSV file (default: ',', a tab for .tsv); one character, "
            "or tab, semicolon, comma, pipe, e.g. --sep ';'"
        ),
    )
    d.add_argument(
        "--budget-store",
        metavar="PATH",
        help=(
            "charge the report to a durable budget kept in this SQLite file (created if "
            "new), shared by every run and process that opens it"
        ),
    )
    d.add_argument(
        "--budget-name", metavar="NAME", help="the shared budget's name in --budget-store"
    )
    d.add_argument(
        "--budget-epsilon",
        type=float,
        default=None,
        help="the shared budget's total epsilon (creates it; checked against it later)",
    )
    d.add_argument(
        "--budget-delta",
        type=float,
        default=None,
        help="the shared budget's total delta (default 0)",
    )
    d.add_argument(
        "--budget-label",
        metavar="TEXT",
        default=None,
        help="a label for the shared budget's ledger row, e.g. 'nightly 2026-12-07'",
    )
    d.add_argument(
        "--progress",
        choices=("auto", "always", "never"),
        default="auto",
        help="progress on stderr while reading (auto: after 2 seconds)",
    )
    d.add_argument(
        "--intervals",
        action="store_true",
        help="print each estimate with its 95%% interval: 44.3 (42.9 – 45.6)",
    )
    d.add_argument(
        "--unreliable",
        type=unreliable_fraction,
        default=DEFAULT_UNRELIABLE,
        metavar="FRACTION",
        help=(
            f"mark with '{MARK}' a value whose 95%% interval is wider than FRACTION of "
            f"its declared range (max - min declared; 0 to 1 for a share); default "
            f"{DEFAULT_UNRELIABLE:g}, 'off' marks nothing"
        ),
    )
    d.add_argument(
        "--quantile-method",
        choices=QUANTILE_METHODS,
        default=None,
        help=(
            f"how the percentiles are released (df.dp.describe's method=): "
            f"{' or '.join(QUANTILE_METHODS)}; default {DESCRIBE_METHOD}. Not with --by "
            f"(no percentiles)"
        ),
    )
    d.add_argument(
        "--auto",
        action="store_true",
        help=(
            "release privately what the schema does not declare, or everything without "
            "--schema: a numeric column's bounds (0.3 of its share of epsilon) and a text "
            "column's categories (partition selection: values few people hold never "
            "appear; needs --delta > 0, which the selection spends; the mechanism is then "
            "laplace unless --mechanism says). Without --schema each column's type is "
            "read from the file (numbers, true/false, else text) and treated as public"
        ),
    )
    d.add_argument(
        "--write-schema",
        metavar="PATH",
        default=None,
        help=(
            "with --auto: write the schema the report used, with the bounds and "
            "categories it released, in the YAML format --schema reads, so the next run "
            "can declare them. They are differentially private outputs, public once "
            "released: publishing the file is safe"
        ),
    )
    return parser, d


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``pandas-dp``.

    Returns
    -------
    argparse.ArgumentParser
    """
    return parsers()[0]


def check_flags(args: argparse.Namespace, describe_parser: argparse.ArgumentParser) -> None:
    """Reject flags that cannot go together, as argparse rejects a bad value.

    Called right after parsing, before anything is read or charged.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed arguments.
    describe_parser : argparse.ArgumentParser
        ``describe``'s parser (:func:`parsers`): its ``error`` prints the usage and
        the message on stderr and exits with status 2.

    Raises
    ------
    SystemExit
        With status 2, for ``--quantile-method`` together with ``--by`` (a grouped
        report has no percentiles), and for ``--histogram-bins`` outside 2 to 1000.
    """
    if args.quantile_method is not None and args.by:
        describe_parser.error(
            f"--quantile-method {args.quantile_method}: with --by the report releases "
            f"count, mean, std and shares per key, no percentiles; drop --quantile-method "
            f"or --by"
        )
    try:  # also when no histogram is drawn: a bad value is a mistake either way
        check_histogram(args.histogram_bins)
    except ValueError as err:
        describe_parser.error(f"--histogram-bins: {err}")


def describe_keywords(histogram: int | None, shares: str, by: Sequence[str]) -> dict[str, Any]:
    """``histogram`` and ``shares`` as describe's keywords (only those not at their
    defaults, so that a report without them makes the very same call), checked."""
    if shares not in SHARES:
        raise CLIError(f"--shares must be one of {list(SHARES)}; got {shares!r}")
    if by and shares != "auto":
        raise CLIError(
            f"--shares {shares}: with --by the report releases count, mean, std and the "
            f"shares of categorical columns per key; drop --shares or --by"
        )
    out: dict[str, Any] = {}
    if histogram is not None and not by:
        try:
            out["histogram"] = check_histogram(histogram)
        except ValueError as err:
            raise CLIError(f"--histogram-bins: {err}") from None
    if shares != "auto":
        out["shares"] = SHARES[shares]
    return out
