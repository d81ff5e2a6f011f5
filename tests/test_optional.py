"""The loader of compiled kernels (:mod:`pandas_dp._optional`)."""

from __future__ import annotations

import sys

import pytest

from pandas_dp._optional import compiled


def test_without_numba_nothing_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "numba", None)  # import numba raises ImportError
    assert compiled("json") is None
    assert compiled("json", "dumps", check=lambda f: f(1)) is None


def test_a_module_or_one_of_its_names() -> None:
    pytest.importorskip("numba")
    import json

    assert compiled("json") is json
    assert compiled("json", "dumps") is json.dumps


def test_a_failed_check_means_the_python_path_an_import_error_propagates() -> None:
    pytest.importorskip("numba")

    def broken(kernel: object) -> None:
        raise RuntimeError("no compiler")

    assert compiled("json", "dumps", check=broken) is None
    with pytest.raises(ModuleNotFoundError):
        compiled("pandas_dp.no_such_kernel_module")
