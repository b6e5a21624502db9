"""The checker: one pass finds everything, located and sorted; waivers; scope; selection."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kb.api import open_kb, validate
from tests.conftest import SHIPPED_RECORDS, link_yaml, load_yaml, source_yaml, write_tree
from tests.inprocess import kb_in_process

LINK = link_yaml("basis: vendor-spec, source: sources/doc", None)


def line_of(text: str, needle: str) -> int:
    """1-based line of the first line containing `needle`."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


# ---------------------------------------------------------------- the acceptance run


def break_record(text: str) -> tuple[str, dict[str, int]]:
    """Five problems in one shipped record; returns the text and each code's expected line."""
    # the record's own latency goes first, so the appended one below is the only one
    text = "\n".join(line for line in text.splitlines() if not line.startswith("latency:")) + "\n"
    lines = text.splitlines()
    version = next(i for i, line in enumerate(lines, 1) if re.fullmatch(r"version: \d+", line))
    bumped = int(lines[version - 1].split()[1]) + 1
    lines[version - 1] = f"version: {bumped}"  # bumped, but no history entry for it
    family = line_of(text, "family:")
    per_link = line_of(text, "per_link:")
    quoted = line_of(text, "bidirectional_quoted:")
    source = re.compile(r"source: [^,}]+")
    lines[per_link - 1] = source.sub("source: sources/no-such-doc", lines[per_link - 1])
    lines[quoted - 1] = source.sub("source: interconnects/pcie-5-x16", lines[quoted - 1])
    lines.insert(family, lines[family - 1])  # the same key again, right below
    lines.append("latency: {value: 1, unit: us, basis: vendor-spec}")
    expected = {
        "VR001": version,
        "LD005": family + 1,
        "RF001": per_link + 1,
        "RF002": quoted + 1,
        "PV002": len(lines),
    }
    return "\n".join(lines) + "\n", expected


def test_five_problems_in_a_shipped_record_in_one_run(warm_copy: Path) -> None:
    target = warm_copy / "interconnects" / "pcie-4-x16.yaml"
    text, expected = break_record(target.read_text(encoding="utf-8"))
    target.write_text(text, encoding="utf-8")
    # in this process (tests/inprocess.py): the command's output, not the program's start
    done = kb_in_process(["validate", "--format", "json"], cwd=warm_copy.parent)
    assert done.returncode == 1, done.stderr
    findings = json.loads(done.stdout)["findings"]
    path = "records/interconnects/pcie-4-x16.yaml"
    # the record's own prose numbers are warnings (PR003) that predate the break
    mine = {(f["code"], f["line"]) for f in findings if f["path"] == path and f["code"] != "PR003"}
    assert mine == set(expected.items()), findings


# ---------------------------------------------------------------- one pass, located, sorted


def test_every_problem_in_every_file_in_one_pass(in_tmp: Path) -> None:
    files = {
        "sources/doc.yaml": source_yaml("sources/doc"),
        "sources/a.yaml": source_yaml("sources/a", superseded_by="sources/missing"),
        "sources/b.yaml": source_yaml("sources/b").replace("status: draft", "status: no"),
        "sources/c.yaml": "title: [unclosed\n",
        "interconnects/link.yaml": LINK.replace("sources/doc", "sources/gone"),
    }
    root = write_tree(in_tmp / "records", files)
    findings = validate(root, remember=False).findings
    got = [(f.location.path, f.location.line, f.code) for f in findings]
    assert got == [
        ("records/interconnects/link.yaml", 11, "RF001"),
        ("records/sources/a.yaml", 10, "RF001"),
        ("records/sources/b.yaml", 5, "LD010"),
        ("records/sources/c.yaml", 1, "LD004"),  # where the [ opened
    ]
    assert all(f.location.col >= 1 and f.message for f in findings)
    assert findings[0].location.pointer == "/bandwidth/per_link/source"


def test_clean_tree_has_no_findings(in_tmp: Path) -> None:
    files = {"sources/doc.yaml": source_yaml(), "interconnects/link.yaml": LINK}
    root = write_tree(in_tmp / "records", files)
    result = validate(root, remember=False)
    assert result.findings == []
    assert len(open_kb(root)) == 2
    assert result.checked_paths == ["records/interconnects/link.yaml", "records/sources/doc.yaml"]


# ---------------------------------------------------------------- waivers


def test_waiver_suppresses_its_finding_and_only_that_one(in_tmp: Path) -> None:
    link = LINK.replace(", source: sources/doc", "") + (
        "  per_device: {value: 63, unit: GB/s, basis: measured}\n"
        "waivers:\n"
        "  - {code: PV002, reason: Datasheet not public yet., pointer: /bandwidth/per_link}\n"
    )
    root = write_tree(in_tmp / "records", {"interconnects/link.yaml": link})
    findings = validate(root, remember=False).findings
    assert [(f.code, f.location.line) for f in findings] == [("PV002", 12)]
    assert findings[0].location.pointer == "/bandwidth/per_device"


def test_waiver_without_pointer_covers_the_whole_record(in_tmp: Path) -> None:
    link = LINK.replace(", source: sources/doc", "") + (
        "  per_device: {value: 63, unit: GB/s, basis: measured}\n"
        "waivers:\n"
        "  - {code: PV002, reason: Datasheet not public yet.}\n"
    )
    root = write_tree(in_tmp / "records", {"interconnects/link.yaml": link})
    assert validate(root, remember=False).findings == []


def test_unused_and_unknown_waivers(in_tmp: Path) -> None:
    link = LINK + (
        "waivers:\n"
        "  - {code: PV002, reason: Nothing to waive.}\n"
        "  - {code: XX123, reason: No such rule.}\n"
    )
    files = {"interconnects/link.yaml": link, "sources/doc.yaml": source_yaml()}
    root = write_tree(in_tmp / "records", files)
    got = [(f.code, f.location.line) for f in validate(root, remember=False).findings]
    assert got == [("WV001", 13), ("WV002", 14)]


# ---------------------------------------------------------------- scope and selection


def test_paths_limit_the_report_but_not_the_knowledge_base(in_tmp: Path) -> None:
    files = {
        "sources/doc.yaml": source_yaml().replace("status: draft", "status: no"),
        "sources/other.yaml": source_yaml("sources/other", superseded_by="sources/missing"),
        "interconnects/link.yaml": LINK,
    }
    root = write_tree(in_tmp / "records", files)
    only_link = validate(root, [root / "interconnects" / "link.yaml"], remember=False).findings
    assert only_link == []  # its source resolves although only the link was named
    only_doc = validate(root, [root / "sources" / "doc.yaml"], remember=False)
    got = [(f.location.path, f.code) for f in only_doc.findings]
    assert got == [("records/sources/doc.yaml", "LD010")]
    # the link references the named source, so it is in scope too
    assert only_doc.checked_paths == ["records/interconnects/link.yaml", "records/sources/doc.yaml"]


def test_select_and_ignore_filter_by_code_prefix(in_tmp: Path) -> None:
    files = {
        "sources/doc.yaml": source_yaml().replace("status: draft", "status: no"),
        "sources/other.yaml": source_yaml("sources/other", superseded_by="sources/missing"),
    }
    root = write_tree(in_tmp / "records", files)
    assert {f.code for f in validate(root, remember=False).findings} == {"LD010", "RF001"}
    assert {f.code for f in validate(root, select=["rf"], remember=False).findings} == {"RF001"}
    assert {f.code for f in validate(root, ignore=["LD"], remember=False).findings} == {"RF001"}
    assert validate(root, select=["RF"], ignore=["RF001"], remember=False).findings == []


def test_pointer_with_escaped_keys_resolves_to_its_line(in_tmp: Path) -> None:
    link = LINK + "  per/lane~x: {value: 2, unit: GB/s, basis: unverified}\n"
    files = {"interconnects/link.yaml": link, "sources/doc.yaml": source_yaml()}
    root = write_tree(in_tmp / "records", files)
    findings = validate(root, remember=False).findings
    assert [(f.code, f.location.line, f.location.col) for f in findings] == [("SC001", 12, 3)]
    assert findings[0].location.pointer == "/bandwidth/per~1lane~0x"


# ---------------------------------------------------------------- malformed records (Hypothesis)

ODD_VALUES = [
    None,
    "",
    "x",
    0,
    -1,
    1.5,
    True,
    [],
    {},
    [None],
    {"value": None, "unit": None},
    {"a": 1},
    "sources/nope",
    "hardware/x#memory.bandwidth",
    [1, "a"],
    10**30,
]


def shipped_samples() -> list[tuple[str, Any]]:
    """One shipped record per folder (the first by name), parsed."""
    samples = []
    for folder in sorted(p for p in SHIPPED_RECORDS.iterdir() if p.is_dir()):
        first = next(iter(sorted(folder.rglob("*.yaml"))), None)
        if first is not None:
            data = load_yaml(first.read_text(encoding="utf-8"))
            samples.append((first.relative_to(SHIPPED_RECORDS).as_posix(), data))
    return samples


def all_paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(node, dict):
        children: Any = node.items()
    else:
        children = enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        found += all_paths(child, (*prefix, key))
    return found


SAMPLES = shipped_samples()


@settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_malformed_shipped_records_never_raise(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    """Any field of a real record replaced by an odd value: findings, never an exception."""
    relative, record = data.draw(st.sampled_from(SAMPLES))
    record = copy.deepcopy(record)
    for _ in range(data.draw(st.integers(1, 3))):
        paths = all_paths(record)
        if not paths:
            break
        path = data.draw(st.sampled_from(paths))
        parent = record
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = copy.deepcopy(data.draw(st.sampled_from(ODD_VALUES)))  # shared: copy
    root = tmp_path_factory.mktemp("malformed") / "records"
    write_tree(root, {relative: yaml.safe_dump(record, sort_keys=False)})
    for finding in validate(root, remember=False).findings:
        assert finding.code and finding.location.line >= 1
