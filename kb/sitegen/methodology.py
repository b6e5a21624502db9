"""The methodology page: seed 000 (the placement-tax ledger) split into readable blocks.

The seed is plain text: short lines without a full stop are headings, lines with
`=` and no sentence are equations (printed as MathML), `|` lines form a table and
`- ` lines a list. Everything else is a paragraph. The text itself is not changed.
"""

from __future__ import annotations

from typing import Any

from kb.sitegen.mathml import UnprintableExpression, equation_to_mathml


def methodology_blocks(text: str) -> list[dict[str, Any]]:
    """Group the seed's lines into heading, paragraph, equation, table and list blocks."""
    blocks: list[dict[str, Any]] = []
    for line in (raw.strip() for raw in text.splitlines()):
        if not line:
            continue
        kind = _line_kind(line)
        if kind in ("table", "list") and blocks and blocks[-1]["type"] == kind:
            blocks[-1]["lines"].append(line)
            continue
        blocks.append(_block(kind, line))
    return [_finish(block) for block in blocks]


def _line_kind(line: str) -> str:
    if line.startswith("|"):
        return "table"
    if line.startswith("- "):
        return "list"
    if " = " in line and not line.endswith((".", ":")) and line.count(" = ") == 1:
        return "equation"
    if len(line) < 70 and not line.endswith((".", ":", ",")):
        return "heading"
    return "paragraph"


def _block(kind: str, line: str) -> dict[str, Any]:
    return {"type": kind, "lines": [line]}


def _finish(block: dict[str, Any]) -> dict[str, Any]:
    if block["type"] == "table":
        rows = [_cells(line) for line in block["lines"] if not set(line) <= set("|- ")]
        return {"type": "table", "head": rows[0] if rows else [], "rows": rows[1:]}
    if block["type"] == "list":
        return {"type": "list", "items": [line[2:] for line in block["lines"]]}
    text = block["lines"][0]
    if block["type"] == "equation":
        try:
            return {"type": "equation", "text": text, "mathml": equation_to_mathml(text)}
        except UnprintableExpression:
            return {"type": "paragraph", "text": text}
    return {"type": block["type"], "text": text}


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]
