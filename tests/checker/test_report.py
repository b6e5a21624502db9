"""Report formats: SARIF 2.1.0 (validated offline), GitHub workflow commands, JSON, text."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from jsonschema import Draft4Validator

from kb import report
from kb.findings import Finding, Location, Severity
from kb.rules import all_rules
from tests.conftest import FIXTURES, source_yaml, write_tree
from tests.inprocess import kb_in_process

SARIF_SCHEMA = json.loads((FIXTURES / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
# ::error file=F,line=L,col=C,title=T::message  (GitHub Actions workflow command)
GITHUB_LINE = re.compile(
    r"^::(error|warning|notice) file=(?P<file>[^,:]*),line=(?P<line>\d+),col=(?P<col>\d+),"
    r"title=(?P<title>[^,:]*)::(?P<message>.*)$"
)


def sample_findings() -> list[Finding]:
    awkward = Location("records/sources/a,b:c%.yaml", 3, 7, "/bandwidth/per_link")
    return [
        Finding(
            "RF001",
            Severity.ERROR,
            Location("records/hardware/x.yaml", 12, 5, "/links/0"),
            "'interconnects/nvlink-9' names no record",
            "did you mean 'interconnects/nvlink-4'?",
        ),
        Finding(
            "EV002",
            Severity.WARNING,
            awkward,
            "50% done\nsecond line: a, b",
            "",
            (Location("records/sources/doc.yaml", 1, 1, ""),),
        ),
        Finding("ZZ999", Severity.INFO, Location("records/x.yaml", 0, 0, ""), "not located", ""),
    ]


def sarif_validator() -> Draft4Validator:
    Draft4Validator.check_schema(SARIF_SCHEMA)
    return Draft4Validator(SARIF_SCHEMA)


# ---------------------------------------------------------------- SARIF


def test_sarif_validates_against_the_sarif_2_1_0_schema() -> None:
    document = json.loads(report.sarif(sample_findings(), 3))
    errors = sorted(sarif_validator().iter_errors(document), key=str)
    assert not errors, "\n".join(e.message for e in errors[:5])
    run = document["runs"][0]
    assert [r["ruleId"] for r in run["results"]] == ["RF001", "EV002", "ZZ999"]
    assert [r["level"] for r in run["results"]] == ["error", "warning", "note"]
    region = run["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 12, "startColumn": 5}
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.CODE for r in all_rules()]
    assert run["results"][0]["ruleIndex"] == [r["id"] for r in rules].index("RF001")


def test_sarif_uris_are_percent_encoded() -> None:
    document = json.loads(report.sarif(sample_findings(), 3))
    uris = [
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in document["runs"][0]["results"]
    ]
    assert uris[0] == "records/hardware/x.yaml"
    assert uris[1] == "records/sources/a%2Cb%3Ac%25.yaml"


def test_sarif_validation_can_fail() -> None:
    document = json.loads(report.sarif(sample_findings(), 3))
    document["runs"][0]["results"][0]["level"] = "fatal"
    assert list(sarif_validator().iter_errors(document))


def test_sarif_of_a_clean_run_is_valid() -> None:
    document = json.loads(report.sarif([], 10))
    assert not list(sarif_validator().iter_errors(document))
    assert document["runs"][0]["results"] == []


# ---------------------------------------------------------------- GitHub


def test_github_lines_follow_the_workflow_command_syntax() -> None:
    lines = report.github(sample_findings(), 3).splitlines()
    assert len(lines) == 3
    parsed = [GITHUB_LINE.match(line) for line in lines]
    assert all(parsed), lines
    first = parsed[0]
    assert first is not None
    assert lines[0].startswith("::error ")
    assert first["file"] == "records/hardware/x.yaml"
    assert (first["line"], first["col"]) == ("12", "5")
    assert first["title"] == "RF001 dangling-reference"
    assert lines[1].startswith("::warning ") and lines[2].startswith("::notice ")


def test_github_escapes_properties_and_data() -> None:
    line = report.github(sample_findings(), 3).splitlines()[1]
    match = GITHUB_LINE.match(line)
    assert match is not None
    # Properties escape % \r \n : and , ; the message escapes % \r \n only.
    assert match["file"] == "records/sources/a%2Cb%3Ac%25.yaml"
    assert match["message"] == "50%25 done%0Asecond line: a, b"
    assert "\n" not in line


@pytest.mark.parametrize(
    ("raw", "prop", "data"),
    [
        ("a:b", "a%3Ab", "a:b"),
        ("a,b", "a%2Cb", "a,b"),
        ("100%", "100%25", "100%25"),
        ("x\r\ny", "x%0D%0Ay", "x%0D%0Ay"),
        ("%3A", "%253A", "%253A"),
    ],
)
def test_github_escaping_rules(raw: str, prop: str, data: str) -> None:
    assert report._escape_property(raw) == prop
    assert report._escape_data(raw) == data


# ---------------------------------------------------------------- JSON and text


def test_json_shape() -> None:
    document = json.loads(report.as_json(sample_findings(), 3))
    assert set(document) == {"tool", "summary", "findings"}
    assert document["tool"]["name"] == "kb"
    assert document["summary"] == {"records": 3, "error": 1, "warning": 1, "info": 1}
    first = document["findings"][0]
    assert set(first) == {
        "code",
        "name",
        "severity",
        "path",
        "line",
        "col",
        "pointer",
        "message",
        "hint",
        "related",
    }
    assert (first["code"], first["name"], first["line"], first["col"]) == (
        "RF001",
        "dangling-reference",
        12,
        5,
    )
    assert first["pointer"] == "/links/0"
    assert document["findings"][1]["related"] == [
        {"path": "records/sources/doc.yaml", "line": 1, "col": 1, "pointer": ""}
    ]


def test_text_format() -> None:
    text = report.text(sample_findings(), 3)
    lines = text.splitlines()
    assert lines[0] == (
        "records/hardware/x.yaml:12:5: RF001 'interconnects/nvlink-9' names no record"
        " (dangling-reference)"
    )
    assert lines[1] == "    hint: did you mean 'interconnects/nvlink-4'?"
    assert lines[-1] == "checked 3 records: 1 error, 1 warning, 1 info in 3 files"
    assert report.text([], 5) == "checked 5 records: no findings\n"


# ---------------------------------------------------------------- end to end


def broken_tree(tmp: Path) -> Path:
    files = {
        "sources/doc.yaml": source_yaml("sources/doc"),
        "sources/bad.yaml": source_yaml("sources/bad", superseded_by="sources/missing"),
    }
    return write_tree(tmp / "records", files)


@pytest.mark.parametrize("fmt", ["sarif", "github", "json", "text"])
def test_kb_validate_formats_end_to_end(tmp_path: Path, fmt: str) -> None:
    broken_tree(tmp_path)
    done = kb_in_process(["validate", "--format", fmt], cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stderr == ""
    if fmt == "sarif":
        document = json.loads(done.stdout)
        assert not list(sarif_validator().iter_errors(document))
        result = document["runs"][0]["results"][0]
        assert result["ruleId"] == "RF001"
        region = result["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] == 10
    elif fmt == "github":
        match = GITHUB_LINE.match(done.stdout.strip())
        assert match is not None, done.stdout
        assert (match["file"], match["line"]) == ("records/sources/bad.yaml", "10")
    elif fmt == "json":
        findings = json.loads(done.stdout)["findings"]
        assert [(f["code"], f["path"], f["line"]) for f in findings] == [
            ("RF001", "records/sources/bad.yaml", 10)
        ]
    else:
        assert done.stdout.startswith("records/sources/bad.yaml:10:")


def test_output_option_writes_the_report_to_a_file(tmp_path: Path) -> None:
    broken_tree(tmp_path)
    done = kb_in_process(["validate", "--format", "json", "--output", "report.json"], cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout == ""
    assert json.loads((tmp_path / "report.json").read_text())["findings"][0]["code"] == "RF001"
