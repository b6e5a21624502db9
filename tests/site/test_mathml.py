"""The MathML printer: structure, precedence, escaping, and a meaning-preserving property."""

from __future__ import annotations

import ast
import xml.etree.ElementTree as ET
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from kb.sitegen.mathml import (
    GREEK,
    UnprintableExpression,
    equation_to_mathml,
    name_to_mathml,
    split_equation,
)


def tree(text: str) -> ET.Element:
    return ET.fromstring(equation_to_mathml(text))


def test_seed_b_star_prints_star_superscript_fraction_and_subscripts() -> None:
    math = tree("B_star = P_layer*BW_link/(2*d*BW_hbm)")
    assert math.get("alttext") == "B_star = P_layer*BW_link/(2*d*BW_hbm)"
    sup = math.find(".//msup")
    assert [c.text for c in sup] == ["B", "*"]
    frac = math.find(".//mfrac")
    assert frac is not None and len(frac) == 2
    subs = [(s[0].text, s[1].text) for s in math.iter("msub")]
    assert ("P", "layer") in subs and ("BW", "hbm") in subs and ("BW", "link") in subs


@pytest.mark.parametrize(
    ("source", "parens"),
    [
        ("y = a + b*c", 0),
        ("y = (a + b)*c", 1),
        ("y = a - (b - c)", 1),
        ("y = a - b - c", 0),
        ("y = a/(b + c)", 0),  # the fraction bar groups
        ("y = (a*b)**2", 1),
        ("y = -(a*b)", 1),
        ("y = a*-b", 1),
    ],
)
def test_parentheses_only_where_precedence_needs_them(source: str, parens: int) -> None:
    opened = [mo for mo in tree(source).iter("mo") if mo.text == "("]
    assert len(opened) == parens


@pytest.mark.parametrize(
    "source",
    [
        "y = __import__('os')",
        "y = x.attr",
        "y = 'text'",
        "y = [1]",
        "y = f(x)",
        "y = lambda: 1",
        "y = x if x else 1",
        "y = (x := 1)",
    ],
)
def test_anything_outside_the_whitelist_is_refused(source: str) -> None:
    with pytest.raises(UnprintableExpression):
        equation_to_mathml(source)


def test_source_text_is_escaped_in_alttext() -> None:
    html = equation_to_mathml("a = b  ", display="inline")
    assert 'alttext="a = b  "' in html
    hostile = 'a = b"><script>'
    with pytest.raises(UnprintableExpression):
        equation_to_mathml(hostile)


def test_split_equation_keeps_comparison_operators() -> None:
    assert split_equation("a = b") == ["a", "b"]
    assert split_equation("a <= b") == ["a <= b"]


# ---- property: the printed MathML means the same expression -------------------------------

NAMES = [
    "a",
    "b",
    "x",
    "d",
    "BW_hbm",
    "P_layer",
    "B_star",
    "alpha",
    "T_input_imbalance",
    "link_latency",
    "T_r",
    "B_star_k",
]
VALUES = {name: Fraction(i + 2, 3) for i, name in enumerate(NAMES)}
BACK_OPS = {"\u22c5": "*", "\u2062": "*", "\u2212": "-"}
GREEK_BACK = {v: k for k, v in GREEK.items()}


def back(el: ET.Element) -> str:
    """Read MathML back into Python syntax (fraction and power parts parenthesised)."""
    kids = list(el)
    if el.tag in ("mi", "mn"):
        return GREEK_BACK.get(el.text or "", el.text or "")
    if el.tag == "mo":
        return BACK_OPS.get(el.text or "", el.text or "")
    if el.tag == "mfrac":
        return f"(({back(kids[0])})/({back(kids[1])}))"
    if el.tag == "msup":
        if kids[1].tag == "mo" and kids[1].text == "*":
            return f"{back(kids[0])}_star"
        return f"(({back(kids[0])})**({back(kids[1])}))"
    if el.tag == "msubsup":
        return f"{back(kids[0])}_star_{back(kids[1])}"
    if el.tag == "msub":
        return f"{back(kids[0])}_{back(kids[1])}"
    return "".join(back(k) for k in kids)


def evaluate(node: ast.AST) -> Fraction:
    if isinstance(node, ast.Expression):
        return evaluate(node.body)
    if isinstance(node, ast.Constant):
        return Fraction(node.value)
    if isinstance(node, ast.Name):
        return VALUES[node.id]
    if isinstance(node, ast.UnaryOp):
        return -evaluate(node.operand) if isinstance(node.op, ast.USub) else evaluate(node.operand)
    if isinstance(node, ast.Call):
        args = [evaluate(a) for a in node.args]
        return max(args) if node.func.id == "max" else min(args)  # type: ignore[attr-defined]
    left, right = evaluate(node.left), evaluate(node.right)  # type: ignore[attr-defined]
    op = type(node.op)  # type: ignore[attr-defined]
    if op is ast.Pow:
        return left ** int(right)
    return (
        {ast.Add: left + right, ast.Sub: left - right, ast.Mult: left * right}.get(op)
        if (op is not ast.Div)
        else left / right
    )


leaves = st.sampled_from(NAMES) | st.integers(1, 9).map(str)


def extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    binary = st.tuples(children, st.sampled_from(["+", "-", "*", "/"]), children).map(
        lambda t: f"({t[0]}{t[1]}{t[2]})"
    )
    return (
        binary
        | children.map(lambda c: f"(-{c})")
        | st.tuples(children, st.integers(2, 3)).map(lambda t: f"({t[0]})**{t[1]}")
        | st.tuples(st.sampled_from(["max", "min"]), children, children).map(
            lambda t: f"{t[0]}({t[1]}, {t[2]})"
        )
    )


@settings(max_examples=300, deadline=None)
@given(st.recursive(leaves, extend, max_leaves=12))
def test_printed_mathml_reads_back_to_the_same_value(source: str) -> None:
    try:
        expected = evaluate(ast.parse(source, mode="eval"))
    except ZeroDivisionError:
        assume(False)
    math = tree(f"y = {source}")
    rhs = list(math[0])[2:]
    text = "".join(back(el) for el in rhs)
    assert evaluate(ast.parse(text, mode="eval")) == expected, text


def test_display_forms_from_the_symbol_registry_override_the_name() -> None:
    math = ET.fromstring(equation_to_mathml("Bk = P/2", names={"Bk": "B_k^*"}))
    sub_sup = math.find(".//msubsup")
    assert [c.text for c in sub_sup] == ["B", "k", "*"]
    plain = ET.fromstring(equation_to_mathml("Bk = P/2"))
    assert plain.find(".//msubsup") is None  # the override does not leak into later calls


def test_a_hostile_display_form_is_text() -> None:
    html = name_to_mathml("x", "<script>alert(1)</script>")
    assert "<script>" not in html and "&lt;script&gt;" in html
