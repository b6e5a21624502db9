"""The rules catalogue, read from the rule registry (`kb.rules`) and the rules' docstrings.

A rule's docstring is its documentation: the first line is the requirement, then
sections `Why:`, `Bad:` and `Good:`. `kb explain` prints the same text.
"""

from __future__ import annotations

import inspect
from types import ModuleType
from typing import Any

from kb.rules import all_rules

SECTION_NAMES = ("Why", "Bad", "Good")


def registered_rules() -> list[ModuleType]:
    """Return the rule modules in registry order."""
    return list(all_rules())


def rule_entries(rules: list[ModuleType]) -> list[dict[str, Any]]:
    """One catalogue entry per rule: code, name, severity, requirement and sections."""
    return [rule_entry(rule) for rule in sorted(rules, key=lambda r: str(r.CODE))]


def rule_entry(rule: ModuleType) -> dict[str, Any]:
    """Split a rule module's docstring into its requirement line and named sections."""
    summary, sections = split_docstring(rule.__doc__ or "")
    severity = getattr(rule, "SEVERITY", "")
    return {
        "code": str(rule.CODE),
        "name": str(getattr(rule, "NAME", "")),
        "severity": str(getattr(severity, "value", severity)),
        "summary": summary,
        "sections": sections,
        "status": str(getattr(rule, "STATUS", "")),
    }


def split_docstring(doc: str) -> tuple[str, list[dict[str, Any]]]:
    """(first line, [{title, text, code}]) where Bad/Good sections are code blocks."""
    lines = _dedent(doc).splitlines()
    summary = lines[0].strip() if lines else ""
    sections: list[dict[str, Any]] = [{"title": "", "lines": [], "code": False}]
    for line in lines[1:]:
        head = line.strip().rstrip(":")
        if line.strip().endswith(":") and head in SECTION_NAMES:
            sections.append({"title": head, "lines": [], "code": head in ("Bad", "Good")})
        else:
            sections[-1]["lines"].append(line)
    return summary, [_finish(s) for s in sections if "".join(s["lines"]).strip()]


def _finish(section: dict[str, Any]) -> dict[str, Any]:
    text = "\n".join(section["lines"]).strip("\n")
    if section["code"]:
        text = _dedent(text)
    return {
        "title": section["title"],
        "text": text.strip() if not section["code"] else text,
        "code": section["code"],
    }


def _dedent(text: str) -> str:
    return inspect.cleandoc(text) if text.strip() else ""
