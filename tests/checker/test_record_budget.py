"""A record under the size limit still costs bounded work and prints bounded findings.

A 2 MiB file can hold 500,000 values in one flow list: every value wrong gave one
SC001 each (700,000 findings, 217 MB of JSON, 2 GB of memory). Now a record holding
more than 200,000 values is one LD008 and is not checked further; the schema stage
reports at most `MAX_PROBLEMS` problems a record and one more finding saying so; and
no finding's message or hint is longer than `MAX_TEXT` characters, whatever it quotes.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from kb.api import validate
from kb.findings import MAX_TEXT, Finding, Location, Severity
from kb.loader import MAX_EXPANDED_NODES
from kb.schema import MAX_PROBLEMS
from tests.conftest import source_yaml, write_tree


def _findings_of(root: Path, name: str) -> list[Finding]:
    found = validate(root, remember=False).findings
    return [f for f in found if f.location.path.endswith(name)]


def test_a_record_of_too_many_values_is_one_ld008(tmp_path: Path) -> None:
    values = ", ".join(["1"] * (MAX_EXPANDED_NODES + 1))
    root = write_tree(
        tmp_path / "records", {"sources/big.yaml": source_yaml("sources/big", tags=f"[{values}]")}
    )
    found = _findings_of(root, "big.yaml")
    assert [(f.code, f.location.line) for f in found] == [("LD008", 1)]
    assert "more than 200,000 values" in found[0].message


def test_schema_problems_of_one_record_are_capped_with_a_finding_that_says_so(
    tmp_path: Path,
) -> None:
    values = ", ".join(str(i) for i in range(3 * MAX_PROBLEMS))  # tags must be strings
    root = write_tree(
        tmp_path / "records", {"sources/many.yaml": source_yaml("sources/many", tags=f"[{values}]")}
    )
    found = _findings_of(root, "many.yaml")
    assert Counter(f.code for f in found) == {"SC001": MAX_PROBLEMS + 1}
    assert sum("only the first 100 are reported" in f.message for f in found) == 1


def test_below_the_cap_every_problem_is_reported(tmp_path: Path) -> None:
    values = ", ".join(str(i) for i in range(MAX_PROBLEMS - 1))
    root = write_tree(
        tmp_path / "records", {"sources/some.yaml": source_yaml("sources/some", tags=f"[{values}]")}
    )
    found = _findings_of(root, "some.yaml")
    assert Counter(f.code for f in found) == {"SC001": MAX_PROBLEMS - 1}


def test_a_long_value_gives_a_short_finding(tmp_path: Path) -> None:
    long = "y" * 1_500_000
    text = source_yaml("sources/long").replace("source_type: documentation", f"source_type: {long}")
    root = write_tree(tmp_path / "records", {"sources/long.yaml": text})
    found = _findings_of(root, "long.yaml")
    assert [f.code for f in found] == ["SC001"]
    assert all(len(f.message) <= MAX_TEXT and len(f.hint) <= MAX_TEXT for f in found)


def test_no_finding_is_longer_than_the_cap() -> None:
    finding = Finding("SC001", Severity.ERROR, Location("x", 1, 1, ""), "m" * 10**6, "h" * 10**6)
    assert len(finding.message) == len(finding.hint) == MAX_TEXT
    assert finding.message.endswith("\u2026")
    short = Finding("SC001", Severity.ERROR, Location("x", 1, 1, ""), "short", "")
    assert short.message == "short"
