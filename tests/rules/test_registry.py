"""The rule catalogue: every module registered, codes and names unique, documentation complete."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from kb.cli import cli
from kb.findings import Severity
from kb.rules import RULE_MODULES, all_rules, by_code
from tests.conftest import REPO, run_kb

RULES_DIR = REPO / "kb" / "rules"
CODE_RE = re.compile(r"[A-Z]{2}\d{3}")
NAME_RE = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


def rule_files() -> set[str]:
    return {p.stem for p in RULES_DIR.glob("*.py") if not p.stem.startswith("_")}


def test_every_module_in_the_rules_folder_is_registered() -> None:
    assert rule_files() == set(RULE_MODULES)


def test_codes_and_names_are_well_formed_and_unique() -> None:
    rules = all_rules()
    codes = [r.CODE for r in rules]
    names = [r.NAME for r in rules]
    assert all(CODE_RE.fullmatch(c) for c in codes), codes
    assert all(NAME_RE.fullmatch(n) for n in names), names
    assert len(set(codes)) == len(codes)
    assert len(set(names)) == len(names)
    assert all(isinstance(r.SEVERITY, Severity) for r in rules)


def test_registry_is_grouped_by_family_in_code_order() -> None:
    codes = [r.CODE for r in all_rules()]
    families = [c[:2] for c in codes]
    # Each family is contiguous, and codes ascend inside a family.
    seen: list[str] = []
    for family in families:
        if not seen or seen[-1] != family:
            assert family not in seen, f"family {family} split in the registry"
            seen.append(family)
    for family in seen:
        numbers = [int(c[2:]) for c in codes if c.startswith(family)]
        assert numbers == sorted(numbers), family


@pytest.mark.parametrize("name", RULE_MODULES)
def test_rule_docstring_is_its_documentation(name: str) -> None:
    from kb.rules import rule_module

    rule = rule_module(name)
    doc = (rule.__doc__ or "").strip()
    first = doc.splitlines()[0] if doc else ""
    assert first.endswith("."), f"{rule.CODE}: first line must state the requirement as a sentence"
    assert len(first) <= 120, f"{rule.CODE}: the requirement line is too long"
    for section in ("Why:", "Bad", "Good"):
        found = re.search(rf"^{re.escape(section)}", doc, re.MULTILINE)
        assert found, f"{rule.CODE} lacks a {section} section"
    assert doc.index("Why:") < doc.index("Bad") < doc.index("Good"), rule.CODE
    assert callable(getattr(rule, "check", None))


def test_by_code_is_case_insensitive_and_total() -> None:
    for rule in all_rules():
        assert by_code(rule.CODE.lower()) is rule
    assert by_code("ZZ999") is None


def test_kb_explain_prints_every_rules_documentation() -> None:
    runner = CliRunner()
    for rule in all_rules():
        done = runner.invoke(cli, ["explain", rule.CODE])
        assert done.exit_code == 0, done.output
        first = (rule.__doc__ or "").strip().splitlines()[0]
        assert done.output.startswith(f"{rule.CODE} {rule.NAME}")
        assert first in done.output
        assert "Why:" in done.output and "Bad" in done.output and "Good" in done.output


def test_kb_explain_in_a_subprocess(tmp_path: Path) -> None:
    done = run_kb(["explain", "rf001"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("RF001 dangling-reference")


def test_kb_rules_lists_the_catalogue(tmp_path: Path) -> None:
    done = run_kb(["rules"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    listed = [line.split()[0] for line in done.stdout.splitlines() if line.strip()]
    assert listed == [r.CODE for r in all_rules()]


def test_rules_do_not_import_sympy_or_jinja_at_module_level() -> None:
    for path in sorted(RULES_DIR.glob("*.py")):
        top_level = [
            line
            for line in path.read_text(encoding="utf-8").splitlines()
            if line.startswith(("import ", "from "))
        ]
        heavy = [line for line in top_level if re.search(r"\b(sympy|jinja2)\b", line)]
        assert not heavy, f"{path.name}: {heavy}"
