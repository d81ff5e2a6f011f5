"""``df.dp.cov`` and ``df.dp.corr``: the DataFrame accessor's matrix releases.

A mixin of :class:`~pandas_dp.accessor.frame.DPFrameAccessor`: the text of both
methods (made from the catalogue, :mod:`pandas_dp.accessor._methods`) and their one
release, :func:`pandas_dp.stats.covariance.release_cov`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import pandas as pd

from pandas_dp.accessor._arguments import _check_numeric
from pandas_dp.accessor._base import _Base
from pandas_dp.stats import covariance as covmod


class _FrameMatrices(_Base):
    """The covariance and correlation releases of ``df.dp``, inherited by its accessor class."""

    __slots__ = ()
    _obj: pd.DataFrame

    _method_docs: ClassVar[dict[str, str]] = {
        "cov": """Noisy covariance matrix, like ``df[columns].cov(ddof=1)``.

        Positive semi-definite by construction (``psd="clip"``: eigenvalues
        clipped at zero; ``"higham"``: nearest matrix keeping the variances).

        Parameters
        ----------
        method : {"auto", "moments", "direct"}
            ``"direct"`` is Liu's procedure (variances first, then covariances
            bounded by the released variances); ``"moments"`` noises centred
            sums and sums of products in one release. ``"auto"`` (moments) was
            best or tied in 14 of 16 settings of the accuracy study (up to 2.6x
            better); direct won by 10-16 % only on data piled at one bound under
            substitution with n >= 1000.

        Examples
        --------
        >>> import numpy as np, pandas as pd, pandas_dp
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame(rng.uniform(-1, 1, (500, 3)), columns=["a", "b", "c"])
        >>> c = df.dp.cov(epsilon=1.0, bounds=(-1, 1), random_state=0)
        >>> c.shape, bool(np.all(np.linalg.eigvalsh(c.to_numpy()) >= -1e-12))
        ((3, 3), True)
        """,
        "corr": """Noisy Pearson correlation matrix: post-processing of :meth:`cov`.

        Unit diagonal, entries in ``[-1, 1]``. ``method`` is the covariance
        method (only Pearson correlation is offered).

        Examples
        --------
        >>> import numpy as np, pandas as pd, pandas_dp
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame(rng.uniform(-1, 1, (500, 2)), columns=["a", "b"])
        >>> r = df.dp.corr(epsilon=1.0, bounds=(-1, 1), random_state=0)
        >>> np.diag(r).tolist()
        [1.0, 1.0]
        """,
    }

    def _release_matrix(self, statistic: str, arguments: Mapping[str, Any]) -> pd.DataFrame:
        settings = self._settings(arguments)
        columns = arguments["columns"]
        selected, _ = self._select([columns] if isinstance(columns, str) else columns)
        _check_numeric(statistic, selected)
        return covmod.release_cov(
            selected,
            self._declare(selected, arguments["bounds"], arguments["schema"]),
            settings,
            method=covmod.resolve_method(arguments["method"]),
            ddof=arguments.get("ddof", 1),
            psd=arguments["psd"],
            corr=statistic == "corr",
            frame=self._obj,
        )
