"""Shared test set-up: importing pandas_dp registers the ``.dp`` accessors."""

import pandas_dp  # noqa: F401
