"""The request: the public facts of a release, checked before anything is charged or read.

Everything here comes from the caller or a schema, never from the data:
:mod:`~pandas_dp.request.settings` (the privacy keywords: epsilon, delta, mechanism,
bounding, neighbouring relation, budget, random source),
:mod:`~pandas_dp.request.declarations` with
:mod:`~pandas_dp.request.declared_columns` and
:mod:`~pandas_dp.request.category_declarations` (bounds and categories of the
columns a release reads), :mod:`~pandas_dp.request.unit_declarations` (the privacy
unit and its contribution bounds), :mod:`~pandas_dp.request.grouping` with
:mod:`~pandas_dp.request.grouping_facts` (group-by keys, public or private) and
:mod:`~pandas_dp.request.queries` (predicate workloads).
"""
