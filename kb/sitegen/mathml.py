"""MathML Core for an equation as authored, printed from its parsed expression tree.

The expression is parsed by Python's own parser (`ast.parse` only parses; nothing
is compiled or evaluated) and every node is checked against a whitelist before it
is printed. The printer keeps the author's factor order, turns `BW_hbm` into a
subscript, a trailing `_star` into a starred superscript, `/` into a fraction and
`**` into a superscript, and adds parentheses only where precedence needs them.
Elements are built with ElementTree, so every name and number is escaped on output.
"""

from __future__ import annotations

import ast
import functools
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from contextvars import ContextVar

GREEK = {
    name: chr(code)
    for name, code in (
        ("alpha", 0x3B1),
        ("beta", 0x3B2),
        ("gamma", 0x3B3),
        ("delta", 0x3B4),
        ("epsilon", 0x3B5),
        ("eta", 0x3B7),
        ("theta", 0x3B8),
        ("kappa", 0x3BA),
        ("lambda", 0x3BB),
        ("mu", 0x3BC),
        ("nu", 0x3BD),
        ("rho", 0x3C1),
        ("sigma", 0x3C3),
        ("tau", 0x3C4),
        ("phi", 0x3C6),
        ("omega", 0x3C9),
        ("pi", 0x3C0),
        ("Delta", 0x394),
        ("Sigma", 0x3A3),
        ("Omega", 0x3A9),
    )
}
FUNCTIONS = ("max", "min", "log", "log2", "ln", "exp", "sqrt", "abs", "ceil", "floor")
MAX_SOURCE = 2000
MAX_NODES = 400
ALLOWED_NODES = (
    ast.Expression,
    ast.BinOp,
    ast.UnaryOp,
    ast.Call,
    ast.Name,
    ast.Constant,
    ast.Load,
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.Pow,
    ast.USub,
    ast.UAdd,
)
# Binding strength: a child weaker than its context gets parentheses.
PRECEDENCE = {ast.Add: 1, ast.Sub: 1, ast.Mult: 2, ast.Div: 2, ast.Pow: 4}
UNARY = 3  # a sign binds its operand tighter than * does ...
SIGNED = 1  # ... but a signed term inside a product or power is parenthesised
ATOM = 9
TIMES = "\u22c5"
INVISIBLE_TIMES = "\u2062"
MINUS = "\u2212"
# Display forms from the symbol registry: base, then _sub and ^sup in either order.
_SUB = r"_(?P<sub{n}>\{{[^{{}}]+\}}|[A-Za-z0-9]+)"
_SUP = r"\^(?P<sup{n}>\{{[^{{}}]+\}}|[^_{{}}\s])"
DISPLAY_RE = re.compile(  # `B_k^*` and `B^*_k` alike
    rf"(?P<base>[A-Za-z]+)(?:(?:{_SUB.format(n=1)})?(?:{_SUP.format(n=1)})?"
    rf"|{_SUP.format(n=2)}{_SUB.format(n=2)})"
)
DISPLAY_NAMES: ContextVar[Mapping[str, str] | None] = ContextVar("display_names", default=None)


class UnprintableExpression(ValueError):
    """The text is not an expression the whitelist allows (so it is shown as code only)."""


def parse_expression(text: str) -> ast.expr:
    """Parse one side of an equation into a whitelisted Python expression tree."""
    if len(text) > MAX_SOURCE:
        raise UnprintableExpression("expression too long")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise UnprintableExpression(f"not an expression: {exc.msg}") from None
    nodes = list(ast.walk(tree))
    if len(nodes) > MAX_NODES:
        raise UnprintableExpression("expression too large")
    for node in nodes:
        _check_node(node)
    return tree.body


def _check_node(node: ast.AST) -> None:
    if not isinstance(node, ALLOWED_NODES):
        raise UnprintableExpression(f"{type(node).__name__} is not allowed in an equation")
    if isinstance(node, ast.Constant) and (
        isinstance(node.value, bool) or not isinstance(node.value, (int, float))
    ):
        raise UnprintableExpression("only numeric literals are allowed")
    if isinstance(node, ast.Call) and (
        not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS or node.keywords
    ):
        raise UnprintableExpression("only max, min, log, sqrt, ... may be called")
    if isinstance(node, ast.Name) and (node.id.startswith("_") or "__" in node.id):
        raise UnprintableExpression(f"name {node.id!r} is not allowed")


def split_equation(text: str) -> list[str]:
    """Split `a = b` into ["a", "b"]; `==`, `<=`, `>=` and `!=` are not equals signs."""
    sides, start, i = [], 0, 0
    while i < len(text):
        if (
            text[i] == "="
            and text[i - 1 : i] not in ("=", "<", ">", "!")
            and (text[i + 1 : i + 2] != "=")
        ):
            sides.append(text[start:i])
            start = i + 1
        i += 1
    sides.append(text[start:])
    return [s.strip() for s in sides]


def equation_to_mathml(
    text: str, display: str = "block", names: Mapping[str, str] | None = None
) -> str:
    """Print `lhs = rhs` (or a bare expression) as MathML, with the source as alttext.

    `names` maps a symbol to its display form (`B^*`, `BW_{hbm}`), from the
    record's `symbols: {NAME: {display: ...}}`.
    """
    math = ET.Element("math", {"display": display, "alttext": text})
    row = ET.SubElement(math, "mrow")
    token = DISPLAY_NAMES.set(dict(names or {}))
    try:
        for index, side in enumerate(split_equation(text)):
            if index:
                _mo(row, "=")
            row.append(_print(parse_expression(side)))
    finally:
        DISPLAY_NAMES.reset(token)
    return ET.tostring(math, encoding="unicode")


@functools.lru_cache(maxsize=4096)
def name_to_mathml(name: str, shown: str = "") -> str:
    """Print one symbol (in its display form when it has one) as inline MathML.

    Once per distinct (name, display): a family of records declares the same symbols.
    """
    math = ET.Element("math", {"alttext": name})
    math.append(display_name(shown) if shown else print_name(name))
    return ET.tostring(math, encoding="unicode")


def display_name(shown: str) -> ET.Element:
    """`B^*` -> B with superscript *; `BW_{hbm}` -> BW with subscript hbm; `B_k^*` both."""
    match = DISPLAY_RE.fullmatch(shown.strip())
    if match is None:
        return _leaf("mi", shown)
    base = match.group("base")
    sub = match.group("sub1") or match.group("sub2")
    sup = match.group("sup1") or match.group("sup2")
    element = _leaf("mi", GREEK.get(base, base))
    sub_text, sup_text = (sub or "").strip("{}"), (sup or "").strip("{}")
    shown_sub = ",".join(GREEK.get(part.strip(), part.strip()) for part in sub_text.split(","))
    subscript = _leaf("mi", shown_sub)
    tag = "mn" if sup_text.isdigit() else "mi" if sup_text.isalnum() else "mo"
    script = _leaf(tag, sup_text)
    if sub_text and sup_text:
        return _tagged("msubsup", element, subscript, script)
    if sub_text:
        return _tagged("msub", element, subscript)
    return _tagged("msup", element, script) if sup else element


def print_tree(node: ast.expr) -> ET.Element:
    """Print a tree from `parse_expression` (inline prose formulas, kb.sitegen.inline_code)."""
    return _print(node)


def operator(text: str) -> ET.Element:
    """An operator element (`=`, `<`, `≤`) between printed sides."""
    return _leaf("mo", text)


def _leaf(tag: str, text: str) -> ET.Element:
    element = ET.Element(tag)
    element.text = text
    return element


def _mo(parent: ET.Element, text: str) -> None:
    parent.append(_leaf("mo", text))


def _row(*children: ET.Element) -> ET.Element:
    row = ET.Element("mrow")
    row.extend(children)
    return row


def _fenced(child: ET.Element, left: str = "(", right: str = ")") -> ET.Element:
    return _row(_leaf("mo", left), child, _leaf("mo", right))


def _strength(node: ast.expr) -> int:
    if isinstance(node, ast.BinOp):
        return PRECEDENCE[type(node.op)]
    if isinstance(node, ast.UnaryOp):
        return SIGNED
    return ATOM


def _print(node: ast.expr) -> ET.Element:
    printer = PRINTERS.get(type(node))
    if printer is None:
        raise UnprintableExpression(f"{type(node).__name__} cannot be printed")
    return printer(node)


def _print_child(node: ast.expr, context: int, strict: bool = False) -> ET.Element:
    """Print `node` inside an operator of strength `context`, parenthesised if weaker."""
    strength = _strength(node)
    weaker = strength < context or (strict and strength == context)
    return _fenced(_print(node)) if weaker else _print(node)


def print_name(name: str) -> ET.Element:
    """`BW_hbm` -> BW with subscript hbm; `B_star` -> B*; `alpha` -> α; `link_latency` whole.

    Only a short base (up to three letters: `T`, `BW`, `P`) takes a subscript; a
    word such as `link_latency` or `effective_bandwidth` is one identifier.
    """
    base, _, rest = name.partition("_")
    parts = rest.split("_") if rest else []
    starred = "star" in parts
    rest = "_".join(part for part in parts if part != "star")
    if rest and len(base) > 3 and base not in GREEK:
        base, rest = f"{base}_{rest}", ""
    element = _leaf("mi", GREEK.get(base, base))
    star = _leaf("mo", "*")
    if rest and starred:
        return _tagged("msubsup", element, _leaf("mi", GREEK.get(rest, rest)), star)
    if rest:
        return _tagged("msub", element, _leaf("mi", GREEK.get(rest, rest)))
    return _tagged("msup", element, star) if starred else element


def _print_name(node: ast.Name) -> ET.Element:
    shown = (DISPLAY_NAMES.get() or {}).get(node.id)
    return display_name(shown) if shown else print_name(node.id)


def _print_constant(node: ast.Constant) -> ET.Element:
    value = node.value
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return _leaf("mn", str(int(value)) if "e" not in repr(value) else repr(value))
    return _leaf("mn", str(value))


def _print_unary(node: ast.UnaryOp) -> ET.Element:
    sign = MINUS if isinstance(node.op, ast.USub) else "+"
    return _row(_leaf("mo", sign), _print_child(node.operand, UNARY, strict=True))


def _print_binop(node: ast.BinOp) -> ET.Element:
    op = type(node.op)
    if op is ast.Div:
        return _tagged("mfrac", _print(node.left), _print(node.right))
    if op is ast.Pow:
        base = _print_child(node.left, ATOM)
        return _tagged("msup", base, _print(node.right))
    strength = PRECEDENCE[op]
    left = _print_child(node.left, strength)
    right = _print_child(node.right, strength, strict=op is ast.Sub)
    return _row(left, _leaf("mo", _operator_text(node)), right)


def _tagged(tag: str, *children: ET.Element) -> ET.Element:
    element = ET.Element(tag)
    element.extend(children)
    return element


def _operator_text(node: ast.BinOp) -> str:
    if isinstance(node.op, ast.Add):
        return "+"
    if isinstance(node.op, ast.Sub):
        return MINUS
    number_times_name = isinstance(node.left, ast.Constant) and isinstance(node.right, ast.Name)
    return INVISIBLE_TIMES if number_times_name else TIMES


def _print_call(node: ast.Call) -> ET.Element:
    name = node.func.id if isinstance(node.func, ast.Name) else ""
    args = [_print(arg) for arg in node.args]
    if name == "sqrt" and len(args) == 1:
        return _tagged("msqrt", args[0])
    if name == "abs" and len(args) == 1:
        return _fenced(args[0], "|", "|")
    if name in ("ceil", "floor") and len(args) == 1:
        return _fenced(args[0], *(("\u2308", "\u2309") if name == "ceil" else ("\u230a", "\u230b")))
    head = _leaf("mi", name)
    if name == "log" and len(args) == 2:
        head, args = _tagged("msub", head, args[1]), args[:1]
    if name == "log2":
        head = _tagged("msub", _leaf("mi", "log"), _leaf("mn", "2"))
    inner = _row()
    for index, arg in enumerate(args):
        if index:
            _mo(inner, ",")
        inner.append(arg)
    return _row(head, _fenced(inner))


PRINTERS: dict[type, Callable[..., ET.Element]] = {
    ast.Name: _print_name,
    ast.Constant: _print_constant,
    ast.UnaryOp: _print_unary,
    ast.BinOp: _print_binop,
    ast.Call: _print_call,
}
