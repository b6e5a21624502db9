"""Every equation, factor, condition and claim expression is a safe, well-formed expression.

Why: record text is never executed. Expressions are parsed with Python's parser and a
strict whitelist (numbers, declared names, + - * / **, unary minus, max min log exp
sqrt ceil floor) and bounded in length, size, depth and exponent, so an attribute
access, a lambda, a string or `9**9**9**9` is refused in milliseconds instead of
running code or exhausting memory. (An unknown derivation rule or claim kind is
SC001: the schema lists the allowed ones, and the hint names the closest.)

Bad:

    equations:
      bad: {expr: "T = __import__('os').system('id')"}

Good:

    equations:
      crossover: {expr: "4*B*d/BW_link = 2*P_layer/BW_hbm"}
"""

from __future__ import annotations

from collections.abc import Iterator

from kb.equations import codes
from kb.findings import Finding, Severity
from kb.model import KnowledgeBase
from kb.rules._equations import engine_findings

READS = "equations"
CODE = codes.EXPRESSION_UNSAFE
NAME = "expression-unsafe"
SEVERITY = Severity.ERROR
HINT = "write the expression with the operators and functions docs/equations.md lists"


def check(kb: KnowledgeBase) -> Iterator[Finding]:
    yield from engine_findings(kb, CODE)
