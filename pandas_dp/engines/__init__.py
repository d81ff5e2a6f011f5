"""Engines: the exact sufficient statistics of a plan, computed from the data.

An engine implements one protocol (:class:`~pandas_dp.engines.protocol.Engine`)
and is chosen by the data's type (:func:`engine_for`; :func:`register_engine` adds
one): :mod:`~pandas_dp.engines.in_memory` for pandas objects, :mod:`~pandas_dp.engines.dask`
for Dask collections (registered when first needed), and
:mod:`~pandas_dp.engines.reference`, pure Python with exact fractions, the oracle
the tests hold the others to.

An engine is handed one :class:`~pandas_dp.engines.inputs.EngineInput` per release
(the columns, their declarations, each row's group, the readers of counts) and
reads the data and nothing else: it never draws noise, never charges a
budget, and never raises on a value of the data (NaN, inf, an unhashable object,
a string in an object column all land somewhere defined). Every sum is *exact*
(REFERENCE.md §13): values are clamped, centred and rounded to a power-of-two
step that depends on public bounds only, and added as integers, so a result does
not depend on the order of the rows, on chunking or on partitioning.

:mod:`pandas_dp.engines.pandas` works on in-memory pandas objects with numpy
(:mod:`~pandas_dp.engines.columns` reads a column into arrays,
:mod:`~pandas_dp.engines.sums` adds a column's moments and several columns'
cross-products, :mod:`~pandas_dp.engines.powers` a column's higher centred powers,
:mod:`~pandas_dp.engines.codes` counts categories and maps group
keys).
Every kernel takes an optional :class:`Groups` (one code per row); without it all
rows form one group and each result has a leading axis of length 1.
"""

from pandas_dp.engines.codes import (
    CategoryCounts,
    category_counts,
    group_codes,
    mask_counts,
    observed_codes,
)
from pandas_dp.engines.grid import grid_counts
from pandas_dp.engines.inputs import EngineInput
from pandas_dp.engines.pandas import (
    STEP_BITS,
    Groups,
    accumulation_step,
    present_counts,
    row_counts,
)
from pandas_dp.engines.powers import PowerSums, power_sums
from pandas_dp.engines.protocol import Engine
from pandas_dp.engines.registry import engine_for, register_engine
from pandas_dp.engines.sums import MomentSums, ProductSums, moments, products

__all__ = [
    "STEP_BITS",
    "CategoryCounts",
    "Engine",
    "EngineInput",
    "Groups",
    "MomentSums",
    "PowerSums",
    "ProductSums",
    "accumulation_step",
    "category_counts",
    "engine_for",
    "grid_counts",
    "group_codes",
    "mask_counts",
    "moments",
    "observed_codes",
    "power_sums",
    "present_counts",
    "products",
    "register_engine",
    "row_counts",
]
