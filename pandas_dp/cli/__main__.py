"""``python -m pandas_dp.cli``: the ``pandas-dp`` command, as the console script runs it."""

from pandas_dp.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
