"""Durable budgets: where a budget shared by processes, runs and days keeps its state.

``PrivacyBudget(epsilon=..., store="budget.sqlite", name="survey")`` keeps the
named budget's cap, its running totals and its ledger in a store instead of the
memory of one process. Every charge is one write transaction of the store: the
totals are read, the release is checked against the cap, the new totals and a ledger
row are written, and the transaction is committed -- all before any data is read.
Two processes charging the same budget are serialised by the store, so together
they never overspend it; a process that dies after the commit leaves its charge
recorded (a charge without a result is safe; a result without a charge is
impossible, since the release runs only after the commit).

The storage interface is small (:class:`BudgetStore`, :class:`StoreTransaction`);
:class:`SQLiteBudgetStore` implements it on the standard library's :mod:`sqlite3`,
for one machine. A team sharing a budget across machines would implement the same
interface on a server database (a row lock, ``SELECT ... FOR UPDATE``, in place of
SQLite's ``BEGIN IMMEDIATE``); pandas-dp does not ship one.

The SQLite file
---------------
``PRAGMA application_id`` marks the file as a pandas-dp budget store and
``PRAGMA user_version`` is its schema version (:data:`SCHEMA_VERSION`). Two tables:
``pandas_dp_budgets`` (one row per named budget: its cap and running totals) and
``pandas_dp_ledger`` (one row per release charged, with the ledger's columns; tuples
and dicts as JSON, and the release's other details as one JSON object). A file that
is not such a store -- a text file, another SQLite database, a store of an unknown
version -- is refused; so is a corrupt one, and a file another connection keeps
locked beyond the timeout. The file should be on a local disk: SQLite's locks are
not reliable on network file systems.

Examples
--------
>>> import os, tempfile
>>> from pandas_dp.budget.amounts import Spent
>>> path = os.path.join(tempfile.mkdtemp(), "budget.sqlite")
>>> store = SQLiteBudgetStore(path)
>>> store.open_budget("survey", Cap(1.0, 0.0, "basic"))
>>> store.cap("survey")
Cap(epsilon=1.0, delta=0.0, accounting='basic')
>>> with store.transaction() as txn:
...     before = txn.totals("survey")
...     txn.record("survey", Spent(0.5, 0.0, 0.0, 0.0, 0.5), {"time": 0.0, "epsilon": 0.5})
>>> before.epsilon, store.totals("survey").epsilon, store.count("survey")
(0.0, 0.5, 1)
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sqlite3
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from pandas_dp._docstrings import shared_parameters
from pandas_dp.budget.amounts import LEDGER_COLUMNS, Spent
from pandas_dp.errors import BudgetStoreError

__all__ = [
    "SCHEMA_VERSION",
    "BudgetStore",
    "Cap",
    "SQLiteBudgetStore",
    "StoreTransaction",
    "as_store",
    "decode",
    "encode",
    "store_transactions",
]

#: The version of the SQLite file's tables (``PRAGMA user_version``).
SCHEMA_VERSION = 1
#: ``PRAGMA application_id`` of a pandas-dp budget store ("pdPB").
APPLICATION_ID = 0x70645042
#: Seconds a charge waits for another connection's transaction before it gives up.
DEFAULT_TIMEOUT = 10.0


class Cap(NamedTuple):
    """A budget's cap, fixed when it is created in a store."""

    epsilon: float
    delta: float
    accounting: str


_NAME = {"name": "name : str\n    The budget's name in the store."}


@shared_parameters(_NAME)
class StoreTransaction(ABC):
    """An open write transaction of a store: read the totals, record a charge.

    Nothing is visible to other connections until the transaction commits, which
    :meth:`BudgetStore.transaction` does when its block ends without an exception.
    """

    @abstractmethod
    def totals(self, name: str) -> Spent:
        """The named budget's running totals (a :class:`Spent`), as of this transaction."""

    @abstractmethod
    def record(self, name: str, state: Spent, row: dict[str, Any]) -> None:
        """Set the named budget's totals to ``state`` and append ``row`` to its ledger.

        Parameters
        ----------
        name : str
            The budget's name in the store.
        state : Spent
            Its totals after the release.
        row : dict
            The ledger row (:func:`~pandas_dp.budget.amounts.ledger_row`).
        """


@shared_parameters(_NAME)
class BudgetStore(ABC):
    """Where durable budgets keep their caps, totals and ledgers.

    One store holds any number of named budgets. An implementation must make
    :meth:`transaction` exclusive among every process that charges the store (a
    charge's check and record happen within it) and durable once committed.
    """

    @property
    @abstractmethod
    def key(self) -> str:
        """Identifies the storage itself: two stores with one key are one store.

        Transactions of several stores are opened in the order of their keys, so
        that processes charging overlapping sets of stores never wait on each other
        in a cycle.
        """

    @abstractmethod
    def open_budget(self, name: str, cap: Cap) -> None:
        """Create the named budget with ``cap``, or check that it has this cap.

        Parameters
        ----------
        name : str
            The budget's name in the store.
        cap : Cap
            Its epsilon, delta and accounting.

        Raises
        ------
        BudgetStoreError
            If the budget exists with another cap, or the store cannot be used.
        """

    @abstractmethod
    def cap(self, name: str) -> Cap | None:
        """The named budget's cap, or None if the store holds no such budget.

        Returns
        -------
        Cap or None

        Raises
        ------
        BudgetStoreError
            If the store is not a budget store or cannot be read.
        """

    @abstractmethod
    def totals(self, name: str) -> Spent:
        """The named budget's running totals (a snapshot; charges may follow).

        Returns
        -------
        Spent
        """

    @abstractmethod
    def rows(self, name: str) -> list[dict[str, Any]]:
        """The named budget's ledger rows, oldest first, as :func:`ledger_row` made them.

        Returns
        -------
        list of dict
            The fixed columns (tuples and dicts decoded, a missing rho as NaN), then
            the release's other details.
        """

    @abstractmethod
    def count(self, name: str) -> int:
        """The number of releases in the named budget's ledger.

        Returns
        -------
        int
        """

    @abstractmethod
    def transaction(self) -> contextlib.AbstractContextManager[StoreTransaction]:
        """An exclusive write transaction, committed when the block ends normally.

        Returns
        -------
        context manager of StoreTransaction
            Rolled back if the block raises; nothing is then recorded.

        Raises
        ------
        BudgetStoreError
            If the store cannot be used (locked beyond its timeout, corrupt ...).
        """


# ----------------------------------------------------------------------------- JSON


def encode(value: Any) -> str:
    """``value`` as JSON that :func:`decode` turns back into the same Python types.

    Tuples and dicts are tagged (``{"tuple": [...]}``, ``{"dict": [[key, value],
    ...]}``), so that tuples stay tuples and a dict's keys keep their types; numpy
    scalars become Python numbers; anything else JSON cannot hold becomes its
    ``str``.

    Parameters
    ----------
    value : Any
        A ledger field.

    Returns
    -------
    str

    Examples
    --------
    >>> decode(encode({("a", 1): (0.5, None), "n": [1, 2]}))
    {('a', 1): (0.5, None), 'n': [1, 2]}
    """
    return json.dumps(_plain(value), allow_nan=True)


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, tuple):
        return {"tuple": [_plain(v) for v in value]}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {"dict": [[_plain(k), _plain(v)] for k, v in value.items()]}
    item = getattr(value, "item", None)  # a numpy scalar
    if callable(item):
        with contextlib.suppress(Exception):
            plain = item()
            if isinstance(plain, bool | int | float | str):
                return plain
    return str(value)


def _tagged(obj: dict[str, Any]) -> Any:
    if set(obj) == {"tuple"}:
        return tuple(obj["tuple"])
    if set(obj) == {"dict"}:
        return {_hashable(k): v for k, v in obj["dict"]}
    return obj


def _hashable(key: Any) -> Any:
    return tuple(_hashable(k) for k in key) if isinstance(key, list) else key


def decode(text: str | None) -> Any:
    """The value :func:`encode` wrote (None for SQL NULL).

    Parameters
    ----------
    text : str or None
        JSON written by :func:`encode`.

    Returns
    -------
    Any
    """
    if text is None:
        return None
    return json.loads(text, object_hook=_tagged)


# ----------------------------------------------------------------------------- SQLite

_BUDGETS = "pandas_dp_budgets"
_LEDGER = "pandas_dp_ledger"
#: The ledger's fixed columns that are stored as JSON.
_JSON_COLUMNS = ("columns", "groups", "contribution_bounds")
_SCHEMA = (
    f"""CREATE TABLE {_BUDGETS} (
        name TEXT PRIMARY KEY,
        epsilon REAL NOT NULL,
        delta REAL NOT NULL,
        accounting TEXT NOT NULL,
        created REAL NOT NULL,
        sum_epsilon REAL NOT NULL DEFAULT 0,
        sum_delta REAL NOT NULL DEFAULT 0,
        gauss_rho REAL NOT NULL DEFAULT 0,
        rho REAL NOT NULL DEFAULT 0,
        spent_epsilon REAL NOT NULL DEFAULT 0
    )""",
    f"""CREATE TABLE {_LEDGER} (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        budget TEXT NOT NULL REFERENCES {_BUDGETS}(name),
        "time" REAL NOT NULL,
        "statistic" TEXT,
        "columns" TEXT,
        "epsilon" REAL,
        "delta" REAL,
        "rho" REAL,
        "charged_epsilon" REAL,
        "mechanism" TEXT,
        "groups" TEXT,
        "keys" TEXT,
        "n_keys" INTEGER,
        "privacy_unit" TEXT,
        "contribution_bounds" TEXT,
        "label" TEXT,
        "details" TEXT
    )""",
    f"CREATE INDEX pandas_dp_ledger_budget ON {_LEDGER} (budget, id)",
    f"PRAGMA application_id = {APPLICATION_ID}",
    f"PRAGMA user_version = {SCHEMA_VERSION}",
)
_TOTALS = "sum_epsilon, sum_delta, gauss_rho, rho, spent_epsilon"


def _read_totals(conn: sqlite3.Connection, name: str) -> Spent | None:
    row = conn.execute(f"SELECT {_TOTALS} FROM {_BUDGETS} WHERE name = ?", (name,)).fetchone()
    return None if row is None else Spent(*(float(v) for v in row))


def _read_cap(conn: sqlite3.Connection, name: str) -> Cap | None:
    row = conn.execute(
        f"SELECT epsilon, delta, accounting FROM {_BUDGETS} WHERE name = ?", (name,)
    ).fetchone()
    return None if row is None else Cap(float(row[0]), float(row[1]), str(row[2]))


class _SQLiteTransaction(StoreTransaction):
    def __init__(self, store: SQLiteBudgetStore, conn: sqlite3.Connection) -> None:
        self._store = store
        self._conn = conn

    def totals(self, name: str) -> Spent:
        with self._store.failures("reading the budget's totals"):
            totals = _read_totals(self._conn, name)
        if totals is None:
            raise BudgetStoreError(
                f"the budget store {self._store.path!r} no longer holds a budget named "
                f"{name!r}; nothing was charged. Was the file replaced? Open the budget "
                f"again with PrivacyBudget(..., store=..., name={name!r})"
            )
        return totals

    def record(self, name: str, state: Spent, row: dict[str, Any]) -> None:
        fixed = {k: row.get(k) for k in LEDGER_COLUMNS}
        for k in _JSON_COLUMNS:
            fixed[k] = encode(fixed[k])
        for k in ("statistic", "mechanism", "keys", "privacy_unit", "label"):
            if fixed[k] is not None and not isinstance(fixed[k], str):
                fixed[k] = str(fixed[k])
        if fixed["n_keys"] is not None:
            fixed["n_keys"] = int(fixed["n_keys"])
        details = {k: v for k, v in row.items() if k not in fixed}
        names = ", ".join(f'"{k}"' for k in (*fixed, "details"))
        marks = ", ".join("?" for _ in range(len(fixed) + 2))
        with self._store.failures("recording the charge"):
            self._conn.execute(
                f"UPDATE {_BUDGETS} SET sum_epsilon = ?, sum_delta = ?, gauss_rho = ?, "
                f"rho = ?, spent_epsilon = ? WHERE name = ?",
                (*state, name),
            )
            self._conn.execute(
                f"INSERT INTO {_LEDGER} (budget, {names}) VALUES ({marks})",
                (name, *fixed.values(), encode(details)),
            )


class SQLiteBudgetStore(BudgetStore):
    """A budget store in a SQLite file (the standard library's :mod:`sqlite3`).

    Every charge is a ``BEGIN IMMEDIATE`` transaction: it takes the file's write lock
    (waiting up to ``timeout`` seconds for another connection's transaction to end),
    reads the totals, writes the new totals and the ledger row, and commits (with
    ``synchronous=FULL``: a committed charge survives a crash of the process or the
    machine). Each operation uses a connection of its own, so threads and forked
    processes never share one.

    Parameters
    ----------
    path : str or path-like
        The file; created, with its tables, on the first :meth:`open_budget` if it
        does not exist or is empty (in that open's transaction: two processes
        creating one store at once are serialised).
    timeout : float, default 10.0
        Seconds to wait for another connection's transaction before giving up with a
        :class:`~pandas_dp.errors.BudgetStoreError` (nothing is then charged).

    Raises
    ------
    ValueError
        If ``timeout`` is not a non-negative number.
    """

    def __init__(self, path: str | os.PathLike[str], timeout: float = DEFAULT_TIMEOUT) -> None:
        self.path = os.fspath(path)
        seconds = float(timeout)
        if not (math.isfinite(seconds) and seconds >= 0):
            raise ValueError(f"timeout must be a number of seconds >= 0; got {timeout!r}")
        self.timeout = seconds
        self._key = "sqlite:" + os.path.realpath(self.path)

    def __repr__(self) -> str:
        return f"SQLiteBudgetStore({self.path!r}, timeout={self.timeout:g})"

    def __str__(self) -> str:
        return self.path

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self._key.removeprefix("sqlite:"), self.timeout))

    @property
    def key(self) -> str:
        """``"sqlite:"`` and the file's absolute path."""
        return self._key

    # ------------------------------------------------------------------ plumbing
    @contextlib.contextmanager
    def failures(self, doing: str) -> Iterator[None]:
        """Turn a :mod:`sqlite3` error raised in the block into a clear BudgetStoreError.

        Parameters
        ----------
        doing : str
            What the block does, for the message (``"recording the charge"``).

        Yields
        ------
        None
        """
        try:
            yield
        except sqlite3.Error as err:
            raise self._error(err, doing) from None

    def _error(self, err: sqlite3.Error, doing: str) -> BudgetStoreError:
        text = str(err)
        where = f"the budget store {self.path!r}"
        if "locked" in text or "busy" in text:
            return BudgetStoreError(
                f"{where} stayed locked by another connection for more than "
                f"{self.timeout:g} s while {doing}; nothing was charged. Another process "
                f"holds a transaction on it: retry when it ends, or wait longer with "
                f"store=SQLiteBudgetStore({self.path!r}, timeout=60)"
            )
        if "not a database" in text:
            return BudgetStoreError(
                f"{self.path!r} is not a pandas-dp budget store (not a SQLite database); "
                f"nothing was charged. Give the path of a budget store, or a new file to "
                f"create one"
            )
        if "malformed" in text or "corrupt" in text:
            return BudgetStoreError(
                f"{where} is corrupt (SQLite: {text}) -- found while {doing}; nothing was "
                f"charged. Restore it from a backup; until then no release can be "
                f"charged to its budgets"
            )
        return BudgetStoreError(
            f"{where} cannot be used while {doing} ({type(err).__name__}: {text}); "
            f"nothing was charged"
        )

    def _connect(self) -> sqlite3.Connection:
        with self.failures("opening it"):
            conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
            try:
                conn.execute("PRAGMA synchronous = FULL")
            except sqlite3.Error:
                conn.close()
                raise
        return conn

    @contextlib.contextmanager
    def _reading(self, doing: str) -> Iterator[sqlite3.Connection]:
        conn = self._connect()
        try:
            with self.failures(doing):
                yield conn
        finally:
            conn.close()

    def _check_schema(self, conn: sqlite3.Connection) -> None:
        """Create the tables in a new file; refuse a file that is not a store."""
        app = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        if app == 0 and not tables and version == 0:  # a new (empty) file
            for statement in _SCHEMA:
                conn.execute(statement)
            return
        if app != APPLICATION_ID:
            shown = ", ".join(tables[:5]) or "no tables"
            raise BudgetStoreError(
                f"{self.path!r} is a SQLite database but not a pandas-dp budget store "
                f"(it holds {shown}); nothing was charged. Give the path of a budget "
                f"store, or a new file to create one"
            )
        if version != SCHEMA_VERSION:
            raise BudgetStoreError(
                f"the budget store {self.path!r} has tables of version {version}; this "
                f"pandas-dp reads version {SCHEMA_VERSION}. Open it with the pandas-dp "
                f"that wrote it"
            )
        if _BUDGETS not in tables or _LEDGER not in tables:
            raise BudgetStoreError(
                f"the budget store {self.path!r} lacks its tables ({_BUDGETS}, {_LEDGER}); "
                f"nothing was charged. Restore it from a backup"
            )

    # ------------------------------------------------------------------ interface
    # (the docstrings are BudgetStore's)
    def open_budget(self, name: str, cap: Cap) -> None:
        with self.transaction(doing="opening the budget") as txn:
            assert isinstance(txn, _SQLiteTransaction)
            with self.failures("opening the budget"):
                held = _read_cap(txn._conn, name)
                if held is None:
                    txn._conn.execute(
                        f"INSERT INTO {_BUDGETS} (name, epsilon, delta, accounting, created) "
                        f"VALUES (?, ?, ?, ?, ?)",
                        (name, cap.epsilon, cap.delta, cap.accounting, time.time()),
                    )
                    return
            if held != cap:
                raise BudgetStoreError(
                    f"the budget store {self.path!r} already holds a budget named {name!r} "
                    f"with epsilon={held.epsilon:g}, delta={held.delta:g}, "
                    f"accounting={held.accounting!r}; it was opened with "
                    f"epsilon={cap.epsilon:g}, delta={cap.delta:g}, "
                    f"accounting={cap.accounting!r}. A budget's cap never changes: open "
                    f"it with its own cap (PrivacyBudget.open(store, name) reads it), or "
                    f"choose another name for a new budget"
                )

    def cap(self, name: str) -> Cap | None:
        if not os.path.exists(self.path) or os.path.getsize(self.path) == 0:
            return None  # (connecting would create the file)
        with self._reading("reading the budget's cap") as conn:
            if conn.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
                raise BudgetStoreError(
                    f"{self.path!r} is not a pandas-dp budget store; create one with "
                    f"PrivacyBudget(epsilon=..., store={self.path!r}, name=...)"
                )
            return _read_cap(conn, name)

    def totals(self, name: str) -> Spent:
        with self._reading("reading the budget's totals") as conn:
            return _read_totals(conn, name) or Spent()

    def rows(self, name: str) -> list[dict[str, Any]]:
        names = ", ".join(f'"{k}"' for k in (*LEDGER_COLUMNS, "details"))
        with self._reading("reading the ledger") as conn:
            found = conn.execute(
                f"SELECT {names} FROM {_LEDGER} WHERE budget = ? ORDER BY id", (name,)
            ).fetchall()
        rows = []
        for values in found:
            row = dict(zip((*LEDGER_COLUMNS, "details"), values, strict=True))
            for k in _JSON_COLUMNS:
                row[k] = decode(row[k])
            if row["rho"] is None:  # SQLite keeps NaN as NULL
                row["rho"] = math.nan
            details = decode(row.pop("details")) or {}
            for k, v in details.items():
                row.setdefault(k, v)
            rows.append(row)
        return rows

    def count(self, name: str) -> int:
        with self._reading("counting the ledger") as conn:
            row = conn.execute(
                f"SELECT COUNT(*) FROM {_LEDGER} WHERE budget = ?", (name,)
            ).fetchone()
        return int(row[0])

    @contextlib.contextmanager
    def transaction(self, doing: str = "charging a release") -> Iterator[StoreTransaction]:
        """A ``BEGIN IMMEDIATE`` transaction, committed when the block ends normally.

        Parameters
        ----------
        doing : str, default "charging a release"
            What the transaction is for, for the messages of errors.

        Yields
        ------
        StoreTransaction
            Rolled back if the block raises.

        Raises
        ------
        BudgetStoreError
            If the file is not a budget store, is corrupt, or stays locked beyond the
            timeout; nothing is then written.
        """
        conn = self._connect()
        try:
            with self.failures(doing):
                conn.execute("BEGIN IMMEDIATE")
                self._check_schema(conn)
            try:
                yield _SQLiteTransaction(self, conn)
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise
            with self.failures(f"committing ({doing})"):
                try:
                    conn.execute("COMMIT")
                except sqlite3.Error:
                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                    raise
        except BudgetStoreError:
            with contextlib.suppress(sqlite3.Error):
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
            raise
        finally:
            conn.close()


def as_store(store: BudgetStore | str | os.PathLike[str]) -> BudgetStore:
    """``store`` as a :class:`BudgetStore`: a path becomes a :class:`SQLiteBudgetStore`.

    Parameters
    ----------
    store : BudgetStore, str or path-like
        A store, or the path of a SQLite file.

    Returns
    -------
    BudgetStore

    Raises
    ------
    TypeError
        If ``store`` is neither.
    """
    if isinstance(store, BudgetStore):
        return store
    if isinstance(store, str | os.PathLike):
        return SQLiteBudgetStore(store)
    raise TypeError(
        f"store must be the path of a SQLite file (e.g. store='budget.sqlite') or a "
        f"pandas_dp.budget.store.BudgetStore; got {type(store).__name__}"
    )


@contextlib.contextmanager
def store_transactions(stores: Iterable[BudgetStore]) -> Iterator[dict[str, StoreTransaction]]:
    """One transaction per distinct store, opened in the order of their keys.

    Every transaction commits when the block ends normally; if the block (or the
    opening of a transaction) raises, every transaction still open rolls back.

    Parameters
    ----------
    stores : iterable of BudgetStore
        The stores to charge (repeats are opened once).

    Yields
    ------
    dict of str to StoreTransaction
        Each store's transaction, by its :attr:`~BudgetStore.key`.
    """
    distinct = {store.key: store for store in stores}
    with contextlib.ExitStack() as stack:
        txns = {key: stack.enter_context(distinct[key].transaction()) for key in sorted(distinct)}
        yield txns
