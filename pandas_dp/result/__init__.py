"""Results: pandas-native values carrying their metadata record.

:mod:`~pandas_dp.result.values` holds :class:`DPFloat`, :class:`DPInt` and
:class:`DPMetadata` (``result.attrs["dp"]``), and :func:`attach`.
"""

from pandas_dp.result.values import DPFloat, DPInt, DPMetadata, attach, deferred

__all__ = ["DPFloat", "DPInt", "DPMetadata", "attach", "deferred"]
