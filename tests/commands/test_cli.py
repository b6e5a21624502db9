"""The command line as a user runs it: exit codes, kb new, kb show, kb list, the pre-commit hook."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kb.cli import cli
from kb.model import FOLDER_BY_KIND, KINDS
from tests.conftest import REPO, link_yaml, load_yaml, run_kb, source_yaml, write_tree
from tests.inprocess import kb_in_process

LINK = link_yaml()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A clean records tree (a source and an interconnect that cites it) in tmp_path."""
    files = {"sources/doc.yaml": source_yaml(), "interconnects/link.yaml": LINK}
    write_tree(tmp_path / "records", files)
    return tmp_path


def invoke(cwd: Path, *args: str) -> tuple[int, str]:
    """Run a command in-process (fast); returns exit code and combined output."""
    old = os.getcwd()
    os.chdir(cwd)
    try:
        done = CliRunner().invoke(cli, list(args))
    finally:
        os.chdir(old)
    return done.exit_code, done.output


# ---------------------------------------------------------------- exit codes (real console script)


def test_exit_0_when_clean(tree: Path) -> None:
    done = run_kb(["validate"], cwd=tree)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == "checked 2 records: no findings\n"


def test_exit_1_on_findings(tree: Path) -> None:
    (tree / "records" / "sources" / "doc.yaml").write_text(source_yaml().replace("draft", "no"))
    done = run_kb(["validate"], cwd=tree)
    assert done.returncode == 1
    assert "LD010" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["validate", "--no-such-option"], "No such option"),
        (["validate", "records/sources/missing.yaml"], "does not exist"),
        (["validate", "--format", "xml"], "Invalid value for '--format'"),
        (["validate", "--root", "elsewhere"], "no records folder"),
        (["explain", "ZZ999"], "no rule 'ZZ999'"),
        (["no-such-command"], "No such command"),
        (["show", "sources/missing"], "no record 'sources/missing'"),
        (["new", "source", "Sources/Bad Id"], "is not a record id"),
        (["new", "source", "hardware/x"], "lives under sources/"),
        (["new", "source", "sources/doc"], "never overwrites"),
        (["new", "widget", "sources/x"], "Invalid value for 'KIND'"),
        (["list", "--kind", "widget"], "Invalid value for '--kind'"),
    ],
)
def test_exit_2_on_usage_errors(tree: Path, args: list[str], message: str) -> None:
    """Through the real `kb` for one error of click's and one of kb's (the entry point's
    mapping to exit 2), the rest in process (tests/inprocess.py maps them the same way)."""
    real = args[0] == "no-such-command" or args[:2] == ["validate", "--root"]
    done = (run_kb if real else kb_in_process)(args, cwd=tree)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_bad_input_never_reaches_the_user_as_a_traceback(tree: Path) -> None:
    hostile = {
        "sources/bin.yaml": bytes(range(256)),
        "sources/tag.yaml": b"kind: !!python/object/apply:os.system ['true']\n",
        "sources/int.yaml": b"kind: !!int ''\nversion: !!map [1]\n",
        "sources/list.yaml": b"- 1\n",
        "hardware/weird.yaml": (
            b"kind: accelerator\nmemory: [1, {value: x}]\nlinks: 5\nwaivers: [1, {code: 5}]\n"
        ),
    }
    for relative, content in hostile.items():
        (tree / "records" / relative).parent.mkdir(parents=True, exist_ok=True)
        (tree / "records" / relative).write_bytes(content)
    done = run_kb(["validate"], cwd=tree)
    assert done.returncode == 1, done.stderr
    assert done.stderr == ""
    for relative in hostile:
        assert f"records/{relative}:" in done.stdout


RECEIPT = """\
kind: receipt
id: receipts/run
title: An all-reduce run
version: 1
status: draft
history:
  - {version: 1, date: "2026-11-30", change: First encoding.}
source: sources/doc
evidence_class: benchmark
engine: {name: nccl-tests}
pattern: all-reduce
provenance: {hardware_firmware: 8x H100 SXM}
results:
  - {label: 8 GB, bus_bandwidth: {value: 480, unit: GB/s, basis: measured, source: sources/doc}}
"""


def test_fail_on_sets_the_lowest_failing_severity(tree: Path) -> None:
    (tree / "records" / "receipts").mkdir()
    (tree / "records" / "receipts" / "run.yaml").write_text(RECEIPT, encoding="utf-8")
    done = kb_in_process(["validate"], cwd=tree)
    assert done.returncode == 0, done.stdout  # a warning alone does not fail
    assert "records/receipts/run.yaml:12:1: EV002" in done.stdout
    assert "[warning]" in done.stdout
    assert kb_in_process(["validate", "--fail-on", "warning"], cwd=tree).returncode == 1


def test_schemas_that_are_missing_stop_kb_with_exit_2(tree: Path) -> None:
    partial = tree / "partial-schemas"
    partial.mkdir()
    (partial / "source.schema.json").write_text("{}", encoding="utf-8")
    done = run_kb(["validate"], cwd=tree, env={"KB_SCHEMAS": str(partial)})
    assert done.returncode == 2
    assert done.stderr.startswith("kb: schemas missing from ")
    assert "accelerator.schema.json" in done.stderr and "defs.schema.json" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_unreadable_schema_stops_kb_with_exit_2(tree: Path) -> None:
    broken = tree / "broken-schemas"
    shutil.copytree(REPO / "kb" / "schemas", broken)
    (broken / "source.schema.json").write_text("{not json", encoding="utf-8")
    done = run_kb(["validate"], cwd=tree, env={"KB_SCHEMAS": str(broken)})
    assert done.returncode == 2
    assert done.stderr.startswith("kb: schema ")
    assert "source.schema.json is unreadable" in done.stderr
    assert "Traceback" not in done.stderr


# ---------------------------------------------------------------- kb new


@pytest.mark.parametrize("kind", KINDS)
def test_new_writes_a_skeleton_that_names_its_schema(tmp_path: Path, kind: str) -> None:
    (tmp_path / "records").mkdir()
    record_id = f"{FOLDER_BY_KIND[kind]}/sketch"
    code, output = invoke(tmp_path, "new", kind, record_id)
    assert code == 0, output
    path = tmp_path / "records" / f"{record_id}.yaml"
    text = path.read_text(encoding="utf-8")
    modeline = text.splitlines()[0]
    prefix = "# yaml-language-server: $schema="
    assert modeline.startswith(prefix)  # kb's own copy while the repository has none
    schema = (path.parent / modeline.removeprefix(prefix)).resolve()
    assert schema.name == f"{kind}.schema.json" and schema.is_file()
    data = yaml.safe_load(text)
    common = (data["kind"], data["id"], data["version"], data["status"])
    assert common == (kind, record_id, 1, "draft")
    assert data["history"][0]["version"] == 1
    assert f"fill its {text.count('# TODO:')} TODO placeholders" in output


def test_new_skeleton_validates_except_for_its_placeholders(tmp_path: Path) -> None:
    """Every finding is on a placeholder line (or the block holding it); none on filled lines."""
    (tmp_path / "records").mkdir()
    for kind in KINDS:
        assert invoke(tmp_path, "new", kind, f"{FOLDER_BY_KIND[kind]}/sketch")[0] == 0
    done = kb_in_process(["validate", "--format", "json"], cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    findings = json.loads(done.stdout)["findings"]
    by_file: dict[str, set[int]] = {}
    for f in findings:
        by_file.setdefault(f["path"], set()).add(f["line"])
    assert len(by_file) == len(KINDS)  # every skeleton flags its placeholders
    for path, lines in by_file.items():
        text = (tmp_path / path).read_text(encoding="utf-8").splitlines()
        for number in lines:
            line = text[number - 1]
            assert "# TODO:" in line or line.rstrip().endswith(":"), f"{path}:{number}: {line}"
    sources = [f for f in findings if f["path"] == "records/sources/sketch.yaml"]
    assert {f["code"] for f in sources} == {"SC001"}
    source_text = (tmp_path / "records/sources/sketch.yaml").read_text().splitlines()
    todo_lines = {i for i, line in enumerate(source_text, 1) if "# TODO:" in line}
    assert {f["line"] for f in sources} == todo_lines


def test_new_filled_in_is_clean(tmp_path: Path) -> None:
    (tmp_path / "records").mkdir()
    assert invoke(tmp_path, "new", "source", "sources/filled")[0] == 0
    path = tmp_path / "records" / "sources" / "filled.yaml"
    text = path.read_text(encoding="utf-8")
    fills = {
        "title": "A filled source",
        "change": "Encoded from the publisher's page.",
        "publisher": "Someone",
        "source_type": "documentation",
    }
    for key, value in fills.items():
        text = re.sub(rf"^(\s*){key}: ~  # TODO:.*$", rf"\g<1>{key}: {value}", text, flags=re.M)
    path.write_text(text, encoding="utf-8")
    assert kb_in_process(["validate"], cwd=tmp_path).returncode == 0


def test_new_points_at_the_repositorys_exported_schemas(tmp_path: Path) -> None:
    (tmp_path / "records").mkdir()
    assert invoke(tmp_path, "schemas", "export", "schemas")[0] == 0
    assert invoke(tmp_path, "new", "accelerator", "hardware/sketch")[0] == 0
    first = (tmp_path / "records/hardware/sketch.yaml").read_text().splitlines()[0]
    assert first == "# yaml-language-server: $schema=../../schemas/accelerator.schema.json"


def test_new_nested_id_gets_the_right_relative_schema_path(tmp_path: Path) -> None:
    (tmp_path / "records").mkdir()
    assert invoke(tmp_path, "schemas", "export", "schemas")[0] == 0
    assert invoke(tmp_path, "new", "source", "sources/nvidia/h100-brief")[0] == 0
    first = (tmp_path / "records/sources/nvidia/h100-brief.yaml").read_text().splitlines()[0]
    assert first == "# yaml-language-server: $schema=../../../schemas/source.schema.json"


def test_new_accepts_an_id_typed_as_a_path(tmp_path: Path) -> None:
    (tmp_path / "records").mkdir()
    assert invoke(tmp_path, "new", "source", "sources/typed.yaml")[0] == 0
    assert (tmp_path / "records/sources/typed.yaml").exists()
    assert "id: sources/typed\n" in (tmp_path / "records/sources/typed.yaml").read_text()


def test_new_never_overwrites(tree: Path) -> None:
    path = tree / "records" / "sources" / "doc.yaml"
    before = path.read_bytes()
    code, output = invoke(tree, "new", "source", "sources/doc")
    assert code == 2
    assert "never overwrites" in output
    assert path.read_bytes() == before


BAD_IDS = [
    "sources",
    "sources/",
    "sources/../x",
    "sources/Upper",
    "/sources/x",
    "sources/.hidden",
    "sources/a b",
    "hardware/x",
]


@pytest.mark.parametrize("bad", BAD_IDS)
def test_new_refuses_bad_ids(tmp_path: Path, bad: str) -> None:
    (tmp_path / "records").mkdir()
    code, _ = invoke(tmp_path, "new", "source", bad)
    assert code == 2
    assert list((tmp_path / "records").rglob("*.yaml")) == []


# ---------------------------------------------------------------- kb show


def test_show_yaml_annotates_each_reference(tree: Path) -> None:
    code, output = invoke(tree, "show", "interconnects/link")
    assert code == 0, output
    lines = output.splitlines()
    per_link = next(line for line in lines if "per_link:" in line)
    assert per_link.endswith("# -> source: A document")
    assert "# used by: no other record" in lines
    assert yaml.safe_load(output)["id"] == "interconnects/link"  # still valid YAML


def test_show_lists_referrers_and_missing_targets(tree: Path) -> None:
    (tree / "records" / "sources" / "doc.yaml").write_text(
        source_yaml(superseded_by="sources/gone").replace("status: draft", "status: deprecated")
    )
    code, output = invoke(tree, "show", "sources/doc")
    assert code == 0
    assert "superseded_by: sources/gone  # -> MISSING" in output
    assert "#   interconnects/link (interconnect) at /bandwidth/per_link/source: A link" in output


def test_show_json(tree: Path) -> None:
    code, output = invoke(tree, "show", "interconnects/link", "--format", "json")
    assert code == 0
    document = json.loads(output)
    assert document["record"]["family"] == "PCIe"
    assert document["references"] == [
        {
            "pointer": "/bandwidth/per_link/source",
            "target": "sources/doc",
            "expected_kind": "source",
            "exists": True,
            "kind": "source",
            "title": "A document",
            "version": 1,
            "kind_ok": True,
        }
    ]
    assert document["referenced_by"] == []
    assert document["templates"] == []


def test_show_gives_what_each_template_shows_with_its_provenance(tree: Path) -> None:
    link = tree / "records" / "interconnects" / "link.yaml"
    link.write_text(
        LINK.replace(
            "family: PCIe",
            "summary: >-\n  {#bandwidth.per_link} per "
            "direction, {#bandwidth.per_link|Gbit/s};\n  {#bandwidth.gone}."
            "\nfamily: PCIe",
        )
    )
    code, output = invoke(tree, "show", "interconnects/link")
    assert code == 0, output
    assert yaml.safe_load(output)["summary"].startswith("{#bandwidth.per_link} per")
    assert (
        "#   /summary: {#bandwidth.per_link|Gbit/s} = 252 Gbit/s (interconnects/link "
        "bandwidth.per_link; derived; source: sources/doc)"
    ) in output.splitlines()
    assert "#   /summary: {#bandwidth.gone} -> PR001: template {#bandwidth.gone}: " in output
    code, output = invoke(tree, "show", "interconnects/link", "--format", "json")
    first = json.loads(output)["templates"][0]
    assert first == {
        "pointer": "/summary",
        "template": "{#bandwidth.per_link}",
        "value": "31.5",
        "unit": "GB/s",
        "record": "interconnects/link",
        "field": "bandwidth.per_link",
        "basis": "derived",
        "source": "sources/doc",
    }


# ---------------------------------------------------------------- kb list


def test_list_all_and_by_kind(tree: Path) -> None:
    code, output = invoke(tree, "list")
    assert code == 0
    assert output.splitlines() == [
        "interconnects/link  interconnect  1  draft  A link",
        "sources/doc         source        1  draft  A document",
        "2 records",
    ]
    assert invoke(tree, "list", "--kind", "interconnects")[1].splitlines() == [
        "interconnects/link  interconnect  1  draft  A link",
        "1 record",
    ]
    code, output = invoke(tree, "list", "--kind", "source", "--format", "json")
    row = {"id": "sources/doc", "kind": "source", "version": 1, "status": "draft"}
    assert json.loads(output) == [{**row, "title": "A document"}]


def test_list_unverified_prints_each_figure_and_a_count(tree: Path) -> None:
    code, output = invoke(tree, "list", "--unverified")
    assert code == 0
    assert output.splitlines() == [
        "interconnects/link  /bandwidth/per_device  63  GB/s",
        "1 unverified figure in 1 record",
    ]
    code, output = invoke(tree, "list", "--unverified", "--format", "json")
    assert json.loads(output) == {
        "figures": [
            {
                "id": "interconnects/link",
                "pointer": "/bandwidth/per_device",
                "value": 63,
                "unit": "GB/s",
            }
        ],
        "count": 1,
    }


def test_list_unverified_on_the_shipped_records() -> None:
    """The README quotes this count (issue 6); it must match a direct walk of the records."""
    done = kb_in_process(["list", "--unverified", "--format", "json"], cwd=REPO)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    direct = 0
    for path in (REPO / "records").rglob("*.yaml"):
        try:
            data = load_yaml(path.read_text(encoding="utf-8"))  # libyaml: the same data
        except yaml.YAMLError:
            continue  # a record mid-edit; kb validate reports it
        stack = [data]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                if "value" in node and "unit" in node and node.get("basis") == "unverified":
                    direct += 1
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
    assert document["count"] == len(document["figures"]) == direct


# ---------------------------------------------------------------- the pre-commit hook


def test_pre_commit_hook_definition() -> None:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    hook = next(h for h in hooks if h["id"] == "kb-validate")
    assert hook["language"] == "python"
    assert hook["entry"] == "kb validate"
    # the whole tree on every commit: a deletion or a rename passes no file name to a hook
    assert hook["pass_filenames"] is False and hook["always_run"] is True
    assert "files" not in hook


def test_pre_commit_hook_entry_with_staged_files(tree: Path) -> None:
    """What pre-commit runs: the entry alone, from the repository root (no file names).

    In process: tests/install runs the real hook, from a released hook repository."""
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    entry = next(h for h in hooks if h["id"] == "kb-validate")["entry"].split()
    assert entry[0] == "kb"
    assert kb_in_process(entry[1:], cwd=tree).returncode == 0
    (tree / "records" / "sources" / "doc.yaml").unlink()  # the link's source is gone
    done = kb_in_process(entry[1:], cwd=tree)
    assert done.returncode == 1
    assert "records/interconnects/link.yaml:11:" in done.stdout and "RF001" in done.stdout


def test_every_listed_command_exists() -> None:
    # `kb --help` lists the table without importing it; each entry must name a real command
    import importlib

    import click

    from kb.cli import COMMANDS, cli

    for name, (module, attribute, _help) in COMMANDS.items():
        command = getattr(importlib.import_module(module), attribute)
        assert isinstance(command, click.Command), name
        assert cli.get_command(click.Context(cli), name) is command
