"""Data-driven rule cases: tests/rules/cases/<rule_module>.yaml, run through the real checker.

Each case file holds named cases; a case is a tiny records tree (`files:
{path under records/: yaml text}`), optionally a `base:` tree committed to git
first (the case then runs with `--base HEAD`), and `expect: [{code, line}]`,
the exact findings (empty: the case must pass clean). An expectation may also
name its `path` (under records/). `env:` sets KB_* settings for the case.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from kb.api import validate
from kb.findings import Finding
from kb.rules import RULE_MODULES, all_rules
from tests.conftest import git_repo_with, load_yaml, replace_tree, write_tree

CASES_DIR = Path(__file__).resolve().parent / "cases"


def case_files() -> dict[str, dict[str, Any]]:
    """Every case file by rule module name."""
    paths = sorted(CASES_DIR.glob("*.yaml"))
    return {p.stem: load_yaml(p.read_text(encoding="utf-8")) for p in paths}


def cases_of(files: dict[str, dict[str, Any]], module: str) -> dict[str, Any]:
    return (files.get(module) or {}).get("cases") or {}


def all_cases() -> list[Any]:
    params = []
    for module, doc in case_files().items():
        for name, case in (doc.get("cases") or {}).items():
            params.append(pytest.param(case, id=f"{module}::{name}"))
    return params


def run_case(tmp: Path, case: dict[str, Any]) -> list[Finding]:
    root = tmp / "records"
    if "base" in case:
        git_repo_with(root, case["base"])
        replace_tree(root, case["files"])
        return validate(root, base="HEAD", remember=False).findings
    write_tree(root, case["files"])
    return validate(root, remember=False).findings


def observed(findings: list[Finding], with_path: bool) -> Counter[tuple[Any, ...]]:
    rows = []
    for f in findings:
        row: tuple[Any, ...] = (f.code, f.location.line)
        if with_path:
            row += (str(Path(f.location.path).relative_to("records").as_posix()),)
        rows.append(row)
    return Counter(rows)


def expected(case: dict[str, Any], with_path: bool) -> Counter[tuple[Any, ...]]:
    rows = []
    for e in case.get("expect") or []:
        rows.append((e["code"], e["line"], e["path"]) if with_path else (e["code"], e["line"]))
    return Counter(rows)


@pytest.mark.parametrize("case", all_cases())
def test_case(case: dict[str, Any], in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in (case.get("env") or {}).items():  # KB_* settings the case runs under
        monkeypatch.setenv(name, str(value))
    findings = run_case(in_tmp, case)
    with_path = all("path" in e for e in case.get("expect") or [{}])
    shown = "\n".join(f"{f.location}: {f.code} {f.message}" for f in findings)
    assert observed(findings, with_path) == expected(case, with_path), shown
    assert all(f.location.line >= 1 and f.location.col >= 1 for f in findings), shown


def test_every_case_file_names_a_registered_rule() -> None:
    unknown = sorted(set(case_files()) - set(RULE_MODULES))
    assert not unknown, f"case files for no registered rule module: {unknown}"


def test_every_rule_has_a_failing_case_asserting_its_code_and_line() -> None:
    files = case_files()
    missing = []
    for name, rule in zip(RULE_MODULES, all_rules(), strict=True):
        expects = [e for c in cases_of(files, name).values() for e in c.get("expect") or []]
        hits = [e for e in expects if e.get("code") == rule.CODE]
        if not any(isinstance(e.get("line"), int) and e["line"] >= 1 for e in hits):
            missing.append(f"{rule.CODE} ({name})")
    assert not missing, f"rules without a failing case in tests/rules/cases/: {missing}"


def test_every_rule_has_a_passing_case() -> None:
    files = case_files()
    missing = [
        name
        for name in RULE_MODULES
        if not any(not c.get("expect") for c in cases_of(files, name).values())
    ]
    assert not missing, f"rules without a passing case (expect: []): {missing}"
