"""``df.dp.cov`` and ``df.dp.corr``: the DataFrame accessor's matrix releases.

A mixin of :class:`~pandas_dp.accessor.frame.DPFrameAccessor`: it parses the
arguments of both matrices in one place and hands over to
:func:`pandas_dp.stats.covariance.release_cov`.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np
import pandas as pd

from pandas_dp.accessor._base import Columns, _Base, _check_numeric
from pandas_dp.budget.budgets import PrivacyBudget
from pandas_dp.request.declarations import attached_schema, resolve_bounds
from pandas_dp.stats import covariance as covmod


class _FrameMatrices(_Base):
    """The covariance and correlation releases of ``df.dp``, inherited by its accessor class."""

    __slots__ = ()
    _obj: pd.DataFrame

    def cov(
        self,
        columns: Columns = None,
        ddof: int = 1,
        *,
        epsilon: float,
        delta: float = 0.0,
        bounds: Any = None,
        schema: Any = None,
        method: str = "auto",
        psd: str = "clip",
        mechanism: str = "laplace",
        bounding: str = "bit",
        neighbouring: str = "add_remove",
        out_of_bounds: str = "clip",
        random_state: int | np.random.Generator | None = None,
        budget: PrivacyBudget | None = None,
        privacy_unit: Hashable | None = None,
        max_rows_per_unit: int | None = None,
    ) -> pd.DataFrame:
        """Noisy covariance matrix, like ``df[columns].cov(ddof=1)``.

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
        """
        return self._matrix(
            columns,
            ddof,
            epsilon,
            delta,
            bounds,
            schema,
            method,
            psd,
            mechanism,
            bounding,
            neighbouring,
            out_of_bounds,
            random_state,
            budget,
            privacy_unit,
            max_rows_per_unit,
            corr=False,
        )

    def corr(
        self,
        columns: Columns = None,
        *,
        epsilon: float,
        delta: float = 0.0,
        bounds: Any = None,
        schema: Any = None,
        method: str = "auto",
        psd: str = "clip",
        mechanism: str = "laplace",
        bounding: str = "bit",
        neighbouring: str = "add_remove",
        out_of_bounds: str = "clip",
        random_state: int | np.random.Generator | None = None,
        budget: PrivacyBudget | None = None,
        privacy_unit: Hashable | None = None,
        max_rows_per_unit: int | None = None,
    ) -> pd.DataFrame:
        """Noisy Pearson correlation matrix: post-processing of :meth:`cov`.

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
        """
        return self._matrix(
            columns,
            1,
            epsilon,
            delta,
            bounds,
            schema,
            method,
            psd,
            mechanism,
            bounding,
            neighbouring,
            out_of_bounds,
            random_state,
            budget,
            privacy_unit,
            max_rows_per_unit,
            corr=True,
        )

    def _matrix(
        self,
        columns: Columns,
        ddof: int,
        epsilon: float,
        delta: float,
        bounds: Any,
        schema: Any,
        method: str,
        psd: str,
        mechanism: str,
        bounding: str,
        neighbouring: str,
        out_of_bounds: str,
        random_state: int | np.random.Generator | None,
        budget: PrivacyBudget | None,
        privacy_unit: Hashable | None,
        max_rows_per_unit: int | None,
        *,
        corr: bool,
    ) -> pd.DataFrame:
        settings = self._settings(locals())
        selected, _ = self._select([columns] if isinstance(columns, str) else columns)
        name = "corr" if corr else "cov"
        _check_numeric(name, selected)
        attached = attached_schema(self._obj) if bounds is None and schema is None else None
        decls = resolve_bounds(
            selected, bounds=bounds, schema=schema, attached=attached, known=self._known()
        )
        return covmod.release_cov(
            selected,
            decls,
            settings,
            method=covmod.resolve_method(method),
            ddof=ddof,
            psd=psd,
            corr=corr,
            frame=self._obj,
        )
