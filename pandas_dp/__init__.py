"""pandas-dp: differentially private aggregates of pandas DataFrames.

``import pandas_dp`` registers the ``.dp`` accessor on :class:`pandas.DataFrame`
and :class:`pandas.Series` (and on Dask DataFrames and Series, once
``dask.dataframe`` is imported; see :mod:`pandas_dp.accessor.dask`)::

    df.dp.mean("age", epsilon=1.0, bounds=(0, 100))
    df.dp.mean(["age", "income"], epsilon=1.0, schema=schema)
    df["age"].dp.var(epsilon=0.5, schema=schema)

Examples
--------
>>> import pandas as pd, pandas_dp
>>> df = pd.DataFrame({"age": [31.0, 45.0, 27.0, 62.0, 38.0]})
>>> with pandas_dp.PrivacyBudget(epsilon=1.0) as budget:
...     m = df.dp.mean("age", epsilon=1.0, bounds=(0, 100))
>>> budget.remaining
(0.0, 0.0)
>>> sorted(m.attrs["dp"].to_dict())[:3]
['bounding', 'columns', 'contribution_bounds']
"""

from __future__ import annotations

import warnings

import pandas as pd

from pandas_dp import _moved
from pandas_dp.accessor import DPFrameAccessor, DPSeriesAccessor, _lazy_dask
from pandas_dp.budget.budgets import (
    PrivacyBudget,
    active_budget,
    active_budgets,
    charge_all,
    set_default_budget,
)
from pandas_dp.budget.store import BudgetStore, SQLiteBudgetStore
from pandas_dp.errors import (
    BudgetExceededError,
    BudgetProcessError,
    BudgetStoreError,
    DerivedResultError,
    InvalidBoundsError,
    MissingBoundsError,
    PandasDPError,
)
from pandas_dp.result.values import DPFloat, DPInt, DPMetadata

__all__ = [
    "BudgetExceededError",
    "BudgetProcessError",
    "BudgetStore",
    "BudgetStoreError",
    "DPFloat",
    "DPFrameAccessor",
    "DPInt",
    "DPMetadata",
    "DPSeriesAccessor",
    "DerivedResultError",
    "InvalidBoundsError",
    "MissingBoundsError",
    "PandasDPError",
    "PrivacyBudget",
    "SQLiteBudgetStore",
    "__version__",
    "active_budget",
    "active_budgets",
    "charge_all",
    "set_default_budget",
]

__version__ = "0.1.0"

with warnings.catch_warnings():
    # re-importing (e.g. importlib.reload) re-registers; pandas warns about that
    warnings.simplefilter("ignore", UserWarning)
    pd.api.extensions.register_dataframe_accessor("dp")(DPFrameAccessor)
    pd.api.extensions.register_series_accessor("dp")(DPSeriesAccessor)

# ddf.dp / dseries.dp on Dask collections: registered once dask.dataframe is imported
_lazy_dask.install()

# old module names (pandas_dp.statistics, pandas_dp.mechanisms ...) still import
_moved.install()
