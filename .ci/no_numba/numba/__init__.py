"""Hides numba from a test run: ``PYTHONPATH=.ci/no_numba python -m pytest ...``.

pandas-dp depends on numba where it has wheels; elsewhere the engine and the
samplers run on numpy and must give the very same results. ``.ci/run`` runs the
tests a second time with this package first on the path, so that ``import numba``
fails as it does on a machine without numba: with ``ModuleNotFoundError``, which
the package's ``except ImportError`` and pytest's ``importorskip`` both take as
"not installed".
"""

raise ModuleNotFoundError("No module named 'numba' (hidden by .ci/no_numba)", name="numba")
