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

A value on which a value-by-value operation fails -- division by zero, a date out of
range, ``"n/a" > 1``, string formatting with ``%``, a power whose exact result would
have more than 65,536 bits, a repetition of more than 65,536 items -- is missing, and
so is anything computed from it: the row is counted neither by the query nor by its
negation. (A whole-column comparison follows pandas: ``nan`` compares false, ``NA``
is missing.) So a row's answer is a function of its own values, the query and the
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
import datetime
import functools
import operator
import re
import warnings
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from fractions import Fraction
from numbers import Rational
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
        if _arithmetic(self.tree):  # a number, whatever the dtypes (computed value by
            raise TypeError(  # value, it would be an object Series on the trial rows)
                f"query {self.text!r} must be a predicate per record (true or false); "
                f"it gives a number. Compare it, e.g. ({self.text}) > 0"
            )
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


def _arithmetic(node: ast.expr) -> bool:
    """Whether ``node`` is arithmetic (a number, not a truth value)."""
    if isinstance(node, ast.BinOp):
        return type(node.op) in _ARITHMETIC
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd)


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
    """Evaluates a checked tree on a frame; ``strict`` lets a failure raise.

    ``strict`` is for :meth:`Query.check`, on public trial rows only: there an
    operation that fails on the whole column raises, and so does a value-by-value
    operation that fails with a :class:`TypeError` on values none of which is
    missing (the types cannot do it; other failures, like a division by the
    stand-in zero, still make a value missing).
    """

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
            return self.arithmetic(sign, operand)
        if isinstance(node, ast.BinOp):
            left, right = self.node(node.left), self.node(node.right)
            if type(node.op) in _LOGICAL:
                return self.logical(_LOGICAL[type(node.op)], left, right)
            return self.arithmetic(_ARITHMETIC[type(node.op)], left, right)
        assert isinstance(node, ast.Compare)
        steps: list[Value] = []  # a < b < c is a < b and b < c
        left = self.node(node.left)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            if isinstance(op, ast.In | ast.NotIn):
                listed = [_constant(e) for e in right_node.elts]  # type: ignore[attr-defined]
                found = self.membership(left, listed)
                steps.append(self.negation(found) if isinstance(op, ast.NotIn) else found)
                continue
            right = self.node(right_node)
            steps.append(self.comparison(type(op), left, right))
            left = right
        answer = steps[0]
        for step in steps[1:]:
            answer = self.logical("and", answer, step)
        return answer

    # -- element-wise operations
    #
    # Whether an operation runs on whole columns or value by value is decided from
    # its operands' dtypes alone (public; see the module): never from whether it
    # fails on some value, so a row's answer never depends on another row's values.

    def comparison(self, op: type[ast.cmpop], a: Value, b: Value) -> Value:
        """``a op b``: whole columns when no operand is an object column."""
        if _typed(a, b):
            return self._whole(_COMPARISONS[op], a, b)
        return self._each(_PYTHON_COMPARISONS[op], a, b)

    def arithmetic(self, op: Callable[..., Any], *operands: Value) -> Value:
        """``op(*operands)``: whole columns when every column operand is a numpy
        float (IEEE arithmetic cannot fail or wrap), else value by value."""
        columns = [v for v in operands if isinstance(v, pd.Series)]
        if columns and all(_floating(v.dtype) for v in columns):
            return self._whole(op, *operands)
        return self._each(_PYTHON_ARITHMETIC.get(op, op), *operands)

    def membership(self, a: Value, listed: list[Any]) -> Value:
        if _typed(a):
            return self._whole(lambda x: x.isin(listed) & x.notna(), a)
        return self._each(lambda x: _listed(x, listed), a)

    def logical(self, kind: str, a: Value, b: Value) -> Value:
        if _plain_bool(a) and _plain_bool(b):
            return (a & b) if kind == "and" else (a | b) if kind == "or" else (a ^ b)
        return self._each(lambda x, y: _logical(kind, _truth(x), _truth(y)), a, b)

    def negation(self, a: Value) -> Value:
        if _plain_bool(a):
            return ~a if isinstance(a, pd.Series) else not a
        return self._each(lambda x: None if (t := _truth(x)) is None else not t, a)

    def _whole(self, op: Callable[..., Any], *operands: Value) -> Value:
        """``op`` on whole columns. Should it fail (it is chosen not to), each row is
        redone alone, so that no row's answer depends on whether another one fails."""
        try:
            return op(*operands)
        except Exception:
            if self.strict:
                raise
        return self._row_by_row(op, operands)

    def _row_by_row(self, op: Callable[..., Any], operands: tuple[Value, ...]) -> pd.Series:
        """``op`` on each row alone (one-row slices: the same dtypes and semantics as
        the whole columns); a row it fails on is missing. A float result stays float
        (its dtype is the one ``op`` gives on no row), so what comes next is
        evaluated the same way as after a whole-column ``op``."""

        def rows(at: slice) -> list[Value]:
            return [v.iloc[at] if isinstance(v, pd.Series) else v for v in operands]

        values: list[Any] = []
        for i in range(len(self.index)):
            try:
                out = op(*rows(slice(i, i + 1)))
                values.append(out.iloc[0] if isinstance(out, pd.Series) else out)
            except Exception:
                values.append(None)
        result = self._series(values)
        try:
            dtype = op(*rows(slice(0, 0))).dtype
        except Exception:
            return result
        return result.astype(dtype) if _floating(dtype) else result

    def _each(self, op: Callable[..., Any], *operands: Value) -> Value:
        """``op`` value by value (Python's semantics; see :func:`_apply`), as an
        object Series -- or once, when every operand is a constant."""
        if not any(isinstance(v, pd.Series) for v in operands):
            return _apply(op, operands, self.strict)
        n = len(self.index)
        columns = [v.tolist() if isinstance(v, pd.Series) else [v] * n for v in operands]
        return self._series([_apply(op, row, self.strict) for row in zip(*columns, strict=True)])

    def _series(self, values: list[Any]) -> pd.Series:
        return pd.Series(values, index=self.index, dtype=object)


def _typed(*operands: Value) -> bool:
    """Some operand is a column, and none is an object column (which holds anything)."""
    columns = [v for v in operands if isinstance(v, pd.Series)]
    return bool(columns) and all(v.dtype != object for v in columns)


def _floating(dtype: Any) -> bool:
    return isinstance(dtype, np.dtype) and dtype.kind == "f"


def _apply(op: Callable[..., Any], values: tuple[Any, ...], strict: bool) -> Any:
    """``op(*values)`` on one row's values: ``None`` (missing) when it fails."""
    try:
        out = op(*values)
    except TypeError:
        if strict and all(v is not None for v in values):
            raise  # the trial rows of ``check``: the types cannot do it
        return None
    except Exception:  # a value the operation fails on: the row is not counted
        return None
    return bool(out) if isinstance(out, np.bool_) else out


# -- Python's semantics, with the few guards that keep one value from taking
#    unbounded time or memory

#: The most bits of an exact power, and the most items of a repeated sequence.
_MAX_SIZE: Final = 1 << 16


def _power(x: Any, y: Any) -> Any:
    """``x ** y``; an exact power (integer or fraction) of more than
    :data:`_MAX_SIZE` bits fails instead of taking unbounded time and memory, and so
    does a fractional power of a negative real (Python makes it complex)."""
    if isinstance(x, int | Fraction) and isinstance(y, Rational) and y.denominator == 1:
        times = int(y.numerator)  # a whole exponent: Python computes the power exactly
        size = max(abs(x.numerator).bit_length(), x.denominator.bit_length())
        exact = times > 0 or isinstance(x, Fraction)  # an int to a negative power: a float
        if exact and size > 1 and size * abs(times) > _MAX_SIZE:
            raise OverflowError(f"a power of more than {_MAX_SIZE} bits")
    out = x**y
    if isinstance(out, complex) and not isinstance(x, complex) and not isinstance(y, complex):
        raise ValueError("a fractional power of a negative number")  # numpy: nan
    return out


def _multiply(x: Any, y: Any) -> Any:
    """``x * y``; repeating a sequence more than :data:`_MAX_SIZE` items long fails."""
    for items, times in ((x, y), (y, x)):
        sequence = isinstance(items, str | bytes | list | tuple)
        if sequence and isinstance(times, int | np.integer) and len(items) * int(times) > _MAX_SIZE:
            raise OverflowError(f"a repetition of more than {_MAX_SIZE} items")
    return x * y


def _modulo(x: Any, y: Any) -> Any:
    """``x % y``, arithmetic only: ``%`` on a string (formatting) fails."""
    if isinstance(x, str | bytes):
        raise TypeError("% of a string is formatting, not arithmetic")
    return x % y


_PYTHON_ARITHMETIC: Final[dict[Callable[..., Any], Callable[..., Any]]] = {
    operator.pow: _power,
    operator.mul: _multiply,
    operator.mod: _modulo,
}


@functools.lru_cache(maxsize=256)
def _parse_time(text: str, duration: bool) -> Any:
    """``text`` read as a duration or a date, else ``None`` (cached: a query's
    constant is compared with every row)."""
    try:
        return pd.Timedelta(text) if duration else pd.Timestamp(text)
    except Exception:
        return None


def _as_time(text: str, like: datetime.datetime | datetime.timedelta) -> Any:
    """``text`` read as a date (in ``like``'s time zone) or a duration, as pandas
    reads a string compared with a datetime or timedelta column; unchanged if it is
    not one."""
    duration = isinstance(like, datetime.timedelta)
    when = _parse_time(text, duration)
    if when is None or when is pd.NaT:
        return text if when is None else when
    zone = None if duration else like.tzinfo  # type: ignore[union-attr]
    return when.tz_localize(zone) if zone is not None and when.tzinfo is None else when


def _times(x: Any, y: Any) -> tuple[Any, Any]:
    """``x, y``, with a string compared with a date or duration read as one."""
    if isinstance(y, str) and isinstance(x, _TIMES):
        return x, _as_time(y, x)
    if isinstance(x, str) and isinstance(y, _TIMES):
        return _as_time(x, y), y
    return x, y


_TIMES: Final = (datetime.datetime, datetime.timedelta)


def _comparing(op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def compare(x: Any, y: Any) -> Any:
        return op(*_times(x, y))

    return compare


_PYTHON_COMPARISONS: Final = {kind: _comparing(op) for kind, op in _COMPARISONS.items()}


def _listed(x: Any, listed: list[Any]) -> bool | None:
    """``x in listed`` for one value: ``None`` (not counted) for a missing one."""
    if x is None or x is pd.NA or x is pd.NaT or (isinstance(x, float) and x != x):
        return None
    # (plain ==, a date is not read from a string: the same as ``isin`` on a column)
    return any(_truth(_apply(operator.eq, (x, v), False)) is True for v in listed)


def _plain_bool(value: Value) -> bool:
    """A numpy-bool Series or a Python/numpy bool: ``& | ^ ~`` are logical on it."""
    if isinstance(value, pd.Series):
        return value.dtype == np.bool_
    return isinstance(value, bool | np.bool_)


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
