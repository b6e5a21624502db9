"""The safe expression language: `ast.parse` + a strict whitelist + a SymPy builder.

Record text is never given to eval, exec, sympify, parse_expr or lambdify: Python's
parser only *parses*, every node is checked against a whitelist, and SymPy objects
are built directly. Literals become exact rationals (`0.1` is 1/10). Sizes are
bounded (length, node count, depth, exponent size) so a hostile string fails fast.

Grammar: numbers, names, `+ - * / **`, unary minus, and calls of max, min, log,
exp, sqrt, ceil, floor. An equation is `lhs = rhs` with exactly one `=`.
"""

from __future__ import annotations

import ast
import keyword
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import sympy as sp
from sympy.printing.str import StrPrinter

MAX_LENGTH = 500
MAX_NODES = 300
MAX_DEPTH = 40
MAX_SYMBOLIC_EXPONENT = 64
MAX_LITERAL_EXPONENT = 300  # physical figures span ~1e-30..1e30; doubles stop at 1e308

_DECIMAL_RE = re.compile(r"(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?")

NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*\Z")

FUNCTIONS: Mapping[str, tuple[Callable[..., Any], int, int | None]] = {
    "max": (sp.Max, 2, None),
    "min": (sp.Min, 2, None),
    "log": (sp.log, 1, 2),
    "exp": (sp.exp, 1, 1),
    "sqrt": (sp.sqrt, 1, 1),
    "ceil": (sp.ceiling, 1, 1),
    "floor": (sp.floor, 1, 1),
}
RESERVED = frozenset(FUNCTIONS)
_NOT_FINITE_REAL = (sp.zoo, sp.oo, -sp.oo, sp.nan, sp.I)
UNEVALUATED_WHEN_CONSTANT = frozenset({"floor", "ceil"})


class ExpressionError(ValueError):
    """A string that is not a safe, well-formed expression.

    `reason` is "unsafe" (outside the whitelist or over a limit), "syntax" (not
    well-formed: an operand or a parenthesis missing) or "undeclared" (a name that
    the record does not declare as a symbol).
    """

    def __init__(self, message: str, reason: str = "unsafe", name: str = "") -> None:
        super().__init__(message)
        self.reason = reason
        self.name = name


@dataclass(frozen=True)
class Parsed:
    """One parsed expression: the validated AST as authored and its SymPy value."""

    source: str
    tree: ast.expr
    value: sp.Expr


@dataclass(frozen=True)
class ParsedEquation:
    """`lhs = rhs`: both sides as authored (AST) and as SymPy expressions."""

    source: str
    lhs: Parsed
    rhs: Parsed

    @property
    def residual(self) -> sp.Expr:
        """Return lhs - rhs, zero exactly when the equation holds."""
        return self.lhs.value - self.rhs.value

    def as_sympy(self) -> sp.Eq:
        return sp.Eq(self.lhs.value, self.rhs.value, evaluate=False)


def make_symbol(name: str) -> sp.Symbol:
    """Create a symbol the one way kb does: positive real (sizes, rates, counts)."""
    return sp.Symbol(check_name(name), positive=True)


def check_name(name: str) -> str:
    """Return `name` if it is a plain ASCII identifier kb accepts as a symbol."""
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise ExpressionError(f"name {name!r} is not a plain identifier like BW_link")
    if name in RESERVED:
        raise ExpressionError(f"name {name!r} is a function name, not a symbol")
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        raise ExpressionError(f"name {name!r} is a Python keyword; pick another name")
    return name


def parse_expression(
    source: str,
    symbols: Mapping[str, sp.Symbol] | None = None,
    allow_undeclared: bool = False,
) -> Parsed:
    """Parse one side of an equation; names must be in `symbols` unless allowed."""
    text = _checked_text(source)
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        detail = _syntax_detail(text, exc)
        raise ExpressionError(f"{text!r} is not an expression: {detail}", "syntax") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ExpressionError(f"not an expression: {_short(exc)}") from None
    _check_size(tree)
    builder = _Builder(text, symbols or {}, allow_undeclared)
    try:
        value = builder.build(tree.body, 0)
    except ExpressionError:
        raise
    except (ValueError, TypeError, ArithmeticError, RecursionError) as exc:
        # e.g. max() of values SymPy cannot order (max(B, sqrt(-B)))
        raise ExpressionError(f"not a real-valued expression: {_short(exc)}") from None
    if value.has(*_NOT_FINITE_REAL):
        # log(0) builds zoo, sqrt(-1) builds I: no figure is infinite or imaginary
        raise ExpressionError(
            "not a finite real expression (a log of 0, a root of a negative, ...)"
        )
    return Parsed(text, tree.body, value)


def parse_equation(
    source: object,
    symbols: Mapping[str, sp.Symbol] | None = None,
    allow_undeclared: bool = False,
) -> ParsedEquation:
    """Parse `lhs = rhs` (exactly one `=`, no comparisons)."""
    if not isinstance(source, str):
        raise ExpressionError("an equation must be a string")
    if re.search(r"==|<=|>=|!=|<|>", source):
        raise ExpressionError("comparisons are not allowed; write one '='")
    parts = source.split("=")
    if len(parts) != 2:
        raise ExpressionError(f"an equation needs exactly one '=', found {len(parts) - 1}")
    lhs = parse_expression(parts[0], symbols, allow_undeclared)
    rhs = parse_expression(parts[1], symbols, allow_undeclared)
    return ParsedEquation(source.strip(), lhs, rhs)


def _checked_text(source: object) -> str:
    if not isinstance(source, str):
        raise ExpressionError("an expression must be a string")
    if len(source) > MAX_LENGTH:
        raise ExpressionError(f"expression is {len(source)} characters long, limit {MAX_LENGTH}")
    if any(ch in source for ch in "\n\r;\\"):
        raise ExpressionError("an expression is one line: no newlines, semicolons, backslashes")
    if "#" in source:  # Python would read the rest as a comment and check only the start
        raise ExpressionError("an expression has no comments: '#' is not allowed")
    if not source.isascii():
        raise ExpressionError("an expression is ASCII only (write alpha, not a Greek letter)")
    text = source.strip()
    if not text:
        raise ExpressionError("empty expression")
    return text


def _check_size(tree: ast.AST) -> None:
    count = sum(1 for _ in ast.walk(tree))
    if count > MAX_NODES:
        raise ExpressionError(f"expression has {count} syntax nodes, limit {MAX_NODES}")


def _syntax_detail(text: str, exc: SyntaxError) -> str:
    """Say what is wrong in an author's words (Python's message names no part of the text)."""
    opened, closed = text.count("("), text.count(")")
    if opened != closed:
        return f"unbalanced parentheses ({opened} '(' and {closed} ')')"
    if text[-1] in "+-*/":
        return f"it ends in {text[-1]!r}: an operand is missing"
    if text[0] in "*/":
        return f"it starts with {text[0]!r}: an operand is missing"
    pair = re.search(r"[\w.)]\s+[\w(]", text)
    if pair:
        return f"two terms side by side at {pair.group(0)!r}: write * (or + -) between them"
    return str(exc.msg or "invalid syntax")


def _short(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) < 120 else text[:117] + "..."


class _Builder:
    """Walks a parsed tree, refusing anything outside the whitelist, building SymPy."""

    def __init__(self, source: str, symbols: Mapping[str, sp.Symbol], allow: bool) -> None:
        self.source = source
        self.symbols = dict(symbols)
        self.allow_undeclared = allow

    def build(self, node: ast.AST, depth: int) -> sp.Expr:
        if depth > MAX_DEPTH:
            raise ExpressionError(f"expression nested deeper than {MAX_DEPTH}")
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, ast.Name):
            return self.name(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = self.build(node.operand, depth + 1)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.BinOp):
            return self.binop(node, depth)
        if isinstance(node, ast.Call):
            return self.call(node, depth)
        raise ExpressionError(f"syntax {type(node).__name__} is not allowed")

    def constant(self, node: ast.Constant) -> sp.Expr:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ExpressionError(f"literal {value!r} is not allowed (numbers only)")
        text = (ast.get_source_segment(self.source, node) or repr(value)).replace("_", "")
        _check_magnitude(text)
        return sp.Rational(text)

    def name(self, name: str) -> sp.Expr:
        if name in RESERVED:
            raise ExpressionError(f"function {name!r} used without arguments")
        check_name(name)
        if name in self.symbols:
            return self.symbols[name]
        if not self.allow_undeclared:
            raise ExpressionError(f"symbol {name!r} is not declared", "undeclared", name)
        symbol = self.symbols[name] = make_symbol(name)
        return symbol

    def binop(self, node: ast.BinOp, depth: int) -> sp.Expr:
        op = node.op
        if isinstance(op, ast.BitXor):
            raise ExpressionError("'^' is not a power here: write ** for a power", "syntax")
        if not isinstance(op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)):
            raise ExpressionError(f"operator {type(op).__name__} is not allowed")
        left = self.build(node.left, depth + 1)
        right = self.build(node.right, depth + 1)
        if isinstance(op, ast.Add):
            return left + right
        if isinstance(op, ast.Sub):
            return left - right
        if isinstance(op, ast.Mult):
            return left * right
        if isinstance(op, ast.Div):
            if right == 0:
                raise ExpressionError("division by zero")
            return left / right
        return _power(left, right)

    def call(self, node: ast.Call, depth: int) -> sp.Expr:
        func = node.func
        if not isinstance(func, ast.Name) or func.id not in FUNCTIONS:
            label = func.id if isinstance(func, ast.Name) else type(func).__name__
            if label in self.symbols:  # `m (t_f + t_b)`: a product without its *
                raise ExpressionError(
                    f"{label}(...) multiplies without '*': two terms side by side", "syntax"
                )
            raise ExpressionError(f"call of {label!r} is not allowed")
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            raise ExpressionError("keyword or starred arguments are not allowed")
        function, low, high = FUNCTIONS[func.id]
        count = len(node.args)
        if count < low or (high is not None and count > high):
            raise ExpressionError(f"{func.id}() takes {low}..{high or 'n'} arguments, got {count}")
        args = [self.build(arg, depth + 1) for arg in node.args]
        if func.id in UNEVALUATED_WHEN_CONSTANT and _irrational_constant(args[0]):
            # SymPy evaluates floor/ceil of a constant while building it, to as many
            # digits as the integer part needs: floor(1e300*log(1e300)) never returns.
            # Built unevaluated, the work happens later, inside a check's time budget.
            # (Of a rational it is exact and instant, so it is evaluated as before.)
            return function(*args, evaluate=False)
        return function(*args)


def _irrational_constant(value: sp.Expr) -> bool:
    """A constant (no symbols) that is not a plain rational: log(1e300), exp(3), sqrt(2)."""
    return not value.free_symbols and not value.is_Rational


def _check_magnitude(text: str) -> None:
    """Refuse a literal beyond 10**±MAX_LITERAL_EXPONENT (1e9999999 costs seconds to build)."""
    match = _DECIMAL_RE.fullmatch(text)
    if match is None:
        return  # not a decimal literal: Rational refuses it
    whole, fraction, exponent = match.group(1), match.group(2) or "", match.group(3)
    digits = (whole + fraction).lstrip("0")
    if not digits:
        return  # zero
    if exponent is not None and len(exponent.lstrip("+-").lstrip("0")) > 6:
        raise ExpressionError(
            f"literal {text[:40]} is out of range (beyond 1e±{MAX_LITERAL_EXPONENT})"
        )
    scale = int(exponent or "0")
    leading = (
        len(whole.lstrip("0"))
        if whole.lstrip("0")
        else -(len(fraction) - len(fraction.lstrip("0")))
    )
    if abs(scale + leading - 1) > MAX_LITERAL_EXPONENT:
        raise ExpressionError(
            f"literal {text[:40]} is out of range (beyond 1e±{MAX_LITERAL_EXPONENT})"
        )


def _power(base: sp.Expr, exponent: sp.Expr) -> sp.Expr:
    """base**exponent, refusing numeric powers that would be huge to compute."""
    if exponent.is_Rational:
        size_bits = _bits(exponent)
        if base.is_Rational and size_bits > 1 and (size_bits - 1) + _log2_bits(base) > 12:
            raise ExpressionError("numeric power too large to compute")
        if not base.is_Number and abs(exponent) > MAX_SYMBOLIC_EXPONENT:
            raise ExpressionError(f"exponent {exponent} is larger than {MAX_SYMBOLIC_EXPONENT}")
    if base == 0 and exponent.is_negative:
        raise ExpressionError("division by zero")
    result = base**exponent
    if result.is_Rational and result != 0 and _beyond_bound(result):
        raise ExpressionError(f"numeric power beyond 1e±{MAX_LITERAL_EXPONENT}")
    for power in result.atoms(sp.Pow) if not result.is_Number else ():
        # SymPy folds exp(1e3)**log(B) into B**1000: the bound holds for what is built
        if (
            not power.base.is_Number
            and power.exp.is_Rational
            and abs(power.exp) > MAX_SYMBOLIC_EXPONENT
        ):
            raise ExpressionError(f"exponent {power.exp} is larger than {MAX_SYMBOLIC_EXPONENT}")
    return result


def _beyond_bound(number: sp.Rational) -> bool:
    """|number| > 10**MAX_LITERAL_EXPONENT or < 10**-MAX_LITERAL_EXPONENT (by digit count)."""
    digits = len(str(abs(int(number.p)))) - len(str(int(number.q)))
    return abs(digits) > MAX_LITERAL_EXPONENT


def _bits(number: sp.Rational) -> int:
    """Bits of the larger of |numerator| and denominator."""
    return max(abs(int(number.p)).bit_length(), int(number.q).bit_length())


def _log2_bits(number: sp.Rational) -> int:
    """log2 of the bit size of a rational base (so |exp| * bits stays under 4096)."""
    return max(_bits(number), 1).bit_length()


def to_text(expr: sp.Expr) -> str:
    """Print a SymPy expression back in the safe language.

    parse(to_text(e)) == e while e's constants are within the literal bound
    (tests/fuzz/test_expressions.py); past it, the text is for reading only.
    """
    text: str = _SafePrinter().doprint(expr)
    return text


class _SafePrinter(StrPrinter):  # type: ignore[misc]  # SymPy ships no types: StrPrinter is Any
    """SymPy's str printer with kb's function names (max, min, ceil) and no constants."""

    def _print_Max(self, expr: sp.Expr) -> str:
        return "max({})".format(", ".join(self._print(a) for a in expr.args))

    def _print_Min(self, expr: sp.Expr) -> str:
        return "min({})".format(", ".join(self._print(a) for a in expr.args))

    def _print_ceiling(self, expr: sp.Expr) -> str:
        return f"ceil({self._print(expr.args[0])})"

    def _print_Exp1(self, expr: sp.Expr) -> str:
        return "exp(1)"


class NotCompiled(ValueError):
    """An expression with an operation outside the tree language asked for (see `to_tree`)."""


_TREE_FUNCTIONS = ((sp.Max, "max"), (sp.Min, "min"), (sp.floor, "floor"), (sp.ceiling, "ceil"))
_REAL_FUNCTIONS = ((sp.exp, "exp"), (sp.log, "log"))


def to_tree(expr: sp.Expr, real: bool = False) -> list[Any]:
    """Compile a SymPy expression to kb's one evaluable tree, or raise NotCompiled.

    The tree is JSON (kb/equations/exact.py documents its shape): `["n", "p/q"]`,
    `["s", name]`, `["+", ...]`, `["*", ...]`, `["^", base, exponent]`, `["max"|"min",
    ...]`, `["floor"|"ceil", a]`. This is the only compiler: the checker's plans
    (exact.evaluate_tree replays them) take the exact language; the site's
    calculators (`real=True`, serialised for the page's script) take it with
    fractional powers (sqrt), `["exp", a]`, `["log", a]` and e as `["exp", ["n", "1"]]`.
    """
    if expr.is_Rational:
        return ["n", str(expr)]
    if expr.is_Symbol:
        return ["s", expr.name]
    if real and expr == sp.E:
        return ["exp", ["n", "1"]]
    if isinstance(expr, sp.Add):
        return ["+", *(to_tree(a, real) for a in expr.args)]
    if isinstance(expr, sp.Mul):
        return ["*", *(to_tree(a, real) for a in expr.args)]
    if isinstance(expr, sp.Pow) and (real or not (expr.exp.is_Number and not expr.exp.is_Integer)):
        return [
            "^",
            to_tree(expr.base, real),
            to_tree(expr.exp, real),
        ]  # x**B: exact once B is an integer
    for kind, name in (*_TREE_FUNCTIONS, *(_REAL_FUNCTIONS if real else ())):
        if isinstance(expr, kind):
            return [name, *(to_tree(a, real) for a in expr.args)]
    language = "in the calculator's language" if real else "exact arithmetic"
    raise NotCompiled(f"{type(expr).__name__} is not {language}")
