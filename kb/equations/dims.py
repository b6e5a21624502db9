"""Dimension checking over the authored expression tree (no SymPy needed).

Checking the tree as written, before SymPy simplifies it, means `x - x + t`
with x in bytes and t in seconds is still caught. Rules are strict: terms of
`+`, `-`, max and min share one dimension; log, exp and powers take
dimensionless arguments and exponents; a dimensional base needs a literal
rational exponent; numeric literals are dimensionless.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from fractions import Fraction

from kb.quantities import DIMENSIONLESS, Dims, format_dims, multiply_dims


class DimensionError(ValueError):
    """An expression whose dimensions do not combine."""


def dims_of(node: ast.AST, dims: Mapping[str, Dims]) -> Dims:
    """Return the dimension of an authored expression tree, given each symbol's."""
    if isinstance(node, ast.Constant):
        return DIMENSIONLESS
    if isinstance(node, ast.Name):
        if node.id not in dims:
            raise DimensionError(f"symbol {node.id!r} has no declared unit")
        return dims[node.id]
    if isinstance(node, ast.UnaryOp):
        return dims_of(node.operand, dims)
    if isinstance(node, ast.BinOp):
        return _binop(node, dims)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return _call(node.func.id, node.args, dims)
    raise DimensionError(f"no dimension rule for {type(node).__name__}")


def equation_dims(lhs: ast.AST, rhs: ast.AST, dims: Mapping[str, Dims]) -> Dims:
    """Return the common dimension of both sides, or raise DimensionError naming both."""
    left, right = dims_of(lhs, dims), dims_of(rhs, dims)
    if left != right:
        raise DimensionError(
            f"left side is {format_dims(left)} but right side is {format_dims(right)}"
        )
    return left


def _binop(node: ast.BinOp, dims: Mapping[str, Dims]) -> Dims:
    if isinstance(node.op, ast.Pow):
        return _power(node, dims)
    left, right = dims_of(node.left, dims), dims_of(node.right, dims)
    if isinstance(node.op, ast.Mult):
        return multiply_dims(left, right)
    if isinstance(node.op, ast.Div):
        return multiply_dims(left, right, -1)
    if left != right:
        sign = "+" if isinstance(node.op, ast.Add) else "-"
        raise DimensionError(
            f"cannot {sign} {ast.unparse(node.left)} ({format_dims(left)}) and "
            f"{ast.unparse(node.right)} ({format_dims(right)})"
        )
    return left


def _power(node: ast.BinOp, dims: Mapping[str, Dims]) -> Dims:
    base = dims_of(node.right, dims)
    if base:
        raise DimensionError(f"exponent {ast.unparse(node.right)} is {format_dims(base)}, not 1")
    base = dims_of(node.left, dims)
    if not base:
        return DIMENSIONLESS
    exponent = constant_value(node.right)
    if exponent is None:
        raise DimensionError(
            f"{ast.unparse(node.left)} has a unit, so its exponent must be a literal number"
        )
    return multiply_dims(DIMENSIONLESS, base, exponent)


def _call(name: str, args: list[ast.expr], dims: Mapping[str, Dims]) -> Dims:
    found = [dims_of(arg, dims) for arg in args]
    if name in ("max", "min"):
        if any(d != found[0] for d in found[1:]):
            pairs = zip(args, found, strict=True)
            listed = ", ".join(f"{ast.unparse(a)} ({format_dims(d)})" for a, d in pairs)
            raise DimensionError(f"arguments of {name}() differ: {listed}")
        return found[0]
    if name in ("log", "exp"):
        for arg, dim in zip(args, found, strict=True):
            if dim:
                raise DimensionError(
                    f"argument of {name}() must be dimensionless: "
                    f"{ast.unparse(arg)} is {format_dims(dim)}"
                )
        return DIMENSIONLESS
    if name == "sqrt":
        return multiply_dims(DIMENSIONLESS, found[0], Fraction(1, 2))
    if name in ("ceil", "floor"):
        return found[0]
    raise DimensionError(f"no dimension rule for {name}()")


def constant_value(node: ast.AST) -> Fraction | None:
    """Return the exact value of a literal-only subtree (`1/2`, `-3`), else None."""
    if isinstance(node, ast.Constant) and not isinstance(node.value, bool):
        if isinstance(node.value, (int, float)):
            return (
                Fraction(str(node.value)) if isinstance(node.value, float) else Fraction(node.value)
            )
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = constant_value(node.operand)
        if inner is None:
            return None
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div, ast.Add, ast.Sub)):
        left, right = constant_value(node.left), constant_value(node.right)
        if left is None or right is None or (isinstance(node.op, ast.Div) and right == 0):
            return None
        return _arith(node.op, left, right)
    return None


def _arith(op: ast.operator, left: Fraction, right: Fraction) -> Fraction:
    if isinstance(op, ast.Mult):
        return left * right
    if isinstance(op, ast.Div):
        return left / right
    if isinstance(op, ast.Add):
        return left + right
    return left - right
