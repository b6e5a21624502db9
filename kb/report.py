"""Render findings: text, json, github (workflow commands) and sarif (2.1.0), one function each."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from types import ModuleType
from urllib.parse import quote

from kb import __version__
from kb.findings import Finding, Location, Severity
from kb.rules import all_rules, by_code, summary

INFORMATION_URI = "https://kb.invalid/"


def render(fmt: str, findings: Sequence[Finding], checked: int) -> str:
    """The report in one of FORMATS."""
    return FORMATS[fmt](findings, checked)


def text(findings: Sequence[Finding], checked: int) -> str:
    """`path:line:col: CODE message (name)` per finding, a hint under it, then a summary."""
    lines = []
    for f in findings:
        lines.append(f"{f.location}: {f.code} {f.message} ({_name(f.code)}){_severity_tag(f)}")
        if f.hint:
            lines.append(f"    hint: {f.hint}")
        lines.extend(f"    see: {loc}" for loc in f.related)
    lines.append(_summary_line(findings, checked))
    return "\n".join(lines) + "\n"


def _severity_tag(finding: Finding) -> str:
    return "" if finding.severity is Severity.ERROR else f" [{finding.severity.value}]"


def _summary_line(findings: Sequence[Finding], checked: int) -> str:
    if not findings:
        return f"checked {checked} records: no findings"
    counts = Counter(f.severity.value for f in findings)
    parts = [
        f"{counts[s.value]} {s.value}{'s' if counts[s.value] != 1 else ''}"
        for s in Severity
        if counts[s.value]
    ]
    files = len({f.location.path for f in findings})
    return (
        f"checked {checked} records: {', '.join(parts)} in {files} file{'s' if files != 1 else ''}"
    )


def as_json(findings: Sequence[Finding], checked: int) -> str:
    """A stable JSON document: summary plus one object per finding."""
    counts = Counter(f.severity.value for f in findings)
    document = {
        "tool": {"name": "kb", "version": __version__},
        "summary": {"records": checked, **{s.value: counts[s.value] for s in Severity}},
        "findings": [_finding_dict(f) for f in findings],
    }
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def _finding_dict(f: Finding) -> dict[str, object]:
    return {
        "code": f.code,
        "name": _name(f.code),
        "severity": f.severity.value,
        "path": f.location.path,
        "line": f.location.line,
        "col": f.location.col,
        "pointer": f.location.pointer,
        "message": f.message,
        "hint": f.hint,
        "related": [
            {"path": r.path, "line": r.line, "col": r.col, "pointer": r.pointer} for r in f.related
        ],
    }


def github(findings: Sequence[Finding], checked: int) -> str:
    """GitHub Actions workflow commands: `::error file=...,line=...,col=...,title=...::message`."""
    lines = []
    for f in findings:
        command = {"error": "error", "warning": "warning", "info": "notice"}[f.severity.value]
        props = {
            "file": f.location.path,
            "line": str(f.location.line),
            "col": str(f.location.col),
            "title": f"{f.code} {_name(f.code)}",
        }
        joined = ",".join(f"{k}={_escape_property(v)}" for k, v in props.items())
        body = f.message + (f" (hint: {f.hint})" if f.hint else "")
        lines.append(f"::{command} {joined}::{_escape_data(body)}")
    return "\n".join(lines) + ("\n" if lines else "")


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def sarif(findings: Sequence[Finding], checked: int) -> str:
    """SARIF 2.1.0 with the full rule catalogue in tool.driver.rules."""
    rules = all_rules()
    index = {rule.CODE: i for i, rule in enumerate(rules)}
    document = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": _driver(rules)},
                "columnKind": "unicodeCodePoints",
                "results": [_sarif_result(f, index) for f in findings],
            }
        ],
    }
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def _driver(rules: list[ModuleType]) -> dict[str, object]:
    return {
        "name": "kb",
        "version": __version__,
        "informationUri": INFORMATION_URI,
        "rules": [
            {
                "id": rule.CODE,
                "name": rule.NAME,
                "shortDescription": {"text": summary(rule)},
                "fullDescription": {"text": (rule.__doc__ or "").strip()},
                "defaultConfiguration": {"level": _level(rule.SEVERITY)},
            }
            for rule in rules
        ],
    }


def _sarif_result(f: Finding, index: dict[str, int]) -> dict[str, object]:
    result: dict[str, object] = {
        "ruleId": f.code,
        "level": _level(f.severity),
        "message": {"text": f.message + (f" (hint: {f.hint})" if f.hint else "")},
        "locations": [_sarif_location(f.location)],
    }
    if f.code in index:
        result["ruleIndex"] = index[f.code]
    if f.related:
        result["relatedLocations"] = [
            {"id": i, **_sarif_location(loc)} for i, loc in enumerate(f.related)
        ]
    return result


def _sarif_location(location: Location) -> dict[str, object]:
    path, line, col = location.path, location.line, location.col
    return {
        "physicalLocation": {
            # a URI reference: a file name with a space or '%' must be percent-encoded
            "artifactLocation": {"uri": quote(path.replace("\\", "/"), safe="/")},
            "region": {"startLine": max(line, 1), "startColumn": max(col, 1)},
        }
    }


def _level(severity: Severity) -> str:
    return {"error": "error", "warning": "warning", "info": "note"}[severity.value]


def _name(code: str) -> str:
    rule = by_code(code)
    return rule.NAME if rule else "unknown"


FORMATS: dict[str, Callable[[Sequence[Finding], int], str]] = {
    "text": text,
    "json": as_json,
    "github": github,
    "sarif": sarif,
}
