"""Code spans in prose: `a formula` printed as inline MathML, anything else as <code>.

Records write formulas and field names between backticks (`q < 1`,
`B*(1 - alpha/alpha_max)`, `state_shards: 1`, `kb ledger`). A reader should see
neither the backticks nor raw source: a span that is a formula (an expression
with an operator or call, or a relation `a = b`, `a < b`, `a <= b`, ... of such
expressions, `^` read as a power) is printed like the site's equations
(kb.sitegen.mathml: parsed by `ast.parse` against a whitelist, never evaluated,
the source kept as `alttext`); any other span (a word, a field, a command) is
`<code>`. A lone backtick without a partner stays text. Every character of the
input is escaped on output (markupsafe).
"""

from __future__ import annotations

import ast
import re
import xml.etree.ElementTree as ET
from functools import lru_cache

from markupsafe import escape

from kb.sitegen import mathml

SPAN = re.compile(r"`([^`]{1,2000})`")  # may wrap lines (YAML folds); config excerpts are long
RELATION = re.compile(r"(<=|>=|!=|==|≤|≥|≈|<|>|=)")
STARRED = re.compile(r"\b([A-Za-z]\w*)\*(?=\s*(?:<=|>=|==|!=|=|<|>|\)|,|\Z))")  # B* = ... -> B_star
RELATION_TEXT = {"<=": "≤", ">=": "≥", "!=": "≠", "==": "="}


def has_code(text: str) -> bool:
    """True when `text` holds a backtick (the fast path skips the rest)."""
    return "`" in text


def render(text: str, maths: bool = True) -> str:
    """`text` escaped, each backtick-quoted span printed as MathML or <code>.

    `maths=False` (a verbatim quotation) prints every span as <code>: a quotation
    keeps its characters, the backticks only become the code markup they meant.
    """
    if "`" not in text:
        return str(escape(text))
    out: list[str] = []
    at = 0
    for match in SPAN.finditer(text):
        out.append(str(escape(text[at : match.start()])))
        out.append(span(match.group(1)) if maths else _code(match.group(1)))
        at = match.end()
    out.append(str(escape(text[at:])))
    return "".join(out)


def plain(text: str) -> str:
    """`text` with the backticks of its code spans dropped (search snippets, titles)."""
    return SPAN.sub(lambda match: match.group(1), text) if "`" in text else text


@lru_cache(maxsize=2048)
def span(source: str) -> str:
    """One code span's markup: inline MathML when it is a formula, else <code>."""
    shown = formula(source)
    if shown is not None:
        return f'<span class="inline-math">{shown}</span>'
    return _code(source)


def _code(source: str) -> str:
    return f'<code class="inline-code">{escape(source)}</code>'


def formula(source: str) -> str | None:
    """`source` as inline MathML when it is a formula, else None."""
    pieces = RELATION.split(STARRED.sub(r"\1_star", " ".join(source.split())))
    sides, operators = pieces[::2], pieces[1::2]
    try:
        trees = [mathml.parse_expression(side.replace("^", "**")) for side in sides]
    except (mathml.UnprintableExpression, RecursionError, ValueError):
        return None
    if not operators and not _has_operator(trees[0]):
        return None  # a lone word or number is a name, not a formula: <code>
    math = ET.Element("math", {"alttext": source})
    row = ET.SubElement(math, "mrow")
    try:
        for index, tree in enumerate(trees):
            if index:
                op = operators[index - 1]
                row.append(mathml.operator(RELATION_TEXT.get(op, op)))
            row.append(mathml.print_tree(tree))
    except mathml.UnprintableExpression:
        return None
    return ET.tostring(math, encoding="unicode")


def _has_operator(tree: ast.expr) -> bool:
    return isinstance(tree, (ast.BinOp, ast.Call)) or (
        isinstance(tree, ast.UnaryOp) and not isinstance(tree.operand, ast.Constant)
    )
