"""Render findings: for people (full, concise, statistics) and for programs (json, github, sarif).

A person's report (`full`, the default, and `concise`) puts errors first and shows
every finding that fails the run (`fail_levels`, from --fail-on); of the others it
shows at most `per_code` per rule code and counts the rest, so one error is never
lost among thousands of warnings. The program formats (json, github, sarif) keep
every finding; github puts errors first, since GitHub shows only the first few
annotations of each level.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from urllib.parse import quote

from kb import __version__
from kb.findings import Finding, Location, Severity
from kb.rules import all_rules, by_code, summary

ROOT_ID = "PROJECTROOT"  # SARIF uriBaseId of the folder holding records/
PER_CODE = 3  # findings of one code shown in a person's report when they do not fail the run
ERRORS_ONLY = ("error",)
_RANK = {severity: rank for rank, severity in enumerate(Severity)}


def render(fmt: str, findings: Sequence[Finding], checked: int) -> str:
    """The report in one of FORMATS."""
    return FORMATS[fmt](findings, checked)


def errors_first(findings: Sequence[Finding]) -> list[Finding]:
    """`findings` by severity (errors, warnings, infos), each severity in path order."""
    return sorted(findings, key=lambda f: (_RANK[f.severity], f.sort_key()))


def text(
    findings: Sequence[Finding],
    checked: int,
    *,
    concise: bool = False,
    per_code: int = PER_CODE,
    fail_levels: Sequence[str] = ERRORS_ONLY,
    footer: bool = True,
) -> str:
    """A person's report: errors first, the others capped per code, then a summary line.

    Full: `path:line:col: CODE message (name)` with the hint and related locations
    under it; concise: that line alone. A finding whose severity is in `fail_levels`
    is always shown; of the others at most `per_code` per code (0: all), the rest
    counted at the end. `footer=False` (--quiet) prints the findings and nothing else.
    """
    lines: list[str] = []
    shown: Counter[str] = Counter()
    hidden: Counter[tuple[Severity, str]] = Counter()
    for f in errors_first(findings):
        if f.severity.value not in fail_levels and per_code > 0:
            if shown[f.code] >= per_code:
                hidden[f.severity, f.code] += 1
                continue
            shown[f.code] += 1
        lines.append(f"{f.location}: {f.code} {f.message} ({_name(f.code)}){_severity_tag(f)}")
        if concise:
            continue
        if f.hint:
            lines.append(f"    hint: {f.hint}")
        lines.extend(f"    see: {loc}" for loc in f.related)
    if footer:
        lines.extend(_hidden_lines(hidden, per_code))
        lines.append(_summary_line(findings, checked))
    return "\n".join(lines) + ("\n" if lines else "")


def _hidden_lines(hidden: Counter[tuple[Severity, str]], per_code: int) -> list[str]:
    """One line per code with findings not shown, and how to see them."""
    if not hidden:
        return []
    lines = []
    for (severity, code), count in sorted(hidden.items(), key=lambda i: (_RANK[i[0][0]], i[0][1])):
        noun = severity.value + ("s" if count != 1 else "")
        lines.append(f"... {count} more {code} ({_name(code)}) {noun} not shown")
    lines.append(
        f"(at most {per_code} per code of the findings below --fail-on: "
        "--max-per-code 0 shows all, --statistics counts them by code)"
    )
    return lines


def statistics(findings: Sequence[Finding]) -> str:
    """Counts per code, most frequent first, as `ruff --statistics`: `count<TAB>CODE<TAB>name`.

    A code whose findings are not errors says its severity after the name, as text does.
    """
    rows = _statistics(findings)
    width = max((len(str(row["count"])) for row in rows), default=1)
    return "".join(
        f"{row['count']:>{width}}\t{row['code']}\t{row['name']}"
        + ("" if row["severity"] == "error" else f" [{row['severity']}]")
        + "\n"
        for row in rows
    )


def statistics_json(findings: Sequence[Finding]) -> str:
    """The counts per code as a JSON list of {code, name, severity, count}."""
    return json.dumps(_statistics(findings), indent=2, sort_keys=True) + "\n"


def _statistics(findings: Sequence[Finding]) -> list[dict[str, str | int]]:
    counts = Counter((f.code, f.severity) for f in findings)
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0][0]))
    return [
        {"code": code, "name": _name(code), "severity": severity.value, "count": count}
        for (code, severity), count in ordered
    ]


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
    """GitHub Actions workflow commands, errors first: `::error file=...,line=...,title=...::msg`.

    GitHub shows only the first annotations of each level, so errors come first.
    """
    lines = []
    for f in errors_first(findings):
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


def sarif(findings: Sequence[Finding], checked: int, *, root_uri: str | None = None) -> str:
    """SARIF 2.1.0 with the full rule catalogue (each rule's help) in tool.driver.rules.

    `root_uri`: the project folder as a file URI ending in `/`; the paths (relative to
    it, see `rebased`) then name it as their `uriBaseId`, PROJECTROOT.
    """
    rules = all_rules()
    index = {rule.CODE: i for i, rule in enumerate(rules)}
    base = ROOT_ID if root_uri else None
    run: dict[str, object] = {
        "tool": {"driver": _driver(rules)},
        "columnKind": "unicodeCodePoints",
        "results": [_sarif_result(f, index, base) for f in findings],
    }
    if root_uri:
        run["originalUriBaseIds"] = {ROOT_ID: {"uri": root_uri}}
    document = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [run],
    }
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def _driver(rules: list[ModuleType]) -> dict[str, object]:
    return {
        "name": "kb",
        "version": __version__,
        "rules": [
            {
                "id": rule.CODE,
                "name": rule.NAME,
                "shortDescription": {"text": summary(rule)},
                "fullDescription": {"text": (rule.__doc__ or "").strip()},
                "help": _help(rule),
                "defaultConfiguration": {"level": _level(rule.SEVERITY)},
            }
            for rule in rules
        ],
    }


def _help(rule: ModuleType) -> dict[str, str]:
    """What GitHub code scanning shows for a rule: what to do, then its documentation."""
    doc = (rule.__doc__ or "").strip()
    hint = str(getattr(rule, "HINT", "")).strip()
    text = f"{hint}\n\n{doc}" if hint else doc
    markdown = f"**{rule.CODE} {rule.NAME}**: {hint}\n\n{doc}" if hint else doc
    return {"text": f"{text}\n\n`kb explain {rule.CODE}` prints this.", "markdown": markdown}


def _sarif_result(f: Finding, index: dict[str, int], base: str | None) -> dict[str, object]:
    result: dict[str, object] = {
        "ruleId": f.code,
        "level": _level(f.severity),
        "message": {"text": f.message + (f" (hint: {f.hint})" if f.hint else "")},
        "locations": [_sarif_location(f.location, base)],
    }
    if f.code in index:
        result["ruleIndex"] = index[f.code]
    if f.related:
        result["relatedLocations"] = [
            {"id": i, **_sarif_location(loc, base)} for i, loc in enumerate(f.related)
        ]
    return result


def _sarif_location(location: Location, base: str | None = None) -> dict[str, object]:
    path, line, col = location.path, location.line, location.col
    # a URI reference: a file name with a space or '%' must be percent-encoded
    artifact = {"uri": quote(path.replace("\\", "/"), safe="/")}
    if base:
        artifact["uriBaseId"] = base
    return {
        "physicalLocation": {
            "artifactLocation": artifact,
            "region": {"startLine": max(line, 1), "startColumn": max(col, 1)},
        }
    }


def rebased(findings: Sequence[Finding], project: Path) -> list[Finding]:
    """The findings with every path relative to `project` (the folder holding records/).

    The program formats name files this way, whatever the working directory: a CI
    log, GitHub's annotations and code scanning read paths from the repository root.
    A path outside `project` stays as it was.
    """
    base = os.path.abspath(project)

    def moved(location: Location) -> Location:
        absolute = os.path.abspath(location.path)
        if os.path.commonpath([absolute, base]) != base:
            return location
        return replace(location, path=Path(os.path.relpath(absolute, base)).as_posix())

    return [
        replace(f, location=moved(f.location), related=tuple(moved(r) for r in f.related))
        for f in findings
    ]


def _level(severity: Severity) -> str:
    return {"error": "error", "warning": "warning", "info": "note"}[severity.value]


def _name(code: str) -> str:
    rule = by_code(code)
    return rule.NAME if rule else "unknown"


def concise(findings: Sequence[Finding], checked: int) -> str:
    """A person's report, one line per finding (no hints)."""
    return text(findings, checked, concise=True)


FORMATS: dict[str, Callable[[Sequence[Finding], int], str]] = {
    "text": text,
    "full": text,
    "concise": concise,
    "json": as_json,
    "github": github,
    "sarif": sarif,
}
