"""Where sufficient statistics are computed.

A backend reduces a column to a few numbers in one pass -- the non-null count, the
sum and the sum of squares of the clamped, centred values -- and everything after
that works on those numbers. :mod:`pandas_dp.backends.local` does it for pandas
objects held in memory, with numpy on the column's own array.
"""

from pandas_dp.backends.local import (
    CategoryCounts,
    Moments,
    category_counts,
    column_values,
    mask_counts,
    moments,
    non_null_count,
)

__all__ = [
    "CategoryCounts",
    "Moments",
    "category_counts",
    "column_values",
    "mask_counts",
    "moments",
    "non_null_count",
]
