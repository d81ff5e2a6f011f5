"""Hides numba from a test run: ``PYTHONPATH=.ci/no_numba python -m pytest ...``.

pandas-dp depends on numba where it has wheels; elsewhere the engine and the
samplers run on numpy and must give the very same results. ``.ci/run`` runs the
tests a second time with this package first on the path, so that ``import numba``
fails as it does on a machine without numba.
"""

raise ImportError("numba is hidden for this test run (.ci/no_numba)")
