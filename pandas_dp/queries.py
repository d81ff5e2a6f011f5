"""Per-record predicates written as strings, for counting workloads.

``df.dp.counts({"old smokers": "smoker and age > 60"})`` counts the rows for which
the string is true. Each count has sensitivity one per query only if each row's
answer depends on that row alone, so a string query is not handed to
:meth:`pandas.DataFrame.eval` (where ``"age > age.mean()"``, ``age.shift(1)`` or
``age.rank()`` make one row's answer depend on every other row). It is parsed
(Python's :mod:`ast`) into a small grammar whose every operation is element-wise:

* column names (a name that is not an identifier in backticks, as in pandas:
  ```my col` > 1``), and constants: numbers, strings, ``True``, ``False``, ``None``;
* comparisons, chained or not (``18 <= age < 65``), and ``in`` / ``not in`` a list
  or tuple of constants;
* ``and``, ``or``, ``not`` and their element-wise spellings ``&``, ``|``, ``~``
  (always logical), ``^`` (exclusive or);
* arithmetic ``+ - * / // % **`` and a sign.

Anything else -- an attribute, a call, a subscript, an ``@`` name -- is refused when
the query is parsed, before the budget is charged.

A parsed query is evaluated column-wise, and *how* an operation is evaluated depends
on the dtypes of its operands only (public), never on their values:

* comparisons and ``in`` on typed (non-object) columns, and arithmetic whose column
  operands all have a numpy float dtype, run on whole columns with pandas' semantics
  (IEEE arithmetic for floats: division by zero gives ``inf`` or ``nan``, overflow
  ``inf``). These operations are element-wise and do not fail on a value; should one
  fail anyway, each row is redone alone, on a one-row slice of the same dtypes, so a
  row's answer is still the one it has in any frame (a row that fails is missing).
* Everything else -- arithmetic on integer, boolean, nullable, datetime or timedelta
  columns, and every operation on an object column or on a value computed value by
  value -- runs value by value (``Series.tolist()``) with Python's semantics.
  Integers are exact: ``2 ** 64`` is not numpy's wrapped ``0`` and ``2 ** -1`` is
  ``0.5``. (Pandas' own integer arithmetic is not per row: int64 wraps silently, a
  negative power fails for the whole column, and ``//`` by zero in one row turns the
  whole result to float.) A date or a duration compared with a string reads the
  string as one, as pandas does (``d + t > '2020-01-01'``).

A value on which an operation fails -- division by zero, a date out of range,
``"n/a" > 1``, string formatting with ``%``, a power whose exact result would have
more than 65,536 bits, a repetition of more than 65,536 items -- makes that row's
answer missing, like a missing value: the row is not counted, nor by the negation of
the query. So a row's answer is a function of its own values, the query and the
dtypes: no value can raise, warn, or change another row's answer.

Examples
--------
>>> import pandas as pd
>>> df = pd.DataFrame({"age": [30, 70, 80], "smoker": [True, True, False]})
>>> Query.parse("smoker and age > 60", df.columns).evaluate(df).tolist()
[False, True, False]
>>> Query.parse("age > age.mean()", df.columns)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: query 'age > age.mean()' uses a method call (.mean()): a query may use ...
"""

from __future__ import annotations

import ast
import operator
import re
import warnings
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pandas as pd

__all__ = ["Query"]

_ALLOWED: Final = (
    "a query may use column names, constants, comparisons, in / not in a list of "
    "constants, and / or / not (& | ~ ^) and arithmetic, so that each row's answer "
    "depends on that row alone. Compute anything else into a column first, or pass a "
    "boolean mask"
)

_ARITHMETIC: Final[dict[type[ast.operator], Callable[[Any, Any], Any]]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_COMPARISONS: Final[dict[type[ast.cmpop], Callable[[Any, Any], Any]]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_LOGICAL: Final[dict[type[Any], str]] = {
    ast.And: "and",
    ast.Or: "or",
    ast.BitAnd: "and",
    ast.BitOr: "or",
    ast.BitXor: "xor",
}
_BACKTICKS: Final = re.compile(r"`([^`]*)`")

#: What an evaluated node is: a column-length Series, or one value for every row.
Value = Any


def _problem(node: ast.AST) -> str | None:
    """What in ``node`` the grammar does not allow, or ``None``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return f"a method call (.{node.func.attr}())"
    if isinstance(node, ast.Call):
        return "a function call"
    if isinstance(node, ast.Attribute):
        return f"an attribute (.{node.attr})"
    if isinstance(node, ast.Subscript):
        return "a subscript ([...])"
    return f"{type(node).__name__.lower()} syntax"


@dataclass(frozen=True)
class Query:
    """A parsed per-record predicate (see the module).

    Attributes
    ----------
    text : str
        The query as written.
    tree : ast.expr
        Its checked syntax tree (backticked names replaced by placeholders).
    names : dict
        Placeholder or identifier -> the column label it names.
    """

    text: str
    tree: ast.expr
    names: dict[str, Hashable]

    @classmethod
    def parse(cls, text: str, columns: pd.Index) -> Query:
        """Parse and check ``text`` against the frame's column labels (public).

        Raises
        ------
        ValueError
            For a syntax error, a construct outside the grammar, or a name that is
            not a column.
        """
        names: dict[str, Hashable] = {}

        def placeholder(match: re.Match[str]) -> str:
            name = f"__column_{len(names)}__"
            names[name] = match.group(1)
            return name

        source = _BACKTICKS.sub(placeholder, text)
        try:
            tree = ast.parse(source.strip(), mode="eval").body
        except SyntaxError as exc:
            raise ValueError(f"query {text!r} is not a valid expression ({exc.msg})") from exc
        labels = {c for c in columns if isinstance(c, str)}
        listed = {
            id(right)
            for node in ast.walk(tree)
            if isinstance(node, ast.Compare)
            for op, right in zip(node.ops, node.comparators, strict=True)
            if isinstance(op, ast.In | ast.NotIn)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                label = names.get(node.id, node.id)
                if label not in labels:
                    shown = ", ".join(repr(c) for c in list(columns)[:10])
                    raise ValueError(
                        f"query {text!r} names {label!r}, which is not a column of the "
                        f"frame (columns: {shown}); quote a name with spaces in backticks"
                    )
                names.setdefault(node.id, label)
            elif isinstance(node, ast.Compare):
                for op, right in zip(node.ops, node.comparators, strict=True):
                    if isinstance(op, ast.In | ast.NotIn) and not _constant_list(right):
                        raise ValueError(
                            f"query {text!r}: 'in' needs a list or tuple of constants on "
                            f"its right, e.g. region in ['N', 'S']; {_ALLOWED}"
                        )
                    if not isinstance(op, ast.In | ast.NotIn) and type(op) not in _COMPARISONS:
                        raise ValueError(f"query {text!r} uses 'is' / 'is not'; use == / !=")
            elif isinstance(node, ast.List | ast.Tuple):
                if id(node) not in listed:
                    raise ValueError(f"query {text!r} uses a list outside 'in': {_ALLOWED}")
            elif not isinstance(
                node,
                ast.Constant
                | ast.BoolOp
                | ast.UnaryOp
                | ast.BinOp
                | ast.Load
                | ast.boolop
                | ast.unaryop
                | ast.operator
                | ast.cmpop,
            ):
                raise ValueError(f"query {text!r} uses {_problem(node)}: {_ALLOWED}")
            if isinstance(node, ast.BinOp) and type(node.op) not in _ARITHMETIC | _LOGICAL:
                raise ValueError(f"query {text!r} uses a bit shift or '@': {_ALLOWED}")
        return cls(text, tree, names)

    def evaluate(self, frame: pd.DataFrame) -> pd.Series:
        """Each row's answer, a boolean Series on the frame's index (never raises or
        warns on a value: see the module)."""
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            value = _Evaluator(self, frame, strict=False).node(self.tree)
        return _as_mask(value, frame.index)

    def check(self, frame: pd.DataFrame) -> None:
        """Refuse a query that fails on its columns' dtypes or is not a predicate.

        Only public facts are used: the query runs on no row of ``frame`` and, when
        every column it names has one, on a row of stand-in values of the columns'
        dtypes (zero, false, the empty string, the first category).

        Raises
        ------
        TypeError
            When an operation fails on the dtypes, or the answer is not boolean.
        """
        used = list(dict.fromkeys(self.names.values()))
        trials = [frame.iloc[:0]]
        stand_ins = {c: _stand_in(frame[c].dtype) for c in used}
        if all(s is not None for s in stand_ins.values()):
            trials.append(pd.DataFrame(stand_ins))
        for trial in trials:
            try:
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    value = _Evaluator(self, trial, strict=True).node(self.tree)
            except Exception as exc:
                dtypes = ", ".join(f"{c!r}: {frame[c].dtype}" for c in used)
                raise TypeError(
                    f"query {self.text!r} fails on the columns' dtypes ({dtypes}): {exc}. "
                    f"Compare values of a column's own type, e.g. a string with a string"
                ) from exc
            if not _is_boolean(value):
                kind = value.dtype if isinstance(value, pd.Series) else type(value).__name__
                raise TypeError(
                    f"query {self.text!r} must be a predicate per record (true or false); "
                    f"it gives {kind}. Compare values, e.g. age > 30"
                )


def _stand_in(dtype: Any) -> pd.Series | None:
    """One public value of ``dtype`` (``None`` for object columns: any value)."""
    if isinstance(dtype, np.dtype):
        return None if dtype.kind == "O" else pd.Series(np.zeros(1, dtype=dtype))
    if isinstance(dtype, pd.CategoricalDtype):
        code = 0 if len(dtype.categories) else -1
        return pd.Series(pd.Categorical.from_codes([code], dtype=dtype))
    for value in (0, False, ""):
        try:
            return pd.Series(pd.array([value], dtype=dtype))
        except Exception:
            continue
    return None


def _constant_list(node: ast.AST) -> bool:
    return isinstance(node, ast.List | ast.Tuple) and all(
        _constant(e) is not _NOT_CONSTANT for e in node.elts
    )


_NOT_CONSTANT: Final = object()


def _constant(node: ast.AST) -> Any:
    """The value of a constant or a signed number, else :data:`_NOT_CONSTANT`."""
    if isinstance(node, ast.Constant):
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub | ast.UAdd)
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, int | float)
    ):
        v = node.operand.value
        return -v if isinstance(node.op, ast.USub) else v
    return _NOT_CONSTANT


def _is_boolean(value: Value) -> bool:
    if isinstance(value, pd.Series):
        return pd.api.types.is_bool_dtype(value.dtype) or value.dtype == object
    return isinstance(value, bool | np.bool_)


def _truth(x: Any) -> bool | None:
    """A value as a truth value of the query: ``True``/``False``, else ``None``."""
    if x is True or x is False:
        return bool(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return None


def _logical(kind: str, a: bool | None, b: bool | None) -> bool | None:
    if a is None or b is None:  # a missing or failed operand: the row is not counted
        return None
    return (a and b) if kind == "and" else (a or b) if kind == "or" else (a != b)


class _Evaluator:
    """Evaluates a checked tree on a frame; ``strict`` lets a failure raise."""

    def __init__(self, query: Query, frame: pd.DataFrame, strict: bool) -> None:
        self.query, self.frame, self.strict = query, frame, strict
        self.index = frame.index

    def node(self, node: ast.expr) -> Value:
        constant = _constant(node)
        if constant is not _NOT_CONSTANT:
            return constant
        if isinstance(node, ast.Name):
            return self.frame[self.query.names[node.id]]
        if isinstance(node, ast.BoolOp):
            kind = _LOGICAL[type(node.op)]
            values = [self.node(v) for v in node.values]
            out = values[0]
            for v in values[1:]:
                out = self.logical(kind, out, v)
            return out
        if isinstance(node, ast.UnaryOp):
            operand = self.node(node.operand)
            if isinstance(node.op, ast.Not | ast.Invert):
                return self.negation(operand)
            sign = operator.neg if isinstance(node.op, ast.USub) else operator.pos
            return self.unary(sign, operand)
        if isinstance(node, ast.BinOp):
            left, right = self.node(node.left), self.node(node.right)
            if type(node.op) in _LOGICAL:
                return self.logical(_LOGICAL[type(node.op)], left, right)
            return self.binary(_ARITHMETIC[type(node.op)], left, right)
        assert isinstance(node, ast.Compare)
        answer: Value = True
        left = self.node(node.left)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            if isinstance(op, ast.In | ast.NotIn):
                listed = [_constant(e) for e in right_node.elts]  # type: ignore[attr-defined]
                found = self.membership(left, listed)
                step = self.negation(found) if isinstance(op, ast.NotIn) else found
                answer = self.logical("and", answer, step)
                continue
            right = self.node(right_node)
            answer = self.logical("and", answer, self.binary(_COMPARISONS[type(op)], left, right))
            left = right
        return answer

    # -- element-wise operations: typed columns whole, object columns value by value
    #
    # Which way an operation goes depends on its operands' dtypes only (public), so a
    # row's answer never depends on another row's values: an object column (which
    # can hold anything) is always read value by value with Python's semantics, and
    # so is anything computed from one; typed columns go through pandas, whose
    # operations cannot fail on one value once the query passed ``check``.

    def _columns(self, *values: Value) -> list[list[Any]]:
        n = len(self.index)
        return [v.tolist() if isinstance(v, pd.Series) else [v] * n for v in values]

    def _series(self, values: list[Any]) -> pd.Series:
        return pd.Series(values, index=self.index, dtype=object)

    def _whole(self, fn: Callable[[], Value], *operands: Value) -> Value:
        """``fn()`` when no operand is an object column, else ``_NOT_CONSTANT``
        (the caller goes value by value); a failure goes value by value too unless
        strict."""
        if any(isinstance(v, pd.Series) and v.dtype == object for v in operands):
            return _NOT_CONSTANT
        try:
            return fn()
        except Exception:
            if self.strict:
                raise
            return _NOT_CONSTANT

    def binary(self, op: Callable[[Any, Any], Any], a: Value, b: Value) -> Value:
        out = self._whole(lambda: op(a, b), a, b)
        if out is not _NOT_CONSTANT:
            return out
        left, right = self._columns(a, b)
        return self._series([_safely(op, x, y) for x, y in zip(left, right, strict=True)])

    def unary(self, op: Callable[[Any], Any], a: Value) -> Value:
        out = self._whole(lambda: op(a), a)
        if out is not _NOT_CONSTANT:
            return out
        (values,) = self._columns(a)
        return self._series([_safely(lambda x, _: op(x), x, None) for x in values])

    def logical(self, kind: str, a: Value, b: Value) -> Value:
        if _plain_bool(a) and _plain_bool(b):
            return (a & b) if kind == "and" else (a | b) if kind == "or" else (a ^ b)
        if not isinstance(a, pd.Series) and not isinstance(b, pd.Series):
            return _logical(kind, _truth(a), _truth(b))
        left, right = self._columns(a, b)
        return self._series(
            [_logical(kind, _truth(x), _truth(y)) for x, y in zip(left, right, strict=True)]
        )

    def negation(self, a: Value) -> Value:
        if _plain_bool(a):
            return ~a if isinstance(a, pd.Series) else not a
        if not isinstance(a, pd.Series):
            t = _truth(a)
            return None if t is None else not t
        (values,) = self._columns(a)
        return self._series([None if (t := _truth(x)) is None else not t for x in values])

    def membership(self, a: Value, listed: list[Any]) -> Value:
        if not isinstance(a, pd.Series):
            return _listed(a, listed)
        out = self._whole(lambda: a.isin(listed) & a.notna(), a)
        if out is not _NOT_CONSTANT:
            return out
        (values,) = self._columns(a)
        return self._series([_listed(x, listed) for x in values])


def _listed(x: Any, listed: list[Any]) -> bool | None:
    """``x in listed`` for one value: ``None`` (not counted) for a missing one."""
    if x is None or x is pd.NA or x is pd.NaT or (isinstance(x, float) and x != x):
        return None
    return any(_truth(_safely(operator.eq, x, v)) is True for v in listed)  # (never raises)


def _plain_bool(value: Value) -> bool:
    """A numpy-bool Series or a Python/numpy bool: ``& | ^ ~`` are logical on it."""
    if isinstance(value, pd.Series):
        return value.dtype == np.bool_
    return isinstance(value, bool | np.bool_)


def _safely(op: Callable[[Any, Any], Any], x: Any, y: Any) -> Any:
    try:
        out = op(x, y)
    except Exception:  # a value the operation fails on: the row is not counted
        return None
    return bool(out) if isinstance(out, np.bool_) else out


def _as_mask(value: Value, index: pd.Index) -> pd.Series:
    """True where the answer is true; false for false, missing or anything else."""
    if isinstance(value, pd.Series):
        if value.dtype == np.bool_:
            return value
        if isinstance(value.dtype, pd.BooleanDtype):
            return pd.Series(value.to_numpy(dtype=bool, na_value=False), index=index)
        flags = [_truth(v) is True for v in value.tolist()]
        return pd.Series(np.array(flags, dtype=bool), index=index)
    return pd.Series(_truth(value) is True, index=index, dtype=bool)
